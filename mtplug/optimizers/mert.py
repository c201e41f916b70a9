"""MERT: exact line searches (Och 2003) driven by coordinate, random, Powell or
expected-BLEU gradient directions, with random restarts and Galley et al.'s (2013)
regularisers.

The search from one start point repeats rounds of line searches until a round gains
less than ``tolerance`` (in objective = metric − λ·R). Restarts run in threads (the
kernels release the GIL), and threads left over sweep sentences in parallel inside each
line search; each restart draws from its own seeded stream and the sweep gathers
sentences in order, so the result does not depend on the number of threads.

Output weights are L1-normalised (Σ|w| = 1, as Moses's mert prints its best point)
whenever the objective is scale-invariant (no regulariser, ``l2-l1norm``, ``l0``);
``l2`` and ``l2-fixed`` depend on the scale, so their weights are returned as found.
"""

from __future__ import annotations

import math
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ..errors import InputError
from .base import Optimizer, Result, reject_inapplicable
from .line_search import (
    REGULARIZERS,
    LineResult,
    Regularizer,
    SparseColumns,
    best_sparse_unit_move,
    coordinate_line_searches,
    dot,
    has_sparse_columns,
    line_search,
    rescore_rows,
    slope_orders,
    support_line_search,
)

if TYPE_CHECKING:
    from ..metrics.expected_bleu import ExpectedBleu

DIRECTION_FINDERS = ("coordinate", "random", "powell", "expbleu")
SCALE_FREE = ("none", "l2-l1norm", "l0")
#: more features than this, each swept over every sentence, with coordinate directions:
#: warn before the search (a round is one line search per feature)
MANY_COORDINATES = 1000
#: each sentence's hypotheses are put in order of every dense feature once (int32 per
#: hypothesis and feature) up to this size (bytes): a coordinate line search then walks
#: only the hypotheses that can be on an envelope, without sorting or dividing per
#: hypothesis (2M hypotheses x 15 features: a round of 15 searches 549 ms -> about 80 ms
#: of CPU, for 0.7 s of CPU and 120 MB spent once)
ORDERS_MAX_BYTES = 1 << 30


