"""Stub for mtplug._ext._expbleu (pyx/_expbleu.pyx): expected-metric objective and gradient."""

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
