"""PRO: the sampler (distribution, reproducibility, selection rules), the difference
vectors, the classifiers, synthetic recovery and the Moses toy set."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplug._ext import _pro
from mtplug.corpus import NbestCorpus
from mtplug.metrics.sentence import hypothesis_scores
from mtplug.optimizers import classifiers
from mtplug.optimizers.classifiers import PairMatrix
from mtplug.optimizers.pro import Pro, pair_differences, sample_pairs
from mtplug.synthetic import cosine, make_synthetic
from tests.reference.random_store import random_store
from tests.reference import pro_reference as ref

#: shared/data/moses-toy/README.md: corpus BLEU of the start weights (run1.init.opt)
TOY_START_BLEU = 0.265757


def offsets_of(sizes) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)


def sparse_corpus(seed: int, sizes=(5, 1, 8, 3), n_dense=3, n_sparse=6) -> NbestCorpus:
    return random_store(seed, sizes, n_dense, n_sparse)

# ---------------------------------------------------------------- the generator

@pytest.mark.parametrize("seed,sentence,k", [(0, 0, 1), (1, 0, 7), (-5, 3, 1000), (2**64 - 1, 12, 3),
                                             (42, 10**6, 2**31 + 11)])
def test_generator_equals_the_pure_python_stream(seed, sentence, k):
    stream = ref.Stream(seed, sentence)
    expected = [stream.below(k) for _ in range(200)]
    np.testing.assert_array_equal(_pro.py_uniform_draws(seed & ref.MASK64, sentence, k, 200), expected)


def test_draws_are_uniform_chi_square():
    # 16 cells = the ordered pairs (i, j) of a 4-hypothesis list, i == j included
    k, n = 4, 40_000
    draws = _pro.py_uniform_draws(2024, 5, k, 2 * n)
    cells = np.bincount(draws[0::2] * k + draws[1::2], minlength=k * k)
    assert scipy.stats.chisquare(cells).pvalue > 1e-3
    # a size that is no power of two exercises the rejection step
    draws = _pro.py_uniform_draws(7, 0, 7, 70_000)
    assert scipy.stats.chisquare(np.bincount(draws, minlength=7)).pvalue > 1e-3


def test_sampled_pairs_are_uniform_over_unordered_pairs():
    # distinct scores 0, .1, .2, .3 and beta = 0: every draw with i != j is a candidate;
    # xi >= gamma keeps them all, so pair counts estimate the sampling distribution
    scores = np.array([0.0, 0.1, 0.2, 0.3])
    gamma = 40_000
    sample = sample_pairs(scores, offsets_of([4]), seed=11, gamma=gamma, xi=gamma, beta=0.0)
    assert sample.draws == gamma
    # P(i != j) = 12/16; each of the 6 unordered pairs has probability 2/16
    assert abs(sample.n_pairs / gamma - 0.75) < 4 * np.sqrt(0.75 * 0.25 / gamma)
    assert np.all(scores[sample.better] > scores[sample.worse])
    counts = np.bincount(sample.better * 4 + sample.worse, minlength=16)
    cells = counts[[1 * 4 + 0, 2 * 4 + 0, 3 * 4 + 0, 2 * 4 + 1, 3 * 4 + 1, 3 * 4 + 2]]
    assert cells.sum() == sample.n_pairs
    assert scipy.stats.chisquare(cells).pvalue > 1e-3


def test_same_seed_same_pairs_whatever_the_threads():
    rng = np.random.default_rng(0)
    sizes = rng.integers(1, 60, size=37)
    scores = rng.random(int(sizes.sum()))
    runs = [sample_pairs(scores, offsets_of(sizes), seed=3, gamma=500, xi=20, threads=t) for t in (1, 2, 5, 1)]
    for r in runs[1:]:
        for f in ("indptr", "better", "worse", "candidates"):
            np.testing.assert_array_equal(getattr(r, f), getattr(runs[0], f))
    other = sample_pairs(scores, offsets_of(sizes), seed=4, gamma=500, xi=20)
    assert not np.array_equal(other.better, runs[0].better)


def test_a_sentence_pairs_do_not_depend_on_the_other_sentences():
    rng = np.random.default_rng(1)
    scores = rng.random(30)
    both = sample_pairs(scores, offsets_of([10, 20]), seed=9, gamma=300, xi=15)
    # sentence 1 alone, placed at index 1 again (its stream is keyed by its index)
    alone = sample_pairs(np.concatenate([[0.5], scores[10:]]), offsets_of([1, 20]), seed=9, gamma=300, xi=15)
    np.testing.assert_array_equal(both.better[both.indptr[1]:], alone.better + 9)
    np.testing.assert_array_equal(both.worse[both.indptr[1]:], alone.worse + 9)


def brute_force_selection(scores, lo, k, seed, s, gamma, xi, beta):
    """The kernel's own draws, filtered and cut with NumPy: (better, worse, n candidates)."""
    draws = _pro.py_uniform_draws(seed, s, k, 2 * gamma)
    i, j = draws[0::2], draws[1::2]
    d = np.abs(scores[lo + i] - scores[lo + j])
    ok = (i != j) & (d >= beta) & (d > 0)
    t = np.flatnonzero(ok)
    kept = t[np.lexsort((t, -d[t]))][:xi]           # largest diff first, ties: earlier draw
    kept.sort()                                     # output in draw order
    hi_first = scores[lo + i[kept]] > scores[lo + j[kept]]
    better = np.where(hi_first, lo + i[kept], lo + j[kept])
    worse = np.where(hi_first, lo + j[kept], lo + i[kept])
    return better, worse, len(t)


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.integers(0, 40), min_size=1, max_size=6), levels=st.integers(1, 6),
       gamma=st.integers(0, 300), xi=st.integers(1, 60), beta=st.sampled_from([0.0, 0.05, 0.2, 0.5]),
       seed=st.integers(0, 2**64 - 1), data=st.data())
