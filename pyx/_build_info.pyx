# How the kernels were compiled, read from the C preprocessor: every module in pyx/ gets
# the same flags from setup.py, so this module's answer holds for all of them.

cdef extern from *:
    """
    #ifdef _OPENMP
    #define MTPLUG_BUILT_WITH_OPENMP 1
    #else
    #define MTPLUG_BUILT_WITH_OPENMP 0
    #endif
    """
    int MTPLUG_BUILT_WITH_OPENMP

# False: every prange runs as a serial loop (threads options are accepted, same results)
OPENMP = bool(MTPLUG_BUILT_WITH_OPENMP)
