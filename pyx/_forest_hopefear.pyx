# Hope/fear (and model) derivations over a hypergraph with an approximate BLEU, the way
# Moses kbmira's hypergraph mode chooses them (mert/ForestRescore.cpp, Viterbi with a
# "bleuWeight"): a Viterbi pass in which each node keeps only its winning edge, ranked by
#     model score + bleu_weight * G(stats),
# where the model score of a node is that of its winner (BLEU never accumulates), and
# G(x) = BLEU(bg + x) * (bg + x)[8] is the background gain (pyx/_mira.pyx, ref divisor 1).
# The stats of an edge are those of its tails' winners plus the n-grams the edge creates:
# every n-gram (n <= 4) that ends on one of the edge's own words or crosses into a tail's
# left context, counted as matches up to the total (unclipped, summed over references)
# count of that n-gram in the references. A tail contributes its left context (its first
# 3 words) and, when that is full, its right context (last 3 words) for n-grams that cross
# its right end. The reference length of a node is the sentence's shortest reference length
# scaled by the share of source words it covers. Ties go to the later edge (Moses's >=).

from libc.math cimport exp, log, isnan
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy, memset

import numpy as np

cdef enum:
    ORDER = 4
    CTX = 3             # ORDER - 1 words of context on each side


cdef struct Gram:
    int32_t w[4]
    int32_t order       # 0 = empty slot
    int64_t count


cdef inline uint64_t _hash(const int32_t* w, int order) noexcept nogil:
    cdef uint64_t h = <uint64_t>order * 0x9E3779B97F4A7C15ULL
    cdef int k
    for k in range(order):
        h = (h ^ <uint64_t>(<uint32_t>w[k])) * 0x100000001B3ULL
        h ^= h >> 29
    return h


cdef inline bint memcmp_i32(const int32_t* a, const int32_t* b, int n) noexcept nogil:
    cdef int k
    for k in range(n):
        if a[k] != b[k]:
            return False
    return True


cdef struct RefTable:
    Gram* slots
    int64_t mask


cdef int _ref_add(RefTable* t, const int32_t* w, int order) noexcept nogil:
    cdef int64_t i = <int64_t>(_hash(w, order) & <uint64_t>t.mask)
    cdef int k
    while True:
        if t.slots[i].order == 0:
            t.slots[i].order = order
            for k in range(order):
                t.slots[i].w[k] = w[k]
            t.slots[i].count = 1
            return 0
        if t.slots[i].order == order and memcmp_i32(t.slots[i].w, w, order):
            t.slots[i].count += 1
            return 0
        i = (i + 1) & t.mask


cdef int64_t _ref_count(const RefTable* t, const int32_t* w, int order) noexcept nogil:
    cdef int64_t i = <int64_t>(_hash(w, order) & <uint64_t>t.mask)
    while True:
        if t.slots[i].order == 0:
            return 0
        if t.slots[i].order == order and memcmp_i32(t.slots[i].w, w, order):
            return t.slots[i].count
        i = (i + 1) & t.mask


cdef double _gain(const double* x, const double* bg) noexcept nogil:
    """BLEU(bg + x) * (bg + x)[8]; 0 where the logarithm is undefined (Moses: NaN -> 0)."""
    cdef double logbleu = 0.0, t, brevity
    cdef int n
    for n in range(ORDER):
        t = bg[2 * n] + x[2 * n]
        if not (t > 0.0) or not (bg[2 * n + 1] + x[2 * n + 1] > 0.0):
            return 0.0
        logbleu += log(t) - log(bg[2 * n + 1] + x[2 * n + 1])
    logbleu /= ORDER
    brevity = 1.0 - (bg[8] + x[8]) / (bg[1] + x[1])
    if brevity < 0.0:
        logbleu += brevity
    t = exp(logbleu) * (bg[8] + x[8])
    return 0.0 if isnan(t) else t


cdef struct State:
    int32_t left[3]
    int32_t right[3]
    int32_t n_left
    int32_t n_right
    double stats[9]


