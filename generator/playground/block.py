"""Token-wise against block verification on the playground's character models, measured on the same rounds.

Block verification (Sun, Mendlovic, Leviathan, Aharoni, Ro, Beirami and Suresh, "Block Verification Accelerates
Speculative Decoding", arXiv 2403.10444, Algorithm 2) checks the K proposals as a whole. With r_i = p_i(x_i) / q_i(x_i)
the target's over the draft's probability of the i-th proposal, it carries a running weight w_0 = 1,
w_i = min(w_{i-1} r_i, 1), and a chance to stop after i proposals

    h_i = Z_{i+1} / (Z_{i+1} + 1 - w_i),  Z_{i+1} = sum_x max(w_i p_{i+1}(x) - q_{i+1}(x), 0),  h_K = w_K;

it keeps tau = the largest i whose draw eta_i <= h_i (0 when there is none), then draws one more character from
norm(max(w_tau p_{tau+1} - q_{tau+1}, 0)), or from p_{K+1} when all K are kept. Token-wise checking keeps the proposals
up to the first i with eta_i >= min(1, r_i). Both are exact (the output follows the target); a later proposal the
target likes more than the draft can make up for an earlier one it liked less under the block rule, never token-wise.

The rule itself, for many rounds at once in floats, is generator.model.block_batch; the token-wise count there goes
through montecarlo's one float copy of the accept rule. `compare` runs both on the same rounds: the same held-out
contexts, the same draft proposals and the same draws
eta_i, so the difference between the two is the rule's alone. At temperature 0 both models' rows are one-hot: every
weight is 1 until the first proposal that is not the target's top choice and 0 from there, so both keep the same
prefix, round for round.
"""

from __future__ import annotations

import numpy as np

from ..model.block_batch import kept_block, kept_token_wise
from .ngram import Model

BLOCK_K = 5  # proposals per round in the comparison
BLOCK_TEMPERATURES = (0.0, 0.5, 1.0, 1.5)


def one_hot_rows(rows: np.ndarray) -> np.ndarray:
    out = np.zeros_like(rows)
    out[np.arange(len(rows)), np.argmax(rows, axis=1)] = 1.0
    return out


def play_rounds(
    target: Model, draft: Model, contexts: np.ndarray, k: int, temperature: float, rng: np.random.Generator
):
    """K draft proposals per context row and both models' rows along them: (ratios (n, K), target rows p_1..p_K,
    draft rows q_1..q_K, each (n, V)), at the temperature (0: greedy, one-hot rows at each argmax). The target's row
    after the K-th proposal, p_{K+1}, is not made: counting the proposals kept (kept_block) never reads it."""
    from . import tempered  # the page's tempering, once per kept context

    greedy = temperature == 0
    t_model = target.with_rows(one_hot_rows) if greedy else tempered(target, temperature)
    d_model = draft.with_rows(one_hot_rows) if greedy else tempered(draft, temperature)
    cdfs = np.cumsum(d_model.table, axis=1)  # each kept context's cumulative row, made once
    n = contexts.shape[0]
    codes = contexts
    target_rows, draft_rows, picks = [], [], []
    for _ in range(k):
        at = d_model.lookup(codes)
        q = d_model.table[at]
        if greedy:
            x = np.argmax(q, axis=1)
        else:
            cdf = cdfs[at]
            x = np.minimum((cdf < rng.random(n)[:, None] * cdf[:, -1:]).sum(axis=1), q.shape[1] - 1)
        target_rows.append(t_model.rows(codes))
        draft_rows.append(q)
        picks.append(x)
        codes = np.concatenate([codes, x[:, None]], axis=1)
    index = np.arange(n)
    ratios = np.stack([target_rows[i][index, picks[i]] / draft_rows[i][index, picks[i]] for i in range(k)], axis=1)
    return ratios, target_rows, draft_rows


def compare(target: Model, draft: Model, contexts: np.ndarray, seed: list[int], k: int = BLOCK_K) -> list[dict]:
    """Per temperature, the proposals kept per round token-wise and as a block on the same rounds, with counts: the
    totals (for exact means), the sums of squares (for standard errors) and of the paired differences."""
    out = []
    for t_index, temperature in enumerate(BLOCK_TEMPERATURES):
        rng = np.random.default_rng([*seed, t_index])
        ratios, target_rows, draft_rows = play_rounds(target, draft, contexts, k, temperature, rng)
        eta = rng.random(ratios.shape)
        token = kept_token_wise(ratios, eta)
        block = kept_block(ratios, eta, target_rows, draft_rows)
        out.append(
            {
                "temperature": temperature,
                "k": k,
                "rounds": int(len(token)),
                "token_total": int(token.sum()),
                "token_squares": int((token**2).sum()),
                "block_total": int(block.sum()),
                "block_squares": int((block**2).sum()),
                "difference_squares": int(((block - token) ** 2).sum()),
                "same_rounds": int((block == token).sum()),
            }
        )
    return out


def summary(row: dict) -> dict:
    """Means (exact Fractions of the counts) and standard errors (floats) of one temperature's comparison."""
    from fractions import Fraction

    n = row["rounds"]

    def se(total: int, squares: int) -> float:
        mean = total / n
        return float(np.sqrt(max(squares / n - mean * mean, 0.0) * n / (n - 1) / n))

    difference_total = row["block_total"] - row["token_total"]
    return {
        **row,
        "token_mean": Fraction(row["token_total"], n),
        "block_mean": Fraction(row["block_total"], n),
        "token_se": se(row["token_total"], row["token_squares"]),
        "block_se": se(row["block_total"], row["block_squares"]),
        "gain": Fraction(difference_total, n),
        "gain_se": se(difference_total, row["difference_squares"]),
        "identical": row["same_rounds"] == n,
    }
