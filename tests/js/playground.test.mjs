// Replays the Python parity vectors through playground-core.js: same rows, same verdicts, same
// text, and the same counts when the browser trains a pair from the published corpus. The vectors
// come from PLAYGROUND_VECTORS when tests/test_playground_parity.py runs this file; run on its
// own, it asks Python to write a fresh set, so nothing committed can go stale.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..", "..");
const core = createRequire(import.meta.url)(path.join(root, "site_src", "assets", "playground-core.js"));
const train = createRequire(import.meta.url)(path.join(root, "site_src", "assets", "playground-train.js"));

function loadVectors() {
  let file = process.env.PLAYGROUND_VECTORS;
  if (!file) {
    file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "pg-vectors-")), "vectors.json");
    const python = process.env.PYTHON || "python3";
    const run = spawnSync(python, ["tests/test_playground_parity.py", file], {
      cwd: root, encoding: "utf8", env: { ...process.env, PYTHONPATH: root },
    });
    assert.equal(run.status, 0, `could not generate parity vectors with ${python}:\n${run.stderr}`);
  }
  return JSON.parse(fs.readFileSync(file, "utf8"));
}

const bundle = loadVectors();
const KINDS = Object.keys(bundle.pairs);

// pow() is not correctly rounded in either libm, so tempered rows may differ in the last bit;
// at temperature 1 (no pow) and 0 (raw rows) they must be bit-identical.
function assertRowsMatch(actual, expected, temperature, what) {
  assert.equal(actual.length, expected.length, `${what}: row length`);
  for (let i = 0; i < actual.length; i++) {
    if (temperature === 1 || temperature === 0) {
      assert.ok(Object.is(actual[i], expected[i]), `${what}[${i}]: ${actual[i]} !== ${expected[i]}`);
    } else {
      const tolerance = 4 * Number.EPSILON * Math.max(Math.abs(expected[i]), Number.MIN_VALUE);
      assert.ok(Math.abs(actual[i] - expected[i]) <= tolerance, `${what}[${i}]: ${actual[i]} vs ${expected[i]}`);
    }
  }
}

test("the bundle covers prose, code and a corpus with characters outside the BMP", () => {
  assert.deepEqual(KINDS.sort(), ["astral", "code", "prose"]);
  const astral = bundle.training.find((t) => t.kind === "astral");
  assert.ok(core.chars(astral.vocab).some((c) => c.codePointAt(0) > 0xffff));
});

