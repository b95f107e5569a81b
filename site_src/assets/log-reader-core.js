// The log reader's arithmetic, exact: the acceptance numbers an engine logs, read in the site's terms.
// Mirrors generator/model/logreader.py case for case (node replays the vectors it writes:
// tests/js/log-reader.test.mjs). Fractions are what-if-core.js's ({ n, d } of BigInts); no DOM here.
// A classic script (global LogReaderCore), so the page works from file://; node loads it through module.exports.

(function (root, factory) {
  if (typeof module === "object" && module.exports) module.exports = factory(require("./what-if-core.js"));
  else root.LogReaderCore = factory(root.WhatIfCore);
})(typeof self !== "undefined" ? self : globalThis, function (W) {
  "use strict";

  const MAX_POSITIONS = 16;
  const CONVENTIONS = ["unconditional", "conditional", "counts"];
  const { frac, fromInt, ZERO, ONE, add, sub, mul, div, cmp, pow } = W;

  // "(0.805, 0.632, 0.483)" or "0.805 0.632 0.483": a list as engines print it.
  function splitRates(text) {
    let s = String(text).trim();
    s = s.replace(/^[([]+/, "").replace(/[)\]]+$/, "");
    return s.split(/[\s,;]+/).filter((x) => x !== "");
  }

  // What-if-core's reader, without the decimal comma (a comma separates rates here).
  function parseNumber(text) {
    if (typeof text !== "string" || text.includes(",")) return null;
    const f = W.parseFraction(text);
    return f && typeof f === "object" ? f : null;
  }

  // alpha with 1 + alpha + ... + alpha^k = length, rounded half up to 1/1000, exactly (the sum rises with alpha).
  function iidRateThousandths(length, k) {
    const reaches = (j) => {
      const a = frac(BigInt(2 * j + 1), 2000n);
      let total = ZERO;
      for (let i = 0; i <= k; i++) total = add(total, pow(a, i));
      return cmp(total, length) <= 0;
    };
    let lo = 0;
    let hi = 1000;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (reaches(mid)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  function conditionalFrom(u) {
    const before = [ONE, ...u];
    return u.map((x, i) => (before[i].n === 0n ? null : div(x, before[i])));
  }

  function unconditionalFrom(c) {
    let reach = ONE;
    return c.map((x) => (reach = mul(reach, x)));
  }

  function reading(convention, k, unconditional, conditional, length, cost, maxK) {
    const alpha = iidRateThousandths(length, k);
    let bestK = null;
    let bestSpeedup = null;
    if (unconditional) {
      let total = ONE;
      for (let g = 1; g <= k; g++) {
        total = add(total, unconditional[g - 1]);
        const s = div(total, add(mul(fromInt(g), cost), ONE));
        if (bestSpeedup === null || cmp(s, bestSpeedup) > 0) {
          bestK = g;
          bestSpeedup = s;
        }
      }
    }
    const a = frac(BigInt(alpha), 1000n);
    const iidBestK = W.bestDraftLength(a, cost, maxK);
    return {
      convention, k, unconditional, conditional, meanLength: length, alphaThousandths: alpha,
      speedup: div(length, add(mul(fromInt(k), cost), ONE)), bestK, bestSpeedup,
      iidBestK, iidBestSpeedup: W.leviathanSpeedup(a, iidBestK, cost),
    };
  }

  const failure = (error, message) => ({ error, message });

  function readRates(text, convention, cost, maxK) {
    const parts = splitRates(text);
    if (parts.length === 0) return failure("empty", "Type at least one rate, such as 0.805.");
    if (parts.length > MAX_POSITIONS) return failure("too-many", `The reader takes at most ${MAX_POSITIONS} positions.`);
    const rates = parts.map(parseNumber);
    const bad = rates.findIndex((r) => r === null);
    if (bad >= 0) return failure("number", `\u201c${parts[bad]}\u201d is not a number: type a decimal such as 0.805, a fraction such as 3/8 or a percentage.`);
    const out = rates.findIndex((r) => r.n < 0n || cmp(r, ONE) > 0);
    if (out >= 0) return failure("range", `The rate at position ${out + 1}, ${parts[out]}, is not between 0 and 1.`);
    let unconditional;
    let conditional;
    if (convention === "unconditional") {
      const up = rates.findIndex((r, i) => i > 0 && cmp(r, rates[i - 1]) > 0);
      if (up > 0) {
        return failure("rising", `Rates that rise along the positions cannot be unconditional (position ${up + 1}, ${parts[up]}, is above position ${up}, ${parts[up - 1]}): a round reaches a position only by passing the one before, so if your engine prints conditional rates, choose that.`);
      }
      unconditional = rates;
      conditional = conditionalFrom(rates);
    } else {
      conditional = rates;
      unconditional = unconditionalFrom(rates);
    }
    const length = add(ONE, unconditional.reduce(add, ZERO));
    return reading(convention, rates.length, unconditional, conditional, length, cost, maxK);
  }

  function readCounts(rounds, accepted, k, cost, maxK) {
    const values = [rounds, accepted, k].map((x) => parseNumber(String(x ?? "")));
    const problem = "Counts are whole numbers: at least one round, a draft length from 1 to 16, and no more accepted proposals than rounds times the draft length.";
    if (values.some((v) => v === null || v.d !== 1n)) return failure("counts", problem);
    const [r, a, g] = values.map((v) => v.n);
    if (r < 1n || g < 1n || g > BigInt(MAX_POSITIONS) || a < 0n || a > r * g) return failure("counts", problem);
    return reading("counts", Number(g), null, null, add(ONE, frac(a, r)), cost, maxK);
  }

  function parseCost(text) {
    const c = parseNumber(String(text ?? ""));
    return c && c.n >= 0n && cmp(c, fromInt(10)) <= 0 ? c : null;
  }

  // state: { convention, rates, rounds, accepted, k, cost } as typed; the result, or { error, message }.
  function read(state, maxK = MAX_POSITIONS) {
    const cost = parseCost(state.cost);
    if (!cost) return failure("cost", "The draft cost is a number from 0 to 10 target steps, such as 1/10 or 0.05.");
    if (state.convention === "counts") return readCounts(state.rounds, state.accepted, state.k, cost, maxK);
    return readRates(state.rates ?? "", state.convention, cost, maxK);
  }

  // #rates=0.805,0.632,0.483&convention=conditional&c=1/10, or #rounds=87&accepted=167&k=3: the state a link holds.
  const FIELDS = { rates: "rates", convention: "convention", rounds: "rounds", accepted: "accepted", k: "k", c: "cost" };

  function parseFragment(hash) {
    const state = {};
    const text = String(hash || "").replace(/^#/, "");
    if (!text || text.length > 2000) return null;
    for (const part of text.split("&")) {
      const eq = part.indexOf("=");
      if (eq < 0) continue;
      const key = FIELDS[part.slice(0, eq)];
      let value;
      try {
        value = decodeURIComponent(part.slice(eq + 1));
      } catch (err) {
        continue;
      }
      if (key) state[key] = value;
    }
    if (state.rates === undefined && state.rounds === undefined) return null;
    if (!CONVENTIONS.includes(state.convention)) state.convention = state.rates === undefined ? "counts" : "unconditional";
    return state;
  }

  function fragmentFor(state) {
    const enc = (s) => encodeURIComponent(String(s ?? "").trim()).replace(/%2C/g, ",").replace(/%2F/g, "/");
    const cost = `c=${enc(state.cost)}`;
    if (state.convention === "counts") return `#rounds=${enc(state.rounds)}&accepted=${enc(state.accepted)}&k=${enc(state.k)}&${cost}`;
    const rates = splitRates(state.rates ?? "").join(",");
    return `#rates=${enc(rates)}${state.convention === "conditional" ? "&convention=conditional" : ""}&${cost}`;
  }

  return { MAX_POSITIONS, splitRates, parseNumber, iidRateThousandths, read, parseFragment, fragmentFor };
});
