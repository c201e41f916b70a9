# APRO (Dreyer & Dong 2015, "APRO: All-Pairs Ranking Optimization for MT Tuning"): the
# all-pairs squared-hinge ranking loss, its gradient and generalized Hessian-vector
# products in O(k log k) per sentence of k hypotheses, by sorting on model score and
# counting with Fenwick trees over metric ranks (Lee & Lin 2014, "Large-scale linear
# RankSVM", section 3). No pair is ever enumerated.
#
# Per sentence, hypotheses i with model scores h_i and metric scores b_i (sentence BLEU+1
# by default). Preference pairs P = {(p, q): b_p > b_q}; equal b give no pair. Margin 1:
#     r_pq = 1 - h_p + h_q,      L_s = sum_{(p,q) in P} max(0, r_pq)^2.
# Active pairs A = {(p, q) in P: h_p - h_q < 1}. The test is always the rounded difference
# fl(h_p - h_q) < 1.0 (here and in tests/reference/apro_reference.py), so both agree on
# pairs exactly at the margin; such a pair (r = 0) adds nothing to the loss or the gradient
# and, by our choice of generalized Hessian (the second derivative of max(0, r)^2 taken as
# 2 [r > 0]), nothing to the Hessian either.
#
# For hypothesis i let (a_i = 1 - h_i)
#     Q1_i = {q: b_q < b_i, fl(h_i - h_q) < 1}   its active worse partners,
#     Q2_i = {p: b_p > b_i, fl(h_p - h_i) < 1}   its active better partners,
#     A_i = |Q1_i|, S1_i = sum_{Q1_i} h_q, T1_i = sum_{Q1_i} h_q^2,
#     B_i = |Q2_i|, S2_i = sum_{Q2_i} h_p.
# Loss, each active pair counted once, from its better end:
#     L_s = sum_i sum_{q in Q1_i} (a_i + h_q)^2 = sum_i (A_i a_i^2 + 2 a_i S1_i + T1_i).
# Gradient with respect to the scores (d r_pq / d h_p = -1, d r_pq / d h_q = +1):
#     g_i = dL_s/dh_i = -2 sum_{q in Q1_i} r_iq + 2 sum_{p in Q2_i} r_pi
#         = -2 (A_i a_i + S1_i) + 2 (B_i (1 + h_i) - S2_i).
# Generalized Hessian with respect to the scores (Mangasarian 2002; Lee & Lin 2014):
#     H_s = 2 sum_{(p,q) in A} (e_p - e_q)(e_p - e_q)^T,
# twice the Laplacian of the graph of active pairs, so for any v (v = X d, the scores of a
# direction d)
#     (H_s v)_i = 2 ((A_i + B_i) v_i - sum_{q in Q1_i} v_q - sum_{p in Q2_i} v_p).
# Chain rule, X the feature rows: grad_w L = X^T g, Hessian-vector product X^T H X d.
# mtplug/optimizers/apro.py adds the regulariser: F = 1/2 |w|^2 + (C/N) sum_s L_s.
# Its line search needs, at trial scores h + a v, the curvature along the line,
#     v^T H_s v = 2 sum_{(p,q) in A} (v_p - v_q)^2 = 2 sum_i (A_i v_i^2 - 2 v_i V1_i + W1_i),
# V1_i, W1_i the sums of v_q and v_q^2 over Q1_i: two more fields in sweep 1's tree.
#
# The sweeps (per sentence; R distinct b values, ranked 0 = worst .. R-1 = best):
# - Sort by h ascending (ties by row, so the summation order is fixed).
# - Rounding is monotone, so {q: fl(h_i - h_q) < 1} is a suffix of the sorted order, and it
#   only grows as h_i decreases. Sweep 1 visits i in descending order of h, moves a pointer
#   down inserting every q of the suffix into a Fenwick tree indexed by rank (count, sum h,
#   sum h^2), and reads A_i, S1_i, T1_i as the prefix over ranks < rank_i.
# - Likewise {p: fl(h_p - h_i) < 1} is a prefix that grows with h_i. Sweep 2 visits i in
#   ascending order, inserts that prefix into a tree indexed by reversed rank and reads
#   B_i, S2_i as the prefix over ranks > rank_i (no "total minus prefix" subtraction).
# - i itself is inserted (fl(0) < 1) but has its own rank, so never counts.
# Each sweep makes k insertions and k queries of O(log R): O(k log k) with the sort.
# The Hessian products depend on w only through the active set, so the gradient pass saves
# the sort order and how far each pointer had moved at each query (fill levels) and the
# partner counts A_i + B_i; a product then runs the same two sweeps over sums of v alone,
# with no sorting and no comparisons of scores.
#
# Accuracy: the loss depends on score differences only, so the scores kernels centre the
# dense block on the sentence's first hypothesis, h_i = (f_i - f_first) . w + sparse_i . w,
# which keeps |h| at the spread within a sentence rather than at the raw level of, say, a
# language-model log-probability (the expansions above then lose few digits). The gradient
# and Hessian coefficients sum to 0 within a sentence, so X^T c is computed with the same
# centring (exact algebra; fewer rounding errors; _rows.transpose_exact). Sums across
# sentences (the loss, the curvature, the slope, X^T c) are exact (mtplug.exact_sum), so a
# result does not depend on how sentences are split over threads or dask workers.

