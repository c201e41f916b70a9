# The metric layer's nogil core: a corpus objective from summed statistics, for every
# metric mtplug knows and their weighted sums. The line sweep, the row scorer and any
# kernel that needs "how good is this set of statistics" cimport it:
#
#     from _metric cimport MetricSpec, metric_objective, part_goodness, MAX_STATS
#
# A store's statistics row is the concatenation of its metric parts' rows; part p owns
# columns offset[p] .. offset[p] + width[p] - 1. Every part turns its summed columns into
# a *goodness* (higher is better; Moses's calculateScore for the metrics Moses has):
#
#   KIND_BLEU        width 9; BLEU (pyx/_bleu.pxd) with r = ref_len / param
#   KIND_SUM         width 1 (g) or 2 (hi, lo: g = hi * 2^31 + lo); g / param. The
#                    synthetic `linear` metric and external per-hypothesis scores
#   KIND_CHRF        width 3 * orders; chrF (pyx/_chrf_score.pxd) / 100 with beta = param
#   KIND_TER         width 2 (edits, ref_len * param); 1 - TER, TER = edits / (col1 / param),
#                    1 when the reference length is 0 and there are edits, else 0 (sacrebleu)
#   KIND_ERROR_RATE  width 2 (distance, ref_len); 1 - distance / ref_len, 1 when ref_len is 0
#                    (Moses CderScorer: CDER, and WER without jumps); width 3 for Moses's
#                    TerScorer rows (edits, average ref_len, TER; the third is not summed)
#   KIND_PER         width 3 (correct, hyp_len, ref_len);
#                    (correct - max(0, hyp_len - ref_len)) / ref_len, 0 when ref_len is 0
#                    (Moses PerScorer)
#   KIND_M2          width 4 (correct, proposed, gold, source length); Moses's M2SCORER
#                    F_beta (pyx/_m2_score.pxd) with beta = param
#   KIND_MOSES_CHRF  width 20 (correct, guess, refhits per byte order 1..6, 2 x hyp length,
#                    ref length); Moses's CHRFScorer::calculateScore (smooth 0) with beta = param
#                    (mtplug.metrics.moses_ngram)
#
# The objective is constant + sum_p weight[p] * goodness_p. Python (mtplug.metrics.layer)
# builds the spec and maps the objective back to the metric's natural scale.

from libc.math cimport exp
from libc.stdint cimport int32_t, int64_t

from _bleu cimport log_bleu, sentence_bleu
from _chrf_score cimport f_score
from _m2_score cimport m2_goodness

cdef enum:
    KIND_BLEU = 0
    KIND_SUM = 1
    KIND_CHRF = 2
    KIND_TER = 3
    KIND_ERROR_RATE = 4
    KIND_PER = 5
    KIND_M2 = 6
    KIND_MOSES_CHRF = 7
    N_KINDS = 8
    MAX_PARTS = 8
    MAX_STATS = 64     # statistics columns per hypothesis, all parts together


cdef struct MetricSpec:
    int n_parts
    int kind[MAX_PARTS]
    int offset[MAX_PARTS]
    int width[MAX_PARTS]
    double weight[MAX_PARTS]
    double param[MAX_PARTS]
    double constant


cdef inline double moses_chrf_goodness(const int64_t* t, double beta) noexcept nogil:
    """CHRFScorer::calculateScore of summed statistics t [20] (smooth 0): the sums as float,
    P and R the float means over the 6 orders of quotients taken in double and added to a
    float, (1 + beta^2) P R / (beta^2 P + R) in double (pow promotes) returned as float;
    NaN when an order has no n-gram, as Moses."""
    cdef float p = 0.0, r = 0.0, pm, rm
    cdef double bb = <double>(<float>beta) * <double>(<float>beta)
    cdef int k
    for k in range(6):
        p = <float>(<double>p + <double>(<float>t[3 * k]) / <double>(<float>t[3 * k + 1]))
        r = <float>(<double>r + <double>(<float>t[3 * k]) / <double>(<float>t[3 * k + 2]))
    pm = p / <float>6.0
    rm = r / <float>6.0
    return <float>(((1.0 + bb) * <double>(pm * rm)) / (bb * <double>pm + <double>rm))


