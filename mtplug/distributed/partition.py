"""Cutting the sentences of a store into contiguous partitions for the workers."""

from __future__ import annotations

import numpy as np


def partition_sentences(sent_offsets: np.ndarray, parts: int) -> list[tuple[int, int]]:
    """At most ``parts`` runs of whole sentences ``[(s_lo, s_hi), ...]`` covering 0..S in
    order, with about the same number of hypotheses each; none empty (one run when S = 0).

    sent_offsets: int64 [S + 1], 0 .. n, non-decreasing.
    """
    offsets = np.asarray(sent_offsets, dtype=np.int64)
    S = offsets.shape[0] - 1
    parts = max(1, min(int(parts), S))
    targets = np.linspace(0, offsets[-1] if S else 0, parts + 1)[1:-1]
    cuts = np.searchsorted(offsets, targets, side="left")
    bounds = sorted({0, S, *(int(c) for c in cuts if 0 < c < S)})
    return list(zip(bounds[:-1], bounds[1:])) if S else [(0, 0)]