from _exact cimport EXACT_SAFE_ADDS, EXACT_WIDTH, exact_add, exact_normalize
from libc.math cimport isfinite
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport free, malloc

from cython.parallel cimport prange, threadid

import numpy as np

cdef enum:
    _PAD = 8                   # per-thread structs this many entries apart (>= 128 bytes)

cdef enum:
    _STATUS_OK = 0
    _STATUS_NONFINITE = 1      # index: the sentence with a score that is NaN or infinite

STATUS_OK = _STATUS_OK
STATUS_NONFINITE = _STATUS_NONFINITE


cdef struct Keyed:
    double key
    int32_t row               # row within the sentence


cdef struct Node3:            # one Fenwick node of sweep 1
    double n                  # count (exact in double up to 2^53)
    double s                  # sum of scores
    double q                  # sum of squared scores


cdef struct Node5:            # sweep 1 along a line: Node3 plus the direction's scores
    double n
    double s
    double q
    double v                  # sum of direction scores
    double vv                 # sum of squared direction scores


cdef struct Node2:            # one Fenwick node of sweep 2
    double n
    double s


cdef inline bint _before(const Keyed* a, const Keyed* b) noexcept nogil:
    """Strict order on (key, row): a total order, so every sort gives one result."""
    return a.key < b.key or (a.key == b.key and a.row < b.row)


cdef inline void _swap(Keyed* a, Keyed* b) noexcept nogil:
    cdef Keyed t = a[0]
    a[0] = b[0]
    b[0] = t


