# Stub for the compiled module built from pyx/_moses_sbleu.pyx.
import numpy as np

def smoothed_sentence_bleu(
    stats: np.ndarray,  # const float[:, ::1] [n, 9], BLEU statistics
    smoothing: float = 1.0,
    smooth_bp: bool = False,
) -> np.ndarray: ...  # float32 [n], Moses's smoothedSentenceBleu per row
def corpus_bleu(
    totals: np.ndarray,  # const float[:, ::1] [m, 9], summed BLEU statistics
) -> np.ndarray: ...  # float32 [m], Moses's BleuScorer::calculateScore per row
