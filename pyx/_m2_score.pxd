# Moses's M2Scorer::calculateScore (mert/M2Scorer.cpp at Moses 34452895) of summed M2
# statistics, nogil, for the metric layer (pyx/_metric.pxd) and anything that scores M2
# totals:
#
#     from _m2_score cimport m2_goodness
#
# Only `cdef inline` here (no module of this name exists at run time; see _bleu.pxd).
# Statistics row: correct, proposed, gold, source length (pyx/_m2.pyx).

from libc.stdint cimport int64_t


cdef inline double m2_goodness(const int64_t* t, double beta) noexcept nogil:
    """F_beta of summed statistics t [4] as Moses computes it: the sums as float (exact
    below 2^24; Moses adds floats, we round the exact sum once), P = correct / proposed and
    R = correct / gold divided in double and stored in float (1 when the divisor is 0),
    beta^2 and beta^2 P + R in float, (1 + beta^2) P R / (beta^2 P + R) in double stored in
    float (0 when the denominator is 0). beta: read as float (Moses holds a float)."""
    cdef float c = <float>t[0], pr = <float>t[1], g = <float>t[2], b = <float>beta
    cdef float p = 1.0, r = 1.0, bb, bp, denom, f
    if pr != 0:
        p = <float>(<double>c / <double>pr)
    if g != 0:
        r = <float>(<double>c / <double>g)
    bb = b * b
    bp = bb * p
    denom = bp + r
    if denom == 0:
        return 0.0
    f = <float>((1.0 + <double>bb) * <double>p * <double>r / <double>denom)
    return f


cdef inline double m2_reference_length(const int64_t* t) noexcept nogil:
    """M2Scorer::getReferenceLength: the summed source length (column 3), which Moses's
    kbmira multiplies the sentence score by (Scorer::calculateSentenceLevelBackgroundScore)."""
    return <double><float>t[3]
