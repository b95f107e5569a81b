"""Character n-gram models with interpolated modified Kneser-Ney smoothing, trained from counts.

Training produces an *export*: for every context length, the kept contexts and, for each, its
followers with integer counts (raw counts at the longest context, continuation counts below it,
as Kneser-Ney prescribes) and the level's three discounts. The page runs the exported form, and
Python rebuilds every distribution from the very same export rather than from the training
counts, so the two languages share one source of truth. Each probability is a subtract, a max,
a divide, a multiply and an add of doubles, which IEEE 754 rounds identically in numpy and in
JavaScript. playground-core.js can also *train* an export from the published corpus; counting is
exact, so its export must equal this one (a digest of the counts is compared).

A character is a Unicode code point in both languages (Python's str, JavaScript's Array.from).
"""
from __future__ import annotations

import copy
import functools
import json
from dataclasses import dataclass

import numpy as np

PROSE, CODE = "prose", "code"
KINDS = (PROSE, CODE)
HELD_OUT_SHARE = 0.1


@dataclass(frozen=True)
class Corpus:
    """One kind of text, split into training and held-out parts, with its own vocabulary."""

    kind: str
    vocab: str
    train: str
    held_out: str


def split_held_out(text: str, share: float = HELD_OUT_SHARE) -> tuple[str, str]:
    """The last share of the text, cut at a line start so no held-out line was half seen in training."""
    cut = int(len(text) * (1 - share))
    newline = text.find("\n", cut)
    cut = len(text) if newline < 0 else newline + 1
    return text[:cut], text[cut:]


def make_corpus(kind: str, text: str) -> Corpus:
    train, held_out = split_held_out(text)
    return Corpus(kind, vocabulary(text), train, held_out)


def vocabulary(text: str) -> str:
    """"".join(sorted(set(text))): every distinct character, by code point (for ASCII text, from a histogram)."""
    if not text.isascii():
        return "".join(sorted(set(text)))
    return np.flatnonzero(np.bincount(np.frombuffer(text.encode("ascii"), dtype=np.uint8))).astype(np.uint8).tobytes().decode("ascii")


