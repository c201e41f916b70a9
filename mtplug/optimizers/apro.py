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
engine: the kernels run sentences in OpenMP threads, or in partitions on dask workers
(``engine``, or a :class:`mtplug.distributed.pool.PartitionedPool` whose workers read
the store themselves), every per-hypothesis result is independent of the split, and
the sums across sentences (loss, curvature, slope, X^T g) are exact
(:mod:`mtplug.exact_sum`). Only weight vectors travel to the partitions. X^T products
sum each (sentence, feature) pair's terms within its sentence first and only those sums
exactly (``PoolPart.transpose``).
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from functools import partial
from typing import ClassVar

import numpy as np

from .._ext import _apro
from ..exact_sum import Packed, accumulator, in_form, merged, rounded_sum
from ..metrics.bleu import SENTENCE_BLEU_VARIANTS
from .base import Optimizer, Result, largest_weight


@dataclass
class _Pass:
    """What one loss-kernel pass returns (the per-hypothesis results stay on the partitions)."""

    loss: float               # sum_s L_s, unscaled
    curvature: float          # v^T H v along the line's direction (0 without one)
    slope: float              # g . v along the line's direction (0 without one)
    active_pairs: int
    results: list             # per partition, handles of (g, active set)


class _Workspace:
    """What APRO keeps next to a partition (a :class:`mtplug.distributed.pool.PoolPart`).

    ranks: int32 [n_p], the dense ranks of its metric scores within each sentence (they
    fix the pairs). form: how its X^T products leave it (``PartitionedPool.sum_form``).
    It also keeps
    per-hypothesis arrays that passes have released (:meth:`take`, :meth:`give`): a
    fresh array of 2M hypotheses is 16 MB of pages for the kernel to clear first.
    """

    #: released arrays kept per dtype
    SPARE = 8

    def __init__(self, n: int, ranks: np.ndarray, form: str):
        self.n = n
        self.ranks = ranks
        self.form = form
        self._spare: dict[str, list[np.ndarray]] = {}

    def take(self, dtype) -> np.ndarray:
        """An array [n_p] of ``dtype`` (contents undefined)."""
        spare = self._spare.get(np.dtype(dtype).str)
        return spare.pop() if spare else np.empty(self.n, dtype=dtype)

    def give(self, *arrays) -> None:
        """Arrays from :meth:`take` that nothing reads any more (None entries skipped)."""
        for a in arrays:
            if a is not None:
                spare = self._spare.setdefault(a.dtype.str, [])
                if len(spare) < self.SPARE:
                    spare.append(a)


def _workspace(part, sentence_metric: str, form: str, n_features: int, threads: int) -> _Workspace:
    """The :class:`_Workspace` of a partition (``form``: ``PartitionedPool.sum_form``).
    Stays on the worker."""
    b = part.metric_scores(sentence_metric, threads)
    bad = np.flatnonzero(~np.isfinite(b))
    if bad.size:
        raise ValueError(f"metric score of hypothesis {part.first_row + int(bad[0])} is not finite")
    ranks = np.empty(b.shape[0], dtype=np.int32)
    _apro.metric_ranks(b, part.offsets, ranks)
    del b
    part.pairs(n_features)      # X^T's (sentence, feature) pairs, made once here
    return _Workspace(part.n_hypotheses, ranks, form)


def _line(part, ws: _Workspace, w: np.ndarray, d: np.ndarray | None, threads: int):
    """Scores of w and of the direction d (None: no direction) on one partition, in one
    read of its features."""
    h = ws.take(np.float64)
    v = None if d is None else ws.take(np.float64)
    _apro.centred_scores(part.dense, part.sp_indptr, part.sp_ids, part.sp_values, part.offsets, w, h, threads,
                         _NO_DIRECTION if d is None else d, _NO_DIRECTION if v is None else v)
    return h, v


def _release_line(part, ws: _Workspace, line, threads: int) -> None:
    ws.give(*line)


def _loss(part, ws: _Workspace, line, a: float, threads: int):
    """The loss kernel at scores h + a v of a :func:`_line`: ((g, active set), (exact
    totals [3, WIDTH], active pairs, status, first sentence))."""
    h, v = line
    g = ws.take(np.float64)
    order, fill1, fill2, partners = (ws.take(np.int32) for _ in range(4))
    totals = accumulator(3)
    pairs, status, index = _apro.loss_gradient(h, _NO_DIRECTION if v is None else v, ws.ranks, part.offsets,
                                               g, order, fill1, fill2, partners, totals, threads, a)
    return (g, (order, fill1, fill2, partners)), (totals, pairs, status, part.first_sentence + index)


def _release_loss(part, ws: _Workspace, result, threads: int) -> None:
    g, state = result[0]
    ws.give(g, *state)


