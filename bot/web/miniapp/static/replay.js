// 回放: a finished round watched again, step by step (opened by a link whose startapp is
// r<table>_<round>). The server sends every step as this person may see it (their own cards, and
// only the cards the table saw: face up, shown naturals, the show-down); the page only moves
// between them: ◀ ▶ one step, ⏯ one step a second. It reuses app.js's drawing (seats, cards,
// results) and words. Loaded after app.js.
"use strict";

const replayMatch = /^r(\d+)_(\d+)$/.exec(startParam);
let replay = null;
let replayAt = 0;
let replayTimer = null;

function replayButton(label, action, onclick) {
  const button = el("button", "secondary", label);
  button.dataset.action = action;
  button.onclick = onclick;
  return button;
}

function showReplayStep() {
  const steps = replay.steps;
  const step = steps[replayAt];
  $("title").textContent = `${say("title")} · ${replay.title} · ${say("round", { round: replay.round })}`;
  const stakes = [say("step", { n: replayAt + 1, count: steps.length })];
  if (step.pot !== null && step.pot !== undefined) stakes.unshift(say("pot", { amount: coins(step.pot) }));
  else if (step.base) stakes.unshift(say("base", { amount: coins(step.base) })); // (muxi: no pot)
  $("stakes").textContent = stakes.join(" · ");
  $("others").replaceChildren();
  $("mine").replaceChildren();
  for (const seat of step.seats) (seat.me ? $("mine") : $("others")).append(seatBox(seat));
  $("turn").textContent = step.text;
  $("turn").dataset.kind = step.kind;
  view = { results: step.kind === "results" ? replay.results : null }; // (app.js draws the results)
  renderResults();
  $("replay-previous").disabled = replayAt === 0;
  $("replay-next").disabled = replayAt === steps.length - 1;
  $("replay-play").textContent = replayTimer ? say("pause") : say("play");
}

function replayGo(at) {
  replayAt = Math.max(0, Math.min(replay.steps.length - 1, at));
  if (replayAt === replay.steps.length - 1) replayStop();
  showReplayStep();
}

function replayStop() {
  clearInterval(replayTimer);
  replayTimer = null;
}

function replayToggle() {
  if (replayTimer) {
    replayStop();
  } else {
    if (replayAt === replay.steps.length - 1) replayAt = -1; // at the end: from the start again
    replayTimer = setInterval(() => replayGo(replayAt + 1), 1000);
    replayGo(replayAt + 1);
  }
  showReplayStep();
}

function showProof() {
  const proof = $("proof");
  const verify = el(replay.verify_link ? "a" : "div", "verify", replay.verify);
  if (replay.verify_link) { // the bot answers with the round's deck and salt (as /verify does)
    verify.href = replay.verify_link;
    verify.onclick = (event) => { if (tg) { event.preventDefault(); tg.openTelegramLink(replay.verify_link); } };
  }
  proof.replaceChildren(el("div", "", say("commitment")), el("code", "", replay.commitment), verify);
  proof.hidden = false;
}

async function openReplay() {
  const [, table, round] = replayMatch;
  let response;
  let answer = {};
  try {
    response = await fetch(`api/replay?table=${table}&round=${round}`, { headers: { "X-Telegram-Init-Data": initData } });
    answer = await response.json();
  } catch (error) {
    refused(response ? String(response.status) : say("offline"));
    return;
  }
  if (!response.ok) { refused(answer.text || String(response.status)); return; }
  replay = answer;
  words = replay.strings;
  document.documentElement.lang = replay.language === "en" ? "en" : replay.language === "zh-hant" ? "zh-TW" : "zh-CN";
  document.body.dataset.replay = "1";
  showProof();
  if (!replay.kept || !replay.steps.length) { // played before replays were kept: its results and proof
    $("title").textContent = `${say("title")} · ${replay.title} · ${say("round", { round: replay.round })}`;
    $("banner").hidden = false;
    $("banner").textContent = say("not_kept");
    $("felt").hidden = true;
    view = { results: replay.results };
    renderResults();
    return;
  }
  $("actions").replaceChildren(
    replayButton(say("previous"), "replay-previous", () => { replayStop(); replayGo(replayAt - 1); }),
    replayButton(say("play"), "replay-play", replayToggle),
    replayButton(say("next"), "replay-next", () => { replayStop(); replayGo(replayAt + 1); }),
  );
  for (const button of $("actions").children) button.id = button.dataset.action;
  $("replay-play").className = "primary";
  replayGo(0);
}

if (replayMatch) {
  if (initData) openReplay();
  else {
    $("banner").hidden = false;
    $("banner").textContent = document.body.dataset.unauthorized || "";
    document.body.dataset.refused = "1";
  }
}
