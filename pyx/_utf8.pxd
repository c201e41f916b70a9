# Strict UTF-8 validation of byte strings, as Python's decoder judges them.
#
#     from _utf8 cimport valid_utf8
#
# Readers check each new name or word once, before interning it (pyx/_mertdata_scan.pyx,
# pyx/_cdec_forest.pyx), and report where a check failed; their Python wrappers word the
# message. Only `cdef inline` here (no module of this name exists at run time; see _bleu.pxd).

from libc.stdint cimport uint8_t


cdef inline bint valid_utf8(const uint8_t* s, Py_ssize_t n) noexcept nogil:
    """Strict UTF-8 (as Python decodes it): no overlong forms, surrogates or > U+10FFFF."""
    cdef Py_ssize_t i = 0, k, need
    cdef uint8_t c, lo, hi
    while i < n:
        c = s[i]
        if c < 0x80:
            i += 1
            continue
        lo = 0x80
        hi = 0xBF
        if 0xC2 <= c <= 0xDF:
            need = 1
        elif c == 0xE0:
            need = 2
            lo = 0xA0
        elif c == 0xED:
            need = 2
            hi = 0x9F
        elif 0xE1 <= c <= 0xEF:
            need = 2
        elif c == 0xF0:
            need = 3
            lo = 0x90
        elif c == 0xF4:
            need = 3
            hi = 0x8F
        elif 0xF1 <= c <= 0xF3:
            need = 3
        else:
            return False
        if i + need >= n:
            return False
        if s[i + 1] < lo or s[i + 1] > hi:
            return False
        for k in range(2, need + 1):
            if s[i + k] < 0x80 or s[i + k] > 0xBF:
                return False
        i += need + 1
    return True
