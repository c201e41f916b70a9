# Lazy k-best derivations of a hypergraph (Huang & Chiang 2005, "Better k-best parsing",
# Algorithm 3), optionally keeping only the first derivation of each target string.
#
# A derivation of node v is (e, j): an incoming edge e and, for the i-th tail t_i of e, the
# rank j_i of the sub-derivation used there in t_i's own list. Its score is
# edge_score[e] + score(best[t_0][j_0]) + score(best[t_1][j_1]) + ..., added in that order.
# Every node keeps the derivations found so far (best[v], in order) and a heap of candidates
# (heap[v]). The next derivation of v is the heap's top; once taken, its neighbours
# (e, j + b_i) join the heap, which may first need the (j_i + 1)-th derivation of t_i,
# found the same way. Each occurrence of a node in a derivation tree chooses its
# sub-derivation independently (as in the paper and in cdec).
#
# Order, a total order on each node's derivations: higher score first; equal scores: lower
# edge id, then the rank vector j compared lexicographically (a tail's rank is its position
# in the tail's own order, by this same rule). A successor (e, j + b_i) never scores higher
# than (e, j) (the lists are sorted and float addition is monotone) and its ranks are
# larger, so keys only get worse along successors: what the lazy enumeration needs.
#
# Differences from the paper's pseudo-code, none changing the result:
# * No duplicate check: (e, j) enters the heap only from its one predecessor (e, j - b_m),
#   m the last nonzero position of j, i.e. (e, j) gets the successors j + b_i for i >= m.
#   The best unexplored vector, or an ancestor of it on this tree (whose key is no worse),
#   is then always on the heap.
# * Recursion is an explicit stack: a lattice of 10^5 nodes would overflow the C stack.
#   Requests go from a head to its tails, whose ids are smaller, so N entries suffice.
# * The 1-best of every node is found bottom-up first (the heaps' tops, i.e. Viterbi).
#
# Memory: one record per candidate (score, edge, offset of its ranks: 20 bytes + 4 per
# tail) plus one heap or list slot (8 bytes); no Python object until the output arrays.

from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t, INT32_MAX
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcmp, memset

import numpy as np

include "_growbuf.pxi"

# Status codes (mirrored in mtplug/forests/kbest.py, which words the messages).
cdef enum:
    OK = 0
    ERR_MEMORY = 1
    ERR_NAN = 2      # a derivation's score is NaN (edge scores adding +inf and -inf)
    ERR_RANK = 3     # a node's list outgrew int32 ranks


cdef struct Vec:
    # growable int64 array: a node's candidate heap or its list of derivations
    int64_t* data
    int64_t n
    int64_t cap


cdef inline int vec_reserve(Vec* v, int64_t need) noexcept nogil:
    cdef int64_t cap
    cdef int64_t* p
    if need <= v.cap:
        return 0
    cap = v.cap * 2
    if cap < 4:
        cap = 4
    if cap < need:
        cap = need
    p = <int64_t*>realloc(v.data, cap * sizeof(int64_t))
    if p == NULL:
        return -1
    v.data = p
    v.cap = cap
    return 0


cdef struct Forest:
    int64_t n_nodes
    const int64_t* node_edges
    const int64_t* tail_indptr
    const int32_t* tails
    const double* edge_scores
    # candidates in creation order; candidate c's ranks are ranks[rank_off[c]:][:n_tails]
    double* score
    int32_t* edge
    int64_t* rank_off
    int64_t n_cand
    int64_t cap_cand
    int32_t* ranks
    int64_t n_ranks
    int64_t cap_ranks
    Vec* heap            # [N] candidates not taken yet (binary heap, best on top)
    Vec* best            # [N] derivations found, in order
    int64_t* cursor      # [N] next tail position to expand for best[v][last]
    char* expanded       # [N] the successors of best[v][last] are on the heap
    char* exhausted      # [N] the node has no more derivations
    int32_t* stack_v     # [N] pending requests: node ...
    int64_t* stack_want  # [N] ... and how many derivations it must have


