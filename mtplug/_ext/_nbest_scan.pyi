# Stub for the compiled module built from pyx/_nbest_scan.pyx.
import numpy as np

class Vocabulary:
    n: int
    def add(self, word: bytes) -> int: ...
    def get(self, word: bytes) -> int: ...
    def __len__(self) -> int: ...
    def word(self, i: int) -> str: ...
    def words(self, errors: str = "strict") -> list[str]: ...
    def to_arrays(self) -> tuple[np.ndarray, np.ndarray]: ...  # uint8 [bytes], int64 [n + 1]
    @staticmethod
    def from_arrays(arena: np.ndarray, offsets: np.ndarray) -> Vocabulary: ...
    @staticmethod
    def from_words(words) -> Vocabulary: ...

class NbestScanner:
    n_dense: int
    layout_fixed: bool
    err_code: int
    err_line: int
    err_text: bytes
    n_hypotheses: int  # read so far, those taken by take_sentences included
    next_line: int  # line number of the next chunk's first line
    n_fields: int  # '|||'-separated fields of the file's first line (0 before it); every line has as many
    fields_line: int  # the number of that line
    err_fields: int  # the fields of the line an error 15 (another number of fields) names
    def __init__(
        self,
        words: Vocabulary,
        names: Vocabulary,
        labels: Vocabulary,
        label_base: np.ndarray,  # int32 [n_labels]
        label_count: np.ndarray,  # int32 [n_labels]
        n_dense: int,
        lowercase: bool = ...,
        lower_fn=...,
        refs: tuple[np.ndarray, np.ndarray, np.ndarray] | None = ...,  # int64, int64, int32
        reflen_mode: int = ...,
    ) -> None: ...
    def hypothesis_stats(
        self,
        sid: int,
        words: np.ndarray,  # const int32_t[::1], word ids of `words`
        ptr: np.ndarray,  # const int64_t[::1] [n + 1]
        out: np.ndarray,  # int32_t[:, ::1] [n, 9], filled
    ) -> None: ...
    def new_file(self) -> None: ...
    def scan(self, chunk: bytes | memoryview, first_line: int, plain: bool = ...) -> int: ...  # releases the GIL
    def layout(self) -> tuple[np.ndarray, np.ndarray]: ...
    def finish(self, n_threads: int = ...) -> dict[str, np.ndarray]: ...  # BLEU stats on n_threads threads
    def take_sentences(self, final: bool = ...) -> dict[str, np.ndarray]: ...  # whole sentences, no stats;
    # plus run_start int64 [R + 1], run_sid int64 [R], word_class int32 (bleu_stats's arguments)

def bleu_stats(
    hyp_indptr: np.ndarray,  # const int64_t[::1] [n + 1]
    hyp_bytes: np.ndarray,  # const uint8_t[::1], LEB128 word ids
    run_start: np.ndarray,  # const int64_t[::1] [R + 1], 0 .. n: runs of one sentence each
    run_sid: np.ndarray,  # const int64_t[::1] [R], the sentence of each run
    word_class: np.ndarray,  # const int32_t[::1] [n_words] (lowercasing) or [0]
    ref_sent_ptr: np.ndarray,  # const int64_t[::1] [S + 1]
    ref_tok_ptr: np.ndarray,  # const int64_t[::1] [R_refs + 1]
    ref_tokens: np.ndarray,  # const int32_t[::1], class ids
    reflen_mode: int,  # 0 closest, 1 shortest, 2 average (sum)
    out: np.ndarray,  # int32_t[:, ::1] [n, 9], filled
    n_threads: int = ...,  # OpenMP threads over runs; the result does not depend on it
) -> int: ...  # 0, or -1 when memory runs out

def decode_hypotheses(
    data: np.ndarray,  # const uint8_t[::1]
    indptr: np.ndarray,  # const int64_t[::1]
    start: int,
    stop: int,
) -> tuple[np.ndarray, np.ndarray]: ...  # int64 [m + 1], int32 [tokens]
