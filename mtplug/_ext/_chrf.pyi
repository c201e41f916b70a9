# Stub for the compiled module built from pyx/_chrf.pyx.
import numpy as np

MAX_CHAR_ORDER: int
MAX_WORD_ORDER: int

def corpus_score(totals: np.ndarray, n_orders: int, beta: float) -> float: ...  # int64 [3 n_orders] -> [0, 100]
def chrf_stats(
    hyp_ptr: np.ndarray,  # const int64_t[::1] [n + 1]
    hyp_words: np.ndarray,  # const int32_t[::1]
    run_start: np.ndarray,  # const int64_t[::1] [R + 1]
    run_sid: np.ndarray,  # const int64_t[::1] [R]
    ref_sent_ptr: np.ndarray,  # const int64_t[::1] [S + 1]
    ref_word_ptr: np.ndarray,  # const int64_t[::1] [n_refs + 1]
    ref_words: np.ndarray,  # const int32_t[::1]
    char_ptr: np.ndarray,  # const int64_t[::1] [W + 1]
    chars: np.ndarray,  # const int32_t[::1] code points
    tok_ptr: np.ndarray,  # const int64_t[::1] [W + 1]
    toks: np.ndarray,  # const int32_t[::1]
    char_order: int,
    word_order: int,
    beta: float,
    out: np.ndarray,  # int32_t[:, ::1] [n, 3 * (char_order + word_order)]
    n_threads: int = 1,
) -> int: ...  # 0, or -1 when out of memory
