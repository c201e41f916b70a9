# Stub for mtplug._ext._exact (pyx/_exact.pyx): exact accumulators of doubles.

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
def pack(
    acc: np.ndarray,  # const int64_t[:, ::1], [k, WIDTH], normalized
) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...  # (offsets int64 [k+1], first uint8 [k], chunks int64)
def unpack(
    offsets: np.ndarray,  # const int64_t[::1], [k + 1]
    first: np.ndarray,  # const uint8_t[::1], [k]: first column | 0x80 for a negative row
    chunks: np.ndarray,  # const int64_t[::1], [offsets[k]]
    r0: int,  # first row to unpack
    out: np.ndarray,  # int64_t[:, ::1], [m, WIDTH], overwritten with rows r0 .. r0 + m
) -> None: ...