def test_beta_filter_and_top_xi_equal_a_numpy_selection(sizes, levels, gamma, xi, beta, seed, data):
    # few distinct score levels: many equal differences, so the tie rule decides
    n = sum(sizes)
    scores = np.array(data.draw(st.lists(st.integers(0, levels), min_size=n, max_size=n)), dtype=float) / levels
    offsets = offsets_of(sizes)
    sample = sample_pairs(scores, offsets, seed=seed, gamma=gamma, xi=xi, beta=beta)
    for s, k in enumerate(sizes):
        got_b = sample.better[sample.indptr[s]:sample.indptr[s + 1]]
        got_w = sample.worse[sample.indptr[s]:sample.indptr[s + 1]]
        if k < 2:
            assert len(got_b) == 0 and sample.candidates[s] == 0
            continue
        b, w, n_cand = brute_force_selection(scores, int(offsets[s]), k, seed, s, gamma, xi, beta)
        np.testing.assert_array_equal(got_b, b)
        np.testing.assert_array_equal(got_w, w)
        assert sample.candidates[s] == n_cand


def test_kernel_equals_the_pure_python_sampler():
    rng = np.random.default_rng(5)
    sizes = [0, 1, 2, 13, 40, 7]
    scores = np.round(rng.random(sum(sizes)), 1)
    sample = sample_pairs(scores, offsets_of(sizes), seed=123456789, gamma=400, xi=25, beta=0.05)
    pairs, above = ref.sample_pairs(scores, offsets_of(sizes), 123456789, 400, 25, 0.05)
    for s in range(len(sizes)):
        lo, hi = sample.indptr[s], sample.indptr[s + 1]
        assert list(zip(sample.better[lo:hi].tolist(), sample.worse[lo:hi].tolist())) == pairs[s]
    assert sample.candidates.tolist() == above


def test_length_sigma_is_the_rms_length_difference_over_all_ordered_pairs():
    rng = np.random.default_rng(8)
    for k in (2, 3, 17, 60):
        lengths = rng.integers(0, 80, size=k)
        brute = [(int(a) - int(b)) ** 2 for x, a in enumerate(lengths) for y, b in enumerate(lengths) if x != y]
        assert ref.length_sigma(lengths) == pytest.approx(max(2.0, float(np.sqrt(np.mean(brute)))), rel=1e-12)
    assert ref.length_sigma(np.array([5, 5, 6])) == 2.0        # at least 2 words, as cdec


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.integers(0, 30), min_size=1, max_size=5), gamma=st.integers(0, 200),
       xi=st.integers(1, 40), beta=st.sampled_from([0.0, 0.05]), z=st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.5]),
       seed=st.integers(0, 2**64 - 1), data=st.data())
def test_length_filter_kernel_equals_the_reference(sizes, gamma, xi, beta, z, seed, data):
    n = sum(sizes)
    scores = np.array(data.draw(st.lists(st.integers(0, 8), min_size=n, max_size=n)), dtype=float) / 8
    lengths = np.array(data.draw(st.lists(st.integers(0, 60), min_size=n, max_size=n)), dtype=np.int64)
    sample = sample_pairs(scores, offsets_of(sizes), seed=seed, gamma=gamma, xi=xi, beta=beta, lengths=lengths,
                          length_z=z)
    pairs, above = ref.sample_pairs(scores, offsets_of(sizes), seed, gamma, xi, beta, lengths, z)
    for s in range(len(sizes)):
        lo, hi = sample.indptr[s], sample.indptr[s + 1]
        assert list(zip(sample.better[lo:hi].tolist(), sample.worse[lo:hi].tolist())) == pairs[s]
    assert sample.candidates.tolist() == above


