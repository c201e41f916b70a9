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
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, qsort, realloc
from libc.string cimport memcpy, memset
from cython.parallel cimport prange, threadid

import numpy as np

from _metric cimport MAX_STATS, MetricSpec, fill_spec, metric_objective


cdef struct Line:
    double slope
    double intercept
    int64_t hyp


cdef struct Breakpoint:
    double key            # x, where the sentence's 1-best changes
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


cdef Py_ssize_t walk_left(const double* a, const double* bp, Py_ssize_t bs, int64_t c, int64_t* cand,
                          Py_ssize_t n, Py_ssize_t max_steps, int64_t* env_hyp, double* env_start) noexcept nogil:
    """The envelope on (-inf, 0] by walking left from c, the 1-best just left of 0 (gift
    wrapping in the dual). ``cand[:n]``: the lines flatter than c that may be on it (all of
    them, or only those no flatter line is as high as at 0: the same walk); each step drops
    the lines left behind. Writes the segments left to right into env_hyp/env_start (c's
    last) and returns their number, or -1 after max_steps. Slopes are bp[j * bs]."""
    cdef int64_t best, j
    cdef Py_ssize_t k, kept, nl = 0, i
    cdef double x, bx, bj
    cdef double xc = 0.0
    cdef double bc = bp[c * bs]
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
    return nl


cdef Py_ssize_t walk_right(const double* a, const double* bp, Py_ssize_t bs, int64_t c, int64_t* cand,
                           Py_ssize_t n, Py_ssize_t t, Py_ssize_t max_steps, int64_t* env_hyp,
                           double* env_start) noexcept nogil:
    """The mirror of walk_left on [0, inf) from c, the 1-best just right of 0 (its segment
    is already written): ``cand[:n]`` the steeper lines that may be on it. Appends the
    segments after the first t and returns the new count, or -1 after max_steps."""
    cdef int64_t best, j
    cdef Py_ssize_t k, kept
    cdef double x, bx, bj
    cdef double xc = 0.0
    cdef double bc = bp[c * bs]
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


cdef Py_ssize_t walk_envelope(const double* a, const double* bp, Py_ssize_t bs, int64_t lo,
                              int64_t hi, Py_ssize_t max_steps, int64_t* cand, int64_t* env_hyp,
                              double* env_start) noexcept nogil:
    """Envelope by walking outwards from gamma = 0 over all lines of the sentence.

    The walk to the right only ever looks at lines steeper than the current one, the
    walk to the left only at flatter ones, and each step drops the lines left behind,
    so the work is far below segments * M. Returns the number of segments, or -1
    after max_steps (the caller then sorts). Same tie rules as upper_envelope. Slopes
    are bp[j * bs] (a strided column, so a coordinate direction needs no copy);
    ``cand`` is scratch space for hi - lo indices; env_* need hi - lo + 1 entries.
    """
    cdef int64_t cl = lo, cr = lo, j
    cdef Py_ssize_t n, t
    cdef double bc
    # 1-best just left (cl) and just right (cr) of 0: max intercept, then the flattest
    # (left) or steepest (right) line, then the lowest index
    for j in range(lo + 1, hi):
        if a[j] > a[cl] or (a[j] == a[cl] and bp[j * bs] < bp[cl * bs]):
            cl = j
        if a[j] > a[cr] or (a[j] == a[cr] and bp[j * bs] > bp[cr * bs]):
            cr = j
    bc = bp[cl * bs]
    n = 0
    for j in range(lo, hi):
        if bp[j * bs] < bc:
            cand[n] = j
            n += 1
    t = walk_left(a, bp, bs, cl, cand, n, max_steps, env_hyp, env_start)
    if t < 0:
        return -1
    if cr != cl:
        env_hyp[t] = cr             # a tie at 0: the right 1-best starts there
        env_start[t] = 0.0
        t += 1
    bc = bp[cr * bs]
    n = 0
    for j in range(lo, hi):
        if bp[j * bs] > bc:
            cand[n] = j
            n += 1
    return walk_right(a, bp, bs, cr, cand, n, t, max_steps, env_hyp, env_start)


# Coordinate directions: a hypothesis's slope along feature j is its value of j whatever
# the weights, so each sentence's lines can be put in slope order once per feature
# (slope_orders) and every later envelope along j needs no sort and no division per line.
# A line can be on the envelope left of 0 only if every flatter line is lower at 0 (else
# that line is higher on all of (-inf, 0]), so one pass in slope order with a running
# maximum of the intercepts keeps the few such "records"; right of 0 likewise in
# descending order. The walk restricted to the records makes the same choices as over
# all lines: a dropped line is never the walk's pick, since the line that dominates it
# gives a crossing at least as far out (the rounded quotients keep that order, as every
# numerator there is <= 0) and wins the tie rules.

cdef inline double max4(const double* a, int64_t lo, const int32_t* order, Py_ssize_t i) noexcept nogil:
    """The highest intercept of the lines at slope-order positions i .. i + 3."""
    cdef int32_t v0 = order[i], v1 = order[i + 1], v2 = order[i + 2], v3 = order[i + 3]
    # a position p is stored as p, or as -1 - p = ~p: v ^ (v >> 31) undoes both
    cdef double x0 = a[lo + (v0 ^ (v0 >> 31))], x1 = a[lo + (v1 ^ (v1 >> 31))]
    cdef double x2 = a[lo + (v2 ^ (v2 >> 31))], x3 = a[lo + (v3 ^ (v3 >> 31))]
    x0 = x0 if x0 > x1 else x1
    x2 = x2 if x2 > x3 else x3
    return x0 if x0 > x2 else x2


