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


def swap_totals(const int32_t[:, ::1] a, const int32_t[:, ::1] b, const uint8_t[:, ::1] swap,
                int64_t[:, ::1] out_a, int64_t[:, ::1] out_b, int n_threads=1):
    """Approximate randomization: for every shuffle s, out_a[s] sums a's rows with row i
    taken from b where swap[s, i] != 0, and out_b[s] the other rows (a, b int32 [n, w] of
    two systems' statistics on the same sentences; swap uint8 [S, n]; outs int64 [S, w],
    overwritten)."""
    cdef Py_ssize_t s, i, k, S = swap.shape[0], n = a.shape[0], w = a.shape[1]
    if b.shape[0] != n or b.shape[1] != w or swap.shape[1] != n:
        raise ValueError("a, b and swap must cover the same sentences and columns")
    if out_a.shape[0] != S or out_a.shape[1] != w or out_b.shape[0] != S or out_b.shape[1] != w:
        raise ValueError(f"outs must have shape ({S}, {w})")
    with nogil:
        for s in prange(S, num_threads=n_threads if n_threads > 1 else 1, schedule="static"):
            for k in range(w):
                out_a[s, k] = 0
                out_b[s, k] = 0
            for i in range(n):
                if swap[s, i]:
                    for k in range(w):
                        out_a[s, k] += b[i, k]
                        out_b[s, k] += a[i, k]
                else:
                    for k in range(w):
                        out_a[s, k] += a[i, k]
                        out_b[s, k] += b[i, k]
