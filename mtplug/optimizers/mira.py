"""MIRA over the n-best store: online MIRA (Eidelman 2012) and batch k-best MIRA (Moses kbmira).

Shared PA-I step (compiled, pyx/_mira.pyx). For a hope row y+ and a fear row y- with
features f, model scores s = w·f and gains g::

    diff = f(y+) - f(y-)
    loss = (w·f(y-) - w·f(y+)) + (g(y+) - g(y-))        # margin violation + cost difference
    skip if y+ == y-, loss <= 0 or ‖diff‖² == 0; else
    δ = min(C, loss / ‖diff‖²);   w ← w + δ·diff

Averaged weights are the mean of the weights after each step taken (all passes; the start
is not counted; with no step at all, the start is returned).

:class:`Mira` (``mira``): gains are sentence metrics g = hypothesis_scores(corpus, variant)
(cost = 1 - g), pseudo-document BLEU, or BLEU against the 1-best document (``doc-1best``,
below); hope/fear strategies of Eidelman (2012, Eq. 3), his MB variant (``fear_list``:
the fear among each sentence's K best rows by model score, the hope among all), iterative
parameter mixing over shards (McDonald et al. 2010).

``doc-1best`` (Eidelman 2012's sentence-level BLEU "in the context of the previous
iteration's 1-best translations", as cdec's ``training/mira/kbest_cut_mira.cc`` computes
it without pseudo-document BLEU, the code the paper ran): in the first pass g(h) is cdec's
smoothed sentence BLEU of row h; in pass p > 1, with b(s) the row that was the model
1-best of sentence s when pass p − 1 visited it (cdec's ``run.raw.N.B``), D = Σ_s x_{b(s)}
the summed BLEU statistics and R_s = D − x_{b(s)},

    g(h) = σ · (B(x_h + ½·R_s) − B(R_s))

with B cdec's smoothed BLEU (0.01 for a zero match count) and σ = 1, kbest_cut_mira's
defaults (``--mt_metric_scale``, the ½ fixed in its code; pyx/_mira.pyx doc_gains). The
gains stay fixed for the pass; a sentence's own R_s term cancels in every hope − fear
difference.

Per pass the result records the store metric (0–100) of the hope rows and of the fear rows
chosen in that pass (one of each per sentence, at the weights of the moment it was visited):
Eidelman's oracle and prediction BLEU per iteration.

:class:`KbMira` (``kbmira``): Cherry & Foster (2012) as Moses mert/kbmira.cpp does it,
gains from pseudo-document BLEU over a decaying background (formula in pyx/_mira.pyx).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .._ext import _hopefear, _mira
from ..distributed import LocalEngine
from ..forests.corpus import ForestCorpus
from ..metrics.bleu import SENTENCE_BLEU_VARIANTS
from ..metrics.sentence import hypothesis_scores
from .base import (
    START_SCALE_INFO,
    Optimizer,
    Result,
    check_start_scale,
    from_scaled_start,
    reject_inapplicable,
    runs_per_start_scale,
    start_scale_option,
    unchanged_warnings,
)
from .kbmira_m2 import is_m2, kbmira_m2

#: (model_coef, gain_coef) of the hope (oracle) strategies; a = cost scale α
HOPE = {"lu": lambda a: (0.0, 1.0), "hope": lambda a: (1.0, a)}
#: (model_coef, gain_coef) of the fear (prediction) strategies
FEAR = {"pb": lambda a: (1.0, 0.0), "mc": lambda a: (0.0, -1.0), "fear": lambda a: (1.0, -a)}

#: Moses kbmira's initial background: 4 4 3 3 2 2 1 1 4 (matches/totals of orders 1..4, ref length)
KBMIRA_BG0 = np.array([4, 4, 3, 3, 2, 2, 1, 1, 4], dtype=np.float64)
#: above this mean pair margin a start is also tried shrunk to unit margin (base.from_scaled_start):
#: Hopkins & May's synthetic set starts at 500-1600; MIRA's and kbmira's own weights reach
#: 1.1-1.85 on the fixed cdec pools and 10-12 by iteration 3-4 of the decoder loop
MIRA_MARGIN_ABOVE = 10.0
#: the cost choice of online MIRA that uses pseudo-document BLEU instead of a sentence metric
PSEUDO_DOC = "pseudo-doc"
#: the cost choice of online MIRA that uses BLEU in the context of the last pass's 1-best document
#: (module docstring)
DOC_1BEST = "doc-1best"
#: kbest_cut_mira's weight of the rest of the 1-best document in a hypothesis's statistics (fixed in its code)
DOC_CONTEXT = 0.5
#: kbest_cut_mira's --mt_metric_scale default (mira.py --metric-scale)
DOC_SCALE = 1.0


def _features(corpus) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    return (np.ascontiguousarray(corpus.dense, dtype=np.float64),
            np.ascontiguousarray(corpus.sparse_indptr, dtype=np.int64),
            np.ascontiguousarray(corpus.sparse_ids, dtype=np.int32),
            np.ascontiguousarray(corpus.sparse_values, dtype=np.float64))



def select(corpus_scores, gains, sent_offsets, model_coef, gain_coef, *, threads: int = 1) -> np.ndarray:
    """Per-sentence argmax of model_coef·score + gain_coef·gain: int64 [S] row indices
    (ties: larger score, then lowest row). scores, gains float64 [n]; sent_offsets int64 [S + 1].
    threads: OpenMP threads over the sentences (default 1); the result does not depend on it."""
    out = np.empty(len(sent_offsets) - 1, dtype=np.int64)
    _hopefear.select(np.ascontiguousarray(corpus_scores, np.float64), np.ascontiguousarray(gains, np.float64),
                     np.ascontiguousarray(sent_offsets, np.int64), float(model_coef), float(gain_coef), out,
                     max(1, int(threads)))
    return out


@dataclass(frozen=True)
class _PassParams:
    """What every shard of an online-MIRA pass needs besides its data and the weights."""

    order: str
    seed_key: int
    hope_model: float
    hope_gain: float
    fear_model: float
    fear_gain: float
    c: float
    ref_divisor: float
    decay: float
    max_size: int
    fear_list: int


@dataclass
class _Shard:
    """One block of sentences, first..first+S_b-1, with its rows (offsets from 0)."""

    feats: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # dense, sparse indptr, ids, values of its rows
    gains: np.ndarray
    stats: np.ndarray | None
    offsets: np.ndarray     # int64 [S_b + 1]
    first: int


def _shard(feats, gains, stats, offsets, block: np.ndarray) -> _Shard:
    """The data of the sentences ``block`` (contiguous, int64) as a :class:`_Shard`."""
    s_lo, s_hi = int(block[0]), int(block[-1]) + 1
    lo, hi = int(offsets[s_lo]), int(offsets[s_hi])
    dense, indptr, ids, values = feats
    a, b = int(indptr[lo]), int(indptr[hi])
    part = (dense[lo:hi], indptr[lo:hi + 1] - a, ids[a:b], values[a:b])
    return _Shard(part, gains[lo:hi], None if stats is None else stats[lo:hi], offsets[s_lo:s_hi + 1] - lo, s_lo)


def _shard_pass(shard: _Shard, w: np.ndarray, bg: np.ndarray | None, p: int, b: int, params: _PassParams,
                gains: np.ndarray | None = None):
    """One pass of shard ``b`` from ``w``: (last weights, K·w − u for averaging, K, loss, background,
    int64 [S_b, 3] hope, fear and visit-time model 1-best rows of its sentences in the shard's row
    numbers); ``gains``:
    this pass's gains of the shard's rows instead of the shard's own (doc-1best)."""
    S_b = shard.offsets.shape[0] - 1
    sentences = np.arange(shard.first, shard.first + S_b, dtype=np.int64)
    if params.order == "shuffle":
        sentences = np.random.default_rng([params.seed_key, p, b]).permutation(sentences)
    ws, u = w.copy(), np.zeros(w.shape[0])
    state = np.zeros(2, dtype=np.int64)
    shard_bg = None if bg is None else bg.copy()  # every shard starts from the pass's background
    chosen = np.empty((S_b, 3), dtype=np.int64)
    lo = _mira.mira_pass(*shard.feats, shard.gains if gains is None else gains, shard.offsets,
                         sentences - shard.first, params.hope_model, params.hope_gain, params.fear_model,
                         params.fear_gain, params.c, ws, u, np.empty(2 * params.max_size), state, shard.stats,
                         params.ref_divisor, params.decay, shard_bg, params.fear_list, chosen)
    k = int(state[0])
    return ws, k * ws - u, k, lo, shard_bg, chosen


