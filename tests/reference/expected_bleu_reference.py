"""Slow, obvious expected-BLEU objective and gradient: the oracle for pyx/_expbleu.pyx.

Galley, Quirk, Cherry & Toutanova (2013), section 4. Written straight from the formulas,
with a different route to the gradient than the kernel's:

- the features of every hypothesis as one dense matrix F [n, n_features];
- per sentence the softmax p_s(h) = exp(mu x_h - max) / sum (Python floats);
- the Jacobian of the expected statistics, dT_k/dw_j = mu sum_s Cov_{p_s}(stats_k, F_j),
  formed explicitly ([n_stats, n_features]) from the pairwise identity
  Cov_p(a, b) = 1/2 sum_{h, h'} p_h p_h' (a_h - a_h') (b_h - b_h'), which has no
  cancellation (the kernel instead takes Cov(u . stats, f) centred on the argmax);
- dJ/dw = u @ Jacobian with u = dJ/dT.

J = logBLEU(T) = 1/4 sum_n (log m_n - log t_n) + min(0, 1 - r/c), r = T[8] / divisor;
d/dT of min(0, 1 - r/c) is 0 when c >= r (one-sided, as the kernel). ``linear``: one
stats column g, J = T[0] / norm.
"""

from __future__ import annotations

import math

import numpy as np

ORDER = 4


def feature_matrix(corpus) -> np.ndarray:
    """Every hypothesis's features as float64 [n, n_features] (dense block, then sparse)."""
    n = corpus.n_hypotheses
    F = np.zeros((n, corpus.n_features))
    F[:, :corpus.n_dense] = corpus.dense[:, :corpus.n_dense] if n else 0.0
    for h in range(n):
        for fid, v in corpus.sparse_row(h):
            F[h, fid] += v
    return F


def sentence_probs(scores, sent_offsets, mu: float) -> list[np.ndarray]:
    """Softmax of mu * score within each sentence, max subtracted."""
    out = []
    for s in range(len(sent_offsets) - 1):
        x = [mu * float(v) for v in scores[sent_offsets[s]:sent_offsets[s + 1]]]
        if not x:
            out.append(np.zeros(0))
            continue
        top = max(x)
        e = [math.exp(v - top) for v in x]
        z = sum(e)
        out.append(np.array([v / z for v in e]))
    return out


def expected_totals(corpus, weights, mu: float) -> np.ndarray:
    """T = sum_s sum_h p_s(h) stats_h, float64 [n_stats]."""
    scores = feature_matrix(corpus) @ np.asarray(weights, dtype=np.float64)
    probs = sentence_probs(scores, corpus.sent_offsets, mu)
    T = np.zeros(corpus.stats.shape[1])
    for s, p in enumerate(probs):
        rows = corpus.stats[corpus.sent_offsets[s]:corpus.sent_offsets[s + 1]].astype(np.float64)
        T += p @ rows
    return T


def value_and_slope(T, metric: str = "bleu", norm: float = 1.0, divisor: float = 1.0):
    """(J(T), dJ/dT); J = -inf and slope None when an expected match count is 0."""
    if metric == "linear":
        return float(T[0]) / norm, np.array([1.0 / norm])
    m = [float(T[2 * n]) for n in range(ORDER)]
    t = [float(T[2 * n + 1]) for n in range(ORDER)]
    if min(m) <= 0.0:
        return -math.inf, None
    c, r = t[0], float(T[8]) / divisor
    bp = 0.0 if c >= r else 1.0 - r / c
    value = sum(math.log(m[n]) - math.log(t[n]) for n in range(ORDER)) / ORDER + bp
    u = np.zeros(9)
    for n in range(ORDER):
        u[2 * n] = 1.0 / (ORDER * m[n])
        u[2 * n + 1] = -1.0 / (ORDER * t[n])
    if c < r:
        u[1] += r / c ** 2           # d(1 - r/c)/dc
        u[8] = -1.0 / (c * divisor)  # d(1 - r/c)/dT8
    return value, u


def objective(corpus, weights, mu: float, metric: str = "bleu", norm: float = 1.0) -> float:
    """J(w): the function whose gradient the kernel computes (for finite differences)."""
    T = expected_totals(corpus, weights, mu)
    return value_and_slope(T, metric, norm, corpus.ref_len_divisor)[0]


def gradient(corpus, weights, mu: float, metric: str = "bleu", norm: float = 1.0):
    """``(J, dJ/dw, T, bound)``.

    bound float64 [n_features]: mu sum_s sum_{h,h'} p_h p_h' (sum_k |u_k| |stats_hk -
    stats_h'k|) (|F_hj| + |F_h'j|), the size of the terms the covariance is made of.
    Rounding in any summation order is a few ulps of it, so comparisons use
    ``atol = 1e-12 * bound`` next to their rtol (a gradient component that cancels to
    ~0 has no meaningful relative error).
    """
    F = feature_matrix(corpus)
    scores = F @ np.asarray(weights, dtype=np.float64)
    probs = sentence_probs(scores, corpus.sent_offsets, mu)
    T = expected_totals(corpus, weights, mu)
    value, u = value_and_slope(T, metric, norm, corpus.ref_len_divisor)
    n_features = F.shape[1]
    if u is None:
        return value, np.zeros(n_features), T, np.zeros(n_features)
    stats = corpus.stats.astype(np.float64)
    jac = np.zeros((stats.shape[1], n_features))
    bound = np.zeros(n_features)
    for s, p in enumerate(probs):
        lo = corpus.sent_offsets[s]
        for a in range(len(p)):
            for b in range(len(p)):
                ds = stats[lo + a] - stats[lo + b]
                dF = F[lo + a] - F[lo + b]
                jac += 0.5 * mu * p[a] * p[b] * np.outer(ds, dF)
                bound += mu * p[a] * p[b] * (np.abs(u) @ np.abs(ds)) * (np.abs(F[lo + a]) + np.abs(F[lo + b]))
    return value, u @ jac, T, bound
