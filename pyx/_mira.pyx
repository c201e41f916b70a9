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

from _csr_diff cimport RowDiff, row_diff_next, row_diff_start
from libc.math cimport exp, sqrt
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


def mira_pass(const double[:, ::1] dense, const int64_t[::1] sp_indptr, const int32_t[::1] sp_ids,
              const double[::1] sp_values, const double[::1] gains, const int64_t[::1] sent_offsets,
              const int64_t[::1] order, double hope_model, double hope_gain, double fear_model,
              double fear_gain, double C, double[::1] w, double[::1] u, double[::1] scratch,
              int64_t[::1] state, const int32_t[:, ::1] stats=None, double ref_divisor=1.0,
              double decay=0.9, double[::1] bg=None):
    """One online-MIRA pass over the sentences ``order`` (int64 [m], visited in that order).

    dense float64 [n, D]; sp_indptr int64 [n + 1], sp_ids int32, sp_values float64 (CSR,
    ids >= D); gains float64 [n] (sentence metric g); sent_offsets int64 [S + 1] (no empty
    sentence); hope = argmax hope_model*s + hope_gain*g, fear = argmax fear_model*s +
    fear_gain*g over the sentence's rows with s = w.f (ties: larger s, then lowest row);
    then one PA-I step with cap C (module comment). w, u float64 [F] updated in place;
    scratch float64 [2 * max sentence size]; state int64 [2] = (K, steps) updated.

    With ``bg`` (float64 [9], updated in place) the gains are pseudo-document BLEU instead
    (Chiang et al. 2008): g_h = _bg_gain(stats[h], bg) at the time the sentence is visited,
    and afterwards bg <- decay * (bg + stats of the sentence's model 1-best); stats int32
    [n, 9]. Returns the summed loss of the steps taken.
    """
    cdef Py_ssize_t D = dense.shape[1], oi, m = order.shape[0], k
    cdef int64_t s, h, lo, hi, hope, fear, best
    cdef double v, bh, bf, total = 0.0
    cdef double* wp = &w[0]
    cdef double* up = &u[0]
    cdef bint pseudo = bg is not None
    cdef const double* g
    cdef double* gs = &scratch[0] + (scratch.shape[0] // 2)
    if pseudo and (stats is None or stats.shape[1] != 9 or bg.shape[0] != 9):
        raise ValueError("pseudo-document gains need stats [n, 9] and bg [9]")
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
            hope = lo
            fear = lo
            best = lo
            bh = hope_model * scratch[0] + hope_gain * g[0]
            bf = fear_model * scratch[0] + fear_gain * g[0]
            for h in range(lo + 1, hi):
                v = hope_model * scratch[h - lo] + hope_gain * g[h - lo]
                if v > bh or (v == bh and scratch[h - lo] > scratch[hope - lo]):
                    bh = v
                    hope = h
                v = fear_model * scratch[h - lo] + fear_gain * g[h - lo]
                if v > bf or (v == bf and scratch[h - lo] > scratch[fear - lo]):
                    bf = v
                    fear = h
                if scratch[h - lo] > scratch[best - lo]:
                    best = h
            total += _pa_step(dense, sp_indptr, sp_ids, sp_values, D, hope, fear,
                              scratch[hope - lo], scratch[fear - lo], g[hope - lo], g[fear - lo],
                              C, wp, up, &state[0])
            if pseudo:
                for k in range(9):
                    bg[k] = decay * (bg[k] + stats[best, k])
    return total


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
    bleu = sqrt(sqrt(num / den))
    r = (bg[8] + x[8]) / ref_divisor
    h = bg[1] + x[1]
    if h < r:
        bleu *= exp(1.0 - r / h)
    return bleu * r


def py_bg_gain(const int32_t[::1] x, const double[::1] bg, double ref_divisor):
    """The kbmira gain of one stats row x int32 [9] under background bg float64 [9] (for tests)."""
    return _bg_gain(&x[0], &bg[0], ref_divisor)


def kbmira_pass(const double[:, ::1] dense, const int64_t[::1] sp_indptr, const int32_t[::1] sp_ids,
                const double[::1] sp_values, const int32_t[:, ::1] stats, double ref_divisor,
                const int64_t[::1] sent_offsets, const int64_t[::1] order, double C, double decay,
                bint model_bg, bint safe_hope, double[::1] bg, double[::1] w, double[::1] u,
                double[::1] scratch, int64_t[::1] state):
    """One kbmira pass over the sentences ``order`` (int64 [m]), Moses semantics.

    Per sentence, with s = w.f and gain g = _bg_gain(stats row, bg): hope = argmax
    (hs*s + g) (hs = 1; with safe_hope, if 5*|g_hope| < |s_hope| and |s_hope| > 1e-8 the
    hope is chosen again with hs = 5*|g_hope| / |s_hope|), fear = argmax (s - g),
    model = argmax s (ties: larger s, then lowest row). A PA-I step (module comment) when
    hope != fear and g_hope > g_fear; then bg <- decay*bg + stats[hope] (stats[model] with
    model_bg). stats int32 [n, 9]; bg float64 [9]; scratch float64 [2 * max sentence size];
    other arguments as mira_pass. Returns the summed loss of the steps taken.
    """
    cdef Py_ssize_t D = dense.shape[1], oi, m = order.shape[0], k
    cdef int64_t s, h, lo, hi, hope, fear, model, nh, back
    cdef double v, bh, bf, bm, hs, total = 0.0, sh, gh
    cdef double* wp = &w[0]
    cdef double* up = &u[0]
    cdef double* bgp = &bg[0]
    cdef double* sc
    cdef double* gn
    with nogil:
        for oi in range(m):
            s = order[oi]
            lo = sent_offsets[s]
            hi = sent_offsets[s + 1]
            nh = hi - lo
            sc = &scratch[0]
            gn = &scratch[nh]
            for h in range(lo, hi):
                sc[h - lo] = _row_score(dense, sp_indptr, sp_ids, sp_values, wp, D, h)
                gn[h - lo] = _bg_gain(&stats[h, 0], bgp, ref_divisor)
            hope = lo
            fear = lo
            model = lo
            bh = sc[0] + gn[0]
            bf = sc[0] - gn[0]
            bm = sc[0]
            for h in range(lo + 1, hi):
                v = sc[h - lo] + gn[h - lo]
                if v > bh or (v == bh and sc[h - lo] > sc[hope - lo]):
                    bh = v
                    hope = h
                v = sc[h - lo] - gn[h - lo]
                if v > bf or (v == bf and sc[h - lo] > sc[fear - lo]):
                    bf = v
                    fear = h
                if sc[h - lo] > bm:
                    bm = sc[h - lo]
                    model = h
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
                total += _pa_step(dense, sp_indptr, sp_ids, sp_values, D, hope, fear,
                                  sc[hope - lo], sc[fear - lo], gn[hope - lo], gn[fear - lo],
                                  C, wp, up, &state[0])
            back = model if model_bg else hope
            for k in range(9):
                bgp[k] = decay * bgp[k] + stats[back, k]
    return total
