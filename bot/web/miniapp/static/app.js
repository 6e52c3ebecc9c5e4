// The table as a Telegram Mini App: the table pushed by the server (Server-Sent Events), a
// countdown that ticks, and the viewer's own actions as big buttons. Every request carries
// Telegram's signed initData in a header (the stream a ticket got with it); the server checks it
// and sends only what this person may see.
"use strict";

const $ = (id) => document.getElementById(id);
const tg = window.Telegram && window.Telegram.WebApp && window.Telegram.WebApp.initData ? window.Telegram.WebApp : null;
const launch = new URLSearchParams(location.hash.slice(1));
const initData = tg ? tg.initData : launch.get("tgWebAppData") || "";
const startParam = new URLSearchParams(initData).get("start_param") || launch.get("tgWebAppStartParam") || "";
const tableId = /^t\d+$/.test(startParam) ? startParam.slice(1) : "";
let view = null;
let offset = 0; // the server's clock minus ours, in seconds
let stream = null;
let wasMyTurn = false;
let words = {};

// -- the theme: Telegram's script sets --tg-theme-*; without it (the sandbox), the launch parameters
function applyTheme(params) {
  for (const [key, value] of Object.entries(params || {})) {
    document.documentElement.style.setProperty(`--tg-theme-${key.replace(/_/g, "-")}`, value);
  }
}
if (tg) {
  tg.ready();
  tg.expand();
  tg.onEvent("themeChanged", () => applyTheme(tg.themeParams));
} else {
  try { applyTheme(JSON.parse(launch.get("tgWebAppThemeParams") || "{}")); } catch (error) { /* none */ }
}

function say(key, values) {
  let text = words[key] || key;
  for (const [name, value] of Object.entries(values || {})) text = text.replace(`{${name}}`, value);
  return text;
}
function coins(amount) {
  return amount < 0 ? "−" + Math.abs(amount).toLocaleString("en-US") : amount.toLocaleString("en-US");
}
function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}
// ``hole``: the first card is the face-down one (marked where it is shown: your own, a show-down's)
function cardsRow(tokens, hole) {
  const row = el("div", "cards");
  const marked = hole && tokens && tokens.length && tokens[0] !== "?";
  if (marked) row.classList.add("hole");
  row.innerHTML = (tokens || []).map((token, i) => window.cardSVG(token, marked && i === 0 ? `${say("hole")} ${token}` : token)).join("");
  return row;
}

// -- drawing the table --------------------------------------------------------------------------
function seatBox(seat) {
  const box = el("div", "seat");
  box.dataset.person = seat.person;
  if (seat.turn) box.classList.add("turn");
  if (seat.folded) box.classList.add("folded");
  const who = el("div", "who");
  if (seat.banker) who.append(el("span", "tag", say("banker")));
  if (seat.lead) who.append(el("span", "tag lead", say("lead")));
  if (seat.me) who.append(el("span", "tag me", say("you")));
  if (seat.autopilot) who.append(el("span", "tag autopilot", say("autopilot")));
  who.append(el("span", "name", seat.name));
  box.append(who, dealtAnew(seat, cardsRow(seat.cards, seat.hole)));
  const info = el("div", "info");
  const score = seat.score !== undefined ? say("score", { net: (seat.score > 0 ? "+" : "") + coins(seat.score) }) : "";
  info.append(el("span", "status", [seat.hand, seat.status, score].filter(Boolean).join(" · ")));
  const money = seat.total !== undefined ? say("total", { amount: coins(seat.total) })
    : seat.balance !== null && seat.balance !== undefined ? coins(seat.balance) : "";
  info.append(el("span", "money", money));
  box.append(info);
  return box;
}

