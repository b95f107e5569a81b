// Replays the Python parity vectors through playground-core.js: same rows, same verdicts, same text.
// The vectors come from PLAYGROUND_VECTORS when tests/test_playground_parity.py runs this file;
// run on its own, it asks Python to write a fresh set, so nothing committed can go stale.
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

function loadVectors() {
  let file = process.env.PLAYGROUND_VECTORS;
  if (!file) {
    file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "pg-vectors-")), "vectors.json");
    const python = process.env.PYTHON || "python3";
    const script = [
      "import json, sys",
      "from pathlib import Path",
      "import generator.playground as pg",
      "from generator.playground.ngram import load_corpus",
      "models = json.loads(json.dumps(pg.export_models(load_corpus(Path('data/corpus')))))",
      "pg.write_parity_vectors(models, 20240605, Path(sys.argv[1]))",
    ].join("\n");
    const run = spawnSync(python, ["-c", script, file], { cwd: root, encoding: "utf8" });
    assert.equal(run.status, 0, `could not generate parity vectors with ${python}:\n${run.stderr}`);
  }
  return JSON.parse(fs.readFileSync(file, "utf8"));
}

const vectors = loadVectors();
const { target, draft, vocab } = core.loadModels(vectors.models);

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

test("every case replays to the same verdicts, replacement, bonus and committed text", () => {
  assert.ok(vectors.cases.length >= 20);
  for (const [n, c] of vectors.cases.entries()) {
    let used = 0;
    const round = core.speculativeRound({
      target, draft, vocab, context: c.context, k: c.k, temperature: c.temperature,
      nextUniform: () => {
        assert.ok(used < c.uniforms.length, `case ${n}: asked for more uniforms than Python drew`);
        return c.uniforms[used++];
      },
    });
    const label = `case ${n} (${JSON.stringify(c.context)}, k=${c.k}, T=${c.temperature})`;
    assert.equal(used, c.uniforms.length, `${label}: uniforms consumed`);
    assert.equal(round.proposals, c.proposals, `${label}: proposals`);
    assert.deepEqual(round.verdicts, c.verdicts, `${label}: verdicts`);
    assert.deepEqual(round.acceptDraws, c.accept_draws, `${label}: accept draws`);
    assert.equal(round.replacement, c.replacement, `${label}: replacement`);
    assert.equal(round.bonus, c.bonus, `${label}: bonus`);
    assert.equal(round.committed, c.committed, `${label}: committed`);
  }
});

test("the draft and target rows equal the ones Python computed from the same export", () => {
  for (const [n, c] of vectors.cases.entries()) {
    c.draft_rows.forEach((row, j) => {
      const context = c.context + c.proposals.slice(0, j);
      assertRowsMatch(core.distribution(draft, context, c.temperature), row, c.temperature, `case ${n} draft row ${j}`);
    });
    c.target_rows.forEach((row, j) => {
      const context = c.context + c.proposals.slice(0, j);
      assertRowsMatch(core.distribution(target, context, c.temperature), row, c.temperature, `case ${n} target row ${j}`);
    });
  }
});

test("the cases cover bonuses, rejections and greedy rounds", () => {
  assert.ok(vectors.cases.some((c) => c.bonus !== null));
  assert.ok(vectors.cases.some((c) => c.replacement !== null));
  assert.ok(vectors.cases.some((c) => c.temperature === 0));
});

test("draw picks the same index as Python for every recorded uniform", () => {
  for (const check of vectors.draw_checks) {
    assert.equal(core.draw(target.row(check.row_context), check.u), check.index);
  }
});

test("greedy speculative output equals the target alone, character for character", () => {
  for (const context of ["The tide ", "def test_", "    assert ", ""]) {
    for (const k of [1, 3, 8]) {
      const alone = core.targetAlone({ target, vocab, context, length: 80, temperature: 0 });
      const spec = core.generate({
        target, draft, vocab, context, length: 80, k, temperature: 0,
        nextUniform: () => assert.fail("greedy rounds draw nothing"),
      });
      assert.equal(spec.text, alone, `context ${JSON.stringify(context)}, k=${k}`);
    }
  }
});

test("speculative next-character draws stay close to the target's own", () => {
  const result = core.compareNextChar({
    target, draft, vocab, context: "the ", k: 4, temperature: 1, samples: 4000, nextUniform: core.mulberry32(9),
  });
  const spec = result.spec.map((c) => c / 4000);
  // Two histograms of 4000 draws from one distribution sit well under 0.06 apart; the wrong
  // sampler in tests/test_playground.py is off by about 0.07 from the target at this context.
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

test("the running summary divides characters per round by the round cost", () => {
  const rounds = [
    { committed: "abc", verdicts: ["accepted", "accepted", "rejected", "dropped"] },
    { committed: "abcde", verdicts: ["accepted", "accepted", "accepted", "accepted"] },
  ];
  const s = core.summarise(rounds, { draft_step: 0.1, verify_step: 1 });
  assert.equal(s.perRound, 4);
  assert.equal(s.acceptance, 6 / 7);
  assert.ok(Math.abs(s.speedup - 4 / 1.4) < 1e-12);
});

test("each round is priced by its own draft length", () => {
  const rounds = [
    { committed: "ab", verdicts: ["accepted", "rejected"] },
    { committed: "abcde", verdicts: ["accepted", "accepted", "accepted", "accepted"] },
  ];
  const s = core.summarise(rounds, { draft_step: 0.1, verify_step: 1 });
  assert.ok(Math.abs(s.speedup - 7 / (1.2 + 1.4)) < 1e-12);
});

test("in greedy mode the distribution check puts every draw, both ways, on the top character", () => {
  const result = core.compareNextChar({
    target, draft, vocab, context: "the ", k: 4, temperature: 0, samples: 500, nextUniform: core.mulberry32(3),
  });
  const top = core.argmax(core.distribution(target, "the ", 1));
  assert.equal(result.spec[top], 500);
  assert.equal(result.alone[top], 500);
  assert.equal(result.exact[top], 1);
  assert.equal(result.tvd, 0);
});
