"""dtrain's update for one sentence: pairs → perceptron/SVM steps → pclr → ℓ1 → rescale.

For a pair (b, w) — b the hypothesis with the higher per-sentence score — with
``d = f_b - f_w`` and ``Δ = model_b - model_w`` (the decoder's model scores, i.e. w·f
under the weights the k-best list was decoded with):

* faster perceptron (gamma = 0 and loss_margin = 0): the sampler keeps only
  misranked pairs (Δ <= 0) and every one updates;
* otherwise a pair updates if Δ <= 0 (rank error) or |Δ| < loss_margin (margin
  violation); loss_margin > 9998 means always.

An update is ``w += η d`` and, if gamma > 0, then ``w -= (2γη / P) w`` with P the
number of pairs sampled for the sentence (cdec dtrain.cc, 2014). With
``scale_bleu_diff`` the pair's η is its score difference. The updates of one
sentence are applied in closed form — ``w ← (Π_p a_p) w + Σ_p η_p (Π_{q>=p} a_q) d_p``
with ``a_p = 1 - 2γη_p/P`` over the updating pairs in order (each step is shrunk by its
own factor and every later one's) — the sequential rule, rounded differently.

Then, per sentence: ``pclr`` (per-coordinate rates, instead of the steps above:
``simple`` adds ``s_f / max(1, c_f)`` and counts ``c_f += 1``; ``adagrad`` adds
``η s_f`` the first time and ``η s_f G_f`` later with ``G_f += s_f²`` — cdec's code
multiplies by G where AdaGrad divides by √G; s = Σ d over the updating pairs),
ℓ1 (:mod:`mtplug.dtrain.l1`) on the changed weights, and ``rescale`` (w /= ‖w‖₂).

``update=mira`` (mtplug; Eidelman 2012's online MIRA, as cdec's training/mira with
mira.py, instead of everything above): one hope y+ and one fear y- per sentence, chosen
as ``mtplug optimize mira --hope/--fear`` chooses them (:data:`mtplug.optimizers.mira.HOPE`,
``FEAR`` with α = 1, the compiled :func:`mtplug.optimizers.mira.select`; ties go to the
larger model score, then to the earlier k-best position), with the sentence scores g as
gains (cost = 1 − g)::

    hope  = argmax s + g  (M−C)  | lu: argmax g
    fear  = argmax s − g  (M+C)  | mc: argmin g | pb: argmax s
    Δf = f(y+) − f(y-),  loss = (g(y+) − g(y-)) − (s(y+) − s(y-))
    if y+ != y-, loss > 0 and ‖Δf‖² > 0:  η = min(C, loss / ‖Δf‖²),  w += η Δf

(one PA-I step with cap C = ``mira_c``; the step of pyx/_mira.pyx). The model scores
``s = w·f`` are those of the learner's current weights: with ``minibatch=1`` (dtrain's
per-sentence decoding) the weights the list was decoded with; with ``minibatch > 1``
the weights after the batch's earlier sentences (not the decoding weights, which are
older). ℓ1 and ``rescale`` work after the step as after the pairwise update; the keys of
the pairwise update are refused (:func:`mtplug.dtrain.config.validate`).
With ``mira_average`` (the default) an epoch's weights (what ``select_weights`` chooses
among and what the epoch log counts) are the average of the weights after every sentence
since the start (:meth:`Learner.averaged`), as ``mtplug optimize mira`` averages; decoding
goes on with the current weights. With shards each shard averages over its own epoch and
the shards' averages are mixed. No shrinking of the start weights, unlike ``mtplug
optimize mira``.

``batch``: the sentence only accumulates ``Σ η_p d_p``; :meth:`Learner.end_epoch`
adds the sum and, with gamma, shrinks once by ``2γη / (pairs of the epoch)``.
``repeat`` > 1 (and ``check``, which means repeat = 2) loops over the pairs again,
recomputing Δ with the current weights pair by pair, as dtrain does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..optimizers.mira import FEAR, HOPE, select
from .kbest import Kbest
from .l1 import L1Regularizer
from .pairs import sample_pairs


@dataclass
class SentenceStats:
    """What one sentence's update did (summed into the epoch's log line).

    With ``update=mira`` the one hope/fear pair is the sentence's only pair: ``pairs`` is
    1 for a list of at least 2 hypotheses (0 otherwise), ``updates`` 1 if the sentence
    stepped, ``rank_errors`` 1 if the fear is another hypothesis than the hope with a
    model score at least as high, ``margin_violations`` 1 if the hope scores higher but
    by less than the cost difference (loss > 0), and the losses are the PA-I hinge
    ``max(0, (g(y+) − g(y-)) − (s(y+) − s(y-)))`` before and after the step.
    """

    pairs: int = 0              # pairs sampled
    updates: int = 0            # pairs that updated (first repeat)
    rank_errors: int = 0        # Δ <= 0 (first repeat)
    margin_violations: int = 0  # correct but |Δ| < loss_margin (all repeats, as dtrain counts)
    loss_before: float = 0.0    # Σ max(0, -Δ) over the pairs, decoder scores
    loss_after: float = 0.0     # the same with the weights after the update


class Learner:
    """The weight vector and the update state of one dtrain run (or shard).

    ``cfg``: a :class:`mtplug.dtrain.config.DtrainConfig`; ``weights``: the start weights
    by feature id (None: none yet). ``w`` is indexed by feature id and grows (with zeros)
    as new features appear.
    """

    def __init__(self, cfg, weights=None):
        self.cfg = cfg
        self.w = np.zeros(0) if weights is None else np.array(weights, dtype=np.float64)
        self.rates = np.zeros(len(self.w))            # pclr counters / squared sums
        self.batch_sum = np.zeros(len(self.w))
        self.batch_loss = 0.0
        self.epoch_pairs = 0
        self.l1 = L1Regularizer(cfg.l1_reg, cfg.l1_reg_strength)
        self.check_lines: list[str] = []
        self.w_sum = np.zeros(len(self.w))            # update=mira: Σ of the weights after each sentence
        self.steps = 0

    # ------------------------------------------------------------------ helpers
    def grow(self, n: int) -> None:
        """Make the vectors at least ``n`` long."""
        extra = n - len(self.w)
        if extra > 0:
            pad = np.zeros(extra)
            self.w = np.concatenate([self.w, pad])
            self.rates = np.concatenate([self.rates, pad])
            self.batch_sum = np.concatenate([self.batch_sum, pad])
            self.w_sum = np.concatenate([self.w_sum, pad])

    def _eta(self, scores, first, second) -> np.ndarray:
        if self.cfg.scale_bleu_diff:
            return scores[first] - scores[second]
        return np.full(len(first), float(self.cfg.learning_rate))

    def _pclr(self, s: np.ndarray) -> None:
        idx = np.flatnonzero(s)
        if len(idx) == 0:
            return
        sv, c = s[idx], self.rates[idx]
        if self.cfg.pclr == "simple":
            self.w[idx] += sv / np.maximum(1.0, c)
            self.rates[idx] = c + 1
        else:  # adagrad, as cdec codes it
            eta = float(self.cfg.learning_rate)
            self.w[idx] += np.where(c == 0, sv * eta, sv * eta * c)
            self.rates[idx] = c + sv * sv

    # ------------------------------------------------------------------ one sentence
    def step(self, kb: Kbest, scores: np.ndarray, model: np.ndarray) -> SentenceStats:
        """Update from one scored k-best list (``scores``, ``model``: float64 [k]; ``model``,
        the decoder's scores, is not used by ``update=mira``, which scores with the current
        weights)."""
        cfg = self.cfg
        self.grow(kb.n_features_needed)
        scores = np.asarray(scores, dtype=np.float64)
        model = np.asarray(model, dtype=np.float64)
        self.l1.start_sentence()
        if cfg.update == "mira":
            mira_stats = self._mira_step(kb, scores)
            self._rescale()
            if cfg.mira_average:
                self.w_sum += self.w
                self.steps += 1
            return mira_stats
        first, second = sample_pairs(cfg.pair_sampling, scores, model, hi_lo=cfg.hi_lo,
                                     threshold=cfg.pair_threshold, max_pairs=cfg.max_pairs,
                                     misranked_only=cfg.faster_perceptron)
        stats = SentenceStats(pairs=len(first))
        self.epoch_pairs += len(first)
        delta = model[first] - model[second]
        stats.loss_before = float(np.maximum(0.0, -delta).sum())
        if len(first):
            repeat = cfg.effective_repeat
            for ki in range(repeat):
                w_before = self.w.copy() if self.l1.active else None
                if repeat == 1:
                    self._update_closed_form(kb, scores, first, second, delta, stats)
                else:
                    self._update_sequential(kb, scores, first, second, ki, stats)
                if w_before is not None:
                    self.l1.apply(self.w, w_before)
            after = kb.model(self.w)
            loss_after = np.maximum(0.0, -(after[first] - after[second]))
            stats.loss_after = float(loss_after.sum())
            if cfg.check:
                self.check_lines.extend(repr(float(x)) for x in np.maximum(0.0, -delta) - loss_after)
        self._rescale()
        return stats

    def averaged(self) -> np.ndarray:
        """The weights an epoch reports: with ``update=mira`` and ``mira_average`` the mean of
        the weights after every sentence so far (float64 [features]); else the current ones."""
        if self.cfg.update == "mira" and self.cfg.mira_average and self.steps:
            return self.w_sum / self.steps
        return self.w.copy()

    def _rescale(self) -> None:
        if self.cfg.rescale:
            norm = math.sqrt(float(np.dot(self.w, self.w)))
            if norm > 0:
                self.w /= norm

    def _mira_step(self, kb: Kbest, scores: np.ndarray) -> SentenceStats:
        """update=mira: one PA-I step toward the hope, away from the fear (module docstring)."""
        cfg = self.cfg
        stats = SentenceStats()
        if kb.k < 2:
            return stats
        stats.pairs = 1
        self.epoch_pairs += 1
        s = kb.model(self.w)
        hope, fear = mira_hope_fear(s, scores, cfg.mira_hope, cfg.mira_fear)
        margin = float(s[hope] - s[fear])
        loss = float(scores[hope] - scores[fear]) - margin
        if hope != fear:
            stats.rank_errors = int(margin <= 0)
            stats.margin_violations = int(margin > 0 and loss > 0)
        stats.loss_before = stats.loss_after = max(0.0, loss) if hope != fear else 0.0
        if hope == fear or not loss > 0:
            return stats
        a, b, c, d = kb.indptr[hope], kb.indptr[hope + 1], kb.indptr[fear], kb.indptr[fear + 1]
        cols, inverse = np.unique(np.concatenate((kb.ids[a:b], kb.ids[c:d])), return_inverse=True)
        diff = np.bincount(inverse, np.concatenate((kb.values[a:b], -kb.values[c:d])), minlength=len(cols))
        sq = math.fsum((diff * diff).tolist())   # exactly rounded: the same on every machine
        if not sq > 0:
            return stats
        eta = min(cfg.mira_c, loss / sq)
        w_before = self.w.copy() if self.l1.active else None
        self.w[cols] += eta * diff
        if w_before is not None:
            self.l1.apply(self.w, w_before)
        stats.updates = 1
        after = kb.model(self.w)
        stats.loss_after = max(0.0, float(scores[hope] - scores[fear]) - float(after[hope] - after[fear]))
        return stats

    def _update_closed_form(self, kb, scores, first, second, delta, stats) -> None:
        cfg = self.cfg
        P = len(first)
        if cfg.faster_perceptron:
            upd = np.ones(P, dtype=bool)
            rank_error = upd
        else:
            rank_error = delta <= 0
            close = np.abs(delta) < cfg.margin
            stats.margin_violations += int((~rank_error & close).sum())
            upd = rank_error | close
        stats.rank_errors += int(rank_error.sum())
        stats.updates += int(upd.sum())
        f, s = first[upd], second[upd]
        if len(f) == 0:
            return
        eta = self._eta(scores, f, s)
        n = len(self.w)
        if cfg.batch:
            coef = np.bincount(f, eta, kb.k) - np.bincount(s, eta, kb.k)
            self.batch_sum += kb.combine(coef, n)
            self.batch_loss += float(np.maximum(0.0, -delta[upd]).sum())
        elif cfg.pclr != "no":
            ones = np.ones(len(f))
            self._pclr(kb.combine(np.bincount(f, ones, kb.k) - np.bincount(s, ones, kb.k), n))
        else:
            if cfg.gamma > 0:
                a = 1.0 - 2.0 * cfg.gamma * eta / P
                # pair p is shrunk by its own factor and by every later pair's: Π_{q >= p} a_q
                suffix = np.cumprod(a[::-1])[::-1]
                coef_p = eta * suffix
                shrink = suffix[0]
            else:
                coef_p, shrink = eta, 1.0
            coef = np.bincount(f, coef_p, kb.k) - np.bincount(s, coef_p, kb.k)
            step = kb.combine(coef, n)
            if shrink != 1.0:
                self.w *= shrink
            self.w += step

    def _update_sequential(self, kb, scores, first, second, ki, stats) -> None:
        """repeat > 1: dtrain recomputes Δ with the current weights before each pair."""
        cfg = self.cfg
        P = len(first)
        cols = np.unique(kb.ids)
        F = kb.dense(cols)
        w_loc = self.w[cols].copy()
        rest_scale = 1.0
        sum_up = np.zeros(len(cols))
        batch_add = np.zeros(len(cols))
        eta_all = self._eta(scores, first, second)
        for p in range(P):
            d = F[first[p]] - F[second[p]]
            delta = float(d @ w_loc)
            if cfg.faster_perceptron:
                rank_error, close = True, False
            else:
                rank_error = delta <= 0
                close = abs(delta) < cfg.margin
                if not rank_error and close:
                    stats.margin_violations += 1
            if ki == 0:
                stats.rank_errors += int(rank_error)
            if not (rank_error or close):
                continue
            if ki == 0:
                stats.updates += 1
            eta = float(eta_all[p])
            if cfg.batch:
                batch_add += eta * d
                self.batch_loss += max(0.0, -delta)
            elif cfg.pclr != "no":
                sum_up += d
            else:
                w_loc += eta * d
                if cfg.gamma > 0:
                    a = 1.0 - 2.0 * cfg.gamma * eta / P
                    w_loc *= a
                    rest_scale *= a
        if rest_scale != 1.0:
            self.w *= rest_scale
        self.w[cols] = w_loc
        if cfg.batch:
            self.batch_sum[cols] += batch_add
        if cfg.pclr != "no" and not cfg.batch:
            s = np.zeros(len(self.w))
            s[cols] = sum_up
            self._pclr(s)

    # ------------------------------------------------------------------ epoch end
    def end_epoch(self) -> float:
        """Apply the batch update (``batch``) and start a new epoch; returns the batch loss."""
        loss = self.batch_loss
        if self.cfg.batch:
            self.w += self.batch_sum
            if self.cfg.gamma > 0 and self.epoch_pairs:
                self.w -= (2.0 * self.cfg.gamma * self.cfg.learning_rate / self.epoch_pairs) * self.w
            self.batch_sum[:] = 0.0
        self.batch_loss = 0.0
        self.epoch_pairs = 0
        return loss


def mira_hope_fear(model: np.ndarray, scores: np.ndarray, hope: str = "hope", fear: str = "fear") -> tuple[int, int]:
    """(hope, fear) k-best positions of one list for update=mira: argmax of
    ``HOPE[hope](1)`` resp. ``FEAR[fear](1)`` (model coefficient, gain coefficient) over
    ``model`` (w·f) and ``scores`` (the sentence scores, float64 [k], k >= 1); ties: the
    larger model score, then the earlier position (:func:`mtplug.optimizers.mira.select`)."""
    offsets = np.array([0, len(model)], dtype=np.int64)
    h = select(model, scores, offsets, *HOPE[hope](1.0))
    f = select(model, scores, offsets, *FEAR[fear](1.0))
    return int(h[0]), int(f[0])
