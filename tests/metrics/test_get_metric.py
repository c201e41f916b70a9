"""mtplug.metrics.get_metric: the CLI's metrics over strings, equal to sacrebleu (its
0-100 scale, every mtplug score's)."""

from __future__ import annotations

import numpy as np
import pytest
import sacrebleu

from mtplug.metrics import METRIC_OPTIONS, get_metric

HYPS = ["the cat sat on the mat", "a dog barked at the moon", "", "Hello World , again"]
REFS = [["the cat sat on a mat", "the dog barked at the moon !", "nothing here", "hello world , again"],
        ["a cat sat on the mat", "a dog barks at the moon", "", "Hello world again ,"]]


def test_corpus_scores_equal_sacrebleu():
    assert get_metric("ter").corpus_score(HYPS, REFS) == pytest.approx(
        sacrebleu.corpus_ter(HYPS, REFS).score, abs=1e-10)
    assert get_metric("chrf").corpus_score(HYPS, REFS) == pytest.approx(
        sacrebleu.corpus_chrf(HYPS, REFS).score, abs=1e-7)
    assert get_metric("chrf++").corpus_score(HYPS, REFS) == pytest.approx(
        sacrebleu.CHRF(word_order=2).corpus_score(HYPS, REFS).score, abs=1e-7)
    assert get_metric("bleu").corpus_score(HYPS, REFS) == pytest.approx(
        sacrebleu.corpus_bleu(HYPS, REFS, tokenize="none").score, abs=1e-7)
    low = sacrebleu.corpus_bleu(HYPS, REFS, tokenize="none", lowercase=True).score
    assert get_metric("bleu", lowercase=True).corpus_score(HYPS, REFS) == pytest.approx(low, abs=1e-7)


def test_interpolation_is_the_weighted_sum_of_goodness():
    bleu = get_metric("bleu").corpus_score(HYPS, REFS)
    ter = get_metric("ter").corpus_score(HYPS, REFS)
    assert get_metric("bleu:0.6,ter:0.4").corpus_score(HYPS, REFS) == pytest.approx(0.6 * bleu + 0.4 * (100 - ter))
    assert get_metric("ter-bleu").corpus_score(HYPS, REFS) == pytest.approx((ter - bleu) / 2)


def test_sentence_scores_equal_sacrebleu_sentence_scores():
    got = get_metric("ter").sentence_scores(HYPS, REFS)
    want = [sacrebleu.sentence_ter(h, [r[i] for r in REFS]).score for i, h in enumerate(HYPS)]
    np.testing.assert_allclose(got, want, atol=1e-10)
    got = get_metric("chrf").sentence_scores(HYPS, REFS)
    want = [sacrebleu.sentence_chrf(h, [r[i] for r in REFS]).score for i, h in enumerate(HYPS)]
    np.testing.assert_allclose(got, want, atol=1e-7)


def test_statistics_are_the_bound_metric_rows():
    rows, metric = get_metric("wer").statistics(HYPS, REFS)
    assert rows.shape == (4, metric.n_stats) and rows.dtype == np.int32
    assert metric.name == "wer"


def test_moses_case_folds_ascii_only():
    hyps, refs = ["ÄPFEL und BIRNEN"], [["äpfel und birnen"]]
    assert get_metric("per", lowercase=True).corpus_score(hyps, refs) == 0.0
    assert get_metric("per", lowercase=True, moses_case=True).corpus_score(hyps, refs) == pytest.approx(100 / 3)


@pytest.mark.parametrize("name,options,message", [
    ("nope", {}, "unknown metric nope"),
    ("ter", {"beta": 3}, "unknown metric option(s) beta"),
    ("ter", {"reflen": "shortest"}, "reflen is a BLEU option"),
    ("per", {"moses_case": True}, "give lowercase=True"),
    ("bleu", {"reflen": "longest"}, "reflen must be one of"),
])
def test_bad_names_and_options(name, options, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        get_metric(name, **options)


def test_bad_text():
    with pytest.raises(ValueError, match="reference streams of 1 sentences"):
        get_metric("bleu").corpus_score(["a"], [["a", "b"]])
    with pytest.raises(ValueError, match="line break"):
        get_metric("bleu").corpus_score(["a\nb"], [["a"]])
    assert set(METRIC_OPTIONS) == {"reflen", "lowercase", "moses_case"}
