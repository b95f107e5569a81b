// The log reader on the page "In practice": reads what the reader types (or the address, #rates=...),
// computes exactly with LogReaderCore and prints every decimal with decimals.js, the rule the pages' Python
// filters use. The page says what the reader does without this script; it only adds the form.
(function () {
  "use strict";

  const L = window.LogReaderCore;
  const D = window.Decimals;
  const W = window.WhatIfCore;

  function init(root) {
    if (!L || !D || !W) return;
    const part = (name) => root.querySelector(`[data-lr="${name}"]`);
    const readout = (name) => root.querySelector(`[data-readout="${name}"]`);
    const app = part("app");
    const ui = {
      conventions: Array.from(root.querySelectorAll('[data-lr="convention"]')),
      rates: part("rates"), rounds: part("rounds"), accepted: part("accepted"), k: part("k"), cost: part("cost"),
      ratesRow: part("rates-row"), countsRow: part("counts-row"), results: part("results"), link: part("link"),
    };
    const maxK = Number(root.dataset.maxK) || L.MAX_POSITIONS;
    const defaults = { convention: "unconditional", rates: "", rounds: "", accepted: "", k: "3", cost: root.dataset.defaultCost || "1/10" };

    const convention = () => (ui.conventions.find((r) => r.checked) || ui.conventions[0]).value;
    const state = () => ({
      convention: convention(), rates: ui.rates.value, rounds: ui.rounds.value, accepted: ui.accepted.value,
      k: ui.k.value, cost: ui.cost.value,
    });

    function fill(s) {
      const full = { ...defaults, ...s };
      for (const r of ui.conventions) r.checked = r.value === full.convention;
      ui.rates.value = full.rates.split(/[\s,;]+/).filter(Boolean).join(", ");
      ui.rounds.value = full.rounds;
      ui.accepted.value = full.accepted;
      ui.k.value = full.k;
      ui.cost.value = full.cost;
    }

    const list = (xs) => xs.map((x) => (x === null ? "none reached" : D.fixed(x, 3))).join(", ");

    function show() {
      const s = state();
      const counts = s.convention === "counts";
      ui.ratesRow.hidden = counts;
      ui.countsRow.hidden = !counts;
      const r = L.read(s, maxK);
      const error = readout("error");
      if (r.error) {
        error.textContent = r.message;
        error.hidden = false;
        ui.results.classList.add("lr-stale");
        readout("convention").textContent = "";
        return;
      }
      error.hidden = true;
      error.textContent = "";
      ui.results.classList.remove("lr-stale");
      readout("mean-length").textContent = D.fixed(r.meanLength, 2);
      const unknown = "not in a count; type the rates per position for these";
      readout("conditional").textContent = r.conditional ? list(r.conditional) : unknown;
      readout("unconditional").textContent = r.unconditional ? list(r.unconditional) : unknown;
      readout("alpha").textContent = `${D.fixed(W.frac(BigInt(r.alphaThousandths), 1000n), 3)} (at K = ${r.k})`;
      readout("speedup").textContent = `${D.times(r.speedup, 2)} at K = ${r.k}`;
      const iid = `K = ${r.iidBestK} (${D.times(r.iidBestSpeedup, 2)}) if every position accepted at the single rate`;
      let best;
      if (r.bestK === null) best = `${iid}; counts alone cannot say how a shorter draft would do`;
      else if (r.bestK < r.k) best = `K = ${r.bestK} (${D.times(r.bestSpeedup, 2)}) of the lengths your log covers; ${iid}`;
      else best = `K = ${r.k} is the best your log covers, so a longer draft may do better; ${iid}`;
      readout("best-k").textContent = best;
      const words = {
        unconditional: "Read as unconditional rates, each the share of all rounds that passed the position, as llama.cpp and vLLM print them.",
        conditional: "Read as conditional rates, each the share of the rounds reaching a position that passed it, as the EAGLE papers print them.",
        counts: "Read from counts: the mean length is 1 plus the accepted proposals per round.",
      };
      readout("convention").textContent = `${words[r.convention]} Speedups assume, as the rest of this site does, that a check costs one target step and a draft step costs c of one.`;
      ui.link.href = L.fragmentFor(s);
    }

    function remember() {
      show();
      if (history.replaceState) history.replaceState(null, "", L.fragmentFor(state()));
    }

    fill(L.parseFragment(location.hash) || { rates: root.dataset.example || "" });
    app.hidden = false;
    root.querySelector(".log-reader-nojs").hidden = true;
    app.addEventListener("submit", (event) => event.preventDefault());
    app.addEventListener("input", remember);
    app.addEventListener("change", remember);
    window.addEventListener("hashchange", () => {
      const s = L.parseFragment(location.hash);
      if (s) {
        fill(s);
        show();
      }
    });
    show();
  }

  function start() {
    document.querySelectorAll('[data-widget="log-reader"]').forEach(init);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
