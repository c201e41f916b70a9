# PRO (Hopkins & May 2011, "Tuning as Ranking"): pair sampling, pair difference vectors,
# and the epoch kernels of the perceptron and linear-SVM classifiers.
#
# Random numbers: splitmix64 (Steele, Lea & Flood 2014), one stream per sentence. Sentence s
# of a run with seed z starts from the state
#     state_s = mix64(mix64(z) + s * SENTENCE_STRIDE)          (all arithmetic mod 2^64)
# and each draw is state += GOLDEN; output mix64(state). mix64 is a bijection, so distinct
# sentences get distinct starting states; a sentence's pairs depend on (z, s) and its own
# scores only, never on threads, chunking or the order in which sentences are processed.
# An integer uniform in [0, k) (k < 2^32) takes the high 32 bits x of a draw and applies
# Lemire's (2019) multiply-shift with rejection: m = x * k; reject while (m mod 2^32) <
# (2^32 - k) mod k; the value is m >> 32. This is exactly uniform (no modulo bias).
# tests/reference/pro_reference.py re-implements the same stream in pure Python.
#
# Sampling, per sentence with k hypotheses (rows lo .. lo + k - 1) and scores b:
#   for t in 0 .. gamma - 1:   i = uniform(k), then j = uniform(k)   (independent draws)
#       skip the draw when i == j (a pair of a hypothesis with itself ranks nothing),
#       or when |b_i - b_j| < beta, or when b_i == b_j (no better side, even if beta = 0);
#       otherwise it is a candidate (better = the higher b, worse = the lower, diff = |b_i - b_j|).
#   keep the xi candidates with the largest diff; ties at the cut go to the earlier draw
#   (smaller t). Kept pairs are written in draw order (increasing t).
# A sentence with k < 2 draws nothing and yields no pairs (every draw would have i == j).
# Draws with i == j still count towards gamma, as in Moses's pro (mert/pro.cpp).
#
# Length filter (length_z > 0; cdec's mr_pro_map, a variation on Nakov et al. 2012): with
# hypothesis lengths l (words) and sigma = max(2, sqrt(mean of (l_a - l_b)^2 over the ordered
# pairs a != b of the sentence)) — computed exactly, where cdec estimates it from 5000 draws —
# a draw with i != j and |l_i - l_j| / sigma > length_z is drawn again: it does not count
# towards gamma and takes no draw number t. (At least 3/4 of the pairs pass when length_z >= 2,
# by Markov's inequality on (l_i - l_j)^2, so redraws stay few; a sentence stops after
# REDRAW_LIMIT * gamma length rejections all the same.)
#
# Inputs are clean contiguous arrays (validated in mtplug/optimizers/pro.py); nothing here
# raises inside the nogil loops.

from _csr_diff cimport RowDiff, row_diff_next, row_diff_start
from libc.math cimport fabs, sqrt
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from _numtext cimport format_g6, format_int
from libc.stdlib cimport free, malloc, qsort

import numpy as np

include "_growbuf.pxi"

cdef uint64_t GOLDEN = 0x9E3779B97F4A7C15ULL
cdef uint64_t SENTENCE_STRIDE = 0xD1B54A32D192ED03ULL   # odd: s -> s * stride is a bijection
cdef int64_t REDRAW_LIMIT = 64

# Exported so that the pure-Python reference uses the very same constants.
SPLITMIX_GOLDEN = GOLDEN
SPLITMIX_SENTENCE_STRIDE = SENTENCE_STRIDE
LENGTH_REDRAW_LIMIT = REDRAW_LIMIT


cdef inline uint64_t mix64(uint64_t z) noexcept nogil:
    """splitmix64's output function (a bijection of 64-bit words)."""
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline uint64_t stream_start(uint64_t seed, uint64_t sentence) noexcept nogil:
    return mix64(mix64(seed) + sentence * SENTENCE_STRIDE)


