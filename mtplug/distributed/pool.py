"""A store cut into partitions of whole sentences that live where their work runs.

:class:`PartitionedPool` is what the distributed objectives (APRO, expected BLEU) work
on. Each partition (:class:`PoolPart`: dense and sparse features, statistics and sentence
offsets of a run of sentences) sits on one worker of the engine and never travels back;
a call sends weights (float64 [n_features]) and gets exact partial sums
(:mod:`mtplug.exact_sum`) or per-sentence integers back. So a pool may be larger than any
one machine: :meth:`PartitionedPool.from_store` lets every worker read its own
sentences from a store file on a shared file system, and this process reads only the
sentence offsets and feature names.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from .._ext import _rows
from ..corpus import FeatureSpace, map_store, stored_metric
from ..errors import InputError
from ..exact_sum import WIDTH, Packed, accumulator, in_form
from ..metrics.sentence import row_scores
from .local import LocalEngine
from .partition import partition_sentences


@dataclass
class PoolPart:
    """Sentences [first_sentence, first_sentence + S_p) of a store, rows counted from 0
    (row 0 is the store's row first_row).

    offsets int64 [S_p + 1]; dense float64 [n_p, n_dense]; sparse CSR sp_indptr int64
    [n_p + 1] (from 0), sp_ids int32 (global feature ids), sp_values float64; stats int32
    [n_p, n_stats]. metric (mtplug.metrics.layer.Metric), ref_len_divisor as in the store;
    n_sentences_all: the whole store's number of sentences (sentence-level scores of
    ``ext``/``linear`` parts are scaled by it).
    """

    first_sentence: int
    first_row: int
    offsets: np.ndarray
    dense: np.ndarray
    sp_indptr: np.ndarray
    sp_ids: np.ndarray
    sp_values: np.ndarray
    stats: np.ndarray
    metric: object
    ref_len_divisor: int
    n_sentences_all: int

    @property
    def n_hypotheses(self) -> int:
        """Rows n_p of this partition."""
        return int(self.offsets[-1])

    def scores(self, weights: np.ndarray, threads: int) -> np.ndarray:
        """Model scores float64 [n_p] (as :meth:`mtplug.corpus.NbestCorpus.scores`)."""
        out = np.empty(self.n_hypotheses, dtype=np.float64)
        _rows.hyp_scores(self.dense, self.sp_indptr, self.sp_ids, self.sp_values, weights, out, threads)
        return out

    def kept_scores(self, weights: np.ndarray, threads: int) -> np.ndarray:
        """:meth:`scores`, kept for the last weights asked (read-only; the expected-BLEU
        direction finder asks for one point at many μ)."""
        kept = self.__dict__.get("_kept_scores")
        if kept is None or not np.array_equal(kept[0], weights):
            scores = self.scores(weights, threads)
            scores.flags.writeable = False
            self._kept_scores = kept = (np.array(weights, dtype=np.float64, copy=True), scores)
        return kept[1]

    def pairs(self, n_features: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(row_ptr, row_pair, row_value, feature_ptr, feature_pairs) of
        ``_rows.sentence_pairs``: the (sentence, feature) pairs where a sparse feature
        varies and their entries by row, made on first use and kept with the partition.
        ValueError for a feature id out of range."""
        cached = self.__dict__.get("_pairs")
        if cached is None or cached[3].shape[0] != n_features + 1:
            bad, *cached = _rows.sentence_pairs(self.sp_indptr, self.sp_ids, self.sp_values, self.offsets,
                                                n_features)
            if bad >= 0:
                raise ValueError(f"sparse feature id {int(self.sp_ids[bad])} is outside [0, {n_features})")
            self._pairs = cached = tuple(cached)
        return cached

    def transpose(self, coef: np.ndarray, ref_rows: np.ndarray, n_features: int, threads: int,
                  form: str) -> np.ndarray | Packed:
        """X^T coef (coef float64 [n_p], summing to 0 within each sentence; ref_rows int64
        [S_p], the row each sentence's dense block is taken relative to), n_features sums
        in ``form`` (:data:`mtplug.exact_sum.SUM_FORMS`: rounded once, float64
        [n_features], or an exact accumulator, plain or packed, for merging with other
        partitions'; ``_rows.transpose_pairs``: the same values for any threads and
        partitions)."""
        if form == "rounded":
            out, acc = np.empty(n_features), np.empty((0, WIDTH), dtype=np.int64)
        else:
            out, acc = np.empty(0), accumulator(n_features)
        row_ptr, row_pair, row_value, feature_ptr, feature_pairs = self.pairs(n_features)
        _rows.transpose_pairs(self.dense, row_ptr, row_pair, row_value, feature_ptr, feature_pairs, self.offsets,
                              ref_rows, coef, out, acc, threads)
        return out if form == "rounded" else in_form(acc, form)

    def metric_scores(self, variant: str, threads: int) -> np.ndarray:
        """Sentence-level metric of every row (:func:`mtplug.metrics.sentence.hypothesis_scores`)."""
        return row_scores(self.stats, variant, metric=self.metric, n_sentences=self.n_sentences_all,
                          threads=threads)

    def one_best_stats(self, weights: np.ndarray, threads: int) -> np.ndarray:
        """Summed statistics int64 [n_stats] of each sentence's best row (ties: first)."""
        best = np.empty(self.offsets.shape[0] - 1, dtype=np.int64)
        _rows.argmax_per_sentence(self.scores(weights, threads), self.offsets, best)
        return self.stats[best].sum(axis=0, dtype=np.int64)


