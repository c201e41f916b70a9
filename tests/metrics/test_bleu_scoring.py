"""BLEU scored from sufficient statistics: the pyx/_bleu kernels and mtplug.metrics.bleu.

- hand-computed tables (arithmetic shown) including the Moses mert/BleuScorerTest.cpp cases;
- property tests: every sentence variant equals the slow oracle in
  tests/reference/bleu_reference.py to rtol 1e-12, on random and degenerate rows;
- corpus BLEU from statistics counted here in plain Python equals sacrebleu
  ``BLEU(tokenize='none', smooth_method='none', effective_order=False)``;
- the Python/Cython boundary: dtype mismatch errors, validation, enum mirroring.
"""

from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sacrebleu.metrics import BLEU

from mtplug._ext import _bleu
from mtplug.metrics.bleu import (
    N_STATS,
    NGRAM_ORDER,
    SENTENCE_BLEU_VARIANTS,
    BleuScore,
    corpus_bleu_from_stats,
    sentence_bleu,
)
from tests.reference import bleu_reference as ref

EPSILON = 1e-9
#: kernel vs oracle: relative tolerance, and an absolute floor for results in the
#: subnormal range (exp(x) for x < -708), where a relative bound is meaningless
RTOL = 1e-12
ATOL_SUBNORMAL = 1e-300

VARIANTS = list(SENTENCE_BLEU_VARIANTS)

# ---------------------------------------------------------------------------------------
# Hand-computed cases. Row layout: m1 t1 m2 t2 m3 t3 m4 t4 ref_len; h = t1, r = ref_len/div.
# ---------------------------------------------------------------------------------------

#: mosesdecoder mert/BleuScorerTest.cpp (calculate_actual_score, sentence_level_bleu)
MOSES_ROW = [6, 6, 4, 5, 2, 4, 1, 3, 7]
#: (variant, Moses call, value asserted there with BOOST_CHECK_CLOSE(..., 0.01), i.e. 0.01 %)
MOSES_BLEU_SCORER_TEST = [
    ("bleu", "BleuScorer::calculateScore(stats)", 0.5115),
    ("moses-sentence-bleu", "smoothedSentenceBleu(stats)", 0.5985),
    ("nakov", "smoothedSentenceBleu(stats, 1.0, true)", 0.5067),
]
# (smoothedSentenceBleu(stats, 0.5) = 0.5624 is also asserted there: a smoothing constant
# of 0.5 is no variant of ours.)

SHORT_ROW = [2, 3, 1, 2, 0, 1, 0, 0, 4]  # h = 3, r = 4, no trigram match, no 4-gram at all
SHORT_REF_ROW = [2, 3, 1, 2, 0, 1, 0, 0, 2]  # h = 3, r = 2 < 4: cdec scores only M = 2 orders
AVERAGE_ROW = [4, 5, 3, 4, 2, 3, 1, 2, 17]  # with divisor 3: r = 17/3 (reflen=average, 3 refs)
FRACTIONAL_REF_ROW = [1, 1, 0, 0, 0, 0, 0, 0, 2]  # with divisor 3: r = 2/3, cdec M = ceil(2/3) = 1
NO_UNIGRAM_ROW = [0, 3, 0, 2, 0, 1, 0, 0, 3]  # h = r = 3, nothing matches
ZERO_ROW = [0] * 9  # empty hypothesis, empty reference
EMPTY_HYP_ROW = [0, 0, 0, 0, 0, 0, 0, 0, 5]  # empty hypothesis, r = 5

