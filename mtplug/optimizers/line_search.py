"""Exact (regularised) line search along w + γ·d over an NbestCorpus.

The compiled sweep (pyx/_linesearch.pyx) gives the metric on every interval between
the breakpoints of the 1-best. This module picks the point to move to, exactly, for
plain MERT and for the regularised objectives of Galley, Quirk, Cherry & Toutanova
(2013, §3.1):  objective(γ) = metric(γ) − λ·R(w + γ·d).

Choice of the point (documented tie rules):

* Within an interval the metric is constant, so the regulariser decides: its optimum
  is at an interval edge or at a stationary point inside. Edges are open (the 1-best
  changes there), so an edge optimum is taken a fraction ``EDGE_FRACTION`` of the
  interval's width (of ``max(1, |edge|)`` for an unbounded interval) inside, as Galley
  et al. step slightly inside the interval.
* Without regularisation the point is the interval's midpoint; an unbounded interval
  ends ``width of its neighbour`` (or ``max(1, |x|)`` if it has none) beyond its one
  breakpoint.
* The current point (γ = 0) is kept whenever no point is strictly better (by more
  than ``tolerance``); among equally good intervals the one whose point is nearest
  to γ = 0 wins, so repeated searches never drift.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .._ext import _linesearch, _rows

#: an edge optimum is taken this fraction of the interval's width inside the interval
EDGE_FRACTION = 1e-3
#: how far out (times the largest breakpoint) the limit of a scale-invariant
#: regulariser along an unbounded interval is taken
FAR_FACTOR = 1e6

#: objectives within this of the best are equally good when the point on a line is
#: chosen (the nearest to the current point wins)
POINT_TOLERANCE = 1e-12

REGULARIZERS = ("none", "l2", "l2-fixed", "l2-l1norm", "l0")


@dataclass(frozen=True)
class Regularizer:
    """λ·R(w) of Galley et al. (2013).

    kind: ``none``; ``l2`` — ‖w − w0‖²; ``l2-fixed`` — ‖w‖² over every coordinate but
    ``fixed`` (whose weight the search never moves, so the scale is pinned);
    ``l2-l1norm`` — ‖w/‖w‖₁‖²; ``l0`` — the number of non-zero weights.
    w0: float64 [D], the start weights (``l2``). strength: λ ≥ 0 (0 is plain MERT).
    """

    kind: str = "none"
    strength: float = 0.0
    w0: np.ndarray | None = None
    fixed: int = -1

    def __post_init__(self):
        if self.kind not in REGULARIZERS:
            raise ValueError(f"regularizer must be one of {', '.join(REGULARIZERS)}, got {self.kind!r}")
        if not (self.strength >= 0 and np.isfinite(self.strength)):
            raise ValueError(f"regularisation strength must be finite and >= 0, got {self.strength}")
        if self.kind == "l2" and self.w0 is None:
            raise ValueError("l2 regularisation needs the start weights w0")
        if self.kind == "l2-fixed" and self.fixed < 0:
            raise ValueError("l2-fixed regularisation needs the index of the fixed feature")

    @property
    def active(self) -> bool:
        """Whether the regulariser changes the search (a kind other than ``none`` and λ > 0)."""
        return self.kind != "none" and self.strength > 0

    def value(self, w: np.ndarray) -> float:
        """λ·R(w) for weights float64 [D]."""
        if not self.active:
            return 0.0
        if self.kind == "l2":
            return self.strength * float(np.sum((w - self.w0) ** 2))
        if self.kind == "l2-fixed":
            return self.strength * float(np.sum(w ** 2) - w[self.fixed] ** 2)
        if self.kind == "l2-l1norm":
            l1 = float(np.sum(np.abs(w)))
            return self.strength * (float(np.sum(w ** 2)) / l1 ** 2 if l1 > 0 else 0.0)
        return self.strength * float(np.count_nonzero(w))

    def gradient(self, w: np.ndarray) -> np.ndarray:
        """∇(λ·R)(w), float64 [D]; zero for ``none`` and for ℓ0 (flat almost everywhere)."""
        if not self.active or self.kind == "l0":
            return np.zeros(len(w))
        if self.kind == "l2" and self.w0 is not None:
            return 2.0 * self.strength * (w - self.w0)
        if self.kind == "l2-fixed":
            g = 2.0 * self.strength * w
            g[self.fixed] = 0.0
            return g
        # l2-l1norm: Q / L² with Q = |w|², L = |w|_1 → (2w L - 2Q sign(w)) / L³
        l1 = float(np.sum(np.abs(w)))
        if l1 == 0:
            return np.zeros(len(w))
        return self.strength * (2.0 * w * l1 - 2.0 * dot(w, w) * np.sign(w)) / l1 ** 3


@dataclass
class LineResult:
    """Outcome of one line search: move to w + gamma·d.

    gamma: the step; score: the metric there (0..1); objective: score − λ·R there;
    gain: objective − the objective at γ = 0; breakpoints: K, the number of distinct
    breakpoints of the corpus 1-best along the line; lines: envelope segments summed over
    sentences (work measure).
    """

    gamma: float
    score: float
    objective: float
    gain: float
    breakpoints: int
    lines: int

    def apply(self, w: np.ndarray, d: np.ndarray) -> np.ndarray:
        """The new weights w + γ·d, with the weights whose crossing γ is (−w_j/d_j, the
        point ℓ0's search credits for zeroing them) exactly 0: in floating point
        w_j + (−w_j/d_j)·d_j is often a few ulps off, and the next search would count
        the weight as non-zero again."""
        out = w + self.gamma * d
        nz = d != 0
        if np.any(nz):
            with np.errstate(over="ignore", divide="ignore"):
                hit = np.flatnonzero(nz)[-w[nz] / d[nz] == self.gamma]
            out[hit] = 0.0
        return out


def sweep(corpus, intercepts: np.ndarray, slopes: np.ndarray, method: str = "auto", threads: int = 1,
          order: np.ndarray | None = None):
    """``(xs, scores, n_lines)`` of the corpus objective along a line (see _linesearch.line_sweep;
    the objective of ``corpus.metric``, mtplug.metrics.layer).

    intercepts, slopes: float64 [n_hyp]; method: how envelopes are built ("auto", "walk"
    or "sort"; the same result, different speed); threads: OpenMP threads over sentences
    (the same result for any number); order: int32 [n_hyp], the slopes' order within each
    sentence (:func:`slope_orders`), when known (the same result, faster). A corpus of
    forests (mtplug.forests.corpus.ForestCorpus) sweeps its own way: its "hypotheses" are edges.
    """
    forest_sweep = getattr(corpus, "line_sweep", None)
    if forest_sweep is not None:
        return forest_sweep(intercepts, slopes, threads)
    return _linesearch.line_sweep(
        np.ascontiguousarray(intercepts, dtype=np.float64), _float64_view(slopes),
        corpus.sent_offsets, corpus.stats, corpus.metric.kernel_spec(), _linesearch.ENVELOPE_METHODS[method],
        max(1, int(threads)), order)


def slope_orders(corpus, columns: np.ndarray, threads: int = 1) -> np.ndarray:
    """int32 [len(columns), n_hyp]: row c orders each sentence's hypotheses by their value of
    dense feature ``columns[c]`` (the slopes along that feature's unit direction, whatever
    the weights), as :func:`sweep`'s ``order`` and :func:`coordinate_line_searches` take it."""
    columns = np.ascontiguousarray(columns, dtype=np.int64)
    out = np.empty((len(columns), corpus.n_hypotheses), dtype=np.int32)
    _linesearch.slope_orders(corpus.dense, columns, corpus.sent_offsets, out, max(1, int(threads)))
    return out


def dot(a: np.ndarray, b: np.ndarray) -> float:
    """a·b of two float64 vectors without BLAS: a threaded BLAS dot of 10⁴ entries took
    13 ms on a loaded 2-core machine (its threads wait for cores), this 15 µs."""
    return float(np.sum(a * b))


def has_sparse_columns(corpus) -> bool:
    """Whether ``corpus`` is an n-best store with sparse features, whose unit directions
    :class:`SparseColumns` sweeps over the sentences they touch only."""
    ids = getattr(corpus, "sparse_ids", None)
    return ids is not None and len(ids) > 0 and getattr(corpus, "line_sweep", None) is None


@dataclass(frozen=True)
class SparseColumns:
    """The sparse features of an NbestCorpus by column: which hypotheses each fires in.

    col_ptr int64 [n_features + 1] (dense ids have empty columns); col_hyp int64 [nnz]
    (ascending within a column, a row's repeated id in row order) and col_val float64
    [nnz]: feature j fires with value col_val[p] in hypothesis col_hyp[p] for p in
    col_ptr[j] .. col_ptr[j + 1] - 1; hyp_sent int32 [n_hyp], each hypothesis's sentence.
    """

    col_ptr: np.ndarray
    col_hyp: np.ndarray
    col_val: np.ndarray
    hyp_sent: np.ndarray

    @classmethod
    def of(cls, corpus) -> SparseColumns | None:
        """The columns of ``corpus`` (an NbestCorpus), or None for a store without sparse
        features or a corpus of another kind (forests)."""
        if not has_sparse_columns(corpus):
            return None
        nnz = len(corpus.sparse_ids)
        col_ptr, col_hyp, col_val = (np.empty(corpus.n_features + 1, dtype=np.int64), np.empty(nnz, dtype=np.int64),
                                     np.empty(nnz, dtype=np.float64))
        _rows.sparse_columns(corpus.sparse_indptr, corpus.sparse_ids, corpus.sparse_values, col_ptr, col_hyp, col_val)
        hyp_sent = np.repeat(np.arange(corpus.n_sentences, dtype=np.int32), np.diff(corpus.sent_offsets))
        return cls(col_ptr, col_hyp, col_val, hyp_sent)

    @functools.cached_property
    def varying(self) -> np.ndarray:
        """bool [n_features]: the sparse features that take two values within some sentence
        (absent counts as 0; dense ids False). Only these can have a non-zero expected-BLEU
        gradient: a feature constant within every sentence shifts each sentence's scores
        alike."""
        n_features = len(self.col_ptr) - 1
        out = np.zeros(n_features, dtype=bool)
        if len(self.col_hyp) == 0:
            return out
        feature = np.repeat(np.arange(n_features), np.diff(self.col_ptr))
        # one value per (feature, hypothesis): a row may repeat an id
        first = np.ones(len(self.col_hyp), dtype=bool)
        first[1:] = (feature[1:] != feature[:-1]) | (self.col_hyp[1:] != self.col_hyp[:-1])
        at = np.flatnonzero(first)
        value = np.add.reduceat(self.col_val, at)
        feature, sentence = feature[at], self.hyp_sent[self.col_hyp[at]]
        group = np.ones(len(at), dtype=bool)
        group[1:] = (feature[1:] != feature[:-1]) | (sentence[1:] != sentence[:-1])
        starts = np.flatnonzero(group)
        fired = np.diff(np.append(starts, len(at)))
        low, high = np.minimum.reduceat(value, starts), np.maximum.reduceat(value, starts)
        size = np.bincount(self.hyp_sent)[sentence[starts]]
        constant = ((fired == size) & (low == high)) | ((low == 0) & (high == 0))
        out[feature[starts][~constant]] = True
        return out

    def hypotheses(self, features: np.ndarray) -> np.ndarray:
        """int64 [m]: the hypotheses (ascending, once each) where any of ``features`` fires."""
        parts = [self.col_hyp[self.col_ptr[j]:self.col_ptr[j + 1]] for j in features.tolist()]
        return np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)


