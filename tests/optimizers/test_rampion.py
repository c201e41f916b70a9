"""RAMPION: the compiled SSD epoch against the NumPy oracle, the whole algorithm against the
oracle (every loss, also on random pools), determinism, the CCCP objective, the smooth
losses' gradients against finite differences, synthetic recovery and the Moses toy set."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplug.corpus import NbestCorpus
from mtplug.metrics.sentence import hypothesis_scores
from mtplug.optimizers import rampion
from mtplug.optimizers.base import start_at_unit_margin, start_margin
from mtplug.optimizers.rampion import LOSSES, OTHER_LOSSES, Rampion, loss_sides, ramp_objective
from mtplug.synthetic import cosine, make_synthetic
from tests.reference import rampion_reference as ref
from tests.reference.expected_bleu_reference import feature_matrix
from tests.reference.random_store import random_store

#: shared/data/moses-toy/README.md: corpus BLEU of the start weights (run1.init.opt)
TOY_START_BLEU = 0.265757


def sparse_corpus(seed: int, sizes=(5, 1, 8, 3, 6), n_dense=3, n_sparse=6) -> NbestCorpus:
    return random_store(seed, sizes, n_dense, n_sparse, gaussian=True)

# ---------------------------------------------------------------- the SSD epoch kernel

@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("loss", LOSSES)
def test_ssd_epoch_equals_reference(seed, loss):
    corpus = sparse_corpus(seed)
    rng = np.random.default_rng(100 + seed)
    F = corpus.n_features
    theta0 = rng.normal(size=F)
    gains = hypothesis_scores(corpus, "bleu+1")
    sides = loss_sides(loss, 2.0)
    offsets = corpus.sent_offsets
    q = rampion.impute_hope(corpus.scores(theta0), gains, offsets, sides)
    eta, c = 0.3, 1.5
    u = rng.normal(size=F) * 0.5               # start the epoch away from θ0
    X = feature_matrix(corpus)
    expected = theta0 + u
    for _ in range(3):
        expected = ref.ssd_epoch(X, offsets, gains, q, sides.fear, sides.fear_soft, eta, c, expected, theta0,
                                 risk_alpha=sides.risk)
    work = np.empty(int(np.diff(offsets).max()))
    for _ in range(3):
        rampion.ssd_epoch(corpus, corpus.scores(theta0), gains, q, sides, eta, c, u, work)
    np.testing.assert_allclose(theta0 + u, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("loss", LOSSES)
def test_sides_and_hope_are_the_references(loss):
    corpus = sparse_corpus(5)
    sc = corpus.scores(np.random.default_rng(5).normal(size=corpus.n_features))
    gains = hypothesis_scores(corpus, "bleu+1")
    sides = loss_sides(loss, 3.0)
    hope, fear, hope_soft, fear_soft, on_oracle, risk = ref.sides(loss, 3.0)
    assert (sides.fear, sides.hope_soft, sides.fear_soft, sides.hope_oracle, sides.risk) == (
        fear, hope_soft, fear_soft, on_oracle, 3.0 if risk else 0.0)
    q = rampion.impute_hope(sc, gains, corpus.sent_offsets, sides)
    o = corpus.sent_offsets
    for s in range(corpus.n_sentences):
        want = ref.hope_distribution(list(sc[o[s]:o[s + 1]]), list(gains[o[s]:o[s + 1]]), hope, hope_soft, on_oracle)
        np.testing.assert_allclose(q[o[s]:o[s + 1]], want, rtol=1e-12, atol=1e-15)


def test_ssd_epoch_wrong_dtype_is_rejected():
    corpus = sparse_corpus(0)
    n, F = corpus.n_hypotheses, corpus.n_features
    from mtplug._ext import _rampion
    with pytest.raises(ValueError, match="Buffer dtype mismatch"):
        _rampion.ssd_epoch(corpus.dense, corpus.sparse_indptr, corpus.sparse_ids, corpus.sparse_values,
                           corpus.sent_offsets.astype(np.int32), np.zeros(n), np.zeros(n), np.zeros(n),
                           1.0, -1.0, False, 0.1, 0.9, np.zeros(F), np.zeros(n))


def test_non_finite_scores_raise():
    corpus = sparse_corpus(1)
    start = np.ones(corpus.n_features)
    with pytest.raises(FloatingPointError, match="sentence"):
        Rampion(eta=1e308, c=0.0).optimize(corpus, start, 0)


def test_a_non_finite_sentence_metric_is_named_not_taken_for_an_overflow(monkeypatch):
    corpus = sparse_corpus(1)
    nan_at_2 = lambda c, variant, threads=1: np.where(np.arange(c.n_hypotheses) == 2, np.nan, 0.5)  # noqa: E731
    monkeypatch.setattr(rampion, "hypothesis_scores", nan_at_2)
    with pytest.raises(ValueError, match=r"sentence metric of hypothesis 2 is not finite \(nan\)"):
        Rampion().optimize(corpus, np.ones(corpus.n_features), 0)


# ---------------------------------------------------------------- the whole algorithm

@pytest.mark.parametrize("loss", LOSSES)
def test_optimize_equals_reference(loss):
    corpus = sparse_corpus(7, sizes=(4, 9, 2, 7, 1, 5))
    start = np.random.default_rng(3).normal(size=corpus.n_features)
    kw = dict(cccp_iterations=3, epochs=2, eta=0.05, c=2.0, alpha=3.0)
    res = Rampion(loss=loss, start_scale="unit", **kw).optimize(corpus, start, seed=0)
    gains = hypothesis_scores(corpus, "bleu+1")
    # start_scale unit: the algorithm starts from the start at unit margin (tests/optimizers/test_start_scale.py)
    start = start_at_unit_margin(start, start_margin(corpus, start))
    theta, objectives = ref.rampion(corpus, start, gains, loss, **kw)
    np.testing.assert_allclose(res.weights, theta, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(res.info["objective"], objectives, rtol=1e-10, atol=1e-10)
    assert len(res.info["objective"]) == 3 and res.info["seconds"] >= 0


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), sizes=st.lists(st.integers(1, 7), min_size=1, max_size=6),
       loss=st.sampled_from(LOSSES), alpha=st.sampled_from([0.5, 3.0, 10.0]), c=st.sampled_from([0.0, 0.7, 3.0]))
def test_optimize_equals_reference_on_random_pools(seed, sizes, loss, alpha, c):
    corpus = random_store(seed, tuple(sizes), 3, 5, gaussian=True)
    start = np.random.default_rng(seed).normal(size=corpus.n_features)
    kw = dict(cccp_iterations=2, epochs=2, eta=0.05, c=c, alpha=alpha)
    res = Rampion(loss=loss, start_scale="unit", **kw).optimize(corpus, start, seed=0)
    start = start_at_unit_margin(start, start_margin(corpus, start))
    theta, objectives = ref.rampion(corpus, start, hypothesis_scores(corpus, "bleu+1"), loss, **kw)
    scale = max(1.0, float(np.abs(theta).max()))
    np.testing.assert_allclose(res.weights, theta, rtol=1e-12, atol=1e-12 * scale)
    np.testing.assert_allclose(res.info["objective"], objectives, rtol=1e-10, atol=1e-10)


def test_deterministic_and_seed_free():
    corpus = sparse_corpus(4)
    start = np.ones(corpus.n_features)
    a = Rampion(eta=0.01).optimize(corpus, start, seed=1)
    b = Rampion(eta=0.01).optimize(corpus, start, seed=99)
    np.testing.assert_array_equal(a.weights, b.weights)
    assert a.info["objective"] == b.info["objective"] and b.seed == 99


@pytest.mark.parametrize("kw", [dict(cccp_iterations=0), dict(epochs=0), dict(eta=0.0), dict(alpha=-1.0),
                                dict(c=-1.0), dict(loss="ramp4"), dict(sentence_metric="nope")])
def test_bad_options_are_rejected(kw):
    with pytest.raises(ValueError):
        Rampion(**kw)


def test_objective_of_the_optimizer_is_the_references():
    corpus = sparse_corpus(2)
    rng = np.random.default_rng(0)
    w, w0 = rng.normal(size=corpus.n_features), rng.normal(size=corpus.n_features)
    g = hypothesis_scores(corpus, "bleu+1")
    for loss in LOSSES:
        got = ramp_objective(corpus.scores(w), g, corpus.sent_offsets, loss, 4.0, 0.5, w, w0)
        want = ref.objective(feature_matrix(corpus) @ w, g, corpus.sent_offsets, loss, 4.0, 0.5, w, w0)
        assert got == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("loss", ["log", "soft-oracle", "bayes-risk"])
def test_smooth_loss_gradient_is_finite_differences(loss, seed):
    """One compiled step from θ on a one-sentence pool with C = 0 is θ − η·∇L(θ) (the
    CCCP hope imputed at θ is the exact gradient of the concave part where it is smooth)."""
    corpus = random_store(seed, (6,), 3, 4, gaussian=True)
    gains = hypothesis_scores(corpus, "bleu+1")
    offsets = corpus.sent_offsets
    alpha, eta = 4.0, 1e-3
    rng = np.random.default_rng(seed)
    theta0, theta = rng.normal(size=corpus.n_features), rng.normal(size=corpus.n_features)
    sides = loss_sides(loss, alpha)
    q = rampion.impute_hope(corpus.scores(theta), gains, offsets, sides)
    u = theta - theta0
    rampion.ssd_epoch(corpus, corpus.scores(theta0), gains, q, sides, eta, 0.0, u, np.empty(6))
    grad = -(theta0 + u - theta) / eta

    def L(w):
        return ramp_objective(corpus.scores(w), gains, offsets, loss, alpha, 0.0, w, w)

    h = 1e-6
    fd = np.array([(L(theta + h * e) - L(theta - h * e)) / (2 * h) for e in np.eye(corpus.n_features)])
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------------- behaviour

# Synthetic features are U[0, 500] in 100 dimensions, so a step η·(f+ − f−) of the default
# η = 1e-4 moves model-score differences by ~10^3, which swamps the cost α·(1 − g) <= 10
# after one sentence. η = 1e-7 keeps a step's score change of order 1, comparable to the
# cost, so the fear stays cost-augmented; C = 1 and θ0 = 0 keep ‖θ‖ (and with it the margin
# that α asks for) bounded, which makes the solution max-margin-like and points it at w*.
SYNTH = dict(eta=1e-7, alpha=10.0, c=1.0, cccp_iterations=20, epochs=10)


@pytest.fixture(scope="module")
def synthetic():
    return make_synthetic(100, 50, 100)


def test_ramp3_objective_does_not_rise_across_cccp_iterations(synthetic):
    corpus, _ = synthetic
    res = Rampion(**SYNTH).optimize(corpus, np.zeros(corpus.n_features), 0)
    obj = np.array([res.info["objective_start"]] + res.info["objective"])
    assert np.all(np.diff(obj) <= 1e-6 * np.abs(obj[:-1]) + 1e-9), obj
    assert obj[-1] < 0.1 * obj[0]


def test_synthetic_recovery(synthetic):
    corpus, w_star = synthetic
    res = Rampion(**SYNTH).optimize(corpus, np.zeros(corpus.n_features), 0)
    assert cosine(res.weights, w_star) > 0.95
    assert res.score > 99       # 0-100


def test_moses_toy_improves_bleu(toy):
    corpus, start = toy
    assert corpus.metric_of(start) == pytest.approx(TOY_START_BLEU, abs=1e-6)
    res = Rampion().optimize(corpus, start, seed=0)
    assert res.score > 100 * (TOY_START_BLEU + 0.05)     # 36.26 with the defaults (Result.score is 0-100)
    assert res.score == corpus.metric.value(corpus.metric_of(res.weights))


@pytest.mark.parametrize("loss", OTHER_LOSSES)
def test_moses_toy_each_loss_lowers_its_objective(toy, loss):
    corpus, start = toy
    res = Rampion(loss=loss).optimize(corpus, start, seed=0)
    obj = np.array([res.info["objective_start"]] + res.info["objective"])
    assert obj[-1] < obj[0], obj
    assert np.all(np.isfinite(obj)) and res.info["loss"] == loss