#: (case id, row, ref_len_divisor, variant, expected BLEU written as its arithmetic)
SENTENCE_CASES = [
    # p = 6/6 4/5 2/4 1/3, prod = 2/15; BP = exp(1 - 7/6)
    ("moses-row/bleu", MOSES_ROW, 1, "bleu", (2 / 15) ** 0.25 * math.exp(1 - 7 / 6)),
    # p = 6/6 (unsmoothed), 5/6 3/5 2/4; prod = 1/4
    ("moses-row/bleu+1", MOSES_ROW, 1, "bleu+1", (1 / 4) ** 0.25 * math.exp(1 - 7 / 6)),
    # p = 7/7 5/6 3/5 2/4; prod = 1/4
    ("moses-row/moses", MOSES_ROW, 1, "moses-sentence-bleu", (1 / 4) ** 0.25 * math.exp(1 - 7 / 6)),
    # same precisions, BP = exp(1 - (7 + 1)/6)
    ("moses-row/nakov", MOSES_ROW, 1, "nakov", (1 / 4) ** 0.25 * math.exp(1 - 8 / 6)),
    # r = 7 >= 4: M = 4, as bleu+1
    ("moses-row/stupid", MOSES_ROW, 1, "stupid", (1 / 4) ** 0.25 * math.exp(1 - 7 / 6)),
    ("moses-row/fixed-stupid", MOSES_ROW, 1, "fixed-stupid", (1 / 4) ** 0.25 * math.exp(1 - 8 / 6)),
    # m3 = 0
    ("short/bleu", SHORT_ROW, 1, "bleu", 0.0),
    # p = 2/3, (1+1)/(2+1), (0+1)/(1+1), (0+1)/(0+1): prod = 2/9; BP = exp(1 - 4/3)
    ("short/bleu+1", SHORT_ROW, 1, "bleu+1", (2 / 9) ** 0.25 * math.exp(1 - 4 / 3)),
    # p = 3/4 2/3 1/2 1/1: prod = 1/4
    ("short/moses", SHORT_ROW, 1, "moses-sentence-bleu", (1 / 4) ** 0.25 * math.exp(1 - 4 / 3)),
    ("short/nakov", SHORT_ROW, 1, "nakov", (1 / 4) ** 0.25 * math.exp(1 - 5 / 3)),
    ("short/stupid", SHORT_ROW, 1, "stupid", (2 / 9) ** 0.25 * math.exp(1 - 4 / 3)),
    ("short/fixed-stupid", SHORT_ROW, 1, "fixed-stupid", (2 / 9) ** 0.25 * math.exp(1 - 5 / 3)),
    # cdec, r = 2: M = 2, weights 1/2: p = 2/3, 2/3 -> 2/3; BP(3, 2) = 1
    ("short-ref/stupid", SHORT_REF_ROW, 1, "stupid", 2 / 3),
    # BP(3, 2 + 1) = 1 still
    ("short-ref/fixed-stupid", SHORT_REF_ROW, 1, "fixed-stupid", 2 / 3),
    # Lin & Och keeps N = 4: p = 2/3 2/3 1/2 1 -> (2/9)^(1/4)
    ("short-ref/bleu+1", SHORT_REF_ROW, 1, "bleu+1", (2 / 9) ** 0.25),
    # r = 17/3, h = 5: p = 4/5 3/4 2/3 1/2 -> prod = 1/5; BP = exp(1 - 17/15)
    ("average/bleu", AVERAGE_ROW, 3, "bleu", (1 / 5) ** 0.25 * math.exp(1 - 17 / 15)),
    # p = 5/6 4/5 3/4 2/3 -> prod = 1/3; BP = exp(1 - (17/3 + 1)/5) = exp(1 - 4/3)
    ("average/nakov", AVERAGE_ROW, 3, "nakov", (1 / 3) ** 0.25 * math.exp(1 - 4 / 3)),
    # r = 2/3: M = 1, p1 = 1/1; BP(1, 2/3) = 1
    ("fractional-ref/stupid", FRACTIONAL_REF_ROW, 3, "stupid", 1.0),
    # BP(1, 2/3 + 1) = exp(1 - 5/3)
    ("fractional-ref/fixed-stupid", FRACTIONAL_REF_ROW, 3, "fixed-stupid", math.exp(1 - 5 / 3)),
    # no unigram match: 0 for every variant that does not smooth unigrams
    ("no-unigram/bleu", NO_UNIGRAM_ROW, 1, "bleu", 0.0),
    ("no-unigram/bleu+1", NO_UNIGRAM_ROW, 1, "bleu+1", 0.0),
    ("no-unigram/stupid", NO_UNIGRAM_ROW, 1, "stupid", 0.0),
    ("no-unigram/fixed-stupid", NO_UNIGRAM_ROW, 1, "fixed-stupid", 0.0),
    # p = 1/4 1/3 1/2 1/1 -> prod = 1/24; BP(3, 3) = 1
    ("no-unigram/moses", NO_UNIGRAM_ROW, 1, "moses-sentence-bleu", (1 / 24) ** 0.25),
    # BP(3, 3 + 1) = exp(1 - 4/3)
    ("no-unigram/nakov", NO_UNIGRAM_ROW, 1, "nakov", (1 / 24) ** 0.25 * math.exp(1 - 4 / 3)),
    # all zero: every p is 1/1 for Moses and h = r = 0 means no BP (Moses: 0/0 is NaN, not < 0)
    ("zero/bleu", ZERO_ROW, 1, "bleu", 0.0),
    ("zero/bleu+1", ZERO_ROW, 1, "bleu+1", 0.0),
    ("zero/moses", ZERO_ROW, 1, "moses-sentence-bleu", 1.0),
    # BP(0, 0 + 1) = 0
    ("zero/nakov", ZERO_ROW, 1, "nakov", 0.0),
    ("zero/stupid", ZERO_ROW, 1, "stupid", 0.0),
    ("zero/fixed-stupid", ZERO_ROW, 1, "fixed-stupid", 0.0),
    # empty hypothesis, r = 5: BP(0, 5) = 0 for all (Moses: 1 - 5/0 = -inf)
    ("empty-hyp/moses", EMPTY_HYP_ROW, 1, "moses-sentence-bleu", 0.0),
    ("empty-hyp/nakov", EMPTY_HYP_ROW, 1, "nakov", 0.0),
    ("empty-hyp/bleu+1", EMPTY_HYP_ROW, 1, "bleu+1", 0.0),
    # ref_len 0, h = 1 with a match: cdec gives 0 (ref_len == 0); Moses p = 2/2, BP(1, 0) = 1
    ("zero-ref/stupid", [1, 1, 0, 0, 0, 0, 0, 0, 0], 1, "stupid", 0.0),
    ("zero-ref/moses", [1, 1, 0, 0, 0, 0, 0, 0, 0], 1, "moses-sentence-bleu", 1.0),
    # BP(1, 0 + 1) = 1
    ("zero-ref/nakov", [1, 1, 0, 0, 0, 0, 0, 0, 0], 1, "nakov", 1.0),
]