def test_length_filter_redraws_pairs_of_far_lengths():
    # 40 hypotheses of 10 words and 10 of 30: sigma = sqrt(2·Σ(l - 14)²/49) = 11.43, so
    # z = 1 (limit 11.43 words) rejects every short-long pair and z = 2 none
    lengths = np.array([10] * 40 + [30] * 10)
    scores = np.linspace(0, 1, 50)
    for z, far_kept in ((1.0, False), (2.0, True)):
        sample = sample_pairs(scores, offsets_of([50]), seed=4, gamma=2000, xi=2000, beta=0.0, lengths=lengths,
                              length_z=z)
        far = lengths[sample.better] != lengths[sample.worse]
        assert far.any() == far_kept
        assert (sample.redrawn[0] > 0) == (not far_kept)
        # redraws do not count: still 2000 draws, of which about 1/50 have i == j
        assert sample.candidates[0] > 1900
    off = sample_pairs(scores, offsets_of([50]), seed=4, gamma=2000, xi=2000, beta=0.0)
    with_z = sample_pairs(scores, offsets_of([50]), seed=4, gamma=2000, xi=2000, beta=0.0, lengths=lengths,
                          length_z=2.0)
    np.testing.assert_array_equal(off.better, with_z.better)      # no pair rejected: the same draws


def test_length_filter_input_checks():
    with pytest.raises(ValueError, match="needs the hypothesis lengths"):
        sample_pairs(np.array([0.1, 0.2]), offsets_of([2]), seed=0, length_z=2.0)
    with pytest.raises(ValueError, match="non-negative word counts"):
        sample_pairs(np.array([0.1, 0.2]), offsets_of([2]), seed=0, lengths=[3, -1], length_z=2.0)
    with pytest.raises(ValueError, match="length_z must"):
        sample_pairs(np.array([0.1, 0.2]), offsets_of([2]), seed=0, lengths=[3, 1], length_z=np.nan)


def test_pro_length_filter_uses_the_hypothesis_lengths():
    corpus = sparse_corpus(0, sizes=(30, 25, 40), n_sparse=5)
    start = np.zeros(corpus.n_features)
    res = Pro(length_z=1.0, beta=0.0).optimize(corpus, start, 3)
    b = hypothesis_scores(corpus, "bleu+1")
    sample = sample_pairs(b, corpus.sent_offsets, seed=3, beta=0.0, lengths=corpus.stats[:, 1], length_z=1.0)
    assert res.info["pairs_redrawn_for_length"] == int(sample.redrawn.sum()) > 0
    assert res.info["pairs_sampled"] == int(sample.candidates.sum())
    assert Pro(beta=0.0, length_z=0).optimize(corpus, start, 3).info["pairs_redrawn_for_length"] == 0


def test_pro_length_filter_needs_bleu_statistics():
    corpus = make_synthetic(n_sentences=3, n_hyps=5, n_features=2, seed=0)[0]
    with pytest.raises(ValueError, match="length_z needs hypothesis lengths"):
        Pro(length_z=2.0).optimize(corpus, np.zeros(corpus.n_features), 0)
    # the default filter applies where there are lengths and stands aside where there are none
    assert Pro().optimize(corpus, np.zeros(corpus.n_features), 0).info["pairs_redrawn_for_length"] == 0


def test_default_length_filter_is_cdecs():
    corpus = sparse_corpus(0, sizes=(30, 25, 40), n_sparse=5)
    start = np.zeros(corpus.n_features)
    assert Pro().optimize(corpus, start, 3).weights.tobytes() == \
        Pro(length_z=2.0).optimize(corpus, start, 3).weights.tobytes()


def test_sampler_input_checks():
    with pytest.raises(ValueError, match="not finite"):
        sample_pairs(np.array([0.1, np.nan]), offsets_of([2]), seed=0)
    with pytest.raises(ValueError, match="from 0 to 2"):
        sample_pairs(np.array([0.1, 0.2]), offsets_of([3]), seed=0)
    with pytest.raises(ValueError, match="xi >= 1"):
        sample_pairs(np.array([0.1, 0.2]), offsets_of([2]), seed=0, xi=0)


def test_kernel_rejects_a_wrong_buffer_dtype():
    out = np.zeros(2, np.int64)
    with pytest.raises(ValueError, match="Buffer dtype mismatch"):
        _pro.sample_pairs(np.zeros(2, np.float32), offsets_of([2]), 0, 1, 0, 10, 1, 0.0, np.zeros(0, np.int64), 0.0,
                          out, out.copy(), np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1, np.int64))


