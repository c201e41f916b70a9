# Checks shared by the kernels that score hypotheses in runs of one sentence each.

from libc.stdint cimport int64_t


cdef inline int check_runs(const int64_t[::1] run_start, const int64_t[::1] run_sid, Py_ssize_t n,
                           Py_ssize_t n_sentences) except -1:
    """run_start int64 [R + 1] must rise from 0 to n (the hypotheses) and every run_sid[r]
    name a sentence below n_sentences (one that has references)."""
    cdef Py_ssize_t R = run_sid.shape[0], r
    if run_start.shape[0] != R + 1:
        raise ValueError("run_start must have one more entry than run_sid")
    if R and (run_start[0] != 0 or run_start[R] != n):
        raise ValueError("runs must cover the hypotheses")
    for r in range(R):
        if run_start[r + 1] < run_start[r] or not 0 <= run_sid[r] < n_sentences:
            raise ValueError(f"run {r} is out of order or names a sentence without references")
    return 0