function render() {
  if (!view) return;
  words = view.strings;
  document.documentElement.lang = view.language === "en" ? "en" : view.language === "zh-hant" ? "zh-TW" : "zh-CN";
  const revealing = view.phase === "reveal"; // an all-in's cards still coming: that round's
  const round = view.in_round || revealing ? view.round : view.round + 1; // in the lobby: the round to come
  $("title").textContent = `${view.title} · ${say("round", { round })}`;
  const stakes = [];
  if (view.base) stakes.push(say("base", { amount: coins(view.base) }));
  if (view.pot !== null && view.pot !== undefined) stakes.push(say("pot", { amount: coins(view.pot) }));
  $("stakes").textContent = stakes.join(" · ");
  const banner = view.closed ? say("closed") : view.phase === "reveal" ? say("revealing")
    : !view.seated ? say("spectating") : view.dealing ? say("dealing") : view.no_dm ? say("no_dm") : "";
  $("banner").hidden = !banner;
  $("banner").textContent = banner;
  const others = $("others");
  const mine = $("mine");
  others.replaceChildren();
  mine.replaceChildren();
  for (const seat of view.seats) (seat.me ? mine : others).append(seatBox(seat));
  const turns = view.seats.filter((seat) => seat.turn);
  const myTurn = turns.some((seat) => seat.me) && view.actions.some((a) => a.action !== "leave" && a.action !== "join");
  $("turn").textContent = view.closed ? "" : myTurn ? say("your_turn")
    : turns.length ? turns.map((seat) => seat.name).join("、") : view.in_round || revealing ? "" : say("waiting");
  if (myTurn && !wasMyTurn && tg && tg.HapticFeedback) tg.HapticFeedback.notificationOccurred("warning");
  wasMyTurn = myTurn;
  if (typeof watchShown === "function") watchShown(myTurn); // watching.js: the banner, the turn told
  renderFeed();
  renderResults();
  renderSummary(view.summary);
  renderActions();
  tick();
}

// -- a table that has ended: its 总结算 as a card, the viewer's own line marked ---------------------
function viewerId() {
  try { return JSON.parse(new URLSearchParams(initData).get("user") || "{}").id; } catch (error) { return undefined; }
}
function renderSummary(summary) {
  let box = $("summary");
  if (!summary) { if (box) box.hidden = true; return; }
  if (!box) { box = el("section"); box.id = "summary"; $("felt").before(box); }
  box.hidden = false;
  if (!$("felt").querySelector(".seat")) $("felt").hidden = true;  // (an ended table: no empty felt under it)
  box.replaceChildren(el("h3", "", summary.title), el("div", "meta", summary.meta));
  const me = viewerId();
  for (const line of summary.nets) {
    const row = el("div", line.person === me ? "line me" : "line");
    const net = el("div", `net ${line.net > 0 ? "up" : line.net < 0 ? "down" : ""}`, line.net_text);
    row.append(el("div", "who", `${line.mark} ${line.name}`), net);
    box.append(row);
  }
  for (const text of summary.highlights) box.append(el("div", "highlight", text));
  for (const text of summary.proofs) box.append(el("div", "proof", text));
}

function renderResults() {
  const box = $("results");
  const results = view.results;
  box.hidden = !results;
  box.classList.toggle("first", Boolean(results) && !view.in_round); // between rounds: the results on top
  if (!results) return;
  box.replaceChildren(el("h3", "", `${say("results")} · ${say("round", { round: results.round })}`));
  for (const line of results.lines) {
    const row = el("div", "line");
    const who = el("div", "who");
    if (line.banker) who.append(el("span", "tag", say("banker")), " ");
    who.append((line.won ? "🏆 " : "") + line.name);
    const net = el("div", `net ${line.net > 0 ? "up" : line.net < 0 ? "down" : ""}`, line.net_text);
    row.append(who, net);
    if (line.cards.length) row.append(cardsRow(line.cards, line.hole));
    if (line.hand) row.append(el("div", "hand", line.hand));
    box.append(row);
  }
}

// The game's last moves, and an all-in announced once across the table (梭哈!).
let announced = null;
function renderFeed() {
  const feed = $("feed");
  const lines = view.feed || [];
  feed.replaceChildren(...lines.map((line) => el("li", "", line)));
  feed.hidden = !lines.length;
  const allIn = view.all_in;
  const key = allIn ? `${view.table}:${view.round}:${allIn.seq}` : null;
  if (key && announced !== null && key !== announced) {
    const moment = $("moment");
    moment.textContent = allIn.text;
    moment.hidden = false;
    moment.style.animation = "none";
    void moment.offsetWidth; // restart the animation
    moment.style.animation = "";
    clearTimeout(renderFeed.timer);
    renderFeed.timer = setTimeout(() => { moment.hidden = true; }, 2600);
  }
  announced = key || announced || "";  // the first view only sets what was seen: no old all-in is announced
}

