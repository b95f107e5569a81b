// Exact arithmetic for the what-if editor: fractions of BigInts, the numbers of a round, the
// closed form for one acceptance rate, and the editor's state as it travels in the URL fragment.
// No DOM here, so node can replay the vectors the Python engine writes (tests/js/what-if.test.mjs).
// A classic script (global WhatIfCore) rather than a module, so the page also works from file://;
// node loads it through module.exports.
// Every function mirrors generator/analysis.py in meaning; results are normalised fractions,
// written as Python's str(Fraction) writes them: "3/8", "1", "0".

(function (root, factory) {
  const api = factory();
  if (typeof module === "object" && module.exports) module.exports = api;
  else root.WhatIfCore = api;
})(typeof self !== "undefined" ? self : globalThis, function () {
  "use strict";

  // The sizes a state may have: kept equal to generator/render/whatif.py, which the parity vectors check.
  // maxTerm bounds every typed number's numerator and denominator: the page shows three decimals, and past
  // six digits the exact closed form's powers grow large enough to hold up the page for seconds.
  const LIMITS = Object.freeze({
    minTokens: 2, maxTokens: 8, minPositions: 1, maxPositions: 8, maxChars: 20000, maxTerm: 1000000,
  });

  // --- fractions ------------------------------------------------------------------------------

  function gcd(a, b) {
    if (a < 0n) a = -a;
    if (b < 0n) b = -b;
    while (b !== 0n) [a, b] = [b, a % b];
    return a;
  }

  // A normalised fraction: denominator positive, no common factor, zero as 0/1.
  function frac(n, d = 1n) {
    n = BigInt(n);
    d = BigInt(d);
    if (d === 0n) throw new RangeError("division by zero");
    if (d < 0n) {
      n = -n;
      d = -d;
    }
    const g = gcd(n, d) || 1n;
    return Object.freeze({ n: n / g, d: d / g });
  }

  const ZERO = frac(0n);
  const ONE = frac(1n);
  const add = (a, b) => frac(a.n * b.d + b.n * a.d, a.d * b.d);
  const sub = (a, b) => frac(a.n * b.d - b.n * a.d, a.d * b.d);
  const mul = (a, b) => frac(a.n * b.n, a.d * b.d);
  const div = (a, b) => frac(a.n * b.d, a.d * b.n);
  const cmp = (a, b) => {
    const x = a.n * b.d;
    const y = b.n * a.d;
    return x < y ? -1 : x > y ? 1 : 0;
  };
  const eq = (a, b) => a.n === b.n && a.d === b.d;
  const min = (a, b) => (cmp(a, b) <= 0 ? a : b);
  const max = (a, b) => (cmp(a, b) >= 0 ? a : b);
  const sum = (xs) => xs.reduce(add, ZERO);
  const pow = (a, k) => frac(a.n ** BigInt(k), a.d ** BigInt(k));
  const fromInt = (k) => frac(BigInt(k));

  function format(f) {
    return f.d === 1n ? f.n.toString() : `${f.n}/${f.d}`;
  }

  // A float, for drawing only: every printed decimal goes through decimals.js from the exact fraction.
  function toNumber(f) {
    const scale = 10n ** 15n;
    const whole = f.n / f.d;
    const rest = ((f.n % f.d) * scale) / f.d;
    return Number(whole) + Number(rest) / 1e15;
  }

  // What a reader or a link may write for a probability or a cost, each read exactly:
  // "3/8" (spaces allowed), "0.375" or ".375" or "0,375", "37.5%"; integers as numbers too.
  const FRACTION = /^(-?\d+)(?:\/(\d+))?$/;
  const DECIMAL = /^(-?)(\d*)(?:[.,](\d*))?(%?)$/;

  function parseFraction(value) {
    if (typeof value === "number" && Number.isSafeInteger(value)) return fromInt(value);
    if (typeof value !== "string" || value.length > 200) return null;
    const text = value.trim().replace(/\s*\/\s*/, "/").replace(/\s+%$/, "%").replace(/^\u2212/, "-");
    let m = FRACTION.exec(text);
    if (m) {
      const d = BigInt(m[2] ?? "1");
      if (d === 0n) return "zero";
      return frac(BigInt(m[1]), d);
    }
    m = DECIMAL.exec(text);
    if (!m || (m[2] === "" && (m[3] === undefined || m[3] === ""))) return null;
    const digits = m[3] ?? "";
    const n = BigInt((m[1] || "") + (m[2] || "0") + digits);
    return frac(n, 10n ** BigInt(digits.length) * (m[4] ? 100n : 1n));
  }

  // A row made to sum to 1 again, changing every cell but `keep` (-1: any cell): a shortfall goes to the
  // largest other cell, an excess comes from the other cells largest first (the first on ties).
  // Every cell must be a fraction from 0 to 1. Returns the new row and the cells it changed.
  function rebalance(row, keep) {
    const delta = sub(ONE, sum(row));
    const out = row.slice();
    const order = row.map((x, j) => j).filter((j) => j !== keep).sort((a, b) => cmp(row[b], row[a]) || a - b);
    const changes = [];
    if (cmp(delta, ZERO) > 0 && order.length) {
      out[order[0]] = add(row[order[0]], delta);
      changes.push({ col: order[0], by: delta });
    } else if (cmp(delta, ZERO) < 0) {
      let rest = sub(ZERO, delta);
      for (const j of order) {
        if (eq(rest, ZERO)) break;
        const take = min(rest, row[j]);
        if (eq(take, ZERO)) continue;
        out[j] = sub(row[j], take);
        rest = sub(rest, take);
        changes.push({ col: j, by: sub(ZERO, take) });
      }
      if (!eq(rest, ZERO)) return null;
    }
    return eq(sum(out), ONE) ? { row: out, changes } : null;
  }

  // --- the numbers of one round (generator/analysis.py) ------------------------------------------

  // sum_x min(p(x), q(x)): the accept probability averaged over what the draft proposes.
  const acceptanceRate = (target, draft) => sum(target.map((t, i) => min(t, draft[i])));

  // max(0, p - q) token by token, and its normalised form, or null where the draft equals the target.
  const excess = (target, draft) => target.map((t, i) => max(ZERO, sub(t, draft[i])));

  function residual(target, draft) {
    const rest = excess(target, draft);
    const mass = sum(rest);
    if (eq(mass, ZERO)) return null;
    return rest.map((r) => div(r, mass));
  }

  function acceptProbability(pTarget, pDraft) {
    return min(ONE, div(pTarget, pDraft));
  }

  // P(N = n) for n = 1 .. k + 1: n - 1 acceptances then a rejection, or all k accepted and the bonus.
  function roundLengthDistribution(alphas) {
    const probs = [];
    let reach = ONE;
    for (const a of alphas) {
      probs.push(mul(reach, sub(ONE, a)));
      reach = mul(reach, a);
    }
    probs.push(reach);
    return probs;
  }

  const expectedTokens = (dist) => sum(dist.map((p, i) => mul(fromInt(i + 1), p)));

  function expectedTokensFromPartialProducts(alphas) {
    let total = ONE;
    let reach = ONE;
    for (const a of alphas) {
      reach = mul(reach, a);
      total = add(total, reach);
    }
    return total;
  }

  const roundCost = (k, draftStep, verifyStep) => add(mul(fromInt(k), draftStep), verifyStep);

  // Block verification (Sun et al., arXiv 2403.10444), as generator/model/verifiers.py computes it: expected
  // accepted proposals = sum_i E_{x ~ q}[w_i], the running weight w_i = min(w_{i-1} p(x_i) / q(x_i), 1), w_0 = 1,
  // followed through its distribution from position to position (a map from each weight to its chance).
  function blockExpectedAccepted(target, draft) {
    let states = new Map([[format(ONE), [ONE, ONE]]]);
    let total = ZERO;
    draft.forEach((row, i) => {
      const next = new Map();
      for (const [w, pw] of states.values()) {
        row.forEach((q, x) => {
          if (q.n === 0n) return;
          const v = min(div(mul(w, target[i][x]), q), ONE);
          const key = format(v);
          const before = next.get(key);
          next.set(key, [v, before ? add(before[1], mul(pw, q)) : mul(pw, q)]);
        });
      }
      states = next;
      for (const [w, pw] of states.values()) total = add(total, mul(w, pw));
    });
    return total;
  }

  // Everything the editor shows for a valid state, as fractions (residuals may hold null).
  function compute(state) {
    const k = state.k;
    const target = state.target.slice(0, k + 1);
    const draft = state.draft.slice(0, k);
    const acceptRates = draft.map((row, i) => acceptanceRate(target[i], row));
    const residuals = draft.map((row, i) => residual(target[i], row));
    const proposalAccept = draft.map((row, i) => acceptProbability(target[i][state.proposals[i]], row[state.proposals[i]]));
    const dist = roundLengthDistribution(acceptRates);
    const expected = expectedTokens(dist);
    if (!eq(expected, expectedTokensFromPartialProducts(acceptRates))) {
      throw new Error("the two derivations of the expected tokens disagree");
    }
    const cost = roundCost(k, state.cost.draftStep, state.cost.verifyStep);
    const blockAccepted = blockExpectedAccepted(target, draft);
    const blockExpected = add(blockAccepted, ONE);
    return {
      k, acceptRates, residuals, proposalAccept, dist, expected, cost, speedup: div(expected, cost),
      blockAccepted, blockExpected, blockSpeedup: div(blockExpected, cost),
    };
  }

  // --- the closed form for one acceptance rate (Leviathan et al., 2023) ------------------------

  // (1 - a^(K+1)) / ((1 - a)(K c + 1)): the speedup when every position accepts with probability a
  // and verification costs one target step.
  function leviathanSpeedup(alpha, k, c) {
    const cost = add(mul(fromInt(k), c), ONE);
    if (eq(alpha, ONE)) return div(fromInt(k + 1), cost);
    return div(sub(ONE, pow(alpha, k + 1)), mul(sub(ONE, alpha), cost));
  }

  // The K in 1..maxK with the largest closed-form speedup; the smallest such K on ties.
  function bestDraftLength(alpha, c, maxK) {
    let best = 1;
    let bestValue = leviathanSpeedup(alpha, 1, c);
    for (let k = 2; k <= maxK; k++) {
      const v = leviathanSpeedup(alpha, k, c);
      if (cmp(v, bestValue) > 0) {
        best = k;
        bestValue = v;
      }
    }
    return best;
  }

  // The other K whose speedup prints the same as the best K's: `printed` turns a fraction into the
  // string a page shows (decimals.js's one rule), so a tie is exactly what a reader would see as one.
  function printedTies(curve, best, printed) {
    const shown = printed(curve[best - 1]);
    const ties = [];
    curve.forEach((v, i) => {
      if (i + 1 !== best && printed(v) === shown) ties.push(i + 1);
    });
    return ties;
  }

  function speedupCurve(alpha, c, maxK) {
    const points = [];
    for (let k = 1; k <= maxK; k++) points.push(leviathanSpeedup(alpha, k, c));
    return points;
  }

  // --- the state in the URL fragment -------------------------------------------------------------
  // {"tokens": [...], "target": [[...], ...], "draft": [[...], ...], "proposals": [...],
  //  "cost_model": {"draft_step": "a/b", "verify_step": "a/b"}, "k": n}; tokens and k are optional.

  const KEYS = ["tokens", "target", "draft", "proposals", "cost_model", "k"];
  const REQUIRED = ["target", "draft", "proposals", "cost_model"];

  class StateError extends Error {}
  // detail: { which, row } for a row whose cells are all fine but whose sum is not 1, so it can be rebalanced.
  // field: the cost ("draft_step" or "verify_step") the message is about, so the editor can flag that input.
  const fail = (message, detail, field) => {
    const err = new StateError(message);
    err.detail = detail || null;
    err.field = field || null;
    throw err;
  };
  const quote = (s) => `\u201c${s}\u201d`;

  function rowName(which, i, rows) {
    if (which === "target" && i === rows - 1) return `target row ${i + 1} (the bonus row)`;
    return `${which} row ${i + 1}`;
  }

  const abs = (n) => (n < 0n ? -n : n);
  const tooFine = (f) => abs(f.n) > BigInt(LIMITS.maxTerm) || f.d > BigInt(LIMITS.maxTerm);
  const tooFineText = (cell) => {
    const shown = String(cell).length > 24 ? `${String(cell).slice(0, 20)}\u2026` : String(cell);
    return `${shown} has more digits than the editor works with (numerator and denominator up to 1,000,000)`;
  };

  function checkRow(raw, which, i, rows, tokens) {
    const name = rowName(which, i, rows);
    if (!Array.isArray(raw)) fail(`${name} is not a list of probabilities`);
    if (raw.length !== tokens.length) {
      fail(`${name} has ${raw.length} ${raw.length === 1 ? "probability" : "probabilities"}, but there are ${tokens.length} tokens`);
    }
    const row = raw.map((cell, j) => {
      const where = `${name}, token ${quote(tokens[j])}`;
      const f = parseFraction(cell);
      if (f === "zero") fail(`${where}: ${JSON.stringify(cell)} divides by zero`);
      if (f === null) fail(`${where}: ${JSON.stringify(cell)} is not a number such as 3/8, 0.375 or 37.5%`);
      if (f.n < 0n) fail(`${where}: ${format(f)} is negative`);
      if (cmp(f, ONE) > 0) fail(`${where}: ${format(f)} is above 1`);
      if (tooFine(f)) fail(`${where}: ${tooFineText(cell)}`);
      return f;
    });
    const total = sum(row);
    if (!eq(total, ONE)) fail(`${name} sums to ${format(total)}, not 1`, { which, row: i });
    return row;
  }

  function checkStep(raw, key) {
    const f = parseFraction(raw);
    const name = key === "draft_step" ? "the draft step c" : "the verification step";
    if (f === "zero") fail(`${name} divides by zero`, null, key);
    if (f === null) fail(`${name} is not a number such as 1/10 or 0.1`, null, key);
    if (tooFine(f)) fail(`${name}, ${tooFineText(raw)}`, null, key);
    if (key === "draft_step" && f.n < 0n) fail(`${name} is negative`, null, key);
    if (key === "verify_step" && f.n <= 0n) fail(`${name} must be greater than 0`, null, key);
    return f;
  }

  // A decoded document -> the typed state, or a thrown StateError whose message is the problem.
  function checkState(raw, defaultTokens) {
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
      fail("it is not a JSON object with target, draft, proposals and cost_model");
    }
    for (const key of Object.keys(raw)) if (!KEYS.includes(key)) fail(`it has an unknown key ${quote(key)}`);
    for (const key of REQUIRED) if (!(key in raw)) fail(`it has no ${quote(key)}`);

    const tokens = raw.tokens === undefined ? defaultTokens : raw.tokens;
    if (!Array.isArray(tokens) || !tokens.every((t) => typeof t === "string" && t.trim() !== "")) {
      fail("the tokens are not a list of non-empty labels");
    }
    if (tokens.length < LIMITS.minTokens || tokens.length > LIMITS.maxTokens) {
      fail(`there are ${tokens.length} tokens, and the editor takes ${LIMITS.minTokens} to ${LIMITS.maxTokens}`);
    }
    const seen = new Set();
    for (const t of tokens) {
      if (seen.has(t)) fail(`the token ${quote(t)} appears twice`);
      seen.add(t);
    }

    const { target, draft, proposals } = raw;
    const minRows = LIMITS.minPositions + 1;
    const maxRows = LIMITS.maxPositions + 1;
    if (!Array.isArray(target)) fail("the target is not a list of rows");
    if (target.length < minRows || target.length > maxRows) {
      fail(`the target has ${target.length} ${target.length === 1 ? "row" : "rows"}, and it needs ${minRows} to ${maxRows}: one per position, then the bonus row`);
    }
    if (!Array.isArray(draft)) fail("the draft is not a list of rows");
    if (draft.length !== target.length - 1) {
      fail(`the draft has ${draft.length} ${draft.length === 1 ? "row" : "rows"}, but with ${target.length} target rows it needs ${target.length - 1}, one fewer than the target`);
    }
    const positions = draft.length;
    const targetRows = target.map((r, i) => checkRow(r, "target", i, target.length, tokens));
    const draftRows = draft.map((r, i) => checkRow(r, "draft", i, positions, tokens));

    if (!Array.isArray(proposals)) fail("the proposals are not a list of tokens");
    if (proposals.length !== positions) {
      fail(`there ${proposals.length === 1 ? "is 1 proposal" : `are ${proposals.length} proposals`}, but the draft has ${positions} ${positions === 1 ? "row" : "rows"}`);
    }
    const proposalIndex = proposals.map((tok, i) => {
      const j = tokens.indexOf(tok);
      if (typeof tok !== "string" || j < 0) fail(`proposal ${i + 1}, ${JSON.stringify(tok)}, is not one of the tokens`);
      if (draftRows[i][j].n === 0n) {
        fail(`proposal ${i + 1}, ${quote(tok)}, has probability 0 in draft row ${i + 1}, so the draft could never propose it`);
      }
      return j;
    });

    const cost = raw.cost_model;
    if (cost === null || typeof cost !== "object" || Array.isArray(cost)) {
      fail("the cost_model is not an object with draft_step and verify_step");
    }
    for (const key of Object.keys(cost)) {
      if (key !== "draft_step" && key !== "verify_step") fail(`the cost_model has an unknown key ${quote(key)}`);
    }
    for (const key of ["draft_step", "verify_step"]) if (!(key in cost)) fail(`the cost_model has no ${quote(key)}`);
    const draftStep = checkStep(cost.draft_step, "draft_step");
    const verifyStep = checkStep(cost.verify_step, "verify_step");

    let k = positions;
    if (raw.k !== undefined) {
      if (!Number.isInteger(raw.k) || raw.k < 1 || raw.k > positions) fail(`K is ${JSON.stringify(raw.k)}, and it must be a whole number from 1 to ${positions}`);
      k = raw.k;
    }
    return {
      tokens: tokens.slice(), target: targetRows, draft: draftRows, proposals: proposalIndex,
      cost: { draftStep, verifyStep }, k,
    };
  }

  // { state } or { error: "the reason" } for a decoded document.
  function validate(raw, defaultTokens) {
    try {
      return { state: checkState(raw, defaultTokens) };
    } catch (err) {
      if (err instanceof StateError) return { error: err.message, fix: err.detail, field: err.field };
      throw err;
    }
  }

  const PREFIX = "#what-if=";

  // null when the fragment is not a what-if state at all; otherwise { state } or { error }.
  function parseFragment(hash, defaultTokens) {
    if (typeof hash !== "string" || !hash.startsWith(PREFIX)) return null;
    const encoded = hash.slice(PREFIX.length);
    if (encoded.length > LIMITS.maxChars) return { error: `it is longer than ${LIMITS.maxChars} characters` };
    let raw;
    try {
      raw = JSON.parse(decodeURIComponent(encoded));
    } catch (err) {
      return { error: "it is not readable JSON" };
    }
    return validate(raw, defaultTokens);
  }

  // The decoded document for a typed state: fractions as normalised strings, proposals as labels.
  function toDocument(state, defaultTokens) {
    const doc = {};
    const sameTokens = defaultTokens && defaultTokens.length === state.tokens.length &&
      defaultTokens.every((t, i) => t === state.tokens[i]);
    if (!sameTokens) doc.tokens = state.tokens.slice();
    doc.target = state.target.map((r) => r.map(format));
    doc.draft = state.draft.map((r) => r.map(format));
    doc.proposals = state.proposals.map((j) => state.tokens[j]);
    doc.cost_model = { draft_step: format(state.cost.draftStep), verify_step: format(state.cost.verifyStep) };
    if (state.k !== state.draft.length) doc.k = state.k;
    return doc;
  }

  function fragmentFor(state, defaultTokens) {
    return PREFIX + encodeURIComponent(JSON.stringify(toDocument(state, defaultTokens)));
  }

  return {
    LIMITS, PREFIX,
    frac, fromInt, ZERO, ONE, add, sub, mul, div, cmp, eq, min, max, sum, pow, format, toNumber, parseFraction, rebalance,
    acceptanceRate, excess, residual, acceptProbability, roundLengthDistribution, expectedTokens,
    expectedTokensFromPartialProducts, roundCost, blockExpectedAccepted, compute,
    leviathanSpeedup, bestDraftLength, printedTies, speedupCurve,
    validate, parseFragment, toDocument, fragmentFor,
  };
});