cdef Py_ssize_t left_records(const double* a, const int32_t* order, int64_t lo, Py_ssize_t m,
                             double best, int64_t* rec) noexcept nogil:
    """The lines of sentence [lo, lo + m) (finite intercepts) that are higher at 0 than
    every flatter line, by ascending slope into rec (global indices; the last is the
    1-best just left of 0). Among equal slopes only the highest intercept (then the lowest
    index) counts. ``order``: the sentence's slope order as slope_orders writes it;
    ``best``: the highest intercept, at which the pass stops.

    Lines not above the highest intercept so far are skipped four at a time. A line above
    it either improves the record of its own group of equal slopes (when no group starts
    between the two) or is a new record."""
    cdef Py_ssize_t i = 0, n = 0, last = -1, k
    cdef int32_t v
    cdef int64_t q
    cdef double x, top = -INFINITY
    cdef bint same
    while True:
        while i + 4 <= m and max4(a, lo, order, i) <= top:
            i += 4
        if i >= m:
            break
        v = order[i]
        q = lo + (v ^ (v >> 31))
        x = a[q]
        if x > top:
            same = v < 0 and n > 0
            k = i - 1
            while same and k > last:
                same = order[k] < 0
                k -= 1
            if not same:
                n += 1
            rec[n - 1] = q
            top = x
            last = i
            if top >= best:
                break           # later lines of its group are no higher and have higher indices
        i += 1
    return n


cdef Py_ssize_t right_records(const double* a, const int32_t* order, int64_t lo, Py_ssize_t m,
                              double best, int64_t* rec) noexcept nogil:
    """The mirror of left_records: lines higher at 0 than every steeper line, by descending
    slope (the last is the 1-best just right of 0). Scanning downwards meets a group's
    indices in descending order, so a line as high as its group's record replaces it."""
    cdef Py_ssize_t i = m - 1, n = 0, last = m, k
    cdef int32_t v
    cdef int64_t q
    cdef double x, top = -INFINITY
    cdef bint same
    while True:
        while i >= 3 and max4(a, lo, order, i - 3) < top:
            i -= 4
        if i < 0:
            break
        v = order[i]
        q = lo + (v ^ (v >> 31))
        x = a[q]
        if x >= top:
            same = n > 0
            k = i
            while same and k < last:
                same = order[k + 1] < 0
                k += 1
            if same or x > top:
                if not same:
                    n += 1
                rec[n - 1] = q
                top = x
                last = i
                if top >= best:
                    # the rest of its group: a line as high has a lower index
                    while v < 0:
                        i -= 1
                        v = order[i]
                        q = lo + (v ^ (v >> 31))
                        if a[q] >= top:
                            rec[n - 1] = q
                    break
        i -= 1
    return n


cdef Py_ssize_t records_envelope(const double* a, const double* bp, Py_ssize_t bs, const int32_t* order,
                                 int64_t lo, Py_ssize_t m, double best, Py_ssize_t max_steps, int64_t* rec,
                                 int64_t* env_hyp, double* env_start) noexcept nogil:
    """walk_envelope's result for sentence [lo, lo + m) from its slope order (see above)
    and its highest intercept ``best``: the number of segments, or -1 after max_steps.
    ``rec``: scratch for m indices."""
    cdef Py_ssize_t n, t
    cdef int64_t cl, cr
    n = left_records(a, order, lo, m, best, rec)
    cl = rec[n - 1]
    t = walk_left(a, bp, bs, cl, rec, n - 1, max_steps, env_hyp, env_start)
    if t < 0:
        return -1
    n = right_records(a, order, lo, m, best, rec)
    cr = rec[n - 1]
    if cr != cl:
        env_hyp[t] = cr
        env_start[t] = 0.0
        t += 1
    return walk_right(a, bp, bs, cr, rec, n - 1, t, max_steps, env_hyp, env_start)


cdef double highest(const double* a, Py_ssize_t m) noexcept nogil:
    """max(a[:m]) of finite values, m >= 1 (four running maxima: no chain of dependent compares)."""
    cdef double b0 = a[0], b1 = a[0], b2 = a[0], b3 = a[0]
    cdef Py_ssize_t i = 0
    while i + 4 <= m:
        b0 = a[i] if a[i] > b0 else b0
        b1 = a[i + 1] if a[i + 1] > b1 else b1
        b2 = a[i + 2] if a[i + 2] > b2 else b2
        b3 = a[i + 3] if a[i + 3] > b3 else b3
        i += 4
    while i < m:
        b0 = a[i] if a[i] > b0 else b0
        i += 1
    b0 = b0 if b0 > b1 else b1
    b2 = b2 if b2 > b3 else b3
    return b0 if b0 > b2 else b2


cdef struct Keyed:
    uint64_t key      # sortable(value): unsigned order = the doubles' order
    int64_t idx


cdef inline uint64_t sortable(double x) noexcept nogil:
    """A key whose unsigned order is the order of finite doubles; -0.0 and 0.0 get the same."""
    cdef uint64_t u
    x = x + 0.0                 # -0.0 becomes 0.0
    memcpy(&u, &x, sizeof(double))
    return ~u if u >> 63 else u | (<uint64_t>1 << 63)


