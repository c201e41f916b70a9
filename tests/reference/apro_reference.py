"""Slow, obvious APRO loss, gradient and Hessian-vector product: the oracle for pyx/_apro.pyx.

Dreyer & Dong (2015). Every preference pair is enumerated (O(k^2) per sentence):

    P = {(p, q): b_p > b_q}         (within a sentence; equal b give no pair)
    active iff fl(h_p - h_q) < 1    (the rounded difference, as the kernel tests it)
    L = sum over active pairs of (1 - (h_p - h_q))^2
    dL/dh_p -= 2 r,  dL/dh_q += 2 r                   r = 1 - (h_p - h_q)
    H = 2 sum over active pairs (e_p - e_q)(e_p - e_q)^T  (generalized Hessian, r = 0 excluded)

and the full objective F(w) = 1/2 |w|^2 + (C/N) L(X w) with N the number of hypotheses and
X the dense [n, n_features] feature matrix (dense block and sparse entries, uncentred).
"""

from __future__ import annotations

import numpy as np

from tests.reference.expected_bleu_reference import feature_matrix


def active_pairs(h, b, sent_offsets) -> list[tuple[int, int]]:
    """Every active pair (p, q) (p the better, row indices into h), in a fixed order."""
    pairs = []
    for s in range(len(sent_offsets) - 1):
        rows = range(int(sent_offsets[s]), int(sent_offsets[s + 1]))
        for p in rows:
            for q in rows:
                if b[p] > b[q] and float(h[p]) - float(h[q]) < 1.0:
                    pairs.append((p, q))
    return pairs


def loss_gradient(h, b, sent_offsets) -> tuple[float, np.ndarray, int]:
    """(L, dL/dh float64 [n], number of active pairs) for scores h, metric b (both [n])."""
    grad = np.zeros(len(h))
    loss = 0.0
    pairs = active_pairs(h, b, sent_offsets)
    for p, q in pairs:
        r = 1.0 - (float(h[p]) - float(h[q]))
        loss += r * r
        grad[p] -= 2.0 * r
        grad[q] += 2.0 * r
    return loss, grad, len(pairs)


def hessian(h, b, sent_offsets) -> np.ndarray:
    """The generalized Hessian of L with respect to h, float64 [n, n]."""
    H = np.zeros((len(h), len(h)))
    for p, q in active_pairs(h, b, sent_offsets):
        H[p, p] += 2.0
        H[q, q] += 2.0
        H[p, q] -= 2.0
        H[q, p] -= 2.0
    return H


def objective(corpus, b, w, c) -> tuple[float, np.ndarray, np.ndarray]:
    """(F(w), grad F float64 [n_features], Hessian of F float64 [n_features, n_features])."""
    X = feature_matrix(corpus)
    h = X @ w
    loss, g, _ = loss_gradient(h, b, corpus.sent_offsets)
    scale = c / corpus.n_hypotheses
    F = 0.5 * float(w @ w) + scale * loss
    grad = w + scale * (X.T @ g)
    hess = np.eye(len(w)) + scale * (X.T @ hessian(h, b, corpus.sent_offsets) @ X)
    return F, grad, hess


def sorted_rows(h, sent_offsets) -> np.ndarray:
    """Per sentence, its rows 0..k-1 sorted by (h, row): the ``order`` the loss kernel
    leaves (NumPy's stable sort; -0.0 and 0.0 are equal)."""
    return np.concatenate([np.argsort(h[a:b], kind="stable") for a, b in zip(sent_offsets[:-1], sent_offsets[1:])]
                          + [np.zeros(0, np.int64)]).astype(np.int32)
