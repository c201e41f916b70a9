"""APRO: all-pairs ranking optimization (Dreyer & Dong 2015), trained by truncated Newton.

For every sentence the preference pairs are all (p, q) with b_p > b_q, b a per-hypothesis
metric score (sentence BLEU+1 by default, :func:`mtplug.metrics.sentence.hypothesis_scores`);
equal b give no pair. With model scores h = X w the objective is

    F(w) = 1/2 |w|^2 + (C / N) sum_s sum_{(p,q) in P_s} max(0, 1 - h_p + h_q)^2,

N the total number of hypotheses. It is strictly convex and once differentiable; the
minimizer w' is found by truncated Newton (:func:`newton_cg`: conjugate gradients on the
generalized Hessian, then a line search along the Newton direction). Loss, gradient and
Hessian-vector products cost O(k log k) per sentence of k hypotheses (sorting by model
score and Fenwick trees over metric ranks, Lee & Lin 2014); the derivation is at the top
of ``pyx/_apro.pyx``. The returned weights are w = psi w' + (1 - psi) w_start (Dreyer &
Dong's interpolation; psi = 1 keeps w').

F is not scale-invariant: C trades the margin (in model-score units) against |w|, so
the same C means more when features are large. For scipy.optimize (``minimize(...,
jac=True, hessp=...)``), :class:`AproObjective` offers ``value_and_grad`` and ``hessp``.

Stopping: |grad F(w)|_2 <= tolerance * |grad F(0)|_2. The reference is the gradient at
w = 0, which depends on the data and C only (not on the start), so the same tolerance
means the same thing for any start point; when it is 0 (no sentence has a preference
pair) the tolerance is absolute.

There is no randomness: the result is bit-identical on every run for the same corpus,
start and options (the seed is only recorded), for any number of ``threads`` and on any
engine: the loss and Hessian kernels run sentences in OpenMP threads, or in partitions on
dask workers (``engine``), and every per-hypothesis result is independent of the split;
the per-sentence losses are summed in sentence order and X^T g is formed here.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field

import numpy as np

from .._ext import _apro
from ..distributed import LocalEngine
from ..distributed.partition import partition_sentences
from ..metrics.bleu import SENTENCE_BLEU_VARIANTS
from ..metrics.sentence import hypothesis_scores
from .base import Optimizer, Result


@dataclass
class _Pass:
    """What the loss kernel returns for one vector of scores (arrays [n])."""

    loss: float               # sum_s L_s, unscaled
    curvature: float          # v^T H v for the direction passed (0 without one)
    active_pairs: int
    g: np.ndarray | None      # float64, dL/dh (dropped once the gradient is formed)
    state: list               # per partition, the active set (stays where it was computed)


@dataclass
class _PairPart:
    """The pair data of a run of sentences: ranks int32 [n_p], offsets int64 [S_p + 1] from 0."""

    ranks: np.ndarray
    offsets: np.ndarray


_NO_DIRECTION = np.empty(0, dtype=np.float64)


def _part_loss(part: _PairPart, h: np.ndarray, v: np.ndarray | None, threads: int):
    """The loss kernel on one partition: ((g, sent_loss, sent_curv, sent_active, status,
    index), active-set arrays). Runs wherever the partition lives."""
    n, S = part.ranks.shape[0], part.offsets.shape[0] - 1
    g = np.empty(n, dtype=np.float64)
    state = tuple(np.empty(n, dtype=np.int32) for _ in range(4))  # order, fill1, fill2, partners
    sent_loss, sent_curv = np.empty(S, dtype=np.float64), np.empty(S, dtype=np.float64)
    sent_active = np.empty(S, dtype=np.int64)
    _, _, _, status, index = _apro.loss_gradient(h, _NO_DIRECTION if v is None else v, part.ranks, part.offsets,
                                                 g, *state, threads, sent_loss, sent_curv, sent_active)
    return (g, sent_loss, sent_curv, sent_active, status, index), state


def _public(result):
    """The part of a :func:`_part_loss` result that travels back (the state stays)."""
    return result[0]


def _part_hessian(part: _PairPart, result, v: np.ndarray, threads: int) -> np.ndarray:
    """The Hessian kernel on one partition, on the active set of a :func:`_part_loss` result."""
    hv = np.empty(part.ranks.shape[0], dtype=np.float64)
    _apro.hessian_product(v, part.ranks, part.offsets, *result[1], hv, threads)
    return hv


def _joined(arrays: list) -> np.ndarray:
    return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)


@dataclass
class AproPoint:
    """F and grad F at one weight vector, with the active set the Hessian products use.

    weights, grad: float64 [n_features]; value: F(weights); active_pairs: |A|.
    """

    weights: np.ndarray
    value: float
    grad: np.ndarray
    active_pairs: int
    _pass: _Pass = field(repr=False)


class AproObjective:
    """F(w), grad F(w) and generalized Hessian products (module docstring) on a corpus.

    corpus: an :class:`mtplug.corpus.NbestCorpus` (every sentence non-empty).
    metric_scores: float64 [n_hypotheses], finite, higher is better (b). c: C > 0.
    Weight vectors and directions are float64 [n_features].
    Counters: ``evaluations`` (loss kernel passes), ``gradients`` (gradients formed,
    X^T products), ``hessian_products``. engine: where the per-sentence kernels run (a
    :class:`mtplug.distributed.LocalEngine` by default; a dask engine splits the sentences
    into one partition per worker); the results do not depend on it.
    """

    def __init__(self, corpus, metric_scores: np.ndarray, c: float, threads: int = 1, engine=None):
        n = corpus.n_hypotheses
        b = np.ascontiguousarray(metric_scores, dtype=np.float64)
        if b.shape != (n,):
            raise ValueError(f"metric_scores must have shape ({n},), got {b.shape}")
        if not np.all(np.isfinite(b)):
            raise ValueError(f"metric score of hypothesis {int(np.flatnonzero(~np.isfinite(b))[0])} is not finite")
        if not (math.isfinite(c) and c > 0):
            raise ValueError(f"C must be positive and finite, got {c!r}")
        self.n_features = corpus.n_features
        self.threads = max(1, int(threads))
        self.offsets = np.ascontiguousarray(corpus.sent_offsets, dtype=np.int64)
        if np.any(np.diff(self.offsets) >= 2**31):
            raise ValueError("a sentence has 2^31 or more hypotheses")
        d = corpus.n_dense
        dense = np.ascontiguousarray(corpus.dense, dtype=np.float64)
        self.dense = dense if dense.shape == (n, d) else np.ascontiguousarray(dense.reshape(n, d))
        self.sp_indptr = np.ascontiguousarray(corpus.sparse_indptr, dtype=np.int64)
        self.sp_ids = np.ascontiguousarray(corpus.sparse_ids, dtype=np.int32)
        self.sp_values = np.ascontiguousarray(corpus.sparse_values, dtype=np.float64)
        if self.sp_ids.size and (self.sp_ids.min() < d or self.sp_ids.max() >= self.n_features):
            raise ValueError(f"sparse feature ids must lie in [{d}, {self.n_features})")
        if not (np.all(np.isfinite(self.dense)) and np.all(np.isfinite(self.sp_values))):
            raise ValueError("feature values must be finite")
        self.ranks = np.empty(n, dtype=np.int32)
        _apro.metric_ranks(b, self.offsets, self.ranks)
        self.engine = engine if engine is not None else LocalEngine()
        self.rows = []          # (first hypothesis, end) of each partition
        self.first_sentence = []
        parts = []
        for s_lo, s_hi in partition_sentences(self.offsets, self.engine.n_workers):
            lo, hi = int(self.offsets[s_lo]), int(self.offsets[s_hi])
            self.rows.append((lo, hi))
            self.first_sentence.append(s_lo)
            parts.append(_PairPart(self.ranks[lo:hi].copy(), self.offsets[s_lo:s_hi + 1] - lo)
                         if len(self.rows) > 1 or hi - lo < n else _PairPart(self.ranks, self.offsets))
        self.parts = self.engine.put(parts)
        self.part_threads = [self.engine.threads_of(i) or self.threads for i in range(len(parts))]
        self.n = n
        self.c = float(c)
        #: C / N, the factor of the summed loss
        self.scale = self.c / n if n else 0.0
        self.evaluations = 0
        self.gradients = 0
        self.hessian_products = 0
        self._cache: list[AproPoint] = []

    # ------------------------------------------------------------------ kernels
    def scores(self, w: np.ndarray) -> np.ndarray:
        """Model scores float64 [n] of ``w``, shifted by a constant per sentence."""
        out = np.empty(self.n, dtype=np.float64)
        _apro.centred_scores(self.dense, self.sp_indptr, self.sp_ids, self.sp_values, self.offsets,
                             self._vector(w, "weights"), out, self.threads)
        return out

    def transpose_product(self, coef: np.ndarray) -> np.ndarray:
        """X^T coef, float64 [n_features], for coef float64 [n] summing to 0 per sentence."""
        out = np.empty(self.n_features, dtype=np.float64)
        _apro.centred_transpose_product(self.dense, self.sp_indptr, self.sp_ids, self.sp_values,
                                        self.offsets, coef, out)
        return out

    def _vector(self, w, what: str) -> np.ndarray:
        w = np.ascontiguousarray(w, dtype=np.float64)
        if w.shape != (self.n_features,):
            raise ValueError(f"{what} must have shape ({self.n_features},), got {w.shape}")
        if not np.all(np.isfinite(w)):
            raise ValueError(f"{what} must be finite")
        return w

    def _split(self, x: np.ndarray | None) -> list:
        return [None if x is None else x[lo:hi] for lo, hi in self.rows]

    def loss_pass(self, h: np.ndarray, v: np.ndarray | None = None) -> _Pass:
        """Run the loss kernel on scores ``h`` (float64 [n]), with curvature along ``v``."""
        engine = self.engine
        results = engine.run(_part_loss, self.parts, self._split(h), self._split(v), self.part_threads)
        public = engine.fetch(engine.run(_public, results))
        for first, (_, _, _, _, status, index) in zip(self.first_sentence, public):
            if status != _apro.STATUS_OK:
                raise FloatingPointError(f"a model score of sentence {first + index} is not finite; "
                                         f"the features or weights are too large")
        g, sent_loss, sent_curv, sent_active = (_joined([p[k] for p in public]) for k in range(4))
        loss, curvature, pairs = _apro.ordered_totals(sent_loss, sent_curv, sent_active)
        self.evaluations += 1
        return _Pass(loss, curvature, int(pairs), g, results)

    def point_from_pass(self, w: np.ndarray, p: _Pass) -> AproPoint:
        """The point ``w`` whose scores gave the pass ``p``: forms F and grad F."""
        grad = w + self.scale * self.transpose_product(p.g)
        value = 0.5 * float(w @ w) + self.scale * p.loss
        if not (math.isfinite(value) and np.all(np.isfinite(grad))):
            raise FloatingPointError(f"the APRO objective overflows at |w| = {float(np.linalg.norm(w)):g}")
        p.g = None
        self.gradients += 1
        return AproPoint(w, value, grad, p.active_pairs, p)

    # ------------------------------------------------------------------ evaluation
    def at(self, w) -> AproPoint:
        """F, grad F and the active set at ``w``."""
        w = self._vector(w, "weights").copy()
        return self.point_from_pass(w, self.loss_pass(self.scores(w)))

    def hessian_product(self, point: AproPoint, d) -> np.ndarray:
        """Generalized Hessian of F at ``point`` times ``d``: float64 [n_features]."""
        d = self._vector(d, "direction")
        engine = self.engine
        parts = engine.run(_part_hessian, self.parts, point._pass.state, self._split(self.scores(d)),
                           self.part_threads)
        hv = _joined(engine.fetch(parts))
        self.hessian_products += 1
        return d + self.scale * self.transpose_product(hv)

    # scipy.optimize-style access (minimize(fun, x0, jac=True, hessp=...)), for tests and
    # experiments; the last two points are cached, as a trust-region method returns to
    # the current point after rejecting a trial one.
    def _cached(self, w) -> AproPoint:
        key = self._vector(w, "weights").tobytes()
        for pt in self._cache:
            if pt.weights.tobytes() == key:
                return pt
        pt = self.at(w)
        self._cache = self._cache[-1:] + [pt]
        return pt

    def value_and_grad(self, w) -> tuple[float, np.ndarray]:
        """(F(w), grad F(w) float64 [n_features])."""
        pt = self._cached(w)
        return pt.value, pt.grad.copy()

    def hessp(self, w, d) -> np.ndarray:
        """Generalized Hessian of F at ``w`` times ``d`` (float64 [n_features] each)."""
        return self.hessian_product(self._cached(w), d)


@dataclass
class NewtonReport:
    """How a :func:`newton_cg` run went."""

    iterations: int = 0
    cg_steps: int = 0
    line_steps: int = 0
    converged: bool = False
    message: str = ""


def _conjugate_gradient(hessp, grad: np.ndarray, tol: float, max_steps: int) -> tuple[np.ndarray, int]:
    """Approximate solution d of H d = -grad (H symmetric positive definite) with
    |H d + grad| <= tol, or after ``max_steps`` products; returns (d, products)."""
    d = np.zeros_like(grad)
    r = -grad
    p = r.copy()
    rr = float(r @ r)
    steps = 0
    while math.sqrt(rr) > tol and steps < max_steps:
        hp = hessp(p)
        steps += 1
        php = float(p @ hp)
        if not php > 0:
            break               # H >= I in exact arithmetic: only rounding gets here
        a = rr / php
        d += a * p
        r = r - a * hp
        rr_new = float(r @ r)
        p = r + (rr_new / rr) * p
        rr = rr_new
    return d, steps


def newton_cg(obj: AproObjective, start: np.ndarray, gtol: float, reference_norm: float,
              max_iterations: int, *, max_cg: int = 250, max_line: int = 30,
              curvature_condition: float = 0.1) -> tuple[AproPoint, NewtonReport]:
    """Minimize F by truncated Newton with a line search (Chapelle & Keerthi 2010, PRSVM+).

    Each iteration solves H d = -grad F by conjugate gradients to the relative accuracy
    min(0.5, sqrt(|grad F| / reference_norm)) (a forcing sequence that gives superlinear
    convergence; at most ``max_cg`` products), then searches along d. F along the line,
    phi(a) = F(w + a d), is convex and piecewise quadratic; with h = X w and v = X d its
    derivatives are phi'(a) = w.d + a d.d + (C/N) g(h + a v).v and phi''(a) = d.d +
    (C/N) v^T H(h + a v) v, both from one kernel pass on the scores h + a v (no X
    products). The search starts at a = 1 and takes safeguarded Newton steps on phi'
    until |phi'(a)| <= curvature_condition * |phi'(0)| (and phi decreased); the kernel pass
    of the accepted a becomes the next point, so a step usually costs a single pass.
    A truncated Newton method with a line search does as well as a trust region on
    linear models (Galli & Lin 2021) and, here, far fewer iterations when C is large
    (a trust region keeps shrinking as new pairs become active across its steps).

    obj: the objective; start: float64 [n_features]; gtol: absolute threshold on |grad F|;
    reference_norm: the scale of gradients for the forcing sequence (|grad F(0)|; 0 means
    none, eta = 0.5). Stops when |grad F| <= gtol, after ``max_iterations``, or when a step
    no longer changes w (rounding). Returns the last point and a :class:`NewtonReport`.
    """
    report = NewtonReport()
    point = obj.at(start)
    while True:
        gnorm = float(np.linalg.norm(point.grad))
        if gnorm <= gtol:
            report.converged, report.message = True, "gradient norm below the tolerance"
            break
        if report.iterations >= max_iterations:
            report.message = "maximum number of iterations reached"
            break
        report.iterations += 1
        eta = min(0.5, math.sqrt(gnorm / reference_norm)) if reference_norm > 0 else 0.5
        d, steps = _conjugate_gradient(lambda p: obj.hessian_product(point, p), point.grad, eta * gnorm, max_cg)
        report.cg_steps += steps
        w = point.weights
        slope0 = float(point.grad @ d)
        if not slope0 < 0:
            report.message = "no descent direction (rounding)"
            break
        h, v = obj.scores(w), obj.scores(d)
        wd, dd = float(w @ d), float(d @ d)
        lo, hi, a = 0.0, math.inf, 1.0
        accepted = None
        for _ in range(max_line):
            p = obj.loss_pass(h + a * v, v)
            report.line_steps += 1
            w_new = w + a * d
            value = 0.5 * float(w_new @ w_new) + obj.scale * p.loss
            slope = wd + a * dd + obj.scale * float(p.g @ v)
            curvature = dd + obj.scale * p.curvature
            if abs(slope) <= curvature_condition * -slope0 and (slope <= 0 or value <= point.value):
                accepted = (w_new, p)
                break
            if slope < 0:
                lo = a
            else:
                hi = a
            a_next = a - slope / curvature        # exact on phi's current quadratic piece
            if not lo < a_next < hi:
                a_next = 0.5 * (lo + hi) if math.isfinite(hi) else 2.0 * a
            if a_next == a:
                break
            a = a_next
        if accepted is None:
            if lo == 0.0:
                report.message = "line search failed (rounding)"
                break
            # phi' < 0 on [0, lo]: F decreases up to lo
            w_new = w + lo * d
            accepted = (w_new, obj.loss_pass(h + lo * v))
        w_new, p = accepted
        if np.array_equal(w_new, w):
            report.message = "step too small to change the weights (rounding)"
            break
        point = obj.point_from_pass(w_new, p)
    return point, report


class Apro(Optimizer):
    name = "apro"
    distributes = True
    help = ("all-pairs ranking optimization (Dreyer & Dong 2015): squared-hinge loss over every "
            "preference pair, O(k log k) per sentence, truncated Newton")
    options = {
        "c": dict(type=float, default=0.01, metavar="C",
                  help="weight C of the loss against 1/2 |w|^2; the loss is divided by the number of "
                       "hypotheses (default 0.01)"),
        "psi": dict(type=float, default=1.0, metavar="PSI",
                    help="interpolation: return psi * w' + (1 - psi) * start (default 1: the minimizer)"),
        "sentence_metric": dict(choices=tuple(SENTENCE_BLEU_VARIANTS), default="bleu+1",
                                help="per-hypothesis metric that orders the pairs (default bleu+1)"),
        "tolerance": dict(type=float, default=1e-6,
                          help="stop when |grad F(w)| <= tolerance * |grad F(0)| (relative to the gradient at "
                               "w = 0; absolute when that is 0; default 1e-6)"),
        "max_iterations": dict(type=int, default=1000, help="Newton iterations at most (default 1000)"),
    }

    def __init__(self, c=0.01, psi=1.0, sentence_metric="bleu+1", tolerance=1e-6, max_iterations=1000):
        if not (math.isfinite(c) and c > 0):
            raise ValueError(f"c must be positive and finite, got {c!r}")
        if not (0.0 <= psi <= 1.0):
            raise ValueError(f"psi must lie in [0, 1], got {psi!r}")
        if sentence_metric not in SENTENCE_BLEU_VARIANTS:
            raise ValueError(f"sentence_metric must be one of {', '.join(SENTENCE_BLEU_VARIANTS)}, "
                             f"got {sentence_metric!r}")
        if not (tolerance > 0):
            raise ValueError(f"tolerance must be > 0, got {tolerance!r}")
        if max_iterations < 1:
            raise ValueError(f"max_iterations must be >= 1, got {max_iterations}")
        super().__init__()
        self.c = float(c)
        self.psi = float(psi)
        self.sentence_metric = sentence_metric
        self.tolerance = float(tolerance)
        self.max_iterations = int(max_iterations)

    def objective(self, corpus, threads: int = 1, engine=None) -> AproObjective:
        """The objective F of this configuration on ``corpus`` (kernels on ``threads``
        threads, partitions on ``engine``'s workers)."""
        return AproObjective(corpus, hypothesis_scores(corpus, self.sentence_metric, threads=threads), self.c, threads,
                             engine)

    def optimize(self, corpus, start: np.ndarray, seed: int, *, threads: int | None = None,
                 ranges: tuple[np.ndarray, np.ndarray] | None = None, progress=None, engine=None) -> Result:
        """Minimize F from ``start`` (float64 [n_features]); return psi w' + (1 - psi) start.

        seed: recorded only (APRO is deterministic). threads: of the loss and Hessian kernels
        (default: all cores; the result does not depend on it). engine: a dask engine
        (:func:`mtplug.distributed.connect`) runs the kernels on its workers, one partition
        of sentences each (workers use their own thread counts); same result.
        ranges: ignored (no random start points). progress: called once, with 1, at the end.
        info: iterations (Newton), function_evaluations (loss kernel passes, line search
        included), gradient_evaluations (gradients formed, X^T products),
        hessian_products (conjugate-gradient steps), line_search_steps, seconds,
        gradient_norm (|grad F| at w'), gradient_tolerance (the absolute threshold),
        objective (F(w')), active_pairs (at w'), converged, message.
        """
        t0 = time.perf_counter()
        start = self.checked_start(corpus, start)
        obj = self.objective(corpus, threads=max(1, threads or os.cpu_count() or 1), engine=engine)
        g0 = float(np.linalg.norm(obj.at(np.zeros(corpus.n_features)).grad))
        gtol = self.tolerance * g0 if g0 > 0 else self.tolerance
        point, report = newton_cg(obj, start, gtol, g0, self.max_iterations)
        w_opt = point.weights
        w = self.psi * w_opt + (1.0 - self.psi) * start if self.psi != 1.0 else w_opt.copy()
        score = corpus.metric_of(w)
        grad_norm = float(np.linalg.norm(point.grad))
        info = {
            "iterations": report.iterations, "function_evaluations": obj.evaluations,
            "gradient_evaluations": obj.gradients, "hessian_products": obj.hessian_products,
            "line_search_steps": report.line_steps, "seconds": time.perf_counter() - t0,
            "gradient_norm": grad_norm, "gradient_tolerance": gtol, "objective": point.value,
            "active_pairs": point.active_pairs, "converged": report.converged, "message": report.message,
        }
        if progress is not None:
            progress(1)
        return Result(weights=w, score=score, seed=seed, info=info)
