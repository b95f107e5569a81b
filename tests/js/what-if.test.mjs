// Replays the Python engine's numbers through what-if-core.js: every exact fraction must match.
// The vectors come from WHATIF_VECTORS when tests/test_what_if_parity.py runs this file; run on
// its own, it asks Python (generator/render/whatif.py) to write a fresh set, so nothing committed can go stale.
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
const core = createRequire(import.meta.url)(path.join(root, "site_src", "assets", "what-if-core.js"));
const decimals = createRequire(import.meta.url)(path.join(root, "site_src", "assets", "decimals.js"));

function loadVectors() {
  let file = process.env.WHATIF_VECTORS;
  if (!file) {
    file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "what-if-vectors-")), "vectors.json");
    const python = process.env.PYTHON || "python3";
    const script = [
      "import sys",
      "from pathlib import Path",
      "from generator.model.profiles import load_profiles",
      "from generator.render.whatif import write_parity_vectors",
      "write_parity_vectors(load_profiles('data/profiles.v1.json'), 16, Path(sys.argv[1]))",
    ].join("\n");
    const run = spawnSync(python, ["-c", script, file], { cwd: root, encoding: "utf8" });
    assert.equal(run.status, 0, `could not generate what-if vectors with ${python}:\n${run.stderr}`);
  }
  return JSON.parse(fs.readFileSync(file, "utf8"));
}

const vectors = loadVectors();
const F = core.format;
const tokens = vectors.default_tokens;

function stateOf(doc) {
  const result = core.validate(doc, tokens);
  assert.ok(result.state, `a state Python accepts was refused: ${result.error}`);
  return result.state;
}

test("the editor's limits are the ones Python writes", () => {
  for (const [key, value] of Object.entries(vectors.limits)) assert.equal(core.LIMITS[key], value, key);
});

test("the vectors cover every k from 1 to 8, vocabularies of 2 to 6, and the shipped profiles", () => {
  const ks = new Set(vectors.cases.map((c) => c.state.draft.length));
  const vocabs = new Set(vectors.cases.map((c) => (c.state.tokens || tokens).length));
  for (let k = 1; k <= 8; k++) assert.ok(ks.has(k), `no case with k = ${k}`);
  for (let v = 2; v <= 6; v++) assert.ok(vocabs.has(v), `no case with ${v} tokens`);
  assert.ok(vectors.cases.some((c) => c.id.startsWith("shipped-")));
  assert.ok(vectors.cases.some((c) => c.state.k !== undefined), "no case drafts fewer positions than it has");
  const denominators = new Set(vectors.cases.flatMap((c) => c.state.draft.flat().map((s) => core.parseFraction(s).d)));
  assert.ok(denominators.size >= 8, `only ${denominators.size} different denominators`);
});

test("every exact number of every case equals the Python engine's", () => {
  for (const c of vectors.cases) {
    const got = core.compute(stateOf(c.state));
    const want = c.numbers;
    assert.deepEqual(got.acceptRates.map(F), want.accept_rates, `${c.id}: acceptance rates`);
    assert.deepEqual(got.residuals.map((r) => (r === null ? null : r.map(F))), want.residuals, `${c.id}: residuals`);
    assert.deepEqual(got.proposalAccept.map(F), want.proposal_accept, `${c.id}: accept probabilities`);
    assert.deepEqual(got.dist.map(F), want.round_length_distribution, `${c.id}: P(N = n)`);
    assert.equal(F(got.expected), want.expected_tokens, `${c.id}: expected tokens`);
    assert.equal(F(got.cost), want.round_cost, `${c.id}: round cost`);
    assert.equal(F(got.speedup), want.speedup, `${c.id}: speedup`);
    assert.equal(F(got.blockAccepted), want.block_expected_accepted, `${c.id}: block, accepted proposals`);
    assert.equal(F(got.blockExpected), want.block_expected_tokens, `${c.id}: block, expected tokens`);
    assert.equal(F(got.blockSpeedup), want.block_speedup, `${c.id}: block, speedup`);
  }
});

test("a state survives the trip through the URL fragment unchanged", () => {
  for (const c of vectors.cases) {
    const state = stateOf(c.state);
    const back = core.parseFragment(core.fragmentFor(state, tokens), tokens);
    assert.ok(back && back.state, `${c.id}: ${back && back.error}`);
    assert.deepEqual(core.toDocument(back.state, tokens), core.toDocument(state, tokens), c.id);
    assert.equal(F(core.compute(back.state).speedup), c.numbers.speedup, c.id);
  }
});

