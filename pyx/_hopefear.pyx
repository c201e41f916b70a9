# Hope/fear selection for the margin learners (MIRA, kbmira, RAMPION): per sentence
# the hypothesis maximising  model_coef * score + gain_coef * gain.
#
# With gain g (sentence metric, higher is better) and cost = 1 - g, the strategies of
# Eidelman (2012, Eq. 3) are: oracle LU = (0, 1); hope M-C = (1, a); prediction
# PB = (1, 0); MC (max cost) = (0, -1); fear M+C = (1, -a) (a scales the cost, RAMPION's
# alpha). Ties go to the larger model score, then to the lowest row.
#
# Sentences run in parallel (OpenMP prange); each writes only out[s], so the result does not
# depend on the thread count.

from cython.parallel cimport prange
from libc.stdint cimport int64_t


def select(const double[::1] scores, const double[::1] gains, const int64_t[::1] sent_offsets,
           double model_coef, double gain_coef, int64_t[::1] out, int n_threads=1):
    """out[s] = argmax over rows of sentence s of model_coef*scores + gain_coef*gains.

    scores, gains: float64 [n_hyp]; sent_offsets int64 [S + 1] (no empty sentence);
    out int64 [S]. Ties: larger score, then lowest row. Sentences are split over
    n_threads OpenMP threads (static schedule); the result does not depend on it.
    """
    cdef Py_ssize_t S = sent_offsets.shape[0] - 1, s
    cdef int64_t h, best
    cdef double v, bv
    cdef int T = n_threads if n_threads > 1 else 1
    if T > S:
        T = S if S > 0 else 1
    with nogil:
        for s in prange(S, num_threads=T, schedule="static"):
            best = sent_offsets[s]
            bv = model_coef * scores[best] + gain_coef * gains[best]
            for h in range(sent_offsets[s] + 1, sent_offsets[s + 1]):
                v = model_coef * scores[h] + gain_coef * gains[h]
                if v > bv or (v == bv and scores[h] > scores[best]):
                    best = h
                    bv = v
            out[s] = best