function renderActions() {
  const bar = $("actions");
  // a push during the same choice keeps what the slider was set to (a new bet or raise starts at its least)
  const chosen = $("amount") && view.amount && $("amount").dataset.range === rangeKey(view.amount) ? Number($("amount").value) : null;
  bar.replaceChildren();
  if (view.amount) {
    const presets = view.actions.filter((action) => action.action === view.amount.action).map((action) => action.arg);
    bar.append(amountPicker(view.amount, chosen, presets));
  }
  for (const action of view.actions) {
    const button = el("button", action.style || "primary", action.label);
    button.dataset.action = action.action;
    if (action.escape) button.classList.add("escape");
    button.onclick = () => act(action, button);
    bar.append(button);
  }
}

// A bet or raise of any step between the least and the round's cap: a slider and the button it sets.
function rangeKey(range) {
  return `${range.action}:${range.min}:${range.max}`;
}

// It starts at the least amount no button offers already (its button then never repeats one).
function amountPicker(range, chosen, presets) {
  const row = el("div", "amount");
  const slider = el("input");
  let start = range.min;
  while (presets.includes(start) && start + range.step <= range.max) start += range.step;
  Object.assign(slider, { type: "range", min: range.min, max: range.max, step: range.step, value: start });
  if (chosen !== null) slider.value = chosen;
  slider.id = "amount";
  slider.dataset.range = rangeKey(range);
  const action = { action: range.action, arg: range.min };
  const button = el("button", "primary");
  button.dataset.action = `${range.action}-amount`;
  const label = () => {
    action.arg = Number(slider.value);
    button.textContent = range.label.replace("{pay}", coins(action.arg - range.own)).replace("{total}", coins(action.arg));
  };
  slider.oninput = label;
  label();
  button.onclick = () => act(action, button);
  row.append(slider, button);
  return row;
}

// -- the countdown: the deadline the server set, by its clock -------------------------------------
function tick() {
  const clock = $("clock");
  tickPause();
  if (!view || !view.deadline || view.closed || view.phase === "reveal") { clock.hidden = true; return; }
  const left = Math.max(0, view.deadline - (Date.now() / 1000 + offset));
  clock.hidden = false;
  const whole = view.turn_seconds || 30;
  $("clock-bar").style.width = `${Math.min(100, (left / whole) * 100)}%`;
  $("clock-label").textContent = words[`clock.${view.phase}`] || ""; // what the time is for: 叫庄, 补牌, 下注
  const whole_seconds = Math.ceil(left);
  $("clock-text").textContent = whole_seconds < 60 ? say("seconds", { n: whole_seconds })
    : `${Math.floor(whole_seconds / 60)}:${String(whole_seconds % 60).padStart(2, "0")}`; // 4:56
  clock.classList.toggle("low", left < whole / 3);
}
setInterval(tick, 250);

// -- between rounds (issue 49, point 4): the pause before auto-ready, and the cards of an all-in's
// reveal arriving one by one (the server sends each step; the newest cards of a seat turn over)
function tickPause() {
  const line = $("pause");
  const left = view && view.pause_until && !view.in_round && !view.closed
    ? Math.ceil(view.pause_until - (Date.now() / 1000 + offset)) : 0;
  line.hidden = left <= 0;
  if (left > 0) line.textContent = say("pause", { n: left });
}

const cardsSeen = {}; // "table:round:person" -> how many of their cards were drawn last
function dealtAnew(seat, row) {
  if (!view) return row; // (a replay draws seats with no live view: nothing is turned over)
  const key = `${view.table}:${view.round}:${seat.person}`;
  const before = cardsSeen[key];
  cardsSeen[key] = (seat.cards || []).length;
  if (before === undefined || view.phase !== "reveal") return row; // (a deal lands as it always did)
  [...row.children].slice(before).forEach((card) => card.classList.add("dealt"));
  return row;
}