cdef inline uint64_t next64(uint64_t* state) noexcept nogil:
    state[0] += GOLDEN
    return mix64(state[0])


cdef inline uint32_t uniform_below(uint64_t* state, uint32_t k) noexcept nogil:
    """Uniform integer in [0, k), k >= 1 (Lemire's multiply-shift with rejection)."""
    cdef uint64_t m = (next64(state) >> 32) * <uint64_t>k
    cdef uint32_t low = <uint32_t>m
    cdef uint32_t threshold
    if low < k:
        threshold = (<uint32_t>0 - k) % k      # (2^32 - k) mod k
        while low < threshold:
            m = (next64(state) >> 32) * <uint64_t>k
            low = <uint32_t>m
    return <uint32_t>(m >> 32)


def py_uniform_draws(uint64_t seed, uint64_t sentence, uint32_t k, Py_ssize_t count):
    """The first ``count`` values uniform in [0, k) of sentence ``sentence``'s stream.

    Test hook for the generator (k >= 1). Returns int64 [count].
    """
    out = np.empty(count, dtype=np.int64)
    cdef int64_t[::1] o = out
    cdef uint64_t state = stream_start(seed, sentence)
    cdef Py_ssize_t t
    for t in range(count):
        o[t] = uniform_below(&state, k)
    return out


cdef struct Candidate:
    double diff
    int64_t draw       # t, the draw number within the sentence
    int64_t better
    int64_t worse


cdef inline bint ranks_below(const Candidate* a, const Candidate* b) noexcept nogil:
    """a would be dropped before b: smaller diff, or equal diff and drawn later."""
    return a.diff < b.diff or (a.diff == b.diff and a.draw > b.draw)


cdef void sift_up(Candidate* heap, Py_ssize_t i) noexcept nogil:
    cdef Candidate c = heap[i]
    cdef Py_ssize_t parent
    while i > 0:
        parent = (i - 1) >> 1
        if not ranks_below(&c, &heap[parent]):
            break
        heap[i] = heap[parent]
        i = parent
    heap[i] = c


cdef void sift_down(Candidate* heap, Py_ssize_t n) noexcept nogil:
    cdef Candidate c = heap[0]
    cdef Py_ssize_t i = 0, child
    while True:
        child = 2 * i + 1
        if child >= n:
            break
        if child + 1 < n and ranks_below(&heap[child + 1], &heap[child]):
            child += 1
        if not ranks_below(&heap[child], &c):
            break
        heap[i] = heap[child]
        i = child
    heap[i] = c


cdef int cmp_draw(const void* p, const void* q) noexcept nogil:
    cdef int64_t a = (<const Candidate*>p).draw, b = (<const Candidate*>q).draw
    return -1 if a < b else (1 if a > b else 0)


cdef double length_sigma(const int64_t[::1] lengths, int64_t lo, int64_t k) noexcept nogil:
    """max(2, RMS of l_a - l_b over the ordered pairs a != b of rows lo .. lo + k - 1), k >= 2.

    Σ_{a != b} (l_a - l_b)^2 = 2k·Σ(l - mean)^2, so the mean square is 2·Σ(l - mean)^2 / (k - 1);
    two passes in double (the order of the sums is the reference's: tests rely on it).
    """
    cdef int64_t a, total = 0
    cdef double mean, dev, ss = 0.0
    for a in range(lo, lo + k):
        total += lengths[a]
    mean = <double>total / <double>k
    for a in range(lo, lo + k):
        dev = <double>lengths[a] - mean
        ss += dev * dev
    return max(sqrt(2.0 * ss / <double>(k - 1)), 2.0)


