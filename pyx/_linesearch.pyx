# Exact line search (Och 2003): the corpus metric along w + gamma * d, as a step function.
#
# For every sentence the model score of hypothesis h along the line is the line
# a_h + gamma * b_h (a = w.f, b = d.f). The 1-best is the upper envelope of those lines;
# it changes hypothesis only at the envelope's breakpoints. Each breakpoint carries the
# change of the sentence's statistics; sorting all sentences' breakpoints and adding
# the changes up gives the corpus metric on every interval between breakpoints.
#
# Tie rules (so that kernel and brute force agree): among lines with equal slope only the
# highest intercept can be on the envelope, and among equal slope and intercept the
# lowest hypothesis index; a line that is highest at a single point only is dropped.

from libc.math cimport INFINITY
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport calloc, free, malloc, qsort, realloc
from libc.string cimport memset
from cython.parallel cimport prange, threadid

import numpy as np

from _metric cimport MAX_STATS, MetricSpec, fill_spec, metric_objective


cdef struct Line:
    double slope
    double intercept
    int64_t hyp


cdef struct Breakpoint:
    double x
    int64_t prev_hyp      # 1-best to the left of x
    int64_t next_hyp      # 1-best to the right of x


cdef int cmp_line(const void* p, const void* q) noexcept nogil:
    cdef const Line* a = <const Line*>p
    cdef const Line* b = <const Line*>q
    if a.slope < b.slope:
        return -1
    if a.slope > b.slope:
        return 1
    if a.intercept > b.intercept:
        return -1
    if a.intercept < b.intercept:
        return 1
    return -1 if a.hyp < b.hyp else (1 if a.hyp > b.hyp else 0)


cdef Py_ssize_t upper_envelope(Line* lines, Py_ssize_t m, int64_t* env_hyp,
                               double* env_start) noexcept nogil:
    """Envelope of lines sorted by slope (ascending); returns its number of segments.

    Segment k is hypothesis env_hyp[k] on [env_start[k], env_start[k+1]).
    """
    cdef Py_ssize_t t = -1, j
    cdef double x
    for j in range(m):
        while t >= 0:
            if lines[j].slope == lines[t].slope:
                if lines[j].intercept > lines[t].intercept or (
                        lines[j].intercept == lines[t].intercept and lines[j].hyp < lines[t].hyp):
                    t -= 1          # the new line dominates the top everywhere
                    continue
                break               # dominated: never on the envelope
            x = (lines[t].intercept - lines[j].intercept) / (lines[j].slope - lines[t].slope)
            if t > 0 and x <= env_start[t]:
                t -= 1              # the top is highest at most at one point
                continue
            break
        if t >= 0 and lines[j].slope == lines[t].slope:
            continue
        t += 1
        lines[t] = lines[j]
        env_hyp[t] = lines[j].hyp
        env_start[t] = -INFINITY if t == 0 else \
            (lines[t - 1].intercept - lines[t].intercept) / (lines[t].slope - lines[t - 1].slope)
    return t + 1


cdef enum:
    ENVELOPE_AUTO = 0     # walk, falling back to sorting when the envelope is long
    ENVELOPE_WALK = 1
    ENVELOPE_SORT = 2

#: envelope segments walked per sentence before switching to the O(M log M) sort
cdef Py_ssize_t MAX_WALK = 48

ENVELOPE_METHODS = {"auto": ENVELOPE_AUTO, "walk": ENVELOPE_WALK, "sort": ENVELOPE_SORT}


