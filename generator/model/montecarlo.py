"""The Monte Carlo simulator: one float copy of the acceptance rule, run for many rounds at once with numpy.

Floats only here and in convergence.py; everything a reader sees as exact comes from analysis.py.

One simulator, one law. A round of k proposals reads k + 1 float32 uniforms, all drawn in one
place (`uniforms`): u[j] both picks proposal j (it falls in that token's slice of the draft's CDF)
and decides its test (its offset inside the slice is uniform and independent of the token, so
"accept" is "u lies in the first accept-probability share of the slice"); u[k] draws the round's
last token, the replacement at its one rejection (from `replacement_rule`, `residual_rows` unless a
test plants a wrong one) or else the bonus. `simulate_batch` runs it for rows that may change from
round to round (the playground's models); `simulate` for the same rows in every round (the profiles).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .engine import Row


def row_cdfs(rows: np.ndarray) -> np.ndarray:
    """Row-wise CDFs that end at exactly 1.0, so u < 1 always lands on a token of positive probability."""
    cdf = np.cumsum(rows, axis=1)
    return cdf / cdf[:, -1:]


def residual_rows(target: np.ndarray, draft: np.ndarray) -> np.ndarray:
    """norm(max(0, p - q)) row by row (engine.residual in floats); the target row where nothing is left."""
    rest = np.maximum(target - draft, 0.0)
    mass = rest.sum(axis=1, keepdims=True)
    return np.divide(rest, mass, out=np.array(target, dtype=np.float64), where=mass > 0)


def target_rows_resampler(target: np.ndarray, draft: np.ndarray) -> np.ndarray:
    """A deliberately wrong replacement rule (resample from the target itself), kept as a negative control."""
    return np.array(target, dtype=np.float64)


ReplacementRule = Callable[[np.ndarray, np.ndarray], np.ndarray]
RowsAt = Callable[[int, np.ndarray, np.ndarray], tuple[np.ndarray | None, ...]]


def accept_edges(start: np.ndarray, end: np.ndarray, p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The accept rule, the one float copy of engine.accept_probability: where token x's slice splits.

    x's slice of the draft's CDF is [start, end), of width q = q(x); a uniform in it below
    start + q min(1, p(x) / q(x)) accepts x, one from there to end rejects it. (The offset of u
    inside the slice is uniform and independent of x, so this is the accept test with probability
    min(1, p / q).) The edge is computed from end - q and kept inside [start, end] against
    rounding. Elementwise, for the proposed tokens.
    """
    ratio = np.divide(p, q, out=np.zeros_like(end), where=q > 0)
    accept = (end - q) + q * np.minimum(1.0, ratio)
    return np.minimum(np.maximum(accept, start), end)


def uniforms(rng: np.random.Generator, k: int, rounds: int) -> np.ndarray:
    """Every draw the simulator makes: (k + 1, rounds) float32 uniforms, row j for position j, row k for
    the round's last token."""
    return rng.random((k + 1, rounds), dtype=np.float32)  # 2^-24 resolution: far below the sampling noise


def draw(cdfs: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Row r's token at u[r] by its CDF, np.searchsorted(cdfs[r], u[r], side="right"), for every row r at once.

    u < 1 and each CDF ends at 1.0, so the count stays below the vocabulary."""
    return np.count_nonzero(cdfs <= u[:, None], axis=1)


@dataclass(frozen=True)
class Batch:
    """Rounds simulated side by side, position by position (position k is the bonus)."""

    tokens: np.ndarray  # (k + 1, rounds): the token committed at each position, 0 where the round stopped before it
    reached: np.ndarray  # (k + 1, rounds) bool: whether the round got that far

    @property
    def accepted(self) -> np.ndarray:
        """(k, rounds) bool: proposal j was accepted (a round goes on past position j exactly then)."""
        return self.reached[1:]

    @property
    def committed(self) -> np.ndarray:
        """(rounds,) tokens committed, the replacement or the bonus included."""
        return self.reached.sum(axis=0)


def simulate_batch(
    rows_at: RowsAt,
    k: int,
    rounds: int,
    rng: np.random.Generator,
    replacement_rule: ReplacementRule = residual_rows,
) -> Batch:
    """Many rounds at once whose rows depend on the round: a language model's rows follow its context.

    rows_at(j, going, proposals) gives the target and draft rows at position j of the rounds still
    going (going: their indices, in order), one row each, once their first j proposals are known
    (proposals has shape (len(going), j)); at j = k it gives the bonus rows and None. It may add a
    third item, the draft rows' row_cdfs, when it has them tabulated (they are not computed again); with it,
    the rows before position k are only read as rows[index, tokens], rows[mask] and .shape, so they may be
    a view that copies only what is read (playground.TableRows). A round that
    stopped is not asked about again: its later rows could not change what it committed, and each
    round's rows, draws and verdicts depend on that round alone, so leaving them out changes no token.
    """
    u = uniforms(rng, k, rounds).astype(np.float64)  # exact
    proposals = np.zeros((rounds, k + 1), dtype=np.intp)  # the last column stays 0: the bonus is no proposal
    stop = np.full(rounds, k, dtype=np.intp)  # proposals accepted before the round's one rejection
    last = np.empty(rounds, dtype=np.intp)
    going = np.arange(rounds)  # the rounds with no rejection yet, in order
    for j in range(k):
        if not going.size:
            break
        target, draft, *cdfs = rows_at(j, going, proposals[going, :j])
        here = u[j, going]
        index = np.arange(going.size)
        # the slice of the draft's CDF that u falls in is the proposal x; u past its accept edge rejects x
        end = cdfs[0] if cdfs else row_cdfs(draft)
        x = draw(end, here)
        start = np.where(x > 0, end[index, x - 1], 0.0)
        rejected = here >= accept_edges(start, end[index, x], target[index, x], draft[index, x])
        proposals[going, j] = x
        if rejected.any():
            gone = going[rejected]
            stop[gone] = j
            last[gone] = draw(row_cdfs(replacement_rule(target[rejected], draft[rejected])), u[k, gone])
            going = going[~rejected]
    if going.size:
        bonus = rows_at(k, going, proposals[going, :k])[0]
        last[going] = draw(row_cdfs(bonus), u[k, going])
    position = np.arange(k + 1)[:, None]
    tokens = np.where(position < stop, proposals.T, 0)
    tokens[stop, np.arange(rounds)] = last
    return Batch(tokens, position <= stop)


def simulate(
    target_rows: Sequence[Row],
    draft_rows: Sequence[Row],
    rounds: int,
    rng: np.random.Generator,
    replacement_rule: ReplacementRule = residual_rows,
) -> Batch:
    """simulate_batch for one fixed (target, draft) pair: every round reads the same rows, and the same draft
    CDFs, made once per position."""
    target, draft = np.array(target_rows, dtype=np.float64), np.array(draft_rows, dtype=np.float64)
    cdfs = row_cdfs(draft)

    def rows_at(j: int, going: np.ndarray, proposals: np.ndarray) -> tuple[np.ndarray | None, ...]:
        if j == len(draft):
            return np.broadcast_to(target[j], (going.size, target.shape[1])), None
        return tuple(np.broadcast_to(rows[j], (going.size, rows.shape[1])) for rows in (target, draft, cdfs))

    return simulate_batch(rows_at, len(draft), rounds, rng, replacement_rule)
