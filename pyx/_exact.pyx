# Python access to the exact accumulators of _exact.pxd: rows of EXACT_WIDTH int64 that
# kernels fill, merged and rounded here (see mtplug/exact_sum.py).

from _exact cimport EXACT_SAFE_ADDS, EXACT_WIDTH, exact_add, exact_merge, exact_normalize, exact_round
from libc.stdint cimport int64_t

#: int64 entries per accumulator row
WIDTH = EXACT_WIDTH


def add_values(int64_t[::1] acc, const double[::1] values):
    """acc (int64 [WIDTH], normalized) += sum of values (float64 [n]), exactly; acc is
    left normalized."""
    if acc.shape[0] != EXACT_WIDTH:
        raise ValueError(f"an accumulator row has {EXACT_WIDTH} entries, got {acc.shape[0]}")
    cdef Py_ssize_t i, n = values.shape[0]
    with nogil:
        for i in range(n):
            exact_add(&acc[0], values[i])
            if (i + 1) % EXACT_SAFE_ADDS == 0:
                exact_normalize(&acc[0])
        exact_normalize(&acc[0])


def merge(int64_t[:, ::1] into, const int64_t[:, ::1] other):
    """into += other, row by row (int64 [k, WIDTH] each, normalized)."""
    if into.shape[0] != other.shape[0] or into.shape[1] != EXACT_WIDTH or other.shape[1] != EXACT_WIDTH:
        raise ValueError(f"accumulators must both have shape (k, {EXACT_WIDTH})")
    cdef Py_ssize_t r
    with nogil:
        for r in range(into.shape[0]):
            exact_merge(&into[r, 0], &other[r, 0])


def round_rows(const int64_t[:, ::1] acc, double[::1] out):
    """out[r] = the sum in row r rounded to the nearest double (ties to even); NaN when a
    term was not finite, +-inf beyond the double range. acc int64 [k, WIDTH], out
    float64 [k]."""
    if acc.shape[1] != EXACT_WIDTH or out.shape[0] != acc.shape[0]:
        raise ValueError(f"acc must have shape (k, {EXACT_WIDTH}) and out (k,)")
    cdef Py_ssize_t r
    with nogil:
        for r in range(acc.shape[0]):
            out[r] = exact_round(&acc[r, 0])
