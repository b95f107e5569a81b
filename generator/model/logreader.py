"""What an engine's speculative-decoding log says, read exactly: the page's log reader computes the same in the
browser (site_src/assets/log-reader.js), and node replays the vectors `parity_vectors` writes.

Engines print per-position acceptance in one of two conventions. *Unconditional* (llama.cpp, vLLM): the share
of rounds whose i-th proposal was accepted, P(N >= i + 1) in the site's terms, so the rates can only fall
along the positions. *Conditional* (the EAGLE papers): the share of rounds reaching position i that accept it.
Or only counts: rounds drafted and proposals accepted in all. Each gives the mean acceptance length
E[N] = 1 + the sum of the unconditional rates, and from it the single rate alpha whose i.i.d. formula gives
the same length, then speedups under the site's cost model for a draft step of cost c.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from .analysis import best_draft_length, leviathan_speedup

MAX_POSITIONS = 16  # the most positions a reader may type
CONVENTIONS = ("unconditional", "conditional")
NUMBER = re.compile(r"(-?\d+)(?:/(\d+))?|(-?)(\d*)(?:\.(\d*))?(%?)")  # what-if-core.js's parseFraction, no comma
SEPARATORS = re.compile(r"[\s,;]+")


@dataclass(frozen=True)
class Reading:
    convention: str  # "unconditional", "conditional" or "counts"
    k: int  # the draft length the log covers
    unconditional: tuple[Fraction, ...] | None  # None for counts
    conditional: tuple[Fraction | None, ...] | None  # None where no round reached the position before
    mean_length: Fraction  # E[N]: tokens per round, the bonus or replacement token included
    alpha_thousandths: int  # the i.i.d. rate giving the same length, rounded half up to three decimals
    speedup: Fraction  # at the logged K: E[N] / (K c + 1)
    best_k: int | None  # the best K among 1..K from the per-position rates (None for counts)
    best_speedup: Fraction | None
    iid_best_k: int  # the best K in 1..max_k under the i.i.d. rate alpha_thousandths / 1000
    iid_best_speedup: Fraction

    @property
    def alpha(self) -> Fraction:
        return Fraction(self.alpha_thousandths, 1000)


def parse_number(text: str) -> Fraction | None:
    """ "3/8", "0.375", ".375", "37.5%" exactly; None for anything else."""
    m = NUMBER.fullmatch(text.strip().replace("\u2212", "-", 1))
    if not m or len(text) > 200:
        return None
    if m.group(1) is not None:
        d = int(m.group(2) or 1)
        return Fraction(int(m.group(1)), d) if d else None
    whole, digits = m.group(4), m.group(5) or ""
    if not whole and not digits:
        return None
    value = Fraction(int(m.group(3) + (whole or "0") + digits), 10 ** len(digits))
    return value / 100 if m.group(6) else value


def split_rates(text: str) -> list[str]:
    """A typed or pasted list, as engines print it too: "(0.805, 0.632, 0.483)" or "0.805 0.632 0.483"."""
    return [t for t in SEPARATORS.split(text.strip().strip("()[]")) if t]


def iid_rate_thousandths(length: Fraction, k: int) -> int:
    """alpha with 1 + alpha + ... + alpha^k = length, rounded half up to 1/1000, exactly: the sum rises with alpha,
    so alpha >= (2j + 1)/2000 iff the sum there is at most `length`; count the j for which it is."""

    def reaches(j: int) -> bool:
        a = Fraction(2 * j + 1, 2000)
        return sum(a**i for i in range(k + 1)) <= length

    lo, hi = 0, 1000  # the answer m: reaches(j) for j < m, not for j >= m
    while lo < hi:
        mid = (lo + hi) // 2
        if reaches(mid):
            lo = mid + 1
        else:
            hi = mid
    return lo


def conditional_from(unconditional: tuple[Fraction, ...]) -> tuple[Fraction | None, ...]:
    before = (Fraction(1), *unconditional)
    return tuple(u / b if b else None for b, u in zip(before, unconditional))


def unconditional_from(conditional: tuple[Fraction, ...]) -> tuple[Fraction, ...]:
    out, reach = [], Fraction(1)
    for c in conditional:
        reach *= c
        out.append(reach)
    return tuple(out)


def reading(convention, k, unconditional, conditional, length, cost: Fraction, max_k: int) -> Reading:
    alpha = iid_rate_thousandths(length, k)
    best = best_speedup = None
    if unconditional is not None:
        speedups = [(1 + sum(unconditional[:g], Fraction(0))) / (g * cost + 1) for g in range(1, k + 1)]
        best_speedup = max(speedups)
        best = speedups.index(best_speedup) + 1
    a = Fraction(alpha, 1000)
    iid_best = best_draft_length(a, cost, max_k)
    return Reading(
        convention,
        k,
        unconditional,
        conditional,
        length,
        alpha,
        length / (k * cost + 1),
        best,
        best_speedup,
        iid_best,
        leviathan_speedup(a, iid_best, cost),
    )


def read_rates(text: str, convention: str, cost: Fraction, max_k: int = MAX_POSITIONS) -> Reading | str:
    """Per-position rates as typed; an error code ("empty", "number", "range", "too-many", "rising") if unusable."""
    parts = split_rates(text)
    if not parts:
        return "empty"
    if len(parts) > MAX_POSITIONS:
        return "too-many"
    rates = tuple(parse_number(t) for t in parts)
    if any(r is None for r in rates):
        return "number"
    if any(not 0 <= r <= 1 for r in rates):
        return "range"
    if convention == "unconditional":
        if any(b > a for a, b in zip(rates, rates[1:])):
            return "rising"
        unconditional, conditional = rates, conditional_from(rates)
    else:
        unconditional, conditional = unconditional_from(rates), rates
    length = 1 + sum(unconditional, Fraction(0))
    return reading(convention, len(rates), unconditional, conditional, length, cost, max_k)


def read_counts(rounds: str, accepted: str, k: str, cost: Fraction, max_k: int = MAX_POSITIONS) -> Reading | str:
    """Rounds drafted, proposals accepted in all, and the draft length; an error code ("counts") if unusable."""
    values = [parse_number(t) for t in (rounds, accepted, k)]
    if any(v is None or v.denominator != 1 for v in values):
        return "counts"
    r, a, g = (int(v) for v in values)
    if r < 1 or not 1 <= g <= MAX_POSITIONS or not 0 <= a <= r * g:
        return "counts"
    return reading("counts", g, None, None, 1 + Fraction(a, r), cost, max_k)


def parse_cost(text: str) -> Fraction | str:
    c = parse_number(text)
    return c if c is not None and 0 <= c <= 10 else "cost"


def readout(case: dict, max_k: int = MAX_POSITIONS) -> dict:
    """One case as the vectors hold it: inputs as typed, results as exact fractions in str(Fraction)'s form."""
    cost = parse_cost(case["cost"])
    if isinstance(cost, str):
        return {"error": cost}
    if case["convention"] == "counts":
        r = read_counts(case["rounds"], case["accepted"], case["k"], cost, max_k)
    else:
        r = read_rates(case["rates"], case["convention"], cost, max_k)
    if isinstance(r, str):
        return {"error": r}

    def text(x):
        return None if x is None else str(x)

    return {
        "k": r.k,
        "unconditional": None if r.unconditional is None else [text(x) for x in r.unconditional],
        "conditional": None if r.conditional is None else [text(x) for x in r.conditional],
        "mean_length": text(r.mean_length),
        "alpha_thousandths": r.alpha_thousandths,
        "speedup": text(r.speedup),
        "best_k": r.best_k,
        "best_speedup": text(r.best_speedup),
        "iid_best_k": r.iid_best_k,
        "iid_best_speedup": text(r.iid_best_speedup),
    }


