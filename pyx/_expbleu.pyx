# Expected-metric gradient for MERT's gradient direction finder: Galley, Quirk, Cherry &
# Toutanova (2013), "Regularized Minimum Error Rate Training", section 4.
#
# Objective (first-order Taylor approximation of expected log-BLEU): with model scores
# x_h = w . f_h and a scaling mu > 0, every sentence s gets the softmax
#     p_s(h) = exp(mu x_h) / sum_{h' in s} exp(mu x_h')
# (computed as exp(mu x_h - max_s) / Z_s so that mu = 1000 cannot overflow), the corpus
# gets the expected statistics T = sum_s sum_{h in s} p_s(h) stats_h (float), and
#     J(w) = M(T)
# with M one of the METRIC_* codes:
#     METRIC_BLEU   (9 stats columns, mtplug.metrics.bleu.STATS_LAYOUT)
#         M(T) = 1/4 sum_n (log m_n - log t_n) + min(0, 1 - r / c),
#         m_n = T[2n-2], t_n = T[2n-1], c = t_1, r = T[8] / ref_divisor.
#     METRIC_LINEAR (1 stats column g_h, an integer-scaled per-hypothesis score)
#         M(T) = T[0] / norm.
# Gradient: dJ/dw = sum_k u_k dT_k/dw with u = dM/dT, and
#     dT_k/dw = mu sum_s Cov_{p_s}(stats_k, f),
# so dJ/dw = mu sum_s Cov_{p_s}(g, f) with the scalar g_h = u . stats_h: no
# [S x n_stats x n_features] Jacobian is ever formed.
#
# Conventions and decisions (mirrored in mtplug/metrics/expected_bleu.py):
# - Brevity penalty: d/dT of min(0, 1 - r/c) is taken one-sided, 0 whenever c >= r (so
#   also at the kink c = r, where the left derivative would be 1/c): the gradient of the
#   branch that is active at and above the kink.
# - Any expected match count m_n = 0 makes log-BLEU -inf: the kernel returns J = -inf, a
#   zero gradient and STATUS_ZERO_MATCHES with index n (the order, 1..4). m_n <= t_n, so
#   this also covers c = 0. No smoothing: the objective stays Galley's.
# - mu * x_h overflowing to +-inf in a sentence: STATUS_OVERFLOW with the sentence index,
#   J = NaN and a zero gradient (the wrapper raises FloatingPointError).
# - A sentence with one hypothesis has p = 1 and zero covariance: it adds its stats to T
#   and nothing to the gradient (pass 2 skips it). An empty sentence adds nothing.
#
# Accuracy: with a large mu one hypothesis b (the argmax of the scores) carries almost all
# the mass, and g_h - E[g] for it is a tiny difference of two large numbers. So both
# passes centre on b: E_s[stats] - stats_b = sum_h p_h (stats_h - stats_b) uses exact
# integer differences, and dense features enter as f_h - f_b. The rounding error of
# Cov(g, f) is then a few ulps of sum_h p_h |g_h - E[g]| |f_h - f_b| (of |f_h| for sparse
# features, which are not centred), which shrinks with the gradient itself as mu grows,
# instead of a few ulps of E[g] E[f], which does not. Long sums (T over
# sentences, the gradient over all hypotheses) use Neumaier compensation; sums within one
# sentence (<= a few thousand terms) are plain. Summation order is fixed: no threads.

from _compensated cimport neumaier_add
from libc.math cimport INFINITY, NAN, exp, log
from libc.stdint cimport int32_t, int64_t

from cython.parallel cimport prange

import numpy as np

from _bleu cimport BLEU_N_STATS, BLEU_ORDER, BLEU_REF_LEN_COLUMN, log_brevity

# Mirrored by mtplug.metrics.expected_bleu.EXPECTED_METRICS (a test checks both agree).
cdef enum:
    _METRIC_BLEU = 0
    _METRIC_LINEAR = 1

cdef enum:
    _STATUS_OK = 0
    _STATUS_ZERO_MATCHES = 1   # index: the n-gram order n (1..4) with m_n = 0
    _STATUS_OVERFLOW = 2       # index: the sentence where mu * score is not finite

METRIC_BLEU = _METRIC_BLEU
METRIC_LINEAR = _METRIC_LINEAR
STATUS_OK = _STATUS_OK
STATUS_ZERO_MATCHES = _STATUS_ZERO_MATCHES
STATUS_OVERFLOW = _STATUS_OVERFLOW
#: stats columns each metric code expects
METRIC_N_STATS = {_METRIC_BLEU: BLEU_N_STATS, _METRIC_LINEAR: 1}


cdef inline double _exp_shifted(double d) noexcept nogil:
    """exp(d) for d = mu x_h - max <= 0. Below -746 exp rounds to 0 anyway, but libm takes
    a slow underflow path (errno) to say so; with mu = 1000 most hypotheses land there.
    The result is bit for bit exp(d)."""
    if d < -746.0:
        return 0.0
    return exp(d)


