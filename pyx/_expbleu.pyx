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
# sentence (<= a few thousand terms) are plain. Summation order is fixed (sentence order),
# whatever the threads or partitions.

from _compensated cimport neumaier_add
from libc.math cimport INFINITY, NAN, exp, log
from libc.stdint cimport int8_t, int32_t, int64_t

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

    It is the four steps below in a row: :func:`sentence_moments` and
    :func:`hypothesis_coefficients` work sentence by sentence (a caller may split the
    sentences over machines and join their outputs), :func:`expected_totals` and
    :func:`gradient_sum` sum across sentences in sentence order.

    Returns ``(J, status, index)``: a STATUS_* code and its index (see the top of the
    file); on a non-OK status the gradient is all zero. Shapes are checked once here;
    values (offsets, ids, mu, norm, divisor) are not: mtplug.metrics.expected_bleu does.
    """
    cdef Py_ssize_t n = scores.shape[0], S = sent_offsets.shape[0] - 1
    if metric not in METRIC_N_STATS:
        raise ValueError(f"unknown metric code {metric}")
    cdef Py_ssize_t n_stats = stats.shape[1], n_dense = dense.shape[1]
    if n_stats != METRIC_N_STATS[metric]:
        raise ValueError(
            f"metric code {metric} needs {METRIC_N_STATS[metric]} stats columns, got {n_stats}")
    _check_rows(sent_offsets, n)
    if stats.shape[0] != n or sp_indptr.shape[0] != n + 1 or (n and dense.shape[0] != n):
        raise ValueError("scores, stats, dense and sp_indptr disagree on the number of hypotheses")
    if n_dense > gradient.shape[0] or totals.shape[0] != n_stats:
        raise ValueError("gradient must hold every dense feature and totals every stats column")
    sent_max, sent_z = np.empty(S, dtype=np.float64), np.empty(S, dtype=np.float64)
    sent_best, sent_bad = np.empty(S, dtype=np.int64), np.empty(S, dtype=np.int8)
    sent_dev = np.empty((S, n_stats), dtype=np.float64)
    sentence_moments(scores, mu, sent_offsets, stats, sent_max, sent_z, sent_best, sent_dev, sent_bad, n_threads)
    slope = np.zeros(n_stats, dtype=np.float64)
    value, status, index = expected_totals(stats, sent_offsets, sent_best, sent_dev, sent_bad, ref_divisor,
                                           metric, norm, totals, slope)
    if status != _STATUS_OK:
        gradient[:] = 0.0
        return value, status, index
    coef = np.empty(n, dtype=np.float64)
    dense_acc = np.empty((S, n_dense), dtype=np.float64)
    hypothesis_coefficients(scores, mu, sent_offsets, stats, dense, sent_max, sent_z, sent_best, sent_dev,
                            slope, coef, dense_acc, n_threads)
    gradient_sum(sent_offsets, coef, dense_acc, sp_indptr, sp_ids, sp_values, mu, gradient)
    return value, status, index


cdef _check_rows(const int64_t[::1] sent_offsets, Py_ssize_t n):
    cdef Py_ssize_t S = sent_offsets.shape[0] - 1
    if S < 0 or sent_offsets[S] != n or sent_offsets[0] != 0:
        raise ValueError("sent_offsets must run from 0 to the number of scores")


def sentence_moments(const double[::1] scores, double mu, const int64_t[::1] sent_offsets,
                     const int32_t[:, ::1] stats, double[::1] sent_max, double[::1] sent_z,
                     int64_t[::1] sent_best, double[:, ::1] sent_dev, int8_t[::1] sent_bad, int n_threads=1):
    """Pass 1, per sentence: the softmax and the expected statistics.

    scores, mu, sent_offsets (S + 1 entries from 0), stats as for
    :func:`expected_gradient`. Outputs, overwritten, one row per sentence: sent_max
    float64 [S] (max_h mu x_h), sent_z float64 [S] (sum_h exp(mu x_h - max)), sent_best
    int64 [S] (b: the first row at the max, counted from row 0 of these arrays),
    sent_dev float64 [S, n_stats] (E_s[stats] - stats_b), sent_bad int8 [S] (1 where
    mu x_h is not finite). An empty sentence gets max 0, z 1, b 0, dev 0. n_threads:
    OpenMP threads over sentences (each writes only its own rows).
    """
    cdef Py_ssize_t n = scores.shape[0], S = sent_offsets.shape[0] - 1, n_stats = stats.shape[1]
    _check_rows(sent_offsets, n)
    if stats.shape[0] != n:
        raise ValueError("scores and stats disagree on the number of hypotheses")
    if (sent_max.shape[0] != S or sent_z.shape[0] != S or sent_best.shape[0] != S or sent_bad.shape[0] != S
            or sent_dev.shape[0] != S or sent_dev.shape[1] != n_stats):
        raise ValueError("every output must have one row per sentence (sent_dev: n_stats columns)")
    cdef int T = n_threads if n_threads > 1 else 1
    cdef Py_ssize_t s, k
    cdef int64_t h, lo, hi, b
    cdef double m, x, z, p
    with nogil:
        for s in prange(S, num_threads=T, schedule="dynamic", chunksize=16):
            sent_max[s] = 0.0
            sent_z[s] = 1.0
            sent_best[s] = 0
            sent_bad[s] = 0
            for k in range(n_stats):
                sent_dev[s, k] = 0.0
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


def expected_totals(const int32_t[:, ::1] stats, const int64_t[::1] sent_offsets, const int64_t[::1] sent_best,
                    const double[:, ::1] sent_dev, const int8_t[::1] sent_bad, double ref_divisor, int metric,
                    double norm, double[::1] totals, double[::1] slope):
    """The expected statistics T (summed in sentence order), J = M(T) and u = dM/dT.

    stats int32 [n, n_stats] and sent_offsets int64 [S + 1] of the whole corpus; the
    per-sentence outputs of :func:`sentence_moments` with sent_best counted from row 0 of
    ``stats``. ref_divisor, metric, norm as for :func:`expected_gradient`. Outputs:
    totals float64 [n_stats] (T; NaN after STATUS_OVERFLOW), slope float64 [n_stats] (u;
    meaningful when the status is OK). Returns ``(J, status, index)``.
    """
    cdef Py_ssize_t n = stats.shape[0], S = sent_offsets.shape[0] - 1, n_stats = stats.shape[1]
    if metric not in METRIC_N_STATS:
        raise ValueError(f"unknown metric code {metric}")
    if n_stats != METRIC_N_STATS[metric]:
        raise ValueError(
            f"metric code {metric} needs {METRIC_N_STATS[metric]} stats columns, got {n_stats}")
    _check_rows(sent_offsets, n)
    if (sent_best.shape[0] != S or sent_bad.shape[0] != S or sent_dev.shape[0] != S
            or sent_dev.shape[1] != n_stats or totals.shape[0] != n_stats or slope.shape[0] != n_stats):
        raise ValueError("sentence outputs, totals and slope disagree in shape")
    cdef double[::1] t_comp = np.zeros(n_stats, dtype=np.float64)
    cdef double u[16]
    cdef double value = NAN
    cdef int status = _STATUS_OK
    cdef Py_ssize_t index = 0, s, k
    cdef int64_t b
    totals[:] = 0.0
    with nogil:
        # summed in sentence order; the first overflowing sentence stops it
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
            if status == _STATUS_OK:
                for k in range(n_stats):
                    slope[k] = u[k]
    if status == _STATUS_OVERFLOW:
        totals[:] = NAN  # T was left half-summed
    return value, status, index


def hypothesis_coefficients(const double[::1] scores, double mu, const int64_t[::1] sent_offsets,
                            const int32_t[:, ::1] stats, const double[:, ::1] dense,
                            const double[::1] sent_max, const double[::1] sent_z, const int64_t[::1] sent_best,
                            const double[:, ::1] sent_dev, const double[::1] slope,
                            double[::1] coef, double[:, ::1] dense_acc, int n_threads=1):
    """Pass 2, per sentence: each hypothesis's weight in dJ/dw and each sentence's dense sum.

    Inputs as for :func:`sentence_moments` and its outputs (same rows), dense float64
    [n, n_dense], slope float64 [n_stats] (u from :func:`expected_totals`). Outputs,
    overwritten: coef float64 [n], c_h = p_h (g_h - E_s[g]) with g = u . stats (0 in
    sentences of fewer than two hypotheses); dense_acc float64 [S, n_dense], sum_h c_h
    (f_h - f_b) over the dense block. n_threads: OpenMP threads over sentences.
    """
    cdef Py_ssize_t n = scores.shape[0], S = sent_offsets.shape[0] - 1
    cdef Py_ssize_t n_stats = stats.shape[1], n_dense = dense.shape[1]
    _check_rows(sent_offsets, n)
    if stats.shape[0] != n or coef.shape[0] != n or (n and dense.shape[0] != n):
        raise ValueError("scores, stats, dense and coef disagree on the number of hypotheses")
    if (sent_max.shape[0] != S or sent_z.shape[0] != S or sent_best.shape[0] != S or sent_dev.shape[0] != S
            or sent_dev.shape[1] != n_stats or slope.shape[0] != n_stats or dense_acc.shape[0] != S
            or dense_acc.shape[1] != n_dense):
        raise ValueError("sentence inputs, slope and dense_acc disagree in shape")
    cdef int T = n_threads if n_threads > 1 else 1
    cdef Py_ssize_t s, k, j
    cdef int64_t h, lo, hi, b
    cdef double m, z, p, g, g_dev, c
    with nogil:
        for s in prange(S, num_threads=T, schedule="dynamic", chunksize=16):
            lo = sent_offsets[s]
            hi = sent_offsets[s + 1]
            for j in range(n_dense):
                dense_acc[s, j] = 0.0
            for h in range(lo, hi):
                coef[h] = 0.0
            if hi - lo < 2:
                continue  # one hypothesis: p = 1, zero covariance
            b = sent_best[s]
            m = sent_max[s]
            z = sent_z[s]
            # E_s[g] - g_b, from exact stat differences (see "Accuracy" at the top)
            g_dev = 0.0
            for k in range(n_stats):
                g_dev = g_dev + slope[k] * sent_dev[s, k]
            for h in range(lo, hi):
                p = _exp_shifted(mu * scores[h] - m) / z
                g = 0.0
                for k in range(n_stats):
                    g = g + slope[k] * (<double>stats[h, k] - <double>stats[b, k])
                c = p * (g - g_dev)   # p_h (g_h - E_s[g])
                coef[h] = c
                if c == 0.0:
                    continue          # underflowed p (large mu): nothing to add
                if h != b:            # f_b - f_b = 0 for the dense block
                    for j in range(n_dense):
                        dense_acc[s, j] += c * (dense[h, j] - dense[b, j])


def gradient_sum(const int64_t[::1] sent_offsets, const double[::1] coef, const double[:, ::1] dense_acc,
                 const int64_t[::1] sp_indptr, const int32_t[::1] sp_ids, const double[::1] sp_values,
                 double mu, double[::1] gradient):
    """dJ/dw = mu (sum over sentences, in order, of dense_acc and of c_h times the sparse
    features), Neumaier-compensated. Inputs from :func:`hypothesis_coefficients` for the
    whole corpus (sent_offsets int64 [S + 1], coef float64 [n], dense_acc float64 [S,
    n_dense]) and the CSR sparse features; gradient float64 [n_features], overwritten.
    """
    cdef Py_ssize_t n = coef.shape[0], S = sent_offsets.shape[0] - 1, n_dense = dense_acc.shape[1]
    cdef Py_ssize_t n_features = gradient.shape[0]
    _check_rows(sent_offsets, n)
    if sp_indptr.shape[0] != n + 1 or dense_acc.shape[0] != S:
        raise ValueError("coef, dense_acc and sp_indptr disagree on the number of hypotheses")
    if sp_ids.shape[0] != sp_values.shape[0] or sp_indptr[n] != sp_ids.shape[0]:
        raise ValueError("sp_indptr, sp_ids and sp_values disagree on the number of entries")
    if n_dense > n_features:
        raise ValueError("gradient must hold every dense feature")
    cdef double[::1] comp = np.zeros(n_features, dtype=np.float64)  # Neumaier terms
    cdef Py_ssize_t s, j
    cdef int64_t h, lo, hi, e
    cdef double c
    gradient[:] = 0.0
    with nogil:
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
