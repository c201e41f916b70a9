# Number-to-text for the Moses extractor files: C's %g is what Moses's iostreams print,
# and formatting 30 million numbers in Python would dominate writing a features.dat.

from libc.stdio cimport snprintf
from libc.stdint cimport int32_t

include "_growbuf.pxi"

ctypedef fused number:
    double
    int32_t


def format_rows(const number[:, ::1] values, bint as_float32=False):
    """Rows of ``values`` as ``b"v1 v2 ... vk "`` (a space after each value), one bytes per row.

    float64 values print as ``%g`` (after rounding to float with ``as_float32``, as
    Moses stores features); int32 values as ``%d``.
    """
    cdef Py_ssize_t n = values.shape[0], d = values.shape[1], i, j
    cdef char buf[64]
    cdef int k
    cdef GrowBuf line
    out = []
    line.data = NULL
    line.size = 0
    line.cap = 0
    try:
        for i in range(n):
            line.size = 0
            for j in range(d):
                if number is double:
                    k = snprintf(buf, sizeof(buf), b"%g ",
                                 <double>(<float>values[i, j]) if as_float32 else values[i, j])
                else:
                    k = snprintf(buf, sizeof(buf), b"%d ", values[i, j])
                if growbuf_append(&line, buf, k) != 0:
                    raise MemoryError()
            out.append(line.data[:line.size] if line.size else b"")
    finally:
        growbuf_free(&line)
    return out
