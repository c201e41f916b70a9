# Stub for the compiled module built from pyx/_moses_dedup.pyx.
import numpy as np

def row_buckets(
    dense: np.ndarray,  # const float[:, ::1] [n, D]
    indptr: np.ndarray,  # const int64_t[::1] [n + 1]
    ids: np.ndarray,  # const int64_t[::1] [nnz], Moses's SparseVector ids, ascending per row
    vals: np.ndarray,  # const float[::1] [nnz]
) -> np.ndarray: ...  # int64 [n], each row's bucket (0..15) in Moses's set
def moses_kept(
    buckets: np.ndarray,  # const int64_t[::1] [n]
    block_offsets: np.ndarray,  # const int64_t[::1] [S + 1]
) -> np.ndarray: ...  # bool [n], the rows Moses keeps
