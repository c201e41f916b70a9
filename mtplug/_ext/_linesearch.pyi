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
    order: np.ndarray | None = ...,  # const int32_t[::1] [n_hyp], slope_orders of the slopes' column, or None
) -> tuple[np.ndarray, np.ndarray, int]: ...  # xs f64 [K], scores f64 [K + 1], envelope segments

def slope_orders(
    dense: np.ndarray,  # const double[:, ::1] [n_hyp, D], finite
    columns: np.ndarray,  # const int64_t[::1] [C], each in 0 .. D - 1
    sent_offsets: np.ndarray,  # const int64_t[::1] [S + 1]
    out: np.ndarray,  # int32_t[:, ::1] [C, n_hyp], written: per sentence positions by (slope, position), ~p on a tie
    n_threads: int = ...,  # OpenMP threads over sentences; the result does not depend on it
) -> None: ...

def coordinate_sweeps(
    intercepts: np.ndarray,  # const double[::1] [n_hyp], w.f
    dense: np.ndarray,  # const double[:, ::1] [n_hyp, D]: column j is the slopes along feature j
    columns: np.ndarray,  # const int64_t[::1] [C], each in 0 .. D - 1
    orders: np.ndarray | None,  # const int32_t[:, ::1] [D, n_hyp], slope_orders of every column, or None
    sent_offsets: np.ndarray,  # const int64_t[::1] [S + 1], no empty sentence
    stats: np.ndarray,  # const int32_t[:, ::1] [n_hyp, n_stats]
    spec_arrays: tuple,  # mtplug.metrics.layer.Metric.kernel_spec()
    method: int = ...,  # ENVELOPE_METHODS value
    n_threads: int = ...,  # OpenMP threads over sentences; the result does not depend on it
) -> list[tuple[np.ndarray, np.ndarray, int]]: ...  # line_sweep's result along each column

def support_sweeps(
    intercepts: np.ndarray,  # const double[::1] [n_hyp], w.f
    col_ptr: np.ndarray,  # const int64_t[::1] [n_columns + 1]
    col_hyp: np.ndarray,  # const int64_t[::1] [nnz], ascending within a column
    col_val: np.ndarray,  # const double[::1] [nnz], the nonzero slopes
    columns: np.ndarray,  # const int64_t[::1] [C], the directions (column numbers)
    hyp_sent: np.ndarray,  # const int32_t[::1] [n_hyp], each hypothesis's sentence
    sent_offsets: np.ndarray,  # const int64_t[::1] [S + 1], no empty sentence
    stats: np.ndarray,  # const int32_t[:, ::1] [n_hyp, n_stats]
    spec_arrays: tuple,  # mtplug.metrics.layer.Metric.kernel_spec()
    method: int = ...,  # ENVELOPE_METHODS value
    n_threads: int = ...,  # OpenMP threads over directions; the result does not depend on it
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]: ...
# xs f64 [sum K], scores f64 [sum K + C], k_ptr i64 [C + 1], n_lines i64 [C], best f64 [C], at_zero f64 [C]
