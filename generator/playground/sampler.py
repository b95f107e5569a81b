"""Speculative rounds between the two character models, one at a time and many at once.

The rule is generator.engine's, carried over to floats because the models' probabilities are
floats: accept a proposal with probability min(1, p_target / p_draft), on rejection draw from
norm(max(0, p_target - p_draft)) and drop the later proposals, and draw a bonus from the target
when every proposal survives. As in the engine, an accept test consumes a uniform only when its
probability lies strictly between 0 and 1, so a list of uniforms fixes a round completely; that
list is what the parity vectors hand to playground-core.js.

Temperature 0 means greedy verification: the draft proposes its argmax, a proposal survives iff it
is the target's argmax, and both replacement and bonus are the target's argmax, so the output is
the target's own greedy output, character for character.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..engine import draw  # the same cumulative walk: exact on Fractions, plain on floats
from .ngram import Model

ACCEPTED, REJECTED, DROPPED = "accepted", "rejected", "dropped"


# --- one round, in plain floats, operation for operation what playground-core.js does -----------


def apply_temperature(row: Sequence[float], temperature: float) -> list[float]:
    """p^(1/T) renormalised; the sum runs left to right so that JavaScript adds in the same order."""
    if temperature <= 0:
        return list(row)
    inverse = 1.0 / temperature
    weights = list(row) if temperature == 1 else [p ** inverse for p in row]
    total = 0.0
    for w in weights:
        total += w
    return [w / total for w in weights]


def argmax(row: Sequence[float]) -> int:
    """The first index of the largest value, the tie rule both languages use."""
    best = 0
    for i in range(1, len(row)):
        if row[i] > row[best]:
            best = i
    return best


def residual(target: Sequence[float], draft: Sequence[float]) -> list[float]:
    """norm(max(0, target - draft)); the target itself if rounding left no excess anywhere."""
    rest = [t - d if t > d else 0.0 for t, d in zip(target, draft)]
    mass = 0.0
    for r in rest:
        mass += r
    if mass <= 0:
        return list(target)
    return [r / mass for r in rest]


def distribution(model: Model, context: str, temperature: float) -> list[float]:
    return apply_temperature(model.row(context).tolist(), temperature)


@dataclass
class RoundResult:
    proposals: str
    verdicts: list[str]
    accept_draws: list[float | None]  # per verified position, None where the verdict was certain
    replacement: str | None
    bonus: str | None
    committed: str
    draws: list[float] = field(default_factory=list)
    draft_rows: list[list[float]] = field(default_factory=list, repr=False)
    target_rows: list[list[float]] = field(default_factory=list, repr=False)


def speculative_round(
    target: Model,
    draft: Model,
    context: str,
    k: int,
    temperature: float,
    next_uniform: Callable[[], float],
) -> RoundResult:
    """One round: k draft proposals, then the target's verdicts, with every uniform recorded."""
    vocab = target.vocab
    greedy = temperature == 0
    used: list[float] = []

    def uniform() -> float:
        u = float(next_uniform())
        used.append(u)
        return u

    proposals = ""
    draft_rows = []
    for _ in range(k):
        row = distribution(draft, context + proposals, temperature)
        draft_rows.append(row)
        proposals += vocab[argmax(row) if greedy else draw(row, uniform())]
    target_rows = [distribution(target, context + proposals[:j], temperature) for j in range(k + 1)]

    verdicts: list[str] = []
    accept_draws: list[float | None] = []
    for j, ch in enumerate(proposals):
        t_row, d_row = target_rows[j], draft_rows[j]
        x = vocab.index(ch)
        u = None
        if greedy:
            ok = x == argmax(t_row)
        elif t_row[x] >= d_row[x]:
            ok = True
        elif t_row[x] <= 0:
            ok = False
        else:
            u = uniform()
            ok = u < t_row[x] / d_row[x]
        accept_draws.append(u)
        if ok:
            verdicts.append(ACCEPTED)
            continue
        verdicts.append(REJECTED)
        verdicts.extend([DROPPED] * (k - j - 1))
        fix = argmax(t_row) if greedy else draw(residual(t_row, d_row), uniform())
        replacement = vocab[fix]
        return RoundResult(proposals, verdicts, accept_draws, replacement, None,
                           proposals[:j] + replacement, used, draft_rows, target_rows)
    last = target_rows[k]
    bonus = vocab[argmax(last) if greedy else draw(last, uniform())]
    return RoundResult(proposals, verdicts, accept_draws, None, bonus, proposals + bonus,
                       used, draft_rows, target_rows)


