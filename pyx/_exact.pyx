# Python access to the exact accumulators of _exact.pxd: rows of EXACT_WIDTH int64 that
# kernels fill, merged and rounded here (see mtplug/exact_sum.py).

from _exact cimport EXACT_CHUNKS, EXACT_SAFE_ADDS, EXACT_WIDTH, exact_add, exact_merge, exact_normalize, exact_round
from libc.stdint cimport int64_t, uint8_t

import numpy as np

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


cdef inline int64_t fill_chunk(bint negative, Py_ssize_t j) noexcept nogil:
    """Column j of a normalized row above its value's chunks: 0 for a value >= 0; for a
    negative one 2^32 - 1 below the top chunk and -1 in it (the count column: 0)."""
    if not negative or j == EXACT_CHUNKS:
        return 0
    return -1 if j == EXACT_CHUNKS - 1 else 0xffffffff


def pack(const int64_t[:, ::1] acc):
    """The chunks of every normalized row that are not implied, for sending accumulators
    of many features (a row is 544 bytes; a sum of terms of similar size has few chunks).

    acc int64 [k, WIDTH], normalized. Returns ``(offsets, first, chunks)``: offsets int64
    [k + 1], first uint8 [k], chunks int64 [offsets[k]]. Row r is
    chunks[offsets[r]:offsets[r + 1]] at columns f = first[r] & 0x7f, f + 1, ...; zero
    below f; above, zero for a value >= 0 and, when first[r] & 0x80 marks a negative
    value, the chunks of its sign (2^32 - 1, the top chunk -1). :func:`unpack` inverts it.
    """
    if acc.shape[1] != EXACT_WIDTH:
        raise ValueError(f"acc must have shape (k, {EXACT_WIDTH})")
    cdef Py_ssize_t k = acc.shape[0], r, j, lo, hi
    cdef bint negative
    offsets_arr = np.zeros(k + 1, dtype=np.int64)
    first_arr = np.zeros(k, dtype=np.uint8)
    cdef int64_t[::1] offsets = offsets_arr
    cdef uint8_t[::1] first = first_arr
    with nogil:
        for r in range(k):
            negative = acc[r, EXACT_CHUNKS - 1] < 0
            lo = 0
            while lo < EXACT_WIDTH and acc[r, lo] == 0:
                lo += 1
            hi = EXACT_WIDTH
            while hi > lo and acc[r, hi - 1] == fill_chunk(negative, hi - 1):
                hi -= 1
            if hi == lo and not negative:
                lo = hi = 0
            first[r] = <uint8_t>(lo | (0x80 if negative else 0))
            offsets[r + 1] = offsets[r] + hi - lo
    chunks_arr = np.empty(offsets_arr[k], dtype=np.int64)
    cdef int64_t[::1] chunks = chunks_arr
    with nogil:
        for r in range(k):
            lo = first[r] & 0x7f
            for j in range(offsets[r + 1] - offsets[r]):
                chunks[offsets[r] + j] = acc[r, lo + j]
    return offsets_arr, first_arr, chunks_arr


def unpack(const int64_t[::1] offsets, const uint8_t[::1] first, const int64_t[::1] chunks, Py_ssize_t r0,
           int64_t[:, ::1] out):
    """out[i] = row r0 + i of a :func:`pack`ed accumulator, for every row of out
    (int64 [m, WIDTH], overwritten; r0 + m <= k)."""
    cdef Py_ssize_t m = out.shape[0], i, j, n, lo, bad = -1
    cdef bint negative
    if out.shape[1] != EXACT_WIDTH or r0 < 0 or r0 + m > first.shape[0] or offsets.shape[0] != first.shape[0] + 1 \
            or offsets[first.shape[0]] != chunks.shape[0]:
        raise ValueError("a packed accumulator and out disagree in shape")
    with nogil:
        for i in range(m):
            n = offsets[r0 + i + 1] - offsets[r0 + i]
            lo = first[r0 + i] & 0x7f
            negative = (first[r0 + i] & 0x80) != 0
            if n < 0 or lo + n > EXACT_WIDTH:
                bad = r0 + i
                break
            for j in range(lo):
                out[i, j] = 0
            for j in range(n):
                out[i, lo + j] = chunks[offsets[r0 + i] + j]
            for j in range(lo + n, EXACT_WIDTH):
                out[i, j] = fill_chunk(negative, j)
    if bad >= 0:
        raise ValueError(f"row {bad} of a packed accumulator spans more than {EXACT_WIDTH} columns")
