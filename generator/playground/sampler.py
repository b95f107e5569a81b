"""One speculative round between two character models, through the engine's own rule.

The rule lives once, in generator.model.engine: a round here draws the draft's proposals from the
model's rows (each row depends on the proposals before it), computes the target's rows, and hands
both to engine.run_round, which applies min(1, p/q), draws from the residual and adds the bonus,
exactly on the doubles the models produced. Uniforms come from a callable, so a recorded list of
them fixes a round completely; that list is what the parity vectors hand to playground-core.js.
Many rounds at once go through montecarlo.simulate_batch (see generator.playground.simulate).

Temperature 0 means greedy verification: the draft proposes its argmax and both models' rows
become one-hot at their argmax, so a proposal survives iff it is the target's top choice and the
replacement and the bonus are the target's top choice: the output is the target's own greedy
output, character for character.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..model.engine import DROPPED, REJECTED, Verdict, draw, run_round
from .ngram import Model


def apply_temperature(row: Sequence[float], temperature: float) -> list[float]:
    """p^(1/T) renormalised; the sum runs left to right so that JavaScript adds in the same order."""
    if temperature <= 0:
        return list(row)
    weights = list(row) if temperature == 1 else [p ** (1.0 / temperature) for p in row]
    total = 0.0
    for w in weights:
        total += w
    return [w / total for w in weights]


def argmax(row: list[float]) -> int:
    """The first index of the largest value, the tie rule both languages use."""
    return row.index(max(row))


def one_hot(row: Sequence[float]) -> list[float]:
    top = argmax(row)
    return [1.0 if i == top else 0.0 for i in range(len(row))]


def distribution(model: Model, context: str, temperature: float) -> list[float]:
    return apply_temperature(model.row(context).tolist(), temperature)


def temper_rows(rows: np.ndarray, temperature: float) -> np.ndarray:
    """apply_temperature row by row: each row's weights over their sum, added left to right as JavaScript does."""
    weights = rows if temperature == 1 else rows ** (1.0 / temperature)
    return weights / sums_in_order(weights)[:, None]


def sums_in_order(rows: np.ndarray) -> np.ndarray:
    """Each row's sum added left to right (np.cumsum(rows, axis=1)[:, -1]), a column at a time for every row."""
    total = rows[:, 0].copy() if rows.shape[1] else np.zeros(rows.shape[0])
    for j in range(1, rows.shape[1]):
        total += rows[:, j]
    return total


class _Recorder:
    """Hands engine.run_round the uniforms from next_uniform and remembers each one."""

    def __init__(self, next_uniform: Callable[[], float]) -> None:
        self.next_uniform = next_uniform
        self.used: list[float] = []

    def random(self) -> float:
        u = float(self.next_uniform())
        self.used.append(u)
        return u


@dataclass
class RoundResult:
    """One round, its fields in the order of a parity vector's case."""

    uniforms: list[float]  # every uniform the round drew, in order
    draft_rows: list[list[float]]
    target_rows: list[list[float]]
    proposals: str
    verdicts: list[Verdict]
    accept_draws: list[float | None]  # per verified position, None where the verdict was certain
    accept_probabilities: list[float]  # min(1, p/q) per verified position
    replacement: str | None
    bonus: str | None
    committed: str


def speculative_round(
    target: Model, draft: Model, context: str, k: int, temperature: float, next_uniform: Callable[[], float] | None
) -> RoundResult:
    """One round: k draft proposals, then engine.run_round's verdicts, with every uniform recorded."""
    vocab = target.vocab
    greedy = temperature == 0
    rng = _Recorder(next_uniform or (lambda: 0.0))
    text, proposals, draft_rows = "", [], []
    for _ in range(k):
        row = distribution(draft, context + text, temperature)
        draft_rows.append(row)
        proposals.append(argmax(row) if greedy else draw(row, rng.random()))
        text += vocab[proposals[-1]]
    target_rows = [distribution(target, context + text[:j], temperature) for j in range(k + 1)]
    if greedy:
        verified = run_round([one_hot(r) for r in target_rows], [one_hot(r) for r in draft_rows], rng, proposals)
    else:
        verified = run_round(target_rows, draft_rows, rng, proposals)
    checks = [f for f in verified.frames if f.kind == "verify"]
    verdicts = [f.verdict for f in checks] + [DROPPED] * (k - len(checks))
    rejected = checks[-1] if checks and checks[-1].verdict == REJECTED else None
    return RoundResult(
        uniforms=rng.used,
        draft_rows=draft_rows,
        target_rows=target_rows,
        proposals=text,
        verdicts=verdicts,
        accept_draws=[None if f.u is None else float(f.u) for f in checks],
        accept_probabilities=[float(f.accept_probability) for f in checks],
        replacement=vocab[rejected.replacement] if rejected else None,
        bonus=None if verified.bonus is None else vocab[verified.bonus],
        committed="".join(vocab[x] for x in verified.committed),
    )


