"""Character n-gram models: trained from counts, exported compactly, and rebuilt from that export.

The page runs the exported form, so Python rebuilds every distribution from the very same export
rather than from the training counts: the two languages then share one source of truth. Smoothing
is interpolated Witten-Bell, chosen because its recursion needs nothing beyond the raw follower
counts of each kept context, and because each probability is one multiply, one add and one divide
of doubles, which IEEE 754 rounds identically in numpy and in JavaScript.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

PROSE, CODE = "prose", "code"
KINDS = (PROSE, CODE)
HELD_OUT_SHARE = 0.1


@dataclass(frozen=True)
class Corpus:
    vocab: str
    train: dict[str, str]
    held_out: dict[str, str]


def split_held_out(text: str, share: float = HELD_OUT_SHARE) -> tuple[str, str]:
    """The last share of the text, cut at a line start so no held-out line was half seen in training."""
    cut = int(len(text) * (1 - share))
    newline = text.find("\n", cut)
    cut = len(text) if newline < 0 else newline + 1
    return text[:cut], text[cut:]


def load_corpus(corpus_dir: Path) -> Corpus:
    train, held_out = {}, {}
    for kind in KINDS:
        text = (Path(corpus_dir) / f"{kind}.txt").read_text(encoding="utf-8")
        train[kind], held_out[kind] = split_held_out(text)
    vocab = "".join(sorted(set(train[PROSE] + train[CODE] + held_out[PROSE] + held_out[CODE])))
    return Corpus(vocab, train, held_out)


def encode(text: str, vocab: str) -> np.ndarray:
    """Vocabulary indices, -1 for characters the models have never seen."""
    index = {c: i for i, c in enumerate(vocab)}
    return np.array([index.get(c, -1) for c in text], dtype=np.int64)


def _context_keys(codes: np.ndarray, ends: np.ndarray, length: int, base: int) -> np.ndarray:
    """Integer keys of the `length` characters before each end index; -1 where any is unknown or missing."""
    keys = np.zeros(len(ends), dtype=np.int64)
    valid = ends >= length
    for j in range(length, 0, -1):
        pos = ends - j
        c = np.where(pos >= 0, codes[np.maximum(pos, 0)], -1)
        valid &= c >= 0
        keys = keys * base + np.maximum(c, 0)
    return np.where(valid, keys, -1)


def train_export(texts: list[str], vocab: str, order: int, min_count: int) -> dict:
    """Follower counts of every context seen at least min_count times, as compact JSON-ready data.

    Keeping a context keeps all of its followers with their exact counts, and every suffix of a
    kept context is seen at least as often, so the pruned tables stay closed under backing off.
    """
    base = len(vocab)
    levels = []
    for length in range(order):
        keys_all, nexts_all = [], []
        for text in texts:
            codes = encode(text, vocab)
            ends = np.arange(len(codes))
            keys = _context_keys(codes, ends, length, base) if length else np.zeros(len(codes), np.int64)
            ok = (keys >= 0) & (codes >= 0)
            keys_all.append(keys[ok])
            nexts_all.append(codes[ok])
        keys = np.concatenate(keys_all)
        nexts = np.concatenate(nexts_all)
        pairs, counts = np.unique(keys * base + nexts, return_counts=True)
        ctx, nxt = pairs // base, pairs % base
        uniq, first, n_followers = np.unique(ctx, return_index=True, return_counts=True)
        seen = np.add.reduceat(counts, first)
        keep_ctx = seen >= (min_count if length else 1)
        keep_pair = np.repeat(keep_ctx, n_followers)
        contexts = "".join(_decode_key(int(k), length, vocab) for k in uniq[keep_ctx])
        levels.append({
            "contexts": contexts,
            "followers": [int(n) for n in n_followers[keep_ctx]],
            "next": "".join(vocab[i] for i in nxt[keep_pair]),
            "counts": [int(c) for c in counts[keep_pair]],
        })
    return {"order": order, "min_count": min_count, "levels": levels}


def _decode_key(key: int, length: int, vocab: str) -> str:
    base = len(vocab)
    chars = []
    for _ in range(length):
        key, c = divmod(key, base)
        chars.append(vocab[c])
    return "".join(reversed(chars))


class Model:
    """Next-character distributions computed from an export, never from training counts.

    Rows are built level by level: a context's row is (count + T * parent) / (total + T), where
    T is its number of distinct followers and parent is the row of the context one character
    shorter; the empty context's parent is the uniform row. An unseen context backs off to its
    longest kept suffix. playground-core.js performs the same operations in the same order.
    """

    def __init__(self, export: dict, vocab: str) -> None:
        self.vocab = vocab
        self.order = int(export["order"])
        self.base = len(vocab)
        index = {c: i for i, c in enumerate(vocab)}
        size = self.base
        self._keys: list[np.ndarray] = []
        self._rows: list[np.ndarray] = []
        self._lookup: list[dict[str, int]] = []
        parent_rows = np.full((1, size), 1.0 / size)
        for length, level in enumerate(export["levels"]):
            n_ctx = len(level["followers"])
            contexts = [level["contexts"][i * length:(i + 1) * length] for i in range(n_ctx)]
            followers = np.asarray(level["followers"], dtype=np.int64)
            owner = np.repeat(np.arange(n_ctx), followers)
            nxt = np.array([index[c] for c in level["next"]], dtype=np.int64)
            counts = np.zeros((n_ctx, size))
            counts[owner, nxt] = np.asarray(level["counts"], dtype=np.float64)
            totals = np.bincount(owner, weights=np.asarray(level["counts"], dtype=np.float64), minlength=n_ctx)
            distinct = followers.astype(np.float64)
            if length == 0:
                parent = parent_rows[np.zeros(n_ctx, dtype=np.int64)]
            else:
                parent_index = self._lookup[length - 1]
                parent = parent_rows[[parent_index[c[1:]] for c in contexts]]
            rows = (counts + distinct[:, None] * parent) / (totals + distinct)[:, None]
            keys = np.array([self._key(c, index) for c in contexts], dtype=np.int64)
            order = np.argsort(keys)
            self._keys.append(keys[order])
            self._rows.append(rows[order])
            self._lookup.append({c: int(np.searchsorted(keys[order], k)) for c, k in zip(contexts, keys)})
            parent_rows = self._rows[-1]

    def _key(self, context: str, index: dict[str, int]) -> int:
        key = 0
        for c in context:
            key = key * self.base + index[c]
        return key

    def row(self, context: str) -> np.ndarray:
        """The model's distribution of the character after context (a string of any length)."""
        for length in range(min(self.order - 1, len(context)), -1, -1):
            tail = context[len(context) - length:] if length else ""
            i = self._lookup[length].get(tail)
            if i is not None:
                return self._rows[length][i]
        raise AssertionError("the empty context is always kept")

    def rows(self, codes: np.ndarray) -> np.ndarray:
        """Rows for a batch of contexts given as vocabulary indices (n, width), right-aligned, -1 padded."""
        n, width = codes.shape
        out = np.empty((n, self.base))
        todo = np.ones(n, dtype=bool)
        for length in range(min(self.order - 1, width), -1, -1):
            if not todo.any():
                break
            if length == 0:
                out[todo] = self._rows[0][0]
                break
            tail = codes[:, width - length:]
            valid = todo & (tail >= 0).all(axis=1)
            keys = np.zeros(n, dtype=np.int64)
            for j in range(length):
                keys = keys * self.base + np.maximum(tail[:, j], 0)
            table = self._keys[length]
            pos = np.minimum(np.searchsorted(table, keys), len(table) - 1)
            hit = valid & (table[pos] == keys) if len(table) else np.zeros(n, dtype=bool)
            out[hit] = self._rows[length][pos[hit]]
            todo &= ~hit
        return out

    def bits_per_char(self, text: str) -> float:
        """Cross-entropy on text, each character predicted from the text before it."""
        codes = encode(text, self.vocab)
        width = self.order - 1
        padded = np.concatenate([np.full(width, -1), codes])
        windows = np.lib.stride_tricks.sliding_window_view(padded, width)[:len(codes)] if width else np.zeros((len(codes), 0), np.int64)
        rows = self.rows(np.ascontiguousarray(windows))
        p = rows[np.arange(len(codes)), codes]
        return float(-np.log2(p).mean())


def export_size(export: dict) -> int:
    import json
    return len(json.dumps(export, separators=(",", ":")))


