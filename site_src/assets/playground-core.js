// Pure sampler logic for the playground: the exported character models, temperature, and one
// speculative round. No DOM here, so node can test it against the Python parity vectors.
// A classic script (global PlaygroundCore) rather than a module, so the page also works from
// file://, where browsers refuse module scripts; node loads it through module.exports.
// Every arithmetic step mirrors generator/playground (ngram.py, sampler.py) in the same order,
// because IEEE doubles then give the very same numbers in both languages.

(function (root, factory) {
  const api = factory();
  if (typeof module === "object" && module.exports) module.exports = api;
  else root.PlaygroundCore = api;
})(typeof self !== "undefined" ? self : globalThis, function () {
  "use strict";

  const ACCEPTED = "accepted";
  const REJECTED = "rejected";
  const DROPPED = "dropped";

  // One exported model (order, levels) over a shared vocabulary string.
  function createModel(exported, vocab) {
    const size = vocab.length;
    const uniform = 1 / size;
    const index = new Map();
    for (let i = 0; i < size; i++) index.set(vocab[i], i);
    const levels = exported.levels.map((level, length) => {
      const n = level.followers.length;
      const lookup = new Map();
      const offsets = new Int32Array(n + 1);
      for (let i = 0; i < n; i++) {
        lookup.set(level.contexts.slice(i * length, (i + 1) * length), i);
        offsets[i + 1] = offsets[i] + level.followers[i];
      }
      const next = new Int32Array(level.next.length);
      for (let j = 0; j < level.next.length; j++) next[j] = index.get(level.next[j]);
      return { length, lookup, offsets, next, counts: level.counts, followers: level.followers, cache: new Map() };
    });

    function levelRow(length, context) {
      const level = levels[length];
      const i = level.lookup.get(context);
      let row = level.cache.get(i);
      if (row) return row;
      let parent;
      if (length === 0) {
        parent = new Float64Array(size).fill(uniform);
      } else {
        parent = levelRow(length - 1, context.slice(1));
      }
      const counts = new Float64Array(size);
      let total = 0;
      for (let j = level.offsets[i]; j < level.offsets[i + 1]; j++) {
        counts[level.next[j]] = level.counts[j];
        total += level.counts[j];
      }
      const distinct = level.followers[i];
      const denominator = total + distinct;
      row = new Float64Array(size);
      for (let c = 0; c < size; c++) row[c] = (counts[c] + distinct * parent[c]) / denominator;
      level.cache.set(i, row);
      return row;
    }

    return {
      order: exported.order,
      vocab,
      size,
      // The distribution of the character after context: the longest kept suffix decides.
      row(context) {
        const longest = Math.min(exported.order - 1, context.length);
        for (let length = longest; length >= 0; length--) {
          const tail = length ? context.slice(context.length - length) : "";
          if (levels[length].lookup.has(tail)) return levelRow(length, tail);
        }
        throw new Error("the empty context is always kept");
      },
    };
  }

  function loadModels(models) {
    return {
      target: createModel(models.target, models.vocab),
      draft: createModel(models.draft, models.vocab),
      vocab: models.vocab,
    };
  }

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

  function residual(target, draft) {
    const rest = target.map((t, i) => (t > draft[i] ? t - draft[i] : 0));
    let mass = 0;
    for (const r of rest) mass += r;
    if (mass <= 0) return Array.from(target);
    return rest.map((r) => r / mass);
  }

  // One round. temperature 0 is greedy verification; otherwise nextUniform() supplies the draws,
  // consumed in the order: k proposals, accept tests (only where the verdict is uncertain), then
  // the replacement or the bonus.
  function speculativeRound({ target, draft, vocab, context, k, temperature, nextUniform }) {
    const greedy = temperature === 0;
    const draws = [];
    const uniform = () => {
      const u = nextUniform();
      draws.push(u);
      return u;
    };
    let proposals = "";
    const draftRows = [];
    for (let j = 0; j < k; j++) {
      const row = distribution(draft, context + proposals, temperature);
      draftRows.push(row);
      proposals += vocab[greedy ? argmax(row) : draw(row, uniform())];
    }
    const targetRows = [];
    for (let j = 0; j <= k; j++) targetRows.push(distribution(target, context + proposals.slice(0, j), temperature));

    const verdicts = [];
    const acceptDraws = [];
    const acceptProbabilities = [];
    for (let j = 0; j < k; j++) {
      const t = targetRows[j];
      const d = draftRows[j];
      const x = vocab.indexOf(proposals[j]);
      let u = null;
      let ok;
      if (greedy) {
        ok = x === argmax(t);
        acceptProbabilities.push(ok ? 1 : 0);
      } else {
        acceptProbabilities.push(t[x] >= d[x] ? 1 : t[x] / d[x]);
        if (t[x] >= d[x]) ok = true;
        else if (t[x] <= 0) ok = false;
        else {
          u = uniform();
          ok = u < t[x] / d[x];
        }
      }
      acceptDraws.push(u);
      if (ok) {
        verdicts.push(ACCEPTED);
        continue;
      }
      verdicts.push(REJECTED);
      for (let m = j + 1; m < k; m++) verdicts.push(DROPPED);
      const replacement = vocab[greedy ? argmax(t) : draw(residual(t, d), uniform())];
      return {
        proposals, verdicts, acceptDraws, acceptProbabilities, replacement, bonus: null,
        committed: proposals.slice(0, j) + replacement, draws, draftRows, targetRows,
      };
    }
    const last = targetRows[k];
    const bonus = vocab[greedy ? argmax(last) : draw(last, uniform())];
    return {
      proposals, verdicts, acceptDraws, acceptProbabilities, replacement: null, bonus,
      committed: proposals + bonus, draws, draftRows, targetRows,
    };
  }

  // The target on its own, one character per step: what speculative decoding must reproduce.
  function targetAlone({ target, vocab, context, length, temperature, nextUniform }) {
    let text = context;
    for (let i = 0; i < length; i++) {
      const row = distribution(target, text, temperature);
      text += vocab[temperature === 0 ? argmax(row) : draw(row, nextUniform())];
    }
    return text.slice(context.length);
  }

  // Speculative rounds until `length` characters are committed, with per-round records.
  function generate({ target, draft, vocab, context, length, k, temperature, nextUniform }) {
    let text = context;
    const rounds = [];
    while (text.length - context.length < length) {
      const round = speculativeRound({ target, draft, vocab, context: text, k, temperature, nextUniform });
      rounds.push(round);
      text += round.committed;
    }
    return { text: text.slice(context.length, context.length + length), rounds };
  }

  // Running totals: characters per round and speedup under the cost model.
  // Each round is priced by its own draft length, so the totals stay right whatever K each used.
  function summarise(rounds, costModel) {
    let chars = 0;
    let verified = 0;
    let accepted = 0;
    let cost = 0;
    for (const r of rounds) {
      chars += r.committed.length;
      cost += r.verdicts.length * costModel.draft_step + costModel.verify_step;
      for (const v of r.verdicts) {
        if (v === ACCEPTED) accepted++;
        if (v !== DROPPED) verified++;
      }
    }
    const n = rounds.length;
    return {
      rounds: n, chars, perRound: n ? chars / n : 0, acceptance: verified ? accepted / verified : 0,
      speedup: cost ? chars / cost : 0,
    };
  }

  // Next-character histograms: speculative sampling (first committed char) against the target alone.
  function compareNextChar({ target, draft, vocab, context, k, temperature, samples, nextUniform }) {
    const spec = new Array(vocab.length).fill(0);
    const alone = new Array(vocab.length).fill(0);
    const row = distribution(target, context, temperature); // at temperature 0, greedy: the top character only
    for (let i = 0; i < samples; i++) {
      const round = speculativeRound({ target, draft, vocab, context, k, temperature, nextUniform });
      spec[vocab.indexOf(round.committed[0])]++;
      alone[temperature === 0 ? argmax(row) : draw(row, nextUniform())]++;
    }
    const exact = temperature === 0 ? row.map((_, i) => (i === argmax(row) ? 1 : 0)) : row;
    return { spec, alone, exact, tvd: totalVariation(spec.map((c) => c / samples), alone.map((c) => c / samples)) };
  }

  function totalVariation(p, q) {
    let s = 0;
    for (let i = 0; i < p.length; i++) s += Math.abs(p[i] - q[i]);
    return s / 2;
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
    createModel,
    loadModels,
    applyTemperature,
    distribution,
    argmax,
    draw,
    residual,
    speculativeRound,
    targetAlone,
    generate,
    summarise,
    compareNextChar,
    totalVariation,
    mulberry32,
  };
});
