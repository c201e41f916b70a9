# BLEU n-gram statistics of hypotheses against one sentence's references, through an
# open-addressing table of the references' n-grams (orders 1..4, count clipped to the
# largest count in any one reference).
#
#     from _ngram cimport NgramTable, ngram_table_init, ngram_table_free, ngram_table_build,
#                         ngram_hyp_stats
#
# One table per thread: build it for a sentence, then score each hypothesis of that
# sentence (stamps make reuse cheap: nothing is cleared between hypotheses). Tokens are
# int32 class ids (lowercased word ids when lowercasing). Used by the n-best reader
# (pyx/_nbest_scan.pyx): sequentially for forest strings, in OpenMP threads over the
# sentences of a file. Only `cdef inline` here (no module of this name exists at run time).

from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memset

#: effective reference length modes of row[8]
cdef enum:
    REFLEN_CLOSEST = 0     # closest to the hypothesis length, ties to the shorter
    REFLEN_SHORTEST = 1
    REFLEN_AVERAGE = 2     # the sum of the lengths; divided by the count at scoring time


cdef struct NgramSlot:
    int32_t w[4]
    int32_t order          # 0 = empty slot
    int32_t ref_max        # max count over the references
    int32_t ref_cnt        # count in the reference being added
    int32_t hyp_cnt        # count in the hypothesis being scored
    int64_t ref_stamp
    int64_t hyp_stamp


cdef struct NgramTable:
    NgramSlot* slots
    Py_ssize_t mask        # size - 1 (size a power of 2); -1 before the first build
    int64_t ref_stamp
    int64_t hyp_stamp
    int32_t* ref_lens      # length of each reference of the current sentence
    Py_ssize_t n_ref_lens
    Py_ssize_t ref_lens_cap


#: the hash of the empty n-gram; an n-gram's hash extends its prefix's by one word, so the
#: orders 1..4 from one position cost one step each
cdef enum:
    NGRAM_SEED = 0x9E3779B9


cdef inline uint64_t ngram_step(uint64_t h, int32_t w) noexcept nogil:
    h = (h ^ <uint64_t><uint32_t>w) * 0xBF58476D1CE4E5B9ULL
    return h ^ (h >> 31)


cdef inline bint same_ngram(const int32_t* a, const int32_t* b, int order) noexcept nogil:
    cdef int k
    for k in range(order):
        if a[k] != b[k]:
            return False
    return True


cdef inline NgramSlot* ngram_probe(NgramTable* t, uint64_t h, const int32_t* w, int order) noexcept nogil:
    """The slot of the n-gram w[:order] (hash h), or the empty slot where it would go."""
    cdef Py_ssize_t slot = h & t.mask
    cdef NgramSlot* s
    while True:
        s = &t.slots[slot]
        if s.order == 0 or (s.order == order and same_ngram(s.w, w, order)):
            return s
        slot = (slot + 1) & t.mask


cdef inline void ngram_table_init(NgramTable* t) noexcept nogil:
    t.slots = NULL
    t.mask = -1
    t.ref_stamp = 0
    t.hyp_stamp = 0
    t.ref_lens = NULL
    t.n_ref_lens = 0
    t.ref_lens_cap = 0


cdef inline void ngram_table_free(NgramTable* t) noexcept nogil:
    free(t.slots)
    free(t.ref_lens)
    t.slots = NULL
    t.ref_lens = NULL
    t.mask = -1
    t.ref_lens_cap = 0