cdef inline int _bleu_value_and_slope(const double* T, double ref_divisor, double* value,
                                      double* u) noexcept nogil:
    """value = log-BLEU of expected totals T[9]; u[9] = d value / d T.

    Returns the order n (1..4) of the first zero expected match count (value -inf, u
    untouched), else 0. The brevity term's slope is 0 when c >= r (one-sided, see top).
    """
    cdef double acc = 0.0, c = T[1], r = T[BLEU_REF_LEN_COLUMN] / ref_divisor
    cdef Py_ssize_t n
    for n in range(BLEU_ORDER):
        if not T[2 * n] > 0.0:
            value[0] = -INFINITY
            return n + 1
    for n in range(BLEU_ORDER):
        acc += log(T[2 * n]) - log(T[2 * n + 1])
        u[2 * n] = 1.0 / (BLEU_ORDER * T[2 * n])
        u[2 * n + 1] = -1.0 / (BLEU_ORDER * T[2 * n + 1])
    u[BLEU_REF_LEN_COLUMN] = 0.0
    # c >= m_1 > 0 here, so log_brevity is finite: 1 - r/c when c < r, else 0
    value[0] = acc / BLEU_ORDER + log_brevity(c, r)
    if c < r:
        u[1] += r / (c * c)                          # d(1 - r/c)/dc
        u[BLEU_REF_LEN_COLUMN] = -1.0 / (c * ref_divisor)  # d(1 - r/c)/dT8, r = T8/divisor
    return 0


