# The envelope semiring over a hypergraph (Macherey et al. 2008; Kumar et al. 2009):
# an inside pass in which each node holds the upper envelope of score(γ) = b + γ·m over
# its derivations, ⊗ (along an edge) is the Minkowski sum of the tails' envelopes plus
# the edge's own line, and ⊕ (over a node's edges) is the upper hull. Each envelope
# segment keeps a back-pointer (its edge and one segment per tail), so the derivation,
# and hence the string, of every segment of the goal's envelope can be rebuilt.
#
# With all slopes 0 every envelope is one segment: the pass is the Viterbi algorithm.
#
# Determinism: candidate lines are sorted stably by (slope ascending, intercept
# descending), so among lines equal in both the first edge (in edge order) wins.
# Within one edge the Minkowski sum already comes out in non-decreasing slope order, so
# sorting is a merge of one run per edge. Not always in intercept order among equal
# slopes, though: a tail's envelope may hold two lines an ulp apart in slope (equal
# features summed in another order), the steeper higher, and adding the edge's slope can
# round both to one value, the lower line first. The hull therefore keeps the higher of
# parallel lines itself rather than trusting the order.

from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport free, malloc
from libc.math cimport INFINITY
from libc.string cimport memset

import numpy as np

include "_growbuf.pxi"

cdef struct Seg:
    double x          # left end of the segment (−inf for the first)
    double m          # slope
    double b          # intercept
    int64_t bp        # offset of the tails' segment ids in the back-pointer pool
    int32_t edge


cdef struct Cand:
    double m
    double b
    int64_t bp
    int32_t edge


cdef inline bint _before(const Cand* c, int64_t i, int64_t j) noexcept nogil:
    # slope ascending, then intercept descending; equal lines keep their order
    if c[i].m != c[j].m:
        return c[i].m < c[j].m
    return c[i].b > c[j].b


cdef void _merge_runs(const Cand* c, int64_t* idx, int64_t* tmp, int64_t* runs, int64_t n_runs) noexcept nogil:
    """Stable merge of the sorted runs idx[runs[r]:runs[r+1]] (r < n_runs; runs[n_runs] = n)
    into one sorted idx. Each edge's Minkowski sum comes out sorted by slope, so the runs
    are the edges and the cost is n·log(edges) rather than n·log(n) (a run's equal slopes
    may be out of intercept order: the hull in _node allows for it)."""
    cdef int64_t* src = idx
    cdef int64_t* dst = tmp
    cdef int64_t* t
    cdef int64_t r, out_r, lo, mid, hi, i, j, k, n = runs[n_runs]
    while n_runs > 1:
        out_r = 0
        r = 0
        while r < n_runs:
            lo = runs[r]
            mid = runs[r + 1]
            hi = runs[r + 2] if r + 2 <= n_runs else mid
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                if _before(c, src[j], src[i]):
                    dst[k] = src[j]
                    j += 1
                else:
                    dst[k] = src[i]
                    i += 1
                k += 1
            while i < mid:
                dst[k] = src[i]
                i += 1
                k += 1
            while j < hi:
                dst[k] = src[j]
                j += 1
                k += 1
            runs[out_r] = lo
            out_r += 1
            r += 2
        runs[out_r] = n
        n_runs = out_r
        t = src
        src = dst
        dst = t
    if src != idx:
        for i in range(n):
            idx[i] = src[i]


cdef struct Scratch:
    GrowBuf cands      # Cand per candidate line of the current node
    GrowBuf cand_bp    # int64 tails' segment ids of the candidates
    GrowBuf order      # int64 [2 * candidates]: sort order and merge buffer
    GrowBuf runs       # int64 [edges + 1]: where each edge's (sorted) candidates start
    GrowBuf stack      # int64 hull stack, then double left ends
    int64_t* pos       # int64 [max tails]: current segment of each tail


