"""Slow, obvious PRO: the oracle for pyx/_pro.pyx and mtplug/optimizers/pro.py.

The generator is splitmix64 in Python integers (the constants come from the compiled
module, so the two cannot drift apart silently); candidates are collected into a list
and the top-ξ cut is a plain sort, with the rules of the pyx/_pro.pyx header.
"""

from __future__ import annotations

import math

import numpy as np

from mtplug._ext import _pro

MASK64 = (1 << 64) - 1
MASK32 = (1 << 32) - 1


def mix64(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


class Stream:
    """The draws of one sentence: splitmix64 from mix64(mix64(seed) + s * stride)."""

    def __init__(self, seed: int, sentence: int):
        self.state = mix64((mix64(seed & MASK64) + sentence * _pro.SPLITMIX_SENTENCE_STRIDE) & MASK64)

    def next64(self) -> int:
        self.state = (self.state + _pro.SPLITMIX_GOLDEN) & MASK64
        return mix64(self.state)

    def below(self, k: int) -> int:
        """Uniform in [0, k): Lemire's multiply-shift with rejection on 32-bit words."""
        threshold = ((1 << 32) - k) % k
        while True:
            m = (self.next64() >> 32) * k
            if (m & MASK32) >= threshold:
                return m >> 32


def length_sigma(lengths) -> float:
    """max(2, RMS of l_a - l_b over all ordered pairs a != b), the kernel's two-pass sums."""
    k = len(lengths)
    mean = float(sum(int(x) for x in lengths)) / k
    ss = 0.0
    for x in lengths:
        ss += (float(x) - mean) * (float(x) - mean)
    return max(math.sqrt(2.0 * ss / (k - 1)), 2.0)


def candidates(scores: np.ndarray, lo: int, hi: int, seed: int, sentence: int, gamma: int,
               beta: float, lengths=None, length_z: float = 0.0) -> list[tuple[float, int, int, int]]:
    """Every candidate ``(diff, draw, better, worse)`` of one sentence, in draw order."""
    k = hi - lo
    if k < 2:
        return []
    rng = Stream(seed, sentence)
    out = []
    limit = length_z * length_sigma(lengths[lo:hi]) if length_z > 0 else math.inf
    t = redrawn = 0
    while t < gamma:
        i, j = rng.below(k), rng.below(k)
        if length_z > 0 and i != j and abs(int(lengths[lo + i]) - int(lengths[lo + j])) > limit:
            redrawn += 1          # drawn again: no draw number
            if redrawn >= _pro.LENGTH_REDRAW_LIMIT * gamma:
                break
            continue
        t += 1
        if i == j:
            continue
        d = abs(scores[lo + i] - scores[lo + j])
        if d < beta or d == 0.0:
            continue
        better, worse = (lo + i, lo + j) if scores[lo + i] > scores[lo + j] else (lo + j, lo + i)
        out.append((float(d), t - 1, better, worse))
    return out


def top_xi(cands: list[tuple[float, int, int, int]], xi: int) -> list[tuple[float, int, int, int]]:
    """The ξ largest diffs (ties: earlier draw), returned in draw order."""
    kept = sorted(cands, key=lambda c: (-c[0], c[1]))[:xi]
    return sorted(kept, key=lambda c: c[1])


def sample_pairs(scores: np.ndarray, sent_offsets: np.ndarray, seed: int, gamma: int, xi: int,
                 beta: float, lengths=None, length_z: float = 0.0) -> tuple[list[list[tuple[int, int]]], list[int]]:
    """Per sentence the kept (better, worse) pairs and the number of candidates."""
    pairs, above = [], []
    for s in range(len(sent_offsets) - 1):
        c = candidates(scores, int(sent_offsets[s]), int(sent_offsets[s + 1]), seed, s, gamma, beta, lengths,
                       length_z)
        above.append(len(c))
        pairs.append([(b, w) for _, _, b, w in top_xi(c, xi)])
    return pairs, above


def difference(corpus, better: int, worse: int) -> np.ndarray:
    """f_better - f_worse as a dense float64 [n_features] vector."""
    f = np.zeros((2, corpus.n_features))
    for row, h in enumerate((better, worse)):
        f[row, : corpus.n_dense] = corpus.dense[h]
        for fid, v in corpus.sparse_row(h):
            f[row, fid] = v
    return f[0] - f[1]


def logistic_objective(w: np.ndarray, X: np.ndarray, y: np.ndarray, C: float, loss_weight: float,
                       center: np.ndarray | None = None) -> float:
    """loss_weight · Σ log(1 + exp(-y_r w·x_r)) + ‖w - center‖² / (2C), one row at a time."""
    total = 0.0
    for r in range(len(y)):
        total += math.log1p(math.exp(-y[r] * float(X[r] @ w)))
    d = w if center is None else w - center
    return loss_weight * total + float(d @ d) / (2 * C)
