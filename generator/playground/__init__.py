"""The playground's two character models, what they measure, and the vectors that pin the JS to them.

build_playground is the one call the site build makes: it trains both models from data/corpus,
exports them for the page, rebuilds them from that export (so the numbers printed beside the
widget come from exactly what the widget runs), and measures speculative sampling on held-out
prose and code.
"""
from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np

from .ngram import CODE, KINDS, PROSE, Corpus, Model, encode, load_corpus, train_export
from .sampler import draw, simulate, speculative_round

TARGET_ORDER = 5  # four characters of context; order 6 scored worse held out on a corpus this size
DRAFT_ORDER = 3  # two characters of context: plainly weaker; order 2 agreed so rarely that K = 1 was best
MIN_COUNT = 2  # contexts seen once are dropped from the export; the page size depends on it
MAX_K = 8
EXPORT_VERSION = 1


def _number(x) -> float:
    return float(Fraction(x)) if isinstance(x, str) else float(x)


def export_models(corpus: Corpus) -> dict:
    texts = [corpus.train[PROSE], corpus.train[CODE]]
    return {
        "version": EXPORT_VERSION,
        "vocab": corpus.vocab,
        "target": train_export(texts, corpus.vocab, TARGET_ORDER, MIN_COUNT),
        "draft": train_export(texts, corpus.vocab, DRAFT_ORDER, MIN_COUNT),
    }


def load_models(models: dict) -> tuple[Model, Model]:
    """(target, draft) as the page computes them: from the export alone."""
    return Model(models["target"], models["vocab"]), Model(models["draft"], models["vocab"])


def held_out_bits(target: Model, draft: Model, corpus: Corpus) -> dict:
    by_kind = {}
    for kind in KINDS:
        text = corpus.held_out[kind]
        by_kind[kind] = {
            "chars": len(text),
            "target": target.bits_per_char(text),
            "draft": draft.bits_per_char(text),
        }
    total = sum(v["chars"] for v in by_kind.values())
    overall = {
        name: sum(v[name] * v["chars"] for v in by_kind.values()) / total for name in ("target", "draft")
    }
    return {"overall": overall, "by_kind": by_kind}


def measurement_contexts(text: str, vocab: str, width: int, rounds: int, rng: np.random.Generator) -> np.ndarray:
    """The width characters before each of `rounds` random held-out positions, as round prompts."""
    codes = encode(text, vocab)
    ends = rng.integers(width, len(codes), size=rounds)
    return np.stack([codes[e - width:e] for e in ends])


def measure(target: Model, draft: Model, corpus: Corpus, seed: int, rounds: int,
            draft_step: float, verify_step: float, temperature: float = 1.0) -> dict:
    """Acceptance, characters per round and speedup for K = 1..MAX_K, each K from fresh rounds."""
    width = max(target.order, draft.order) - 1
    out = {}
    for kind_index, kind in enumerate(KINDS):
        rng = np.random.default_rng([seed, kind_index])
        contexts = measurement_contexts(corpus.held_out[kind], corpus.vocab, width, rounds, rng)
        per_k = []
        for k in range(1, MAX_K + 1):
            batch = simulate(target, draft, contexts, k, temperature, np.random.default_rng([seed, kind_index, k]))
            verified = batch.reached.sum(axis=0)
            kept = (batch.accepted & batch.reached).sum(axis=0)
            chars = float(batch.committed.mean())
            cost = k * draft_step + verify_step
            per_k.append({
                "k": k,
                "rounds": int(len(batch.committed)),
                "acceptance_by_position": [float(a / v) if v else None for a, v in zip(kept, verified)],
                "verified_by_position": [int(v) for v in verified],
                "acceptance": float(kept.sum() / verified.sum()),
                "chars_per_round": chars,
                "round_cost": cost,
                "speedup": chars / cost,
            })
        best = max(per_k, key=lambda m: m["speedup"])
        out[kind] = {"per_k": per_k, "best_k": best["k"], "best_speedup": best["speedup"]}
    return out


def example_prompts(corpus: Corpus) -> dict:
    """Openings of held-out paragraphs and of held-out function definitions."""
    prose = []
    for paragraph in corpus.held_out[PROSE].split("\n\n"):
        words = paragraph.split()
        if len(words) >= 12:
            prose.append(" ".join(words[:6]) + " ")
        if len(prose) == 3:
            break
    code = []
    lines = corpus.held_out[CODE].splitlines()
    for i, line in enumerate(lines):
        if line.startswith("def ") and i + 1 < len(lines):
            body = lines[i + 1]
            indent = body[:len(body) - len(body.lstrip())]
            code.append(line + "\n" + indent)
        if len(code) == 3:
            break
    return {PROSE: prose, CODE: code}


