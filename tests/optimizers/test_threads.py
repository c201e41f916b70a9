"""Kernels that split sentences over threads give bit-identical results for any thread count."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplug.optimizers.line_search import sweep
from mtplug.optimizers.mert import Mert
from tests.reference.random_store import random_store


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_sent=st.integers(1, 60), method=st.sampled_from(["auto", "walk", "sort"]),
       small_integers=st.booleans())
def test_line_sweep_does_not_depend_on_threads(seed, n_sent, method, small_integers):
    rng = np.random.default_rng(seed)
    corpus = random_store(seed, sizes=tuple(int(x) for x in rng.integers(1, 12, n_sent)))
    if small_integers:  # many sentences share breakpoints, which threads find in any order
        a = rng.integers(-3, 4, corpus.n_hypotheses).astype(np.float64)
        b = rng.integers(-3, 4, corpus.n_hypotheses).astype(np.float64)
    else:
        a = corpus.scores(rng.normal(size=corpus.n_features))
        b = corpus.scores(rng.normal(size=corpus.n_features))
    one = sweep(corpus, a, b, method, threads=1)
    for t in (2, 3, 8):
        other = sweep(corpus, a, b, method, threads=t)
        assert other[0].tobytes() == one[0].tobytes() and other[1].tobytes() == one[1].tobytes()
        assert other[2] == one[2]


@pytest.mark.parametrize("restarts", [0, 3])
def test_mert_weights_do_not_depend_on_threads(restarts):
    corpus = random_store(2, sizes=tuple(range(1, 40)), gaussian=True)
    start = np.ones(corpus.n_features)
    results = [Mert(restarts=restarts, directions="powell").optimize(corpus, start, seed=9, threads=t)
               for t in (1, 2, 4)]
    assert all(r.weights.tobytes() == results[0].weights.tobytes() for r in results)


@pytest.mark.filterwarnings("ignore::mtplug.metrics.expected_bleu.DegenerateObjectiveWarning")
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_sent=st.integers(1, 50), mu=st.sampled_from([0.1, 1.0, 10.0]))
def test_expected_bleu_gradient_does_not_depend_on_threads(seed, n_sent, mu):
    from mtplug.metrics.expected_bleu import expected_bleu_gradient

    rng = np.random.default_rng(seed)
    corpus = random_store(seed, sizes=tuple(int(x) for x in rng.integers(1, 12, n_sent)), gaussian=True)
    w = rng.normal(size=corpus.n_features)
    v1, g1 = expected_bleu_gradient(corpus, w, mu, threads=1)
    for t in (2, 5):
        v, g = expected_bleu_gradient(corpus, w, mu, threads=t)
        assert np.float64(v).tobytes() == np.float64(v1).tobytes() and g.tobytes() == g1.tobytes()


def test_apro_does_not_depend_on_threads():
    from mtplug.optimizers.apro import Apro

    corpus = random_store(4, sizes=tuple(range(1, 60)), gaussian=True)
    start = np.zeros(corpus.n_features)
    results = [Apro().optimize(corpus, start, seed=0, threads=t) for t in (1, 2, 3)]
    assert all(r.weights.tobytes() == results[0].weights.tobytes() for r in results)
    obj = [Apro().objective(corpus, threads=t) for t in (1, 3)]
    w = np.random.default_rng(0).normal(size=corpus.n_features)
    points = [o.at(w) for o in obj]
    assert points[0].grad.tobytes() == points[1].grad.tobytes()
    assert obj[0].hessian_product(points[0], w).tobytes() == obj[1].hessian_product(points[1], w).tobytes()


def _select_reference(scores, gains, offsets, mc, gc):
    """Python argmax of mc·score + gc·gain per sentence; ties: larger score, then lowest row."""
    out = []
    for lo, hi in zip(offsets[:-1], offsets[1:]):
        best = lo
        for h in range(lo + 1, hi):
            v, bv = mc * scores[h] + gc * gains[h], mc * scores[best] + gc * gains[best]
            if v > bv or (v == bv and scores[h] > scores[best]):
                best = h
        out.append(best)
    return np.array(out, dtype=np.int64)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_sent=st.integers(1, 400),
       coefs=st.sampled_from([(0.0, 1.0), (1.0, 1.0), (1.0, 0.0), (0.0, -1.0), (1.0, -10.0)]))
def test_hopefear_select_does_not_depend_on_threads(seed, n_sent, coefs):
    from mtplug.metrics.sentence import hypothesis_scores
    from mtplug.optimizers.mira import select

    rng = np.random.default_rng(seed)
    # features in multiples of 0.5 (not gaussian): model scores and gains tie often
    corpus = random_store(seed, sizes=tuple(int(x) for x in rng.integers(1, 12, n_sent)))
    scores = corpus.scores(rng.integers(-2, 3, size=corpus.n_features).astype(np.float64))
    offsets = corpus.sent_offsets
    one = select(scores, hypothesis_scores(corpus, "bleu+1"), offsets, *coefs, threads=1)
    for t in (2, 3, 8):
        gains = hypothesis_scores(corpus, "bleu+1", threads=t)
        assert select(scores, gains, offsets, *coefs, threads=t).tobytes() == one.tobytes()
    assert one.tobytes() == _select_reference(scores, hypothesis_scores(corpus, "bleu+1"), offsets,
                                              *coefs).tobytes()


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_rows=st.integers(0, 3000))
def test_sentence_bleu_rows_do_not_depend_on_threads(seed, n_rows):
    from mtplug._ext import _bleu
    from mtplug.metrics.bleu import SENTENCE_BLEU_VARIANTS, sentence_bleu

    rng = np.random.default_rng(seed)
    stats = np.zeros((n_rows, 9), dtype=np.int32)
    stats[:, 1] = rng.integers(0, 30, n_rows)             # h = 0 rows included
    for k in (3, 5, 7):
        stats[:, k] = np.maximum(stats[:, k - 2] - 1, 0)
    for k in (0, 2, 4, 6):
        stats[:, k] = rng.integers(0, stats[:, k + 1] + 1)  # m_n = 0 rows included
    stats[:, 8] = rng.integers(0, 30, n_rows)             # r = 0 rows included
    for divisor in (1.0, 3.0):
        for code in list(SENTENCE_BLEU_VARIANTS.values()) + [len(SENTENCE_BLEU_VARIANTS)]:  # + unknown: NaN
            one = np.empty(n_rows)
            _bleu.sentence_bleu_rows(stats, divisor, code, one, 1)
            for t in (2, 3, 8):
                other = np.full(n_rows, -1.0)
                _bleu.sentence_bleu_rows(stats, divisor, code, other, t)
                assert other.tobytes() == one.tobytes()
        for variant in SENTENCE_BLEU_VARIANTS:
            one = sentence_bleu(stats, variant, divisor)
            assert sentence_bleu(stats, variant, divisor, threads=3).tobytes() == one.tobytes()


@pytest.mark.parametrize("loss", ["ramp3", "ramp1", "ramp2", "soft-ramp3", "perceptron", "hinge", "log", "soft-oracle",
                                  "bayes-risk"])
def test_rampion_does_not_depend_on_threads(loss):
    from mtplug.optimizers.rampion import Rampion

    corpus = random_store(5, sizes=tuple(int(x) for x in np.random.default_rng(5).integers(1, 15, 300)),
                          gaussian=True)
    start = np.ones(corpus.n_features)
    opt = Rampion(cccp_iterations=4, epochs=2, eta=0.01, loss=loss)
    results = [opt.optimize(corpus, start, seed=0, threads=t) for t in (1, 2)]
    assert results[1].weights.tobytes() == results[0].weights.tobytes()
    assert results[1].info["objective"] == results[0].info["objective"]
    assert not np.array_equal(results[0].weights, start)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_sent=st.integers(1, 80))
def test_model_scores_do_not_depend_on_threads(seed, n_sent):
    from mtplug._ext import _apro

    rng = np.random.default_rng(seed)
    corpus = random_store(seed, sizes=tuple(int(x) for x in rng.integers(1, 15, n_sent)), gaussian=True)
    w = rng.normal(size=corpus.n_features)
    one = corpus.scores(w, 1)
    offsets = np.ascontiguousarray(corpus.sent_offsets, dtype=np.int64)
    args = (np.ascontiguousarray(corpus.dense), corpus.sparse_indptr, corpus.sparse_ids, corpus.sparse_values,
            offsets, w)
    centred = np.empty(corpus.n_hypotheses)
    _apro.centred_scores(*args, centred, 1)
    for t in (2, 3, 8):
        assert corpus.scores(w, t).tobytes() == one.tobytes()
        other = np.empty(corpus.n_hypotheses)
        _apro.centred_scores(*args, other, t)
        assert other.tobytes() == centred.tobytes()
