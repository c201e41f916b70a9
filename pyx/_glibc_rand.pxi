# glibc's srand()/rand() (random_r TYPE_3, the C library Moses is built with on Linux), as a
# plain struct so that every Moses-compatible kernel draws Moses's numbers without global
# state. The state r[0..30] comes from the seed (taken as int32) by r[i] = 16807 * r[i-1]
# mod (2^31 - 1) (Schrage's method, int32 arithmetic); r[31..33] = r[0..2]; then
# r[k] = r[k-31] + r[k-3] (mod 2^32) from k = 34, the first 310 of these discarded; rand()
# returns r[k] >> 1. A ring of 31 words holds r[k-31] where r[k] is written.
# mtplug.integrations.moses.moses_random.GlibcRand is the pure-Python reference.

from libc.stdint cimport int32_t, int64_t, uint32_t


cdef struct GlibcRand:
    uint32_t r[31]
    int k


cdef inline void glibc_srand(GlibcRand* g, uint32_t seed) noexcept nogil:
    cdef int64_t word = <int32_t>seed, hi, lo
    cdef int i
    if word == 0:
        word = 1
    g.r[0] = <uint32_t>word
    for i in range(1, 31):
        hi = word / 127773          # cdivision: truncates toward zero, as C's int32 division
        lo = word - hi * 127773
        word = 16807 * lo - 2836 * hi
        if word < 0:
            word += 2147483647
        g.r[i] = <uint32_t>word
    # r[31..33] are r[0..2], already in slots 0..2: the recurrence starts at r[34], slot 3
    g.k = 3
    for i in range(310):
        glibc_step(g)


cdef inline uint32_t glibc_step(GlibcRand* g) noexcept nogil:
    cdef uint32_t v = g.r[g.k] + g.r[(g.k + 28) % 31]     # r[k - 31] + r[k - 3]
    g.r[g.k] = v
    g.k = (g.k + 1) % 31
    return v


cdef inline uint32_t glibc_rand(GlibcRand* g) noexcept nogil:
    """The next rand() value, in [0, 2^31 - 1]."""
    return glibc_step(g) >> 1


cdef inline float glibc_rand_incl_float(GlibcRand* g, float lo, float hi) noexcept nogil:
    """util::rand_incl<float>(lo, hi) of Moses's util/random.hh: lo + (hi - lo) * rand() /
    RAND_MAX, every step in float32."""
    cdef float r = <float>glibc_rand(g)
    return lo + ((hi - lo) * r) / <float>2147483647
