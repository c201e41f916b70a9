"""RAMPION: structured ramp loss minimisation (Gimpel & Smith 2012, Algorithm 1) on k-best lists.

Notation. For sentence s with k-best rows h: model score s_h = θ·f_h, sentence metric g_h
(BLEU+1 by default, higher is better), cost_h = α·(1 − g_h). N = number of sentences,
θ0 = the start weights (the regulariser pulls toward them).

Losses (``--loss``), per sentence, with M(v) = max_h v_h ("ramp") or
M(v) = log Σ_h exp(v_h) ("soft-ramp", the softmax version):

* ramp1 (G&S Eq. 6 as we reconstruct it; Do et al. 2008's ramp):
  L = M(s + cost) − M(s)             hope y+ = model 1-best,         fear y− = cost-augmented
* ramp2 (G&S Eq. 7 as we reconstruct it):
  L = M(s) − M(s − cost)             hope y+ = argmax s − cost,      fear y− = model 1-best
* ramp3 (G&S Eq. 8, the loss of Algorithm 1 / cdec's rampion_cccp; the default):
  L = M(s + cost) − M(s − cost)      hope y+ = argmax s − cost,      fear y− = argmax s + cost

(The hope/fear assignment of ramp1/ramp2 agrees with Jehl et al. 2019, Table 7; the equation
numbers 6/7/8 are from memory of the paper and may be off by one.)

Objective: O(θ) = C/2·‖θ − θ0‖² + Σ_s L_s(θ). (The per-sentence step below is the
subgradient of C/(2N)·‖θ − θ0‖² + L_s, so N steps make one pass over O.)

Algorithm (T′ = cccp_iterations, T″ = epochs):

    for t in 1..T′:                                      # CCCP: linearise −M(hope side)
        q_s = one-hot(argmax_h v+_h)  or  softmax(v+)    at the current θ, fixed below
        for e in 1..T″:                                  # SSD, sentences in document order
            for s in 0..N−1:
                p_s = one-hot(argmax_h v−_h) or softmax(v−)   at the current θ
                θ −= η·C·(θ − θ0)/N
                θ += η·(Σ_h q_{s,h} f_h − Σ_h p_{s,h} f_h)
        objective[t] = O(θ)

with v+ = s (ramp1) or s − cost (ramp2, ramp3) and v− = s + cost (ramp1, ramp3) or s (ramp2).
Hard argmax ties: the larger model score, then the lowest row (pyx/_hopefear.pyx).

The other losses of G&S Sections 2–3, compared on the same footing (same costs, regulariser,
CCCP + SSD). Our reading, reconstructed from the paper's description, not copied from its
table. O = the oracle set of a sentence (the rows of the largest metric g, exact equality),
y* = the oracle (argmax g, ties: the larger model score, so s(y*) = max_{h∈O} s_h),
lse(v) = log Σ_h exp(v_h), p_h = exp(s_h) / Σ exp(s):

* perceptron:   L = max_h s_h − s(y*)                hope y* (hard),          fear model 1-best (hard)
* hinge:        L = max_h (s_h + cost_h) − s(y*)      hope y* (hard),          fear argmax s + cost (hard)
  (structured SVM / MIRA-like; cost_h is the absolute α(1 − g_h), so L >= cost(y*) >= 0)
* log:          L = lse(s) − s(y*)                   hope y* (hard),          fear p (soft over s)
  (CRF: −log p(y*); a hard hope against a soft fear)
* soft-oracle:  L = lse(s) − lse_{h∈O}(s)            hope p restricted to O,  fear p
  (Och & Ney's soft ramp as we read it: −log Σ_{h∈O} p_h, the log probability of the
  oracle set; the "soft-ramp1..3" above are G&S's softmax ramps instead)
* bayes-risk:   L = Σ_h p_h·cost_h                   no hope side
  (minimum risk / expected cost). Not a convex − concave split: its step is the exact
  gradient, −∇L = Σ_h p_h·(c̄ − cost_h)·f_h = α·Σ_h p_h·(g_h − ḡ)·f_h with c̄ = E_p cost and
  ḡ = E_p g, computed per sentence at the current θ in the SSD kernel. The outer loop has
  nothing to re-impute, so "CCCP iteration" t is just ``epochs`` more SSD epochs (t·epochs
  in all), and objective[t] is O(θ) after them.

The hope side of perceptron/hinge/log is the oracle (v+ = g: model coefficient 0, metric
coefficient 1 in pyx/_hopefear.pyx, ties to the larger s); it depends on θ only through
ties in g, and CCCP re-picks it at each outer iteration as for the ramps. Softness is per
side (log: hard hope, soft fear); :func:`loss_sides` gives both sides of every loss. Each
k-best pool stays with its own sentence (cdec's rampion_cccp mixes pools up; see
docs/cdec.md). No randomness: the result does not depend on ``seed``.
The SSD epoch is compiled (pyx/_rampion.pyx); tests/reference/rampion_reference.py is the
NumPy oracle.
"""

