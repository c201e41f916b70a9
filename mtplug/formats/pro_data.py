"""Moses's pro.data: PRO's sampled pair differences, the input of ``megam -fvals``.

Two lines per kept pair, the better-minus-worse line (label 1) first, then its mirror
(label 0)::

    1 F0 1.75 F2 -0.3 F3 0.3 WT_house~haus 1 WT_home~haus -1 \\n
    0 F0 -1.75 F2 0.3 F3 -0.3 WT_house~haus -1 WT_home~haus 1 \\n

Byte layout, as Moses's ``pro`` writes it (mert/pro.cpp ``outputSample`` and
mert/FeatureStats.cpp ``SparseVector::write``, HEAD 34452895):

* the label, ``1`` or ``0``;
* for every dense column j in order whose difference d satisfies |d| > 1e-5:
  `` F<j> <d>`` (one space before the name and one before the value);
* if either hypothesis of the pair has any sparse feature: one space, then for every
  sparse feature of the difference with |d| >= 1e-5: ``<name> <d> `` (so such a line
  ends with a space, even when every sparse difference cancelled);
* ``\\n``.

Moses keeps features as 32-bit floats, subtracts in float and prints with C++'s default
six significant digits; :func:`pro_data_from_pairs` and :func:`write_pro_data` do the
same, so a pair list gives Moses's bytes. Sparse entries are written in the order of the
store's feature ids (the order of first appearance in the features file, as Moses when it
reads one features.dat).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from .._ext import _pro
from ..errors import InputError
from ..fileio import atomic_output, decode_line, iter_chunks
from .number_text import FIELD_SEP, parse_number

#: Moses omits a dense difference with |d| <= this, a sparse one with |d| < this
MOSES_ZERO = 0.00001
_DENSE_NAME = re.compile(r"F(0|[1-9][0-9]*)\Z")


@dataclass
class ProData:
    """The lines of a pro.data file as arrays (m lines, n_dense dense columns).

    labels uint8 [m] (1 or 0); dense float64 [m, n_dense] (the F<j> values, 0 where a
    line has none); sparse CSR: sparse_indptr int64 [m + 1], sparse_ids int32 [nnz]
    (indices into sparse_names, in the line's order), sparse_values float64 [nnz];
    sparse_names: list of str; sparse_marker uint8 [m]: 1 where Moses writes the space
    that opens the sparse part (either hypothesis had sparse features), i.e. the line
    ends with a space.
    """

    labels: np.ndarray
    dense: np.ndarray
    sparse_indptr: np.ndarray
    sparse_ids: np.ndarray
    sparse_values: np.ndarray
    sparse_names: list
    sparse_marker: np.ndarray

    @property
    def n_lines(self) -> int:
        """Lines m of the file (two per sampled pair, as Moses writes them)."""
        return len(self.labels)

    @property
    def n_dense(self) -> int:
        """Dense columns F0 .. F<n_dense - 1> (as given to the reader, or the largest j seen + 1)."""
        return self.dense.shape[1]

    def equals(self, other: ProData) -> bool:
        """Same lines: labels, values (exactly), names and markers."""
        return (self.sparse_names == other.sparse_names
                and all(np.array_equal(getattr(self, f), getattr(other, f))
                        for f in ("labels", "dense", "sparse_indptr", "sparse_ids", "sparse_values",
                                  "sparse_marker")))

    def design(self):
        """(:class:`mtplug.optimizers.classifiers.PairMatrix` [m, n_dense + n_sparse], labels
        float64 [m] in {-1, +1}): a classifier's input, sparse column c = sparse_names[c]."""
        import scipy.sparse

        from ..optimizers.classifiers import PairMatrix

        sparse = None
        if self.sparse_names:
            sparse = scipy.sparse.csr_matrix((self.sparse_values, self.sparse_ids, self.sparse_indptr),
                                             shape=(self.n_lines, len(self.sparse_names)))
        return PairMatrix(self.dense, sparse), np.where(self.labels == 1, 1.0, -1.0)


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


#: the largest dense feature count a pro.data file may use (Moses systems have tens)
MAX_DENSE = 100_000


def _value(text: str, path: str, line_no: int, name: str) -> float:
    """A finite number as Moses prints them; float() alone would also take 'nan', 'inf',
    '1_0' and non-ASCII digits."""
    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if math.isfinite(v) and text.isascii() and "_" not in text:
        return v
    return parse_number(text, path, line_no, name)   # raises, naming what is wrong


def read_pro_data(path, n_dense: int | None = None, sparse_names=()) -> ProData:
    """Read a pro.data file (possibly gzipped).

    Dense features are the names ``F<j>`` (j without leading zeros); every other name is a
    sparse feature. sparse_names: names whose numbering is fixed in advance (e.g. a
    store's sparse features, or an earlier file's); other names follow in order of first
    appearance. n_dense: the number of dense columns (default: the largest j seen + 1).
    Values are the decimal numbers of the file (Moses prints six significant digits, so
    they are close to, not equal to, the float32 differences written). A malformed line, or
    a value that is not a finite number, raises InputError naming the file and line.
    """
    path = str(path)
    labels: list[int] = []
    markers: list[int] = []
    dense_entries: list[tuple[int, int, float]] = []
    indptr = [0]
    ids: list[int] = []
    values: list[float] = []
    names: dict[str, int] = {name: i for i, name in enumerate(sparse_names)}
    if len(names) != len(sparse_names):
        raise ValueError("sparse_names holds a name twice")
    max_j = -1
    for chunk, first in iter_chunks(path):
        raws = chunk.split(b"\n")
        if raws[-1] == b"":
            raws.pop()
        for k, raw in enumerate(raws):
            line_no = first + k
            line = decode_line(raw, path, line_no)
            line = line.removesuffix("\r")
            # ASCII blanks only (Moses writes single spaces): str.split() would also cut a name at NBSP
            stripped = line.strip(" \t")
            tokens = FIELD_SEP.split(stripped) if stripped else []
            if not tokens:
                raise InputError("empty line (expected a label 0 or 1 and feature/value pairs)", path, line_no)
            if tokens[0] not in ("0", "1"):
                raise InputError(f"label must be 0 or 1, got {tokens[0]!r}; expected 'LABEL NAME VALUE ...'",
                                 path, line_no)
            if len(tokens) % 2 != 1:
                raise InputError(f"feature {tokens[-1]!r} has no value; expected 'LABEL NAME VALUE ...' "
                                 "(a value after every name)", path, line_no)
            row = len(labels)
            seen = set()
            for t in range(1, len(tokens), 2):
                name, text = tokens[t], tokens[t + 1]
                if name in seen:
                    raise InputError(f"feature {name!r} twice on one line; expected each feature once per line",
                                     path, line_no)
                seen.add(name)
                v = _value(text, path, line_no, name)
                m = _DENSE_NAME.match(name)
                if m:
                    j = int(m.group(1))
                    if n_dense is not None and j >= n_dense:
                        raise InputError(f"dense feature {name} but only {n_dense} dense features", path, line_no)
                    if j >= MAX_DENSE:  # the dense block is m × (max j + 1): refuse absurd widths
                        raise InputError(f"dense feature {name}: expected F0..F{MAX_DENSE - 1} (sparse "
                                         "feature names are not F<number>)", path, line_no)
                    max_j = max(max_j, j)
                    dense_entries.append((row, j, v))
                else:
                    ids.append(names.setdefault(name, len(names)))
                    values.append(v)
            labels.append(int(tokens[0]))
            markers.append(1 if line.endswith(" ") else 0)
            indptr.append(len(ids))
    nd = n_dense if n_dense is not None else max_j + 1
    dense = np.zeros((len(labels), nd), dtype=np.float64)
    if dense_entries:
        at_rows, at_cols, at_values = zip(*dense_entries)
        dense[np.array(at_rows), np.array(at_cols)] = np.array(at_values)
    return ProData(np.array(labels, dtype=np.uint8), dense, np.array(indptr, dtype=np.int64),
                   np.array(ids, dtype=np.int32), np.array(values, dtype=np.float64), list(names),
                   np.array(markers, dtype=np.uint8))
