"""Clipped n-gram counts of Moses's n-gram scorers that mtplug reads from text: CHRF
(mert/CHRFScorer.cpp: byte n-grams up to 6) and BLEUDOC (mert/BleuDocScorer.cpp: word
n-grams up to 4 of every sentence of a document); mtplug.metrics.moses_ngram builds the
keys and arranges the columns.

Every sequence (a hypothesis or a reference, its tokens already encoded) is a range of
one token array; ``keys[k - 1, p]`` identifies the n-gram of order k starting at token p
(equal n-grams, equal keys; positions whose n-gram runs past their sequence's end are
never read). For hypothesis h against its references (the sequences ``ref_seq[ref_ptr[h]
: ref_ptr[h + 1]]``), per order k:

    correct  sum over the hypothesis's distinct n-grams of min(count, ref count)
    guess    the hypothesis's n-grams of order k
    refhits  sum over the hypothesis's distinct n-grams of their ref count

where ``ref count`` is the largest count of that n-gram in any one reference (Moses's
ProcessReferenceLine merges its references so), 0 when no reference has it. Also the
hypothesis length and the reference length Moses picks (CalcClosest, CalcShortest,
CalcAverage of mert/Reference.h).
"""

from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport free, malloc, qsort

cdef enum:
    CLOSEST = 0
    SHORTEST = 1
    AVERAGE = 2

REFLEN_CLOSEST = CLOSEST
REFLEN_SHORTEST = SHORTEST
REFLEN_AVERAGE = AVERAGE


cdef struct Entry:
    int64_t key
    int64_t count


cdef int _cmp_key(const void* a, const void* b) noexcept nogil:
    cdef int64_t x = (<const int64_t*>a)[0], y = (<const int64_t*>b)[0]
    return (x > y) - (x < y)


cdef int _cmp_entry(const void* a, const void* b) noexcept nogil:
    cdef int64_t x = (<const Entry*>a).key, y = (<const Entry*>b).key
    return (x > y) - (x < y)


cdef Py_ssize_t _runs(int64_t* buf, Py_ssize_t n, Entry* out) noexcept nogil:
    """Sort buf[:n] and write its distinct keys with their counts to out; returns how many."""
    cdef Py_ssize_t i, m = 0
    if n == 0:
        return 0
    qsort(buf, n, sizeof(int64_t), _cmp_key)
    out[0].key = buf[0]
    out[0].count = 1
    for i in range(1, n):
        if buf[i] == out[m].key:
            out[m].count += 1
        else:
            m += 1
            out[m].key = buf[i]
            out[m].count = 1
    return m + 1


cdef int64_t _lookup(const Entry* tab, Py_ssize_t n, int64_t key) noexcept nogil:
    cdef Py_ssize_t lo = 0, hi = n, mid
    while lo < hi:
        mid = (lo + hi) // 2
        if tab[mid].key < key:
            lo = mid + 1
        else:
            hi = mid
    if lo < n and tab[lo].key == key:
        return tab[lo].count
    return 0


cdef int64_t _ref_length(const int64_t[::1] seq_ptr, const int64_t[::1] ref_seq, Py_ssize_t a, Py_ssize_t b,
                         int64_t length, int reflen) noexcept nogil:
    """Moses's Reference::CalcClosest (ties: the shorter), CalcShortest, CalcAverage
    (int of the float quotient) of the references ref_seq[a:b]; 0 without references."""
    cdef Py_ssize_t i
    cdef int64_t r, best, total = 0, diff, best_diff
    if b <= a:
        return 0
    best = seq_ptr[ref_seq[a] + 1] - seq_ptr[ref_seq[a]]
    if reflen == AVERAGE:
        for i in range(a, b):
            total += seq_ptr[ref_seq[i] + 1] - seq_ptr[ref_seq[i]]
        return <int64_t><int>(<float>total / <float>(b - a))
    best_diff = best - length if best >= length else length - best
    for i in range(a + 1, b):
        r = seq_ptr[ref_seq[i] + 1] - seq_ptr[ref_seq[i]]
        if reflen == SHORTEST:
            if r < best:
                best = r
            continue
        diff = r - length if r >= length else length - r
        if diff < best_diff or (diff == best_diff and r < best):
            best, best_diff = r, diff
    return best


