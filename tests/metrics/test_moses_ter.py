"""Moses's TER (``extractor --sctype TER``, TerScorer + TERCpp): the compiled statistics
against the slow reference (tests/reference/moses_ter_reference.py) and against what
Moses's own extractor wrote (tests/golden/moses_scorers, Moses 34452895; commands in its
README.md), line for line in scores.dat's format."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplug._ext import _moses_ter
from mtplug.formats.references import read_references
from mtplug.metrics.moses_error_rates import METRICS, MosesTer, moses_numbering
from mtplug.metrics.moses_scores_format import format_header, format_stats_line, ter_row
from mtplug.metrics.ter import Ter
from tests.metrics.test_moses_error_rates import GOLDEN, encode, read_nbest_in_order, read_scores_dat
from tests.reference import moses_ter_reference as ref

# few words, so that runs repeat and shifts tie; case pairs for case:false (ASCII only)
WORDS = ["a", "b", "c", "A", "ä", "Ä"]
word_lists = st.lists(st.sampled_from(WORDS), min_size=0, max_size=14)


@st.composite
def hypotheses_of(draw, refs: list[list[str]]):
    """A hypothesis: random words, or one of the references with runs moved and words
    changed (so that TER's shifts are worth trying)."""
    if draw(st.booleans()) or not any(refs):
        return draw(word_lists)
    words = list(draw(st.sampled_from([r for r in refs if r])))
    for _ in range(draw(st.integers(0, 3))):
        a = draw(st.integers(0, len(words) - 1))
        b = draw(st.integers(a + 1, min(len(words), a + 5)))
        run, rest = words[a:b], words[:a] + words[b:]
        c = draw(st.integers(0, len(rest)))
        words = rest[:c] + run + rest[c:]
    for _ in range(draw(st.integers(0, 2))):
        words.insert(draw(st.integers(0, len(words))), draw(st.sampled_from(WORDS)))
    return words


def reference_rows(runs, refsets, lowercase: bool) -> np.ndarray:
    """The reference's rows, with Moses's word numbering for these references and
    hypotheses (in run order), as an extractor run would number them."""
    vocab = ref.moses_vocabulary(refsets, [h for _, hyps in runs for h in hyps], lowercase)
    rows = [ref.ter_stats(h, refsets[sid], lowercase, vocab) for sid, hyps in runs for h in hyps]
    return np.array(rows, dtype=np.int32).reshape(-1, 3)


# ------------------------------------------------------------------------------- properties
@settings(max_examples=200, deadline=None)
@given(data=st.data(), lowercase=st.booleans())
def test_statistics_equal_the_reference(data, lowercase):
    n_sent = data.draw(st.integers(1, 3))
    ref_words = [[data.draw(word_lists) for _ in range(data.draw(st.integers(1, 3)))] for _ in range(n_sent)]
    refsets = [[" ".join(r) for r in refs] for refs in ref_words]
    # runs in any sentence order, a sentence possibly twice, runs possibly empty
    runs = []
    for _ in range(data.draw(st.integers(0, 4))):
        sid = data.draw(st.integers(0, n_sent - 1))
        hyps = data.draw(st.lists(hypotheses_of(ref_words[sid]), max_size=4))
        runs.append((sid, [" ".join(h) for h in hyps]))
    want = reference_rows(runs, refsets, lowercase)
    metric = MosesTer(lowercase=lowercase)
    for threads in (1, 2):
        np.testing.assert_array_equal(metric.stats(*encode(runs, refsets), threads=threads), want)


def long_sentence(rng, n: int, vocabulary: int) -> str:
    return " ".join(f"w{k}" for k in rng.integers(0, vocabulary, n))


def scrambled(rng, sentence: str, moves: int) -> str:
    """sentence with runs of up to 12 words moved anywhere (often more than 25 words away)."""
    words = sentence.split()
    for _ in range(moves):
        if len(words) < 2:
            break
        a = int(rng.integers(0, len(words)))
        b = min(len(words), a + int(rng.integers(1, 13)))
        run, words = words[a:b], words[:a] + words[b:]
        c = int(rng.integers(0, len(words) + 1))
        words = words[:c] + run + words[c:]
    return " ".join(words)


def test_long_sentences_equal_the_reference():
    """Hypotheses of 50 to 80 words from a few words: the 25-word distance limit, the 10
    candidates per round and the beam all decide the counts here."""
    rng = np.random.default_rng(7)
    refsets, runs = [], []
    for s in range(4):
        refs = [long_sentence(rng, int(rng.integers(45, 75)), 4 + s) for _ in range(1 + s % 3)]
        refsets.append(refs)
        hyps = [scrambled(rng, refs[k % len(refs)], 6) for k in range(3)] + [long_sentence(rng, 80, 4 + s)]
        runs.append((s, hyps))
    want = reference_rows(runs, refsets, False)
    for threads in (1, 2):
        np.testing.assert_array_equal(MosesTer().stats(*encode(runs, refsets), threads=threads), want)


# single sentences worked through and run through Moses's extractor (--scconfig case:true,
# and case:false for the lowercase ones): each row is what its scores.dat line says
CASES = [
    ("a b c d", ["a b c d"], False, [0, 400, 0]),
    ("c d a b", ["a b c d"], False, [100, 400, 25]),       # one shift of "a b" (or "c d")
    ("", ["a b"], False, [200, 200, 100]),
    ("a b", [""], False, [200, 0, 100]),                   # no reference words: TER counts as 1
    ("", [""], False, [0, 0, 0]),
    ("A b", ["a B"], False, [200, 200, 100]),
    ("A b", ["a B"], True, [0, 200, 0]),
    # the reference is the sentence TERCpp shifts: the other way round it counts 3
    ("d a c c", ["a c b d c"], False, [200, 500, 40]),
    # sacrebleu's TER finds 6 edits here, Moses 7 ...
    ("c b c", ["b a c c a a a d"], False, [700, 800, 87]),
    # ... and 4 here, Moses 3
    ("a b b", ["b c b a d"], False, [300, 500, 60]),
    # the beam: every cell of a column that is dearer than its best diagonal step + 10 is
    # dropped, here the cheap path of 12 deletions; Moses counts 13
    ("a b b b b b b b b b b b a b", ["a a"], False, [1300, 200, 650]),
    # several references: the fewest edits ("a b": 1), over the mean length of all three
    ("a b c", ["x y", "a b c d e", "a b"], False, [100, 300, 33]),
    # 3 / (5 / 3) * 100 is 179.99999999999997 in doubles; "%g" prints 180
    ("a b c", ["x", "y z", "u v"], False, [300, 166, 180]),
    ("b a", ["a b", "b a", "a"], False, [0, 166, 0]),
    ("", ["", "", ""], False, [0, 0, 0]),
    ("a", ["", "", ""], False, [100, 0, 100]),
]


@pytest.mark.parametrize("hyp, refs, lowercase, want", CASES)
def test_worked_cases(hyp, refs, lowercase, want):
    assert MosesTer(lowercase=lowercase).stats(*encode([(0, [hyp])], [refs])).tolist() == [want]
    assert ref.ter_stats(hyp, refs, lowercase) == want


def test_arguments_are_swapped_as_moses_does():
    """TerScorer hands TERCpp the reference as the sentence to shift: that way round this
    pair is 2 edits (Moses's row in CASES), the other way round TERCpp counts 3."""
    hyp, reference = "d a c c".split(), "a c b d c".split()
    assert ref.ter_pair(reference, hyp) == 2
    assert ref.ter_pair(hyp, reference) == 3


def test_moses_word_numbering_changes_the_result():
    """TERCpp looks runs up by a hash of the ids' text. Numbered a=12, b=54, c=33 (the
    filler reference of sentence 0 makes Moses number them so), the hypothesis's runs
    "a b c b" and "b b c c" hash alike ("12\\t54\\t33\\t54", "54\\t54\\t33\\t33"), their
    positions merge and Moses counts 3 edits; numbered 0, 1, 2 (the sentence alone) it
    counts 2. Both checked with Moses's extractor."""
    filler = [f"f{i}" for i in range(55)]
    filler[12], filler[33], filler[54] = "a", "c", "b"
    hyp, reference = "a b c a b c b b c c c b", "a b c c c a b c b b c b"
    two = MosesTer().stats(*encode([(0, ["f0"]), (1, [hyp])], [[" ".join(filler)], [reference]]))
    assert two.tolist() == [[5400, 5500, 98], [300, 1200, 25]]
    assert MosesTer().stats(*encode([(0, [hyp])], [[reference]])).tolist() == [[200, 1200, 16]]
    assert reference_rows([(0, ["f0"]), (1, [hyp])], [[" ".join(filler)], [reference]], False).tolist() == two.tolist()
    assert ref.ter_stats(hyp, [reference]) == [200, 1200, 16]


def test_moses_numbering_order():
    """References first, reference k of every sentence before reference k + 1 (Moses reads
    its reference files one after the other), then the hypotheses in order."""
    # sentence 0: refs [5 6], [7]; sentence 1: ref [6 8]; hypotheses [9 5], [2]
    hyp, refs = moses_numbering(np.array([9, 5, 2], np.int32), np.array([0, 2, 3]), np.array([0, 2, 3, 5]),
                                np.array([5, 6, 7, 6, 8], np.int32))
    assert refs.tolist() == [0, 1, 3, 1, 2]
    assert hyp.tolist() == [4, 0, 5]
    empty = moses_numbering(np.zeros(0, np.int32), np.array([0]), np.array([0]), np.zeros(0, np.int32))
    assert [len(a) for a in empty] == [0, 0]


def test_a_pair_more_than_99999_edits_apart_is_refused():
    """Moses 34452895 on a 20-word hypothesis against a 100,100-word reference (no common
    word) stops with "Exception: vector::_M_range_check: __n (which is
    18446744073709551615) >= this->size() (which is 21)": TERCpp's table search prunes a
    whole column and reads row -1. Against 99,000 words it writes ``9 9 100``."""
    def one(n_hyp, n_ref):
        ptr = np.array([0, n_hyp], np.int64)
        enc = (np.array([0, 1], np.int64), np.array([0, n_ref], np.int64),
               np.arange(n_hyp, n_hyp + n_ref, dtype=np.int32))
        return MosesTer().stats(ptr, np.arange(n_hyp, dtype=np.int32), np.array([0, 1], np.int64),
                                np.array([0], np.int64), enc, [])

    assert one(20, 99_000).tolist() == [[9, 9, 100]]       # 9.9e+06 read with atoi
    assert format_stats_line(ter_row(99_000, 99_000), "TER") == "9 9 100 "
    with pytest.raises(ValueError, match="hypothesis 0: Moses's TER cannot score it"):
        one(20, 100_100)


def test_threads_do_not_change_the_statistics():
    rng = np.random.default_rng(3)
    refsets = [[long_sentence(rng, int(rng.integers(0, 40)), 5) for _ in range(2)] for _ in range(150)]
    runs = [(s, [scrambled(rng, refsets[s][0], 4), long_sentence(rng, 30, 5)]) for s in range(150)]
    inputs = encode(runs, refsets)
    rows = [MosesTer().stats(*inputs, threads=t) for t in (1, 2, 4)]
    np.testing.assert_array_equal(rows[0], rows[1])
    np.testing.assert_array_equal(rows[0], rows[2])


# ------------------------------------------------------------------------------- scores
@pytest.mark.parametrize("row, score", [
    ([0, 400, 0], 1.0), ([100, 400, 25], 0.75), ([700, 800, 87], 0.125), ([1300, 200, 650], -5.5),
    ([200, 0, 100], 1.0), ([0, 0, 0], 1.0),
    ([100, 300, 33], float(np.float32(1.0 + float(np.float32(np.float32(-100) / np.float32(300)))))),
])
def test_scores_are_moses_calculate_score(row, score):
    metric = MosesTer()
    assert metric.corpus_score(np.array(row)) == score == ref.ter_score(row)
    assert metric.sentence_score(np.array([row, row])).tolist() == [score, score]
    assert metric.sentence_score(np.array([row])).dtype == np.float64


def test_sentence_scores_equal_the_reference_on_many_rows():
    rng = np.random.default_rng(5)
    rows = np.stack([rng.integers(0, 10**5, 500), rng.integers(0, 10**4, 500), rng.integers(0, 10, 500)], axis=1)
    rows[::7, 1] = 0
    want = [ref.ter_score(r) for r in rows.tolist()]
    np.testing.assert_array_equal(MosesTer().sentence_score(rows), np.array(want))


# ------------------------------------------------------------------------------- input checks
def test_kernel_checks():
    ptr, ids, rs, sid, (sp, wp, rw), _ = encode([(0, ["a b"])], [["a"]])
    out = np.empty((1, 3), np.int32)
    with pytest.raises(ValueError, match="Buffer dtype mismatch"):
        _moses_ter.ter_stats(ptr, ids.astype(np.int64), rs, sid, sp, wp, rw, out)
    with pytest.raises(ValueError, match="out must be"):
        _moses_ter.ter_stats(ptr, ids, rs, sid, sp, wp, rw, np.empty((1, 2), np.int32))
    with pytest.raises(ValueError, match="word ids must be >= 0"):
        _moses_ter.ter_stats(ptr, -ids - 1, rs, sid, sp, wp, rw, out)
    with pytest.raises(ValueError, match="has no reference"):
        _moses_ter.ter_stats(ptr, ids, rs, sid, np.array([0, 0], np.int64), wp[:1], rw, out)
    assert _moses_ter.ter_stats(ptr, ids, rs, sid, sp, wp, rw, out) == 0


def test_signature_and_registry():
    assert METRICS["TER"] is MosesTer
    assert (MosesTer().name, MosesTer().n_stats) == ("TER", 3)
    assert MosesTer().signature == "moses-sctype:TER|case:true|tok:space"
    assert MosesTer(lowercase=True).signature == "moses-sctype:TER|case:false|tok:space"


# ------------------------------------------------------------------------------- Moses golden
def golden_lines(name: str) -> list[str]:
    return [line for _, lines in read_scores_dat(GOLDEN / name) for line in lines]


def assert_lines_equal_golden(rows, run_start, run_sid, name):
    blocks = read_scores_dat(GOLDEN / name)
    assert len(blocks) == len(run_sid)
    for (head, lines), sid, a, b in zip(blocks, run_sid, run_start[:-1], run_start[1:]):
        assert head == format_header(int(sid), int(b - a), "TER")
        assert lines == [format_stats_line(row, "TER") for row in rows[a:b]]


@pytest.fixture(scope="module")
def toy(shared_data):
    d = shared_data / "moses-toy"
    return read_nbest_in_order(str(d / "run1.best100.out.gz"), read_references([str(d / "ref.0")]))


def test_toy_lines_equal_moses_extractor(toy):
    ptr, ids, run_start, run_sid, enc, words, _ = toy
    rows = MosesTer().stats(ptr, ids, run_start, run_sid, enc, words, threads=2)
    assert len(rows) == 6000
    assert_lines_equal_golden(rows, run_start, run_sid, "toy.TER.scores.dat.gz")


def test_toy_corpus_score_prints_as_moses_evaluator(toy):
    """``evaluator --sctype TER --reference ref.0 --candidate onebest.txt`` (the first
    hypothesis of every toy sentence; the golden README) printed 0.6039. The evaluator
    numbers the words of the references, then of those hypotheses only: so here too."""
    ptr, ids, run_start, run_sid, enc, words, _ = toy
    first = run_start[:-1]
    lengths = ptr[first + 1] - ptr[first]
    one_ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    one_ids = np.concatenate([ids[ptr[h]:ptr[h + 1]] for h in first]).astype(np.int32)
    runs = np.arange(len(first) + 1, dtype=np.int64)
    rows = MosesTer().stats(one_ptr, one_ids, runs, run_sid, enc, words)
    assert f"{MosesTer().corpus_score(rows.sum(axis=0)):.4f}" == "0.6039"


def test_mixed_lines_equal_moses_extractor():
    refs = read_references([str(GOLDEN / "mixed.ref.0"), str(GOLDEN / "mixed.ref.1")])
    ptr, ids, run_start, run_sid, enc, words, _ = read_nbest_in_order(str(GOLDEN / "mixed.nbest"), refs)
    rows = MosesTer().stats(ptr, ids, run_start, run_sid, enc, words)
    assert_lines_equal_golden(rows, run_start, run_sid, "mixed.TER.case-true.scores.dat.gz")


@pytest.fixture(scope="module")
def hard():
    refs = read_references([str(GOLDEN / f"hard.ref.{k}") for k in range(3)])
    return read_nbest_in_order(str(GOLDEN / "hard.nbest"), refs)


@pytest.mark.parametrize("lowercase", [False, True])
def test_hard_lines_equal_moses_extractor(hard, lowercase):
    ptr, ids, run_start, run_sid, enc, words, _ = hard
    assert (len(ptr) - 1, len(run_sid)) == (224, 14)
    rows = MosesTer(lowercase=lowercase).stats(ptr, ids, run_start, run_sid, enc, words, threads=2)
    assert_lines_equal_golden(rows, run_start, run_sid,
                              f"hard.TER.case-{'false' if lowercase else 'true'}.scores.dat.gz")


def test_hard_set_is_where_sacrebleu_ter_differs(hard):
    """The point of the hard set: sacrebleu's TER (mtplug.metrics.ter) gives other edits
    than Moses on 92 of its 224 lines (fewer on 84), and mtplug's Moses TER none."""
    ptr, ids, run_start, run_sid, enc, words, _ = hard
    moses = [int(line.split()[0]) for line in golden_lines("hard.TER.case-true.scores.dat.gz")]
    sacrebleu = (Ter(case_sensitive=True).stats(ptr, ids, run_start, run_sid, enc, words)[:, 0] * 100).tolist()
    assert sum(s != m for s, m in zip(sacrebleu, moses)) == 92
    assert sum(s < m for s, m in zip(sacrebleu, moses)) == 84
    ours = MosesTer().stats(ptr, ids, run_start, run_sid, enc, words)[:, 0].tolist()
    assert ours == moses


def test_hard_set_matches_the_reference_on_its_shorter_sentences():
    """The slow reference agrees with Moses's lines too (where the hypothesis and its
    references are below 40 words, to keep it quick)."""
    refs = [(GOLDEN / f"hard.ref.{k}").read_text(encoding="utf-8").split("\n")[:-1] for k in range(3)]
    lines = [line.split(" ||| ")[:2] for line in (GOLDEN / "hard.nbest").read_text(encoding="utf-8").split("\n")[:-1]]
    refsets = [list(r) for r in zip(*refs)]
    vocab = ref.moses_vocabulary(refsets, [hyp for _, hyp in lines])
    want = golden_lines("hard.TER.case-true.scores.dat.gz")
    checked = 0
    for (sid, hyp), expected in zip(lines, want):
        sentence_refs = refsets[int(sid)]
        if max(len(r.split()) for r in [hyp, *sentence_refs]) < 40:
            assert format_stats_line(ref.ter_stats(hyp, sentence_refs, False, vocab), "TER") == expected
            checked += 1
    assert checked == 102
