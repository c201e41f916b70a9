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
(:class:`ExpectedBleu`; the passes may run on dask workers, each on its own sentences,
with exact sums across sentences).

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

import numpy as np

from mtplug._ext import _expbleu
from mtplug.exact_sum import Packed, accumulator, merged, rounded_sum
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
        held = corpus.metric
        if not (held.is_bleu or held.name == "linear"):
            raise ValueError(f"expected-BLEU directions need a store of BLEU statistics, not {held.name}")
        metric = held.name
    if metric not in EXPECTED_METRICS:
        raise ValueError(f"unknown metric {metric!r}; choose from {', '.join(EXPECTED_METRICS)}")
    if metric == "bleu":
        if norm is not None:
            raise ValueError("norm applies to metric='linear' only")
        return metric, 1.0
    if norm is None:
        if corpus.metric.name != "linear":
            raise ValueError("metric='linear' needs norm=... (the corpus score is sum_s E_s[g] / norm)")
        norm = corpus.metric.parts[0].param
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


def _part_moments(part, w: np.ndarray, mu: float, threads: int):
    """Pass 1 on one partition (a :class:`mtplug.distributed.pool.PoolPart`), where it
    lives: model scores, softmaxes and the exact partial expected statistics. Returns
    (kept, public): kept = the outputs of ``_expbleu.sentence_moments`` (sent_best,
    sent_dev, sent_bad, prob) stay on the worker; public = (acc int64 [n_stats, WIDTH],
    the first sentence with a non-finite score or mu * score, or -1, and (hypothesis,
    score) when the score itself is not finite, else None)."""
    stats = part.stats
    scores = part.kept_scores(w, threads)
    S = part.offsets.shape[0] - 1
    moments = (np.empty(S, dtype=np.int64), np.empty((S, stats.shape[1])), np.empty(S, dtype=np.int8),
               np.empty(scores.shape[0]))
    acc = accumulator(stats.shape[1])
    bad = np.flatnonzero(~np.isfinite(scores))
    if bad.size:
        sentence = int(np.searchsorted(part.offsets, bad[0], side="right")) - 1
        h = int(bad[0])
        return None, (acc, part.first_sentence + sentence, (part.first_row + h, float(scores[h])))
    _expbleu.sentence_moments(scores, mu, part.offsets, stats, *moments, threads)
    first = _expbleu.partition_totals(stats, part.offsets, *moments[:3], acc)
    return moments, (acc, part.first_sentence + first if first >= 0 else -1, None)


def _checked_stats(part, metric: str, threads: int) -> None:
    _kernel_stats(part.stats, metric)


def _public(result):
    return result[1]


def _part_gradient(part, result, slope: np.ndarray, n_features: int, form: str,
                   threads: int) -> Packed | np.ndarray:
    """Pass 2 on one partition: X^T c (``PoolPart.transpose``, the dense block relative to
    each sentence's best row) in ``form`` (``PartitionedPool.sum_form``)."""
    sent_best, sent_dev, _, prob = result[0]
    coef = np.empty(prob.shape[0])
    _expbleu.hypothesis_coefficients(prob, part.offsets, part.stats, sent_best, sent_dev, slope, coef, threads)
    return part.transpose(coef, sent_best, n_features, threads, form)