cdef void _edge_stats(int64_t e, const int64_t[::1] tail_indptr, const int32_t[::1] tails,
                      const int64_t[::1] rhs_indptr, const int32_t[::1] rhs, const int32_t[::1] word_map,
                      const State* st, const RefTable* ref, Gram* local, double* out) noexcept nogil:
    """out[0:8] = the approximate n-gram statistics of edge e over its tails' winners."""
    cdef int32_t window[4]        # the last (up to 4) words, oldest first
    cdef int n_win = 0, k, n, n_local = 0, first_len
    cdef int64_t p, i, j
    cdef int32_t r, word
    cdef const State* child
    cdef int phase, c, n_ctx
    memset(out, 0, 9 * sizeof(double))
    for p in range(rhs_indptr[e], rhs_indptr[e + 1]):
        r = rhs[p]
        if r >= 0:
            phase = 0
            n_ctx = 1
            child = NULL
        else:
            child = &st[tails[tail_indptr[e] - r - 1]]
            if child.n_left == 0:
                continue
            phase = 1
            n_ctx = child.n_left
            if child.n_left == CTX:
                n_ctx += child.n_right
        for c in range(n_ctx):
            if phase == 0:
                word = word_map[r]
                first_len = 1           # every n-gram ending here is new
            elif c < child.n_left:
                word = child.left[c]
                first_len = c + 2       # only those reaching back before the tail
            else:
                if c == child.n_left:
                    n_win = 0           # a full left context: jump to the right end
                word = child.right[c - child.n_left]
                first_len = ORDER + 1   # inside the tail: nothing new
            if n_win == ORDER:
                for k in range(ORDER - 1):
                    window[k] = window[k + 1]
                n_win -= 1
            window[n_win] = word
            n_win += 1
            for n in range(first_len, n_win + 1):
                # the n-gram window[n_win - n : n_win], merged into this edge's counts
                for j in range(n_local):
                    if local[j].order == n and memcmp_i32(local[j].w, &window[n_win - n], n):
                        local[j].count += 1
                        break
                else:
                    local[n_local].order = n
                    for k in range(n):
                        local[n_local].w[k] = window[n_win - n + k]
                    local[n_local].count = 1
                    n_local += 1
    for j in range(n_local):
        n = local[j].order
        out[2 * n - 1] += local[j].count
        i = _ref_count(ref, local[j].w, n)
        out[2 * n - 2] += local[j].count if local[j].count < i else i


cdef void _update_state(int64_t e, const int64_t[::1] tail_indptr, const int32_t[::1] tails,
                        const int64_t[::1] rhs_indptr, const int32_t[::1] rhs, const int32_t[::1] word_map,
                        State* st, State* head) noexcept nogil:
    """Left and right contexts of ``head`` from its winning edge e."""
    cdef int64_t p
    cdef int32_t r
    cdef int c
    cdef const State* child
    head.n_left = 0
    for p in range(rhs_indptr[e], rhs_indptr[e + 1]):
        if head.n_left == CTX:
            break
        r = rhs[p]
        if r >= 0:
            head.left[head.n_left] = word_map[r]
            head.n_left += 1
        else:
            child = &st[tails[tail_indptr[e] - r - 1]]
            for c in range(child.n_left):
                if head.n_left == CTX:
                    break
                head.left[head.n_left] = child.left[c]
                head.n_left += 1
    cdef int32_t rev[3]
    cdef int n_rev = 0
    p = rhs_indptr[e + 1] - 1
    while p >= rhs_indptr[e] and n_rev < CTX:
        r = rhs[p]
        if r >= 0:
            rev[n_rev] = word_map[r]
            n_rev += 1
        else:
            child = &st[tails[tail_indptr[e] - r - 1]]
            c = child.n_right - 1
            while c >= 0 and n_rev < CTX:
                rev[n_rev] = child.right[c]
                n_rev += 1
                c -= 1
        p -= 1
    head.n_right = n_rev
    for c in range(n_rev):
        head.right[c] = rev[n_rev - 1 - c]