cdef inline bint better(const Forest* f, int64_t a, int64_t b) noexcept nogil:
    cdef int64_t i, n, oa, ob
    if f.score[a] != f.score[b]:
        return f.score[a] > f.score[b]
    if f.edge[a] != f.edge[b]:
        return f.edge[a] < f.edge[b]
    n = f.tail_indptr[f.edge[a] + 1] - f.tail_indptr[f.edge[a]]
    oa = f.rank_off[a]
    ob = f.rank_off[b]
    for i in range(n):
        if f.ranks[oa + i] != f.ranks[ob + i]:
            return f.ranks[oa + i] < f.ranks[ob + i]
    return False


cdef inline int heap_push(Forest* f, int32_t v, int64_t c) noexcept nogil:
    cdef Vec* h = &f.heap[v]
    cdef int64_t i, parent
    if vec_reserve(h, h.n + 1) != 0:
        return ERR_MEMORY
    i = h.n
    h.n += 1
    while i > 0:
        parent = (i - 1) // 2
        if not better(f, c, h.data[parent]):
            break
        h.data[i] = h.data[parent]
        i = parent
    h.data[i] = c
    return OK


cdef inline int64_t heap_pop(Forest* f, int32_t v) noexcept nogil:
    cdef Vec* h = &f.heap[v]
    cdef int64_t top = h.data[0], last, i = 0, child
    h.n -= 1
    if h.n == 0:
        return top
    last = h.data[h.n]
    while True:
        child = 2 * i + 1
        if child >= h.n:
            break
        if child + 1 < h.n and better(f, h.data[child + 1], h.data[child]):
            child += 1
        if not better(f, h.data[child], last):
            break
        h.data[i] = h.data[child]
        i = child
    h.data[i] = last
    return top


cdef int reserve_candidates(Forest* f, int64_t n_tails) noexcept nogil:
    cdef int64_t cap
    cdef void* p
    if f.n_cand + 1 > f.cap_cand:
        cap = f.cap_cand + f.cap_cand // 2 + 1024
        # the three arrays grow one by one; cap_cand moves only when all have
        p = realloc(f.score, cap * sizeof(double))
        if p == NULL:
            return ERR_MEMORY
        f.score = <double*>p
        p = realloc(f.edge, cap * sizeof(int32_t))
        if p == NULL:
            return ERR_MEMORY
        f.edge = <int32_t*>p
        p = realloc(f.rank_off, cap * sizeof(int64_t))
        if p == NULL:
            return ERR_MEMORY
        f.rank_off = <int64_t*>p
        f.cap_cand = cap
    if f.n_ranks + n_tails > f.cap_ranks:
        cap = f.cap_ranks + f.cap_ranks // 2 + 4096
        if cap < f.n_ranks + n_tails:
            cap = f.n_ranks + n_tails
        p = realloc(f.ranks, cap * sizeof(int32_t))
        if p == NULL:
            return ERR_MEMORY
        f.ranks = <int32_t*>p
        f.cap_ranks = cap
    return OK


cdef int add_candidate(Forest* f, int32_t v, int32_t e, int64_t src, int64_t inc) noexcept nogil:
    """Put (e, j) on v's heap: j = src's ranks plus one at position ``inc``, or all
    zeros when src < 0. The tails' lists must hold the ranks used."""
    cdef int64_t t0 = f.tail_indptr[e], nt = f.tail_indptr[e + 1] - t0, i, c, off, so
    cdef double s
    if reserve_candidates(f, nt) != OK:
        return ERR_MEMORY
    c = f.n_cand
    off = f.n_ranks
    if src >= 0:
        so = f.rank_off[src]
        for i in range(nt):
            f.ranks[off + i] = f.ranks[so + i]
        f.ranks[off + inc] += 1
    else:
        for i in range(nt):
            f.ranks[off + i] = 0
    s = f.edge_scores[e]
    for i in range(nt):
        s += f.score[f.best[f.tails[t0 + i]].data[f.ranks[off + i]]]
    if s != s:
        return ERR_NAN
    f.score[c] = s
    f.edge[c] = e
    f.rank_off[c] = off
    f.n_cand += 1
    f.n_ranks += nt
    return heap_push(f, v, c)


