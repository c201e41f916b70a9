"""Exact, order-free sums of doubles: how partial sums from threads and workers combine.

An accumulator is an int64 array [k, WIDTH], one row per sum (``pyx/_exact.pxd`` explains
the layout). Kernels add terms to rows exactly; :func:`rounded_sum` adds accumulators and
rounds each row once, to the nearest double (:func:`rounded`: one accumulator). The result
is the correctly rounded sum of all terms, so it does not depend on how the terms were
split or ordered: that is what keeps optimizer results bit-identical for any number of
threads or dask workers. :func:`pack` keeps only the chunks of each row that are not
implied, which is what a worker sends back for many features.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._ext import _exact

#: int64 entries per row
WIDTH = _exact.WIDTH


def accumulator(rows: int) -> np.ndarray:
    """A zero accumulator: int64 [rows, WIDTH]."""
    return np.zeros((rows, WIDTH), dtype=np.int64)


#: a :func:`pack`ed accumulator: (offsets int64 [k + 1], first column uint8 [k], chunks int64)
Packed = tuple[np.ndarray, np.ndarray, np.ndarray]


def pack(acc: np.ndarray) -> Packed:
    """acc (int64 [k, WIDTH]) without its zero chunks: a normalized row holding a sum of
    terms of similar size has a few nonzero chunks of its 68 (see ``_exact.pack``)."""
    return _exact.pack(np.ascontiguousarray(acc, dtype=np.int64))


def _rows_of(part: np.ndarray | Packed, r0: int, r1: int) -> np.ndarray:
    """Rows r0:r1 of a plain or packed accumulator, as a new int64 [r1 - r0, WIDTH]."""
    if isinstance(part, np.ndarray):
        return np.array(part[r0:r1], dtype=np.int64, order="C", copy=True)
    out = np.empty((r1 - r0, WIDTH), dtype=np.int64)
    _exact.unpack(*part, r0, out)
    return out


def _n_rows(part: np.ndarray | Packed) -> int:
    return part.shape[0] if isinstance(part, np.ndarray) else part[1].shape[0]


def rounded_sum(parts: Sequence[np.ndarray | Packed], block_rows: int = 1 << 14) -> np.ndarray:
    """Each row of the sum of ``parts`` (accumulators of k rows, plain or :func:`pack`ed)
    rounded once: float64 [k]. Works through ``block_rows`` rows at a time, so a sum of
    10^6 features never needs its 544 MB of plain accumulator here."""
    k = _n_rows(parts[0])
    if any(_n_rows(p) != k for p in parts):
        raise ValueError("accumulators to sum have different numbers of rows")
    out = np.empty(k, dtype=np.float64)
    for r0 in range(0, k, block_rows):
        r1 = min(k, r0 + block_rows)
        total = _rows_of(parts[0], r0, r1)
        for part in parts[1:]:
            _exact.merge(total, _rows_of(part, r0, r1))
        _exact.round_rows(total, out[r0:r1])
    return out


def rounded(acc: np.ndarray) -> np.ndarray:
    """Each row's sum rounded to the nearest double: float64 [rows] (NaN if a term was
    not finite)."""
    out = np.empty(acc.shape[0], dtype=np.float64)
    _exact.round_rows(np.ascontiguousarray(acc, dtype=np.int64), out)
    return out


#: how a partition's exact partial sums leave it: "rounded" when it is the pool's only
#: partition (its sums are final), "exact" for merging in this process, "packed" to
#: travel to another process (:meth:`mtplug.distributed.pool.PartitionedPool.sum_form`)
SUM_FORMS = ("rounded", "exact", "packed")


def in_form(acc: np.ndarray, form: str) -> np.ndarray | Packed:
    """The accumulator ``acc`` (int64 [k, WIDTH]) as ``form`` (:data:`SUM_FORMS`) wants it:
    float64 [k], acc itself, or packed (:func:`pack`)."""
    if form == "rounded":
        return rounded(acc)
    return pack(acc) if form == "packed" else acc


def merged(parts: Sequence[np.ndarray | Packed], form: str) -> np.ndarray:
    """The partitions' sums (each :func:`in_form` ``form``) added and rounded: float64 [k]."""
    if form == "rounded":
        (only,) = parts                 # the pool's only partition rounded its sums itself
        assert isinstance(only, np.ndarray)
        return only
    return rounded_sum(parts)


def exact_sum(values: np.ndarray) -> float:
    """sum(values) (float64 [n]) rounded once: equals math.fsum for finite sums."""
    acc = accumulator(1)
    _exact.add_values(acc[0], np.ascontiguousarray(values, dtype=np.float64))
    return float(rounded(acc)[0])
