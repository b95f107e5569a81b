"""The playground's two model pairs (prose and code), what they measure, and the vectors that pin the JS.

The modules, by subject:
- ngram.py: character n-gram models, trained into an export the page loads; corpus.py: reading a corpus;
- sampler.py: one round at a time, as the page runs it; rounds.py: many rounds at once, on held-out contexts;
- block.py: token-wise against block verification on the same rounds;
- measure.py: acceptance counted per K, priced under a cost model, the closed form's prediction, prose against code;
- build.py: each kind's pair trained and measured (build_kind, what the site build caches), and the whole assembled;
- records.py: the frozen dataclasses all of that is held in;
- page.py: what the page, its scripts and build/numbers.json get; parity.py: the vectors for the JS tests.

This module only names what the rest of the generator and the tests use.
"""

from .build import (
    EXPORT_VERSION,
    assemble,
    build_kind,
    build_playground,
    example_prompts,
    export_pair,
    held_out_bits,
    load_pair,
    repriced,
)
from .measure import MAX_K, TIE_ERRORS, compare_kinds, exact_cost, measure, prediction, price, row_rate, step_fraction
from .page import corpus_script, models_script, numbers, page_data
from .parity import PARITY_CONTEXTS, astral_text, parity_bundle, parity_vectors
from .records import (
    Comparison,
    MeasuredK,
    Measurements,
    Orders,
    Playground,
    Prediction,
    PricedK,
    PricedPair,
    TrainedPair,
    plain,
)
from .rounds import TableRows, measurement_contexts, simulate, simulate_tempered, tempered

__all__ = [
    "EXPORT_VERSION",
    "MAX_K",
    "PARITY_CONTEXTS",
    "TIE_ERRORS",
    "Comparison",
    "MeasuredK",
    "Measurements",
    "Orders",
    "Playground",
    "Prediction",
    "PricedK",
    "PricedPair",
    "TableRows",
    "TrainedPair",
    "assemble",
    "astral_text",
    "build_kind",
    "build_playground",
    "compare_kinds",
    "corpus_script",
    "exact_cost",
    "example_prompts",
    "export_pair",
    "held_out_bits",
    "load_pair",
    "measure",
    "measurement_contexts",
    "models_script",
    "numbers",
    "page_data",
    "parity_bundle",
    "parity_vectors",
    "plain",
    "prediction",
    "price",
    "repriced",
    "row_rate",
    "simulate",
    "simulate_tempered",
    "step_fraction",
    "tempered",
]
