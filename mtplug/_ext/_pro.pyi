# Stub for the compiled module built from pyx/_pro.pyx.
import numpy as np

SPLITMIX_GOLDEN: int
SPLITMIX_SENTENCE_STRIDE: int
LENGTH_REDRAW_LIMIT: int

def py_uniform_draws(seed: int, sentence: int, k: int, count: int) -> np.ndarray: ...  # int64 [count]
def sample_pairs(
    scores: np.ndarray,  # const double[::1] [n_hyp]
    sent_offsets: np.ndarray,  # const int64_t[::1] [S + 1]
    s_lo: int,
    s_hi: int,
    seed: int,  # uint64
    gamma: int,
    cap: int,  # min(xi, gamma) >= 1
    beta: float,
    lengths: np.ndarray,  # const int64_t[::1] [n_hyp], or empty when length_z <= 0
    length_z: float,  # > 0: the length filter
    out_better: np.ndarray,  # int64_t[::1] [S * cap]
    out_worse: np.ndarray,  # int64_t[::1] [S * cap]
    out_count: np.ndarray,  # int64_t[::1] [S]
    out_above: np.ndarray,  # int64_t[::1] [S]
    out_redrawn: np.ndarray,  # int64_t[::1] [S]
    first_sentence: int = ...,  # uint64: the store's number of sentence 0 here
) -> int: ...  # 0, or -1 when out of memory
def pair_differences(
    dense: np.ndarray,  # const double[:, ::1] [n_hyp, D]
    sp_indptr: np.ndarray,  # const int64_t[::1] [n_hyp + 1]
    sp_ids: np.ndarray,  # const int32_t[::1]
    sp_values: np.ndarray,  # const double[::1]
    better: np.ndarray,  # const int64_t[::1] [P]
    worse: np.ndarray,  # const int64_t[::1] [P]
    id_offset: int,
    out_dense: np.ndarray,  # double[:, ::1] [P, D]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...  # indptr int64 [P + 1], ids int32, values float64
def perceptron_epoch(
    xd: np.ndarray,  # const double[:, ::1] [m, D]
    indptr: np.ndarray,  # const int64_t[::1] [m + 1]
    cols: np.ndarray,  # const int32_t[::1]
    vals: np.ndarray,  # const double[::1]
    y: np.ndarray,  # const double[::1] [m], -1 or +1
    order: np.ndarray,  # const int64_t[::1] [m]
    w: np.ndarray,  # double[::1] [D + n_sparse]
    u: np.ndarray,  # double[::1] [D + n_sparse]
    counter: float,
) -> tuple[int, float]: ...  # mistakes, counter
def svm_dcd_epoch(
    xd: np.ndarray,  # const double[:, ::1] [m, D]
    indptr: np.ndarray,  # const int64_t[::1] [m + 1]
    cols: np.ndarray,  # const int32_t[::1]
    vals: np.ndarray,  # const double[::1]
    y: np.ndarray,  # const double[::1] [m]
    order: np.ndarray,  # const int64_t[::1] [m]
    sq_norms: np.ndarray,  # const double[::1] [m]
    margins: np.ndarray,  # const double[::1] [m]
    upper: float,
    alpha: np.ndarray,  # double[::1] [m]
    w: np.ndarray,  # double[::1] [D + n_sparse]
) -> float: ...  # projected-gradient spread of the pass
def format_pro_lines(
    dense: np.ndarray,  # const double[:, ::1] [n, D]
    sp_indptr: np.ndarray,  # const int64_t[::1] [n + 1]
    sp_ids: np.ndarray,  # const int32_t[::1], store feature ids >= D, sorted per row
    sp_values: np.ndarray,  # const double[::1]
    better: np.ndarray,  # const int64_t[::1] [P]
    worse: np.ndarray,  # const int64_t[::1] [P]
    names: np.ndarray,  # const uint8_t[::1]: feature names back to back
    name_offsets: np.ndarray,  # const int64_t[::1] [n_features + 1]
) -> bytes: ...  # 2P pro.data lines
