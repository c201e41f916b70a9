# Stub for the compiled module built from pyx/_kbest.pyx.
import numpy as np

def kbest(
    node_edges: np.ndarray,  # const int64_t[::1] [N + 1]
    tail_indptr: np.ndarray,  # const int64_t[::1] [E + 1]
    tails: np.ndarray,  # const int32_t[::1]
    rhs_indptr: np.ndarray,  # const int64_t[::1] [E + 1]
    rhs: np.ndarray,  # const int32_t[::1]
    word_map: np.ndarray,  # const int32_t[::1] [n_words], word id -> id written (one per string)
    edge_scores: np.ndarray,  # const double[::1] [E], finite
    k: int,  # outputs wanted
    unique: bool,  # skip derivations whose string was output before
    max_examined: int,  # stop after this many goal derivations; < 0: no limit
) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, int]: ...
# (status: 0 ok, 1 out of memory, 2 NaN score, 3 rank overflow; scores f64 [n],
#  edge_ptr i64 [n + 1], edges i32 (preorder), word_ptr i64 [n + 1], words i32,
#  goal derivations examined, candidates created)
