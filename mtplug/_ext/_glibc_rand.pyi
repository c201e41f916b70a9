# Stub for the compiled module built from pyx/_glibc_rand.pyx.
import numpy as np

def rand_mod(
    state: np.ndarray,  # uint32_t[::1] [34], GlibcRand's state, advanced in place
    count: int,
    modulus: int,
) -> np.ndarray: ...  # int64 [count], rand() % modulus
