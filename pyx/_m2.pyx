# Moses's M2 scorer statistics (mert/M2.h, M2Scorer.cpp at Moses 34452895; Dahlmeier & Ng's
# MaxMatch), from word ids. The rules are in tests/reference/m2_reference.py; here is how
# they are computed without Moses's sets of edges:
#
# * Levenshtein table over source rows i and hypothesis columns j (insert/delete 1,
#   substitute 2, match 0); per cell a bit for every move that reaches its optimum.
# * The lattice's vertices are the cells reachable backwards from (n, m), numbered in
#   lexicographic (i, j) order, so every edge goes from a lower to a higher number and the
#   edges in Moses's sorted order are the rows of a CSR (source, then target) in order.
# * On a vertex pair joined by optimal moves the words left unchanged are
#   (di + dj - dd) / 2 and "something changed" is dd > 0 (dd: the difference of table
#   values), whatever the path: so whether a composed edge may exist is a test on its end
#   points, and only its cost (how many moves the first composition found had) must be
#   carried. Its text is always the hypothesis words under it, so it is compared with a
#   gold edit straight from the words.
# * A closure round composes a -> w -> b for a in order, w in a's row in order, b in w's row
#   in order, a pair keeping the first composition found (Moses's loops over its sorted
#   edge set); the edges found join the rows after the round.
# * Bellman-Ford: with edges sorted by source, whose numbers are a topological order, the
#   first of Moses's |V| - 1 passes already gives the final distances and predecessors
#   (the first in-edge reaching the minimum, in source order); the other passes change nothing.
#
# Floats are C floats (32 bits) as in Moses: edge costs, +0.001 through double, the gold
# weight -(max_unchanged + 1) * |E| converted from int, path sums, and F_beta.

from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdlib cimport free, malloc, qsort, realloc
from libc.string cimport memcmp, memset
from libc.math cimport INFINITY
from cython.parallel cimport prange

from _m2_score cimport m2_goodness

#: statistics per hypothesis: correct, proposed, gold, source length
M2_STATS = 4

# move bits of a table cell
cdef enum:
    FROM_LEFT = 1       # (i, j-1) -> (i, j): the hypothesis word j-1 inserted
    FROM_ABOVE = 2      # (i-1, j) -> (i, j): the source word i-1 deleted
    FROM_DIAG = 4       # (i-1, j-1) -> (i, j): substituted, or kept when SAME is set
    SAME = 8


cdef struct Edges:
    int64_t* row_ptr        # [vertices + 1], its capacity Work.vert_cap + 1
    int32_t* dst            # target vertex
    int32_t* cost           # number of moves
    Py_ssize_t dst_cap
    Py_ssize_t cost_cap


cdef struct Work:
    # table, (n + 1) * (m + 1) cells
    int32_t* dist
    uint8_t* moves
    int32_t* vertex_of
    Py_ssize_t cells_cap
    # vertices
    int32_t* vi
    int32_t* vj
    int32_t* vd
    int64_t* mark
    float* best
    int32_t* pred
    int64_t* pred_edge
    Py_ssize_t vert_cap
    # edges by source vertex; the next round's rows are built in next, then the two swap
    Edges edges
    Edges next
    float* weight
    Py_ssize_t weight_cap
    # edges found in a round: (source, target, cost) triples, and one source's sorted row
    int32_t* found
    Py_ssize_t found_cap
    int64_t* packed
    Py_ssize_t packed_cap
    # per annotator: correct, proposed, gold
    int32_t* counts
    Py_ssize_t counts_cap


cdef int grow(void** p, Py_ssize_t* cap, Py_ssize_t need, size_t item) noexcept nogil:
    """Make *p hold at least ``need`` items of ``item`` bytes (contents kept); -1 when out of memory."""
    cdef Py_ssize_t c
    cdef void* q
    if need <= cap[0]:
        return 0
    c = cap[0] + cap[0] // 2 + 64
    if c < need:
        c = need
    q = realloc(p[0], c * item)
    if q == NULL:
        return -1
    p[0] = q
    cap[0] = c
    return 0