test("the closed form and best K equal the Python engine's, and the i.i.d. round agrees with it", () => {
  assert.ok(vectors.closed_form.length >= 50);
  assert.ok(vectors.closed_form.filter((c) => c.ties.length > 0).length >= 3, "the vectors hold ties");
  for (const c of vectors.closed_form) {
    const alpha = core.parseFraction(c.alpha);
    const cost = core.parseFraction(c.c);
    const closed = core.leviathanSpeedup(alpha, c.k, cost);
    assert.equal(F(closed), c.speedup, `alpha ${c.alpha}, K ${c.k}, c ${c.c}`);
    assert.equal(core.bestDraftLength(alpha, cost, c.max_k), c.best_k, `best K at alpha ${c.alpha}, c ${c.c}`);
    const curve = core.speedupCurve(alpha, cost, c.max_k);
    assert.deepEqual(core.printedTies(curve, c.best_k, (f) => decimals.fixed(f, 2)), c.ties, `ties at alpha ${c.alpha}, c ${c.c}`);
    const dist = core.roundLengthDistribution(Array(c.k).fill(alpha));
    const general = core.div(core.expectedTokens(dist), core.roundCost(c.k, cost, core.ONE));
    assert.equal(F(general), c.speedup, `the per-position path at alpha ${c.alpha}, K ${c.k}`);
  }
});

// --- invalid states: each gets one sentence naming what is wrong --------------------------------

const shipped = vectors.cases.find((c) => c.id.startsWith("shipped-")).state;
const copy = () => JSON.parse(JSON.stringify(shipped));
const fragment = (doc) => core.PREFIX + encodeURIComponent(JSON.stringify(doc));

function refused(doc, pattern) {
  const result = typeof doc === "string" ? core.parseFragment(doc, tokens) : core.validate(doc, tokens);
  assert.ok(result && result.error, `accepted: ${JSON.stringify(doc).slice(0, 80)}`);
  assert.match(result.error, pattern);
  assert.ok(!/[\n]/.test(result.error) && result.error.length < 200, result.error);
  return result.error;
}

test("a row that does not sum to 1 is refused with its sum", () => {
  const doc = copy();
  doc.target[2] = doc.target[2].map((x, i) => (i === 0 ? "1/8" : x));
  refused(fragment(doc), /target row 3 sums to \d+\/\d+, not 1/);
  const bonus = copy();
  bonus.target[bonus.target.length - 1][1] = "0";
  refused(bonus, /\(the bonus row\) sums to/);
});

test("a negative probability is refused", () => {
  const doc = copy();
  doc.draft[0][0] = "-1/8";
  doc.draft[0][1] = "7/8";
  refused(fragment(doc), /draft row 1, token .the.: -1\/8 is negative/);
});

test("rows, tokens and proposals of the wrong length are refused", () => {
  const short = copy();
  short.draft.pop();
  refused(fragment(short), /the draft has \d rows, but with \d target rows it needs \d/);
  const narrow = copy();
  narrow.target[0] = narrow.target[0].slice(1);
  refused(fragment(narrow), /target row 1 has 5 probabilities, but there are 6 tokens/);
  const proposals = copy();
  proposals.proposals.pop();
  refused(fragment(proposals), /proposals, but the draft has/);
  const many = copy();
  many.tokens = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
  refused(many, /9 tokens, and the editor takes 2 to 8/);
  const long = copy();
  while (long.draft.length < 9) {
    long.draft.push(long.draft[0]);
    long.target.push(long.target[0]);
    long.proposals.push(long.proposals[0]);
  }
  refused(long, /the target has 10 rows, and it needs 2 to 9/);
});

test("garbage is refused without throwing", () => {
  refused(core.PREFIX + "%7Bnot json", /not readable JSON/);
  refused(core.PREFIX + "%E0%A4%A", /not readable JSON/);
  refused(core.PREFIX + "42", /not a JSON object/);
  refused(core.PREFIX + encodeURIComponent("[1,2]"), /not a JSON object/);
  refused({ ...copy(), extra: 1 }, /unknown key .extra./);
  const noDraft = copy();
  delete noDraft.draft;
  refused(noDraft, /has no .draft./);
  const bad = copy();
  bad.target[0][0] = "half";
  refused(bad, /"half" is not a number such as 3\/8, 0\.375 or 37\.5%/);
  const percentOfFraction = copy();
  percentOfFraction.target[0][0] = "1/2%";
  refused(percentOfFraction, /"1\/2%" is not a number/);
  const zero = copy();
  zero.target[0][0] = "1/0";
  refused(zero, /divides by zero/);
  const unproposable = copy();
  unproposable.proposals[0] = "sat";
  refused(unproposable, /proposal 1, .sat., has probability 0 in draft row 1/);
  const cost = copy();
  cost.cost_model.verify_step = "0";
  refused(cost, /verification step must be greater than 0/);
  const k = copy();
  k.k = 9;
  refused(k, /K is 9/);
  assert.equal(core.parseFragment("#positions", tokens), null, "a fragment of another kind is not a what-if state");
});

