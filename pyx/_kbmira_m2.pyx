# Moses's kbmira with the M2 scorer or BLEU (mtplug.optimizers.kbmira_m2 says what and why): one
# training pass and one evaluation, in single precision where Moses's are (ValType,
# ScoreStatsType and the weights are float in mosesdecoder's mert/). Every float operation
# is stored in a float variable, so each rounds to float as Moses's does on x86-64 (SSE, no
# contraction into fused multiply-adds without -march). The slow Python reference is
# mtplug.optimizers.kbmira_m2._Reference (kbmira_m2(..., reference=True); the tests compare bit for bit).
#
# Features: dense float32 [n, D] (ids 0..D-1) plus CSR rows (ids >= D ascending, float32
# values). Weights w, totals float32 [F]; last int64 [F] (the step count at each weight's
# last update); state int64 [1] (steps). Statistics float32 [n, k]: M2 (kind 0) k = 4:
# correct, proposed, gold, source length; BLEU (kind 1) k = 9: matches and counts of
# 1..4-grams interleaved, then the reference length. Background bg float32 [k].

from libc.math cimport expf, fabsf, logf
from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc


cdef inline float _f_beta(float c, float pr, float g, float bb) noexcept nogil:
    """M2Scorer::calculateScore: P, R divided in double and stored in float."""
    cdef float p, r, denom
    if pr != 0:
        p = <float>(<double>c / <double>pr)
    else:
        p = 1.0
    if g != 0:
        r = <float>(<double>c / <double>g)
    else:
        r = 1.0
    denom = bb * p
    denom = denom + r
    if denom == 0:
        return 0.0
    return <float>((1.0 + <double>bb) * <double>p * <double>r / <double>denom)


cdef inline float _bleu(const float* t) noexcept nogil:
    """BleuScorer::calculateScore of float statistics t[0..8]: 0 when a match count is 0;
    the log precisions summed in float (logf, as Moses's log of a float), times 0.25, the
    brevity 1 - r/c in float added when negative, then expf."""
    cdef float logbleu = 0.0, a, b, brevity
    cdef int i
    for i in range(4):
        if t[2 * i] == 0:
            return 0.0
        a = logf(t[2 * i])
        b = logf(t[2 * i + 1])
        a = a - b
        logbleu = logbleu + a
    logbleu = logbleu * <float>0.25
    brevity = t[8] / t[1]
    brevity = <float>1.0 - brevity
    if brevity < 0:
        logbleu = logbleu + brevity
    return expf(logbleu)


cdef inline float _gain(int kind, const float[:, ::1] stats, int64_t h, const float* bg, float bb) noexcept nogil:
    """Scorer::calculateSentenceLevelBackgroundScore: score(x + bg) * reference length of
    (x + bg) (M2: F_beta times column 3, the source length; BLEU: times column 8)."""
    cdef float t[9]
    cdef int j
    if kind == 0:
        for j in range(4):
            t[j] = stats[h, j] + bg[j]
        return _f_beta(t[0], t[1], t[2], bb) * t[3]
    for j in range(9):
        t[j] = stats[h, j] + bg[j]
    return _bleu(t) * t[8]


cdef inline float _score(const float[:, ::1] dense, Py_ssize_t D, const int64_t[::1] indptr,
                         const int64_t[::1] ids, const float[::1] vals, const float* w, int64_t r) noexcept nogil:
    """MiraWeightVector::score: w.f summed feature by feature in float."""
    cdef float acc = 0.0, prod
    cdef Py_ssize_t j
    cdef int64_t k
    for j in range(D):
        prod = w[j] * dense[r, j]
        acc = acc + prod
    for k in range(indptr[r], indptr[r + 1]):
        prod = w[ids[k]] * vals[k]
        acc = acc + prod
    return acc


cdef inline int64_t _model_best(const float[:, ::1] dense, Py_ssize_t D, const int64_t[::1] indptr,
                                const int64_t[::1] ids, const float[::1] vals, const float* w, int64_t lo,
                                int64_t hi) noexcept nogil:
    """The first row of lo..hi-1 (hi > lo) with the highest float model score (Evaluate's
    model-best: a later row must score strictly higher)."""
    cdef int64_t best = lo, h
    cdef float top = _score(dense, D, indptr, ids, vals, w, lo), v
    for h in range(lo + 1, hi):
        v = _score(dense, D, indptr, ids, vals, w, h)
        if v > top:
            top = v
            best = h
    return best


cdef inline void _touch(float* w, float* totals, int64_t* last, int64_t steps, int64_t i, float delta) noexcept nogil:
    """MiraWeightVector::update(index, delta): the lazy total, then the weight."""
    cdef float t = <float>(steps - last[i])
    t = t * w[i]
    t = t + delta
    totals[i] = totals[i] + t
    w[i] = w[i] + delta
    last[i] = steps


