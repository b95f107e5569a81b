"""Block verification (Sun et al., arXiv 2403.10444, Algorithm 2) for many rounds at once, in floats.

With r_i = p_i(x_i) / q_i(x_i) for the i-th of K proposals, a running weight w_0 = 1, w_i = min(w_{i-1} r_i, 1), and
the chance to stop after i proposals h_i = Z_{i+1} / (Z_{i+1} + 1 - w_i), Z_{i+1} = sum_x max(w_i p_{i+1}(x) -
q_{i+1}(x), 0), h_K = w_K: a round keeps tau = the largest i whose draw eta_i <= h_i (0 when none), then draws one more
token from norm(max(w_tau p_{tau+1} - q_{tau+1}, 0)), or from p_{K+1} after all K. Rows are arrays (rounds, vocab),
one per position. The token-wise count beside it goes through montecarlo.accept_edges, the accept rule's one float
copy. The playground measures both on its character models (generator.playground.block); an exact Fraction form of
the block rule belongs beside engine.py, and this one should then be pinned to it.
"""

from __future__ import annotations

import numpy as np

from .montecarlo import accept_edges


def kept_token_wise(ratios: np.ndarray, eta: np.ndarray) -> np.ndarray:
    """Proposals kept per round by the token-wise rule: the leading run whose draws fall below the accept chance,
    montecarlo.accept_edges on a slice [0, 1) of width 1 (what min(1, r_i) is, from the rule's one float copy)."""
    ones = np.ones_like(ratios)
    chance = accept_edges(np.zeros_like(ratios), ones, ratios, ones)
    passed = (ratios >= 1) | (eta < chance)
    return np.cumprod(passed, axis=1).sum(axis=1)


def stop_chances(ratios: np.ndarray, target: list[np.ndarray], draft: list[np.ndarray]) -> np.ndarray:
    """h_1 .. h_K per round (n, K) from the proposals' ratios r (n, K), the target's rows p_1 .. p_{K+1} and the
    draft's q_1 .. q_K, each (n, V). Where Z + 1 - w is 0 (w = 1 and p = q next), h is 1: nothing is lost there."""
    n, k = ratios.shape
    weights = np.ones(n)
    h = np.empty((n, k))
    for i in range(k):
        weights = np.minimum(weights * ratios[:, i], 1.0)
        if i == k - 1:
            h[:, i] = weights
            break
        z = np.maximum(weights[:, None] * target[i + 1] - draft[i + 1], 0.0).sum(axis=1)
        denominator = z + 1.0 - weights
        h[:, i] = np.where(denominator > 0, z / np.where(denominator > 0, denominator, 1.0), 1.0)
    return h


def kept_block(ratios: np.ndarray, eta: np.ndarray, target: list[np.ndarray], draft: list[np.ndarray]) -> np.ndarray:
    """Proposals kept per round by block verification: the largest i with eta_i <= h_i, or 0."""
    h = stop_chances(ratios, target, draft)
    k = ratios.shape[1]
    hits = eta <= h
    last = k - np.argmax(hits[:, ::-1], axis=1)  # the largest i (1-based) with a hit ...
    return np.where(hits.any(axis=1), last, 0)  # ... or none


def next_rows(ratios: np.ndarray, kept: np.ndarray, target: list[np.ndarray], draft: list[np.ndarray]) -> np.ndarray:
    """The distribution each round draws its one further character from (n, V): norm(max(w_tau p_{tau+1} -
    q_{tau+1}, 0)) after tau < K kept proposals, p_{K+1} after all K (the target's own row where that excess has no
    mass)."""
    n, k = ratios.shape
    weights = np.ones((n, k))
    w = np.ones(n)
    for i in range(k):
        w = np.minimum(w * ratios[:, i], 1.0)
        weights[:, i] = w
    out = np.empty_like(target[0])
    for tau in range(k + 1):
        rows = kept == tau
        if not rows.any():
            continue
        if tau == k:
            out[rows] = target[k][rows]
            continue
        w_tau = weights[rows, tau - 1] if tau else np.ones(int(rows.sum()))
        excess = np.maximum(w_tau[:, None] * target[tau][rows] - draft[tau][rows], 0.0)
        mass = excess.sum(axis=1, keepdims=True)
        out[rows] = np.where(mass > 0, excess / np.where(mass > 0, mass, 1.0), target[tau][rows])
    return out
