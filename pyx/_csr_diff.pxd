# The difference of two sorted sparse rows, merged by feature id: f_p - f_q.
#
#     from _csr_diff cimport RowDiff, row_diff_start, row_diff_next
#     cdef RowDiff it
#     row_diff_start(&it, sp_indptr, p, q)
#     while row_diff_next(&it, &sp_ids[0], &sp_values[0], &fid, &v): ...
#
# Only `cdef inline` here (no module of this name exists at run time; see _bleu.pxd).

from libc.stdint cimport int32_t, int64_t


cdef struct RowDiff:
    int64_t a        # next entry of row p
    int64_t a_end
    int64_t b        # next entry of row q
    int64_t b_end


cdef inline void row_diff_start(RowDiff* it, const int64_t[::1] indptr, int64_t p,
                                int64_t q) noexcept nogil:
    it.a = indptr[p]
    it.a_end = indptr[p + 1]
    it.b = indptr[q]
    it.b_end = indptr[q + 1]


cdef inline bint row_diff_next(RowDiff* it, const int32_t* ids, const double* vals,
                               int32_t* fid, double* value) noexcept nogil:
    """The next (feature id, f_p - f_q) in id order; False when both rows are done.

    Entries that cancel are returned as 0.0 (callers that store rows skip them).
    """
    if it.a < it.a_end and (it.b >= it.b_end or ids[it.a] < ids[it.b]):
        fid[0] = ids[it.a]
        value[0] = vals[it.a]
        it.a += 1
    elif it.b < it.b_end and (it.a >= it.a_end or ids[it.b] < ids[it.a]):
        fid[0] = ids[it.b]
        value[0] = -vals[it.b]
        it.b += 1
    elif it.a < it.a_end:
        fid[0] = ids[it.a]
        value[0] = vals[it.a] - vals[it.b]
        it.a += 1
        it.b += 1
    else:
        return False
    return True