for (const kind of KINDS) {
  const vectors = bundle.pairs[kind];
  const { target, draft, vocab } = core.loadModels(vectors.models);

  test(`${kind}: every case replays to the same verdicts, replacement, bonus and committed text`, () => {
    assert.ok(vectors.cases.length >= 16);
    for (const [n, c] of vectors.cases.entries()) {
      let used = 0;
      const round = core.speculativeRound({
        target, draft, vocab, context: c.context, k: c.k, temperature: c.temperature,
        nextUniform: () => {
          assert.ok(used < c.uniforms.length, `case ${n}: asked for more uniforms than Python drew`);
          return c.uniforms[used++];
        },
      });
      const label = `${kind} case ${n} (${JSON.stringify(c.context)}, k=${c.k}, T=${c.temperature})`;
      assert.equal(used, c.uniforms.length, `${label}: uniforms consumed`);
      assert.equal(round.proposals, c.proposals, `${label}: proposals`);
      assert.deepEqual(round.verdicts.slice(0, c.verdicts.length), c.verdicts, `${label}: verdicts`);
      assert.deepEqual(round.acceptDraws, c.accept_draws, `${label}: accept draws`);
      assertRowsMatch(round.acceptProbabilities, c.accept_probabilities, c.temperature, `${label}: accept probabilities`);
      assert.equal(round.replacement, c.replacement, `${label}: replacement`);
      assert.equal(round.bonus, c.bonus, `${label}: bonus`);
      assert.equal(round.committed, c.committed, `${label}: committed`);
    }
  });

  test(`${kind}: the draft and target rows equal the ones Python computed from the same export`, () => {
    for (const [n, c] of vectors.cases.entries()) {
      const proposals = core.chars(c.proposals);
      c.draft_rows.forEach((row, j) => {
        const context = c.context + proposals.slice(0, j).join("");
        assertRowsMatch(core.distribution(draft, context, c.temperature), row, c.temperature, `case ${n} draft row ${j}`);
      });
      c.target_rows.forEach((row, j) => {
        const context = c.context + proposals.slice(0, j).join("");
        assertRowsMatch(core.distribution(target, context, c.temperature), row, c.temperature, `case ${n} target row ${j}`);
      });
    }
  });

  test(`${kind}: draw picks the same index as Python for every recorded uniform`, () => {
    for (const check of vectors.draw_checks) {
      assert.equal(core.draw(target.row(check.row_context), check.u), check.index);
    }
  });

  test(`${kind}: greedy speculative output equals the target alone, character for character`, () => {
    for (const context of vectors.cases.map((c) => c.context).slice(0, 3)) {
      for (const k of [1, 3, 8]) {
        const alone = core.targetAlone({ target, vocab, context, length: 60, temperature: 0 });
        const spec = core.generate({
          target, draft, vocab, context, length: 60, k, temperature: 0, nextUniform: core.mulberry32(k),
        });
        assert.equal(spec.text, alone, `context ${JSON.stringify(context)}, k=${k}`);
      }
    }
  });
}

test("the cases cover bonuses, rejections, uncertain verdicts and greedy rounds", () => {
  const cases = KINDS.flatMap((k) => bundle.pairs[k].cases);
  assert.ok(cases.some((c) => c.bonus !== null));
  assert.ok(cases.some((c) => c.replacement !== null));
  assert.ok(cases.some((c) => c.temperature === 0 && c.replacement !== null));
  assert.ok(cases.some((c) => c.accept_draws.some((u) => u !== null)));
});

for (const t of bundle.training) {
  test(`${t.kind}: training in JavaScript gives the build's counts, digest and held-out bits`, () => {
    assert.equal(train.vocabularyOf(t.text), t.vocab);
    const { train: trainChars, heldOut } = train.splitHeldOut(t.text);
    for (const name of ["target", "draft"]) {
      const order = t.orders[name];
      const exported = train.trainExport(trainChars, t.vocab, order, t.orders.min_count);
      assert.equal(train.countDigest(exported), t.digests[name], `${name} digest`);
      assert.deepEqual(exported, t.export[name], `${name} export`);
      const bits = train.bitsPerChar(core.createModel(exported, t.vocab), heldOut);
      assert.ok(Math.abs(bits - t.bits_per_char[name]) < 1e-9, `${name} bits ${bits} vs ${t.bits_per_char[name]}`);
    }
  });
}

test("a changed count changes the digest (negative control)", () => {
  const t = bundle.training[0];
  const changed = structuredClone(t.export.draft);
  changed.levels[1].counts[0] += 1;
  assert.notEqual(train.countDigest(changed), t.digests.draft);
});

test("speculative next-character draws stay close to the target's own", () => {
  const { target, draft, vocab } = core.loadModels(bundle.pairs.prose.models);
  const result = core.compareNextChar({
    target, draft, vocab, context: "And he said ", k: 4, temperature: 1, samples: 4000, nextUniform: core.mulberry32(9),
  });
  const spec = result.spec.map((c) => c / 4000);
  // Two histograms of 4000 draws from one distribution sit well under 0.06 apart.
  assert.ok(core.totalVariation(spec, result.exact) < 0.04, `TV ${core.totalVariation(spec, result.exact)}`);
  assert.ok(result.tvd < 0.06, `TV ${result.tvd}`);
});