def sample_pairs(const double[::1] scores, const int64_t[::1] sent_offsets, Py_ssize_t s_lo,
                 Py_ssize_t s_hi, uint64_t seed, Py_ssize_t gamma, Py_ssize_t cap, double beta,
                 const int64_t[::1] lengths, double length_z,
                 int64_t[::1] out_better, int64_t[::1] out_worse, int64_t[::1] out_count,
                 int64_t[::1] out_above, int64_t[::1] out_redrawn, uint64_t first_sentence=0):
    """Sample the PRO pairs of sentences s_lo .. s_hi - 1 (rules: the module header).

    scores float64 [n_hyp] (the sentence metric b, finite); sent_offsets int64 [S + 1]
    (every sentence < 2^32 hypotheses); gamma: draws per sentence; cap: pairs kept per
    sentence at most (xi; the caller passes min(xi, gamma) >= 1); beta >= 0.
    lengths int64 [n_hyp] (hypothesis lengths in words, >= 0; may be empty when
    length_z <= 0); length_z > 0 turns the length filter on.
    Sentence s writes its kept pairs, in draw order, to slots s * cap .. s * cap +
    out_count[s] - 1 of out_better / out_worse (row indices into the store, int64
    [S * cap]); out_above[s] is its number of candidates (draws that passed the i != j,
    beta and b_i != b_j tests) before the top-xi cut; out_redrawn[s] its draws rejected
    for length. ``first_sentence``: the store's number of sentence 0 of ``sent_offsets``
    (a block of sentences sampled on its own draws from the streams of their numbers in
    the store). Returns 0, or -1 if scratch memory could not be allocated (nothing is
    then written).
    """
    cdef Py_ssize_t s, n, r
    cdef int64_t lo, t, above, redrawn, redraw_limit = REDRAW_LIMIT * gamma
    cdef uint32_t k, i, j
    cdef uint64_t state
    cdef double bi, bj, d, max_len_diff = 0.0
    cdef bint by_length = length_z > 0
    cdef Candidate c
    cdef Candidate* heap = <Candidate*>malloc((cap if cap > 0 else 1) * sizeof(Candidate))
    if heap == NULL:
        return -1
    with nogil:
        for s in range(s_lo, s_hi):
            lo = sent_offsets[s]
            k = <uint32_t>(sent_offsets[s + 1] - lo)
            n = 0
            above = 0
            redrawn = 0
            if k >= 2:
                state = stream_start(seed, first_sentence + <uint64_t>s)
                if by_length:
                    max_len_diff = length_z * length_sigma(lengths, lo, k)
                t = 0
                while t < gamma:
                    i = uniform_below(&state, k)
                    j = uniform_below(&state, k)
                    if by_length and i != j and fabs(<double>(lengths[lo + i] - lengths[lo + j])) > max_len_diff:
                        redrawn += 1
                        if redrawn >= redraw_limit:
                            break
                        continue
                    t += 1
                    if i == j:
                        continue
                    bi = scores[lo + i]
                    bj = scores[lo + j]
                    d = fabs(bi - bj)
                    if d < beta or d == 0.0:
                        continue
                    above += 1
                    c.diff = d
                    c.draw = t - 1
                    if bi > bj:
                        c.better = lo + i
                        c.worse = lo + j
                    else:
                        c.better = lo + j
                        c.worse = lo + i
                    if n < cap:
                        heap[n] = c
                        sift_up(heap, n)
                        n += 1
                    elif ranks_below(&heap[0], &c):
                        heap[0] = c
                        sift_down(heap, n)
                qsort(heap, n, sizeof(Candidate), cmp_draw)
                for r in range(n):
                    out_better[s * cap + r] = heap[r].better
                    out_worse[s * cap + r] = heap[r].worse
            out_count[s] = n
            out_above[s] = above
            out_redrawn[s] = redrawn
    free(heap)
    return 0


