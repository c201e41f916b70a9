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

``batch``: the sentence only accumulates ``Σ η_p d_p``; :meth:`Learner.end_epoch`
adds the sum and, with gamma, shrinks once by ``2γη / (pairs of the epoch)``.
``repeat`` > 1 (and ``check``, which means repeat = 2) loops over the pairs again,
recomputing Δ with the current weights pair by pair, as dtrain does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .kbest import Kbest
from .l1 import L1Regularizer
from .pairs import sample_pairs


@dataclass
class SentenceStats:
    """What one sentence's update did (summed into the epoch's log line)."""

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

    # ------------------------------------------------------------------ helpers
    def grow(self, n: int) -> None:
        """Make the vectors at least ``n`` long."""
        extra = n - len(self.w)
        if extra > 0:
            pad = np.zeros(extra)
            self.w = np.concatenate([self.w, pad])
            self.rates = np.concatenate([self.rates, pad])
            self.batch_sum = np.concatenate([self.batch_sum, pad])

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
        """Update from one scored k-best list (``scores``, ``model``: float64 [k])."""
        cfg = self.cfg
        self.grow(kb.n_features_needed)
        scores = np.asarray(scores, dtype=np.float64)
        model = np.asarray(model, dtype=np.float64)
        self.l1.start_sentence()
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
        if cfg.rescale:
            norm = math.sqrt(float(np.dot(self.w, self.w)))
            if norm > 0:
                self.w /= norm
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
