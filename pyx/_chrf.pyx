# chrF / chrF++ sufficient statistics (Popović 2015, 2017), as sacrebleu 2 collects them.
#
# Text arrives as word ids: every distinct word of a vocabulary is turned once (in
# Python) into its characters (code points, whitespace removed) and its chrF++ tokens
# (ids of the pieces sacrebleu's punctuation rule splits it into). A hypothesis's
# character stream is then the concatenation of its words' characters, exactly the
# ''.join(sentence.split()) that sacrebleu extracts character n-grams from.
#
# N-grams are compared exactly: an n-gram of order n <= 6 is a 128-bit key (code points
# are < 2^21, three to a 64-bit half) plus its order; a word n-gram (n <= 2) packs token
# ids. Each reference of the current sentence gets an open-addressing table of its
# n-grams with their counts; a hypothesis n-gram found there bumps the entry's count for
# this hypothesis (reset lazily by a stamp) and is a match while that count stays within
# the reference's: Σ min(count in hypothesis, count in reference), in one pass.

from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport free, malloc
from cython.parallel cimport prange, threadid
from _runs cimport check_runs
from _word_rows cimport gather
from _chrf_score cimport f_score

MAX_CHAR_ORDER = 6
MAX_WORD_ORDER = 2


cdef struct Key:
    uint64_t hi
    uint64_t lo


cdef struct Entry:
    uint64_t hi
    uint64_t lo
    int64_t stamp      # the hypothesis hcount belongs to
    int32_t order      # 1-based order index over characters then words; 0: empty slot
    int32_t rcount
    int32_t hcount


cdef inline uint64_t mix(uint64_t hi, uint64_t lo, int32_t order) noexcept nogil:
    cdef uint64_t h = lo * 0x9E3779B97F4A7C15ULL ^ (hi + <uint64_t>order) * 0xC2B2AE3D27D4EB4FULL
    h ^= h >> 31
    h *= 0x94D049BB133111EBULL
    h ^= h >> 29
    return h


cdef inline Py_ssize_t find(Entry* t, uint64_t mask, uint64_t hi, uint64_t lo, int32_t order) noexcept nogil:
    """The slot holding the key, or the empty slot where it would go."""
    cdef uint64_t s = mix(hi, lo, order) & mask
    while t[s].order != 0 and not (t[s].order == order and t[s].lo == lo and t[s].hi == hi):
        s = (s + 1) & mask
    return <Py_ssize_t>s


cdef inline Key ngram_key(const int32_t* cs, const int32_t* ts, Py_ssize_t i, int o, int char_order) noexcept nogil:
    """Key of the n-gram at position i of order index o (characters 0..char_order-1, then
    words). Returned by value: inside prange a variable written through a pointer would
    be shared by the threads."""
    cdef Key k
    cdef int j
    k.hi = 0
    k.lo = 0
    if o < char_order:
        for j in range(o + 1):
            if j < 3:
                k.lo |= (<uint64_t>cs[i + j]) << (21 * j)
            else:
                k.hi |= (<uint64_t>cs[i + j]) << (21 * (j - 3))
    else:
        k.lo = <uint64_t>ts[i]
        if o - char_order == 1:
            k.hi = <uint64_t>ts[i + 1]
    return k


cdef inline Py_ssize_t n_grams(Py_ssize_t n_c, Py_ssize_t n_t, int o, int char_order) noexcept nogil:
    cdef Py_ssize_t m = (n_c - o) if o < char_order else (n_t - (o - char_order))
    return m if m > 0 else 0


cdef struct Lengths:
    Py_ssize_t chars
    Py_ssize_t toks


cdef Lengths longest(const int64_t[::1] ptr, const int32_t[::1] words, const int64_t[::1] char_ptr,
                     const int64_t[::1] tok_ptr):
    """The most characters and the most tokens of any row of a word-id CSR (at least 1)."""
    cdef Lengths m
    cdef Py_ssize_t i, k, nc, nt
    m.chars = 1
    m.toks = 1
    for i in range(ptr.shape[0] - 1):
        nc = 0
        nt = 0
        for k in range(ptr[i], ptr[i + 1]):
            nc += char_ptr[words[k] + 1] - char_ptr[words[k]]
            nt += tok_ptr[words[k] + 1] - tok_ptr[words[k]]
        m.chars = max(m.chars, nc)
        m.toks = max(m.toks, nt)
    return m