test("mulberry32 is seeded and stays in [0, 1)", () => {
  const a = core.mulberry32(42);
  const b = core.mulberry32(42);
  for (let i = 0; i < 1000; i++) {
    const u = a();
    assert.equal(u, b());
    assert.ok(u >= 0 && u < 1);
  }
  assert.notEqual(core.mulberry32(1)(), core.mulberry32(2)());
});

test("the cost meter prices each round by its own K and compares with one target pass per character", () => {
  const rounds = [
    { committed: "abc", verdicts: ["accepted", "accepted", "rejected", "dropped"], bonus: null },
    { committed: "abcde", verdicts: ["accepted", "accepted", "accepted", "accepted"], bonus: "e" },
  ];
  const s = core.summarise(rounds, { draft_step: 0.1, verify_step: 1 });
  assert.equal(s.perRound, 4);
  assert.equal(s.acceptance, 6 / 7);
  assert.equal(s.draftSteps, 8);
  assert.equal(s.targetPasses, 2);
  assert.ok(Math.abs(s.speedup - 8 / 2.8) < 1e-12);
  assert.equal(s.bonus, 1);
  assert.equal(s.replaced, 1);
});

test("the counts' ratios are printed exactly: 617/400 reads 1.543, where the double would read 1.542", () => {
  const decimals = createRequire(import.meta.url)(path.join(root, "site_src", "assets", "decimals.js"));
  const s = { rounds: 20000, chars: 33935, verified: 20000, accepted: 13000, draftSteps: 20000, targetPasses: 20000 };
  const x = core.exactRatios(s, { draft_step: "1/10", verify_step: "1/1" });
  assert.equal(decimals.fixed(x.speedup, 3), "1.543");
  assert.equal(decimals.fixed((33935 / 20000) / 1.1, 3), "1.542");  // the negative control: the float path
  assert.equal(decimals.fixed(x.perRound, 4), "1.6968");  // 33935 / 20000 = 1.69675, a tie rounded up
  assert.equal(decimals.pct(x.acceptance, 1), "65.0%");
  assert.equal(decimals.fixed(x.cost, 1), "22000.0");
  assert.equal(decimals.fixed(x.plainCost, 1), "33935.0");
});

test("Leviathan's closed form: K = 1 at a = 0.5, c = 0.1 gives 1.5 / 1.1", () => {
  assert.ok(Math.abs(core.leviathanSpeedup(0.5, 1, 0.1) - 1.5 / 1.1) < 1e-12);
  assert.equal(core.leviathanBestK(0.9, 0.1, 8), 8);
  assert.equal(core.leviathanBestK(0.1, 0.5, 8), 1);
});

test("in greedy mode the distribution check puts every draw, both ways, on the top character", () => {
  const { target, draft, vocab } = core.loadModels(bundle.pairs.prose.models);
  const result = core.compareNextChar({
    target, draft, vocab, context: "the ", k: 4, temperature: 0, samples: 500, nextUniform: core.mulberry32(3),
  });
  const top = core.argmax(core.distribution(target, "the ", 1));
  assert.equal(result.spec[top], 500);
  assert.equal(result.alone[top], 500);
  assert.equal(result.tvd, 0);
});