cdef inline int take_best(Forest* f, int32_t v) noexcept nogil:
    """Move v's heap top to the end of its list (the heap is not empty)."""
    cdef Vec* b = &f.best[v]
    if b.n >= INT32_MAX:
        return ERR_RANK
    if vec_reserve(b, b.n + 1) != 0:
        return ERR_MEMORY
    b.data[b.n] = heap_pop(f, v)
    b.n += 1
    f.expanded[v] = 0
    f.cursor[v] = 0
    return OK


cdef int viterbi(Forest* f) noexcept nogil:
    """Every node's heap (one candidate per edge, all ranks 0) and its 1-best."""
    cdef int64_t v, e
    cdef int st
    cdef int64_t t
    cdef bint derivable
    for v in range(f.n_nodes):
        for e in range(f.node_edges[v], f.node_edges[v + 1]):
            derivable = True
            for t in range(f.tail_indptr[e], f.tail_indptr[e + 1]):
                if f.best[f.tails[t]].n == 0:
                    derivable = False   # (a tail without derivations: not in a valid hypergraph)
            if not derivable:
                continue
            st = add_candidate(f, <int32_t>v, <int32_t>e, -1, 0)
            if st != OK:
                return st
        if f.heap[v].n == 0:
            f.exhausted[v] = 1
        else:
            st = take_best(f, <int32_t>v)
            if st != OK:
                return st
    return OK


cdef int request(Forest* f, int32_t v0, int64_t want) noexcept nogil:
    """Find derivations of v0 until it has ``want`` of them or none is left."""
    cdef int64_t top = 1, d, e, t0, nt, i, m, off, need
    cdef int32_t v, u
    cdef bint waiting
    cdef int st
    f.stack_v[0] = v0
    f.stack_want[0] = want
    while top > 0:
        v = f.stack_v[top - 1]
        if f.best[v].n >= f.stack_want[top - 1] or f.exhausted[v]:
            top -= 1
            continue
        if not f.expanded[v]:
            # the successors of the last derivation taken, each needing one more
            # derivation of its tail (asked for first if missing)
            d = f.best[v].data[f.best[v].n - 1]
            e = f.edge[d]
            t0 = f.tail_indptr[e]
            nt = f.tail_indptr[e + 1] - t0
            off = f.rank_off[d]
            m = nt - 1
            while m > 0 and f.ranks[off + m] == 0:
                m -= 1
            if f.cursor[v] < m:
                f.cursor[v] = m
            waiting = False
            while f.cursor[v] < nt:
                i = f.cursor[v]
                u = f.tails[t0 + i]
                need = <int64_t>f.ranks[off + i] + 2
                if f.best[u].n < need and not f.exhausted[u]:
                    f.stack_v[top] = u
                    f.stack_want[top] = need
                    top += 1
                    waiting = True
                    break
                if f.best[u].n >= need:
                    st = add_candidate(f, v, <int32_t>e, d, i)
                    if st != OK:
                        return st
                f.cursor[v] = i + 1
            if waiting:
                continue
            f.expanded[v] = 1
        if f.heap[v].n == 0:
            f.exhausted[v] = 1
            top -= 1
            continue
        st = take_best(f, v)
        if st != OK:
            return st
    return OK


cdef struct Frame:
    int64_t d      # a derivation
    int64_t pos    # next rhs item (yield) or tail (edges) to visit


cdef inline int64_t child(const Forest* f, int64_t d, int64_t i) noexcept nogil:
    """The sub-derivation of derivation d at its i-th tail."""
    cdef int64_t e = f.edge[d]
    return f.best[f.tails[f.tail_indptr[e] + i]].data[f.ranks[f.rank_off[d] + i]]


