# Stub for the compiled module built from pyx/_linesearch.pyx.
import numpy as np

ENVELOPE_METHODS: dict[str, int]

def line_sweep(
    intercepts: np.ndarray,  # const double[::1] [n_hyp], w.f
    slopes: np.ndarray,  # const double[:] [n_hyp], d.f (may be strided)
    sent_offsets: np.ndarray,  # const int64_t[::1] [S + 1], no empty sentence
    stats: np.ndarray,  # const int32_t[:, ::1] [n_hyp, n_stats]
    spec_arrays: tuple,  # mtplug.metrics.layer.Metric.kernel_spec()
    method: int = ...,  # ENVELOPE_METHODS value
    n_threads: int = ...,  # OpenMP threads over sentences; the result does not depend on it
) -> tuple[np.ndarray, np.ndarray, int]: ...  # xs f64 [K], scores f64 [K + 1], envelope segments
