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
# centring (exact algebra; fewer rounding errors; _rows.transpose_pairs). Sums across
# sentences (the loss, the curvature, the slope, X^T c) are exact (mtplug.exact_sum), so a
# result does not depend on how sentences are split over threads or dask workers.

from _exact cimport EXACT_CHUNKS, EXACT_SAFE_ADDS, EXACT_WIDTH, exact_add, exact_merge, exact_normalize
from libc.math cimport NAN, isfinite
from libc.stdint cimport int8_t, int32_t, int64_t, uint16_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy, memset

from cython.parallel cimport prange, threadid

import numpy as np

cdef extern from *:
    void __builtin_prefetch(const void* p) noexcept nogil

cdef enum:
    # entries ahead whose cache line a gather over a large array fetches early
    _PREFETCH = 64

cdef enum:
    _STATUS_OK = 0
    _STATUS_NONFINITE = 1      # index: the sentence with a score that is NaN or infinite

STATUS_OK = _STATUS_OK
STATUS_NONFINITE = _STATUS_NONFINITE


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


# Sorting: a stable LSD radix sort of 64-bit keys that order like the doubles they come
# from, 8 bits a pass, skipping the passes whose digit all keys share (the sign and
# exponent bytes of a sentence's scores often are). Stable from rows in ascending order,
# so equal scores stay in row order: the order is the total order on (score, row), which
# any sort gives (about 4 times as fast as an introsort of (score, row) pairs here).
cdef enum:
    _RADIX_PASSES = 8
    _RADIX_BUCKETS = 256


cdef inline uint64_t order_key(double x) noexcept nogil:
    """A key whose unsigned order is the order of the (non-NaN) doubles; -0.0 and 0.0
    share one key (x + 0.0 turns -0.0 into 0.0), as they compare equal."""
    cdef double y = x + 0.0
    cdef uint64_t u
    memcpy(&u, &y, 8)
    return u ^ ((<uint64_t>0 - (u >> 63)) | 0x8000000000000000ULL)


cdef int32_t* radix_sort(uint64_t* keys, int32_t* rows, uint64_t* keys_tmp, int32_t* rows_tmp, Py_ssize_t m,
                         int32_t* hist) noexcept nogil:
    """Sort rows[0:m] stably by keys[0:m] (both permuted together); the *_tmp arrays
    (m entries each) are scratch and hist has _RADIX_PASSES * _RADIX_BUCKETS entries.
    Returns the array (rows or rows_tmp) that holds the sorted rows."""
    cdef Py_ssize_t j, d, sh, b
    cdef uint64_t u
    cdef int32_t c, total
    cdef int32_t* h
    cdef uint64_t* kt
    cdef int32_t* rt
    if m < 2:
        return rows
    memset(hist, 0, _RADIX_PASSES * _RADIX_BUCKETS * sizeof(int32_t))
    for j in range(m):
        u = keys[j]
        for d in range(_RADIX_PASSES):
            hist[d * _RADIX_BUCKETS + <Py_ssize_t>((u >> (8 * d)) & 0xff)] += 1
    for d in range(_RADIX_PASSES):
        h = hist + d * _RADIX_BUCKETS
        sh = 8 * d
        if h[<Py_ssize_t>((keys[0] >> sh) & 0xff)] == m:
            continue
        total = 0
        for b in range(_RADIX_BUCKETS):
            c = h[b]
            h[b] = total
            total = total + c
        for j in range(m):
            u = keys[j]
            b = <Py_ssize_t>((u >> sh) & 0xff)
            keys_tmp[h[b]] = u
            rows_tmp[h[b]] = rows[j]
            h[b] += 1
        kt = keys
        keys = keys_tmp
        keys_tmp = kt
        rt = rows
        rows = rows_tmp
        rows_tmp = rt
    return rows


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


cdef struct Scratch:           # one thread's buffers, for sentences of up to max_m rows
    uint64_t* keys
    uint64_t* keys_tmp
    int32_t* rows
    int32_t* rows_tmp
    int32_t* hist              # _RADIX_PASSES * _RADIX_BUCKETS
    double* xs                 # per row: scores at a step along the direction
    double* hs                 # per sorted position: score, direction score, gradient
    double* vs
    double* gs
    int32_t* rk                # per sorted position: metric rank, active partners
    int32_t* ps
    Node3* t1
    Node5* t5
    Node2* t2
    double* t1d                # Hessian products' tree