#: (case id, rows, ref_len_divisor, expected score, precisions, BP, sys_len, ref_len)
CORPUS_CASES = [
    # totals 7 8 5 6 3 4 2 2 8: prod = 7/8 * 5/6 * 3/4 * 2/2 = 35/64; BP(8, 8) = 1
    ("two-rows", [[3, 4, 2, 3, 1, 2, 1, 1, 4], [4, 4, 3, 3, 2, 2, 1, 1, 4]], 1,
     (35 / 64) ** 0.25, (7 / 8, 5 / 6, 3 / 4, 1.0), 1.0, 8, 8.0),
    # totals 6 7 3 5 1 3 0 1 8: m4 = 0 -> 0; BP = exp(1 - 8/7)
    ("no-4gram-match", [[3, 4, 1, 3, 0, 2, 0, 1, 5], [3, 3, 2, 2, 1, 1, 0, 0, 3]], 1,
     0.0, (6 / 7, 3 / 5, 1 / 3, 0.0), math.exp(1 - 8 / 7), 7, 8.0),
    # the Moses row as a one-row corpus: 0.5115 in BleuScorerTest.cpp
    ("moses", [MOSES_ROW], 1,
     (2 / 15) ** 0.25 * math.exp(1 - 7 / 6), (1.0, 4 / 5, 2 / 4, 1 / 3), math.exp(1 - 7 / 6), 6, 7.0),
    # divisor 3: r = 17/3, h = 5
    ("average", [AVERAGE_ROW], 3,
     (1 / 5) ** 0.25 * math.exp(1 - 17 / 15), (4 / 5, 3 / 4, 2 / 3, 1 / 2), math.exp(1 - 17 / 15), 5, 17 / 3),
    # nothing at all: precisions 0, BP(0, 0) = 1 (as sacrebleu)
    ("all-zero", [ZERO_ROW], 1, 0.0, (0.0, 0.0, 0.0, 0.0), 1.0, 0, 0.0),
    # empty hypotheses, r = 5: BP = 0 (as sacrebleu)
    ("empty-hyps", [EMPTY_HYP_ROW, ZERO_ROW], 1, 0.0, (0.0, 0.0, 0.0, 0.0), 0.0, 0, 5.0),
    # no rows at all
    ("no-rows", np.zeros((0, 9), dtype=np.int32), 1, 0.0, (0.0, 0.0, 0.0, 0.0), 1.0, 0, 0.0),
]


