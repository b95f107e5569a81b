// The playground widget: reads the embedded models, drives the controls, draws the rounds.
// All sampling lives in playground-core.js (loaded first, as window.PlaygroundCore); this file
// only touches the page.
(function () {
"use strict";
const {
  ACCEPTED, DROPPED, REJECTED, compareNextChar, loadModels, mulberry32,
  speculativeRound, summarise, targetAlone,
} = window.PlaygroundCore;

const SVG_NS = "http://www.w3.org/2000/svg";

function visible(ch) {
  if (ch === " ") return "\u2423";
  if (ch === "\n") return "\u21b5";
  if (ch === "\t") return "\u21e5";
  return ch;
}

function spoken(ch) {
  if (ch === " ") return "space";
  if (ch === "\n") return "newline";
  return `\u201c${ch}\u201d`;
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

// A span may not carry aria-label (it has no role), so the spoken form is hidden text instead.
function chip(kind, symbol, text, label) {
  return el("span", { class: `pg-chip pg-chip-${kind}`, title: label },
    el("span", { class: "pg-chip-symbol", "aria-hidden": "true", text: symbol }),
    el("span", { class: "pg-chip-text", "aria-hidden": "true", text }),
    el("span", { class: "visually-hidden", text: label }));
}

function roundItem(round, number) {
  const item = el("li", { class: "pg-round" });
  item.append(el("span", { class: "pg-round-label", text: `Round ${number}` }));
  const drafted = el("span", { class: "pg-drafted" },
    el("span", { class: "pg-small", text: "drafted " }),
    el("code", { text: [...round.proposals].map(visible).join("") || "(none)" }));
  item.append(drafted);
  const chips = el("span", { class: "pg-chips" });
  round.verdicts.forEach((verdict, i) => {
    const ch = round.proposals[i];
    if (verdict === ACCEPTED) {
      chips.append(chip("accepted", "\u2713", visible(ch), `accepted ${spoken(ch)}`));
    } else if (verdict === REJECTED) {
      chips.append(chip("rejected", "\u2717", `${visible(ch)}\u2192${visible(round.replacement)}`,
        `rejected ${spoken(ch)}, replaced by ${spoken(round.replacement)}`));
    } else if (verdict === DROPPED) {
      chips.append(chip("dropped", "\u2026", visible(ch), `dropped unverified ${spoken(ch)}`));
    }
  });
  if (round.bonus !== null) {
    chips.append(chip("bonus", "+", visible(round.bonus), `bonus ${spoken(round.bonus)} from the target`));
  }
  item.append(chips);
  item.append(el("span", { class: "pg-small", text: ` ${round.committed.length} committed` }));
  return item;
}

function barChart(result, vocab, samples) {
  const order = result.exact.map((p, i) => [p, i]).sort((a, b) => b[0] - a[0]);
  const shown = order.slice(0, 10).map(([, i]) => i);
  const rest = order.slice(10).map(([, i]) => i);
  const bars = shown.map((i) => ({
    label: visible(vocab[i]), spoken: spoken(vocab[i]),
    spec: result.spec[i] / samples, alone: result.alone[i] / samples, exact: result.exact[i],
  }));
  const sum = (arr) => rest.reduce((s, i) => s + arr[i], 0);
  bars.push({
    label: "other", spoken: "any other character",
    spec: sum(result.spec) / samples, alone: sum(result.alone) / samples, exact: sum(result.exact),
  });
  const top = Math.max(...bars.map((b) => Math.max(b.spec, b.alone, b.exact)), 0.01);
  const width = 640;
  const height = 220;
  const band = (width - 40) / bars.length;
  const svg = document.createElementNS(SVG_NS, "svg");
  svg.setAttribute("viewBox", `0 0 ${width} ${height + 30}`);
  svg.setAttribute("class", "pg-chart");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", "Next-character frequencies: speculative sampling beside the target alone; the table below gives the numbers.");
  bars.forEach((b, n) => {
    const x = 40 + n * band;
    const add = (cls, value, offset) => {
      const h = (value / top) * height;
      const rect = document.createElementNS(SVG_NS, "rect");
      rect.setAttribute("x", String(x + offset));
      rect.setAttribute("y", String(height - h));
      rect.setAttribute("width", String(band * 0.38));
      rect.setAttribute("height", String(h));
      rect.setAttribute("class", cls);
      svg.append(rect);
    };
    add("pg-bar-spec", b.spec, band * 0.08);
    add("pg-bar-alone", b.alone, band * 0.5);
    const tick = document.createElementNS(SVG_NS, "line");
    const y = height - (b.exact / top) * height;
    tick.setAttribute("x1", String(x + band * 0.04));
    tick.setAttribute("x2", String(x + band * 0.92));
    tick.setAttribute("y1", String(y));
    tick.setAttribute("y2", String(y));
    tick.setAttribute("class", "pg-bar-exact");
    svg.append(tick);
    const text = document.createElementNS(SVG_NS, "text");
    text.setAttribute("x", String(x + band / 2));
    text.setAttribute("y", String(height + 20));
    text.setAttribute("text-anchor", "middle");
    text.textContent = b.label;
    svg.append(text);
  });
  const table = el("table", { class: "pg-table" });
  table.append(el("caption", { text: `Next character after the prompt, ${samples.toLocaleString("en")} draws each` }));
  const head = el("tr");
  for (const h of ["Character", "Speculative sampling", "Target alone", "Target probability"]) {
    head.append(el("th", { scope: "col", text: h }));
  }
  table.append(el("thead", {}, head));
  const body = el("tbody");
  for (const b of bars) {
    const row = el("tr");
    row.append(el("th", { scope: "row", text: b.label, title: b.spoken }));
    for (const v of [b.spec, b.alone, b.exact]) row.append(el("td", { text: v.toFixed(3) }));
    body.append(row);
  }
  table.append(body);
  return { svg, table };
}

function init(root) {
  const data = JSON.parse(document.getElementById("playground-data").textContent);
  const models = loadModels(data.models);
  const cost = data.cost_model;
  const $ = (id) => root.querySelector(`#${id}`);
  const form = $("pg-form");
  const prompt = $("pg-prompt");
  const kInput = $("pg-k");
  const kOut = $("pg-k-value");
  const tInput = $("pg-temperature");
  const tOut = $("pg-temperature-value");
  const seedInput = $("pg-seed");
  const output = $("pg-output");
  const roundsList = $("pg-rounds");
  const stats = $("pg-stats");
  const greedyBox = $("pg-greedy");
  const live = $("pg-live");
  const checkResult = $("pg-check-result");

  let state;
  const mode = () => form.querySelector('input[name="pg-mode"]:checked').value;
  const temperature = () => (mode() === "greedy" ? 0 : Number(tInput.value));
  const k = () => Number(kInput.value);

  function reset() {
    state = { prompt: prompt.value, text: "", rounds: [], rng: mulberry32(Number(seedInput.value) >>> 0) };
    roundsList.replaceChildren();
    greedyBox.replaceChildren();
    render();
  }

  function render() {
    output.replaceChildren(
      el("span", { class: "pg-prompt-text", text: state.prompt }),
      el("span", { class: "pg-generated", text: state.text }));
    const s = summarise(state.rounds, cost);
    const cells = [
      ["Rounds", String(s.rounds)],
      ["Characters committed", String(s.chars)],
      ["Characters per round", s.perRound.toFixed(2)],
      ["Acceptance rate", `${(100 * s.acceptance).toFixed(1)}%`],
      [`Speedup (round cost ${k()} \u00d7 ${cost.draft_step} + ${cost.verify_step})`, `${s.speedup.toFixed(2)}\u00d7`],
    ];
    stats.replaceChildren(...cells.flatMap(([dt, dd]) => [el("dt", { text: dt }), el("dd", { text: dd })]));
    return s;
  }

  function announce(message) {
    live.textContent = message;
  }

  function step(maxRounds) {
    const before = state.rounds.length;
    const fragment = document.createDocumentFragment();
    const target = state.text.length + (maxRounds ? 0 : data.generate_chars);
    do {
      const round = speculativeRound({
        target: models.target, draft: models.draft, vocab: models.vocab,
        context: state.prompt + state.text, k: k(), temperature: temperature(), nextUniform: state.rng,
      });
      state.rounds.push(round);
      state.text += round.committed;
      fragment.append(roundItem(round, state.rounds.length));
    } while (!maxRounds ? state.text.length < target : state.rounds.length - before < maxRounds);
    roundsList.append(fragment);
    const s = render();
    const added = state.rounds.length - before;
    let message = `${added} round${added === 1 ? "" : "s"} run; ${s.perRound.toFixed(2)} characters per round, acceptance ${(100 * s.acceptance).toFixed(1)}%, speedup ${s.speedup.toFixed(2)} times.`;
    if (mode() === "greedy") message += ` ${compareGreedy()}`;
    announce(message);
  }

  function compareGreedy() {
    const alone = targetAlone({
      target: models.target, vocab: models.vocab, context: state.prompt,
      length: state.text.length, temperature: 0,
    });
    const same = alone === state.text;
    greedyBox.replaceChildren(
      el("h4", { text: "Greedy: speculative against the target alone" }),
      el("p", { class: "pg-small", text: "Speculative decoding:" }),
      el("pre", { class: "pg-sample", text: state.prompt + state.text }),
      el("p", { class: "pg-small", text: "Target alone, one character per step:" }),
      el("pre", { class: "pg-sample", text: state.prompt + alone }),
      el("p", { class: same ? "pg-verdict-ok" : "pg-verdict-bad", text: same ? "\u2713 Identical, character for character." : "\u2717 The outputs differ." }));
    return same ? "Greedy output is identical to the target alone." : "Greedy output differs from the target alone.";
  }

  function check() {
    const samples = Math.max(100, Math.min(20000, Number($("pg-samples").value) || 3000));
    const t = temperature();
    const result = compareNextChar({
      target: models.target, draft: models.draft, vocab: models.vocab,
      context: prompt.value, k: k(), temperature: t, samples, nextUniform: mulberry32((Number(seedInput.value) >>> 0) + 1),
    });
    const { svg, table } = barChart(result, models.vocab, samples);
    const legend = el("p", { class: "pg-legend" },
      el("span", { class: "pg-key pg-key-spec", "aria-hidden": "true" }), " speculative sampling (left, solid) ",
      el("span", { class: "pg-key pg-key-alone", "aria-hidden": "true" }), " target alone (right, dashed outline) ",
      el("span", { class: "pg-key pg-key-exact", "aria-hidden": "true" }), " target probability (line)");
    const summary = `Total variation distance between the two histograms: ${result.tvd.toFixed(3)} over ${samples} draws each` +
      (t === 0 ? " (greedy: both always give the target's top character)." : ".");
    const box = el("div", { class: "table-scroll", role: "region", tabindex: "0", "aria-label": "Table: next-character frequencies" }, table);
    checkResult.replaceChildren(el("p", { text: summary }), legend, svg, box);
    announce(summary);
  }

  kInput.addEventListener("input", () => { kOut.value = kInput.value; reset(); });
  tInput.addEventListener("input", () => { tOut.value = Number(tInput.value).toFixed(1); });
  form.addEventListener("change", (event) => {
    if (event.target.name === "pg-mode") {
      tInput.disabled = mode() === "greedy";
      reset();
      announce(`Mode: ${mode()}. Output cleared.`);
    }
  });
  prompt.addEventListener("change", reset);
  seedInput.addEventListener("change", reset);
  form.addEventListener("submit", (event) => { event.preventDefault(); step(0); });
  $("pg-step").addEventListener("click", () => step(1));
  $("pg-reset").addEventListener("click", () => { reset(); announce("Output cleared."); });
  $("pg-check").addEventListener("click", check);
  for (const button of root.querySelectorAll("[data-prompt]")) {
    button.addEventListener("click", () => {
      prompt.value = button.dataset.prompt;
      reset();
      announce(`Prompt set to an example ${button.dataset.kind} prompt.`);
      prompt.focus();
    });
  }
  kOut.value = kInput.value;
  tOut.value = Number(tInput.value).toFixed(1);
  root.querySelector(".pg-widget").hidden = false;
  for (const node of root.querySelectorAll(".pg-nojs")) node.hidden = true;
  reset();
}

const root = document.getElementById("playground");
if (root && document.getElementById("playground-data")) init(root);
})();
