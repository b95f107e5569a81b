"""The Monte Carlo simulator: one float copy of the acceptance rule, run for many rounds at once with numpy.

Floats only here and in convergence.py; everything a reader sees as exact comes from analysis.py.

One simulator, one law. A round of k proposals reads k + 1 float32 uniforms, all drawn in one
place (`uniforms`): u[j] both picks proposal j (it falls in that token's slice of the draft's CDF)
and decides its test (its offset inside the slice is uniform and independent of the token, so
"accept" is "u lies in the first accept-probability share of the slice"); u[k] draws the round's
last token, the replacement at its one rejection (from `replacement_rule`, `residual_rows` unless a
test plants a wrong one) or else the bonus. `slice_edges` is that law as breakpoints of [0, 1).
`simulate_batch` runs it for rows that change from round to round (the playground's models);
`RoundSimulator` runs it for fixed rows by table lookup: the same draws and the same breakpoints, so
for fixed rows both give the same tokens, bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .engine import Row

CHUNK = 8192  # rounds RoundSimulator works on at a time (see run)
CELLS = 4096  # a power of two, so u * CELLS is exact for a float32 u and truncates to its cell


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
    rounding. Elementwise: for whole rows (the lookup tables) or for the proposed tokens alone
    (simulate_batch), with the same result for the same entries.
    """
    ratio = np.divide(p, q, out=np.zeros_like(end), where=q > 0)
    accept = (end - q) + q * np.minimum(1.0, ratio)
    return np.minimum(np.maximum(accept, start), end)


def slice_edges(target: np.ndarray, draft: np.ndarray) -> np.ndarray:
    """Every breakpoint of [0, 1) the accept rule sets, row by row, sorted: shape (rows, 2 * vocab).

    They run accept[0], end[0], accept[1], end[1], ... (see accept_edges), so the number n of them
    at or below u is 2x for an accepted proposal x and 2x + 1 for a rejected one (see proposal_codes).
    """
    end = row_cdfs(draft)
    start = np.hstack([np.zeros((len(end), 1)), end[:, :-1]])
    accept = accept_edges(start, end, target, draft)
    return np.stack([accept, end], axis=2).reshape(len(end), -1)


