# Stub for mtplug._ext._apro (pyx/_apro.pyx): APRO loss, gradient and Hessian products.

import numpy as np

#: status codes returned by loss_gradient
STATUS_OK: int
STATUS_NONFINITE: int  # index = sentence with a NaN or infinite score

def metric_ranks(
    b: np.ndarray,  # const float64_t[::1], [n], per-hypothesis metric (finite)
    sent_offsets: np.ndarray,  # const int64_t[::1], [S + 1], 0 .. n, non-decreasing
    ranks: np.ndarray,  # int32_t[::1], [n], overwritten: dense rank of b in its sentence, 0 = lowest
) -> None: ...
def loss_gradient(
    scores: np.ndarray,  # const float64_t[::1], [n], model scores h (centred per sentence)
    direction: np.ndarray,  # const float64_t[::1], [n] direction scores v, or [0] for none
    ranks: np.ndarray,  # const int32_t[::1], [n], from metric_ranks
    sent_offsets: np.ndarray,  # const int64_t[::1], [S + 1]
    grad: np.ndarray,  # float64_t[::1], [n], overwritten: dL/dh
    order: np.ndarray,  # int32_t[::1], [n], overwritten: rows of each sentence sorted by h
    fill1: np.ndarray,  # int32_t[::1], [n], overwritten: sweep-1 pointer at each sorted position
    fill2: np.ndarray,  # int32_t[::1], [n], overwritten: sweep-2 pointer at each sorted position
    partners: np.ndarray,  # int32_t[::1], [n], overwritten: active partners of each row
    totals: np.ndarray,  # int64_t[:, ::1], [3, WIDTH], exact sums added to: loss, v^T H v, g . v
    n_threads: int = ...,  # OpenMP threads over sentences; the result does not depend on it
    step: float = ...,  # with a direction: the kernel works on scores + step * direction
) -> tuple[int, int, int]: ...  # (active pairs, STATUS_*, sentence)
def hessian_product(
    v: np.ndarray,  # const float64_t[::1], [n], direction scores
    ranks: np.ndarray,  # const int32_t[::1], [n]
    sent_offsets: np.ndarray,  # const int64_t[::1], [S + 1]
    order: np.ndarray,  # const int32_t[::1], [n], as loss_gradient left it
    fill1: np.ndarray,  # const int32_t[::1], [n]
    fill2: np.ndarray,  # const int32_t[::1], [n]
    partners: np.ndarray,  # const int32_t[::1], [n]
    out: np.ndarray,  # float64_t[::1], [n], overwritten: H v (generalized Hessian wrt h)
    n_threads: int = ...,  # OpenMP threads over sentences
) -> None: ...
def hessian_transpose(
    dense: np.ndarray,  # const float64_t[:, ::1], [n, n_dense]
    sp_indptr: np.ndarray,  # const int64_t[::1], [n + 1]
    sp_ids: np.ndarray,  # const int32_t[::1], [nnz]
    sp_values: np.ndarray,  # const float64_t[::1], [nnz]
    sent_offsets: np.ndarray,  # const int64_t[::1], [S + 1]
    d: np.ndarray,  # const float64_t[::1], [n_features], the direction
    ranks: np.ndarray,  # const int32_t[::1], [n]
    order: np.ndarray,  # const int32_t[::1], [n], as loss_gradient left it
    fill1: np.ndarray,  # const int32_t[::1], [n]
    fill2: np.ndarray,  # const int32_t[::1], [n]
    partners: np.ndarray,  # const int32_t[::1], [n]
    hv: np.ndarray,  # float64_t[::1], [n], overwritten: H X d
    acc: np.ndarray,  # int64_t[:, ::1], [n_dense, WIDTH], exact sums added to: the dense rows of X^T H X d
    n_threads: int = ...,  # OpenMP threads over sentences; the result does not depend on it
) -> None: ...
def centred_scores(
    dense: np.ndarray,  # const float64_t[:, ::1], [n, n_dense]
    sp_indptr: np.ndarray,  # const int64_t[::1], [n + 1]
    sp_ids: np.ndarray,  # const int32_t[::1], [nnz], n_dense <= id < n_features
    sp_values: np.ndarray,  # const float64_t[::1], [nnz]
    sent_offsets: np.ndarray,  # const int64_t[::1], [S + 1]
    weights: np.ndarray,  # const float64_t[::1], [n_features]
    out: np.ndarray,  # float64_t[::1], [n], overwritten: w.f minus w.dense[first of sentence]
    n_threads: int = ...,  # OpenMP threads over sentences; the result does not depend on it
    weights2: np.ndarray | None = ...,  # const float64_t[::1], [n_features]: a second vector, or None/empty
    out2: np.ndarray | None = ...,  # float64_t[::1], [n], overwritten: its scores (same read of the features)
) -> None: ...