def bleu_viterbi(const int64_t[::1] node_edges, const int64_t[::1] tail_indptr, const int32_t[::1] tails,
                 const int64_t[::1] rhs_indptr, const int32_t[::1] rhs, const int32_t[::1] word_map,
                 const double[::1] edge_scores, double bleu_weight, const int32_t[::1] node_source_len,
                 const int64_t[::1] ref_ptr, const int32_t[::1] ref_tokens, double ref_len,
                 const double[::1] background):
    """The derivation maximising model + bleu_weight * approximate gain (module comment).

    Hypergraph arrays as mtplug.hypergraph.Hypergraph; word_map int32 [words]: word id ->
    the id the references use; edge_scores float64 [E] (w.f); bleu_weight: 1 hope, -1
    fear, 0 the model's best; node_source_len int32 [N]; the references of the sentence are
    ref_tokens[ref_ptr[r]:ref_ptr[r+1]]; ref_len: their (shortest) length; background
    float64 [9]. Returns ``(edges, total)``: the derivation's edges, int32, in pre-order from
    the goal's edge (each edge before the derivations of its tails, tails in order), and its
    model + bleu_weight * gain at the goal.
    """
    cdef Py_ssize_t N = node_edges.shape[0] - 1, v, R = ref_ptr.shape[0] - 1
    cdef int64_t e, k, i, n_grams = 0, max_local = 0, best_e, L
    cdef double model, total, best_total = 0.0, best_model, gain, total_src
    cdef int order, n
    cdef RefTable ref
    cdef State* st
    cdef double* score
    cdef int32_t* back
    cdef Gram* local
    cdef double cand[9]
    cdef double win[9]
    if node_edges[N] != edge_scores.shape[0] or node_source_len.shape[0] != N or background.shape[0] != 9:
        raise ValueError("bleu_viterbi: inconsistent arrays")
    for i in range(R):
        L = ref_ptr[i + 1] - ref_ptr[i]
        n_grams += 4 * L
    for e in range(rhs_indptr.shape[0] - 1):
        L = rhs_indptr[e + 1] - rhs_indptr[e]
        if 4 * (L * (1 + 2 * CTX)) > max_local:
            max_local = 4 * L * (1 + 2 * CTX)
    ref.mask = 1
    while ref.mask < 2 * n_grams + 2:
        ref.mask *= 2
    ref.slots = <Gram*>calloc(ref.mask, sizeof(Gram))
    ref.mask -= 1
    st = <State*>calloc(N, sizeof(State))
    score = <double*>malloc(N * sizeof(double))
    back = <int32_t*>malloc(N * sizeof(int32_t))
    local = <Gram*>malloc((max_local + 1) * sizeof(Gram))
    try:
        if ref.slots == NULL or st == NULL or score == NULL or back == NULL or local == NULL:
            raise MemoryError()
        total_src = node_source_len[N - 1]
        with nogil:
            for i in range(R):
                for order in range(1, ORDER + 1):
                    for k in range(ref_ptr[i], ref_ptr[i + 1] - order + 1):
                        _ref_add(&ref, &ref_tokens[k], order)
            for v in range(N):
                best_e = -1
                best_total = 0.0
                best_model = 0.0
                memset(win, 0, sizeof(win))
                for e in range(node_edges[v], node_edges[v + 1]):
                    model = edge_scores[e]
                    for k in range(tail_indptr[e], tail_indptr[e + 1]):
                        model += score[tails[k]]
                    total = model
                    if bleu_weight != 0.0:
                        _edge_stats(e, tail_indptr, tails, rhs_indptr, rhs, word_map, st, &ref, local, cand)
                        for k in range(tail_indptr[e], tail_indptr[e + 1]):
                            for n in range(8):
                                cand[n] += st[tails[k]].stats[n]
                        cand[8] = node_source_len[v] / total_src * ref_len
                        gain = _gain(cand, &background[0])
                        total = model + bleu_weight * gain
                    else:
                        memset(cand, 0, sizeof(cand))
                    if best_e < 0 or total >= best_total:
                        best_e = e
                        best_total = total
                        best_model = model
                        memcpy(win, cand, sizeof(win))
                back[v] = <int32_t>best_e
                score[v] = best_model
                memcpy(st[v].stats, win, sizeof(win))
                _update_state(best_e, tail_indptr, tails, rhs_indptr, rhs, word_map, st, &st[v])
        # pre-order walk of the winners from the goal
        out = []
        stack = [N - 1]
        while stack:
            v = stack.pop()
            e = back[v]
            out.append(e)
            for k in range(tail_indptr[e + 1] - 1, tail_indptr[e] - 1, -1):
                stack.append(tails[k])
        return np.asarray(out, dtype=np.int32), best_total
    finally:
        free(ref.slots)
        free(st)
        free(score)
        free(back)
        free(local)
