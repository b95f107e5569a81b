// The playground widget: reads the models (assets/playground-models-KIND.js), drives the controls,
// draws the rounds. All sampling and training lives in playground-core.js (window.PlaygroundCore);
// this file only touches the page. Other files load with plain <script> elements, which work from
// file:// as well as from a server.
(function () {
"use strict";
const Core = window.PlaygroundCore;
const { ACCEPTED, DROPPED, REJECTED } = Core;

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
  if (ch === "\t") return "tab";
  return `\u201c${ch}\u201d`;
}

// The page's CSP forbids style attributes, so custom properties go through the CSSOM ("vars").
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key === "vars") for (const [name, v] of Object.entries(value)) node.style.setProperty(name, v);
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

const fixed = (x, digits) => Number(x).toFixed(digits);
// A probability to three decimals, or to two significant digits when it is smaller than that shows:
// a character the draft proposed never reads q = 0.000.
const prob = (x) => (x > 0 && x < 0.0005 ? Number(x).toPrecision(2) : fixed(x, 3));
const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;
const percent = (x) => `${(100 * x).toFixed(1)}%`;

// Loads assets/NAME.js once; resolves when it has run (a plain script element, fine from file://).
const loaded = new Map();
function loadScript(src) {
  if (!loaded.has(src)) {
    loaded.set(src, new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = src;
      script.onload = resolve;
      script.onerror = () => reject(new Error(`could not load ${src}`));
      document.head.append(script);
    }));
  }
  return loaded.get(src);
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
  item.append(el("span", { class: "pg-drafted" },
    el("span", { class: "pg-small", text: "drafted " }),
    el("code", { text: Core.chars(round.proposals).map(visible).join("") || "(none)" })));
  const chips = el("span", { class: "pg-chips" });
  const proposals = Core.chars(round.proposals);
  round.verdicts.forEach((verdict, i) => {
    const ch = proposals[i];
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
  item.append(el("span", { class: "pg-small", text: ` ${Core.chars(round.committed).length} committed` }));
  return item;
}

// p and q as two small bars side by side, with the numbers beside them (the bars are decoration).
function pairedBars(p, q) {
  const bar = (cls, v) => el("span", { class: `pg-mini ${cls}`, vars: { "--v": String(Math.max(0, Math.min(1, v))) }, "aria-hidden": "true" });
  return el("span", { class: "pg-pq" }, bar("pg-mini-p", p), bar("pg-mini-q", q));
}

// Step mode: every drafted character of the last round with p, q, min(1, p/q) and the draw.
function stepDetail(round, number) {
  const table = el("table", { class: "pg-table pg-step-table" });
  table.append(el("caption", { text: `Round ${number}, check by check: p is the target's probability of the drafted character, q the draft's` }));
  const head = el("tr");
  for (const h of ["Position", "Drafted", "p (target)", "q (draft)", "p and q", "min(1, p/q)", "Draw u", "Verdict"]) {
    head.append(el("th", { scope: "col", text: h }));
  }
  table.append(el("thead", {}, head));
  const body = el("tbody");
  const proposals = Core.chars(round.proposals);
  round.verdicts.forEach((verdict, j) => {
    const row = el("tr", { "data-verdict": verdict });
    row.append(el("th", { scope: "row", text: String(j + 1) }));
    row.append(el("td", {}, el("code", { text: visible(proposals[j]), title: spoken(proposals[j]) })));
    const check = round.checks[j];
    if (!check) {
      row.append(el("td", { colspan: "5", text: "not checked: an earlier character was rejected" }));
      row.append(el("td", { text: "\u2026 dropped" }));
    } else {
      row.append(el("td", { class: "pg-p", text: prob(check.p) }));
      row.append(el("td", { class: "pg-q", text: prob(check.q) }));
      row.append(el("td", {}, pairedBars(check.p, check.q)));
      row.append(el("td", { class: "pg-a", text: prob(check.a) }));
      const drawText = check.u === null ? (check.a >= 1 ? "none: p \u2265 q, kept for sure" : "none: p = 0")
        : `${prob(check.u)} ${check.u < check.a ? "<" : "\u2265"} ${prob(check.a)}`;
      row.append(el("td", { class: "pg-u", text: drawText }));
      row.append(el("td", { text: verdict === ACCEPTED ? "\u2713 accepted" : `\u2717 rejected \u2192 ${visible(round.replacement)}` }));
    }
    body.append(row);
  });
  const last = el("tr", { "data-verdict": round.bonus !== null ? "bonus" : "replacement" });
  last.append(el("th", { scope: "row", text: round.bonus !== null ? String(round.verdicts.length + 1) : "\u2014" }));
  if (round.bonus !== null) {
    last.append(el("td", {}, el("code", { text: visible(round.bonus), title: spoken(round.bonus) })));
    last.append(el("td", { colspan: "5", text: `every check passed: the target's pass gives one more character, drawn with u = ${fixed(round.bonusDraw, 3)}` }));
    last.append(el("td", { text: "+ bonus" }));
  } else {
    last.append(el("td", {}, el("code", { text: visible(round.replacement), title: spoken(round.replacement) })));
    last.append(el("td", { colspan: "5", text: `drawn from the residual norm(max(0, p \u2212 q)) with u = ${fixed(round.replacementDraw, 3)}` }));
    last.append(el("td", { text: "replacement" }));
  }
  body.append(last);
  table.append(body);
  return el("div", { class: "table-scroll", role: "region", tabindex: "0", "aria-label": "Table: the last round, check by check" }, table);
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
  const shape = (name, attrs) => {
    const node = document.createElementNS(SVG_NS, name);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
    svg.append(node);
    return node;
  };
  bars.forEach((b, n) => {
    const x = 40 + n * band;
    const rect = (cls, value, offset) => {
      const h = (value / top) * height;
      shape("rect", { x: x + offset, y: height - h, width: band * 0.38, height: h, class: cls });
    };
    rect("pg-bar-spec", b.spec, band * 0.08);
    rect("pg-bar-alone", b.alone, band * 0.5);
    const y = height - (b.exact / top) * height;
    shape("line", { x1: x + band * 0.04, x2: x + band * 0.92, y1: y, y2: y, class: "pg-bar-exact" });
    shape("text", { x: x + band / 2, y: height + 20, "text-anchor": "middle" }).textContent = b.label;
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
  const cost = data.cost_model;
  const c = cost.draft_step / cost.verify_step;
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
  const meter = $("pg-meter");
  const detail = $("pg-step-detail");
  const greedyBox = $("pg-greedy");
  const live = $("pg-live");
  const checkResult = $("pg-check-result");
  const trainButton = $("pg-train");
  const trainProgress = $("pg-train-progress");
  const trainResult = $("pg-train-result");

  const pairs = {}; // kind -> { target, draft, vocab, source: "build" | "browser" }
  let state;
  let busy = false;
  const corpus = () => form.querySelector('input[name="pg-corpus"]:checked').value;
  const mode = () => form.querySelector('input[name="pg-mode"]:checked').value;
  const temperature = () => (mode() === "greedy" ? 0 : Number(tInput.value));
  const k = () => Number(kInput.value);

  function loadedPair(kind) {
    if (!pairs[kind] && window.PlaygroundModels && window.PlaygroundModels[kind]) {
      pairs[kind] = { ...Core.loadModels(window.PlaygroundModels[kind]), source: "build" };
    }
    return pairs[kind];
  }

  // The pair for a corpus; synchronous once its models are loaded, so a click's output is there
  // as soon as the click has been handled.
  async function pairFor(kind) {
    if (!loadedPair(kind)) await loadScript(`assets/playground-models-${kind}.js`);
    return loadedPair(kind);
  }

  function reset() {
    state = { prompt: prompt.value, text: "", marks: [], rounds: [], rng: Core.mulberry32(Number(seedInput.value) >>> 0) };
    roundsList.replaceChildren();
    greedyBox.replaceChildren();
    detail.replaceChildren();
    render();
  }

  // One summary object feeds the output, the counts, the cost meter and the status line alike.
  function render() {
    const prose = el("span", { class: "pg-prompt-text", title: "prompt", text: state.prompt });
    const committed = state.marks.map(([ch, provenance]) => el("span", { class: "pg-c", "data-provenance": provenance, text: ch }));
    output.replaceChildren(prose, ...committed);
    const s = Core.summarise(state.rounds, cost);
    const predicted = s.verified ? Core.leviathanSpeedup(s.acceptance, k(), c) : 0;
    const cells = [
      ["Rounds", String(s.rounds)],
      ["Characters committed", String(s.chars)],
      ["Characters per round", fixed(s.perRound, 2)],
      ["Acceptance rate", percent(s.acceptance)],
      ["Speedup", `${fixed(s.speedup, 2)}\u00d7`],
      [`Closed form at this acceptance, K = ${k()}`, s.verified ? `${fixed(predicted, 2)}\u00d7` : "\u2014"],
    ];
    stats.replaceChildren(...cells.flatMap(([dt, dd]) => [el("dt", { text: dt }), el("dd", { text: dd })]));
    const plainWidth = s.plainCost ? 100 : 0;
    const specWidth = s.plainCost ? (100 * s.cost) / s.plainCost : 0;
    meter.replaceChildren(
      el("p", { text: `Speculative: ${plural(s.targetPasses, "target pass", "target passes")} + ${plural(s.draftSteps, "draft step", "draft steps")} \u00d7 ${cost.draft_step} = ${fixed(s.cost, 1)} target-pass units.` }),
      el("div", { class: "pg-meter-bar pg-meter-spec", vars: { "--w": `${Math.min(specWidth, 100)}%` }, "aria-hidden": "true" }),
      el("p", { text: `Plain decoding of the same ${plural(s.chars, "character", "characters")}: ${plural(s.chars, "target pass", "target passes")} = ${fixed(s.plainCost, 1)} units.` }),
      el("div", { class: "pg-meter-bar pg-meter-plain", vars: { "--w": `${plainWidth}%` }, "aria-hidden": "true" }),
      el("p", { class: "pg-meter-total", text: `Speedup under the site's cost model: ${fixed(s.speedup, 2)}\u00d7.` }));
    return s;
  }

  function statusFor(s) {
    return `${s.rounds} round${s.rounds === 1 ? "" : "s"} so far, ${s.chars} characters committed, ` +
      `${fixed(s.perRound, 2)} per round, acceptance ${percent(s.acceptance)}, speedup ${fixed(s.speedup, 2)}\u00d7.`;
  }

  function announce(message) {
    live.textContent = message;
  }

  async function step(oneRound) {
    if (busy) return;
    const kind = corpus();
    const pair = loadedPair(kind) || await pairFor(kind);
    const before = state.rounds.length;
    const fragment = document.createDocumentFragment();
    const goal = Core.chars(state.text).length + data.generate_chars;
    let round;
    do {
      round = Core.speculativeRound({
        target: pair.target, draft: pair.draft, vocab: pair.vocab,
        context: state.prompt + state.text, k: k(), temperature: temperature(), nextUniform: state.rng,
      });
      state.rounds.push(round);
      state.text += round.committed;
      const proposals = Core.chars(round.proposals);
      const accepted = round.verdicts.filter((v) => v === ACCEPTED).length;
      for (let j = 0; j < accepted; j++) state.marks.push([proposals[j], "accepted"]);
      if (round.bonus !== null) state.marks.push([round.bonus, "bonus"]);
      else state.marks.push([round.replacement, "replaced"]);
      fragment.append(roundItem(round, state.rounds.length));
    } while (!oneRound && Core.chars(state.text).length < goal);
    roundsList.append(fragment);
    detail.replaceChildren(oneRound ? stepDetail(round, state.rounds.length) : "");
    const s = render();
    const added = state.rounds.length - before;
    let message = `Added ${added} round${added === 1 ? "" : "s"}. ${statusFor(s)}`;
    if (mode() === "greedy") message += ` ${compareGreedy(pair)}`;
    announce(message);
  }

  function compareGreedy(pair) {
    const alone = Core.targetAlone({
      target: pair.target, vocab: pair.vocab, context: state.prompt,
      length: Core.chars(state.text).length, temperature: 0,
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

  async function check() {
    const pair = loadedPair(corpus()) || await pairFor(corpus());
    const field = $("pg-samples");  // its min, max and first value are the site's settings
    const samples = Math.max(Number(field.min), Math.min(Number(field.max), Number(field.value) || Number(field.defaultValue)));
    const t = temperature();
    const result = Core.compareNextChar({
      target: pair.target, draft: pair.draft, vocab: pair.vocab,
      context: prompt.value, k: k(), temperature: t, samples, nextUniform: Core.mulberry32((Number(seedInput.value) >>> 0) + 1),
    });
    const { svg, table } = barChart(result, pair.vocab, samples);
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

  const pause = () => new Promise((resolve) => setTimeout(resolve, 0));

  // Retrain the chosen pair from the published corpus, level by level, then use it.
  async function train() {
    if (busy) return;
    busy = true;
    trainButton.disabled = true;
    const kind = corpus();
    const facts = data.pairs[kind];
    try {
      trainResult.replaceChildren(el("p", { text: `Loading the ${kind} corpus\u2026` }));
      await loadScript(`assets/corpus/${kind}.js`);
      const text = window.PlaygroundCorpora[kind];
      const vocab = Core.vocabularyOf(text);
      const { train: trainChars, heldOut } = Core.splitHeldOut(text);
      const steps = facts.orders.target + facts.orders.draft;
      let done = 0;
      const lines = el("ul", { class: "pg-train-lines" });
      trainResult.replaceChildren(el("p", { text: `Counting ${trainChars.length.toLocaleString("en")} training characters.` }), lines);
      const trained = {};
      for (const name of ["draft", "target"]) {
        await pause();
        const exported = Core.trainExport(trainChars, vocab, facts.orders[name], facts.orders.min_count, () => {
          done++;
          trainProgress.value = done / steps;
        });
        await pause();
        const model = Core.createModel(exported, vocab);
        const bits = Core.bitsPerChar(model, heldOut);
        const digest = Core.countDigest(exported);
        const same = digest === facts.digests[name];
        trained[name] = model;
        lines.append(el("li", { "data-model": name, "data-digest": digest, "data-same": String(same),
          text: `${name}: ${fixed(bits, 2)} bits per character on held-out text (build: ${fixed(facts.bits_per_char[name], 2)}); ` +
            `count digest ${digest} ${same ? "\u2713 equals the build's" : `\u2717 differs from the build's ${facts.digests[name]}`}.` }));
        trainProgress.value = done / steps;
      }
      pairs[kind] = { target: trained.target, draft: trained.draft, vocab: Core.chars(vocab), source: "browser" };
      trainResult.append(el("p", { class: "pg-train-done", text: `Generation now uses the ${kind} pair trained in this browser.` }));
      announce(`Trained the ${kind} pair here; generation now uses it.`);
      reset();
    } catch (error) {
      trainResult.replaceChildren(el("p", { class: "pg-verdict-bad", text: `Training failed: ${error.message}` }));
    } finally {
      busy = false;
      trainButton.disabled = false;
    }
  }

  function showExamples() {
    for (const button of root.querySelectorAll("[data-prompt]")) button.hidden = button.dataset.kind !== corpus();
  }

  kInput.addEventListener("input", () => { kOut.value = kInput.value; reset(); announce(`K is ${kInput.value}. Output cleared.`); });
  tInput.addEventListener("input", () => { tOut.value = Number(tInput.value).toFixed(1); });
  form.addEventListener("change", (event) => {
    if (event.target.name === "pg-mode") {
      tInput.disabled = mode() === "greedy";
      reset();
      announce(`Mode: ${mode()}. Output cleared.`);
    } else if (event.target.name === "pg-corpus") {
      const kind = corpus();
      prompt.value = data.pairs[kind].prompts[0];
      kInput.value = String(data.pairs[kind].measurements.best_k);
      kOut.value = kInput.value;
      showExamples();
      reset();
      pairFor(kind).then(() => announce(`Corpus: ${kind}. Output cleared.`));
    }
  });
  prompt.addEventListener("change", reset);
  seedInput.addEventListener("change", reset);
  form.addEventListener("submit", (event) => { event.preventDefault(); step(false); });
  $("pg-step").addEventListener("click", () => step(true));
  $("pg-reset").addEventListener("click", () => { reset(); announce("Output cleared. 0 rounds so far."); });
  $("pg-check").addEventListener("click", check);
  trainButton.addEventListener("click", train);
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
  showExamples();
  root.querySelector(".pg-widget").hidden = false;
  for (const node of root.querySelectorAll(".pg-nojs")) node.hidden = true;
  reset();
}

const root = document.getElementById("playground");
if (root && document.getElementById("playground-data")) init(root);
})();