class ExpectedBleu:
    """Expected log-BLEU J(w) and its gradient on one corpus, for many weights and mu.

    corpus: an :class:`mtplug.corpus.NbestCorpus`, or a
    :class:`mtplug.distributed.pool.PartitionedPool` (e.g. a store read by the dask
    workers themselves); every sentence needs a hypothesis. metric: ``"bleu"`` (stats [n,
    9]) or ``"linear"`` (stats [n, 1]); ``None`` takes ``corpus.metric``. norm: the LINEAR
    divisor (> 0); ``None`` takes the corpus's own for a linear corpus. Must be
    ``None`` for BLEU. threads: OpenMP threads over sentences. engine: where the passes
    run for an NbestCorpus (:class:`mtplug.distributed.LocalEngine` by default; a dask
    engine places one partition of sentences on each worker, once). Any threads and
    engine give the same result, bit for bit: per-sentence values do not depend on the
    split, and the sums across sentences are exact (:mod:`mtplug.exact_sum`). Only weight
    vectors go to the partitions and exact partial sums come back.

    Raises (on construction) InputError for a sentence without hypotheses,
    ValueError/TypeError for bad arguments or statistics (BLEU rows are checked: no
    negative counts, matches <= totals; on the partitions, at the first evaluation, for
    a pool).
    """

    def __init__(self, corpus, *, metric: str | None = None, norm: float | None = None, threads: int = 1,
                 engine=None):
        from ..distributed.pool import PartitionedPool, as_pool

        self.metric, self.norm = _resolve_metric(corpus, metric, norm)
        self.divisor = _check_divisor(corpus.ref_len_divisor) if self.metric == "bleu" else 1.0
        corpus.check_complete()
        if not isinstance(corpus, PartitionedPool):
            stats = _kernel_stats(corpus.stats, self.metric)  # the errors name the rows of the whole corpus
            if stats.shape[0] != corpus.n_hypotheses:
                raise ValueError(f"stats has {stats.shape[0]} rows for {corpus.n_hypotheses} hypotheses")
            ids = corpus.sparse_ids
            if len(ids) and (ids.min() < corpus.n_dense or ids.max() >= corpus.n_features):
                raise ValueError(f"sparse feature ids must lie in [{corpus.n_dense}, {corpus.n_features})")
        self.pool = as_pool(corpus, engine, threads)
        if isinstance(corpus, PartitionedPool):
            # checked where the rows are, once (the errors count rows from the partition)
            self.pool.engine.wait(self.pool.run(_checked_stats, self.pool.each(self.metric)))
        self.n_features = self.pool.n_features

    def gradient(self, weights, mu: float) -> tuple[float, np.ndarray]:
        """``(value, gradient)`` at ``weights`` (float64 [n_features], corpus order, finite)
        and scaling ``mu`` (> 0, finite; 1/mu is the temperature; large mu approaches the
        1-best): value the objective (log-BLEU of the expected statistics, <= 0, or
        sum_s E_s[g] / norm for ``linear``) as a float; gradient float64 [n_features], d
        value / d weights. When an expected match count is 0, returns ``(-inf, zeros)``
        with a :class:`DegenerateObjectiveWarning`. FloatingPointError when ``mu * score``
        overflows or the gradient is not finite; ValueError when a model score is not
        finite (features too large).
        """
        from ..corpus import checked_weights

        mu = _check_mu(mu)
        pool = self.pool
        w = checked_weights(weights, self.n_features)
        results = pool.run(_part_moments, pool.each(w), pool.each(mu))
        public = pool.engine.fetch(pool.engine.run(_public, results))
        bad = [(s, score) for _, s, score in public if s >= 0]
        if bad:
            s, score = min(bad, key=lambda b: b[0])
            if score is not None:
                raise ValueError(f"model score of hypothesis {score[0]} (sentence {s}) is {score[1]}: "
                                 f"its features are not finite")
            raise FloatingPointError(f"mu * model score overflows in sentence {s} (mu = {mu:g}); lower mu")
        totals = rounded_sum([p[0] for p in public])
        slope = np.zeros(totals.shape[0])
        value, status, index = _expbleu.value_and_slope(totals, self.divisor, EXPECTED_METRICS[self.metric],
                                                        self.norm, slope)
        gradient = np.zeros(self.n_features)
        if status == _expbleu.STATUS_ZERO_MATCHES:
            warnings.warn(DegenerateObjectiveWarning(
                f"expected {index}-gram match count is 0 (expected totals "
                f"{' '.join(f'{k}={v:.6g}' for k, v in zip(STATS_LAYOUT, totals))}): "
                f"expected log-BLEU is -inf and the gradient is set to 0"), stacklevel=2)
            return float(value), gradient
        form = pool.sum_form()
        parts = pool.engine.fetch(pool.run(_part_gradient, results, pool.each(slope), pool.each(self.n_features),
                                           pool.each(form)))
        gradient = mu * merged(parts, form)
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
