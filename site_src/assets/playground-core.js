// Pure sampler logic for the playground: the exported character models, temperature, one speculative
// round, and the numbers the page prints about them (training lives in playground-train.js). No DOM here, so node can test it against the
// Python parity vectors. A classic script (global PlaygroundCore) rather than a module, so the
// page also works from file://, where browsers refuse module scripts; node loads it through
// module.exports. Every arithmetic step mirrors generator/playground/ngram.py and the rule in
// generator/model/engine.py in the same order, because IEEE doubles then give the very same numbers in
// both languages. A character is a Unicode code point, as in Python: strings are split with
// Array.from, never indexed by UTF-16 unit.

(function (root, factory) {
  const api = factory();
  if (typeof module === "object" && module.exports) module.exports = api;
  else root.PlaygroundCore = api;
})(typeof self !== "undefined" ? self : globalThis, function () {
  "use strict";

  const ACCEPTED = "accepted";
  const REJECTED = "rejected";
  const DROPPED = "dropped";

  const chars = (text) => Array.from(text);

  // One exported model (order, levels) over a shared vocabulary string.
  function createModel(exported, vocabText) {
    const vocab = chars(vocabText);
    const size = vocab.length;
    const uniform = 1 / size;
    const index = new Map(vocab.map((c, i) => [c, i]));
    const levels = exported.levels.map((level, length) => {
      const n = level.followers.length;
      const flat = chars(level.contexts);
      const lookup = new Map();
      const offsets = new Int32Array(n + 1);
      for (let i = 0; i < n; i++) {
        lookup.set(flat.slice(i * length, (i + 1) * length).join(""), i);
        offsets[i + 1] = offsets[i] + level.followers[i];
      }
      const nextChars = chars(level.next);
      const next = new Int32Array(nextChars.length);
      for (let j = 0; j < nextChars.length; j++) next[j] = index.get(nextChars[j]);
      return { length, lookup, offsets, next, counts: level.counts, discounts: level.discounts, cache: new Map() };
    });

    // max(a - D(a), 0) / A + gamma * parent, gamma = (D1 n1 + D2 n2 + D3 n3) / A: ngram.Model's rows.
    function levelRow(length, context) {
      const level = levels[length];
      const i = level.lookup.get(context.join(""));
      let row = level.cache.get(i);
      if (row) return row;
      const parent = length === 0 ? new Float64Array(size).fill(uniform) : levelRow(length - 1, context.slice(1));
      const [d1, d2, d3] = level.discounts;
      const kept = new Float64Array(size);
      let total = 0;
      let n1 = 0;
      let n2 = 0;
      let n3 = 0;
      for (let j = level.offsets[i]; j < level.offsets[i + 1]; j++) {
        const a = level.counts[j];
        const d = a === 1 ? d1 : a === 2 ? d2 : d3;
        kept[level.next[j]] = Math.max(a - d, 0);
        total += a;
        if (a === 1) n1++;
        else if (a === 2) n2++;
        else n3++;
      }
      const gamma = (d1 * n1 + d2 * n2 + d3 * n3) / total;
      row = new Float64Array(size);
      for (let c = 0; c < size; c++) row[c] = kept[c] / total + gamma * parent[c];
      level.cache.set(i, row);
      return row;
    }

    const rows = new Map(); // the last order - 1 characters -> the row they select
    return {
      order: exported.order,
      vocab,
      size,
      // The distribution of the character after context: the longest kept suffix decides.
      row(context) {
        // Only the last order - 1 characters matter; 2 (order - 1) + 1 UTF-16 units always hold them.
        const all = typeof context === "string" ? chars(context.slice(-(2 * exported.order - 1))) : context;
        const longest = Math.min(exported.order - 1, all.length);
        const key = all.slice(all.length - longest).join("");
        const hit = rows.get(key);
        if (hit) return hit;
        for (let length = longest; length >= 0; length--) {
          const tail = length ? all.slice(all.length - length) : [];
          if (levels[length].lookup.has(tail.join(""))) {
            if (rows.size > 50000) rows.clear();
            const row = levelRow(length, tail);
            rows.set(key, row);
            return row;
          }
        }
        throw new Error("the empty context is always kept");
      },
    };
  }

  function loadModels(pair) {
    return {
      target: createModel(pair.target, pair.vocab),
      draft: createModel(pair.draft, pair.vocab),
      vocab: chars(pair.vocab),
    };
  }

  // --- one round --------------------------------------------------------------------------------

  function applyTemperature(row, temperature) {
    if (temperature <= 0) return Array.from(row);
    const inverse = 1 / temperature;
    const weights = temperature === 1 ? Array.from(row) : Array.from(row, (p) => p ** inverse);
    let total = 0;
    for (const w of weights) total += w;
    return weights.map((w) => w / total);
  }

  function distribution(model, context, temperature) {
    return applyTemperature(model.row(context), temperature);
  }

  function argmax(row) {
    let best = 0;
    for (let i = 1; i < row.length; i++) if (row[i] > row[best]) best = i;
    return best;
  }

  function oneHot(row) {
    const top = argmax(row);
    return row.map((_, i) => (i === top ? 1 : 0));
  }

  // engine.draw: the token whose cumulative interval holds u; zero-probability tokens never drawn.
  function draw(row, u) {
    let cumulative = 0;
    let last = 0;
    for (let i = 0; i < row.length; i++) {
      const p = row[i];
      if (p === 0) continue;
      cumulative += p;
      last = i;
      if (u < cumulative) return i;
    }
    return last;
  }

  // engine.residual: norm(max(0, target - draft)); the target itself if no excess is left.
  function residual(target, draft) {
    const rest = target.map((t, i) => (t - draft[i] > 0 ? t - draft[i] : 0));
    let mass = 0;
    for (const r of rest) mass += r;
    if (mass <= 0) return Array.from(target);
    return rest.map((r) => r / mass);
  }

  // engine.accept_probability: min(1, p / q).
  function acceptProbability(p, q) {
    return p >= q ? 1 : p / q;
  }

  // One round, as engine.run_round plays it: proposals first (k draws, none when greedy), then per
  // position an accept draw only where min(1, p/q) lies strictly between 0 and 1, then one draw for
  // the replacement or the bonus. Greedy (temperature 0) verifies one-hot rows at each argmax.
  function speculativeRound({ target, draft, vocab, context, k, temperature, nextUniform }) {
    const greedy = temperature === 0;
    const draws = [];
    const uniform = () => {
      const u = nextUniform();
      draws.push(u);
      return u;
    };
    const width = Math.max(target.order, draft.order) - 1;
    const base = chars(context.slice(-(2 * width + 1))).slice(-width);
    const proposed = [];
    const draftRows = [];
    for (let j = 0; j < k; j++) {
      const row = distribution(draft, base.concat(proposed.map((x) => vocab[x])), temperature);
      draftRows.push(row);
      proposed.push(greedy ? argmax(row) : draw(row, uniform()));
    }
    const targetRows = [];
    for (let j = 0; j <= k; j++) {
      targetRows.push(distribution(target, base.concat(proposed.slice(0, j).map((x) => vocab[x])), temperature));
    }
    const tRows = greedy ? targetRows.map(oneHot) : targetRows;
    const dRows = greedy ? draftRows.map(oneHot) : draftRows;
    const proposals = proposed.map((x) => vocab[x]).join("");

    const verdicts = [];
    const acceptDraws = [];
    const acceptProbabilities = [];
    const checks = [];
    for (let j = 0; j < k; j++) {
      const x = proposed[j];
      const p = tRows[j][x];
      const q = dRows[j][x];
      const a = acceptProbability(p, q);
      // Certain verdicts are decided on p and q themselves, as the engine does with exact ratios.
      const u = p >= q || p <= 0 ? null : uniform();
      const ok = p >= q || (u !== null && u < a);
      acceptDraws.push(u);
      acceptProbabilities.push(a);
      checks.push({ char: vocab[x], p, q, a, u, verdict: ok ? ACCEPTED : REJECTED });
      if (ok) {
        verdicts.push(ACCEPTED);
        continue;
      }
      verdicts.push(REJECTED);
      for (let m = j + 1; m < k; m++) verdicts.push(DROPPED);
      const ru = uniform();
      const replacement = vocab[draw(residual(tRows[j], dRows[j]), ru)];
      return {
        proposals, verdicts, acceptDraws, acceptProbabilities, checks, replacement, replacementDraw: ru,
        bonus: null, bonusDraw: null, committed: proposed.slice(0, j).map((x) => vocab[x]).join("") + replacement, k, draws, draftRows, targetRows,
      };
    }
    const bu = uniform();
    const bonus = vocab[draw(tRows[k], bu)];
    return {
      proposals, verdicts, acceptDraws, acceptProbabilities, checks, replacement: null, replacementDraw: null,
      bonus, bonusDraw: bu, committed: proposals + bonus, k, draws, draftRows, targetRows,
    };
  }

  // The target on its own, one character per step: what speculative decoding must reproduce.
  function targetAlone({ target, vocab, context, length, temperature, nextUniform }) {
    const text = chars(context);
    for (let i = 0; i < length; i++) {
      const row = distribution(target, text, temperature);
      text.push(vocab[temperature === 0 ? argmax(row) : draw(row, nextUniform())]);
    }
    return text.slice(chars(context).length).join("");
  }

  // Speculative rounds until `length` characters are committed, with per-round records.
  function generate({ target, draft, vocab, context, length, k, temperature, nextUniform }) {
    let text = context;
    let added = 0;
    const rounds = [];
    while (added < length) {
      const round = speculativeRound({ target, draft, vocab, context: text, k, temperature, nextUniform });
      rounds.push(round);
      text += round.committed;
      added += chars(round.committed).length;
    }
    return { text: chars(text).slice(chars(context).length, chars(context).length + length).join(""), rounds };
  }

  // Running totals under the site's cost model. Each round costs its own K draft steps and one
  // target pass; plain decoding would have spent one target pass per committed character.
  function summarise(rounds, costModel) {
    let committed = 0;
    let verified = 0;
    let accepted = 0;
    let draftSteps = 0;
    let accepts = 0;
    let replaced = 0;
    let bonus = 0;
    for (const r of rounds) {
      committed += chars(r.committed).length;
      draftSteps += r.verdicts.length;
      for (const v of r.verdicts) {
        if (v === ACCEPTED) accepted++;
        if (v !== DROPPED) verified++;
      }
      if (r.bonus !== null) bonus++;
      else replaced++;
    }
    accepts = accepted;
    const targetPasses = rounds.length;
    const cost = draftSteps * costModel.draft_step + targetPasses * costModel.verify_step;
    const plainCost = committed * costModel.verify_step;
    const n = rounds.length;
    return {
      rounds: n, chars: committed, perRound: n ? committed / n : 0, acceptance: verified ? accepted / verified : 0,
      verified, accepted: accepts, replaced, bonus, draftSteps, targetPasses, cost, plainCost,
      speedup: cost ? plainCost / cost : 0,
    };
  }

  // The summary's measured ratios as exact fractions { n, d } of BigInts, from its integer counts, for the site's
  // one rounding rule (decimals.js): printed from a double, 617/400 would read 1.542, not 1.543. exactCost holds
  // the cost model's steps as "n/d" strings (generator.playground.step_fraction: 0.1 is 1/10).
  function exactRatios(s, exactCost) {
    const part = (text) => {
      const [n, d = "1"] = String(text).split("/");
      return [BigInt(n), BigInt(d)];
    };
    const [dn, dd] = part(exactCost.draft_step);
    const [vn, vd] = part(exactCost.verify_step);
    const big = (x) => BigInt(x);
    const costNumerator = big(s.draftSteps) * dn * vd + big(s.targetPasses) * vn * dd;  // over dd * vd
    return {
      perRound: s.rounds ? { n: big(s.chars), d: big(s.rounds) } : null,
      acceptance: s.verified ? { n: big(s.accepted), d: big(s.verified) } : null,
      cost: { n: costNumerator, d: dd * vd },
      plainCost: { n: big(s.chars) * vn, d: vd },
      speedup: costNumerator > 0n ? { n: big(s.chars) * vn * dd, d: costNumerator } : null,
    };
  }

  // Leviathan et al. (2023): expected speedup for i.i.d. acceptance a, K proposals, cost ratio c.
  function leviathanSpeedup(a, k, c) {
    if (a >= 1) return (k + 1) / (k * c + 1);
    return (1 - a ** (k + 1)) / ((1 - a) * (k * c + 1));
  }

  function leviathanBestK(a, c, maxK) {
    let best = 1;
    for (let k = 2; k <= maxK; k++) if (leviathanSpeedup(a, k, c) > leviathanSpeedup(a, best, c)) best = k;
    return best;
  }

  // Next-character histograms: speculative sampling (first committed char) against the target alone.
  function compareNextChar({ target, draft, vocab, context, k, temperature, samples, nextUniform }) {
    const spec = new Array(vocab.length).fill(0);
    const alone = new Array(vocab.length).fill(0);
    const row = distribution(target, context, temperature); // at temperature 0, greedy: the top character only
    for (let i = 0; i < samples; i++) {
      const round = speculativeRound({ target, draft, vocab, context, k, temperature, nextUniform });
      spec[vocab.indexOf(chars(round.committed)[0])]++;
      alone[temperature === 0 ? argmax(row) : draw(row, nextUniform())]++;
    }
    const exact = temperature === 0 ? row.map((_, i) => (i === argmax(row) ? 1 : 0)) : row;
    return { spec, alone, exact, tvd: totalVariation(spec.map((c) => c / samples), alone.map((c) => c / samples)) };
  }

  // The first `positions` characters after the prompt, drawn `samples` times by speculative sampling (rounds
  // until that many are committed, so with K >= 2 the accepted proposals, the residual and the bonus all
  // appear) and by the target alone, one character at a time. A generator, so a page can run it in slices:
  // it yields its progress (0 to 1) every `every` draws and returns, per position, both histograms and the
  // target's exact distribution of that character (firstCharsExact) with the two noise baselines.
  function* firstCharsSteps({ target, draft, vocab, context, k, temperature, samples, positions = 3, nextUniform, every = 50 }) {
    const exact = yield* firstCharsExact({ target, vocab, context, temperature, positions });
    const spec = exact.map(() => new Array(vocab.length).fill(0));
    const alone = exact.map(() => new Array(vocab.length).fill(0));
    const index = new Map(vocab.map((c, i) => [c, i]));
    for (let i = 0; i < samples; i++) {
      let text = "";
      while (chars(text).length < positions) {
        text += speculativeRound({ target, draft, vocab, context: context + text, k, temperature, nextUniform }).committed;
      }
      chars(text).slice(0, positions).forEach((c, j) => spec[j][index.get(c)]++);
      const drawn = chars(targetAlone({ target, vocab, context, length: positions, temperature, nextUniform }));
      drawn.forEach((c, j) => alone[j][index.get(c)]++);
      if ((i + 1) % every === 0) yield 0.1 + (0.9 * (i + 1)) / samples;
    }
    return exact.map((row, j) => ({
      position: j + 1, spec: spec[j], alone: alone[j], exact: row,
      tvd: totalVariation(spec[j].map((c) => c / samples), alone[j].map((c) => c / samples)),
      noise: expectedTvd(row, samples),
    }));
  }

  // sampler.first_chars_exact: the target's exact distribution of each of the first `positions` characters
  // after context (each a sum over every way the characters before it can go; greedy: the top choice's path).
  // A generator that yields 0.1 times its progress, as firstCharsSteps's first tenth.
  function* firstCharsExact({ target, vocab, context, temperature, positions }) {
    const size = vocab.length;
    let paths = [[context, 1]];  // every text so far with its probability
    const out = [];
    let rows = 0;
    for (let j = 0; j < positions; j++) {
      const marginal = new Array(size).fill(0);
      const next = [];
      for (const [text, weight] of paths) {
        const row = distribution(target, text, temperature);
        const probs = temperature === 0 ? oneHot(row) : row;
        for (let c = 0; c < size; c++) {
          if (probs[c] === 0) continue;
          marginal[c] += weight * probs[c];
          if (j + 1 < positions) next.push([text + vocab[c], weight * probs[c]]);
        }
        if (++rows % 64 === 0) yield (0.1 * j) / positions;
      }
      out.push(marginal);
      paths = next;
    }
    return out;
  }

  function totalVariation(p, q) {
    let s = 0;
    for (let i = 0; i < p.length; i++) s += Math.abs(p[i] - q[i]);
    return s / 2;
  }

  // sampler.greedy_loop_start: greedy decoding from a model that sees `width` characters walks from state
  // to state; once the state before a generated character came before an earlier one, the rest repeats.
  // Returns how many generated characters come before that point, or null.
  function greedyLoopStart(text, promptLength, width) {
    const all = chars(text);
    const seen = new Set();
    for (let t = promptLength; t <= all.length; t++) {
      const state = all.slice(Math.max(0, t - width), t).join("");
      if (seen.has(state)) return t - promptLength;
      seen.add(state);
    }
    return null;
  }

  // The character that makes up more than half of text, or null: a run that mostly repeats one character.
  function dominantChar(text) {
    const all = chars(text);
    const counts = new Map();
    for (const ch of all) counts.set(ch, (counts.get(ch) || 0) + 1);
    for (const [ch, n] of counts) if (2 * n > all.length) return ch;
    return null;
  }

  // sampler.expected_tvd: the mean total variation distance between two histograms of `draws` draws each
  // from row, summed character by character from the binomial distribution of each count.
  function expectedTvd(row, draws) {
    let total = 0;
    for (const p of row) if (p > 0 && p < 1) total += meanAbsDifference(p, draws);
    return total / (2 * draws);
  }

  function meanAbsDifference(p, n) {
    const mu = n * p;
    const spread = 12 * (n * p * (1 - p)) ** 0.5 + 12;
    const lo = Math.max(0, Math.trunc(mu - spread));
    const hi = Math.min(n, Math.trunc(mu + spread) + 1);
    let logFirst = lo * Math.log(p) + (n - lo) * Math.log1p(-p);
    for (let i = 1; i <= lo; i++) logFirst += Math.log((n - lo + i) / i);
    let f = Math.exp(logFirst);
    let cdf = 0;
    let first = 0;
    let result = 0;
    for (let a = lo; a <= hi; a++) {
      cdf += f;
      first += a * f;
      result += f * (a * (2 * cdf - 1) - 2 * first + mu);
      f *= (n - a) / (a + 1) * p / (1 - p);
    }
    return result;
  }

  // mulberry32: a small seeded generator of uniforms in [0, 1) for the page.
  function mulberry32(seed) {
    let a = seed >>> 0;
    return function next() {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  return {
    ACCEPTED,
    REJECTED,
    DROPPED,
    chars,
    createModel,
    loadModels,
    applyTemperature,
    distribution,
    argmax,
    oneHot,
    draw,
    residual,
    acceptProbability,
    speculativeRound,
    targetAlone,
    generate,
    summarise,
    exactRatios,
    leviathanSpeedup,
    leviathanBestK,
    compareNextChar,
    firstCharsSteps,
    firstCharsExact,
    totalVariation,
    greedyLoopStart,
    dominantChar,
    expectedTvd,
    mulberry32,
  };
});
