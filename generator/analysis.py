"""Exact numbers a reader sees, and the Monte Carlo checks that the sampler really delivers them.

Acceptance rates, the round-length distribution, expectations and speedups are Fractions. Only
the Monte Carlo section uses floats, because it simulates; it is vectorised with numpy so that a
hundred thousand rounds of a profile take milliseconds, and it takes a seeded Generator.
"""
from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from fractions import Fraction
from math import exp, lgamma, log

import numpy as np

from .engine import Row, excess, overlap, run_round

# --- exact -----------------------------------------------------------------------------------


def acceptance_rate(target: Sequence[Fraction], draft: Sequence[Fraction]) -> Fraction:
    """alpha = sum_x min(p_target, p_draft): the accept probability averaged over what the draft proposes."""
    return sum(overlap(target, draft), Fraction(0))


def acceptance_rates(target_rows: Sequence[Row], draft_rows: Sequence[Row]) -> tuple[Fraction, ...]:
    return tuple(acceptance_rate(t, d) for t, d in zip(target_rows, draft_rows))


def round_length_distribution(alphas: Sequence[Fraction]) -> tuple[Fraction, ...]:
    """P(N = n) for n = 1 .. k + 1, N the tokens committed in a round, bonus included.

    N = n <= k means n - 1 acceptances then a rejection (whose replacement is the n-th token);
    N = k + 1 means every proposal was accepted and the bonus was drawn.
    """
    probs = []
    reach = Fraction(1)
    for a in alphas:
        probs.append(reach * (1 - a))
        reach *= a
    probs.append(reach)
    return tuple(probs)


def expected_tokens_from_distribution(dist: Sequence[Fraction]) -> Fraction:
    return sum((n * p for n, p in enumerate(dist, start=1)), Fraction(0))


def expected_tokens_from_partial_products(alphas: Sequence[Fraction]) -> Fraction:
    """1 + alpha_1 + alpha_1 alpha_2 + ...: each term is the chance the round reaches one more token."""
    total, reach = Fraction(1), Fraction(1)
    for a in alphas:
        reach *= a
        total += reach
    return total


def round_cost(k: int, draft_step: Fraction, verify_step: Fraction) -> Fraction:
    """k draft steps plus one verification pass, in units of one ordinary target step."""
    return k * Fraction(draft_step) + Fraction(verify_step)


def speedup(expected: Fraction, k: int, draft_step: Fraction, verify_step: Fraction) -> Fraction:
    """Tokens per unit of cost, against plain decoding at one token per target step."""
    return Fraction(expected) / round_cost(k, draft_step, verify_step)


def leviathan_speedup(alpha: Fraction, gamma: int, c: Fraction) -> Fraction:
    """(1 - a^(g+1)) / ((1 - a)(g c + 1)), Leviathan et al. (2023) for i.i.d. acceptance a."""
    alpha, c = Fraction(alpha), Fraction(c)
    if alpha == 1:
        return Fraction(gamma + 1) / (gamma * c + 1)
    return (1 - alpha ** (gamma + 1)) / ((1 - alpha) * (gamma * c + 1))


def best_draft_length(alpha: Fraction, c: Fraction, max_k: int = 32) -> int:
    """The K in 1..max_k with the largest closed-form speedup (smallest K on ties)."""
    return max(range(1, max_k + 1), key=lambda g: (leviathan_speedup(alpha, g, c), -g))


def identity_holds(target: Sequence, draft: Sequence, excess_fn=excess) -> bool:
    """min(p, q) + max(0, p - q) == p for every token, exactly; excess_fn lets a test plant a wrong residual.

    The rows may be Fractions or integer numerators over one common denominator: scaling both rows by
    the same positive number scales all three terms alike, so the identity holds for one iff for the other.
    """
    return all(m + e == t for m, e, t in zip(overlap(target, draft), excess_fn(target, draft), target))


