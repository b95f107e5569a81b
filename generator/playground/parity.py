"""Vectors that pin the page's JavaScript (playground-core.js) to Python: rounds it must replay exactly, draws,
the noise a histogram check expects, greedy runs and their loops, and each corpus with the export Python trained
from it, so node retrains every pair and must reach the same counts. tests/test_playground_parity.py writes them
and tests/js/playground.test.mjs reads them.

They stay plain dicts and lists: a wire format written for JavaScript, read by key there, that Python never
reads back; each case's fields are those of a sampler.RoundResult, in its order.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from types import MappingProxyType

import numpy as np

from ..model.engine import draw
from .build import export_pair, held_out_bits, load_pair, pair_digests
from .ngram import CODE, PROSE, make_corpus
from .records import Orders
from .sampler import (
    apply_temperature,
    expected_tvd,
    first_chars_exact,
    greedy_loop_start,
    greedy_run,
    speculative_round,
)

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
        "digests": asdict(pair_digests(pair)),
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
                "bits_per_char": asdict(held_out_bits(*load_pair(pair), corpus)),
            }
        )
    return bundle