cdef int grow_cells(Work* w, Py_ssize_t need) noexcept nogil:
    cdef Py_ssize_t c = w.cells_cap, c2 = w.cells_cap, c3 = w.cells_cap
    if grow(<void**>&w.dist, &c, need, sizeof(int32_t)) or grow(<void**>&w.moves, &c2, need, sizeof(uint8_t)) \
            or grow(<void**>&w.vertex_of, &c3, need, sizeof(int32_t)):
        return -1
    w.cells_cap = c
    return 0


cdef int grow_vertices(Work* w, Py_ssize_t need) noexcept nogil:
    cdef Py_ssize_t c[10]
    cdef int k
    for k in range(10):
        c[k] = w.vert_cap
    if (grow(<void**>&w.vi, &c[0], need, sizeof(int32_t)) or grow(<void**>&w.vj, &c[1], need, sizeof(int32_t))
            or grow(<void**>&w.vd, &c[2], need, sizeof(int32_t)) or grow(<void**>&w.mark, &c[3], need, sizeof(int64_t))
            or grow(<void**>&w.best, &c[4], need, sizeof(float))
            or grow(<void**>&w.pred, &c[5], need, sizeof(int32_t))
            or grow(<void**>&w.pred_edge, &c[6], need, sizeof(int64_t))
            or grow(<void**>&w.edges.row_ptr, &c[7], need + 1, sizeof(int64_t))
            or grow(<void**>&w.next.row_ptr, &c[8], need + 1, sizeof(int64_t))):
        return -1
    w.vert_cap = c[0]
    return 0


cdef int grow_edges(Edges* x, Py_ssize_t need) noexcept nogil:
    """Room for ``need`` edges in x (row_ptr grows with the vertices); -1 when out of memory."""
    if grow(<void**>&x.dst, &x.dst_cap, need, sizeof(int32_t)) or grow(<void**>&x.cost, &x.cost_cap, need,
                                                                      sizeof(int32_t)):
        return -1
    return 0


cdef void free_work(Work* w) noexcept nogil:
    free(w.dist)
    free(w.moves)
    free(w.vertex_of)
    free(w.vi)
    free(w.vj)
    free(w.vd)
    free(w.mark)
    free(w.best)
    free(w.pred)
    free(w.pred_edge)
    free(w.edges.row_ptr)
    free(w.next.row_ptr)
    free(w.edges.dst)
    free(w.edges.cost)
    free(w.next.dst)
    free(w.next.cost)
    free(w.weight)
    free(w.found)
    free(w.packed)
    free(w.counts)


cdef int compare_int64(const void* a, const void* b) noexcept nogil:
    cdef int64_t x = (<const int64_t*>a)[0], y = (<const int64_t*>b)[0]
    return (x > y) - (x < y)


cdef inline float f_beta(int32_t correct, int32_t proposed, int32_t gold, float beta) noexcept nogil:
    """M2::FScore in float: p = 1 without proposed edits, r = 1 without gold edits, 0 when
    beta^2 p + r is 0."""
    cdef float c = <float>correct, p = 1.0, r = 1.0, bb, t, denom, num
    if proposed != 0:
        p = c / <float>proposed
    if gold != 0:
        r = c / <float>gold
    bb = beta * beta
    t = bb * p
    denom = t + r
    if denom == 0:
        return 0.0
    num = <float>1.0 + bb
    num = num * p
    num = num * r
    return num / denom


