# Stub for the compiled module built from pyx/_mertdata_scan.pyx.
import numpy as np

STATUS_OK: int
STATUS_FIRST_HEADER: int
STATUS_MEMORY: int

class MertDataScanner:
    n_dense: int
    n_rows: int  # rows held (finish: all of them; take hands them over)
    rows_read: int  # rows of the file so far
    n_names: int  # sparse names seen so far
    dup_candidates: bool  # some block may hold two rows with equal features
    increasing: bool  # block sentence ids rise strictly so far
    nondecreasing: bool  # block sentence ids never fall so far
    err_code: int
    err_line: int
    err_a: int
    err_b: int
    err_sid: int
    err_count: int
    err_bin: bool
    err_text: bytes
    def __init__(self, scores: bool, names_only: bool = ...) -> None: ...
    def feed(self, chunk: bytes | memoryview) -> None: ...  # const uint8_t[::1], any size
    def run(self) -> int: ...  # STATUS_OK, STATUS_FIRST_HEADER or an error code
    def at_eof(self) -> int: ...
    def sparse_names(self, start: int = ...) -> list[bytes]: ...  # local sparse id order, from start
    def finish(
        self,
        name_ids: np.ndarray | None = ...,  # int32 [len(sparse_names())]: local -> store ids
    ) -> dict[str, np.ndarray]: ...  # features: sent_ids, dense, sparse_indptr, sparse_ids, sparse_values;
    # scores: sent_ids int32 [n], stats int32 [n, k]; both: blocks int64 [b, 3] (sid, rows, dup flag)
    def take(
        self,
        name_ids: np.ndarray | None = ...,  # int32 [>= n_names]
    ) -> dict[str, np.ndarray]: ...  # the completed blocks' rows: as finish, without sent_ids
