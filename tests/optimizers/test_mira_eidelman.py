"""Eidelman (2012)'s parts of online MIRA: the MB fear list (``fear_list``), BLEU in the
context of the 1-best document as cdec's kbest_cut_mira (``sentence_metric="doc-1best"``) and the per-pass oracle and prediction
scores, against the scalar references in tests/reference/mira_reference.py."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplug._ext import _mira
from mtplug.cli import EXIT_INPUT_ERROR, main
from mtplug.metrics.sentence import hypothesis_scores
from mtplug.optimizers.mira import FEAR, HOPE, Mira
from tests.reference import mira_reference as ref
from tests.reference.random_store import random_store

STRATEGIES = [("lu", "mc"), ("hope", "fear"), ("hope", "pb"), ("lu", "fear"), ("hope", "mc")]


def feats(corpus):
    return (corpus.dense, corpus.sparse_indptr, corpus.sparse_ids, corpus.sparse_values)


# ---------------------------------------------------------------- MB: the fear list

@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(0, 10), strategy=st.sampled_from(STRATEGIES),
       sizes=st.lists(st.integers(1, 12), min_size=1, max_size=7))
def test_fear_list_pass_equals_reference(seed, k, strategy, sizes):
    # feature values are multiples of 0.5 (random_store): many rows tie on the model score,
    # so the K-th best score is often shared and the lowest rows must win
    corpus = random_store(seed, tuple(sizes))
    rows, gains = ref.full_rows(corpus), hypothesis_scores(corpus, "bleu+1")
    offsets = corpus.sent_offsets.tolist()
    order = np.random.default_rng(seed).permutation(corpus.n_sentences).astype(np.int64)
    hm, hg = HOPE[strategy[0]](1.5)
    fm, fg = FEAR[strategy[1]](1.5)
    F, S = corpus.n_features, corpus.n_sentences
    # a start of 1/8: the first pass's scores are exact in both, so their ties are the same ties
    w, u, state = np.full(F, 0.125), np.zeros(F), np.zeros(2, np.int64)
    w_ref, history = [0.125] * F, []
    for _ in range(2):
        chosen = np.full((S, 3), -1, np.int64)
        _mira.mira_pass(*feats(corpus), gains, corpus.sent_offsets, order, hm, hg, fm, fg, 0.05, w, u,
                        np.empty(2 * max(sizes)), state, fear_list=k, chosen=chosen)
        chosen_ref: dict = {}
        w_ref = ref.mira_pass(rows, gains.tolist(), offsets, order.tolist(), (hm, hg), (fm, fg), 0.05, w_ref,
                              history, k, chosen_ref)
        assert chosen.tolist() == [list(chosen_ref[s]) for s in range(S)]
        np.testing.assert_allclose(w, w_ref, rtol=1e-12, atol=1e-12)
    # (no count of steps: a loss of about 1e-17 is a step in one and none in the other)


def test_fear_list_restricts_only_the_fear():
    # one sentence, 3 rows: model scores 3, 2, 1 (w = 1 on the one feature); gains 0, 0.5, 1.
    # mc (max cost) takes row 0 (gain 0) in all; lu (max gain) takes row 2 whatever K
    one = (np.array([[3.0], [2.0], [1.0]]), np.zeros(4, np.int64), np.empty(0, np.int32), np.empty(0))
    offsets = np.array([0, 3], np.int64)
    gains = np.array([0.0, 0.5, 1.0])
    for k, fear in ((0, 0), (1, 0), (2, 0), (3, 0)):
        chosen = np.empty((1, 3), np.int64)
        _mira.mira_pass(*one, gains, offsets, np.zeros(1, np.int64), 0.0, 1.0, 0.0, -1.0,
                        1e-9, np.ones(1), np.zeros(1), np.empty(6), np.zeros(2, np.int64), fear_list=k, chosen=chosen)
        assert chosen.tolist() == [[2, fear, 0]]              # row 0: the model 1-best
    # fear = max model + cost among the K best: with K = 1 the model 1-best (row 0) only
    gains = np.array([0.0, 0.0, 0.0])
    gains[0] = 1.0                                          # row 0 is the best: fear moves away from it
    for k, fear in ((0, 1), (1, 0), (2, 1)):
        chosen = np.empty((1, 3), np.int64)
        _mira.mira_pass(*one, gains, offsets, np.zeros(1, np.int64), 1.0, 1.0, 1.0, -2.0,
                        1e-9, np.ones(1), np.zeros(1), np.empty(6), np.zeros(2, np.int64), fear_list=k, chosen=chosen)
        assert chosen.tolist() == [[0, fear, 0]]


#: option sets whose pass must not change with the fear list: 0 (off) and a list longer
#: than every sentence's take the kernel's unrestricted path (before the option existed,
#: these four gave the same weights on the machine it was written on; a hash of them
#: would tie the test to one compiler, so the invariant is tested instead)
OPTION_SETS = [(), (("sentence_metric", "bleu+1"),), (("shards", 3), ("hope", "lu"), ("fear", "mc")),
               (("fear", "pb"), ("order", "fixed"))]


@pytest.mark.parametrize("options", OPTION_SETS)
def test_fear_list_zero_and_a_full_list_are_the_unrestricted_pass(toy, options):
    corpus, start = toy
    a = Mira(passes=5, **dict(options)).optimize(corpus, start, 3)
    b = Mira(passes=5, fear_list=0, **dict(options)).optimize(corpus, start, 3)
    c = Mira(passes=5, fear_list=100, **dict(options)).optimize(corpus, start, 3)    # >= every list: all rows
    assert a.weights.tobytes() == b.weights.tobytes() == c.weights.tobytes()


def test_fear_list_changes_the_result_and_is_deterministic(toy):
    corpus, start = toy
    runs = [Mira(passes=4, fear="mc", fear_list=10, shards=s).optimize(corpus, start, 5, threads=t)
            for s, t in ((1, 1), (1, 2), (3, 1), (3, 3))]
    assert runs[0].weights.tobytes() == runs[1].weights.tobytes()
    assert runs[2].weights.tobytes() == runs[3].weights.tobytes()
    assert runs[0].weights.tobytes() != Mira(passes=4, fear="mc").optimize(corpus, start, 5).weights.tobytes()
    assert runs[0].info["fear_list"] == 10


# ---------------------------------------------------------------- doc-1best gains

@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 10_000), sizes=st.lists(st.integers(1, 8), min_size=1, max_size=8),
       divisor=st.sampled_from([1.0, 2.0, 3.0]), context=st.sampled_from([0.5, 1.0]),
       scale=st.sampled_from([1.0, 7.0]), threads=st.integers(1, 3), alone=st.booleans())
def test_doc_gains_equal_reference(seed, sizes, divisor, context, scale, threads, alone):
    corpus = random_store(seed, tuple(sizes))
    rng = np.random.default_rng(seed)
    offsets = corpus.sent_offsets
    one_best = None if alone else \
        np.array([rng.integers(offsets[s], offsets[s + 1]) for s in range(len(sizes))], np.int64)
    out = np.full(corpus.n_hypotheses, np.nan)
    _mira.doc_gains(corpus.stats, offsets, one_best, divisor, context, scale, out, threads)
    expected = ref.doc_gains(corpus.stats.tolist(), offsets.tolist(), None if alone else one_best.tolist(),
                             divisor, context, scale)
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-14)


@settings(max_examples=200, deadline=None)
@given(t=st.lists(st.integers(0, 40), min_size=9, max_size=9), half=st.booleans(),
       divisor=st.sampled_from([1.0, 3.0]))
def test_cdec_bleu_equals_reference(t, half, divisor):
    # matches may exceed totals here: the formula, not a store's consistency, is under test
    row = np.array(t, np.float64) * (0.5 if half else 1.0)
    assert _mira.py_cdec_bleu(row, divisor) == pytest.approx(ref.cdec_bleu(row.tolist(), divisor), rel=1e-12)


def test_cdec_bleu_by_hand():
    # 4 words, 3 unigram matches, 1 bigram, no trigram (0.01), no 4-gram n-grams at all
    # (skipped, still /4); reference 5 words: BP exp(1 - 5/4)
    t = np.array([3, 4, 1, 3, 0, 2, 0, 0, 5], np.float64)
    expected = np.exp((np.log(3 / 4) + np.log(1 / 3) + np.log(0.01 / 2)) / 4 + 1 - 5 / 4)
    assert _mira.py_cdec_bleu(t) == pytest.approx(expected, rel=1e-14)
    assert _mira.py_cdec_bleu(np.zeros(9)) == 1.0                    # nothing at all: exp(0)
    assert _mira.py_cdec_bleu(np.array([0, 0, 0, 0, 0, 0, 0, 0, 3.0])) == 0.0    # empty hypothesis


def test_doc_gains_reject_a_row_of_another_sentence():
    corpus = random_store(1, (2, 3))
    with pytest.raises(ValueError, match="not a row of sentence 1"):
        _mira.doc_gains(corpus.stats, corpus.sent_offsets, np.array([0, 1], np.int64), 1.0, 0.5, 1.0,
                        np.empty(5), 1)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("hope,fear,k", [("hope", "fear", 0), ("lu", "mc", 2), ("hope", "pb", 3)])
def test_doc_1best_mira_equals_reference(seed, hope, fear, k):
    corpus = random_store(seed + 40, (5, 1, 8, 3, 6, 4))
    F, S = corpus.n_features, corpus.n_sentences
    res = Mira(passes=3, c=0.05, hope=hope, fear=fear, alpha=1.5, order="fixed", average="last",
               sentence_metric="doc-1best", fear_list=k)._optimize(corpus, np.full(F, 0.1), 0)
    w, history, passes = ref.mira_doc_1best(ref.full_rows(corpus), corpus.stats.tolist(),
                                            corpus.sent_offsets.tolist(), [list(range(S))] * 3,
                                            HOPE[hope](1.5), FEAR[fear](1.5), 0.05, [0.1] * F,
                                            float(corpus.ref_len_divisor), k)
    np.testing.assert_allclose(res.weights, w, rtol=1e-10, atol=1e-12)
    assert res.info["steps"] == len(history)
    # the per-pass oracle and prediction scores: the corpus metric of the reference's chosen rows
    for p, (hopes, fears) in enumerate(passes):
        assert res.info["oracle_per_pass"][p] == corpus.metric.objective(corpus.corpus_stats(np.array(hopes)))
        assert res.info["prediction_per_pass"][p] == corpus.metric.objective(corpus.corpus_stats(np.array(fears)))


def test_doc_1best_needs_bleu_statistics():
    from mtplug.synthetic import make_synthetic

    linear, _ = make_synthetic(20, 10, 3, seed=1)
    with pytest.raises(ValueError, match="doc-1best gains need a store of BLEU statistics"):
        Mira(passes=1, sentence_metric="doc-1best").optimize(linear, np.zeros(3), 0)


def test_doc_1best_on_the_toy_set_is_deterministic(toy):
    corpus, start = toy
    a = Mira(sentence_metric="doc-1best", shards=2).optimize(corpus, start, 1, threads=1)
    b = Mira(sentence_metric="doc-1best", shards=2).optimize(corpus, start, 1, threads=2)
    assert a.weights.tobytes() == b.weights.tobytes()
    assert a.info["sentence_metric"] == "doc-1best" and a.info["background"] is None
    assert a.score > 100 * corpus.metric_of(start) + 5


# ---------------------------------------------------------------- per-pass oracle and prediction

def test_per_pass_scores_are_the_metric_of_the_chosen_rows(toy):
    # each pass's chosen rows, replayed through the kernel with the weights the pass starts
    # from, give the numbers in info (0-100, as corpus.bleu_of_rows and mtplug score)
    corpus, start = toy
    opt = Mira(passes=3, order="fixed", shards=1, sentence_metric="bleu+1", fear_list=20)
    res = opt.optimize(corpus, start, 0)
    gains = hypothesis_scores(corpus, "bleu+1")
    S, F = corpus.n_sentences, corpus.n_features
    w, u, state = start.copy(), np.zeros(F), np.zeros(2, np.int64)
    for p in range(3):
        chosen = np.empty((S, 3), np.int64)
        _mira.mira_pass(*feats(corpus), gains, corpus.sent_offsets, np.arange(S, dtype=np.int64),
                        *HOPE["hope"](1.0), *FEAR["fear"](1.0), 0.01, w, u, np.empty(200), state, fear_list=20,
                        chosen=chosen)
        assert res.info["oracle_per_pass"][p] == pytest.approx(100 * corpus.bleu_of_rows(chosen[:, 0]).score,
                                                               rel=1e-12)
        assert res.info["prediction_per_pass"][p] == pytest.approx(100 * corpus.bleu_of_rows(chosen[:, 1]).score,
                                                                   rel=1e-12)
    assert res.info["oracle_per_pass"][-1] > res.info["prediction_per_pass"][-1]
    assert len(res.info["oracle_per_pass"]) == len(res.info["prediction_per_pass"]) == 3


# ---------------------------------------------------------------- the CLI

def test_cli_prints_the_per_pass_scores(example_data, tmp_path, capsys):
    import json

    d = example_data
    assert main(["optimize", "mira", "-q", "--nbest", str(d / "run1.best100.out.gz"), "--ref", str(d / "ref.0"),
                 "--weights", str(d / "run1.init.opt"), "-o", str(tmp_path / "w"), "--passes", "2",
                 "--fear-list", "10", "--sentence-metric", "doc-1best"]) == 0
    record = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert record["fear_list"] == 10 and record["sentence_metric"] == "doc-1best"
    assert len(record["oracle_per_pass"]) == len(record["prediction_per_pass"]) == 2
    assert all(0 < x <= 100 for x in record["oracle_per_pass"] + record["prediction_per_pass"])


@pytest.mark.parametrize("extra, message", [
    (["--fear-list", "-1"], "mira: --fear-list must be an integer >= 0 (0: all hypotheses), got -1"),
    (["--fear-list", "x"], "--fear-list: invalid int value: 'x'"),
    (["--sentence-metric", "doc-best"], "--sentence-metric: invalid choice: 'doc-best'"),
    (["--sentence-metric", "doc-1best", "--decay", "0.5"], "decay applies only with pseudo-doc gains"),
])
def test_bad_option_values(write, tmp_path, capsys, extra, message):
    nbest = write("nbest", "0 ||| a b c ||| LM0= -1 TM0= 1 2 ||| 0\n0 ||| a b d ||| LM0= -2 TM0= 1 1 ||| 0\n"
                           "1 ||| x y ||| LM0= -1 TM0= 0 1 ||| 0\n1 ||| x z ||| LM0= -3 TM0= 2 1 ||| 0\n")
    code = main(["optimize", "mira", "-q", "--nbest", nbest, "--ref", write("ref", "a b c\nx y\n"),
                 "--weights", write("init", "0.5 0.2 0.2\n"), "--output", str(tmp_path / "out"), *extra])
    assert code == EXIT_INPUT_ERROR
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and ": error: " in lines[0] and message in lines[0], lines
