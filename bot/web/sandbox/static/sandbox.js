// The sandbox page: acts as one person at a time in a fake Telegram group and their DM with the bot,
// showing what Telegram would: times, "edited", whom a message notifies, unread badges, two themes.
"use strict";

// The page's own few words, in the sandbox's language (the bot's words come from the bot).
const WORDS = {
  "zh-hans": {
    title: "牌局 Paiju · 沙盒", actAs: "扮演", newName: "新玩家名字", add: "添加", addPerson: "添加玩家",
    neverStarted: "从没打开过与机器人的私聊",
    hint: "没有 Telegram 也能试玩：在群里发 <code>/newgame muxi</code> 或 <code>/newgame showhand</code>，点名字切换玩家。🔔 表示这条消息会通知谁。",
    group: "群聊", dm: "与 Paiju 私聊", groupTitle: (title, name) => `${title} · 我是 ${name}`,
    dmTitle: (name) => `Paiju · ${name} 的私聊`, placeholder: "发消息或命令，例如 /newgame muxi", send: "发送",
    ok: "好的", edited: "编辑过", notifies: "会通知", start: "开始",
    notStarted: "还没有打开过与机器人的私聊 — 点「开始」打开", toDark: "深色主题", toLight: "浅色主题",
    owner: "机器人的主人：可以 /cancel 取消牌局并退还筹码",
  },
  "zh-hant": {
    title: "牌局 Paiju · 沙盒", actAs: "扮演", newName: "新玩家名字", add: "新增", addPerson: "新增玩家",
    neverStarted: "從沒打開過與機器人的私聊",
    hint: "沒有 Telegram 也能試玩：在群組發 <code>/newgame muxi</code> 或 <code>/newgame showhand</code>，點名字切換玩家。🔔 表示這則訊息會通知誰。",
    group: "群組", dm: "與 Paiju 私聊", groupTitle: (title, name) => `${title} · 我是 ${name}`,
    dmTitle: (name) => `Paiju · ${name} 的私聊`, placeholder: "發訊息或指令，例如 /newgame muxi", send: "傳送",
    ok: "好", edited: "已編輯", notifies: "會通知", start: "開始",
    notStarted: "還沒有打開過與機器人的私聊 — 點「開始」打開", toDark: "深色主題", toLight: "淺色主題",
    owner: "機器人的主人：可以 /cancel 取消牌局並退還籌碼",
  },
  en: {
    title: "Paiju sandbox", actAs: "Act as", newName: "New player's name", add: "Add", addPerson: "Add a player",
    neverStarted: "has never opened a DM with the bot",
    hint: "No Telegram needed: send <code>/newgame muxi</code> or <code>/newgame showhand</code> in the group, tap a name to act as them. 🔔 marks whom a message notifies.",
    group: "Group", dm: "DM with Paiju", groupTitle: (title, name) => `${title} · I am ${name}`,
    dmTitle: (name) => `Paiju · ${name}'s DM`, placeholder: "A message or a command, e.g. /newgame muxi", send: "Send",
    ok: "OK", edited: "edited", notifies: "notifies", start: "Start",
    notStarted: "No DM with the bot yet — press Start to open it", toDark: "Dark theme", toLight: "Light theme",
    owner: "The bot's owner: may /cancel a table and refund it",
  },
};
const HTML_LANG = { "zh-hans": "zh-CN", "zh-hant": "zh-TW", en: "en" };
const THEME_KEY = "paiju-sandbox-theme";

const state = { me: null, where: "group", language: "zh-hans", shownPeople: "", shownChat: "", starting: null, botUsername: "", refreshes: 0, opened: true };
const $ = (id) => document.getElementById(id);
const words = () => WORDS[state.language] ?? WORDS["zh-hans"];

async function api(path, body) {
  const options = body ? { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) } : {};
  const answer = await fetch(path, options);
  if (!answer.ok) throw new Error(await answer.text());
  return answer.json();
}

