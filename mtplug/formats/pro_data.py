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
six significant digits; mtplug's ``pro`` program writes these bytes with
``_pro.format_pro_lines`` (tests/reference/pro_data_writer.py is its slow reference).
Sparse entries are written in the order of the store's feature ids (the order of first
appearance in the features file, as Moses when it reads one features.dat).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..fileio import decode_line, iter_chunks
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
