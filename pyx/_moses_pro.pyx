# Moses's pro sampler (mert/pro.cpp, Moses 34452895), draw for draw: glibc's rand() stream
# after srand(seed), the float32 smoothed sentence BLEU, and the threshold rule that picks
# the kept pairs. mtplug's own sampler (_pro.pyx) is a different, thread-independent design;
# this one exists so that ``pro -r SEED`` writes the bytes Moses's pro writes.
#
# glibc rand(): _glibc_rand.pxi (mtplug.integrations.moses.moses_random.GlibcRand is its
# pure-Python reference).
#
# Sampling per sentence with k hypotheses (Moses keeps duplicates; the hypotheses of
# several files follow one another, file by file), sentence BLEU b (float32):
#   for t in 0 .. gamma - 1:  i = rand() % k, then j = rand() % k;
#       skip when |b_i - b_j| < beta (float32 compare); else a sample (better = i when
#       b_i - b_j > 0, else j), with key 1 - |b_i - b_j| (rounded to float32).
#   when more than xi samples: threshold = float32(0.99999 - (xi-th smallest key)), else -1;
#   keep, in sample order, the first xi samples whose |b_i - b_j| >= threshold.

from libc.math cimport expf, fabsf, logf
from libc.stdint cimport int32_t, int64_t, uint32_t
from libc.stdlib cimport free, malloc, qsort

import numpy as np

cimport numpy as cnp

cnp.import_array()

include "_glibc_rand.pxi"


cdef class GlibcRandom:
    """glibc's ``srand(seed)``/``rand()`` stream (_glibc_rand.pxi); ``seed`` is taken as a
    C unsigned int (mod 2**32), as ``srand`` does. :meth:`next` gives the next value in
    [0, 2**31 - 1]; the samplers below draw from the same state."""

    cdef GlibcRand g

    def __init__(self, seed):
        glibc_srand(&self.g, <uint32_t>(int(seed) & 0xFFFFFFFF))

    cdef inline uint32_t rand(self) noexcept nogil:
        return glibc_rand(&self.g)

    def next(self):
        """The next ``rand()`` value, in [0, 2**31 - 1]."""
        return int(self.rand())

    def draws(self, Py_ssize_t n):
        """The next ``n`` ``rand()`` values: int64 [n]."""
        out = np.empty(n, dtype=np.int64)
        cdef int64_t[::1] o = out
        cdef Py_ssize_t i
        with nogil:
            for i in range(n):
                o[i] = self.rand()
        return out


def smoothed_sentence_bleu(const int32_t[:, ::1] stats, float smoothing=1.0, bint smooth_bp=False):
    """Moses's ``smoothedSentenceBleu`` (mert/BleuScorer.cpp) of every row of BLEU
    statistics (int32 [n, 9]: matches/totals for orders 1..4, then the reference length),
    in float32 as Moses computes it: float32 [n]."""
    cdef Py_ssize_t n = stats.shape[0], i, j
    if stats.shape[1] != 9:
        raise ValueError(f"BLEU statistics have 9 columns, not {stats.shape[1]}")
    out = np.empty(n, dtype=np.float32)
    cdef float[::1] o = out
    cdef float logbleu, reflength, brevity
    with nogil:
        for i in range(n):
            logbleu = 0.0
            for j in range(4):
                logbleu += logf(<float>stats[i, 2 * j] + smoothing) - logf(<float>stats[i, 2 * j + 1] + smoothing)
            logbleu /= <float>4
            reflength = <float>stats[i, 8] + (smoothing if smooth_bp else <float>0.0)
            # 1.0 - float: the subtraction is in double, then stored as float
            brevity = <float>(1.0 - <double>(reflength / <float>stats[i, 1]))
            if brevity < 0.0:
                logbleu += brevity
            o[i] = expf(logbleu)
    return out


cdef int _cmp_float(const void* a, const void* b) noexcept nogil:
    cdef float x = (<const float*>a)[0], y = (<const float*>b)[0]
    return (x > y) - (x < y)


def sample_moses_pairs(GlibcRandom rng, const float[::1] bleu, const int64_t[::1] rows,
                       const int64_t[::1] sent_offsets, int gamma=5000, int xi=50, float beta=0.05):
    """Moses's pro pairs of the sentences in ``sent_offsets`` (int64 [S + 1] into ``rows``;
    each sentence non-empty), drawing from ``rng`` (which moves on: the next call continues
    the stream, as Moses's one srand per run). ``rows``: int64, the hypotheses of each
    sentence in Moses's order as indices into ``bleu`` (float32, smoothed sentence BLEU)
    and into the caller's feature rows. Returns (better, worse), int64 [P] each, in the
    order Moses writes them (header comment)."""
    cdef Py_ssize_t S = sent_offsets.shape[0] - 1, s, t, m, kept, P = 0, cap
    cdef int64_t lo, k, a, b
    cdef float b1, b2, diff, threshold
    if S < 0:
        raise ValueError("sent_offsets must hold at least one entry")
    if gamma < 0 or xi < 0:
        raise ValueError("gamma and xi must be >= 0")
    for s in range(S):
        if sent_offsets[s + 1] <= sent_offsets[s]:
            raise ValueError(f"sentence {s} has no hypotheses")
    cap = S * xi
    better = np.empty(cap, dtype=np.int64)
    worse = np.empty(cap, dtype=np.int64)
    cdef int64_t[::1] ob = better, ow = worse
    cdef int64_t* s_first = <int64_t*>malloc(max(gamma, 1) * sizeof(int64_t))
    cdef int64_t* s_second = <int64_t*>malloc(max(gamma, 1) * sizeof(int64_t))
    cdef float* s_diff = <float*>malloc(max(gamma, 1) * sizeof(float))
    cdef float* keys = <float*>malloc(max(gamma, 1) * sizeof(float))
    if s_first == NULL or s_second == NULL or s_diff == NULL or keys == NULL:
        free(s_first); free(s_second); free(s_diff); free(keys)
        raise MemoryError()
    try:
        with nogil:
            for s in range(S):
                lo = sent_offsets[s]
                k = sent_offsets[s + 1] - lo
                m = 0
                for t in range(gamma):
                    a = rows[lo + (<int64_t>rng.rand()) % k]
                    b1 = bleu[a]
                    b = rows[lo + (<int64_t>rng.rand()) % k]
                    b2 = bleu[b]
                    diff = b1 - b2
                    if fabsf(diff) < beta:
                        continue
                    if diff > 0:
                        s_first[m] = a
                        s_second[m] = b
                        s_diff[m] = diff
                    else:
                        s_first[m] = b
                        s_second[m] = a
                        s_diff[m] = -diff
                    keys[m] = <float>(1.0 - <double>fabsf(diff))
                    m += 1
                threshold = -1.0
                if m > xi and xi > 0:
                    # only the xi-th smallest key matters, so a full sort gives Moses's value
                    qsort(keys, m, sizeof(float), _cmp_float)
                    threshold = <float>(0.99999 - <double>keys[xi - 1])
                kept = 0
                t = 0
                while kept < xi and t < m:
                    if s_diff[t] >= threshold:
                        ob[P] = s_first[t]
                        ow[P] = s_second[t]
                        P += 1
                        kept += 1
                    t += 1
    finally:
        free(s_first)
        free(s_second)
        free(s_diff)
        free(keys)
    return better[:P].copy(), worse[:P].copy()