@dataclass
class _Search:
    """State of the search from one start point."""

    corpus: Any                 # an NbestCorpus or a forests.ForestCorpus (the same methods)
    reg: Regularizer
    active: np.ndarray          # int indices of the features that may move
    tolerance: float
    max_iterations: int
    w: np.ndarray
    threads: int = 1            # of the line-search kernels
    expected: ExpectedBleu | None = None  # on the corpus (n-best, expbleu directions)
    orders: np.ndarray | None = None    # int32 [n_dense, n_hyp]: slope_orders of every dense column, or None
    columns: SparseColumns | None = None  # the sparse features by column (n-best stores with sparse features)
    objective: float = -math.inf
    #: (seconds since the search began, line searches so far, objective) after each move
    trace: list = field(default_factory=list)
    started: float = field(default_factory=time.perf_counter)
    line_searches: int = 0
    lines: int = 0
    iterations: int = 0
    seconds_in_line_search: float = 0.0
    seconds_in_scores: float = 0.0      # of which computing w·f at each new point
    _intercepts: np.ndarray | None = field(default=None, repr=False)

    def intercepts(self) -> np.ndarray:
        if self._intercepts is None:
            t = time.perf_counter()
            self._intercepts = self.corpus.scores(self.w, self.threads)
            self.seconds_in_scores += time.perf_counter() - t
        return self._intercepts

    def unit(self, j: int) -> np.ndarray:
        d = np.zeros(len(self.w))
        d[j] = 1.0
        return d

    def slopes_of_unit(self, j: int) -> np.ndarray:
        """d·f for the unit direction of feature j: a dense column needs no arithmetic."""
        if j < self.corpus.n_dense:
            return self.corpus.dense[:, j]
        return self.corpus.scores(self.unit(j), self.threads)

    def search(self, d: np.ndarray, slopes: np.ndarray | None = None, unit: int = -1) -> LineResult:
        """Line search along d; ``unit``: d is the unit direction of that dense feature. A
        direction that moves sparse features only sweeps the sentences they touch."""
        t = time.perf_counter()
        support = self.sparse_support(d)
        if support is not None and self.columns is not None:
            res = support_line_search(self.corpus, self.columns, self.w, d, support, self.reg,
                                      intercepts=self.intercepts())
        else:
            order = self.orders[unit] if self.orders is not None and unit >= 0 else None
            res = line_search(self.corpus, self.w, d, self.reg, intercepts=self.intercepts(), slopes=slopes,
                              order=order, threads=self.threads)
        self.seconds_in_line_search += time.perf_counter() - t
        self.line_searches += 1
        self.lines += res.lines
        return res

    def sparse_support(self, d: np.ndarray) -> np.ndarray | None:
        """The features d moves, when they are all sparse and touch at most half of the
        hypotheses (a sweep over the touched sentences pays then); else None."""
        if self.columns is None:
            return None
        support = np.flatnonzero(d)
        if len(support) == 0 or support[0] < self.corpus.n_dense:
            return None
        ptr = self.columns.col_ptr
        if int(np.sum(ptr[support + 1] - ptr[support])) > self.corpus.n_hypotheses // 2:
            return None
        return support

    def best_unit_move(self, features: np.ndarray) -> tuple[int, LineResult | None]:
        """The best line search along the unit direction of each of ``features`` (int [C]):
        ``(feature, result)`` of the largest gain above the tolerance (ties: the earliest
        in ``features``), or ``(-1, None)``. Dense features in one pass over the sentences;
        sparse ones, with their columns, in one pass over the sentences each touches."""
        sparse = features >= self.corpus.n_dense
        if self.columns is None:
            sparse[:] = False
        dense_pos = np.flatnonzero(~sparse)
        best: tuple[float, int, LineResult] | None = None   # (gain, position, result)
        if len(dense_pos):
            for pos, res in zip(dense_pos.tolist(), self.unit_searches(features[dense_pos])):
                if res.gain > self.tolerance and (best is None or res.gain > best[0]):
                    best = (res.gain, pos, res)
        sparse_pos = np.flatnonzero(sparse)
        if len(sparse_pos) and self.columns is not None:
            t = time.perf_counter()
            c, found, searched, lines = best_sparse_unit_move(
                self.corpus, self.columns, self.w, features[sparse_pos], self.reg, intercepts=self.intercepts(),
                tolerance=self.tolerance, threads=self.threads)
            self.seconds_in_line_search += time.perf_counter() - t
            self.line_searches += searched
            self.lines += lines
            if found is not None and (best is None or found.gain > best[0]
                                      or (found.gain == best[0] and sparse_pos[c] < best[1])):
                best = (found.gain, int(sparse_pos[c]), found)
        if best is None:
            return -1, None
        return int(features[best[1]]), best[2]

    def unit_searches(self, features: np.ndarray) -> list[LineResult]:
        """Line searches along the unit direction of each feature in ``features`` (in that
        order): the dense ones in one pass over the sentences, the others one by one."""
        dense = features[features < self.corpus.n_dense]
        found: dict[int, LineResult] = {}
        if len(dense):
            t = time.perf_counter()
            for j, res in zip(dense.tolist(), coordinate_line_searches(
                    self.corpus, self.w, dense, self.reg, intercepts=self.intercepts(), orders=self.orders,
                    threads=self.threads)):
                found[j] = res
                self.line_searches += 1
                self.lines += res.lines
            self.seconds_in_line_search += time.perf_counter() - t
        for j in features[features >= self.corpus.n_dense].tolist():
            found[j] = self.search(self.unit(j), self.slopes_of_unit(j))
        return [found[j] for j in features.tolist()]

    def move(self, res: LineResult, d: np.ndarray) -> None:
        """Move to the point ``res`` found along d: when d moves sparse features only, only
        the model scores of the hypotheses they fire in are computed again."""
        if res.gamma != 0.0:
            self.w = res.apply(self.w, d)
            support = self.sparse_support(d)
            if support is not None and self._intercepts is not None and self.columns is not None:
                rescore_rows(self.corpus, self.w, self.columns.hypotheses(support), self._intercepts)
            else:
                self._intercepts = None
        self.objective = res.objective
        self.trace.append((round(time.perf_counter() - self.started, 6), self.line_searches, self.objective))

    # ------------------------------------------------------------------ direction finders
    def coordinate_round(self) -> float:
        """Line-search every active feature, take the single best move; returns its gain."""
        j, res = self.best_unit_move(self.active)
        if res is None:
            return 0.0
        self.move(res, self.unit(j))
        return res.gain

    def coordinate(self) -> None:
        while self.iterations < self.max_iterations:
            self.iterations += 1
            if self.coordinate_round() <= self.tolerance:
                break

    def random(self, rng: np.random.Generator, per_round: int) -> None:
        """Cer et al. (2008): each round tries ``per_round`` random directions and moves
        along the best; stops when a round gains nothing."""
        while self.iterations < self.max_iterations:
            self.iterations += 1
            best: tuple[float, np.ndarray, LineResult] | None = None
            for _ in range(per_round):
                d = self.random_direction(rng)
                res = self.search(d)
                if best is None or res.gain > best[0]:
                    best = (res.gain, d, res)
            if best is None or best[0] <= self.tolerance:
                break
            self.move(best[2], best[1])

    def random_direction(self, rng: np.random.Generator) -> np.ndarray:
        d = np.zeros(len(self.w))
        d[self.active] = rng.standard_normal(len(self.active))
        return d / math.sqrt(dot(d, d))

    def powell(self) -> None:
        """Powell's conjugate directions: sweep the direction set, then search along the
        total displacement and let it replace the direction of the largest gain."""
        dirs = [self.unit(j) for j in self.active]
        while self.iterations < self.max_iterations:
            self.iterations += 1
            w_start, obj_start = self.w.copy(), self.objective
            largest, largest_i = 0.0, -1
            for i, d in enumerate(dirs):
                unit = int(np.flatnonzero(d)[0]) if np.count_nonzero(d) == 1 and np.max(d) == 1.0 else -1
                res = self.search(d, self.slopes_of_unit(unit), unit) \
                    if 0 <= unit < self.corpus.n_dense else self.search(d)
                if res.gain > self.tolerance:
                    self.move(res, d)
                    if res.gain > largest:
                        largest, largest_i = res.gain, i
            if self.objective - obj_start <= self.tolerance:
                break
            d_new = self.w - w_start
            norm = math.sqrt(dot(d_new, d_new))
            if norm == 0:
                break
            d_new = d_new / norm
            res = self.search(d_new)
            if res.gain > self.tolerance:
                self.move(res, d_new)
            if largest_i >= 0:
                dirs[largest_i] = d_new

    def expbleu(self, mu_start: float, mu_max: float) -> None:
        """Galley et al. (2013, §4): line searches along the gradient of the (regularised)
        objective with the 1-best replaced by expected statistics under p ∝ exp(μ·v·f),
        v = w/‖w‖₁ (see :meth:`gradient_direction`). μ starts at ``mu_start`` and doubles
        whenever a search gains less than the tolerance, until μ > ``mu_max``; the cooling
        pass repeats while it improves. At its end one coordinate round, and the gradient
        passes go on as soon as that round improved (their footnote 8). Under ℓ0 a pass
        whose gradients cannot pay for the weights they make non-zero goes straight to its
        round (:meth:`l0_hopeless`; the same moves). Over forests the expectation is taken
        over each forest's 100 best distinct strings at the current point."""
        while self.iterations < self.max_iterations:
            pass_start = self.objective
            mu = mu_start
            if self.no_gradient_can_pay():
                mu = math.inf                 # ℓ0: straight to the round, which is the iteration
                self.iterations += 1
            while mu <= mu_max and self.iterations < self.max_iterations:
                self.iterations += 1
                d = self.gradient_direction(mu)
                if d is None:
                    mu *= 2
                    continue
                if self.cannot_pay(d):
                    break                     # nor at any other μ: on to the coordinate round
                res = self.search(d)
                if res.gain > self.tolerance:
                    self.move(res, d)
                else:
                    mu *= 2
            if self.objective - pass_start > self.tolerance:
                continue                      # the cooling pass helped: cool again
            if self.coordinate_round() <= self.tolerance:
                break                         # an optimum for coordinate moves too

    def cannot_pay(self, d: np.ndarray) -> bool:
        """Whether no point along d can gain under ℓ0 (:meth:`l0_hopeless` of the zero
        weights d moves and the non-zero ones)."""
        moves = d != 0
        zero = self.w == 0
        return self.l0_hopeless(int(np.count_nonzero(moves & zero)), int(np.count_nonzero(moves & ~zero)))

    def no_gradient_can_pay(self) -> bool:
        """Whether no gradient's search can gain under ℓ0, before computing one: the
        gradient moves every active sparse feature that varies within some sentence
        (SparseColumns.varying; barring exact cancellation), and at most every active one."""
        if self.columns is None:
            return False
        active_zero = self.w[self.active] == 0
        new = int(np.count_nonzero(self.columns.varying[self.active] & active_zero))
        return self.l0_hopeless(new, int(np.count_nonzero(~active_zero)))

    def l0_hopeless(self, new: int, zeroable: int) -> bool:
        """Whether a direction that makes ``new`` zero weights non-zero and may zero
        ``zeroable`` others cannot gain under ℓ0: the largest possible metric gain (BLEU
        is at most 1) and λ per weight it zeroes do not pay λ per new weight. At λ = 10⁻³ on
        a pool of 10⁴ sparse features from the dense-tuned start, every expected-BLEU
        gradient's search fails at every μ: 17 gradients per pass for nothing. Other
        metrics (the synthetic pseudo-BLEU) have no bound here: never hopeless."""
        metric_kind = getattr(self.corpus, "metric", None)
        if not (self.reg.active and self.reg.kind == "l0" and metric_kind is not None and metric_kind.is_bleu):
            return False
        metric = self.objective + self.reg.value(self.w) if math.isfinite(self.objective) else 0.0
        return (1.0 - metric) + self.reg.strength * (zeroable - new) <= self.tolerance

    def gradient_direction(self, mu: float) -> np.ndarray | None:
        """The unit direction (float64 [D], zero off the active features) of
        ∇J_μ(v)/‖w‖₁ − λ·∇R(w): J_μ the expected metric at scaling μ taken at the
        L1-normalised weights v = w/‖w‖₁, so that μ means the same whatever scale the line
        searches leave w at (MERT's metric and the ℓ0 and ``l2-l1norm`` objectives are
        scale-invariant), in the units of w (the chain rule's 1/‖w‖₁), and R the
        regulariser (ℓ2 kinds: its gradient; ℓ0 has none). The chain rule's other term,
        along sign(w), moves only the scale of w; it is left out: with it the synthetic
        set of docs/reproductions/galley-2013.md ends further from the gold weights
        (D = 1000: cosine 0.99758 against 0.99872 at μ ≤ 1). None where the point offers
        no direction (a degenerate expectation, or a zero gradient)."""
        from ..metrics.expected_bleu import ExpectedBleu

        l1 = float(np.sum(np.abs(self.w))) or 1.0
        # forests: the gradient over their k-best lists at the current point
        expected = self.expected or ExpectedBleu(self.corpus.kbest_corpus(self.w), threads=self.threads)
        _, g = _quiet_gradient(expected, self.w / l1, mu)
        grad = g / l1 - self.reg.gradient(self.w)
        d = np.zeros(len(self.w))
        d[self.active] = grad[self.active]
        norm = math.sqrt(dot(d, d))
        if norm == 0 or not np.isfinite(norm):
            return None
        return d / norm


