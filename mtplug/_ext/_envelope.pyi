# Stub for the compiled module built from pyx/_envelope.pyx.
import numpy as np

def goal_envelope(
    node_edges: np.ndarray,  # const int64_t[::1] [N + 1]
    tail_indptr: np.ndarray,  # const int64_t[::1] [E + 1]
    tails: np.ndarray,  # const int32_t[::1]
    rhs_indptr: np.ndarray,  # const int64_t[::1] [E + 1]
    rhs: np.ndarray,  # const int32_t[::1]
    edge_b: np.ndarray,  # const double[::1] [E], intercepts w.f
    edge_m: np.ndarray,  # const double[::1] [E], slopes d.f
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]: ...
# x f64 [K] (left ends, x[0] = -inf), m f64 [K], b f64 [K], word_ptr i64 [K + 1], words i32,
# edge_ptr i64 [K + 1], edges i32
