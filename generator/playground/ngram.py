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
HELD_OUT_SHARE = 0.1  # the last tenth of each corpus is held out


@dataclass(frozen=True)
class Corpus:
    """One kind of text, split into training and held-out parts, with its own vocabulary."""

    kind: str
    vocab: str
    train: str
    held_out: str


def split_held_out(text: str) -> tuple[str, str]:
    """The last HELD_OUT_SHARE of the text, cut at a line start so no held-out line was half seen in training."""
    cut = int(len(text) * (1 - HELD_OUT_SHARE))
    newline = text.find("\n", cut)
    cut = len(text) if newline < 0 else newline + 1
    return text[:cut], text[cut:]


def make_corpus(kind: str, text: str) -> Corpus:
    return Corpus(kind, vocabulary(text), *split_held_out(text))


def vocabulary(text: str) -> str:
    """ "".join(sorted(set(text))): every distinct character, by code point (for ASCII text, from a histogram)."""
    if not text.isascii():
        return "".join(sorted(set(text)))
    return (
        np.flatnonzero(np.bincount(np.frombuffer(text.encode("ascii"), dtype=np.uint8)))
        .astype(np.uint8)
        .tobytes()
        .decode("ascii")
    )


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


def gram_keys(codes: np.ndarray, length: int, base: int) -> np.ndarray:
    """Integer key of every window of `length` characters (all known), in text order."""
    n = max(len(codes) - length + 1, 0)
    keys = np.zeros(n, dtype=np.int64)
    for j in range(length):
        keys = keys * base + codes[j : j + n]
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
        grams.update({g: np.unique(gram_keys(codes, g, base), return_counts=True) for g in range(1, order + 1)})
    points = np.frombuffer(vocab.encode("utf-32-le"), dtype=np.uint32)  # each index's character, as UTF-32
    levels = []
    for length in range(order):
        raw_pairs, raw_counts = grams[length + 1]  # (context, next) keys, sorted, and how often each occurs
        ctx_keys, first = np.unique(raw_pairs // base, return_index=True)
        occurrences = np.add.reduceat(raw_counts, first) if len(first) else np.zeros(0, np.int64)
        if length == order - 1:
            pairs, counts = raw_pairs, raw_counts
        else:  # distinct (v, h, w) -> h w, counted: how many characters were seen before h w
            pairs, counts = np.unique(grams[length + 2][0] % base ** (length + 1), return_counts=True)
        level_discounts = discounts(counts)
        ctx = pairs // base
        # every pair's context is one of ctx_keys (h w occurs in the text, so h is followed there)
        at = np.searchsorted(ctx_keys, ctx)
        assert np.array_equal(ctx_keys[at], ctx)
        keep = (occurrences >= (min_count if length else 1))[at]
        ctx, nxt, counts = ctx[keep], pairs[keep] % base, counts[keep]
        uniq, n_followers = np.unique(ctx, return_counts=True)
        levels.append(
            {
                "contexts": points[_digits(uniq, length, base)].tobytes().decode("utf-32-le"),
                "followers": n_followers.tolist(),
                "next": points[nxt].tobytes().decode("utf-32-le"),
                "counts": counts.tolist(),
                "discounts": level_discounts,
            }
        )
    return {"order": order, "min_count": min_count, "levels": levels}


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
        parts += [
            level["contexts"],
            ",".join(map(str, level["followers"])),
            level["next"],
            ",".join(map(str, level["counts"])),
        ]
    return f"{fnv1a_32('|'.join(parts).encode('utf-8')):08x}"


def fnv1a_32(data: bytes) -> int:
    """FNV-1a, 32 bits: h = offset, then h = (h XOR byte) * prime mod 2^32 for each byte."""
    h = 0x811C9DC5  # the offset basis
    for byte in data:
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF  # the prime
    return h


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
        self.base = size = len(vocab)
        self._keys: list[np.ndarray] = []  # per context length, the kept contexts' keys, sorted
        self._contexts: list[tuple[str, np.ndarray]] = []  # and the export's contexts with where each went
        counts = [len(level["followers"]) for level in export["levels"]]
        self._offsets = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)])  # where each level's rows start
        self.table = np.zeros((int(self._offsets[-1]), size))  # every kept context's row, level by level
        parent_rows = np.full((1, size), 1.0 / size)
        for length, level in enumerate(export["levels"]):
            n_ctx = len(level["followers"])
            digits = self._codes(level["contexts"]).reshape(n_ctx, length)
            keys = np.zeros(n_ctx, dtype=np.int64)
            for j in range(length):
                keys = keys * self.base + digits[:, j]
            order = np.argsort(keys, kind="stable")
            in_order = bool((order == np.arange(n_ctx)).all())  # as train_export lists them: rows go straight in
            level_rows = self.table[self._offsets[length] : self._offsets[length + 1]]
            rows = level_rows if in_order else np.empty((n_ctx, size))
            owner = np.repeat(np.arange(n_ctx), level["followers"])  # each follower's context
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
            if length == 0:
                parent = np.zeros(n_ctx, dtype=np.intp)
            else:
                parent = self._places(length - 1, keys % self.base ** (length - 1))
                if (parent < 0).any():
                    raise KeyError(f"a context of length {length} whose suffix is not kept")
            # rows = max(a - D, 0) / A + gamma * parent: the first term is 0 but at the followers, and 0 / A + x
            # is x, so gamma * parent everywhere, then the followers' entries, each sum as written
            np.take(parent_rows, parent, axis=0, out=rows)
            np.multiply(gamma[:, None], rows, out=rows)
            rows[owner, nxt] = np.maximum(raw - d, 0.0) / totals[owner] + rows[owner, nxt]
            if not in_order:
                np.take(rows, order, axis=0, out=level_rows)
            self._keys.append(keys[order])
            self._contexts.append((level["contexts"], np.argsort(order)))  # where each export context's row went
            parent_rows = level_rows

    def _codes(self, text: str) -> np.ndarray:
        """Vocabulary indices of text's characters; a character outside the vocabulary is a KeyError."""
        codes = encode(text, self.vocab)
        if (codes < 0).any():
            raise KeyError(text[int(np.argmax(codes < 0))])
        return codes

    @functools.cached_property
    def _lookup(self) -> list[dict[str, int]]:
        """Per context length, each kept context's row: for row(context), made on its first call."""
        out = []
        for length, (flat, where) in enumerate(self._contexts):
            contexts = [flat[i * length : (i + 1) * length] for i in range(len(where))]
            out.append(dict(zip(contexts, where.tolist())))
        return out

    def with_rows(self, transform) -> Model:
        """This model with transform applied to its table of rows, level by level: for a transform that works
        row by row, rows(codes) then equals transform(self.rows(codes)), for one pass over the kept contexts."""
        other = copy.copy(self)
        other.table = transform(self.table)
        return other

    def row(self, context: str) -> np.ndarray:
        """The model's distribution of the character after context (a string of any length)."""
        for length in range(min(self.order - 1, len(context)), -1, -1):
            tail = context[len(context) - length :] if length else ""
            i = self._lookup[length].get(tail)
            if i is not None:
                return self.table[self._offsets[length] + i]
        raise AssertionError("the empty context is always kept")

    def rows(self, codes: np.ndarray) -> np.ndarray:
        """Rows for a batch of contexts given as vocabulary indices (n, width), right-aligned, -1 padded."""
        return self.table[self.lookup(codes)]

    def lookup(self, codes: np.ndarray) -> np.ndarray:
        """Each context's row in the table: that of its longest kept suffix (one without an unknown character)."""
        n, width = codes.shape
        longest = min(self.order - 1, width)
        tail = codes[:, width - longest :]
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
            place = self._places(length, full[ask] % self.base**length)
            hit = ask[place >= 0]
            found[hit] = self._offsets[length] + place[place >= 0]
            todo[hit] = False
        return found

    def _places(self, length: int, keys: np.ndarray) -> np.ndarray:
        """Where each key stands among the kept contexts of that length, -1 where it is not kept."""
        table = self._keys[length]
        if not len(table):
            return np.full(len(keys), -1, dtype=np.intp)
        place = np.minimum(np.searchsorted(table, keys), len(table) - 1)
        return np.where(table[place] == keys, place, -1)

    def bits_per_char(self, text: str) -> float:
        """Cross-entropy on text, each character predicted from the text before it (unknown characters skipped)."""
        codes = encode(text, self.vocab)
        width = self.order - 1
        padded = np.concatenate([np.full(width, -1), codes])
        windows = (
            np.lib.stride_tricks.sliding_window_view(padded, width)[: len(codes)]
            if width
            else np.zeros((len(codes), 0), np.int64)
        )
        known = codes >= 0
        p = self.table[self.lookup(np.ascontiguousarray(windows[known])), codes[known]]  # without building the rows
        return float(-np.log2(p).mean())


def export_json(export: dict) -> str:
    """The export as the page loads it: compact JSON, every character ASCII (its length is its size in bytes)."""
    return json.dumps(export, separators=(",", ":"))
