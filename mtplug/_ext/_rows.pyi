# Stub for the compiled module built from pyx/_rows.pyx.
import numpy as np

def hyp_scores(
    dense: np.ndarray,  # const double[:, ::1] [n_hyp, n_dense]
    sp_indptr: np.ndarray,  # const int64_t[::1] [n_hyp + 1]
    sp_ids: np.ndarray,  # const int32_t[::1]
    sp_values: np.ndarray,  # const double[::1]
    weights: np.ndarray,  # const double[::1] [n_features]
    out: np.ndarray,  # double[::1] [n_hyp]
    n_threads: int = ...,  # OpenMP threads over rows; the result does not depend on it
) -> None: ...
def hyp_scores_rows(
    dense: np.ndarray,  # const double[:, ::1] [n_hyp, n_dense]
    sp_indptr: np.ndarray,  # const int64_t[::1] [n_hyp + 1]
    sp_ids: np.ndarray,  # const int32_t[::1]
    sp_values: np.ndarray,  # const double[::1]
    weights: np.ndarray,  # const double[::1] [n_features]
    rows: np.ndarray,  # const int64_t[::1] [m], each < n_hyp
    out: np.ndarray,  # double[::1] [m], written: hyp_scores' value of each row (the same bits)
) -> None: ...
def sentence_pairs(
    sp_indptr: np.ndarray,  # const int64_t[::1], [n + 1], from 0
    sp_ids: np.ndarray,  # const int32_t[::1], [nnz]
    sp_values: np.ndarray,  # const float64_t[::1], [nnz]
    sent_offsets: np.ndarray,  # const int64_t[::1], [S + 1], 0 .. n
    n_features: int,
) -> tuple: ...  # (bad entry or -1, row_ptr int64 [n + 1], row_pair int32 [V], row_value float64 [V], feature_ptr int64 [n_features + 1], feature_pairs int32 [P])
def transpose_pairs(
    dense: np.ndarray,  # const float64_t[:, ::1], [n, n_dense]
    row_ptr: np.ndarray,  # const int64_t[::1], [n + 1], from sentence_pairs
    row_pair: np.ndarray,  # const int32_t[::1], [V], from sentence_pairs
    row_value: np.ndarray,  # const float64_t[::1], [V], from sentence_pairs
    feature_ptr: np.ndarray,  # const int64_t[::1], [n_features + 1], from sentence_pairs
    feature_pairs: np.ndarray,  # const int32_t[::1], [P], from sentence_pairs
    sent_offsets: np.ndarray,  # const int64_t[::1], [S + 1] from 0
    ref_rows: np.ndarray,  # const int64_t[::1], [S], the dense block is taken relative to these rows
    coef: np.ndarray,  # const float64_t[::1], [n], summing to 0 within each sentence
    out: np.ndarray,  # float64_t[::1], [n_features] (X^T coef, rounded) or empty
    acc: np.ndarray,  # int64_t[:, ::1], [n_features, WIDTH] (exact sums added) or [0, WIDTH]
    n_threads: int = ...,  # OpenMP threads; the result does not depend on it
) -> None: ...
def sparse_columns(
    sp_indptr: np.ndarray,  # const int64_t[::1], [n + 1], from 0
    sp_ids: np.ndarray,  # const int32_t[::1], [nnz], 0 <= id < n_features
    sp_values: np.ndarray,  # const float64_t[::1], [nnz]
    col_ptr: np.ndarray,  # int64_t[::1], [n_features + 1], overwritten
    col_rows: np.ndarray,  # int64_t[::1], [nnz], overwritten: rows ascending within each column
    col_values: np.ndarray,  # float64_t[::1], [nnz], overwritten
) -> None: ...
def argmax_per_sentence(
    scores: np.ndarray,  # const double[::1]
    sent_offsets: np.ndarray,  # const int64_t[::1] [S + 1]
    out: np.ndarray,  # int64_t[::1] [S]
) -> None: ...
def duplicate_mask(
    order: np.ndarray,  # const int64_t[::1]
    group_offsets: np.ndarray,  # const int64_t[::1]
    dense_bytes: np.ndarray,  # const uint8_t[:, ::1]
    sp_indptr: np.ndarray,
    sp_ids: np.ndarray,
    sp_values: np.ndarray,
    stats_bytes: np.ndarray,  # const uint8_t[:, ::1]
    hyp_indptr: np.ndarray,  # const int64_t[::1] (empty: no strings)
    hyp_bytes: np.ndarray,  # const uint8_t[::1]
    keep: np.ndarray,  # uint8_t[::1]
) -> int: ...
def moses_duplicates(
    order: np.ndarray,  # const int64_t[::1] [n], rows in load order, grouped
    group_offsets: np.ndarray,  # const int64_t[::1] [G + 1]
    dense: np.ndarray,  # const double[:, ::1] [n_rows, n_dense]
    sp_indptr: np.ndarray,  # const int64_t[::1]
    sp_ids: np.ndarray,  # const int32_t[::1]
    sp_values: np.ndarray,  # const double[::1]
    stats_bytes: np.ndarray,  # const uint8_t[:, ::1]
    rows_out: np.ndarray,  # int64_t[::1] [n]: kept rows, group after group, in Moses's order
    counts_out: np.ndarray,  # int64_t[::1] [G]: rows kept per group
) -> int: ...
def gather_csr(indptr: np.ndarray, data: np.ndarray, itemsize: int, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...
def sort_csr_rows(indptr: np.ndarray, ids: np.ndarray, values: np.ndarray) -> None: ...