def _slice(arrays, s_lo: int, s_hi: int, meta: dict) -> PoolPart:
    """The PoolPart of sentences [s_lo, s_hi) of a store's arrays (memory maps are read
    here, only the rows of these sentences)."""
    offsets = np.asarray(arrays["sent_offsets"])
    lo, hi = int(offsets[s_lo]), int(offsets[s_hi])
    indptr = np.array(arrays["sparse_indptr"][lo:hi + 1], dtype=np.int64)
    e_lo, e_hi = int(indptr[0]), int(indptr[-1])
    whole = s_lo == 0 and s_hi == offsets.shape[0] - 1 and not isinstance(arrays["dense"], np.memmap)

    def rows(a):
        return np.ascontiguousarray(a) if whole else np.array(a, copy=True, order="C")

    return PoolPart(
        first_sentence=s_lo,
        first_row=lo,
        offsets=offsets if whole else offsets[s_lo:s_hi + 1] - lo,
        dense=rows(arrays["dense"][lo:hi]).astype(np.float64, copy=False),
        sp_indptr=indptr if e_lo == 0 else indptr - e_lo,
        sp_ids=rows(arrays["sparse_ids"][e_lo:e_hi]).astype(np.int32, copy=False),
        sp_values=rows(arrays["sparse_values"][e_lo:e_hi]).astype(np.float64, copy=False),
        stats=rows(arrays["stats"][lo:hi]).astype(np.int32, copy=False),
        **meta)


def load_part(job: tuple) -> PoolPart:
    """Run on a worker: read sentences [s_lo, s_hi) of the store at ``path``; InputError if
    the file there is not the one this run opened (other size or hypothesis count)."""
    path, s_lo, s_hi, n_hyp, size, meta = job
    try:
        seen = os.path.getsize(path)
    except OSError as exc:
        raise InputError(f"a worker cannot read the store ({exc}): it must be on a shared file system",
                         path) from None
    arrays = map_store(path)
    if seen != size or int(arrays["sent_offsets"][-1]) != n_hyp:
        raise InputError("a worker sees another store at this path than the driver "
                         f"({seen} bytes, {int(arrays['sent_offsets'][-1])} hypotheses; expected {size} bytes, "
                         f"{n_hyp} hypotheses)", path)
    return _slice(arrays, s_lo, s_hi, meta)


