"""JSON output of results that hold NumPy values (the commands' one-line JSON results)."""

from __future__ import annotations


def jsonable(value):
    """``json.dumps(..., default=jsonable)``: NumPy arrays as lists, NumPy scalars as numbers."""
    import numpy as np

    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")
