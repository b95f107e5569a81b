"""The convergence checks: simulated rounds counted per position and compared with the exact law.

Each case gets its own seeded Generator; chi-square tests and total-variation curves say how close
the sampler's output is to the target distribution after how many samples.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import exp, lgamma, log, nan

import numpy as np

from .analysis import acceptance_rates, random_rational_row
from .engine import Row
from .montecarlo import ReplacementRule, residual_rows, simulate


@dataclass(frozen=True)
class PositionCheck:
    position: int  # 1-based; k + 1 is the bonus position
    samples: int
    counts: tuple[int, ...]
    frequencies: tuple[float, ...]
    total_variation: float
    chi_square: float
    degrees_of_freedom: int
    p_value: float
    error_curve: tuple[tuple[int, float], ...]  # (samples so far, total variation)


def chi_square_p_value(statistic: float, dof: int) -> float:
    """Upper tail of the chi-square distribution, via the regularised incomplete gamma function."""
    if dof <= 0:
        return 1.0
    return _gamma_q(dof / 2.0, statistic / 2.0)


def _gamma_q(a: float, x: float) -> float:
    if x <= 0:
        return 1.0
    if x < a + 1:  # series for P, then Q = 1 - P
        term = total = 1.0 / a
        n = a
        for _ in range(10_000):
            n += 1
            term *= x / n
            total += term
            if abs(term) < abs(total) * 1e-15:
                break
        return max(0.0, 1.0 - total * exp(-x + a * log(x) - lgamma(a)))
    b = x + 1 - a  # continued fraction for Q (Lentz)
    c, d = 1e300, 1.0 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = 1e-300 if abs(d) < 1e-300 else d
        c = b + an / c
        c = 1e-300 if abs(c) < 1e-300 else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-15:
            break
    return min(1.0, exp(-x + a * log(x) - lgamma(a)) * h)


def error_checkpoints(samples: int) -> list[int]:
    points, n = [], 100
    while n < samples:
        points.extend(p for p in (n, 3 * n) if p < samples)
        n *= 10
    points.append(samples)
    return points


def check_from_counts(
    position: int, points: Sequence[int], prefix: Sequence[Sequence[int]], expected: Sequence[Fraction]
) -> PositionCheck:
    """The check from prefix[j][x], token x's count among the first points[j] samples (points: error_checkpoints(n)).

    In plain Python: a handful of tokens and checkpoints cost less this way than as numpy arrays.
    """
    p = [float(x) for x in expected]
    n = int(points[-1])
    counts = [int(c) for c in prefix[-1][: len(p)]]
    dof = sum(1 for q in p if q > 0) - 1
    if n == 0:  # no round reached this position: nothing to compare, every statistic is undefined
        return PositionCheck(position, 0, tuple(counts), (nan,) * len(p), nan, nan, dof, 1.0, ((0, nan),))
    freq = [c / n for c in counts]
    stray = sum(c for c, q in zip(counts, p) if q == 0)
    chi = sum((c - n * q) ** 2 / (n * q) for c, q in zip(counts, p) if q > 0)
    pval = 0.0 if stray else chi_square_p_value(chi, dof)
    curve = tuple((int(m), 0.5 * sum(abs(c / m - q) for c, q in zip(row, p))) for m, row in zip(points, prefix))
    # the total variation of all n samples is the curve's last point
    return PositionCheck(position, n, tuple(counts), tuple(freq), curve[-1][1], chi, dof, pval, curve)


def position_counts(tokens: np.ndarray, vocab: int) -> tuple[list[int], list[list[int]]]:
    """One position's checkpoints (error_checkpoints of its samples) and each token's count among the first m."""
    points = error_checkpoints(len(tokens))
    stretches = [np.bincount(tokens[a:b], minlength=vocab) for a, b in zip([0, *points], points)]
    return points, np.cumsum(stretches, axis=0).tolist()


def convergence(
    target_rows: Sequence[Row],
    draft_rows: Sequence[Row],
    rounds: int,
    rng: np.random.Generator,
    replacement_rule: ReplacementRule = residual_rows,
) -> tuple[PositionCheck, ...]:
    """Per position, the committed token's histogram among rounds that reached it, against the target."""
    batch = simulate(target_rows, draft_rows, rounds, rng, replacement_rule)
    vocab = len(target_rows[0])
    counts = [position_counts(tokens[reached], vocab) for tokens, reached in zip(batch.tokens, batch.reached)]
    return tuple(check_from_counts(i + 1, points, prefix, target_rows[i]) for i, (points, prefix) in enumerate(counts))


def random_profile(
    rng: np.random.Generator, vocab: int, k: int, agreement: Fraction, denominator: int = 64
) -> tuple[tuple[Row, ...], tuple[Row, ...]]:
    """A random target and a draft that mixes it with noise: agreement 1 copies the target, 0 ignores it."""
    target = tuple(random_rational_row(rng, vocab, denominator) for _ in range(k + 1))
    drafts = []
    for i in range(k):
        noise = random_rational_row(rng, vocab, denominator)
        row = tuple(agreement * t + (1 - agreement) * q for t, q in zip(target[i], noise))
        if all(p == 0 for p in row):
            row = noise
        drafts.append(row)
    return target, tuple(drafts)


# --- the convergence suite --------------------------------------------------------------------


@dataclass(frozen=True)
class ConvergenceCase:
    id: str
    label: str
    accept_rates: tuple[Fraction, ...]
    checks: tuple[PositionCheck, ...]

    @property
    def worst_p_value(self) -> float:
        return min(c.p_value for c in self.checks)

    @property
    def worst_total_variation(self) -> float:
        return max(c.total_variation for c in self.checks)

    def failed(self, threshold: float) -> int:
        """How many positions reject "committed tokens follow the target" at this p-value threshold."""
        return sum(1 for c in self.checks if c.p_value <= threshold)


def random_cases(seed: int, count: int, vocab: int, k: int) -> list[tuple[str, str, tuple[Row, ...], tuple[Row, ...]]]:
    """count random (target, draft) profiles whose agreement runs evenly from none to complete."""
    rng = np.random.default_rng(seed)
    cases = []
    for i in range(count):
        agreement = Fraction(i, max(count - 1, 1))
        target, drafts = random_profile(rng, vocab, k, agreement)
        cases.append(
            (
                f"random-{i + 1:02d}",
                f"random profile {i + 1} (draft mixes in {agreement} of the target)",
                target,
                drafts,
            )
        )
    return cases


def convergence_suite(
    cases: Sequence[tuple[str, str, Sequence[Row], Sequence[Row]]],
    rounds: int,
    seed: int,
    replacement_rule: ReplacementRule = residual_rows,
    first: int = 0,
) -> tuple[ConvergenceCase, ...]:
    """Every case gets its own child Generator, so adding a case never changes another's draws.

    Case j draws from the seed's child number first + j, so a suite split in two parts (the second
    with first = the length of the first) draws exactly what the whole suite would."""
    children = np.random.default_rng(seed).spawn(first + len(cases))[first:]
    return tuple(
        ConvergenceCase(
            case_id, label, acceptance_rates(target, drafts), convergence(target, drafts, rounds, rng, replacement_rule)
        )
        for (case_id, label, target, drafts), rng in zip(cases, children)
    )
