"""The playground's two model pairs (prose and code), what they measure, and the vectors that pin the JS.

build_kind is what the site build calls, once per kind of text: it trains a target and a
draft, exports them for the page, rebuilds them from that export (so the numbers printed beside
the widget come from exactly what the widget runs), and measures speculative sampling on
held-out text of that kind.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from fractions import Fraction
from types import MappingProxyType

import numpy as np

from ..model.analysis import best_draft_length, leviathan_speedup
from ..model.engine import draw
from ..model.montecarlo import row_cdfs, simulate_batch
from ..render.decimals import rounded  # the pages' one rounding rule
from .block import compare as compare_verifiers
from .block import summary as verifier_summary
from .ngram import CODE, KINDS, PROSE, Corpus, Model, count_digest, encode, export_json, make_corpus, train_export
from .sampler import (
    apply_temperature,
    expected_tvd,
    first_chars_exact,
    greedy_loop_start,
    greedy_run,
    speculative_round,
    temper_rows,
)

MAX_K = 8  # the default; the site's own comes from site.yaml playground.max_k
EXPORT_VERSION = 2


@dataclass(frozen=True)
class Orders:
    """A pair's context lengths: orders are context length + 1, chosen on held-out text (data/corpus/README.md)."""

    target: int
    draft: int
    min_count: int


def _number(x) -> float:
    return float(Fraction(x)) if isinstance(x, str) else float(x)


def export_pair(corpus: Corpus, orders: Orders) -> dict:
    grams: dict = {}  # the draft's n-grams are a subset of the target's: count them once
    return {
        "version": EXPORT_VERSION,
        "vocab": corpus.vocab,
        "target": train_export(corpus.train, corpus.vocab, orders.target, orders.min_count, grams),
        "draft": train_export(corpus.train, corpus.vocab, orders.draft, orders.min_count, grams),
    }


def load_pair(pair: dict) -> tuple[Model, Model]:
    """(target, draft) as the page computes them: from the export alone."""
    return Model(pair["target"], pair["vocab"]), Model(pair["draft"], pair["vocab"])


def held_out_bits(target: Model, draft: Model, corpus: Corpus) -> dict:
    return {
        "chars": len(corpus.held_out),
        "target": target.bits_per_char(corpus.held_out),
        "draft": draft.bits_per_char(corpus.held_out),
    }


def measurement_contexts(text: str, vocab: str, width: int, rounds: int, rng: np.random.Generator) -> np.ndarray:
    """The width characters before each of `rounds` random held-out positions, as round prompts."""
    codes = encode(text, vocab)
    ends = rng.integers(width, len(codes), size=rounds)
    return np.stack([codes[e - width : e] for e in ends])


def simulate(
    target: Model,
    draft: Model,
    contexts: np.ndarray,
    k: int,
    temperature: float,
    rng: np.random.Generator,
    replacement_rule=None,
):
    """Rounds from each context row through the site's one vectorised simulator (montecarlo.simulate_batch)."""
    return simulate_tempered(
        tempered(target, temperature), tempered(draft, temperature), contexts, k, rng, replacement_rule
    )


def tempered(model: Model, temperature: float) -> Model:
    """The model whose rows are temper_rows of its own: tempered once per kept context, not once per round."""
    return model.with_rows(lambda rows: temper_rows(rows, temperature))


