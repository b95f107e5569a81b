"""The pages' one rounding rule lives in generator/decimals.py, below the model and the pages; this name stays
only for imports written before it moved (import generator.decimals in new code)."""

from ..decimals import exact, fixed, nearest, parity_vectors, pct, points, rounded, sci, times

__all__ = ["exact", "fixed", "nearest", "parity_vectors", "pct", "points", "rounded", "sci", "times"]
