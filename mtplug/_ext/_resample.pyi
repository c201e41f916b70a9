# Stub for the compiled module built from pyx/_resample.pyx.
import numpy as np

def gather_totals(
    stats: np.ndarray,  # const int32_t[:, ::1] [n, w], statistics per sentence
    idx: np.ndarray,  # const int32_t[:, ::1] [B, m], row numbers in [0, n) per sample
    out: np.ndarray,  # int64_t[:, ::1] [B, w], overwritten with the sums
    n_threads: int = ...,  # OpenMP threads over samples; the result does not depend on it
) -> None: ...
def swap_totals(
    a: np.ndarray,  # const int32_t[:, ::1] [n, w]
    b: np.ndarray,  # const int32_t[:, ::1] [n, w]
    swap: np.ndarray,  # const uint8_t[:, ::1] [S, n], nonzero: sentence i swapped in shuffle s
    out_a: np.ndarray,  # int64_t[:, ::1] [S, w], overwritten
    out_b: np.ndarray,  # int64_t[:, ::1] [S, w], overwritten
    n_threads: int = ...,
) -> None: ...
