# Stub for the compiled module built from pyx/_m2.pyx.
import numpy as np

M2_STATS: int

def m2_stats(
    hyp_ptr: np.ndarray,  # const int64_t[::1] [n + 1]
    hyp_words: np.ndarray,  # const int32_t[::1], word ids (equal ids = equal as Moses compares words); >= 1 word each
    run_start: np.ndarray,  # const int64_t[::1] [R + 1]
    run_sid: np.ndarray,  # const int64_t[::1] [R]
    src_ptr: np.ndarray,  # const int64_t[::1] [S + 1], >= 1 source word per sentence named
    src_words: np.ndarray,  # const int32_t[::1]
    text_ptr: np.ndarray,  # const int64_t[::1] [V + 1]: word id -> its compared text
    text: np.ndarray,  # const uint8_t[::1]
    gold_ptr: np.ndarray,  # const int64_t[::1] [S + 1]: sentence -> its distinct gold edits
    gold_start: np.ndarray,  # const int64_t[::1] [G], source word offsets
    gold_end: np.ndarray,  # const int64_t[::1] [G]
    gold_annotator: np.ndarray,  # const int32_t[::1] [G], < n_annotators of its sentence
    gold_text_ptr: np.ndarray,  # const int64_t[::1] [G + 1]
    gold_text: np.ndarray,  # const uint8_t[::1], corrections as compared (transformed)
    n_annotators: np.ndarray,  # const int32_t[::1] [S], >= 1
    max_unchanged: int,  # >= 0
    beta: float,  # float32
    spaced: bool,  # truecase: edit texts join words with a space; else run together
    out: np.ndarray,  # int32_t[:, ::1] [n, 4]: correct, proposed, gold, source length
    n_threads: int = 1,
) -> int: ...  # 0, -1 when out of memory, h + 1 when hypothesis h has no word
def corpus_f_beta(
    summed: np.ndarray,  # const int64_t[::1] [4]: correct, proposed, gold, source length
    beta: float,  # read as float32
) -> float: ...  # Moses's M2Scorer::calculateScore (pyx/_m2_score.pxd m2_goodness)
