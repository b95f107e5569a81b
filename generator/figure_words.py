"""The words figures use in their alt text and captions: numbers as the data states them, lists, quotes.

Plain functions of their arguments, kept apart from figures.py so the wording can be read (and tested)
without the drawing code.
"""
from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

Number = float | int | Fraction


def exact(x: Number) -> str:
    """A number as the data states it: 3/8 stays 3/8; anything long or inexact gets three figures."""
    if isinstance(x, int) and not isinstance(x, bool):
        return str(x)
    if isinstance(x, Fraction) and x.denominator <= 64:
        return str(x)
    return f"{float(x):.3g}"


def decimal(x: Number, digits: int = 2) -> str:
    """x to `digits` decimals, halves rounded away from zero on the exact value (13/8 -> 1.63)."""
    q = Fraction(x) * 10 ** digits
    n = (abs(q.numerator) * 2 + q.denominator) // (2 * q.denominator)
    n = -n if q < 0 else n
    sign, n = ("-" if n < 0 else ""), abs(n)
    whole, part = divmod(n, 10 ** digits)
    return f"{sign}{whole}" + (f".{part:0{digits}d}" if digits else "")


def pct(x: Number) -> str:
    return f"{100 * float(x):.1f}%"


def signed(x: float) -> str:
    return f"{x:.2f}".replace("-", "\u2212")


def count(n: int) -> str:
    return f"{int(n):,}"


def tokens_word(n: Number) -> str:
    return f"{count(n) if isinstance(n, int) else n} token" + ("" if n == 1 else "s")


def and_(items: Sequence[str]) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def places(labels: Sequence[str]) -> str:
    labels = [str(lab) for lab in labels]
    if all(lab.isdigit() for lab in labels):
        return ("positions " if len(labels) > 1 else "position ") + and_(labels)
    return and_(labels)


def quote(token: str) -> str:
    return f"\u201c{token}\u201d"


def lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def upper_first(text: str) -> str:
    return text[:1].upper() + text[1:]
