# chrF of summed statistics: the nogil formula the chrF kernel and the metric layer cimport
# (inline, as pyx/_bleu.pxd explains: a .pxd named like no module can only share inline code).

from libc.stdint cimport int64_t


cdef inline double f_score(const int64_t* st, int n_orders, double beta) noexcept nogil:
    """sacrebleu's CHRF._compute_f_score (effective order, no eps smoothing) of statistics
    st [3 * n_orders], in [0, 100], with its operations in its order: the best reference
    is chosen on this number, and the corpus score is this number of the summed rows."""
    cdef double factor = beta * beta, avg_p = 0.0, avg_r = 0.0, s
    cdef int i, eff = 0
    for i in range(n_orders):
        if st[3 * i] > 0 and st[3 * i + 1] > 0:
            avg_p += (<double>st[3 * i + 2]) / st[3 * i]
            avg_r += (<double>st[3 * i + 2]) / st[3 * i + 1]
            eff += 1
    if eff == 0:
        return 0.0
    avg_p /= eff
    avg_r /= eff
    if avg_p + avg_r:
        s = (1 + factor) * avg_p * avg_r
        s /= (factor * avg_p) + avg_r
        return 100 * s
    return 0.0