def random_numerators(rng: np.random.Generator, size: int, denominator: int) -> tuple[int, ...]:
    """The numerators (over `denominator`) of a random distribution: sorted cut points, zeros allowed."""
    cuts = sorted(rng.integers(0, denominator + 1, size=size - 1).tolist())
    return tuple(b - a for a, b in zip([0, *cuts], [*cuts, denominator]))


def random_rational_row(rng: np.random.Generator, size: int, denominator: int) -> Row:
    """A random distribution whose entries are multiples of 1/denominator (zeros allowed)."""
    return tuple(Fraction(c, denominator) for c in random_numerators(rng, size, denominator))


def over_common_denominator(target: Sequence[Fraction], draft: Sequence[Fraction]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Both rows as integer numerators over the least common denominator of their entries."""
    d = math.lcm(*(Fraction(x).denominator for x in (*target, *draft)))
    return (tuple(int(x * d) for x in target), tuple(int(x * d) for x in draft))


def random_identity_pairs(rng: np.random.Generator, count: int) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """count random (target, draft) pairs of 2 to 8 tokens, each row a multiple of 1/d for its own d in 1..99,
    as integer numerators over the pair's common denominator. The draws are those of
    random_rational_row called for the target and then the draft, so the pairs are the same ones."""
    pairs = []
    for _ in range(count):
        size = int(rng.integers(2, 9))
        dt = int(rng.integers(1, 100))
        t = random_numerators(rng, size, dt)
        dq = int(rng.integers(1, 100))
        q = random_numerators(rng, size, dq)
        d = dt * dq // math.gcd(dt, dq)
        pairs.append((tuple(x * (d // dt) for x in t), tuple(x * (d // dq) for x in q)))
    return pairs


def identity_check(pairs: Sequence[tuple[Sequence, Sequence]], excess_fn=excess) -> tuple[int, int]:
    """(pairs checked, token entries checked), raising if any entry breaks the identity."""
    entries = 0
    for t, d in pairs:
        if not identity_holds(t, d, excess_fn):
            raise AssertionError(f"identity fails for target {t} and draft {d}")
        entries += len(t)
    return len(pairs), entries


# --- Monte Carlo ------------------------------------------------------------------------------


def _floats(rows: Sequence[Row]) -> np.ndarray:
    return np.array([[float(p) for p in row] for row in rows], dtype=np.float64)


GUIDE_CELLS = 1024


def _cdfs(rows: np.ndarray) -> np.ndarray:
    """Row-wise CDFs that end at exactly 1.0, so u < 1 always lands on a token of positive probability."""
    cdf = np.cumsum(rows, axis=1)
    return cdf / cdf[:, -1:]


def _guides(cdf: np.ndarray) -> np.ndarray:
    """For each row and each of GUIDE_CELLS equal cells of [0, 1), the token holding the cell's left edge."""
    grid = np.arange(GUIDE_CELLS) / GUIDE_CELLS
    return np.stack([np.searchsorted(row, grid, side="right") for row in cdf])


def _draw(cdf: np.ndarray, guide: np.ndarray, row, u: np.ndarray) -> np.ndarray:
    """Inverse-CDF draws by guide table (Chen and Asau, 1974): the result equals a binary search exactly.

    The guide gives the token at the left edge of u's cell; stepping right while u is past that
    token's upper edge finds u's own token, usually in zero or one step.
    """
    cell = (u * GUIDE_CELLS).astype(np.intp)
    if np.isscalar(row):
        guide, cdf, base = guide[row], cdf[row], 0
    else:
        guide, cdf, base = guide.ravel(), cdf.ravel(), row * cdf.shape[1]
        cell += row * GUIDE_CELLS
    x = guide[cell]
    while True:
        behind = u >= cdf[base + x]
        if not behind.any():
            return x
        x += behind


def residual_rows(target: np.ndarray, draft: np.ndarray) -> np.ndarray:
    rest = np.maximum(target - draft, 0.0)
    mass = rest.sum(axis=1, keepdims=True)
    return np.divide(rest, mass, out=target.copy(), where=mass > 0)


def target_rows_resampler(target: np.ndarray, draft: np.ndarray) -> np.ndarray:
    """A deliberately wrong replacement rule (resample from the target itself), kept as a negative control."""
    return target.copy()


def simulate_rounds(
    target_rows: Sequence[Row],
    draft_rows: Sequence[Row],
    rounds: int,
    rng: np.random.Generator,
    replacement_rule: Callable[[np.ndarray, np.ndarray], np.ndarray] = residual_rows,
) -> tuple[np.ndarray, np.ndarray]:
    """Run many rounds at once, the draft sampling fresh proposals every time.

    Returns (tokens, reached): tokens[i, r] is the token committed at position i of round r
    (position k is the bonus), and reached[i, r] says whether round r got that far.

    Two economies keep this fast without changing the law of anything. One uniform u per position
    both picks the proposal x (u falls in x's slice of the draft's CDF) and decides the test: the
    offset of u inside that slice is itself uniform and independent of x, so "accept" is "u lies in
    the first accept_probability(x) share of x's slice". And a round needs one more draw at most,
    since it ends either at its single rejection (the replacement) or with the bonus.
    """
    target, draft = _floats(target_rows), _floats(draft_rows)
    k = draft.shape[0]
    draft_cdf = _cdfs(draft)
    draft_guide = _guides(draft_cdf)
    ratio = np.divide(target[:k], draft, out=np.zeros_like(draft), where=draft > 0)
    accept_below = (draft_cdf - draft) + draft * np.minimum(1.0, ratio)
    final_cdf = _cdfs(np.vstack([replacement_rule(target[:k], draft), target[k:]]))
    final_guide = _guides(final_cdf)

    u = rng.random((k + 1, rounds), dtype=np.float32)  # 2^-24 resolution: far below the sampling noise
    tokens = np.empty((k + 1, rounds), dtype=np.intp)
    accepted = np.empty((k, rounds), dtype=bool)
    for i in range(k):
        tokens[i] = _draw(draft_cdf, draft_guide, i, u[i])
        accepted[i] = u[i] < accept_below[i, tokens[i]]
    reached = np.ones((k + 1, rounds), dtype=bool)
    for i in range(k):
        np.logical_and(reached[i], accepted[i], out=reached[i + 1])
    final_row = reached[1:].sum(axis=0)
    final = _draw(final_cdf, final_guide, final_row, u[k])
    for i in range(k):
        np.copyto(tokens[i], final, where=~accepted[i])
    tokens[k] = final
    return tokens, reached


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


def position_check(position: int, tokens: np.ndarray, expected: Sequence[Fraction]) -> PositionCheck:
    """Compare the committed tokens at one position with the target row they should follow."""
    size = len(expected)
    p = np.array([float(x) for x in expected])
    counts = np.bincount(tokens, minlength=size)
    n = int(counts.sum())
    freq = counts / n
    support = p > 0
    stray = int(counts[~support].sum())
    chi = float((((counts - n * p) ** 2)[support] / (n * p[support])).sum())
    dof = int(support.sum()) - 1
    pval = 0.0 if stray else chi_square_p_value(chi, dof)
    curve = []
    for m in error_checkpoints(n):
        c = np.bincount(tokens[:m], minlength=size)
        curve.append((m, float(0.5 * np.abs(c / m - p).sum())))
    return PositionCheck(
        position, n, tuple(int(c) for c in counts), tuple(float(f) for f in freq),
        float(0.5 * np.abs(freq - p).sum()), chi, dof, pval, tuple(curve),
    )


def convergence(
    target_rows: Sequence[Row],
    draft_rows: Sequence[Row],
    rounds: int,
    rng: np.random.Generator,
    replacement_rule: Callable[[np.ndarray, np.ndarray], np.ndarray] = residual_rows,
) -> tuple[PositionCheck, ...]:
    """Per position, the committed token's histogram among rounds that reached it, against the target."""
    tokens, reached = simulate_rounds(target_rows, draft_rows, rounds, rng, replacement_rule)
    return tuple(
        position_check(i + 1, tokens[i][reached[i]], target_rows[i]) for i in range(len(target_rows))
    )


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


# --- one profile, summarised ------------------------------------------------------------------


@dataclass(frozen=True)
class ProfileNumbers:
    id: str
    accept_rates: tuple[Fraction, ...]
    round_length_distribution: tuple[Fraction, ...]  # P(N = n), n = 1 .. k + 1
    expected_tokens: Fraction
    expected_tokens_partial_products: Fraction
    expected_accepted_drafts: Fraction  # expected_tokens minus the one token every round commits anyway
    round_cost: Fraction
    speedup: Fraction


def summarize(draft_id: str, target_rows: Sequence[Row], draft_rows: Sequence[Row], cost_model) -> ProfileNumbers:
    alphas = acceptance_rates(target_rows, draft_rows)
    dist = round_length_distribution(alphas)
    expected = expected_tokens_from_distribution(dist)
    other = expected_tokens_from_partial_products(alphas)
    if expected != other:
        raise AssertionError(f"{draft_id}: the two derivations of expected tokens disagree: {expected} != {other}")
    k = len(draft_rows)
    cost = round_cost(k, cost_model.draft_step, cost_model.verify_step)
    return ProfileNumbers(draft_id, alphas, dist, expected, other, expected - 1, cost, expected / cost)


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
        cases.append((f"random-{i + 1:02d}", f"random profile {i + 1} (draft mixes in {agreement} of the target)",
                      target, drafts))
    return cases


def convergence_suite(
    cases: Sequence[tuple[str, str, Sequence[Row], Sequence[Row]]],
    rounds: int,
    seed: int,
    replacement_rule: Callable[[np.ndarray, np.ndarray], np.ndarray] = residual_rows,
) -> tuple[ConvergenceCase, ...]:
    """Every case gets its own child Generator, so adding a case never changes another's draws."""
    children = np.random.default_rng(seed).spawn(len(cases))

    def one(case, rng):
        case_id, label, target, drafts = case
        checks = convergence(target, drafts, rounds, rng, replacement_rule)
        return ConvergenceCase(case_id, label, acceptance_rates(target, drafts), checks)

    with ThreadPoolExecutor(max_workers=min(2, os.cpu_count() or 1)) as pool:
        return tuple(pool.map(one, cases, children))


def authored_frame_count(target_rows: Sequence[Row], draft_rows: Sequence[Row], proposals: Sequence[int]) -> tuple[int, int]:
    """(fewest, most) frames the authored round can have: propose, one verify per position tried, bonus, done.

    Certain verdicts (a ratio of at least 1, or a target probability of 0) fix the count; the
    first position whose verdict needs a draw opens a range from a rejection there to a full round.
    """
    k = len(proposals)
    for i, x in enumerate(proposals):
        t, q = target_rows[i][x], draft_rows[i][x]
        if t == 0:
            return (i + 3, i + 3)
        if t < q:
            return (i + 3, k + 3)
    return (k + 3, k + 3)


def numbers_table(profiles, seed: int) -> list[dict]:
    """Per draft profile, the exact figures as fraction strings: the shape of `numbers --json` and numbers.json."""
    out = []
    for draft in profiles.drafts:
        n = summarize(draft.id, profiles.target, draft.distributions, profiles.cost_model)
        authored = run_round(profiles.target, draft.distributions, np.random.default_rng(seed), draft.proposals)
        out.append({
            "id": draft.id,
            "accept_rates": [str(a) for a in n.accept_rates],
            "round_length_distribution": [str(p) for p in n.round_length_distribution],
            "expected_tokens": str(n.expected_tokens),
            "speedup": str(n.speedup),
            "frame_count": len(authored.frames),
        })
    return out