cdef int _scratch_init(Scratch* sc, Py_ssize_t max_m) noexcept nogil:
    """Allocate every buffer of sc; -1 when out of memory (sc is then freeable)."""
    cdef size_t m = <size_t>max_m, m1 = <size_t>max_m + 1
    sc.keys = <uint64_t*>malloc(m * sizeof(uint64_t))
    sc.keys_tmp = <uint64_t*>malloc(m * sizeof(uint64_t))
    sc.rows = <int32_t*>malloc(m * sizeof(int32_t))
    sc.rows_tmp = <int32_t*>malloc(m * sizeof(int32_t))
    sc.hist = <int32_t*>malloc(_RADIX_PASSES * _RADIX_BUCKETS * sizeof(int32_t))
    sc.xs = <double*>malloc(m * sizeof(double))
    sc.hs = <double*>malloc(m * sizeof(double))
    sc.vs = <double*>malloc(m * sizeof(double))
    sc.gs = <double*>malloc(m * sizeof(double))
    sc.rk = <int32_t*>malloc(m * sizeof(int32_t))
    sc.ps = <int32_t*>malloc(m * sizeof(int32_t))
    sc.t1 = <Node3*>malloc(m1 * sizeof(Node3))
    sc.t5 = <Node5*>malloc(m1 * sizeof(Node5))
    sc.t2 = <Node2*>malloc(m1 * sizeof(Node2))
    sc.t1d = <double*>malloc(m1 * sizeof(double))
    if (sc.keys == NULL or sc.keys_tmp == NULL or sc.rows == NULL or sc.rows_tmp == NULL or sc.hist == NULL
            or sc.xs == NULL or sc.hs == NULL or sc.vs == NULL or sc.gs == NULL or sc.rk == NULL or sc.ps == NULL
            or sc.t1 == NULL or sc.t5 == NULL or sc.t2 == NULL or sc.t1d == NULL):
        return -1
    return 0


cdef void _scratch_free(Scratch* sc) noexcept nogil:
    free(sc.keys)
    free(sc.keys_tmp)
    free(sc.rows)
    free(sc.rows_tmp)
    free(sc.hist)
    free(sc.xs)
    free(sc.hs)
    free(sc.vs)
    free(sc.gs)
    free(sc.rk)
    free(sc.ps)
    free(sc.t1)
    free(sc.t5)
    free(sc.t2)
    free(sc.t1d)


cdef class _Scratches:
    """Scratch of T threads for sentences of up to max_m rows (freed with the object)."""
    cdef Scratch* sc
    cdef int T

    def __cinit__(self, int T, Py_ssize_t max_m):
        cdef int t
        self.T = 0
        self.sc = <Scratch*>calloc(T, sizeof(Scratch))
        if self.sc == NULL:
            raise MemoryError()
        self.T = T
        for t in range(T):
            if _scratch_init(&self.sc[t], max_m) != 0:
                raise MemoryError()

    def __dealloc__(self):
        cdef int t
        if self.sc != NULL:
            for t in range(self.T):
                _scratch_free(&self.sc[t])
            free(self.sc)


cdef int32_t* _sorted_rows(Scratch* sc, const double* x, Py_ssize_t m) noexcept nogil:
    """The rows 0..m-1 sorted by (x[row], row); x finite or infinite, not NaN."""
    cdef Py_ssize_t j
    for j in range(m):
        sc.keys[j] = order_key(x[j])
        sc.rows[j] = <int32_t>j
    return radix_sort(sc.keys, sc.rows, sc.keys_tmp, sc.rows_tmp, m, sc.hist)