cdef bint same_text(const int32_t* y, Py_ssize_t j0, Py_ssize_t j1, const int64_t* text_ptr,
                    const uint8_t* text, const uint8_t* g, Py_ssize_t glen, bint spaced) noexcept nogil:
    """Whether the hypothesis words y[j0:j1] (their texts, empty ones left out, joined by a
    space when ``spaced``, else run together) spell the gold text g[:glen]."""
    cdef Py_ssize_t j, pos = 0, a, b
    cdef bint first = True
    for j in range(j0, j1):
        a = text_ptr[y[j]]
        b = text_ptr[y[j] + 1]
        if a == b:
            continue
        if spaced and not first:
            if pos >= glen or g[pos] != 32:
                return False
            pos += 1
        first = False
        if pos + (b - a) > glen or memcmp(g + pos, text + a, b - a) != 0:
            return False
        pos += b - a
    return pos == glen


cdef Py_ssize_t matching_gold(Py_ssize_t k0, Py_ssize_t k1, int32_t annotator, int32_t start, int32_t end,
                              const int32_t* y, Py_ssize_t j0, Py_ssize_t j1,
                              const int64_t* gold_start, const int64_t* gold_end, const int32_t* gold_annotator,
                              const int64_t* gold_text_ptr, const uint8_t* gold_text,
                              const int64_t* text_ptr, const uint8_t* text, bint spaced) noexcept nogil:
    """How many gold edits k0..k1-1 of ``annotator`` equal the edit source[start:end] -> y[j0:j1]."""
    cdef Py_ssize_t k, n = 0
    for k in range(k0, k1):
        if gold_annotator[k] == annotator and gold_start[k] == start and gold_end[k] == end:
            if same_text(y, j0, j1, text_ptr, text, gold_text + gold_text_ptr[k],
                         gold_text_ptr[k + 1] - gold_text_ptr[k], spaced):
                n += 1
    return n


