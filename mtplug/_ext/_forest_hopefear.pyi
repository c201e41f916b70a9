# Stub for the compiled module built from pyx/_forest_hopefear.pyx.
import numpy as np

def bleu_viterbi(
    node_edges: np.ndarray,  # const int64_t[::1] [N + 1]
    tail_indptr: np.ndarray,  # const int64_t[::1] [E + 1]
    tails: np.ndarray,  # const int32_t[::1]
    rhs_indptr: np.ndarray,  # const int64_t[::1] [E + 1]
    rhs: np.ndarray,  # const int32_t[::1]
    word_map: np.ndarray,  # const int32_t[::1] [words]: word id -> reference vocabulary id
    edge_scores: np.ndarray,  # const double[::1] [E], w.f
    bleu_weight: float,  # 1 hope, -1 fear, 0 model
    node_source_len: np.ndarray,  # const int32_t[::1] [N]
    ref_ptr: np.ndarray,  # const int64_t[::1] [R + 1], into ref_tokens
    ref_tokens: np.ndarray,  # const int32_t[::1]
    ref_len: float,  # the shortest reference length
    background: np.ndarray,  # const double[::1] [9]
) -> tuple[np.ndarray, float]: ...  # edges int32 (pre-order), total at the goal