def support_line_search(corpus, columns: SparseColumns, w: np.ndarray, d: np.ndarray, support: np.ndarray,
                        reg: Regularizer = Regularizer(), *, intercepts: np.ndarray,
                        tolerance: float = POINT_TOLERANCE) -> LineResult:
    """:func:`line_search` along d (float64 [n_features]) whose nonzero entries are all
    sparse features, ``support`` (int [k]): only the sentences those features touch are
    swept (on one thread), with the same result bit for bit."""
    touched = columns.hypotheses(support)
    slopes = np.empty(len(touched))
    _rows.hyp_scores_rows(corpus.dense, corpus.sparse_indptr, corpus.sparse_ids, corpus.sparse_values,
                          np.ascontiguousarray(d, dtype=np.float64), touched, slopes)
    xs, sc, _, n_lines, _, _ = _linesearch.support_sweeps(
        np.ascontiguousarray(intercepts, dtype=np.float64), np.array([0, len(touched)], dtype=np.int64), touched,
        slopes, np.zeros(1, dtype=np.int64), columns.hyp_sent, corpus.sent_offsets, corpus.stats,
        corpus.metric.kernel_spec(), _linesearch.ENVELOPE_METHODS["auto"], 1)
    return _result(xs, sc, int(n_lines[0]), w, d, reg, tolerance)