from __future__ import annotations

import os
import time
from typing import ClassVar, NamedTuple

import numpy as np

from .._ext import _hopefear, _rampion
from ..metrics.bleu import SENTENCE_BLEU_VARIANTS
from ..metrics.sentence import hypothesis_scores
from .base import (
    START_SCALE_INFO,
    Optimizer,
    Result,
    check_start_scale,
    from_scaled_start,
    largest_weight,
    runs_per_start_scale,
    start_scale_option,
    unchanged_warnings,
)

RAMP_LOSSES = ("ramp1", "ramp2", "ramp3", "soft-ramp1", "soft-ramp2", "soft-ramp3")
#: the other losses of G&S Sections 2–3 (module docstring)
OTHER_LOSSES = ("perceptron", "hinge", "log", "soft-oracle", "bayes-risk")
LOSSES = RAMP_LOSSES + OTHER_LOSSES


class Sides(NamedTuple):
    """The hope and fear sides of a loss: v = model_coef·s + gain_coef·g on each side."""

    hope: tuple[float, float]        # (model_coef, gain_coef) of the hope side
    fear: tuple[float, float]        # (model_coef, gain_coef) of the fear side
    hope_soft: bool                  # hope: softmax of v+ instead of its argmax
    fear_soft: bool                  # fear: softmax of v− instead of its argmax
    hope_oracle: bool = False        # hope restricted to the oracle set O (soft-oracle)
    risk: float = 0.0                # > 0 (= α): Bayes risk's step instead, no hope side


def loss_sides(loss: str, alpha: float) -> Sides:
    """The :class:`Sides` of ``loss``.

    For the ramps, v = model_coef·s + gain_coef·g equals the loss's s ∓ cost up to the
    per-sentence constant ∓α (which changes neither the argmax nor the softmax).
    """
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {', '.join(LOSSES)}, got {loss!r}")
    if loss in OTHER_LOSSES:
        oracle, model = (0.0, 1.0), (1.0, 0.0)
        return {"perceptron": Sides(oracle, model, False, False),
                "hinge": Sides(oracle, (1.0, -alpha), False, False),
                "log": Sides(oracle, model, False, True),
                "soft-oracle": Sides(model, model, True, True, hope_oracle=True),
                "bayes-risk": Sides(model, model, False, True, risk=float(alpha))}[loss]
    soft = loss.startswith("soft-")
    kind = loss.removeprefix("soft-")
    hope = (1.0, 0.0) if kind == "ramp1" else (1.0, alpha)
    fear = (1.0, 0.0) if kind == "ramp2" else (1.0, -alpha)
    return Sides(hope, fear, soft, soft)


def _segment_max(v, offsets):
    return np.maximum.reduceat(v, offsets[:-1])


def _segment_logsumexp(v, offsets):
    m = _segment_max(v, offsets)
    sizes = np.diff(offsets)
    return m + np.log(np.add.reduceat(np.exp(v - np.repeat(m, sizes)), offsets[:-1]))


def softmax_per_sentence(v, offsets) -> np.ndarray:
    """p_h = exp(v_h) / Σ_{h' in sentence} exp(v_h'): float64 [n_hyp]."""
    sizes = np.diff(offsets)
    e = np.exp(v - np.repeat(_segment_max(v, offsets), sizes))
    return e / np.repeat(np.add.reduceat(e, offsets[:-1]), sizes)


