# Number text without the C library's general machinery: the n-best reader parses 30 million
# feature values and the extractor writes as many, and strtod / snprintf("%g") took a third
# of an extraction's time (issue 23's profile).
#
#     from _numtext cimport format_g6, format_int, parse_double, scan_decimal
#
# Both fast paths are exact or step aside: scan_decimal takes the numbers whose value one
# correctly rounded IEEE operation gives (Clinger's fast path: at most 19 digits, a
# mantissa below 2**53 and a power of ten up to 1e22), and parse_double hands the rest to
# strtod; format_g6 rounds with one correctly rounded product and falls back to snprintf
# when the result lies within 1e-8 of a rounding tie or the power of ten is not exact.
# Their results are strtod's and printf's, byte for byte (tests/formats/test_numtext.py
# checks them against the C library's strtod and Python's format(x, "g")).
# Only `cdef inline` here (no module of this name exists at run time; see _bleu.pxd).

from libc.stdint cimport int64_t, uint64_t
from libc.stdio cimport snprintf
from libc.stdlib cimport strtod
from libc.string cimport memcpy
from libc.math cimport signbit

cdef extern from *:
    """
    /* 10**k, exact in a double for k <= 22 */
    static const double mtplug_pow10[23] = {
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
        1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    """
    const double* mtplug_pow10


cdef inline int format_int(int64_t v, char* out) noexcept nogil:
    """``v`` in decimal (printf's %d / %lld) at ``out``; returns its length (at most 20)."""
    cdef char tmp[24]
    cdef int n = 0, k
    cdef uint64_t u = (<uint64_t>0 - <uint64_t>v) if v < 0 else <uint64_t>v
    while True:
        tmp[n] = <char>(48 + u % 10)
        n += 1
        u //= 10
        if u == 0:
            break
    k = 0
    if v < 0:
        out[0] = b'-'
        k = 1
    while n > 0:
        n -= 1
        out[k] = tmp[n]
        k += 1
    return k


cdef inline int _g6_fallback(double v, char* out) noexcept nogil:
    return snprintf(out, 32, b"%g", v)   # 13 bytes at most: -1.23457e-308