def rescore_rows(corpus, w: np.ndarray, rows: np.ndarray, scores: np.ndarray) -> None:
    """scores[rows] = the model scores of hypotheses ``rows`` (int64 [m]) under w, the same
    bits as ``corpus.scores(w)`` gives them (after a move that changed only those)."""
    fresh = np.empty(len(rows))
    _rows.hyp_scores_rows(corpus.dense, corpus.sparse_indptr, corpus.sparse_ids, corpus.sparse_values,
                          np.ascontiguousarray(w, dtype=np.float64), np.ascontiguousarray(rows, dtype=np.int64), fresh)
    scores[rows] = fresh


def best_sparse_unit_move(corpus, columns: SparseColumns, w: np.ndarray, features: np.ndarray,
                          reg: Regularizer = Regularizer(), *, intercepts: np.ndarray, tolerance: float,
                          threads: int = 1) -> tuple[int, LineResult | None, int, int]:
    """The best of the line searches along the unit direction of each sparse feature in
    ``features`` (int [C], ids >= n_dense), as :func:`line_search` would find them one by
    one: ``(position in features, its result, C, envelope segments summed)``, or
    ``(-1, None, C, segments)`` when no search gains more than ``tolerance``. Ties go to the
    earliest position.

    One compiled pass sweeps every feature over the sentences it touches; each sweep's
    best score less its score at 0, plus what the regulariser can give back along one
    coordinate, bounds that search's gain from above, so the exact result (the same
    function as :func:`line_search`'s) is computed only for the features whose bound
    can still win.
    """
    features = np.ascontiguousarray(features, dtype=np.int64)
    if len(features) == 0:
        return -1, None, 0, 0
    xs, sc, kptr, n_lines, best, at_zero = _linesearch.support_sweeps(
        np.ascontiguousarray(intercepts, dtype=np.float64), columns.col_ptr, columns.col_hyp, columns.col_val,
        features, columns.hyp_sent, corpus.sent_offsets, corpus.stats, corpus.metric.kernel_spec(),
        _linesearch.ENVELOPE_METHODS["auto"], max(1, int(threads)))
    if reg.active and reg.kind in ("l2", "l2-fixed"):
        bound = _unit_l2_bound(xs, sc, kptr, at_zero, w, features, reg)
    else:
        bound = (best - at_zero) + _unit_reg_slack(w, features, reg)
    chosen, chosen_res = -1, None
    for c in np.argsort(-bound, kind="stable").tolist():
        if bound[c] <= tolerance or (chosen_res is not None and bound[c] < chosen_res.gain):
            break
        k0, k1 = int(kptr[c]), int(kptr[c + 1])
        d = np.zeros(len(w))
        d[features[c]] = 1.0
        res = _result(xs[k0:k1], sc[k0 + c:k1 + c + 1], int(n_lines[c]), w, d, reg, POINT_TOLERANCE)
        if res.gain > tolerance and (chosen_res is None or res.gain > chosen_res.gain
                                     or (res.gain == chosen_res.gain and c < chosen)):
            chosen, chosen_res = c, res
    return chosen, chosen_res, len(features), int(n_lines.sum())


