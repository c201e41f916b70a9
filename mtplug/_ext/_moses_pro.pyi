# Stub for the compiled module built from pyx/_moses_pro.pyx.
import numpy as np

class GlibcRandom:  # glibc's srand(seed)/rand() stream (seed mod 2**32)
    def __init__(self, seed: int) -> None: ...
    def next(self) -> int: ...  # the next rand() value, in [0, 2**31 - 1]
    def draws(self, n: int) -> np.ndarray: ...  # int64 [n]: the next n rand() values

def smoothed_sentence_bleu(
    stats: np.ndarray,  # const int32_t[:, ::1] [n, 9] BLEU statistics
    smoothing: float = 1.0,
    smooth_bp: bool = False,
) -> np.ndarray: ...  # float32 [n]: Moses's smoothedSentenceBleu, in float32

def sample_moses_pairs(
    rng: GlibcRandom,  # drawn from (moves on)
    bleu: np.ndarray,  # const float[::1] [n] sentence BLEU of every row
    rows: np.ndarray,  # const int64_t[::1] the hypotheses of each sentence, in Moses's order
    sent_offsets: np.ndarray,  # const int64_t[::1] [S + 1] into rows; no sentence empty
    gamma: int = 5000,
    xi: int = 50,
    beta: float = 0.05,
) -> tuple[np.ndarray, np.ndarray]: ...  # (better, worse) int64 [P], in Moses's output order