cdef void radix_sort(Keyed* v, Keyed* tmp, Py_ssize_t n, uint32_t* hist) noexcept nogil:
    """Stable sort of v[:n] by key: one pass per byte, least significant first, skipping
    the bytes all keys share (slopes of one sentence rarely differ in sign and exponent).
    tmp: scratch for n items; hist: scratch for 8 * 256 counts."""
    cdef Py_ssize_t i, b, d
    cdef uint64_t k
    cdef uint32_t total, c
    cdef uint32_t* h
    cdef Keyed* src = v
    cdef Keyed* dst = tmp
    cdef Keyed* sw
    if n < 2:
        return
    memset(hist, 0, 8 * 256 * sizeof(uint32_t))
    for i in range(n):
        k = v[i].key
        for b in range(8):
            hist[b * 256 + ((k >> (8 * b)) & 255)] += 1
    for b in range(8):
        h = hist + b * 256
        if h[(src[0].key >> (8 * b)) & 255] == n:
            continue
        total = 0
        for d in range(256):
            c = h[d]
            h[d] = total
            total += c
        for i in range(n):
            d = (src[i].key >> (8 * b)) & 255
            dst[h[d]] = src[i]
            h[d] += 1
        sw = src
        src = dst
        dst = sw
    if src != v:
        memcpy(v, src, n * sizeof(Keyed))


def slope_orders(const double[:, ::1] dense, const int64_t[::1] columns, const int64_t[::1] sent_offsets,
                 int32_t[:, ::1] out, int n_threads=1):
    """Each sentence's lines in slope order along the unit direction of each column, for
    line_sweep's ``order`` and coordinate_sweeps' ``orders``.

    dense: float64 [n_hyp, D], finite; columns int64 [C] (each 0 .. D - 1); sent_offsets
    int64 [S + 1] (0 .. n_hyp; sentences of fewer than 2^31 lines); out int32 [C, n_hyp],
    written: for sentence s (lines lo .. hi - 1), out[c, lo:hi] lists the positions 0 ..
    hi - lo - 1 by ascending dense[lo + position, columns[c]], then ascending position; a
    position is stored as -1 - position when its slope equals the one before it.
    n_threads: OpenMP threads over sentences (the same result for any number). A
    sentence's rows are read once for all columns.
    """
    cdef Py_ssize_t n = dense.shape[0], D = dense.shape[1], C = columns.shape[0]
    cdef Py_ssize_t S = sent_offsets.shape[0] - 1, s, i, m, max_m = 1, T, tid, c
    cdef int64_t lo, col
    cdef Keyed* buf = NULL
    cdef Keyed* mine
    cdef uint32_t* hists = NULL
    cdef uint32_t* my_hist
    if out.shape[0] != C or out.shape[1] != n or S < 0 or sent_offsets[S] != n:
        raise ValueError("slope_orders: dense, columns, sent_offsets and out disagree in shape")
    for c in range(C):
        if not 0 <= columns[c] < D:
            raise ValueError(f"column {columns[c]} is not one of the {D} dense columns")
    for s in range(S):
        m = sent_offsets[s + 1] - sent_offsets[s]
        if m > max_m:
            max_m = m
    if max_m >= 2147483647:
        raise ValueError(f"slope_orders: a sentence of {max_m} lines (at most 2^31 - 1)")
    if n == 0 or C == 0:
        return
    T = n_threads if n_threads > 1 else 1
    if T > S:
        T = S if S > 0 else 1
    buf = <Keyed*>malloc(T * 2 * max_m * sizeof(Keyed))
    hists = <uint32_t*>malloc(T * 8 * 256 * sizeof(uint32_t))
    if buf == NULL or hists == NULL:
        free(buf)
        free(hists)
        raise MemoryError()
    with nogil:
        for s in prange(S, num_threads=T, schedule="dynamic", chunksize=8):
            tid = threadid()
            mine = buf + tid * 2 * max_m
            my_hist = hists + tid * 8 * 256
            lo = sent_offsets[s]
            m = sent_offsets[s + 1] - lo
            for c in range(C):
                col = columns[c]
                for i in range(m):
                    mine[i].key = sortable(dense[lo + i, col])
                    mine[i].idx = i
                radix_sort(mine, mine + m, m, my_hist)
                for i in range(m):
                    if i > 0 and mine[i].key == mine[i - 1].key:
                        out[c, lo + i] = <int32_t>(-1 - mine[i].idx)
                    else:
                        out[c, lo + i] = <int32_t>mine[i].idx
    free(buf)
    free(hists)


cdef extern from "stdlib.h" nogil:
    int posix_memalign(void** memptr, size_t alignment, size_t size)

cdef extern from *:
    void __builtin_prefetch(const void* p) noexcept nogil


cdef struct ThreadSlot:
    # one thread's breakpoints and 1-best totals along one direction; padded to whole
    # cache lines so threads appending to their own slot do not share a line
    Breakpoint* brk
    int64_t count
    int64_t capacity
    int64_t n_lines
    int64_t failed
    int64_t totals[MAX_STATS]
    char pad[24]


cdef struct Direction:
    const double* slopes     # slopes[j * stride] is line j's slope
    Py_ssize_t stride
    const int32_t* order     # the slopes' order as slope_orders writes it, or NULL


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