def expected_gradient(const double[::1] scores, double mu, const int64_t[::1] sent_offsets,
                      const int32_t[:, ::1] stats, const double[:, ::1] dense,
                      const int64_t[::1] sp_indptr, const int32_t[::1] sp_ids,
                      const double[::1] sp_values, double ref_divisor, int metric, double norm,
                      double[::1] gradient, double[::1] totals, int n_threads=1):
    """Expected-metric objective J and its gradient dJ/dw (formulas at the top of the file).

    scores: float64 [n], model scores w . f_h (from NbestCorpus.scores). mu: softmax
    scaling, > 0. sent_offsets: int64 [S + 1], sentence s = rows
    sent_offsets[s]:sent_offsets[s+1], non-decreasing, sent_offsets[S] = n. stats: int32
    [n, n_stats] (9 for METRIC_BLEU, 1 for METRIC_LINEAR). dense: float64 [n, n_dense]
    (feature ids 0 .. n_dense-1; shape [0, 0] is accepted when n = 0). sp_indptr int64
    [n + 1], sp_ids int32 [nnz] (n_dense <= id < n_features), sp_values float64 [nnz]:
    CSR sparse features. ref_divisor: > 0, r = T[8] / ref_divisor (BLEU only). metric: a
    METRIC_* code. norm: > 0, the LINEAR divisor (ignored for BLEU). gradient: float64
    [n_features], overwritten with dJ/dw. totals: float64 [n_stats], overwritten with T
    (NaN after STATUS_OVERFLOW). n_threads: OpenMP threads for the per-sentence work
    (softmaxes, expected statistics, each hypothesis's weight and each sentence's dense
    sum); the sums across sentences then run in sentence order, so the result is the
    same bit for bit for any number of threads.

    Returns ``(J, status, index)``: a STATUS_* code and its index (see the top of the
    file); on a non-OK status the gradient is all zero. Shapes are checked once here;
    values (offsets, ids, mu, norm, divisor) are not: mtplug.metrics.expected_bleu does.
    """
    cdef Py_ssize_t n = scores.shape[0], S = sent_offsets.shape[0] - 1
    cdef Py_ssize_t n_stats = stats.shape[1], n_dense = dense.shape[1]
    cdef Py_ssize_t n_features = gradient.shape[0]
    if metric not in METRIC_N_STATS:
        raise ValueError(f"unknown metric code {metric}")
    if n_stats != METRIC_N_STATS[metric]:
        raise ValueError(
            f"metric code {metric} needs {METRIC_N_STATS[metric]} stats columns, got {n_stats}")
    if S < 0 or sent_offsets[S] != n or sent_offsets[0] != 0:
        raise ValueError("sent_offsets must run from 0 to the number of scores")
    if stats.shape[0] != n or sp_indptr.shape[0] != n + 1 or (n and dense.shape[0] != n):
        raise ValueError("scores, stats, dense and sp_indptr disagree on the number of hypotheses")
    if sp_ids.shape[0] != sp_values.shape[0] or sp_indptr[n] != sp_ids.shape[0]:
        raise ValueError("sp_indptr, sp_ids and sp_values disagree on the number of entries")
    if n_dense > n_features or totals.shape[0] != n_stats:
        raise ValueError("gradient must hold every dense feature and totals every stats column")
    cdef int T = n_threads if n_threads > 1 else 1

    # Per-sentence results of pass 1, reused by pass 2 (S rows: small next to the n rows).
    cdef double[::1] sent_max = np.zeros(S, dtype=np.float64)   # max_h mu x_h
    cdef double[::1] sent_z = np.ones(S, dtype=np.float64)      # sum_h exp(mu x_h - max)
    cdef int64_t[::1] sent_best = np.zeros(S, dtype=np.int64)  # b, first row at the max
    cdef double[:, ::1] sent_dev = np.zeros((S, n_stats), dtype=np.float64)  # E_s[stats] - stats_b
    cdef char[::1] sent_bad = np.zeros(S, dtype=np.int8)       # mu x overflowed
    cdef double[::1] comp = np.zeros(n_features, dtype=np.float64)  # Neumaier terms of gradient
    cdef double[:, ::1] dense_acc = np.zeros((S, n_dense), dtype=np.float64)  # each sentence's dense sum
    cdef double[::1] coef = np.zeros(n, dtype=np.float64)       # p_h (g_h - E_s[g]) per hypothesis
    cdef double[::1] t_comp = np.zeros(n_stats, dtype=np.float64)
    cdef double u[16]
    cdef double value = NAN, m, x, z, p, g, g_dev, c
    cdef int status = _STATUS_OK
    cdef Py_ssize_t index = 0, s, k, j
    cdef int64_t h, lo, hi, b, e
    gradient[:] = 0.0
    totals[:] = 0.0

    with nogil:
        # ---- pass 1: per-sentence softmax and expected statistics (in parallel) ----
        for s in prange(S, num_threads=T, schedule="dynamic", chunksize=16):
            lo = sent_offsets[s]
            hi = sent_offsets[s + 1]
            if hi <= lo:
                continue
            b = lo
            m = mu * scores[lo]
            for h in range(lo + 1, hi):
                x = mu * scores[h]
                if x > m:
                    m = x
                    b = h
            if not (m < INFINITY and m > -INFINITY):
                sent_bad[s] = 1
                continue
            z = 0.0
            for h in range(lo, hi):
                z = z + _exp_shifted(mu * scores[h] - m)
            sent_max[s] = m
            sent_z[s] = z
            sent_best[s] = b
            for h in range(lo, hi):
                if h == b:
                    continue
                p = _exp_shifted(mu * scores[h] - m) / z
                for k in range(n_stats):
                    # int32 differences are exact in double
                    sent_dev[s, k] += p * (<double>stats[h, k] - <double>stats[b, k])
        # ... summed in sentence order; the first overflowing sentence stops it
        for s in range(S):
            if sent_bad[s]:
                status = _STATUS_OVERFLOW
                index = s
                break
            if sent_offsets[s + 1] <= sent_offsets[s]:
                continue
            b = sent_best[s]
            for k in range(n_stats):
                neumaier_add(&totals[k], &t_comp[k], <double>stats[b, k] + sent_dev[s, k])

        if status == _STATUS_OK:
            for k in range(n_stats):
                totals[k] += t_comp[k]
            if metric == _METRIC_BLEU:
                index = _bleu_value_and_slope(&totals[0], ref_divisor, &value, u)
                if index:
                    status = _STATUS_ZERO_MATCHES
            else:
                value = totals[0] / norm
                u[0] = 1.0 / norm

        # ---- pass 2: dJ/dw = mu sum_s sum_h p_h (g_h - E_s[g]) (f_h - f_b) ----
        if status == _STATUS_OK:
            for s in prange(S, num_threads=T, schedule="dynamic", chunksize=16):
                lo = sent_offsets[s]
                hi = sent_offsets[s + 1]
                if hi - lo < 2:
                    continue  # one hypothesis: p = 1, zero covariance
                b = sent_best[s]
                m = sent_max[s]
                z = sent_z[s]
                # E_s[g] - g_b, from exact stat differences (see "Accuracy" at the top)
                g_dev = 0.0
                for k in range(n_stats):
                    g_dev = g_dev + u[k] * sent_dev[s, k]
                for h in range(lo, hi):
                    p = _exp_shifted(mu * scores[h] - m) / z
                    g = 0.0
                    for k in range(n_stats):
                        g = g + u[k] * (<double>stats[h, k] - <double>stats[b, k])
                    c = p * (g - g_dev)   # p_h (g_h - E_s[g])
                    coef[h] = c
                    if c == 0.0:
                        continue          # underflowed p (large mu): nothing to add
                    if h != b:            # f_b - f_b = 0 for the dense block
                        for j in range(n_dense):
                            dense_acc[s, j] += c * (dense[h, j] - dense[b, j])
            # the sums across sentences, in sentence order
            for s in range(S):
                lo = sent_offsets[s]
                hi = sent_offsets[s + 1]
                if hi - lo < 2:
                    continue
                for h in range(lo, hi):
                    c = coef[h]
                    if c == 0.0:
                        continue
                    for e in range(sp_indptr[h], sp_indptr[h + 1]):
                        neumaier_add(&gradient[sp_ids[e]], &comp[sp_ids[e]], c * sp_values[e])
                for j in range(n_dense):
                    neumaier_add(&gradient[j], &comp[j], dense_acc[s, j])
            for j in range(n_features):
                gradient[j] = mu * (gradient[j] + comp[j])

    if status != _STATUS_OK:
        gradient[:] = 0.0
    if status == _STATUS_OVERFLOW:
        totals[:] = NAN  # T was left half-summed
    return value, status, index