def pair_differences(const double[:, ::1] dense, const int64_t[::1] sp_indptr,
                     const int32_t[::1] sp_ids, const double[::1] sp_values,
                     const int64_t[::1] better, const int64_t[::1] worse, int32_t id_offset,
                     double[:, ::1] out_dense):
    """Difference vectors f_better - f_worse of P pairs.

    dense float64 [n_hyp, D], sparse CSR rows (sp_indptr int64 [n_hyp + 1], sp_ids int32
    sorted within a row, sp_values float64); better, worse int64 [P] row indices.
    Writes out_dense [P, D]; returns the sparse part as CSR ``(indptr int64 [P + 1], ids
    int32 [nnz], values float64 [nnz])`` with ids = feature id - id_offset, sorted within a
    row, built by merging the two sorted rows. Entries whose difference is exactly 0 (the
    same feature with the same value on both sides) are left out.
    """
    cdef Py_ssize_t P = better.shape[0], D = dense.shape[1], p, c
    cdef int64_t b, w, nnz = 0, pos
    cdef int32_t ia
    cdef double v
    cdef RowDiff it
    cdef bint has_sparse = sp_ids.shape[0] > 0
    indptr = np.empty(P + 1, dtype=np.int64)
    cdef int64_t[::1] ip = indptr
    ip[0] = 0
    with nogil:
        for p in range(P):
            b = better[p]
            w = worse[p]
            for c in range(D):
                out_dense[p, c] = dense[b, c] - dense[w, c]
            # pass 1: count the non-zero entries of the merged row
            if has_sparse:
                row_diff_start(&it, sp_indptr, b, w)
                while row_diff_next(&it, &sp_ids[0], &sp_values[0], &ia, &v):
                    if v != 0.0:
                        nnz += 1
            ip[p + 1] = nnz
    ids = np.empty(nnz, dtype=np.int32)
    values = np.empty(nnz, dtype=np.float64)
    cdef int32_t[::1] oi = ids
    cdef double[::1] ov = values
    with nogil:
        for p in range(P):
            b = better[p]
            w = worse[p]
            pos = ip[p]
            if has_sparse:
                row_diff_start(&it, sp_indptr, b, w)
                while row_diff_next(&it, &sp_ids[0], &sp_values[0], &ia, &v):
                    if v != 0.0:
                        oi[pos] = ia - id_offset
                        ov[pos] = v
                        pos += 1
    return indptr, ids, values


cdef inline double row_dot(const double[:, ::1] xd, const int64_t[::1] indptr,
                           const int32_t[::1] cols, const double[::1] vals, Py_ssize_t r,
                           const double[::1] w) noexcept nogil:
    cdef Py_ssize_t D = xd.shape[1], c
    cdef int64_t e
    cdef double s = 0.0
    for c in range(D):
        s += xd[r, c] * w[c]
    for e in range(indptr[r], indptr[r + 1]):
        s += vals[e] * w[D + cols[e]]
    return s


cdef inline void row_axpy(const double[:, ::1] xd, const int64_t[::1] indptr,
                          const int32_t[::1] cols, const double[::1] vals, Py_ssize_t r,
                          double a, double[::1] w) noexcept nogil:
    """w += a * x_r."""
    cdef Py_ssize_t D = xd.shape[1], c
    cdef int64_t e
    for c in range(D):
        w[c] += a * xd[r, c]
    for e in range(indptr[r], indptr[r + 1]):
        w[D + cols[e]] += a * vals[e]


def perceptron_epoch(const double[:, ::1] xd, const int64_t[::1] indptr, const int32_t[::1] cols,
                     const double[::1] vals, const double[::1] y, const int64_t[::1] order,
                     double[::1] w, double[::1] u, double counter):
    """One epoch of the averaged perceptron (Daumé's lazy averaging), no bias.

    Rows x_r = [xd[r] (D values), sparse CSR row r (columns D + cols)], labels y [m] in
    {-1, +1}, visited in ``order`` (int64 [m]). A row with y_r * w.x_r <= 0 is a mistake:
    w += y_r x_r and u += counter * y_r x_r; counter grows by 1 per row seen. The average
    of the weights over all steps so far is w - u / counter. w, u float64 [D + n_sparse]
    are updated in place. Returns (mistakes, counter).
    """
    cdef Py_ssize_t m = order.shape[0], t, r
    cdef int64_t mistakes = 0
    with nogil:
        for t in range(m):
            r = order[t]
            if y[r] * row_dot(xd, indptr, cols, vals, r, w) <= 0.0:
                row_axpy(xd, indptr, cols, vals, r, y[r], w)
                row_axpy(xd, indptr, cols, vals, r, counter * y[r], u)
                mistakes += 1
            counter += 1.0
    return mistakes, counter


