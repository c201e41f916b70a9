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
# instead of a few ulps of E[g] E[f], which does not. Sums across sentences (T, the
# gradient) are exact (mtplug.exact_sum): the same bits whatever the threads or partitions;
# sums within one sentence (<= a few thousand terms) are plain, in row order. A sparse
# feature with one value in every row of a sentence adds exactly 0 there and is skipped
# (_rows.transpose_pairs).

from _exact cimport EXACT_SAFE_ADDS, EXACT_WIDTH, exact_add, exact_normalize
from libc.math cimport INFINITY, NAN, exp, log
from libc.stdint cimport int8_t, int32_t, int64_t

from cython.parallel cimport prange

import numpy as np

from mtplug._ext import _exact, _rows

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
    (softmaxes, expected statistics, each hypothesis's weight, X^T c); the sums across
    sentences are exact, so the result is the same bit for bit for any number of threads.

    It is the steps below in a row: :func:`sentence_moments`, :func:`partition_totals`,
    :func:`hypothesis_coefficients` and ``_rows.transpose_pairs`` work on any run of
    sentences (a caller may split them over machines and merge the exact sums), then
    :func:`value_and_slope` on the merged totals.

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
    sent_best, sent_bad = np.empty(S, dtype=np.int64), np.empty(S, dtype=np.int8)
    sent_dev = np.empty((S, n_stats), dtype=np.float64)
    prob = np.empty(n, dtype=np.float64)
    sentence_moments(scores, mu, sent_offsets, stats, sent_best, sent_dev, sent_bad, prob, n_threads)
    acc = np.zeros((n_stats, EXACT_WIDTH), dtype=np.int64)
    bad = partition_totals(stats, sent_offsets, sent_best, sent_dev, sent_bad, acc)
    if bad >= 0:
        totals[:] = NAN
        gradient[:] = 0.0
        return NAN, _STATUS_OVERFLOW, bad
    _exact.round_rows(acc, totals)
    slope = np.zeros(n_stats, dtype=np.float64)
    value, status, index = value_and_slope(totals, ref_divisor, metric, norm, slope)
    if status != _STATUS_OK:
        gradient[:] = 0.0
        return value, status, index
    coef = np.empty(n, dtype=np.float64)
    hypothesis_coefficients(prob, sent_offsets, stats, sent_best, sent_dev, slope, coef, n_threads)
    bad, *pairs = _rows.sentence_pairs(sp_indptr, sp_ids, sp_values, sent_offsets, gradient.shape[0])
    if bad >= 0:
        raise ValueError(f"sparse feature id {sp_ids[bad]} is outside the gradient")
    _rows.transpose_pairs(dense if n else np.zeros((0, 0)), *pairs, sent_offsets, sent_best, coef, gradient,
                          np.empty((0, EXACT_WIDTH), dtype=np.int64), n_threads)
    for k in range(gradient.shape[0]):
        gradient[k] = mu * gradient[k]
    return value, status, index


cdef _check_rows(const int64_t[::1] sent_offsets, Py_ssize_t n):
    cdef Py_ssize_t S = sent_offsets.shape[0] - 1
    if S < 0 or sent_offsets[S] != n or sent_offsets[0] != 0:
        raise ValueError("sent_offsets must run from 0 to the number of scores")


def sentence_moments(const double[::1] scores, double mu, const int64_t[::1] sent_offsets,
                     const int32_t[:, ::1] stats, int64_t[::1] sent_best, double[:, ::1] sent_dev,
                     int8_t[::1] sent_bad, double[::1] prob, int n_threads=1):
    """Pass 1, per sentence: the softmax and the expected statistics.

    scores, mu, sent_offsets (S + 1 entries from 0), stats as for
    :func:`expected_gradient`. Outputs, overwritten: per sentence sent_best int64 [S] (b:
    the first row at the max of mu x_h, counted from row 0 of these arrays), sent_dev
    float64 [S, n_stats] (E_s[stats] - stats_b), sent_bad int8 [S] (1 where mu x_h is not
    finite); per hypothesis prob float64 [n], p_h = exp(mu x_h - max) / sum_h' exp(mu x_h'
    - max) (0 in a bad sentence), which pass 2 reuses. An empty sentence gets b 0, dev 0.
    n_threads: OpenMP threads over sentences (each writes only its own rows).
    """
    cdef Py_ssize_t n = scores.shape[0], S = sent_offsets.shape[0] - 1, n_stats = stats.shape[1]
    _check_rows(sent_offsets, n)
    if stats.shape[0] != n or prob.shape[0] != n:
        raise ValueError("scores, stats and prob disagree on the number of hypotheses")
    if sent_best.shape[0] != S or sent_bad.shape[0] != S or sent_dev.shape[0] != S or sent_dev.shape[1] != n_stats:
        raise ValueError("every sentence output must have one row per sentence (sent_dev: n_stats columns)")
    cdef int T = n_threads if n_threads > 1 else 1
    cdef Py_ssize_t s, k
    cdef int64_t h, lo, hi, b
    cdef double m, x, z, p
    with nogil:
        for s in prange(S, num_threads=T, schedule="dynamic", chunksize=16):
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
                for h in range(lo, hi):
                    prob[h] = 0.0
                continue
            z = 0.0
            for h in range(lo, hi):
                prob[h] = _exp_shifted(mu * scores[h] - m)
                z = z + prob[h]
            sent_best[s] = b
            for h in range(lo, hi):
                p = prob[h] / z
                prob[h] = p
                if h == b:
                    continue
                for k in range(n_stats):
                    # int32 differences are exact in double
                    sent_dev[s, k] += p * (<double>stats[h, k] - <double>stats[b, k])


def partition_totals(const int32_t[:, ::1] stats, const int64_t[::1] sent_offsets, const int64_t[::1] sent_best,
                     const double[:, ::1] sent_dev, const int8_t[::1] sent_bad, int64_t[:, ::1] acc):
    """acc += the expected statistics of these sentences, sum_s (stats_b + E_s[stats] - stats_b),
    exactly (each sentence's term rounded once). Inputs: stats int32 [n, n_stats] and
    sent_offsets int64 [S + 1] of these sentences, the outputs of :func:`sentence_moments`
    on them; acc int64 [n_stats, WIDTH] (mtplug.exact_sum), normalized. Returns the first
    sentence whose mu * score is not finite (nothing is added then), or -1.
    """
    cdef Py_ssize_t n = stats.shape[0], S = sent_offsets.shape[0] - 1, n_stats = stats.shape[1]
    _check_rows(sent_offsets, n)
    if (sent_best.shape[0] != S or sent_bad.shape[0] != S or sent_dev.shape[0] != S
            or sent_dev.shape[1] != n_stats or acc.shape[0] != n_stats or acc.shape[1] != EXACT_WIDTH):
        raise ValueError("sentence outputs and acc disagree in shape")
    cdef Py_ssize_t s, k
    cdef int64_t b
    for s in range(S):
        if sent_bad[s]:
            return s
    with nogil:
        for s in range(S):
            if sent_offsets[s + 1] <= sent_offsets[s]:
                continue
            b = sent_best[s]
            for k in range(n_stats):
                # int32 counts are exact in double
                exact_add(&acc[k, 0], <double>stats[b, k] + sent_dev[s, k])
            if (s + 1) % EXACT_SAFE_ADDS == 0:
                for k in range(n_stats):
                    exact_normalize(&acc[k, 0])
        for k in range(n_stats):
            exact_normalize(&acc[k, 0])
    return -1


def value_and_slope(const double[::1] totals, double ref_divisor, int metric, double norm, double[::1] slope):
    """J = M(T) and u = dM/dT from the expected statistics T (float64 [n_stats]);
    ref_divisor, metric, norm as for :func:`expected_gradient`. slope float64 [n_stats]
    is overwritten (meaningful when the status is OK). Returns ``(J, status, index)``."""
    cdef Py_ssize_t n_stats = totals.shape[0], k
    if metric not in METRIC_N_STATS:
        raise ValueError(f"unknown metric code {metric}")
    if n_stats != METRIC_N_STATS[metric] or slope.shape[0] != n_stats:
        raise ValueError(f"metric code {metric} needs {METRIC_N_STATS[metric]} totals and slopes")
    cdef double u[16]
    cdef double value = NAN
    cdef int status = _STATUS_OK
    cdef Py_ssize_t index = 0
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
    return value, status, index


def hypothesis_coefficients(const double[::1] prob, const int64_t[::1] sent_offsets,
                            const int32_t[:, ::1] stats, const int64_t[::1] sent_best,
                            const double[:, ::1] sent_dev, const double[::1] slope, double[::1] coef,
                            int n_threads=1):
    """Pass 2, per sentence: each hypothesis's weight in dJ/dw.

    The outputs of :func:`sentence_moments` (prob, sent_best, sent_dev; same rows), its
    sent_offsets and stats, slope float64 [n_stats] (u from :func:`value_and_slope`).
    Output, overwritten: coef float64 [n], c_h = p_h (g_h - E_s[g]) with g = u . stats (0
    in sentences of fewer than two hypotheses). dJ/dw = mu X^T c, which
    ``_rows.transpose_pairs`` forms with the dense block relative to each sentence's b
    (sent_best). n_threads: OpenMP threads over sentences.
    """
    cdef Py_ssize_t n = prob.shape[0], S = sent_offsets.shape[0] - 1
    cdef Py_ssize_t n_stats = stats.shape[1]
    _check_rows(sent_offsets, n)
    if stats.shape[0] != n or coef.shape[0] != n:
        raise ValueError("prob, stats and coef disagree on the number of hypotheses")
    if (sent_best.shape[0] != S or sent_dev.shape[0] != S or sent_dev.shape[1] != n_stats
            or slope.shape[0] != n_stats):
        raise ValueError("sentence inputs and slope disagree in shape")
    cdef int T = n_threads if n_threads > 1 else 1
    cdef Py_ssize_t s, k
    cdef int64_t h, lo, hi, b
    cdef double p, g, g_dev
    with nogil:
        for s in prange(S, num_threads=T, schedule="dynamic", chunksize=16):
            lo = sent_offsets[s]
            hi = sent_offsets[s + 1]
            for h in range(lo, hi):
                coef[h] = 0.0
            if hi - lo < 2:
                continue  # one hypothesis: p = 1, zero covariance
            b = sent_best[s]
            # E_s[g] - g_b, from exact stat differences (see "Accuracy" at the top)
            g_dev = 0.0
            for k in range(n_stats):
                g_dev = g_dev + slope[k] * sent_dev[s, k]
            for h in range(lo, hi):
                p = prob[h]
                g = 0.0
                for k in range(n_stats):
                    g = g + slope[k] * (<double>stats[h, k] - <double>stats[b, k])
                coef[h] = p * (g - g_dev)   # p_h (g_h - E_s[g])