def _public(result):
    """The part of a :func:`_loss` result that travels back (g and the state stay)."""
    return result[1]


def _transpose(part, ws: _Workspace, coef: np.ndarray, n_features: int, threads: int) -> Packed | np.ndarray:
    """X^T coef on one partition (``PoolPart.transpose``, the dense block relative to each
    sentence's first row), in the partition's sum form."""
    return part.transpose(coef, part.offsets[:-1], n_features, threads, ws.form)


def _gradient(part, ws: _Workspace, result, n_features: int, threads: int) -> Packed | np.ndarray:
    """X^T g of a :func:`_loss` result, as :func:`_transpose` gives it."""
    return _transpose(part, ws, result[0][0], n_features, threads)


def _hessian(part, ws: _Workspace, result, d: np.ndarray, n_features: int, threads: int) -> Packed | np.ndarray:
    """X^T H X d on the active set of a :func:`_loss` result, as :func:`_transpose` gives
    it. Without sparse entries the dense block is read once (``_apro.hessian_transpose``)."""
    order, fill1, fill2, partners = result[0][1]
    hv = ws.take(np.float64)
    if part.sp_indptr[-1]:
        v = ws.take(np.float64)
        _apro.centred_scores(part.dense, part.sp_indptr, part.sp_ids, part.sp_values, part.offsets, d, v, threads)
        _apro.hessian_product(v, ws.ranks, part.offsets, order, fill1, fill2, partners, hv, threads)
        out = _transpose(part, ws, hv, n_features, threads)
        ws.give(v, hv)
        return out
    n_dense = part.dense.shape[1]
    acc = accumulator(n_features)
    _apro.hessian_transpose(part.dense, part.sp_indptr, part.sp_ids, part.sp_values, part.offsets, d, ws.ranks,
                            order, fill1, fill2, partners, hv, acc[:n_dense], threads)
    ws.give(hv)
    return in_form(acc, ws.form)


_NO_DIRECTION = np.empty(0, dtype=np.float64)


@dataclass
class AproPoint:
    """F and grad F at one weight vector, with the active set the Hessian products use.

    weights, grad: float64 [n_features]; value: F(weights); active_pairs: |A|.
    """

    weights: np.ndarray
    value: float
    grad: np.ndarray
    active_pairs: int
    _pass: _Pass | None = field(repr=False)     # None once released (AproObjective.release)