# ---------------------------------------------------------------- difference vectors

@pytest.mark.parametrize("seed", [0, 1, 2])
def test_difference_vectors_equal_dense_numpy_differences(seed):
    corpus = sparse_corpus(seed)
    rng = np.random.default_rng(seed)
    n = corpus.n_hypotheses
    better = rng.integers(0, n, 50)
    worse = rng.integers(0, n, 50)
    X = pair_differences(corpus, better, worse)
    full = np.hstack([X.dense, X.sparse.toarray()])
    expected = np.array([ref.difference(corpus, b, w) for b, w in zip(better, worse)])
    np.testing.assert_array_equal(full, expected)
    assert np.all(X.sparse.data != 0)                  # exact cancellations are not stored
    assert X.sparse.has_sorted_indices


def test_difference_vectors_without_sparse_features(toy):
    corpus, _ = toy
    X = pair_differences(corpus, np.array([0, 5, 7]), np.array([1, 5, 99]))
    assert X.sparse is None
    np.testing.assert_array_equal(X.dense, corpus.dense[[0, 5, 7]] - corpus.dense[[1, 5, 99]])


# ---------------------------------------------------------------- classifiers

def separable(seed: int, m=300, d=6, s=8):
    """Rows with a dense and a sparse part, labelled by a random w0 with a margin."""
    rng = np.random.default_rng(seed)
    dense = rng.standard_normal((4 * m, d))
    sparse = scipy.sparse.random(4 * m, s, density=0.3, format="csr", random_state=seed)
    X = PairMatrix(dense, sparse)
    w0 = rng.standard_normal(d + s)
    z = X.matvec(w0)
    keep = np.flatnonzero(np.abs(z) > 0.5)[:m]
    return PairMatrix(dense[keep], sparse[keep]), np.sign(z[keep]), w0


@pytest.mark.parametrize("kind", classifiers.CLASSIFIERS)
def test_each_classifier_separates_a_separable_set(kind):
    X, y, _ = separable(0)
    fit = classifiers.fit(kind, X, y, C=100.0, epochs=50, max_iterations=2000, seed=1)
    assert np.all(np.sign(X.matvec(fit.weights)) == y)
    again = classifiers.fit(kind, X, y, C=100.0, epochs=50, max_iterations=2000, seed=1)
    assert again.weights.tobytes() == fit.weights.tobytes()


def test_logistic_gradient_matches_finite_differences():
    X, y, _ = separable(1, m=60)
    rng = np.random.default_rng(2)
    w = rng.standard_normal(X.n_columns) * 0.3
    f, g = classifiers.logistic_objective(w, X, y, 0.7, 2.0)
    full = np.hstack([X.dense, X.sparse.toarray()])
    assert f == pytest.approx(ref.logistic_objective(w, full, y, 0.7, 2.0), rel=1e-12)
    h = 1e-6
    for k in range(X.n_columns):
        e = np.zeros_like(w)
        e[k] = h
        fd = (classifiers.logistic_objective(w + e, X, y, 0.7, 2.0)[0]
              - classifiers.logistic_objective(w - e, X, y, 0.7, 2.0)[0]) / (2 * h)
        assert g[k] == pytest.approx(fd, rel=1e-6, abs=1e-6)


def test_logistic_with_a_centred_prior_matches_the_reference_and_finite_differences():
    X, y, _ = separable(6, m=60)
    rng = np.random.default_rng(7)
    w, c = rng.standard_normal(X.n_columns) * 0.3, rng.standard_normal(X.n_columns)
    f, g = classifiers.logistic_objective(w, X, y, 0.7, 2.0, c)
    full = np.hstack([X.dense, X.sparse.toarray()])
    assert f == pytest.approx(ref.logistic_objective(w, full, y, 0.7, 2.0, c), rel=1e-12)
    h = 1e-6
    for k in range(X.n_columns):
        e = np.zeros_like(w)
        e[k] = h
        fd = (classifiers.logistic_objective(w + e, X, y, 0.7, 2.0, c)[0]
              - classifiers.logistic_objective(w - e, X, y, 0.7, 2.0, c)[0]) / (2 * h)
        assert g[k] == pytest.approx(fd, rel=1e-6, abs=1e-6)


@pytest.mark.parametrize("kind", ["logistic", "svm"])
def test_a_strong_prior_holds_the_weights_at_its_centre(kind):
    X, y, _ = separable(8, m=80)
    c = np.random.default_rng(9).standard_normal(X.n_columns)
    tight = classifiers.fit(kind, X, y, C=1e-6, center=c, epochs=200, seed=0).weights
    np.testing.assert_allclose(tight, c, atol=1e-3)
    loose = classifiers.fit(kind, X, y, C=100.0, center=c, epochs=200, max_iterations=2000, seed=0).weights
    assert np.all(np.sign(X.matvec(loose)) == y)   # a weak prior still separates


