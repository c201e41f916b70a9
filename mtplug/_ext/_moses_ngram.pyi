# Stub for the compiled module built from pyx/_moses_ngram.pyx.
import numpy as np

REFLEN_CLOSEST: int
REFLEN_SHORTEST: int
REFLEN_AVERAGE: int

def ngram_stats(
    keys: np.ndarray,  # const int64_t[:, ::1] [K, n_tokens]
    seq_ptr: np.ndarray,  # const int64_t[::1] [n_seqs + 1]
    hyp_seq: np.ndarray,  # const int64_t[::1] [n]
    ref_ptr: np.ndarray,  # const int64_t[::1] [n + 1]
    ref_seq: np.ndarray,  # const int64_t[::1]
    reflen: int,
    out: np.ndarray,  # int64_t[:, ::1] [n, 3 K + 2]
) -> int: ...  # 0, or -1 when out of memory