@pytest.mark.parametrize(
    "row, divisor, variant, expected",
    [case[1:] for case in SENTENCE_CASES],
    ids=[case[0] for case in SENTENCE_CASES],
)
def test_sentence_bleu_table(row, divisor, variant, expected):
    got = sentence_bleu(row, variant, ref_len_divisor=divisor)
    assert got.shape == (1,) and got.dtype == np.float64
    assert got[0] == pytest.approx(expected, abs=EPSILON)
    # the oracle agrees with the hand arithmetic too
    assert ref.SENTENCE_VARIANTS[variant](row, divisor) == pytest.approx(expected, abs=EPSILON)


@pytest.mark.parametrize("variant, moses_call, moses_value", MOSES_BLEU_SCORER_TEST)
def test_moses_bleu_scorer_test_values(variant, moses_call, moses_value):
    """mert/BleuScorerTest.cpp checks these to 0.01 % with float arithmetic."""
    got = sentence_bleu(MOSES_ROW, variant)[0]
    assert got == pytest.approx(moses_value, rel=1e-4), moses_call


@pytest.mark.parametrize(
    "rows, divisor, score, precisions, bp, sys_len, ref_len",
    [case[1:] for case in CORPUS_CASES],
    ids=[case[0] for case in CORPUS_CASES],
)
def test_corpus_bleu_table(rows, divisor, score, precisions, bp, sys_len, ref_len):
    result = corpus_bleu_from_stats(rows, ref_len_divisor=divisor)
    assert result.score == pytest.approx(score, abs=EPSILON)
    assert result.precisions == pytest.approx(precisions, abs=EPSILON)
    assert result.brevity_penalty == pytest.approx(bp, abs=EPSILON)
    assert result.sys_len == sys_len and isinstance(result.sys_len, int)
    assert result.ref_len == pytest.approx(ref_len, abs=EPSILON)
    # scoring the summed vector gives the same result
    summed = np.asarray(rows, dtype=np.int64).reshape(-1, N_STATS).sum(axis=0)
    assert corpus_bleu_from_stats(summed, ref_len_divisor=divisor) == result


@pytest.mark.parametrize(
    "hyp_len, ref_len, expected",
    [
        (5, 5, 0.0),  # equal lengths: exp(0)
        (6, 5, 0.0),  # longer hypothesis: no penalty
        (0, 0, 0.0),  # nothing on either side: no penalty
        (0, 5, -math.inf),  # empty hypothesis
        (4, 5, 1 - 5 / 4),
        (3, 17 / 3, 1 - 17 / 9),
    ],
)
def test_log_brevity(hyp_len, ref_len, expected):
    assert _bleu.py_log_brevity(hyp_len, ref_len) == pytest.approx(expected, abs=EPSILON)