def parity_vectors(seed: int, count: int = 60) -> dict:
    """Cases the browser's log reader must read exactly as this module does: the shipped example, each
    error, and `count` random ones in every convention and way of writing a number."""
    import random

    rng = random.Random(seed)
    cases = [
        {"convention": "unconditional", "rates": "(0.805, 0.632, 0.483)", "cost": "1/10"},
        {"convention": "counts", "rounds": "87", "accepted": "167", "k": "3", "cost": "1/10"},
        {"convention": "conditional", "rates": "0.805 0.785 0.764", "cost": "0.05"},
        {"convention": "unconditional", "rates": "0.5, 0.7", "cost": "1/10"},  # rising
        {"convention": "conditional", "rates": "0.5, 0.7", "cost": "1/10"},  # fine as conditional
        {"convention": "unconditional", "rates": "1.2", "cost": "1/10"},
        {"convention": "unconditional", "rates": "0.5, x", "cost": "1/10"},
        {"convention": "unconditional", "rates": " ", "cost": "1/10"},
        {"convention": "unconditional", "rates": ", ".join(["0.5"] * (MAX_POSITIONS + 1)), "cost": "1/10"},
        {"convention": "unconditional", "rates": "0.5, 0, 0", "cost": "0"},
        {"convention": "unconditional", "rates": "1, 1, 1", "cost": "1/4"},
        {"convention": "counts", "rounds": "10", "accepted": "31", "k": "3", "cost": "1/10"},
        {"convention": "counts", "rounds": "0", "accepted": "0", "k": "3", "cost": "1/10"},
        {"convention": "counts", "rounds": "12.5", "accepted": "3", "k": "3", "cost": "1/10"},
        {"convention": "unconditional", "rates": "0.5", "cost": "-1"},
    ]

    def written(n: int) -> str:  # n / 1000 as a fraction, a percentage or a decimal
        style = rng.randrange(3)
        if style == 0:
            return str(Fraction(n, 1000))
        return f"{n // 10}.{n % 10}%" if style == 1 else f"{n // 1000}.{n % 1000:03d}"

    for i in range(count):
        k = rng.randint(1, 8)
        cost = rng.choice(["1/10", "0.05", "1/4", "0", "2%", "3/7"])
        kind = ("unconditional", "conditional", "counts")[i % 3]
        if kind == "counts":
            rounds = rng.randint(1, 500)
            cases.append(
                {
                    "convention": kind,
                    "rounds": str(rounds),
                    "accepted": str(rng.randint(0, rounds * k)),
                    "k": str(k),
                    "cost": cost,
                }
            )
            continue
        rates = [rng.randint(0, 1000) for _ in range(k)]
        if kind == "unconditional":
            rates.sort(reverse=True)
        cases.append({"convention": kind, "rates": ", ".join(written(r) for r in rates), "cost": cost})
    return {"max_k": MAX_POSITIONS, "cases": [{"input": c, "expect": readout(c)} for c in cases]}
