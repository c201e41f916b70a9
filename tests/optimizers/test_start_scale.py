"""The start weights that the margin-based learners (PRO, MIRA, kbmira, RAMPION) work
from: shrunk to a mean pair margin of 1 when larger, kept otherwise."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplug.optimizers.base import mean_pair_margin, start_at_unit_margin, start_margin
from mtplug.optimizers.mira import KbMira, Mira
from mtplug.optimizers.rampion import Rampion
from mtplug.synthetic import cosine, make_synthetic
from tests.reference.random_store import random_store


def pair_margin_reference(scores, offsets):
    """Every unordered pair of one sentence, by brute force."""
    diffs = [abs(scores[i] - scores[j])
             for a, b in zip(offsets[:-1], offsets[1:]) for i, j in itertools.combinations(range(a, b), 2)]
    return float(np.mean(diffs)) if diffs else 0.0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 7), min_size=1, max_size=6), st.integers(0, 2**32 - 1), st.booleans())
def test_mean_pair_margin_equals_every_pair(sizes, seed, ties):
    rng = np.random.default_rng(seed)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    scores = rng.integers(-3, 4, offsets[-1]).astype(float) if ties else rng.normal(size=offsets[-1]) * 100
    assert mean_pair_margin(scores, offsets) == pytest.approx(pair_margin_reference(scores, offsets),
                                                              rel=1e-12, abs=1e-12)


def test_start_at_unit_margin_shrinks_only():
    w = np.array([2.0, -4.0])
    np.testing.assert_array_equal(start_at_unit_margin(w, 8.0), w / 8.0)
    for margin in (1.0, 0.3, 0.0, np.inf, np.nan):
        assert start_at_unit_margin(w, margin) is w
    assert start_at_unit_margin(w, 8.0, above=10.0) is w
    np.testing.assert_array_equal(start_at_unit_margin(w, 12.0, above=10.0), w / 12.0)


def test_start_margin_of_a_store_is_its_model_scores_pair_margin():
    corpus = random_store(3, (5, 1, 8, 3), 3, 4)
    w = np.random.default_rng(0).normal(size=corpus.n_features)
    assert start_margin(corpus, w) == pytest.approx(pair_margin_reference(corpus.scores(w), corpus.sent_offsets))


@pytest.mark.parametrize("make", [KbMira, Mira, Rampion])
def test_a_start_at_a_huge_scale_no_longer_holds_the_run(make):
    # Hopkins & May's set from uniform weights (cosine 0.11 to w*): margins in the hundreds,
    # where almost no hope/fear pair violated its margin, before the start was shrunk to a
    # mean margin of 1 (measured: kbmira 0.974, MIRA 0.957, RAMPION 0.973)
    corpus, w_star = make_synthetic(300, 50, 10, seed=0)
    start = np.ones(10)
    res = make().optimize(corpus, start, 0, threads=1)
    assert res.info["start_margin"] > 100
    assert cosine(res.weights, w_star) > 0.95


@pytest.mark.parametrize("make", [lambda: KbMira(passes=3), lambda: Mira(passes=3), lambda: Rampion(cccp_iterations=2)])
def test_the_run_from_a_large_start_is_the_run_from_the_shrunk_start(make):
    corpus, _ = make_synthetic(50, 20, 5, seed=1)
    start = np.full(5, 3.0)
    margin = start_margin(corpus, start)
    assert margin > 1
    shrunk = start / margin
    assert start_margin(corpus, shrunk) == pytest.approx(1.0)
    a, b = make().optimize(corpus, start, 0), make().optimize(corpus, shrunk, 0)
    np.testing.assert_allclose(a.weights, b.weights, rtol=1e-9, atol=1e-12)