def generate(target: Model, draft: Model, prompt: str, length: int, k: int, temperature: float,
             next_uniform: Callable[[], float]) -> str:
    """Speculative rounds until at least length characters have been committed after prompt."""
    text = prompt
    while len(text) - len(prompt) < length:
        text += speculative_round(target, draft, text, k, temperature, next_uniform).committed
    return text[len(prompt):len(prompt) + length]


def target_alone(target: Model, prompt: str, length: int, temperature: float,
                 next_uniform: Callable[[], float] | None = None) -> str:
    text = prompt
    for _ in range(length):
        row = distribution(target, text, temperature)
        text += target.vocab[argmax(row) if temperature == 0 else draw(row, float(next_uniform()))]
    return text[len(prompt):]


# --- many rounds at once, for the measurements and the statistical checks ---------------------


def temper_rows(rows: np.ndarray, temperature: float) -> np.ndarray:
    if temperature == 1:
        weights = rows
    else:
        weights = rows ** (1.0 / temperature)
    return weights / np.cumsum(weights, axis=1)[:, -1:]


def draw_rows(rows: np.ndarray, u: np.ndarray) -> np.ndarray:
    """draw() for a batch: count of cumulative sums at or below u, falling back to the last nonzero."""
    cumulative = np.cumsum(rows, axis=1)
    x = (cumulative <= u[:, None]).sum(axis=1)
    over = x >= rows.shape[1]
    if over.any():
        last = rows.shape[1] - 1 - np.argmax(rows[over, ::-1] > 0, axis=1)
        x[over] = last
    return x


def residual_rows(target: np.ndarray, draft: np.ndarray) -> np.ndarray:
    rest = np.maximum(target - draft, 0.0)
    mass = np.cumsum(rest, axis=1)[:, -1:]
    return np.divide(rest, mass, out=target.copy(), where=mass > 0)


def target_resampler(target: np.ndarray, draft: np.ndarray) -> np.ndarray:
    """A deliberately wrong replacement rule (redraw from the target), kept as a negative control."""
    return target.copy()


@dataclass(frozen=True)
class Batch:
    accepted: np.ndarray  # (rounds, k) bool, the verdict at each position (meaningful where reached)
    reached: np.ndarray  # (rounds, k) bool, whether the position was verified at all
    committed: np.ndarray  # (rounds,) characters committed, replacement or bonus included
    first: np.ndarray  # (rounds,) vocabulary index of the first committed character


def simulate(
    target: Model,
    draft: Model,
    contexts: np.ndarray,
    k: int,
    temperature: float,
    rng: np.random.Generator,
    replacement_rule: Callable[[np.ndarray, np.ndarray], np.ndarray] = residual_rows,
) -> Batch:
    """One independent sampled round from each context row (vocabulary indices, right-aligned)."""
    n = contexts.shape[0]
    ctx = contexts.copy()
    d_rows, t_rows, props = [], [], []
    for _ in range(k):
        d = temper_rows(draft.rows(ctx), temperature)
        x = draw_rows(d, rng.random(n))
        t_rows.append(temper_rows(target.rows(ctx), temperature))
        d_rows.append(d)
        props.append(x)
        ctx = np.concatenate([ctx[:, 1:], x[:, None]], axis=1)
    t_rows.append(temper_rows(target.rows(ctx), temperature))

    idx = np.arange(n)
    accepted = np.zeros((n, k), dtype=bool)
    for j in range(k):
        pt, pd = t_rows[j][idx, props[j]], d_rows[j][idx, props[j]]
        u = rng.random(n)
        accepted[:, j] = (pt >= pd) | (u < pt / pd)
    reached = np.cumprod(np.concatenate([np.ones((n, 1), bool), accepted[:, :-1]], axis=1), axis=1).astype(bool)
    run = np.where(accepted.all(axis=1), k, np.argmin(accepted, axis=1)) if k else np.zeros(n, int)

    final = np.empty(n, dtype=np.int64)
    u = rng.random(n)
    for j in range(k + 1):
        here = run == j
        if not here.any():
            continue
        if j == k:
            final[here] = draw_rows(t_rows[k][here], u[here])
        else:
            rows = replacement_rule(t_rows[j][here], d_rows[j][here])
            final[here] = draw_rows(rows, u[here])
    first = np.where(run > 0, props[0] if k else final, final)
    return Batch(accepted, reached, run + 1, first)
