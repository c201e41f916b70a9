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
@given(seed=st.integers(0, 2**32 - 1), n_sent=st.integers(1, 60), method=st.sampled_from(["auto", "walk", "sort"]))
def test_line_sweep_does_not_depend_on_threads(seed, n_sent, method):
    rng = np.random.default_rng(seed)
    corpus = random_store(seed, sizes=tuple(int(x) for x in rng.integers(1, 12, n_sent)))
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