# ---------------------------------------------------------------------------------------
# Property tests against the oracle
# ---------------------------------------------------------------------------------------


@st.composite
def free_rows(draw, max_count=60):
    """Any valid row: 0 <= match_n <= total_n, totals unrelated to each other."""
    row = []
    for _ in range(NGRAM_ORDER):
        total = draw(st.integers(0, max_count))
        row += [draw(st.integers(0, total)), total]
    row.append(draw(st.integers(0, min(3 * max_count, 2**31 - 1))))
    return row


@st.composite
def sentence_rows(draw):
    """A row a real sentence can produce: total_n = max(0, h - n + 1)."""
    hyp_len = draw(st.integers(0, 40))
    row = []
    for n in range(1, NGRAM_ORDER + 1):
        total = max(0, hyp_len - n + 1)
        row += [draw(st.integers(0, total)), total]
    row.append(draw(st.integers(0, 60)))
    return row


DEGENERATE_ROWS = st.sampled_from(
    [ZERO_ROW, EMPTY_HYP_ROW, NO_UNIGRAM_ROW, SHORT_ROW, FRACTIONAL_REF_ROW,
     [1, 1, 0, 0, 0, 0, 0, 0, 0], [5, 5, 4, 4, 0, 3, 2, 2, 5], [0, 0, 0, 0, 0, 0, 0, 0, 1]]
)
ANY_ROW = st.one_of(free_rows(), sentence_rows(), DEGENERATE_ROWS, free_rows(max_count=2**31 - 1))
DIVISORS = st.sampled_from([1, 2, 3, 7])


def assert_close(got: float, expected: float):
    assert math.isclose(got, expected, rel_tol=RTOL, abs_tol=ATOL_SUBNORMAL), (got, expected)


@settings(max_examples=300, deadline=None)
@given(rows=st.lists(ANY_ROW, min_size=1, max_size=8), divisor=DIVISORS,
       variant=st.sampled_from(VARIANTS))
def test_sentence_bleu_equals_oracle(rows, divisor, variant):
    got = sentence_bleu(np.array(rows, dtype=np.int64), variant, ref_len_divisor=divisor)
    assert got.shape == (len(rows),)
    for value, row in zip(got, rows):
        assert 0.0 <= value <= 1.0
        assert_close(value, ref.SENTENCE_VARIANTS[variant](row, divisor))


@settings(max_examples=200, deadline=None)
@given(row=ANY_ROW, divisor=DIVISORS, variant=st.sampled_from(VARIANTS))
def test_log_hook_matches_sentence_bleu(row, divisor, variant):
    """The cdef log-domain kernel and the batched def wrapper agree: exp(log) == value."""
    log_value = _bleu.py_sentence_log_bleu(np.array(row, dtype=np.int32), divisor,
                                           SENTENCE_BLEU_VARIANTS[variant])
    assert math.exp(log_value) == sentence_bleu(row, variant, ref_len_divisor=divisor)[0]


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(st.one_of(free_rows(), sentence_rows(), DEGENERATE_ROWS), min_size=0, max_size=12),
       divisor=DIVISORS)
def test_corpus_bleu_equals_oracle(rows, divisor):
    stats = np.array(rows, dtype=np.int32).reshape(-1, N_STATS)
    result = corpus_bleu_from_stats(stats, ref_len_divisor=divisor)
    expected = ref.corpus_bleu(rows, divisor)
    assert_close(result.score, expected["score"])
    assert result.precisions == pytest.approx(expected["precisions"], rel=RTOL, abs=0)
    assert_close(result.brevity_penalty, expected["brevity_penalty"])
    assert result.sys_len == expected["sys_len"]
    assert result.ref_len == pytest.approx(expected["ref_len"], rel=RTOL, abs=0)
    # the compiled kernel alone, on the summed vector
    totals = stats.sum(axis=0, dtype=np.int64)
    assert_close(math.exp(_bleu.corpus_log_bleu(totals, float(divisor))), expected["score"])


