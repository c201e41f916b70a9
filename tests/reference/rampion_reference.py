"""Slow, obvious RAMPION in NumPy: the oracle for pyx/_rampion.pyx and mtplug/optimizers/rampion.py.

Weights θ are kept explicitly (no scaled vector). Per sentence s, in document order:

    sc      = X[rows] @ θ
    fear    = argmax(fear_model·sc + fear_gain·g)  (ties: larger sc, then lowest row)
              or p = softmax(fear_model·sc + fear_gain·g)
    θ       = θ − η·C/N·(θ − θ0)
    θ       = θ + η·(q[rows] @ X[rows] − p @ X[rows])

X is the dense [n_hyp, n_features] matrix (dense block, then the sparse entries at their ids).
"""

from __future__ import annotations

import numpy as np

from tests.reference.expected_bleu_reference import feature_matrix


def hard_argmax(v, sc) -> int:
    best = 0
    for i in range(1, len(v)):
        if v[i] > v[best] or (v[i] == v[best] and sc[i] > sc[best]):
            best = i
    return best


def ssd_epoch(X, offsets, gains, hope_prob, fear, soft, eta, c, theta, theta0) -> np.ndarray:
    """One epoch; returns the new θ (float64 [n_features])."""
    theta = np.array(theta, dtype=np.float64)
    N = len(offsets) - 1
    for s in range(N):
        rows = slice(int(offsets[s]), int(offsets[s + 1]))
        Xs = X[rows]
        sc = Xs @ theta
        v = fear[0] * sc + fear[1] * gains[rows]
        if soft:
            e = np.exp(v - v.max())
            p = e / e.sum()
        else:
            p = np.zeros(len(v))
            p[hard_argmax(v, sc)] = 1.0
        theta = theta - eta * c / N * (theta - theta0)
        theta = theta + eta * (hope_prob[rows] @ Xs - p @ Xs)
    return theta


def rampion(corpus, start, gains, loss, *, cccp_iterations, epochs, eta, c, alpha):
    """The whole of Algorithm 1; returns (θ, [objective after each CCCP iteration])."""
    X = feature_matrix(corpus)
    offsets = corpus.sent_offsets
    soft = loss.startswith("soft-")
    kind = loss.removeprefix("soft-")
    hope = (1.0, 0.0) if kind == "ramp1" else (1.0, alpha)
    fear = (1.0, 0.0) if kind == "ramp2" else (1.0, -alpha)
    theta0 = np.asarray(start, dtype=np.float64)
    theta = theta0.copy()
    objectives = []
    for _ in range(cccp_iterations):
        sc = X @ theta
        q = np.zeros(len(sc))
        for s in range(len(offsets) - 1):
            lo, hi = int(offsets[s]), int(offsets[s + 1])
            v = hope[0] * sc[lo:hi] + hope[1] * gains[lo:hi]
            if soft:
                e = np.exp(v - v.max())
                q[lo:hi] = e / e.sum()
            else:
                q[lo + hard_argmax(v, sc[lo:hi])] = 1.0
        for _ in range(epochs):
            theta = ssd_epoch(X, offsets, gains, q, fear, soft, eta, c, theta, theta0)
        objectives.append(objective(X @ theta, gains, offsets, loss, alpha, c, theta, theta0))
    return theta, objectives


def objective(sc, gains, offsets, loss, alpha, c, theta, theta0) -> float:
    """C/2·‖θ − θ0‖² + Σ_s [M(v−) − M(v+)], M = max or log-sum-exp, cost = α(1 − g)."""
    kind = loss.removeprefix("soft-")
    cost = alpha * (1.0 - gains)
    vp = sc if kind == "ramp1" else sc - cost
    vm = sc if kind == "ramp2" else sc + cost
    total = 0.5 * c * float((theta - theta0) @ (theta - theta0))
    for s in range(len(offsets) - 1):
        lo, hi = int(offsets[s]), int(offsets[s + 1])
        if loss.startswith("soft-"):
            M = lambda v: v.max() + np.log(np.exp(v - v.max()).sum())  # noqa: E731
        else:
            M = np.max
        total += M(vm[lo:hi]) - M(vp[lo:hi])
    return total