class Mira(Optimizer):
    """Online MIRA (Eidelman 2012) over the n-best store.

    Each of ``passes`` passes visits the sentences (store order or a seeded shuffle)
    and takes one PA-I step (capped at ``c``) toward a hope hypothesis and away from a
    fear hypothesis (``hope`` and ``fear`` strategies, cost scale ``alpha``), with
    gains from pseudo-document BLEU against a decaying background (``decay``) or a
    sentence-BLEU variant (``sentence_metric``). With ``shards`` > 1 the sentences are
    split into contiguous shards trained side by side, their weights mixed after each
    pass (iterative parameter mixing, McDonald et al. 2010), in threads or on dask
    workers with the same result. With ``fear_list`` K > 0 (Eidelman's MB) the fear is
    chosen among each sentence's K best rows by current model score, the hope among all.
    :meth:`optimize` returns the average of the weights after every step (or the last
    ones, ``average``), with a warning when no step moved them; ``info`` has the oracle
    (hope) and prediction (fear) score of every pass (``oracle_per_pass``,
    ``prediction_per_pass``, 0–100). A bad or inapplicable option value raises ValueError.
    """

    name = "mira"
    distributes = True
    metric_info = ("oracle_per_pass", "prediction_per_pass", *START_SCALE_INFO)
    help = "online MIRA (Eidelman 2012): per-sentence PA-I hope/fear updates, averaging, parameter mixing"
    options: ClassVar[dict[str, dict]] = {
        "passes": dict(type=int, default=10, metavar="N", help="passes over the sentences (default 10)"),
        "c": dict(type=float, default=0.01, metavar="C", help="PA-I step cap C (default 0.01)"),
        "hope": dict(choices=tuple(HOPE), default="hope",
                     help="oracle y+: lu = max metric, hope = max model + α·metric (default hope)"),
        "fear": dict(choices=tuple(FEAR), default="fear",
                     help="prediction y-: pb = max model, mc = max cost, fear = max model − α·metric (default fear)"),
        "alpha": dict(type=float, default=1.0, metavar="A", help="α: cost scale in hope and fear (default 1)"),
        "order": dict(choices=("fixed", "shuffle"), default="shuffle",
                      help="sentence order in each pass: store order or seeded shuffle (default shuffle)"),
        "shards": dict(type=int, default=1, metavar="N",
                       help="iterative parameter mixing over N contiguous shards of sentences (default 1)"),
        "average": dict(choices=("average", "last"), default="average",
                        help="return the averaged weights or the last ones (default average)"),
        "sentence_metric": dict(choices=tuple(SENTENCE_BLEU_VARIANTS) + (PSEUDO_DOC, DOC_1BEST), default=None,
                                help="metric g, cost = 1 − g: pseudo-doc: pseudo-document BLEU against "
                                     "decayed background statistics of the model 1-best translations "
                                     "(Chiang et al. 2008, as cdec's mira.py); doc-1best: BLEU of the "
                                     "hypothesis plus half the last pass's 1-best document without the "
                                     "sentence, less BLEU of that document (Eidelman 2012, as cdec's "
                                     "kbest_cut_mira; smoothed sentence BLEU in the first pass); or a "
                                     "sentence-BLEU variant "
                                     "such as bleu+1 (default: pseudo-doc, 0.9 BLEU above bleu+1 on a real "
                                     "test set, docs/real-systems.md; bleu+1 for stores without BLEU "
                                     "statistics)"),
        "decay": dict(type=float, default=None, metavar="D",
                      help="pseudo-doc: background decay (default 0.9 as Chiang et al.; 0.999 as Moses kbmira)"),
        "fear_list": dict(type=int, default=0, metavar="K",
                          help="MB (Eidelman 2012): the fear (prediction) among each sentence's K best "
                               "hypotheses by current model score, the hope (oracle) among all; 0 = all "
                               "(default)"),
        "start_scale": start_scale_option(MIRA_MARGIN_ABOVE),
    }

    def __init__(self, passes=10, c=0.01, hope="hope", fear="fear", alpha=1.0, order="shuffle", shards=1,
                 average="average", sentence_metric=None, decay=None, fear_list=0, start_scale=None):
        if int(passes) < 1 or int(shards) < 1:
            raise ValueError(f"passes and shards must be >= 1, got {passes}, {shards}")
        if not (0.0 < float(c) < np.inf) or not (0.0 <= float(alpha) < np.inf):
            raise ValueError(f"need a finite c > 0 and alpha >= 0, got {c}, {alpha}")
        if hope not in HOPE or fear not in FEAR:
            raise ValueError(f"hope must be one of {tuple(HOPE)}, fear one of {tuple(FEAR)}")
        if order not in ("fixed", "shuffle") or average not in ("average", "last"):
            raise ValueError("order must be fixed|shuffle and average average|last")
        if sentence_metric is not None and sentence_metric not in SENTENCE_BLEU_VARIANTS \
                and sentence_metric not in (PSEUDO_DOC, DOC_1BEST):
            raise ValueError(f"unknown sentence metric {sentence_metric!r}")
        if isinstance(fear_list, bool) or int(fear_list) != fear_list or int(fear_list) < 0:
            raise ValueError(f"fear_list must be an integer >= 0 (0: all hypotheses), got {fear_list}")
        if decay is not None and not (0.0 < float(decay) <= 1.0):
            raise ValueError(f"decay must be in (0, 1], got {decay}")
        super().__init__()
        #: as given (None: not given, 0.9 where it applies); only pseudo-doc gains use it
        self.decay_given = decay
        self.decay = 0.9 if decay is None else float(decay)
        self.passes, self.c, self.hope, self.fear, self.alpha = int(passes), float(c), hope, fear, float(alpha)
        self.order, self.shards, self.average, self.sentence_metric = order, int(shards), average, sentence_metric
        self.fear_list = int(fear_list)
        self.start_scale = check_start_scale(start_scale)

    def progress_total(self) -> int:
        return self.passes * runs_per_start_scale(self.start_scale)

    def _optimize(self, corpus, start, seed, *, threads=None, ranges=None, progress=None, engine=None) -> Result:
        """Online MIRA from ``start`` (float64 [n_features]); ``ranges`` unused.

        Each pass: the sentences are split into ``shards`` contiguous blocks; every shard
        starts from the current (mixed) weights and visits its sentences (in store order,
        or shuffled by a generator seeded with (seed, pass, shard)); the new weights are
        the shards' last weights averaged with weights = sentence counts. ``threads`` runs
        shards concurrently; ``engine`` (:func:`mtplug.distributed.connect`) runs them on
        dask workers instead, each shard's data placed on one worker once. The result
        does not depend on either. A start whose mean pair margin exceeds
        ``MIRA_MARGIN_ABOVE`` is also tried shrunk to a margin of 1 (``start_scale``,
        :func:`.base.from_scaled_start`).
        """
        start = self.checked_start(corpus, start)
        return from_scaled_start(corpus, start, MIRA_MARGIN_ABOVE, self.start_scale, progress,
                                 lambda s, prog: self._from_start(corpus, s, seed, threads, prog, engine))

    def _from_start(self, corpus, start, seed, threads, progress, engine) -> Result:
        """:meth:`_optimize` from exactly ``start``."""
        t0 = time.perf_counter()
        metric = self.sentence_metric or (PSEUDO_DOC if corpus.metric.is_bleu else "bleu+1")
        pseudo = metric == PSEUDO_DOC
        doc = metric == DOC_1BEST
        if (pseudo or doc) and not corpus.metric.is_bleu:
            raise ValueError(f"{metric} gains need a store of BLEU statistics, not {corpus.metric.name}")
        reject_inapplicable((("decay", self.decay_given, pseudo, ("pseudo-doc gains (sentence_metric pseudo-doc "
                                                                 "on a store of BLEU statistics)")),))
        n_threads = max(1, threads or os.cpu_count() or 1)
        gains = np.zeros(corpus.n_hypotheses) if pseudo or doc else \
            np.ascontiguousarray(hypothesis_scores(corpus, metric, threads=n_threads), dtype=np.float64)
        stats = np.ascontiguousarray(corpus.stats, dtype=np.int32) if pseudo else None
        doc_stats = np.ascontiguousarray(corpus.stats, dtype=np.int32) if doc else None
        bg = KBMIRA_BG0.copy()
        feats = _features(corpus)
        offsets = np.ascontiguousarray(corpus.sent_offsets, dtype=np.int64)
        S, F = corpus.n_sentences, corpus.n_features
        blocks = [b for b in np.array_split(np.arange(S, dtype=np.int64), min(self.shards, max(S, 1))) if len(b)]
        params = _PassParams(self.order, int(seed) & ((1 << 64) - 1), *HOPE[self.hope](self.alpha),
                             *FEAR[self.fear](self.alpha), self.c, float(corpus.ref_len_divisor), self.decay,
                             int(np.diff(offsets).max()) if S else 1, self.fear_list)
        w = start.copy()
        total_sum = np.zeros(F)
        total_k = 0
        steps = 0
        loss = 0.0
        per_pass = []
        oracle, prediction = [], []
        last_best: np.ndarray | None = None     # doc-1best: no document before the first pass
        row_lo = [int(offsets[blk[0]]) for blk in blocks]
        row_hi = [int(offsets[blk[-1] + 1]) for blk in blocks]
        if engine is None:
            engine = LocalEngine(max(1, min(threads or os.cpu_count() or 1, len(blocks))))
        shards = engine.put([_shard(feats, gains, stats, offsets, blk) for blk in blocks])
        B = len(blocks)
        for p in range(self.passes):
            pass_gains: list = [None] * B
            if doc_stats is not None:
                # BLEU in the context of the last pass's 1-best document (module docstring)
                gains = np.empty(corpus.n_hypotheses)
                _mira.doc_gains(doc_stats, offsets, last_best, float(corpus.ref_len_divisor), DOC_CONTEXT,
                                DOC_SCALE, gains, n_threads)
                pass_gains = [gains[a:b] for a, b in zip(row_lo, row_hi)]
            outs = engine.fetch(engine.run(_shard_pass, shards, [w] * B, [bg if pseudo else None] * B, [p] * B,
                                           range(B), [params] * B, pass_gains))
            mixed = np.zeros(F)
            mixed_bg = np.zeros(9)
            if outs:
                chosen = np.concatenate([o[5] + a for o, a in zip(outs, row_lo)])
                last_best = np.ascontiguousarray(chosen[:, 2])
                oracle.append(corpus.metric.objective(corpus.corpus_stats(chosen[:, 0])))
                prediction.append(corpus.metric.objective(corpus.corpus_stats(chosen[:, 1])))
            for (ws, wsum, k, lo, shard_bg, _), blk in zip(outs, blocks):
                mixed += (len(blk) / S) * ws
                if pseudo:
                    mixed_bg += (len(blk) / S) * shard_bg
                total_sum += wsum
                total_k += k
                loss += lo
                steps += k
            per_pass.append(sum(o[2] for o in outs))
            w = mixed if outs else w
            if pseudo and outs:
                bg = mixed_bg
            if progress is not None:
                progress(1)
        if self.average == "average" and total_k:
            weights = total_sum / total_k
        else:
            weights = w
        if not np.all(np.isfinite(weights)):
            raise FloatingPointError("MIRA produced non-finite weights")
        info = {"passes": self.passes, "sentence_metric": metric, "steps": steps, "background": bg if pseudo else None,
                "steps_per_pass": per_pass, "total_loss": loss, "fear_list": self.fear_list,
                "oracle_per_pass": oracle, "prediction_per_pass": prediction,
                "shards": len(blocks), "last_weights": w, "seconds": time.perf_counter() - t0}
        return Result(weights=weights, score=corpus.metric_of(weights), seed=seed, info=info,
                      warnings=unchanged_warnings("mira", start, weights))