class AproObjective:
    """F(w), grad F(w) and generalized Hessian products (module docstring) on a corpus.

    corpus: an :class:`mtplug.corpus.NbestCorpus` or a
    :class:`mtplug.distributed.pool.PartitionedPool` (e.g. a store the dask workers read
    themselves); every sentence non-empty. c: C > 0. sentence_metric: the per-hypothesis
    metric b that orders the pairs (a key of SENTENCE_BLEU_VARIANTS; the ``linear`` metric
    of a synthetic store is used as it is). threads: kernel threads (per partition).
    engine: where the partitions of an NbestCorpus live (a
    :class:`mtplug.distributed.LocalEngine` by default, one partition; a dask engine, one
    per worker). Weight vectors and directions are float64 [n_features]; only they travel
    to the partitions, and only exact partial sums come back, so the results do not depend
    on the engine or the threads. Counters: ``evaluations`` (loss kernel passes),
    ``gradients`` (gradients formed, X^T products), ``hessian_products``.
    """

    def __init__(self, corpus, c: float, sentence_metric: str = "bleu+1", threads: int = 1, engine=None):
        from ..distributed.pool import as_pool

        if not (math.isfinite(c) and c > 0):
            raise ValueError(f"C must be positive and finite, got {c!r}")
        corpus.check_complete()
        pool = as_pool(corpus, engine, threads)
        self.pool = pool
        self.n_features = pool.n_features
        self.n = pool.n_hypotheses
        self.workspaces = pool.run(_workspace, pool.each(sentence_metric), pool.each(pool.sum_form()),
                                   pool.each(pool.n_features))
        pool.engine.wait(self.workspaces)      # a bad metric score is reported here
        self.c = float(c)
        #: C / N, the factor of the summed loss
        self.scale = self.c / self.n if self.n else 0.0
        self.evaluations = 0
        self.gradients = 0
        self.hessian_products = 0
        self._cache: list[AproPoint] = []

    def _summed(self, handles) -> np.ndarray:
        """The partial sums of ``handles`` merged and rounded."""
        return merged(self.pool.engine.fetch(handles), self.pool.sum_form())

    def _vector(self, w, what: str) -> np.ndarray:
        w = np.ascontiguousarray(w, dtype=np.float64)
        if w.shape != (self.n_features,):
            raise ValueError(f"{what} must have shape ({self.n_features},), got {w.shape}")
        if not np.all(np.isfinite(w)):
            raise ValueError(f"{what} must be finite")
        return w

    # ------------------------------------------------------------------ kernels
    def line(self, w: np.ndarray, d: np.ndarray | None = None) -> list:
        """Handles of the scores of ``w`` (and of the direction ``d``) on each partition;
        :meth:`release_line` when done with them."""
        pool = self.pool
        return pool.run(_line, self.workspaces, pool.each(self._vector(w, "weights")),
                        pool.each(None if d is None else self._vector(d, "direction")))

    def release_line(self, line: list) -> None:
        """Hand the buffers of a :meth:`line` back for reuse (the line is then invalid)."""
        self.pool.engine.wait(self.pool.run(_release_line, self.workspaces, line))

    def discard(self, p: _Pass) -> None:
        """Hand the buffers of a :meth:`loss_pass` back for reuse (p is then invalid)."""
        self.pool.engine.wait(self.pool.run(_release_loss, self.workspaces, p.results))
        p.results = []

    def release(self, point: AproPoint) -> None:
        """Free the active set of ``point`` (48 bytes a hypothesis) once no Hessian
        product at it is needed; :meth:`hessian_product` then refuses the point."""
        if point._pass is not None:
            self.discard(point._pass)
            point._pass = None

    def loss_pass(self, line: list, a: float = 0.0) -> _Pass:
        """Run the loss kernel at the scores of w + a d (a :meth:`line`)."""
        engine = self.pool.engine
        results = self.pool.run(_loss, self.workspaces, line, self.pool.each(float(a)))
        public = engine.fetch(engine.run(_public, results))
        bad = [first for _, _, status, first in public if status != _apro.STATUS_OK]
        if bad:
            raise FloatingPointError(f"a model score of sentence {min(bad)} is not finite; "
                                     f"the features or weights are too large")
        loss, curvature, slope = rounded_sum([p[0] for p in public])
        self.evaluations += 1
        return _Pass(float(loss), float(curvature), float(slope), int(sum(p[1] for p in public)), results)

    def point_from_pass(self, w: np.ndarray, p: _Pass) -> AproPoint:
        """The point ``w`` whose scores gave the pass ``p``: forms F and grad F."""
        pool = self.pool
        with np.errstate(over="ignore", invalid="ignore"):   # overflow is checked below
            grad = w + self.scale * self._summed(pool.run(_gradient, self.workspaces, p.results,
                                                                   pool.each(self.n_features)))
            value = 0.5 * float(w @ w) + self.scale * p.loss
        if not (math.isfinite(value) and np.all(np.isfinite(grad))):
            raise FloatingPointError(f"the APRO objective overflows (largest |weight| {largest_weight(w):g}): the "
                                     "feature values or weights are too large for squared hinge losses; rescale "
                                     "the features")
        self.gradients += 1
        return AproPoint(w, value, grad, p.active_pairs, p)

    # ------------------------------------------------------------------ evaluation
    def at(self, w) -> AproPoint:
        """F, grad F and the active set at ``w``."""
        w = self._vector(w, "weights").copy()
        line = self.line(w)
        p = self.loss_pass(line)
        self.release_line(line)
        return self.point_from_pass(w, p)

    def hessian_product(self, point: AproPoint, d) -> np.ndarray:
        """Generalized Hessian of F at ``point`` times ``d``: float64 [n_features]."""
        d = self._vector(d, "direction")
        if point._pass is None:
            raise ValueError("the active set of this point was released (AproObjective.release)")
        pool = self.pool
        hv = self._summed(pool.run(_hessian, self.workspaces, point._pass.results, pool.each(d),
                                   pool.each(self.n_features)))
        self.hessian_products += 1
        return d + self.scale * hv

    def metric_of(self, w: np.ndarray) -> float:
        """The corpus metric of the 1-best under ``w``."""
        return self.pool.metric_of(w)

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


