# Stub for the compiled module built from pyx/_kbmira_m2.pyx.
import numpy as np

def m2_pass(
    dense: np.ndarray,  # const float[:, ::1] [n_hyp, D]
    indptr: np.ndarray,  # const int64_t[::1] [n_hyp + 1], CSR rows of the sparse features
    ids: np.ndarray,  # const int64_t[::1] [nnz], feature ids >= D, ascending within a row
    vals: np.ndarray,  # const float[::1] [nnz]
    stats: np.ndarray,  # const float[:, ::1] [n_hyp, 4]: correct, proposed, gold, source length
    sent_offsets: np.ndarray,  # const int64_t[::1] [S + 1]
    order: np.ndarray,  # const int64_t[::1] [m], sentences in visiting order
    beta: float,
    C: float,
    decay: float,
    model_bg: bool,
    safe_hope: bool,
    bg: np.ndarray,  # float[::1] [4], the background, updated
    w: np.ndarray,  # float[::1] [F], weights, updated
    totals: np.ndarray,  # float[::1] [F], Moses's lazily kept totals, updated
    last: np.ndarray,  # int64_t[::1] [F], step count at each weight's last update, updated
    state: np.ndarray,  # int64_t[::1] [1], steps so far, updated
) -> float: ...  # the pass's summed loss (summed in float32)
def m2_average(
    w: np.ndarray,  # float[::1] [F]
    totals: np.ndarray,  # float[::1] [F], brought up to date in place
    last: np.ndarray,  # int64_t[::1] [F], updated
    steps: int,
    out: np.ndarray,  # float[::1] [F], the averaged weights
) -> None: ...
def m2_evaluate(
    dense: np.ndarray,  # const float[:, ::1] [n_hyp, D]
    indptr: np.ndarray,  # const int64_t[::1] [n_hyp + 1]
    ids: np.ndarray,  # const int64_t[::1] [nnz]
    vals: np.ndarray,  # const float[::1] [nnz]
    stats: np.ndarray,  # const float[:, ::1] [n_hyp, 4]
    sent_offsets: np.ndarray,  # const int64_t[::1] [S + 1]
    beta: float,
    w: np.ndarray,  # const float[::1] [F]
) -> float: ...  # corpus F_beta of the first highest-scoring rows
def bleu_pass(
    dense: np.ndarray,  # const float[:, ::1] [n_hyp, D]
    indptr: np.ndarray,  # const int64_t[::1] [n_hyp + 1]
    ids: np.ndarray,  # const int64_t[::1] [nnz], feature ids >= D, ascending within a row
    vals: np.ndarray,  # const float[::1] [nnz]
    stats: np.ndarray,  # const float[:, ::1] [n_hyp, 9]: BLEU statistics
    sent_offsets: np.ndarray,  # const int64_t[::1] [S + 1]
    order: np.ndarray,  # const int64_t[::1] [m], sentences in visiting order
    C: float,
    decay: float,
    model_bg: bool,
    safe_hope: bool,
    bg: np.ndarray,  # float[::1] [9], the background, updated
    w: np.ndarray,  # float[::1] [F], weights, updated
    totals: np.ndarray,  # float[::1] [F], updated
    last: np.ndarray,  # int64_t[::1] [F], updated
    state: np.ndarray,  # int64_t[::1] [1], steps so far, updated
) -> float: ...  # the pass's summed loss (summed in float32)
def bleu_evaluate(
    dense: np.ndarray,  # const float[:, ::1] [n_hyp, D]
    indptr: np.ndarray,  # const int64_t[::1] [n_hyp + 1]
    ids: np.ndarray,  # const int64_t[::1] [nnz]
    vals: np.ndarray,  # const float[::1] [nnz]
    stats: np.ndarray,  # const float[:, ::1] [n_hyp, 9]
    sent_offsets: np.ndarray,  # const int64_t[::1] [S + 1]
    w: np.ndarray,  # const float[::1] [F]
) -> float: ...  # Moses's float BLEU of the first highest-scoring rows
