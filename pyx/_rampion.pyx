# RAMPION's inner loop (Gimpel & Smith 2012, Algorithm 1, lines 5-9): one epoch of
# stochastic subgradient descent over the sentences in document order, with the hope
# side fixed (imputed by the CCCP step in Python) and the fear picked at the current
# weights. Per sentence s, in this order:
#
#   sc_h   = θ·f_h                               (current weights, h in sentence s)
#   fear   = argmax_h fear_model*sc_h + fear_gain*g_h          (hard; ties: larger sc_h,
#            then lowest row — the rule of _hopefear.select)
#            or p_h ∝ exp(fear_model*sc_h + fear_gain*g_h)     (soft)
#   θ     -= η·C/N·(θ − θ0)                      (shrink = 1 − η·C/N)
#   θ     += η·(Σ_h q_h f_h − f_fear)            (q: hope distribution, one-hot when hard;
#                                                  soft fear: − Σ_h p_h f_h)
#
# Bayes risk (risk_alpha > 0; the hope is unused): p_h ∝ exp(fear_model*sc_h + fear_gain*g_h)
# as the soft fear, ḡ = Σ_h p_h g_h, and
#   θ     += η·Σ_h risk_alpha·p_h·(g_h − ḡ)·f_h  (= −η·∇ Σ_h p_h·cost_h, cost = α(1 − g))
#
# θ is kept as θ0 + scale·v (scikit-learn's WeightVector trick), so the shrink costs O(1)
# and a sentence costs O(its rows' non-zeros): sc_h = base_h + scale·(v·f_h) with
# base_h = θ0·f_h. The caller passes u = θ − θ0; it is turned into v in place and back at
# the end (scale folded in), so u holds θ − θ0 after the epoch.

from libc.math cimport exp, isfinite
from libc.stdint cimport int32_t, int64_t


def ssd_epoch(const double[:, ::1] dense, const int64_t[::1] sp_indptr, const int32_t[::1] sp_ids,
              const double[::1] sp_values, const int64_t[::1] sent_offsets, const double[::1] base,
              const double[::1] gains, const double[::1] hope_prob, double fear_model, double fear_gain,
              bint soft_fear, double eta, double shrink, double[::1] u, double[::1] work,
              double risk_alpha=0.0):
    """One SSD epoch; returns (status, sentence): (0, -1) or (1, s) when a model score of
    sentence s is not finite (u is then left in its state at that point, scale folded in).

    dense float64 [n_hyp, n_dense]; sp_indptr int64 [n_hyp + 1], sp_ids int32 (global
    feature ids < n_features), sp_values float64; sent_offsets int64 [S + 1] (no empty
    sentence); base float64 [n_hyp] = θ0·f_h; gains float64 [n_hyp] (sentence metric g);
    hope_prob float64 [n_hyp] (per sentence a distribution; zeros are skipped);
    0 < shrink <= 1; u float64 [n_features] = θ − θ0 (in/out); work float64 [max rows of a
    sentence] (scratch). risk_alpha > 0: Bayes risk's step instead (soft_fear forced,
    hope_prob ignored), coefficient risk_alpha·p_h·(g_h − ḡ) per row.
    """
    cdef Py_ssize_t S = sent_offsets.shape[0] - 1, nd = dense.shape[1], F = u.shape[0]
    cdef Py_ssize_t s, k
    cdef int64_t h, lo, hi, j, best
    cdef double scale = 1.0, sc, val, bv, bsc, m, z, coef, q, gbar = 0.0
    cdef bint risk = risk_alpha > 0.0
    cdef bint soft = soft_fear or risk
    cdef int status = 0
    cdef Py_ssize_t bad = -1
    with nogil:
        for s in range(S):
            lo = sent_offsets[s]
            hi = sent_offsets[s + 1]
            # model scores at the current weights
            for h in range(lo, hi):
                sc = 0.0
                for k in range(nd):
                    sc += dense[h, k] * u[k]
                for j in range(sp_indptr[h], sp_indptr[h + 1]):
                    sc += sp_values[j] * u[sp_ids[j]]
                work[h - lo] = base[h] + scale * sc
            # fear
            best = lo
            bsc = work[0]
            bv = fear_model * bsc + fear_gain * gains[lo]
            for h in range(lo + 1, hi):
                sc = work[h - lo]
                val = fear_model * sc + fear_gain * gains[h]
                if val > bv or (val == bv and sc > bsc):
                    best = h
                    bv = val
                    bsc = sc
            if not isfinite(bv):
                status = 1
                bad = s
                break
            if soft:
                m = bv
                z = 0.0
                for h in range(lo, hi):
                    val = exp(fear_model * work[h - lo] + fear_gain * gains[h] - m)
                    work[h - lo] = val
                    z += val
                for h in range(lo, hi):
                    work[h - lo] /= z
                if risk:
                    gbar = 0.0
                    for h in range(lo, hi):
                        gbar += work[h - lo] * gains[h]
            # regulariser: θ − θ0 shrinks by (1 − η·C/N)
            scale *= shrink
            # θ += η·(E_hope[f] − E_fear[f])
            for h in range(lo, hi):
                if risk:
                    q = risk_alpha * work[h - lo] * (gains[h] - gbar)
                elif soft_fear:
                    q = hope_prob[h] - work[h - lo]
                elif h == best:
                    q = hope_prob[h] - 1.0
                else:
                    q = hope_prob[h]
                if q == 0.0:
                    continue
                coef = eta * q / scale
                for k in range(nd):
                    u[k] += coef * dense[h, k]
                for j in range(sp_indptr[h], sp_indptr[h + 1]):
                    u[sp_ids[j]] += coef * sp_values[j]
            if scale < 1e-150:
                for k in range(F):
                    u[k] *= scale
                scale = 1.0
        for k in range(F):
            u[k] *= scale
    return status, bad