def metric_ranks(const double[::1] b, const int64_t[::1] sent_offsets, int32_t[::1] ranks):
    """Dense rank of every hypothesis's metric score within its sentence.

    b: float64 [n], finite (checked by the caller). sent_offsets: int64 [S + 1], 0 .. n,
    non-decreasing. ranks: int32 [n], overwritten: 0 for the lowest b of the sentence, and
    equal b share one rank (so the sentence's ranks are 0 .. R-1, R distinct values).
    """
    cdef Py_ssize_t n = b.shape[0], S = sent_offsets.shape[0] - 1, s, j, m
    cdef int64_t lo
    cdef int32_t r
    cdef int32_t* rows
    _check_offsets(sent_offsets, n)
    if ranks.shape[0] != n:
        raise ValueError("ranks must have one entry per hypothesis")
    cdef _Scratches scratch = _Scratches(1, _max_sentence(sent_offsets))
    cdef Scratch* sc = scratch.sc
    with nogil:
        for s in range(S):
            lo = sent_offsets[s]
            m = sent_offsets[s + 1] - lo
            if m == 0:
                continue
            rows = _sorted_rows(sc, &b[lo], m)
            r = 0
            for j in range(m):
                if j > 0 and b[lo + rows[j]] != b[lo + rows[j - 1]]:
                    r += 1
                ranks[lo + rows[j]] = r