def target_alone(
    target: Model, prompt: str, length: int, temperature: float, next_uniform: Callable[[], float] | None = None
) -> str:
    text = prompt
    for _ in range(length):
        row = distribution(target, text, temperature)
        text += target.vocab[argmax(row) if temperature == 0 else draw(row, float(next_uniform()))]
    return text[len(prompt) :]


def greedy_loop_start(text: str, prompt_length: int, width: int) -> int | None:
    """Where greedy output starts repeating itself for good, or None: greedy decoding from a model that sees
    `width` characters is a fixed walk from one `width`-character state to the next, so once the state before a
    generated character is one that came before an earlier generated character, everything after it repeats.
    Returns the number of generated characters up to that point (text = prompt + generated)."""
    seen = set()
    for t in range(prompt_length, len(text) + 1):
        state = text[max(t - width, 0) : t]
        if state in seen:
            return t - prompt_length
        seen.add(state)
    return None


def greedy_run(target: Model, draft: Model, prompt: str, k: int, length: int) -> tuple[str, int, bool]:
    """Greedy speculative rounds as the page runs them: until at least `length` characters are written, on through
    a loop if the text falls into one (the page marks where it starts rather than stopping early). Returns the
    text, the number of rounds and whether it loops (greedy_loop_start on the target's context finds a start).
    The target alone, always taking its top choice, writes the same characters and loops in the same place."""
    text, rounds = "", 0
    while len(text) < length:
        text += speculative_round(target, draft, prompt + text, k, 0.0, None).committed
        rounds += 1
    return text, rounds, greedy_loop_start(prompt + text, len(prompt), target.order - 1) is not None


def first_chars_exact(target: Model, context: str, temperature: float, positions: int) -> list[list[float]]:
    """The target's exact distribution of each of the first `positions` characters after context: each a sum over
    every way the characters before it can go, path by path in the order playground-core.js sums them (greedy:
    the top choice's one path). The distribution check compares both histograms of each position with these."""
    vocab, paths, out = target.vocab, [(context, 1.0)], []
    for j in range(positions):
        marginal = [0.0] * len(vocab)
        following = []
        for text, weight in paths:
            row = distribution(target, text, temperature)
            probs = one_hot(row) if temperature == 0 else row
            for c, p in enumerate(probs):
                if p == 0:
                    continue
                marginal[c] += weight * p
                if j + 1 < positions:
                    following.append((text + vocab[c], weight * p))
        out.append(marginal)
        paths = following
    return out


def expected_tvd(row: Sequence[float], draws: int) -> float:
    """The mean total variation distance between two histograms of `draws` independent draws each from `row`.

    By linearity it is the sum over characters of E|X - Y| / (2 draws), X and Y independent Binomial(draws, p):
    with f the pmf, F the cdf and G(a) = sum of b f(b) for b <= a, E|X - Y| = sum_a f(a) (a (2 F(a) - 1) - 2 G(a) + mu).
    Exact but for rounding; playground-core.js computes it the same way, term for term.
    """
    total = 0.0
    for p in row:
        if 0 < p < 1:
            total += _mean_abs_difference(p, draws)
    return total / (2 * draws)


def _mean_abs_difference(p: float, n: int) -> float:
    """E|X - Y| for X, Y independent Binomial(n, p), over the support where the pmf is not negligible."""
    mu = n * p
    spread = 12 * (n * p * (1 - p)) ** 0.5 + 12
    lo = int(mu - spread) if mu > spread else 0  # the support, where the pmf is not negligible
    hi = min(n, int(mu + spread) + 1)
    log_first = lo * math.log(p) + (n - lo) * math.log1p(-p)  # the log of P(X = lo) ...
    for i in range(1, lo + 1):  # ... + log of n choose lo
        log_first += math.log((n - lo + i) / i)
    f = math.exp(log_first)
    cdf = first = result = 0.0
    for a in range(lo, hi + 1):  # f is P(X = a), each from the one before by the ratio of neighbours
        cdf += f
        first += a * f
        result += f * (a * (2 * cdf - 1) - 2 * first + mu)
        f *= (n - a) / (a + 1) * p / (1 - p)
    return result
