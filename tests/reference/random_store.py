"""A small random NbestCorpus with dense and sparse features and valid BLEU statistics,
for comparing compiled kernels with their references."""

from __future__ import annotations

import numpy as np

from mtplug.corpus import NbestCorpus


def random_store(seed: int, sizes=(5, 1, 8, 3, 6), n_dense: int = 3, n_sparse: int = 6,
                 gaussian: bool = False) -> NbestCorpus:
    """Sentences of the given sizes; 0-3 sparse features per hypothesis (names ``S_j``).

    Feature values are small multiples of 0.5 (so ties and equal values occur) unless
    ``gaussian``; statistics rows are valid BLEU rows (matches <= totals, decreasing).
    """
    rng = np.random.default_rng(seed)
    n = int(sum(sizes))
    sids = np.repeat(np.arange(len(sizes)), sizes)
    if gaussian:
        dense = rng.normal(size=(n, n_dense))
    else:
        dense = rng.integers(-3, 4, size=(n, n_dense)).astype(np.float64) * 0.5
    indptr, ids, vals = [0], [], []
    for _ in range(n):
        cols = np.sort(rng.choice(n_sparse, size=rng.integers(0, 4), replace=False))
        ids += cols.tolist()
        vals += (rng.normal(size=len(cols)) if gaussian else rng.choice([1.0, -1.0, 2.5], size=len(cols))).tolist()
        indptr.append(len(ids))
    stats = np.zeros((n, 9), dtype=np.int32)
    stats[:, 0] = rng.integers(1, 6, n)
    stats[:, 1] = stats[:, 0] + rng.integers(0, 3, n)
    for k in (2, 4, 6):
        stats[:, k + 1] = np.maximum(stats[:, k - 1] - 1, 0)
        stats[:, k] = np.minimum(stats[:, k - 2], stats[:, k + 1])
    stats[:, 8] = rng.integers(3, 8, n)
    return NbestCorpus.from_arrays(sids, dense, [f"D{j}" for j in range(n_dense)], stats,
                                   sparse=(np.array(indptr), np.array(ids), np.array(vals)),
                                   sparse_names=[f"S_{j}" for j in range(n_sparse)])
