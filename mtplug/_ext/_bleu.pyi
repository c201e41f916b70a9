# Stub for mtplug._ext._bleu (pyx/_bleu.pyx): BLEU from sufficient statistics.

import numpy as np

#: variant name -> code of the C enum (mirrored by mtplug.metrics.bleu.SENTENCE_BLEU_VARIANTS)
VARIANT_CODES: dict[str, int]
#: columns of a stats row (9)
N_STATS: int
#: highest n-gram order (4)
ORDER: int

def sentence_bleu_rows(
    stats: np.ndarray,  # const int32_t[:, ::1], [n_rows, 9]
    ref_divisor: float,  # > 0
    variant: int,  # a VARIANT_CODES value
    out: np.ndarray,  # float64_t[::1], [n_rows], filled in place with BLEU in [0, 1]
    n_threads: int = 1,  # OpenMP threads over rows; the result does not depend on it
) -> None: ...
def corpus_log_bleu(
    totals: np.ndarray,  # const int64_t[::1], [9]
    ref_divisor: float,
) -> float: ...  # log BLEU, -inf for BLEU 0
def add_rows(
    stats: np.ndarray,  # const int32_t[:, ::1], [n_rows, 9]
    sign: int,  # +1 or -1
    out: np.ndarray,  # int64_t[::1], [9], updated in place
) -> None: ...
def py_sentence_log_bleu(
    row: np.ndarray,  # const int32_t[::1], [9]
    ref_divisor: float,
    variant: int,
) -> float: ...  # log BLEU, -inf for BLEU 0, nan for an unknown variant code
def py_log_brevity(hyp_len: float, ref_len: float) -> float: ...
