# Moses's PER, WER and CDER sufficient statistics (mert/PerScorer.cpp, mert/CderScorer.cpp
# at Moses 34452895), from word ids.
#
# Case folding and tokenisation happen before: the caller maps every vocabulary word to
# its (lowercased) class id once, so two words are equal here exactly when Moses's
# Vocabulary would give them one id.
#
# PER: one reference per sentence (Moses refuses more). Per hypothesis its matched words
# Σ_w min(count in hypothesis, count in reference) in one pass: a per-thread table holds
# each reference word's count for the current sentence, and a hypothesis word's count is
# reset lazily by a stamp (the hypothesis index), as in _chrf.pyx.
#
# WER / CDER: CderScorer::computeCD, a dynamic programme over the reference (rows) and the
# hypothesis (columns) with Moses's recurrences and initialisation; CDER adds a "long
# jump" to every cell of a row at 1 + the row's minimum. With several references, Moses
# keeps the first reference's statistics unless a later one has a larger score, where the
# score is calculateScore (float) stored into an int (truncated toward zero): reproduced.

from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport free, malloc
from cython.parallel cimport prange, threadid
from _runs cimport check_referenced_runs, check_runs, longest_row, max_word

#: statistics per hypothesis
PER_STATS = 3    # correct, hypothesis length, reference length
EDIT_STATS = 2   # edit distance, reference length


cdef inline Py_ssize_t padded(Py_ssize_t n) noexcept nogil:
    """n items rounded up to a multiple of 16, plus 16: threads' buffers laid side by side
    (items of 4 or 8 bytes) then never share a 64-byte cache line."""
    return (n + 15) // 16 * 16 + 16


cdef inline float edit_score(int32_t distance, int32_t ref_len) noexcept nogil:
    """CderScorer::calculateScore in float: 1 - distance / ref_len (1 when ref_len is 0)."""
    cdef float d, n, q
    if ref_len == 0:
        return 1.0
    d = <float>distance
    n = <float>ref_len
    q = d / n
    return <float>1.0 - q


cdef int32_t edit_distance(const int32_t* cand, Py_ssize_t n_cand, const int32_t* ref, Py_ssize_t n_ref,
                           bint long_jumps, int32_t* row, int32_t* nxt) noexcept nogil:
    """CderScorer::computeCD's distance: cand against ref, rows over the reference's
    inter-word positions l = 0..n_ref, columns over the candidate's i = 0..n_cand."""
    cdef Py_ssize_t i, l
    cdef int32_t c, lj
    cdef int32_t* tmp
    for i in range(n_cand + 1):
        row[i] = (1 if i > 0 else 0) if long_jumps else <int32_t>i
    for l in range(1, n_ref + 1):
        nxt[0] = row[0] + 1                                         # insertion only
        for i in range(1, n_cand + 1):
            c = nxt[i - 1] + 1                                      # deletion
            if row[i - 1] + (0 if ref[l - 1] == cand[i - 1] else 1) < c:
                c = row[i - 1] + (0 if ref[l - 1] == cand[i - 1] else 1)   # substitution/identity
            if row[i] + 1 < c:
                c = row[i] + 1                                      # insertion
            nxt[i] = c
        if long_jumps:
            lj = nxt[0]
            for i in range(1, n_cand + 1):
                if nxt[i] < lj:
                    lj = nxt[i]
            lj = lj + 1
            for i in range(n_cand + 1):
                if lj < nxt[i]:
                    nxt[i] = lj
        tmp = row
        row = nxt
        nxt = tmp
    return row[n_cand]


