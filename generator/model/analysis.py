"""Exact numbers a reader sees, all Fractions: acceptance rates, the round-length distribution, expectations,
speedups and the identity min(p, q) + max(0, p - q) = p. The Monte Carlo that checks that the sampler
delivers them is in montecarlo.py and convergence.py.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from . import verifiers
from .engine import Row, excess, overlap, run_round


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


def printed_alike(a: Fraction, b: Fraction, digits: int = 2) -> bool:
    """Whether two values >= 0 print as the same decimal to `digits` places, under the pages' one rounding rule
    (half away from zero on the exact value, render/decimals.py and decimals.js)."""
    scale = Fraction(10) ** digits
    return math.floor(Fraction(a) * scale + Fraction(1, 2)) == math.floor(Fraction(b) * scale + Fraction(1, 2))


def printed_ties(points: Sequence[tuple[int, Fraction]], best_k: int, digits: int = 2) -> tuple[int, ...]:
    """The other K of a (K, speedup) curve whose speedup prints the same as the best K's: a tie a page must name."""
    best = dict(points)[best_k]
    return tuple(k for k, s in points if k != best_k and printed_alike(s, best, digits))


def identity_holds(target: Sequence, draft: Sequence, excess_fn=excess) -> bool:
    """min(p, q) + max(0, p - q) == p for every token (a term for each), exactly; excess_fn lets a test plant a
    wrong residual.

    The rows may be Fractions or integer numerators over one common denominator: scaling both rows by
    the same positive number scales all three terms alike, so the identity holds for one iff for the other.
    """
    return tuple(map(operator.add, overlap(target, draft), excess_fn(target, draft))) == tuple(target)


def random_numerators(rng: np.random.Generator, size: int, denominator: int) -> tuple[int, ...]:
    """The numerators (over `denominator`) of a random distribution: sorted cut points, zeros allowed."""
    cuts = sorted(rng.integers(0, denominator + 1, size=size - 1).tolist())
    return tuple(b - a for a, b in zip([0, *cuts], [*cuts, denominator]))


def random_rational_row(rng: np.random.Generator, size: int, denominator: int) -> Row:
    """A random distribution whose entries are multiples of 1/denominator (zeros allowed)."""
    return tuple(Fraction(c, denominator) for c in random_numerators(rng, size, denominator))


def over_common_denominator(
    target: Sequence[Fraction], draft: Sequence[Fraction]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Both rows as integer numerators over the least common denominator of their entries."""
    d = math.lcm(*(Fraction(x).denominator for x in (*target, *draft)))
    return (tuple(int(x * d) for x in target), tuple(int(x * d) for x in draft))


def random_identity_pairs(rng: np.random.Generator, count: int) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """count random (target, draft) pairs of 2 to 8 tokens, each row a multiple of 1/d for its own d in 1..99,
    as integer numerators over the pair's common denominator: the draws random_rational_row makes for the
    target and then the draft."""
    pairs = []
    for _ in range(count):
        size = int(rng.integers(2, 9))
        dt = int(rng.integers(1, 100))
        t = random_numerators(rng, size, dt)
        dq = int(rng.integers(1, 100))
        q = random_numerators(rng, size, dq)
        d = math.lcm(dt, dq)
        pairs.append((tuple(x * (d // dt) for x in t), tuple(x * (d // dq) for x in q)))
    return pairs


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
    cost = round_cost(len(draft_rows), cost_model.draft_step, cost_model.verify_step)
    return ProfileNumbers(draft_id, alphas, dist, expected, other, expected - 1, cost, expected / cost)


def authored_frame_count(
    target_rows: Sequence[Row], draft_rows: Sequence[Row], proposals: Sequence[int]
) -> tuple[int, int]:
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


def numbers_row(
    draft_id: str, accept_rates, round_length_distribution, expected_tokens: Fraction, speedup: Fraction, frames: int
) -> dict:
    """One draft profile's exact figures as fraction strings: a row of `numbers --json` and numbers.json."""
    return {
        "id": draft_id,
        "accept_rates": [str(a) for a in accept_rates],
        "round_length_distribution": [str(p) for p in round_length_distribution],
        "expected_tokens": str(expected_tokens),
        "speedup": str(speedup),
        "frame_count": frames,
    }


def numbers_table(profiles, seed: int) -> list[dict]:
    """numbers_row per draft profile, its authored round run under `seed` (the build takes them from the facts)."""
    rows = []
    for d in profiles.drafts:
        n = summarize(d.id, profiles.target, d.distributions, profiles.cost_model)
        authored = run_round(profiles.target, d.distributions, np.random.default_rng(seed), d.proposals)
        dist, frames = n.round_length_distribution, len(authored.frames)
        row = numbers_row(d.id, n.accept_rates, dist, n.expected_tokens, n.speedup, frames)
        rows.append({**row, **verifier_numbers(profiles.target, d.distributions)})
    return rows


def verifier_numbers(target_rows: Sequence[Row], draft_rows: Sequence[Row]) -> dict:
    """One draft's figures beyond token-by-token checking, as fraction strings: block verification's expected
    accepted proposals and tokens per round, and per position the acceptance chance of two and three guesses
    checked in turn against the running residual (recursive rejection sampling)."""
    block = verifiers.block_expected_accepted(target_rows, draft_rows)
    pairs = list(zip(target_rows, draft_rows))
    return {
        "block_expected_accepted": str(block),
        "block_expected_tokens": str(block + 1),
        "two_guess_acceptance": [str(verifiers.rrs_acceptance(t, q, 2)) for t, q in pairs],
        "three_guess_acceptance": [str(verifiers.rrs_acceptance(t, q, 3)) for t, q in pairs],
    }


def target_numbers(target_rows: Sequence[Row], max_nodes: int = 16) -> dict:
    """The target's figures: the best token tree's expected accepted tokens for n = 1..max_nodes nodes (or every
    node there is), as fraction strings."""
    return {"best_tree_accepted": [str(x) for x in verifiers.best_tree_accepted(target_rows, max_nodes)]}