def m2_pass(const float[:, ::1] dense, const int64_t[::1] indptr, const int64_t[::1] ids, const float[::1] vals,
            const float[:, ::1] stats, const int64_t[::1] sent_offsets, const int64_t[::1] order, float beta,
            float C, float decay, bint model_bg, bint safe_hope, float[::1] bg, float[::1] w, float[::1] totals,
            int64_t[::1] last, int64_t[::1] state):
    """One kbmira training pass over the sentences ``order`` (int64 [m]) in place on bg, w,
    totals, last and state (steps); returns the pass's summed loss (a float, summed in
    float) as a Python float. Moses's NbestHopeFearDecoder::HopeFear and kbmira.cpp's
    update (mtplug.optimizers.kbmira_m2)."""
    return _pass(0, dense, indptr, ids, vals, stats, sent_offsets, order, beta, C, decay, model_bg, safe_hope, bg,
                 w, totals, last, state)


def bleu_pass(const float[:, ::1] dense, const int64_t[::1] indptr, const int64_t[::1] ids, const float[::1] vals,
              const float[:, ::1] stats, const int64_t[::1] sent_offsets, const int64_t[::1] order,
              float C, float decay, bint model_bg, bint safe_hope, float[::1] bg, float[::1] w, float[::1] totals,
              int64_t[::1] last, int64_t[::1] state):
    """:func:`m2_pass` with Moses's BLEU (statistics float32 [n, 9], bg [9])."""
    return _pass(1, dense, indptr, ids, vals, stats, sent_offsets, order, 0.0, C, decay, model_bg, safe_hope, bg,
                 w, totals, last, state)


cdef float _pass(int kind, const float[:, ::1] dense, const int64_t[::1] indptr, const int64_t[::1] ids,
                 const float[::1] vals, const float[:, ::1] stats, const int64_t[::1] sent_offsets,
                 const int64_t[::1] order, float beta, float C, float decay, bint model_bg, bint safe_hope,
                 float[::1] bg, float[::1] w, float[::1] totals, int64_t[::1] last, int64_t[::1] state) except? -1:
    """The pass of :func:`m2_pass` for ``kind`` 0 (M2) or 1 (BLEU)."""
    cdef Py_ssize_t D = dense.shape[1], oi, j
    cdef Py_ssize_t S = sent_offsets.shape[0] - 1, K = stats.shape[1]
    cdef int64_t s, lo, hi, h, hope, fear, model, back, a, b, biggest = 1, nd, steps
    cdef float bb = beta * beta, hs, v, best, hope_bleu, hope_model, ratio, delta, ws, loss, sq, eta, d, prod
    cdef float total_loss = 0.0
    cdef bint again
    for s in range(S):
        biggest = max(biggest, sent_offsets[s + 1] - sent_offsets[s])
    cdef int64_t max_sparse = 0
    for s in range(S):
        for h in range(sent_offsets[s], sent_offsets[s + 1]):
            max_sparse = max(max_sparse, indptr[h + 1] - indptr[h])
    cdef float* sc = <float*>malloc(2 * biggest * sizeof(float))
    cdef float* dv = <float*>malloc((D + 2 * max_sparse + 1) * sizeof(float))
    cdef int64_t* di = <int64_t*>malloc((D + 2 * max_sparse + 1) * sizeof(int64_t))
    if sc == NULL or dv == NULL or di == NULL:
        free(sc)
        free(dv)
        free(di)
        raise MemoryError()
    cdef float* g = sc + biggest
    with nogil:
        for oi in range(order.shape[0]):
            s = order[oi]
            lo = sent_offsets[s]
            hi = sent_offsets[s + 1]
            if hi <= lo:
                continue
            for h in range(lo, hi):
                sc[h - lo] = _score(dense, D, indptr, ids, vals, &w[0], h)
                g[h - lo] = _gain(kind, stats, h, &bg[0], bb)
            fear = lo
            model = lo
            best = sc[0] - g[0]
            for h in range(lo + 1, hi):
                v = sc[h - lo] - g[h - lo]
                if v > best:
                    best = v
                    fear = h
                if sc[h - lo] > sc[model - lo]:
                    model = h
            hs = 1.0
            again = True
            while True:
                hope = lo
                v = hs * sc[0]
                best = v + g[0]
                for h in range(lo + 1, hi):
                    v = hs * sc[h - lo]
                    v = v + g[h - lo]
                    if v > best:
                        best = v
                        hope = h
                hope_bleu = g[hope - lo] * <float>5.0
                hope_model = sc[hope - lo]
                if safe_hope and again and fabsf(hope_model) > 1e-8:
                    ratio = fabsf(hope_bleu) / fabsf(hope_model)
                    if ratio < hs:
                        hs = ratio
                        again = False
                        continue
                break
            if hope == fear or not (g[hope - lo] > g[fear - lo]):
                continue
            # diff = f_hope - f_fear: every dense entry, sparse merged by id (MiraFeatureVector's operator-)
            nd = 0
            for j in range(D):
                di[nd] = j
                dv[nd] = dense[hope, j] - dense[fear, j]
                nd += 1
            a = indptr[hope]
            b = indptr[fear]
            while a < indptr[hope + 1] and b < indptr[fear + 1]:
                if ids[a] < ids[b]:
                    di[nd] = ids[a]
                    dv[nd] = vals[a]
                    nd += 1
                    a += 1
                elif ids[b] < ids[a]:
                    di[nd] = ids[b]
                    dv[nd] = -vals[b]
                    nd += 1
                    b += 1
                else:
                    d = vals[a] - vals[b]
                    if fabsf(d) > 1e-6:
                        di[nd] = ids[a]
                        dv[nd] = d
                        nd += 1
                    a += 1
                    b += 1
            while a < indptr[hope + 1]:
                di[nd] = ids[a]
                dv[nd] = vals[a]
                nd += 1
                a += 1
            while b < indptr[fear + 1]:
                di[nd] = ids[b]
                dv[nd] = -vals[b]
                nd += 1
                b += 1
            delta = g[hope - lo] - g[fear - lo]
            ws = 0.0
            for j in range(nd):
                prod = w[di[j]] * dv[j]
                ws = ws + prod
            loss = delta - ws
            if loss > 0:
                sq = 0.0
                for j in range(nd):
                    prod = dv[j] * dv[j]
                    sq = sq + prod
                eta = loss / sq
                if not (eta < C):
                    eta = C
                state[0] += 1
                steps = state[0]
                for j in range(nd):
                    prod = dv[j] * eta
                    _touch(&w[0], &totals[0], &last[0], steps, di[j], prod)
                total_loss = total_loss + loss
            back = model if model_bg else hope
            for j in range(K):
                v = bg[j] * decay
                bg[j] = v + stats[back, j]
    free(sc)
    free(dv)
    free(di)
    return total_loss


