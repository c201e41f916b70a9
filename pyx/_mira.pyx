# MIRA kernels: the per-sentence sequential loops of online MIRA (Eidelman 2012) and of
# batch k-best MIRA (Cherry & Foster 2012, Moses kbmira). Both are sequential over
# sentences because the weights (and kbmira's background) change after every sentence.
#
# Features: a dense block [n, D] (feature ids 0..D-1) plus CSR rows (ids >= D, sorted
# within a row). Weights w float64 [F].
#
# PA-I step for a hope row p and a fear row q (shared by both):
#     diff = f_p - f_q,  loss = (g_p - g_q) - w.diff      (margin violation + cost difference)
#     skipped when p == q, loss <= 0 or |diff|^2 == 0; otherwise
#     eta = min(C, loss / |diff|^2),  w += eta * diff.
# Averaging without touching every weight on every step: with K the number of steps so far,
# step K (1-based) also does u += (K - 1) * eta * diff, so that the sum of the weights after
# steps 1..K is K*w - u  (w_k = w_0 + sum_{j<=k} d_j  =>  sum_k w_k = K w_K - sum_j (j-1) d_j).
#
# kbmira gain of a hypothesis with stats x under background BG (float64 [9]), as Moses's
# Scorer::calculateSentenceLevelBackgroundScore with BleuScorer:
#     T = BG + x;  gain = BLEU(T) * T[8] / ref_divisor
#     BLEU(T) = 0 if some T[2n] <= 0, else (prod_n T[2n] / T[2n+1])^(1/4) * BP,
#     BP = exp(1 - r / T[1]) if T[1] < r else 1, r = T[8] / ref_divisor.
#
# Eidelman (2012)'s MB in mira_pass (fear_list K > 0): the fear among the K rows of highest
# w.f (ties at the K-th score: the lowest rows), found by a quickselect of the K-th score
# (_kth_largest); the hope among all rows. doc_gains: BLEU in the context of the 1-best
# document as cdec's kbest_cut_mira computes it (the code Eidelman 2012 ran),
#     g(h) = scale * (B(x_h + context * R) - B(R)),  R = D - x_1best(s),
# D the summed stats of the 1-best rows, B cdec's smoothed BLEU (_bleu.pxd cdec_ibm_bleu).

from _bleu cimport cdec_ibm_bleu
from _csr_diff cimport RowDiff, row_diff_next, row_diff_start
from cython.parallel cimport prange
from libc.math cimport exp, isfinite, sqrt
from libc.stdlib cimport free, malloc
from libc.stdint cimport int32_t, int64_t


cdef inline double _row_score(const double[:, ::1] dense, const int64_t[::1] sp_indptr,
                              const int32_t[::1] sp_ids, const double[::1] sp_values,
                              const double* w, Py_ssize_t D, int64_t h) noexcept nogil:
    cdef double acc = 0.0
    cdef Py_ssize_t j
    cdef int64_t k
    for j in range(D):
        acc += dense[h, j] * w[j]
    for k in range(sp_indptr[h], sp_indptr[h + 1]):
        acc += sp_values[k] * w[sp_ids[k]]
    return acc


cdef inline double _diff_sqnorm(const double[:, ::1] dense, const int64_t[::1] sp_indptr,
                                const int32_t[::1] sp_ids, const double[::1] sp_values,
                                Py_ssize_t D, int64_t p, int64_t q) noexcept nogil:
    """|f_p - f_q|^2 (sparse rows merged by id)."""
    cdef double acc = 0.0, d
    cdef Py_ssize_t j
    cdef int32_t fid
    cdef RowDiff it
    for j in range(D):
        d = dense[p, j] - dense[q, j]
        acc += d * d
    if sp_ids.shape[0]:
        row_diff_start(&it, sp_indptr, p, q)
        while row_diff_next(&it, &sp_ids[0], &sp_values[0], &fid, &d):
            acc += d * d
    return acc


