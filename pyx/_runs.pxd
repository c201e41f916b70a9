# Checks and sizes shared by the kernels that score hypotheses in runs of one sentence each.

from libc.stdint cimport int32_t, int64_t


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


cdef inline int check_referenced_runs(const int64_t[::1] run_start, const int64_t[::1] run_sid, Py_ssize_t n,
                                      const int64_t[::1] ref_sent_ptr) except -1:
    """check_runs, and every run's sentence must have at least one reference
    (ref_sent_ptr int64 [S + 1]: sentence -> its references)."""
    cdef Py_ssize_t r
    check_runs(run_start, run_sid, n, ref_sent_ptr.shape[0] - 1)
    for r in range(run_sid.shape[0]):
        if ref_sent_ptr[run_sid[r] + 1] - ref_sent_ptr[run_sid[r]] < 1:
            raise ValueError(f"sentence {run_sid[r]} has no reference")
    return 0


cdef inline int32_t max_word(const int32_t[::1] words) except -2:
    """The largest id of a word-id array (-1 when empty); negative ids are refused."""
    cdef Py_ssize_t i
    cdef int32_t m = -1, lo = 0
    for i in range(words.shape[0]):
        if words[i] > m:
            m = words[i]
        if words[i] < lo:
            lo = words[i]
    if lo < 0:
        raise ValueError("word ids must be >= 0")
    return m


cdef inline Py_ssize_t longest_row(const int64_t[::1] ptr) noexcept:
    """The longest row of a CSR pointer array ptr [n + 1] (0 when it has no rows)."""
    cdef Py_ssize_t i, m = 0
    for i in range(ptr.shape[0] - 1):
        if ptr[i + 1] - ptr[i] > m:
            m = ptr[i + 1] - ptr[i]
    return m
