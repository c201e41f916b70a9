"""Stub for mtplug._ext._exact (pyx/_exact.pyx): exact accumulators of doubles."""

import numpy as np

#: int64 entries per accumulator row
WIDTH: int

def add_values(
    acc: np.ndarray,  # int64_t[::1], [WIDTH], normalized; left normalized
    values: np.ndarray,  # const float64_t[::1], [n], added exactly
) -> None: ...
def merge(
    into: np.ndarray,  # int64_t[:, ::1], [k, WIDTH], += other
    other: np.ndarray,  # const int64_t[:, ::1], [k, WIDTH]
) -> None: ...
def round_rows(
    acc: np.ndarray,  # const int64_t[:, ::1], [k, WIDTH]
    out: np.ndarray,  # float64_t[::1], [k], overwritten: each sum rounded to nearest even
) -> None: ...