@settings(max_examples=100, deadline=None)
@given(rows=st.lists(free_rows(max_count=2**31 - 1), min_size=0, max_size=10))
def test_add_rows_sums_in_int64(rows):
    stats = np.array(rows, dtype=np.int32).reshape(-1, N_STATS)
    out = np.zeros(N_STATS, dtype=np.int64)
    _bleu.add_rows(stats, 1, out)
    assert out.tolist() == [sum(row[k] for row in rows) for k in range(N_STATS)]
    _bleu.add_rows(stats, -1, out)
    assert not out.any()


# ---------------------------------------------------------------------------------------
# Corpus BLEU from statistics equals sacrebleu
# ---------------------------------------------------------------------------------------


def ngram_counts(tokens: list[str], n: int) -> Counter:
    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def count_stats_row(hypothesis: str, references: list[str]) -> list[int]:
    """One stats row, counted the plain way: matches clipped by the highest count of the
    n-gram in any single reference; closest reference length, ties to the shorter."""
    hyp = hypothesis.split()
    refs = [reference.split() for reference in references]
    row = []
    for n in range(1, NGRAM_ORDER + 1):
        hyp_counts = ngram_counts(hyp, n)
        max_ref_counts: Counter = Counter()
        for tokens in refs:
            for ngram, count in ngram_counts(tokens, n).items():
                max_ref_counts[ngram] = max(max_ref_counts[ngram], count)
        row.append(sum(min(count, max_ref_counts[ngram]) for ngram, count in hyp_counts.items()))
        row.append(sum(hyp_counts.values()))
    row.append(min((len(tokens) for tokens in refs), key=lambda length: (abs(length - len(hyp)), length)))
    return row


@st.composite
def corpora(draw):
    """(hypotheses, reference sets): 1-6 segments, 1-3 references, tokens from a small
    alphabet so that n-grams of every order match often."""
    alphabet = "abcde"[:draw(st.integers(2, 5))]
    sentence = st.lists(st.sampled_from(alphabet), max_size=10).map(" ".join)
    n_segments = draw(st.integers(1, 6))
    n_refs = draw(st.integers(1, 3))
    hyps = draw(st.lists(sentence, min_size=n_segments, max_size=n_segments))
    refs = [draw(st.lists(sentence, min_size=n_segments, max_size=n_segments)) for _ in range(n_refs)]
    return hyps, refs


SACREBLEU = BLEU(tokenize="none", smooth_method="none", effective_order=False)


@settings(max_examples=300, deadline=None)
@given(corpus=corpora())
def test_corpus_bleu_equals_sacrebleu(corpus):
    hyps, refs = corpus
    stats = np.array(
        [count_stats_row(hyp, [ref_set[i] for ref_set in refs]) for i, hyp in enumerate(hyps)],
        dtype=np.int32,
    )
    ours = corpus_bleu_from_stats(stats)
    theirs = SACREBLEU.corpus_score(hyps, refs)
    # with smooth_method='none' sacrebleu gives 0 as soon as one precision is 0 (its
    # my_log(0) = -9999999999), which is our "-inf when any match is 0"
    assert ours.score * 100 == pytest.approx(theirs.score, abs=EPSILON)
    assert [100 * p for p in ours.precisions] == pytest.approx(theirs.precisions, abs=EPSILON)
    assert ours.brevity_penalty == pytest.approx(theirs.bp, abs=EPSILON)
    assert ours.sys_len == theirs.sys_len
    assert ours.ref_len == theirs.ref_len
    assert ours.ratio == pytest.approx(theirs.ratio, abs=EPSILON)


