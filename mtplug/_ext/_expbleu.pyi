# Stub for mtplug._ext._expbleu (pyx/_expbleu.pyx): expected-metric objective and gradient.

import numpy as np

#: metric codes (mirrored by mtplug.metrics.expected_bleu.EXPECTED_METRICS)
METRIC_BLEU: int  # 9 stats columns, J = expected-stats log-BLEU
METRIC_LINEAR: int  # 1 stats column g_h, J = sum_s E_s[g] / norm
#: status codes returned with J
STATUS_OK: int
STATUS_ZERO_MATCHES: int  # index = n-gram order n (1..4) whose expected match count is 0
STATUS_OVERFLOW: int  # index = sentence where mu * score is not finite
#: metric code -> number of stats columns it needs
METRIC_N_STATS: dict[int, int]

def expected_gradient(
    scores: np.ndarray,  # const float64_t[::1], [n], model scores w . f_h
    mu: float,  # > 0, softmax scaling
    sent_offsets: np.ndarray,  # const int64_t[::1], [S + 1], 0 .. n, non-decreasing
    stats: np.ndarray,  # const int32_t[:, ::1], [n, n_stats]; n_stats = METRIC_N_STATS[metric]
    dense: np.ndarray,  # const float64_t[:, ::1], [n, n_dense] ([0, 0] allowed when n = 0)
    sp_indptr: np.ndarray,  # const int64_t[::1], [n + 1]
    sp_ids: np.ndarray,  # const int32_t[::1], [nnz], n_dense <= id < n_features
    sp_values: np.ndarray,  # const float64_t[::1], [nnz]
    ref_divisor: float,  # > 0, effective reference length = T[8] / ref_divisor (BLEU)
    metric: int,  # a METRIC_* code
    norm: float,  # > 0, LINEAR divisor (ignored for BLEU)
    gradient: np.ndarray,  # float64_t[::1], [n_features], overwritten with dJ/dw
    totals: np.ndarray,  # float64_t[::1], [n_stats], overwritten with expected stats T
    n_threads: int = ...,  # OpenMP threads over sentences; the result does not depend on it
) -> tuple[float, int, int]: ...  # (J, STATUS_* code, index); non-OK: gradient all zero
def sentence_moments(
    scores: np.ndarray,  # const float64_t[::1], [n]
    mu: float,
    sent_offsets: np.ndarray,  # const int64_t[::1], [S + 1] from 0
    stats: np.ndarray,  # const int32_t[:, ::1], [n, n_stats]
    sent_best: np.ndarray,  # int64_t[::1], [S], overwritten: b, the argmax row
    sent_dev: np.ndarray,  # float64_t[:, ::1], [S, n_stats], overwritten: E_s[stats] - stats_b
    sent_bad: np.ndarray,  # int8_t[::1], [S], overwritten: 1 where mu * score is not finite
    prob: np.ndarray,  # float64_t[::1], [n], overwritten: p_h, the softmax (0 in a bad sentence)
    n_threads: int = ...,
) -> None: ...
def partition_totals(
    stats: np.ndarray,  # const int32_t[:, ::1], [n, n_stats]
    sent_offsets: np.ndarray,  # const int64_t[::1], [S + 1] from 0
    sent_best: np.ndarray,  # const int64_t[::1], [S]
    sent_dev: np.ndarray,  # const float64_t[:, ::1], [S, n_stats]
    sent_bad: np.ndarray,  # const int8_t[::1], [S]
    acc: np.ndarray,  # int64_t[:, ::1], [n_stats, WIDTH], exact sums added to
) -> int: ...  # first sentence with a non-finite mu * score, or -1
def value_and_slope(
    totals: np.ndarray,  # const float64_t[::1], [n_stats], expected statistics T
    ref_divisor: float,
    metric: int,  # METRIC_* code
    norm: float,
    slope: np.ndarray,  # float64_t[::1], [n_stats], overwritten: dM/dT
) -> tuple[float, int, int]: ...  # (J, STATUS_* code, index)
def hypothesis_coefficients(
    prob: np.ndarray,  # const float64_t[::1], [n], from sentence_moments
    sent_offsets: np.ndarray,  # const int64_t[::1], [S + 1] from 0
    stats: np.ndarray,  # const int32_t[:, ::1], [n, n_stats]
    sent_best: np.ndarray,  # const int64_t[::1], [S]
    sent_dev: np.ndarray,  # const float64_t[:, ::1], [S, n_stats]
    slope: np.ndarray,  # const float64_t[::1], [n_stats]
    coef: np.ndarray,  # float64_t[::1], [n], overwritten: p_h (g_h - E_s[g])
    n_threads: int = ...,
) -> None: ...