cdef int write_yield(const Forest* f, int64_t d, const int64_t* rhs_indptr, const int32_t* rhs,
                     const int32_t* word_map, Frame* stack, GrowBuf* out) noexcept nogil:
    """Append the target words (ids through word_map) of derivation d to out."""
    cdef int64_t top = 1, e, r
    cdef int32_t w
    stack[0].d = d
    stack[0].pos = 0
    while top > 0:
        e = f.edge[stack[top - 1].d]
        if stack[top - 1].pos >= rhs_indptr[e + 1] - rhs_indptr[e]:
            top -= 1
            continue
        r = rhs[rhs_indptr[e] + stack[top - 1].pos]
        stack[top - 1].pos += 1
        if r >= 0:
            w = word_map[r]
            if growbuf_append(out, &w, sizeof(int32_t)) != 0:
                return ERR_MEMORY
        else:
            stack[top].d = child(f, stack[top - 1].d, -r - 1)
            stack[top].pos = 0
            top += 1
    return OK


cdef int write_edges(const Forest* f, int64_t d, Frame* stack, GrowBuf* out) noexcept nogil:
    """Append the edges of derivation d in preorder (an edge, then its tails' edges in tail order)."""
    cdef int64_t top = 1, e
    cdef int32_t x = f.edge[d]
    if growbuf_append(out, &x, sizeof(int32_t)) != 0:
        return ERR_MEMORY
    stack[0].d = d
    stack[0].pos = 0
    while top > 0:
        e = f.edge[stack[top - 1].d]
        if stack[top - 1].pos >= f.tail_indptr[e + 1] - f.tail_indptr[e]:
            top -= 1
            continue
        stack[top].d = child(f, stack[top - 1].d, stack[top - 1].pos)
        stack[top].pos = 0
        stack[top - 1].pos += 1
        x = f.edge[stack[top].d]
        if growbuf_append(out, &x, sizeof(int32_t)) != 0:
            return ERR_MEMORY
        top += 1
    return OK


cdef inline uint64_t hash_words(const int32_t* w, int64_t n) noexcept nogil:
    # FNV-1a over word ids, then a final mix so that the low bits index the table well
    cdef uint64_t h = 1469598103934665603ULL
    cdef int64_t i
    for i in range(n):
        h ^= <uint32_t>w[i]
        h *= 1099511628211ULL
    h ^= h >> 33
    h *= 0xff51afd7ed558ccdULL
    h ^= h >> 33
    return h


cdef struct StringSet:
    # the target strings already output: open addressing over output indices (-1 empty)
    int64_t* slots
    uint64_t* hashes     # [cap of outputs] hash of output i
    int64_t mask
    int64_t n
    int64_t cap_hashes


cdef int strings_grow(StringSet* s) noexcept nogil:
    cdef int64_t size = (s.mask + 1) * 2, i, slot
    cdef int64_t* slots = <int64_t*>malloc(size * sizeof(int64_t))
    if slots == NULL:
        return ERR_MEMORY
    for i in range(size):
        slots[i] = -1
    for i in range(s.n):
        slot = <int64_t>(s.hashes[i] & <uint64_t>(size - 1))
        while slots[slot] >= 0:
            slot = (slot + 1) & (size - 1)
        slots[slot] = i
    free(s.slots)
    s.slots = slots
    s.mask = size - 1
    return OK


cdef int strings_add(StringSet* s, const int32_t* words, const int64_t* word_ptr,
                     int64_t start, int64_t n) noexcept nogil:
    """Add words[start:start+n] as output s.n unless an earlier output has the same
    string: returns 1 if added, 0 if seen before, -ERR_MEMORY."""
    cdef uint64_t h = hash_words(words + start, n)
    cdef int64_t slot, i
    cdef void* p
    slot = <int64_t>(h & <uint64_t>s.mask)
    while s.slots[slot] >= 0:
        i = s.slots[slot]
        if s.hashes[i] == h and word_ptr[i + 1] - word_ptr[i] == n and \
                memcmp(words + word_ptr[i], words + start, n * sizeof(int32_t)) == 0:
            return 0
        slot = (slot + 1) & s.mask
    if s.n + 1 > s.cap_hashes:
        p = realloc(s.hashes, (s.cap_hashes * 2 + 64) * sizeof(uint64_t))
        if p == NULL:
            return -ERR_MEMORY
        s.hashes = <uint64_t*>p
        s.cap_hashes = s.cap_hashes * 2 + 64
    s.slots[slot] = s.n
    s.hashes[s.n] = h
    s.n += 1
    if 2 * s.n > s.mask + 1:
        if strings_grow(s) != OK:
            return -ERR_MEMORY
    return 1