def test_svm_with_a_centred_prior_closes_its_duality_gap():
    rng = np.random.default_rng(10)
    X = PairMatrix(rng.standard_normal((200, 5)))
    y = np.sign(X.dense @ rng.standard_normal(5) + 0.8 * rng.standard_normal(200))
    c, C, omega = rng.standard_normal(5), 0.3, 2.0
    b = 1.0 - y * (X.dense @ c)
    xd, ip, cols, vals = X.kernel_arrays()
    alpha, v = np.zeros(200), np.zeros(5)
    for epoch in range(500):
        order = np.random.default_rng(epoch).permutation(200).astype(np.int64)
        _pro.svm_dcd_epoch(xd, ip, cols, vals, y, order, X.row_squared_norms(), b, C * omega, alpha, v)
    primal = 0.5 * v @ v + C * omega * np.maximum(0, b - y * (X.dense @ v)).sum()
    dual = alpha @ b - 0.5 * v @ v    # the dual of ½‖v‖² + U Σ max(0, b_r - y_r v·x_r)
    assert -1e-12 * primal <= primal - dual < 1e-6 * primal
    fit = classifiers.fit_svm(X, y, C, loss_weight=omega, center=c, epochs=500, seed=0, tolerance=1e-9)
    assert fit.objective * C == pytest.approx(primal, rel=1e-6)
    np.testing.assert_allclose(fit.weights, v + c, atol=1e-4)


def test_the_perceptron_takes_no_prior():
    X, y, _ = separable(11, m=20)
    with pytest.raises(ValueError, match="perceptron has no prior"):
        classifiers.fit("perceptron", X, y, center=np.zeros(X.n_columns))


def test_logistic_loss_weight_two_equals_both_orientations():
    # PRO trains on one orientation with weight 2: the same as (x, +1) and (-x, -1)
    X, y, _ = separable(3, m=100)
    one = classifiers.fit_logistic(X, y, 0.5, loss_weight=2.0, tolerance=1e-10)
    both = PairMatrix(np.vstack([X.dense, -X.dense]), scipy.sparse.vstack([X.sparse, -X.sparse]))
    two = classifiers.fit_logistic(both, np.concatenate([y, -y]), 0.5, tolerance=1e-10)
    np.testing.assert_allclose(one.weights, two.weights, rtol=1e-5, atol=1e-7)


def test_svm_duality_gap_is_small():
    rng = np.random.default_rng(4)
    X = PairMatrix(rng.standard_normal((200, 5)))
    y = np.sign(X.dense @ rng.standard_normal(5) + 0.8 * rng.standard_normal(200))
    C, omega = 0.3, 2.0
    xd, ip, cols, vals = X.kernel_arrays()
    sq = X.row_squared_norms()
    alpha, w = np.zeros(200), np.zeros(5)
    for epoch in range(500):
        order = np.random.default_rng(epoch).permutation(200).astype(np.int64)
        _pro.svm_dcd_epoch(xd, ip, cols, vals, y, order, sq, np.ones(200), C * omega, alpha, w)
    np.testing.assert_allclose(w, (X.dense * y[:, None]).T @ alpha, atol=1e-9)   # w stays Σ α y x
    primal = 0.5 * w @ w + C * omega * np.maximum(0, 1 - y * (X.dense @ w)).sum()
    dual = alpha.sum() - 0.5 * w @ w
    assert -1e-12 * primal <= primal - dual < 1e-6 * primal   # weak duality up to rounding
    fit = classifiers.fit_svm(X, y, C, loss_weight=omega, epochs=500, seed=0, tolerance=1e-9)
    assert fit.objective * C == pytest.approx(primal, rel=1e-6)


def test_perceptron_counts_epochs_and_reports_separation():
    X, y, _ = separable(5, m=100)
    fit = classifiers.fit_perceptron(X, y, epochs=30, seed=0)
    assert fit.iterations == 30 and fit.converged and np.isnan(fit.objective)


# ---------------------------------------------------------------- the optimizer

def test_synthetic_recovery():
    corpus, w_star = make_synthetic(500, 100, 100, seed=7)
    res = Pro(c_start=np.inf).optimize(corpus, np.ones(100), 0)   # the classifier alone, no pull to the start
    assert cosine(res.weights, w_star) > 0.99
    assert res.info["pairs_kept"] == 500 * 50
    assert res.score == pytest.approx(100 * float(corpus.stats[corpus.one_best(res.weights), 0].sum())
                                      / corpus.metric.parts[0].param)    # Result.score is 0-100


