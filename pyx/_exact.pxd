# Exact sums of doubles: fixed-point accumulators wide enough for every finite double.
#
#     from _exact cimport EXACT_WIDTH, exact_add, exact_normalize, exact_round, exact_merge
#
# Why: a sum of doubles rounded at every step depends on the order of the terms, so the
# same sentences split over 1, 2 or 8 threads, or over dask workers, would give other
# bits. An exact sum has no order: partial sums from anywhere merge into the same value,
# rounded once at the end (correctly, to nearest even, as math.fsum).
#
# A row of EXACT_WIDTH int64: chunks c_0 .. c_{EXACT_CHUNKS-1}, the sum being
# sum_i c_i 2^(32 i - 1074) (2^-1074 is the smallest subnormal, so every finite double is
# an integer number of units), then one count of non-finite terms (the sum is then NaN).
# A double m 2^e (|m| < 2^53) adds its 53 bits to three adjacent chunks; a chunk takes
# 2^31 such adds before it can overflow, so writers call exact_normalize (carries move
# up, chunks below the top back into [0, 2^32)) at least every EXACT_SAFE_ADDS adds. A
# normalized row is the canonical form of its value, so rows normalize and merge to the
# same bits whatever the order of the terms. 67 chunks reach 2^1070: more than the sum
# of 2^31 doubles of any size needs, and beyond 2^1024 the sum rounds to infinity.
# Only `cdef inline` here (no module of this name exists at run time; see _bleu.pxd).

from libc.math cimport INFINITY, NAN, ldexp
from libc.stdint cimport int64_t, uint64_t
from libc.string cimport memcpy

cdef extern from *:
    """
    typedef unsigned __int128 mtplug_u128;
    static inline int mtplug_bitlen128(mtplug_u128 x) {
        uint64_t hi = (uint64_t)(x >> 64), lo = (uint64_t)x;
        if (hi) return 128 - __builtin_clzll(hi);
        if (lo) return 64 - __builtin_clzll(lo);
        return 0;
    }
    """
    ctypedef unsigned long long mtplug_u128
    int mtplug_bitlen128(mtplug_u128 x) noexcept nogil

cdef enum:
    EXACT_CHUNKS = 67
    EXACT_WIDTH = 68          # the chunks and the non-finite count
    EXACT_SAFE_ADDS = 1 << 30


cdef inline void exact_add(int64_t* acc, double x) noexcept nogil:
    """acc += x, exactly (x non-finite: counted, the sum becomes NaN)."""
    cdef uint64_t bits
    memcpy(&bits, &x, 8)
    cdef int ef = <int>((bits >> 52) & 0x7ff)
    cdef uint64_t m = bits & 0xfffffffffffffULL
    if ef == 0x7ff:
        acc[EXACT_CHUNKS] += 1
        return
    if ef == 0:
        if m == 0:
            return
        ef = 1                  # subnormal: m 2^-1074
    else:
        m |= 1ULL << 52
    cdef int pos = ef - 1       # x = m 2^(pos - 1074), pos >= 0
    cdef int i = pos >> 5
    cdef int sh = pos & 31
    cdef int64_t c0 = <int64_t>((m << sh) & 0xffffffffULL)
    cdef int64_t c1 = <int64_t>((m >> (32 - sh)) & 0xffffffffULL)
    cdef int64_t c2 = <int64_t>(m >> (64 - sh)) if sh else 0
    if bits >> 63:
        acc[i] -= c0
        acc[i + 1] -= c1
        acc[i + 2] -= c2
    else:
        acc[i] += c0
        acc[i + 1] += c1
        acc[i + 2] += c2


cdef inline void exact_normalize(int64_t* acc) noexcept nogil:
    """Move carries up: chunks 0 .. EXACT_CHUNKS-2 into [0, 2^32), the top one signed."""
    cdef int i
    cdef int64_t carry
    for i in range(EXACT_CHUNKS - 1):
        carry = acc[i] >> 32    # arithmetic shift: floor division by 2^32
        acc[i] -= carry << 32
        acc[i + 1] += carry


cdef inline void exact_merge(int64_t* into, const int64_t* other) noexcept nogil:
    """into += other, both normalized; leaves into normalized."""
    cdef int i
    for i in range(EXACT_WIDTH):
        into[i] += other[i]
    exact_normalize(into)


