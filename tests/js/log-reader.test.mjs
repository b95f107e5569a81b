// Replays the Python engine's readings (generator/model/logreader.py) through log-reader-core.js: every
// exact fraction, every error code. The vectors come from LOGREADER_VECTORS when tests/test_log_reader.py
// runs this file; run on its own (`node --test tests/js/`), it asks Python to write a fresh set.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..", "..");
const require = createRequire(import.meta.url);
const core = require(path.join(root, "site_src", "assets", "log-reader-core.js"));
const W = require(path.join(root, "site_src", "assets", "what-if-core.js"));
const D = require(path.join(root, "site_src", "assets", "decimals.js"));

function loadVectors() {
  const file = process.env.LOGREADER_VECTORS;
  if (file) return JSON.parse(fs.readFileSync(file, "utf8"));
  const python = process.env.PYTHON || "python3";
  const script = "import json, sys\nfrom generator.model.logreader import parity_vectors\njson.dump(parity_vectors(7), sys.stdout)";
  const run = spawnSync(python, ["-c", script], { cwd: root, encoding: "utf8" });
  assert.equal(run.status, 0, `could not generate log-reader vectors with ${python}:\n${run.stderr}`);
  return JSON.parse(run.stdout);
}

const vectors = loadVectors();
const F = (x) => (x === null ? null : W.format(x));
const all = (xs) => (xs === null ? null : xs.map(F));

test("the vectors hold every convention and every error code", () => {
  const conventions = new Set(vectors.cases.map((c) => c.input.convention));
  assert.deepEqual([...conventions].sort(), ["conditional", "counts", "unconditional"]);
  const errors = new Set(vectors.cases.map((c) => c.expect.error).filter(Boolean));
  for (const code of ["empty", "number", "range", "too-many", "rising", "counts", "cost"]) assert.ok(errors.has(code), code);
  assert.ok(vectors.cases.filter((c) => !c.expect.error).length >= 40);
});

test("every reading equals the Python engine's, fraction for fraction", () => {
  for (const c of vectors.cases) {
    const r = core.read(c.input, vectors.max_k);
    const label = JSON.stringify(c.input);
    if (c.expect.error) {
      assert.equal(r.error, c.expect.error, label);
      assert.equal(typeof r.message, "string", label);
      assert.ok(r.message.length > 0 && !r.message.includes("\n"), label);
      continue;
    }
    assert.equal(r.error, undefined, `${label}: ${r.message}`);
    assert.deepEqual(
      {
        k: r.k, unconditional: all(r.unconditional), conditional: all(r.conditional), mean_length: F(r.meanLength),
        alpha_thousandths: r.alphaThousandths, speedup: F(r.speedup), best_k: r.bestK, best_speedup: F(r.bestSpeedup),
        iid_best_k: r.iidBestK, iid_best_speedup: F(r.iidBestSpeedup),
      },
      c.expect,
      label,
    );
  }
});

test("the llama.cpp example prints 2.92, and conditional rates 0.785 and 0.764", () => {
  const r = core.read({ convention: "unconditional", rates: "0.805,0.632,0.483", cost: "1/10" });
  assert.equal(D.fixed(r.meanLength, 2), "2.92");
  assert.deepEqual(r.conditional.map((x) => D.fixed(x, 3)), ["0.805", "0.785", "0.764"]);
  const counts = core.read({ convention: "counts", rounds: "87", accepted: "167", k: "3", cost: "1/10" });
  assert.equal(D.fixed(counts.meanLength, 2), "2.92");
});

test("the address opens the reader and a link gives the same state back", () => {
  const s = core.parseFragment("#rates=0.805,0.632,0.483");
  assert.deepEqual(s, { rates: "0.805,0.632,0.483", convention: "unconditional" });
  assert.equal(core.parseFragment("#rounds=87&accepted=167&k=3").convention, "counts");
  assert.equal(core.parseFragment("#what-if=x"), null);
  assert.equal(core.parseFragment("#rates=%E0%A4%A"), null); // a broken escape is ignored, never thrown
  const state = { convention: "conditional", rates: "0.8, 0.7", cost: "1/10" };
  assert.deepEqual(core.parseFragment(core.fragmentFor(state)), { ...state, rates: "0.8,0.7" });
});