def oracle_mask(gains, offsets) -> np.ndarray:
    """bool [n_hyp]: the rows of the largest metric of their sentence (the oracle set O)."""
    return gains == np.repeat(_segment_max(gains, offsets), np.diff(offsets))


def ramp_objective(scores, gains, offsets, loss: str, alpha: float, c: float, weights, start) -> float:
    """O(θ) = C/2·‖θ − θ0‖² + Σ_s L_s with the exact costs α·(1 − g) (module docstring):
    M(v−) − M(v+) for the ramps, the formula of each other loss.

    scores float64 [n_hyp] (θ·f), gains float64 [n_hyp], offsets int64 [S + 1].
    """
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {', '.join(LOSSES)}, got {loss!r}")
    cost = alpha * (1.0 - gains)
    d = np.asarray(weights, np.float64) - np.asarray(start, np.float64)
    reg = 0.5 * c * (d @ d)
    if loss in OTHER_LOSSES:
        if loss == "bayes-risk":
            return float(reg + np.sum(np.add.reduceat(softmax_per_sentence(scores, offsets) * cost, offsets[:-1])))
        s_oracle = np.where(oracle_mask(gains, offsets), scores, -np.inf)
        fear = _segment_max(scores + cost, offsets) if loss == "hinge" else (
            _segment_max(scores, offsets) if loss == "perceptron" else _segment_logsumexp(scores, offsets))
        hope = _segment_logsumexp(s_oracle, offsets) if loss == "soft-oracle" else _segment_max(s_oracle, offsets)
        return float(reg + np.sum(fear - hope))
    kind = loss.removeprefix("soft-")
    v_plus = scores if kind == "ramp1" else scores - cost
    v_minus = scores if kind == "ramp2" else scores + cost
    M = _segment_logsumexp if loss.startswith("soft-") else _segment_max
    return float(reg + np.sum(M(v_minus, offsets) - M(v_plus, offsets)))


def impute_hope(scores, gains, offsets, sides: Sides, threads: int = 1) -> np.ndarray:
    """The CCCP step: hope distribution q float64 [n_hyp] (one-hot per sentence when hard;
    zero for Bayes risk, which has no hope side).

    threads: OpenMP threads of the hard hope selection (the result does not depend on it).
    """
    if sides.risk > 0.0:
        return np.zeros(len(scores), dtype=np.float64)
    v = sides.hope[0] * scores + sides.hope[1] * gains
    if sides.hope_oracle:
        v = np.where(oracle_mask(gains, offsets), v, -np.inf)
    if sides.hope_soft:
        return softmax_per_sentence(v, offsets)
    if sides.hope_oracle:
        raise ValueError("a hard hope restricted to the oracle set is the oracle: use hope (0, 1)")
    rows = np.empty(len(offsets) - 1, dtype=np.int64)
    _hopefear.select(scores, gains, offsets, sides.hope[0], sides.hope[1], rows, max(1, int(threads)))
    q = np.zeros(len(scores), dtype=np.float64)
    q[rows] = 1.0
    return q


def ssd_epoch(corpus, base, gains, hope_prob, sides: Sides, eta: float, c: float, u, work) -> None:
    """One compiled SSD epoch over ``corpus`` (document order); updates u = θ − θ0 in place.

    base float64 [n_hyp] = θ0·f_h; gains, hope_prob float64 [n_hyp]; sides: the fear side
    (and Bayes risk's α) of :func:`loss_sides`; u float64 [n_features]; work float64 [max
    sentence size].
    """
    N = corpus.n_sentences
    shrink = 1.0 - eta * c / N
    status, bad = _rampion.ssd_epoch(
        np.ascontiguousarray(corpus.dense, dtype=np.float64), np.ascontiguousarray(corpus.sparse_indptr, np.int64),
        np.ascontiguousarray(corpus.sparse_ids, np.int32), np.ascontiguousarray(corpus.sparse_values, np.float64),
        np.ascontiguousarray(corpus.sent_offsets, np.int64), base, gains, hope_prob, float(sides.fear[0]),
        float(sides.fear[1]), bool(sides.fear_soft), float(eta), shrink, u, work, float(sides.risk))
    if status != 0:
        raise FloatingPointError(f"RAMPION: the model score of sentence {bad} overflowed during training (largest "
                                 f"|θ − θ0| {largest_weight(u):g}); a smaller --eta, or features of a smaller "
                                 "magnitude, keep it finite")


