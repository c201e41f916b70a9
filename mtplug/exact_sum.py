"""Exact, order-free sums of doubles: how partial sums from threads and workers combine.

An accumulator is an int64 array [k, WIDTH], one row per sum (``pyx/_exact.pxd`` explains
the layout). Kernels add terms to rows exactly; :func:`merge_all` adds accumulators;
:func:`rounded` rounds each row once, to the nearest double. The result is the correctly
rounded sum of all terms, so it does not depend on how the terms were split or ordered:
that is what keeps optimizer results bit-identical for any number of threads or dask
workers.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ._ext import _exact

#: int64 entries per row
WIDTH = _exact.WIDTH


def accumulator(rows: int) -> np.ndarray:
    """A zero accumulator: int64 [rows, WIDTH]."""
    return np.zeros((rows, WIDTH), dtype=np.int64)


def merge_all(accumulators: Sequence[np.ndarray]) -> np.ndarray:
    """The sum of accumulators of one shape (a new array; the inputs are not changed)."""
    total = np.array(accumulators[0], dtype=np.int64, order="C", copy=True)
    for other in accumulators[1:]:
        _exact.merge(total, np.ascontiguousarray(other, dtype=np.int64))
    return total


def rounded(acc: np.ndarray) -> np.ndarray:
    """Each row's sum rounded to the nearest double: float64 [rows] (NaN if a term was
    not finite)."""
    out = np.empty(acc.shape[0], dtype=np.float64)
    _exact.round_rows(np.ascontiguousarray(acc, dtype=np.int64), out)
    return out


def exact_sum(values: np.ndarray) -> float:
    """sum(values) (float64 [n]) rounded once: equals math.fsum for finite sums."""
    acc = accumulator(1)
    _exact.add_values(acc[0], np.ascontiguousarray(values, dtype=np.float64))
    return float(rounded(acc)[0])