def svm_dcd_epoch(const double[:, ::1] xd, const int64_t[::1] indptr, const int32_t[::1] cols,
                  const double[::1] vals, const double[::1] y, const int64_t[::1] order,
                  const double[::1] sq_norms, const double[::1] margins, double upper,
                  double[::1] alpha, double[::1] w):
    """One pass of dual coordinate descent for the L1-loss linear SVM without bias.

    Hsieh et al. (2008): min_w ½‖w‖² + U Σ_r max(0, b_r - y_r w.x_r), dual variables
    alpha [m] in [0, U] (U = ``upper``), w = Σ alpha_r y_r x_r kept in step. Rows as in
    :func:`perceptron_epoch`; sq_norms [m] = ‖x_r‖² (a row with norm 0 is skipped: it
    does not depend on w); margins [m] = b_r (1 for the plain SVM; a prior centred on c
    shifts them to 1 - y_r c.x_r). Returns the spread max - min of the projected
    gradient over the pass (0 at the optimum; liblinear stops below a tolerance).
    """
    cdef Py_ssize_t m = order.shape[0], t, r
    cdef double g, pg, a_old, a_new, pg_max = -1e300, pg_min = 1e300
    with nogil:
        for t in range(m):
            r = order[t]
            if sq_norms[r] <= 0.0:
                continue
            g = y[r] * row_dot(xd, indptr, cols, vals, r, w) - margins[r]
            a_old = alpha[r]
            if a_old <= 0.0:
                pg = g if g < 0.0 else 0.0
            elif a_old >= upper:
                pg = g if g > 0.0 else 0.0
            else:
                pg = g
            if pg > pg_max:
                pg_max = pg
            if pg < pg_min:
                pg_min = pg
            if pg != 0.0:
                a_new = a_old - g / sq_norms[r]
                if a_new < 0.0:
                    a_new = 0.0
                elif a_new > upper:
                    a_new = upper
                alpha[r] = a_new
                row_axpy(xd, indptr, cols, vals, r, (a_new - a_old) * y[r], w)
    if pg_max < pg_min:
        return 0.0
    return pg_max - pg_min


cdef inline int _put(GrowBuf* b, const char* s, Py_ssize_t n) noexcept nogil:
    return growbuf_append(b, s, n)


cdef inline int _put_g(GrowBuf* b, double v) noexcept nogil:
    """v as C's %g (what Moses's iostreams print)."""
    cdef char buf[40]
    return growbuf_append(b, buf, format_g6(v, buf))