// -- the theme: ?theme= in the address, else the last choice, else the system's ---------------------
function chosenTheme() {
  const asked = new URLSearchParams(location.search).get("theme") ?? localStorage.getItem(THEME_KEY);
  if (asked === "dark" || asked === "light") return asked;
  return matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

function showTheme(theme) {
  document.documentElement.dataset.theme = theme;
  $("theme").textContent = theme === "dark" ? "☀️" : "🌙";
  $("theme").title = theme === "dark" ? words().toLight : words().toDark;
  $("theme").setAttribute("aria-label", $("theme").title);
}

$("theme").onclick = () => {
  const theme = document.documentElement.dataset.theme === "dark" ? "light" : "dark";
  localStorage.setItem(THEME_KEY, theme);
  const address = new URL(location.href);
  address.searchParams.delete("theme");  // the choice just made wins from now on
  history.replaceState(null, "", address);
  showTheme(theme);
  if (state.miniapp) openMiniApp(state.miniapp);  // Telegram re-themes an open Mini App too
};

function showWords() {
  const said = words();
  document.documentElement.lang = HTML_LANG[state.language] ?? "zh-CN";
  document.title = said.title;
  for (const element of document.querySelectorAll("[data-words]")) element.textContent = said[element.dataset.words];
  for (const element of document.querySelectorAll("[data-words-html]")) element.innerHTML = said[element.dataset.wordsHtml];
  $("new-name").placeholder = said.newName;
  $("text").placeholder = said.placeholder;
  $("add-toggle").title = said.addPerson;
  showTheme(document.documentElement.dataset.theme);
}

// -- people and badges -------------------------------------------------------------------------------
function badge(element, count) {
  element.textContent = count;
  element.hidden = !count;
}

function renderPeople(people) {
  $("people-list").replaceChildren(...people.map((person) => {
    const item = document.createElement("li");
    const button = document.createElement("button");
    button.className = person.id === state.me ? "person active" : "person";
    button.dataset.person = person.name;
    const name = document.createElement("span");
    name.className = "name";
    name.textContent = person.name;
    const count = document.createElement("span");
    count.className = "badge";
    badge(count, person.unread.group + person.unread.dm);
    button.append(name, count);
    if (person.owner) {  // (the bot's owner may /cancel and refund: the page says who that is)
      const key = document.createElement("span");
      key.className = "owner";
      key.textContent = "🔑";
      key.title = words().owner;
      button.title = `${person.name} · ${words().owner}`;
      name.after(key);
    }
    button.onclick = () => {
      state.me = person.id;
      state.starting = null;
      $("toast").hidden = true;  // a button's answer is for the one who pressed it
      changed();
    };
    item.append(button);
    return item;
  }));
  const me = people.find((person) => person.id === state.me);
  badge($("tab-group").querySelector(".badge"), me?.unread.group ?? 0);
  badge($("tab-dm").querySelector(".badge"), me?.unread.dm ?? 0);
}

// -- messages ----------------------------------------------------------------------------------------
function clock(seconds) {
  const at = new Date(seconds * 1000);
  return `${String(at.getHours()).padStart(2, "0")}:${String(at.getMinutes()).padStart(2, "0")}`;
}

function plain(message) {
  if (!message.bot) return message.text;
  const reader = document.createElement("div");
  reader.innerHTML = message.text;
  return reader.textContent;
}

function span(className, text) {
  const element = document.createElement("span");
  element.className = className;
  element.textContent = text;
  return element;
}

function meta(message, names) {
  const line = span("meta", "");
  if (message.notifies.length) {  // in the group, the bell names whom; in a DM it is its person
    const whom = message.notifies.map(names).join(", ");
    const bell = span(message.notifies.includes(state.me) ? "bell me" : "bell", state.where === "group" ? `🔔 ${whom}` : "🔔");
    bell.title = `${words().notifies} ${whom}`;
    line.append(bell);
  }
  if (message.edited) line.append(span("edited", words().edited));
  const time = document.createElement("time");
  time.dateTime = new Date(message.date * 1000).toISOString();
  time.textContent = clock(message.date);
  line.append(time);
  return line;
}

function renderMessage(message, names) {
  const item = document.createElement("div");
  item.className = ["msg", message.bot ? "bot" : "user", message.sender === state.me ? "mine" : ""].join(" ").trim();
  item.dataset.id = message.id;
  const bubble = document.createElement("div");
  bubble.className = "bubble";
  if (state.where === "group" && message.sender !== state.me) bubble.append(span("from", message.from));
  if (message.reply) {
    const quote = document.createElement("div");
    quote.className = "reply";
    const who = document.createElement("b");
    who.textContent = message.reply.from;
    quote.append(who, span("", plain(message.reply)));
    bubble.append(quote);
  }
  const body = document.createElement("div");
  body.className = "body";
  // The bot's messages are Telegram HTML (the bot escapes what people wrote); people's are plain text.
  if (message.bot) body.innerHTML = message.text; else body.textContent = message.text;
  const stamp = meta(message, names);
  const room = stamp.cloneNode(true);  // keeps the last line clear of the stamp, as Telegram does
  room.className = "meta spacer";
  room.setAttribute("aria-hidden", "true");
  body.append(room);
  bubble.append(body, stamp);
  item.append(bubble);
  if (message.buttons.length) item.append(keyboard(message));
  return item;
}

function keyboard(message) {
  const rows = document.createElement("div");
  rows.className = "kb";
  for (const row of message.buttons) {
    const line = document.createElement("div");
    line.className = "row";
    for (const button of row) {
      const press = document.createElement("button");
      press.textContent = button.text;
      press.onclick = () => (button.url ? openLink(button.url) : pressButton(message.id, button.data));
      line.append(press);
    }
    rows.append(line);
  }
  return rows;
}

function renderChat(view, people) {
  const box = $("messages");
  const atBottom = state.opened || box.scrollHeight - box.scrollTop - box.clientHeight < 40;
  state.opened = false;  // a chat opens at its bottom, then stays where it is scrolled
  const byId = new Map(people.map((person) => [person.id, person.name]));
  const names = (id) => byId.get(id) ?? "?";
  const items = view.messages.map((message) => renderMessage(message, names));
  const me = people.find((person) => person.id === state.me);
  const unstarted = state.where === "dm" && me && !me.started;
  if (unstarted && !view.messages.length) items.push(span("service", words().notStarted));
  box.replaceChildren(...items);
  if (atBottom) box.scrollTop = box.scrollHeight;
  const starting = state.where === "dm" && (unstarted || state.starting !== null);
  $("start-bar").hidden = !starting;
  $("composer").hidden = starting;
}

// Links in the bot's messages: its own start links open the DM as Telegram does (press Start to send
// "/start <payload>"); a mention goes nowhere; anything else opens in a new tab.
function openLink(href) {
  const start = new RegExp(`^https?://t\\.me/${state.botUsername}\\?start=([\\w-]+)$`, "i").exec(href);
  const app = new RegExp(`^https://t\\.me/${state.botUsername}/\\w+\\?startapp=(t\\d+|r\\d+_\\d+)$`, "i").exec(href);
  if (app) {
    openMiniApp(app[1]);
  } else if (start) {
    state.starting = start[1];
    showWhere("dm");
  } else if (!href.startsWith("tg://")) {
    window.open(href, "_blank", "noopener");
  }
}

// -- the Mini App: a table's "open the table" button opens it beside the chat, as the person acted as,
// with initData signed by the sandbox's own token (as Telegram signs it with the bot's) ----------------
const THEMES = {
  light: { bg_color: "#ffffff", text_color: "#000000", hint_color: "#707579", link_color: "#3390ec", button_color: "#3390ec",
    button_text_color: "#ffffff", secondary_bg_color: "#f4f4f5", destructive_text_color: "#e53935" },
  dark: { bg_color: "#17212b", text_color: "#f5f5f5", hint_color: "#708499", link_color: "#6ab3f3", button_color: "#5288c1",
    button_text_color: "#ffffff", secondary_bg_color: "#232e3c", destructive_text_color: "#ec3942" },
};

// ``start``: what the link's startapp says: t<table> (the table), r<table>_<round> (a round's 回放)
async function openMiniApp(start) {
  state.miniapp = start;
  const launch = await api(`/api/miniapp?as=${state.me}&start=${start}`);
  const theme = document.documentElement.dataset.theme === "dark" ? "dark" : "light";
  const hash = new URLSearchParams({
    tgWebAppData: launch.init_data,
    tgWebAppStartParam: start,
    tgWebAppThemeParams: JSON.stringify(THEMES[theme]),
    tgWebAppVersion: "8.0",
    tgWebAppPlatform: "web",
  });
  const me = JSON.parse(state.shownPeople || "[]").find((person) => person.id === state.me);
  $("miniapp-title").textContent = `🀄 ${me ? me.name : ""}`;
  $("miniapp-frame").src = `/miniapp/?as=${state.me}&theme=${theme}#${hash}`;
  $("miniapp").hidden = false;
  document.body.classList.add("with-miniapp");
}

function closeMiniApp() {
  state.miniapp = null;
  $("miniapp").hidden = true;
  $("miniapp-frame").src = "about:blank";
  document.body.classList.remove("with-miniapp");
}
$("miniapp-close").onclick = closeMiniApp;

$("messages").addEventListener("click", (event) => {
  const link = event.target.closest("a[href]");
  if (!link) return;
  event.preventDefault();
  openLink(link.getAttribute("href"));
});

// -- what this person sees, polled -------------------------------------------------------------------
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
  const seen = await api(`/api/state?where=${asked.where}${asked.me ? `&as=${asked.me}` : ""}`);
  if (asked.me !== state.me || asked.where !== state.where) return;  // switched meanwhile: a newer one comes
  state.me = seen.me;
  state.botUsername = seen.bot_username;
  if (seen.language !== state.language) {
    state.language = seen.language;
    showWords();
    state.shownChat = "";
  }
  const people = JSON.stringify(seen.people);
  if (people !== state.shownPeople) {
    state.shownPeople = people;
    renderPeople(seen.people);
  }
  const view = state.where === "group" ? seen.group : seen.dm;
  const me = seen.people.find((person) => person.id === seen.me);
  const chat = JSON.stringify([state.where, state.starting, me, view.messages]);
  if (chat !== state.shownChat) {
    state.shownChat = chat;
    const name = me?.name ?? "";
    $("title").textContent = state.where === "group" ? words().groupTitle(seen.group.title, name) : words().dmTitle(name);
    renderChat(view, seen.people);
  }
  showPopups(seen.popups);
  document.body.dataset.refreshed = ++state.refreshes;  // tests wait on it: the screen is up to date
}

