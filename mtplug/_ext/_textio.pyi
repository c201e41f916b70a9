# Stub for the compiled module built from pyx/_textio.pyx.
import numpy as np

def format_rows(
    values: np.ndarray,  # const double[:, ::1] or const int32_t[:, ::1]
    as_float32: bool = ...,
) -> list[bytes]: ...  # one b"v1 v2 ... " per row