def simulate_tempered(
    target: Model,
    draft: Model,
    contexts: np.ndarray,
    k: int,
    rng: np.random.Generator,
    replacement_rule=None,
    memo: dict | None = None,
):
    """simulate for models already tempered. Calls with the same models and contexts may share a memo: the
    draft's CDFs, and the rows at the first position, where every round starts from its context alone."""
    memo = {} if memo is None else memo
    if "draft_cdfs" not in memo:
        memo["draft_cdfs"] = row_cdfs(draft.table)  # once per kept context, not once per round

    def rows_at(j: int, going: np.ndarray, proposals: np.ndarray):
        if j == 0 and j < k and "first" in memo:
            return memo["first"]
        ctx = np.concatenate([contexts[going], proposals], axis=1)
        if j == k:
            return target.rows(ctx), None
        at = draft.lookup(ctx)
        rows = TableRows(target.table, target.lookup(ctx)), TableRows(draft.table, at), memo["draft_cdfs"][at]
        if j == 0:
            rows[2].flags.writeable = False  # shared by every call: nobody may write into it
            memo["first"] = rows
        return rows

    kwargs = {} if replacement_rule is None else {"replacement_rule": replacement_rule}
    return simulate_batch(rows_at, k, contexts.shape[0], rng, **kwargs)


class TableRows:
    """table[at], read without copying it: the entries simulate_batch reads (rows[index, tokens]) and the
    whole rows of the rounds it asks for (rows[mask]); anything else gets the full array (np.asarray)."""

    def __init__(self, table: np.ndarray, at: np.ndarray) -> None:
        self.table, self.at = table, at
        self.shape = (len(at), table.shape[1])

    def __getitem__(self, key):
        if isinstance(key, tuple):
            rows, columns = key
            return self.table[self.at[rows], columns]
        return self.table[self.at[key]]

    def __array__(self, dtype=None, copy=None):
        rows = self.table[self.at]
        return rows if dtype is None else rows.astype(dtype)


def measure(
    target: Model,
    draft: Model,
    corpus: Corpus,
    seed: int,
    rounds: int,
    draft_step: float,
    verify_step: float,
    max_k: int = MAX_K,
) -> dict:
    """Acceptance, characters per round and speedup for K = 1..max_k, each K from fresh rounds, at temperature 1
    (rows renormalised as the page renormalises them)."""
    width = max(target.order, draft.order) - 1
    kind_index = KINDS.index(corpus.kind)
    rng = np.random.default_rng([seed, kind_index])
    contexts = measurement_contexts(corpus.held_out, corpus.vocab, width, rounds, rng)
    per_k = []
    target, draft = tempered(target, 1.0), tempered(draft, 1.0)
    memo: dict = {}
    for k in range(1, max_k + 1):
        batch = simulate_tempered(target, draft, contexts, k, np.random.default_rng([seed, kind_index, k]), memo=memo)
        verified = batch.reached[:k].sum(axis=1)
        kept = batch.accepted.sum(axis=1)
        per_k.append(
            {
                "k": k,
                "rounds": int(batch.committed.size),
                "verified_by_position": [int(v) for v in verified],
                "accepted_by_position": [int(a) for a in kept],
                "committed": int(batch.committed.sum()),  # characters committed over all the rounds
                # the standard error of that mean: rounds are independent draws (fresh contexts, fresh uniforms)
                "chars_per_round_se": float(batch.committed.std(ddof=1) / np.sqrt(batch.committed.size)),
            }
        )
    return price({"per_k": per_k}, draft_step, verify_step)


TIE_ERRORS = 2  # two speedups closer than this many standard errors of their difference are called a tie


def step_fraction(x) -> Fraction:
    """A cost model's step as the exact fraction it stands for: 0.1 is 1/10, not the double nearest it."""
    return Fraction(x).limit_denominator(10**6)