cdef int _pro_line(GrowBuf* out, bint first, const double* fb, const double* fw, Py_ssize_t D,
                   const int64_t[::1] sp_indptr, const int32_t[::1] sp_ids, const double[::1] sp_values,
                   int64_t b, int64_t w, const uint8_t* names, const int64_t[::1] offs) noexcept nogil:
    """One pro.data line of the pair (b, w): label 1 and f_b - f_w (first), or label 0 and
    its negation; returns 0, or -1 out of memory."""
    cdef Py_ssize_t j
    cdef float d, v32
    cdef double v, sign = 1.0 if first else -1.0
    cdef char head[32]
    cdef int k
    head[0] = b' '
    head[1] = b'F'
    cdef RowDiff it
    cdef int32_t fid
    cdef int64_t a0, a1, b0, b1
    cdef double va, vb
    if _put(out, b"1" if first else b"0", 1) != 0:
        return -1
    for j in range(D):
        d = <float>fb[j] - <float>fw[j]
        if fabs(<double>d) > 0.00001:
            k = 2 + format_int(j, head + 2)
            head[k] = b' '
            if _put(out, head, k + 1) != 0 or _put_g(out, sign * <double>d) != 0:
                return -1
    a0, a1 = sp_indptr[b], sp_indptr[b + 1]
    b0, b1 = sp_indptr[w], sp_indptr[w + 1]
    if a1 > a0 or b1 > b0:
        # Moses opens the sparse part whenever either row has sparse features
        if _put(out, b" ", 1) != 0:
            return -1
        while a0 < a1 or b0 < b1:
            if a0 < a1 and (b0 >= b1 or sp_ids[a0] < sp_ids[b0]):
                fid = sp_ids[a0]
                v = <double><float>sp_values[a0]
                a0 += 1
            elif b0 < b1 and (a0 >= a1 or sp_ids[b0] < sp_ids[a0]):
                fid = sp_ids[b0]
                v = -<double><float>sp_values[b0]
                b0 += 1
            else:
                fid = sp_ids[a0]
                va = <double><float>sp_values[a0]
                vb = <double><float>sp_values[b0]
                v = va - vb
                a0 += 1
                b0 += 1
            if v == 0.0:
                continue
            v32 = <float>v
            if fabs(<double>v32) >= 0.00001:
                if _put(out, <const char*>names + offs[fid], offs[fid + 1] - offs[fid]) != 0 or \
                        _put(out, b" ", 1) != 0 or _put_g(out, sign * <double>v32) != 0 or \
                        _put(out, b" ", 1) != 0:
                    return -1
    return _put(out, b"\n", 1)


def format_pro_lines(const double[:, ::1] dense, const int64_t[::1] sp_indptr, const int32_t[::1] sp_ids,
                     const double[::1] sp_values, const int64_t[::1] better, const int64_t[::1] worse,
                     const uint8_t[::1] names, const int64_t[::1] name_offsets):
    """The pro.data text of P pairs (rows better[p], worse[p]): 2P lines, Moses's bytes
    (layout: mtplug/formats/pro_data.py), as mtplug.formats.pro_data.write_pro_data writes
    ``pro_data_from_pairs`` of the same pairs.

    Rows: dense float64 [n, D] and sparse CSR (sp_indptr int64 [n + 1], sp_ids int32 store
    feature ids >= D sorted per row, sp_values float64); features are rounded to float32
    and subtracted in float32, as Moses keeps them. names uint8 / name_offsets int64: the
    store's feature names back to back (name of feature i: names[name_offsets[i]:
    name_offsets[i + 1]], UTF-8). Rows and ids are trusted (checked by the caller).
    Returns bytes.
    """
    cdef Py_ssize_t P = better.shape[0], D = dense.shape[1], p
    cdef GrowBuf out
    cdef int rc = 0
    cdef const double* base = &dense[0, 0] if dense.shape[0] > 0 and D > 0 else NULL
    cdef const uint8_t* nm = &names[0] if names.shape[0] > 0 else NULL
    out.data = NULL
    out.size = 0
    out.cap = 0
    with nogil:
        rc = growbuf_reserve(&out, P * (16 + 14 * D) + 64)
        for p in range(P):
            if rc != 0:
                break
            rc = _pro_line(&out, True, base + better[p] * D, base + worse[p] * D, D, sp_indptr, sp_ids,
                           sp_values, better[p], worse[p], nm, name_offsets)
            if rc == 0:
                rc = _pro_line(&out, False, base + better[p] * D, base + worse[p] * D, D, sp_indptr, sp_ids,
                               sp_values, better[p], worse[p], nm, name_offsets)
    try:
        if rc != 0:
            raise MemoryError("no memory for the pro.data lines")
        return out.data[:out.size] if out.size else b""
    finally:
        growbuf_free(&out)
