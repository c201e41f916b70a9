# Stub for the compiled module built from pyx/_hopefear.pyx.
import numpy as np

def select(
    scores: np.ndarray,  # const double[::1] [n_hyp], model scores w.f
    gains: np.ndarray,  # const double[::1] [n_hyp], sentence metric (higher is better)
    sent_offsets: np.ndarray,  # const int64_t[::1] [S + 1]
    model_coef: float,
    gain_coef: float,
    out: np.ndarray,  # int64_t[::1] [S]
    n_threads: int = 1,  # OpenMP threads over sentences; the result does not depend on it
) -> None: ...