cdef int forest_init(Forest* f, int64_t n_nodes) noexcept nogil:
    f.n_nodes = n_nodes
    f.score = NULL
    f.edge = NULL
    f.rank_off = NULL
    f.ranks = NULL
    f.n_cand = f.cap_cand = f.n_ranks = f.cap_ranks = 0
    f.heap = <Vec*>calloc(n_nodes, sizeof(Vec))
    f.best = <Vec*>calloc(n_nodes, sizeof(Vec))
    f.cursor = <int64_t*>calloc(n_nodes, sizeof(int64_t))
    f.expanded = <char*>calloc(n_nodes, sizeof(char))
    f.exhausted = <char*>calloc(n_nodes, sizeof(char))
    f.stack_v = <int32_t*>malloc(n_nodes * sizeof(int32_t))
    f.stack_want = <int64_t*>malloc(n_nodes * sizeof(int64_t))
    if f.heap == NULL or f.best == NULL or f.cursor == NULL or f.expanded == NULL or \
            f.exhausted == NULL or f.stack_v == NULL or f.stack_want == NULL:
        return ERR_MEMORY
    return OK


cdef void forest_free(Forest* f) noexcept nogil:
    cdef int64_t v
    if f.heap != NULL:
        for v in range(f.n_nodes):
            free(f.heap[v].data)
    if f.best != NULL:
        for v in range(f.n_nodes):
            free(f.best[v].data)
    free(f.heap)
    free(f.best)
    free(f.cursor)
    free(f.expanded)
    free(f.exhausted)
    free(f.stack_v)
    free(f.stack_want)
    free(f.score)
    free(f.edge)
    free(f.rank_off)
    free(f.ranks)