def loss_gradient(const double[::1] scores, const double[::1] direction, const int32_t[::1] ranks,
                  const int64_t[::1] sent_offsets, double[::1] grad, int32_t[::1] order, int32_t[::1] fill1,
                  int32_t[::1] fill2, int32_t[::1] partners, int64_t[:, ::1] totals, int n_threads=1,
                  double step=0.0):
    """Summed APRO loss sum_s L_s, its gradient with respect to the scores and, given a
    direction, the curvature and the slope along it, at the scores h + step v.

    scores: float64 [n], model scores h (centred per sentence by :func:`centred_scores`;
    the loss depends on differences only). direction: float64 [n], the scores v of a
    direction (X d), or an empty array. step: the kernel works on the scores
    fl(h_i + fl(step v_i)) (as NumPy's ``h + step * v``) when a direction is given and
    step != 0, else on h. ranks: int32 [n] from :func:`metric_ranks`.
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
    cdef double[:, ::1] per_sentence = np.zeros((S, 3), dtype=np.float64)   # loss, half curvature, slope
    cdef int64_t[::1] act_v = np.zeros(S, dtype=np.int64)
    cdef int T = n_threads if n_threads > 1 else 1
    cdef _Scratches scratch = _Scratches(T, _max_sentence(sent_offsets))
    cdef Scratch* sc_all = scratch.sc
    cdef const double* dirp = &direction[0] if has_dir else NULL
    cdef Py_ssize_t s, k
    cdef int64_t lo, active = 0
    cdef int status = _STATUS_OK
    cdef Py_ssize_t index = 0
    cdef int8_t[::1] flags = np.zeros(S + 1, dtype=np.int8)
    with nogil:
        for s in prange(S, num_threads=T, schedule="dynamic", chunksize=8):
            lo = sent_offsets[s]
            flags[s] = _sentence_loss(&scores[lo], dirp + lo if has_dir else NULL, step, &ranks[lo],
                                      sent_offsets[s + 1] - lo, &grad[lo], &order[lo], &fill1[lo], &fill2[lo],
                                      &partners[lo], &sc_all[threadid()], &per_sentence[s, 0], &act_v[s])
        for s in range(S):
            if flags[s]:
                status = _STATUS_NONFINITE
                index = s
                break
        if status == _STATUS_OK:
            for s in range(S):
                exact_add(&totals[0, 0], per_sentence[s, 0])
                exact_add(&totals[1, 0], 2.0 * per_sentence[s, 1])
                exact_add(&totals[2, 0], per_sentence[s, 2])
                active += act_v[s]
                if (s + 1) % EXACT_SAFE_ADDS == 0:
                    for k in range(3):
                        exact_normalize(&totals[k, 0])
            for k in range(3):
                exact_normalize(&totals[k, 0])
    if status != _STATUS_OK:
        return 0, status, index
    return active, status, index


cdef int8_t _sentence_loss(const double* scores, const double* direction, double step, const int32_t* ranks,
                           Py_ssize_t m, double* grad, int32_t* order, int32_t* fill1, int32_t* fill2,
                           int32_t* partners, Scratch* sc, double* out, int64_t* active) noexcept nogil:
    """loss_gradient's work on one sentence of m rows (pointers at its first row; direction
    NULL for none) at scores + step direction: writes its rows of the outputs, out[0:3] =
    (loss, half the curvature, slope) and the active pairs; returns 1 (and nothing else)
    if a score is not finite."""
    cdef Py_ssize_t j, pos, t, R = 0
    cdef double sl = 0.0, sc2 = 0.0, hi_, a, vi
    cdef int64_t sa = 0
    cdef int32_t r
    cdef int32_t* rows
    cdef double* hs = sc.hs
    cdef double* vs = sc.vs
    cdef double* gs = sc.gs
    cdef int32_t* rk = sc.rk
    cdef int32_t* ps = sc.ps
    cdef Node3* t1 = sc.t1
    cdef Node5* t5 = sc.t5
    cdef Node2* t2 = sc.t2
    cdef Node3 r3
    cdef Node5 r5
    cdef Node2 r2
    cdef double prod
    if direction != NULL and step != 0.0:
        for j in range(m):
            prod = step * direction[j]      # rounded on its own, as NumPy does (no fused multiply-add)
            sc.xs[j] = scores[j] + prod
        scores = sc.xs
    cdef bint all_zero = True
    for j in range(m):
        if not isfinite(scores[j]):
            return 1
        if scores[j] != 0.0:
            all_zero = False
        if ranks[j] + 1 > R:
            R = ranks[j] + 1
    if all_zero and direction == NULL:
        _sentence_loss_at_zero(ranks, m, R, grad, order, fill1, fill2, partners, sc, out, active)
        return 0
    rows = _sorted_rows(sc, scores, m)
    for pos in range(m):
        r = rows[pos]
        order[pos] = r
        hs[pos] = scores[r]
        rk[pos] = ranks[r]
    if direction != NULL:
        for pos in range(m):
            vs[pos] = direction[rows[pos]]
    for j in range(R + 1):
        t1[j].n = 0.0
        t1[j].s = 0.0
        t1[j].q = 0.0
        t2[j].n = 0.0
        t2[j].s = 0.0
    if direction != NULL:
        for j in range(R + 1):
            t5[j].n = 0.0
            t5[j].s = 0.0
            t5[j].q = 0.0
            t5[j].v = 0.0
            t5[j].vv = 0.0
    # sweep 1: i descending; worse partners q with fl(h_i - h_q) < 1
    t = m - 1
    for pos in range(m - 1, -1, -1):
        hi_ = hs[pos]
        if direction != NULL:
            while t >= 0 and hi_ - hs[t] < 1.0:
                fw5_add(t5, R, rk[t], hs[t], vs[t])
                t -= 1
            fw5_prefix(t5, rk[pos], &r5)
            r3.n = r5.n
            r3.s = r5.s
            r3.q = r5.q
            vi = vs[pos]
            # sum over Q1_i of (v_i - v_q)^2
            sc2 = sc2 + (r5.n * vi * vi - 2.0 * vi * r5.v + r5.vv)
        else:
            while t >= 0 and hi_ - hs[t] < 1.0:
                fw3_add(t1, R, rk[t], hs[t])
                t -= 1
            fw3_prefix(t1, rk[pos], &r3)
        fill1[pos] = <int32_t>(m - 1 - t)
        a = 1.0 - hi_
        sl = sl + (r3.n * a * a + 2.0 * a * r3.s + r3.q)
        gs[pos] = -2.0 * (r3.n * a + r3.s)
        ps[pos] = <int32_t>r3.n
        sa = sa + <int64_t>r3.n
    # sweep 2: i ascending; better partners p with fl(h_p - h_i) < 1
    t = 0
    for pos in range(m):
        hi_ = hs[pos]
        while t < m and hs[t] - hi_ < 1.0:
            fw2_add(t2, R, R - 1 - rk[t], hs[t])
            t += 1
        fill2[pos] = <int32_t>t
        fw2_prefix(t2, R - 1 - rk[pos], &r2)
        gs[pos] += 2.0 * (r2.n * (1.0 + hi_) - r2.s)
        ps[pos] += <int32_t>r2.n
    for pos in range(m):
        grad[rows[pos]] = gs[pos]
        partners[rows[pos]] = ps[pos]
    out[0] = sl
    out[1] = sc2
    active[0] = sa
    if direction != NULL:
        sl = 0.0
        for j in range(m):
            sl = sl + grad[j] * direction[j]
        out[2] = sl
    return 0


cdef void _sentence_loss_at_zero(const int32_t* ranks, Py_ssize_t m, Py_ssize_t R, double* grad, int32_t* order,
                                 int32_t* fill1, int32_t* fill2, int32_t* partners, Scratch* sc, double* out,
                                 int64_t* active) noexcept nogil:
    """_sentence_loss where every score is 0 (w = 0, where Newton's tolerance is measured):
    every preference pair is active with r = 1, so the sweeps would only count. The same
    outputs from rank counts: A_i (worse rows) and B_i (better rows) are integers, so
    g_i = -2 A_i + 2 B_i and the loss, sum_i A_i, come out exact, as the sweeps make them."""
    cdef Py_ssize_t j
    cdef int32_t* below = sc.rk               # rows with a lower rank, per rank
    cdef int32_t* count = sc.ps               # rows per rank
    cdef int64_t total = 0
    cdef double loss = 0.0
    for j in range(R):
        count[j] = 0
    for j in range(m):
        count[ranks[j]] += 1
    for j in range(R):
        below[j] = <int32_t>total
        total += count[j]
    for j in range(m):
        # the sweeps add A_i in descending score order, i.e. rows m-1 .. 0: integers, exact in any order
        loss += below[ranks[j]]
        grad[j] = -2.0 * below[ranks[j]] + 2.0 * (m - below[ranks[j]] - count[ranks[j]])
        partners[j] = <int32_t>(m - count[ranks[j]])
        order[j] = <int32_t>j
        fill1[j] = <int32_t>m
        fill2[j] = <int32_t>m
    out[0] = loss
    out[1] = 0.0
    active[0] = <int64_t>loss


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
    cdef _Scratches scratch = _Scratches(T, _max_sentence(sent_offsets))
    cdef Scratch* sc_all = scratch.sc
    cdef Py_ssize_t s
    cdef int64_t lo
    with nogil:
        for s in prange(S, num_threads=T, schedule="dynamic", chunksize=8):
            lo = sent_offsets[s]
            _sentence_hessian(&v[lo], &ranks[lo], sent_offsets[s + 1] - lo, &order[lo], &fill1[lo], &fill2[lo],
                              &partners[lo], &out[lo], &sc_all[threadid()])


cdef void _sentence_hessian(const double* v, const int32_t* ranks, Py_ssize_t m, const int32_t* order,
                            const int32_t* fill1, const int32_t* fill2, const int32_t* partners, double* out,
                            Scratch* sc) noexcept nogil:
    """hessian_product's work on one sentence of m rows (pointers at its first row)."""
    cdef Py_ssize_t j, pos, t, R = 0
    cdef int32_t r
    cdef double* vs = sc.vs
    cdef double* os = sc.gs
    cdef int32_t* rk = sc.rk
    cdef double* tree = sc.t1d
    for j in range(m):
        if ranks[j] + 1 > R:
            R = ranks[j] + 1
    for pos in range(m):
        r = order[pos]
        vs[pos] = v[r]
        rk[pos] = ranks[r]
        os[pos] = 2.0 * partners[r] * v[r]
    # sweep 1: the same insertions as in loss_gradient, replayed from the fill levels
    for j in range(R + 1):
        tree[j] = 0.0
    t = m - 1
    for pos in range(m - 1, -1, -1):
        while m - 1 - t < fill1[pos]:
            fw1_add(tree, R, rk[t], vs[t])
            t -= 1
        os[pos] -= 2.0 * fw1_prefix(tree, rk[pos])
    # sweep 2
    for j in range(R + 1):
        tree[j] = 0.0
    t = 0
    for pos in range(m):
        while t < fill2[pos]:
            fw1_add(tree, R, R - 1 - rk[t], vs[t])
            t += 1
        os[pos] -= 2.0 * fw1_prefix(tree, R - 1 - rk[pos])
    for pos in range(m):
        out[order[pos]] = os[pos]


def hessian_transpose(const double[:, ::1] dense, const int64_t[::1] sp_indptr, const int32_t[::1] sp_ids,
                      const double[::1] sp_values, const int64_t[::1] sent_offsets, const double[::1] d,
                      const int32_t[::1] ranks, const int32_t[::1] order, const int32_t[::1] fill1,
                      const int32_t[::1] fill2, const int32_t[::1] partners, double[::1] hv,
                      int64_t[:, ::1] acc, int n_threads=1):
    """X^T H X d over the dense features in one read of them, sentence by sentence: the
    scores v = X d (as :func:`centred_scores`), hv = H v (as :func:`hessian_product`,
    written to hv for the sparse features' X^T, which is the caller's), and X^T hv on the
    dense block taken relative to the sentence's first row (as _rows.transpose_pairs),
    while the sentence's rows are still in the cache.

    Shapes as for those: dense float64 [n, n_dense], the sparse block CSR (sp_indptr int64
    [n + 1], sp_ids int32, sp_values float64), sent_offsets int64 [S + 1], d float64
    [n_features], ranks/order/fill1/fill2/partners int32 [n] as :func:`loss_gradient` left
    them, hv float64 [n] (overwritten), acc int64 [n_dense, WIDTH], normalized: the dense
    sums are added to it exactly (left normalized). n_threads: OpenMP threads over
    sentences; per-sentence values do not depend on them and the sums are exact.
    """
    cdef Py_ssize_t n = hv.shape[0], nd = dense.shape[1], S = sent_offsets.shape[0] - 1
    _check_offsets(sent_offsets, n)
    if (dense.shape[0] != n or sp_indptr.shape[0] != n + 1 or d.shape[0] < nd or ranks.shape[0] != n
            or order.shape[0] != n or fill1.shape[0] != n or fill2.shape[0] != n or partners.shape[0] != n
            or acc.shape[0] != nd or acc.shape[1] != EXACT_WIDTH):
        raise ValueError("dense, the sparse block, d, the active set, hv and acc disagree in shape")
    cdef int T = n_threads if n_threads > 1 else 1
    cdef _Scratches scratch = _Scratches(T, _max_sentence(sent_offsets))
    cdef Scratch* sc_all = scratch.sc
    # per thread: its accumulator rows, its adds since they were normalized, its dense sums
    cdef int64_t[:, :, ::1] accs = np.zeros((T, nd, EXACT_WIDTH), dtype=np.int64)
    cdef int64_t[::1] adds = np.zeros(T * 8, dtype=np.int64)
    cdef double[:, ::1] local = np.zeros((T, nd + 16), dtype=np.float64)
    cdef Py_ssize_t s, k, f
    cdef int64_t lo
    cdef int tid
    with nogil:
        for s in prange(S, num_threads=T, schedule="dynamic", chunksize=8):
            tid = threadid()
            lo = sent_offsets[s]
            _sentence_hessian_dense(dense, sp_indptr, sp_ids, sp_values, d, lo, sent_offsets[s + 1], &ranks[lo],
                                    &order[lo], &fill1[lo], &fill2[lo], &partners[lo], hv,
                                    &accs[tid, 0, 0] if nd else NULL, &local[tid, 8], &sc_all[tid])
            adds[tid * 8] = adds[tid * 8] + nd
            if adds[tid * 8] >= EXACT_SAFE_ADDS:
                for f in range(nd):
                    exact_normalize(&accs[tid, f, 0])
                adds[tid * 8] = 0
        for tid in range(T):
            for f in range(nd):
                exact_normalize(&accs[tid, f, 0])
                exact_merge(&acc[f, 0], &accs[tid, f, 0])


cdef void _sentence_hessian_dense(const double[:, ::1] dense, const int64_t[::1] sp_indptr,
                                  const int32_t[::1] sp_ids, const double[::1] sp_values, const double[::1] d,
                                  int64_t lo, int64_t hi, const int32_t* ranks, const int32_t* order,
                                  const int32_t* fill1, const int32_t* fill2, const int32_t* partners,
                                  double[::1] hv, int64_t* acc, double* local, Scratch* sc) noexcept nogil:
    """hessian_transpose's work on the sentence of rows lo .. hi-1."""
    cdef Py_ssize_t nd = dense.shape[1], k
    cdef int64_t h, e
    cdef double a, x, c
    cdef double* v = sc.xs
    for h in range(lo, hi):
        a = 0.0
        for k in range(nd):
            x = dense[h, k] - dense[lo, k]
            a = a + x * d[k]
        for e in range(sp_indptr[h], sp_indptr[h + 1]):
            if e + _PREFETCH < sp_indptr[hi]:
                __builtin_prefetch(&d[sp_ids[e + _PREFETCH]])
            a = a + sp_values[e] * d[sp_ids[e]]
        v[h - lo] = a
    _sentence_hessian(v, ranks, hi - lo, order, fill1, fill2, partners, &hv[lo], sc)
    for k in range(nd):
        local[k] = 0.0
    for h in range(lo + 1, hi):
        c = hv[h]
        if c == 0.0:
            continue
        for k in range(nd):
            local[k] = local[k] + c * (dense[h, k] - dense[lo, k])
    for k in range(nd):
        exact_add(acc + k * EXACT_WIDTH, local[k])


def centred_scores(const double[:, ::1] dense, const int64_t[::1] sp_indptr, const int32_t[::1] sp_ids,
                   const double[::1] sp_values, const int64_t[::1] sent_offsets, const double[::1] weights,
                   double[::1] out, int n_threads=1, const double[::1] weights2=None, double[::1] out2=None):
    """Model scores with the dense block centred on each sentence's first hypothesis.

    out[i] = (dense[i] - dense[first(s)]) . weights[:n_dense] + sum of sparse[i] * weights[ids]
    for i in sentence s: w . f_i minus a per-sentence constant. Shapes: dense float64
    [n, n_dense], sp_indptr int64 [n + 1], sp_ids int32 [nnz] (n_dense <= id <
    n_features), sp_values float64 [nnz], sent_offsets int64 [S + 1], weights float64
    [n_features], out float64 [n]. weights2, out2: optionally (both non-empty) a second
    vector and its scores, the same as a second call would give, in the same read of
    the features (a line search needs the scores of w and of its direction). n_threads:
    OpenMP threads over sentences (each row is summed on its own: the result does not
    depend on it).
    """
    cdef Py_ssize_t n = out.shape[0], d = dense.shape[1], S = sent_offsets.shape[0] - 1
    _check_offsets(sent_offsets, n)
    if dense.shape[0] != n or sp_indptr.shape[0] != n + 1 or weights.shape[0] < d:
        raise ValueError("dense, sp_indptr, weights and out disagree in shape")
    cdef bint two = weights2 is not None and weights2.shape[0] > 0
    if two and (out2 is None or out2.shape[0] != n or weights2.shape[0] != weights.shape[0]):
        raise ValueError("weights2 and out2 must match weights and out")
    cdef const double* w2 = &weights2[0] if two else NULL
    cdef double* o2 = &out2[0] if two else NULL
    cdef Py_ssize_t s, k
    cdef int64_t lo, h, e, nnz = sp_indptr[n]
    cdef double acc, acc2, x
    cdef int T = n_threads if n_threads > 1 else 1
    with nogil:
        for s in prange(S, num_threads=T, schedule="static"):
            lo = sent_offsets[s]
            for h in range(lo, sent_offsets[s + 1]):
                acc = 0.0
                acc2 = 0.0
                # "acc = acc + …", not "+=": in a prange, += would make acc a reduction
                for k in range(d):
                    x = dense[h, k] - dense[lo, k]
                    acc = acc + x * weights[k]
                    if two:
                        acc2 = acc2 + x * w2[k]
                for e in range(sp_indptr[h], sp_indptr[h + 1]):
                    # 10^6 weights do not stay in the cache: fetch those of later rows ahead
                    if e + _PREFETCH < nnz:
                        __builtin_prefetch(&weights[sp_ids[e + _PREFETCH]])
                        if two:
                            __builtin_prefetch(&w2[sp_ids[e + _PREFETCH]])
                    acc = acc + sp_values[e] * weights[sp_ids[e]]
                    if two:
                        acc2 = acc2 + sp_values[e] * w2[sp_ids[e]]
                out[h] = acc
                if two:
                    o2[h] = acc2
