# Stub for the compiled module built from pyx/_edit_rates.pyx.
import numpy as np

PER_STATS: int
EDIT_STATS: int

def per_stats(
    hyp_ptr: np.ndarray,  # const int64_t[::1] [n + 1]
    hyp_words: np.ndarray,  # const int32_t[::1]
    run_start: np.ndarray,  # const int64_t[::1] [R + 1]
    run_sid: np.ndarray,  # const int64_t[::1] [R]
    ref_sent_ptr: np.ndarray,  # const int64_t[::1] [S + 1], one reference per sentence named
    ref_word_ptr: np.ndarray,  # const int64_t[::1] [n_refs + 1]
    ref_words: np.ndarray,  # const int32_t[::1]
    out: np.ndarray,  # int32_t[:, ::1] [n, 3]: correct, hyp_len, ref_len
    n_threads: int = 1,
) -> int: ...  # 0, or -1 when out of memory
def edit_stats(
    hyp_ptr: np.ndarray,
    hyp_words: np.ndarray,
    run_start: np.ndarray,
    run_sid: np.ndarray,
    ref_sent_ptr: np.ndarray,
    ref_word_ptr: np.ndarray,
    ref_words: np.ndarray,
    long_jumps: bool,  # True: CDER, False: WER
    out: np.ndarray,  # int32_t[:, ::1] [n, 2]: distance, ref_len
    n_threads: int = 1,
) -> int: ...  # 0, or -1 when out of memory