cdef Py_ssize_t walk_envelope(const double* a, const double* bp, Py_ssize_t bs, int64_t lo,
                              int64_t hi, Py_ssize_t max_steps, int64_t* cand, int64_t* env_hyp,
                              double* env_start) noexcept nogil:
    """Envelope by walking outwards from gamma = 0 (gift wrapping in the dual).

    The walk to the right only ever looks at lines steeper than the current one, the
    walk to the left only at flatter ones, and each step drops the lines left behind,
    so the work is far below segments * M. Returns the number of segments, or -1
    after max_steps (the caller then sorts). Same tie rules as upper_envelope. Slopes
    are bp[j * bs] (a strided column, so a coordinate direction needs no copy);
    ``cand`` is scratch space for hi - lo indices; env_* need hi - lo + 1 entries.
    """
    cdef int64_t cl = lo, cr = lo, c, j, best
    cdef Py_ssize_t t, k, n, kept, nl = 0, nr = 0, i
    cdef double x, bx, bc, bj, xc
    # 1-best just left (cl) and just right (cr) of 0: max intercept, then the flattest
    # (left) or steepest (right) line, then the lowest index
    for j in range(lo + 1, hi):
        if a[j] > a[cl] or (a[j] == a[cl] and bp[j * bs] < bp[cl * bs]):
            cl = j
        if a[j] > a[cr] or (a[j] == a[cr] and bp[j * bs] > bp[cr * bs]):
            cr = j
    # walk left from cl: segments collected right to left in env_hyp/env_start
    c = cl
    xc = 0.0
    bc = bp[c * bs]
    n = 0
    for j in range(lo, hi):
        if bp[j * bs] < bc:
            cand[n] = j
            n += 1
    while n > 0:
        best = -1
        bx = -INFINITY
        for k in range(n):
            j = cand[k]
            bj = bp[j * bs]
            x = (a[c] - a[j]) / (bj - bc)
            if best < 0 or x > bx or (x == bx and (bj < bp[best * bs] or (bj == bp[best * bs] and j < best))):
                best = j
                bx = x
        if bx > xc:
            bx = xc     # rounding: a zero-width segment, harmless in the sweep
        if nl + 1 >= max_steps:
            return -1
        env_hyp[nl] = c             # (segment, its start): c is the 1-best on [bx, xc)
        env_start[nl] = bx
        nl += 1
        c = best
        xc = bx
        bc = bp[c * bs]
        kept = 0
        for k in range(n):
            if bp[cand[k] * bs] < bc:
                cand[kept] = cand[k]
                kept += 1
        n = kept
    # the leftmost segment, then reverse the left part into place
    env_hyp[nl] = c
    env_start[nl] = -INFINITY
    nl += 1
    for i in range(nl // 2):
        env_hyp[i], env_hyp[nl - 1 - i] = env_hyp[nl - 1 - i], env_hyp[i]
        env_start[i], env_start[nl - 1 - i] = env_start[nl - 1 - i], env_start[i]
    t = nl
    if cr != cl:
        env_hyp[t] = cr             # a tie at 0: the right 1-best starts there
        env_start[t] = 0.0
        t += 1
    # walk right from cr
    c = cr
    xc = 0.0
    bc = bp[c * bs]
    n = 0
    for j in range(lo, hi):
        if bp[j * bs] > bc:
            cand[n] = j
            n += 1
    while n > 0:
        best = -1
        bx = INFINITY
        for k in range(n):
            j = cand[k]
            bj = bp[j * bs]
            x = (a[c] - a[j]) / (bj - bc)
            if best < 0 or x < bx or (x == bx and (bj > bp[best * bs] or (bj == bp[best * bs] and j < best))):
                best = j
                bx = x
        if bx < xc:
            bx = xc
        if t + 1 >= max_steps:
            return -1
        env_hyp[t] = best
        env_start[t] = bx
        t += 1
        c = best
        xc = bx
        bc = bp[c * bs]
        kept = 0
        for k in range(n):
            if bp[cand[k] * bs] > bc:
                cand[kept] = cand[k]
                kept += 1
        n = kept
    return t


cdef extern from "stdlib.h" nogil:
    int posix_memalign(void** memptr, size_t alignment, size_t size)


cdef struct ThreadSlot:
    # one thread's breakpoints and 1-best totals; padded to whole cache lines so threads
    # appending to their own slot do not share a line
    Breakpoint* brk
    int64_t count
    int64_t capacity
    int64_t n_lines
    int64_t failed
    int64_t totals[MAX_STATS]
    char pad[24]


cdef int cmp_break(const void* p, const void* q) noexcept nogil:
    # a total order (x, then the hypotheses), so the merged list does not depend on which
    # thread found which breakpoint
    cdef const Breakpoint* a = <const Breakpoint*>p
    cdef const Breakpoint* b = <const Breakpoint*>q
    if a.x != b.x:
        return -1 if a.x < b.x else 1
    if a.prev_hyp != b.prev_hyp:
        return -1 if a.prev_hyp < b.prev_hyp else 1
    return -1 if a.next_hyp < b.next_hyp else (1 if a.next_hyp > b.next_hyp else 0)


cdef bint reserve(ThreadSlot* slot, int64_t extra) noexcept nogil:
    """Room for ``extra`` more breakpoints in ``slot`` (doubling); False when out of memory."""
    cdef int64_t cap = slot.capacity if slot.capacity > 0 else 1024
    cdef Breakpoint* grown
    if slot.count + extra <= slot.capacity:
        return True
    while cap < slot.count + extra:
        cap *= 2
    grown = <Breakpoint*>realloc(slot.brk, cap * sizeof(Breakpoint))
    if grown == NULL:
        return False
    slot.brk = grown
    slot.capacity = cap
    return True


def line_sweep(const double[::1] intercepts, const double[:] slopes,
               const int64_t[::1] sent_offsets, const int32_t[:, ::1] stats,
               spec_arrays, int method=ENVELOPE_AUTO, int n_threads=1):
    """The corpus objective along a line, as breakpoints and per-interval scores.

    intercepts, slopes: float64 [n_hyp] (w.f and d.f; slopes may be a strided view such
    as a column of the dense block); sent_offsets int64 [S + 1] (every
    sentence non-empty); stats int32 [n_hyp, n_stats]; spec_arrays: the metric as
    mtplug.metrics.layer.Metric.kernel_spec() gives it (kinds, offsets, widths, weights,
    params, constant). Returns ``(xs, scores, n_lines)``:
    xs float64 [K] sorted distinct breakpoints, scores float64 [K + 1] with scores[k]
    the objective on (xs[k-1], xs[k]) (xs[-1] = -inf, xs[K] = +inf), and n_lines the
    total number of envelope segments (a work measure). ``method`` (ENVELOPE_METHODS)
    chooses how envelopes are built; all give the same result. The sentences' envelopes
    are built by ``n_threads`` OpenMP threads, each appending breakpoints to its own
    buffer and sorting it; the buffers are merged under a total order, so the result
    does not depend on the number of threads.
    """
    cdef Py_ssize_t S = sent_offsets.shape[0] - 1, ns = stats.shape[1]
    cdef Py_ssize_t s, k, j, m, max_m = 1, nseg, K = 0, tid, T, t, best
    cdef int64_t lo, h, nb = 0, n_lines = 0
    cdef Line* lines = NULL
    cdef int64_t* env_hyp = NULL
    cdef int64_t* cand = NULL
    cdef double* env_start = NULL
    cdef ThreadSlot* slots = NULL
    cdef Breakpoint* merged = NULL
    cdef int64_t* heads = NULL
    cdef int64_t totals[MAX_STATS]
    cdef MetricSpec spec
    cdef bint ok = False
    cdef double x
    cdef Line* my_lines
    cdef int64_t* my_env
    cdef int64_t* my_cand
    cdef double* my_start
    cdef ThreadSlot* my
    cdef Py_ssize_t sstride = slopes.strides[0] // sizeof(double)
    if slopes.strides[0] % sizeof(double):
        raise ValueError("slopes must be float64 with a stride that is a multiple of 8 bytes")
    kinds, offsets, widths, weights, params, constant = spec_arrays
    if fill_spec(&spec, kinds, offsets, widths, weights, params, constant, ns) != 0:
        raise ValueError(f"the metric spec does not fit {ns} statistics columns (at most {MAX_STATS})")
    T = n_threads if n_threads > 1 else 1
    if T > S:
        T = S if S > 0 else 1
    for s in range(S):
        if sent_offsets[s + 1] - sent_offsets[s] > max_m:
            max_m = sent_offsets[s + 1] - sent_offsets[s]
    with nogil:
        lines = <Line*>malloc(T * max_m * sizeof(Line))
        env_hyp = <int64_t*>malloc(T * (max_m + 1) * sizeof(int64_t))
        cand = <int64_t*>malloc(T * max_m * sizeof(int64_t))
        env_start = <double*>malloc(T * (max_m + 1) * sizeof(double))
        if posix_memalign(<void**>&slots, 64, T * sizeof(ThreadSlot)) != 0:
            slots = NULL
        else:
            memset(slots, 0, T * sizeof(ThreadSlot))
        heads = <int64_t*>calloc(T, sizeof(int64_t))
        if lines != NULL and env_hyp != NULL and env_start != NULL and cand != NULL \
                and slots != NULL and heads != NULL:
            for s in prange(S, num_threads=T, schedule="dynamic", chunksize=16):
                tid = threadid()
                my = slots + tid
                my_lines = lines + tid * max_m
                my_env = env_hyp + tid * (max_m + 1)
                my_cand = cand + tid * max_m
                my_start = env_start + tid * (max_m + 1)
                lo = sent_offsets[s]
                m = sent_offsets[s + 1] - lo
                nseg = -1
                if method != ENVELOPE_SORT:
                    nseg = walk_envelope(&intercepts[0], &slopes[0], sstride, lo, lo + m,
                                         max_m + 2 if method == ENVELOPE_WALK else MAX_WALK,
                                         my_cand, my_env, my_start)
                if nseg < 0:
                    for j in range(m):
                        my_lines[j].slope = slopes[lo + j]
                        my_lines[j].intercept = intercepts[lo + j]
                        my_lines[j].hyp = lo + j
                    qsort(my_lines, m, sizeof(Line), cmp_line)
                    nseg = upper_envelope(my_lines, m, my_env, my_start)
                h = my_env[0]
                for k in range(ns):
                    my.totals[k] += stats[h, k]
                my.n_lines += nseg
                if not reserve(my, nseg - 1):
                    my.failed = 1
                    continue
                for j in range(1, nseg):
                    my.brk[my.count].x = my_start[j]
                    my.brk[my.count].prev_hyp = my_env[j - 1]
                    my.brk[my.count].next_hyp = my_env[j]
                    my.count += 1
            for t in prange(T, num_threads=T, schedule="static", chunksize=1):
                qsort(slots[t].brk, slots[t].count, sizeof(Breakpoint), cmp_break)
            ok = True
            for k in range(ns):
                totals[k] = 0
            for t in range(T):
                ok = ok and not slots[t].failed
                nb += slots[t].count
                n_lines += slots[t].n_lines
                for k in range(ns):
                    totals[k] += slots[t].totals[k]
            merged = <Breakpoint*>malloc((nb + 1) * sizeof(Breakpoint))
            ok = ok and merged != NULL
            if ok:
                for j in range(nb):   # T-way merge of the sorted buffers (T is small)
                    best = -1
                    for t in range(T):
                        if heads[t] < slots[t].count and (best < 0 or cmp_break(
                                &slots[t].brk[heads[t]], &slots[best].brk[heads[best]]) < 0):
                            best = t
                    merged[j] = slots[best].brk[heads[best]]
                    heads[best] += 1
        free(lines)
        free(env_hyp)
        free(cand)
        free(env_start)
        free(heads)
        if slots != NULL:
            for t in range(T):
                free(slots[t].brk)
            free(slots)
    if not ok:
        free(merged)
        raise MemoryError()
    xs_arr = np.empty(nb, dtype=np.float64)
    sc_arr = np.empty(nb + 1, dtype=np.float64)
    cdef double[::1] xs = xs_arr
    cdef double[::1] sc = sc_arr
    with nogil:
        sc[0] = metric_objective(totals, &spec)
        j = 0
        while j < nb:
            x = merged[j].x
            while j < nb and merged[j].x == x:
                for k in range(ns):
                    totals[k] += stats[merged[j].next_hyp, k] - stats[merged[j].prev_hyp, k]
                j += 1
            xs[K] = x
            K += 1
            sc[K] = metric_objective(totals, &spec)
        free(merged)
    return xs_arr[:K].copy(), sc_arr[:K + 1].copy(), n_lines