cdef int _node(Py_ssize_t v, const int64_t[::1] node_edges, const int64_t[::1] tail_indptr,
               const int32_t[::1] tails, const double[::1] edge_b, const double[::1] edge_m,
               GrowBuf* segs, GrowBuf* bps, int64_t* node_start, int64_t* node_end, Scratch* w) noexcept nogil:
    """The envelope of node v, appended to segs/bps. 0, or -1 when out of memory."""
    cdef int64_t e, k, nt, j, c, top, n_cand, n_stack
    cdef double m, b, nxt, x
    cdef int64_t* pos = w.pos
    cdef int64_t* order
    cdef int64_t* stack
    cdef int64_t* cbp
    cdef double* stack_x
    cdef Cand cd
    cdef Cand* cs
    cdef Seg sg
    cdef Seg* S
    w.cands.size = 0
    w.cand_bp.size = 0
    w.runs.size = 0
    for e in range(node_edges[v], node_edges[v + 1]):
        j = w.cands.size // sizeof(Cand)
        if growbuf_append(&w.runs, &j, sizeof(int64_t)) != 0:
            return -1
        nt = tail_indptr[e + 1] - tail_indptr[e]
        for k in range(nt):
            pos[k] = node_start[tails[tail_indptr[e] + k]]
        S = <Seg*>segs.data
        while True:
            # ⊗: the edge's line plus the current segment of every tail
            m = edge_m[e]
            b = edge_b[e]
            for k in range(nt):
                m = m + S[pos[k]].m
                b = b + S[pos[k]].b
            cd.m = m
            cd.b = b
            cd.edge = <int32_t>e
            cd.bp = w.cand_bp.size // sizeof(int64_t)
            if growbuf_append(&w.cands, &cd, sizeof(Cand)) != 0:
                return -1
            if nt > 0 and growbuf_append(&w.cand_bp, pos, nt * sizeof(int64_t)) != 0:
                return -1
            # the next breakpoint of any tail ends this piece of the sum
            nxt = INFINITY
            for k in range(nt):
                j = pos[k] + 1
                if j < node_end[tails[tail_indptr[e] + k]] and S[j].x < nxt:
                    nxt = S[j].x
            if nxt == INFINITY:
                break
            for k in range(nt):
                j = pos[k] + 1
                if j < node_end[tails[tail_indptr[e] + k]] and S[j].x == nxt:
                    pos[k] = j
    # ⊕: the upper hull of all candidate lines
    n_cand = w.cands.size // sizeof(Cand)
    w.order.size = 0
    w.stack.size = 0
    if growbuf_reserve(&w.order, 2 * n_cand * sizeof(int64_t)) != 0:
        return -1
    if growbuf_reserve(&w.stack, n_cand * (sizeof(int64_t) + sizeof(double))) != 0:
        return -1
    cs = <Cand*>w.cands.data
    order = <int64_t*>w.order.data
    for c in range(n_cand):
        order[c] = c
    if growbuf_append(&w.runs, &n_cand, sizeof(int64_t)) != 0:
        return -1
    _merge_runs(cs, order, order + n_cand, <int64_t*>w.runs.data, w.runs.size // sizeof(int64_t) - 1)
    stack = <int64_t*>w.stack.data
    stack_x = <double*>(w.stack.data + n_cand * sizeof(int64_t))
    n_stack = 0
    for j in range(n_cand):
        c = order[j]
        if n_stack > 0 and cs[stack[n_stack - 1]].m == cs[c].m:
            if cs[c].b <= cs[stack[n_stack - 1]].b:
                continue  # parallel to the line kept, and no higher
            n_stack -= 1  # parallel and higher (rounding, see the top): it replaces the top
        x = -INFINITY
        while n_stack > 0:
            top = stack[n_stack - 1]
            x = (cs[top].b - cs[c].b) / (cs[c].m - cs[top].m)
            if x <= stack_x[n_stack - 1]:
                n_stack -= 1      # the top line is never strictly highest
                x = -INFINITY
            else:
                break
        stack[n_stack] = c
        stack_x[n_stack] = x
        n_stack += 1
    node_start[v] = segs.size // sizeof(Seg)
    cbp = <int64_t*>w.cand_bp.data
    for j in range(n_stack):
        c = stack[j]
        nt = tail_indptr[cs[c].edge + 1] - tail_indptr[cs[c].edge]
        sg.x = stack_x[j]
        sg.m = cs[c].m
        sg.b = cs[c].b
        sg.edge = cs[c].edge
        sg.bp = bps.size // sizeof(int64_t)
        if nt > 0 and growbuf_append(bps, cbp + cs[c].bp, nt * sizeof(int64_t)) != 0:
            return -1
        if growbuf_append(segs, &sg, sizeof(Seg)) != 0:
            return -1
    node_end[v] = segs.size // sizeof(Seg)
    return 0


cdef int _inside(const int64_t[::1] node_edges, const int64_t[::1] tail_indptr, const int32_t[::1] tails,
                 const double[::1] edge_b, const double[::1] edge_m,
                 GrowBuf* segs, GrowBuf* bps, int64_t* node_start, int64_t* node_end) noexcept nogil:
    """The envelope of every node into segs/bps; node v owns segs[node_start[v]:node_end[v]].
    Returns 0, or -1 when out of memory."""
    cdef Py_ssize_t N = node_edges.shape[0] - 1, v
    cdef int64_t e, max_tails = 0
    cdef int rc = 0
    cdef Scratch w
    memset(&w, 0, sizeof(Scratch))
    for e in range(tail_indptr.shape[0] - 1):
        if tail_indptr[e + 1] - tail_indptr[e] > max_tails:
            max_tails = tail_indptr[e + 1] - tail_indptr[e]
    w.pos = <int64_t*>malloc((max_tails + 1) * sizeof(int64_t))
    if w.pos == NULL:
        return -1
    for v in range(N):
        rc = _node(v, node_edges, tail_indptr, tails, edge_b, edge_m, segs, bps, node_start, node_end, &w)
        if rc != 0:
            break
    free(w.pos)
    growbuf_free(&w.cands)
    growbuf_free(&w.cand_bp)
    growbuf_free(&w.order)
    growbuf_free(&w.runs)
    growbuf_free(&w.stack)
    return rc


cdef int _derivation(const Seg* S, const int64_t* bp_pool, int64_t seg,
                     const int64_t[::1] tail_indptr, const int64_t[::1] rhs_indptr, const int32_t[::1] rhs,
                     GrowBuf* words, GrowBuf* edges, GrowBuf* stack) noexcept nogil:
    """Append the string (word ids) and the edges of segment ``seg``'s derivation: pre-order,
    an edge's children in the order of their variables on its target side (not tail order)."""
    cdef int64_t frame[2]
    cdef int64_t* top
    cdef int64_t s, p, e
    cdef int32_t r, e32
    stack.size = 0
    frame[0] = seg
    frame[1] = 0
    if growbuf_append(stack, frame, sizeof(frame)) != 0:
        return -1
    e32 = S[seg].edge
    if growbuf_append(edges, &e32, sizeof(int32_t)) != 0:
        return -1
    while stack.size > 0:
        top = <int64_t*>(stack.data + stack.size - sizeof(frame))
        s = top[0]
        p = top[1]
        e = S[s].edge
        if p == rhs_indptr[e + 1] - rhs_indptr[e]:
            stack.size -= sizeof(frame)
            continue
        top[1] = p + 1
        r = rhs[rhs_indptr[e] + p]
        if r >= 0:
            if growbuf_append(words, &r, sizeof(int32_t)) != 0:
                return -1
        else:
            frame[0] = bp_pool[S[s].bp + (-r - 1)]
            frame[1] = 0
            if growbuf_append(stack, frame, sizeof(frame)) != 0:
                return -1
            e32 = S[frame[0]].edge
            if growbuf_append(edges, &e32, sizeof(int32_t)) != 0:
                return -1
    return 0


def goal_envelope(const int64_t[::1] node_edges, const int64_t[::1] tail_indptr, const int32_t[::1] tails,
                  const int64_t[::1] rhs_indptr, const int32_t[::1] rhs,
                  const double[::1] edge_b, const double[::1] edge_m):
    """The upper envelope of b + γ·m over all derivations, at the goal (the last node).

    Arrays as in mtplug.hypergraph.Hypergraph; edge_b, edge_m float64 [E] are each edge's
    intercept (w·f) and slope (d·f). Returns ``(x, m, b, word_ptr, words, edge_ptr, edges)``:
    segment i covers γ in [x[i], x[i+1]) (x[0] = −inf), its line is b[i] + γ·m[i], its string
    is words[word_ptr[i]:word_ptr[i+1]] (int32 word ids) and its derivation's edges are
    edges[edge_ptr[i]:edge_ptr[i+1]] (int32, pre-order from the goal's edge, children in
    target-side order: not the tail order that ForestCorpus.derivation reads). Edges that
    are never reached from the goal do not matter; a node without edges is an error the
    caller rules out (Hypergraph.check).
    """
    cdef Py_ssize_t N = node_edges.shape[0] - 1, i
    cdef GrowBuf segs, bps, words, edges, stack, word_ptr, edge_ptr
    cdef int64_t* node_start
    cdef int64_t* node_end
    cdef int64_t g0, g1, s, off
    cdef int rc
    cdef Seg* S
    segs.data = NULL; segs.size = 0; segs.cap = 0
    bps.data = NULL; bps.size = 0; bps.cap = 0
    words.data = NULL; words.size = 0; words.cap = 0
    edges.data = NULL; edges.size = 0; edges.cap = 0
    stack.data = NULL; stack.size = 0; stack.cap = 0
    word_ptr.data = NULL; word_ptr.size = 0; word_ptr.cap = 0
    edge_ptr.data = NULL; edge_ptr.size = 0; edge_ptr.cap = 0
    if N < 1 or edge_b.shape[0] != edge_m.shape[0] or edge_b.shape[0] != node_edges[N]:
        raise ValueError("goal_envelope: inconsistent hypergraph arrays")
    node_start = <int64_t*>malloc(2 * N * sizeof(int64_t))
    if node_start == NULL:
        raise MemoryError()
    node_end = node_start + N
    try:
        with nogil:
            rc = _inside(node_edges, tail_indptr, tails, edge_b, edge_m, &segs, &bps, node_start, node_end)
            if rc == 0:
                g0 = node_start[N - 1]
                g1 = node_end[N - 1]
                S = <Seg*>segs.data
                off = 0
                rc = growbuf_append(&word_ptr, &off, sizeof(int64_t))
                if rc == 0:
                    rc = growbuf_append(&edge_ptr, &off, sizeof(int64_t))
                s = g0
                while rc == 0 and s < g1:
                    rc = _derivation(S, <int64_t*>bps.data, s, tail_indptr, rhs_indptr, rhs, &words, &edges, &stack)
                    off = words.size // sizeof(int32_t)
                    if rc == 0:
                        rc = growbuf_append(&word_ptr, &off, sizeof(int64_t))
                    off = edges.size // sizeof(int32_t)
                    if rc == 0:
                        rc = growbuf_append(&edge_ptr, &off, sizeof(int64_t))
                    s += 1
        if rc != 0:
            raise MemoryError()
        K = g1 - g0
        x = np.empty(K, dtype=np.float64)
        m = np.empty(K, dtype=np.float64)
        b = np.empty(K, dtype=np.float64)
        S = <Seg*>segs.data
        for i in range(K):
            x[i] = S[g0 + i].x
            m[i] = S[g0 + i].m
            b[i] = S[g0 + i].b
        return (x, m, b, growbuf_to_array(&word_ptr, cnp.NPY_INT64, 8, 0),
                growbuf_to_array(&words, cnp.NPY_INT32, 4, 0),
                growbuf_to_array(&edge_ptr, cnp.NPY_INT64, 8, 0),
                growbuf_to_array(&edges, cnp.NPY_INT32, 4, 0))
    finally:
        free(node_start)
        growbuf_free(&segs)
        growbuf_free(&bps)
        growbuf_free(&words)
        growbuf_free(&edges)
        growbuf_free(&stack)
        growbuf_free(&word_ptr)
        growbuf_free(&edge_ptr)
