# Stub for the compiled module built from pyx/_rampion.pyx.
import numpy as np

def ssd_epoch(
    dense: np.ndarray,  # const double[:, ::1] [n_hyp, n_dense]
    sp_indptr: np.ndarray,  # const int64_t[::1] [n_hyp + 1]
    sp_ids: np.ndarray,  # const int32_t[::1], global feature ids
    sp_values: np.ndarray,  # const double[::1]
    sent_offsets: np.ndarray,  # const int64_t[::1] [S + 1], no empty sentence
    base: np.ndarray,  # const double[::1] [n_hyp], θ0·f_h
    gains: np.ndarray,  # const double[::1] [n_hyp], sentence metric g
    hope_prob: np.ndarray,  # const double[::1] [n_hyp], hope distribution per sentence
    fear_model: float,
    fear_gain: float,
    soft_fear: bool,
    eta: float,
    shrink: float,  # 1 − η·C/N, in (0, 1]
    u: np.ndarray,  # double[::1] [n_features], θ − θ0 (in/out)
    work: np.ndarray,  # double[::1] [max sentence size], scratch
    risk_alpha: float = 0.0,  # > 0: Bayes risk's step, coefficient risk_alpha·p_h·(g_h − ḡ)
) -> tuple[int, int]: ...  # (0, -1) or (1, sentence with a non-finite model score)
