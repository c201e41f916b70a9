"""One sentence's k-best list as arrays: sparse features (CSR), BLEU statistics, strings.

Feature ids index the trainer's feature vocabulary (one
:class:`mtplug._ext._nbest_scan.Vocabulary` per shard), so a weight vector is a
float64 array indexed by id. Rows are in k-best order (position 0 is the decoder's
1-best).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..metrics.bleu import N_STATS


@dataclass
class Kbest:
    """``indptr`` int64 [k + 1] (from 0), ``ids`` int64 / ``values`` float64 [nnz]: the
    features of hypothesis i are ``ids[indptr[i]:indptr[i+1]]``; ``stats`` int32 [k, 9]
    (``mtplug.metrics.bleu.STATS_LAYOUT``); ``texts`` the hypothesis strings (optional)."""

    indptr: np.ndarray
    ids: np.ndarray
    values: np.ndarray
    stats: np.ndarray
    texts: list[str] | None = None
    _rows: np.ndarray | None = field(default=None, repr=False)

    @property
    def k(self) -> int:
        """Hypotheses in the list."""
        return len(self.indptr) - 1

    @property
    def rows(self) -> np.ndarray:
        """The hypothesis (row) of every stored feature value."""
        if self._rows is None:
            self._rows = np.repeat(np.arange(self.k, dtype=np.int64), np.diff(self.indptr))
        return self._rows

    @property
    def n_features_needed(self) -> int:
        """Length a weight vector needs to cover every feature id of this list."""
        return int(self.ids.max()) + 1 if len(self.ids) else 0

    def model(self, w: np.ndarray) -> np.ndarray:
        """Model scores w·f of every hypothesis (float64 [k])."""
        return np.bincount(self.rows, weights=self.values * w[self.ids], minlength=self.k)

    def combine(self, coef: np.ndarray, n: int) -> np.ndarray:
        """Σ_h coef[h]·f_h as a dense vector of length ``n`` (n >= n_features_needed)."""
        return np.bincount(self.ids, weights=coef[self.rows] * self.values, minlength=n)

    def dense(self, columns: np.ndarray) -> np.ndarray:
        """The features restricted to ``columns`` (sorted unique ids) as a [k, len] matrix."""
        out = np.zeros((self.k, len(columns)))
        out[self.rows, np.searchsorted(columns, self.ids)] = self.values
        return out

    @classmethod
    def empty(cls) -> Kbest:
        """A list of no hypotheses (the decoder wrote none for the sentence)."""
        return cls(np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0), np.zeros((0, N_STATS), np.int32), [])

    @classmethod
    def from_dicts(cls, rows: Sequence[Mapping[str, float]], names, stats=None,
                   texts: list[str] | None = None) -> Kbest:
        """A k-best list from ``{feature: value}`` per hypothesis (tests, adapters).

        ``names``: the feature Vocabulary, extended with new names. ``stats``: int [k, 9]
        or None (zeros).
        """
        indptr, ids, values = [0], [], []
        for row in rows:
            for name, value in sorted(((names.add(n.encode("utf-8")), float(v)) for n, v in row.items())):
                ids.append(name)
                values.append(value)
            indptr.append(len(ids))
        k = len(rows)
        st = np.zeros((k, N_STATS), np.int32) if stats is None else np.ascontiguousarray(stats, dtype=np.int32)
        return cls(np.asarray(indptr, np.int64), np.asarray(ids, np.int64), np.asarray(values, np.float64),
                   st, texts)


def split_scan(arrays: dict, n_sentences: int, k: int, texts: list[str] | None = None) -> list[Kbest]:
    """Per-sentence :class:`Kbest` lists from :func:`mtplug.formats.nbest.scan_nbest` arrays
    whose sentence ids are 0..n_sentences-1; at most ``k`` hypotheses are kept per sentence."""
    sids = arrays["sent_ids"]
    bounds = np.searchsorted(sids, np.arange(n_sentences + 1), side="left")
    sp = arrays["sparse_indptr"]
    out = []
    for s in range(n_sentences):
        a, b = int(bounds[s]), int(bounds[s + 1])
        b = min(b, a + k)
        if a == b:
            out.append(Kbest.empty())
            continue
        lo, hi = int(sp[a]), int(sp[b])
        out.append(Kbest(np.ascontiguousarray(sp[a:b + 1] - lo, dtype=np.int64),
                         np.ascontiguousarray(arrays["sparse_ids"][lo:hi], dtype=np.int64),
                         np.ascontiguousarray(arrays["sparse_values"][lo:hi], dtype=np.float64),
                         np.ascontiguousarray(arrays["stats"][a:b], dtype=np.int32),
                         None if texts is None else texts[a:b]))
    return out
