# BLEU from sufficient statistics: the nogil kernels other kernels cimport.
#
#     from _bleu cimport log_bleu, sentence_bleu, add_row, BLEU_N_STATS, VARIANT_NAKOV
#
# Why the bodies live here, as `cdef inline`: setup.py builds pyx/<name>.pyx as the module
# mtplug._ext.<name>, so Cython resolves a plain `cimport _bleu` to this file as a
# top-level module "_bleu". Non-inline cdef functions would be fetched at import time from
# a module named "_bleu", which does not exist; inline ones are compiled into every module
# that cimports them, need no runtime link, and inline well inside line-search loops.
# pyx/_bleu.pyx cimports them the same way and adds the def wrappers.
#
# Stats layout (mtplug.metrics.bleu.STATS_LAYOUT), one row per hypothesis:
#     match1 total1 match2 total2 match3 total3 match4 total4 ref_len
# Notation: m_n, t_n the clipped matches and the hypothesis n-grams of order n,
# h = t_1 the hypothesis length, r = ref_len / ref_divisor (ref_divisor > 0) the effective
# reference length. log BP(h, r) = min(0, 1 - r / h), taken as 0 when h >= r (so 0 for
# h = r = 0) and -inf when h = 0 < r. A log-BLEU of -inf is a BLEU of 0.
#
# Sentence-level variants (VARIANT_* codes; names in mtplug.metrics.bleu.SENTENCE_BLEU_VARIANTS):
#
# bleu (0)
#     1/4 sum_n log(m_n / t_n) + log BP(h, r); BLEU 0 when any m_n = 0.
#     Moses mert/BleuScorer.cpp BleuScorer::calculateScore on one row.
# bleu+1 (1)
#     Lin & Och (2004, ORANGE): +1 to matches and totals for n >= 2 only, plain BP:
#     1/4 [log(m_1 / t_1) + sum_{n=2..4} log((m_n + 1) / (t_n + 1))] + log BP(h, r);
#     BLEU 0 when m_1 = 0.
# moses-sentence-bleu (2)
#     Moses mert/BleuScorer.cpp smoothedSentenceBleu(stats) with its defaults
#     (smoothing = 1, smoothBP = false), which mert/sentence-bleu.cpp prints and mert/pro.cpp
#     uses without -b (the older sentenceLevelBleuPlusOne is the same formula): +1 to
#     matches and totals of every order, unigrams too; plain BP:
#     1/4 sum_{n=1..4} log((m_n + 1) / (t_n + 1)) + log BP(h, r).
#     h = r = 0 gives 1 (in Moses 0/0 is NaN, NaN < 0 is false, so no BP is applied).
# nakov (3)
#     Nakov, Guzman & Vogel (COLING 2012) "smoothing the brevity penalty", as Moses
#     implements it: smoothedSentenceBleu(stats, 1.0, true), i.e. mert/pro.cpp
#     --smooth-brevity-penalty ("as in Nakov et al. (Coling 2012)"). The moses-sentence-bleu
#     precisions, and +1 on the reference length in the BP only (h is not smoothed):
#     1/4 sum_{n=1..4} log((m_n + 1) / (t_n + 1)) + log BP(h, r + 1).
# stupid (4)
#     cdec training/dtrain/score.cc StupidBleuScorer::Score (dtrain stupid_bleu):
#     BLEU 0 when h = 0, r = 0 or m_1 = 0; otherwise over M = min(4, ceil(r)) orders with
#     weights 1/M (cdec takes M = ref_len when ref_len < 4; ceil keeps M >= 1 for the
#     fractional r of reflen=average, which cdec never sees):
#     1/M [log(m_1 / t_1) + sum_{n=2..M} log((m_n + 1) / (t_n + 1))] + log BP(h, r).
# fixed-stupid (5)
#     cdec FixedStupidBleuScorer::Score (dtrain fixed_stupid_bleu, the "fix" after Nakov
#     et al. 2012): stupid with the same zero cases and the same M (from r), but the BP
#     takes r + 1:  ... + log BP(h, r + 1).
#
# Nothing here checks its input: Python validates (mtplug.metrics.bleu).

from libc.math cimport INFINITY, NAN, ceil, exp, log
from libc.stdint cimport int32_t, int64_t

cdef enum:
    BLEU_ORDER = 4            # N, the highest n-gram order
    BLEU_N_STATS = 9          # 2 * N + 1 columns
    BLEU_REF_LEN_COLUMN = 8

# Mirrored by mtplug.metrics.bleu.SENTENCE_BLEU_VARIANTS (a test checks both agree).
cdef enum:
    VARIANT_BLEU = 0
    VARIANT_BLEU_PLUS_ONE = 1
    VARIANT_MOSES_SENTENCE_BLEU = 2
    VARIANT_NAKOV = 3
    VARIANT_STUPID = 4
    VARIANT_FIXED_STUPID = 5
    N_VARIANTS = 6


cdef inline double log_brevity(double hyp_len, double ref_len) noexcept nogil:
    """log BP = min(0, 1 - ref_len / hyp_len): 0 if hyp_len >= ref_len, -inf if hyp_len == 0 < ref_len."""
    if hyp_len >= ref_len:
        return 0.0
    if hyp_len <= 0.0:
        return -INFINITY
    return 1.0 - ref_len / hyp_len