def test_format_matches_sacrebleu_layout():
    hyps = ["the cat sat on the mat", "a dog barked at the moon today"]
    refs = [["the cat sat on a mat", "a dog barked at the moon"],
            ["there is a cat on the mat", "the dog barked at the moon"]]
    stats = [count_stats_row(hyp, [ref_set[i] for ref_set in refs]) for i, hyp in enumerate(hyps)]
    ours = corpus_bleu_from_stats(stats)
    theirs = SACREBLEU.corpus_score(hyps, refs)
    assert ours.score > 0
    assert ours.format() == theirs.format()


def test_format_and_as_dict():
    score = corpus_bleu_from_stats(MOSES_ROW)
    assert score.format() == (
        "BLEU = 51.15 100.0/80.0/50.0/33.3 (BP = 0.846 ratio = 0.857 hyp_len = 6 ref_len = 7)"
    )
    averaged = corpus_bleu_from_stats(AVERAGE_ROW, ref_len_divisor=3)
    assert averaged.format().endswith("hyp_len = 5 ref_len = 5.67)")
    as_dict = score.as_dict()
    assert json.loads(json.dumps(as_dict)) == as_dict
    assert as_dict["score"] == score.score and as_dict["precisions"] == list(score.precisions)
    assert set(as_dict) == {"name", "score", "precisions", "brevity_penalty", "ratio", "sys_len", "ref_len"}
    with pytest.raises(AttributeError):
        score.score = 1.0  # frozen
    assert isinstance(score, BleuScore)


# ---------------------------------------------------------------------------------------
# The Python/Cython boundary
# ---------------------------------------------------------------------------------------


def test_variant_codes_mirror_the_kernel_enum():
    assert SENTENCE_BLEU_VARIANTS == _bleu.VARIANT_CODES
    assert set(SENTENCE_BLEU_VARIANTS) == set(ref.SENTENCE_VARIANTS)
    assert _bleu.N_STATS == N_STATS and _bleu.ORDER == NGRAM_ORDER


def test_unknown_variant_code_gives_nan_in_the_kernel():
    out = np.empty(1, dtype=np.float64)
    _bleu.sentence_bleu_rows(np.array([MOSES_ROW], dtype=np.int32), 1.0, len(SENTENCE_BLEU_VARIANTS), out)
    assert math.isnan(out[0])


@pytest.mark.parametrize(
    "call",
    [
        lambda: _bleu.sentence_bleu_rows(np.zeros((2, 9), dtype=np.float64), 1.0, 1, np.empty(2)),
        lambda: _bleu.sentence_bleu_rows(np.zeros((2, 9), dtype=np.int64), 1.0, 1, np.empty(2)),
        lambda: _bleu.sentence_bleu_rows(np.zeros((2, 9), dtype=np.int32), 1.0, 1,
                                         np.empty(2, dtype=np.float32)),
        lambda: _bleu.corpus_log_bleu(np.zeros(9, dtype=np.int32), 1.0),
        lambda: _bleu.add_rows(np.zeros((1, 9), dtype=np.int32), 1, np.zeros(9, dtype=np.int32)),
        lambda: _bleu.py_sentence_log_bleu(np.zeros(9, dtype=np.float64), 1.0, 1),
    ],
    ids=["stats-float64", "stats-int64", "out-float32", "totals-int32", "add-rows-out-int32",
         "hook-float64"],
)
def test_buffer_dtype_mismatch_error(call):
    with pytest.raises(ValueError, match="Buffer dtype mismatch"):
        call()


def test_kernel_rejects_wrong_shapes_and_strides():
    with pytest.raises(ValueError, match="9 columns"):
        _bleu.sentence_bleu_rows(np.zeros((2, 8), dtype=np.int32), 1.0, 1, np.empty(2))
    with pytest.raises(ValueError, match="entries for 2 stats rows"):
        _bleu.sentence_bleu_rows(np.zeros((2, 9), dtype=np.int32), 1.0, 1, np.empty(3))
    with pytest.raises(ValueError, match="9 entries"):
        _bleu.corpus_log_bleu(np.zeros(8, dtype=np.int64), 1.0)
    with pytest.raises(ValueError, match="contiguous"):
        _bleu.sentence_bleu_rows(np.zeros((9, 2), dtype=np.int32).T, 1.0, 1, np.empty(2))