def corpus_score(const int64_t[::1] totals, int n_orders, double beta):
    """chrF in [0, 100] of statistics summed over a corpus (int64 [3 * n_orders])."""
    if totals.shape[0] != 3 * n_orders:
        raise ValueError(f"expected {3 * n_orders} statistics, got {totals.shape[0]}")
    return f_score(&totals[0], n_orders, beta)


def chrf_stats(const int64_t[::1] hyp_ptr, const int32_t[::1] hyp_words, const int64_t[::1] run_start,
               const int64_t[::1] run_sid, const int64_t[::1] ref_sent_ptr, const int64_t[::1] ref_word_ptr,
               const int32_t[::1] ref_words, const int64_t[::1] char_ptr, const int32_t[::1] chars,
               const int64_t[::1] tok_ptr, const int32_t[::1] toks, int char_order, int word_order, double beta,
               int32_t[:, ::1] out, int n_threads=1):
    """chrF statistics of word-id hypotheses, runs of sentences in OpenMP threads.

    hyp_ptr int64 [n + 1], hyp_words int32: hypothesis h's word ids; run_start int64
    [R + 1] and run_sid int64 [R]: hypotheses run_start[r]..run_start[r+1]-1 are scored
    against the references of sentence run_sid[r]; references as CSR (sentence →
    references → word ids). Per word id w: its characters chars[char_ptr[w]:char_ptr[w+1]]
    (code points < 2^21) and chrF++ tokens toks[tok_ptr[w]:tok_ptr[w+1]].
    out int32 [n, 3 (char_order + word_order)]: per order (characters 1..char_order,
    then words 1..word_order) hypothesis n-grams (0 when the reference has none of that
    order, as sacrebleu), reference n-grams, matches — of the reference with the best
    sentence f-score (the first on ties). Returns 0, or -1 when memory runs out.
    """
    cdef Py_ssize_t n = hyp_ptr.shape[0] - 1, R = run_sid.shape[0], r, h, k, s
    cdef int n_orders = char_order + word_order
    if not (1 <= char_order <= MAX_CHAR_ORDER and 0 <= word_order <= MAX_WORD_ORDER):
        raise ValueError(f"char_order must be 1..{MAX_CHAR_ORDER} and word_order 0..{MAX_WORD_ORDER}")
    if out.shape[0] != n or out.shape[1] != 3 * n_orders:
        raise ValueError("out must be [n, 3 * orders]")
    check_runs(run_start, run_sid, n, ref_sent_ptr.shape[0] - 1)
    # the longest character and token streams, to size every thread's buffers once
    cdef Lengths hyp_max = longest(hyp_ptr, hyp_words, char_ptr, tok_ptr)
    cdef Lengths ref_max = longest(ref_word_ptr, ref_words, char_ptr, tok_ptr)
    cdef Py_ssize_t max_c = hyp_max.chars, max_t = hyp_max.toks, ref_c = ref_max.chars, ref_t = ref_max.toks
    cdef Py_ssize_t max_refs = 1
    for s in range(ref_sent_ptr.shape[0] - 1):
        max_refs = max(max_refs, ref_sent_ptr[s + 1] - ref_sent_ptr[s])
    # one table per reference, a power of two at least twice its n-grams of all orders
    cdef uint64_t slots = 16
    while slots < 2 * n_orders * (ref_c if ref_c > ref_t else ref_t):
        slots *= 2
    cdef uint64_t mask = slots - 1
    cdef Py_ssize_t row = 3 * n_orders
    cdef Py_ssize_t per_thread_ints = max_c + max_t + ref_c + ref_t
    cdef int T = n_threads if n_threads > 1 else 1
    cdef int32_t* ints_all = <int32_t*>malloc(T * per_thread_ints * sizeof(int32_t))
    cdef int64_t* rows_all = <int64_t*>malloc(T * max_refs * row * sizeof(int64_t))
    cdef Entry* tables_all = <Entry*>malloc(T * max_refs * slots * sizeof(Entry))
    if ints_all == NULL or rows_all == NULL or tables_all == NULL:
        free(ints_all)
        free(rows_all)
        free(tables_all)
        return -1
    cdef const int64_t* cptr = &char_ptr[0]
    cdef const int64_t* tptr = &tok_ptr[0]
    cdef const int32_t* cdata = &chars[0] if chars.shape[0] else NULL
    cdef const int32_t* tdata = &toks[0] if toks.shape[0] else NULL
    cdef const int32_t* hw = &hyp_words[0] if hyp_words.shape[0] else NULL
    cdef const int32_t* rw = &ref_words[0] if ref_words.shape[0] else NULL
    cdef int32_t* hc
    cdef int32_t* ht
    cdef int32_t* rc
    cdef int32_t* rt
    cdef int64_t* rows       # [references of the sentence, 3 * n_orders]
    cdef Entry* tabs         # [references of the sentence, slots]
    cdef Entry* tab
    cdef Entry* e
    cdef Py_ssize_t q, q0, q1, nq, n_hc, n_ht, n_rc, n_rt, m, i, best_q
    cdef uint64_t z
    cdef Key key
    cdef int o
    cdef int64_t matches
    cdef double f, best
    with nogil:
        for r in prange(R, num_threads=T, schedule="dynamic", chunksize=4):
            hc = ints_all + threadid() * per_thread_ints
            ht = hc + max_c
            rc = ht + max_t
            rt = rc + ref_c
            rows = rows_all + threadid() * max_refs * row
            tabs = tables_all + threadid() * max_refs * slots
            q0 = ref_sent_ptr[run_sid[r]]
            q1 = ref_sent_ptr[run_sid[r] + 1]
            nq = q1 - q0
            # each reference's n-grams and counts, once per sentence; its n-gram count per
            # order sits in its statistics row, which the hypotheses then fill in
            for q in range(nq):
                tab = tabs + q * slots
                for z in range(slots):
                    tab[z].order = 0
                n_rc = gather(cptr, cdata, rw + ref_word_ptr[q0 + q], ref_word_ptr[q0 + q + 1] - ref_word_ptr[q0 + q],
                              rc)
                n_rt = gather(tptr, tdata, rw + ref_word_ptr[q0 + q], ref_word_ptr[q0 + q + 1] - ref_word_ptr[q0 + q],
                              rt)
                for o in range(n_orders):
                    m = n_grams(n_rc, n_rt, o, char_order)
                    rows[q * row + 3 * o + 1] = m
                    for i in range(m):
                        key = ngram_key(rc, rt, i, o, char_order)
                        e = &tab[find(tab, mask, key.hi, key.lo, o + 1)]
                        if e.order == 0:
                            e.order = o + 1
                            e.hi = key.hi
                            e.lo = key.lo
                            e.rcount = 0
                            e.stamp = -1
                        e.rcount = e.rcount + 1
            for h in range(run_start[r], run_start[r + 1]):
                n_hc = gather(cptr, cdata, hw + hyp_ptr[h], hyp_ptr[h + 1] - hyp_ptr[h], hc)
                n_ht = gather(tptr, tdata, hw + hyp_ptr[h], hyp_ptr[h + 1] - hyp_ptr[h], ht)
                for q in range(nq):
                    tab = tabs + q * slots
                    for o in range(n_orders):
                        m = n_grams(n_hc, n_ht, o, char_order)
                        matches = 0
                        for i in range(m):
                            key = ngram_key(hc, ht, i, o, char_order)
                            e = &tab[find(tab, mask, key.hi, key.lo, o + 1)]
                            if e.order != 0:
                                if e.stamp != h:
                                    e.stamp = h
                                    e.hcount = 0
                                e.hcount = e.hcount + 1
                                if e.hcount <= e.rcount:
                                    matches = matches + 1
                        rows[q * row + 3 * o] = m if rows[q * row + 3 * o + 1] > 0 else 0
                        rows[q * row + 3 * o + 2] = matches
                best = -1.0
                best_q = 0
                for q in range(nq):
                    f = f_score(rows + q * row, n_orders, beta)
                    if f > best:
                        best = f
                        best_q = q
                for i in range(row):
                    out[h, i] = <int32_t>rows[best_q * row + i] if nq > 0 else 0
    free(ints_all)
    free(rows_all)
    free(tables_all)
    return 0