cdef inline double log_bleu(const int64_t* totals, double ref_divisor) noexcept nogil:
    """Corpus log-BLEU of 9 summed int64 stats: 1/4 sum_n log(m_n / t_n) + log BP(t_1, r).

    -inf as soon as one m_n is 0 (Moses BleuScorer::calculateScore returns BLEU 0 then);
    that covers an empty hypothesis side too, since t_1 = 0 forces m_1 = 0.
    """
    cdef double acc = 0.0
    cdef Py_ssize_t n
    for n in range(BLEU_ORDER):
        if totals[2 * n] <= 0:
            return -INFINITY
        acc += log(<double>totals[2 * n]) - log(<double>totals[2 * n + 1])
    return acc / BLEU_ORDER + log_brevity(
        <double>totals[1], <double>totals[BLEU_REF_LEN_COLUMN] / ref_divisor)


cdef inline double _add_smoothed_log_bleu(const int32_t* row, double add_unigram,
                                          double add_higher, double bp_ref_len) noexcept nogil:
    """1/4 sum_n log((m_n + a_n) / (t_n + a_n)) + log BP(t_1, bp_ref_len) with
    a_1 = add_unigram, a_n = add_higher for n >= 2; -inf when some m_n + a_n is 0."""
    cdef double acc = 0.0, add = add_unigram, num
    cdef Py_ssize_t n
    for n in range(BLEU_ORDER):
        if n == 1:
            add = add_higher
        num = <double>row[2 * n] + add
        if num <= 0.0:
            return -INFINITY
        acc += log(num) - log(<double>row[2 * n + 1] + add)
    return acc / BLEU_ORDER + log_brevity(<double>row[1], bp_ref_len)


cdef inline double _cdec_stupid_log_bleu(const int32_t* row, double ref_len,
                                         double bp_ref_len) noexcept nogil:
    """cdec dtrain stupid_bleu, its brevity penalty taken at bp_ref_len (r or r + 1)."""
    cdef double acc
    cdef Py_ssize_t n, n_orders
    if row[1] <= 0 or ref_len <= 0.0 or row[0] <= 0:
        return -INFINITY
    if ref_len >= BLEU_ORDER:
        n_orders = BLEU_ORDER
    else:
        n_orders = <Py_ssize_t>ceil(ref_len)
    acc = log(<double>row[0]) - log(<double>row[1])
    for n in range(1, n_orders):
        acc += log(<double>row[2 * n] + 1.0) - log(<double>row[2 * n + 1] + 1.0)
    return acc / n_orders + log_brevity(<double>row[1], bp_ref_len)


cdef inline double sentence_log_bleu(const int32_t* row, double ref_divisor,
                                     int variant) noexcept nogil:
    """Log sentence BLEU of one int32 row under a VARIANT_* code (formulas above);
    -inf for BLEU 0, NaN for an unknown code."""
    cdef double ref_len = <double>row[BLEU_REF_LEN_COLUMN] / ref_divisor
    if variant == VARIANT_BLEU:
        return _add_smoothed_log_bleu(row, 0.0, 0.0, ref_len)
    if variant == VARIANT_BLEU_PLUS_ONE:
        return _add_smoothed_log_bleu(row, 0.0, 1.0, ref_len)
    if variant == VARIANT_MOSES_SENTENCE_BLEU:
        return _add_smoothed_log_bleu(row, 1.0, 1.0, ref_len)
    if variant == VARIANT_NAKOV:
        return _add_smoothed_log_bleu(row, 1.0, 1.0, ref_len + 1.0)
    if variant == VARIANT_STUPID:
        return _cdec_stupid_log_bleu(row, ref_len, ref_len)
    if variant == VARIANT_FIXED_STUPID:
        return _cdec_stupid_log_bleu(row, ref_len, ref_len + 1.0)
    return NAN


cdef inline double sentence_bleu(const int32_t* row, double ref_divisor, int variant) noexcept nogil:
    """Sentence BLEU in [0, 1]: exp(sentence_log_bleu(row, ref_divisor, variant))."""
    return exp(sentence_log_bleu(row, ref_divisor, variant))


cdef inline void add_row(int64_t* totals, const int32_t* row, int64_t sign) noexcept nogil:
    """totals += sign * row over the 9 columns (sign +1 or -1): the stats-delta step of line
    searches and hope/fear bookkeeping; int64 totals do not overflow on int32 rows."""
    cdef Py_ssize_t k
    for k in range(BLEU_N_STATS):
        totals[k] += sign * row[k]


cdef inline double cdec_ibm_bleu(const double* t, double ref_divisor) noexcept nogil:
    """cdec's BLEU of statistics t [9] (mteval/scorer.cc ``BLEUScore::ComputeScore``, IBM
    BLEU): exp(1/4 Σ_{n: t_n > 0} log(m'_n / t_n) + min(0, 1 − r/h)) with m'_n = m_n, or
    0.01 where m_n = 0 (its smoothing), r = t[8] / ref_divisor, h = t[1]. An order
    without n-grams adds nothing but the sum is still divided by 4; 1 when t is all 0,
    0 when h = 0 < r."""
    cdef double acc = 0.0, m, r = t[8] / ref_divisor, h = t[1]
    cdef Py_ssize_t n
    for n in range(4):
        if t[2 * n + 1] > 0.0:
            m = t[2 * n]
            if m == 0.0:
                m = 0.01
            acc += log(m) - log(t[2 * n + 1])
    acc /= 4.0
    if h < r:
        if h <= 0.0:
            return 0.0
        acc += (h - r) / h
    return exp(acc)