def _unit_l2_bound(xs: np.ndarray, sc: np.ndarray, kptr: np.ndarray, at_zero: np.ndarray, w: np.ndarray,
                   features: np.ndarray, reg: Regularizer) -> np.ndarray:
    """float64 [C]: for the ℓ2 kinds, the most each unit search can gain: over every
    interval (closed) of its sweep, its score less the score at 0 plus what the penalty
    λ(δ + γ)² (δ the weight's distance from its centre) gives back at the interval's
    point nearest to γ = −δ; plus room for rounding. Flat over all features at once."""
    C = len(features)
    K = np.diff(kptr)
    owner = np.repeat(np.arange(C), K + 1)
    k = np.arange(len(sc)) - (kptr[owner] + owner)
    lo = np.where(k > 0, xs[np.clip(kptr[owner] + k - 1, 0, max(len(xs) - 1, 0))] if len(xs) else 0.0, -np.inf)
    hi = np.where(k < K[owner], xs[np.clip(kptr[owner] + k, 0, max(len(xs) - 1, 0))] if len(xs) else 0.0, np.inf)
    centre = reg.w0[features] if reg.kind == "l2" and reg.w0 is not None else np.zeros(C)
    delta = w[features] - centre
    vertex = -delta[owner]
    dist = np.maximum(np.maximum(lo - vertex, vertex - hi), 0.0)
    # l2-fixed leaves the fixed weight out of R: no penalty along it
    lam = np.where(features == reg.fixed, 0.0, reg.strength) if reg.kind == "l2-fixed" else np.full(C, reg.strength)
    gain = sc - at_zero[owner] + lam[owner] * (delta[owner] ** 2 - dist ** 2)
    room = 1e-9 * (1.0 + abs(reg.value(w)))
    return np.maximum.reduceat(gain, kptr[:-1] + np.arange(C)) + room


