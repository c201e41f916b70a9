"""Resampled corpus totals for significance tests (mtplug.experiments.significance).

A test-set resample or a shuffle of two systems' outputs changes only which sentence
statistics are summed, so each kernel sums int32 statistics rows [n, w] into int64
totals, one row per sample; the metric layer scores the totals. Sums are exact integers,
so the result does not depend on the number of threads.
"""

from cython.parallel cimport prange
from libc.stdint cimport int32_t, int64_t, uint8_t


def gather_totals(const int32_t[:, ::1] stats, const int32_t[:, ::1] idx, int64_t[:, ::1] out, int n_threads=1):
    """out[b] = sum_j stats[idx[b, j]] (bootstrap: idx int32 [B, m] holds row numbers in
    [0, n), drawn by the caller; out int64 [B, w], overwritten)."""
    cdef Py_ssize_t b, j, k, B = idx.shape[0], m = idx.shape[1], w = stats.shape[1]
    cdef int32_t r
    if out.shape[0] != B or out.shape[1] != w:
        raise ValueError(f"out has shape {tuple(out.shape)[:2]}, expected ({B}, {w})")
    with nogil:
        for b in prange(B, num_threads=n_threads if n_threads > 1 else 1, schedule="static"):
            for k in range(w):
                out[b, k] = 0
            for j in range(m):
                r = idx[b, j]
                for k in range(w):
                    out[b, k] += stats[r, k]


def masked_sums(const int64_t[:, ::1] rows, const uint8_t[:, ::1] mask, int64_t[:, ::1] out, int n_threads=1):
    """out[s] = sum of rows[i] over the i with mask[s, i] != 0 (rows int64 [n, w]; mask
    uint8 [S, n]; out int64 [S, w], overwritten). Approximate randomization passes the
    rows of one system's statistics minus the other's: a shuffle's totals are then one
    system's totals plus these sums."""
    cdef Py_ssize_t s, i, k, S = mask.shape[0], n = rows.shape[0], w = rows.shape[1]
    if mask.shape[1] != n:
        raise ValueError(f"mask covers {mask.shape[1]} rows, expected {n}")
    if out.shape[0] != S or out.shape[1] != w:
        raise ValueError(f"out has shape {tuple(out.shape)[:2]}, expected ({S}, {w})")
    with nogil:
        for s in prange(S, num_threads=n_threads if n_threads > 1 else 1, schedule="static"):
            for k in range(w):
                out[s, k] = 0
            for i in range(n):
                if mask[s, i]:
                    for k in range(w):
                        out[s, k] += rows[i, k]