def proposal_codes(vocab: int, dtype, reject: int) -> np.ndarray:
    """code[n] for n breakpoints of slice_edges at or below u: the token n / 2 for even n (accepted), else reject.

    n = 2 * vocab would need u >= 1, which a uniform never is; it reads as the last token to stay in range.
    """
    n = np.arange(2 * vocab + 1)
    return np.where(n % 2 == 0, np.minimum(n // 2, vocab - 1), reject).astype(dtype)


def token_codes(vocab: int, dtype) -> np.ndarray:
    """code[n] for n entries of a row's CDF at or below u: the token n (the last one for n = vocab, u >= 1)."""
    return np.minimum(np.arange(vocab + 1), vocab - 1).astype(dtype)


def uniforms(rng: np.random.Generator, k: int, rounds: int) -> np.ndarray:
    """Every draw the simulator makes: (k + 1, rounds) float32 uniforms, row j for position j, row k for
    the round's last token."""
    return rng.random((k + 1, rounds), dtype=np.float32)  # 2^-24 resolution: far below the sampling noise


def _draw(cdfs: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Row r's token at u[r] by its CDF: np.searchsorted(cdfs[r], u[r], side="right") (for u < 1), for every r."""
    return token_codes(cdfs.shape[1], np.intp)[np.count_nonzero(cdfs <= u[:, None], axis=1)]


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
        # slice_edges' search, in two steps that need the accept edge of the proposed token only: the
        # slice u falls in is the proposal x, and u is past that slice's accept edge iff n = 2x + 1
        end = cdfs[0] if cdfs else row_cdfs(draft)
        x = _draw(end, here)
        start = np.where(x > 0, end[index, x - 1], 0.0)
        rejected = here >= accept_edges(start, end[index, x], target[index, x], draft[index, x])
        proposals[going, j] = x
        if rejected.any():
            gone = going[rejected]
            stop[gone] = j
            last[gone] = _draw(row_cdfs(replacement_rule(target[rejected], draft[rejected])), u[k, gone])
            going = going[~rejected]
    if going.size:
        bonus = rows_at(k, going, proposals[going, :k])[0]
        last[going] = _draw(row_cdfs(bonus), u[k, going])
    position = np.arange(k + 1)[:, None]
    tokens = np.where(position < stop, proposals.T, 0)
    tokens[stop, np.arange(rounds)] = last
    return Batch(tokens, position <= stop)


class _Tables:
    """code(u) = codes[searchsorted(breaks[row], u, side="right")] for float32 u in [0, 1), by table lookup.

    Row r's table gives the code at the left edge of each of CELLS equal cells of [0, 1); the few
    cells a breakpoint falls inside are marked AMBIGUOUS, and draws landing there are settled by the
    exact search, so the result equals the binary search for every u, not just nearly. The rows'
    tables lie end to end in `flat`, row r's cell c at r * CELLS + c.
    """

    def __init__(self, breaks: np.ndarray, codes: np.ndarray, ambiguous: int):
        self.breaks, self.codes, self.ambiguous = breaks, codes, ambiguous
        rows = len(breaks)
        scaled = breaks * CELLS  # exact: CELLS is a power of two
        # break j lies at or left of cell c's left edge c / CELLS from c = ceil(b_j * CELLS) on, so (the breaks
        # being sorted) a row's table is codes[0] up to that cell for break 0, codes[1] up to break 1's, ...
        bounds = np.zeros((rows, breaks.shape[1] + 2), dtype=np.intp)
        np.minimum(np.ceil(scaled), CELLS, out=bounds[:, 1:-1], casting="unsafe")
        bounds[:, -1] = CELLS
        runs = bounds[:, 1:] - bounds[:, :-1]
        self.table = np.repeat(np.concatenate([codes] * rows), runs.ravel()).reshape(rows, CELLS)
        inside = np.floor(scaled).astype(np.intp)  # the cell holding b inside, unless b is its left edge
        row, column = np.nonzero((inside < CELLS) & (inside < scaled))
        self.table[row, inside[row, column]] = ambiguous
        self.flat = self.table.ravel()
        self.inexact = set(row.tolist())  # the rows with an AMBIGUOUS cell: only their lookups need settling

    def settle(self, out: np.ndarray, u: np.ndarray, row: int | np.ndarray) -> None:
        """Replace the AMBIGUOUS entries of out, looked up from u in `row` (one row, or one per entry), by the
        exact search."""
        if (row not in self.inexact) if np.isscalar(row) else not self.inexact:
            return
        where = np.flatnonzero(out == self.ambiguous)
        rows = np.broadcast_to(row, out.shape)[where]
        exact = u[where].astype(np.float64)
        for r in set(rows.tolist()):
            at = rows == r
            out[where[at]] = self.codes[np.searchsorted(self.breaks[r], exact[at], side="right")]


class RoundSimulator:
    """simulate_batch for one fixed (target, draft) pair, fast: one table lookup per draw.

    The breakpoints of slice_edges split each draft slice into an accept part (code x) and a
    reject part (code REJECT), and a lookup table per position (see _Tables) turns a uniform into
    its code without a search; the round's last token comes from the same kind of table over the
    replacement rows and the bonus row, read at u[k].

    Codes are small unsigned integers: a token, REJECT while undecided, and DEAD added once a round
    has stopped, so that counting a position's tokens among the rounds that reached it needs no mask.
    """

    def __init__(
        self, target_rows: Sequence[Row], draft_rows: Sequence[Row], replacement_rule: ReplacementRule = residual_rows
    ):
        target, draft = np.array(target_rows, dtype=np.float64), np.array(draft_rows, dtype=np.float64)
        self.k, self.vocab = draft.shape[0], target.shape[1]
        self.dtype = np.uint8 if self.vocab < 126 else np.uint16
        self.dead = 128 if self.dtype == np.uint8 else 1 << 15
        self.reject, self.ambiguous = self.vocab, self.dead - 1
        codes = proposal_codes(self.vocab, self.dtype, self.reject)
        self.proposal = _Tables(slice_edges(target[: self.k], draft), codes, self.ambiguous)
        final = row_cdfs(np.vstack([replacement_rule(target[: self.k], draft), target[self.k :]]))
        self.final = _Tables(final, token_codes(self.vocab, self.dtype), self.ambiguous)

    def run(self, rounds: int, rng: np.random.Generator) -> np.ndarray:
        """codes[i, r]: the token committed at position i of round r (k is the bonus), or DEAD or more."""
        u = uniforms(rng, self.k, rounds)
        out = np.empty((self.k + 1, rounds), dtype=self.dtype)
        for start in range(0, rounds, CHUNK):  # a chunk's working arrays are small enough to be reused, not remapped
            self._run(u[:, start : start + CHUNK], out[:, start : start + CHUNK])
        return out

    def _run(self, u: np.ndarray, out: np.ndarray) -> None:
        """run() for the rounds of one chunk: their uniforms u, their codes written into out."""
        k, reject, dead, rounds = self.k, self.dtype(self.reject), self.dtype(self.dead), u.shape[1]
        cells = np.empty((rounds,), np.intp)
        gone = np.zeros((rounds,), self.dtype)  # DEAD once the round has met its rejection
        stop = np.zeros((rounds,), self.dtype)  # proposals accepted: where the round stopped
        flag = np.empty((rounds,), bool)
        tables = self.proposal.table
        for i in range(k):
            codes = out[i]
            np.multiply(u[i], np.float32(CELLS), out=cells, casting="unsafe")  # truncation: the cell index
            np.take(tables[i], cells, out=codes, mode="clip")  # cells are in range; "raise" would copy out first
            self.proposal.settle(codes, u[i], i)
            np.bitwise_or(codes, gone, out=codes)
            np.less(codes, reject, out=flag)  # accepted, in a round still going
            np.add(stop, flag, out=stop)
            # stopped rounds already read DEAD or more, so "not below REJECT" is "stopped by now"
            np.logical_not(flag, out=flag)
            np.multiply(flag, dead, out=gone)
        final = out[k]
        np.multiply(u[k], np.float32(CELLS), out=cells, casting="unsafe")
        cells += stop.astype(np.intp) * CELLS  # in row `stop` of the flat tables
        np.take(self.final.flat, cells, out=final, mode="clip")
        self.final.settle(final, u[k], stop)
        out[:k] += (out[:k] == reject) * (final - reject)  # wrapping around: the replacement where it was rejected
        np.bitwise_or(final, gone, out=final)