cdef Py_ssize_t sentence_envelope(const double* a, const Direction* dr, int64_t lo, Py_ssize_t m, double best,
                                  int method, Py_ssize_t max_m, Line* lines, int64_t* cand, int64_t* env_hyp,
                                  double* env_start) noexcept nogil:
    """The envelope of sentence [lo, lo + m) (highest intercept ``best``) along one
    direction into env_hyp/env_start (segment k is env_hyp[k] from env_start[k]); returns
    the number of segments."""
    cdef Py_ssize_t nseg = -1, j
    cdef Py_ssize_t steps = max_m + 2 if method == ENVELOPE_WALK else MAX_WALK
    if method != ENVELOPE_SORT and dr.order != NULL:
        nseg = records_envelope(a, dr.slopes, dr.stride, dr.order + lo, lo, m, best, steps, cand, env_hyp,
                                env_start)
    elif method != ENVELOPE_SORT:
        nseg = walk_envelope(a, dr.slopes, dr.stride, lo, lo + m, steps, cand, env_hyp, env_start)
    if nseg < 0:
        for j in range(m):
            lines[j].slope = dr.slopes[(lo + j) * dr.stride]
            lines[j].intercept = a[lo + j]
            lines[j].hyp = lo + j
        qsort(lines, m, sizeof(Line), cmp_line)
        nseg = upper_envelope(lines, m, env_hyp, env_start)
    return nseg


cdef void add_envelope(ThreadSlot* my, const int32_t* stats, Py_ssize_t ns, Py_ssize_t nseg,
                       const int64_t* env_hyp, const double* env_start) noexcept nogil:
    """A sentence's envelope into its thread's slot: the leftmost 1-best's statistics
    (stats: rows of ns) to the totals, one breakpoint per later segment."""
    cdef Py_ssize_t k, j
    cdef int64_t h = env_hyp[0]
    for k in range(ns):
        my.totals[k] += stats[h * ns + k]
    my.n_lines += nseg
    if not reserve(my, nseg - 1):
        my.failed = 1
        return
    for j in range(1, nseg):
        my.brk[my.count].key = env_start[j] + 0.0     # -0.0 as 0.0, whichever thread holds it
        my.brk[my.count].prev_hyp = env_hyp[j - 1]
        my.brk[my.count].next_hyp = env_hyp[j]
        my.count += 1


cdef void sort_breakpoints(ThreadSlot* slot, Keyed* keys, Breakpoint* scratch, uint32_t* hist) noexcept nogil:
    """Sort a slot's breakpoints by x (stably). keys: scratch for 2 * count; scratch: for
    count breakpoints; hist: for 8 * 256 counts."""
    cdef int64_t i, n = slot.count
    for i in range(n):
        keys[i].key = sortable(slot.brk[i].key)
        keys[i].idx = i
    radix_sort(keys, keys + n, n, hist)
    for i in range(n):
        scratch[i] = slot.brk[keys[i].idx]
    memcpy(slot.brk, scratch, n * sizeof(Breakpoint))


cdef Py_ssize_t sweep_merged(const ThreadSlot* slots, Py_ssize_t T, Py_ssize_t step, int64_t* heads,
                             const int32_t* stats, Py_ssize_t ns, const MetricSpec* spec, double* xs,
                             double* sc) noexcept nogil:
    """Merge the T threads' sorted breakpoints slots[0], slots[step], ... (by x; among equal
    x in any order, since the statistics changes at one x are summed exactly) and write the
    distinct x into xs and the objective on each interval into sc (sc[0] left of all);
    returns their number. stats: rows of ns."""
    cdef int64_t totals[MAX_STATS]
    cdef Py_ssize_t K = 0, t, best, k
    cdef const Breakpoint* br
    cdef const Breakpoint* ahead
    cdef double x
    for k in range(ns):
        totals[k] = 0
    for t in range(T):
        heads[t] = 0
        for k in range(ns):
            totals[k] += slots[t * step].totals[k]
    sc[0] = metric_objective(totals, spec)
    x = 0.0
    while True:
        best = -1
        for t in range(T):   # T-way merge of the sorted buffers (T is small)
            if heads[t] < slots[t * step].count and (
                    best < 0 or slots[t * step].brk[heads[t]].key < slots[best * step].brk[heads[best]].key):
                best = t
        if best < 0:
            break
        br = &slots[best * step].brk[heads[best]]
        if heads[best] + 8 < slots[best * step].count:
            # the statistics rows are scattered over the store: fetch them ahead
            ahead = br + 8
            __builtin_prefetch(stats + ahead.next_hyp * ns)
            __builtin_prefetch(stats + ahead.prev_hyp * ns)
        heads[best] += 1
        if K == 0 or br.key != x:
            if K > 0:
                sc[K] = metric_objective(totals, spec)
            x = br.key
            xs[K] = x
            K += 1
        for k in range(ns):
            totals[k] += stats[br.next_hyp * ns + k] - stats[br.prev_hyp * ns + k]
    if K > 0:
        sc[K] = metric_objective(totals, spec)
    return K