def _unit_reg_slack(w: np.ndarray, features: np.ndarray, reg: Regularizer) -> np.ndarray:
    """float64 [C]: the most the regulariser term can add to the gain along each unit
    direction (what it gives back by moving that one weight), plus room for rounding; ℓ0
    and ``l2-l1norm`` (the ℓ2 kinds are bounded per interval by :func:`_unit_l2_bound`)."""
    if not reg.active:
        return np.zeros(len(features))
    room = 1e-9 * (1.0 + abs(reg.value(w)))
    if reg.kind == "l0":
        # zeroing a weight gives λ back; moving one that is 0 makes it non-zero at every
        # γ ≠ 0, which costs λ
        return reg.strength * np.where(w[features] != 0, 1.0, -1.0) + room
    return np.full(len(features), reg.value(w) + room)   # l2-l1norm: R >= 0


def _float64_view(x: np.ndarray) -> np.ndarray:
    """x itself if it is a float64 vector with a whole-element stride, else a contiguous copy."""
    if x.dtype == np.float64 and x.ndim == 1 and x.strides[0] % 8 == 0:
        return x
    return np.ascontiguousarray(x, dtype=np.float64)


def line_search(corpus, w: np.ndarray, d: np.ndarray, reg: Regularizer = Regularizer(), *,
                intercepts: np.ndarray | None = None, slopes: np.ndarray | None = None,
                order: np.ndarray | None = None, tolerance: float = POINT_TOLERANCE, threads: int = 1) -> LineResult:
    """Best point on the line w + γ·d (w, d: float64 [n_features]).

    ``intercepts``/``slopes`` (float64 [n_hyp]) may be passed when known (cached model
    scores; a coordinate direction's slopes are a feature column), else computed; so may
    the slopes' ``order`` (:func:`slope_orders`). ``threads``: threads of the sweep (any
    number gives the same result).
    """
    a = corpus.scores(w, threads) if intercepts is None else intercepts
    b = corpus.scores(d, threads) if slopes is None else slopes
    xs, scores, n_lines = sweep(corpus, a, b, threads=threads, order=order)
    return _result(xs, scores, n_lines, w, d, reg, tolerance)


def coordinate_line_searches(corpus, w: np.ndarray, columns: np.ndarray, reg: Regularizer = Regularizer(), *,
                             intercepts: np.ndarray | None = None, orders: np.ndarray | None = None,
                             tolerance: float = POINT_TOLERANCE, threads: int = 1) -> list[LineResult]:
    """:func:`line_search` along the unit direction of each dense feature in ``columns``
    (int [C]), from one shared pass over the sentences; the same results.

    ``intercepts`` float64 [n_hyp] (w·f) when known; ``orders`` int32 [n_dense, n_hyp] as
    :func:`slope_orders` gives them for every dense column, or None.
    """
    a = corpus.scores(w, threads) if intercepts is None else intercepts
    columns = np.ascontiguousarray(columns, dtype=np.int64)
    sweeps = _linesearch.coordinate_sweeps(
        np.ascontiguousarray(a, dtype=np.float64), corpus.dense, columns, orders, corpus.sent_offsets,
        corpus.stats, corpus.metric.kernel_spec(), _linesearch.ENVELOPE_METHODS["auto"], max(1, int(threads)))
    results = []
    for j, (xs, scores, n_lines) in zip(columns.tolist(), sweeps):
        d = np.zeros(len(w))
        d[j] = 1.0
        results.append(_result(xs, scores, n_lines, w, d, reg, tolerance))
    return results