cdef int hypothesis_stats(Work* w, const int32_t* x, Py_ssize_t n, const int32_t* y, Py_ssize_t m,
                          Py_ssize_t k0, Py_ssize_t k1, int32_t n_annotators,
                          const int64_t* gold_start, const int64_t* gold_end, const int32_t* gold_annotator,
                          const int64_t* gold_text_ptr, const uint8_t* gold_text,
                          const int64_t* text_ptr, const uint8_t* text, bint spaced,
                          int64_t max_unchanged, float beta, int32_t* out) noexcept nogil:
    """out[0:4] = correct, proposed, gold, n for one hypothesis y[:m] (m >= 1) of a source
    x[:n] (n >= 1) with gold edits k0..k1-1. 0, or -1 when out of memory."""
    cdef Py_ssize_t W = m + 1, i, j, c, v, e, e2, a, b, mid, nV, nE, n_found, k, q, r0, r1, total
    cdef int32_t best_val, dd, du, annotator, correct, proposed, gold, best_annotator, new_weight
    cdef int32_t left, above, diag
    cdef int64_t stamp = 0
    cdef float cand, f, best_f
    cdef bint changed
    cdef Edges swap

    if grow_cells(w, (n + 1) * W):
        return -1
    # --- Levenshtein table with the optimal moves of every cell
    for i in range(n + 1):
        for j in range(m + 1):
            c = i * W + j
            if i == 0 and j == 0:
                w.dist[c] = 0
                w.moves[c] = 0
            elif i == 0:
                w.dist[c] = <int32_t>j
                w.moves[c] = FROM_LEFT
            elif j == 0:
                w.dist[c] = <int32_t>i
                w.moves[c] = FROM_ABOVE
            else:
                left = w.dist[c - 1] + 1
                above = w.dist[c - W] + 1
                diag = w.dist[c - W - 1] + (0 if x[i - 1] == y[j - 1] else 2)
                best_val = left if left < above else above
                if diag < best_val:
                    best_val = diag
                w.dist[c] = best_val
                w.moves[c] = ((FROM_LEFT if left == best_val else 0) | (FROM_ABOVE if above == best_val else 0)
                              | (FROM_DIAG if diag == best_val else 0) | (SAME if x[i - 1] == y[j - 1] else 0))
    total = n * W + m
    out[3] = <int32_t>n
    if w.dist[total] > n:
        out[0] = 0
        out[1] = w.dist[total]
        out[2] = 0
        return 0
    if grow(<void**>&w.counts, &w.counts_cap, 3 * n_annotators, sizeof(int32_t)):
        return -1
    for annotator in range(n_annotators):
        w.counts[3 * annotator] = 0
        w.counts[3 * annotator + 1] = 0
        w.counts[3 * annotator + 2] = 0
    for k in range(k0, k1):
        w.counts[3 * gold_annotator[k] + 2] += 1

    if w.dist[total] > 0:
        # --- vertices: cells reachable backwards from (n, m), numbered in (i, j) order
        for c in range(total + 1):
            w.vertex_of[c] = 0
        w.vertex_of[total] = 1
        for c in range(total, 0, -1):
            if w.vertex_of[c]:
                if w.moves[c] & FROM_LEFT:
                    w.vertex_of[c - 1] = 1
                if w.moves[c] & FROM_ABOVE:
                    w.vertex_of[c - W] = 1
                if w.moves[c] & FROM_DIAG:
                    w.vertex_of[c - W - 1] = 1
        nV = 0
        for c in range(total + 1):
            if w.vertex_of[c]:
                nV += 1
        if grow_vertices(w, nV):
            return -1
        nV = 0
        for c in range(total + 1):
            if w.vertex_of[c]:
                w.vi[nV] = <int32_t>(c // W)
                w.vj[nV] = <int32_t>(c % W)
                w.vd[nV] = w.dist[c]
                w.vertex_of[c] = <int32_t>nV
                nV += 1
            else:
                w.vertex_of[c] = -1
        # --- the moves as edges, rows by source in target order
        for v in range(nV + 1):
            w.edges.row_ptr[v] = 0
        for v in range(nV):
            c = w.vi[v] * W + w.vj[v]
            if w.moves[c] & FROM_LEFT:
                w.edges.row_ptr[w.vertex_of[c - 1] + 1] += 1
            if w.moves[c] & FROM_ABOVE:
                w.edges.row_ptr[w.vertex_of[c - W] + 1] += 1
            if w.moves[c] & FROM_DIAG:
                w.edges.row_ptr[w.vertex_of[c - W - 1] + 1] += 1
        for v in range(nV):
            w.edges.row_ptr[v + 1] += w.edges.row_ptr[v]
        nE = w.edges.row_ptr[nV]
        if grow_edges(&w.edges, nE):
            return -1
        for v in range(nV):
            w.pred_edge[v] = w.edges.row_ptr[v]     # next free slot of row v
        for v in range(nV):                    # targets in increasing order: rows come out sorted
            c = w.vi[v] * W + w.vj[v]
            if w.moves[c] & FROM_LEFT:
                a = w.vertex_of[c - 1]
                w.edges.dst[w.pred_edge[a]] = <int32_t>v
                w.edges.cost[w.pred_edge[a]] = 1
                w.pred_edge[a] += 1
            if w.moves[c] & FROM_ABOVE:
                a = w.vertex_of[c - W]
                w.edges.dst[w.pred_edge[a]] = <int32_t>v
                w.edges.cost[w.pred_edge[a]] = 1
                w.pred_edge[a] += 1
            if w.moves[c] & FROM_DIAG:
                a = w.vertex_of[c - W - 1]
                w.edges.dst[w.pred_edge[a]] = <int32_t>v
                w.edges.cost[w.pred_edge[a]] = 1
                w.pred_edge[a] += 1

        # --- closure rounds
        for v in range(nV):
            w.mark[v] = -1
        while True:
            n_found = 0
            for a in range(nV):
                stamp += 1
                for e in range(w.edges.row_ptr[a], w.edges.row_ptr[a + 1]):
                    w.mark[w.edges.dst[e]] = stamp
                for e in range(w.edges.row_ptr[a], w.edges.row_ptr[a + 1]):
                    mid = w.edges.dst[e]
                    for e2 in range(w.edges.row_ptr[mid], w.edges.row_ptr[mid + 1]):
                        b = w.edges.dst[e2]
                        if w.mark[b] == stamp:
                            continue
                        dd = w.vd[b] - w.vd[a]
                        if dd <= 0:
                            continue
                        du = (w.vi[b] - w.vi[a] + w.vj[b] - w.vj[a] - dd) // 2
                        if du > max_unchanged:
                            continue
                        w.mark[b] = stamp
                        if grow(<void**>&w.found, &w.found_cap, 3 * (n_found + 1), sizeof(int32_t)):
                            return -1
                        w.found[3 * n_found] = <int32_t>a
                        w.found[3 * n_found + 1] = <int32_t>b
                        w.found[3 * n_found + 2] = w.edges.cost[e] + w.edges.cost[e2]
                        n_found += 1
            if n_found == 0:
                break
            # new rows: each source's old row and found edges, sorted by target
            nE = w.edges.row_ptr[nV] + n_found
            if grow_edges(&w.next, nE):
                return -1
            q = 0
            e2 = 0
            w.next.row_ptr[0] = 0
            for a in range(nV):
                r0 = w.edges.row_ptr[a]
                r1 = w.edges.row_ptr[a + 1]
                k = 0
                if grow(<void**>&w.packed, &w.packed_cap, r1 - r0 + n_found, sizeof(int64_t)):
                    return -1
                for e in range(r0, r1):
                    w.packed[k] = ((<int64_t>w.edges.dst[e]) << 32) | (<int64_t>w.edges.cost[e])
                    k += 1
                while q < n_found and w.found[3 * q] == a:
                    w.packed[k] = ((<int64_t>w.found[3 * q + 1]) << 32) | (<int64_t>w.found[3 * q + 2])
                    k += 1
                    q += 1
                if k > r1 - r0:
                    qsort(w.packed, k, sizeof(int64_t), compare_int64)
                for i in range(k):
                    w.next.dst[e2] = <int32_t>(w.packed[i] >> 32)
                    w.next.cost[e2] = <int32_t>(w.packed[i] & <int64_t>0x7FFFFFFF)
                    e2 += 1
                w.next.row_ptr[a + 1] = e2
            swap = w.edges
            w.edges = w.next
            w.next = swap
        nE = w.edges.row_ptr[nV]
        if grow(<void**>&w.weight, &w.weight_cap, nE, sizeof(float)):
            return -1
        new_weight = <int32_t>(-(max_unchanged + 1) * <int64_t>nE)

        # --- per annotator: weights, shortest path, its edits
        for annotator in range(n_annotators):
            for a in range(nV):
                for e in range(w.edges.row_ptr[a], w.edges.row_ptr[a + 1]):
                    b = w.edges.dst[e]
                    if w.vd[b] > w.vd[a]:
                        if matching_gold(k0, k1, annotator, w.vi[a], w.vi[b], y, w.vj[a], w.vj[b], gold_start,
                                         gold_end, gold_annotator, gold_text_ptr, gold_text, text_ptr, text,
                                         spaced):
                            w.weight[e] = <float>new_weight
                        else:
                            w.weight[e] = <float>(<double>(<float>w.edges.cost[e]) + 0.001)
                    else:
                        w.weight[e] = <float>w.edges.cost[e]
            for v in range(nV):
                w.best[v] = INFINITY
            w.best[0] = 0.0
            for a in range(nV):
                for e in range(w.edges.row_ptr[a], w.edges.row_ptr[a + 1]):
                    b = w.edges.dst[e]
                    cand = w.best[a] + w.weight[e]
                    if cand < w.best[b]:
                        w.best[b] = cand
                        w.pred[b] = <int32_t>a
                        w.pred_edge[b] = e
            correct = 0
            proposed = 0
            v = nV - 1
            while v != 0:
                a = w.pred[v]
                if w.vd[v] > w.vd[a]:
                    proposed += 1
                    correct += <int32_t>matching_gold(k0, k1, annotator, w.vi[a], w.vi[v], y, w.vj[a], w.vj[v],
                                                      gold_start, gold_end, gold_annotator, gold_text_ptr,
                                                      gold_text, text_ptr, text, spaced)
                v = a
            w.counts[3 * annotator] = correct
            w.counts[3 * annotator + 1] = proposed

    # --- the annotator with the best F of this hypothesis alone, the first on ties
    best_annotator = 0
    best_f = -1.0
    for annotator in range(n_annotators):
        f = f_beta(w.counts[3 * annotator], w.counts[3 * annotator + 1], w.counts[3 * annotator + 2], beta)
        if f > best_f:
            best_f = f
            best_annotator = annotator
    out[0] = w.counts[3 * best_annotator]
    out[1] = w.counts[3 * best_annotator + 1]
    out[2] = w.counts[3 * best_annotator + 2]
    return 0


cdef int64_t score_run(Py_ssize_t h0, Py_ssize_t h1, const int64_t* hyp_ptr, const int32_t* hyp_words,
                       const int32_t* x, Py_ssize_t n, Py_ssize_t k0, Py_ssize_t k1, int32_t n_annotators,
                       const int64_t* gold_start, const int64_t* gold_end, const int32_t* gold_annotator,
                       const int64_t* gold_text_ptr, const uint8_t* gold_text,
                       const int64_t* text_ptr, const uint8_t* text, bint spaced,
                       int64_t max_unchanged, float beta, int32_t* out) noexcept nogil:
    """Statistics of hypotheses h0..h1-1 of one sentence into out[h*4 ..]. 0, -1 when out
    of memory, h + 1 when hypothesis h has no word."""
    cdef Work w
    cdef Py_ssize_t h
    cdef int64_t status = 0
    memset(&w, 0, sizeof(Work))       # every buffer NULL, every capacity 0
    for h in range(h0, h1):
        if hyp_ptr[h + 1] == hyp_ptr[h]:
            status = h + 1
            break
        if hypothesis_stats(&w, x, n, hyp_words + hyp_ptr[h], hyp_ptr[h + 1] - hyp_ptr[h], k0, k1, n_annotators,
                            gold_start, gold_end, gold_annotator, gold_text_ptr, gold_text, text_ptr, text,
                            spaced, max_unchanged, beta, out + 4 * h) != 0:
            status = -1
            break
    free_work(&w)
    return status


def m2_stats(const int64_t[::1] hyp_ptr, const int32_t[::1] hyp_words, const int64_t[::1] run_start,
             const int64_t[::1] run_sid, const int64_t[::1] src_ptr, const int32_t[::1] src_words,
             const int64_t[::1] text_ptr, const uint8_t[::1] text, const int64_t[::1] gold_ptr,
             const int64_t[::1] gold_start, const int64_t[::1] gold_end, const int32_t[::1] gold_annotator,
             const int64_t[::1] gold_text_ptr, const uint8_t[::1] gold_text, const int32_t[::1] n_annotators,
             int64_t max_unchanged, float beta, bint spaced, int32_t[:, ::1] out, int n_threads=1):
    """Moses M2SCORER statistics of word-id hypotheses, runs of one sentence each in OpenMP threads.

    Words are ids into one vocabulary in which two words have one id exactly when Moses
    compares them equal (``Annot::transform``: ASCII-lowercased unless truecase).
    hyp_ptr int64 [n + 1], hyp_words int32: hypothesis h's words (at least one each: Moses
    reads an empty hypothesis as one empty word); run_start int64 [R + 1], run_sid int64
    [R]: hypotheses run_start[r]..run_start[r+1]-1 are of sentence run_sid[r].
    src_ptr int64 [S + 1], src_words int32: each sentence's source words (at least one).
    text_ptr int64 [V + 1], text uint8: word v's text as Moses compares it (transformed).
    gold_ptr int64 [S + 1]: sentence s's gold edits gold_ptr[s]..gold_ptr[s+1]-1, distinct
    by (start, end, annotator, transformed text): gold_start, gold_end int64 (source word
    offsets), gold_annotator int32 (< n_annotators[s]), gold_text_ptr int64 [G + 1] and
    gold_text uint8 (the correction, transformed). n_annotators int32 [S] (>= 1): the
    annotators sentence s is scored against (ids 0..n_annotators[s]-1).
    max_unchanged >= 0; beta: float32; spaced: the edit text joins words with a space
    (truecase) or runs them together (otherwise).
    out int32 [n, 4]: correct, proposed, gold, source length.
    Returns 0, -1 when memory runs out, or h + 1 when hypothesis h has no word.
    """
    cdef Py_ssize_t n = hyp_ptr.shape[0] - 1, R = run_sid.shape[0], S = src_ptr.shape[0] - 1, r, s
    if out.shape[0] != n or out.shape[1] != M2_STATS:
        raise ValueError(f"out must be [n, {M2_STATS}]")
    if run_start.shape[0] != R + 1 or (R and (run_start[0] != 0 or run_start[R] != n)):
        raise ValueError("runs must cover the hypotheses in order")
    if gold_ptr.shape[0] != S + 1 or n_annotators.shape[0] != S:
        raise ValueError("gold_ptr must be [S + 1] and n_annotators [S]")
    if max_unchanged < 0:
        raise ValueError("max_unchanged must be >= 0")
    for r in range(R):
        if run_start[r + 1] < run_start[r] or not 0 <= run_sid[r] < S:
            raise ValueError(f"run {r} is out of order or names no sentence")
        s = run_sid[r]
        if src_ptr[s + 1] <= src_ptr[s] or n_annotators[s] < 1:
            raise ValueError(f"sentence {s} needs a source word and an annotator")
    cdef int64_t* status = <int64_t*>malloc((R if R else 1) * sizeof(int64_t))
    if status == NULL:
        return -1
    cdef const int32_t* hw = &hyp_words[0] if hyp_words.shape[0] else NULL
    cdef const int32_t* sw = &src_words[0] if src_words.shape[0] else NULL
    cdef const uint8_t* tx = &text[0] if text.shape[0] else NULL
    cdef const uint8_t* gt = &gold_text[0] if gold_text.shape[0] else NULL
    cdef const int64_t* gs = &gold_start[0] if gold_start.shape[0] else NULL
    cdef const int64_t* ge = &gold_end[0] if gold_end.shape[0] else NULL
    cdef const int32_t* ga = &gold_annotator[0] if gold_annotator.shape[0] else NULL
    cdef int32_t* o = &out[0, 0] if n else NULL
    cdef int T = n_threads if n_threads > 1 else 1
    cdef int64_t result = 0
    with nogil:
        for r in prange(R, num_threads=T, schedule="dynamic", chunksize=1):
            s = run_sid[r]
            status[r] = score_run(run_start[r], run_start[r + 1], &hyp_ptr[0], hw, sw + src_ptr[s],
                                  src_ptr[s + 1] - src_ptr[s], gold_ptr[s], gold_ptr[s + 1], n_annotators[s],
                                  gs, ge, ga, &gold_text_ptr[0], gt, &text_ptr[0], tx, spaced, max_unchanged,
                                  beta, o)
    for r in range(R):
        if status[r] != 0:
            result = status[r]
            if result < 0:
                break
    free(status)
    return result


def corpus_f_beta(const int64_t[::1] summed, double beta):
    """py_ hook of _m2_score.m2_goodness: Moses's F_beta of summed statistics int64 [4]
    (correct, proposed, gold, source length), a float32 value as a Python float."""
    if summed.shape[0] != M2_STATS:
        raise ValueError(f"expected {M2_STATS} statistics")
    return m2_goodness(&summed[0], beta)
