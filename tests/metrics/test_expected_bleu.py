"""Expected-BLEU objective and gradient: pyx/_expbleu.pyx and mtplug.metrics.expected_bleu.

- property tests: kernel == the slow oracle in tests/reference/expected_bleu_reference.py
  (different route: explicit Jacobian from pairwise covariances) on random corpora,
  mu in [0.01, 1000], rtol 1e-9 plus an absolute floor of 1e-12 x the size of the terms;
- central finite differences of the oracle's objective validate the calculus itself;
- LINEAR metric against closed forms (two hypotheses: a logistic in the score gap);
- degenerate cases: one-hypothesis sentences, zero expected matches, overflow, large mu;
- the Python/Cython boundary: "Buffer dtype mismatch", validation, enum mirroring.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from mtplug._ext import _bleu, _expbleu
from mtplug.corpus import NbestCorpus
from mtplug.errors import InputError
from mtplug.metrics.layer import linear_metric
from mtplug.metrics.expected_bleu import (
    EXPECTED_METRICS,
    METRIC_N_STATS,
    DegenerateObjectiveWarning,
    expected_bleu_gradient,
)
from tests.reference import expected_bleu_reference as ref

#: kernel vs oracle: relative tolerance, and the absolute floor as a fraction of the
#: oracle's term-size bound (see ref.gradient)
RTOL = 1e-9
ATOL_OF_BOUND = 1e-12
#: a floor for gradients in the subnormal range (large mu, p ~ e^-700), where doubles keep
#: an absolute precision of ~5e-324 only and a relative bound is meaningless
ATOL_SUBNORMAL = 1e-300


# ---------------------------------------------------------------------------------------
# Building corpora from arrays
# ---------------------------------------------------------------------------------------

def make_corpus(sizes, dense, stats, sparse_rows=None, n_sparse=0, ref_len_divisor=1):
    """An NbestCorpus from arrays: sentence s holds ``sizes[s]`` consecutive rows.

    dense float [n, D] (features ``Dense0 ..``), stats int [n, n_stats], sparse_rows: per
    row a list of ``(k, value)`` with k < n_sparse (features ``sparse0 ..``).
    """
    dense = np.asarray(dense, dtype=np.float64)
    stats = np.asarray(stats, dtype=np.int32)
    n = int(sum(sizes))
    assert dense.shape[0] == n and stats.shape[0] == n
    corpus = NbestCorpus(n_sentences=0, has_strings=False, ref_len_divisor=ref_len_divisor)
    corpus.stats = np.zeros((0, stats.shape[1]), dtype=np.int32)
    corpus.space.define_dense([f"Dense{j}" for j in range(dense.shape[1])])
    sparse_ids = [corpus.space.names.add(f"sparse{k}".encode()) for k in range(n_sparse)]
    indptr, ids, values = [0], [], []
    for h in range(n):
        row = sorted((sparse_ids[k], v) for k, v in (sparse_rows[h] if sparse_rows else []))
        ids += [i for i, _ in row]
        values += [v for _, v in row]
        indptr.append(len(ids))
    corpus.merge_arrays({
        "sent_ids": np.repeat(np.arange(len(sizes)), sizes).astype(np.int32),
        "dense": np.ascontiguousarray(dense),
        "sparse_indptr": np.array(indptr, dtype=np.int64),
        "sparse_ids": np.array(ids, dtype=np.int32),
        "sparse_values": np.array(values, dtype=np.float64),
        "stats": np.ascontiguousarray(stats),
    })
    assert corpus.n_hypotheses == n  # continuous random features: no duplicates dropped
    return corpus


def random_bleu_rows(rng, n, divisor=1, ref_scale=(0.5, 2.0)):
    """Valid BLEU rows with every match count >= 1 (so every expected m_n > 0)."""
    rows = np.zeros((n, 9), dtype=np.int32)
    for h in range(n):
        length = int(rng.integers(4, 31))
        for order in range(1, 5):
            total = length - order + 1
            rows[h, 2 * order - 1] = total
            rows[h, 2 * order - 2] = rng.integers(1, total + 1)
        rows[h, 8] = max(1, round(length * rng.uniform(*ref_scale) * divisor))
    return rows


@st.composite
def corpora(draw, metric="bleu", ref_scale=(0.5, 2.0)):
    """(corpus, weights): 1-5 sentences of 1-8 hypotheses, 1-6 dense and 0-3 sparse features."""
    n_sent = draw(st.integers(1, 5))
    sizes = draw(st.lists(st.integers(1, 8), min_size=n_sent, max_size=n_sent))
    n_dense = draw(st.integers(1, 6))
    n_sparse = draw(st.integers(0, 3))
    divisor = draw(st.sampled_from([1, 3])) if metric == "bleu" else 1
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = sum(sizes)
    # offsets per feature, as real features have (LM log-probs around -40, ...)
    dense = rng.normal(size=(n, n_dense)) + rng.normal(scale=5.0, size=n_dense)
    sparse_rows = [[(k, float(rng.choice([1.0, 2.0, -1.0, rng.normal()])))
                    for k in range(n_sparse) if rng.random() < 0.5] for _ in range(n)]
    if metric == "bleu":
        stats = random_bleu_rows(rng, n, divisor, ref_scale)
    else:
        stats = rng.integers(-1000, 1001, size=(n, 1)).astype(np.int32)
    corpus = make_corpus(sizes, dense, stats, sparse_rows, n_sparse, divisor)
    weights = rng.normal(size=corpus.n_features)
    return corpus, weights


def call_kernel(corpus, weights, mu, metric="bleu", norm=1.0):
    """The raw kernel: (J, status, index, gradient, totals)."""
    grad = np.empty(corpus.n_features)
    totals = np.empty(METRIC_N_STATS[metric])
    value, status, index = _expbleu.expected_gradient(
        corpus.scores(weights), mu, corpus.sent_offsets, corpus.stats, corpus.dense,
        corpus.sparse_indptr, corpus.sparse_ids, corpus.sparse_values,
        float(corpus.ref_len_divisor), EXPECTED_METRICS[metric], norm, grad, totals)
    return value, status, index, grad, totals


def at_brevity_kink(totals, divisor, rel=1e-12):
    """Whether the expected hypothesis length c and reference length r are equal within
    the rounding of T. There the brevity penalty's slope jumps (r/c² for c < r, 0 above),
    and which side the kernel's exactly summed T and the oracle's plainly summed T fall on
    is a matter of ulps (e.g. a runner-up with p ~ 1e-16 beside a best hypothesis whose c
    equals r)."""
    c, r = float(totals[1]), float(totals[8]) / divisor
    return abs(c - r) <= rel * max(c, r)


def assert_matches_reference(corpus, weights, mu, metric="bleu", norm=1.0):
    want_value, want_grad, want_totals, bound = ref.gradient(corpus, weights, mu, metric, norm)
    value, status, _, grad, totals = call_kernel(corpus, weights, mu, metric, norm)
    assert status == _expbleu.STATUS_OK
    np.testing.assert_allclose(totals, want_totals, rtol=RTOL)
    assert value == pytest.approx(want_value, rel=RTOL, abs=1e-12)
    if metric == "bleu" and at_brevity_kink(want_totals, corpus.ref_len_divisor):
        return     # the slope jumps at c = r: within rounding of T either side is right
    err = np.abs(grad - want_grad)
    allowed = RTOL * np.abs(want_grad) + ATOL_OF_BOUND * bound + ATOL_SUBNORMAL
    assert np.all(err <= allowed), (grad, want_grad, bound)
    api_value, api_grad = expected_bleu_gradient(corpus, weights, mu, metric=metric,
                                                 norm=None if metric == "bleu" else norm)
    assert api_value == value
    np.testing.assert_array_equal(api_grad, grad)


# ---------------------------------------------------------------------------------------
# (1) kernel == oracle
# ---------------------------------------------------------------------------------------

@settings(max_examples=300, deadline=None)
@given(corpora(), st.floats(0.01, 1000.0))
def test_bleu_kernel_matches_reference(corpus_weights, mu):
    corpus, weights = corpus_weights
    assert_matches_reference(corpus, weights, mu)


@settings(max_examples=150, deadline=None)
@given(corpora(metric="linear"), st.floats(0.01, 1000.0), st.floats(0.5, 1e4))
def test_linear_kernel_matches_reference(corpus_weights, mu, norm):
    corpus, weights = corpus_weights
    assert_matches_reference(corpus, weights, mu, "linear", norm)


@pytest.mark.parametrize("ref_scale", [(0.2, 0.5), (2.0, 4.0)], ids=["long-hyps", "short-hyps"])
@pytest.mark.parametrize("mu", [0.3, 30.0, 1000.0])
def test_both_brevity_regimes_match_reference(ref_scale, mu):
    # every row has ref_len < hyp_len (c > r, BP slope 0) or > (c < r, BP slope active)
    rng = np.random.default_rng(7)
    sizes = [3, 5, 2, 6]
    n = sum(sizes)
    corpus = make_corpus(sizes, rng.normal(size=(n, 4)), random_bleu_rows(rng, n, 1, ref_scale))
    T = ref.expected_totals(corpus, np.ones(4), mu)
    assert (T[1] > T[8]) == (ref_scale[1] < 1.0)
    assert_matches_reference(corpus, np.ones(4), mu)


# ---------------------------------------------------------------------------------------
# (2) finite differences: the calculus, not only the code
# ---------------------------------------------------------------------------------------

def central_differences(corpus, weights, mu, metric="bleu", norm=1.0, step=1e-6):
    out = np.zeros(len(weights))
    for j in range(len(weights)):
        up, down = weights.copy(), weights.copy()
        up[j] += step
        down[j] -= step
        out[j] = (ref.objective(corpus, up, mu, metric, norm)
                  - ref.objective(corpus, down, mu, metric, norm)) / (2 * step)
    return out


@settings(max_examples=100, deadline=None)
@given(corpora(), st.floats(0.05, 3.0))
def test_gradient_matches_finite_differences(corpus_weights, mu):
    corpus, weights = corpus_weights
    T = ref.expected_totals(corpus, weights, mu)
    c, r = T[1], T[8] / corpus.ref_len_divisor
    assume(abs(c - r) > 1e-3 * r)  # away from the brevity kink, where J is not differentiable
    fd = central_differences(corpus, weights, mu)
    _, grad = expected_bleu_gradient(corpus, weights, mu)
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(ref.gradient(corpus, weights, mu)[1], fd, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("ref_scale", [(0.2, 0.5), (2.0, 4.0)], ids=["long-hyps", "short-hyps"])
def test_finite_differences_in_both_brevity_regimes(ref_scale):
    rng = np.random.default_rng(11)
    sizes = [4, 7, 3]
    n = sum(sizes)
    corpus = make_corpus(sizes, rng.normal(size=(n, 5)), random_bleu_rows(rng, n, 3, ref_scale),
                         [[(0, 1.0)] if h % 2 else [] for h in range(n)], 1, ref_len_divisor=3)
    weights = rng.normal(size=corpus.n_features)
    _, grad = expected_bleu_gradient(corpus, weights, 0.7)
    np.testing.assert_allclose(grad, central_differences(corpus, weights, 0.7), rtol=1e-6, atol=1e-9)
    assert np.all(grad != 0.0)


@settings(max_examples=50, deadline=None)
@given(corpora(metric="linear"), st.floats(0.05, 3.0))
def test_linear_gradient_matches_finite_differences(corpus_weights, mu):
    corpus, weights = corpus_weights
    _, grad = expected_bleu_gradient(corpus, weights, mu, metric="linear", norm=100.0)
    fd = central_differences(corpus, weights, mu, "linear", 100.0)
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-7)


# ---------------------------------------------------------------------------------------
# (3) LINEAR metric: closed forms
# ---------------------------------------------------------------------------------------

def two_hypothesis_closed_form(g, f, scores, mu, norm):
    """Sentences of two hypotheses: p_1 = sigmoid(mu (x_1 - x_2)), and
    d/dw sum_s (p_1 g_1 + p_2 g_2) / norm = mu / norm sum_s p_1 p_2 (g_1 - g_2) (f_1 - f_2)."""
    grad = np.zeros(f.shape[1])
    value = 0.0
    for s in range(len(g) // 2):
        a, b = 2 * s, 2 * s + 1
        gap = mu * (scores[a] - scores[b])
        # p_1 p_2 = e^{-|gap|} / (1 + e^{-|gap|})^2: no overflow, accurate for any gap
        small = math.exp(-abs(gap))
        p1p2 = small / (1.0 + small) ** 2
        p1 = 0.5 * (1.0 + math.tanh(gap / 2.0))
        value += (p1 * g[a] + (1.0 - p1) * g[b]) / norm
        grad += mu / norm * p1p2 * (g[a] - g[b]) * (f[a] - f[b])
    return value, grad


@pytest.mark.parametrize("mu", [0.01, 1.0, 50.0, 1000.0])
def test_linear_two_hypotheses_closed_form(mu):
    rng = np.random.default_rng(3)
    S = 6
    f = rng.normal(size=(2 * S, 3)) * [1.0, 10.0, 0.1] + [0.0, -40.0, 3.0]
    g = rng.integers(-500, 500, size=(2 * S, 1))
    corpus = make_corpus([2] * S, f, g)
    weights = rng.normal(size=3) * 0.05
    value, grad = expected_bleu_gradient(corpus, weights, mu, metric="linear", norm=250.0)
    want_value, want_grad = two_hypothesis_closed_form(g[:, 0].astype(float), f, corpus.scores(weights),
                                                       mu, 250.0)
    assert value == pytest.approx(want_value, rel=1e-12)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-10)


def test_linear_gradient_is_covariance():
    # many hypotheses: mu / norm sum_s (E_s[g f] - E_s[g] E_s[f]) at a small mu (no cancellation)
    rng = np.random.default_rng(5)
    sizes = [9, 4, 12]
    n = sum(sizes)
    f = rng.normal(size=(n, 2))
    g = rng.integers(0, 100, size=(n, 1))
    corpus = make_corpus(sizes, f, g)
    w = np.array([0.4, -0.2])
    mu, norm = 0.8, 7.0
    x = corpus.scores(w)
    want = np.zeros(2)
    for s in range(3):
        sl = slice(corpus.sent_offsets[s], corpus.sent_offsets[s + 1])
        p = np.exp(mu * x[sl]) / np.exp(mu * x[sl]).sum()
        gs = g[sl, 0].astype(float)
        want += mu / norm * ((p * gs) @ f[sl] - (p @ gs) * (p @ f[sl]))
    np.testing.assert_allclose(expected_bleu_gradient(corpus, w, mu, metric="linear", norm=norm)[1],
                               want, rtol=1e-12)


def test_large_mu_gradient_is_accurate_when_tiny():
    # mu = 1000, score gap 0.1: p_2 = e^-100 ~ 4e-44. Centring on the argmax keeps the tiny
    # gradient accurate to rtol 1e-12; an uncentred E[g f] - E[g] E[f] would be ~1e-16 noise.
    # (the argmax is the second row of each sentence: centring on the first row is not enough)
    f = np.array([[0.9, 31.5], [1.0, 30.0], [2.0, -3.0], [2.5, -3.0]])
    g = np.array([[300], [700], [10], [20]])
    corpus = make_corpus([2, 2], f, g)
    w = np.array([1.0, 0.0])
    _, grad = expected_bleu_gradient(corpus, w, 1000.0, metric="linear", norm=1.0)
    _, want = two_hypothesis_closed_form(g[:, 0].astype(float), f, corpus.scores(w), 1000.0, 1.0)
    assert 0 < abs(grad[1]) < 1e-30
    np.testing.assert_allclose(grad, want, rtol=1e-12)


# ---------------------------------------------------------------------------------------
# (4) the Python/Cython boundary
# ---------------------------------------------------------------------------------------

def kernel_args(corpus, weights):
    return dict(scores=corpus.scores(weights), mu=1.0, sent_offsets=corpus.sent_offsets,
                stats=corpus.stats, dense=corpus.dense, sp_indptr=corpus.sparse_indptr,
                sp_ids=corpus.sparse_ids, sp_values=corpus.sparse_values, ref_divisor=1.0,
                metric=EXPECTED_METRICS["bleu"], norm=1.0,
                gradient=np.empty(corpus.n_features), totals=np.empty(9))


@pytest.mark.parametrize("name, wrong", [
    ("scores", np.float32), ("sent_offsets", np.int32), ("stats", np.int64),
    ("dense", np.float32), ("sp_indptr", np.int32), ("sp_ids", np.int64),
    ("sp_values", np.float32), ("gradient", np.float32), ("totals", np.float32),
])
def test_buffer_dtype_mismatch(name, wrong):
    rng = np.random.default_rng(0)
    corpus = make_corpus([3, 2], rng.normal(size=(5, 2)), random_bleu_rows(rng, 5),
                         [[(0, 1.0)]] * 5, 1)
    args = kernel_args(corpus, np.ones(3))
    args[name] = args[name].astype(wrong)
    with pytest.raises(ValueError, match="Buffer dtype mismatch"):
        _expbleu.expected_gradient(*args.values())


@pytest.mark.parametrize("name, bad, message", [
    ("stats", np.zeros((5, 1), np.int32), "needs 9 stats columns"),
    ("metric", 7, "unknown metric code"),
    ("totals", np.empty(8), "totals"),
    ("gradient", np.empty(1), "gradient"),
    ("sp_indptr", np.zeros(5, np.int64), "number of hypotheses"),
    ("sent_offsets", np.array([0, 3, 4], np.int64), "sent_offsets"),
])
def test_kernel_checks_shapes_once(name, bad, message):
    rng = np.random.default_rng(0)
    corpus = make_corpus([3, 2], rng.normal(size=(5, 2)), random_bleu_rows(rng, 5))
    args = kernel_args(corpus, np.ones(2))
    args[name] = bad
    with pytest.raises(ValueError, match=message):
        _expbleu.expected_gradient(*args.values())


def test_metric_codes_mirror_the_kernel():
    assert EXPECTED_METRICS == {"bleu": _expbleu.METRIC_BLEU, "linear": _expbleu.METRIC_LINEAR}
    assert {EXPECTED_METRICS[m]: k for m, k in METRIC_N_STATS.items()} == _expbleu.METRIC_N_STATS


@pytest.fixture
def small():
    rng = np.random.default_rng(2)
    return make_corpus([3, 4], rng.normal(size=(7, 2)), random_bleu_rows(rng, 7))


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(mu=0.0), ValueError, "mu must be positive"),
    (dict(mu=-1.0), ValueError, "mu must be positive"),
    (dict(mu=math.nan), ValueError, "mu must be positive"),
    (dict(mu=math.inf), ValueError, "mu must be positive"),
    (dict(mu=True), TypeError, "mu must be a positive number"),
    (dict(mu="1"), TypeError, "mu must be a positive number"),
    (dict(metric="ter"), ValueError, "unknown metric"),
    (dict(norm=2.0), ValueError, "norm applies to metric='linear' only"),
    (dict(metric="linear"), ValueError, "needs norm"),
    (dict(metric="linear", norm=0.0), ValueError, "norm must be positive"),
    (dict(metric="linear", norm=5.0), ValueError, r"needs stats of shape \[n, 1\]"),
    (dict(weights=np.ones(3)), ValueError, "weights must have shape"),
    (dict(weights=np.array([1.0, math.nan])), ValueError, "weights must be finite"),
])
def test_api_validation(small, kwargs, error, message):
    args = dict(weights=np.ones(2), mu=1.0)
    args.update(kwargs)
    with pytest.raises(error, match=message):
        expected_bleu_gradient(small, **args)


def test_api_rejects_invalid_bleu_rows(small):
    small.stats = small.stats.copy()
    small.stats[2, 4] = small.stats[2, 5] + 1  # m_3 > t_3
    with pytest.raises(ValueError, match="more matches than n-grams"):
        expected_bleu_gradient(small, np.ones(2), 1.0)


def test_api_rejects_a_bad_ref_len_divisor(small):
    small.ref_len_divisor = 0
    with pytest.raises(ValueError, match="ref_len_divisor must be positive"):
        expected_bleu_gradient(small, np.ones(2), 1.0)


def test_api_rejects_non_finite_features(small):
    small.dense = small.dense.copy()
    small.dense[4, 1] = math.inf
    with pytest.raises(ValueError, match=r"hypothesis 4 \(sentence 1\)"):
        expected_bleu_gradient(small, np.ones(2), 1.0)


def test_empty_sentence_is_an_input_error(small):
    small.sent_offsets = np.array([0, 3, 3, 7], dtype=np.int64)
    with pytest.raises(InputError, match="sentence 1 has no hypotheses"):
        expected_bleu_gradient(small, np.ones(2), 1.0)


def test_metric_and_norm_default_to_the_corpus_attributes():
    rng = np.random.default_rng(4)
    corpus = make_corpus([3, 3], rng.normal(size=(6, 2)), rng.integers(0, 9, size=(6, 1)))
    want = expected_bleu_gradient(corpus, np.ones(2), 2.0, metric="linear", norm=4.0)
    corpus.metric = linear_metric(4.0)
    got = expected_bleu_gradient(corpus, np.ones(2), 2.0)
    assert got[0] == want[0]
    np.testing.assert_array_equal(got[1], want[1])


def test_deterministic(small):
    first = expected_bleu_gradient(small, np.array([0.3, -1.2]), 5.0)
    for _ in range(3):
        again = expected_bleu_gradient(small, np.array([0.3, -1.2]), 5.0)
        assert again[0] == first[0]
        np.testing.assert_array_equal(again[1], first[1])


# ---------------------------------------------------------------------------------------
# (5) degenerate cases
# ---------------------------------------------------------------------------------------

def test_single_hypothesis_sentence_contributes_nothing():
    rng = np.random.default_rng(8)
    f = rng.normal(size=(8, 3))
    g = rng.integers(0, 50, size=(8, 1))
    base = make_corpus([4, 3], f[:7], g[:7], [[(0, 1.0)]] * 7, 1)
    w = rng.normal(size=4)
    with_single = make_corpus([4, 3, 1], f, g, [[(0, 1.0)]] * 7 + [[(0, 5.0)]], 1)
    # LINEAR: u does not depend on T, so the gradient is bit for bit the same
    v0, g0 = expected_bleu_gradient(base, w, 3.0, metric="linear", norm=10.0)
    v1, g1 = expected_bleu_gradient(with_single, w, 3.0, metric="linear", norm=10.0)
    np.testing.assert_array_equal(g1, g0)
    assert v1 == pytest.approx(v0 + g[7, 0] / 10.0, rel=1e-14)


def test_single_hypothesis_sentence_features_do_not_matter():
    # BLEU: the single hypothesis's stats enter T (hence u), its features never the gradient
    rng = np.random.default_rng(9)
    stats = random_bleu_rows(rng, 6)
    f = rng.normal(size=(6, 3))
    w = rng.normal(size=4)
    a = make_corpus([5, 1], f, stats, [[]] * 5 + [[(0, 1.0)]], 1)
    f2 = f.copy()
    f2[5] = [100.0, -3.0, 7.0]
    b = make_corpus([5, 1], f2, stats, [[]] * 5 + [[(0, -42.0)]], 1)
    ga, gb = expected_bleu_gradient(a, w, 2.0)[1], expected_bleu_gradient(b, w, 2.0)[1]
    np.testing.assert_array_equal(ga, gb)
    assert ga[3] == 0.0  # the sparse feature lives only on the single hypothesis
    assert_matches_reference(a, w, 2.0)


def test_only_single_hypothesis_sentences_give_zero_gradient():
    rng = np.random.default_rng(10)
    corpus = make_corpus([1, 1, 1], rng.normal(size=(3, 2)), random_bleu_rows(rng, 3))
    value, grad = expected_bleu_gradient(corpus, np.ones(2), 50.0)
    np.testing.assert_array_equal(grad, np.zeros(2))
    totals = corpus.stats.sum(axis=0, dtype=np.int64)
    assert value == pytest.approx(_bleu.corpus_log_bleu(totals, 1.0), rel=1e-14)


def test_large_mu_value_is_one_best_log_bleu():
    # mu = 1e6 and score gaps >= 1e-3: every non-best p underflows to 0, T = 1-best stats
    rng = np.random.default_rng(12)
    sizes = [5, 8, 3, 6]
    n = sum(sizes)
    corpus = make_corpus(sizes, rng.normal(size=(n, 3)), random_bleu_rows(rng, n))
    w = np.array([1.0, 0.5, -2.0])
    best = corpus.one_best(w)
    value, _ = expected_bleu_gradient(corpus, w, 1e6)
    assert value == pytest.approx(_bleu.corpus_log_bleu(corpus.corpus_stats(best), 1.0), rel=1e-13)
    assert math.log(corpus.bleu_of(w).score) == pytest.approx(value, rel=1e-13)


def test_zero_expected_matches_warn_and_give_zero_gradient():
    rows = np.array([[3, 5, 1, 4, 0, 3, 0, 2, 6], [4, 4, 2, 3, 1, 2, 0, 1, 4]], dtype=np.int32)
    corpus = make_corpus([2], [[0.0], [1.0]], rows)
    value, status, index, grad, totals = call_kernel(corpus, np.ones(1), 1.0)
    assert (value, status, index) == (-math.inf, _expbleu.STATUS_ZERO_MATCHES, 4)
    np.testing.assert_array_equal(grad, np.zeros(1))
    assert totals[6] == 0.0
    with pytest.warns(DegenerateObjectiveWarning, match="expected 4-gram match count is 0"):
        value, grad = expected_bleu_gradient(corpus, np.ones(1), 1.0)
    assert value == -math.inf
    np.testing.assert_array_equal(grad, np.zeros(1))
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateObjectiveWarning)
        with pytest.raises(DegenerateObjectiveWarning):
            expected_bleu_gradient(corpus, np.ones(1), 1.0)


def test_overflowing_mu_times_score_raises():
    rng = np.random.default_rng(13)
    corpus = make_corpus([2, 2], [[1.0], [2.0], [1e10], [3.0]], random_bleu_rows(rng, 4))
    value, status, index, grad, _ = call_kernel(corpus, np.ones(1), 1e300)
    assert (status, index) == (_expbleu.STATUS_OVERFLOW, 1)
    assert math.isnan(value)
    with pytest.raises(FloatingPointError, match="overflows in sentence 1"):
        expected_bleu_gradient(corpus, np.ones(1), 1e300)


def test_large_mu_does_not_overflow():
    rng = np.random.default_rng(14)
    corpus = make_corpus([3, 3], rng.normal(size=(6, 2)) * 50.0, random_bleu_rows(rng, 6))
    value, grad = expected_bleu_gradient(corpus, np.ones(2), 1000.0)
    assert math.isfinite(value) and np.all(np.isfinite(grad))
    assert_matches_reference(corpus, np.ones(2), 1000.0)


def test_empty_corpus():
    corpus = NbestCorpus(n_sentences=0, has_strings=False)
    corpus.stats = np.zeros((0, 1), dtype=np.int32)
    corpus.space.define_dense(["Dense0", "Dense1"])
    value, grad = expected_bleu_gradient(corpus, np.ones(2), 1.0, metric="linear", norm=1.0)
    assert value == 0.0
    np.testing.assert_array_equal(grad, np.zeros(2))
    corpus.stats = np.zeros((0, 9), dtype=np.int32)
    with pytest.warns(DegenerateObjectiveWarning, match="1-gram"):
        assert expected_bleu_gradient(corpus, np.ones(2), 1.0)[0] == -math.inf
