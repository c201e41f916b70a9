# Number-to-text for the Moses extractor files: C's %g is what Moses's iostreams print,
# and formatting 30 million numbers in Python would dominate writing a features.dat.

from libc.stdio cimport snprintf
from libc.stdint cimport int32_t

include "_growbuf.pxi"


def format_g_rows(const double[:, ::1] values, bint as_float32):
    """Rows of ``values`` as ``b"v1 v2 ... vk "`` (``%g`` each, a space after each value).

    With ``as_float32`` each value is first rounded to float, as Moses stores features.
    Returns a list of bytes, one per row.
    """
    cdef Py_ssize_t n = values.shape[0], d = values.shape[1], i, j
    cdef char buf[64]
    cdef int k
    cdef double v
    cdef GrowBuf line
    out = []
    line.data = NULL
    line.size = 0
    line.cap = 0
    try:
        for i in range(n):
            line.size = 0
            for j in range(d):
                v = <double>(<float>values[i, j]) if as_float32 else values[i, j]
                k = snprintf(buf, sizeof(buf), b"%g ", v)
                if growbuf_append(&line, buf, k) != 0:
                    raise MemoryError()
            out.append(line.data[:line.size] if line.size else b"")
    finally:
        growbuf_free(&line)
    return out


def format_int_rows(const int32_t[:, ::1] values):
    """Rows of ``values`` as ``b"a b ... z "`` (a space after each value), one bytes per row."""
    cdef Py_ssize_t n = values.shape[0], d = values.shape[1], i, j
    cdef char buf[32]
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
                k = snprintf(buf, sizeof(buf), b"%d ", values[i, j])
                if growbuf_append(&line, buf, k) != 0:
                    raise MemoryError()
            out.append(line.data[:line.size] if line.size else b"")
    finally:
        growbuf_free(&line)
    return out
