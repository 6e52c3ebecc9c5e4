// The sandbox page: acts as one person at a time in a fake Telegram group and their DM with the bot.
"use strict";

const state = { me: null, where: "group", shown: "" };
const $ = (id) => document.getElementById(id);

async function api(path, body) {
  const options = body ? { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) } : {};
  const answer = await fetch(path, options);
  if (!answer.ok) throw new Error(await answer.text());
  return answer.json();
}

function renderPeople(people) {
  const list = $("people-list");
  list.replaceChildren(...people.map((person) => {
    const item = document.createElement("li");
    const button = document.createElement("button");
    button.textContent = person.name;
    button.dataset.person = person.name;
    button.className = person.id === state.me ? "person active" : "person";
    button.onclick = () => { state.me = person.id; state.shown = ""; refresh(); };
    item.append(button);
    return item;
  }));
}

function renderMessage(message) {
  const bubble = document.createElement("div");
  bubble.className = message.bot ? "msg bot" : "msg person";
  bubble.dataset.id = message.id;
  const from = document.createElement("div");
  from.className = "from";
  from.textContent = message.from;
  const body = document.createElement("div");
  body.className = "body";
  // The bot's messages are Telegram HTML (the bot escapes what people wrote); people's are plain text.
  if (message.bot) body.innerHTML = message.text; else body.textContent = message.text;
  bubble.append(from, body);
  if (message.edited) {
    const edited = document.createElement("span");
    edited.className = "edited";
    edited.textContent = "已编辑";
    bubble.append(edited);
  }
  if (message.buttons.length) {
    const keyboard = document.createElement("div");
    keyboard.className = "kb";
    for (const row of message.buttons) {
      const line = document.createElement("div");
      line.className = "row";
      for (const button of row) {
        const press = document.createElement("button");
        press.textContent = button.text;
        press.onclick = () => pressButton(message.id, button.data);
        line.append(press);
      }
      keyboard.append(line);
    }
    bubble.append(keyboard);
  }
  return bubble;
}

function renderMessages(messages) {
  const box = $("messages");
  const atBottom = box.scrollHeight - box.scrollTop - box.clientHeight < 40;
  box.replaceChildren(...messages.map(renderMessage));
  if (atBottom) box.scrollTop = box.scrollHeight;
}

function showPopups(popups) {
  for (const popup of popups) {
    if (popup.alert) {
      $("alert-text").textContent = popup.text;
      $("alert").hidden = false;
    } else {
      $("toast").textContent = popup.text;
      $("toast").hidden = false;
      clearTimeout(showPopups.timer);
      showPopups.timer = setTimeout(() => { $("toast").hidden = true; }, 2500);
    }
  }
}

async function refresh() {
  const asked = { me: state.me, where: state.where };
  const seen = await api(`/api/state${asked.me ? `?as=${asked.me}` : ""}`);
  if (asked.me !== state.me || asked.where !== state.where) return;  // switched meanwhile: a newer one comes
  state.me = seen.me;
  const view = state.where === "group" ? seen.group : seen.dm;
  const shown = JSON.stringify([seen.people, state.where, view.messages]);
  if (shown !== state.shown) {
    state.shown = shown;
    renderPeople(seen.people);
    const myName = seen.people.find((p) => p.id === seen.me)?.name ?? "";
    $("title").textContent = state.where === "group" ? `${seen.group.title} · 我是 ${myName}` : `Paiju · ${myName} 的私聊`;
    renderMessages(view.messages);
  }
  showPopups(seen.popups);
}

async function pressButton(messageId, data) {
  await api("/api/press", { as: state.me, where: state.where, message_id: messageId, data });
  setTimeout(refresh, 150);
}

$("composer").onsubmit = async (event) => {
  event.preventDefault();
  const text = $("text").value.trim();
  if (!text) return;
  $("text").value = "";
  await api("/api/send", { as: state.me, where: state.where, text });
  setTimeout(refresh, 150);
};

$("add-person").onsubmit = async (event) => {
  event.preventDefault();
  const name = $("new-name").value.trim();
  if (!name) return;
  $("new-name").value = "";
  const person = await api("/api/people", { name });
  state.me = person.id;
  state.shown = "";
  refresh();
};

for (const tab of document.querySelectorAll(".tab")) {
  tab.onclick = () => {
    state.where = tab.dataset.where;
    state.shown = "";
    for (const other of document.querySelectorAll(".tab")) other.classList.toggle("active", other === tab);
    refresh();
  };
}

$("alert-ok").onclick = () => { $("alert").hidden = true; };
refresh();
setInterval(() => refresh().catch(() => {}), 400);