// -- acting ---------------------------------------------------------------------------------------
function toast(text) {
  if (!text) return;
  const box = $("toast");
  box.textContent = text;
  box.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { box.hidden = true; }, 3500);
}

function confirmDialog(text) {
  return new Promise((resolve) => {
    $("modal-text").textContent = text;
    $("modal-ok").textContent = say("confirm");
    $("modal-cancel").textContent = say("cancel");
    $("modal").hidden = false;
    const done = (answer) => { $("modal").hidden = true; resolve(answer); };
    $("modal-ok").onclick = () => done(true);
    $("modal-cancel").onclick = () => done(false);
  });
}

async function post(action) {
  const response = await fetch("api/act", {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Telegram-Init-Data": initData },
    body: JSON.stringify({ table: tableId, round: view.round, action: action.action, arg: action.arg }),
  });
  let answer = {};
  try { answer = await response.json(); } catch (error) { answer = { text: String(response.status) }; }
  return answer;
}

async function act(action, button) {
  button.disabled = true;
  try {
    let answer = await post(action);
    if (answer.confirm) { // an escape: asked twice, as the table's button is pressed twice
      if (await confirmDialog(answer.text)) answer = await post(action);
      else return;
    }
    if (answer.ok === false || answer.alert) toast(answer.text);
    else if (answer.text) toast(answer.text);
    if (answer.ok !== false && tg && tg.HapticFeedback) tg.HapticFeedback.impactOccurred("light");
  } finally {
    button.disabled = false;
  }
}

// -- live: the table pushed at each change; a reconnect restores it --------------------------------
function show(data) {
  view = data;
  offset = view.now - Date.now() / 1000;
  render();
}

function refused(text) {
  $("banner").hidden = false;
  $("banner").textContent = text;
  document.body.dataset.refused = "1";
}

// The stream is opened with a ticket got just before (the initData goes in a header, never in a
// URL; a ticket is good once, for seconds): each reconnect gets a new one.
let failures = 0;
let retry = null;
function connectLater(seconds) {
  clearTimeout(retry);
  retry = setTimeout(connect, seconds * 1000);
}

let connecting = false;
async function connect() {
  if (connecting) return;
  clearTimeout(retry);
  if (stream) { stream.close(); stream = null; }
  let response;
  let answer = {};
  connecting = true;
  try {
    response = await fetch(`api/ticket?table=${tableId}`, { method: "POST", headers: { "X-Telegram-Init-Data": initData } });
    answer = await response.json();
  } catch (error) { // the network, or not the server's answer: keep trying, less and less often
    failures += 1;
    connectLater(Math.min(30, 2 ** failures));
    return;
  } finally {
    connecting = false;
  }
  if (response.status === 429 || response.status === 503) { // too many pages open, or busy: later
    connectLater(Number(response.headers.get("Retry-After")) || 10);
    return;
  }
  if (!response.ok) { refused(answer.text || String(response.status)); renderSummary(answer.summary); return; }
  const opened = new EventSource(`api/events?table=${tableId}&ticket=${encodeURIComponent(answer.ticket)}`);
  stream = opened;
  opened.onmessage = (event) => {
    failures = 0;
    $("banner").dataset.offline = "";
    show(JSON.parse(event.data));
  };
  opened.addEventListener("renew", () => { // its time is up: the next one at once, not "offline"
    opened.close();
    if (stream !== opened) return;
    stream = null;
    connect();
  });
  opened.onerror = () => { // ended (the server restarted, the network): a new ticket
    opened.close();
    if (stream !== opened) return;
    stream = null;
    if (view) { $("banner").hidden = false; $("banner").textContent = say("offline"); }
    failures += 1;
    connectLater(Math.min(30, failures));
  };
}

document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "visible" && !stream && !document.body.dataset.refused) connect();
});

if (/^r\d+_\d+$/.test(startParam)) {
  // a finished round's replay (回放): replay.js opens it
} else if (!initData || !tableId) {
  $("banner").hidden = false;
  $("banner").textContent = document.body.dataset.unauthorized || "";
  document.body.dataset.refused = "1";
} else {
  connect();
}