def test_improves_bleu_on_the_moses_toy_set(toy):
    # measured, seed 1, one step: 0.364174 (defaults: Ψ 1, c_start 0.001; the toy start ranks
    # the pairs with a mean margin below 1, so it is pulled toward as it is), Ψ 0.5 0.373344,
    # Ψ 0.1 0.342558; without the pull toward the start (c_start inf) 0.425124
    corpus, start = toy
    assert corpus.bleu_of(start).score == pytest.approx(TOY_START_BLEU, abs=5e-7)
    for kwargs, gain in ((dict(psi=0.1), 0.01), (dict(psi=0.5), 0.07), (dict(c_start=np.inf), 0.07), ({}, 0.07)):
        res = Pro(**kwargs).optimize(corpus, start, 1)
        assert res.score > 100 * (TOY_START_BLEU + gain)       # Result.score is 0-100
        assert res.score == corpus.metric.value(corpus.bleu_of(res.weights).score)
    info = res.info
    # as Moses's pro on this set (shared/data/moses-toy/README.md): 60 sentences x 50 pairs
    assert info["pairs_kept"] == 3000 and info["draws"] == 60 * 5000
    assert info["classifier_converged"] and info["classifier_iterations"] > 0 and info["seconds"] > 0


@pytest.mark.parametrize("kind", ["perceptron", "svm"])
def test_other_classifiers_improve_the_toy_set_too(toy, kind):
    corpus, start = toy
    assert Pro(classifier=kind).optimize(corpus, start, 1).score > 100 * (TOY_START_BLEU + 0.05)


def test_default_takes_the_pulled_classifier_whole(toy):
    # Ψ = 1 with c_start = 0.001 toward the start at the pairs' scale: the evidence on the
    # synthetic set and the real cdec pools is in docs/reproductions/galley-2013.md
    corpus, start = toy
    default = Pro().optimize(corpus, start, 3).weights
    assert default.tobytes() == Pro(psi=1.0, c_start=0.001).optimize(corpus, start, 3).weights.tobytes()
    free = Pro(c_start=np.inf).optimize(corpus, start, 3).weights
    assert not np.allclose(default, free)