def price(measured: dict, draft_step: float, verify_step: float) -> dict:
    """Each K's round cost and speedup, and the best K, under a cost model: the only part of the measured
    rounds that depends on it, so another cost model needs no model trained and no round run again.

    Every rate and mean is the exact ratio of the integer counts it comes from (a Fraction), so a page rounds
    617/400 as 1.543, never the double 1.5424999... as 1.542; only standard errors are floats."""
    per_k = []
    for row in measured["per_k"]:
        cost = row["k"] * step_fraction(draft_step) + step_fraction(verify_step)
        checked, kept = row["verified_by_position"], row["accepted_by_position"]
        chars_per_round = Fraction(row["committed"], row["rounds"])
        per_k.append(
            {
                **row,
                "acceptance": row_rate(row),  # the acceptance rate: accepted / checked
                "acceptance_by_position": [Fraction(a, v) if v else None for a, v in zip(kept, checked)],
                "chars_per_round": chars_per_round,
                "round_cost": cost,
                "speedup": chars_per_round / cost,
                "speedup_se": row["chars_per_round_se"] / float(cost),
            }
        )
    best = max(per_k, key=lambda m: m["speedup"])
    # tied with the best (itself included): within TIE_ERRORS standard errors of the difference, which is
    # sqrt(se_a^2 + se_b^2) as each K runs its own rounds
    tied = [
        row["k"]
        for row in per_k
        if best["speedup"] - row["speedup"] < TIE_ERRORS * (row["speedup_se"] ** 2 + best["speedup_se"] ** 2) ** 0.5
    ]
    return {
        "per_k": per_k,
        "best_k": best["k"],
        "best_speedup": best["speedup"],
        "best_speedup_se": best["speedup_se"],
        "tied_ks": tied,
    }


def prediction(measured: dict, draft_step: float, verify_step: float) -> dict:  # K = 1 .. as many as measured
    """Leviathan et al.'s closed form fed the measured acceptance rate: its best K and speedups.

    The rate is the pooled acceptance of the K = 1 rounds (every round verifies exactly one
    proposal there, so it is the plain per-proposal rate the closed form assumes), as a Fraction
    of counts so the closed form runs exactly; c is the draft step over the verification pass.
    """
    alpha = row_rate(measured["per_k"][0])
    c = step_fraction(draft_step) / step_fraction(verify_step)
    max_k = len(measured["per_k"])
    best_k = best_draft_length(alpha, c, max_k)
    per_k = [leviathan_speedup(alpha, k, c) for k in range(1, max_k + 1)]
    # each K's closed form again, fed that K's own measured rate (the per-K table's last column)
    at_row_rate = [leviathan_speedup(row_rate(row), row["k"], c) for row in measured["per_k"]]
    measured_best = measured["best_speedup"]
    predicted_at_measured_best = per_k[measured["best_k"] - 1]
    return {
        "alpha": alpha,
        "best_k": best_k,
        "speedup_by_k": per_k,
        "speedup_at_row_rate": at_row_rate,
        "best_speedup": per_k[best_k - 1],
        "at_measured_best_k": predicted_at_measured_best,
        "gap": measured_best - predicted_at_measured_best,
        # how far the prediction lies from the measured value, as a share of the measured value: negative when
        # the closed form predicts less than was measured
        "relative_gap": (predicted_at_measured_best - measured_best) / measured_best,
    }


def row_rate(row: dict) -> Fraction:
    """A K's measured acceptance rate as the exact ratio of its counts: accepted over checked."""
    return Fraction(sum(row["accepted_by_position"]), sum(row["verified_by_position"]))


OPENING_KEYWORDS = (
    "return",
    "if",
    "for",
    "while",
    "elif",
    "raise",
    "assert",
    "yield",
)  # each followed by an expression


def example_prompts(corpus: Corpus) -> list[str]:
    """Openings of held-out paragraphs (prose) or of held-out lines of code up to a keyword they open with (code)."""
    if corpus.kind == PROSE:
        paragraphs = [paragraph.split() for paragraph in corpus.held_out.split("\n")]
        return [" ".join(words[:6]) + " " for words in paragraphs if len(words) >= 12][:3]
    lines = corpus.held_out.splitlines()
    prompts: list[str] = []
    used: set[str] = set()
    for before, line in zip(lines, lines[1:]):
        word = line.lstrip().split(" ")[0]
        # a line that opens with a keyword an expression follows ("return ", "if "), after the line before it: the
        # prompt ends there, so the models go on writing code rather than choosing an indentation they cannot count
        code_before = before.strip() and before.strip()[0] not in "\"'#"  # not a docstring or a comment
        if word in OPENING_KEYWORDS and line.lstrip() != word and code_before and word not in used:
            used.add(word)
            prompts.append(before + "\n" + line[: len(line) - len(line.lstrip()) + len(word) + 1])
    return prompts[:3]


