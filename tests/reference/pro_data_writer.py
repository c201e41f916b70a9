"""The slow, obvious pro.data writer: the reference that mtplug's compiled one
(``_pro.format_pro_lines``, used by the ``pro`` program) is tested against, byte for byte.
Layout: mtplug/formats/pro_data.py."""

from __future__ import annotations

import numpy as np

from mtplug._ext import _pro
from mtplug.fileio import atomic_output
from mtplug.formats.pro_data import MOSES_ZERO, ProData


def pro_data_from_pairs(corpus, better, worse) -> ProData:
    """The pro.data lines of the pairs (better, worse int64 [P], store rows): 2P lines.

    Differences are taken in 32-bit float, as Moses's pro (features are rounded to
    float32 first, then subtracted; the result is the float32 difference).
    """
    better = np.ascontiguousarray(better, dtype=np.int64)
    worse = np.ascontiguousarray(worse, dtype=np.int64)
    P, nd = len(better), corpus.n_dense
    if better.shape != worse.shape or better.ndim != 1:
        raise ValueError("better and worse must be 1-D arrays of the same length")
    if P and (min(better.min(), worse.min()) < 0 or max(better.max(), worse.max()) >= corpus.n_hypotheses):
        raise ValueError(f"pair rows must lie in [0, {corpus.n_hypotheses})")
    d32 = corpus.dense.astype(np.float32)
    diff = (d32[better] - d32[worse]).astype(np.float64)
    dense = np.empty((2 * P, nd), dtype=np.float64)
    dense[0::2] = diff
    dense[1::2] = -diff       # float subtraction is antisymmetric: f2 - f1 == -(f1 - f2) exactly
    # float32-rounded inputs differ by an amount exact in double, so rounding the double
    # difference to float32 equals Moses's float subtraction
    sv = corpus.sparse_values.astype(np.float32).astype(np.float64)
    # the kernel's dense block is done above in float32: pass zero-width ones
    ip, ids, vals = _pro.pair_differences(np.zeros((corpus.n_hypotheses, 0)),
                                          np.ascontiguousarray(corpus.sparse_indptr, dtype=np.int64),
                                          np.ascontiguousarray(corpus.sparse_ids, dtype=np.int32), sv,
                                          better, worse, nd, np.empty((P, 0)))
    vals = vals.astype(np.float32).astype(np.float64)
    counts = np.diff(ip)
    ip2 = np.zeros(2 * P + 1, dtype=np.int64)
    ip2[1::2] = counts
    ip2[2::2] = counts
    np.cumsum(ip2, out=ip2)
    rows = np.repeat(np.arange(P), counts)
    within = np.arange(len(ids)) - np.repeat(ip[:-1], counts)
    # line 2p holds the entries of pair p, line 2p + 1 the same entries negated
    new_ids = np.empty(2 * len(ids), dtype=np.int32)
    new_vals = np.empty(2 * len(ids), dtype=np.float64)
    first = ip2[2 * rows] + within
    second = ip2[2 * rows + 1] + within
    new_ids[first], new_vals[first] = ids, vals
    new_ids[second], new_vals[second] = ids, -vals
    has_sparse = np.diff(corpus.sparse_indptr) > 0
    marker = np.repeat((has_sparse[better] | has_sparse[worse]).astype(np.uint8), 2)
    labels = np.tile(np.array([1, 0], dtype=np.uint8), P)
    return ProData(labels, dense, ip2, new_ids, new_vals, corpus.feature_names[nd:], marker)


def _g(values: np.ndarray) -> list[str]:
    """C++'s default text of 32-bit floats: six significant digits (%g)."""
    return [f"{v:g}" for v in values.astype(np.float32).tolist()]


def write_pro_data(path, data: ProData) -> None:
    """Write ``data`` as a Moses pro.data file (replaced atomically); layout: module docstring."""
    m = data.n_lines
    show = np.abs(data.dense.astype(np.float32)).astype(np.float64) > MOSES_ZERO
    # column by column, then one join per line: far fewer Python steps than per value
    columns = [["1" if v == 1 else "0" for v in data.labels.tolist()]]
    for j in range(data.n_dense):
        prefix = f" F{j} "
        columns.append([prefix + t if s else "" for t, s in zip(_g(data.dense[:, j]), show[:, j].tolist())])
    sparse_part = [""] * m
    ip = data.sparse_indptr
    opened = np.flatnonzero((data.sparse_marker != 0) | (ip[1:] > ip[:-1]))
    if len(opened):
        texts = _g(data.sparse_values)
        show_sparse = (np.abs(data.sparse_values.astype(np.float32)).astype(np.float64) >= MOSES_ZERO).tolist()
        names, ids, ipl = data.sparse_names, data.sparse_ids.tolist(), ip.tolist()
        for r in opened.tolist():
            sparse_part[r] = " " + "".join(f"{names[ids[e]]} {texts[e]} "
                                           for e in range(ipl[r], ipl[r + 1]) if show_sparse[e])
    columns.append(sparse_part)
    with atomic_output(path, "w") as fh:
        step = 65536
        for lo in range(0, m, step):
            fh.write("".join("".join(parts) + "\n" for parts in zip(*(c[lo:lo + step] for c in columns))))