class PartitionedPool:
    """A store split into partitions of sentences, one per worker of ``engine`` (module
    docstring). Build it with :meth:`from_corpus` or :meth:`from_store`.

    Attributes: engine; parts (handles of the PoolParts); sentence_ranges [(s_lo, s_hi)]
    per partition; part_threads (kernel threads per partition);
    n_sentences, n_hypotheses, n_dense, n_features, feature_names, metric
    (mtplug.metrics.layer.Metric), ref_len_divisor, n_stats, source (what it was made
    from, for messages).
    """

    def __init__(self, engine, offsets: np.ndarray, space: FeatureSpace, meta: dict,
                 n_stats: int, threads: int, source: str):
        """The pool's bookkeeping, without parts (the builders place them): ``offsets``
        int64 [S + 1], the whole store's sentence offsets; ``space``, its
        :class:`mtplug.corpus.FeatureSpace`; ``meta``, what every part carries (metric,
        ref_len_divisor, n_sentences_all); ``n_stats``, statistics columns; ``threads``,
        kernel threads where the engine does not say."""
        self.engine = engine
        self.sentence_ranges = partition_sentences(offsets, engine.n_workers)
        self.n_sentences = int(offsets.shape[0] - 1)
        self.n_hypotheses = int(offsets[-1])
        self.n_dense = int(space.n_dense)
        self.feature_names = space.feature_names
        self.n_features = len(self.feature_names)
        self.metric = meta["metric"]
        self.ref_len_divisor = meta["ref_len_divisor"]
        self.n_stats = int(n_stats)
        self.threads = max(1, int(threads))
        self.part_threads = [engine.threads_of(i) or self.threads for i in range(len(self.sentence_ranges))]
        self.source = source
        self._empty = np.flatnonzero(np.diff(offsets) == 0)
        self.parts: list = []

    @staticmethod
    def _meta(metric, ref_len_divisor, n_sentences) -> dict:
        """What every PoolPart carries besides its rows."""
        return dict(metric=metric, ref_len_divisor=int(ref_len_divisor), n_sentences_all=int(n_sentences))

    @classmethod
    def from_corpus(cls, corpus, engine=None, threads: int = 1) -> PartitionedPool:
        """Partitions of an in-memory :class:`mtplug.corpus.NbestCorpus`, placed on
        ``engine``'s workers (a LocalEngine keeps one partition here, without copies)."""
        engine = engine if engine is not None else LocalEngine()
        meta = cls._meta(corpus.metric, corpus.ref_len_divisor, corpus.n_sentences)
        offsets = np.ascontiguousarray(corpus.sent_offsets, dtype=np.int64)
        pool = cls(engine, offsets, corpus.space, meta, corpus.stats.shape[1], threads, "the store")
        arrays = dict(sent_offsets=offsets, dense=corpus.dense, sparse_indptr=corpus.sparse_indptr,
                      sparse_ids=corpus.sparse_ids, sparse_values=corpus.sparse_values, stats=corpus.stats)
        ranges = pool.sentence_ranges
        # a partition whose worker leaves the cluster is sliced again from the corpus held here
        pool.parts = engine.put([_slice(arrays, a, b, meta) for a, b in ranges],
                                remake=lambda i: _slice(arrays, *ranges[i], meta))
        return pool

    @classmethod
    def from_store(cls, path: str, engine, threads: int = 1) -> PartitionedPool:
        """Partitions of the store file ``path`` (:meth:`mtplug.corpus.NbestCorpus.save`),
        each read by the worker that keeps it: ``path`` must be the same file on every
        worker (a shared file system). Reads only offsets and names here."""
        path = os.fspath(path)
        arrays = map_store(path)
        meta = cls._meta(stored_metric(arrays), arrays["ref_len_divisor"], arrays["sent_offsets"].shape[0] - 1)
        offsets = np.array(arrays["sent_offsets"], dtype=np.int64)
        pool = cls(engine, offsets, FeatureSpace.from_arrays(arrays), meta, arrays["stats"].shape[1], threads,
                   path)
        size = os.path.getsize(path)
        pool.parts = engine.place(load_part, [(path, a, b, pool.n_hypotheses, size, meta)
                                              for a, b in pool.sentence_ranges])
        return pool

    # ------------------------------------------------------------------ calls
    def run(self, fn, *args):
        """``fn(part_i, *[a[i] for a in args], threads_i)`` next to each partition; handles."""
        return self.engine.run(fn, self.parts, *args, self.part_threads)

    def sum_form(self) -> str:
        """How partitions return exact partial sums (:data:`mtplug.exact_sum.SUM_FORMS`):
        rounded by the only partition, packed from other processes, else plain."""
        if len(self.parts) == 1:
            return "rounded"
        return "packed" if self.engine.address is not None else "exact"

    def each(self, value) -> list:
        """``value`` once per partition (an argument of :meth:`run`)."""
        return [value] * len(self.parts)

    def check_complete(self, where: str | None = None) -> None:
        """InputError (naming ``where``, else the store) if a sentence has no hypotheses."""
        if len(self._empty):
            raise InputError(f"sentence {int(self._empty[0])} has no hypotheses ({len(self._empty)} of "
                             f"{self.n_sentences} sentences are empty)", where or self.source)

    def one_best_stats(self, weights: np.ndarray) -> np.ndarray:
        """Summed statistics int64 [n_stats] of the 1-best under ``weights`` (integers:
        exact whatever the split)."""
        from ..corpus import checked_weights

        w = checked_weights(weights, self.n_features)
        parts = self.engine.fetch(self.run(_one_best_stats, self.each(w)))
        return np.asarray(parts, dtype=np.int64).sum(axis=0)

    def metric_of(self, weights: np.ndarray) -> float:
        """The metric's objective of the 1-best (as :meth:`mtplug.corpus.NbestCorpus.metric_of`)."""
        return self.metric.objective(self.one_best_stats(weights))

    def bleu_of(self, weights: np.ndarray, stats: np.ndarray | None = None):
        """Corpus BLEU (BleuScore) of the 1-best under ``weights``."""
        from ..metrics.bleu import corpus_bleu_from_stats

        cols = self.metric.columns("bleu")
        if self.n_stats == 0 or cols is None:
            raise ValueError("this store has no BLEU statistics")
        return corpus_bleu_from_stats((self.one_best_stats(weights) if stats is None else stats)[cols],
                                      self.ref_len_divisor)

    def __repr__(self) -> str:
        return (f"PartitionedPool({self.n_sentences} sentences, {self.n_hypotheses} hypotheses, "
                f"{len(self.parts)} partitions)")


def _one_best_stats(part: PoolPart, w: np.ndarray, threads: int) -> np.ndarray:
    return part.one_best_stats(w, threads)


def as_pool(corpus, engine=None, threads: int = 1) -> PartitionedPool:
    """``corpus`` itself when it is a PartitionedPool, else its partitions on ``engine``."""
    if isinstance(corpus, PartitionedPool):
        return corpus
    return PartitionedPool.from_corpus(corpus, engine, threads)
