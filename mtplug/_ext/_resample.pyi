# Stub for the compiled module built from pyx/_resample.pyx.
import numpy as np

def gather_totals(
    stats: np.ndarray,  # const int32_t[:, ::1] [n, w], statistics per sentence
    idx: np.ndarray,  # const int32_t[:, ::1] [B, m], row numbers in [0, n) per sample
    out: np.ndarray,  # int64_t[:, ::1] [B, w], overwritten with the sums
    n_threads: int = ...,  # OpenMP threads over samples; the result does not depend on it
) -> None: ...
def masked_sums(
    rows: np.ndarray,  # const int64_t[:, ::1] [n, w]
    mask: np.ndarray,  # const uint8_t[:, ::1] [S, n], nonzero: row i summed in sample s
    out: np.ndarray,  # int64_t[:, ::1] [S, w], overwritten
    n_threads: int = ...,  # OpenMP threads over samples; the result does not depend on it
) -> None: ...
