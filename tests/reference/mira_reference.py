"""Scalar, obvious MIRA references: selection, the PA-I step, the kbmira gain and whole passes.

Features are plain Python lists (dense + sparse merged into one full vector per row).
"""

from __future__ import annotations

import math


def full_rows(corpus):
    """Every hypothesis as a list of F floats."""
    rows = []
    nd, F = corpus.n_dense, corpus.n_features
    for h in range(corpus.n_hypotheses):
        f = [float(x) for x in corpus.dense[h]] + [0.0] * (F - nd)
        for i, v in corpus.sparse_row(h):
            f[i] += v
        rows.append(f)
    return rows


def dot(a, b):
    return sum(x * y for x, y in zip(a, b))


def argmax(rows, scores, values):
    """Index into rows of the largest value (ties: larger score, then first)."""
    best = rows[0]
    for h in rows[1:]:
        if values[h] > values[best] or (values[h] == values[best] and scores[h] > scores[best]):
            best = h
    return best


def pa_step(w, f_hope, f_fear, g_hope, g_fear, C):
    """(new w, loss, stepped): loss = (w·f- − w·f+) + (g+ − g-), δ = min(C, loss/‖f+ − f-‖²)."""
    diff = [a - b for a, b in zip(f_hope, f_fear)]
    loss = (dot(w, f_fear) - dot(w, f_hope)) + (g_hope - g_fear)
    sq = dot(diff, diff)
    if loss <= 0 or sq == 0:
        return list(w), loss, False
    delta = min(C, loss / sq)
    return [x + delta * d for x, d in zip(w, diff)], loss, True


def bg_gain(x, bg, divisor=1.0):
    """Moses kbmira gain: T = bg + x; BLEU(T) * T[8] / divisor (:func:`corpus_bleu`)."""
    t = [a + b for a, b in zip(bg, x)]
    return corpus_bleu(t, divisor) * (t[8] / divisor)


def top_rows(hs, scores, k):
    """The k rows of hs with the highest score (ties: the lower rows), in row order; all of
    them when k is 0 or at least len(hs) (Eidelman's MB fear list)."""
    if k <= 0 or k >= len(hs):
        return list(hs)
    return sorted(sorted(hs, key=lambda h: (-scores[h], h))[:k])


def mira_pass(rows, gains, offsets, order, hope, fear, C, w, history, fear_list=0, chosen=None):
    """One online-MIRA pass; hope/fear = (model_coef, gain_coef); appends w after each step.
    fear_list K > 0: the fear among the sentence's K best rows by model score (top_rows);
    chosen: a dict, chosen[s] = (hope, fear, model 1-best at the visit) of every sentence visited."""
    for s in order:
        hs = list(range(offsets[s], offsets[s + 1]))
        scores = {h: dot(w, rows[h]) for h in hs}
        p = argmax(hs, scores, {h: hope[0] * scores[h] + hope[1] * gains[h] for h in hs})
        cand = top_rows(hs, scores, fear_list)
        q = argmax(cand, scores, {h: fear[0] * scores[h] + fear[1] * gains[h] for h in cand})
        if chosen is not None:
            chosen[s] = (p, q, argmax(hs, scores, scores))
        if p != q:
            w, _, stepped = pa_step(w, rows[p], rows[q], gains[p], gains[q], C)
            if stepped:
                history.append(list(w))
    return w


def kbmira_pass(rows, stats, offsets, order, C, decay, model_bg, bg, w, history, divisor=1.0):
    """One kbmira pass (no safe_hope); bg (list of 9) and history updated in place."""
    for s in order:
        hs = list(range(offsets[s], offsets[s + 1]))
        scores = {h: dot(w, rows[h]) for h in hs}
        g = {h: bg_gain(stats[h], bg, divisor) for h in hs}
        p = argmax(hs, scores, {h: scores[h] + g[h] for h in hs})
        q = argmax(hs, scores, {h: scores[h] - g[h] for h in hs})
        m = hs[0]
        for h in hs:
            if scores[h] > scores[m]:
                m = h
        if p != q and g[p] > g[q]:
            w, _, stepped = pa_step(w, rows[p], rows[q], g[p], g[q], C)
            if stepped:
                history.append(list(w))
        back = stats[m] if model_bg else stats[p]
        for k in range(9):
            bg[k] = decay * bg[k] + back[k]
    return w


