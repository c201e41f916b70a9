"""Sharding and parameter mixing as cdec's parallelize.rb and lplp.rb do them.

Shards (``make_shards``): the input order (shuffled with the seed if ``randomize``)
is cut into ``shards`` consecutive pieces of ``round(n / shards)`` sentences (round
half up); what is left goes to the last shard, and shards that would be empty are
dropped.

Mixing (``mix``, lplp.rb ``NORM select_k K`` / ``NORM cut T`` over the shards' weight
files): every feature's value is the mean over ALL shards (a shard without the
feature counts 0). ``select_k`` keeps the K features with the largest NORM of their
column of shard values, ordered by that norm (ties: first seen first); ``cut`` keeps
those whose NORM is at least T, in first-seen order. NORM: l0 (1 if the feature is in
every shard, else 0), l1, l2, linfty, mean, median (missing shards as 0). A shard
"has" a feature when its weight is non-zero (dtrain's weight files leave zeros out).
Shards are always combined in shard order, so the result does not depend on how
many workers trained them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def make_shards(n: int, shards: int, rng: np.random.Generator | None = None) -> list[np.ndarray]:
    """Sentence indices per shard (parallelize.rb ``make_shards``)."""
    order = np.arange(n, dtype=np.int64) if rng is None else rng.permutation(n).astype(np.int64)
    size = math.floor(n / shards + 0.5)
    out: list[np.ndarray] = []
    start = 0
    for _ in range(shards):
        if start >= n:
            break
        out.append(order[start:start + size])
        start += size
    if start < n and out:
        out[-1] = np.concatenate([out[-1], order[start:]])
    return [s for s in out if len(s)] or [order]


def _norms(columns: np.ndarray, norm: str) -> np.ndarray:
    """Norm of each column (shards × features) as lplp.rb computes it."""
    n = columns.shape[0]
    present = columns != 0
    if norm == "l0":
        return (present.sum(axis=0) >= n).astype(np.float64)
    if norm == "l1":
        return np.abs(columns).sum(axis=0)
    if norm == "l2":
        return np.sqrt((columns * columns).sum(axis=0))
    if norm == "linfty":
        return np.abs(columns).max(axis=0)
    if norm == "mean":
        return columns.sum(axis=0) / n
    if norm == "median":
        # lplp pads the present values with zeros to n and takes element n // 2 of the sorted list
        return np.sort(columns, axis=0)[n // 2]
    raise ValueError(f"unknown norm {norm!r}")


def mix(shard_weights: Sequence[dict], norm: str = "l2", how: str = "select_k",
        x: float = 100000) -> dict:
    """The mixed weights ``{name: value}`` (in lplp.rb's output order) of the shards' weights."""
    names: dict[str, int] = {}
    for w in shard_weights:
        for name, value in w.items():
            if value != 0 and name not in names:
                names[name] = len(names)
    n = len(shard_weights)
    columns = np.zeros((n, len(names)))
    for s, w in enumerate(shard_weights):
        for name, value in w.items():
            if value != 0:
                columns[s, names[name]] = value
    mean = columns.sum(axis=0) / n
    norms = _norms(columns, norm)
    name_list = list(names)
    if how == "select_k":
        order = np.argsort(-norms, kind="stable")[: int(x)]
    elif how == "cut":
        order = np.flatnonzero(np.abs(norms) >= x)
    else:
        raise ValueError(f"unknown selection {how!r}; choose select_k or cut")
    return {name_list[j]: float(mean[j]) for j in order}