def m2_average(float[::1] w, float[::1] totals, int64_t[::1] last, int64_t steps, float[::1] out):
    """MiraWeightVector::avg: bring every total up to date (fixTotals, in place), then out =
    totals / steps (w while there is no step)."""
    cdef Py_ssize_t i
    for i in range(w.shape[0]):
        _touch(&w[0], &totals[0], &last[0], steps, i, 0.0)
        if steps == 0:
            out[i] = w[i]
        else:
            out[i] = totals[i] / <float>steps


def m2_evaluate(const float[:, ::1] dense, const int64_t[::1] indptr, const int64_t[::1] ids,
                const float[::1] vals, const float[:, ::1] stats, const int64_t[::1] sent_offsets, float beta,
                const float[::1] w):
    """HopeFearDecoder::Evaluate: the corpus F_beta (float, as a Python float) of each
    sentence's first highest-scoring row under ``w``, statistics summed in float."""
    cdef Py_ssize_t S = sent_offsets.shape[0] - 1, D = dense.shape[1], s
    cdef int64_t best
    cdef float t0 = 0.0, t1 = 0.0, t2 = 0.0
    with nogil:
        for s in range(S):
            if sent_offsets[s + 1] <= sent_offsets[s]:
                continue
            best = _model_best(dense, D, indptr, ids, vals, &w[0], sent_offsets[s], sent_offsets[s + 1])
            t0 = t0 + stats[best, 0]
            t1 = t1 + stats[best, 1]
            t2 = t2 + stats[best, 2]
    return _f_beta(t0, t1, t2, beta * beta)


def bleu_evaluate(const float[:, ::1] dense, const int64_t[::1] indptr, const int64_t[::1] ids,
                  const float[::1] vals, const float[:, ::1] stats, const int64_t[::1] sent_offsets,
                  const float[::1] w):
    """HopeFearDecoder::Evaluate with BLEU: BleuScorer::calculateScore (a float, as a Python
    float) of each sentence's first highest-scoring row under ``w``, statistics [n, 9]
    summed in float."""
    cdef Py_ssize_t S = sent_offsets.shape[0] - 1, D = dense.shape[1], s
    cdef int64_t best
    cdef float t[9]
    cdef int j
    for j in range(9):
        t[j] = 0.0
    with nogil:
        for s in range(S):
            if sent_offsets[s + 1] <= sent_offsets[s]:
                continue
            best = _model_best(dense, D, indptr, ids, vals, &w[0], sent_offsets[s], sent_offsets[s + 1])
            for j in range(9):
                t[j] = t[j] + stats[best, j]
    return _bleu(t)