def _result(xs: np.ndarray, scores: np.ndarray, n_lines: int, w: np.ndarray, d: np.ndarray, reg: Regularizer,
            tolerance: float) -> LineResult:
    """The LineResult of a sweep along w + γ·d."""
    gamma, score, objective = best_point(xs, scores, w, d, reg, tolerance)
    base_score = float(scores[int(np.searchsorted(xs, 0.0, side="right"))]) if not _on_breakpoint(xs, 0.0) \
        else _score_at(xs, scores, 0.0)
    base = base_score - reg.value(w)
    return LineResult(gamma, score, objective, objective - base, len(xs), int(n_lines))


#: points this close (relative, at least absolute) are one point computed two ways: two
#: breakpoints where several pairs of hypotheses tie at once (e.g. twins that differ
#: only in feature j, in two sentences, at w_j = 0), or a breakpoint and a weight's zero
#: crossing (−w_j/d_j against (a₁ − a₂)/(b₂ − b₁)); a few ulps apart. The interval
#: between such breakpoints is no interval (its 1-best mixes sides of one tie), and a
#: point next to a breakpoint is on it: neither is a point to move to.
TIE_TOLERANCE = 1e-9


def _real_points(xs: np.ndarray, points: np.ndarray) -> np.ndarray:
    """bool [len(points)]: which of ``points`` are neither within TIE_TOLERANCE of a
    breakpoint in ``xs`` (sorted) nor inside an interval narrower than that."""
    if len(xs) == 0 or len(points) == 0:
        return np.ones(len(points), dtype=bool)
    i = np.searchsorted(xs, points)
    below = xs[np.maximum(i - 1, 0)]
    above = xs[np.minimum(i, len(xs) - 1)]
    room = TIE_TOLERANCE * np.maximum(1.0, np.abs(points))
    near = np.minimum(np.abs(points - below), np.abs(above - points)) <= room
    narrow = (i > 0) & (i < len(xs)) & (above - below <= room)
    return ~(near | narrow)


def _on_breakpoint(xs: np.ndarray, x: float) -> bool:
    i = int(np.searchsorted(xs, x))
    return i < len(xs) and xs[i] == x


def _score_at(xs: np.ndarray, scores: np.ndarray, x: float) -> float:
    """The metric at x; exactly on a breakpoint, the lower of its two sides (ties in the
    1-best there are unresolved, so no credit is taken for the better one)."""
    i = int(np.searchsorted(xs, x, side="left"))
    if i < len(xs) and xs[i] == x:
        return float(min(scores[i], scores[i + 1]))
    return float(scores[i])