#: above this mean pair margin a start is also tried shrunk to unit margin (base.from_scaled_start),
#: as PRO's classifier shrinks: RAMPION's costs α·(1 − BLEU+1) are of that size
RAMPION_MARGIN_ABOVE = 1.0


class Rampion(Optimizer):
    """Structured ramp loss minimisation (Gimpel & Smith 2012, Algorithm 1).

    Minimises C/2·‖θ − θ0‖² plus a per-sentence ramp loss (``loss``: ramp1–3 or their
    log-sum-exp "soft" forms; or G&S Sections 2–3's perceptron, hinge, log, soft-oracle and
    bayes-risk losses, module docstring) with costs ``alpha``·(1 − sentence metric), θ0 the start
    weights: ``cccp_iterations`` CCCP steps, each fixing the hope side at the current
    weights and then running ``epochs`` passes of stochastic subgradient descent (step
    ``eta``) over the sentences in document order (compiled). Deterministic: ``seed`` is
    only recorded, and the result does not depend on the number of threads.
    :meth:`optimize` returns θ0 + the learned offset, not normalised; ValueError when
    ``eta``·``c``/N ≥ 1 or an option value is bad.
    """

    name = "rampion"
    metric_info = START_SCALE_INFO
    help = "structured ramp loss minimisation (Gimpel & Smith 2012): CCCP + stochastic subgradient descent"
    options: ClassVar[dict[str, dict]] = {
        "cccp_iterations": dict(type=int, default=10, metavar="N",
                                help="T′: CCCP iterations (hope re-imputed each) (default 10)"),
        "epochs": dict(type=int, default=5, metavar="N",
                       help="T″: SSD passes over the sentences per CCCP iteration (default 5)"),
        "eta": dict(type=float, default=1e-4, metavar="η", help="SSD step size (default 0.0001)"),
        "c": dict(type=float, default=1.0, metavar="C",
                  help="ℓ2 strength toward the start weights: C/2·‖θ − θ0‖² (default 1)"),
        "alpha": dict(type=float, default=10.0, metavar="α",
                      help="cost = α·(1 − sentence metric) (default 10)"),
        "sentence_metric": dict(choices=tuple(SENTENCE_BLEU_VARIANTS), default="bleu+1",
                                help="sentence-level metric in the cost (default bleu+1)"),
        "loss": dict(choices=LOSSES, default="ramp3",
                     help="ramp3 (hope argmax s−cost, fear argmax s+cost; the default), ramp1 (hope = "
                          "model 1-best), ramp2 (fear = model 1-best); soft-*: log-sum-exp instead of max; "
                          "G&S's other losses (hope = the oracle y*): perceptron (max s − s(y*)), hinge "
                          "(max s+cost − s(y*)), log (log Σ exp s − s(y*)), soft-oracle (−log p(oracle set)), "
                          "bayes-risk (expected cost E_p cost)"),
        "start_scale": start_scale_option(RAMPION_MARGIN_ABOVE),
    }

    def __init__(self, cccp_iterations=10, epochs=5, eta=1e-4, c=1.0, alpha=10.0, sentence_metric="bleu+1",
                 loss="ramp3", start_scale=None):
        if int(cccp_iterations) < 1 or int(epochs) < 1:
            raise ValueError(f"cccp_iterations and epochs must be >= 1, got {cccp_iterations}, {epochs}")
        for nm, v in (("eta", eta), ("alpha", alpha)):
            if not (0.0 < float(v) < np.inf):
                raise ValueError(f"{nm} must be a finite number > 0, got {v}")
        if not (0.0 <= float(c) < np.inf):
            raise ValueError(f"c must be a finite number >= 0, got {c}")
        if sentence_metric not in SENTENCE_BLEU_VARIANTS:
            raise ValueError(f"sentence_metric must be one of {', '.join(SENTENCE_BLEU_VARIANTS)}, "
                             f"got {sentence_metric!r}")
        if loss not in LOSSES:
            raise ValueError(f"loss must be one of {', '.join(LOSSES)}, got {loss!r}")
        super().__init__()
        self.cccp_iterations, self.epochs = int(cccp_iterations), int(epochs)
        self.eta, self.c, self.alpha = float(eta), float(c), float(alpha)
        self.sentence_metric, self.loss = sentence_metric, loss
        self.start_scale = check_start_scale(start_scale)

    def progress_total(self) -> int:
        return self.cccp_iterations * runs_per_start_scale(self.start_scale)

    def _optimize(self, corpus, start: np.ndarray, seed: int, *, threads: int | None = None,
                 ranges: tuple[np.ndarray, np.ndarray] | None = None, progress=None) -> Result:
        """Algorithm 1 from ``start`` (float64 [n_features]), which is also θ0; a start whose
        mean pair margin is above 1 is also tried shrunk to a margin of 1 (``start_scale``,
        :func:`.base.from_scaled_start`).

        Deterministic: ``seed`` (only recorded) and ``ranges`` are not used. The hope/fear
        selection over the whole corpus (the hard hope of each CCCP step, pyx/_hopefear.pyx)
        runs on ``threads`` OpenMP threads (None: all cores); the SSD epochs stay sequential.
        The result does not depend on ``threads``.
        info: objective (O(θ) after each CCCP iteration), objective_start, seconds,
        seconds_per_epoch, loss.
        """
        start = self.checked_start(corpus, start)
        return from_scaled_start(corpus, start, RAMPION_MARGIN_ABOVE, self.start_scale, progress,
                                 lambda s, prog: self._from_start(corpus, s, seed, threads, prog))

    def _from_start(self, corpus, start, seed, threads, progress) -> Result:
        """:meth:`_optimize` from exactly ``start`` (θ0)."""
        t0 = time.perf_counter()
        threads = max(1, threads or os.cpu_count() or 1)
        N = corpus.n_sentences
        if self.eta * self.c / N >= 1.0:
            raise ValueError(f"eta·c/N must be < 1 (got {self.eta}·{self.c}/{N}): the shrink would flip θ − θ0")
        offsets = np.ascontiguousarray(corpus.sent_offsets, dtype=np.int64)
        gains = np.ascontiguousarray(hypothesis_scores(corpus, self.sentence_metric, threads=threads), dtype=np.float64)
        if not np.all(np.isfinite(gains)):     # as PRO says it: a NaN cost would read as an overflow below
            bad = int(np.flatnonzero(~np.isfinite(gains))[0])
            raise ValueError(f"sentence metric of hypothesis {bad} is not finite ({gains[bad]})")
        sides = loss_sides(self.loss, self.alpha)
        base = corpus.scores(start)
        u = np.zeros(corpus.n_features, dtype=np.float64)
        work = np.empty(int(np.diff(offsets).max()), dtype=np.float64)
        objective_start = ramp_objective(base, gains, offsets, self.loss, self.alpha, self.c, start, start)
        objective = []
        epoch_seconds = []
        for _ in range(self.cccp_iterations):
            scores = corpus.scores(start + u)
            q = impute_hope(scores, gains, offsets, sides, threads)
            for _ in range(self.epochs):
                te = time.perf_counter()
                ssd_epoch(corpus, base, gains, q, sides, self.eta, self.c, u, work)
                epoch_seconds.append(time.perf_counter() - te)
            weights = start + u
            if not np.all(np.isfinite(weights)):
                raise FloatingPointError("RAMPION: the weights overflowed during training; a smaller --eta, or "
                                         "features of a smaller magnitude, keep them finite")
            objective.append(ramp_objective(corpus.scores(weights), gains, offsets, self.loss, self.alpha, self.c,
                                            weights, start))
            if progress is not None:
                progress(1)
        weights = start + u
        score = corpus.metric_of(weights)
        info = {
            "loss": self.loss,
            "objective_start": objective_start,
            "objective": objective,
            "seconds_per_epoch": float(np.mean(epoch_seconds)),
            "seconds": time.perf_counter() - t0,
        }
        return Result(weights=weights, score=score, seed=seed, info=info,
                      warnings=unchanged_warnings("rampion", start, weights))
