// The playground widget: reads the models (assets/playground-models-KIND.js), drives the controls,
// draws the rounds. All sampling and training lives in playground-core.js (window.PlaygroundCore);
// this file only touches the page. Other files load with plain <script> elements, which work from
// file:// as well as from a server.
(function () {
"use strict";
const Core = window.PlaygroundCore;
const { ACCEPTED, DROPPED, REJECTED } = Core;
const { visible, spoken, el } = window.PlaygroundText;

// Every decimal goes through the site's one rounding rule (decimals.js: half away from zero, as the
// page's Python-printed numbers).
const fixed = (x, digits) => window.Decimals.fixed(typeof x === "object" ? x : Number(x), digits);
// A probability to three decimals, or to two significant digits when it is smaller than that shows:
// a character the draft proposed never reads q = 0.000.
const prob = (x) => (x > 0 && x < 0.0005 ? fixed(x, 1 - Math.floor(Math.log10(x))) : fixed(x, 3));
const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;
const percent = (x) => window.Decimals.pct(typeof x === "object" ? x : Number(x), 1);

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
  const stepKey = $("pg-step-key");
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
    stepKey.hidden = true;
    render();
  }

  // One summary object feeds the output, the counts, the cost meter and the status line alike.
  // Before the first round there is nothing to measure: the rates read as a dash, not as zero.
  function render() {
    const prose = el("span", { class: "pg-prompt-text", title: "prompt", text: state.prompt });
    const committed = state.marks.map(([ch, provenance]) => el("span", { class: "pg-c", "data-provenance": provenance, text: ch }));
    output.replaceChildren(prose, ...committed);
    const s = Core.summarise(state.rounds, cost);
    const x = Core.exactRatios(s, data.cost_model_exact);  // what is printed: rounded from the counts
    const none = s.rounds === 0;
    const dash = "\u2014";
    const predicted = s.verified ? Core.leviathanSpeedup(s.acceptance, k(), c) : 0;
    const cells = [
      ["Rounds", String(s.rounds)],
      ["Characters committed", String(s.chars)],
      ["Characters per round", none ? dash : fixed(x.perRound, 2)],
      ["Acceptance rate", s.verified ? percent(x.acceptance) : dash],
      ["Speedup", none ? dash : `${fixed(x.speedup, 2)}\u00d7`],
      [`Closed form at this acceptance, K = ${k()}`, s.verified ? `${fixed(predicted, 2)}\u00d7` : dash],
    ];
    stats.replaceChildren(...cells.flatMap(([dt, dd]) => [el("dt", { text: dt }), el("dd", { text: dd })]));
    if (none) {
      meter.replaceChildren(el("p", { text: "Nothing generated yet: press Generate or Step one round." }));
      return s;
    }
    const specWidth = (100 * s.cost) / s.plainCost;
    meter.replaceChildren(
      el("p", { text: `Speculative: ${plural(s.targetPasses, "target pass", "target passes")} + ${plural(s.draftSteps, "draft step", "draft steps")} \u00d7 ${cost.draft_step} = ${fixed(x.cost, 1)} target-pass units.` }),
      el("div", { class: "pg-meter-bar pg-meter-spec", vars: { "--w": `${Math.min(specWidth, 100)}%` }, "aria-hidden": "true" }),
      el("p", { text: `Plain decoding of the same ${plural(s.chars, "character", "characters")}: ${plural(s.chars, "target pass", "target passes")} = ${fixed(x.plainCost, 1)} units.` }),
      el("div", { class: "pg-meter-bar pg-meter-plain", vars: { "--w": "100%" }, "aria-hidden": "true" }),
      el("p", { class: "pg-meter-total", text: `Speedup under the site's cost model: ${fixed(x.speedup, 2)}\u00d7.` }));
    const caveat = repeatCaveat();
    if (caveat) meter.append(el("p", { class: "pg-caveat", text: caveat }));
    return s;
  }

  // A run that is mostly one character repeated is accepted because both models repeat it, not because
  // the draft guesses well: say so beside the speedup.
  function repeatCaveat() {
    const ch = Core.chars(state.text).length >= 20 ? Core.dominantChar(state.text) : null;
    if (ch === null) return "";
    return `Read this speedup with care: more than half of the text is ${spoken(ch)} repeated, which both models ` +
      "predict easily, so the acceptance here says little about drafting real text.";
  }

  function statusFor(s) {
    if (!s.rounds) return "0 rounds so far.";
    const x = Core.exactRatios(s, data.cost_model_exact);
    return `${s.rounds} round${s.rounds === 1 ? "" : "s"} so far, ${s.chars} characters committed, ` +
      `${fixed(x.perRound, 2)} per round, acceptance ${percent(x.acceptance)}, speedup ${fixed(x.speedup, 2)}\u00d7.`;
  }

  function announce(message) {
    live.textContent = message;
  }

  // Greedy can fall into a loop: a model that sees the last few characters, always taking its top choice, is a
  // fixed walk from state to state, so a state met again starts a cycle. The page keeps writing and says where
  // the cycle starts; the target alone, run beside it, cycles in the very same place.
  function loopStart(pair) {
    return Core.greedyLoopStart(state.prompt + state.text, Core.chars(state.prompt).length, pair.target.order - 1);
  }

  function loopNote(pair, start) {
    return `The text loops from character ${start + 1} of the output on: a greedy model that sees only the last ` +
      `${pair.target.order - 1} characters has come back to ${pair.target.order - 1} characters it wrote before, so it ` +
      "writes the same stretch again and again. The target alone loops in the same place, so speculative decoding loops with it.";
  }

  // Brings the step detail into view when its top is off screen (a phone: it sits below the output and the
  // counts); smooth only where the reader has not asked for reduced motion.
  function showDetail() {
    const top = detail.getBoundingClientRect().top;
    if (top >= 0 && top < window.innerHeight - 160) return;  // its top, and a few lines of it, are on screen
    const still = window.matchMedia("(prefers-reduced-motion: reduce)").matches;
    detail.scrollIntoView({ block: "start", behavior: still ? "auto" : "smooth" });
  }

  async function step(oneRound) {
    if (busy) return;
    const kind = corpus();
    const pair = loadedPair(kind) || await pairFor(kind);
    const greedy = mode() === "greedy";
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
    if (oneRound) {
      const rows = greedy
        ? { target: round.targetRows.map(Core.oneHot), draft: round.draftRows.map(Core.oneHot) }
        : { target: round.targetRows, draft: round.draftRows };
      detail.replaceChildren(window.PlaygroundStep.roundDetail({
        round, number: state.rounds.length, vocab: pair.vocab, rows, greedy, residual: Core.residual,
      }));
    } else {
      detail.replaceChildren();
    }
    stepKey.hidden = !oneRound;  // the key to the bars, shown with them
    const s = render();
    const added = state.rounds.length - before;
    let message = `Added ${added} round${added === 1 ? "" : "s"}. ${statusFor(s)}`;
    const start = greedy ? loopStart(pair) : null;
    if (greedy) message += ` ${compareGreedy(pair, start)}`;
    if (start !== null) message += ` ${loopNote(pair, start)}`;
    const caveat = repeatCaveat();
    if (caveat) message += ` ${caveat}`;
    announce(message);
    if (oneRound) showDetail();
  }

  function compareGreedy(pair, start) {
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
    if (start !== null) greedyBox.append(el("p", { class: "pg-loop-note", "data-loop-start": String(start), text: loopNote(pair, start) }));
    return same ? "Greedy output is identical to the target alone." : "Greedy output differs from the target alone.";
  }

  // "Check the distribution": the first three characters after the prompt, many times over, by speculative
  // sampling and by the target alone; per position both histograms against the target's exact distribution.
  // A Web Worker draws them (the page stays responsive); where none will start (a page opened from a file in
  // Chromium), the same steps run here in slices of a few milliseconds.
  let checking = false;
  async function check() {
    if (checking) return;
    checking = true;
    const button = $("pg-check");
    button.disabled = true;
    try {
      const kind = corpus();
      const pair = loadedPair(kind) || await pairFor(kind);
      const field = $("pg-samples");  // its min, max and first value are the site's settings
      const samples = Math.max(Number(field.min), Math.min(Number(field.max), Number(field.value) || Number(field.defaultValue)));
      const t = temperature();
      const job = { context: prompt.value, k: k(), temperature: t, samples, seed: (Number(seedInput.value) >>> 0) + 1, positions: 3 };
      checkResult.replaceChildren(el("p", { class: "pg-small", text: `Drawing ${samples.toLocaleString("en")} times…` }));
      let results;
      let where = "worker";
      try {
        results = await checkInWorker({ task: "check", kind, exports: pair.source === "browser" ? pair.exports : null, job });
      } catch (error) {
        where = "page";
        const steps = Core.firstCharsSteps({
          target: pair.target, draft: pair.draft, vocab: pair.vocab, ...job, nextUniform: Core.mulberry32(job.seed),
        });
        results = await runSliced(steps, () => {});
      }
      showCheck(results, pair.vocab, samples, t, where);
    } finally {
      checking = false;
      button.disabled = false;
    }
  }

  function showCheck(results, vocab, samples, t, where) {
    const legend = el("p", { class: "pg-legend" },
      el("span", { class: "pg-key pg-key-exact", "aria-hidden": "true" }), " target's probability p (bar) ",
      el("span", { class: "pg-key pg-key-spec", "aria-hidden": "true" }), " speculative sampling (dot) ",
      el("span", { class: "pg-key pg-key-alone", "aria-hidden": "true" }), " target alone (open square)");
    const parts = [legend];
    const said = [];
    for (const result of results) {
      const { svg, table } = window.PlaygroundChart.barChart(result, vocab, samples, checkResult.clientWidth, result.position);
      const summary = `Total variation distance between the two histograms: ${fixed(result.tvd, 3)}` +
        (t === 0 ? " (greedy: both always give the target's top choice)." : `; sampling noise alone gives ${fixed(result.noise, 3)} on average.`);
      said.push(`Character ${result.position}: ${summary}`);
      const box = el("details", { class: "pg-check-numbers" }, el("summary", { text: `The numbers for character ${result.position}` }),
        el("div", { class: "table-scroll", role: "region", tabindex: "0", "aria-label": `Table: character ${result.position}, frequencies` }, table));
      parts.push(el("section", { class: "pg-check-position", "data-position": String(result.position), "aria-label": `Character ${result.position}` },
        el("h4", { text: `Character ${result.position}` }),
        el("p", { class: "pg-check-summary", "data-tvd": String(result.tvd), "data-noise": String(result.noise), text: summary }),
        svg, box));
    }
    const how = where === "worker" ? "drawn in a background thread, so the page stayed responsive"
      : "drawn on the page's own thread in short slices, as this browser starts no background thread here";
    const head = el("p", { class: "pg-check-head", "data-where": where,
      text: `${samples.toLocaleString("en")} draws of the first ${results.length} characters each way, ${how}.` });
    checkResult.replaceChildren(head, ...parts);
    announce(`${head.textContent} ${said.join(" ")}`);
  }

  // Retrain the chosen pair from the published corpus, then use it. A Web Worker does the counting, so
  // the page stays responsive; where the browser will not start one (a page opened from file:// in
  // Chromium), the same steps run here in slices of a few milliseconds, yielding between slices.
  async function train() {
    if (busy) return;
    busy = true;
    trainButton.disabled = true;
    const kind = corpus();
    const facts = data.pairs[kind];
    const orders = { target: facts.orders.target, draft: facts.orders.draft, min_count: facts.orders.min_count };
    const progress = (value) => { trainProgress.value = value; };
    try {
      trainProgress.value = 0;
      trainResult.replaceChildren(el("p", { text: `Counting the ${kind} corpus\u2026` }));
      let where = "in a background thread (a Web Worker), so the page stayed responsive throughout";
      let result;
      try {
        result = await trainInWorker(kind, orders, progress);
      } catch (error) {
        if (!(error instanceof NoWorker)) throw error;
        where = "in short slices on the page's own thread, as this browser starts no background thread for a page opened from a file";
        await loadScript("assets/playground-train.js");
        await loadScript(`assets/corpus/${kind}.js`);
        result = await runSliced(window.PlaygroundTrain.trainPairSteps(window.PlaygroundCorpora[kind], orders), progress);
      }
      trainProgress.value = 1;
      const lines = el("ul", { class: "pg-train-lines" });
      const trained = {};
      let all = true;
      for (const name of ["draft", "target"]) {
        trained[name] = Core.createModel(result.exports[name], result.vocab);
        const digest = result.digests[name];
        const same = digest === facts.digests[name];
        all = all && same;
        lines.append(el("li", { "data-model": name, "data-digest": digest, "data-same": String(same),
          text: `${name}: ${fixed(result.bits[name], 2)} bits per character on held-out text (build: ${fixed(facts.bits_per_char[name], 2)}); ` +
            `count digest ${digest} ${same ? "\u2713 equals the build's" : `\u2717 differs from the build's ${facts.digests[name]}`}.` }));
      }
      pairs[kind] = {
        target: trained.target, draft: trained.draft, vocab: Core.chars(result.vocab), source: "browser",
        exports: { vocab: result.vocab, target: result.exports.target, draft: result.exports.draft },  // for the check's worker
      };
      const seen = `What you just saw: your browser counted every run of up to ${orders.target} characters in the first nine ` +
        `tenths of the corpus (${result.trainChars.toLocaleString("en")} characters), ${where}. ` +
        (all ? "Its counts equal the build's, digest for digest, so generation gives the very same text as before."
          : "Its counts differ from the build's, so generation may differ too.");
      trainResult.replaceChildren(lines, el("p", { class: "pg-train-done", text: `Generation now uses the ${kind} pair trained in this browser.` }),
        el("p", { class: "pg-train-seen", text: seen }));
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
  tInput.addEventListener("input", () => { tOut.value = fixed(tInput.value, 1); });
  form.addEventListener("change", (event) => {
    if (event.target.name === "pg-mode") {
      tInput.disabled = mode() === "greedy";
      reset();
      announce(`Mode: ${mode()}. Output cleared.`);
    } else if (event.target.name === "pg-corpus") {
      // A prompt the reader typed stays; an example prompt (of either corpus) gives way to this corpus's first
      // example, and the status line says which. K stays where the reader put it.
      const kind = corpus();
      const examples = Object.values(data.pairs).flatMap((p) => p.prompts);
      let said = "Your prompt is kept.";
      if (!prompt.value.trim() || examples.includes(prompt.value)) {
        const old = prompt.value;
        prompt.value = data.pairs[kind].prompts[0];
        said = old.trim() ? "The example prompt is replaced by one from this corpus." : "An example prompt from this corpus is filled in.";
      }
      showExamples();
      reset();
      pairFor(kind).then(() => announce(`Corpus: ${kind}. ${said} K stays at ${kInput.value}. Output cleared.`));
    }
  });
  // on each edit, not on leaving the box: a reset then would move the buttons under a click that is under way
  prompt.addEventListener("input", reset);
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
  tOut.value = fixed(tInput.value, 1);
  showExamples();
  root.querySelector(".pg-widget").hidden = false;
  for (const node of root.querySelectorAll(".pg-nojs")) node.hidden = true;
  reset();
}

// The browser would not start a worker (or its script would not load): work on the page instead.
class NoWorker extends Error {}

function trainInWorker(kind, orders, onProgress) {
  return inWorker({ kind, orders }, onProgress);
}

// The distribution check in a worker; any failure at all (no worker, a script it could not load) rejects, and
// the page then draws on its own thread.
function checkInWorker(message) {
  return inWorker(message, () => {}).then((result) => result, (error) => { throw new NoWorker(error.message); });
}

function inWorker(message, onProgress) {
  return new Promise((resolve, reject) => {
    let worker;
    try {
      worker = new Worker("assets/playground-worker.js");
    } catch (error) {
      reject(new NoWorker(error.message));
      return;
    }
    let heard = false;
    worker.onmessage = (event) => {
      heard = true;
      const reply = event.data;
      if (reply.progress !== undefined) {
        onProgress(reply.progress);
        return;
      }
      worker.terminate();
      if (reply.error) reject(new Error(reply.error));
      else resolve(reply.result);
    };
    worker.onerror = (event) => {
      event.preventDefault();
      worker.terminate();
      reject(heard ? new Error(event.message) : new NoWorker(event.message || "the worker did not start"));
    };
    worker.postMessage(message);
  });
}

// Runs a generator of training steps on this thread, about SLICE_MS at a time, giving the browser a turn
// between slices; reports each slice's progress. Resolves with the generator's return value.
const SLICE_MS = 25;
async function runSliced(steps, onProgress) {
  for (;;) {
    const end = performance.now() + SLICE_MS;
    let r;
    do r = steps.next(); while (!r.done && performance.now() < end);
    if (r.done) return r.value;
    onProgress(r.value);
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
}

const root = document.getElementById("playground");
if (root && document.getElementById("playground-data")) init(root);
})();
