"""The envelope line search equals brute force, with and without regularisers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from mtplug.corpus import NbestCorpus
from mtplug.optimizers.line_search import (
    EDGE_FRACTION,
    Regularizer,
    SparseColumns,
    best_point,
    best_sparse_unit_move,
    coordinate_line_searches,
    line_search,
    rescore_rows,
    slope_orders,
    support_line_search,
    sweep,
)
from tests.reference.line_search_reference import intersections, metric_at, probe_points, slope_order
from tests.reference.random_store import random_store


@st.composite
def small_corpus(draw, n_features=3, metric="bleu"):
    """Sentences of 1-8 hypotheses with small-integer features (exact intersections)."""
    S = draw(st.integers(1, 4))
    sizes = [draw(st.integers(1, 8)) for _ in range(S)]
    n = sum(sizes)
    sent_ids = np.repeat(np.arange(S), sizes)
    dense = np.array(draw(st.lists(st.lists(st.integers(-4, 4), min_size=n_features, max_size=n_features),
                                   min_size=n, max_size=n)), dtype=float)
    if metric == "linear":
        stats = np.array(draw(st.lists(st.integers(0, 100), min_size=n, max_size=n)), dtype=np.int32)[:, None]
        return NbestCorpus.from_arrays(sent_ids, dense, [f"F_{i}" for i in range(n_features)], stats,
                                       metric="linear", metric_norm=100.0 * S)
    rows = []
    for _ in range(n):
        length = draw(st.integers(1, 6))
        row = []
        for order in range(1, 5):
            total = max(0, length - order + 1)
            row += [draw(st.integers(0, total)), total]
        rows.append(row + [draw(st.integers(1, 7))])
    return NbestCorpus.from_arrays(sent_ids, dense, [f"F_{i}" for i in range(n_features)],
                                   np.array(rows, dtype=np.int32))


vec = st.lists(st.integers(-3, 3), min_size=3, max_size=3).map(lambda v: np.array(v, dtype=float))


@pytest.mark.parametrize("method", ["auto", "walk", "sort"])
@settings(max_examples=150, deadline=None)
@given(corpus=st.one_of(small_corpus(), small_corpus(metric="linear")), w=vec, d=vec)
def test_sweep_equals_brute_force(corpus, w, d, method):
    a, b = corpus.scores(w), corpus.scores(d)
    xs, scores, _ = sweep(corpus, a, b, method)
    assert np.all(np.diff(xs) > 0)
    cuts = intersections(corpus, a, b)
    assert set(xs.tolist()) <= set(cuts.tolist())
    for g in probe_points(cuts):
        k = int(np.searchsorted(xs, g, side="right"))
        assert scores[k] == pytest.approx(metric_at(corpus, a, b, g), abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(corpus=small_corpus(), w=vec, d=vec, gammas=st.lists(st.floats(-50, 50), min_size=1, max_size=10))
def test_envelope_is_the_argmax_at_random_points(corpus, w, d, gammas):
    a, b = corpus.scores(w), corpus.scores(d)
    xs, scores, _ = sweep(corpus, a, b)
    for g in gammas:
        assume(not np.any(np.isclose(xs, g)))
        k = int(np.searchsorted(xs, g, side="right"))
        assert scores[k] == pytest.approx(metric_at(corpus, a, b, g), abs=1e-12)


def _admissible(xs, g):
    """Is g at least EDGE_FRACTION of its interval's width (max(1, |edge|) next to an
    unbounded side) away from the breakpoints xs? Points closer to an open edge are
    not searched by design (the supremum there is not attained)."""
    k = int(np.searchsorted(xs, g, side="right"))
    lo = xs[k - 1] if k > 0 else -np.inf
    hi = xs[k] if k < len(xs) else np.inf
    if np.isfinite(lo) and np.isfinite(hi):
        step_lo = step_hi = EDGE_FRACTION * (hi - lo)
    else:
        step_lo = EDGE_FRACTION * max(1.0, abs(lo)) if np.isfinite(lo) else 0.0
        step_hi = EDGE_FRACTION * max(1.0, abs(hi)) if np.isfinite(hi) else 0.0
    return lo + step_lo <= g <= hi - step_hi


def _brute_force_best(corpus, w, d, reg, kinks=()):
    """Max of metric − λR over admissible probe/grid points and the exact kinks of R."""
    a, b = corpus.scores(w), corpus.scores(d)
    xs, _, _ = sweep(corpus, a, b)
    cuts = intersections(corpus, a, b)
    allcuts = np.unique(np.concatenate([cuts, np.asarray(kinks, float)]))
    grid = [probe_points(allcuts), np.linspace(allcuts[0] - 10, allcuts[-1] + 10, 101) if len(allcuts) else []]
    gs = [g for g in np.concatenate(grid) if _admissible(xs, g)]
    cut_set = set(cuts.tolist())
    gs += [float(k) for k in kinks if float(k) not in cut_set]
    gs = [g for g in gs if np.any(w + g * d != 0)]  # all-zero weights tie everything: not a point
    return max(metric_at(corpus, a, b, g) - reg.value(w + g * d) for g in gs)


@settings(max_examples=int(__import__("os").environ.get("MTPLUG_EXAMPLES", 60)), deadline=None)
@given(corpus=small_corpus(), w=vec, d=vec,
       kind=st.sampled_from(["none", "l2", "l2-fixed", "l2-l1norm", "l0"]),
       strength=st.sampled_from([0.0, 0.001, 0.01, 0.1]))
def test_best_point_is_exact(corpus, w, d, kind, strength):
    assume(np.any(d != 0))
    if kind == "l2-fixed":
        # the fixed coordinate pins the scale: it is non-zero and never moves
        d, w = d.copy(), w.copy()
        d[0] = 0.0
        w[0] = w[0] or 1.0
        assume(np.any(d != 0))
    reg = Regularizer(kind, strength, w0=w.copy() + 0.5, fixed=0)
    res = line_search(corpus, w, d, reg)
    a, b = corpus.scores(w), corpus.scores(d)
    # what it claims is what the brute force sees at the returned point
    new_w = res.apply(w, d)
    xs, _, _ = sweep(corpus, a, b)
    if res.gamma in xs:
        # only the start point can lie on a breakpoint (a tie in some 1-best); its score
        # is the worse side by convention, and staying means nothing was better
        assert res.gamma == 0 and res.gain == 0
        return
    assert res.score == pytest.approx(metric_at(corpus, a, b, res.gamma), abs=1e-12)
    assert res.objective == pytest.approx(res.score - reg.value(new_w), abs=1e-9)
    # and nothing the brute force finds is better
    nz = d != 0
    kinks = -w[nz] / d[nz]
    assert res.objective >= _brute_force_best(corpus, w, d, reg, kinks=kinks) - 1e-12
    assert res.gain >= 0


def test_walk_and_sort_agree_on_long_envelopes():
    # 200 lines tangent to a parabola: every line is on the envelope (walk falls back)
    rng = np.random.default_rng(0)
    t = np.sort(rng.uniform(-5, 5, 200))
    dense = np.stack([-(t ** 2), t], axis=1)  # a = -t², b = 2t·(1/2) after weights
    stats = rng.integers(0, 50, size=(200, 1)).astype(np.int32)
    corpus = NbestCorpus.from_arrays(np.zeros(200, int), dense, ["A_0", "B_0"], stats, metric="linear",
                                     metric_norm=50)
    a, b = corpus.scores(np.array([1.0, 0.0])), corpus.scores(np.array([0.0, 2.0]))
    order = slope_orders(corpus, np.array([1]))[0]   # the order of b = 2 * column 1
    results = [sweep(corpus, a, b, m) for m in ("auto", "walk", "sort")]
    results += [sweep(corpus, a, b, m, order=order) for m in ("auto", "walk")]
    for xs, sc, _ in results[1:]:
        np.testing.assert_array_equal(xs, results[0][0])
        np.testing.assert_array_equal(sc, results[0][1])
    assert results[0][2] == 200


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_sent=st.integers(1, 30), kind=st.sampled_from(["ties", "gaussian", "zeros"]),
       threads=st.sampled_from([1, 3]))
def test_slope_orders_equal_the_reference(seed, n_sent, kind, threads):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 40, n_sent)
    n = int(sizes.sum())
    if kind == "ties":
        dense = rng.integers(-2, 3, size=(n, 4)) * 0.5
    elif kind == "zeros":  # -0.0 and 0.0 are one slope
        dense = rng.choice([-0.0, 0.0, 1.0], size=(n, 4))
    else:
        dense = rng.normal(size=(n, 4))
    corpus = NbestCorpus.from_arrays(np.repeat(np.arange(n_sent), sizes), dense, [f"F{j}" for j in range(4)],
                                     np.ones((n, 1), np.int32), metric="linear", metric_norm=1.0)
    columns = np.array([3, 0, 2])
    got = slope_orders(corpus, columns, threads)
    for c, j in enumerate(columns):
        np.testing.assert_array_equal(got[c], slope_order(corpus.dense[:, j], corpus.sent_offsets))


def _unit_sweeps_agree(corpus, a, threads):
    """Along every dense column: the sweep with the slopes' order, the sweep without, and
    the one-pass coordinate sweeps give the same bits."""
    from mtplug._ext import _linesearch

    D = corpus.n_dense
    orders = slope_orders(corpus, np.arange(D), threads)
    spec = corpus.metric.kernel_spec()
    columns = np.arange(D - 1, -1, -1, dtype=np.int64)  # any subset, any order
    batches = [_linesearch.coordinate_sweeps(a, corpus.dense, columns, o, corpus.sent_offsets, corpus.stats, spec,
                                             _linesearch.ENVELOPE_METHODS[m], threads)
               for o in (orders, None) for m in ("auto", "walk")]
    for c, j in enumerate(columns):
        plain = sweep(corpus, a, corpus.dense[:, j], "auto", threads)
        for method in ("auto", "walk"):
            ordered = sweep(corpus, a, corpus.dense[:, j], method, threads, order=orders[j])
            for other in [ordered] + [batch[c] for batch in batches]:
                assert other[0].tobytes() == plain[0].tobytes() and other[1].tobytes() == plain[1].tobytes()
                assert other[2] == plain[2]


@settings(max_examples=150, deadline=None)
@given(corpus=st.one_of(small_corpus(), small_corpus(metric="linear")), w=vec, threads=st.sampled_from([1, 2]))
def test_coordinate_sweeps_with_slope_orders_equal_the_sweep(corpus, w, threads):
    # small-integer features: many equal slopes and intercepts, exact crossings
    _unit_sweeps_agree(corpus, corpus.scores(w), threads)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), gaussian=st.booleans(), threads=st.sampled_from([1, 2, 5]))
def test_coordinate_sweeps_with_slope_orders_on_bigger_sentences(seed, gaussian, threads):
    rng = np.random.default_rng(seed)
    corpus = random_store(seed, sizes=tuple(int(x) for x in rng.integers(1, 300, 12)), n_dense=4, gaussian=gaussian)
    _unit_sweeps_agree(corpus, corpus.scores(rng.normal(size=corpus.n_features)), threads)


def test_sweeps_of_no_hypotheses_and_bad_shapes():
    from mtplug._ext import _linesearch
    from mtplug.metrics.layer import bleu_metric

    spec = bleu_metric(1).kernel_spec()
    empty = (np.zeros(1, np.int64), np.zeros((0, 9), np.int32), spec)
    xs, scores, n = _linesearch.line_sweep(np.zeros(0), np.zeros(0), *empty)
    assert len(xs) == 0 and scores.tolist() == [0.0] and n == 0
    (xs2, scores2, n2), = _linesearch.coordinate_sweeps(np.zeros(0), np.zeros((0, 2)), np.array([1]), None, *empty)
    assert len(xs2) == 0 and scores2.tolist() == [0.0] and n2 == 0
    corpus = random_store(1)
    a = corpus.scores(np.ones(corpus.n_features))
    with pytest.raises(ValueError, match="order has 3 entries"):
        sweep(corpus, a, corpus.dense[:, 0], order=np.zeros(3, np.int32))
    with pytest.raises(ValueError, match="orders must be"):
        coordinate_line_searches(corpus, np.ones(corpus.n_features), np.array([0]), orders=np.zeros((1, 3), np.int32))
    with pytest.raises(ValueError, match="not one of the 3 dense columns"):
        coordinate_line_searches(corpus, np.ones(corpus.n_features), np.array([3]))


def test_coordinate_line_searches_equal_line_searches():
    corpus = random_store(5, sizes=tuple(range(1, 60)), gaussian=True)
    w = np.array([0.3, -1.0, 0.5] + [0.1] * (corpus.n_features - 3))
    reg = Regularizer("l2", 0.01, w0=np.zeros(corpus.n_features))
    orders = slope_orders(corpus, np.arange(corpus.n_dense))
    columns = np.array([2, 0])
    for res, j in zip(coordinate_line_searches(corpus, w, columns, reg, orders=orders), columns):
        d = np.zeros(corpus.n_features)
        d[j] = 1.0
        assert res == line_search(corpus, w, d, reg)


def test_keeps_the_current_point_when_nothing_is_better():
    corpus = NbestCorpus.from_arrays([0, 0], np.array([[1.0], [0.0]]), ["F_0"],
                                     np.array([[5], [1]], dtype=np.int32), metric="linear", metric_norm=5)
    res = line_search(corpus, np.array([1.0]), np.array([1.0]))
    assert res.gamma == 0.0 and res.gain == 0.0 and res.score == 1.0


def test_moves_to_the_better_interval_midpoint():
    # one sentence: h0 = 0 + 0γ (score 0), h1 = -1 + 1γ (score 1): h1 wins for γ > 1
    corpus = NbestCorpus.from_arrays([0, 0], np.array([[0.0, 0.0], [-1.0, 1.0]]), ["F_0", "G_0"],
                                     np.array([[0], [1]], dtype=np.int32), metric="linear", metric_norm=1)
    res = line_search(corpus, np.array([1.0, 0.0]), np.array([0.0, 1.0]))
    assert res.score == 1.0 and res.gain == 1.0
    assert res.gamma == 2.0  # x0 = 1, no neighbour: max(1, |1|) beyond it


def test_l2_vertex_inside_the_interval():
    # the better interval is γ > 1; l2 toward w0 = (1, 3) pulls γ to the vertex γ* = 3
    corpus = NbestCorpus.from_arrays([0, 0], np.array([[0.0, 0.0], [-1.0, 1.0]]), ["F_0", "G_0"],
                                     np.array([[0], [1]], dtype=np.int32), metric="linear", metric_norm=1)
    reg = Regularizer("l2", 0.01, w0=np.array([1.0, 3.0]))
    res = line_search(corpus, np.array([1.0, 0.0]), np.array([0.0, 1.0]), reg)
    assert res.gamma == pytest.approx(3.0)
    assert res.objective == pytest.approx(1.0)


def test_regularizer_validation():
    with pytest.raises(ValueError, match="must be one of"):
        Regularizer("l3", 1.0)
    with pytest.raises(ValueError, match=">= 0"):
        Regularizer("l0", -1.0)
    with pytest.raises(ValueError, match="start weights"):
        Regularizer("l2", 1.0)


def test_best_point_without_breakpoints():
    gamma, score, obj = best_point(np.array([]), np.array([0.4]), np.array([1.0]), np.array([1.0]))
    assert (gamma, score, obj) == (0.0, 0.4, 0.4)


# ---------------------------------------------------------------- directions with sparse support
def _sparse_store(seed: int, gaussian: bool):
    rng = np.random.default_rng(seed)
    return random_store(seed, sizes=tuple(int(x) for x in rng.integers(1, 40, int(rng.integers(1, 12)))),
                        n_sparse=8, gaussian=gaussian), rng


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), gaussian=st.booleans(), threads=st.sampled_from([1, 2, 3]))
def test_support_sweeps_equal_the_full_sweep(seed, gaussian, threads):
    """Along each sparse feature (and along a mix of them) the sweep over the touched
    sentences gives line_sweep's breakpoints, scores and segment count, bit for bit."""
    from mtplug._ext import _linesearch

    corpus, rng = _sparse_store(seed, gaussian)
    columns = SparseColumns.of(corpus)
    assume(columns is not None)     # a tiny store may draw no sparse entry at all: no columns to sweep
    w = rng.normal(size=corpus.n_features) if gaussian else rng.integers(-2, 3, corpus.n_features).astype(float)
    a = corpus.scores(w)
    features = rng.permutation(np.arange(corpus.n_dense, corpus.n_features))
    xs, sc, kptr, n_lines, best, at_zero = _linesearch.support_sweeps(
        a, columns.col_ptr, columns.col_hyp, columns.col_val, features, columns.hyp_sent, corpus.sent_offsets,
        corpus.stats, corpus.metric.kernel_spec(), _linesearch.ENVELOPE_METHODS["auto"], threads)
    for c, j in enumerate(features.tolist()):
        d = np.zeros(corpus.n_features)
        d[j] = 1.0
        full = sweep(corpus, a, corpus.scores(d))
        mine = xs[kptr[c]:kptr[c + 1]], sc[kptr[c] + c:kptr[c + 1] + c + 1]
        assert mine[0].tobytes() == full[0].tobytes() and mine[1].tobytes() == full[1].tobytes()
        assert n_lines[c] == full[2]
        assert best[c] == full[1].max()
        assert at_zero[c] == probe_score_at_zero(full[0], full[1])
    d = np.zeros(corpus.n_features)
    support = features[: max(1, len(features) // 2)]
    d[support] = rng.normal(size=len(support))
    assert support_line_search(corpus, columns, w, d, np.sort(support), intercepts=a) == line_search(corpus, w, d)


def probe_score_at_zero(xs, scores):
    """The score at gamma = 0, the lower side exactly on a breakpoint (written out plainly)."""
    for k, x in enumerate(xs):
        if x == 0.0:
            return min(scores[k], scores[k + 1])
        if x > 0.0:
            return scores[k]
    return scores[len(xs)]


@pytest.mark.parametrize("reg", [Regularizer(), Regularizer("l2", 0.01, w0=np.zeros(11)), Regularizer("l0", 0.002),
                                 Regularizer("l2-l1norm", 0.01), Regularizer("l2", 0.3, w0=np.ones(11)),
                                 Regularizer("l2-fixed", 0.05, fixed=4)], ids=lambda r: f"{r.kind}-{r.strength}")
@pytest.mark.parametrize("seed", range(12))
def test_best_sparse_unit_move_is_the_best_line_search(seed, reg):
    """The bounded search picks the move that line-searching every feature picks (the
    earliest of equal gains), with the same result."""
    corpus, rng = _sparse_store(seed, bool(seed % 2))
    columns = SparseColumns.of(corpus)
    w = rng.normal(size=corpus.n_features)
    features = np.arange(corpus.n_dense, corpus.n_features)
    pos, res, searched, _ = best_sparse_unit_move(corpus, columns, w, features, reg,
                                                  intercepts=corpus.scores(w), tolerance=1e-6)
    every = []
    for j in features:
        d = np.zeros(corpus.n_features)
        d[j] = 1.0
        every.append(line_search(corpus, w, d, reg))
    gains = [r.gain for r in every]
    expect = next((i for i, g in enumerate(gains) if g > 1e-6 and g == max(gains)), -1)
    assert searched == len(features)
    assert pos == expect
    assert res == (every[expect] if expect >= 0 else None)


def test_rescored_rows_equal_the_model_scores():
    corpus, rng = _sparse_store(3, True)
    w = rng.normal(size=corpus.n_features)
    scores = np.zeros(corpus.n_hypotheses)
    rows = np.arange(0, corpus.n_hypotheses, 2)
    rescore_rows(corpus, w, rows, scores)
    assert scores[rows].tobytes() == corpus.scores(w)[rows].tobytes()
    assert not scores[1::2].any()


@pytest.mark.parametrize("kind", ["l2", "l2-fixed", "l2-l1norm", "l0", "none"])
def test_regularizer_gradient_equals_finite_differences(kind):
    rng = np.random.default_rng(4)
    w = rng.normal(size=7)
    reg = Regularizer(kind, 0.3 if kind != "none" else 0.0, w0=rng.normal(size=7), fixed=2)
    h = 1e-6
    numeric = np.array([(reg.value(w + h * e) - reg.value(w - h * e)) / (2 * h) for e in np.eye(7)])
    if kind == "l0":
        numeric[:] = 0.0     # R counts non-zero weights: flat away from 0
    np.testing.assert_allclose(reg.gradient(w), numeric, atol=1e-6)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_sparse_columns_are_the_stable_sort_of_the_entries_by_feature(seed):
    """The counting sort gives what a stable sort by feature id gives (rows ascending in a
    column, a row's repeated id in row order); a dense id's column is empty."""
    rng = np.random.default_rng(seed)
    corpus = random_store(seed % 1000, sizes=tuple(int(x) for x in rng.integers(1, 12, rng.integers(1, 8))))
    if len(corpus.sparse_ids) == 0:
        assert SparseColumns.of(corpus) is None
        return
    columns = SparseColumns.of(corpus)
    order = np.argsort(corpus.sparse_ids, kind="stable")
    rows = np.repeat(np.arange(corpus.n_hypotheses), np.diff(corpus.sparse_indptr))
    assert np.array_equal(columns.col_hyp, rows[order])
    assert columns.col_val.tobytes() == corpus.sparse_values[order].tobytes()
    counts = np.bincount(corpus.sparse_ids, minlength=corpus.n_features)
    assert np.array_equal(columns.col_ptr, np.concatenate([[0], np.cumsum(counts)]))