def test_api_converts_dtype_and_layout():
    rows = np.array([MOSES_ROW, SHORT_ROW, ZERO_ROW], dtype=np.int32)
    expected = sentence_bleu(rows, "nakov")
    fortran = np.asfortranarray(rows.astype(np.int64))
    assert np.array_equal(sentence_bleu(fortran, "nakov"), expected)
    assert np.array_equal(sentence_bleu(rows.astype(np.uint16)[::1], "nakov"), expected)
    assert np.array_equal(sentence_bleu(rows.tolist(), "nakov"), expected)
    read_only = rows.copy()
    read_only.setflags(write=False)
    assert np.array_equal(sentence_bleu(read_only, "nakov"), expected)
    assert sentence_bleu(np.zeros((0, 9), dtype=np.int32)).shape == (0,)
    assert sentence_bleu([]).shape == (0,)
    assert corpus_bleu_from_stats([]).score == 0.0


@pytest.mark.parametrize(
    "stats, error, message",
    [
        ([[0.0] * 9], TypeError, "must be integers"),
        ([[True] * 9], TypeError, "must be integers"),
        ([[1] * 8], ValueError, "shape"),
        ([[[1] * 9]], ValueError, "shape"),
        ([MOSES_ROW, [1, 1, 0, 0, 0, 0, 0, 0, -1]], ValueError, "row 1 has a negative count"),
        ([MOSES_ROW, [2, 1, 0, 0, 0, 0, 0, 0, 1]], ValueError, "row 1 has more matches than n-grams"),
        ([[1, 1, 0, 0, 0, 0, 3, 2, 1]], ValueError, "row 0 has more matches"),
    ],
)
def test_invalid_stats_are_rejected(stats, error, message):
    with pytest.raises(error, match=message):
        sentence_bleu(stats)
    with pytest.raises(error, match=message):
        corpus_bleu_from_stats(stats)


@pytest.mark.parametrize("divisor", [0, -1, math.nan, math.inf])
def test_invalid_ref_len_divisor(divisor):
    with pytest.raises(ValueError, match="ref_len_divisor"):
        sentence_bleu(MOSES_ROW, ref_len_divisor=divisor)
    with pytest.raises(ValueError, match="ref_len_divisor"):
        corpus_bleu_from_stats(MOSES_ROW, ref_len_divisor=divisor)


def test_unknown_variant_name():
    with pytest.raises(ValueError, match=r"unknown sentence BLEU variant 'bleu\+2'.*nakov"):
        sentence_bleu(MOSES_ROW, "bleu+2")


def test_sentence_stats_must_fit_int32_but_corpus_totals_need_not():
    big = [0, 2**31, 0, 0, 0, 0, 0, 0, 1]
    with pytest.raises(ValueError, match="int32"):
        sentence_bleu(np.array(big, dtype=np.int64))
    # an already summed vector is int64: beyond int32 is fine
    summed = np.array([2**31, 2**32, 2**31, 2**32 - 1, 2**30, 2**32 - 2, 2**29, 2**32 - 3, 2**32],
                      dtype=np.int64)
    result = corpus_bleu_from_stats(summed)
    assert_close(result.score, ref.corpus_bleu([summed.tolist()])["score"])
    assert result.sys_len == 2**32


def test_corpus_totals_are_summed_in_int64():
    # 3 rows of 2**30 tokens each overflow int32 when summed
    row = [2**30, 2**30, 2**30 - 1, 2**30 - 1, 2**30 - 2, 2**30 - 2, 2**30 - 3, 2**30 - 3, 2**30]
    result = corpus_bleu_from_stats(np.array([row] * 3, dtype=np.int32))
    assert result.sys_len == 3 * 2**30
    assert result.score == pytest.approx(1.0, abs=EPSILON)
