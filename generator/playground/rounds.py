"""Rounds of speculative sampling on the playground's models, many at once: held-out contexts as prompts, the
models tempered once per kept context, and the site's one vectorised simulator (montecarlo.simulate_batch) fed
rows read from the models' tables in place."""

from __future__ import annotations

import numpy as np

from ..model.montecarlo import row_cdfs, simulate_batch
from .ngram import Model, encode
from .sampler import temper_rows


def measurement_contexts(text: str, vocab: str, width: int, rounds: int, rng: np.random.Generator) -> np.ndarray:
    """The width characters before each of `rounds` random held-out positions, as round prompts."""
    codes = encode(text, vocab)
    ends = rng.integers(width, len(codes), size=rounds)
    return np.stack([codes[e - width : e] for e in ends])


def simulate(
    target: Model,
    draft: Model,
    contexts: np.ndarray,
    k: int,
    temperature: float,
    rng: np.random.Generator,
    replacement_rule=None,
):
    """Rounds from each context row through the site's one vectorised simulator (montecarlo.simulate_batch)."""
    return simulate_tempered(
        tempered(target, temperature), tempered(draft, temperature), contexts, k, rng, replacement_rule
    )


def tempered(model: Model, temperature: float) -> Model:
    """The model whose rows are temper_rows of its own: tempered once per kept context, not once per round."""
    return model.with_rows(lambda rows: temper_rows(rows, temperature))


def simulate_tempered(
    target: Model,
    draft: Model,
    contexts: np.ndarray,
    k: int,
    rng: np.random.Generator,
    replacement_rule=None,
    memo: dict | None = None,
):
    """simulate for models already tempered. Calls with the same models and contexts may share a memo: the
    draft's CDFs, and the rows at the first position, where every round starts from its context alone."""
    memo = {} if memo is None else memo
    if "draft_cdfs" not in memo:
        memo["draft_cdfs"] = row_cdfs(draft.table)  # once per kept context, not once per round

    def rows_at(j: int, going: np.ndarray, proposals: np.ndarray):
        if j == 0 and j < k and "first" in memo:
            return memo["first"]
        ctx = np.concatenate([contexts[going], proposals], axis=1)
        if j == k:
            return target.rows(ctx), None
        at = draft.lookup(ctx)
        rows = TableRows(target.table, target.lookup(ctx)), TableRows(draft.table, at), memo["draft_cdfs"][at]
        if j == 0:
            rows[2].flags.writeable = False  # shared by every call: nobody may write into it
            memo["first"] = rows
        return rows

    kwargs = {} if replacement_rule is None else {"replacement_rule": replacement_rule}
    return simulate_batch(rows_at, k, contexts.shape[0], rng, **kwargs)


class TableRows:
    """table[at], read without copying it: the entries simulate_batch reads (rows[index, tokens]) and the
    whole rows of the rounds it asks for (rows[mask]); anything else gets the full array (np.asarray)."""

    def __init__(self, table: np.ndarray, at: np.ndarray) -> None:
        self.table, self.at = table, at
        self.shape = (len(at), table.shape[1])

    def __getitem__(self, key):
        if isinstance(key, tuple):
            rows, columns = key
            return self.table[self.at[rows], columns]
        return self.table[self.at[key]]

    def __array__(self, dtype=None, copy=None):
        rows = self.table[self.at]
        return rows if dtype is None else rows.astype(dtype)