def build_playground(corpus_dir: Path, seed: int, rounds: int = 2000,
                     draft_step=0.1, verify_step=1.0) -> dict:
    """Everything the page and its static tables need, as plain JSON-ready data.

    draft_step and verify_step are the cost model (floats, Fractions or "1/10" strings), passed in
    so the site can hand over the one in data/profiles.v1.json.
    """
    if rounds < 1:
        raise ValueError("rounds must be positive")
    corpus = load_corpus(Path(corpus_dir))
    models = json.loads(json.dumps(export_models(corpus)))
    target, draft = load_models(models)
    ds, vs = _number(draft_step), _number(verify_step)
    bits = held_out_bits(target, draft, corpus)
    measurements = measure(target, draft, corpus, seed, rounds, ds, vs)
    return {
        "models": models,
        "bits_per_char": bits["overall"],
        "bits_per_char_by_kind": bits["by_kind"],
        "orders": {"target": TARGET_ORDER, "draft": DRAFT_ORDER},
        "context_chars": {"target": TARGET_ORDER - 1, "draft": DRAFT_ORDER - 1},
        "cost_model": {"draft_step": ds, "verify_step": vs},
        "temperature": 1.0,
        "seed": seed,
        "measurements": measurements,
        "comparison": compare_kinds(measurements),
        "prompts": example_prompts(corpus),
        "export_bytes": len(json.dumps(models, separators=(",", ":"))),
    }


def compare_kinds(measurements: dict) -> dict:
    """Which kind of text the draft gets through more often, pooled over every K: the seed's claim, tested."""
    pooled = {}
    for kind, m in measurements.items():
        kept = sum(a * n for row in m["per_k"] for a, n in zip(row["acceptance_by_position"], row["verified_by_position"])
                   if a is not None)
        tried = sum(n for row in m["per_k"] for n in row["verified_by_position"])
        pooled[kind] = kept / tried
    higher = max(pooled, key=pooled.get)
    lower = min(pooled, key=pooled.get)
    return {"acceptance": pooled, "higher": higher, "lower": lower, "gap": pooled[higher] - pooled[lower]}


# --- parity vectors ---------------------------------------------------------------------------

PARITY_TEMPERATURES = (1.0, 0.0, 0.7, 1.6)
PARITY_KS = (1, 3, 5, 8)


def parity_vectors(models: dict, seed: int, contexts: list[str] | None = None) -> dict:
    """Rounds the JavaScript must replay exactly: same rows, same uniforms, same verdicts and text."""
    target, draft = load_models(models)
    if contexts is None:
        contexts = ["The tide comes ", "It was a ", "    def __init__(self", "for i in range(", "", "qz"]
    rng = np.random.default_rng(seed)
    cases = []
    for c_index, context in enumerate(contexts):
        for temperature in PARITY_TEMPERATURES:
            k = PARITY_KS[(c_index + len(cases)) % len(PARITY_KS)]
            result = speculative_round(target, draft, context, k, temperature, rng.random)
            cases.append({
                "context": context,
                "k": k,
                "temperature": temperature,
                "uniforms": result.draws,
                "draft_rows": result.draft_rows,
                "target_rows": result.target_rows,
                "proposals": result.proposals,
                "verdicts": result.verdicts,
                "accept_draws": result.accept_draws,
                "replacement": result.replacement,
                "bonus": result.bonus,
                "committed": result.committed,
            })
    draws = rng.random(50).tolist()
    row = target.row("the ").tolist()
    return {
        "seed": seed,
        "models": models,
        "cases": cases,
        "draw_checks": [{"row_context": "the ", "u": u, "index": draw(row, u)} for u in draws],
    }


def write_parity_vectors(models: dict, seed: int, path: Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(parity_vectors(models, seed), separators=(",", ":")), encoding="utf-8")
    return path


__all__ = [
    "build_playground", "export_models", "load_models", "parity_vectors", "write_parity_vectors",
    "TARGET_ORDER", "DRAFT_ORDER", "MIN_COUNT", "MAX_K",
]
