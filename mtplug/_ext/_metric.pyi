# Stub for the compiled module built from pyx/_metric.pyx.
import numpy as np

KINDS: dict[str, int]
PARTS_MAX: int
STATS_MAX: int

def objective(
    totals: np.ndarray,  # const int64_t[::1] [n_stats], summed statistics
    kinds: np.ndarray,  # const int32_t[::1] [P], KINDS values
    offsets: np.ndarray,  # const int32_t[::1] [P], first column of each part
    widths: np.ndarray,  # const int32_t[::1] [P]
    weights: np.ndarray,  # const double[::1] [P]
    params: np.ndarray,  # const double[::1] [P], > 0
    constant: float,
) -> float: ...  # constant + sum_p weight_p * goodness_p
def row_objectives(
    stats: np.ndarray,  # const int32_t[:, ::1] [n, n_stats]
    kinds: np.ndarray,
    offsets: np.ndarray,
    widths: np.ndarray,
    weights: np.ndarray,
    params: np.ndarray,
    constant: float,
    bleu_variant: int,  # mtplug.metrics.bleu.SENTENCE_BLEU_VARIANTS value
    sum_scale: float,  # sum parts are multiplied by this (the number of sentences)
    out: np.ndarray,  # double[::1] [n], overwritten
    n_threads: int = 1,
) -> None: ...
def totals_objectives(
    totals: np.ndarray,  # const int64_t[:, ::1] [B, n_stats], summed statistics per row
    kinds: np.ndarray,
    offsets: np.ndarray,
    widths: np.ndarray,
    weights: np.ndarray,
    params: np.ndarray,
    constant: float,
    out: np.ndarray,  # double[::1] [B], overwritten with each row's objective
) -> None: ...
