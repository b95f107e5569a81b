"""Acceptance measured on held-out text, priced under a cost model, and set beside Leviathan et al.'s closed form.

`measure` counts: for K = 1..max_k, fresh rounds from held-out contexts, at temperature 1. Everything after
it is arithmetic on those counts: `price` (each K's speedup and the best K, under a cost model: the only part
that depends on it, so another cost model needs no model trained and no round run again), `prediction` (the
closed form fed the measured rate) and `compare_kinds` (prose against code). Every rate and mean is the exact
ratio of the integer counts it comes from (a Fraction), so a page rounds 617/400 as 1.543, never the double
1.5424999... as 1.542; only standard errors are floats.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from types import MappingProxyType

import numpy as np

from ..model.analysis import best_draft_length, leviathan_speedup
from ..render.decimals import rounded  # the pages' one rounding rule
from .ngram import KINDS, Corpus, Model
from .records import (
    Comparison,
    ExactStepCosts,
    MeasuredK,
    Measurements,
    Prediction,
    PricedK,
    StepCosts,
    fields_of,
)
from .rounds import measurement_contexts, simulate_tempered, tempered

MAX_K = 8  # the default; the site's own comes from site.yaml playground.max_k
TIE_ERRORS = 2  # two speedups closer than this many standard errors of their difference are called a tie


def measure(
    target: Model, draft: Model, corpus: Corpus, seed: int, rounds: int, max_k: int = MAX_K
) -> tuple[MeasuredK, ...]:
    """Each K's rounds for K = 1..max_k, counted, each K from fresh rounds, at temperature 1 (rows renormalised
    as the page renormalises them)."""
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
            MeasuredK(
                k=k,
                rounds=int(batch.committed.size),
                verified_by_position=tuple(int(v) for v in verified),
                accepted_by_position=tuple(int(a) for a in kept),
                committed=int(batch.committed.sum()),
                chars_per_round_se=float(batch.committed.std(ddof=1) / np.sqrt(batch.committed.size)),
            )
        )
    return tuple(per_k)


def number(x) -> float:
    """A cost model's step as a float: from a float, a Fraction or an "n/d" string."""
    return float(Fraction(x)) if isinstance(x, str) else float(x)


def step_fraction(x) -> Fraction:
    """A cost model's step as the exact fraction it stands for: 0.1 is 1/10, not the double nearest it."""
    return Fraction(x).limit_denominator(10**6)


def step_costs(draft_step, verify_step) -> StepCosts:
    return StepCosts(number(draft_step), number(verify_step))


def exact_cost(draft_step, verify_step) -> ExactStepCosts:
    """The cost model as the page's script reads it to print exact ratios: each step as an "n/d" string."""
    ds, vs = (step_fraction(number(x)) for x in (draft_step, verify_step))
    return ExactStepCosts(f"{ds.numerator}/{ds.denominator}", f"{vs.numerator}/{vs.denominator}")


def row_rate(row: MeasuredK) -> Fraction:
    """A K's measured acceptance rate as the exact ratio of its counts: accepted over checked."""
    return Fraction(sum(row.accepted_by_position), sum(row.verified_by_position))


def price(measured: Sequence[MeasuredK], draft_step, verify_step) -> Measurements:
    """Each K's round cost and speedup, and the best K, under a cost model (floats, Fractions or "n/d" strings).
    `measured` may be priced rows already: only their counts are read."""
    per_k = []
    for row in measured:
        cost = row.k * step_fraction(number(draft_step)) + step_fraction(number(verify_step))
        checked, kept = row.verified_by_position, row.accepted_by_position
        chars_per_round = Fraction(row.committed, row.rounds)
        per_k.append(
            PricedK(
                **fields_of(row, MeasuredK),
                acceptance=row_rate(row),
                acceptance_by_position=tuple(Fraction(a, v) if v else None for a, v in zip(kept, checked)),
                chars_per_round=chars_per_round,
                round_cost=cost,
                speedup=chars_per_round / cost,
                speedup_se=row.chars_per_round_se / float(cost),
            )
        )
    best = max(per_k, key=lambda m: m.speedup)
    # tied with the best (itself included): within TIE_ERRORS standard errors of the difference, which is
    # sqrt(se_a^2 + se_b^2) as each K runs its own rounds
    tied = tuple(
        row.k
        for row in per_k
        if best.speedup - row.speedup < TIE_ERRORS * (row.speedup_se**2 + best.speedup_se**2) ** 0.5
    )
    return Measurements(tuple(per_k), best.k, best.speedup, best.speedup_se, tied)


def prediction(measured: Measurements, draft_step, verify_step) -> Prediction:  # K = 1 .. as many as measured
    """Leviathan et al.'s closed form fed the measured acceptance rate: its best K and speedups.

    The rate is the pooled acceptance of the K = 1 rounds (every round verifies exactly one
    proposal there, so it is the plain per-proposal rate the closed form assumes), as a Fraction
    of counts so the closed form runs exactly; c is the draft step over the verification pass.
    """
    alpha = row_rate(measured.per_k[0])
    c = step_fraction(number(draft_step)) / step_fraction(number(verify_step))
    max_k = len(measured.per_k)
    best_k = best_draft_length(alpha, c, max_k)
    per_k = tuple(leviathan_speedup(alpha, k, c) for k in range(1, max_k + 1))
    # each K's closed form again, fed that K's own measured rate (the per-K table's last column)
    at_row_rate = tuple(leviathan_speedup(row_rate(row), row.k, c) for row in measured.per_k)
    measured_best = measured.best_speedup
    predicted_at_measured_best = per_k[measured.best_k - 1]
    return Prediction(
        alpha=alpha,
        best_k=best_k,
        speedup_by_k=per_k,
        speedup_at_row_rate=at_row_rate,
        best_speedup=per_k[best_k - 1],
        at_measured_best_k=predicted_at_measured_best,
        gap=measured_best - predicted_at_measured_best,
        relative_gap=(predicted_at_measured_best - measured_best) / measured_best,
    )


def compare_kinds(measured: Mapping[str, Sequence[MeasuredK]]) -> Comparison:
    """Which kind of text the draft gets through more often, pooled over every K: the seed's claim, tested."""
    pooled = {}
    for kind, per_k in measured.items():
        kept = sum(a for row in per_k for a in row.accepted_by_position)
        tried = sum(n for row in per_k for n in row.verified_by_position)
        pooled[kind] = Fraction(kept, tried)
    higher = max(pooled, key=pooled.__getitem__)
    lower = min(pooled, key=pooled.__getitem__)
    every_k = all(row_rate(h) > row_rate(lo) for h, lo in zip(measured[higher], measured[lower]))
    # The page prints both rates to a tenth of a percent; the gap is their difference as printed, in percentage
    # points, so a reader who subtracts the two figures shown gets the gap shown.
    shown = {kind: rounded(rate * 100, 1) for kind, rate in pooled.items()}  # tenths of a percent
    gap = Fraction(shown[higher] - shown[lower], 1000)
    rounds = sum(row.rounds for row in next(iter(measured.values())))
    return Comparison(MappingProxyType(pooled), higher, lower, gap, every_k, rounds)