def _interval_points(xs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lower and upper edges (±inf outside) and the default point of every interval."""
    K = len(xs)
    lo = np.concatenate([[-np.inf], xs])
    hi = np.concatenate([xs, [np.inf]])
    mid = np.empty(K + 1)
    if K == 0:
        mid[0] = 0.0
        return lo, hi, mid
    mid[1:K] = 0.5 * (xs[:-1] + xs[1:])
    left_w = xs[1] - xs[0] if K > 1 else max(1.0, abs(xs[0]))
    right_w = xs[-1] - xs[-2] if K > 1 else max(1.0, abs(xs[-1]))
    mid[0] = xs[0] - left_w
    mid[K] = xs[-1] + right_w
    return lo, hi, mid


def best_point(xs: np.ndarray, scores: np.ndarray, w: np.ndarray, d: np.ndarray,
               reg: Regularizer = Regularizer(), tolerance: float = POINT_TOLERANCE) -> tuple[float, float, float]:
    """``(gamma, score, objective)`` maximising metric − λ·R along w + γ·d.

    xs float64 [K] (sorted breakpoints), scores float64 [K + 1] (metric per interval).
    """
    lo, hi, mid = _interval_points(xs)
    cand_x, cand_s = _candidates(xs, scores, lo, hi, mid, w, d, reg)
    keep = (cand_x == 0.0) | _real_points(xs, cand_x)
    cand_x, cand_s = cand_x[keep], cand_s[keep]
    obj = cand_s - _reg_along(cand_x, w, d, reg)
    base_s = _score_at(xs, scores, 0.0)
    base = base_s - reg.value(w)
    best = float(np.max(obj)) if len(obj) else -np.inf
    if best <= base + tolerance:
        return 0.0, base_s, base
    near = np.flatnonzero(obj >= best - tolerance)
    i = near[np.argmin(np.abs(cand_x[near]))]
    return float(cand_x[i]), float(cand_s[i]), float(obj[i])


def _inside(lo, hi, x):
    """x moved inside (lo, hi) by at least EDGE_FRACTION of the width (of max(1, |edge|)
    next to an unbounded side), so that an open edge is never returned itself."""
    width = hi - lo
    finite = np.isfinite(width)
    safe_lo = np.where(np.isfinite(lo), lo, 0.0)
    safe_hi = np.where(np.isfinite(hi), hi, 0.0)
    step_lo = EDGE_FRACTION * np.where(finite, np.where(finite, width, 0.0), np.maximum(1.0, np.abs(safe_lo)))
    step_hi = EDGE_FRACTION * np.where(finite, np.where(finite, width, 0.0), np.maximum(1.0, np.abs(safe_hi)))
    return np.clip(x, lo + step_lo, hi - step_hi)


def _candidates(xs, scores, lo, hi, mid, w, d, reg):
    """Candidate points (and their metric) containing the optimum of the objective."""
    # the interval containing 0 offers 0 itself (no move), others their default point
    points = [mid]
    metric = [scores]
    zero_int = int(np.searchsorted(xs, 0.0, side="right"))
    if not _on_breakpoint(xs, 0.0):
        points.append(np.array([0.0]))
        metric.append(scores[zero_int:zero_int + 1])
    if reg.active:
        if reg.kind in ("l2", "l2-fixed"):
            A, B = _quadratic(w, d, reg)
            if A > 0:
                points.append(_inside(lo, hi, np.full(len(lo), -B / (2 * A))))
                metric.append(scores)
            points.append(_inside(lo, hi, np.where(np.isfinite(lo), lo, mid)))
            metric.append(scores)
            points.append(_inside(lo, hi, np.where(np.isfinite(hi), hi, mid)))
            metric.append(scores)
        elif reg.kind == "l2-l1norm":
            p2, s2 = _l1norm_candidates(xs, scores, w, d)
            points.append(p2)
            metric.append(s2)
        elif reg.kind == "l0":
            # a crossing on a breakpoint is a tie in some 1-best: best_point gives no credit there
            crossings = _crossings(w, d)
            if len(crossings):
                points.append(crossings)
                metric.append(np.array([_score_at(xs, scores, float(x)) for x in crossings]))
    at, values = np.concatenate(points), np.concatenate(metric)
    # all weights zero make every hypothesis tie: never a point to move to
    zero = _zero_point(w, d)
    if zero is not None:
        keep = at != zero
        at, values = at[keep], values[keep]
    return at, values


def _zero_point(w, d):
    """The γ with w + γd = 0, if the line passes through the origin (else None)."""
    nz = d != 0
    if not np.any(nz) or np.any(w[~nz] != 0):
        return None
    c = -w[nz] / d[nz]
    return float(c[0]) if np.all(c == c[0]) else None


def _quadratic(w, d, reg):
    """A, B of λ-free R(w + γd) = Aγ² + Bγ + C for the l2 kinds."""
    if reg.kind == "l2":
        diff = w - reg.w0
        return dot(d, d), 2.0 * dot(d, diff)
    mask = np.ones(len(w), dtype=bool)
    mask[reg.fixed] = False
    return dot(d[mask], d[mask]), 2.0 * dot(d[mask], w[mask])


def _crossings(w, d):
    """γ where some coordinate of w + γd is exactly 0 (and was not 0 everywhere)."""
    nz = d != 0
    return np.unique(-w[nz] / d[nz])


class _L1Along:
    """‖w + γd‖₁ as a piecewise linear function of γ, without forming w + γd per γ.

    With kinks k_j = −w_j/d_j (d_j ≠ 0): ‖w + γd‖₁ = Σ_j |d_j|·|γ − k_j| + Σ_{d_j=0} |w_j|,
    so on each piece it is p·γ + q with p, q from prefix sums over the sorted kinks.
    """

    def __init__(self, w, d):
        nz = d != 0
        kinks = -w[nz] / d[nz]
        order = np.argsort(kinks, kind="stable")
        self.kinks = kinks[order]
        ad = np.abs(d[nz])[order]
        self.cum_a = np.concatenate([[0.0], np.cumsum(ad)])
        self.cum_ak = np.concatenate([[0.0], np.cumsum(ad * self.kinks)])
        self.const = float(np.sum(np.abs(w[~nz])))

    def linear(self, gammas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(p, q) with ‖w + γd‖₁ = p·γ + q near every γ (right-continuous at kinks)."""
        i = np.searchsorted(self.kinks, gammas, side="right")
        left_a, left_ak = self.cum_a[i], self.cum_ak[i]
        right_a, right_ak = self.cum_a[-1] - left_a, self.cum_ak[-1] - left_ak
        return left_a - right_a, right_ak - left_ak + self.const

    def __call__(self, gammas: np.ndarray) -> np.ndarray:
        p, q = self.linear(gammas)
        return p * gammas + q


def _l1norm_candidates(xs, scores, w, d):
    """Candidates of ‖v‖²/‖v‖₁² on the pieces where BLEU and the sign pattern are fixed."""
    l1 = _L1Along(w, d)
    cuts = np.unique(np.concatenate([xs, l1.kinks]))
    lo, hi, mid = _interval_points(cuts)
    s = scores[np.searchsorted(xs, mid, side="right")]
    # on a piece ‖v‖₁ = p γ + q and ‖v‖² = Aγ² + Bγ + C: d/dγ (Q/L²) = 0 is linear in γ
    p, q = l1.linear(mid)
    A, B, C = dot(d, d), 2.0 * dot(w, d), dot(w, w)
    denom = 2 * A * q - B * p
    with np.errstate(divide="ignore", invalid="ignore"):
        stat = np.where(denom != 0, (2 * C * p - B * q) / denom, mid)
    kink_pts = l1.kinks  # on a breakpoint a tie in some 1-best: best_point gives no credit there
    kink_s = np.array([_score_at(xs, scores, float(x)) for x in kink_pts])
    # R is scale-invariant, so on an unbounded piece it may keep falling towards R(±d)
    # without a minimum: a point FAR_FACTOR times further out than every cut stands in
    # for the limit (w stays in the weights, so it still breaks ties between hypotheses)
    reach = FAR_FACTOR * max(1.0, float(np.max(np.abs(cuts)))) if len(cuts) else FAR_FACTOR
    pts = [mid, _inside(lo, hi, stat), _inside(lo, hi, np.where(np.isfinite(lo), lo, mid)),
           _inside(lo, hi, np.where(np.isfinite(hi), hi, mid)), kink_pts, np.array([-reach, reach])]
    return np.concatenate(pts), np.concatenate([s] * 4 + [kink_s, scores[[0, -1]]])


def _reg_along(gammas: np.ndarray, w: np.ndarray, d: np.ndarray, reg: Regularizer) -> np.ndarray:
    """λ·R(w + γd) for every γ in ``gammas``, in O(D + len(gammas)·log D)."""
    if not reg.active:
        return np.zeros(len(gammas))
    if reg.kind in ("l2", "l2-fixed"):
        A, B = _quadratic(w, d, reg)
        C = reg.value(w) / reg.strength
        return reg.strength * ((A * gammas + B) * gammas + C)
    if reg.kind == "l2-l1norm":
        l1 = _L1Along(w, d)(gammas)
        sq = (dot(d, d) * gammas + 2.0 * dot(w, d)) * gammas + dot(w, w)
        with np.errstate(divide="ignore", invalid="ignore"):
            return reg.strength * np.where(l1 > 0, sq / l1 ** 2, 0.0)
    # l0: coordinates moving or non-zero, less those that are exactly 0 at γ
    base = np.count_nonzero((w != 0) | (d != 0))
    nz = d != 0
    kinks = np.sort(-w[nz] / d[nz])
    at = np.searchsorted(kinks, gammas, side="right") - np.searchsorted(kinks, gammas, side="left")
    return reg.strength * (base - at).astype(float)