def kbest(const int64_t[::1] node_edges, const int64_t[::1] tail_indptr, const int32_t[::1] tails,
          const int64_t[::1] rhs_indptr, const int32_t[::1] rhs, const int32_t[::1] word_map,
          const double[::1] edge_scores, int64_t k, bint unique, int64_t max_examined):
    """The k best derivations of the goal (node N - 1), in the order described above.

    Hypergraph arrays as in mtplug.hypergraph (N >= 1 nodes, E edges, every node with an
    incoming edge); word_map int32 [n_words] maps word ids to the ids written (equal
    strings must map to one id for ``unique``); edge_scores float64 [E], finite. With
    ``unique`` a derivation whose string was output before is skipped. Stops after k
    outputs, when the goal has no more derivations, or after ``max_examined`` goal
    derivations (< 0: no limit).

    Returns ``(status, scores f64 [n], edge_ptr i64 [n + 1], edges i32, word_ptr i64
    [n + 1], words i32, n_examined, n_candidates)``: the edges of output i in preorder are
    edges[edge_ptr[i]:edge_ptr[i + 1]], its words words[word_ptr[i]:word_ptr[i + 1]];
    n_examined counts goal derivations looked at, n_candidates the candidates created.
    status != 0 (see the enum above): the arrays hold the outputs made before the error.
    """
    cdef int64_t N = node_edges.shape[0] - 1
    cdef const int32_t* tails_p = &tails[0] if tails.shape[0] > 0 else NULL
    cdef const int32_t* rhs_p = &rhs[0] if rhs.shape[0] > 0 else NULL
    cdef const int32_t* map_p = &word_map[0] if word_map.shape[0] > 0 else NULL
    cdef Forest f
    cdef StringSet seen
    cdef GrowBuf out_score, out_eptr, out_edges, out_wptr, out_words
    cdef Frame* stack = NULL
    cdef int st = OK, added
    cdef int64_t goal = N - 1, n_out = 0, examined = 0, zero = 0, d, w0, x
    cdef cnp.ndarray eptr, wptr
    if N < 1:
        raise ValueError("the hypergraph has no nodes")
    memset(&out_score, 0, sizeof(GrowBuf))
    memset(&out_eptr, 0, sizeof(GrowBuf))
    memset(&out_edges, 0, sizeof(GrowBuf))
    memset(&out_wptr, 0, sizeof(GrowBuf))
    memset(&out_words, 0, sizeof(GrowBuf))
    seen.slots = NULL
    seen.hashes = NULL
    seen.mask = 63
    seen.n = 0
    seen.cap_hashes = 0
    with nogil:
        st = forest_init(&f, N)
        if st == OK:
            f.node_edges = &node_edges[0]
            f.tail_indptr = &tail_indptr[0]
            f.tails = tails_p
            f.edge_scores = &edge_scores[0] if edge_scores.shape[0] > 0 else NULL
            stack = <Frame*>malloc((N + 1) * sizeof(Frame))
            seen.slots = <int64_t*>malloc((seen.mask + 1) * sizeof(int64_t))
            if stack == NULL or seen.slots == NULL or \
                    growbuf_append(&out_eptr, &zero, sizeof(int64_t)) != 0 or \
                    growbuf_append(&out_wptr, &zero, sizeof(int64_t)) != 0:
                st = ERR_MEMORY
            else:
                for x in range(seen.mask + 1):
                    seen.slots[x] = -1
        if st == OK:
            st = viterbi(&f)
        while st == OK and n_out < k and (max_examined < 0 or examined < max_examined):
            st = request(&f, <int32_t>goal, examined + 1)
            if st != OK or f.best[goal].n <= examined:
                break
            d = f.best[goal].data[examined]
            examined += 1
            w0 = out_words.size // <int64_t>sizeof(int32_t)
            st = write_yield(&f, d, &rhs_indptr[0], rhs_p, map_p, stack, &out_words)
            if st != OK:
                break
            if unique:
                added = strings_add(&seen, <int32_t*>out_words.data, <int64_t*>out_wptr.data, w0,
                                    out_words.size // <int64_t>sizeof(int32_t) - w0)
                if added < 0:
                    st = -added
                    break
                if added == 0:
                    out_words.size = w0 * sizeof(int32_t)
                    continue
            st = write_edges(&f, d, stack, &out_edges)
            if st != OK:
                break
            x = out_edges.size // <int64_t>sizeof(int32_t)
            w0 = out_words.size // <int64_t>sizeof(int32_t)
            if growbuf_append(&out_score, &f.score[d], sizeof(double)) != 0 or \
                    growbuf_append(&out_eptr, &x, sizeof(int64_t)) != 0 or \
                    growbuf_append(&out_wptr, &w0, sizeof(int64_t)) != 0:
                st = ERR_MEMORY
                break
            n_out += 1
        if st != OK:
            # keep the arrays consistent: drop a half-written output
            out_edges.size = (<int64_t*>out_eptr.data)[n_out] * sizeof(int32_t) if out_eptr.size else 0
            out_words.size = (<int64_t*>out_wptr.data)[n_out] * sizeof(int32_t) if out_wptr.size else 0
            out_score.size = n_out * sizeof(double)
            out_eptr.size = (n_out + 1) * sizeof(int64_t) if out_eptr.size else 0
            out_wptr.size = (n_out + 1) * sizeof(int64_t) if out_wptr.size else 0
        x = f.n_cand
        forest_free(&f)
        free(stack)
        free(seen.slots)
        free(seen.hashes)
    eptr = growbuf_to_array(&out_eptr, cnp.NPY_INT64, sizeof(int64_t), 0)
    wptr = growbuf_to_array(&out_wptr, cnp.NPY_INT64, sizeof(int64_t), 0)
    if eptr.shape[0] == 0:
        eptr = np.zeros(1, np.int64)
        wptr = np.zeros(1, np.int64)
    return (st,
            growbuf_to_array(&out_score, cnp.NPY_FLOAT64, sizeof(double), 0),
            eptr,
            growbuf_to_array(&out_edges, cnp.NPY_INT32, sizeof(int32_t), 0),
            wptr,
            growbuf_to_array(&out_words, cnp.NPY_INT32, sizeof(int32_t), 0),
            examined, x)