test("numbers with more than six digits are refused in one sentence; six digits are fine", () => {
  const doc = copy();
  doc.target[0] = doc.target[0].map((x, i) => (i === 0 ? "1/1000001" : x));
  refused(doc, /target row 1, token .the.: 1\/1000001 has more digits than the editor works with/);
  const big = copy();
  big.cost_model.draft_step = `1/${"9".repeat(95)}`;
  refused(big, /the draft step c, 1\/9{18}\u2026 has more digits/);
  const fine = copy();
  fine.cost_model.draft_step = "1/1000000";
  assert.ok(stateOf(fine));
});

test("any denominators within the limit are fine, and fractions come back normalised", () => {
  const doc = copy();
  doc.target[0] = ["4/8", "1/8", "0", "1/8", "6/24", "0/5"];
  const state = stateOf(doc);
  assert.deepEqual(core.toDocument(state, tokens).target[0], ["1/2", "1/8", "0", "1/8", "1/4", "0"]);
});

test("decimals and percentages are read exactly, as a reader types them", () => {
  const read = (text) => {
    const f = core.parseFraction(text);
    return f && f !== "zero" ? F(f) : f;
  };
  assert.equal(read("0.5"), "1/2");
  assert.equal(read(".5"), "1/2");
  assert.equal(read("0,5"), "1/2");
  assert.equal(read("12.5%"), "1/8");
  assert.equal(read(" 12.5 % "), "1/8");
  assert.equal(read("50%"), "1/2");
  assert.equal(read("0.1"), "1/10", "a decimal is the decimal, not the float nearest it");
  assert.equal(read("0.3333"), "3333/10000");
  assert.equal(read("3 / 8"), "3/8");
  assert.equal(read("\u22120.25"), "-1/4");
  assert.equal(read("1"), "1");
  assert.equal(read("1/0"), "zero");
  for (const junk of ["", ".", "%", "-", "1e-3", "1/2%", "0x1", "1..2", "1/2/3", "1 2", "0. 5", "x".repeat(300)]) {
    assert.equal(core.parseFraction(junk), null, JSON.stringify(junk));
  }
  const doc = copy();
  doc.target[0] = ["0.5", "12.5%", "0", "0.125", "25%", "0"];
  assert.deepEqual(core.toDocument(stateOf(doc), tokens).target[0], ["1/2", "1/8", "0", "1/8", "1/4", "0"]);
});

test("a row that does not sum to 1 is refused with where it is, so the editor can offer to rebalance it", () => {
  const doc = copy();
  doc.draft[1][0] = "7/8";
  const result = core.validate(doc, tokens);
  assert.match(result.error, /draft row 2 sums to/);
  assert.deepEqual(result.fix, { which: "draft", row: 1 });
  const negative = copy();
  negative.draft[1][0] = "-1/8";
  assert.equal(core.validate(negative, tokens).fix, null, "a negative cell is not fixed by rebalancing");
});

test("rebalance keeps the edited cell and makes the row sum to 1, largest other cells first", () => {
  const row = (...xs) => xs.map((x) => core.parseFraction(x));
  const check = (cells, keep, want, changes) => {
    const out = core.rebalance(row(...cells), keep);
    assert.ok(out, `no rebalance for ${cells}`);
    assert.deepEqual(out.row.map(F), want);
    assert.equal(F(core.sum(out.row)), "1");
    assert.deepEqual(out.changes.map((c) => [c.col, F(c.by)]), changes);
  };
  // a shortfall goes to the largest other cell (the first on ties)
  check(["1/4", "1/8", "1/4", "0"], 0, ["1/4", "1/8", "5/8", "0"], [[2, "3/8"]]);
  check(["1/4", "1/4", "1/4", "0"], 3, ["1/2", "1/4", "1/4", "0"], [[0, "1/4"]]);
  // an excess comes from the other cells, largest first, as far as each has it
  check(["7/8", "1/4", "1/8", "1/8"], 0, ["7/8", "0", "0", "1/8"], [[1, "-1/4"], [2, "-1/8"]]);
  check(["1", "1/2", "1/2", "0"], 0, ["1", "0", "0", "0"], [[1, "-1/2"], [2, "-1/2"]]);
  // nothing kept: any cell may change
  check(["1/2", "1/2", "1/4"], -1, ["1/4", "1/2", "1/4"], [[0, "-1/4"]]);
  check(["1/2", "1/2"], 0, ["1/2", "1/2"], []);
  // every random row of the vectors, one cell pushed off by a step, comes back to a sum of 1 keeping that cell
  for (const c of vectors.cases) {
    for (const raw of c.state.draft) {
      const cells = raw.map((x) => core.parseFraction(x));
      cells[0] = core.min(core.ONE, core.add(cells[0], core.frac(1n, 8n)));
      const out = core.rebalance(cells, 0);
      assert.ok(out && core.eq(core.sum(out.row), core.ONE) && core.eq(out.row[0], cells[0]), c.id);
      assert.ok(out.row.every((x) => x.n >= 0n), c.id);
    }
  }
});
