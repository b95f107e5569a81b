"""What the site publishes of the playground, made from its records: the page's inline data, the playground's part
of build/numbers.json, and the scripts that carry each pair's models and corpus.

The page's templates read the Playground record itself (exact Fractions, which they round); scripts get
`page_data`, where every Fraction is the float nearest it (records.plain).
"""

from __future__ import annotations

import json

from .records import Playground, plain

PAGE_LEAVES_OUT = ("corpora", "licences")  # the corpora load from their own files, on demand
PAIR_LEAVES_OUT = ("models_json",)  # and the models from theirs


def page_data(data: Playground) -> dict:
    """The page's inline JSON (its script's data): no models, no corpora, no licences."""
    shown = {name: value for name, value in plain(data).items() if name not in PAGE_LEAVES_OUT}
    shown["pairs"] = {
        kind: {name: value for name, value in pair.items() if name not in PAIR_LEAVES_OUT}
        for kind, pair in shown["pairs"].items()
    }
    return shown


def numbers(data: Playground) -> dict:
    """The playground's part of build/numbers.json: held-out bits per character and measured acceptance."""
    out = {}
    for kind, p in data.pairs.items():
        m = p.measurements
        out[kind] = {
            "orders": p.orders,
            "bits_per_char": {"target": p.bits_per_char.target, "draft": p.bits_per_char.draft},
            "acceptance_k1": m.per_k[0].acceptance,
            "pooled_acceptance": data.comparison.acceptance[kind],
            "best_k": m.best_k,
            "best_speedup": m.best_speedup,
            "best_speedup_se": m.best_speedup_se,
            "tied_ks": m.tied_ks,
            "predicted_best_k": p.prediction.best_k,
            "predicted_speedup_at_best_k": p.prediction.at_measured_best_k,
            "digests": p.digests,
        }
    return plain(out)


def models_script(data: Playground, kind: str) -> str:
    """assets/playground-models-KIND.js: one exported pair, for a plain <script src> that also works from file://."""
    pair = data.pairs[kind].models_json
    return f"(window.PlaygroundModels = window.PlaygroundModels || {{}}).{kind} = {pair};\n"


def corpus_script(text: str, kind: str) -> str:
    """assets/corpus/KIND.js: the corpus as published for training in the browser, loaded only on demand."""
    quoted = json.dumps(text, ensure_ascii=True)
    return f"(window.PlaygroundCorpora = window.PlaygroundCorpora || {{}}).{kind} = {quoted};\n"
