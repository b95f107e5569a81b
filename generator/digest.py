"""A stable hash of plain values (numbers, strings, fractions, tuples, dicts, dataclasses).

Cache keys and figure inputs are made with it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from fractions import Fraction
from typing import Any


def _plain(value: Any) -> Any:
    """A JSON-able form that keeps types apart: Fraction(1, 2), 0.5 and "1/2" must not share a digest."""
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return {"float": repr(value)}
    if isinstance(value, Fraction):
        return {"fraction": f"{value.numerator}/{value.denominator}"}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {"dict": sorted(([_plain(k), _plain(v)] for k, v in value.items()), key=json.dumps)}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {type(value).__name__: _plain({f.name: getattr(value, f.name) for f in dataclasses.fields(value)})}
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return _plain(value.tolist())
    raise TypeError(f"cannot digest a {type(value).__name__}")


def canonical(value: Any) -> str:
    return json.dumps(_plain(value), sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def digest(*parts: Any) -> str:
    """SHA-256 (hex) of the parts' canonical JSON."""
    return hashlib.sha256(canonical(list(parts)).encode("ascii")).hexdigest()
