"""chrF and chrF++: the compiled statistics against the slow reference, and corpus
scores against sacrebleu's CHRF over random hypotheses and references."""

from __future__ import annotations

import numpy as np
import pytest
import sacrebleu
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplug._ext._nbest_scan import Vocabulary
from mtplug.corpus import NbestCorpus
from mtplug.formats.references import References, encode_references, tokenize
from mtplug.metrics.chrf import Chrf
from tests.reference import chrf_reference as ref

# letters with case, punctuation (chrF++ splits it off), non-BMP and combining code
# points, Greek sigma (context-dependent lowercasing) and a no-break space inside a
# token (a word to Moses's tokenizer, whitespace to sacrebleu)
ALPHABET = list("aAbBcß.,!?'\"-ΣσςΟ") + ["😀", "e\u0301", "İ", "x\u00a0y"]
word = st.lists(st.sampled_from(ALPHABET), min_size=1, max_size=5).map("".join)
sentence = st.lists(word, min_size=0, max_size=10).map(" ".join)


def stats_of(hyps: list[str], refsets: list[list[str]], metric: Chrf, threads: int = 1) -> np.ndarray:
    vocab = Vocabulary()
    ptr, ids = [0], []
    for h in hyps:
        ids += [vocab.add(t.encode()) for t in tokenize(h)]
        ptr.append(len(ids))
    enc = encode_references(References([list(r) for r in zip(*refsets)], "refs"), vocab)
    n = len(hyps)
    return metric.stats(np.array(ptr), np.array(ids, np.int32), np.arange(n + 1), np.arange(n), enc,
                        vocab.words(), threads=threads)


@settings(max_examples=150, deadline=None)
@given(data=st.data(), n_refs=st.integers(1, 3), word_order=st.sampled_from([0, 1, 2]),
       char_order=st.integers(1, 6), lowercase=st.booleans())
def test_statistics_equal_the_reference(data, n_refs, word_order, char_order, lowercase):
    n = data.draw(st.integers(1, 5))
    hyps = [data.draw(sentence) for _ in range(n)]
    refsets = [[data.draw(sentence) for _ in range(n)] for _ in range(n_refs)]
    metric = Chrf(char_order=char_order, word_order=word_order, lowercase=lowercase)
    got = stats_of(hyps, refsets, metric)
    want = [ref.sentence_stats(h, [r[i] for r in refsets], char_order, word_order, 2.0, lowercase)
            for i, h in enumerate(hyps)]
    np.testing.assert_array_equal(got, np.array(want, dtype=np.int32).reshape(got.shape))


@settings(max_examples=150, deadline=None)
@given(data=st.data(), n_refs=st.integers(1, 3), word_order=st.sampled_from([0, 2]), lowercase=st.booleans())
def test_corpus_chrf_equals_sacrebleu(data, n_refs, word_order, lowercase):
    n = data.draw(st.integers(1, 6))
    hyps = [data.draw(sentence) for _ in range(n)]
    refsets = [[data.draw(sentence) for _ in range(n)] for _ in range(n_refs)]
    metric = Chrf(word_order=word_order, lowercase=lowercase)
    ours = metric.corpus_score(stats_of(hyps, refsets, metric).sum(axis=0))
    theirs = sacrebleu.CHRF(word_order=word_order, lowercase=lowercase).corpus_score(hyps, refsets)
    assert ours * 100 == pytest.approx(theirs.score, abs=1e-9)
    assert metric.name == theirs.name


def test_threads_do_not_change_the_statistics():
    # many short sentences with two references keep both threads in the kernel at once
    # (a key shared between threads once made matches wrong only with 2 threads)
    rng = np.random.default_rng(0)
    letters = np.array(list("abcdefg.,"))
    sent = lambda: " ".join("".join(rng.choice(letters, rng.integers(1, 6))) for _ in range(rng.integers(0, 12)))  # noqa: E731
    hyps = [sent() for _ in range(600)]
    refsets = [[sent() for _ in range(600)] for _ in range(2)]
    metric = Chrf(word_order=2)
    want = np.array([ref.sentence_stats(h, [r[i] for r in refsets], 6, 2) for i, h in enumerate(hyps)], np.int32)
    for _ in range(3):
        np.testing.assert_array_equal(stats_of(hyps, refsets, metric, threads=2), want)
    np.testing.assert_array_equal(stats_of(hyps, refsets, metric, threads=1), want)


def test_store_statistics_score_every_hypothesis(tmp_path):
    hyps = ["the small house .", "a big, big house", ""]
    refs = [["the small house ."], ["a big house !"], ["nothing here"]]
    (tmp_path / "hyp").write_text("".join(h + "\n" for h in hyps), encoding="utf-8")
    corpus = NbestCorpus.from_plain(str(tmp_path / "hyp"), References(refs, "refs"))
    metric = Chrf(word_order=2)
    got = metric.store_stats(corpus)
    want = [ref.sentence_stats(h, r, 6, 2) for h, r in zip(hyps, refs)]
    np.testing.assert_array_equal(got, np.array(want, dtype=np.int32))
    assert metric.corpus_score(got.sum(axis=0)) * 100 == pytest.approx(
        sacrebleu.CHRF(word_order=2).corpus_score(hyps, [[r[0] for r in refs]]).score, abs=1e-9)


def test_option_validation():
    for kwargs, msg in [(dict(char_order=0), "char_order"), (dict(char_order=7), "char_order"),
                        (dict(word_order=3), "word_order"), (dict(beta=0), "beta")]:
        with pytest.raises(ValueError, match=msg):
            Chrf(**kwargs)
    with pytest.raises(ValueError, match="expected 18 statistics"):
        Chrf().corpus_score(np.zeros(5))


def test_a_tie_in_exact_arithmetic_goes_to_sacrebleus_rounding():
    # both references give chrF 4.6296...; sacrebleu's order of operations makes the
    # second one larger by an ulp, so its statistics are kept (a case hypothesis found)
    hyp = "ae\u0301e\u0301 bbb"
    refs = ["aaa aaaa", "aaaaa aaabİ aaabİ aİ aaaaa"]
    metric = Chrf(char_order=3, lowercase=True)
    got = stats_of([hyp], [[r] for r in refs], metric)[0].tolist()
    assert got == ref.sentence_stats(hyp, refs, 3, 0, 2.0, True) == [8, 25, 3, 7, 24, 0, 6, 23, 0]
    assert sacrebleu.CHRF(char_order=3, lowercase=True).sentence_score(hyp, refs).score == pytest.approx(
        metric.corpus_score(np.array(got)) * 100, abs=1e-12)
