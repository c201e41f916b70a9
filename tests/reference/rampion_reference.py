"""Slow, obvious RAMPION in NumPy: the oracle for pyx/_rampion.pyx and mtplug/optimizers/rampion.py.

Weights θ are kept explicitly (no scaled vector). Per sentence s, in document order:

    sc      = X[rows] @ θ
    fear    = argmax(fear_model·sc + fear_gain·g)  (ties: larger sc, then lowest row)
              or p = softmax(fear_model·sc + fear_gain·g)
    θ       = θ − η·C/N·(θ − θ0)
    θ       = θ + η·(q[rows] @ X[rows] − p @ X[rows])

Bayes risk instead: p = softmax(sc), ḡ = Σ_h p_h g_h, θ += η·Σ_h α·p_h·(g_h − ḡ)·X[h].

X is the dense [n_hyp, n_features] matrix (dense block, then the sparse entries at their ids).
The losses are written out one by one here (:func:`sides`, :func:`sentence_loss`),
independently of mtplug.optimizers.rampion.loss_sides.
"""

from __future__ import annotations

import math

import numpy as np

from tests.reference.expected_bleu_reference import feature_matrix


def hard_argmax(v, sc) -> int:
    best = 0
    for i in range(1, len(v)):
        if v[i] > v[best] or (v[i] == v[best] and sc[i] > sc[best]):
            best = i
    return best


def softmax(v) -> np.ndarray:
    m = max(v)
    e = np.array([math.exp(x - m) if x != -math.inf else 0.0 for x in v])
    return e / e.sum()


def logsumexp(v) -> float:
    m = max(v)
    return m + math.log(sum(math.exp(x - m) for x in v if x != -math.inf))


def oracle_set(g) -> list[int]:
    best = max(g)
    return [i for i in range(len(g)) if g[i] == best]


def sides(loss, alpha):
    """(hope (model, gain), fear (model, gain), hope soft, fear soft, hope only on the oracle set, bayes risk)."""
    if loss == "perceptron":
        return (0.0, 1.0), (1.0, 0.0), False, False, False, False
    if loss == "hinge":
        return (0.0, 1.0), (1.0, -alpha), False, False, False, False
    if loss == "log":
        return (0.0, 1.0), (1.0, 0.0), False, True, False, False
    if loss == "soft-oracle":
        return (1.0, 0.0), (1.0, 0.0), True, True, True, False
    if loss == "bayes-risk":
        return None, (1.0, 0.0), False, True, False, True
    soft = loss.startswith("soft-")
    kind = loss.removeprefix("soft-")
    hope = (1.0, 0.0) if kind == "ramp1" else (1.0, alpha)
    fear = (1.0, 0.0) if kind == "ramp2" else (1.0, -alpha)
    return hope, fear, soft, soft, False, False


def hope_distribution(sc, g, hope, soft, on_oracle) -> np.ndarray:
    """q for one sentence (zeros for Bayes risk: hope None)."""
    q = np.zeros(len(sc))
    if hope is None:
        return q
    v = [hope[0] * sc[i] + hope[1] * g[i] for i in range(len(sc))]
    if on_oracle:
        oracles = oracle_set(g)
        v = [v[i] if i in oracles else -math.inf for i in range(len(v))]
    if soft:
        return softmax(v)
    q[hard_argmax(v, sc)] = 1.0
    return q


def ssd_epoch(X, offsets, gains, hope_prob, fear, soft, eta, c, theta, theta0, risk_alpha=0.0) -> np.ndarray:
    """One epoch; returns the new θ (float64 [n_features]). risk_alpha > 0: Bayes risk's step."""
    theta = np.array(theta, dtype=np.float64)
    N = len(offsets) - 1
    for s in range(N):
        rows = slice(int(offsets[s]), int(offsets[s + 1]))
        Xs = X[rows]
        g = gains[rows]
        sc = Xs @ theta
        v = fear[0] * sc + fear[1] * g
        if risk_alpha > 0:
            p = softmax(v)
            gbar = sum(p[i] * g[i] for i in range(len(g)))
            step = sum(risk_alpha * p[i] * (g[i] - gbar) * Xs[i] for i in range(len(g)))
        else:
            if soft:
                p = softmax(v)
            else:
                p = np.zeros(len(v))
                p[hard_argmax(v, sc)] = 1.0
            step = hope_prob[rows] @ Xs - p @ Xs
        theta = theta - eta * c / N * (theta - theta0)
        theta = theta + eta * step
    return theta


def rampion(corpus, start, gains, loss, *, cccp_iterations, epochs, eta, c, alpha):
    """The whole of Algorithm 1; returns (θ, [objective after each CCCP iteration])."""
    X = feature_matrix(corpus)
    offsets = corpus.sent_offsets
    hope, fear, hope_soft, fear_soft, on_oracle, risk = sides(loss, alpha)
    theta0 = np.asarray(start, dtype=np.float64)
    theta = theta0.copy()
    objectives = []
    for _ in range(cccp_iterations):
        sc = X @ theta
        q = np.zeros(len(sc))
        for s in range(len(offsets) - 1):
            lo, hi = int(offsets[s]), int(offsets[s + 1])
            q[lo:hi] = hope_distribution(sc[lo:hi], gains[lo:hi], hope, hope_soft, on_oracle)
        for _ in range(epochs):
            theta = ssd_epoch(X, offsets, gains, q, fear, fear_soft, eta, c, theta, theta0,
                              risk_alpha=alpha if risk else 0.0)
        objectives.append(objective(X @ theta, gains, offsets, loss, alpha, c, theta, theta0))
    return theta, objectives


def sentence_loss(sc, g, loss, alpha) -> float:
    """L_s for one sentence: model scores sc, metric g, cost = α(1 − g)."""
    n = len(sc)
    cost = [alpha * (1.0 - g[i]) for i in range(n)]
    oracles = oracle_set(g)
    s_star = max(sc[i] for i in oracles)          # the oracle y*: ties in g go to the larger score
    if loss == "perceptron":
        return max(sc) - s_star
    if loss == "hinge":
        return max(sc[i] + cost[i] for i in range(n)) - s_star
    if loss == "log":
        return logsumexp(sc) - s_star
    if loss == "soft-oracle":
        return logsumexp(sc) - logsumexp([sc[i] for i in oracles])
    if loss == "bayes-risk":
        p = softmax(sc)
        return sum(p[i] * cost[i] for i in range(n))
    kind = loss.removeprefix("soft-")
    vp = sc if kind == "ramp1" else [sc[i] - cost[i] for i in range(n)]
    vm = sc if kind == "ramp2" else [sc[i] + cost[i] for i in range(n)]
    M = logsumexp if loss.startswith("soft-") else max
    return M(vm) - M(vp)


def objective(sc, gains, offsets, loss, alpha, c, theta, theta0) -> float:
    """C/2·‖θ − θ0‖² + Σ_s L_s (:func:`sentence_loss`)."""
    total = 0.5 * c * float((theta - theta0) @ (theta - theta0))
    for s in range(len(offsets) - 1):
        lo, hi = int(offsets[s]), int(offsets[s + 1])
        total += sentence_loss(list(sc[lo:hi]), list(gains[lo:hi]), loss, alpha)
    return total