cdef inline double part_goodness(const int64_t* t, int kind, int width, double param) noexcept nogil:
    """Goodness of one part's summed statistics t [width] (see the file comment)."""
    cdef double ref, ter
    if kind == KIND_BLEU:
        return exp(log_bleu(t, param))
    if kind == KIND_SUM:
        if width == 2:
            return (<double>t[0] * 2147483648.0 + <double>t[1]) / param
        return <double>t[0] / param
    if kind == KIND_CHRF:
        return f_score(t, width // 3, param) / 100.0
    if kind == KIND_TER:
        ref = <double>t[1] / param
        if ref > 0:
            ter = <double>t[0] / ref
        else:
            ter = 1.0 if t[0] > 0 else 0.0
        return 1.0 - ter
    if kind == KIND_ERROR_RATE:
        if t[1] == 0:
            return 1.0
        return 1.0 - <double>t[0] / <double>t[1]
    if kind == KIND_PER:
        if t[2] == 0:
            return 0.0
        return (<double>t[0] - (<double>(t[1] - t[2]) if t[1] > t[2] else 0.0)) / <double>t[2]
    if kind == KIND_M2:
        return m2_goodness(t, param)
    if kind == KIND_MOSES_CHRF:
        return moses_chrf_goodness(t, param)
    return 0.0


cdef inline double metric_objective(const int64_t* totals, const MetricSpec* spec) noexcept nogil:
    """constant + sum_p weight[p] * goodness of part p, from summed statistics."""
    cdef double g = spec.constant
    cdef int p
    for p in range(spec.n_parts):
        g += spec.weight[p] * part_goodness(totals + spec.offset[p], spec.kind[p], spec.width[p], spec.param[p])
    return g


cdef inline double row_objective(const int32_t* row, const MetricSpec* spec, int bleu_variant,
                                 double sum_scale, int64_t* buf) noexcept nogil:
    """The sentence-level objective of one statistics row: BLEU parts scored with the
    sentence-BLEU ``bleu_variant``, SUM parts multiplied by ``sum_scale`` (the number of
    sentences, so that their mean over a corpus's chosen rows is the corpus value), every
    other part as its corpus formula on the row. buf: scratch of MAX_STATS entries."""
    cdef double g = spec.constant
    cdef int p, k, o
    for p in range(spec.n_parts):
        o = spec.offset[p]
        if spec.kind[p] == KIND_BLEU:
            g += spec.weight[p] * sentence_bleu(row + o, spec.param[p], bleu_variant)
            continue
        for k in range(spec.width[p]):
            buf[k] = row[o + k]
        if spec.kind[p] == KIND_SUM:
            g += spec.weight[p] * sum_scale * part_goodness(buf, KIND_SUM, spec.width[p], spec.param[p])
        else:
            g += spec.weight[p] * part_goodness(buf, spec.kind[p], spec.width[p], spec.param[p])
    return g


cdef inline int fill_spec(MetricSpec* spec, const int32_t[::1] kinds, const int32_t[::1] offsets,
                          const int32_t[::1] widths, const double[::1] weights, const double[::1] params,
                          double constant, Py_ssize_t n_stats):
    """Copy a spec given as arrays (mtplug.metrics.layer.Metric.kernel_spec) into ``spec``;
    returns 0, or -1 when it does not describe ``n_stats`` columns."""
    cdef Py_ssize_t p, n = kinds.shape[0]
    if n < 1 or n > MAX_PARTS or offsets.shape[0] != n or widths.shape[0] != n \
            or weights.shape[0] != n or params.shape[0] != n or n_stats > MAX_STATS:
        return -1
    spec.n_parts = <int>n
    spec.constant = constant
    for p in range(n):
        if kinds[p] < 0 or kinds[p] >= N_KINDS or offsets[p] < 0 or widths[p] < 1 \
                or offsets[p] + widths[p] > n_stats \
                or not (params[p] > 0 or (kinds[p] == KIND_M2 and params[p] == 0)):
            return -1
        spec.kind[p] = kinds[p]
        spec.offset[p] = offsets[p]
        spec.width[p] = widths[p]
        spec.weight[p] = weights[p]
        spec.param[p] = params[p]
    return 0