function changed() {
  state.shownPeople = state.shownChat = "";
  state.opened = true;
  refresh().then(() => { if (state.miniapp) openMiniApp(state.miniapp); });  // as the person now acted as
}

function showWhere(where) {
  state.where = where;
  for (const tab of document.querySelectorAll(".tab")) tab.classList.toggle("active", tab.dataset.where === where);
  changed();
}

async function say(text, where) {
  await api("/api/send", { as: state.me, where, text });
  refresh();
}

async function pressButton(messageId, data) {
  await api("/api/press", { as: state.me, where: state.where, message_id: messageId, data });
  refresh();
}

$("composer").onsubmit = (event) => {
  event.preventDefault();
  const text = $("text").value.trim();
  if (!text) return;
  $("text").value = "";
  say(text, state.where);
};

$("start").onclick = () => {
  const payload = state.starting;
  state.starting = null;
  say(payload ? `/start ${payload}` : "/start", "dm");
};

$("add-toggle").onclick = () => {
  const open = $("people").classList.toggle("adding");
  $("add-toggle").setAttribute("aria-expanded", String(open));
  if (open) $("new-name").focus();
};

$("add-person").onsubmit = async (event) => {
  event.preventDefault();
  const name = $("new-name").value.trim();
  if (!name) return;
  const person = await api("/api/people", { name, started: !$("new-unstarted").checked });
  $("new-name").value = "";
  $("new-unstarted").checked = false;
  $("people").classList.remove("adding");
  state.me = person.id;
  state.starting = null;
  changed();
};

for (const tab of document.querySelectorAll(".tab")) tab.onclick = () => showWhere(tab.dataset.where);

$("alert-ok").onclick = () => { $("alert").hidden = true; };
document.documentElement.dataset.theme = chosenTheme();
showWords();
refresh();
setInterval(() => refresh().catch(() => {}), 400);