cdef inline void _add_diff(const double[:, ::1] dense, const int64_t[::1] sp_indptr,
                           const int32_t[::1] sp_ids, const double[::1] sp_values,
                           Py_ssize_t D, int64_t p, int64_t q, double eta, double* w,
                           double* u, double uscale) noexcept nogil:
    """w += eta * (f_p - f_q);  u += uscale * eta * (f_p - f_q)."""
    cdef Py_ssize_t j
    cdef int64_t k
    cdef double d
    for j in range(D):
        d = eta * (dense[p, j] - dense[q, j])
        w[j] += d
        u[j] += uscale * d
    for k in range(sp_indptr[p], sp_indptr[p + 1]):
        d = eta * sp_values[k]
        w[sp_ids[k]] += d
        u[sp_ids[k]] += uscale * d
    for k in range(sp_indptr[q], sp_indptr[q + 1]):
        d = eta * sp_values[k]
        w[sp_ids[k]] -= d
        u[sp_ids[k]] -= uscale * d


cdef inline double _pa_step(const double[:, ::1] dense, const int64_t[::1] sp_indptr,
                            const int32_t[::1] sp_ids, const double[::1] sp_values,
                            Py_ssize_t D, int64_t p, int64_t q, double sp, double sq,
                            double gp, double gq, double C, double* w, double* u,
                            int64_t* state) noexcept nogil:
    """One PA-I step (module comment); returns the loss if a step was taken, else 0.
    state[0] = K (steps so far, for the averaging), state[1] += 1 per step."""
    cdef double loss, sq_norm, eta
    if p == q:
        return 0.0
    loss = (gp - gq) - (sp - sq)
    if not (loss > 0.0):
        return 0.0
    sq_norm = _diff_sqnorm(dense, sp_indptr, sp_ids, sp_values, D, p, q)
    if not (sq_norm > 0.0):
        return 0.0
    eta = loss / sq_norm
    if eta > C:
        eta = C
    state[0] += 1
    state[1] += 1
    _add_diff(dense, sp_indptr, sp_ids, sp_values, D, p, q, eta, w, u, <double>(state[0] - 1))
    return loss


cdef double _kth_largest(double* v, int64_t n, int64_t k) noexcept nogil:
    """The k-th largest (1-based) of v[0 .. n-1], 1 <= k <= n; reorders v. Quickselect with a
    three-way partition (values neither above nor below the pivot, NaN too, count as equal,
    so every round shrinks the range and it always ends); median-of-three pivots."""
    cdef int64_t lo = 0, hi = n, i, lt, gt, mid
    cdef double p, a, b, c, t
    k -= 1                                  # 0-based rank from the top
    while True:
        mid = lo + (hi - lo) // 2
        a = v[lo]
        b = v[mid]
        c = v[hi - 1]
        if (a >= b) == (b >= c):            # median of the three
            p = b
        elif (b >= a) == (a >= c):
            p = a
        else:
            p = c
        # [lo, lt): > p, [lt, i): == p, [gt, hi): < p
        lt = lo
        i = lo
        gt = hi
        while i < gt:
            if v[i] > p:
                t = v[i]
                v[i] = v[lt]
                v[lt] = t
                lt += 1
                i += 1
            elif v[i] < p:
                gt -= 1
                t = v[i]
                v[i] = v[gt]
                v[gt] = t
            else:
                i += 1
        if lo + k < lt:
            hi = lt
        elif lo + k < gt:
            return p
        else:
            k -= gt - lo
            lo = gt