def build_kind(
    kind: str, text: str, orders: Orders, seed: int, rounds: int, draft_step, verify_step, max_k: int
) -> dict:
    """One kind's pair, trained and measured: its part of build_playground, which the site build runs for each
    kind in its own worker process (each kind's rounds draw from their own seeded generators)."""
    if rounds < 1:
        raise ValueError("rounds must be positive")
    corpus, draft_step, verify_step = make_corpus(kind, text), _number(draft_step), _number(verify_step)
    pair = export_pair(corpus, orders)  # plain ints, floats and strings: JSON gives back exactly these
    published = export_json(pair)  # (tests/test_playground.py checks that json.loads(published) == pair)
    target, draft = load_pair(pair)
    measured = measure(target, draft, corpus, seed, rounds, draft_step, verify_step, max_k=max_k)
    width = max(target.order, draft.order) - 1
    block_contexts = measurement_contexts(
        corpus.held_out, corpus.vocab, width, rounds, np.random.default_rng([seed, KINDS.index(kind), 1000])
    )
    return {
        # token-wise against block verification on the same rounds, per temperature (block.py): counts only
        "block": compare_verifiers(target, draft, block_contexts, [seed, KINDS.index(kind), 1001]),
        "models": pair,
        "models_json": published,  # what assets/playground-models-KIND.js holds, made once, here
        "digests": {"target": count_digest(pair["target"]), "draft": count_digest(pair["draft"])},
        "bits_per_char": held_out_bits(target, draft, corpus),
        "orders": asdict(orders),
        "context_chars": {"target": orders.target - 1, "draft": orders.draft - 1},
        "measurements": measured,
        "prediction": prediction(measured, draft_step, verify_step),
        "prompts": example_prompts(corpus),
        "export_bytes": len(published),
        "corpus_chars": {"train": len(corpus.train), "held_out": len(corpus.held_out)},
        "vocab_size": len(corpus.vocab),
    }


def build_playground(
    texts: dict[str, str],
    orders: dict[str, Orders],
    seed: int,
    rounds: int = 2000,
    draft_step=0.1,
    verify_step=1.0,
    max_k: int = MAX_K,
) -> dict:
    """Everything the page and its static tables need, as plain JSON-ready data: each kind's build_kind, assembled.
    texts maps "prose" and "code" to their corpus text; draft_step and verify_step are the cost model (floats,
    Fractions or "1/10" strings)."""
    pairs = {
        kind: build_kind(kind, texts[kind], orders[kind], seed, rounds, draft_step, verify_step, max_k)
        for kind in KINDS
    }
    return assemble(pairs, seed, max_k, draft_step, verify_step)


def assemble(pairs: dict[str, dict], seed: int, max_k: int, draft_step, verify_step) -> dict:
    """build_playground's result from each kind's build_kind (pairs in the order of KINDS)."""
    pairs = {kind: {**p, "block_rows": [verifier_summary(row) for row in p["block"]]} for kind, p in pairs.items()}
    return {
        "kinds": list(KINDS),
        "max_k": max_k,
        "pairs": pairs,
        "cost_model": {"draft_step": _number(draft_step), "verify_step": _number(verify_step)},
        "cost_model_exact": exact_cost(draft_step, verify_step),
        "temperature": 1.0,
        "seed": seed,
        "comparison": compare_kinds({kind: p["measurements"] for kind, p in pairs.items()}),
    }


def repriced(data: dict, draft_step, verify_step) -> dict:
    """build_playground's result under another cost model (floats, Fractions or "1/10" strings)."""
    ds, vs = _number(draft_step), _number(verify_step)
    pairs = {}
    for kind, p in data["pairs"].items():
        measured = price(p["measurements"], ds, vs)
        pairs[kind] = {**p, "measurements": measured, "prediction": prediction(measured, ds, vs)}
    cost_model = {"draft_step": ds, "verify_step": vs}
    return {**data, "pairs": pairs, "cost_model": cost_model, "cost_model_exact": exact_cost(ds, vs)}


