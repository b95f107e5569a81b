// Replays the rounding rule of generator/decimals.py through site_src/assets/decimals.js: every
// string must be the one Python prints. The vectors come from DECIMALS_VECTORS when
// tests/test_decimals.py runs this file; run on its own, it asks Python for a fresh set.
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
const Decimals = createRequire(import.meta.url)(path.join(root, "site_src", "assets", "decimals.js"));

function loadVectors() {
  let file = process.env.DECIMALS_VECTORS;
  if (!file) {
    file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "decimals-vectors-")), "vectors.json");
    const python = process.env.PYTHON || "python3";
    const script = "import json, sys\nfrom generator.render.decimals import parity_vectors\n" +
      "open(sys.argv[1], 'w').write(json.dumps(parity_vectors()))";
    const run = spawnSync(python, ["-c", script, file], { cwd: root, encoding: "utf8" });
    assert.equal(run.status, 0, `could not generate the decimal vectors with ${python}:\n${run.stderr}`);
  }
  return JSON.parse(fs.readFileSync(file, "utf8"));
}

const vectors = loadVectors();

// "13/8" -> { n: 13n, d: 8n }; a JSON number stays a Number (a float in Python).
function valueOf(v) {
  if (typeof v === "number") return v;
  const [n, d = "1"] = v.split("/");
  return { n: BigInt(n), d: BigInt(d) };
}

test("every vector prints as Python prints it", () => {
  assert.ok(vectors.length > 300, `only ${vectors.length} vectors`);
  const wrong = vectors.filter((c) => Decimals[c.format](valueOf(c.value), c.digits) !== c.text)
    .map((c) => `${c.format}(${c.value}, ${c.digits}): JS ${Decimals[c.format](valueOf(c.value), c.digits)}, Python ${c.text}`);
  assert.deepEqual(wrong, []);
});

test("the vectors hold ties of both signs, percentages and floats", () => {
  const has = (value, format, digits, text) =>
    assert.ok(vectors.some((c) => c.value === value && c.format === format && c.digits === digits && c.text === text),
      `no vector ${format}(${value}, ${digits}) = ${text}`);
  has("13/8", "fixed", 2, "1.63");
  has("33/40", "fixed", 2, "0.83");
  has("-13/8", "fixed", 2, "-1.63");
  has("-33/40", "fixed", 2, "-0.83");
  has("1/8", "pct", 0, "13%");
  has("-1/8", "pct", 0, "-13%");
  has("13/8", "times", 2, "1.63\u00d7");
  has(0.125, "fixed", 2, "0.13");
  has(2.675, "fixed", 2, "2.67");
});

test("ties go away from zero, and a rounded zero has no sign", () => {
  const F = (n, d) => ({ n: BigInt(n), d: BigInt(d) });
  assert.equal(Decimals.fixed(F(13, 8), 2), "1.63");
  assert.equal(Decimals.fixed(F(-13, 8), 2), "-1.63");
  assert.equal(Decimals.fixed(F(5, 2), 0), "3");
  assert.equal(Decimals.fixed(F(-5, 2), 0), "-3");
  assert.equal(Decimals.fixed(F(-1, 1000), 2), "0.00");
  assert.equal(Decimals.fixed(-0, 1), "0.0");
  assert.equal(Decimals.pct(F(1, 8), 1), "12.5%");
  assert.equal(Decimals.times(2n, 2), "2.00\u00d7");
  assert.equal(Decimals.sci(F(996, 100000), 1), "1.0 \u00d7 10^-2");
  assert.equal(Decimals.rounded(F(33, 40), 2), 83n);
  assert.throws(() => Decimals.fixed(Number.NaN, 2), RangeError);
  assert.throws(() => Decimals.fixed("0.5", 2), TypeError);
});
