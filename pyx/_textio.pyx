# Text of the Moses extractor files: features.dat and scores.dat blocks are printed here,
# sentence blocks in OpenMP threads, with pyx/_numtext.pxd's %g and %d (Moses prints with
# iostreams, whose default is C's %g); formatting 30 million numbers with snprintf took a
# third of an extraction (issue 23).

from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cython.parallel cimport prange

from _numtext cimport format_g6, format_int, parse_double

import numpy as np

ctypedef fused number:
    double
    int32_t

#: bytes one formatted value and its space may take: "-1.23457e-308 "
cdef enum:
    VALUE_ROOM = 14
    INT_ROOM = 21


def format_rows(const number[:, ::1] values, bint as_float32=False):
    """Rows of ``values`` as ``b"v1 v2 ... vk "`` (a space after each value), one bytes per row.

    float64 values print as ``%g`` (after rounding to float with ``as_float32``, as
    Moses stores features); int32 values as ``%d``. The number text of the block
    kernels below, a value at a time (tests/formats/test_numtext.py holds it to Python's).
    """
    cdef Py_ssize_t n = values.shape[0], d = values.shape[1], i, j
    cdef char* buf = <char*>malloc(d * INT_ROOM + 32)
    cdef int k
    cdef double v
    if buf == NULL:
        raise MemoryError()
    out = []
    try:
        for i in range(n):
            k = 0
            for j in range(d):
                if number is double:
                    v = <double>(<float>values[i, j]) if as_float32 else values[i, j]
                    k += format_g6(v, buf + k)
                else:
                    k += format_int(values[i, j], buf + k)
                buf[k] = b' '
                k += 1
            out.append(buf[:k])
    finally:
        free(buf)
    return out


def parse_number(bytes text):
    """The number ``text`` holds, as the n-best reader parses a feature value (strtod's
    value, all of the text), or None when it is not one."""
    cdef double v
    if len(text) == 0 or parse_double(text, len(text), &v) != 0:
        return None
    return v


cdef inline Py_ssize_t _put(char* out, const char* s, Py_ssize_t n) noexcept nogil:
    memcpy(out, s, n)
    return n


cdef inline Py_ssize_t _block_header(char* p, const char* begin, Py_ssize_t nb, int64_t sid, int64_t count,
                                     const char* tail, Py_ssize_t nt) noexcept nogil:
    """Write ``begin + b"<sid> <count>" + tail`` at p; returns its length."""
    cdef Py_ssize_t k = _put(p, begin, nb)
    k += format_int(sid, p + k)
    p[k] = b' '
    k += 1
    k += format_int(count, p + k)
    return k + _put(p + k, tail, nt)


cdef bytes _gather(char* buf, const int64_t* start, const int64_t* used, Py_ssize_t G):
    """The pieces buf[start[g]:start[g] + used[g]] of every group, back to back."""
    cdef Py_ssize_t g
    cdef int64_t total = 0
    for g in range(G):
        total += used[g]
    out = PyBytes_FromStringAndSize(NULL, total)
    cdef char* p = PyBytes_AS_STRING(out)
    for g in range(G):
        memcpy(p, buf + start[g], used[g])
        p += used[g]
    return out