cdef _sweeps(const double* a, Direction* dirs, Py_ssize_t n_dirs, const int64_t[::1] sent_offsets,
             const int32_t[:, ::1] stats, spec_arrays, int method, int n_threads):
    """line_sweep along each of ``dirs`` (sharing a pass over the sentences): a list of
    (xs, scores, n_lines)."""
    cdef Py_ssize_t S = sent_offsets.shape[0] - 1, ns = stats.shape[1]
    cdef Py_ssize_t s, d, m, max_m = 1, nseg, K, tid, T, t, i
    cdef int64_t lo, nb, n_lines
    cdef Line* lines = NULL
    cdef int64_t* env_hyp = NULL
    cdef int64_t* cand = NULL
    cdef double* env_start = NULL
    cdef ThreadSlot* slots = NULL
    cdef Breakpoint* scratch = NULL
    cdef Keyed* keys = NULL
    cdef uint32_t* hists = NULL
    cdef int64_t* heads = NULL
    cdef MetricSpec spec
    cdef bint ok = False
    cdef int64_t max_count = 0
    cdef Line* my_lines
    cdef int64_t* my_env
    cdef int64_t* my_cand
    cdef double* my_start
    cdef ThreadSlot* my
    cdef double[::1] xs
    cdef double[::1] sc
    cdef const int32_t* st = &stats[0, 0] if stats.shape[0] > 0 and stats.shape[1] > 0 else NULL
    cdef double top
    cdef bint need_top = False
    kinds, offsets, widths, weights, params, constant = spec_arrays
    if fill_spec(&spec, kinds, offsets, widths, weights, params, constant, ns) != 0:
        raise ValueError(f"the metric spec does not fit {ns} statistics columns (at most {MAX_STATS})")
    T = n_threads if n_threads > 1 else 1
    if T > S:
        T = S if S > 0 else 1
    for s in range(S):
        if sent_offsets[s + 1] - sent_offsets[s] > max_m:
            max_m = sent_offsets[s + 1] - sent_offsets[s]
    for d in range(n_dirs):
        need_top = need_top or dirs[d].order != NULL
    results = []
    try:
        with nogil:
            lines = <Line*>malloc(T * max_m * sizeof(Line))
            env_hyp = <int64_t*>malloc(T * (max_m + 1) * sizeof(int64_t))
            cand = <int64_t*>malloc(T * max_m * sizeof(int64_t))
            env_start = <double*>malloc(T * (max_m + 1) * sizeof(double))
            if posix_memalign(<void**>&slots, 64, T * n_dirs * sizeof(ThreadSlot)) != 0:
                slots = NULL
            else:
                memset(slots, 0, T * n_dirs * sizeof(ThreadSlot))
            heads = <int64_t*>calloc(T, sizeof(int64_t))
            if lines != NULL and env_hyp != NULL and env_start != NULL and cand != NULL \
                    and slots != NULL and heads != NULL:
                for s in prange(S, num_threads=T, schedule="dynamic", chunksize=16):
                    tid = threadid()
                    my_lines = lines + tid * max_m
                    my_env = env_hyp + tid * (max_m + 1)
                    my_cand = cand + tid * max_m
                    my_start = env_start + tid * (max_m + 1)
                    lo = sent_offsets[s]
                    m = sent_offsets[s + 1] - lo
                    top = highest(a + lo, m) if need_top else 0.0
                    for d in range(n_dirs):
                        nseg = sentence_envelope(a, &dirs[d], lo, m, top, method, max_m, my_lines, my_cand, my_env,
                                                 my_start)
                        add_envelope(slots + tid * n_dirs + d, st, ns, nseg, my_env, my_start)
                ok = True
                for i in range(T * n_dirs):
                    ok = ok and not slots[i].failed
                    if slots[i].count > max_count:
                        max_count = slots[i].count
                if ok:
                    scratch = <Breakpoint*>malloc(T * (max_count + 1) * sizeof(Breakpoint))
                    keys = <Keyed*>malloc(T * 2 * (max_count + 1) * sizeof(Keyed))
                    hists = <uint32_t*>malloc(T * 8 * 256 * sizeof(uint32_t))
                    ok = scratch != NULL and keys != NULL and hists != NULL
                if ok:
                    for i in prange(T * n_dirs, num_threads=T, schedule="dynamic", chunksize=1):
                        tid = threadid()
                        sort_breakpoints(&slots[i], keys + tid * 2 * (max_count + 1),
                                         scratch + tid * (max_count + 1), hists + tid * 8 * 256)
        if not ok:
            raise MemoryError()
        for d in range(n_dirs):
            my = slots + d
            nb = 0
            n_lines = 0
            for t in range(T):
                nb += my[t * n_dirs].count
                n_lines += my[t * n_dirs].n_lines
            xs_arr = np.empty(nb, dtype=np.float64)
            sc_arr = np.empty(nb + 1, dtype=np.float64)
            xs = xs_arr
            sc = sc_arr
            with nogil:
                K = sweep_merged(my, T, n_dirs, heads, st, ns, &spec, &xs[0] if nb > 0 else NULL, &sc[0])
            results.append((xs_arr[:K].copy() if K < nb else xs_arr, sc_arr[:K + 1].copy() if K < nb else sc_arr,
                            n_lines))
        return results
    finally:
        free(lines)
        free(env_hyp)
        free(cand)
        free(env_start)
        free(heads)
        free(scratch)
        free(keys)
        free(hists)
        if slots != NULL:
            for i in range(T * n_dirs):
                free(slots[i].brk)
            free(slots)


