# Moses's smoothedSentenceBleu (mosesdecoder 34452895, mert/BleuScorer.cpp), the number
# Moses's sentence-bleu prints and pro ranks by, in Moses's single precision: each
# log(x + smoothing) is logf of a float sum, the differences are summed in float, the sum
# times 0.25, the brevity 1 - (r + smoothing if smooth_bp) / c in float added when
# negative, then expf. The slow reference: tests/integrations/test_moses_sentence_bleu.py.
#
# stats float32 [n, 9] (BLEU statistics; the reference length an integer, as Moses's
# Reference::Calc* return int).

from libc.math cimport expf, logf

import numpy as np


def smoothed_sentence_bleu(const float[:, ::1] stats, float smoothing=1.0, bint smooth_bp=False):
    """float32 [n]: Moses's smoothedSentenceBleu of each row of ``stats`` [n, 9]."""
    cdef Py_ssize_t n = stats.shape[0], r
    cdef int j
    cdef float logbleu, a, b, reflength, brevity
    out = np.empty(n, dtype=np.float32)
    cdef float[::1] o = out
    with nogil:
        for r in range(n):
            logbleu = 0.0
            for j in range(4):
                a = stats[r, 2 * j] + smoothing
                a = logf(a)
                b = stats[r, 2 * j + 1] + smoothing
                b = logf(b)
                a = a - b
                logbleu = logbleu + a
            logbleu = logbleu * <float>0.25
            reflength = stats[r, 8]
            if smooth_bp:
                reflength = reflength + smoothing
            brevity = reflength / stats[r, 1]
            brevity = <float>1.0 - brevity
            if brevity < 0:
                logbleu = logbleu + brevity
            o[r] = expf(logbleu)
    return out


def corpus_bleu(const float[:, ::1] totals):
    """float32 [m]: Moses's BleuScorer::calculateScore of each row of summed statistics
    ``totals`` [m, 9]: 0 when a match count is 0, else the logf differences summed in
    float, times 0.25, the brevity 1 - r/c added when negative, expf."""
    cdef Py_ssize_t m = totals.shape[0], r
    cdef int j
    cdef float logbleu, a, b, brevity
    out = np.zeros(m, dtype=np.float32)
    cdef float[::1] o = out
    with nogil:
        for r in range(m):
            logbleu = 0.0
            for j in range(4):
                if totals[r, 2 * j] == 0:
                    break
                a = logf(totals[r, 2 * j])
                b = logf(totals[r, 2 * j + 1])
                a = a - b
                logbleu = logbleu + a
            else:
                logbleu = logbleu * <float>0.25
                brevity = totals[r, 8] / totals[r, 1]
                brevity = <float>1.0 - brevity
                if brevity < 0:
                    logbleu = logbleu + brevity
                o[r] = expf(logbleu)
    return out
