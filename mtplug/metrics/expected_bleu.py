"""Expected BLEU and its gradient: the direction MERT's gradient direction finder uses.

Galley, Quirk, Cherry & Toutanova (2013), "Regularized Minimum Error Rate Training",
section 4: the first-order Taylor approximation of expected log-BLEU,

    J(w) = logBLEU(T(w)),   T(w) = sum_s sum_{h in s} p_s(h) stats_h   (float, [9])
    p_s(h) = exp(mu w.f_h) / sum_{h' in s} exp(mu w.f_h')               (per sentence)
    logBLEU(T) = 1/4 sum_{n=1..4} (log m_n - log t_n) + min(0, 1 - r/c)

with m_n = T[2n-2], t_n = T[2n-1], c = t_1, r = T[8] / ref_len_divisor (the layout of
:data:`mtplug.metrics.bleu.STATS_LAYOUT`). Its gradient is

    dJ/dw = sum_k (dlogBLEU/dT_k) dT_k/dw,   dT_k/dw = mu sum_s Cov_{p_s}(stats_k, f)
          = mu sum_s Cov_{p_s}(g, f),        g_h = (dlogBLEU/dT) . stats_h

computed by the nogil kernels of ``pyx/_expbleu.pyx`` in two passes over the corpus
(:class:`ExpectedBleu`; the per-sentence passes may run on dask workers).

A second metric, ``linear``, serves synthetic experiments: stats has one column g_h (an
int32, e.g. a scaled per-hypothesis score) and J = sum_s E_s[g] / norm.

Decisions:

- Brevity penalty: the derivative of min(0, 1 - r/c) is taken one-sided, 0 whenever
  c >= r (also at the kink c = r).
- An expected match count m_n = 0 (every hypothesis with non-negligible probability has no
  n-gram match of order n) makes J = -inf. Galley et al. use expected counts, which are
  rarely 0; when it happens the point offers no direction, so
  :func:`expected_bleu_gradient` returns ``(-inf, zero gradient)`` and emits a
  :class:`DegenerateObjectiveWarning` naming the order and the expected totals (no
  smoothing is applied: the objective stays Galley's). Turn it into an error with
  ``warnings.simplefilter("error", DegenerateObjectiveWarning)``.
- ``mu * score`` overflowing, or a non-finite gradient, raises FloatingPointError.
- A sentence with one hypothesis has p = 1: it adds its statistics to T and nothing to
  the gradient. A sentence without hypotheses is an error (as for every optimizer).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from mtplug._ext import _expbleu
from mtplug.metrics.bleu import N_STATS, NGRAM_ORDER, STATS_LAYOUT, _check_divisor, _validated_stats

#: metric name -> kernel code: the one list. Mirrors the C enum in pyx/_expbleu.pyx.
EXPECTED_METRICS = {"bleu": 0, "linear": 1}
#: metric name -> stats columns it needs
METRIC_N_STATS = {"bleu": N_STATS, "linear": 1}

_INT32 = np.iinfo(np.int32)


class DegenerateObjectiveWarning(RuntimeWarning):
    """The expected-BLEU objective is -inf (an expected n-gram match count is 0)."""


def _check_mu(mu) -> float:
    if isinstance(mu, (bool, np.bool_)) or not isinstance(mu, (int, float, np.integer, np.floating)):
        raise TypeError(f"mu must be a positive number, got {mu!r}")
    mu = float(mu)
    if not (math.isfinite(mu) and mu > 0.0):
        raise ValueError(f"mu must be positive and finite, got {mu!r}")
    return mu


def _resolve_metric(corpus, metric, norm) -> tuple[str, float]:
    """The metric name and the LINEAR norm (1.0 for BLEU, where it is unused)."""
    if metric is None:
        metric = getattr(corpus, "metric", "bleu")
    if metric not in EXPECTED_METRICS:
        raise ValueError(f"unknown metric {metric!r}; choose from {', '.join(EXPECTED_METRICS)}")
    if metric == "bleu":
        if norm is not None:
            raise ValueError("norm applies to metric='linear' only")
        return metric, 1.0
    if norm is None:
        if getattr(corpus, "metric", None) != "linear":
            raise ValueError("metric='linear' needs norm=... (the corpus score is sum_s E_s[g] / norm)")
        norm = corpus.metric_norm
    if isinstance(norm, (bool, np.bool_)):
        raise TypeError("norm must be a positive number, got a bool")
    norm = float(norm)
    if not (math.isfinite(norm) and norm > 0.0):
        raise ValueError(f"norm must be positive and finite, got {norm!r}")
    return metric, norm


def _kernel_stats(stats: np.ndarray, metric: str) -> np.ndarray:
    """``stats`` as C-contiguous int32 [n, n_stats], checked once (vectorised)."""
    want = METRIC_N_STATS[metric]
    arr = np.asarray(stats)
    if arr.ndim != 2 or arr.shape[1] != want:
        layout = " ".join(STATS_LAYOUT) if metric == "bleu" else "g"
        raise ValueError(f"metric {metric!r} needs stats of shape [n, {want}] ({layout}), got {arr.shape}")
    if arr.dtype.kind not in "iu":
        raise TypeError(f"stats must be integers, got dtype {arr.dtype}")
    if arr.dtype != np.int32 and arr.size and (arr.min() < _INT32.min or arr.max() > _INT32.max):
        raise ValueError("stats do not fit in int32")
    if metric == "bleu" and arr.size and (
            arr.min() < 0 or np.any(arr[:, 0:2 * NGRAM_ORDER:2] > arr[:, 1:2 * NGRAM_ORDER:2])):
        # the fast test above costs ~1/5 of _validated_stats; that one names the bad row
        _validated_stats(arr)  # raises: a negative count, or match_n > total_n
    return np.ascontiguousarray(arr, dtype=np.int32)


@dataclass
class _Part:
    """A run of sentences: stats int32 [n_p, n_stats], dense float64 [n_p, n_dense],
    offsets int64 [S_p + 1] from 0."""

    stats: np.ndarray
    dense: np.ndarray
    offsets: np.ndarray


def _part_moments(part: _Part, scores: np.ndarray, mu: float, threads: int):
    """Pass 1 on one partition: (sent_max, sent_z, sent_best, sent_dev, sent_bad)."""
    S = part.offsets.shape[0] - 1
    out = (np.empty(S), np.empty(S), np.empty(S, dtype=np.int64),
           np.empty((S, part.stats.shape[1])), np.empty(S, dtype=np.int8))
    _expbleu.sentence_moments(scores, mu, part.offsets, part.stats, *out, threads)
    return out


def _part_coefficients(part: _Part, moments, scores: np.ndarray, mu: float, slope: np.ndarray, threads: int):
    """Pass 2 on one partition: (coef float64 [n_p], dense_acc float64 [S_p, n_dense])."""
    coef = np.empty(part.stats.shape[0])
    dense_acc = np.empty((part.offsets.shape[0] - 1, part.dense.shape[1]))
    sent_max, sent_z, sent_best, sent_dev, _ = moments
    _expbleu.hypothesis_coefficients(scores, mu, part.offsets, part.stats, part.dense, sent_max, sent_z,
                                     sent_best, sent_dev, slope, coef, dense_acc, threads)
    return coef, dense_acc


def _joined(arrays: list) -> np.ndarray:
    return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)


class ExpectedBleu:
    """Expected log-BLEU J(w) and its gradient on one corpus, for many weights and mu.

    corpus: an :class:`mtplug.corpus.NbestCorpus` (every sentence needs a hypothesis).
    metric: ``"bleu"`` (stats [n, 9]) or ``"linear"`` (stats [n, 1]); ``None`` takes
    ``corpus.metric`` when the corpus has one, else ``"bleu"``. norm: the LINEAR divisor
    (> 0); ``None`` takes ``corpus.metric_norm`` for a linear corpus. Must be ``None``
    for BLEU. threads: OpenMP threads over sentences. engine: where the per-sentence
    passes run (:class:`mtplug.distributed.LocalEngine` by default; a dask engine places
    one partition of sentences on each worker, once). Any threads and engine give the
    same result, bit for bit: per-sentence outputs do not depend on the split, and the
    sums across sentences run here in sentence order.

    Raises (on construction) InputError for a sentence without hypotheses,
    ValueError/TypeError for bad arguments or statistics (BLEU rows are checked: no
    negative counts, matches <= totals).
    """

    def __init__(self, corpus, *, metric: str | None = None, norm: float | None = None, threads: int = 1,
                 engine=None):
        from ..distributed import LocalEngine
        from ..distributed.partition import partition_sentences

        self.metric, self.norm = _resolve_metric(corpus, metric, norm)
        self.divisor = _check_divisor(corpus.ref_len_divisor) if self.metric == "bleu" else 1.0
        corpus.check_complete()
        stats = _kernel_stats(corpus.stats, self.metric)
        if stats.shape[0] != corpus.n_hypotheses:
            raise ValueError(f"stats has {stats.shape[0]} rows for {corpus.n_hypotheses} hypotheses")
        self.corpus = corpus
        self.stats = stats
        self.n_features = corpus.n_features
        self.sp_ids = np.ascontiguousarray(corpus.sparse_ids, dtype=np.int32)
        if self.sp_ids.size and (self.sp_ids.min() < corpus.n_dense or self.sp_ids.max() >= self.n_features):
            raise ValueError(f"sparse feature ids must lie in [{corpus.n_dense}, {self.n_features})")
        self.sp_indptr = np.ascontiguousarray(corpus.sparse_indptr, dtype=np.int64)
        self.sp_values = np.ascontiguousarray(corpus.sparse_values, dtype=np.float64)
        self.offsets = np.ascontiguousarray(corpus.sent_offsets, dtype=np.int64)
        dense = np.ascontiguousarray(corpus.dense, dtype=np.float64)
        self.threads = max(1, int(threads))
        self.engine = engine if engine is not None else LocalEngine()
        self.rows, parts = [], []
        for s_lo, s_hi in partition_sentences(self.offsets, self.engine.n_workers):
            lo, hi = int(self.offsets[s_lo]), int(self.offsets[s_hi])
            self.rows.append((lo, hi, s_lo))
            parts.append(_Part(stats[lo:hi], dense[lo:hi], self.offsets[s_lo:s_hi + 1] - lo))
        self.parts = self.engine.put(parts)
        self.part_threads = [self.engine.threads_of(i) or self.threads for i in range(len(parts))]

    def gradient(self, weights, mu: float) -> tuple[float, np.ndarray]:
        """``(value, gradient)`` at ``weights`` (float64 [n_features], corpus order, finite)
        and scaling ``mu`` (> 0, finite; 1/mu is the temperature; large mu approaches the
        1-best): value the objective (log-BLEU of the expected statistics, <= 0, or
        sum_s E_s[g] / norm for ``linear``) as a float; gradient float64 [n_features], d
        value / d weights. When an expected match count is 0, returns ``(-inf, zeros)``
        with a :class:`DegenerateObjectiveWarning`. FloatingPointError when ``mu * score``
        overflows or the gradient is not finite.
        """
        mu = _check_mu(mu)
        corpus, engine = self.corpus, self.engine
        scores = corpus.scores(weights, self.threads)  # checks the shape and finiteness of weights
        bad = np.flatnonzero(~np.isfinite(scores))
        if bad.size:
            h = int(bad[0])
            s = int(np.searchsorted(corpus.sent_offsets, h, side="right")) - 1
            raise ValueError(f"model score of hypothesis {h} (sentence {s}) is {scores[h]}: "
                             f"its features are not finite")
        pieces = [scores[lo:hi] for lo, hi, _ in self.rows]
        mus = [mu] * len(pieces)
        moments = engine.run(_part_moments, self.parts, pieces, mus, self.part_threads)
        fetched = engine.fetch(moments)
        sent_best = _joined([m[2] + lo for m, (lo, _, _) in zip(fetched, self.rows)])
        sent_dev, sent_bad = _joined([m[3] for m in fetched]), _joined([m[4] for m in fetched])
        n_stats = self.stats.shape[1]
        totals, slope = np.empty(n_stats), np.zeros(n_stats)
        value, status, index = _expbleu.expected_totals(
            self.stats, self.offsets, sent_best, sent_dev, sent_bad, self.divisor,
            EXPECTED_METRICS[self.metric], self.norm, totals, slope)
        gradient = np.zeros(self.n_features)
        if status == _expbleu.STATUS_OVERFLOW:
            lo, hi = corpus.sent_offsets[index], corpus.sent_offsets[index + 1]
            top = float(np.max(np.abs(scores[lo:hi])))
            raise FloatingPointError(f"mu * model score overflows in sentence {index} "
                                     f"(mu = {mu:g}, |score| up to {top:g}); lower mu")
        if status == _expbleu.STATUS_ZERO_MATCHES:
            warnings.warn(DegenerateObjectiveWarning(
                f"expected {index}-gram match count is 0 (expected totals "
                f"{' '.join(f'{k}={v:.6g}' for k, v in zip(STATS_LAYOUT, totals))}): "
                f"expected log-BLEU is -inf and the gradient is set to 0"), stacklevel=2)
            return float(value), gradient
        coefs = engine.fetch(engine.run(_part_coefficients, self.parts, moments, pieces, mus,
                                        [slope] * len(pieces), self.part_threads))
        coef, dense_acc = _joined([c[0] for c in coefs]), _joined([c[1] for c in coefs])
        _expbleu.gradient_sum(self.offsets, coef, dense_acc, self.sp_indptr, self.sp_ids, self.sp_values, mu,
                              gradient)
        if not (math.isfinite(value) and np.all(np.isfinite(gradient))):
            raise FloatingPointError(f"expected {self.metric} gradient is not finite (value {value}, "
                                     f"mu = {mu:g}); the features or mu are too large")
        return float(value), gradient


def expected_bleu_gradient(corpus, weights, mu: float, *, metric: str | None = None,
                           norm: float | None = None, threads: int = 1, engine=None) -> tuple[float, np.ndarray]:
    """Expected log-BLEU J(w) and its gradient dJ/dw (formulas in the module docstring):
    ``ExpectedBleu(corpus, metric=, norm=, threads=, engine=).gradient(weights, mu)``;
    arguments, result and errors as there."""
    mu = _check_mu(mu)
    return ExpectedBleu(corpus, metric=metric, norm=norm, threads=threads, engine=engine).gradient(weights, mu)