cdef inline int format_g6(double v, char* out) noexcept nogil:
    """``v`` as printf's ``%g`` (six significant digits, trailing zeros dropped) at ``out``
    (room for 32 bytes); returns its length."""
    cdef double a, s, f
    cdef int p, x, k, n, nd, i
    cdef uint64_t d, bits
    cdef char dig[6]
    if v != v or v - v != 0:
        return _g6_fallback(v, out)
    if v == 0:
        if signbit(v):
            out[0] = b'-'
            out[1] = b'0'
            return 2
        out[0] = b'0'
        return 1
    a = -v if v < 0 else v
    # a = 1.f * 2**(E-1023): floor(log10 a) is floor((E-1023) log10 2) or the next integer
    # (1233 / 4096 is log10 2 within 5e-6; a subnormal's estimate misses, and falls back)
    memcpy(&bits, &a, 8)
    x = ((<int>(bits >> 52) - 1023) * 1233) >> 12
    p = 5 - x
    for k in range(2):
        if p > 22 or p < -22:
            return _g6_fallback(v, out)
        s = a * mtplug_pow10[p] if p >= 0 else a / mtplug_pow10[-p]
        if s >= 1e6:
            p -= 1
        elif s < 1e5:
            p += 1
        else:
            break
    else:
        return _g6_fallback(v, out)
    # s = a * 10**p within a relative 2**-53 (one rounding), so below 1e6 it is off by at
    # most 1.2e-10: only a fraction this close to one half could round the other way
    d = <uint64_t>s
    f = s - <double>d
    if f - 0.5 < 1e-8 and 0.5 - f < 1e-8:
        return _g6_fallback(v, out)
    if f > 0.5:
        d += 1
    x = 5 - p                      # decimal exponent of the first digit
    if d == 1000000:
        d = 100000
        x += 1
    for i in range(5, -1, -1):
        dig[i] = <char>(48 + d % 10)
        d //= 10
    nd = 6
    while nd > 1 and dig[nd - 1] == b'0':
        nd -= 1
    n = 0
    if v < 0:
        out[0] = b'-'
        n = 1
    if x < -4 or x >= 6:
        out[n] = dig[0]
        n += 1
        if nd > 1:
            out[n] = b'.'
            memcpy(out + n + 1, dig + 1, nd - 1)
            n += nd
        out[n] = b'e'
        out[n + 1] = b'-' if x < 0 else b'+'
        n += 2
        if x < 0:
            x = -x
        if x >= 100:
            out[n] = <char>(48 + x // 100)
            n += 1
        out[n] = <char>(48 + (x // 10) % 10)
        out[n + 1] = <char>(48 + x % 10)
        return n + 2
    if x >= 0:
        memcpy(out + n, dig, x + 1)
        n += x + 1
        if nd > x + 1:
            out[n] = b'.'
            memcpy(out + n + 1, dig + x + 1, nd - x - 1)
            n += nd - x
        return n
    out[n] = b'0'
    out[n + 1] = b'.'
    n += 2
    for i in range(-x - 1):
        out[n] = b'0'
        n += 1
    memcpy(out + n, dig, nd)
    return n + nd


cdef inline Py_ssize_t _digits(const char* s, Py_ssize_t i, Py_ssize_t n, uint64_t* m) noexcept nogil:
    """Append the decimal digits from ``s[i]`` on to ``m[0]``; returns where they stop
    (``m`` wraps past 19 digits; the caller counts them and steps aside)."""
    cdef unsigned int c
    while i < n:
        c = <unsigned int>(<unsigned char>s[i]) - 48
        if c > 9:
            break
        m[0] = m[0] * 10 + c
        i += 1
    return i


cdef inline Py_ssize_t scan_decimal(const char* s, Py_ssize_t n, double* out) noexcept nogil:
    """Length of the plain decimal number that begins ``s[:n]`` (``[+-]digits[.digits]``,
    then ``e[+-]digits`` if digits follow the e), with strtod's value of it in ``out``;
    -1 when there is none or its value is not one correctly rounded operation away (more
    than 19 digits, a mantissa of 2**53 or more, a power of ten beyond 1e22)."""
    cdef Py_ssize_t i = 0, d0, k
    cdef bint neg = False, eneg = False
    cdef uint64_t m = 0
    cdef unsigned int c
    cdef int nd, frac = 0, e = 0, ed
    cdef double v
    if n > 0 and (s[0] == b'-' or s[0] == b'+'):
        neg = s[0] == b'-'
        i = 1
    d0 = i
    i = _digits(s, i, n, &m)
    nd = <int>(i - d0)
    if i < n and s[i] == b'.':
        d0 = i + 1
        i = _digits(s, d0, n, &m)
        frac = <int>(i - d0)
        nd += frac
    if nd == 0 or nd > 19 or m >= (<uint64_t>1 << 53):
        return -1
    if i < n and (s[i] == b'e' or s[i] == b'E'):
        k = i + 1
        if k < n and (s[k] == b'-' or s[k] == b'+'):
            eneg = s[k] == b'-'
            k += 1
        ed = 0
        while k < n:
            c = <unsigned int>(<unsigned char>s[k]) - 48
            if c > 9:
                break
            if ed == 4:
                return -1
            e = e * 10 + <int>c
            ed += 1
            k += 1
        if ed:              # else "1e" or "1e+": strtod stops before the e
            i = k
            if eneg:
                e = -e
    e -= frac
    if e < -22 or e > 22:
        return -1
    v = <double>m
    v = v * mtplug_pow10[e] if e >= 0 else v / mtplug_pow10[-e]
    out[0] = -v if neg else v
    return i


cdef inline int parse_double(const char* s, Py_ssize_t n, double* out) noexcept nogil:
    """The number ``s[:n]`` (n > 0) as strtod reads it, all of it: 0 and ``out`` set, or -1
    when strtod would stop before the end (or ``n`` exceeds 62 bytes)."""
    cdef double v
    cdef char buf[64]
    cdef char* endp
    if scan_decimal(s, n, out) == n:
        return 0
    if n > 62:
        return -1
    memcpy(buf, s, n)
    buf[n] = 0
    v = strtod(buf, &endp)
    if endp != buf + n:
        return -1
    out[0] = v
    return 0
