"""The metric layer's kernels: def wrappers over pyx/_metric.pxd (corpus objective of
summed statistics, sentence-level objective of every row)."""

from cython.parallel cimport prange, threadid
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport free, malloc

from _metric cimport (KIND_BLEU, KIND_CHRF, KIND_ERROR_RATE, KIND_M2, KIND_MOSES_CHRF, KIND_PER, KIND_SUM, KIND_TER,
                      MAX_PARTS, MAX_STATS, MetricSpec, fill_spec, metric_objective, row_objective)

KINDS = {"bleu": KIND_BLEU, "sum": KIND_SUM, "chrf": KIND_CHRF, "ter": KIND_TER, "error_rate": KIND_ERROR_RATE,
         "per": KIND_PER, "m2": KIND_M2, "moses_chrf": KIND_MOSES_CHRF}
PARTS_MAX = MAX_PARTS
STATS_MAX = MAX_STATS


def objective(const int64_t[::1] totals, const int32_t[::1] kinds, const int32_t[::1] offsets,
              const int32_t[::1] widths, const double[::1] weights, const double[::1] params, double constant):
    """The corpus objective (float) of summed statistics totals int64 [n_stats]; the spec
    arrays are mtplug.metrics.layer.Metric.kernel_spec()."""
    cdef MetricSpec spec
    if fill_spec(&spec, kinds, offsets, widths, weights, params, constant, totals.shape[0]) != 0:
        raise ValueError("the metric spec does not fit the statistics")
    return metric_objective(&totals[0], &spec)


def row_objectives(const int32_t[:, ::1] stats, const int32_t[::1] kinds, const int32_t[::1] offsets,
                   const int32_t[::1] widths, const double[::1] weights, const double[::1] params,
                   double constant, int bleu_variant, double sum_scale, double[::1] out, int n_threads=1):
    """out[i] = the sentence-level objective of stats row i (int32 [n, n_stats]; see
    row_objective in _metric.pxd), rows split over ``n_threads`` OpenMP threads (each
    writes only its own out[i]: the result does not depend on it)."""
    cdef MetricSpec spec
    cdef Py_ssize_t i, n = stats.shape[0]
    cdef int T = n_threads if n_threads > 1 else 1
    cdef int64_t* bufs
    if fill_spec(&spec, kinds, offsets, widths, weights, params, constant, stats.shape[1]) != 0:
        raise ValueError("the metric spec does not fit the statistics")
    if out.shape[0] != n:
        raise ValueError(f"out has {out.shape[0]} entries for {n} rows")
    if n == 0:
        return
    if T > n:
        T = <int>n
    bufs = <int64_t*>malloc(T * MAX_STATS * sizeof(int64_t))
    if bufs == NULL:
        raise MemoryError()
    with nogil:
        for i in prange(n, num_threads=T, schedule="static"):
            out[i] = row_objective(&stats[i, 0], &spec, bleu_variant, sum_scale, bufs + threadid() * MAX_STATS)
    free(bufs)


def totals_objectives(const int64_t[:, ::1] totals, const int32_t[::1] kinds, const int32_t[::1] offsets,
                      const int32_t[::1] widths, const double[::1] weights, const double[::1] params,
                      double constant, double[::1] out):
    """out[b] = the corpus objective of totals row b (int64 [B, n_stats], e.g. one row per
    bootstrap sample); as :func:`objective` row by row."""
    cdef MetricSpec spec
    cdef Py_ssize_t b, n = totals.shape[0]
    if fill_spec(&spec, kinds, offsets, widths, weights, params, constant, totals.shape[1]) != 0:
        raise ValueError("the metric spec does not fit the statistics")
    if out.shape[0] != n:
        raise ValueError(f"out has {out.shape[0]} entries for {n} rows")
    with nogil:
        for b in range(n):
            out[b] = metric_objective(&totals[b, 0], &spec)
