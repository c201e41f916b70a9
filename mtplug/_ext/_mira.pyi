# Stub for the compiled module built from pyx/_mira.pyx.
import numpy as np

def mira_pass(
    dense: np.ndarray,  # const double[:, ::1] [n_hyp, D]
    sp_indptr: np.ndarray,  # const int64_t[::1] [n_hyp + 1]
    sp_ids: np.ndarray,  # const int32_t[::1] [nnz], ids >= D
    sp_values: np.ndarray,  # const double[::1] [nnz]
    gains: np.ndarray,  # const double[::1] [n_hyp]
    sent_offsets: np.ndarray,  # const int64_t[::1] [S + 1]
    order: np.ndarray,  # const int64_t[::1] [m], sentences in visiting order
    hope_model: float,
    hope_gain: float,
    fear_model: float,
    fear_gain: float,
    C: float,
    w: np.ndarray,  # double[::1] [F], updated
    u: np.ndarray,  # double[::1] [F], averaging accumulator, updated
    scratch: np.ndarray,  # double[::1] [2 * max sentence size]
    state: np.ndarray,  # int64_t[::1] [2]: (K steps for averaging, steps), updated
    stats: np.ndarray | None = ...,  # const int32_t[:, ::1] [n_hyp, 9], with bg
    ref_divisor: float = ...,
    decay: float = ...,
    bg: np.ndarray | None = ...,  # double[::1] [9]: pseudo-document background, updated
    fear_list: int = ...,  # MB: the fear among each sentence's fear_list best rows by w.f (0: all)
    chosen: np.ndarray | None = ...,  # int64_t[:, ::1] [S, 3]: (hope, fear, model 1-best at the visit) row of each visited sentence, written
) -> float: ...  # summed loss of the steps taken
def doc_gains(
    stats: np.ndarray,  # const int32_t[:, ::1] [n_hyp, 9]
    sent_offsets: np.ndarray,  # const int64_t[::1] [S + 1]
    one_best: np.ndarray | None,  # const int64_t[::1] [S], one row of each sentence; None: no document
    ref_divisor: float,
    context: float,  # weight of the rest of the document R = D - x_1best in a hypothesis's stats
    scale: float,
    out: np.ndarray,  # double[::1] [n_hyp]: scale * (B(x_h + context * R) - B(R)), B cdec's BLEU, written
    n_threads: int = 1,  # OpenMP threads over sentences; the result does not depend on it
) -> None: ...
def py_cdec_bleu(t: np.ndarray, ref_divisor: float = 1.0) -> float: ...  # cdec's smoothed BLEU of float64 [9]
def py_bg_gain(
    x: np.ndarray,  # const int32_t[::1] [9]
    bg: np.ndarray,  # const double[::1] [9]
    ref_divisor: float,
) -> float: ...
def kbmira_pass(
    dense: np.ndarray,  # const double[:, ::1] [n_hyp, D]
    sp_indptr: np.ndarray,  # const int64_t[::1] [n_hyp + 1]
    sp_ids: np.ndarray,  # const int32_t[::1]
    sp_values: np.ndarray,  # const double[::1]
    stats: np.ndarray,  # const int32_t[:, ::1] [n_hyp, 9]
    ref_divisor: float,
    sent_offsets: np.ndarray,  # const int64_t[::1] [S + 1]
    order: np.ndarray,  # const int64_t[::1] [m]
    C: float,
    decay: float,
    model_bg: bool,
    safe_hope: bool,
    bg: np.ndarray,  # double[::1] [9], updated
    w: np.ndarray,  # double[::1] [F], updated
    u: np.ndarray,  # double[::1] [F], updated
    scratch: np.ndarray,  # double[::1] [2 * max sentence size]
    state: np.ndarray,  # int64_t[::1] [2], updated
    eval_w: np.ndarray | None = ...,  # const double[::1] [F]: weights whose 1-best to find
    eval_rows: np.ndarray | None = ...,  # int64_t[::1] [S]: the 1-best rows under eval_w, written
    stats_lo: np.ndarray | None = ...,  # const int32_t[:, ::1] [S, 9]: column minima per sentence
    stats_hi: np.ndarray | None = ...,  # const int32_t[:, ::1] [S, 9]: column maxima per sentence
) -> float: ...
def py_gain_bounds(
    bg: np.ndarray,  # const double[::1] [9]
    lo: np.ndarray,  # const int32_t[::1] [9]
    hi: np.ndarray,  # const int32_t[::1] [9]
    ref_divisor: float,
) -> tuple[bool, float, float]: ...  # (bounded, lower, upper)