def mira_pass(const double[:, ::1] dense, const int64_t[::1] sp_indptr, const int32_t[::1] sp_ids,
              const double[::1] sp_values, const double[::1] gains, const int64_t[::1] sent_offsets,
              const int64_t[::1] order, double hope_model, double hope_gain, double fear_model,
              double fear_gain, double C, double[::1] w, double[::1] u, double[::1] scratch,
              int64_t[::1] state, const int32_t[:, ::1] stats=None, double ref_divisor=1.0,
              double decay=0.9, double[::1] bg=None, int64_t fear_list=0, int64_t[:, ::1] chosen=None):
    """One online-MIRA pass over the sentences ``order`` (int64 [m], visited in that order).

    dense float64 [n, D]; sp_indptr int64 [n + 1], sp_ids int32, sp_values float64 (CSR,
    ids >= D); gains float64 [n] (sentence metric g); sent_offsets int64 [S + 1] (no empty
    sentence); hope = argmax hope_model*s + hope_gain*g, fear = argmax fear_model*s +
    fear_gain*g over the sentence's rows with s = w.f (ties: larger s, then lowest row);
    then one PA-I step with cap C (module comment). w, u float64 [F] updated in place;
    scratch float64 [2 * max sentence size]; state int64 [2] = (K, steps) updated.

    With ``fear_list`` K > 0 (Eidelman's MB) the fear is chosen among the sentence's K
    best rows by s at the time it is visited (the K highest s; of rows tied at the K-th
    highest s, the lowest rows), the hope still among all rows; a sentence of at most K
    rows is unrestricted, so K = 0 (all rows) and any K >= its size give the same step.
    The K-th highest s comes from a partial selection (quickselect) on a copy of s.

    With ``chosen`` (int64 [S, 3]) chosen[s] = (hope row, fear row, model 1-best row at
    the time of the visit) of every sentence s visited (whether or not a step was taken).

    With ``bg`` (float64 [9], updated in place) the gains are pseudo-document BLEU instead
    (Chiang et al. 2008): g_h = _bg_gain(stats[h], bg) at the time the sentence is visited,
    and afterwards bg <- decay * (bg + stats of the sentence's model 1-best); stats int32
    [n, 9]. Returns the summed loss of the steps taken.
    """
    cdef Py_ssize_t D = dense.shape[1], oi, m = order.shape[0], k
    cdef int64_t s, h, lo, hi, hope, fear, best, biggest = 1, n_above, ties_in, ties_seen
    cdef double v, bh, bf, thr = 0.0, total = 0.0
    cdef double* wp = &w[0]
    cdef double* up = &u[0]
    cdef bint pseudo = bg is not None, restrict, cand
    cdef const double* g
    cdef double* gs = &scratch[0] + (scratch.shape[0] // 2)
    cdef double* sel = NULL
    if pseudo and (stats is None or stats.shape[1] != 9 or bg.shape[0] != 9):
        raise ValueError("pseudo-document gains need stats [n, 9] and bg [9]")
    if fear_list < 0:
        raise ValueError(f"fear_list must be >= 0, got {fear_list}")
    if chosen is not None and (chosen.shape[1] != 3 or chosen.shape[0] < sent_offsets.shape[0] - 1):
        raise ValueError("chosen must be int64 [S, 3]")
    if fear_list > 0:
        for oi in range(m):
            biggest = max(biggest, sent_offsets[order[oi] + 1] - sent_offsets[order[oi]])
        sel = <double*>malloc(biggest * sizeof(double))
        if sel == NULL:
            raise MemoryError()
    with nogil:
        for oi in range(m):
            s = order[oi]
            lo = sent_offsets[s]
            hi = sent_offsets[s + 1]
            for h in range(lo, hi):
                scratch[h - lo] = _row_score(dense, sp_indptr, sp_ids, sp_values, wp, D, h)
            if pseudo:
                for h in range(lo, hi):
                    gs[h - lo] = _bg_gain(&stats[h, 0], &bg[0], ref_divisor)
                g = gs
            else:
                g = &gains[lo]
            # MB: the fear's candidates are the fear_list best rows by s (docstring)
            restrict = fear_list > 0 and hi - lo > fear_list
            n_above = 0
            ties_in = 0
            ties_seen = 0
            if restrict:
                for h in range(lo, hi):
                    sel[h - lo] = scratch[h - lo]
                thr = _kth_largest(sel, hi - lo, fear_list)
                for h in range(lo, hi):
                    if scratch[h - lo] > thr:
                        n_above += 1
                ties_in = fear_list - n_above
            hope = lo
            best = lo
            fear = -1
            bf = 0.0
            bh = hope_model * scratch[0] + hope_gain * g[0]
            for h in range(lo, hi):
                if h > lo:
                    v = hope_model * scratch[h - lo] + hope_gain * g[h - lo]
                    if v > bh or (v == bh and scratch[h - lo] > scratch[hope - lo]):
                        bh = v
                        hope = h
                    if scratch[h - lo] > scratch[best - lo]:
                        best = h
                cand = True
                if restrict:
                    if scratch[h - lo] == thr:
                        cand = ties_seen < ties_in
                        ties_seen += 1
                    else:
                        cand = scratch[h - lo] > thr
                if cand:
                    v = fear_model * scratch[h - lo] + fear_gain * g[h - lo]
                    if fear < 0 or v > bf or (v == bf and scratch[h - lo] > scratch[fear - lo]):
                        bf = v
                        fear = h
            if fear < 0:
                fear = best     # no candidate: only with scores that are not numbers
            if chosen is not None:
                chosen[s, 0] = hope
                chosen[s, 1] = fear
                chosen[s, 2] = best
            total += _pa_step(dense, sp_indptr, sp_ids, sp_values, D, hope, fear,
                              scratch[hope - lo], scratch[fear - lo], g[hope - lo], g[fear - lo],
                              C, wp, up, &state[0])
            if pseudo:
                for k in range(9):
                    bg[k] = decay * (bg[k] + stats[best, k])
    free(sel)
    return total


def doc_gains(const int32_t[:, ::1] stats, const int64_t[::1] sent_offsets, const int64_t[::1] one_best,
              double ref_divisor, double context, double scale, double[::1] out, int n_threads=1):
    """Gains in the context of the 1-best document (``doc-1best``), as cdec's
    ``kbest_cut_mira`` scores hypotheses without pseudo-document BLEU: with D the summed
    statistics of the rows one_best (int64 [S], one row of each sentence), R_s = D −
    x_{one_best[s]} the document without sentence s and x_h the statistics of row h,

        out[h] = scale * (B(x_h + context * R_s) - B(R_s)),

    B the smoothed BLEU of cdec's ``BLEUScore::ComputeScore`` (``_bleu.cdec_ibm_bleu``). With
    ``one_best`` None, R_s = 0: out[h] = scale * (B(x_h) - 1), cdec's smoothed sentence
    BLEU (its first pass) shifted by a constant. stats int32 [n, 9]; sent_offsets int64
    [S + 1]; out float64 [n], written. Sentences are split over n_threads OpenMP threads;
    the result does not depend on it.
    """
    cdef Py_ssize_t S = sent_offsets.shape[0] - 1, s, k
    cdef int64_t b
    cdef int64_t D[9]
    cdef bint alone = one_best is None
    cdef int nt = n_threads if n_threads > 1 else 1
    if stats.shape[1] != 9 or out.shape[0] != stats.shape[0] or sent_offsets[S] != stats.shape[0] \
            or (not alone and one_best.shape[0] != S):
        raise ValueError("doc_gains needs stats [n, 9], one_best [S] or None and out [n] for sent_offsets [S + 1]")
    for k in range(9):
        D[k] = 0
    if not alone:
        for s in range(S):
            b = one_best[s]
            if b < sent_offsets[s] or b >= sent_offsets[s + 1]:
                raise ValueError(f"one_best[{s}] = {b} is not a row of sentence {s}")
            for k in range(9):
                D[k] += stats[b, k]
    if nt > S:
        nt = S if S > 0 else 1
    with nogil:
        for s in prange(S, num_threads=nt, schedule="static"):
            _doc_gains_sentence(stats, sent_offsets[s], sent_offsets[s + 1], -1 if alone else one_best[s], D,
                                ref_divisor, context, scale, &out[0])


cdef void _doc_gains_sentence(const int32_t[:, ::1] stats, int64_t lo, int64_t hi, int64_t b, const int64_t* D,
                              double ref_divisor, double context, double scale, double* out) noexcept nogil:
    """doc_gains of the rows lo .. hi - 1 of one sentence whose 1-best row is b (-1: no
    document, R = 0)."""
    cdef double rest[9]
    cdef double T[9]
    cdef double base
    cdef int64_t h
    cdef Py_ssize_t k
    for k in range(9):
        rest[k] = 0.0 if b < 0 else <double>(D[k] - stats[b, k])
    base = cdec_ibm_bleu(rest, ref_divisor)
    for h in range(lo, hi):
        for k in range(9):
            T[k] = stats[h, k] + context * rest[k]
        out[h] = scale * (cdec_ibm_bleu(T, ref_divisor) - base)


def py_cdec_bleu(const double[::1] t, double ref_divisor=1.0):
    """cdec's smoothed BLEU of one statistics row t float64 [9] (for tests)."""
    if t.shape[0] != 9:
        raise ValueError("t must be float64 [9]")
    return cdec_ibm_bleu(&t[0], ref_divisor)


cdef inline double _bg_gain(const int32_t* x, const double* bg, double ref_divisor) noexcept nogil:
    """Moses background gain of stats x under bg (module comment)."""
    cdef double num = 1.0, den = 1.0, t, r, h, bleu
    cdef Py_ssize_t n
    for n in range(4):
        t = bg[2 * n] + x[2 * n]
        if t <= 0.0:
            return 0.0
        num *= t
        den *= bg[2 * n + 1] + x[2 * n + 1]
    if num <= 0.0:
        return 0.0      # the product of tiny positive matches underflowed: no precision (0/0 was NaN)
    bleu = sqrt(sqrt(num / den))
    r = (bg[8] + x[8]) / ref_divisor
    h = bg[1] + x[1]
    if h < r:
        bleu *= exp(1.0 - r / h)
    return bleu * r


def py_bg_gain(const int32_t[::1] x, const double[::1] bg, double ref_divisor):
    """The kbmira gain of one stats row x int32 [9] under background bg float64 [9] (for tests)."""
    return _bg_gain(&x[0], &bg[0], ref_divisor)


cdef inline double _gain(const int32_t* x, const double* bg, double ref_divisor) noexcept nogil:
    """_bg_gain with the same operations in the same order (bg: a local copy the loop
    can keep in registers)."""
    cdef double t0, t1, t2, t3, num, bleu, r, h
    t0 = bg[0] + x[0]
    t1 = bg[2] + x[2]
    t2 = bg[4] + x[4]
    t3 = bg[6] + x[6]
    if t0 <= 0.0 or t1 <= 0.0 or t2 <= 0.0 or t3 <= 0.0:
        return 0.0
    num = ((t0 * t1) * t2) * t3
    if num <= 0.0:
        return 0.0
    bleu = sqrt(sqrt(num / ((((bg[1] + x[1]) * (bg[3] + x[3])) * (bg[5] + x[5])) * (bg[7] + x[7]))))
    r = (bg[8] + x[8]) / ref_divisor
    h = bg[1] + x[1]
    if h < r:
        bleu *= exp(1.0 - r / h)
    return bleu * r


cdef inline double _bp_r(double r, double h) noexcept nogil:
    """r * exp(1 - r/h) if h < r else r: rises with r up to r = h, then falls; rises with h."""
    if h < r:
        return r * exp(1.0 - r / h)
    return r


cdef bint _gain_bounds(const double* bg, const int32_t* lo, const int32_t* hi, double ref_divisor,
                       double* g_lo, double* g_hi) noexcept nogil:
    """Bounds on the gain of every row whose statistics lie in the box [lo, hi] (int32
    [9] each): the precision product rises with the matches and falls with the totals,
    and r * BP (module comment) rises with the hypothesis length and is unimodal in r.
    Widened by 1e-9 relative, far beyond the rounding of either side. False when they
    are not finite numbers (the caller then bounds nothing)."""
    cdef double num_lo = 1.0, num_hi = 1.0, den_lo = 1.0, den_hi = 1.0, a, b, r_lo, r_hi, h_lo, h_hi, rc
    cdef int n
    for n in range(4):
        a = bg[2 * n] + lo[2 * n]
        b = bg[2 * n] + hi[2 * n]
        num_lo *= a if a > 0.0 else 0.0
        num_hi *= b if b > 0.0 else 0.0
        den_lo *= bg[2 * n + 1] + lo[2 * n + 1]
        den_hi *= bg[2 * n + 1] + hi[2 * n + 1]
    r_lo = (bg[8] + lo[8]) / ref_divisor
    r_hi = (bg[8] + hi[8]) / ref_divisor
    h_lo = bg[1] + lo[1]
    h_hi = bg[1] + hi[1]
    if num_hi <= 0.0:
        g_lo[0] = 0.0
        g_hi[0] = 0.0
        return True
    if not (den_lo > 0.0 and h_lo > 0.0):
        return False
    rc = h_hi
    if rc < r_lo:
        rc = r_lo
    if rc > r_hi:
        rc = r_hi
    g_hi[0] = sqrt(sqrt(num_hi / den_lo)) * _bp_r(rc, h_hi) * (1.0 + 1e-9) + 1e-300
    g_lo[0] = sqrt(sqrt(num_lo / den_hi)) * min(_bp_r(r_lo, h_lo), _bp_r(r_hi, h_lo)) * (1.0 - 1e-9) - 1e-300
    if g_lo[0] < 0.0:
        g_lo[0] = 0.0
    return isfinite(g_hi[0]) and isfinite(g_lo[0]) and g_lo[0] >= 0.0


def py_gain_bounds(const double[::1] bg, const int32_t[::1] lo, const int32_t[::1] hi, double ref_divisor):
    """(bounded, lower, upper): the bounds _gain_bounds puts on the kbmira gain of any
    statistics row in the box lo <= x <= hi (int32 [9] each) under bg float64 [9] (for tests)."""
    cdef double g_lo = 0.0, g_hi = 0.0
    cdef bint ok = _gain_bounds(&bg[0], &lo[0], &hi[0], ref_divisor, &g_lo, &g_hi)
    return bool(ok), g_lo, g_hi


cdef inline bint _beats(double v, double s, int64_t h, double bv, double bs, int64_t b) noexcept nogil:
    """Row h (value v, model score s) is preferred to row b: higher value, then higher
    score, then lower row; the order the selection loops give, in any visiting order."""
    return v > bv or (v == bv and (s > bs or (s == bs and h < b)))


cdef void _row_scores(const double* dense, Py_ssize_t D, const int64_t[::1] sp_indptr, const int32_t[::1] sp_ids,
                      const double[::1] sp_values, const double* w, int64_t lo, int64_t hi,
                      double* out) noexcept nogil:
    """out[h - lo] = w.f_h for rows lo .. hi - 1, summed as NbestCorpus.scores sums (dense
    columns in order, then the sparse entries); four rows at a time, so that the CPU
    overlaps their independent chains of additions."""
    cdef int64_t h = lo, q
    cdef Py_ssize_t j
    cdef double a0, a1, a2, a3
    cdef const double* f
    while h + 4 <= hi:
        f = dense + h * D
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        a3 = 0.0
        for j in range(D):
            a0 += f[j] * w[j]
            a1 += f[D + j] * w[j]
            a2 += f[2 * D + j] * w[j]
            a3 += f[3 * D + j] * w[j]
        out[h - lo] = a0
        out[h - lo + 1] = a1
        out[h - lo + 2] = a2
        out[h - lo + 3] = a3
        h += 4
    while h < hi:
        f = dense + h * D
        a0 = 0.0
        for j in range(D):
            a0 += f[j] * w[j]
        out[h - lo] = a0
        h += 1
    if sp_ids.shape[0]:
        for h in range(lo, hi):
            a0 = out[h - lo]
            for q in range(sp_indptr[h], sp_indptr[h + 1]):
                a0 += sp_values[q] * w[sp_ids[q]]
            out[h - lo] = a0


cdef inline int64_t _first_max(const double* v, int64_t lo, int64_t hi) noexcept nogil:
    """The row of the highest v[h - lo] (ties: the lowest row), as argmax_per_sentence."""
    cdef int64_t h, best = lo
    cdef double top = v[0]
    for h in range(lo + 1, hi):
        if v[h - lo] > top:
            top = v[h - lo]
            best = h
    return best


cdef double _kbmira_sentences(const double* dense, Py_ssize_t D, const int64_t[::1] sp_indptr,
                              const int32_t[::1] sp_ids, const double[::1] sp_values, const double[:, ::1] dense_mv,
                              const int32_t[:, ::1] stats, double ref_divisor, const int64_t[::1] sent_offsets,
                              const int64_t[::1] order, double C, double decay, bint model_bg, bint safe_hope,
                              double* bgp, double* wp, double* up, double* scratch, int64_t* state,
                              const double* ep, int64_t[::1] eval_rows, double* ebuf,
                              const int32_t[:, ::1] stats_lo, const int32_t[:, ::1] stats_hi) noexcept nogil:
    """The sentences of a kbmira pass (kbmira_pass's docstring); with ep (and ebuf, room
    for a sentence) also eval_rows. Returns the summed loss."""
    cdef Py_ssize_t oi, k
    cdef int64_t s, h, lo, hi, hope, fear, model, nh, back
    cdef double v, bh, bf, hs, total = 0.0, sh, gh, g_lo = 0.0, g_hi = 0.0, g
    cdef double bl[9]
    cdef double* sc
    cdef double* gn
    cdef bint bounded = stats_lo is not None, prune
    for oi in range(order.shape[0]):
        s = order[oi]
        lo = sent_offsets[s]
        hi = sent_offsets[s + 1]
        nh = hi - lo
        sc = scratch
        gn = scratch + nh
        _row_scores(dense, D, sp_indptr, sp_ids, sp_values, wp, lo, hi, sc)
        if ep != NULL:
            _row_scores(dense, D, sp_indptr, sp_ids, sp_values, ep, lo, hi, ebuf)
            eval_rows[s] = _first_max(ebuf, lo, hi)
        model = _first_max(sc, lo, hi)
        for k in range(9):
            bl[k] = bgp[k]
        prune = bounded and _gain_bounds(bl, &stats_lo[s, 0], &stats_hi[s, 0], ref_divisor, &g_lo, &g_hi)
        if prune:
            # start from the top model score's row: its s + g and s - g are the bars
            g = _gain(&stats[model, 0], bl, ref_divisor)
            gn[model - lo] = g
            hope = model
            fear = model
            bh = sc[model - lo] + g
            bf = sc[model - lo] - g
            for h in range(lo, hi):
                if h == model or (sc[h - lo] + g_hi < bh and sc[h - lo] - g_lo < bf):
                    continue
                g = _gain(&stats[h, 0], bl, ref_divisor)
                gn[h - lo] = g
                v = sc[h - lo] + g
                if _beats(v, sc[h - lo], h, bh, sc[hope - lo], hope):
                    bh = v
                    hope = h
                v = sc[h - lo] - g
                if _beats(v, sc[h - lo], h, bf, sc[fear - lo], fear):
                    bf = v
                    fear = h
        else:
            for h in range(lo, hi):
                gn[h - lo] = _gain(&stats[h, 0], bl, ref_divisor)
            hope = lo
            fear = lo
            bh = sc[0] + gn[0]
            bf = sc[0] - gn[0]
            for h in range(lo + 1, hi):
                v = sc[h - lo] + gn[h - lo]
                if v > bh or (v == bh and sc[h - lo] > sc[hope - lo]):
                    bh = v
                    hope = h
                v = sc[h - lo] - gn[h - lo]
                if v > bf or (v == bf and sc[h - lo] > sc[fear - lo]):
                    bf = v
                    fear = h
        if safe_hope:
            sh = sc[hope - lo]
            gh = 5.0 * gn[hope - lo]
            if sh > 1e-8 or sh < -1e-8:
                if gh < 0.0:
                    gh = -gh
                if sh < 0.0:
                    sh = -sh
                if gh / sh < 1.0:
                    hs = gh / sh
                    hope = lo
                    bh = hs * sc[0] + gn[0]
                    for h in range(lo + 1, hi):
                        v = hs * sc[h - lo] + gn[h - lo]
                        if v > bh or (v == bh and sc[h - lo] > sc[hope - lo]):
                            bh = v
                            hope = h
        if gn[hope - lo] > gn[fear - lo]:
            total += _pa_step(dense_mv, sp_indptr, sp_ids, sp_values, D, hope, fear,
                              sc[hope - lo], sc[fear - lo], gn[hope - lo], gn[fear - lo],
                              C, wp, up, state)
        back = model if model_bg else hope
        for k in range(9):
            bgp[k] = decay * bgp[k] + stats[back, k]
    return total


def kbmira_pass(const double[:, ::1] dense, const int64_t[::1] sp_indptr, const int32_t[::1] sp_ids,
                const double[::1] sp_values, const int32_t[:, ::1] stats, double ref_divisor,
                const int64_t[::1] sent_offsets, const int64_t[::1] order, double C, double decay,
                bint model_bg, bint safe_hope, double[::1] bg, double[::1] w, double[::1] u,
                double[::1] scratch, int64_t[::1] state, const double[::1] eval_w=None,
                int64_t[::1] eval_rows=None, const int32_t[:, ::1] stats_lo=None,
                const int32_t[:, ::1] stats_hi=None):
    """One kbmira pass over the sentences ``order`` (int64 [m]), Moses semantics.

    Per sentence, with s = w.f and gain g = _bg_gain(stats row, bg): hope = argmax
    (hs*s + g) (hs = 1; with safe_hope, if 5*|g_hope| < |s_hope| and |s_hope| > 1e-8 the
    hope is chosen again with hs = 5*|g_hope| / |s_hope|), fear = argmax (s - g),
    model = argmax s (ties: larger s, then lowest row). A PA-I step (module comment) when
    hope != fear and g_hope > g_fear; then bg <- decay*bg + stats[hope] (stats[model] with
    model_bg). stats int32 [n, 9]; bg float64 [9]; scratch float64 [2 * max sentence size];
    other arguments as mira_pass. Returns the summed loss of the steps taken.

    With ``eval_w`` (float64 [F]) the pass also finds eval_rows[s] (int64 [S]) for every
    sentence s it visits: the row of the highest eval_w.f (ties: the lowest row), summed
    as NbestCorpus.scores sums, i.e. the 1-best of the weights the last pass ended with,
    while the rows are at hand instead of in a pass of its own.

    With ``stats_lo`` / ``stats_hi`` (int32 [S, 9], each sentence's column minima and
    maxima; not with safe_hope) gains are computed only for rows that can still be hope
    or fear: the gains of a sentence's rows lie between bounds taken from its box, so a
    row whose s + upper bound falls below the best s + g so far (and s - lower bound
    below the best s - g) is passed over. The result is the same; most rows of a
    sentence, those far below its top model scores, skip the gain (two square roots and
    an exponential).
    """
    cdef Py_ssize_t D = dense.shape[1], S = sent_offsets.shape[0] - 1, s
    cdef int64_t biggest = 1
    cdef double total = 0.0
    cdef const double* ep = NULL
    cdef const double* dbase = &dense[0, 0] if dense.shape[0] > 0 and D > 0 else NULL
    cdef double* ebuf = NULL
    if eval_w is not None:
        if eval_rows is None or eval_w.shape[0] != w.shape[0] or eval_rows.shape[0] < S:
            raise ValueError("eval_w needs eval_rows [S] and as many entries as w")
        ep = &eval_w[0]
        for s in range(S):
            biggest = max(biggest, sent_offsets[s + 1] - sent_offsets[s])
        ebuf = <double*>malloc(biggest * sizeof(double))
        if ebuf == NULL:
            raise MemoryError()
    if stats_lo is not None and (safe_hope or stats_hi is None or stats_lo.shape[0] < S
                                 or stats_hi.shape[0] != stats_lo.shape[0] or stats_lo.shape[1] != 9
                                 or stats_hi.shape[1] != 9):
        free(ebuf)
        raise ValueError("stats_lo and stats_hi must both be [S, 9], and not with safe_hope")
    with nogil:
        total = _kbmira_sentences(dbase, D, sp_indptr, sp_ids, sp_values, dense, stats, ref_divisor, sent_offsets,
                                  order, C, decay, model_bg, safe_hope, &bg[0], &w[0], &u[0], &scratch[0],
                                  &state[0], ep, eval_rows, ebuf, stats_lo, stats_hi)
    free(ebuf)
    return total
