"""One rounding rule for every decimal the pages print: half away from zero, on the exact value.

13/8 prints as 1.63 and -13/8 as -1.63, 33/40 as 0.83, 1/8 as 13% at no decimals. A float is rounded as
the binary fraction it exactly is (0.125 is a tie; 2.675 is 2.67499..., so 2.67). A rounded zero has no
sign. The model (a slider's starting value on its grid) and the pages both use it: it imports nothing
of ours, so it sits beside digest.py, below both layers. site_src/assets/decimals.js holds the same rule
for the pages' JavaScript, and node replays the vectors `parity_vectors` writes (tests/test_decimals.py),
so a number the page and a widget both show prints as the same string.
"""

from __future__ import annotations

import math
from fractions import Fraction
from types import MappingProxyType
from typing import Any


def exact(value: Any) -> Fraction:
    """The exact value of an int, a Fraction or a float (a float's binary value, not its shortest repr)."""
    if isinstance(value, Fraction):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return Fraction(value)
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{value!r} has no decimal to print")
    return Fraction(number)


def nearest(value: Any, steps: int) -> int:
    """value x steps to the nearest integer, ties away from zero: the rule itself (steps = 10^digits for decimals,
    or the number of steps of a slider's grid)."""
    x = exact(value) * steps
    magnitude = (2 * abs(x.numerator) + x.denominator) // (2 * x.denominator)  # floor(|x| + 1/2)
    return magnitude if x >= 0 else -magnitude


def rounded(value: Any, digits: int = 0) -> int:
    """value x 10^digits to the nearest integer, ties away from zero."""
    return nearest(value, 10**digits)


def fixed(value: Any, digits: int = 2) -> str:
    """13/8 -> "1.63" (digits=2); no sign on a value that rounds to zero."""
    n = rounded(value, digits)
    whole, part = divmod(abs(n), 10**digits)
    text = f"{whole}.{part:0{digits}d}" if digits else str(whole)
    return f"-{text}" if n < 0 else text


def pct(value: Any, digits: int = 0) -> str:
    """A share as a percentage: 1/8 -> "13%", 0.648 -> "64.8%" (digits=1)."""
    return f"{fixed(exact(value) * 100, digits)}%"


def points(value: Any, digits: int = 1) -> str:
    """A difference of two shares, in percentage points: 0.058 -> "5.8 percentage points"."""
    return f"{fixed(exact(value) * 100, digits)} percentage points"


def times(value: Any, digits: int = 2) -> str:
    """A ratio of speeds: 13/8 -> "1.63×"."""
    return f"{fixed(value, digits)}\u00d7"


def sci(value: Any, digits: int = 1) -> str:
    """Scientific notation for a p-value and the like: 0.0000123 -> "1.2 × 10^-5"."""
    x = exact(value)
    if x == 0:
        return f"{fixed(0, digits)} × 10^0"
    exponent = len(str(abs(x.numerator))) - len(str(x.denominator))  # 10^(e-1) < |x| < 10^(e+1)
    if abs(x) < Fraction(10) ** exponent:
        exponent -= 1
    mantissa = rounded(x / Fraction(10) ** exponent, digits)
    if abs(mantissa) == 10 ** (digits + 1):  # 9.96 at one digit rounds up to 10.0: one more power of ten
        exponent += 1
        mantissa = rounded(x / Fraction(10) ** exponent, digits)
    return f"{fixed(Fraction(mantissa, 10**digits), digits)} × 10^{exponent}"


FORMATS = MappingProxyType({"fixed": fixed, "pct": pct, "points": points, "times": times, "sci": sci})


# --- parity vectors for site_src/assets/decimals.js ------------------------------------------------

TIES = (
    "13/8",
    "33/40",
    "-13/8",
    "-33/40",
    "1/8",
    "-1/8",
    "5/2",
    "-5/2",
    "1/2",
    "-1/2",
    "1/200",
    "-1/200",
    "1/2000",
    "2625/1000",
    "-2625/1000",
    "0",
    "1",
    "-1",
    "999/1000",
    "-999/1000",
    "19/2000",
    "3/16",
)
FLOATS = (
    0.125,
    -0.125,
    2.675,
    1.005,
    0.345,
    0.5,
    1.5,
    2.5,
    -2.5,
    0.0,
    -0.0,
    1e-7,
    123456.789,
    0.648,
    0.727,
    4.38,
    0.028,
    1 / 3,
    2 / 3,
    1e-300,
    -0.0049,
)


def parity_vectors() -> list[dict]:
    """[{"value": "13/8" (a fraction, as a string) or 0.125 (a float), "format", "digits", "text"}, ...]."""
    cases = []
    values: list[Any] = [Fraction(v) for v in TIES] + list(FLOATS)
    for value in values:
        for name, digit_choices in (
            ("fixed", (0, 1, 2, 3, 4)),
            ("pct", (0, 1)),
            ("times", (2,)),
            ("points", (1,)),
            ("sci", (1, 2)),
        ):
            for digits in digit_choices:
                text = FORMATS[name](value, digits)
                cases.append(
                    {
                        "value": str(value) if isinstance(value, Fraction) else value,
                        "format": name,
                        "digits": digits,
                        "text": text,
                    }
                )
    return cases
