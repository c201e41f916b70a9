# Stub for the compiled module built from pyx/_introsort.pyx.
import numpy as np

def sort_descending(
    keys: np.ndarray,  # const double[::1] [n], no NaN
    order: np.ndarray,  # int64_t[::1] [n], written: libstdc++ std::sort's permutation for keys[a] > keys[b]
) -> None: ...
