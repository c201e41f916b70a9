# Stub for the compiled module built from pyx/_build_info.pyx.

OPENMP: bool  # the kernels were compiled with OpenMP (else each prange runs serially)