class KbMira(Optimizer):
    """Batch k-best MIRA (Cherry & Foster 2012) as Moses's ``kbmira`` does it.

    Each of ``passes`` passes visits every sentence (a seeded shuffle, or file order)
    and takes one PA-I step (capped at ``c``) from the fear toward the hope hypothesis,
    both chosen by model score ± pseudo-document BLEU against a background of BLEU
    statistics that decays by ``decay`` per sentence (fed by the hope, or by the model
    1-best with ``model_bg``). After each pass the averaged weights are scored;
    :meth:`optimize` returns those of the best pass, as Moses writes them. Unlike Moses, a
    start whose mean pair margin exceeds ``MIRA_MARGIN_ABOVE`` is also tried shrunk to a
    margin of 1, the better result on the store kept (``start_scale``,
    :func:`.base.from_scaled_start`; not on an M2 store, where kbmira is Moses's). Runs on n-best
    stores and on forests; on a store of another metric the gain is the sentence-level
    objective and the background options are errors. A bad option value raises
    ValueError.
    """

    name = "kbmira"
    metric_info = ("best_bleu", "bleu_per_pass", *START_SCALE_INFO)
    help = "batch k-best MIRA (Cherry & Foster 2012) as Moses kbmira: pseudo-document BLEU hope/fear"
    options: ClassVar[dict[str, dict]] = {
        "passes": dict(type=int, default=60, metavar="N", help="passes over the sentences (Moses -J; default 60)"),
        "c": dict(type=float, default=0.01, metavar="C", help="PA-I step cap (Moses -C; default 0.01)"),
        "decay": dict(type=float, default=None, metavar="D", help="background BLEU decay (default 0.999)"),
        "model_bg": dict(action="store_true", default=None,
                         help="background from the model 1-best instead of the hope (Moses --model-bg)"),
        "safe_hope": dict(action="store_true", default=None,
                          help="rescale the model score in hope selection when it dwarfs BLEU (Moses --safe-hope)"),
        "order": dict(choices=("fixed", "shuffle"), default="shuffle",
                      help="sentence order of each pass: seeded shuffle, or file order (Moses --no-shuffle)"),
        "start_scale": start_scale_option(MIRA_MARGIN_ABOVE),
    }

    def __init__(self, passes=60, c=0.01, decay=None, model_bg=None, safe_hope=None, order="shuffle",
                 start_scale=None):
        if int(passes) < 1:
            raise ValueError(f"passes must be >= 1, got {passes}")
        if not (0.0 < float(c) < np.inf) or not (decay is None or 0.0 <= float(decay) <= 1.0):
            raise ValueError(f"need a finite c > 0 and decay in [0, 1], got {c}, {decay}")
        super().__init__()
        # as given (None: not given), so that a store without BLEU can refuse them
        self.background_options = (("decay", decay), ("model_bg", model_bg), ("safe_hope", safe_hope))
        self.passes, self.c = int(passes), float(c)
        self.decay = 0.999 if decay is None else float(decay)
        self.model_bg, self.safe_hope = bool(model_bg), bool(safe_hope)
        if order not in ("fixed", "shuffle"):
            raise ValueError(f"order must be 'fixed' or 'shuffle', got {order!r}")
        self.order = order
        self.start_scale_given = start_scale
        self.start_scale = check_start_scale(start_scale)

    def progress_total(self) -> int:
        return self.passes * runs_per_start_scale(self.start_scale)

    def _optimize(self, corpus, start, seed, *, threads=None, ranges=None, progress=None) -> Result:
        """kbmira from ``start`` (float64 [n_features]); ``threads`` and ``ranges`` unused.

        Each pass visits all sentences in an order shuffled by one generator seeded with
        ``seed``; after each pass the averaged weights are scored (the store metric's
        objective of their 1-best, BLEU for a BLEU store); the result is the averaged weights
        of the best pass (Moses writes those), info["best_bleu"] its objective,
        info["bleu_per_pass"] all of them. On a store of another metric (TER, chrF, an
        interpolation, the synthetic ``linear``) the gain is hypothesis_scores(corpus) with
        hope = argmax s + g and fear = argmax s − g: there is no background, so decay,
        model_bg and safe_hope are errors there (ValueError) when given.
        """
        start = self.checked_start(corpus, start)
        if is_m2(corpus.metric) and not isinstance(corpus, ForestCorpus):
            # Moses's kbmira --sctype M2SCORER, step for step (its F_beta background)
            what = "a store of another metric than M2 (kbmira on M2 is Moses's, from the start as given)"
            reject_inapplicable((("start_scale", self.start_scale_given, False, what),))
            units = runs_per_start_scale(self.start_scale)
            return kbmira_m2(corpus, start, seed, passes=self.passes, c=self.c, decay=self.decay,
                             model_bg=self.model_bg, safe_hope=self.safe_hope, order=self.order,
                             progress=None if progress is None else (lambda n: progress(n * units)))
        return from_scaled_start(corpus, start, MIRA_MARGIN_ABOVE, self.start_scale, progress,
                                 lambda s, prog: self._from_start(corpus, s, seed, prog))

    def _from_start(self, corpus, start, seed, progress) -> Result:
        """:meth:`_optimize` on n-best stores of other metrics than M2 and forests, from exactly ``start``."""
        t0 = time.perf_counter()
        S, F = corpus.n_sentences, corpus.n_features
        rng = np.random.default_rng(int(seed) & ((1 << 64) - 1))
        w, u = start.copy(), np.zeros(F)
        bg = KBMIRA_BG0.copy()
        state = np.zeros(2, dtype=np.int64)
        if isinstance(corpus, ForestCorpus):
            def one_pass(order, eval_w=None):
                return self._forest_pass(corpus, order, bg, w, u, state)
        elif not corpus.metric.is_bleu:
            reject_inapplicable((name, value, False, "a store of BLEU statistics (the pseudo-document background)")
                                for name, value in self.background_options)
            # no BLEU background to add a row to: the gain is the sentence-level objective
            gains = np.ascontiguousarray(hypothesis_scores(corpus), dtype=np.float64)
            feats, offsets = _features(corpus), np.ascontiguousarray(corpus.sent_offsets, dtype=np.int64)
            scratch = np.empty(2 * int(np.diff(offsets).max()))

            def one_pass(order, eval_w=None):
                return _mira.mira_pass(*feats, gains, offsets, order, 1.0, 1.0, 1.0, -1.0, self.c, w, u, scratch,
                                       state)
        else:
            feats, offsets = _features(corpus), np.ascontiguousarray(corpus.sent_offsets, dtype=np.int64)
            stats = np.ascontiguousarray(corpus.stats, dtype=np.int32)
            scratch = np.empty(2 * int(np.diff(offsets).max()))
            best_rows = np.empty(S, dtype=np.int64)
            # each sentence's box of statistics bounds its gains (pyx/_mira.pyx)
            box = (None, None) if self.safe_hope else \
                (np.minimum.reduceat(stats, offsets[:-1], axis=0), np.maximum.reduceat(stats, offsets[:-1], axis=0))

            def one_pass(order, eval_w=None):
                # the 1-best of the last pass's averaged weights comes out of this pass's sweep
                return _mira.kbmira_pass(*feats, stats, float(corpus.ref_len_divisor), offsets, order, self.c,
                                         self.decay, self.model_bg, self.safe_hope, bg, w, u, scratch, state,
                                         eval_w, None if eval_w is None else best_rows, *box)

            def evaluated():
                return corpus.metric.objective(corpus.corpus_stats(best_rows))
        best_bleu, best_w, per_pass, steps, losses = -1.0, start.copy(), [], [], []
        fused = not isinstance(corpus, ForestCorpus) and corpus.metric.is_bleu
        pending = None     # averaged weights of the last pass, scored during the next one

        def score(avg, bleu):
            nonlocal best_bleu, best_w
            per_pass.append(bleu)
            if bleu > best_bleu:
                best_bleu, best_w = bleu, avg

        for p in range(self.passes):
            order = rng.permutation(S).astype(np.int64) if self.order == "shuffle" else np.arange(S, dtype=np.int64)
            before = int(state[1])
            losses.append(one_pass(order, pending))
            if pending is not None:
                score(pending, evaluated())
            steps.append(int(state[1]) - before)
            k = int(state[0])
            avg = (w - u / k) if k else w.copy()
            if fused and p + 1 < self.passes:
                pending = avg
            else:
                score(avg, corpus.metric_of(avg))
            if progress is not None:
                progress(1)
        if not np.all(np.isfinite(best_w)):
            raise FloatingPointError("kbmira produced non-finite weights")
        info = {"passes": self.passes, "best_bleu": best_bleu, "best_pass": int(np.argmax(per_pass)),
                "bleu_per_pass": per_pass, "steps_per_pass": steps, "loss_per_pass": losses,
                "background": bg.copy(), "last_weights": w.copy(), "seconds": time.perf_counter() - t0}
        return Result(weights=best_w, score=best_bleu, seed=seed, info=info,
                      warnings=unchanged_warnings("kbmira", start, best_w))

    def _forest_pass(self, corpus, order, bg, w, u, state) -> float:
        """One kbmira pass over forests (Moses's hypergraph mode), updating bg, w, u, state in
        place as _mira.kbmira_pass does; hope and fear come from mtplug.forests.hopefear
        (safe_hope does not apply: Moses's hypergraph mode ignores it too)."""
        from ..forests.hopefear import hope_fear_model

        total, divisor = 0.0, float(corpus.ref_len_divisor)
        for s in order.tolist():
            hope, fear, model = hope_fear_model(corpus, s, w, bg)
            gh = _mira.py_bg_gain(hope.stats, bg, divisor)
            gf = _mira.py_bg_gain(fear.stats, bg, divisor)
            same = np.array_equal(hope.stats, fear.stats) and np.array_equal(hope.features, fear.features)
            if not same and gh > gf:
                diff = hope.features - fear.features        # the PA-I step of pyx/_mira.pyx
                loss = (gh - gf) - float(w @ diff)
                sq = float(diff @ diff)
                if loss > 0.0 and sq > 0.0:
                    eta = min(self.c, loss / sq)
                    state += 1
                    w += eta * diff
                    u += (state[0] - 1) * eta * diff
                    total += loss
            bg *= self.decay
            bg += (model if self.model_bg else hope).stats
        return total
