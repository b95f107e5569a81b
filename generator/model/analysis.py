"""Exact numbers a reader sees, and the Monte Carlo checks that the sampler really delivers them.

Acceptance rates, the round-length distribution, expectations and speedups are Fractions. Only
the Monte Carlo section uses floats, because it simulates; it is vectorised with numpy so that a
hundred thousand rounds of a profile take milliseconds, and it takes a seeded Generator.
"""
from __future__ import annotations

import math
import operator
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import exp, lgamma, log, nan
from typing import TYPE_CHECKING

import numpy as np

from .engine import Round, Row, excess, overlap, run_round

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


def over_common_denominator(target: Sequence[Fraction], draft: Sequence[Fraction]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Both rows as integer numerators over the least common denominator of their entries."""
    d = math.lcm(*(Fraction(x).denominator for x in (*target, *draft)))
    return (tuple(int(x * d) for x in target), tuple(int(x * d) for x in draft))


PAIR_SIZES, PAIR_DENOMINATORS = range(2, 9), range(1, 100)  # of the random identity pairs


def random_identity_pairs(rng: np.random.Generator, count: int) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """count random (target, draft) pairs of 2 to 8 tokens, each row a multiple of 1/d for its own d in 1..99,
    as integer numerators over the pair's common denominator. The draws are those of
    random_rational_row called for the target and then the draft, so the pairs are the same ones, and rng
    is left where those draws leave it. `drawn_identity_pairs` makes them one draw at a time;
    `_identity_pairs_from_words` makes the same pairs at once from the generator's raw output."""
    pairs = _identity_pairs_from_words(rng, count)
    return drawn_identity_pairs(rng, count) if pairs is None else pairs


def drawn_identity_pairs(rng: np.random.Generator, count: int) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """random_identity_pairs one rng.integers call per draw, as random_rational_row makes them."""
    pairs = []
    for _ in range(count):
        size = int(rng.integers(PAIR_SIZES.start, PAIR_SIZES.stop))
        dt = int(rng.integers(PAIR_DENOMINATORS.start, PAIR_DENOMINATORS.stop))
        t = random_numerators(rng, size, dt)
        dq = int(rng.integers(PAIR_DENOMINATORS.start, PAIR_DENOMINATORS.stop))
        q = random_numerators(rng, size, dq)
        d = dt * dq // math.gcd(dt, dq)
        pairs.append((tuple(x * (d // dt) for x in t), tuple(x * (d // dq) for x in q)))
    return pairs


# How Generator.integers(low, high) draws (numpy >= 1.17, default int64): for a span r = high - low
# below 2**32 it takes a 32-bit word w from the bit generator and returns low + (w * r >> 32), taking
# another word while (w * r) mod 2**32 < 2**32 mod r (Lemire's method, unbiased); integers(0, 2**32,
# dtype=uint64) returns the words themselves. A pair of size s takes 2s + 1 words (17 at most): size
# (r 7), dt (r 99), s - 1 target cuts (r dt + 1), dq (r 99), s - 1 draft cuts (r dq + 1), unless a word
# is turned down; with r <= 100 that happens with probability below 100 / 2**32 a word (about one seed
# in 2,000 at 5,000 pairs), and then the fast path gives up. No overflow: w * r < 2**32 * 100 < 2**39 in
# uint64; cuts <= 99, numerators <= 99 * 99 in int64. The first pairs are also made again one draw at a
# time from a copy of rng, so a numpy that draws some other way makes the fast path give up, not differ.
_WORD = 2**32
_CHECKED_PAIRS = 4
_MOST_WORDS = 2 * PAIR_SIZES[-1] + 1  # a pair's words, at most


def _identity_pairs_from_words(rng: np.random.Generator, count: int) -> list | None:
    """random_identity_pairs from one block of 32-bit words, or None (rng untouched) where it cannot be sure."""
    if count <= 0:
        return None
    bits = rng.bit_generator
    saved = bits.state
    words = rng.integers(0, _WORD, size=_MOST_WORDS * (count + 1), dtype=np.uint64)  # + room to read past the end
    pairs, used, kept = pairs_from_words(words, count)
    bits.state = saved
    if not kept:
        return None
    rng.integers(0, _WORD, size=used, dtype=np.uint64)  # leave rng where the draws one at a time leave it
    check = np.random.Generator(type(bits)())
    check.bit_generator.state = saved
    if drawn_identity_pairs(check, min(count, _CHECKED_PAIRS)) != pairs[:_CHECKED_PAIRS]:
        bits.state = saved
        return None
    return pairs


def pairs_from_words(words: np.ndarray, count: int) -> tuple[list, int, bool]:
    """(the count pairs the words make if integers() keeps every word, words used, whether it keeps them all).

    `words` must hold 17 * (count + 1) words (uint64 below 2**32), so a pair never reads past the end.
    """
    def value(w, r):  # what integers(0, r) makes of words w, and whether it keeps them
        m = w * r
        return m >> np.uint64(32), (m & np.uint64(_WORD - 1)) >= np.uint64(_WORD) % r

    size_span, den_span = np.uint64(len(PAIR_SIZES)), np.uint64(len(PAIR_DENOMINATORS))
    steps = words * size_span  # 2 * size + 1 words a pair, if each word starts one: in place, bytes for the walk
    steps >>= np.uint64(32)
    steps = steps.astype(np.uint8)
    steps *= np.uint8(2)
    steps += np.uint8(2 * PAIR_SIZES.start + 1)
    steps = steps.tobytes()
    starts, at = [], 0
    for _ in range(count):
        starts.append(at)
        at += steps[at]
    starts = np.array(starts, dtype=np.int64)
    sizes, kept = value(words[starts], size_span)
    sizes += np.uint64(PAIR_SIZES.start)
    all_kept = bool(kept.all())
    pairs: list = [None] * count
    for size in PAIR_SIZES:  # pairs of one size at a time, as rectangular arrays (np.unique would import numpy.ma)
        index = np.flatnonzero(sizes == size)
        if not index.size:
            continue
        rows = []
        for first in (starts[index] + 1, starts[index] + size + 1):  # the target's words, then the draft's
            dens, keep = value(words[first], den_span)
            dens += np.uint64(PAIR_DENOMINATORS.start)
            cuts, keep_cuts = value(words[first[:, None] + np.arange(1, size)], dens[:, None] + np.uint64(1))
            all_kept = all_kept and bool(keep.all()) and bool(keep_cuts.all())
            dens = dens.astype(np.int64)
            edges = np.hstack([np.zeros((len(index), 1), dtype=np.int64), np.sort(cuts.astype(np.int64)), dens[:, None]])
            rows.append((np.diff(edges, axis=1), dens))
        (t, dt), (q, dq) = rows
        d = np.lcm(dt, dq)
        t, q = (t * (d // dt)[:, None]).tolist(), (q * (d // dq)[:, None]).tolist()
        for i, pair in zip(index.tolist(), zip(map(tuple, t), map(tuple, q))):
            pairs[i] = pair
    return pairs, at, all_kept


def identity_check(pairs: Sequence[tuple[Sequence, Sequence]], excess_fn=excess) -> tuple[int, int]:
    """(pairs checked, token entries checked), raising if any entry breaks the identity."""
    entries = 0
    for t, d in pairs:
        if not identity_holds(t, d, excess_fn):
            raise AssertionError(f"identity fails for target {t} and draft {d}")
        entries += len(t)
    return len(pairs), entries


# --- Monte Carlo ------------------------------------------------------------------------------
#
# One simulator, one law. A round of k proposals reads k + 1 float32 uniforms, all drawn in one
# place (`uniforms`): u[j] both picks proposal j (it falls in that token's slice of the draft's CDF)
# and decides its test (its offset inside the slice is uniform and independent of the token, so
# "accept" is "u lies in the first accept-probability share of the slice"); u[k] draws the round's
# last token, the replacement at its one rejection (from `replacement_rule`, `residual_rows` unless a
# test plants a wrong one) or else the bonus. `slice_edges` is that law as breakpoints of [0, 1).
# `simulate_batch` runs it for rows that change from round to round (the playground's models);
# `simulate_rounds` and `RoundSimulator` run it for fixed rows by table lookup: the same draws and the
# same breakpoints, so for fixed rows both give the same tokens, bit for bit.


def _floats(rows: Sequence[Row]) -> np.ndarray:
    return np.array([[float(p) for p in row] for row in rows], dtype=np.float64)


CELLS = 4096  # a power of two, so u * CELLS is exact for a float32 u and truncates to its cell


def _cdfs(rows: np.ndarray) -> np.ndarray:
    """Row-wise CDFs that end at exactly 1.0, so u < 1 always lands on a token of positive probability."""
    cdf = np.cumsum(rows, axis=1)
    return cdf / cdf[:, -1:]


def row_cdfs(rows: np.ndarray) -> np.ndarray:
    """_cdfs, for a caller of simulate_batch that tabulates its rows once and hands their CDFs back too."""
    return _cdfs(rows)


def residual_rows(target: np.ndarray, draft: np.ndarray) -> np.ndarray:
    """norm(max(0, p - q)) row by row (engine.residual in floats); the target row where nothing is left."""
    rest = np.maximum(target - draft, 0.0)
    mass = rest.sum(axis=1, keepdims=True)
    return np.divide(rest, mass, out=np.array(target, dtype=np.float64), where=mass > 0)


def target_rows_resampler(target: np.ndarray, draft: np.ndarray) -> np.ndarray:
    """A deliberately wrong replacement rule (resample from the target itself), kept as a negative control."""
    return np.array(target, dtype=np.float64)


if TYPE_CHECKING:  # annotations only: evaluating them would import numpy
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
    end = _cdfs(draft)
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
    the round's last token. In a per-thread buffer (see _buffer), valid until this thread draws again."""
    u = _buffer("u", (k + 1, rounds), np.float32)
    rng.random(out=u, dtype=np.float32)  # 2^-24 resolution: far below the sampling noise
    return u


def _search(breaks: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Row r's count of breaks at or below u[r]: np.searchsorted(breaks[r], u[r], side="right") for every r."""
    return np.count_nonzero(breaks <= u[:, None], axis=1)


_scratch = threading.local()


def _buffer(name: str, shape: tuple[int, ...], dtype) -> np.ndarray:
    """A per-thread array kept between calls: allocating arrays this large afresh for every case costs the
    kernel a page fault per 4 KB, more than the arithmetic done in them."""
    store = _scratch.__dict__.setdefault("arrays", {})
    size = math.prod(shape)
    have = store.get((name, np.dtype(dtype)))
    if have is None or have.size < size:
        have = store[(name, np.dtype(dtype))] = np.empty(size, dtype=dtype)
    return have[:size].reshape(shape)


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

    @property
    def first(self) -> np.ndarray:
        """(rounds,) the first committed token."""
        return self.tokens[0]


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
    u = uniforms(rng, k, rounds).astype(np.float64)  # exact, and a copy: the buffer is reused
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
        end = cdfs[0] if cdfs else _cdfs(draft)
        x = token_codes(draft.shape[1], np.intp)[_search(end, here)]
        start = np.where(x > 0, end[index, x - 1], 0.0)
        rejected = here >= accept_edges(start, end[index, x], target[index, x], draft[index, x])
        proposals[going, j] = x
        if rejected.any():
            gone = going[rejected]
            stop[gone] = j
            last[gone] = _draw(replacement_rule(target[rejected], draft[rejected]), u[k, gone])
            going = going[~rejected]
    if going.size:
        bonus = rows_at(k, going, proposals[going, :k])[0]
        last[going] = _draw(bonus, u[k, going])
    position = np.arange(k + 1)[:, None]
    tokens = np.where(position < stop, proposals.T, 0)
    tokens[stop, np.arange(rounds)] = last
    return Batch(tokens, position <= stop)


def _draw(rows: np.ndarray, u: np.ndarray) -> np.ndarray:
    """One token per row, by its CDF: the round's last token."""
    return token_codes(rows.shape[1], np.intp)[_search(_cdfs(rows), u)]


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
        self.exact = [True] * rows  # row r has no AMBIGUOUS cell: its lookups need no settling
        for r in set(row.tolist()):
            self.exact[r] = False

    def settle(self, out: np.ndarray, u: np.ndarray, row: int | np.ndarray) -> None:
        """Replace the AMBIGUOUS entries of out (looked up from u in `row`) by the exact search."""
        if self.exact[row] if np.isscalar(row) else all(self.exact):
            return
        where = np.flatnonzero(out == self.ambiguous)
        if not where.size:
            return
        exact = u[where].astype(np.float64)
        if np.isscalar(row):
            out[where] = self.codes[np.searchsorted(self.breaks[row], exact, side="right")]
            return
        rows = row[where]
        for r in range(len(self.breaks)):
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

    def __init__(self, target_rows: Sequence[Row], draft_rows: Sequence[Row],
                 replacement_rule: ReplacementRule = residual_rows):
        target, draft = _floats(target_rows), _floats(draft_rows)
        self.k, self.vocab = draft.shape[0], target.shape[1]
        self.dtype = np.uint8 if self.vocab < 126 else np.uint16
        self.dead = 128 if self.dtype == np.uint8 else 1 << 15
        self.reject, self.ambiguous = self.vocab, self.dead - 1
        codes = proposal_codes(self.vocab, self.dtype, self.reject)
        self.proposal = _Tables(slice_edges(target[:self.k], draft), codes, self.ambiguous)
        final = _cdfs(np.vstack([replacement_rule(target[:self.k], draft), target[self.k:]]))
        self.final = _Tables(final, token_codes(self.vocab, self.dtype), self.ambiguous)

    def run(self, rounds: int, rng: np.random.Generator, keep: bool = True) -> np.ndarray:
        """codes[i, r]: the token committed at position i of round r (k is the bonus), or DEAD or more.

        Every pass writes into buffers kept per thread (see _buffer); with keep=False the result
        itself is one of them, valid until this thread's next run.
        """
        k, reject, dead = self.k, self.dtype(self.reject), self.dtype(self.dead)
        u = uniforms(rng, k, rounds)
        out = np.empty((k + 1, rounds), dtype=self.dtype) if keep else _buffer("codes", (k + 1, rounds), self.dtype)
        cells = _buffer("cells", (rounds,), np.intp)
        gone = _buffer("gone", (rounds,), self.dtype)  # DEAD once the round has met its rejection
        stop = _buffer("stop", (rounds,), self.dtype)  # proposals accepted: where the round stopped
        flag = _buffer("flag", (rounds,), bool)
        gone.fill(0)
        stop.fill(0)
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
        rows = _buffer("rows", (rounds,), np.intp)
        np.left_shift(stop, CELLS.bit_length() - 1, out=rows, dtype=np.intp)  # stop * CELLS
        np.bitwise_or(cells, rows, out=cells)
        np.take(self.final.flat, cells, out=final, mode="clip")
        self.final.settle(final, u[k], stop)
        # out[i] += (out[i] == REJECT) * (final - REJECT), wrapping around: the replacement where it was rejected
        rejected = _buffer("replaced", (k, rounds), bool)
        np.equal(out[:k], reject, out=rejected)
        moved = _buffer("moved", (k, rounds), self.dtype)
        np.multiply(rejected, final - reject, out=moved)
        np.add(out[:k], moved, out=out[:k])
        np.bitwise_or(final, gone, out=final)
        return out


def simulate_rounds(
    target_rows: Sequence[Row],
    draft_rows: Sequence[Row],
    rounds: int,
    rng: np.random.Generator,
    replacement_rule: ReplacementRule = residual_rows,
) -> Batch:
    """simulate_batch for rows that stay the same in every round, by RoundSimulator's table lookup.

    Given the same Generator, it commits exactly the tokens simulate_batch commits when rows_at hands
    it these rows in every round: the same uniforms, the same breakpoints, the same search.
    """
    sim = RoundSimulator(target_rows, draft_rows, replacement_rule)
    codes = sim.run(rounds, rng)
    reached = codes < sim.dead
    return Batch(np.where(reached, codes, 0).astype(np.intp), reached)


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
    points = error_checkpoints(len(tokens))
    prefix = [np.bincount(tokens[:m], minlength=len(expected)).tolist() for m in points]
    return check_from_counts(position, points, prefix, expected)


def check_from_counts(position: int, points: Sequence[int], prefix: Sequence[Sequence[int]],
                      expected: Sequence[Fraction]) -> PositionCheck:
    """The check from prefix[j][x], token x's count among the first points[j] samples (points: error_checkpoints(n)).

    In plain Python: a handful of tokens and checkpoints cost less this way than as numpy arrays.
    """
    p = [float(x) for x in expected]
    n = int(points[-1])
    counts = [int(c) for c in prefix[-1][:len(p)]]
    if n == 0:  # no round reached this position: nothing to compare, every statistic is undefined
        dof = sum(1 for q in p if q > 0) - 1
        return PositionCheck(position, 0, tuple(counts), (nan,) * len(p), nan, nan, dof, 1.0, ((0, nan),))
    freq = [c / n for c in counts]
    stray = sum(c for c, q in zip(counts, p) if q == 0)
    chi = sum((c - n * q) ** 2 / (n * q) for c, q in zip(counts, p) if q > 0)
    dof = sum(1 for q in p if q > 0) - 1
    pval = 0.0 if stray else chi_square_p_value(chi, dof)
    curve = tuple((int(m), 0.5 * sum(abs(c / m - q) for c, q in zip(row, p))) for m, row in zip(points, prefix))
    return PositionCheck(
        position, n, tuple(counts), tuple(freq), 0.5 * sum(abs(f - q) for f, q in zip(freq, p)),
        chi, dof, pval, curve,
    )


BLOCK = 1024  # rounds per block when finding the round that brings a position its m-th sample
FEW_TOKENS = 16  # up to this many tokens (8-bit codes), every position is counted at once; past it, one by one
_LANES = ((8, 0x00FF00FF00FF00FF), (16, 0x0000FFFF0000FFFF), (32, 0x00000000FFFFFFFF))


def _byte_sums(words: np.ndarray) -> np.ndarray:
    """The sum of the 8 bytes of each uint64, as int64, by adding neighbouring lanes (bytes, then pairs, ...)."""
    for shift, mask in _LANES:
        mask = np.uint64(mask)
        words = (words & mask) + ((words >> np.uint64(shift)) & mask)
    return words.view(np.int64)


def _counts_at_checkpoints(codes: np.ndarray, dead: int, vocab: int) -> list[tuple[list[int], list[list[int]]]]:
    """For each position (row of codes): its checkpoints and the token counts among its first m samples at each.

    A position's samples are the rounds that reached it, in order; its checkpoint m ends with the
    round that brought its m-th sample. Every count comes from 0/1 flags (is token x, for all tokens
    but the last, and reached), eight to a 64-bit word: summing a block's 128 words adds each byte lane
    at most 128, so no lane overflows, and the bytes of the sum are then added up. That gives each
    flag's count per block of BLOCK rounds; a checkpoint's block is found from the reached counts, and
    the part of that block up to the checkpoint's round is flagged and summed the same way, every
    checkpoint's at once. The last token's count is what the reached rounds leave. A few array
    operations per position and per case, not a few per checkpoint and token.
    """
    positions, rounds = codes.shape
    blocks = -(-rounds // BLOCK)
    padded = _buffer("padded", (positions, blocks * BLOCK), codes.dtype)  # whole blocks: the tail reads DEAD
    padded[:, rounds:] = dead
    padded[:, :rounds] = codes
    tokens = np.arange(vocab - 1, dtype=codes.dtype)[:, None]
    flags = _buffer("flags", (vocab, blocks * BLOCK), bool)  # one position at a time, so it stays in cache
    starts = np.arange(0, blocks * BLOCK // 8, BLOCK // 8)
    per_block = np.empty((positions, vocab, blocks), dtype=np.uint64)  # [i, x, b]; x = vocab - 1: reached
    for i in range(positions):
        np.equal(padded[i], tokens, out=flags[:vocab - 1])
        np.less(padded[i], dead, out=flags[vocab - 1])
        np.add.reduceat(flags.view(np.uint64), starts, axis=1, out=per_block[i])
    per_block = _byte_sums(per_block)
    before = np.zeros((positions, vocab, blocks + 1), dtype=np.int64)  # [i, x, b]: count in blocks before b
    np.cumsum(per_block, axis=2, out=before[:, :, 1:])
    totals = before[:, :, -1].tolist()
    points = [error_checkpoints(t[-1]) for t in totals]
    position = np.array([i for i in range(positions) for _ in points[i][:-1]], dtype=np.intp)
    need = np.array([m for p in points for m in p[:-1]], dtype=np.int64)
    reached = before[:, vocab - 1]
    block = np.count_nonzero(reached[position] < need[:, None], axis=1) - 1  # reached[i, b] < m <= reached[i, b + 1]
    inside = padded.reshape(positions, blocks, BLOCK)[position, block]  # (checkpoints, BLOCK) codes
    hits = np.flatnonzero(inside < dead)  # reached rounds in those blocks, block after block
    count = per_block[position, vocab - 1, block]
    column = hits[np.cumsum(count) - count + need - reached[position, block] - 1] - np.arange(len(need)) * BLOCK
    inside = np.where(np.arange(BLOCK) <= column[:, None], inside, dead)  # up to the checkpoint's round
    part = np.equal(inside[:, None, :], tokens)  # (checkpoints, vocab - 1, BLOCK)
    some = (before[position, :vocab - 1, block] + _byte_sums(np.add.reduce(part.view(np.uint64), axis=2))).tolist()
    result, j = [], 0
    for i in range(positions):
        prefix = []
        for m in points[i][:-1]:
            prefix.append([*some[j], m - sum(some[j])])
            j += 1
        prefix.append([*totals[i][:-1], totals[i][-1] - sum(totals[i][:-1])])
        result.append((points[i], prefix))
    return result


def _position_counts(codes: np.ndarray, dead: int, vocab: int) -> tuple[list[int], list[list[int]]]:
    """One position's checkpoints and counts as _counts_at_checkpoints gives them, for codes of any width.

    The checkpoint's round is found from per-block counts of reached rounds, then inside its block;
    each stretch between checkpoints is counted once with np.bincount.
    """
    rounds = len(codes)
    flag = _buffer("reached", (rounds,), bool)
    np.less(codes, codes.dtype.type(dead), out=flag)
    full = rounds // BLOCK * BLOCK
    per_block = np.add.reduce(flag[:full].view(np.uint8).reshape(-1, BLOCK), axis=1, dtype=np.uint16)
    cumulative = np.cumsum(np.append(per_block, np.count_nonzero(flag[full:])), dtype=np.intp)
    points = error_checkpoints(int(cumulative[-1]))
    ends = []
    for m, block in zip(points, np.searchsorted(cumulative, points[:-1]).tolist()):
        before = int(cumulative[block - 1]) if block else 0
        inside = np.flatnonzero(flag[block * BLOCK:(block + 1) * BLOCK])
        ends.append(block * BLOCK + int(inside[m - before - 1]) + 1)
    ends.append(rounds)
    wide = _buffer("wide", codes.shape, np.intp)
    np.copyto(wide, codes)  # np.bincount would convert to a fresh intp array itself
    running, prefix = np.zeros(vocab, dtype=np.intp), []
    for start, end in zip([0, *ends[:-1]], ends):
        running = running + np.bincount(wide[start:end], minlength=dead)[:vocab]
        prefix.append(running.tolist())
    return points, prefix


def convergence(
    target_rows: Sequence[Row],
    draft_rows: Sequence[Row],
    rounds: int,
    rng: np.random.Generator,
    replacement_rule: ReplacementRule = residual_rows,
) -> tuple[PositionCheck, ...]:
    """Per position, the committed token's histogram among rounds that reached it, against the target."""
    sim = RoundSimulator(target_rows, draft_rows, replacement_rule)
    codes = sim.run(rounds, rng, keep=False)
    if sim.vocab <= FEW_TOKENS:
        counts = _counts_at_checkpoints(codes, sim.dead, sim.vocab)
    else:
        counts = [_position_counts(row, sim.dead, sim.vocab) for row in codes]
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
    replacement_rule: ReplacementRule = residual_rows,
    first: int = 0,
) -> tuple[ConvergenceCase, ...]:
    """Every case gets its own child Generator, so adding a case never changes another's draws.

    Case j draws from the seed's child number first + j, so a suite split in two parts (the second
    with first = the length of the first) draws exactly what the whole suite would."""
    children = np.random.default_rng(seed).spawn(first + len(cases))[first:]

    def one(case, rng):
        case_id, label, target, drafts = case
        checks = convergence(target, drafts, rounds, rng, replacement_rule)
        return ConvergenceCase(case_id, label, acceptance_rates(target, drafts), checks)

    from concurrent.futures import ThreadPoolExecutor  # its imports (logging and more) only where it runs

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


def numbers_table(profiles, seed: int, authored_rounds: Sequence[Round] | None = None) -> list[dict]:
    """Per draft profile, the exact figures as fraction strings: the shape of `numbers --json` and numbers.json.
    `authored_rounds`: each draft's authored round under `seed`, when already run (the facts hold them)."""
    out = []
    for i, draft in enumerate(profiles.drafts):
        n = summarize(draft.id, profiles.target, draft.distributions, profiles.cost_model)
        authored = authored_rounds[i] if authored_rounds is not None else run_round(
            profiles.target, draft.distributions, np.random.default_rng(seed), draft.proposals)
        out.append({
            "id": draft.id,
            "accept_rates": [str(a) for a in n.accept_rates],
            "round_length_distribution": [str(p) for p in n.round_length_distribution],
            "expected_tokens": str(n.expected_tokens),
            "speedup": str(n.speedup),
            "frame_count": len(authored.frames),
        })
    return out
