"""Speculative sampling, exactly: the accept rule, the residual, one round and its frames.

Pure functions over rows of Fractions and token indices. Nothing here reads a file or knows a
token's label; randomness arrives only as a numpy Generator that the caller seeds. Every uniform
draw is turned into an exact Fraction before it is compared, so a verdict never depends on
floating-point rounding of the probabilities.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from fractions import Fraction
from typing import Protocol

Row = tuple[Fraction, ...]


class Verdict(StrEnum):
    """What happened to one proposal; a str, so pages, JSON and the JavaScript mirror read the same words."""

    PENDING = "pending"
    ACCEPTED = "accepted"
    REJECTED = "rejected"
    DROPPED = "dropped"


PENDING, ACCEPTED, REJECTED, DROPPED = Verdict.PENDING, Verdict.ACCEPTED, Verdict.REJECTED, Verdict.DROPPED


class Uniforms(Protocol):
    def random(self) -> float: ...


def accept_probability(p_target: Fraction | float, p_draft: Fraction | float) -> Fraction:
    """min(1, p_target / p_draft): the chance that a proposal the draft made survives the target's check.

    Exact even for float probabilities (a trained model's rows): both become the Fractions of
    their doubles, so a verdict never depends on how a division rounds.
    """
    if p_draft <= 0:
        raise ValueError("the draft cannot have proposed a token it gives probability 0")
    return min(Fraction(1), Fraction(p_target) / Fraction(p_draft))


def overlap(target: Sequence[Fraction], draft: Sequence[Fraction]) -> Row:
    """min(p_target, p_draft) token by token: the mass the draft's proposals keep.

    Spelt out as min() is (the target's entry unless the draft's is smaller), without a call per token.
    """
    return tuple([d if d < t else t for t, d in zip(target, draft)])


def excess(target: Sequence[Fraction], draft: Sequence[Fraction]) -> Row:
    """max(0, p_target - p_draft) token by token: what the target wants that the draft under-proposes.

    The zero is t - t, the rows' own zero: Fraction(0) for Fractions, 0 for the integer numerators the
    identity check uses (comparing those with a Fraction(0) cost it most of its time), 0.0 for floats.
    """
    return tuple([t - d if t > d else t - t for t, d in zip(target, draft)])


def residual(target: Sequence[Fraction], draft: Sequence[Fraction]) -> Row | None:
    """norm(max(0, p_target - p_draft)), or None where draft equals target and no rejection can happen."""
    rest = excess(target, draft)
    mass = sum(rest, Fraction(0))
    if mass == 0:
        return None
    return tuple(r / mass for r in rest)


def draw(row: Sequence[Fraction], u: Fraction) -> int:
    """The token whose cumulative interval [F(i-1), F(i)) holds u; zero-probability tokens are never drawn."""
    cumulative = Fraction(0)
    last = 0
    for i, p in enumerate(row):
        if p == 0:
            continue
        cumulative += p
        last = i
        if u < cumulative:
            return i
    return last


def uniform(rng: Uniforms) -> Fraction:
    """One uniform draw in [0, 1), as the exact Fraction of the double the Generator produced."""
    return Fraction(float(rng.random()))


@dataclass(frozen=True)
class Frame:
    """One step of a round, holding everything a reader needs to follow that step."""

    kind: str  # "propose", "verify", "bonus" or "done"
    statuses: tuple[Verdict, ...]  # per position
    committed: tuple[int, ...]  # tokens committed once this step is over
    position: int | None = None  # 1-based; k + 1 is the bonus position
    proposal: int | None = None
    p_target: Fraction | None = None
    p_draft: Fraction | None = None
    ratio: Fraction | None = None
    accept_probability: Fraction | None = None
    u: Fraction | None = None  # the accept test's uniform draw; None where the verdict is certain
    verdict: Verdict | None = None
    residual: Row | None = None
    replacement: int | None = None
    replacement_u: Fraction | None = None
    bonus_distribution: Row | None = None
    bonus: int | None = None
    bonus_u: Fraction | None = None


@dataclass(frozen=True)
class Round:
    proposals: tuple[int, ...]
    committed: tuple[int, ...]
    accepted: int  # proposals accepted before the first rejection (k if none)
    bonus: int | None
    frames: tuple[Frame, ...] = field(repr=False)


def run_round(
    target_rows: Sequence[Row],
    draft_rows: Sequence[Row],
    rng: Uniforms,
    proposals: Sequence[int] | None = None,
) -> Round:
    """One round of speculative sampling with its frames.

    target_rows has k + 1 rows (the last for the bonus); draft_rows has k. Proposals are the
    authored ones when given, otherwise sampled from the draft with rng (a numpy Generator, or
    anything with a random() method). The accept test only consumes a draw when its probability
    lies strictly between 0 and 1. Rows may be Fractions or floats: the playground's trained
    character models run through this same function.
    """
    k = len(draft_rows)
    if len(target_rows) != k + 1:
        raise ValueError(f"expected {k + 1} target rows for {k} draft rows, got {len(target_rows)}")
    if proposals is None:  # the draft samples one token per position, all before any is checked
        proposals = [draw(row, uniform(rng)) for row in draft_rows]
    proposals = tuple(proposals)
    if len(proposals) != k:
        raise ValueError(f"expected {k} proposals, got {len(proposals)}")

    statuses = [PENDING] * k
    committed: list[int] = []
    frames = [Frame("propose", tuple(statuses), ())]
    for i, x in enumerate(proposals):
        t_row, d_row = target_rows[i], draft_rows[i]
        a = accept_probability(t_row[x], d_row[x])
        u = uniform(rng) if 0 < a < 1 else None
        common = dict(
            position=i + 1,
            proposal=x,
            p_target=t_row[x],
            p_draft=d_row[x],
            ratio=t_row[x] / d_row[x],
            accept_probability=a,
            u=u,
        )
        if a == 1 or (u is not None and u < a):
            statuses[i] = ACCEPTED
            committed.append(x)
            frames.append(Frame("verify", tuple(statuses), tuple(committed), verdict=ACCEPTED, **common))
            continue
        res = residual(t_row, d_row) or tuple(t_row)  # floats: rounding can leave no excess at all
        ru = uniform(rng)
        replacement = draw(res, ru)
        statuses[i] = REJECTED
        statuses[i + 1 :] = [DROPPED] * (k - i - 1)
        committed.append(replacement)
        frames.append(
            Frame(
                "verify",
                tuple(statuses),
                tuple(committed),
                verdict=REJECTED,
                residual=res,
                replacement=replacement,
                replacement_u=ru,
                **common,
            )
        )
        frames.append(Frame("done", tuple(statuses), tuple(committed)))
        return Round(proposals, tuple(committed), i, None, tuple(frames))

    bonus_row = tuple(target_rows[k])
    bu = uniform(rng)
    bonus = draw(bonus_row, bu)
    committed.append(bonus)
    frames.append(
        Frame(
            "bonus",
            tuple(statuses),
            tuple(committed),
            position=k + 1,
            bonus_distribution=bonus_row,
            bonus=bonus,
            bonus_u=bu,
        )
    )
    frames.append(Frame("done", tuple(statuses), tuple(committed)))
    return Round(proposals, tuple(committed), k, bonus, tuple(frames))
