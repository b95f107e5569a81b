"""What the playground computes, as frozen dataclasses: a kind's pair trained and measured, priced, and the whole.

The flow: build.build_kind trains one kind's pair and counts its rounds (a TrainedPair, what the cache keeps: no
cost model in it); measure.price and measure.prediction turn the counts into speedups under a cost model (a
PricedPair); build.assemble puts the kinds together (a Playground). Exact quantities are Fractions and ints;
standard errors and bits per character are floats. The pages read these records as they are; what a script or
build/numbers.json gets is made from them by page.py, each record's fields becoming an object's keys in the
order they are declared here (`plain`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from types import MappingProxyType
from typing import Any


@dataclass(frozen=True)
class Orders:
    """A pair's context lengths: orders are context length + 1, chosen on held-out text (data/corpus/README.md)."""

    target: int
    draft: int
    min_count: int


@dataclass(frozen=True)
class Digests:
    """Each model's count digest (ngram.count_digest), which the page's own training must reach."""

    target: str
    draft: str


@dataclass(frozen=True)
class ContextChars:
    """How many characters before the next one each model sees."""

    target: int
    draft: int


@dataclass(frozen=True)
class HeldOutBits:
    """Each model's cross-entropy on the held-out text, in bits per character, over `chars` characters."""

    chars: int
    target: float
    draft: float


@dataclass(frozen=True)
class CorpusChars:
    train: int
    held_out: int


# --- rounds, counted and priced -----------------------------------------------------------------


@dataclass(frozen=True)
class MeasuredK:
    """One draft length K's rounds, counted: what no cost model changes."""

    k: int
    rounds: int
    verified_by_position: tuple[int, ...]  # rounds that checked the i-th proposal
    accepted_by_position: tuple[int, ...]  # and kept it
    committed: int  # characters committed over all the rounds
    # the standard error of the characters per round: rounds are independent draws (fresh contexts, uniforms)
    chars_per_round_se: float


@dataclass(frozen=True)
class PricedK(MeasuredK):
    """A K's counts with their rates and, under a cost model, the round's cost and the speedup."""

    acceptance: Fraction  # accepted / checked
    acceptance_by_position: tuple[Fraction | None, ...]  # None where no round reached the position
    chars_per_round: Fraction
    round_cost: Fraction  # K draft steps and one verification step, as the fractions they stand for
    speedup: Fraction  # characters per round over the round's cost
    speedup_se: float


@dataclass(frozen=True)
class Measurements:
    """Every K's priced rounds and the best K; tied_ks: the Ks within TIE_ERRORS standard errors of the best."""

    per_k: tuple[PricedK, ...]
    best_k: int
    best_speedup: Fraction
    best_speedup_se: float
    tied_ks: tuple[int, ...]


@dataclass(frozen=True)
class Prediction:
    """Leviathan et al.'s closed form fed the measured K = 1 acceptance rate (measure.prediction)."""

    alpha: Fraction
    best_k: int
    speedup_by_k: tuple[Fraction, ...]
    speedup_at_row_rate: tuple[Fraction, ...]  # each K's closed form at that K's own measured rate
    best_speedup: Fraction
    at_measured_best_k: Fraction
    gap: Fraction  # measured minus predicted, at the measured best K
    relative_gap: Fraction  # predicted minus measured, over measured: negative when the closed form predicts less


# --- token-wise against block verification ------------------------------------------------------


@dataclass(frozen=True)
class BlockCounts:
    """One temperature's rounds checked token-wise and as a block (block.compare): counts only."""

    temperature: float
    k: int
    rounds: int
    token_total: int
    token_squares: int
    block_total: int
    block_squares: int
    difference_squares: int
    same_rounds: int


@dataclass(frozen=True)
class BlockRow(BlockCounts):
    """The counts with their means (exact) and standard errors (floats): a row of the page's block table."""

    token_mean: Fraction
    block_mean: Fraction
    token_se: float
    block_se: float
    gain: Fraction
    gain_se: float
    identical: bool


# --- a pair and the whole -----------------------------------------------------------------------


