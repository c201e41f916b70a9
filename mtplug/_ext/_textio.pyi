# Stub for the compiled module built from pyx/_textio.pyx.
import numpy as np

def format_rows(
    values: np.ndarray,  # const double[:, ::1] or const int32_t[:, ::1]
    as_float32: bool = ...,
) -> list[bytes]: ...  # one b"v1 v2 ... " per row
def parse_number(text: bytes) -> float | None: ...  # strtod's value of all of text, or None
def format_features_blocks(
    rows: np.ndarray,  # const int64_t[::1] [K], rows of dense / the CSR
    group_offsets: np.ndarray,  # const int64_t[::1] [G + 1] into rows
    sids: np.ndarray,  # const int64_t[::1] [G], the sentence of each group
    dense: np.ndarray,  # const double[:, ::1] [n, d]
    sp_indptr: np.ndarray,  # const int64_t[::1] [n + 1]
    sp_ids: np.ndarray,  # const int32_t[::1]
    sp_values: np.ndarray,  # const double[::1]
    names: np.ndarray,  # const uint8_t[::1], feature names back to back
    name_offsets: np.ndarray,  # const int64_t[::1] [n_names + 1]
    begin: bytes,
    tail: bytes,
    end: bytes,
    n_threads: int = ...,  # OpenMP threads over the groups; the text does not depend on it
) -> bytes: ...
def format_scores_blocks(
    rows: np.ndarray,  # const int64_t[::1] [K]
    group_offsets: np.ndarray,  # const int64_t[::1] [G + 1]
    sids: np.ndarray,  # const int64_t[::1] [G]
    stats: np.ndarray,  # const int32_t[:, ::1] [n, k]
    begin: bytes,
    tail: bytes,
    end: bytes,
    divided_column: int = ...,  # -1: none
    divisor: int = ...,
    n_threads: int = ...,
) -> bytes: ...
