// The playground's step detail: each check of the last round drawn as the stepper draws a frame (stepper.js,
// stepper.css), with the stepper's own classes: the top few characters' p (solid) and q (outline, the proposal
// hatched) as bars, the accept chance min(1, p/q) and where the draw u fell on a line from 0 to 1, and on a
// rejection the residual: min(p, q) kept by acceptance, max(0, p - q) topped up, and the replacement's draw.
// Nothing here computes a verdict: every number comes from the round playground-core.js played.
// A classic script (global PlaygroundStep), so the page also works from file://.
(function () {
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const SHOWN = 5; // characters per check: the most likely under p or q, plus the proposal and the replacement
const MARKS = { accepted: "\u2713", rejected: "\u2717", replacement: "\u21bb", dropped: "\u2013", bonus: "+" };
const WORDS = { accepted: "Accepted", rejected: "Rejected", replacement: "Replacement", bonus: "Bonus", dropped: "Dropped" };

function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  node.append(...children.filter((c) => c !== null && c !== undefined && c !== ""));
  return node;
}

function s(tag, attrs, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
  node.append(...children);
  return node;
}

const pct = (x) => `${(Math.max(0, Math.min(1, x)) * 100).toFixed(2)}%`;
const anchor = (x) => (x < 0.2 ? "start" : x > 0.8 ? "end" : "middle");
const v = (name) => h("var", null, name);

const { visible } = window.PlaygroundText;

// Every decimal through the site's one rounding rule; a small probability to two significant digits, so a
// character the draft proposed never reads q = 0.000.
const fixed = (x, digits) => window.Decimals.fixed(Number(x), digits);
const prob = (x) => (x > 0 && x < 0.0005 ? fixed(x, 1 - Math.floor(Math.log10(x))) : fixed(x, 3));

// The characters a check shows: the SHOWN most likely under p or q (alternately), and those it must show.
function shownChars(p, q, must) {
  const byP = p.map((x, i) => [x, i]).sort((a, b) => b[0] - a[0]).map(([, i]) => i);
  const byQ = q.map((x, i) => [x, i]).sort((a, b) => b[0] - a[0]).map(([, i]) => i);
  const picked = new Set(must.filter((i) => i !== null && i !== undefined));
  for (let n = 0; picked.size < SHOWN && n < p.length; n++) {
    picked.add(byP[n]);
    if (picked.size < SHOWN) picked.add(byQ[n]);
  }
  return [...picked].sort((a, b) => p[b] - p[a] || q[b] - q[a] || a - b);
}

function verdict(kind, ch, note) {
  return h("p", { class: `verdict verdict-${kind}`, "data-verdict": kind },
    h("strong", null, h("span", { "aria-hidden": "true" }, MARKS[kind]), ` ${WORDS[kind]}:`),
    " ", h("span", { class: "tok" }, visible(ch)), note ? ` \u2014 ${note}` : "");
}

// The stepper's p-and-q table: a row per shown character, p and q as numbers and as two bars.
function pqTable(vocab, p, q, shown, proposal, position) {
  const rows = shown.map((i) => {
    const proposed = i === proposal;
    return h("tr", proposed ? { class: "proposal" } : null,
      h("th", { scope: "row" }, visible(vocab[i]), proposed ? " " : "", proposed ? h("span", { class: "tag" }, "proposed") : ""),
      h("td", null, prob(p[i])), h("td", null, prob(q[i])),
      h("td", { class: "pq-bars" }, s("svg", { "aria-hidden": "true", focusable: "false" },
        s("rect", { class: "bar-p", x: 0, y: 1, width: pct(p[i]), height: 7 }),
        s("rect", { class: "bar-q", x: 0.75, y: 10.75, width: pct(q[i]), height: 5.5 }))));
  });
  return h("table", { class: "pq-table pg-pq-table" },
    h("caption", { class: "visually-hidden" }, `Target p and draft q at character ${position}, the ${shown.length} most likely characters`),
    h("thead", null, h("tr", null, h("th", { scope: "col" }, "Character"), h("th", { scope: "col" }, v("p")),
      h("th", { scope: "col" }, v("q")), h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Bars")))),
    h("tbody", null, ...rows));
}

// Where u fell against the accept chance a, on a line from 0 to 1 (the stepper's u-line).
function uLine(a, u) {
  const at = (x) => pct(0.04 + 0.92 * x);
  return s("svg", { class: "u-line", "data-u-line": "", role: "img", "aria-label": `Number line from 0 to 1: accept chance ${prob(a)}, u = ${prob(u)}` },
    s("rect", { class: "ul-keep", x: "4%", y: 16, width: pct(0.92 * a), height: 8 }),
    s("rect", { class: "ul-reject", x: at(a), y: 16, width: pct(0.92 * (1 - a)), height: 8 }),
    s("line", { class: "ul-tick", x1: at(a), x2: at(a), y1: 11, y2: 29 }),
    s("text", { x: at(a), y: 9, "text-anchor": anchor(a) }, prob(a)),
    s("text", { x: 0, y: 24 }, "0"),
    s("text", { x: "100%", y: 24, "text-anchor": "end" }, "1"),
    s("circle", { class: "ul-u", cx: at(u), cy: 20, r: 5 }),
    s("text", { class: "ul-u-label", x: at(u), y: 43, "text-anchor": anchor(u) }, `u = ${prob(u)}`));
}

// A draw from a distribution: 0 to 1 cut into each character's share, the chosen one marked (the stepper's
// draw-line); only shares wide enough for a label, and the chosen one, are named.
function drawLine(vocab, shares, u, uLabel, chosen, name) {
  const parts = [];
  let low = 0;
  shares.forEach((share, i) => {
    if (!(share > 0)) return;
    parts.push(s("rect", { class: `dl-seg${i === chosen ? " is-drawn" : ""}`, x: pct(low), y: 14, width: pct(share), height: 12 }));
    if (share >= 0.08 || i === chosen) parts.push(s("text", { x: pct(low + share / 2), y: 10, "text-anchor": "middle" }, visible(vocab[i])));
    low += share;
  });
  return s("svg", { class: "draw-line", role: "img", "aria-label": `${name} from 0 to 1 cut into each character's share; ${uLabel} falls in ${visible(vocab[chosen])}` },
    ...parts,
    s("line", { class: "dl-u", x1: pct(u), x2: pct(u), y1: 12, y2: 30 }),
    s("text", { x: pct(u), y: 42, "text-anchor": anchor(u) }, uLabel));
}

// Why a rejection keeps the output exact, for the shown characters: min(p, q) from acceptance plus the
// residual's top-up max(0, p - q) reaches p (the stepper's exactness picture).
function exactness(vocab, p, q, shown, position) {
  const parts = [];
  let y = 0;
  for (const i of shown) {
    const lo = Math.min(p[i], q[i]);
    const top = Math.max(0, p[i] - q[i]);
    parts.push(s("text", { x: 0, y: y + 10 }, visible(vocab[i])),
      s("rect", { class: "bar-acc", x: pct(0.16), y: y + 1, width: pct(0.84 * lo), height: 7 }),
      s("rect", { class: "bar-res", x: pct(0.16 + 0.84 * lo), y: y + 1, width: pct(0.84 * top), height: 7 }),
      s("rect", { class: "bar-q", x: pct(0.16), y: y + 10.75, width: pct(0.84 * q[i]), height: 3.5 }));
    y += 18;
  }
  return [
    h("p", { class: "draw-note" }, "Why the output stays exact: per character, acceptance gives min(", v("p"), ", ", v("q"), ") ",
      h("span", { class: "key key-acc" }), ", the residual tops up max(0, ", v("p"), " \u2212 ", v("q"), ") ",
      h("span", { class: "key key-res" }), ": together ", v("p"), ". The replacement is drawn from the top-ups rescaled to sum to 1, the residual:"),
    s("svg", { class: "exact", height: y, role: "img",
      "aria-label": `At character ${position}, for every character, min(p, q) plus max(0, p \u2212 q) reaches p` }, ...parts),
  ];
}

// One round, check by check: a card per drafted character, then the bonus or the replacement.
// rows: { target, draft } as the round compared them (one-hot at temperature 0).
function roundDetail({ round, number, vocab, rows, greedy, residual }) {
  const index = new Map(vocab.map((c, i) => [c, i]));
  const proposals = Array.from(round.proposals);
  const cards = h("ol", { class: "pg-check-cards" });
  round.verdicts.forEach((verdictKind, j) => {
    const x = index.get(proposals[j]);
    const card = h("li", { class: "pg-check-card", "data-position": String(j + 1), "data-verdict": verdictKind });
    const title = h("h5", { class: "frame-title" }, h("span", { class: "frame-count" }, `Check ${j + 1} of ${round.k}`),
      ` The draft proposed \u201c${visible(proposals[j])}\u201d`);
    card.append(title);
    const check = round.checks[j];
    if (!check) {
      card.append(verdict("dropped", proposals[j], "proposed after the rejection, never checked."));
      cards.append(card);
      return;
    }
    const p = rows.target[j];
    const q = rows.draft[j];
    const replacement = verdictKind === "rejected" ? index.get(round.replacement) : null;
    const shown = shownChars(p, q, [x, replacement]);
    card.append(pqTable(vocab, p, q, shown, x, j + 1));
    const evidence = h("p", { class: "evidence" }, v("p"), " = ", h("span", { class: "pg-p" }, prob(check.p)), ", ",
      v("q"), " = ", h("span", { class: "pg-q" }, prob(check.q)), ": accept chance min(1, ", v("p"), "/", v("q"), ") = ",
      h("span", { class: "pg-a" }, prob(check.a)), ". ",
      h("span", { class: "pg-u" }, check.u === null
        ? (check.a >= 1 ? "p \u2265 q: kept without a draw." : "p = 0: rejected without a draw.")
        : `u = ${prob(check.u)} ${check.u < check.a ? "<" : "\u2265"} ${prob(check.a)}.`));
    card.append(evidence);
    if (check.u !== null) card.append(uLine(check.a, check.u));
    if (verdictKind === "accepted") {
      card.append(verdict("accepted", proposals[j], greedy ? "it is the target's top choice." : ""));
    } else {
      card.append(verdict("rejected", proposals[j], greedy ? "the target's top choice is another character." : ""));
      card.append(...exactness(vocab, p, q, shown, j + 1),
        drawLine(vocab, residual(p, q), round.replacementDraw, `u\u2032 = ${prob(round.replacementDraw)}`, replacement, "The residual"),
        verdict("replacement", round.replacement));
    }
    cards.append(card);
  });
  if (round.bonus !== null) {
    const k = round.k;
    const card = h("li", { class: "pg-check-card", "data-position": String(k + 1), "data-verdict": "bonus" },
      h("h5", { class: "frame-title" }, h("span", { class: "frame-count" }, "Bonus"), " Every check passed"),
      h("p", { class: "draw-note" }, `The same target pass gives one more character, drawn from `, v("p"), ` at character ${k + 1}:`),
      drawLine(vocab, rows.target[k], round.bonusDraw, `u = ${prob(round.bonusDraw)}`, index.get(round.bonus), "The target's p"),
      verdict("bonus", round.bonus));
    cards.append(card);
  }
  const committed = Array.from(round.committed).length;
  return h("div", { class: "pg-step-box stepper-frame-like", role: "region", "aria-label": `Round ${number}, check by check` },
    h("h4", { class: "pg-step-title" }, `Round ${number}, check by check`),
    h("p", { class: "pg-small" }, `The draft proposed \u201c${proposals.map(visible).join("")}\u201d; the target checked them in order in one pass and committed ${committed} character${committed === 1 ? "" : "s"}.` +
      (greedy ? " Greedy: each row is its model's top choice, with probability 1." : "")),
    cards);
}

window.PlaygroundStep = { roundDetail, shownChars };
})();