def ngram_stats(const int64_t[:, ::1] keys, const int64_t[::1] seq_ptr, const int64_t[::1] hyp_seq,
                const int64_t[::1] ref_ptr, const int64_t[::1] ref_seq, int reflen, int64_t[:, ::1] out):
    """out[h] = (correct_1, guess_1, refhits_1, ..., correct_K, guess_K, refhits_K,
    hypothesis length, reference length) of hypothesis sequence hyp_seq[h] (module
    docstring); K = keys.shape[0]. Consecutive hypotheses with the same reference range
    share one reference table. Returns 0, or -1 when out of memory."""
    cdef Py_ssize_t K = keys.shape[0], n = hyp_seq.shape[0]
    cdef Py_ssize_t h, k, i, j, r, s, e, m, n_ref_tok, n_tab, n_pairs, n_hyp, longest = 0
    cdef Py_ssize_t last_a = -1, last_b = -1
    cdef int64_t guess, v, c, length
    cdef int64_t* buf
    cdef Entry* pairs
    cdef Entry* hyp_runs
    cdef Entry* tabs
    cdef Py_ssize_t* tab_len
    cdef Py_ssize_t n_seqs = seq_ptr.shape[0] - 1
    if out.shape[0] != n or out.shape[1] != 3 * K + 2 or ref_ptr.shape[0] != n + 1 or n_seqs < 0:
        raise ValueError("ngram_stats: the arrays disagree in shape")
    # every index checked once, so that the loops below never leave the arrays
    if seq_ptr[0] != 0 or seq_ptr[n_seqs] > keys.shape[1] or (n > 0 and ref_ptr[0] != 0) \
            or ref_ptr[n] > ref_seq.shape[0]:
        raise ValueError("ngram_stats: seq_ptr or ref_ptr out of range")
    for i in range(n_seqs):
        if seq_ptr[i + 1] < seq_ptr[i]:
            raise ValueError("ngram_stats: seq_ptr is not monotone")
    for h in range(n):
        if hyp_seq[h] < 0 or hyp_seq[h] >= n_seqs or ref_ptr[h + 1] < ref_ptr[h]:
            raise ValueError("ngram_stats: hyp_seq or ref_ptr out of range")
    for i in range(ref_seq.shape[0]):
        if ref_seq[i] < 0 or ref_seq[i] >= n_seqs:
            raise ValueError("ngram_stats: ref_seq out of range")
    for i in range(seq_ptr.shape[0] - 1):
        if seq_ptr[i + 1] - seq_ptr[i] > longest:
            longest = seq_ptr[i + 1] - seq_ptr[i]
    # scratch sized by the longest reference set any hypothesis has
    n_ref_tok = longest
    for h in range(n):
        m = 0
        for i in range(ref_ptr[h], ref_ptr[h + 1]):
            m += seq_ptr[ref_seq[i] + 1] - seq_ptr[ref_seq[i]]
        if m > n_ref_tok:
            n_ref_tok = m
    buf = <int64_t*>malloc((n_ref_tok + 1) * sizeof(int64_t))
    pairs = <Entry*>malloc((n_ref_tok + 1) * sizeof(Entry))
    hyp_runs = <Entry*>malloc((longest + 1) * sizeof(Entry))
    tabs = <Entry*>malloc((K * (n_ref_tok + 1)) * sizeof(Entry))
    tab_len = <Py_ssize_t*>malloc((K + 1) * sizeof(Py_ssize_t))
    if buf == NULL or pairs == NULL or hyp_runs == NULL or tabs == NULL or tab_len == NULL:
        free(buf); free(pairs); free(hyp_runs); free(tabs); free(tab_len)
        return -1
    with nogil:
        for h in range(n):
            if ref_ptr[h] != last_a or ref_ptr[h + 1] != last_b:
                # the references' table per order: distinct n-grams, largest count in one reference
                last_a, last_b = ref_ptr[h], ref_ptr[h + 1]
                for k in range(K):
                    n_pairs = 0
                    for r in range(last_a, last_b):
                        s, e = seq_ptr[ref_seq[r]], seq_ptr[ref_seq[r] + 1]
                        m = 0
                        for i in range(s, e - k):
                            buf[m] = keys[k, i]
                            m += 1
                        n_pairs += _runs(buf, m, pairs + n_pairs)
                    qsort(pairs, n_pairs, sizeof(Entry), _cmp_entry)
                    n_tab = 0
                    for i in range(n_pairs):
                        if n_tab > 0 and tabs[k * (n_ref_tok + 1) + n_tab - 1].key == pairs[i].key:
                            if pairs[i].count > tabs[k * (n_ref_tok + 1) + n_tab - 1].count:
                                tabs[k * (n_ref_tok + 1) + n_tab - 1].count = pairs[i].count
                        else:
                            tabs[k * (n_ref_tok + 1) + n_tab] = pairs[i]
                            n_tab += 1
                    tab_len[k] = n_tab
            s, e = seq_ptr[hyp_seq[h]], seq_ptr[hyp_seq[h] + 1]
            length = e - s
            for k in range(K):
                m = 0
                for i in range(s, e - k):
                    buf[m] = keys[k, i]
                    m += 1
                n_hyp = _runs(buf, m, hyp_runs)
                c = 0
                guess = 0
                v = 0
                for j in range(n_hyp):
                    r = _lookup(tabs + k * (n_ref_tok + 1), tab_len[k], hyp_runs[j].key)
                    guess += hyp_runs[j].count
                    v += r
                    c += r if r < hyp_runs[j].count else hyp_runs[j].count
                out[h, 3 * k] = c
                out[h, 3 * k + 1] = guess
                out[h, 3 * k + 2] = v
            out[h, 3 * K] = length
            out[h, 3 * K + 1] = _ref_length(seq_ptr, ref_seq, last_a, last_b, length, reflen)
    free(buf); free(pairs); free(hyp_runs); free(tabs); free(tab_len)
    return 0