cdef void _sift_down(Keyed* a, Py_ssize_t root, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t child
    while 2 * root + 1 < n:
        child = 2 * root + 1
        if child + 1 < n and _before(&a[child], &a[child + 1]):
            child += 1
        if not _before(&a[root], &a[child]):
            return
        _swap(&a[root], &a[child])
        root = child


cdef void _heapsort(Keyed* a, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n // 2 - 1, -1, -1):
        _sift_down(a, i, n)
    for i in range(n - 1, 0, -1):
        _swap(&a[0], &a[i])
        _sift_down(a, 0, i)


cdef void _introsort(Keyed* a, Py_ssize_t n, int depth) noexcept nogil:
    """Sort a[0:n] by (key, row): quicksort (median of three) while the recursion stays
    within ``depth``, heapsort beyond (so O(n log n) always), insertion sort below 17.
    Inlined comparisons make it about 1.5 times as fast as libc qsort here."""
    cdef Py_ssize_t i, j, mid
    cdef Keyed pivot, x
    while n > 16:
        if depth == 0:
            _heapsort(a, n)
            return
        depth -= 1
        mid = n // 2
        if _before(&a[mid], &a[0]):
            _swap(&a[mid], &a[0])
        if _before(&a[n - 1], &a[0]):
            _swap(&a[n - 1], &a[0])
        if _before(&a[n - 1], &a[mid]):
            _swap(&a[n - 1], &a[mid])
        pivot = a[mid]           # a[0] <= pivot <= a[n-1]: sentinels for both scans
        i = 0
        j = n - 1
        while True:
            i += 1
            while _before(&a[i], &pivot):
                i += 1
            j -= 1
            while _before(&pivot, &a[j]):
                j -= 1
            if i >= j:
                break
            _swap(&a[i], &a[j])
        # a[0:j+1] <= pivot <= a[j+1:n]; recurse into the smaller part, loop on the larger
        if j + 1 < n - j - 1:
            _introsort(a, j + 1, depth)
            a += j + 1
            n -= j + 1
        else:
            _introsort(a + j + 1, n - j - 1, depth)
            n = j + 1
    for i in range(1, n):
        x = a[i]
        j = i - 1
        while j >= 0 and _before(&x, &a[j]):
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = x


cdef void sort_keyed(Keyed* a, Py_ssize_t n) noexcept nogil:
    cdef int depth = 0
    cdef Py_ssize_t m = n
    while m > 1:
        depth += 2
        m >>= 1
    _introsort(a, n, depth)


# Fenwick trees over positions 0 .. size-1, stored 1-based in t[1 .. size].
cdef inline void fw3_add(Node3* t, Py_ssize_t size, Py_ssize_t i, double x) noexcept nogil:
    i += 1
    while i <= size:
        t[i].n += 1.0
        t[i].s += x
        t[i].q += x * x
        i += i & -i


cdef inline void fw3_prefix(const Node3* t, Py_ssize_t i, Node3* out) noexcept nogil:
    """Sums over positions 0 .. i-1."""
    out.n = 0.0
    out.s = 0.0
    out.q = 0.0
    while i > 0:
        out.n += t[i].n
        out.s += t[i].s
        out.q += t[i].q
        i -= i & -i


cdef inline void fw5_add(Node5* t, Py_ssize_t size, Py_ssize_t i, double x, double y) noexcept nogil:
    i += 1
    while i <= size:
        t[i].n += 1.0
        t[i].s += x
        t[i].q += x * x
        t[i].v += y
        t[i].vv += y * y
        i += i & -i


cdef inline void fw5_prefix(const Node5* t, Py_ssize_t i, Node5* out) noexcept nogil:
    out.n = 0.0
    out.s = 0.0
    out.q = 0.0
    out.v = 0.0
    out.vv = 0.0
    while i > 0:
        out.n += t[i].n
        out.s += t[i].s
        out.q += t[i].q
        out.v += t[i].v
        out.vv += t[i].vv
        i -= i & -i


cdef inline void fw2_add(Node2* t, Py_ssize_t size, Py_ssize_t i, double x) noexcept nogil:
    i += 1
    while i <= size:
        t[i].n += 1.0
        t[i].s += x
        i += i & -i


cdef inline void fw2_prefix(const Node2* t, Py_ssize_t i, Node2* out) noexcept nogil:
    out.n = 0.0
    out.s = 0.0
    while i > 0:
        out.n += t[i].n
        out.s += t[i].s
        i -= i & -i


cdef inline void fw1_add(double* t, Py_ssize_t size, Py_ssize_t i, double x) noexcept nogil:
    i += 1
    while i <= size:
        t[i] += x
        i += i & -i


cdef inline double fw1_prefix(const double* t, Py_ssize_t i) noexcept nogil:
    cdef double s = 0.0
    while i > 0:
        s += t[i]
        i -= i & -i
    return s


cdef Py_ssize_t _max_sentence(const int64_t[::1] sent_offsets) noexcept nogil:
    cdef Py_ssize_t s, m = 1
    for s in range(sent_offsets.shape[0] - 1):
        if sent_offsets[s + 1] - sent_offsets[s] > m:
            m = sent_offsets[s + 1] - sent_offsets[s]
    return m


def _check_offsets(const int64_t[::1] sent_offsets, Py_ssize_t n):
    if sent_offsets.shape[0] < 1 or sent_offsets[0] != 0 or sent_offsets[sent_offsets.shape[0] - 1] != n:
        raise ValueError("sent_offsets must run from 0 to the number of hypotheses")


def metric_ranks(const double[::1] b, const int64_t[::1] sent_offsets, int32_t[::1] ranks):
    """Dense rank of every hypothesis's metric score within its sentence.

    b: float64 [n], finite (checked by the caller). sent_offsets: int64 [S + 1], 0 .. n,
    non-decreasing. ranks: int32 [n], overwritten: 0 for the lowest b of the sentence, and
    equal b share one rank (so the sentence's ranks are 0 .. R-1, R distinct values).
    """
    cdef Py_ssize_t n = b.shape[0], S = sent_offsets.shape[0] - 1, s, j, m, max_m
    cdef int64_t lo
    cdef int32_t r
    _check_offsets(sent_offsets, n)
    if ranks.shape[0] != n:
        raise ValueError("ranks must have one entry per hypothesis")
    max_m = _max_sentence(sent_offsets)
    cdef Keyed* buf = <Keyed*>malloc(max_m * sizeof(Keyed))
    if buf == NULL:
        raise MemoryError()
    with nogil:
        for s in range(S):
            lo = sent_offsets[s]
            m = sent_offsets[s + 1] - lo
            for j in range(m):
                buf[j].key = b[lo + j]
                buf[j].row = <int32_t>j
            sort_keyed(buf, m)
            r = 0
            for j in range(m):
                if j > 0 and buf[j].key != buf[j - 1].key:
                    r += 1
                ranks[lo + buf[j].row] = r
    free(buf)


def loss_gradient(const double[::1] scores, const double[::1] direction, const int32_t[::1] ranks,
                  const int64_t[::1] sent_offsets, double[::1] grad, int32_t[::1] order, int32_t[::1] fill1,
                  int32_t[::1] fill2, int32_t[::1] partners, int64_t[:, ::1] totals, int n_threads=1):
    """Summed APRO loss sum_s L_s, its gradient with respect to the scores and, given a
    direction, the curvature and the slope along it.

    scores: float64 [n], model scores h (centred per sentence by :func:`centred_scores`;
    the loss depends on differences only). direction: float64 [n], the scores v of a
    direction (X d), or an empty array. ranks: int32 [n] from :func:`metric_ranks`.
    sent_offsets: int64 [S + 1], 0 .. n, non-decreasing. Outputs, all [n] and overwritten:
    grad float64, g = dL/dh (formulas at the top of the file); for
    :func:`hessian_product`, the state of the active set: order int32 (per sentence, the
    rows 0..k-1 sorted by score), fill1/fill2 int32 (pointer positions of sweeps 1 and 2
    at each sorted position), partners int32 (A_i + B_i, active partners of each row).
    totals: int64 [3, WIDTH] exact accumulators (mtplug.exact_sum), normalized; receive
    (added to) the loss, the curvature v^T H v = 2 sum over active pairs (v_p - v_q)^2 and
    the slope g . v, each a sum over sentences of per-sentence values (rows 1 and 2 get
    nothing without a direction; sweep 1 carries sums of v and v^2 for the curvature,
    which a line search needs at every trial point and would otherwise cost a Hessian
    product). n_threads: OpenMP threads over sentences; per-sentence values do not depend
    on it and the totals are exact, so neither does anything else.

    Returns ``(active_pairs, status, index)``: |A| over all sentences and a STATUS_* code
    with the sentence it concerns (on STATUS_NONFINITE nothing is added to totals and the
    outputs are undefined).
    """
    cdef Py_ssize_t n = scores.shape[0], S = sent_offsets.shape[0] - 1
    _check_offsets(sent_offsets, n)
    if (ranks.shape[0] != n or grad.shape[0] != n or order.shape[0] != n or fill1.shape[0] != n
            or fill2.shape[0] != n or partners.shape[0] != n):
        raise ValueError("ranks and every output must have one entry per hypothesis")
    cdef bint has_dir = direction.shape[0] > 0
    if has_dir and direction.shape[0] != n:
        raise ValueError("direction must be empty or have one entry per hypothesis")
    if totals.shape[0] != 3 or totals.shape[1] != EXACT_WIDTH:
        raise ValueError(f"totals must have shape (3, {EXACT_WIDTH})")
    cdef double[:, ::1] per_sentence = np.zeros((3, S), dtype=np.float64)   # loss, half curvature, slope
    cdef int64_t[::1] act_v = np.empty(S, dtype=np.int64)
    cdef double* s_loss = &per_sentence[0, 0] if S else NULL
    cdef double* s_curv = &per_sentence[1, 0] if S else NULL
    cdef double* s_slope = &per_sentence[2, 0] if S else NULL
    cdef int64_t* sent_act = &act_v[0] if S else NULL
    cdef int T = n_threads if n_threads > 1 else 1
    cdef Py_ssize_t max_m = _max_sentence(sent_offsets)
    # scratch per thread
    cdef Keyed* buf_all = <Keyed*>malloc(T * max_m * sizeof(Keyed))
    cdef Node3* t1_all = <Node3*>malloc(T * (max_m + 1) * sizeof(Node3))
    cdef Node5* t5_all = <Node5*>malloc(T * (max_m + 1) * sizeof(Node5)) if has_dir else NULL
    cdef Node2* t2_all = <Node2*>malloc(T * (max_m + 1) * sizeof(Node2))
    # one query result per thread, _PAD entries apart: no two threads on one cache line
    cdef Node3* r3_all = <Node3*>malloc(T * _PAD * sizeof(Node3))
    cdef Node5* r5_all = <Node5*>malloc(T * _PAD * sizeof(Node5))
    cdef Node2* r2_all = <Node2*>malloc(T * _PAD * sizeof(Node2))
    cdef char* bad = <char*>malloc(S + 1)
    cdef Py_ssize_t s, k
    cdef int64_t active = 0
    cdef int status = _STATUS_OK
    cdef Py_ssize_t index = 0
    try:
        if (buf_all == NULL or t1_all == NULL or t2_all == NULL or (has_dir and t5_all == NULL)
                or r3_all == NULL or r5_all == NULL or r2_all == NULL or bad == NULL):
            raise MemoryError()
        _loss_sweeps(scores, direction, ranks, sent_offsets, grad, order, fill1, fill2, partners, has_dir, T,
                     max_m, buf_all, t1_all, t5_all, t2_all, r3_all, r5_all, r2_all, s_loss, s_curv, s_slope,
                     sent_act, bad)
        for s in range(S):
            if bad[s]:
                status = _STATUS_NONFINITE
                index = s
                break
    finally:
        free(buf_all)
        free(t1_all)
        free(t5_all)
        free(t2_all)
        free(r3_all)
        free(r5_all)
        free(r2_all)
        free(bad)
    if status != _STATUS_OK:
        return 0, status, index
    with nogil:
        for s in range(S):
            exact_add(&totals[0, 0], s_loss[s])
            exact_add(&totals[1, 0], 2.0 * s_curv[s])
            exact_add(&totals[2, 0], s_slope[s])
            active += sent_act[s]
            if (s + 1) % EXACT_SAFE_ADDS == 0:
                for k in range(3):
                    exact_normalize(&totals[k, 0])
        for s in range(3):
            exact_normalize(&totals[s, 0])
    return active, status, index


cdef void _loss_sweeps(const double[::1] scores, const double[::1] direction, const int32_t[::1] ranks,
                       const int64_t[::1] sent_offsets, double[::1] grad, int32_t[::1] order, int32_t[::1] fill1,
                       int32_t[::1] fill2, int32_t[::1] partners, bint has_dir, int T, Py_ssize_t max_m,
                       Keyed* buf_all, Node3* t1_all, Node5* t5_all, Node2* t2_all, Node3* r3_all, Node5* r5_all,
                       Node2* r2_all, double* s_loss, double* s_curv, double* s_slope, int64_t* sent_act,
                       char* bad) noexcept:
    # the per-sentence work of loss_gradient (which checked the shapes and owns the scratch)
    cdef Py_ssize_t S = sent_offsets.shape[0] - 1
    cdef Py_ssize_t s, j, m, R, pos, t, i, tid
    cdef int64_t lo
    cdef double sl, hi_, a, x, vi, sc
    cdef int64_t sa
    cdef Keyed* buf
    cdef Node3* t1
    cdef Node5* t5
    cdef Node2* t2
    cdef Node3* r3
    cdef Node5* r5
    cdef Node2* r2
    with nogil:
        for s in prange(S, num_threads=T, schedule="dynamic", chunksize=8):
            tid = threadid()
            buf = buf_all + tid * max_m
            t1 = t1_all + tid * (max_m + 1)
            t5 = t5_all + tid * (max_m + 1) if has_dir else NULL
            t2 = t2_all + tid * (max_m + 1)
            r3 = r3_all + tid * _PAD
            r5 = r5_all + tid * _PAD
            r2 = r2_all + tid * _PAD
            lo = sent_offsets[s]
            m = sent_offsets[s + 1] - lo
            R = 0
            bad[s] = 0
            for j in range(m):
                x = scores[lo + j]
                if not isfinite(x):
                    bad[s] = 1
                buf[j].key = x
                buf[j].row = <int32_t>j
                if ranks[lo + j] + 1 > R:
                    R = ranks[lo + j] + 1
            if bad[s]:
                continue
            sort_keyed(buf, m)
            for j in range(m):
                order[lo + j] = buf[j].row
            for j in range(R + 1):
                t1[j].n = 0.0
                t1[j].s = 0.0
                t1[j].q = 0.0
                t2[j].n = 0.0
                t2[j].s = 0.0
                if has_dir:
                    t5[j].n = 0.0
                    t5[j].s = 0.0
                    t5[j].q = 0.0
                    t5[j].v = 0.0
                    t5[j].vv = 0.0
            sl = 0.0
            sc = 0.0
            sa = 0
            # sweep 1: i descending; worse partners q with fl(h_i - h_q) < 1
            t = m - 1
            for pos in range(m - 1, -1, -1):
                i = buf[pos].row
                hi_ = buf[pos].key
                if has_dir:
                    while t >= 0 and hi_ - buf[t].key < 1.0:
                        fw5_add(t5, R, ranks[lo + buf[t].row], buf[t].key, direction[lo + buf[t].row])
                        t = t - 1
                    fw5_prefix(t5, ranks[lo + i], r5)
                    r3.n = r5.n
                    r3.s = r5.s
                    r3.q = r5.q
                    vi = direction[lo + i]
                    # sum over Q1_i of (v_i - v_q)^2
                    sc = sc + (r5.n * vi * vi - 2.0 * vi * r5.v + r5.vv)
                else:
                    while t >= 0 and hi_ - buf[t].key < 1.0:
                        fw3_add(t1, R, ranks[lo + buf[t].row], buf[t].key)
                        t = t - 1
                    fw3_prefix(t1, ranks[lo + i], r3)
                fill1[lo + pos] = <int32_t>(m - 1 - t)
                a = 1.0 - hi_
                sl = sl + (r3.n * a * a + 2.0 * a * r3.s + r3.q)
                grad[lo + i] = -2.0 * (r3.n * a + r3.s)
                partners[lo + i] = <int32_t>r3.n
                sa = sa + <int64_t>r3.n
            # sweep 2: i ascending; better partners p with fl(h_p - h_i) < 1
            t = 0
            for pos in range(m):
                i = buf[pos].row
                hi_ = buf[pos].key
                while t < m and buf[t].key - hi_ < 1.0:
                    fw2_add(t2, R, R - 1 - ranks[lo + buf[t].row], buf[t].key)
                    t = t + 1
                fill2[lo + pos] = <int32_t>t
                fw2_prefix(t2, R - 1 - ranks[lo + i], r2)
                grad[lo + i] += 2.0 * (r2.n * (1.0 + hi_) - r2.s)
                partners[lo + i] += <int32_t>r2.n
            s_loss[s] = sl
            s_curv[s] = sc
            sent_act[s] = sa
            if has_dir:
                sl = 0.0
                for j in range(m):
                    sl = sl + grad[lo + j] * direction[lo + j]
                s_slope[s] = sl


def hessian_product(const double[::1] v, const int32_t[::1] ranks, const int64_t[::1] sent_offsets,
                    const int32_t[::1] order, const int32_t[::1] fill1, const int32_t[::1] fill2,
                    const int32_t[::1] partners, double[::1] out, int n_threads=1):
    """Generalized Hessian of sum_s L_s with respect to the scores, times v.

    v: float64 [n], the scores of a direction (X d). ranks, sent_offsets as for
    :func:`loss_gradient`; order, fill1, fill2, partners: int32 [n] as that call left
    them (they fix the active set). out: float64 [n], overwritten with
    (H v)_i = 2 (partners_i v_i - sum of v over the active partners of i). n_threads:
    OpenMP threads over sentences (each writes only its own rows).
    """
    cdef Py_ssize_t n = v.shape[0], S = sent_offsets.shape[0] - 1
    _check_offsets(sent_offsets, n)
    if (ranks.shape[0] != n or order.shape[0] != n or fill1.shape[0] != n or fill2.shape[0] != n
            or partners.shape[0] != n or out.shape[0] != n):
        raise ValueError("every argument must have one entry per hypothesis")
    cdef int T = n_threads if n_threads > 1 else 1
    cdef Py_ssize_t max_m = _max_sentence(sent_offsets)
    cdef double* tree_all = <double*>malloc(T * (max_m + 1) * sizeof(double))
    if tree_all == NULL:
        raise MemoryError()
    cdef double* tree
    cdef Py_ssize_t s, j, m, R, pos, t, i, q
    cdef int64_t lo
    with nogil:
        for s in prange(S, num_threads=T, schedule="dynamic", chunksize=8):
            tree = tree_all + threadid() * (max_m + 1)
            lo = sent_offsets[s]
            m = sent_offsets[s + 1] - lo
            R = 0
            for j in range(m):
                if ranks[lo + j] + 1 > R:
                    R = ranks[lo + j] + 1
            for i in range(m):
                out[lo + i] = 2.0 * partners[lo + i] * v[lo + i]
            # sweep 1: the same insertions as in loss_gradient, replayed from the fill levels
            for j in range(R + 1):
                tree[j] = 0.0
            t = m - 1
            for pos in range(m - 1, -1, -1):
                while m - 1 - t < fill1[lo + pos]:
                    q = order[lo + t]
                    fw1_add(tree, R, ranks[lo + q], v[lo + q])
                    t = t - 1
                i = order[lo + pos]
                out[lo + i] -= 2.0 * fw1_prefix(tree, ranks[lo + i])
            # sweep 2
            for j in range(R + 1):
                tree[j] = 0.0
            t = 0
            for pos in range(m):
                while t < fill2[lo + pos]:
                    q = order[lo + t]
                    fw1_add(tree, R, R - 1 - ranks[lo + q], v[lo + q])
                    t = t + 1
                i = order[lo + pos]
                out[lo + i] -= 2.0 * fw1_prefix(tree, R - 1 - ranks[lo + i])
    free(tree_all)


def centred_scores(const double[:, ::1] dense, const int64_t[::1] sp_indptr, const int32_t[::1] sp_ids,
                   const double[::1] sp_values, const int64_t[::1] sent_offsets, const double[::1] weights,
                   double[::1] out, int n_threads=1):
    """Model scores with the dense block centred on each sentence's first hypothesis.

    out[i] = (dense[i] - dense[first(s)]) . weights[:n_dense] + sum of sparse[i] * weights[ids]
    for i in sentence s: w . f_i minus a per-sentence constant. Shapes: dense float64
    [n, n_dense], sp_indptr int64 [n + 1], sp_ids int32 [nnz] (n_dense <= id <
    n_features), sp_values float64 [nnz], sent_offsets int64 [S + 1], weights float64
    [n_features], out float64 [n]. n_threads: OpenMP threads over sentences (each row is
    summed on its own: the result does not depend on it).
    """
    cdef Py_ssize_t n = out.shape[0], d = dense.shape[1], S = sent_offsets.shape[0] - 1
    _check_offsets(sent_offsets, n)
    if dense.shape[0] != n or sp_indptr.shape[0] != n + 1 or weights.shape[0] < d:
        raise ValueError("dense, sp_indptr, weights and out disagree in shape")
    cdef Py_ssize_t s, k
    cdef int64_t lo, h, e
    cdef double acc
    cdef int T = n_threads if n_threads > 1 else 1
    with nogil:
        for s in prange(S, num_threads=T, schedule="static"):
            lo = sent_offsets[s]
            for h in range(lo, sent_offsets[s + 1]):
                acc = 0.0
                # "acc = acc + …", not "+=": in a prange, += would make acc a reduction
                for k in range(d):
                    acc = acc + (dense[h, k] - dense[lo, k]) * weights[k]
                for e in range(sp_indptr[h], sp_indptr[h + 1]):
                    acc = acc + sp_values[e] * weights[sp_ids[e]]
                out[h] = acc