cdef inline double exact_round(const int64_t* acc) noexcept nogil:
    """The sum rounded to the nearest double (ties to even); acc is not changed."""
    cdef int64_t c[EXACT_CHUNKS]
    cdef int i, j, lo, nb, sh
    cdef double sign = 1.0
    if acc[EXACT_CHUNKS] != 0:
        return NAN
    memcpy(c, acc, EXACT_CHUNKS * 8)
    exact_normalize(c)
    if c[EXACT_CHUNKS - 1] < 0:
        sign = -1.0
        for i in range(EXACT_CHUNKS):
            c[i] = -c[i]
        exact_normalize(c)
    j = EXACT_CHUNKS - 1
    while j >= 0 and c[j] == 0:
        j -= 1
    if j < 0:
        return 0.0
    if j == EXACT_CHUNKS - 1:
        return sign * INFINITY      # >= 2^1038
    # the top three chunks hold the 53 leading bits, a rounding bit and more
    lo = j - 2 if j >= 2 else 0
    cdef mtplug_u128 M = 0
    for i in range(j, lo - 1, -1):
        M = (M << 32) | <mtplug_u128>c[i]
    nb = mtplug_bitlen128(M)
    if nb <= 53:
        return sign * ldexp(<double>(<uint64_t>M), 32 * lo - 1074)     # exact
    sh = nb - 53
    cdef uint64_t q = <uint64_t>(M >> sh)
    cdef mtplug_u128 rem = M & (((<mtplug_u128>1) << sh) - 1)
    cdef mtplug_u128 half = (<mtplug_u128>1) << (sh - 1)
    cdef bint sticky = False
    for i in range(lo):
        if c[i] != 0:
            sticky = True
            break
    if rem > half or (rem == half and (sticky or (q & 1))):
        q += 1
    # at least 2^-1021 here: a normal number, so ldexp is exact (or overflows to inf)
    return sign * ldexp(<double>q, 32 * lo - 1074 + sh)


cdef inline int exact_add_low(int64_t* acc, double x) noexcept nogil:
    """exact_add, with the sign applied without a branch (a sum's
    terms change sign at random): the same integers end up in acc. Returns the lowest
    chunk it changed (it changes that one and the next two), or -1."""
    cdef uint64_t bits
    memcpy(&bits, &x, 8)
    cdef int ef = <int>((bits >> 52) & 0x7ff)
    cdef uint64_t m = bits & 0xfffffffffffffULL
    cdef int64_t neg = -<int64_t>(bits >> 63)
    if ef == 0x7ff:
        acc[EXACT_CHUNKS] += 1
        return -1
    if ef == 0:
        if m == 0:
            return -1
        ef = 1
    else:
        m |= 1ULL << 52
    cdef int pos = ef - 1
    cdef int i = pos >> 5
    cdef int sh = pos & 31
    cdef int64_t c0 = <int64_t>((m << sh) & 0xffffffffULL)
    cdef int64_t c1 = <int64_t>((m >> (32 - sh)) & 0xffffffffULL)
    cdef int64_t c2 = <int64_t>(m >> (64 - sh)) if sh else 0
    acc[i] += (c0 ^ neg) - neg
    acc[i + 1] += (c1 ^ neg) - neg
    acc[i + 2] += (c2 ^ neg) - neg
    return i


cdef inline double exact_round_span(const int64_t* acc, int lo, int hi) noexcept nogil:
    """exact_round(acc) for an accumulator (normalized or not) whose chunks outside
    [lo, hi) are 0, with hi + 2 < EXACT_CHUNKS: the same steps on the chunks that can be
    nonzero (a negative sum's normalized form runs to the top chunk; its magnitude does
    not), so a sum costs what its terms span, not 68 chunks."""
    cdef int64_t c[EXACT_CHUNKS]
    cdef int n = hi - lo + 2, k, j, top, low, nb, sh
    cdef int64_t carry
    cdef double sign = 1.0
    if acc[EXACT_CHUNKS] != 0:
        return NAN
    for k in range(n - 2):
        c[k] = acc[lo + k]
    c[n - 2] = 0
    c[n - 1] = 0
    for k in range(n - 1):
        carry = c[k] >> 32
        c[k] -= carry << 32
        c[k + 1] += carry
    if c[n - 1] < 0:
        sign = -1.0
        for k in range(n):
            c[k] = -c[k]
        for k in range(n - 1):
            carry = c[k] >> 32
            c[k] -= carry << 32
            c[k + 1] += carry
    j = n - 1
    while j >= 0 and c[j] == 0:
        j -= 1
    if j < 0:
        return 0.0
    top = lo + j                       # in exact_round's numbering: its j
    low = top - 2 if top >= 2 else 0   # its lo
    cdef mtplug_u128 M = 0
    for k in range(top, low - 1, -1):
        M = (M << 32) | <mtplug_u128>(c[k - lo] if k >= lo else 0)
    nb = mtplug_bitlen128(M)
    if nb <= 53:
        return sign * ldexp(<double>(<uint64_t>M), 32 * low - 1074)
    sh = nb - 53
    cdef uint64_t q = <uint64_t>(M >> sh)
    cdef mtplug_u128 rem = M & (((<mtplug_u128>1) << sh) - 1)
    cdef mtplug_u128 half = (<mtplug_u128>1) << (sh - 1)
    cdef bint sticky = False
    for k in range(lo, low):
        if c[k - lo] != 0:
            sticky = True
            break
    if rem > half or (rem == half and (sticky or (q & 1))):
        q += 1
    return sign * ldexp(<double>q, 32 * low - 1074 + sh)
