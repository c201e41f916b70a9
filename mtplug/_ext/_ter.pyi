# Stub for the compiled module built from pyx/_ter.pyx.
import numpy as np

MAX_SHIFT_SIZE: int
MAX_SHIFT_DIST: int
BEAM_WIDTH: int
MAX_SHIFT_CANDIDATES: int

def pair_edits(hyp: np.ndarray, ref: np.ndarray) -> int: ...  # int32 token ids each; TER edits of one pair
def ter_stats(
    hyp_ptr: np.ndarray,  # const int64_t[::1] [n + 1]
    hyp_words: np.ndarray,  # const int32_t[::1]
    run_start: np.ndarray,  # const int64_t[::1] [R + 1]
    run_sid: np.ndarray,  # const int64_t[::1] [R]
    ref_sent_ptr: np.ndarray,  # const int64_t[::1] [S + 1]
    ref_word_ptr: np.ndarray,  # const int64_t[::1] [n_refs + 1]
    ref_words: np.ndarray,  # const int32_t[::1]
    tok_ptr: np.ndarray,  # const int64_t[::1] [W + 1], per word id its TER tokens
    toks: np.ndarray,  # const int32_t[::1]
    scale: int,  # the LCM of the reference counts (mtplug.metrics.ter.Ter.ref_scale)
    out: np.ndarray,  # int32_t[:, ::1] [n, 2]: edits, reference length x scale / count
    n_threads: int = 1,
) -> int: ...  # 0; -1 out of memory; 2 a hypothesis found no path in the beam (its edits -1)
