// Watching the table: while this page is visible it tells the bot so (a heartbeat every few
// seconds, POST api/watch, one at once when it becomes visible) and says when it is hidden; the
// turn it shows as the viewer's own goes with each heartbeat (at once when a turn comes), so the
// bot need not buzz them with that turn's prompt as a new DM (bot/send/watched.py). Their turn is
// told here: its banner lit (watching.css; app.js writes it and buzzes). Loaded after app.js,
// whose globals it reads (view, tableId, initData, startParam, say); app.js calls watchShown()
// after each render.
"use strict";

let watchEvery = 3; // seconds between heartbeats: each answer says how often (bot/web/miniapp/watching.py)
const WATCH_GAP_MS = 1100; // posts at least this far apart (the bot takes about one a second)
let watchTimer = null;
let watchLast = 0; // when the last post went (ms)
let watchTold = null; // the turn last told to the bot
let watchOff = false; // the bot refused this page (not its table, not a member): no more heartbeats

function watchTurn() { // the engine's timer of the turn this page shows as the viewer's, else null
  return view && !view.closed && !view.dealing && document.body.dataset.myTurn === "1" ? view.timer : null;
}

function watchRequest(visible, keepalive) {
  return fetch("api/watch", {
    method: "POST",
    keepalive, // (a page going away: the request still goes; sendBeacon cannot carry the header)
    headers: { "Content-Type": "application/json", "X-Telegram-Init-Data": initData },
    body: JSON.stringify({ table: tableId, visible, turn: visible ? watchTurn() : null }),
  });
}

async function watchBeat() {
  clearTimeout(watchTimer);
  if (watchOff || document.visibilityState !== "visible" || !tableId || !initData) return;
  const since = Date.now() - watchLast;
  if (since < WATCH_GAP_MS) { watchTimer = setTimeout(watchBeat, WATCH_GAP_MS - since); return; }
  watchLast = Date.now();
  watchTold = watchTurn();
  let wait = watchEvery;
  try {
    const response = await watchRequest(true, false);
    if (response.ok) {
      const answer = await response.json();
      if (answer.every > 0) wait = watchEvery = answer.every;
    } else if (response.status === 429 || response.status === 503) {
      wait = Number(response.headers.get("Retry-After")) || watchEvery;
    } else if (response.status === 401 || response.status === 403 || response.status === 404) {
      watchOff = true; // (the page says why already: the stream was refused too)
      return;
    }
  } catch (error) { /* the network: the next heartbeat tries again */ }
  if (document.visibilityState === "visible") {
    clearTimeout(watchTimer);
    watchTimer = setTimeout(watchBeat, wait * 1000);
  }
}

function watchHidden() {
  clearTimeout(watchTimer);
  if (watchOff || !tableId || !initData) return;
  watchTold = null;
  watchRequest(false, true).catch(() => {}); // (missed: the heartbeat goes stale, the same in seconds)
}

// After each render (app.js, which already writes "轮到你了" and buzzes as a turn comes): the
// turn's banner lit (watching.css), and a turn of theirs told to the bot at once.
function watchShown(myTurn) {
  document.body.dataset.myTurn = myTurn ? "1" : "";
  const turn = watchTurn();
  if (turn !== null && turn !== watchTold && document.visibilityState === "visible") watchBeat();
}

document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "visible") watchBeat();
  else watchHidden();
});
window.addEventListener("pagehide", watchHidden);
if (tableId && initData && !/^r\d+_\d+$/.test(startParam)) watchBeat();
