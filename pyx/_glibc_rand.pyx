# glibc's rand() (random_r TYPE_3: r[i] = r[i - 31] + r[i - 3] mod 2**32, output r[i] >> 1),
# for the Moses programs that draw many numbers (evaluator --bootstrap): the state is
# mtplug.integrations.moses.moses_random.GlibcRand's, advanced in place. The slow
# reference is GlibcRand.next (tests/integrations/test_moses_random_fill.py compares them).
#
# state uint32 [34]: the last 34 values r[i - 34 .. i - 1], oldest first (as GlibcRand._r).

from libc.stdint cimport int64_t, uint32_t

import numpy as np


def rand_mod(uint32_t[::1] state, int64_t count, int64_t modulus):
    """int64 [count]: the next ``count`` rand() values modulo ``modulus`` (> 0); ``state``
    advanced past them."""
    cdef int64_t i
    cdef int j
    cdef uint32_t v
    if state.shape[0] != 34 or modulus <= 0 or count < 0:
        raise ValueError(f"need a state of 34 values, modulus > 0 and count >= 0; got {state.shape[0]}, "
                         f"{modulus}, {count}")
    out = np.empty(count, dtype=np.int64)
    cdef int64_t[::1] o = out
    with nogil:
        for i in range(count):
            v = state[3] + state[31]     # r[i - 31] + r[i - 3]: oldest first, 34 kept
            for j in range(33):
                state[j] = state[j + 1]
            state[33] = v
            o[i] = (v >> 1) % modulus
    return out