def exact_cost(draft_step, verify_step) -> dict[str, str]:
    """The cost model as the page's script reads it to print exact ratios: each step as an "n/d" string."""
    return {
        name: f"{step_fraction(x).numerator}/{step_fraction(x).denominator}"
        for name, x in (("draft_step", _number(draft_step)), ("verify_step", _number(verify_step)))
    }


def numbers(data: dict) -> dict:
    """The playground's part of build/numbers.json: held-out bits per character and measured acceptance."""
    out = {}
    for kind, p in data["pairs"].items():
        m = p["measurements"]
        out[kind] = {
            "orders": p["orders"],
            "bits_per_char": {"target": p["bits_per_char"]["target"], "draft": p["bits_per_char"]["draft"]},
            "acceptance_k1": m["per_k"][0]["acceptance"],
            "pooled_acceptance": data["comparison"]["acceptance"][kind],
            **{name: m[name] for name in ("best_k", "best_speedup", "best_speedup_se", "tied_ks")},
            "predicted_best_k": p["prediction"]["best_k"],
            "predicted_speedup_at_best_k": p["prediction"]["at_measured_best_k"],
            "digests": p["digests"],
        }
    return plain(out)


def compare_kinds(measurements: dict) -> dict:
    """Which kind of text the draft gets through more often, pooled over every K: the seed's claim, tested."""
    pooled = {}
    for kind, m in measurements.items():
        kept = sum(a for row in m["per_k"] for a in row["accepted_by_position"])
        tried = sum(n for row in m["per_k"] for n in row["verified_by_position"])
        pooled[kind] = Fraction(kept, tried)
    higher = max(pooled, key=pooled.get)
    lower = min(pooled, key=pooled.get)
    by_k = zip(measurements[higher]["per_k"], measurements[lower]["per_k"])
    every_k = all(h["acceptance"] > lo["acceptance"] for h, lo in by_k)
    # The page prints both rates to a tenth of a percent; the gap is their difference as printed, in percentage
    # points, so a reader who subtracts the two figures shown gets the gap shown.
    shown = {kind: rounded(rate * 100, 1) for kind, rate in pooled.items()}  # tenths of a percent
    gap = Fraction(shown[higher] - shown[lower], 1000)
    rounds = sum(row["rounds"] for row in next(iter(measurements.values()))["per_k"])
    return {
        "acceptance": pooled,
        "higher": higher,
        "lower": lower,
        "gap": gap,
        "higher_at_every_k": every_k,
        "rounds": rounds,
    }