for (const kind of KINDS) {
  const vectors = bundle.pairs[kind];

  test(`${kind}: the noise baseline equals Python's expected_tvd`, () => {
    assert.ok(vectors.noise_checks.length >= 6);
    for (const c of vectors.noise_checks) {
      const got = core.expectedTvd(c.row, c.draws);
      assert.ok(Math.abs(got - c.expected) <= 1e-9 * Math.max(1, c.expected), `${c.draws} draws: ${got} vs ${c.expected}`);
    }
  });

  test(`${kind}: greedy runs on through its loop, finding its start where Python does, as the page's rounds run`, () => {
    const { target, draft, vocab } = core.loadModels(vectors.models);
    for (const c of vectors.greedy_runs) {
      // as playground.js's step(): rounds until 120 characters, never stopping early at a loop
      let text = "";
      let rounds = 0;
      const width = target.order - 1;
      while (core.chars(text).length < 120) {
        text += core.speculativeRound({ target, draft, vocab, context: c.context + text, k: c.k, temperature: 0, nextUniform: () => 0 }).committed;
        rounds++;
      }
      assert.equal(text, c.text, JSON.stringify(c.context));
      assert.equal(rounds, c.rounds);
      const start = core.greedyLoopStart(c.context + text, core.chars(c.context).length, width);
      assert.equal(start !== null, c.looped);
      assert.equal(start, c.loop_start);
    }
  });

  test(`${kind}: the exact distribution of each of the first three characters equals Python's`, () => {
    const { target, vocab } = core.loadModels(vectors.models);
    assert.equal(vectors.first_chars.length, 3);
    for (const c of vectors.first_chars) {
      const steps = core.firstCharsExact({ target, vocab, context: c.context, temperature: c.temperature, positions: 3 });
      let r = steps.next();
      while (!r.done) r = steps.next();
      // equal but for the last bit or two: x ** (1 / T) may differ by an ulp between the languages' pow
      assert.equal(r.value.length, c.exact.length);
      r.value.forEach((row, j) => row.forEach((x, i) => {
        assert.ok(Math.abs(x - c.exact[j][i]) <= 1e-12 * Math.max(x, 1e-300), `T ${c.temperature}, position ${j + 1}, ${i}: ${x} vs ${c.exact[j][i]}`);
      }));
      for (const row of r.value) assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-9);
    }
  });
}

test("the first-three-characters check: speculative histograms land on the target's at every position", () => {
  const { target, draft, vocab } = core.loadModels(bundle.pairs.prose.models);
  const run = (k) => {
    const steps = core.firstCharsSteps({
      target, draft, vocab, context: "And he said ", k, temperature: 1, samples: 3000, nextUniform: core.mulberry32(11),
    });
    let r = steps.next();
    let last = 0;
    while (!r.done) {
      assert.ok(r.value >= last && r.value <= 1);
      last = r.value;
      r = steps.next();
    }
    return r.value;
  };
  const result = run(4);
  assert.deepEqual(result.map((x) => x.position), [1, 2, 3]);
  for (const x of result) {
    const spec = x.spec.map((c) => c / 3000);
    // 3000 draws from one distribution sit within a few times the noise baseline of it
    assert.ok(core.totalVariation(spec, x.exact) < 3 * x.noise, `position ${x.position}: ${core.totalVariation(spec, x.exact)} vs ${x.noise}`);
    assert.ok(x.spec.reduce((a, b) => a + b, 0) === 3000 && x.alone.reduce((a, b) => a + b, 0) === 3000);
  }
  // negative control: the draft's own first characters are far from the target's exact distribution
  const draftRow = core.distribution(draft, "And he said ", 1);
  assert.ok(core.totalVariation(draftRow, result[0].exact) > 3 * result[0].noise);
});

test("a run that is mostly one character repeated is named; a varied one is not", () => {
  assert.equal(core.dominantChar("        x       "), " ");
  assert.equal(core.dominantChar("return self._x"), null);
  assert.equal(core.dominantChar("ab"), null);
});

test("training in steps gives the same export as training at once, and its progress only grows", () => {
  const t = bundle.training.find((x) => x.kind === "astral");
  const steps = train.trainPairSteps(t.text, t.orders);
  let r = steps.next();
  let last = 0;
  let yields = 0;
  while (!r.done) {
    assert.ok(r.value >= last - 1e-12 && r.value <= 1, `progress ${r.value} after ${last}`);
    last = r.value;
    yields++;
    r = steps.next();
  }
  assert.ok(yields > 10);
  assert.equal(r.value.vocab, t.vocab);
  assert.deepEqual(r.value.exports.target, t.export.target);
  assert.deepEqual(r.value.exports.draft, t.export.draft);
  assert.deepEqual(r.value.digests, t.digests);
});