def encode(text: str, vocab: str) -> np.ndarray:
    """Vocabulary indices, -1 for characters the models have never seen (one per code point)."""
    if text.isascii():  # one byte per character: a quarter of the bytes to move
        points = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    else:
        points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    known = np.frombuffer(vocab.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
    table = np.full(int(max(known.max(initial=0), points.max(initial=0))) + 1, -1, dtype=np.int64)
    table[known] = np.arange(len(known))
    return table[points]


def gram_counts(codes: np.ndarray, order: int, base: int) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """For each length g = 1 .. order, np.unique(_gram_keys(codes, g, base), return_counts=True), sooner.

    Each window of g characters is numbered among the distinct windows of g - 1 characters it
    extends: its number times base plus its last character, a histogram index below (distinct
    windows of g - 1) * base, which stays small where base ** g would not. The distinct windows
    come out in the order of their keys (a longer window's key is its prefix's key times base plus
    its last character), so a histogram gives the sorted keys and their counts with no sort.
    """
    grams: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    ids, keys, width = np.zeros(len(codes), np.int64), np.zeros(1, np.int64), 1  # the one window of no character
    for g in range(1, order + 1):
        windows = ids[:len(codes) - g + 1] * base + codes[g - 1:]  # in [0, width * base)
        counts = np.bincount(windows, minlength=width * base)
        found = np.flatnonzero(counts > 0)  # sooner than on the counts themselves
        keys = keys[found // base] * base + found % base
        grams[g] = (keys, counts[found])
        if g < order:
            rank = np.zeros(width * base, dtype=np.int64)
            rank[found] = np.arange(len(found))
            ids, width = rank[windows], len(found)
    return grams


def _gram_keys(codes: np.ndarray, length: int, base: int) -> np.ndarray:
    """Integer key of every window of `length` characters (all known), in text order."""
    n = len(codes) - length + 1
    if n <= 0:
        return np.zeros(0, dtype=np.int64)
    keys = np.zeros(n, dtype=np.int64)
    for j in range(length):
        keys = keys * base + codes[j:j + n]
    return keys


def discounts(counts: np.ndarray) -> list[float]:
    """Modified Kneser-Ney discounts D1, D2, D3+ from the counts-of-counts (Chen and Goodman, 1998).

    Falls back to 0.5, 1, 1.5 when a count-of-counts is zero (tiny corpora); each D is kept within
    (0, its count]. playground-core.js evaluates the same expressions in the same order.
    """
    n1, n2, n3, n4 = (int((counts == c).sum()) for c in (1, 2, 3, 4))
    if min(n1, n2, n3, n4) == 0:
        return [0.5, 1.0, 1.5]
    y = n1 / (n1 + 2 * n2)
    d = [1 - 2 * y * n2 / n1, 2 - 3 * y * n3 / n2, 3 - 4 * y * n4 / n3]
    return [min(max(x, 0.05), float(i + 1)) for i, x in enumerate(d)]


def train_export(text: str, vocab: str, order: int, min_count: int, grams: dict | None = None) -> dict:
    """Counts for context lengths 0 .. order - 1, pruned to contexts seen at least min_count times.

    The longest level holds raw counts c(h, w); each shorter level holds continuation counts
    N1+(. h w), the number of distinct characters seen before h w. A context is kept by how often
    it occurs as a context in the text, which is never more for a longer context than for its
    suffix, so the kept sets are closed under dropping the first character. Two models of one text
    may share `grams`, a cache of the distinct n-grams and their counts (the second then reads no text).
    """
    base = len(vocab)
    grams = {} if grams is None else grams  # (length) -> distinct keys and counts; a caller may share it
    if any(g not in grams for g in range(1, order + 1)):
        codes = encode(text, vocab)
        if (codes < 0).any():
            raise ValueError("the text holds characters outside the vocabulary")
        grams.update(gram_counts(codes, order, base))
    points = np.frombuffer(vocab.encode("utf-32-le"), dtype=np.uint32)  # each index's character, as UTF-32
    levels = []
    for length in range(order):
        raw_pairs, raw_counts = grams[length + 1]  # (context, next) keys, sorted, and how often each occurs
        ctx_keys, first = _runs(raw_pairs // base)
        occurrences = np.add.reduceat(raw_counts, first) if len(first) else np.zeros(0, np.int64)
        if length == order - 1:
            pairs, counts = raw_pairs, raw_counts
        else:  # distinct (v, h, w) -> h w, counted: how many characters were seen before h w
            pairs, counts = _counted(grams[length + 2][0] % base ** (length + 1), base ** (length + 1))
        level_discounts = discounts(counts)
        ctx = pairs // base
        # every pair's context is one of ctx_keys (h w occurs in the text, so h is followed there)
        at = np.searchsorted(ctx_keys, ctx)
        assert np.array_equal(ctx_keys[at], ctx)
        keep = (occurrences >= (min_count if length else 1))[at]
        ctx, nxt, counts = ctx[keep], pairs[keep] % base, counts[keep]
        uniq, starts = _runs(ctx)
        n_followers = np.diff(np.append(starts, len(ctx)))
        levels.append({
            "contexts": points[_digits(uniq, length, base)].tobytes().decode("utf-32-le"),
            "followers": n_followers.tolist(),
            "next": points[nxt].tobytes().decode("utf-32-le"),
            "counts": counts.tolist(),
            "discounts": level_discounts,
        })
    return {"order": order, "min_count": min_count, "levels": levels}


HISTOGRAM_BINS = 1 << 20


def _counted(keys: np.ndarray, bound: int) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(keys, return_counts=True) for keys in [0, bound), the same arrays sooner: a histogram when
    the keys can take few values, else a sort of 32-bit keys when they fit (half the bytes to move)."""
    if bound <= max(HISTOGRAM_BINS, len(keys)):
        counts = np.bincount(keys, minlength=bound)
        found = np.flatnonzero(counts)
        return found.astype(np.int64), counts[found].astype(np.int64)
    if bound <= 1 << 32:
        found, counts = np.unique(keys.astype(np.uint32), return_counts=True)
        return found.astype(np.int64), counts.astype(np.int64)
    return np.unique(keys, return_counts=True)


def _runs(sorted_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of a sorted array and the index where each run of them starts."""
    if not len(sorted_keys):
        return sorted_keys, np.zeros(0, dtype=np.int64)
    starts = np.concatenate([[0], np.flatnonzero(np.diff(sorted_keys)) + 1])
    return sorted_keys[starts], starts


def _digits(keys: np.ndarray, length: int, base: int) -> np.ndarray:
    """(n, length) vocabulary indices of each key, most significant first."""
    out = np.empty((len(keys), length), dtype=np.int64)
    rest = keys.copy()
    for j in range(length - 1, -1, -1):
        rest, out[:, j] = np.divmod(rest, base)
    return out


def count_digest(export: dict) -> str:
    """FNV-1a (32-bit) over the export's counts in a canonical text form; playground-core.js computes the same."""
    parts = [str(export["order"]), str(export["min_count"])]
    for level in export["levels"]:
        parts += [level["contexts"], _commas(level["followers"]), level["next"], _commas(level["counts"])]
    return f"{fnv1a_32('|'.join(parts).encode('utf-8')):08x}"


def _commas(numbers: list[int]) -> str:
    """",".join(map(str, numbers)) for integers, by the JSON encoder's loop (twice as quick; it writes an int
    as str does), and by str where the encoder refuses an element (a numpy integer)."""
    try:
        return json.dumps(numbers, separators=(",", ":"))[1:-1]
    except TypeError:
        return ",".join(map(str, numbers))


FNV_OFFSET, FNV_PRIME = 0x811C9DC5, 0x01000193


@functools.cache
def _fnv_step() -> list:
    """[k][v]: bit k of v XOR bit k of (v mod 2^k) * FNV_PRIME, for bytes v (see fnv1a_32)."""
    return [np.array([((v >> k) ^ (((v & ((1 << k) - 1)) * FNV_PRIME) >> k)) & 1 for v in range(256)], np.uint8)
            for k in range(8)]


def fnv1a_32(data: bytes) -> int:
    """FNV-1a, 32 bits: h = offset, then h = (h XOR byte) * prime mod 2^32 for each byte; the same number as
    that loop gives, from a few passes of numpy over the bytes instead of a Python step per byte.

    XOR with a byte changes only the low 8 bits of h: h XOR b = h + d with d = (l XOR b) - l, l = h mod 256.
    So after n bytes h = offset * prime^n + sum_i d_i * prime^(n - i) mod 2^32, a few vectorised dot products once the
    low bytes l_i are known. They follow l_(i+1) = (l_i XOR b_i) * prime mod 256, and as the prime is odd,
    bit k of that product is bit k of l_i XOR b_i flipped by a function of their lower bits alone
    (_fnv_step): given the bits below it, bit k of every l_i is a running XOR. Eight passes give all eight.
    """
    b = np.frombuffer(data, dtype=np.uint8)
    n = len(b)
    if not n:
        return FNV_OFFSET
    low = np.zeros(n, dtype=np.uint8)  # l_i, filled in bit by bit
    bits, v, step = (np.empty(n, dtype=np.uint8) for _ in range(3))
    for k in range(8):
        np.bitwise_xor(low, b, out=v)
        np.take(_fnv_step()[k], v, out=step)  # bit k of l_(i+1) is bit k of l_i XOR step_i
        bits[0] = (FNV_OFFSET >> k) & 1
        np.bitwise_xor.accumulate(step[:-1], out=bits[1:])
        if bits[0]:
            np.bitwise_xor(bits[1:], 1, out=bits[1:])
        np.left_shift(bits, k, out=bits)
        np.bitwise_or(low, bits, out=low)
    np.bitwise_xor(low, b, out=v)  # d_i = v_i - l_i
    powers = _fnv_powers()
    block = len(powers)
    total, scale = 0, 1  # scale: prime^(bytes after the block), mod 2^32
    for end in range(n, 0, -block):  # block by block from the end, in 64-bit integers that wrap (2^32 divides 2^64)
        start = max(end - block, 0)
        tail = powers[block - (end - start):]
        total += scale * (int(np.dot(v[start:end].astype(np.uint64), tail)) - int(np.dot(low[start:end].astype(np.uint64), tail)))
        scale = scale * pow(FNV_PRIME, block, 1 << 32) & 0xFFFFFFFF
    return (FNV_OFFSET * pow(FNV_PRIME, n, 1 << 32) + total) & 0xFFFFFFFF


@functools.cache
def _fnv_powers(block: int = 1 << 15) -> np.ndarray:
    """prime^block .. prime^1 mod 2^64, for fnv1a_32's sums."""
    return np.cumprod(np.full(block, FNV_PRIME, dtype=np.uint64))[::-1].copy()


class Model:
    """Next-character distributions computed from an export, never from training counts.

    Rows are built level by level: a kept context's row is
    max(a(w) - D(a(w)), 0) / A + gamma * parent(w), with a its (raw or continuation) counts,
    A their sum, D the level's discount for a count of 1, 2 or 3+, gamma = (D1 n1 + D2 n2 + D3 n3) / A
    (n_i the number of followers with that count), and parent the row of the context one
    character shorter; the empty context's parent is the uniform row. An unseen context backs off
    to its longest kept suffix. playground-core.js performs the same operations in the same order.
    """

    def __init__(self, export: dict, vocab: str) -> None:
        self.vocab = vocab
        self.order = int(export["order"])
        self.base = len(vocab)
        size = self.base
        self._keys: list[np.ndarray] = []  # per context length, the kept contexts' keys, sorted
        self._contexts: list[tuple[str, np.ndarray]] = []  # and the export's contexts with where each went
        self._dense: dict[int, np.ndarray] = {}  # per short context length, key -> its place (or -1): see _places
        self._by_prefix: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # and per longer one: _places_by_prefix
        counts = [len(level["followers"]) for level in export["levels"]]
        self._offsets = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)])  # where each level's rows start
        self._table = np.zeros((int(self._offsets[-1]), size))  # every kept context's row, level by level
        parent_rows = np.full((1, size), 1.0 / size)
        for length, level in enumerate(export["levels"]):
            n_ctx = len(level["followers"])
            digits = self._codes(level["contexts"]).reshape(n_ctx, length)
            keys = np.zeros(n_ctx, dtype=np.int64)
            for j in range(length):
                keys = keys * self.base + digits[:, j]
            order = np.argsort(keys, kind="stable")
            in_order = bool((order == np.arange(n_ctx)).all())  # as train_export lists them: rows go straight in
            level_rows = self._table[self._offsets[length]:self._offsets[length + 1]]
            rows = level_rows if in_order else np.empty((n_ctx, size))
            followers = np.asarray(level["followers"], dtype=np.int64)
            owner = np.repeat(np.arange(n_ctx), followers)
            nxt = self._codes(level["next"])
            raw = np.asarray(level["counts"], dtype=np.float64)
            d1, d2, d3 = (float(x) for x in level["discounts"])
            d = np.where(raw == 1, d1, np.where(raw == 2, d2, d3))
            totals = np.zeros(n_ctx)
            np.add.at(totals, owner, raw)  # sequential in text order: the same sums as JavaScript's loop
            n1 = np.bincount(owner, weights=(raw == 1), minlength=n_ctx)
            n2 = np.bincount(owner, weights=(raw == 2), minlength=n_ctx)
            n3 = np.bincount(owner, weights=(raw >= 3), minlength=n_ctx)
            gamma = (d1 * n1 + d2 * n2 + d3 * n3) / totals
            # the parent: the context without its first character, kept one level down (the kept sets are
            # suffix-closed); the empty context's parent is the uniform row
            parent = (np.zeros(n_ctx, dtype=np.int64) if length == 0
                      else self._find(length - 1, keys % self.base ** (length - 1)))
            # rows = max(a - D, 0) / A + gamma * parent: the first term is 0 but at the followers, and 0 / A + x
            # is x, so gamma * parent everywhere, then the followers' entries, each sum as written
            np.take(parent_rows, parent, axis=0, out=rows)
            np.multiply(gamma[:, None], rows, out=rows)
            rows[owner, nxt] = np.maximum(raw - d, 0.0) / totals[owner] + rows[owner, nxt]
            if not in_order:
                np.take(rows, order, axis=0, out=level_rows)
            where = np.empty(n_ctx, dtype=np.int64)
            where[order] = np.arange(n_ctx)
            self._keys.append(keys[order])
            self._contexts.append((level["contexts"], where))
            parent_rows = level_rows

    def _codes(self, text: str) -> np.ndarray:
        """Vocabulary indices of text's characters; a character outside the vocabulary is a KeyError."""
        codes = encode(text, self.vocab)
        if (codes < 0).any():
            raise KeyError(text[int(np.argmax(codes < 0))])
        return codes

    def _find(self, length: int, keys: np.ndarray) -> np.ndarray:
        """Where each of keys stands among the kept contexts of that length; a key not kept is a KeyError."""
        table = self._keys[length]
        at = np.minimum(np.searchsorted(table, keys), max(len(table) - 1, 0))
        if len(keys) and not (len(table) and np.array_equal(table[at], keys)):
            raise KeyError(f"a context of length {length + 1} whose suffix is not kept")
        return at

    @functools.cached_property
    def _lookup(self) -> list[dict[str, int]]:
        """Per context length, each kept context's row: for row(context), made on its first call."""
        out = []
        for length, (flat, where) in enumerate(self._contexts):
            contexts = [flat[i * length:(i + 1) * length] for i in range(len(where))]
            out.append(dict(zip(contexts, where.tolist())))
        return out

    def with_rows(self, transform) -> Model:
        """This model with transform applied to its table of rows, level by level: for a transform that works
        row by row, rows(codes) then equals transform(self.rows(codes)), for one pass over the kept contexts."""
        other = copy.copy(self)
        other._table = transform(self._table)
        return other

    def row(self, context: str) -> np.ndarray:
        """The model's distribution of the character after context (a string of any length)."""
        for length in range(min(self.order - 1, len(context)), -1, -1):
            tail = context[len(context) - length:] if length else ""
            i = self._lookup[length].get(tail)
            if i is not None:
                return self._table[self._offsets[length] + i]
        raise AssertionError("the empty context is always kept")

    def rows(self, codes: np.ndarray) -> np.ndarray:
        """Rows for a batch of contexts given as vocabulary indices (n, width), right-aligned, -1 padded."""
        return self._table[self.lookup(codes)]

    def probabilities(self, codes: np.ndarray, nexts: np.ndarray) -> np.ndarray:
        """rows(codes)[i, nexts[i]] for every i, without building the rows."""
        return self._table[self.lookup(codes), nexts]

    @property
    def table(self) -> np.ndarray:
        """Every kept context's row: rows(codes) is table[lookup(codes)]."""
        return self._table

    def lookup(self, codes: np.ndarray) -> np.ndarray:
        """Each context's row in the table: that of its longest kept suffix (one without an unknown character)."""
        n, width = codes.shape
        longest = min(self.order - 1, width)
        tail = codes[:, width - longest:]
        trailing = np.zeros(n, dtype=np.intp)  # how many characters at the end are known
        going = np.ones(n, dtype=bool)
        for j in range(longest - 1, -1, -1):
            going &= tail[:, j] >= 0
            trailing += going
        full = np.zeros(n, dtype=np.int64)
        for j in range(longest):
            full = full * self.base + np.maximum(tail[:, j], 0)
        found = np.zeros(n, dtype=np.intp)  # row 0 of the table: the empty context's
        todo = np.ones(n, dtype=bool)
        for length in range(longest, 0, -1):
            ask = np.flatnonzero(todo & (trailing >= length))
            place = self._places(length, full[ask] % self.base ** length)
            hit = ask[place >= 0]
            found[hit] = self._offsets[length] + place[place >= 0]
            todo[hit] = False
        return found

    DENSE = 1 << 20  # context lengths with at most this many possible keys look theirs up in an array

    def _places(self, length: int, keys: np.ndarray) -> np.ndarray:
        """Where each key stands among the kept contexts of that length, -1 where it is not kept."""
        table = self._keys[length]
        if self.base ** length <= self.DENSE:
            dense = self._dense.get(length)
            if dense is None:
                dense = self._dense[length] = np.full(self.base ** length, -1, dtype=np.intp)
                dense[table] = np.arange(len(table))
            return dense[keys]
        if self.base ** (length - 1) <= self.DENSE:
            return self._places_by_prefix(length, keys)
        if not len(table):
            return np.full(len(keys), -1, dtype=np.intp)
        place = np.minimum(np.searchsorted(table, keys), len(table) - 1)
        return np.where(table[place] == keys, place, -1)

    def _places_by_prefix(self, length: int, keys: np.ndarray) -> np.ndarray:
        """_places for a length too long for one array: the contexts sharing their first length - 1 characters
        are neighbours in the sorted keys, so an array over those prefixes gives the prefix's rank, and an
        array over (rank, last character) the place."""
        tables = self._by_prefix.get(length)
        if tables is None:
            table = self._keys[length]
            prefixes, first = _runs(table // self.base)
            by_prefix = np.full(self.base ** (length - 1), -1, dtype=np.intp)
            by_prefix[prefixes] = np.arange(len(prefixes))
            rank = np.repeat(np.arange(len(prefixes)), np.diff(np.append(first, len(table))))
            by_last = np.full(len(prefixes) * self.base, -1, dtype=np.intp)
            by_last[rank * self.base + table % self.base] = np.arange(len(table))
            tables = self._by_prefix[length] = (by_prefix, by_last)
        by_prefix, by_last = tables
        rank = by_prefix[keys // self.base]
        place = np.full(len(keys), -1, dtype=np.intp)
        ok = np.flatnonzero(rank >= 0)
        place[ok] = by_last[rank[ok] * self.base + keys[ok] % self.base]
        return place

    def bits_per_char(self, text: str) -> float:
        """Cross-entropy on text, each character predicted from the text before it (unknown characters skipped)."""
        codes = encode(text, self.vocab)
        width = self.order - 1
        padded = np.concatenate([np.full(width, -1), codes])
        windows = (np.lib.stride_tricks.sliding_window_view(padded, width)[:len(codes)] if width
                   else np.zeros((len(codes), 0), np.int64))
        known = codes >= 0
        p = self.probabilities(np.ascontiguousarray(windows[known]), codes[known])
        return float(-np.log2(p).mean())


def export_json(export: dict) -> str:
    """The export as the page loads it: compact JSON, every character ASCII (its length is its size in bytes)."""
    return json.dumps(export, separators=(",", ":"))
