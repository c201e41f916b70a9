# Stub for the compiled module built from pyx/_mertdata_scan.pyx.
import numpy as np

STATUS_OK: int
STATUS_FIRST_HEADER: int
STATUS_MEMORY: int

class MertDataScanner:
    n_dense: int
    n_rows: int
    err_code: int
    err_line: int
    err_a: int
    err_b: int
    err_sid: int
    err_count: int
    err_bin: bool
    err_text: bytes
    def __init__(self, scores: bool) -> None: ...
    def feed(self, chunk: bytes, first_line: int) -> None: ...  # const uint8_t[::1]
    def run(self) -> int: ...  # STATUS_OK, STATUS_FIRST_HEADER or an error code
    def at_eof(self) -> int: ...
    def sparse_names(self) -> list[bytes]: ...  # local sparse id order
    def finish(
        self,
        name_ids: np.ndarray | None = ...,  # int32 [len(sparse_names())]: local -> store ids
    ) -> dict[str, np.ndarray]: ...  # features: sent_ids, dense, sparse_indptr, sparse_ids, sparse_values;
    # scores: sent_ids int32 [n], stats int32 [n, 9]