cdef inline int ngram_table_build(NgramTable* t, const int64_t* ref_tok_ptr, int64_t r0, int64_t r1,
                                  const int32_t* ref_tokens) noexcept nogil:
    """The table of references r0..r1-1 (reference r = ref_tokens[ref_tok_ptr[r]:
    ref_tok_ptr[r + 1]]). Returns 0, or -1 when memory runs out."""
    cdef int64_t r, t0, t1, i
    cdef Py_ssize_t total = 0, size
    cdef int order, k, L
    cdef uint64_t h
    cdef NgramSlot* s
    cdef const int32_t* w
    for r in range(r0, r1):
        L = <int>(ref_tok_ptr[r + 1] - ref_tok_ptr[r])
        for order in range(1, 5):
            if L >= order:
                total += L - order + 1
    size = 64
    while size < 2 * total + 16:
        size *= 2
    if t.slots == NULL or size - 1 > t.mask:
        free(t.slots)
        t.slots = <NgramSlot*>malloc(size * sizeof(NgramSlot))
        if t.slots == NULL:
            t.mask = -1
            return -1
        t.mask = size - 1
    memset(t.slots, 0, (t.mask + 1) * sizeof(NgramSlot))
    if r1 - r0 > t.ref_lens_cap:
        free(t.ref_lens)
        t.ref_lens_cap = 2 * (r1 - r0) + 4
        t.ref_lens = <int32_t*>malloc(t.ref_lens_cap * sizeof(int32_t))
        if t.ref_lens == NULL:
            t.ref_lens_cap = 0
            return -1
    t.n_ref_lens = r1 - r0
    for r in range(r0, r1):
        t.ref_stamp += 1
        t0 = ref_tok_ptr[r]
        t1 = ref_tok_ptr[r + 1]
        t.ref_lens[r - r0] = <int32_t>(t1 - t0)
        for i in range(t0, t1):
            w = &ref_tokens[i]
            h = NGRAM_SEED
            for order in range(1, 5):
                if i + order > t1:
                    break
                h = ngram_step(h, w[order - 1])
                s = ngram_probe(t, h, w, order)
                if s.order == 0:
                    s.order = order
                    for k in range(order):
                        s.w[k] = w[k]
                if s.ref_stamp != t.ref_stamp:
                    s.ref_stamp = t.ref_stamp
                    s.ref_cnt = 0
                s.ref_cnt += 1
                if s.ref_cnt > s.ref_max:
                    s.ref_max = s.ref_cnt
    return 0


cdef inline void ngram_hyp_stats(NgramTable* t, const int32_t* toks, Py_ssize_t n, int reflen_mode,
                                 int32_t* row) noexcept nogil:
    """BLEU statistics row[9] of one hypothesis (n class ids) against the table."""
    cdef int order
    cdef Py_ssize_t i, k
    cdef uint64_t h
    cdef NgramSlot* s
    cdef const int32_t* w
    cdef int32_t best, diff, bestdiff, L
    cdef int64_t total
    t.hyp_stamp += 1
    for order in range(1, 5):
        row[2 * order - 2] = 0
        row[2 * order - 1] = <int32_t>(n - order + 1) if n >= order else 0
    for i in range(n):
        w = &toks[i]
        h = NGRAM_SEED
        for order in range(1, 5):
            if i + order > n:
                break
            h = ngram_step(h, w[order - 1])
            s = ngram_probe(t, h, w, order)
            if s.order == 0:
                # a longer n-gram from here holds this one, so no reference has it either
                break
            if s.hyp_stamp != t.hyp_stamp:
                s.hyp_stamp = t.hyp_stamp
                s.hyp_cnt = 0
            s.hyp_cnt += 1
            if s.hyp_cnt <= s.ref_max:
                row[2 * order - 2] += 1
    if reflen_mode == REFLEN_CLOSEST:
        best = t.ref_lens[0]
        bestdiff = best - <int32_t>n
        if bestdiff < 0:
            bestdiff = -bestdiff
        for k in range(1, t.n_ref_lens):
            L = t.ref_lens[k]
            diff = L - <int32_t>n
            if diff < 0:
                diff = -diff
            if diff < bestdiff or (diff == bestdiff and L < best):
                best = L
                bestdiff = diff
        row[8] = best
    elif reflen_mode == REFLEN_SHORTEST:
        best = t.ref_lens[0]
        for k in range(1, t.n_ref_lens):
            if t.ref_lens[k] < best:
                best = t.ref_lens[k]
        row[8] = best
    else:
        total = 0
        for k in range(t.n_ref_lens):
            total += t.ref_lens[k]
        row[8] = <int32_t>total
