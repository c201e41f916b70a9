"""Brute-force line search: the oracle for pyx/_linesearch.pyx and line_search.py.

Evaluates the corpus metric at any γ by taking, per sentence, the argmax of
a_h + γ·b_h directly (ties: the lowest hypothesis index), and lists every point where
a 1-best can change: all pairwise intersections of a sentence's lines.
"""

from __future__ import annotations

import numpy as np

from tests.reference.metric_reference import objective


def metric_at(corpus, a: np.ndarray, b: np.ndarray, gamma: float) -> float:
    """Corpus objective of the per-sentence argmax of a + γb (ties: lowest index)."""
    totals = np.zeros(corpus.stats.shape[1], dtype=np.int64)
    for s in range(corpus.n_sentences):
        lo, hi = corpus.sent_offsets[s], corpus.sent_offsets[s + 1]
        scores = a[lo:hi] + gamma * b[lo:hi]
        totals += corpus.stats[lo + int(np.argmax(scores))]
    return objective(corpus.metric, totals)


def intersections(corpus, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Sorted distinct γ where two lines of one sentence meet."""
    out = set()
    for s in range(corpus.n_sentences):
        lo, hi = corpus.sent_offsets[s], corpus.sent_offsets[s + 1]
        for i in range(lo, hi):
            for j in range(i + 1, hi):
                if b[i] != b[j]:
                    out.add(float((a[i] - a[j]) / (b[j] - b[i])))
    return np.array(sorted(out))


def probe_points(cuts: np.ndarray) -> np.ndarray:
    """One point strictly inside every interval between consecutive cuts (and outside)."""
    if len(cuts) == 0:
        return np.array([0.0])
    span = max(1.0, float(cuts[-1] - cuts[0]))
    return np.concatenate([[cuts[0] - span], 0.5 * (cuts[:-1] + cuts[1:]), [cuts[-1] + span]])


def slope_order(values: np.ndarray, sent_offsets: np.ndarray) -> np.ndarray:
    """int32 [n]: per sentence, the positions 0 .. m - 1 by ascending value, then ascending
    position; a position p whose value equals the previous one's is stored as -1 - p."""
    out = np.empty(len(values), dtype=np.int32)
    for s in range(len(sent_offsets) - 1):
        lo, hi = int(sent_offsets[s]), int(sent_offsets[s + 1])
        pos = np.array(sorted(range(hi - lo), key=lambda p: (values[lo + p], p)), dtype=np.int64)
        v = values[lo:hi][pos]
        tie = np.concatenate([[False], v[1:] == v[:-1]]) if hi > lo else np.zeros(0, bool)
        out[lo:hi] = np.where(tie, -1 - pos, pos)
    return out
