// Playing cards drawn as SVG by the project (no image set): a card from its token ("AS", "10H",
// "SJ", "BJ"), or its back for "?". Suits are paths, so every phone draws them the same.
"use strict";

const SUIT_PATHS = {
  H: "M50 88C18 62 4 44 14 26 24 10 44 12 50 30 56 12 76 10 86 26 96 44 82 62 50 88Z",
  D: "M50 6 86 50 50 94 14 50Z",
  S: "M50 8C82 36 98 52 88 68 78 82 60 78 54 68L62 92H38L46 68C40 78 22 82 12 68 2 52 18 36 50 8Z",
  C: "M50 10A17 17 0 0 1 64 38 17 17 0 1 1 58 66L64 92H36L42 66A17 17 0 1 1 36 38 17 17 0 0 1 50 10Z",
};
const RED = "#c62828";
const BLACK = "#1b1b1f";

function suitPath(suit, x, y, size, colour) {
  const scale = size / 100;
  return `<path d="${SUIT_PATHS[suit]}" fill="${colour}" transform="translate(${x} ${y}) scale(${scale})"/>`;
}

function cardSVG(token, label) {
  const title = `<title>${label || token}</title>`;
  const frame = (fill, stroke) =>
    `<rect x="1" y="1" width="68" height="98" rx="7" fill="${fill}" stroke="${stroke}" stroke-width="1.5"/>`;
  if (token === "?") {
    return `<svg class="card back" viewBox="0 0 70 100" role="img" aria-label="🂠">${title}${frame("#8e2430", "#5e1820")}
      <rect x="6" y="6" width="58" height="88" rx="4" fill="none" stroke="#f3d08a" stroke-width="1.5"/>
      <path d="M35 22 52 50 35 78 18 50Z" fill="none" stroke="#f3d08a" stroke-width="2"/>
      <circle cx="35" cy="50" r="6" fill="#f3d08a"/></svg>`;
  }
  if (token === "SJ" || token === "BJ") {
    const colour = token === "BJ" ? RED : BLACK;
    const letters = "JOKER".split("").map((c, i) =>
      `<text x="9" y="${17 + i * 11}" font-size="10" font-weight="700" fill="${colour}" text-anchor="middle" font-family="sans-serif">${c}</text>`).join("");
    return `<svg class="card joker" viewBox="0 0 70 100" role="img" aria-label="${label || token}">${title}${frame("#fff", "#bbb")}${letters}
      <path d="M42 28 47 42 62 42 50 51 54 66 42 57 30 66 34 51 22 42 37 42Z" fill="${colour}"/>
      <text x="42" y="86" font-size="11" font-weight="700" fill="${colour}" text-anchor="middle" font-family="sans-serif">${token === "BJ" ? "大王" : "小王"}</text></svg>`;
  }
  const suit = token.slice(-1);
  const rank = token.slice(0, -1);
  const colour = suit === "H" || suit === "D" ? RED : BLACK;
  const rankText = (x, y, rotate) =>
    `<text x="${x}" y="${y}" font-size="${rank.length > 1 ? 16 : 19}" font-weight="700" fill="${colour}" text-anchor="middle"
      font-family="Georgia, 'Noto Serif', serif"${rotate ? ` transform="rotate(180 ${x} ${y - 6})"` : ""}>${rank}</text>`;
  return `<svg class="card" viewBox="0 0 70 100" role="img" aria-label="${label || token}">${title}${frame("#fff", "#bbb")}
    ${rankText(13, 22, false)}${suitPath(suit, 5, 26, 16, colour)}
    ${suitPath(suit, 20, 34, 36, colour)}
    ${rankText(57, 84, true)}</svg>`;
}

window.cardSVG = cardSVG;