def line_sweep(const double[::1] intercepts, const double[:] slopes,
               const int64_t[::1] sent_offsets, const int32_t[:, ::1] stats,
               spec_arrays, int method=ENVELOPE_AUTO, int n_threads=1, const int32_t[::1] order=None):
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
    buffer and sorting it by x; the statistics changes at one x are summed exactly, so
    the result does not depend on the number of threads. ``order``: optionally int32
    [n_hyp], the slopes' order as slope_orders gives it; the walks ("auto", "walk") then
    look only at the lines that can be on an envelope (same result, far less work).
    """
    cdef Direction dr
    if slopes.strides[0] % sizeof(double):
        raise ValueError("slopes must be float64 with a stride that is a multiple of 8 bytes")
    if slopes.shape[0] != intercepts.shape[0] or stats.shape[0] != intercepts.shape[0] \
            or sent_offsets.shape[0] < 1 or sent_offsets[sent_offsets.shape[0] - 1] != intercepts.shape[0]:
        raise ValueError("line_sweep: intercepts, slopes, stats and sent_offsets disagree in length")
    dr.order = NULL
    if order is not None:
        if order.shape[0] != intercepts.shape[0]:
            raise ValueError(f"order has {order.shape[0]} entries for {intercepts.shape[0]} lines")
        if order.shape[0] > 0:
            dr.order = &order[0]
    if intercepts.shape[0] == 0:
        return np.zeros(0), np.full(1, objective_of_nothing(stats.shape[1], spec_arrays)), 0
    dr.slopes = &slopes[0]
    dr.stride = slopes.strides[0] // sizeof(double)
    return _sweeps(&intercepts[0], &dr, 1, sent_offsets, stats, spec_arrays, method, n_threads)[0]


def coordinate_sweeps(const double[::1] intercepts, const double[:, ::1] dense, const int64_t[::1] columns,
                      const int32_t[:, ::1] orders, const int64_t[::1] sent_offsets,
                      const int32_t[:, ::1] stats, spec_arrays, int method=ENVELOPE_AUTO, int n_threads=1):
    """line_sweep along the unit direction of each dense feature in ``columns``, in one
    pass over the sentences (each sentence's intercepts are read once for all of them).

    intercepts float64 [n_hyp]; dense float64 [n_hyp, D] (the slopes of column j are
    dense[:, j]); columns int64 [C], each in 0 .. D - 1; orders int32 [D, n_hyp] as
    slope_orders(dense, [0 .. D - 1], ...) writes them (row j for column j), or None;
    the rest as line_sweep.
    Returns a list of C ``(xs, scores, n_lines)``, each what line_sweep gives along its
    column (the same arrays, for any number of threads).
    """
    cdef Py_ssize_t C = columns.shape[0], c, n = intercepts.shape[0]
    cdef Direction* dirs
    if dense.shape[0] != n or stats.shape[0] != n or sent_offsets.shape[0] < 1 \
            or sent_offsets[sent_offsets.shape[0] - 1] != n:
        raise ValueError("coordinate_sweeps: intercepts, dense, stats and sent_offsets disagree in length")
    if orders is not None and (orders.shape[0] != dense.shape[1] or orders.shape[1] != n):
        raise ValueError(f"orders must be [{dense.shape[1]}, {n}], got [{orders.shape[0]}, {orders.shape[1]}]")
    for c in range(C):
        if not 0 <= columns[c] < dense.shape[1]:
            raise ValueError(f"column {columns[c]} is not one of the {dense.shape[1]} dense columns")
    if C == 0:
        return []
    if n == 0:
        nothing = objective_of_nothing(stats.shape[1], spec_arrays)
        return [(np.zeros(0), np.full(1, nothing), 0) for c in range(C)]
    dirs = <Direction*>malloc(C * sizeof(Direction))
    if dirs == NULL:
        raise MemoryError()
    try:
        for c in range(C):
            dirs[c].slopes = &dense[0, columns[c]]
            dirs[c].stride = dense.shape[1]
            dirs[c].order = &orders[columns[c], 0] if orders is not None else NULL
        return _sweeps(&intercepts[0], dirs, C, sent_offsets, stats, spec_arrays, method, n_threads)
    finally:
        free(dirs)


cdef double objective_of_nothing(Py_ssize_t ns, spec_arrays) except? -1:
    """The objective of all-zero statistics (a corpus without hypotheses)."""
    cdef int64_t totals[MAX_STATS]
    cdef MetricSpec spec
    cdef Py_ssize_t k
    kinds, offsets, widths, weights, params, constant = spec_arrays
    if fill_spec(&spec, kinds, offsets, widths, weights, params, constant, ns) != 0:
        raise ValueError(f"the metric spec does not fit {ns} statistics columns (at most {MAX_STATS})")
    for k in range(ns):
        totals[k] = 0
    return metric_objective(totals, &spec)


# Directions with sparse support. Along a direction d the slope of hypothesis h is d.f_h,
# which is 0 wherever none of d's features fires. A sentence without such a hypothesis
# has one flat envelope (its 1-best at 0, the first hypothesis of highest intercept, as
# every envelope method picks it) and no breakpoint, so the corpus sweep needs only the
# sentences that some hypothesis with a nonzero slope touches: their envelopes are built
# exactly as line_sweep builds them (the same walk or sort over the sentence's lines,
# untouched lines flat), and the statistics of all other sentences enter as the corpus
# totals at 0 less the touched sentences' share. The breakpoints, their statistics
# changes and so every score are those of line_sweep, bit for bit.

cdef struct SupportWork:
    # one thread's scratch for support sweeps
    Line* lines
    int64_t* cand
    int64_t* env_hyp
    double* env_start
    double* slopes
    ThreadSlot slot
    Keyed* keys
    Breakpoint* scratch
    int64_t sort_capacity
    uint32_t* hist
    int64_t heads[1]


cdef int support_work_init(SupportWork* w, Py_ssize_t max_m) noexcept nogil:
    memset(w, 0, sizeof(SupportWork))
    w.lines = <Line*>malloc(max_m * sizeof(Line))
    w.cand = <int64_t*>malloc(max_m * sizeof(int64_t))
    w.env_hyp = <int64_t*>malloc((max_m + 1) * sizeof(int64_t))
    w.env_start = <double*>malloc((max_m + 1) * sizeof(double))
    w.slopes = <double*>malloc(max_m * sizeof(double))
    w.hist = <uint32_t*>malloc(8 * 256 * sizeof(uint32_t))
    return 0 if (w.lines != NULL and w.cand != NULL and w.env_hyp != NULL and w.env_start != NULL
                 and w.slopes != NULL and w.hist != NULL) else -1


cdef void support_work_free(SupportWork* w) noexcept nogil:
    free(w.lines)
    free(w.cand)
    free(w.env_hyp)
    free(w.env_start)
    free(w.slopes)
    free(w.hist)
    free(w.slot.brk)
    free(w.keys)
    free(w.scratch)


cdef int support_sweep_one(const double* a, const int64_t* hyps, const double* vals, Py_ssize_t nnz,
                           const int32_t* hyp_sent, const int64_t* sent_offsets, const int64_t* base_totals,
                           const int64_t* onebest, const int32_t* stats, Py_ssize_t ns, const MetricSpec* spec,
                           int method, Py_ssize_t max_m, SupportWork* w, double** xs_out, double** sc_out,
                           Py_ssize_t* K_out, int64_t* lines_out) noexcept nogil:
    """The sweep along one direction whose nonzero slopes are vals[i] for hypothesis hyps[i]
    (hyps ascending; a hypothesis listed twice gets the sum, in list order). Writes
    malloc'd xs [K] and scores [K + 1] (the caller frees them), K, and the envelope
    segments summed over all sentences less the number of sentences. Returns 0, or -1
    when out of memory."""
    cdef Py_ssize_t i = 0, k, j, nseg, m
    cdef int64_t s, lo, n_extra = 0
    cdef Direction dr
    cdef int64_t n = 0
    dr.slopes = w.slopes
    dr.stride = 1
    dr.order = NULL
    w.slot.count = 0
    w.slot.failed = 0
    for k in range(ns):
        w.slot.totals[k] = base_totals[k]
    while i < nnz:
        s = hyp_sent[hyps[i]]
        lo = sent_offsets[s]
        m = sent_offsets[s + 1] - lo
        for j in range(m):
            w.slopes[j] = 0.0
        while i < nnz and hyps[i] < lo + m:
            w.slopes[hyps[i] - lo] += vals[i]
            i += 1
        nseg = sentence_envelope(a + lo, &dr, 0, m, 0.0, method, max_m, w.lines, w.cand, w.env_hyp,
                                 w.env_start)
        for j in range(nseg):
            w.env_hyp[j] += lo
        for k in range(ns):
            w.slot.totals[k] -= stats[onebest[s] * ns + k]
        add_envelope(&w.slot, stats, ns, nseg, w.env_hyp, w.env_start)
        if w.slot.failed:
            return -1
        n_extra += nseg - 1
    # add_envelope counted every segment; the caller adds one per sentence
    n = w.slot.count
    if n + 1 > w.sort_capacity:
        free(w.keys)
        free(w.scratch)
        w.sort_capacity = 2 * (n + 1)
        w.keys = <Keyed*>malloc(2 * w.sort_capacity * sizeof(Keyed))
        w.scratch = <Breakpoint*>malloc(w.sort_capacity * sizeof(Breakpoint))
        if w.keys == NULL or w.scratch == NULL:
            w.sort_capacity = 0
            return -1
    sort_breakpoints(&w.slot, w.keys, w.scratch, w.hist)
    xs_out[0] = <double*>malloc((n if n > 0 else 1) * sizeof(double))
    sc_out[0] = <double*>malloc((n + 1) * sizeof(double))
    if xs_out[0] == NULL or sc_out[0] == NULL:
        return -1
    K_out[0] = sweep_merged(&w.slot, 1, 1, w.heads, stats, ns, spec, xs_out[0], sc_out[0])
    lines_out[0] = n_extra
    return 0


def support_sweeps(const double[::1] intercepts, const int64_t[::1] col_ptr, const int64_t[::1] col_hyp,
                   const double[::1] col_val, const int64_t[::1] columns, const int32_t[::1] hyp_sent,
                   const int64_t[::1] sent_offsets, const int32_t[:, ::1] stats, spec_arrays,
                   int method=ENVELOPE_AUTO, int n_threads=1):
    """line_sweep along each of C directions with sparse support, touching only the
    sentences where a direction's slope is nonzero somewhere (see above).

    Direction c's nonzero slopes: col_val[p] for hypothesis col_hyp[p], p in col_ptr[k] ..
    col_ptr[k + 1] - 1 with k = columns[c] (hypotheses ascending within a column; a
    hypothesis listed twice gets the sum in list order, as the model score sums a row).
    For the unit direction of a sparse feature the column is that feature's values;
    for any other direction the slopes d.f of the hypotheses it touches.
    intercepts float64 [n_hyp]; hyp_sent int32 [n_hyp] (each hypothesis's sentence);
    sent_offsets int64 [S + 1], no empty sentence; stats, spec_arrays, method as line_sweep.
    n_threads: OpenMP threads over directions (the same result for any number).

    Returns ``(xs, scores, k_ptr, n_lines, best, at_zero)``: direction c's breakpoints
    xs[k_ptr[c]:k_ptr[c + 1]] (K_c) and its scores scores[k_ptr[c] + c:k_ptr[c + 1] + c + 1]
    (K_c + 1), equal to line_sweep's; n_lines int64 [C] as line_sweep counts them; best
    float64 [C] the highest score; at_zero float64 [C] the score at gamma = 0 (on a
    breakpoint, the lower side).
    """
    cdef Py_ssize_t C = columns.shape[0], n = intercepts.shape[0], S = sent_offsets.shape[0] - 1
    cdef Py_ssize_t ns = stats.shape[1], c, s, k, max_m = 1, T, tid, total
    cdef int64_t h, col, bh
    cdef MetricSpec spec
    cdef int64_t base_totals[MAX_STATS]
    cdef SupportWork* works = NULL
    cdef double** xs_of = NULL
    cdef double** sc_of = NULL
    cdef Py_ssize_t* K_of = NULL
    cdef int64_t[::1] onebest
    cdef int64_t[::1] lines_v
    cdef int64_t[::1] kptr_v
    cdef double[::1] xs_v
    cdef double[::1] sc_v
    cdef double[::1] best_v
    cdef double[::1] zero_v
    cdef int* status = NULL
    cdef bint ok = True
    cdef const int32_t* st = &stats[0, 0] if stats.shape[0] > 0 and ns > 0 else NULL
    cdef double top, x
    kinds, offsets, widths, weights, params, constant = spec_arrays
    if fill_spec(&spec, kinds, offsets, widths, weights, params, constant, ns) != 0:
        raise ValueError(f"the metric spec does not fit {ns} statistics columns (at most {MAX_STATS})")
    if hyp_sent.shape[0] != n or stats.shape[0] != n or S < 1 or sent_offsets[S] != n \
            or col_hyp.shape[0] != col_val.shape[0]:
        raise ValueError("support_sweeps: intercepts, hyp_sent, stats, sent_offsets and the columns disagree")
    for c in range(C):
        if not 0 <= columns[c] < col_ptr.shape[0] - 1:
            raise ValueError(f"column {columns[c]} is not one of the {col_ptr.shape[0] - 1} columns")
    for s in range(S):
        if sent_offsets[s + 1] - sent_offsets[s] > max_m:
            max_m = sent_offsets[s + 1] - sent_offsets[s]
    onebest = np.empty(S, dtype=np.int64)
    lines_v = np.zeros(C, dtype=np.int64)
    best_v = np.empty(C, dtype=np.float64)
    zero_v = np.empty(C, dtype=np.float64)
    T = n_threads if n_threads > 1 else 1
    if T > C:
        T = C if C > 0 else 1
    try:
        with nogil:
            for k in range(ns):
                base_totals[k] = 0
            for s in range(S):
                bh = sent_offsets[s]
                for h in range(sent_offsets[s] + 1, sent_offsets[s + 1]):
                    if intercepts[h] > intercepts[bh]:
                        bh = h
                onebest[s] = bh
                for k in range(ns):
                    base_totals[k] += st[bh * ns + k]
            works = <SupportWork*>calloc(T, sizeof(SupportWork))
            xs_of = <double**>calloc(C + 1, sizeof(double*))
            sc_of = <double**>calloc(C + 1, sizeof(double*))
            K_of = <Py_ssize_t*>calloc(C + 1, sizeof(Py_ssize_t))
            status = <int*>calloc(C + 1, sizeof(int))
            ok = works != NULL and xs_of != NULL and sc_of != NULL and K_of != NULL and status != NULL
            if ok:
                for tid in range(T):
                    if support_work_init(&works[tid], max_m) != 0:
                        ok = False
            if ok:
                for c in prange(C, num_threads=T, schedule="dynamic", chunksize=1):
                    col = columns[c]
                    status[c] = support_sweep_one(
                        &intercepts[0], &col_hyp[col_ptr[col]] if col_ptr[col + 1] > col_ptr[col] else NULL,
                        &col_val[col_ptr[col]] if col_ptr[col + 1] > col_ptr[col] else NULL,
                        col_ptr[col + 1] - col_ptr[col], &hyp_sent[0], &sent_offsets[0], base_totals,
                        &onebest[0], st, ns, &spec, method, max_m, &works[threadid()], &xs_of[c], &sc_of[c],
                        &K_of[c], &lines_v[c])
                for c in range(C):
                    ok = ok and status[c] == 0
        if not ok:
            raise MemoryError()
        kptr = np.zeros(C + 1, dtype=np.int64)
        kptr_v = kptr
        for c in range(C):
            kptr_v[c + 1] = kptr_v[c] + K_of[c]
        xs_all = np.empty(kptr_v[C], dtype=np.float64)
        sc_all = np.empty(kptr_v[C] + C, dtype=np.float64)
        xs_v = xs_all
        sc_v = sc_all
        with nogil:
            for c in range(C):
                if K_of[c] > 0:
                    memcpy(&xs_v[kptr_v[c]], xs_of[c], K_of[c] * sizeof(double))
                memcpy(&sc_v[kptr_v[c] + c], sc_of[c], (K_of[c] + 1) * sizeof(double))
                lines_v[c] += S
                top = sc_of[c][0]
                for k in range(1, K_of[c] + 1):
                    if sc_of[c][k] > top:
                        top = sc_of[c][k]
                best_v[c] = top
                # the score at 0: the interval right of the last breakpoint below 0; exactly
                # on a breakpoint the lower of its two sides
                k = 0
                while k < K_of[c] and xs_of[c][k] < 0.0:
                    k += 1
                x = sc_of[c][k]
                if k < K_of[c] and xs_of[c][k] == 0.0 and sc_of[c][k + 1] < x:
                    x = sc_of[c][k + 1]
                zero_v[c] = x
        return xs_all, sc_all, kptr, np.asarray(lines_v), np.asarray(best_v), np.asarray(zero_v)
    finally:
        if works != NULL:
            for tid in range(T):
                support_work_free(&works[tid])
            free(works)
        if xs_of != NULL:
            for c in range(C):
                free(xs_of[c])
            free(xs_of)
        if sc_of != NULL:
            for c in range(C):
                free(sc_of[c])
            free(sc_of)
        free(K_of)
        free(status)