def format_features_blocks(const int64_t[::1] rows, const int64_t[::1] group_offsets, const int64_t[::1] sids,
                           const double[:, ::1] dense, const int64_t[::1] sp_indptr, const int32_t[::1] sp_ids,
                           const double[::1] sp_values, const uint8_t[::1] names, const int64_t[::1] name_offsets,
                           bytes begin, bytes tail, bytes end, int n_threads=1):
    """The text blocks of a features.dat, one per non-empty group, as one bytes.

    Group g holds the rows ``rows[group_offsets[g]:group_offsets[g + 1]]`` (indices into
    dense float64 [n, d] and the sparse CSR sp_indptr int64 [n + 1], sp_ids int32 (< the
    number of names), sp_values float64) of sentence ``sids[g]``; its block is
    ``begin + b"<sid> <count>" + tail``, then per row the dense values and ``name=value``
    sparse entries, each followed by a space, and a newline, then ``end``. Values print as
    ``%g`` of their float32 rounding (Moses keeps features as float). Feature name i is
    ``names[name_offsets[i]:name_offsets[i + 1]]``. n_threads: OpenMP threads over the
    groups (the text does not depend on it).
    """
    cdef Py_ssize_t G = sids.shape[0], d = dense.shape[1], g, i, c
    cdef int64_t r, j, fid, bound, pos
    cdef int T = n_threads if n_threads > 1 else 1
    cdef Py_ssize_t nb = len(begin), nt = len(tail), ne = len(end)
    cdef const char* pb = begin
    cdef const char* pt = tail
    cdef const char* pe = end
    cdef const char* pn = NULL
    cdef float f
    if group_offsets.shape[0] != G + 1 or sp_indptr.shape[0] != dense.shape[0] + 1:
        raise ValueError("group_offsets must have len(sids) + 1 entries and sp_indptr one per row + 1")
    if G == 0:
        return b""
    if names.shape[0]:
        pn = <const char*>&names[0]
    start_a = np.empty(G + 1, dtype=np.int64)
    used_a = np.zeros(G, dtype=np.int64)
    cdef int64_t[::1] start = start_a
    cdef int64_t[::1] used = used_a
    # each group writes at a bound of its size, so the threads need not know each other's
    pos = 0
    for g in range(G):
        start[g] = pos
        if group_offsets[g + 1] > group_offsets[g]:
            bound = nb + 2 * INT_ROOM + nt + ne
            for i in range(group_offsets[g], group_offsets[g + 1]):
                r = rows[i]
                bound += d * VALUE_ROOM + 1
                for j in range(sp_indptr[r], sp_indptr[r + 1]):
                    fid = sp_ids[j]
                    bound += name_offsets[fid + 1] - name_offsets[fid] + 1 + VALUE_ROOM
            pos += bound
    start[G] = pos
    cdef char* buf = <char*>malloc(pos + 1)
    if buf == NULL:
        raise MemoryError()
    cdef char* p
    cdef Py_ssize_t k
    try:
        with nogil:
            for g in prange(G, num_threads=T, schedule="dynamic", chunksize=1):
                if group_offsets[g + 1] == group_offsets[g]:
                    continue
                p = buf + start[g]
                k = _block_header(p, pb, nb, sids[g], group_offsets[g + 1] - group_offsets[g], pt, nt)
                for i in range(group_offsets[g], group_offsets[g + 1]):
                    r = rows[i]
                    for c in range(d):
                        f = <float>dense[r, c]
                        k = k + format_g6(<double>f, p + k)
                        p[k] = b' '
                        k = k + 1
                    for j in range(sp_indptr[r], sp_indptr[r + 1]):
                        fid = sp_ids[j]
                        k = k + _put(p + k, pn + name_offsets[fid], name_offsets[fid + 1] - name_offsets[fid])
                        p[k] = b'='
                        f = <float>sp_values[j]
                        k = k + 1 + format_g6(<double>f, p + k + 1)
                        p[k] = b' '
                        k = k + 1
                    p[k] = b'\n'
                    k = k + 1
                k = k + _put(p + k, pe, ne)
                used[g] = k
        return _gather(buf, &start[0], &used[0], G)
    finally:
        free(buf)


def format_scores_blocks(const int64_t[::1] rows, const int64_t[::1] group_offsets, const int64_t[::1] sids,
                         const int32_t[:, ::1] stats, bytes begin, bytes tail, bytes end,
                         Py_ssize_t divided_column=-1, int64_t divisor=1, int n_threads=1):
    """The text blocks of a scores.dat, one per non-empty group, as one bytes.

    Groups as for :func:`format_features_blocks`, over the rows of stats int32 [n, k]; each
    row prints its statistics as ``%d`` followed by a space, except that column
    ``divided_column`` (when >= 0) prints ``%g`` of the float32 rounding of value /
    ``divisor`` (reflen:average). n_threads: OpenMP threads over the groups.
    """
    cdef Py_ssize_t G = sids.shape[0], m = stats.shape[1], g, i, c
    cdef int64_t r, pos, count
    cdef int T = n_threads if n_threads > 1 else 1
    cdef Py_ssize_t nb = len(begin), nt = len(tail), ne = len(end)
    cdef const char* pb = begin
    cdef const char* pt = tail
    cdef const char* pe = end
    cdef float f
    cdef double div = <double>divisor
    if group_offsets.shape[0] != G + 1:
        raise ValueError("group_offsets must have len(sids) + 1 entries")
    if divisor <= 0:
        raise ValueError("divisor must be positive")
    if G == 0:
        return b""
    start_a = np.empty(G + 1, dtype=np.int64)
    used_a = np.zeros(G, dtype=np.int64)
    cdef int64_t[::1] start = start_a
    cdef int64_t[::1] used = used_a
    pos = 0
    for g in range(G):
        start[g] = pos
        count = group_offsets[g + 1] - group_offsets[g]
        if count:
            pos += nb + 2 * INT_ROOM + nt + ne + count * (m * INT_ROOM + 1)
    start[G] = pos
    cdef char* buf = <char*>malloc(pos + 1)
    if buf == NULL:
        raise MemoryError()
    cdef char* p
    cdef Py_ssize_t k
    try:
        with nogil:
            for g in prange(G, num_threads=T, schedule="dynamic", chunksize=1):
                if group_offsets[g + 1] == group_offsets[g]:
                    continue
                p = buf + start[g]
                k = _block_header(p, pb, nb, sids[g], group_offsets[g + 1] - group_offsets[g], pt, nt)
                for i in range(group_offsets[g], group_offsets[g + 1]):
                    r = rows[i]
                    for c in range(m):
                        if c == divided_column and divisor != 1:
                            f = <float>(stats[r, c] / div)
                            k = k + format_g6(<double>f, p + k)
                        else:
                            k = k + format_int(stats[r, c], p + k)
                        p[k] = b' '
                        k = k + 1
                    p[k] = b'\n'
                    k = k + 1
                k = k + _put(p + k, pe, ne)
                used[g] = k
        return _gather(buf, &start[0], &used[0], G)
    finally:
        free(buf)