def _quiet_gradient(expected, w, mu):
    """The expected-BLEU gradient (``expected``: an ExpectedBleu); a degenerate point (some
    expected match count 0) simply offers no direction."""
    import warnings

    from ..metrics.expected_bleu import DegenerateObjectiveWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateObjectiveWarning)
        return expected.gradient(w, mu)



def restart_bounds(start: np.ndarray, active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) float64 [n]: where random start points are drawn, per weight of ``start``
    (float64 [n]): between 0 and twice the weight (its sign kept), and in [-s, s] for a
    weight that is 0, s the mean |weight| of the ``active`` (bool [n]) nonzero ones (1 if
    there are none)."""
    nonzero = np.abs(start[active])[start[active] != 0]
    s = float(nonzero.mean()) if len(nonzero) else 1.0
    lo = np.where(start > 0, 0.0, np.where(start < 0, 2.0 * start, -s))
    hi = np.where(start > 0, 2.0 * start, np.where(start < 0, 0.0, s))
    return lo, hi

class Mert(Optimizer):
    """Minimum error rate training (Och 2003): maximises the corpus metric of the 1-best itself.

    From the start weights and ``restarts`` random points (each active weight drawn
    within init.opt's ``ranges``, else between 0 and twice its start value), repeats
    rounds of exact line searches until a round gains less than ``tolerance``. Along a
    direction the 1-best of a sentence changes only where the upper envelope of its
    hypotheses' model-score lines does, so the metric is a step function of the step
    size whose best interval is found exactly (compiled envelope and merge kernels).
    Directions: coordinate ascent, random directions (Cer et al. 2008), Powell's
    method, or the expected-BLEU gradient (Galley et al. 2013); optionally a
    regulariser of the line search (Galley et al. 2013) and random walks from the best
    point (Moore & Quirk 2008). Works on n-best stores and on forests (lattices,
    hypergraphs).

    :meth:`optimize` returns the best point over all starts (ties: the earliest),
    L1-normalised (Σ|w| = 1, as Moses's mert) when the objective is scale-invariant.
    Each start draws from its own stream seeded from ``seed``, so the result does not
    depend on the number of threads. A bad option value raises ValueError.
    """

    name = "mert"
    distributes = True
    metric_info = ("objective", "start_objectives", "trace")
    help = "minimum error rate training: exact envelope line searches (Och 2003), optionally regularised"
    options: ClassVar[dict[str, dict]] = {
        "directions": dict(choices=DIRECTION_FINDERS, default="coordinate",
                           help="direction finder: coordinate ascent, random directions (Cer et al. 2008), "
                                "Powell, or the expected-BLEU gradient (Galley et al. 2013) (default: coordinate)"),
        "restarts": dict(type=int, default=20, metavar="N",
                         help="random start points besides the given one (0 = only the start; default 20, "
                              "as mert-moses.pl passes)"),
        "random_directions": dict(type=int, default=None, metavar="M",
                                  help="directions tried per round with --directions random (default 10)"),
        "random_walks": dict(type=int, default=0, metavar="N",
                             help="random walks from the best point, each followed by a new search "
                                  "(Moore & Quirk 2008; default 0)"),
        "reg": dict(choices=REGULARIZERS, default="none",
                    help="regulariser of the line search (Galley et al. 2013, §3.1; default none)"),
        "reg_strength": dict(type=float, default=None, metavar="LAMBDA",
                             help="λ > 0 of the regulariser (required with --reg other than none)"),
        "reg_fixed_feature": dict(default=None, metavar="NAME",
                                  help="with --reg l2-fixed: the feature whose weight stays fixed (default: "
                                       "the active feature with the largest |start weight|)"),
        "activate_features": dict(default=None, metavar="NAMES",
                                  help="comma list of the features to tune; the others keep their start weights"),
        "tolerance": dict(type=float, default=1e-6,
                          help="a round that gains less ends the search (>= 0; default 1e-6)"),
        "max_iterations": dict(type=int, default=200, help="rounds per start point at most (default 200)"),
        "mu_start": dict(type=float, default=None, help="expbleu: first μ (default 0.01)"),
        "mu_max": dict(type=float, default=None, help="expbleu: μ is doubled up to this (default 1000)"),
    }

    def __init__(self, directions="coordinate", restarts=20, random_directions=None, random_walks=0, reg="none",
                 reg_strength=None, reg_fixed_feature=None, activate_features=None, tolerance=1e-6,
                 max_iterations=200, mu_start=None, mu_max=None):
        if directions not in DIRECTION_FINDERS:
            raise ValueError(f"directions must be one of {', '.join(DIRECTION_FINDERS)}, got {directions!r}")
        reject_inapplicable((("random_directions", random_directions, directions == "random", "directions random"),
                             ("mu_start", mu_start, directions == "expbleu", "directions expbleu"),
                             ("mu_max", mu_max, directions == "expbleu", "directions expbleu"),
                             ("reg_strength", reg_strength, reg != "none", "a regulariser (reg)"),
                             ("reg_fixed_feature", reg_fixed_feature, reg == "l2-fixed", "reg l2-fixed")))
        random_directions = 10 if random_directions is None else random_directions
        mu_start = 0.01 if mu_start is None else mu_start
        mu_max = 1000.0 if mu_max is None else mu_max
        for name, value in (("restarts", restarts), ("random_walks", random_walks)):
            if value < 0:
                raise ValueError(f"{name} must be >= 0, got {value}")
        if random_directions < 1 or max_iterations < 1:
            raise ValueError("random_directions and max_iterations must be >= 1")
        if not (0 < mu_start <= mu_max < math.inf):
            raise ValueError(f"need 0 < mu_start <= mu_max < inf, got {mu_start}, {mu_max}")
        if not (0 <= tolerance < math.inf):
            raise ValueError(f"tolerance must be a finite number >= 0, got {tolerance}")
        if reg not in REGULARIZERS:
            raise ValueError(f"reg must be one of {', '.join(REGULARIZERS)}, got {reg!r}")
        if reg != "none" and reg_strength is None:
            raise ValueError(f"reg {reg} needs reg_strength > 0 (the regulariser's λ)")
        reg_strength = 0.0 if reg_strength is None else reg_strength
        if reg != "none" and not (0 < reg_strength < math.inf):
            raise ValueError(f"reg_strength must be a finite number > 0 with reg {reg} (0 is no regulariser: "
                             f"leave reg out), got {reg_strength}")
        super().__init__()
        self.directions = directions
        self.restarts = int(restarts)
        self.random_directions = int(random_directions)
        self.random_walks = int(random_walks)
        self.reg_kind = reg
        self.reg_strength = float(reg_strength)
        self.reg_fixed_feature = reg_fixed_feature
        self.activate_features = activate_features
        self.tolerance = float(tolerance)
        self.max_iterations = int(max_iterations)
        self.mu_start, self.mu_max = float(mu_start), float(mu_max)

    # ------------------------------------------------------------------ set-up
    def advice(self, corpus) -> list[str]:
        """A warning when coordinate rounds will be slow: more than MANY_COORDINATES
        features each swept over every sentence (dense columns, or features of forests;
        an n-best store's sparse features are swept over the sentences they touch only)."""
        if self.directions != "coordinate":
            return []
        active = self._active(corpus)
        if has_sparse_columns(corpus):
            active = active[active < corpus.n_dense]
        n = len(active)
        if n <= MANY_COORDINATES:
            return []
        return [(f"mert: coordinate directions over {n} features: every round of each of the "
                 f"{self.restarts + 1} start points runs {n} line searches over every sentence; "
                 "--directions expbleu or random, or pro, apro, mira, kbmira or rampion take far fewer")]

    def _active(self, corpus) -> np.ndarray:
        names = corpus.feature_names
        if self.activate_features:
            wanted = [n for n in str(self.activate_features).split(",") if n]
            index = {n: i for i, n in enumerate(names)}
            unknown = [n for n in wanted if n not in index]
            if unknown:
                raise InputError(f"--activate-features names unknown features: {', '.join(unknown)}")
            return np.array(sorted(index[n] for n in wanted), dtype=np.int64)
        return np.arange(len(names), dtype=np.int64)

    def _regularizer(self, corpus, start: np.ndarray, active: np.ndarray) -> tuple[Regularizer, np.ndarray]:
        fixed = -1
        if self.reg_kind == "l2-fixed":
            if self.reg_fixed_feature is not None:
                names = corpus.feature_names
                if self.reg_fixed_feature not in names:
                    raise InputError(f"--reg-fixed-feature: unknown feature {self.reg_fixed_feature!r}")
                fixed = names.index(self.reg_fixed_feature)
            else:
                fixed = int(active[np.argmax(np.abs(start[active]))])
            if start[fixed] == 0:
                raise InputError(f"l2-fixed: the fixed feature {corpus.feature_names[fixed]} needs a non-zero "
                                 "start weight (it pins the scale)")
            active = active[active != fixed]
        reg = Regularizer(self.reg_kind, self.reg_strength, w0=start.copy(), fixed=fixed)
        return reg, active

    def _start_points(self, start, active, ranges, rng_streams) -> list[np.ndarray]:
        """The given start and one random point per restart: every active feature drawn
        uniformly in its range; features left out of ``--activate-features`` keep their start.

        Ranges: init.opt's where it gives them (its columns: the dense block); elsewhere
        between 0 and twice the start weight, so a restart keeps each weight's sign (a
        [-1, 1] cube flips the sign of translation-model and language-model weights in
        half its draws, and such weights, however well they rank an n-best list, decode
        nonsense: measured with the real Moses, issue 19); a feature that starts at 0 is
        drawn in [-s, s], s the mean |start weight| of the active features (1 if all are 0).
        """
        lo, hi = restart_bounds(start, active)
        if ranges is not None:
            # init.opt's ranges (checked: min <= max; min == max pins the feature, as Moses draws)
            mins, maxs = ranges
            k = min(len(mins), len(start))
            lo[:k], hi[:k] = mins[:k], maxs[:k]
        points = [start.copy()]
        for rng in rng_streams:
            p = start.copy()
            p[active] = rng.uniform(lo[active], hi[active])
            points.append(p)
        return points

    # ------------------------------------------------------------------ run
    def _run_one(self, corpus, w0, reg, active, rng, threads: int = 1, expected=None, orders=None,
                 columns=None) -> _Search:
        s = _Search(corpus, reg, active, self.tolerance, self.max_iterations, w0.copy(), threads, expected, orders,
                    columns)
        s.objective = s.search(np.zeros(len(w0)), np.zeros(corpus.n_hypotheses)).objective
        s.trace.append((round(time.perf_counter() - s.started, 6), s.line_searches, s.objective))
        if len(active) == 0:
            return s
        if self.directions == "coordinate":
            s.coordinate()
        elif self.directions == "random":
            s.random(rng, self.random_directions)
        elif self.directions == "powell":
            s.powell()
        else:
            s.expbleu(self.mu_start, self.mu_max)
        s._intercepts = None  # finished searches wait for the others: keep them small
        return s

    def progress_total(self) -> int:
        return self.restarts + 1 + self.random_walks

    def _optimize(self, corpus, start: np.ndarray, seed: int, *, threads: int | None = None,
                 ranges: tuple[np.ndarray, np.ndarray] | None = None, progress=None, engine=None) -> Result:
        """Tune from ``start`` (float64 [n_features]) plus ``restarts`` random points.

        ranges: optional (mins, maxs) over the dense features for the random points
        (init.opt's second and third lines). threads: restarts searched at once
        (default: all cores). engine: with expbleu directions on an n-best store, a dask
        engine (:func:`mtplug.distributed.connect`) computes the expected-BLEU gradients
        on its workers, one partition of sentences each (same result). Returns the best
        point over all starts (ties: the earliest).
        """
        t0 = time.perf_counter()
        start = self.checked_start(corpus, start)
        active = self._active(corpus)
        reg, active = self._regularizer(corpus, start, active)
        streams = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(self.restarts + 1)]
        points = self._start_points(start, active, ranges, streams[1:])
        threads = max(1, threads or os.cpu_count() or 1)
        # restarts share the threads; what is left over goes to each search's kernels
        workers = min(threads, len(points))
        kernel_threads = max(1, threads // workers)
        expected = None
        if self.directions == "expbleu" and not hasattr(corpus, "kbest_corpus"):
            from ..metrics.expected_bleu import ExpectedBleu

            expected = ExpectedBleu(corpus, threads=kernel_threads, engine=engine)
        orders = None
        dense = getattr(corpus, "dense", None)
        t_orders = time.perf_counter()
        if self.directions in ("coordinate", "powell") and dense is not None and dense.ndim == 2 \
                and dense.shape[1] > 0 and dense.size * 4 <= ORDERS_MAX_BYTES:
            orders = slope_orders(corpus, np.arange(dense.shape[1]), threads)
        columns = SparseColumns.of(corpus)
        t_orders = time.perf_counter() - t_orders

        def run(i):
            search = self._run_one(corpus, points[i], reg, active, streams[i], kernel_threads, expected, orders,
                                   columns)
            if progress is not None:
                progress(1)
            return search

        with ThreadPoolExecutor(max_workers=workers) as pool:
            searches = list(pool.map(run, range(len(points))))
        best_i = max(range(len(searches)), key=lambda i: (searches[i].objective, -i))
        best = searches[best_i]
        walk_rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(self.restarts + 2)[-1])
        walks_won = 0
        for _ in range(self.random_walks):
            # Moore & Quirk (2008): restart from a random perturbation of the best point
            w = best.w.copy()
            scale = np.abs(w[active]).mean() or 1.0
            w[active] += walk_rng.normal(scale=scale, size=len(active))
            s = self._run_one(corpus, w, reg, active, walk_rng, threads, expected, orders, columns)
            if progress is not None:
                progress(1)
            searches.append(s)
            if s.objective > best.objective + self.tolerance:
                best, walks_won = s, walks_won + 1
        w = best.w
        if self.reg_kind in SCALE_FREE:
            norm = float(np.sum(np.abs(w)))
            if norm > 0:
                w = w / norm
        score = corpus.metric_of(w)
        n_ls = sum(s.line_searches for s in searches)
        ls_time = sum(s.seconds_in_line_search for s in searches)
        info = {
            "directions": self.directions, "restarts": self.restarts, "best_start": best_i,
            "start_objectives": [searches[i].objective for i in range(len(points))],
            "objective": best.objective, "iterations": sum(s.iterations for s in searches),
            # the best start's (seconds, line searches, objective) after each move: how it converged
            "trace": best.trace,
            "line_searches": n_ls, "random_walks_improved": walks_won,
            "seconds": time.perf_counter() - t0,
            "seconds_per_line_search": ls_time / n_ls if n_ls else 0.0,
            "lines_per_second": sum(s.lines for s in searches) / ls_time if ls_time else 0.0,
            # where the time goes (line searches and w·f summed over the start points,
            # which run side by side on several threads)
            "seconds_slope_orders": t_orders, "seconds_in_line_searches": ls_time,
            "seconds_in_scores": sum(s.seconds_in_scores for s in searches),
        }
        return Result(weights=w, score=score, seed=seed, info=info)
