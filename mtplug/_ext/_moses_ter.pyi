# Stub for the compiled module built from pyx/_moses_ter.pyx.
import numpy as np

TER_STATS: int
MAX_RUN_LENGTH: int
MAX_SHIFT_DISTANCE: int
CANDIDATES_PER_ROUND: int
BEAM_WIDTH: int

def ter_stats(
    hyp_ptr: np.ndarray,  # const int64_t[::1] [n + 1]
    hyp_words: np.ndarray,  # const int32_t[::1], Moses's word ids (moses_error_rates.moses_numbering)
    run_start: np.ndarray,  # const int64_t[::1] [R + 1]
    run_sid: np.ndarray,  # const int64_t[::1] [R]
    ref_sent_ptr: np.ndarray,  # const int64_t[::1] [S + 1], at least one reference per sentence named
    ref_word_ptr: np.ndarray,  # const int64_t[::1] [n_refs + 1]
    ref_words: np.ndarray,  # const int32_t[::1], Moses's word ids
    out: np.ndarray,  # int32_t[:, ::1] [n, 3]: atoi("%g") of edits*100, average ref length*100, TER*100
    n_threads: int = 1,
) -> int: ...  # 0, -1 when out of memory, h + 1: TERCpp fails on hypothesis h