def plain(value):
    """value with every exact Fraction as the float nearest it: what JSON can carry (the pages print from the
    Fractions themselves; a script only reads these, never prints them)."""
    if isinstance(value, Fraction):
        return float(value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def page_data(data: dict) -> dict:
    """What the page gets: no models (they load from their own files), no corpora, no files. Rates and speedups
    stay exact Fractions for the templates to round; plain() makes the page's inline JSON of it."""
    data = {k: v for k, v in data.items() if k not in ("corpora", "licences", "files")}
    return {
        **data,
        "pairs": {
            k: {n: v for n, v in p.items() if n not in ("models", "models_json")} for k, p in data["pairs"].items()
        },
    }


def models_script(data: dict, kind: str) -> str:
    """assets/playground-models-KIND.js: one exported pair, for a plain <script src> that also works from file://."""
    pair = data["pairs"][kind]["models_json"]
    return f"(window.PlaygroundModels = window.PlaygroundModels || {{}}).{kind} = {pair};\n"


def corpus_script(text: str, kind: str) -> str:
    """assets/corpus/KIND.js: the corpus as published for training in the browser, loaded only on demand."""
    return f"(window.PlaygroundCorpora = window.PlaygroundCorpora || {{}}).{kind} = {json.dumps(text, ensure_ascii=True)};\n"


# --- parity vectors ---------------------------------------------------------------------------

PARITY_TEMPERATURES = (1.0, 0.0, 0.7, 1.6)
PARITY_KS = (1, 3, 5, 8)
PARITY_CONTEXTS = MappingProxyType(
    {
        PROSE: ["And he said to them, ", "In the beginning ", "", "qz"],
        CODE: ["    def __init__(self", "for i in range(", "", "qz"],
    }
)


def parity_vectors(pair: dict, seed: int, contexts: list[str]) -> dict:
    """Rounds the JavaScript must replay exactly: same rows, same uniforms, same verdicts and text."""
    target, draft = load_pair(pair)
    rng = np.random.default_rng(seed)
    cases = []
    for c_index, context in enumerate(contexts):
        for temperature in PARITY_TEMPERATURES:
            k = PARITY_KS[(c_index + len(cases)) % len(PARITY_KS)]
            result = speculative_round(target, draft, context, k, temperature, rng.random)
            cases.append({"context": context, "k": k, "temperature": temperature, **asdict(result)})
    draws = rng.random(50).tolist()
    row = target.row(contexts[0]).tolist()
    noise = [
        {"row": apply_temperature(row, t), "draws": n, "expected": expected_tvd(apply_temperature(row, t), n)}
        for t in (1.0, 0.7)
        for n in (100, 3000, 20000)
    ]
    greedy = []
    for context in contexts:
        for k in (1, 4):
            text, rounds, looped = greedy_run(target, draft, context, k, 120)
            greedy.append(
                {
                    "context": context,
                    "k": k,
                    "text": text,
                    "rounds": rounds,
                    "looped": looped,
                    "loop_start": greedy_loop_start(context + text, len(context), target.order - 1),
                }
            )
    first_chars = [
        {"context": contexts[0], "temperature": t, "exact": first_chars_exact(target, contexts[0], t, 3)}
        for t in (1.0, 0.7, 0.0)
    ]
    return {
        "first_chars": first_chars,
        "noise_checks": noise,
        "greedy_runs": greedy,
        "seed": seed,
        "models": pair,
        "digests": {"target": count_digest(pair["target"]), "draft": count_digest(pair["draft"])},
        "cases": cases,
        "draw_checks": [{"row_context": contexts[0], "u": u, "index": draw(row, u)} for u in draws],
    }


ASTRAL_WORDS = ("the", "cat", "\U0001f600", "sat", "on", "\U0001d52ana", "caf\u00e9", "\u4e2d", "dog", "ran.")


def astral_text(seed: int, words: int = 4000) -> str:
    """A made-up text with characters outside the Basic Multilingual Plane, for the code-point parity test."""
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(ASTRAL_WORDS), size=words)
    lines = [" ".join(ASTRAL_WORDS[i] for i in picks[j : j + 12]) for j in range(0, words, 12)]
    return "\n".join(lines) + "\n"


def parity_bundle(texts: dict[str, str], orders: dict[str, Orders], seed: int) -> dict:
    """Everything tests/js replays: rounds per pair, and each corpus with the export Python trained from it."""
    bundle: dict = {"pairs": {}, "training": []}
    for kind, text in texts.items():
        corpus = make_corpus(kind, text)
        pair = json.loads(json.dumps(export_pair(corpus, orders[kind])))
        contexts = PARITY_CONTEXTS.get(kind, ["the \U0001f600 ", "\U0001d52ana ", "", "caf"])
        bundle["pairs"][kind] = parity_vectors(pair, seed, contexts)
        bundle["training"].append(
            {
                "kind": kind,
                "text": text,
                "vocab": corpus.vocab,
                "orders": asdict(orders[kind]),
                "export": pair,
                "digests": bundle["pairs"][kind]["digests"],
                "bits_per_char": held_out_bits(*load_pair(pair), corpus),
            }
        )
    return bundle