@dataclass(frozen=True)
class TrainedPair:
    """One kind's pair, trained and its rounds counted: what the site build caches per kind."""

    block: tuple[BlockCounts, ...]
    models_json: str  # the export, as assets/playground-models-KIND.js holds it
    digests: Digests
    bits_per_char: HeldOutBits
    orders: Orders
    context_chars: ContextChars
    measured: tuple[MeasuredK, ...]  # K = 1 .. max_k
    prompts: tuple[str, ...]  # example prompts from the held-out text
    export_bytes: int
    corpus_chars: CorpusChars
    vocab_size: int


@dataclass(frozen=True)
class PricedPair:
    """A TrainedPair under a cost model: its rounds priced, the closed form's prediction, the block table's rows."""

    block: tuple[BlockCounts, ...]
    models_json: str
    digests: Digests
    bits_per_char: HeldOutBits
    orders: Orders
    context_chars: ContextChars
    measurements: Measurements
    prediction: Prediction
    prompts: tuple[str, ...]
    export_bytes: int
    corpus_chars: CorpusChars
    vocab_size: int
    block_rows: tuple[BlockRow, ...]


@dataclass(frozen=True)
class Comparison:
    """Which kind of text the draft gets through more often, pooled over every K (measure.compare_kinds)."""

    acceptance: Mapping[str, Fraction]  # per kind: accepted over checked, all rounds of every K
    higher: str
    lower: str
    gap: Fraction  # the two rates as the page prints them (tenths of a percent), subtracted, in points
    higher_at_every_k: bool
    rounds: int  # per kind, over every K


@dataclass(frozen=True)
class StepCosts:
    """The cost model the rounds are priced under, as floats (the page's script reads these)."""

    draft_step: float
    verify_step: float


@dataclass(frozen=True)
class ExactStepCosts:
    """The same cost model, each step as the exact "n/d" it stands for (measure.step_fraction)."""

    draft_step: str
    verify_step: str


@dataclass(frozen=True)
class Playground:
    """Both kinds' pairs, priced under one cost model; the site build adds the corpora, their licences and how
    many characters a press of Generate writes."""

    kinds: tuple[str, ...]
    max_k: int
    pairs: Mapping[str, PricedPair]  # in the order of kinds
    cost_model: StepCosts
    cost_model_exact: ExactStepCosts
    temperature: float
    seed: int
    comparison: Comparison
    generate_chars: int | None = None
    corpora: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))  # per kind, as published
    licences: Mapping[str, str | None] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def kept_by_temperature(self) -> str:
        """How the proposals kept per round one at a time move from each temperature of the block rows to the next,
        over every pair: "rises", "falls", "both" or "flat"."""
        steps = [
            b.token_mean - a.token_mean for p in self.pairs.values() for a, b in zip(p.block_rows, p.block_rows[1:])
        ]
        up, down = any(s > 0 for s in steps), any(s < 0 for s in steps)
        return "both" if up and down else "rises" if up else "falls" if down else "flat"

    @property
    def later_positions_beat_the_first(self) -> bool:
        """Whether, in every measured row of every pair, each later position's acceptance rate is above the first's
        (what a closed form fed the first position's rate alone leaves out)."""
        return all(
            all(a is None or a > row.acceptance_by_position[0] for a in row.acceptance_by_position[1:])
            for p in self.pairs.values()
            for row in p.measurements.per_k
        )


def fields_of(record: Any, cls: type | None = None) -> dict[str, Any]:
    """A record's fields by name (those of `cls`, a dataclass it derives from, when given), without copying."""
    return {f.name: getattr(record, f.name) for f in dataclasses.fields(cls or record)}


def plain(value: Any) -> Any:
    """value as JSON can carry it: a record as an object of its fields in their declared order, a mapping as an
    object, a tuple as a list, an exact Fraction as the float nearest it (the pages print from the Fractions
    themselves; a script only reads these, never prints them)."""
    if isinstance(value, Fraction):
        return float(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {name: plain(v) for name, v in fields_of(value).items()}
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value