def mira_pass_pseudo_doc(rows, stats, offsets, order, hope, fear, C, decay, bg, w, history, divisor=1.0):
    """Online MIRA with pseudo-document gains (Chiang et al. 2008): the gains of a sentence
    are bg_gain under the background when it is visited; afterwards bg <- decay * (bg + stats
    of the model 1-best). bg (list of 9) and history updated in place."""
    for s in order:
        hs = list(range(offsets[s], offsets[s + 1]))
        scores = {h: dot(w, rows[h]) for h in hs}
        g = {h: bg_gain(stats[h], bg, divisor) for h in hs}
        p = argmax(hs, scores, {h: hope[0] * scores[h] + hope[1] * g[h] for h in hs})
        q = argmax(hs, scores, {h: fear[0] * scores[h] + fear[1] * g[h] for h in hs})
        m = hs[0]
        for h in hs:
            if scores[h] > scores[m]:
                m = h
        if p != q:
            w, _, stepped = pa_step(w, rows[p], rows[q], g[p], g[q], C)
            if stepped:
                history.append(list(w))
        for k in range(9):
            bg[k] = decay * (bg[k] + stats[m][k])
    return w


def corpus_bleu(t, divisor=1.0):
    """Corpus BLEU of summed statistics t (9 numbers): exp(1/4 Σ log(m_n/t_n) + min(0, 1 − r/h)),
    r = t[8] / divisor, h = t[1]; 0 when some m_n is 0."""
    if any(t[2 * n] <= 0 for n in range(4)):
        return 0.0
    log_b = sum(math.log(t[2 * n]) - math.log(t[2 * n + 1]) for n in range(4)) / 4
    r = t[8] / divisor
    if t[1] < r:
        log_b += 1 - r / t[1]
    return math.exp(log_b)


def cdec_bleu(t, divisor=1.0):
    """cdec's BLEU (mteval/scorer.cc BLEUScore::ComputeScore) of statistics t (9 numbers):
    the log precisions of the orders that have n-grams, a zero match count read as 0.01,
    summed and divided by 4, plus 1 − r/h when h < r (r = t[8] / divisor, h = t[1]); exp.
    All zero: 1; h = 0 < r: 0."""
    r, h = t[8] / divisor, t[1]
    if h == 0 and r > 0:
        return 0.0
    log_b = 0.0
    for n in range(4):
        if t[2 * n + 1] > 0:
            log_b += math.log(t[2 * n] if t[2 * n] != 0 else 0.01) - math.log(t[2 * n + 1])
    log_b /= 4
    if h < r:
        log_b += 1 - r / h
    return math.exp(log_b)


def doc_gains(stats, offsets, one_best, divisor, context=0.5, scale=1.0):
    """doc-1best gains as cdec's kbest_cut_mira: with one_best None, R = 0; else
    R_s = Σ_t stats[one_best[t]] − stats[one_best[s]]; for row h of sentence s,
    scale · (cdec_bleu(stats[h] + context·R_s) − cdec_bleu(R_s))."""
    D = [0] * 9 if one_best is None else [sum(stats[b][k] for b in one_best) for k in range(9)]
    out = []
    for s in range(len(offsets) - 1):
        R = [0.0] * 9 if one_best is None else [D[k] - stats[one_best[s]][k] for k in range(9)]
        base = cdec_bleu(R, divisor)
        for h in range(offsets[s], offsets[s + 1]):
            out.append(scale * (cdec_bleu([stats[h][k] + context * R[k] for k in range(9)], divisor) - base))
    return out


def mira_doc_1best(rows, stats, offsets, orders, hope, fear, C, w, divisor=1.0, fear_list=0):
    """Online MIRA, one shard, with doc-1best gains: the first pass's without a document, every
    later pass's in the context of the rows that were the model 1-best when the pass before
    visited them (orders: one sentence order per pass). Returns (last w, history,
    [(hope rows, fear rows) of each pass])."""
    history: list = []
    passes = []
    S = len(offsets) - 1
    last_best = None
    for order in orders:
        gains = doc_gains(stats, offsets, last_best, divisor)
        chosen: dict = {}
        w = mira_pass(rows, gains, offsets, order, hope, fear, C, w, history, fear_list, chosen)
        passes.append(([chosen[s][0] for s in range(S)], [chosen[s][1] for s in range(S)]))
        last_best = [chosen[s][2] for s in range(S)]
    return w, history, passes