def newton_cg(obj: AproObjective, start: np.ndarray | AproPoint, gtol: float, reference_norm: float,
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

    obj: the objective; start: float64 [n_features], or ``obj``'s :class:`AproPoint` there
    (what :meth:`AproObjective.at` gave: saves that evaluation); gtol: absolute threshold
    on |grad F|; reference_norm: the scale of gradients for the forcing sequence
    (|grad F(0)|; 0 means none, eta = 0.5). Stops when |grad F| <= gtol, after ``max_iterations``, or when a step
    no longer changes w (rounding). Returns the last point and a :class:`NewtonReport`.
    """
    report = NewtonReport()
    point = start if isinstance(start, AproPoint) else obj.at(start)
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
        d, steps = _conjugate_gradient(partial(obj.hessian_product, point), point.grad, eta * gnorm, max_cg)
        report.cg_steps += steps
        obj.release(point)    # the line search needs memory for two passes of its own
        w = point.weights
        slope0 = float(point.grad @ d)
        if not slope0 < 0:
            report.message = "no descent direction (rounding)"
            break
        line = obj.line(w, d)
        wd, dd = float(w @ d), float(d @ d)
        lo, hi, a = 0.0, math.inf, 1.0
        accepted = None
        for _ in range(max_line):
            p = obj.loss_pass(line, a)
            report.line_steps += 1
            w_new = w + a * d
            value = 0.5 * float(w_new @ w_new) + obj.scale * p.loss
            slope = wd + a * dd + obj.scale * p.slope
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
            obj.discard(p)    # its buffers serve the next pass
        if accepted is None and lo > 0.0:
            # phi' < 0 on [0, lo]: F decreases up to lo
            w_new = w + lo * d
            accepted = (w_new, obj.loss_pass(line, lo))
        obj.release_line(line)
        if accepted is None:
            report.message = "line search failed (rounding)"
            break
        w_new, p = accepted
        if np.array_equal(w_new, w):
            report.message = "step too small to change the weights (rounding)"
            break
        point = obj.point_from_pass(w_new, p)
        del p, accepted       # the point holds the pass now, and obj.release frees it
    return point, report


class Apro(Optimizer):
    """All-pairs ranking optimisation (Dreyer & Dong 2015), minimised by truncated Newton.

    Every pair of hypotheses of a sentence whose sentence metric differs is a
    preference pair; :meth:`optimize` minimises
    F(w) = ½‖w‖² + (C/N) Σ max(0, 1 − h_p + h_q)² over all of them (N hypotheses,
    h = X w) by truncated Newton with a line search (:func:`newton_cg`), at O(k log k)
    per sentence of k hypotheses, and returns ``psi``·w' + (1 − ``psi``)·start, not
    normalised. Deterministic: ``seed`` is only recorded, and the result is
    bit-identical for any number of threads or dask workers (exact sums). It can run on
    a :class:`mtplug.distributed.pool.PartitionedPool` that stays on the workers. A bad
    option value raises ValueError.
    """

    name = "apro"
    distributes = True
    works_on_pools = True
    help = ("all-pairs ranking optimization (Dreyer & Dong 2015): squared-hinge loss over every "
            "preference pair, O(k log k) per sentence, truncated Newton")
    options: ClassVar[dict[str, dict]] = {
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
        """The objective F of this configuration on ``corpus`` (an NbestCorpus or a
        PartitionedPool; kernels on ``threads`` threads, partitions on ``engine``'s workers)."""
        return AproObjective(corpus, self.c, self.sentence_metric, threads, engine)

    def _optimize(self, corpus, start: np.ndarray, seed: int, *, threads: int | None = None,
                 ranges: tuple[np.ndarray, np.ndarray] | None = None, progress=None, engine=None) -> Result:
        """Minimize F from ``start`` (float64 [n_features]); return psi w' + (1 - psi) start.

        corpus: an NbestCorpus, or a :class:`mtplug.distributed.pool.PartitionedPool` (a
        store the dask workers read themselves; ``engine`` is then the pool's).
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
        at_zero = obj.at(np.zeros(corpus.n_features))
        if at_zero.value == 0.0:
            # F(0) = C/N · (number of pairs): no pair, nothing to learn; the minimiser 0 is no answer
            if progress is not None:
                progress(1)
            return Result(weights=start, score=obj.metric_of(start), seed=seed,
                          info={"iterations": 0, "active_pairs": 0, "converged": True, "objective": 0.0,
                                "seconds": time.perf_counter() - t0, "message": "no preference pairs"},
                          warnings=[("apro: no preference pairs (in every sentence all hypotheses have the same "
                                    f"{self.sentence_metric}): the start weights are returned unchanged")])
        g0 = float(np.linalg.norm(at_zero.grad))
        gtol = self.tolerance * g0 if g0 > 0 else self.tolerance
        obj.release(at_zero)  # 48 bytes a hypothesis, while the start point takes as much
        warnings = []
        try:
            first = obj.at(start)
        except FloatingPointError:
            # F is strictly convex: its minimiser does not depend on where Newton starts
            first = obj.at(at_zero.weights)
            warnings.append("apro: the objective overflows at the start weights (largest |weight| "
                            f"{largest_weight(start):g}); Newton starts from w = 0 instead")
        point, report = newton_cg(obj, first, gtol, g0, self.max_iterations)
        w_opt = point.weights
        w = self.psi * w_opt + (1.0 - self.psi) * start if self.psi != 1.0 else w_opt.copy()
        score = obj.metric_of(w)
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
        return Result(weights=w, score=score, seed=seed, info=info, warnings=warnings)