def test_result_is_the_interpolation(toy):
    """Ψ mixes the classifier's weights with the start taken at the pairs' scale: the
    rest is a positive multiple of the start."""
    corpus, start = toy
    full = Pro(psi=1.0).optimize(corpus, start, 3).weights
    part = Pro(psi=0.3).optimize(corpus, start, 3).weights
    rest = (part - 0.3 * full) / 0.7
    scale = float(rest @ start / (start @ start))
    assert scale > 0
    np.testing.assert_allclose(rest, scale * start, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("kwargs", [{}, dict(psi=0.5), dict(classifier="svm")])
def test_a_start_at_a_larger_scale_than_the_pairs_counts_by_its_direction(toy, kwargs):
    """Above a mean margin of 1 the start is shrunk to 1: its scale no longer matters."""
    corpus, start = toy
    big = Pro(**kwargs).optimize(corpus, 100.0 * start, 5).weights
    bigger = Pro(**kwargs).optimize(corpus, 1000.0 * start, 5).weights
    np.testing.assert_allclose(bigger, big, rtol=1e-7, atol=1e-10)


def test_start_at_pair_scale_shrinks_only(toy):
    from mtplug.metrics.sentence import hypothesis_scores
    from mtplug.optimizers.pro import pair_differences, sample_pairs

    corpus, start = toy
    sample = sample_pairs(hypothesis_scores(corpus, "bleu+1"), corpus.sent_offsets, seed=1, gamma=100, xi=10,
                          beta=0.05)
    X = pair_differences(corpus, sample.better, sample.worse)
    margin = np.mean(np.abs(X.matvec(start)))
    big = (10.0 / margin) * start
    assert np.mean(np.abs(X.matvec(Pro().start_at_pair_scale(big, X)))) == pytest.approx(1.0, rel=1e-12)
    small = (0.5 / margin) * start
    assert Pro().start_at_pair_scale(small, X) is small
    zero = np.zeros_like(start)
    assert Pro().start_at_pair_scale(zero, X) is zero


def test_sentence_metric_option(toy):
    corpus, start = toy
    res = Pro(sentence_metric="moses-sentence-bleu", psi=1.0).optimize(corpus, start, 2)
    b = hypothesis_scores(corpus, "moses-sentence-bleu")
    sample = sample_pairs(b, corpus.sent_offsets, seed=2)
    assert res.info["pairs_sampled"] == int(sample.candidates.sum())
    assert res.info["pairs_sampled"] != Pro().optimize(corpus, start, 2).info["pairs_sampled"]


def test_no_pairs_returns_the_start():
    stats = np.tile(np.array([[3, 3, 2, 2, 1, 2, 0, 1, 3]], dtype=np.int32), (6, 1))
    corpus = NbestCorpus.from_arrays([0, 0, 0, 1, 1, 2], np.arange(12.0).reshape(6, 2), ["a_0", "b_0"], stats)
    res = Pro().optimize(corpus, np.array([1.0, -1.0]), 0)
    assert res.info["pairs_kept"] == 0
    np.testing.assert_array_equal(res.weights, [1.0, -1.0])


def test_sparse_features_get_weights():
    corpus = sparse_corpus(0, sizes=(30, 25, 40), n_sparse=5)
    res = Pro(psi=1.0, beta=0.0).optimize(corpus, np.zeros(corpus.n_features), 0)
    assert np.count_nonzero(res.weights[corpus.n_dense:]) > 0


def test_pull_toward_the_start_is_one_centred_prior(toy):
    corpus, start = toy
    pro = Pro(c=0.5, c_start=0.2)
    C, center = pro.prior(start)
    rng = np.random.default_rng(12)
    w1, w2 = rng.standard_normal((2, start.size))
    both = lambda w: w @ w / (2 * 0.5) + (w - start) @ (w - start) / (2 * 0.2)   # noqa: E731
    one = lambda w: (w - center) @ (w - center) / (2 * C)                        # noqa: E731
    assert both(w1) - both(w2) == pytest.approx(one(w1) - one(w2), rel=1e-12)
    assert Pro(c=0.5, c_start=np.inf).prior(start) == (0.5, None)
    assert Pro(classifier="perceptron").prior(start) == (1.0, None)   # no prior to pull


def test_pull_toward_the_start_shortens_the_step(toy):
    corpus, start = toy
    free = Pro(c_start=np.inf).optimize(corpus, start, 3)
    pulled = Pro(c_start=1e-3).optimize(corpus, start, 3)
    assert np.linalg.norm(pulled.weights - start) < 0.5 * np.linalg.norm(free.weights - start)
    assert pulled.score > 100 * TOY_START_BLEU


def test_option_validation():
    for kwargs, msg in [(dict(gamma=0), "gamma and xi"), (dict(beta=-1), "beta"), (dict(psi=1.5), "psi"),
                        (dict(classifier="tree"), "classifier"), (dict(c=0), "c must"),
                        (dict(c_start=0), "c_start must"), (dict(c_start=float("nan")), "c_start must"),
                        (dict(sentence_metric="chrf"), "sentence_metric"),
                        (dict(classifier="svm", epochs=0), "epochs and max_iterations"),
                        (dict(length_z=-1), "length_z must"), (dict(length_z=float("inf")), "length_z must"),
                        # options the chosen classifier cannot use are errors, not silence
                        (dict(classifier="perceptron", c=2.0), "c applies only with classifier logistic or svm"),
                        (dict(classifier="perceptron", c_start=1.0), "c_start applies only"),
                        (dict(epochs=5), "epochs applies only with classifier perceptron or svm"),
                        (dict(classifier="svm", max_iterations=5), "max_iterations applies only")]:
        with pytest.raises(ValueError, match=msg):
            Pro(**kwargs)


def test_cli_generates_the_options(shared_data, tmp_path, capsys):
    from mtplug.cli import main
    d = shared_data / "moses-toy"
    out = tmp_path / "pro.opt"
    rc = main(["optimize", "pro", "-q", "--ffile", str(d / "run1.features.dat"), "--scfile",
               str(d / "run1.scores.dat"), "--init", str(d / "run1.init.opt"), "--out", str(out),
               "--seed", "1", "--gamma", "5000", "--xi", "50", "--beta", "0.05", "--psi", "0.1",
               "--classifier", "logistic", "--c", "1", "--sentence-metric", "bleu+1"])
    assert rc == 0
    res = json.loads(capsys.readouterr().out)
    assert res["score"] > 100 * TOY_START_BLEU and res["seed"] == 1   # the JSON line's score: 0-100


# ---------------------------------------------------------------- block by block (streaming pro)

@pytest.mark.parametrize("seed", range(3))
def test_blocks_of_sentences_draw_the_pairs_of_the_whole_store(seed):
    sizes = np.random.default_rng(seed).integers(0, 30, size=23)
    offsets = offsets_of(sizes)
    scores = np.random.default_rng(seed + 1).integers(0, 5, size=int(offsets[-1])) / 4.0
    whole = sample_pairs(scores, offsets, seed=seed, gamma=200, xi=7, beta=0.2)
    better, worse = [], []
    for s0, s1 in [(0, 5), (5, 6), (6, 23)]:
        lo, hi = int(offsets[s0]), int(offsets[s1])
        part = sample_pairs(scores[lo:hi], offsets[s0:s1 + 1] - lo, seed=seed, gamma=200, xi=7, beta=0.2,
                            first_sentence=s0)
        better.append(part.better + lo)
        worse.append(part.worse + lo)
    np.testing.assert_array_equal(np.concatenate(better), whole.better)
    np.testing.assert_array_equal(np.concatenate(worse), whole.worse)
    with pytest.raises(ValueError, match="first_sentence"):
        sample_pairs(scores, offsets, seed=0, first_sentence=-1)


def odd_values_store(seed: int) -> NbestCorpus:
    """Sparse and dense values whose float32 differences hit Moses's cut-offs, cancel, round
    to float32 zero, and print in every %g form."""
    rng = np.random.default_rng(seed)
    base = random_store(seed, (4, 6, 3), n_dense=4, n_sparse=6, gaussian=True)
    picks = np.array([0.0, -0.0, 1e-5, -1e-5, 1.00001e-5, 9.99999e-6, 1e-46, 3.4e38, 123456.5, 0.1, 1 / 3, 2.5e-7])
    dense = base.dense * 10.0 ** rng.integers(-6, 7, size=base.dense.shape)
    mask = rng.random(dense.shape) < 0.3
    dense[mask] = rng.choice(picks, size=int(mask.sum()))
    values = base.sparse_values * 10.0 ** rng.integers(-6, 4, size=base.sparse_values.shape)
    mask = rng.random(values.shape) < 0.3
    values[mask] = rng.choice(picks[picks != 0], size=int(mask.sum()))
    sids = np.repeat(np.arange(base.n_sentences), np.diff(base.sent_offsets))
    ids = np.asarray(base.sparse_ids) - base.n_dense
    return NbestCorpus.from_arrays(sids, dense, [f"D{j}" for j in range(base.n_dense)], base.stats,
                                   sparse=(base.sparse_indptr, ids, values),
                                   sparse_names=base.feature_names[base.n_dense:])


@pytest.mark.parametrize("seed", range(6))
def test_compiled_pro_lines_equal_the_pro_data_writer(seed, tmp_path):
    from tests.reference.pro_data_writer import pro_data_from_pairs, write_pro_data

    corpus = odd_values_store(seed)
    rng = np.random.default_rng(seed)
    n = corpus.n_hypotheses
    better, worse = rng.integers(0, n, size=40), rng.integers(0, n, size=40)
    write_pro_data(tmp_path / "want", pro_data_from_pairs(corpus, better, worse))
    got = _pro.format_pro_lines(corpus.dense, corpus.sparse_indptr, corpus.sparse_ids, corpus.sparse_values,
                                better.astype(np.int64), worse.astype(np.int64), *corpus.space.names.to_arrays())
    assert got == (tmp_path / "want").read_bytes()
    assert _pro.format_pro_lines(corpus.dense, corpus.sparse_indptr, corpus.sparse_ids, corpus.sparse_values,
                                 np.zeros(0, np.int64), np.zeros(0, np.int64),
                                 *corpus.space.names.to_arrays()) == b""


def test_a_one_shot_run_from_uniform_weights_recovers_the_gold_weights():
    """Hopkins & May's synthetic set, noiseless: the pull toward a poor start must not hold
    PRO there (with the start at its own scale, cosine 0.75; docs/reproductions/galley-2013.md)."""
    from mtplug.synthetic import cosine, make_synthetic

    corpus, w_star = make_synthetic(200, 100, 10, seed=3)
    res = Pro().optimize(corpus, np.ones(10), 1)
    assert cosine(res.weights, w_star) > 0.99


def test_hopkins_may_interpolate_with_the_start_as_given():
    # without a pull toward the start (c_start inf) the classifier does not see the start,
    # and Ψ interpolates with the start as given, not shrunk to the pairs' scale: Hopkins &
    # May's PRO (docs/reproductions/method.md)
    from mtplug.optimizers.pro import Pro
    from tests.reference.random_store import random_store

    corpus = random_store(4, (6, 9, 5, 8), 3, 5, gaussian=True)
    start = np.random.default_rng(2).normal(size=corpus.n_features) * 50.0     # pair margins far above 1
    kw = dict(c_start=float("inf"), length_z=0.0)
    classifier = Pro(psi=1.0, **kw).optimize(corpus, start, 3).weights
    hm = Pro(psi=0.1, **kw).optimize(corpus, start, 3).weights
    np.testing.assert_allclose(hm, 0.1 * classifier + 0.9 * start, rtol=1e-12, atol=1e-12)
