# Compensated summation shared by the kernels that add up long sums of doubles.
# Only `cdef inline` here (no module of this name exists at run time; see _bleu.pxd).


cdef inline void neumaier_add(double* total, double* comp, double x) noexcept nogil:
    """total + comp += x with Neumaier's compensation (the sum is total + comp)."""
    cdef double t = total[0] + x
    if abs(total[0]) >= abs(x):
        comp[0] += (total[0] - t) + x
    else:
        comp[0] += (x - t) + total[0]
    total[0] = t