def per_stats(const int64_t[::1] hyp_ptr, const int32_t[::1] hyp_words, const int64_t[::1] run_start,
              const int64_t[::1] run_sid, const int64_t[::1] ref_sent_ptr, const int64_t[::1] ref_word_ptr,
              const int32_t[::1] ref_words, int32_t[:, ::1] out, int n_threads=1):
    """Moses PER statistics of word-id hypotheses, runs of sentences in OpenMP threads.

    hyp_ptr int64 [n + 1], hyp_words int32: hypothesis h's word ids; run_start int64
    [R + 1] and run_sid int64 [R]: hypotheses run_start[r]..run_start[r+1]-1 translate
    sentence run_sid[r]; references as CSR (sentence -> references -> word ids), exactly
    one reference for every sentence a run names (PerScorer supports only one).
    out int32 [n, 3]: correct (Σ over words of min(count in hypothesis, count in
    reference)), hypothesis length, reference length. Returns 0, or -1 when memory runs out.
    """
    cdef Py_ssize_t n = hyp_ptr.shape[0] - 1, R = run_sid.shape[0], r, h, k, q
    if out.shape[0] != n or out.shape[1] != PER_STATS:
        raise ValueError(f"out must be [n, {PER_STATS}]")
    check_runs(run_start, run_sid, n, ref_sent_ptr.shape[0] - 1)
    for r in range(R):
        if ref_sent_ptr[run_sid[r] + 1] - ref_sent_ptr[run_sid[r]] != 1:
            raise ValueError(f"PER takes exactly one reference per sentence (as Moses's PerScorer); "
                             f"sentence {run_sid[r]} has {ref_sent_ptr[run_sid[r] + 1] - ref_sent_ptr[run_sid[r]]}")
    cdef Py_ssize_t W = padded(max(max_word(hyp_words), max_word(ref_words)) + 1)
    cdef int T = n_threads if n_threads > 1 else 1
    # per thread: reference counts, hypothesis counts and their stamps
    cdef int32_t* rcount_all = <int32_t*>malloc(T * W * sizeof(int32_t))
    cdef int32_t* hcount_all = <int32_t*>malloc(T * W * sizeof(int32_t))
    cdef int64_t* stamp_all = <int64_t*>malloc(T * W * sizeof(int64_t))
    if rcount_all == NULL or hcount_all == NULL or stamp_all == NULL:
        free(rcount_all)
        free(hcount_all)
        free(stamp_all)
        return -1
    for k in range(T * W):
        rcount_all[k] = 0
        stamp_all[k] = -1
    cdef const int32_t* hw = &hyp_words[0] if hyp_words.shape[0] else NULL
    cdef const int32_t* rw = &ref_words[0] if ref_words.shape[0] else NULL
    cdef int32_t* rc
    cdef int32_t* hc
    cdef int64_t* stamp
    cdef int64_t r0, r1
    cdef int32_t w, correct
    with nogil:
        for r in prange(R, num_threads=T, schedule="dynamic", chunksize=4):
            rc = rcount_all + threadid() * W
            hc = hcount_all + threadid() * W
            stamp = stamp_all + threadid() * W
            q = ref_sent_ptr[run_sid[r]]
            r0 = ref_word_ptr[q]
            r1 = ref_word_ptr[q + 1]
            for k in range(r0, r1):
                rc[rw[k]] = rc[rw[k]] + 1
            for h in range(run_start[r], run_start[r + 1]):
                correct = 0
                for k in range(hyp_ptr[h], hyp_ptr[h + 1]):
                    w = hw[k]
                    if stamp[w] != h:
                        stamp[w] = h
                        hc[w] = 0
                    hc[w] = hc[w] + 1
                    if hc[w] <= rc[w]:
                        correct = correct + 1
                out[h, 0] = correct
                out[h, 1] = <int32_t>(hyp_ptr[h + 1] - hyp_ptr[h])
                out[h, 2] = <int32_t>(r1 - r0)
            for k in range(r0, r1):
                rc[rw[k]] = 0
    free(rcount_all)
    free(hcount_all)
    free(stamp_all)
    return 0


def edit_stats(const int64_t[::1] hyp_ptr, const int32_t[::1] hyp_words, const int64_t[::1] run_start,
               const int64_t[::1] run_sid, const int64_t[::1] ref_sent_ptr, const int64_t[::1] ref_word_ptr,
               const int32_t[::1] ref_words, bint long_jumps, int32_t[:, ::1] out, int n_threads=1):
    """Moses WER (``long_jumps`` false) or CDER (true) statistics of word-id hypotheses.

    Inputs as :func:`per_stats`, any number (>= 1) of references per sentence.
    out int32 [n, 2]: edit distance and reference length, of the first reference unless a
    later one has a larger Moses sentence score truncated to int (CderScorer::
    prepareStatsVector). Returns 0, or -1 when memory runs out.
    """
    cdef Py_ssize_t n = hyp_ptr.shape[0] - 1, R = run_sid.shape[0], r, h, q, q0, q1
    if out.shape[0] != n or out.shape[1] != EDIT_STATS:
        raise ValueError(f"out must be [n, {EDIT_STATS}]")
    check_referenced_runs(run_start, run_sid, n, ref_sent_ptr)
    cdef Py_ssize_t width = longest_row(hyp_ptr) + 1, stride = padded(2 * width)
    cdef int T = n_threads if n_threads > 1 else 1
    cdef int32_t* rows_all = <int32_t*>malloc(T * stride * sizeof(int32_t))
    if rows_all == NULL:
        return -1
    cdef const int32_t* hw = &hyp_words[0] if hyp_words.shape[0] else NULL
    cdef const int32_t* rw = &ref_words[0] if ref_words.shape[0] else NULL
    cdef int32_t* row
    cdef int32_t d, ref_len, best_d, best_len
    cdef float best, score
    with nogil:
        for r in prange(R, num_threads=T, schedule="dynamic", chunksize=4):
            row = rows_all + threadid() * stride
            q0 = ref_sent_ptr[run_sid[r]]
            q1 = ref_sent_ptr[run_sid[r] + 1]
            for h in range(run_start[r], run_start[r + 1]):
                best = -2.0
                best_d = 0
                best_len = 0
                for q in range(q0, q1):
                    ref_len = <int32_t>(ref_word_ptr[q + 1] - ref_word_ptr[q])
                    d = edit_distance(hw + hyp_ptr[h], hyp_ptr[h + 1] - hyp_ptr[h], rw + ref_word_ptr[q], ref_len,
                                      long_jumps, row, row + width)
                    # Moses: int score = calculateScore(tmp); then compared with a float max
                    score = <float><int>edit_score(d, ref_len)
                    if q == q0 or score > best:
                        best = score
                        best_d = d
                        best_len = ref_len
                out[h, 0] = best_d
                out[h, 1] = best_len
    free(rows_all)
    return 0
