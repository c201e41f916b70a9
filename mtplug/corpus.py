"""NbestCorpus: accumulated n-best lists as flat arrays — the one structure optimizers see.

Layout (``n`` hypotheses over ``S`` sentences, hypotheses grouped by sentence)::

    sent_offsets   int64   [S + 1]       hypotheses of sentence s: rows sent_offsets[s]:sent_offsets[s+1]
    dense          float64 [n, n_dense]  dense features (feature ids 0 .. n_dense-1)
    sparse_indptr  int64   [n + 1]       CSR rows of the sparse features (ids >= n_dense,
    sparse_ids     int32   [nnz]           sorted within a row)
    sparse_values  float64 [nnz]
    stats          int32   [n, k]        metric statistics (``metric``: mtplug.metrics.layer.Metric;
                                           BLEU alone: 9 columns, mtplug.metrics.bleu.STATS_LAYOUT)
    hyp_indptr     int64   [n + 1]       hypothesis i = LEB128-coded word ids in
    hyp_bytes      uint8                   hyp_bytes[hyp_indptr[i]:hyp_indptr[i+1]] (None when
                                           the store came from features.dat/scores.dat)

Dense features are kept as a block rather than as CSR entries: every hypothesis has
all of them, so ids would only double their memory. A full weight vector is indexed
by feature id: ``weights[:n_dense]`` for the dense block, ``weights[id]`` for sparse.

The dense block is what the input labels dense (Moses's ``Label= v1 v2`` form, a
features.dat header); ``name=value`` features stay CSR entries even when every
hypothesis carries them. Measured on the real cdec stores of docs/real-systems.md
(cdec omits zero-valued features): 2 of 12 features on all of 156,945 hypotheses
(dense set), 9 of 22,181 on all of 47,214 (sparse set); moving them to dense columns
would save 5.3 % and 1.7 % of the feature arrays, for a layout that a later batch
could break (a feature missing from it) and a Moses label layout the writers would
have to invent. Random restarts and directions cover every feature either way.
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import numpy as np

from ._ext import _rows
from ._ext._nbest_scan import Vocabulary, decode_hypotheses
from .errors import InputError
from .fileio import atomic_output
from .metrics.bleu import REFLEN_CODES, BleuConfig
from .metrics.layer import Metric, bleu_metric, linear_metric, parse_metric

if TYPE_CHECKING:
    from .metrics.store_stats import StatsBuilder

_FORMAT_VERSION = 3


@dataclass
class FeatureSpace:
    """Feature names (dense columns first) and the Moses dense-label layout.

    ``labels[i]`` (e.g. ``TranslationModel0``) owns columns
    ``label_base[i] .. label_base[i] + label_count[i] - 1``, named ``<label>_<k>``.
    """

    names: Vocabulary = field(default_factory=Vocabulary)
    labels: Vocabulary = field(default_factory=Vocabulary)
    label_base: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    label_count: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    n_dense: int = 0

    @property
    def feature_names(self) -> list[str]:
        """All feature names by id: the dense columns first, then the sparse features in
        the order they were first seen."""
        return self.names.words()

    def __len__(self) -> int:
        return len(self.names)

    def set_layout(self, n_dense: int, label_base: np.ndarray, label_count: np.ndarray) -> None:
        """Record the dense layout a scanner fixed (or confirmed)."""
        self.n_dense = int(n_dense)
        self.label_base = np.ascontiguousarray(label_base, dtype=np.int32)
        self.label_count = np.ascontiguousarray(label_count, dtype=np.int32)

    def define_dense(self, dense_names: Sequence[str], path: str | None = None) -> None:
        """Fix the dense layout from column names ``Label_k`` (as in a features.dat header).

        If a layout exists already, the names must equal it.
        """
        dense_names = list(dense_names)
        if self.n_dense or len(self.names):
            have = self.names.words()[: self.n_dense]
            if have != dense_names:
                raise InputError(
                    f"dense features {' '.join(dense_names)} differ from the earlier {' '.join(have)}", path
                )
            return
        bases: list[int] = []
        counts: list[int] = []
        for j, name in enumerate(dense_names):
            label, _, k = name.rpartition("_")
            if not label or not k.isdigit():
                label, k = name, "0"
            if self.labels.get(label.encode()) < 0:
                self.labels.add(label.encode())
                bases.append(j)
                counts.append(0)
            counts[-1] += 1
            if self.names.add(name.encode()) != j:
                raise InputError(f"dense feature {name!r} named twice", path)
        self.set_layout(len(dense_names), np.asarray(bases), np.asarray(counts))

    def to_arrays(self) -> dict:
        """The space as named arrays (``fs_*`` keys) for a store's ``.npz`` file; read back
        with :meth:`from_arrays`."""
        na, no = self.names.to_arrays()
        la, lo = self.labels.to_arrays()
        return {"fs_names": na, "fs_names_off": no, "fs_labels": la, "fs_labels_off": lo,
                "fs_label_base": self.label_base, "fs_label_count": self.label_count,
                "fs_n_dense": np.int64(self.n_dense)}

    @classmethod
    def from_arrays(cls, z) -> FeatureSpace:
        """The space saved by :meth:`to_arrays` (``z``: a mapping with its ``fs_*`` arrays)."""
        return cls(Vocabulary.from_arrays(z["fs_names"], z["fs_names_off"]),
                   Vocabulary.from_arrays(z["fs_labels"], z["fs_labels_off"]),
                   np.ascontiguousarray(z["fs_label_base"]), np.ascontiguousarray(z["fs_label_count"]),
                   int(z["fs_n_dense"]))


class NbestCorpus:
    """Accumulated n-best lists of a tuning set (see the module docstring for the arrays).

    Build it with :meth:`from_nbest` (n-best/k-best files and references),
    :func:`mtplug.formats.mert_data.read_mert_data` (Moses's features.dat/scores.dat),
    :meth:`load` (a store written by :meth:`save`) or :meth:`from_arrays` (synthetic
    data); grow it with :meth:`add_nbest`. Entries identical in sentence, hypothesis,
    features and statistics are stored once.
    """

    def __init__(self, *, n_sentences: int, bleu: BleuConfig = BleuConfig(), references=None,
                 ref_len_divisor: int = 1, words: Vocabulary | None = None,
                 space: FeatureSpace | None = None, has_strings: bool = True, metric: Metric | None = None):
        """An empty store of ``n_sentences`` sentences (the builders above fill it).

        bleu: BLEU's options (reference length, case); references: the encoded references
        ``(sent_ptr, tok_ptr, tokens)`` of :func:`mtplug.formats.references.encode_references`,
        or None (no statistics); ref_len_divisor: BLEU's reference-length divisor
        (:meth:`mtplug.metrics.bleu.BleuConfig.ref_len_divisor`); words: the vocabulary the references were
        encoded with; space: the feature names and dense layout; has_strings: keep the
        hypothesis strings (False for stores from features.dat); metric: what the
        statistics columns hold (default: BLEU alone).
        """
        self.bleu = bleu
        self.references = references          # encoded (sent_ptr, tok_ptr, tokens) or None
        self.ref_len_divisor = int(ref_len_divisor)
        #: what the stats columns hold and how they score (mtplug.metrics.layer.Metric)
        self.metric: Metric = metric if metric is not None else bleu_metric(self.ref_len_divisor)
        self._builder: StatsBuilder | None = None  # of metrics other than BLEU alone
        self._m2_references = None                 # a loaded m2 store's M2 file (see load)
        self.words = words if words is not None else Vocabulary()
        self.space = space if space is not None else FeatureSpace()
        self.sent_offsets = np.zeros(n_sentences + 1, dtype=np.int64)
        self.dense = np.zeros((0, 0), dtype=np.float64)
        self.sparse_indptr = np.zeros(1, dtype=np.int64)
        self.sparse_ids = np.zeros(0, dtype=np.int32)
        self.sparse_values = np.zeros(0, dtype=np.float64)
        self.stats = np.zeros((0, self.metric.n_stats if references is not None else 0), dtype=np.int32)
        self.hyp_indptr = np.zeros(1, dtype=np.int64) if has_strings else None
        self.hyp_bytes = np.zeros(0, dtype=np.uint8) if has_strings else None
        self._word_list: list[str] | None = None
        #: the reference files the sentences were counted from (from_nbest), for messages
        self.reference_source: str | None = None

    # ------------------------------------------------------------------ building
    @classmethod
    def from_nbest(cls, paths: Sequence[str], references=None, bleu: BleuConfig = BleuConfig(),
                   progress: Callable[[int], object] | None = None, metric: str | Metric = "bleu",
                   finish: bool = True, nbest_format: str = "moses") -> NbestCorpus:
        """Read n-best/k-best files (merged, deduplicated) and, with ``references``
        (a :class:`mtplug.formats.references.References`), their statistics of ``metric``
        (``--metric`` text, mtplug.metrics.layer; BLEU by default). finish: check that
        external score files were used up (False when more files follow). nbest_format:
        the files' format, one of :data:`mtplug.formats.nbest_formats.NBEST_FORMATS`
        (fairseq, Marian and JSON lines are read through Moses copies).
        """
        from .formats.nbest_formats import moses_copies
        from .formats.references import References, encode_references
        from .metrics.store_stats import StatsBuilder

        if references is not None and not isinstance(references, References):
            raise TypeError("references must be References (from mtplug.read_references(paths)), "
                            f"got {type(references).__name__}")
        words = Vocabulary()
        enc = None
        divisor = 1
        n_sent = 0
        if references is not None:
            if bleu.reflen == "average" and references.uniform_count is None:
                raise InputError("reflen=average needs the same number of references for every sentence",
                                 references.source)
            enc = encode_references(references, words, bleu.lowercase, bleu.ascii_case)
            divisor = bleu.ref_len_divisor(references.uniform_count or 1)
            n_sent = len(references)
        corpus = cls(n_sentences=n_sent, bleu=bleu, references=enc, ref_len_divisor=divisor, words=words)
        corpus.reference_source = None if references is None else references.source
        parsed = parse_metric(metric) if isinstance(metric, str) else metric
        if not parsed.is_bleu:
            if enc is None and any(p.name != "ext" for p in parsed.parts):
                raise ValueError(f"metric {parsed.name} needs references")
            corpus._builder = StatsBuilder(parsed, enc, words, bleu, divisor, m2=_m2_scorer(parsed, references),
                                           text_refs=references)
            corpus.metric = corpus._builder.metric
            corpus.stats = np.zeros((0, corpus.metric.n_stats), dtype=np.int32)
        with moses_copies(paths, nbest_format) as moses_paths:
            corpus.add_nbest(moses_paths, progress=progress)
        if finish:
            corpus.finish_stats()
        return corpus

    @classmethod
    def from_arrays(cls, sent_ids, dense, dense_names: Sequence[str], stats, *, sparse=None,
                    sparse_names: Sequence[str] = (), metric: str | Metric = "bleu",
                    metric_norm: float = 1.0) -> NbestCorpus:
        """A store from arrays (no hypothesis strings): for synthetic data and tests.

        sent_ids int [n] (non-decreasing), dense float64 [n, D], stats int32 [n, k]: 9
        BLEU columns for ``metric="bleu"``, one column g for ``metric="linear"`` (corpus
        value Σ g / metric_norm), or the columns of a bound Metric; sparse: optional
        (indptr int64 [n + 1], ids int32 indexing ``sparse_names``, values float64).
        """
        if isinstance(metric, str):
            if metric not in ("bleu", "linear"):
                raise ValueError(f"metric must be 'bleu', 'linear' or a Metric, got {metric!r}")
            metric = bleu_metric() if metric == "bleu" else linear_metric(metric_norm)
        corpus = cls(n_sentences=0, has_strings=False, metric=metric)
        stats = np.ascontiguousarray(stats, dtype=np.int32)
        if stats.shape[1] != metric.n_stats:
            raise ValueError(f"{metric.name} needs {metric.n_stats} statistics columns, got {stats.shape[1]}")
        corpus.stats = np.zeros((0, stats.shape[1]), dtype=np.int32)
        corpus.space.define_dense(list(dense_names))
        n = len(sent_ids)
        if sparse is None:
            sparse = (np.zeros(n + 1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.float64))
        ids = np.array([corpus.space.names.add(nm.encode("utf-8")) for nm in sparse_names] or [0],
                       dtype=np.int32)[np.asarray(sparse[1], dtype=np.int64)] if len(sparse[1]) else \
            np.zeros(0, np.int32)
        values = np.array(sparse[2], dtype=np.float64)
        _rows.sort_csr_rows(np.ascontiguousarray(sparse[0], dtype=np.int64), ids, values)
        corpus.merge_arrays({"sent_ids": np.asarray(sent_ids, dtype=np.int32),
                             "dense": np.ascontiguousarray(dense, dtype=np.float64),
                             "sparse_indptr": np.ascontiguousarray(sparse[0], dtype=np.int64),
                             "sparse_ids": ids, "sparse_values": values, "stats": stats})
        return corpus

    @classmethod
    def from_plain(cls, path: str, references, bleu: BleuConfig = BleuConfig(),
                   metric: str | Metric = "bleu") -> NbestCorpus:
        """One hypothesis per sentence from a plain text file (line i = sentence i), with
        the statistics of ``metric`` (as :meth:`from_nbest`)."""
        corpus = cls.from_nbest([], references, bleu, metric=metric, finish=False)
        corpus.add_nbest([path], plain=True)
        corpus.finish_stats()
        return corpus

    def add_nbest(self, paths: Sequence[str], progress: Callable[[int], object] | None = None,
                  plain: bool = False) -> int:
        """Parse and merge more n-best files (e.g. the next iteration's); returns the
        number of new unique hypotheses. ``plain``: the files hold one hypothesis per
        line (see :func:`mtplug.formats.nbest.scan_nbest`)."""
        from .formats.nbest import scan_nbest

        if self.hyp_indptr is None:
            raise ValueError("cannot add n-best lists to a store read from features/scores files")
        if self._builder is None and not self.metric.is_bleu and self.references is not None:
            # a store loaded from disk: its metric's collectors, bound to the same references
            from .metrics.store_stats import StatsBuilder

            if any(p.name in ("ext", "linear") for p in self.metric.parts):
                raise ValueError(f"a store of {self.metric.name} statistics cannot take new n-best lists: "
                                 "external scores are not kept with a store")
            m2_refs = self._m2_references
            if any(p.name == "m2" for p in self.metric.parts) and m2_refs is None:
                raise ValueError("a store of m2 statistics takes new n-best lists only when loaded with its M2 "
                                 "references (NbestCorpus.load(path, references)): a store does not keep them")
            self._builder = StatsBuilder(self.metric, self.references, self.words, self.bleu, self.ref_len_divisor,
                                         m2=None if m2_refs is None else _m2_scorer(self.metric, m2_refs))
        added = 0
        for path in paths:
            arrays = scan_nbest(path, words=self.words, space=self.space, refs=self.references,
                                reflen_code=REFLEN_CODES[self.bleu.reflen], lowercase=self.bleu.lowercase,
                                ascii_case=self.bleu.ascii_case,
                                progress=progress, plain=plain)
            arrays["plain"] = plain     # BLEUDOC reads a plain line without the n-best field's spaces
            arrays["stats"] = self.stats_rows(arrays, path)
            added += self.merge_arrays(arrays)
        self._word_list = None
        return added

    def stats_rows(self, arrays: dict, where: str) -> np.ndarray:
        """The metric's statistics int32 [n, n_stats] of rows scanned against this store's
        references (``arrays`` as :func:`mtplug.formats.nbest.scan_nbest` returns them, with
        their BLEU statistics); ``where``: their file, for messages."""
        return arrays["stats"] if self._builder is None else self._builder.rows(arrays, where)

    def finish_stats(self) -> None:
        """InputError if an external score file of the metric has scores left over."""
        if self._builder is not None:
            self._builder.finish()

    def merge_arrays(self, a: dict, dedup: str = "stable") -> int:
        """Merge rows given as arrays (keys as returned by ``scan_nbest``) into the store.

        ``dedup="stable"``: rows keep their order (per sentence, existing rows first, then new
        rows in input order) and a row equal to an earlier one of its sentence (strings
        included) is dropped. ``dedup="moses"``: Moses's ``Data::removeDuplicates`` as its
        extractor runs it after loading everything: rows equal in features (as 32-bit floats)
        and statistics, whatever their strings, are kept once, and the swaps of its removal
        reorder the rest exactly as Moses's features.dat does. Returns the number of rows added.
        """
        if dedup not in ("stable", "moses"):
            raise ValueError(f"dedup must be 'stable' or 'moses', got {dedup!r}")
        new_sids = np.ascontiguousarray(a["sent_ids"], dtype=np.int64)
        n_old = self.n_hypotheses
        n_sent = max(self.n_sentences, int(new_sids.max()) + 1 if len(new_sids) else 0)
        if self.references is None and n_sent > self.n_sentences:
            grown = np.full(n_sent + 1, self.sent_offsets[-1], dtype=np.int64)
            grown[: len(self.sent_offsets)] = self.sent_offsets
            self.sent_offsets = grown
        old_sids = np.repeat(np.arange(self.n_sentences, dtype=np.int64), np.diff(self.sent_offsets))
        dense = a["dense"] if n_old == 0 else np.concatenate([self.dense, a["dense"]])
        stats = a["stats"] if n_old == 0 else np.concatenate([self.stats, a["stats"]])
        sp_indptr, sp_ids, sp_vals = _concat_csr(
            (self.sparse_indptr, self.sparse_ids, self.sparse_values),
            (a["sparse_indptr"], a["sparse_ids"], a["sparse_values"]), n_old)
        if self.hyp_indptr is not None:
            hyp_indptr, hyp_bytes, _ = _concat_csr((self.hyp_indptr, self.hyp_bytes, None),
                                                   (a["hyp_indptr"], a["hyp_bytes"], None), n_old)
        else:
            hyp_indptr, hyp_bytes = np.zeros(0, np.int64), np.zeros(0, np.uint8)
        sids = new_sids if n_old == 0 else np.concatenate([old_sids, new_sids])
        del old_sids
        if len(sids) > 1 and np.all(sids[1:] >= sids[:-1]):
            order = np.arange(len(sids), dtype=np.int64)
        else:
            order = np.argsort(sids, kind="stable").astype(np.int64)
        counts = np.bincount(sids, minlength=len(self.sent_offsets) - 1)
        group_offsets = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=group_offsets[1:])
        if dedup == "moses":
            rows = np.empty(len(sids), dtype=np.int64)
            kept = _rows.moses_duplicates(order, group_offsets, np.ascontiguousarray(dense, dtype=np.float64),
                                          sp_indptr, sp_ids, sp_vals, _as_bytes_rows(stats), rows, counts)
            rows = rows[:kept]
            np.cumsum(counts, out=group_offsets[1:])
        else:
            keep = np.empty(len(sids), dtype=np.uint8)
            kept = _rows.duplicate_mask(order, group_offsets, _as_bytes_rows(dense), sp_indptr, sp_ids, sp_vals,
                                        _as_bytes_rows(stats), hyp_indptr, hyp_bytes, keep)
            if kept == len(sids) and (len(order) == 0 or (order[-1] == len(order) - 1
                                                          and np.all(np.diff(order) == 1))):
                rows = None  # already grouped and unique: adopt the arrays as they are
            else:
                rows = order[keep.view(bool)]
                counts = np.bincount(sids[rows], minlength=len(counts))
                np.cumsum(counts, out=group_offsets[1:])
            del keep
        del sids, order
        if rows is not None:
            dense = dense[rows]
            stats = stats[rows]
            ip, data = _rows.gather_csr(sp_indptr, sp_ids.view(np.uint8), 4, rows)
            _, vdata = _rows.gather_csr(sp_indptr, sp_vals.view(np.uint8), 8, rows)
            sp_indptr, sp_ids, sp_vals = ip, data.view(np.int32), vdata.view(np.float64)
            if self.hyp_indptr is not None:
                hyp_indptr, hyp_bytes = _rows.gather_csr(hyp_indptr, hyp_bytes, 1, rows)
        self.dense = np.ascontiguousarray(dense)
        self.stats = np.ascontiguousarray(stats)
        self.sparse_indptr, self.sparse_ids, self.sparse_values = sp_indptr, sp_ids, sp_vals
        if self.hyp_indptr is not None:
            self.hyp_indptr, self.hyp_bytes = hyp_indptr, hyp_bytes
        self.sent_offsets = group_offsets
        return self.n_hypotheses - n_old

    def merge_store(self, other: NbestCorpus) -> int:
        """Add the rows of ``other`` (same sentences and dense features) to this store,
        comparing rows on sentence, features and statistics only: the merge of Moses's
        ``extractor --prev-ffile``, where this store was read from features/scores files
        and holds no hypothesis strings. Sparse features of ``other`` are re-interned
        into this store's feature space. Returns the number of rows added.
        """
        if other.feature_names[: other.n_dense] != self.feature_names[: self.n_dense]:
            raise InputError("the stores have different dense features: "
                             f"{' '.join(self.feature_names[: self.n_dense])} vs "
                             f"{' '.join(other.feature_names[: other.n_dense])}")
        table = np.array([self.space.names.add(n.encode("utf-8")) for n in other.feature_names] or [0],
                         dtype=np.int32)
        ids = np.ascontiguousarray(table[other.sparse_ids]) if len(other.sparse_ids) else other.sparse_ids.copy()
        values = other.sparse_values.copy()
        _rows.sort_csr_rows(other.sparse_indptr, ids, values)
        sent_ids = np.repeat(np.arange(other.n_sentences, dtype=np.int32), np.diff(other.sent_offsets))
        return self.merge_arrays({"sent_ids": sent_ids, "dense": other.dense, "stats": other.stats,
                                  "sparse_indptr": other.sparse_indptr, "sparse_ids": ids,
                                  "sparse_values": values})

    def dense_only(self) -> NbestCorpus:
        """A store sharing this one's dense features and statistics, without the sparse
        features (what Moses's ``mert`` optimises: it ignores sparse features)."""
        view = NbestCorpus(n_sentences=self.n_sentences, bleu=self.bleu, references=self.references,
                           ref_len_divisor=self.ref_len_divisor, words=self.words, has_strings=False)
        view.space.define_dense(self.feature_names[: self.n_dense])
        view.metric = self.metric
        view.sent_offsets, view.dense, view.stats = self.sent_offsets, self.dense, self.stats
        view.sparse_indptr = np.zeros(self.n_hypotheses + 1, dtype=np.int64)
        return view

    # ------------------------------------------------------------------ queries
    @property
    def n_sentences(self) -> int:
        """Sentences S of the tuning set (some may have no hypotheses yet)."""
        return len(self.sent_offsets) - 1

    @property
    def n_hypotheses(self) -> int:
        """Stored (unique) hypotheses n, over all sentences."""
        return int(self.sent_offsets[-1])

    @property
    def n_stats(self) -> int:
        """Statistics columns per hypothesis (0 without references)."""
        return int(self.stats.shape[1])

    @property
    def n_dense(self) -> int:
        """Dense features (columns of ``dense``; feature ids 0 .. n_dense-1)."""
        return self.space.n_dense

    @property
    def n_features(self) -> int:
        """All features, dense and sparse: the length of a weight vector."""
        return len(self.space)

    @property
    def feature_names(self) -> list[str]:
        """Feature names by id (dense first): the names of a weight vector's entries."""
        return self.space.feature_names

    def sparse_row(self, h: int) -> list[tuple[int, float]]:
        """Sparse entries ``(feature id, value)`` of hypothesis ``h``."""
        lo, hi = self.sparse_indptr[h], self.sparse_indptr[h + 1]
        return list(zip(self.sparse_ids[lo:hi].tolist(), self.sparse_values[lo:hi].tolist()))

    def hypotheses(self, start: int, stop: int) -> list[str]:
        """Hypothesis strings ``start .. stop-1`` (tokens joined by one space)."""
        if self.hyp_indptr is None or self.hyp_bytes is None:
            raise ValueError("this store holds no hypothesis strings")
        if self._word_list is None or len(self._word_list) != len(self.words):
            self._word_list = self.words.words()
        ptr, toks = decode_hypotheses(self.hyp_bytes, self.hyp_indptr, start, stop)
        wl = self._word_list
        return [" ".join([wl[t] for t in toks[ptr[i]:ptr[i + 1]]]) for i in range(stop - start)]

    def check_complete(self, where: str | None = None) -> None:
        """Raise InputError (naming ``where``, the input files) if a sentence has no
        hypotheses (optimizers need one each). When the lists lack only sentences after
        their last one, the references (which have more lines) are named instead, with
        their line count and the expected one."""
        sizes = np.diff(self.sent_offsets)
        empty = np.flatnonzero(sizes == 0)
        if not len(empty):
            return
        filled = np.flatnonzero(sizes > 0)
        if self.reference_source is not None and len(filled) and empty[0] > filled[-1]:
            # the sentences the lists lack are those after their last one: the references,
            # which set the number of sentences, have lines the lists do not (an extra line)
            last = int(filled[-1])
            has = "have" if ", " in self.reference_source else "has"
            raise InputError(f"{has} {self.n_sentences} lines, expected {last + 1}: one per sentence of the n-best "
                             f"lists{f' ({where})' if where else ''}, whose last sentence is {last} (unless the lists "
                             "lack their last sentences)", self.reference_source)
        raise InputError(f"sentence {int(empty[0])} has no hypotheses "
                         f"({len(empty)} of {self.n_sentences} sentences are empty)", where)

    def scores(self, weights: np.ndarray, threads: int = 1) -> np.ndarray:
        """Model scores float64 [n_hyp] under ``weights`` (float64 [n_features]), on
        ``threads`` OpenMP threads (the same result for any number)."""
        w = checked_weights(weights, self.n_features)
        out = np.empty(self.n_hypotheses, dtype=np.float64)
        _rows.hyp_scores(self.dense, self.sparse_indptr, self.sparse_ids,
                         self.sparse_values, w, out, max(1, int(threads)))
        return out

    def one_best(self, weights: np.ndarray) -> np.ndarray:
        """Row index of the best hypothesis per sentence, int64 [S] (ties: first row)."""
        self.check_complete()
        out = np.empty(self.n_sentences, dtype=np.int64)
        _rows.argmax_per_sentence(self.scores(weights), self.sent_offsets, out)
        return out

    def corpus_stats(self, rows: np.ndarray) -> np.ndarray:
        """Summed statistics int64 [n_stats] of the given rows."""
        if self.stats.shape[1] == 0:
            raise ValueError("this store has no metric statistics (no references were given)")
        return self.stats[rows].sum(axis=0, dtype=np.int64)

    def bleu_of(self, weights: np.ndarray):
        """Corpus BLEU (mtplug.metrics.bleu.BleuScore) of the 1-best under ``weights``."""
        return self.bleu_of_rows(self.one_best(weights))

    def metric_of(self, weights: np.ndarray) -> float:
        """The metric's objective (higher is better, a fraction; BLEU itself for a BLEU
        store) of the 1-best under ``weights``; ``self.metric.value(...)`` turns it into the
        score users read (0-100, e.g. TER as an error rate)."""
        return self.metric.objective(self.corpus_stats(self.one_best(weights)))

    def bleu_of_rows(self, rows: np.ndarray):
        """Corpus BLEU (BleuScore) of the hypotheses ``rows`` (one per sentence, int64);
        ValueError if the store holds no BLEU statistics."""
        from .metrics.bleu import corpus_bleu_from_stats

        cols = self.metric.columns("bleu")
        if cols is None:
            raise ValueError(f"this store holds {self.metric.name} statistics, not BLEU's")
        return corpus_bleu_from_stats(self.corpus_stats(rows)[cols], self.ref_len_divisor)

    # ------------------------------------------------------------------ persistence
    def save(self, path: str) -> None:
        """Write the whole store to one ``.npz`` file (atomically)."""
        arrays = dict(
            version=np.int64(_FORMAT_VERSION), sent_offsets=self.sent_offsets, dense=self.dense,
            sparse_indptr=self.sparse_indptr, sparse_ids=self.sparse_ids, sparse_values=self.sparse_values,
            stats=self.stats, ref_len_divisor=np.int64(self.ref_len_divisor),
            reflen=np.array(self.bleu.reflen), lowercase=np.bool_(self.bleu.lowercase),
            ascii_case=np.bool_(self.bleu.ascii_case),
            metric_json=np.array(json.dumps(self.metric.to_json())),
            **self.space.to_arrays(),
        )
        wa, wo = self.words.to_arrays()
        arrays.update(words=wa, words_off=wo)
        if self.hyp_indptr is not None:
            arrays.update(hyp_indptr=self.hyp_indptr, hyp_bytes=self.hyp_bytes)
        if self.references is not None:
            arrays.update(ref_sent_ptr=self.references[0], ref_tok_ptr=self.references[1],
                          ref_tokens=self.references[2])
        with atomic_output(path, "wb") as fh:
            np.savez(fh, **arrays)

    @classmethod
    def load(cls, path: str, references=None) -> NbestCorpus:
        """Read a store written by :meth:`save` (into memory). ``references``: the
        References it was made with, when its metric reads what a store does not keep
        (the M2 file of an ``m2`` part, :func:`mtplug.metrics.m2.m2_references`), so that
        :meth:`add_nbest` can take more lists; ignored otherwise."""
        z = {name: np.array(a) for name, a in map_store(path).items()}
        refs = None
        if "ref_sent_ptr" in z:
            refs = (z["ref_sent_ptr"], z["ref_tok_ptr"], z["ref_tokens"])
        has_strings = "hyp_indptr" in z
        c = cls(n_sentences=len(z["sent_offsets"]) - 1,
                bleu=BleuConfig(str(z["reflen"]), bool(z["lowercase"]),
                                bool(z["ascii_case"]) if "ascii_case" in z else False), references=refs,
                ref_len_divisor=int(z["ref_len_divisor"]),
                words=Vocabulary.from_arrays(z["words"], z["words_off"]),
                space=FeatureSpace.from_arrays(z), has_strings=has_strings)
        c.sent_offsets = z["sent_offsets"]
        c.dense = z["dense"]
        c.sparse_indptr, c.sparse_ids, c.sparse_values = z["sparse_indptr"], z["sparse_ids"], z["sparse_values"]
        c.stats = z["stats"]
        c.metric = stored_metric(z)
        if has_strings:
            c.hyp_indptr, c.hyp_bytes = z["hyp_indptr"], z["hyp_bytes"]
        c._m2_references = references if any(p.name == "m2" for p in c.metric.parts) else None
        return c

    def __repr__(self) -> str:
        return (f"NbestCorpus({self.n_sentences} sentences, {self.n_hypotheses} hypotheses, "
                f"{self.n_dense} dense + {self.n_features - self.n_dense} sparse features)")


def stored_metric(arrays) -> Metric:
    """The Metric of a saved store's arrays (format 3: its JSON; format 2: ``bleu`` or
    ``linear`` with ``metric_norm``)."""
    if "metric_json" in arrays:
        return Metric.from_json(json.loads(str(arrays["metric_json"])))
    if str(arrays["metric"]) == "linear":
        return linear_metric(float(arrays["metric_norm"]))
    return bleu_metric(int(arrays["ref_len_divisor"]))


def checked_weights(weights, n_features: int) -> np.ndarray:
    """``weights`` as a contiguous float64 [n_features] array; ValueError if the shape is
    wrong or a weight is not finite."""
    w = np.ascontiguousarray(weights, dtype=np.float64)
    if w.shape != (n_features,):
        raise ValueError(f"weights must have shape ({n_features},), got {w.shape}")
    if not np.all(np.isfinite(w)):
        raise ValueError("weights must be finite")
    return w


def _as_bytes_rows(a: np.ndarray) -> np.ndarray:
    """View a C-contiguous 2-D array as rows of bytes (for exact comparison)."""
    a = np.ascontiguousarray(a)
    return a.view(np.uint8).reshape(a.shape[0], a.shape[1] * a.itemsize)


def concat_arrays(parts: Sequence[dict]) -> dict:
    """Row arrays (the keys of ``scan_nbest``) of several parts, one after the other; the
    hypothesis strings only when every part has them."""
    if not parts:
        return {"sent_ids": np.zeros(0, np.int32), "dense": np.zeros((0, 0)), "stats": np.zeros((0, 0), np.int32),
                "sparse_indptr": np.zeros(1, np.int64), "sparse_ids": np.zeros(0, np.int32),
                "sparse_values": np.zeros(0, np.float64)}
    out = {key: np.concatenate([p[key] for p in parts]) for key in ("sent_ids", "dense", "stats", "sparse_ids",
                                                                     "sparse_values")}
    csr = [("sparse_indptr", "sparse_ids")] + ([("hyp_indptr", "hyp_bytes")] if all("hyp_indptr" in p
                                                                                   for p in parts) else [])
    for indptr, data in csr:
        if data == "hyp_bytes":
            out[data] = np.concatenate([p[data] for p in parts])
        starts = np.cumsum([0] + [int(p[indptr][-1]) for p in parts[:-1]])
        out[indptr] = np.concatenate([np.zeros(1, np.int64)] + [p[indptr][1:] + s0 for p, s0 in zip(parts, starts)])
    return out


def _concat_csr(old, new, n_old):
    """Concatenate two CSR triples (indptr, data, values-or-None)."""
    if n_old == 0:
        return new
    ip = np.concatenate([old[0], new[0][1:] + old[0][-1]])
    data = np.concatenate([old[1], new[1]])
    vals = None if old[2] is None else np.concatenate([old[2], new[2]])
    return ip, data, vals


#: members smaller than this are read; larger ones are memory-mapped
_MAP_BYTES = 1 << 16


def map_store(path: str) -> dict[str, np.ndarray]:
    """Every array of a store written by :meth:`NbestCorpus.save`, by name: large ones
    memory-mapped read-only (nothing is read until used, so a worker that needs a few
    sentences of a huge store reads only their pages), small ones read. InputError when
    ``path`` is not a store of this format version."""
    path = os.fspath(path)
    out: dict[str, np.ndarray] = {}
    try:
        with zipfile.ZipFile(path) as zf, open(path, "rb") as fh:
            for info in zf.infolist():
                name = info.filename.removesuffix(".npy")
                if info.compress_type != zipfile.ZIP_STORED or info.file_size < _MAP_BYTES:
                    with zf.open(info) as member:
                        out[name] = np.lib.format.read_array(member, allow_pickle=False)
                    continue
                fh.seek(info.header_offset)
                local = fh.read(30)
                if local[:4] != b"PK\x03\x04":
                    raise ValueError(f"bad zip entry {info.filename}")
                fh.seek(info.header_offset + 30 + int.from_bytes(local[26:28], "little")
                        + int.from_bytes(local[28:30], "little"))
                version = np.lib.format.read_magic(fh)
                read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                               else np.lib.format.read_array_header_2_0)
                shape, fortran, dtype = read_header(fh)
                if dtype.hasobject:
                    raise ValueError(f"{name} holds Python objects")
                out[name] = np.memmap(path, dtype=dtype, mode="r", offset=fh.tell(), shape=shape,
                                      order="F" if fortran else "C")
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise InputError(f"not an mtplug store ({exc})", path) from None
    if "version" not in out or int(out["version"]) != _FORMAT_VERSION:
        raise InputError(f"not an mtplug store of format version {_FORMAT_VERSION}", path)
    return out


def _m2_scorer(metric: Metric, references):
    """The M2 statistics collector of a metric with an ``m2`` part (None without one):
    ``references`` must come from :func:`mtplug.metrics.m2.m2_references`."""
    if not any(p.name == "m2" for p in metric.parts):
        return None
    ref = getattr(references, "m2", None)
    if ref is None:
        raise InputError("the m2 metric needs an M2 reference file (S and A lines)", references.source)
    from .metrics.m2 import M2Scorer

    return M2Scorer(ref, references.m2_options, warn=getattr(references, "m2_warn", None))
