"""Moses's M2SCORER statistics: the compiled kernel against the slow reference
(tests/reference/m2_reference.py) on random sentences, edits and annotators; examples
worked out by hand from the algorithm (Dahlmeier & Ng 2012's, as Moses's mert/M2.h runs
it); the reader's errors; corpus F_beta from summed statistics."""

from __future__ import annotations

import gzip
import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplug._ext import _m2
from mtplug.errors import InputError
from mtplug.metrics.m2 import (
    N_STATS,
    M2Options,
    f_beta,
    hypothesis_words,
    m2_stats,
    moses_bool,
    parse_m2,
    parse_scconfig,
    read_m2,
    sentence_f_beta,
    split_words,
)
from tests.reference import m2_reference as ref

PAPER = "Our baseline system feeds word into PB-SMT pipeline ."


def m2(*lines: str):
    return parse_m2(list(lines), "gold.m2")


def stats(text_lines, hyps, sids=None, **options):
    return m2_stats(hyps, sids, m2(*text_lines), M2Options(**options)).tolist()


# ------------------------------------------------------------------------------- by hand
def test_the_paper_example_finds_the_gold_edit_through_an_unchanged_word():
    """Gold: 'word' -> 'a word'. The hypothesis inserts 'a'; a plain Levenshtein edit
    ('' -> 'a' at 4) misses the gold edit, the lattice has the edit 4..5 -> 'a word'
    (one unchanged word) and the gold edit's weight puts it on the path."""
    gold = ["S " + PAPER, "A 4 5|||ArtOrDet|||a word|||REQUIRED|||-NONE-|||0"]
    hyp = "Our baseline system feeds a word into PB-SMT pipeline ."
    assert stats(gold, [hyp]) == [[1, 1, 1, 9]]
    # no unchanged word allowed: only the insertion of 'a' is an edit, and it is not gold
    assert stats(gold, [hyp], max_unchanged_words=0) == [[0, 1, 1, 9]]
    # the source itself: nothing proposed, the gold edit missed
    assert stats(gold, [PAPER]) == [[0, 0, 1, 9]]


def test_deleting_one_of_two_equal_words_takes_the_gold_one():
    """Deleting either 'go' is an optimal alignment; the gold edit deletes the second."""
    gold = ["S He go go to school .", "A 2 3|||Rloc-||||||REQUIRED|||-NONE-|||0"]
    assert stats(gold, ["He go to school ."]) == [[1, 1, 1, 6]]


def test_the_annotator_with_the_best_f_of_the_hypothesis_is_chosen():
    gold = ["S He go to school .",
            "A 1 2|||Vform|||goes|||REQUIRED|||-NONE-|||0",
            "A 1 2|||Vform|||went|||REQUIRED|||-NONE-|||1"]
    assert stats(gold, ["He goes to school .", "He went to school .", "He go to school ."], [0, 0, 0]) == [
        [1, 1, 1, 5],      # annotator 0: F = 1
        [1, 1, 1, 5],      # annotator 1: F = 1 (annotator 0's F is 0)
        [0, 0, 1, 5],      # both F = 0 (P = 1, R = 0): the first, annotator 0
    ]


def test_a_noop_annotator_wins_when_nothing_is_changed():
    gold = ["S He go to school .",
            "A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||0",
            "A 1 2|||Vform|||goes|||REQUIRED|||-NONE-|||1"]
    # unchanged: annotator 0 has P = R = 1 (nothing proposed, nothing gold), F = 1
    # 'goes': annotator 0 has P = 0, F = 0; annotator 1 F = 1
    assert stats(gold, ["He go to school .", "He goes to school ."], [0, 0]) == [[0, 0, 0, 5], [1, 1, 1, 5]]


def test_annotators_named_earlier_in_the_file_still_count():
    """Moses never clears its set of annotators: sentence 1 names only annotator 0, but
    annotator 1 (named in sentence 0, no edits in sentence 1) has F = 1 for an unchanged
    hypothesis and wins. (Dahlmeier & Ng's scorer would count sentence 1's gold edit.)"""
    gold = ["S a b c", "A 0 1|||X|||A|||REQUIRED|||-NONE-|||0", "A 0 1|||X|||B|||REQUIRED|||-NONE-|||1", "",
            "S d e f", "A 2 3|||X|||g|||REQUIRED|||-NONE-|||0", ""]
    ref_file = m2(*gold)
    assert [s.n_annotators for s in ref_file.sentences] == [2, 2]
    assert m2_stats(["d e f"], [1], ref_file).tolist() == [[0, 0, 0, 3]]
    # without annotator 1 in sentence 0 the gold edit counts
    assert stats(gold[:2] + gold[3:], ["d e f"], [1]) == [[0, 0, 1, 3]]


def test_a_hypothesis_further_than_the_source_length_counts_its_distance_only():
    # 'a b' -> 'c d e': two substitutions and an insertion (5) > 2 source words
    gold = ["S a b", "A 0 1|||X|||c|||REQUIRED|||-NONE-|||0"]
    assert stats(gold, ["c d e"]) == [[0, 5, 0, 2]]
    # an empty hypothesis is one empty word: 'a b' -> '': a substitution and a deletion (3)
    assert stats(gold, [""]) == [[0, 3, 0, 2]]
    assert stats(["S a b c d"], ["  "]) == [[0, 5, 0, 4]]


def test_correct_edits_can_outnumber_gold_edits():
    """Every edit of the path equal to a gold edit counts, also the same gold edit again:
    the gold insertion of 'a' at 0 weighs -(2 + 1) * |E| per use, so the path makes the
    five extra 'a's five insertions at 0 (the two-word edit 'a a' is no gold edit) and all
    five are correct (Moses's extractor writes '5 5 1 10' too: tests/golden/moses-m2/README.md)."""
    gold = ["S " + " ".join(["a"] * 10), "A 0 0|||X|||a|||R|||-NONE-|||0"]
    assert stats(gold, [" ".join(["a"] * 15)]) == [[5, 5, 1, 10]]


def test_a_seventh_field_is_ignored():
    """The annotator is the sixth field; Moses's extractor ignores a seventh (it wrote
    '1 1 3 3' and '0 0 3 3' for these, checked once, tests/golden/moses-m2/README.md)."""
    gold = ["S a b c", "A 1 2|||X|||q|||R|||-NONE-|||0", "A 1 2|||X|||q|||R|||-NONE-|||0|||extra"]
    assert stats(gold, ["a q c", "a b c"], [0, 0]) == [[1, 1, 1, 3], [0, 0, 1, 3]]


@pytest.mark.parametrize("offsets", ["5 9", "2 1", "3 4", "1 99999999999999999999"])
def test_gold_edits_outside_the_sentence_are_refused(offsets):
    """Moses reads any offsets (5..9 of a 3-word sentence, 2..1): gold edits no edit equals,
    which count as missed (its extractor wrote '1 1 3 3' for 'a q c' with 5 9 and 2 1 besides
    1 2 -> q). A line that cannot mean an edit of its sentence is an error naming it."""
    with pytest.raises(InputError) as err:
        m2("S a b c", f"A {offsets}|||X|||z|||R|||-NONE-|||0")
    assert str(err.value) == ("gold.m2:2: expected two word offsets 'start end' after 'A ', 0 <= start <= end <= 3 "
                              f"(the words of the S line on line 1), got '{offsets}'")


def test_case_and_spaces_without_truecase():
    gold = ["S the cat", "A 0 1|||X|||The|||REQUIRED|||-NONE-|||0"]
    # 'The' equals 'the': no edit at all
    assert stats(gold, ["The cat"]) == [[0, 0, 1, 2]]
    # truecase (Moses reads truecase:1): a substitution, equal to the gold edit
    assert stats(gold, ["The cat"], truecase=True) == [[1, 1, 1, 2]]
    # without truecase an edit text is compared without its spaces: 'A B' equals 'a b' (and 'ab')
    for text in ("A B", "ab", "a b"):
        g = ["S x y z w", f"A 0 1|||X|||{text}|||REQUIRED|||-NONE-|||0"]
        assert stats(g, ["a b y z w"]) == [[1, 1, 1, 4]], text
    assert stats(["S x y z w", "A 0 1|||X|||a b|||REQUIRED|||-NONE-|||0"], ["a b y z w"], truecase=True) == [
        [1, 1, 1, 4]]
    assert stats(["S x y z w", "A 0 1|||X|||ab|||REQUIRED|||-NONE-|||0"], ["a b y z w"], truecase=True)[0][0] == 0


def test_equal_gold_edits_count_once():
    same = ["S the cat", "A 0 1|||X|||a|||REQUIRED|||-NONE-|||0", "A 0 1|||Y|||a|||REQUIRED|||-NONE-|||0"]
    assert stats(same, ["the cat"]) == [[0, 0, 1, 2]]
    cased = ["S the cat", "A 0 1|||X|||a|||REQUIRED|||-NONE-|||0", "A 0 1|||X|||A|||REQUIRED|||-NONE-|||0"]
    assert stats(cased, ["the cat"]) == [[0, 0, 1, 2]]
    assert stats(cased, ["the cat"], truecase=True) == [[0, 0, 2, 2]]


def test_words_are_split_as_moses_splits_them():
    assert hypothesis_words("  a  b \r\n") == ["a", "b"]
    assert hypothesis_words("") == [""]
    assert hypothesis_words("a\tb") == ["a\tb"]
    assert split_words(" a  b ") == ["", "a", "b", ""]
    assert m2("S  a b").sentences[0].source == ("", "a", "b")


# ------------------------------------------------------------------------------- corpus F
@pytest.mark.parametrize("row, beta, want", [
    ([3, 4, 5, 9], 0.5, 1.25 * 0.75 * 0.6 / (0.25 * 0.75 + 0.6)),
    ([0, 0, 0, 9], 0.5, 1.0),          # nothing proposed, nothing gold: P = R = 1
    ([0, 3, 0, 9], 0.5, 0.0),          # P = 0, R = 1
    ([0, 0, 4, 9], 0.5, 0.0),          # P = 1, R = 0
    ([0, 2, 2, 9], 0.5, 0.0),          # P = R = 0: the denominator is 0
    ([1, 2, 4, 9], 0.0, 0.5),          # beta 0: precision
    ([1, 2, 4, 9], 1.0, 2 * 0.5 * 0.25 / 0.75),
])
def test_corpus_f_beta(row, beta, want):
    assert f_beta(row, beta) == pytest.approx(want, rel=1e-6)
    assert f_beta(row, beta) == ref.corpus_f(row, beta)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 10**5), min_size=3, max_size=3), st.sampled_from([0.0, 0.2, 0.5, 1.0, 2.0, 0.3]))
def test_f_beta_equals_the_reference(row, beta):
    assert f_beta(row + [7], beta) == ref.corpus_f(row, beta)
    # the nogil formula for the metric layer (pyx/_m2_score.pxd), through its py_ hook
    assert _m2.corpus_f_beta(np.array(row + [7], dtype=np.int64), beta) == ref.corpus_f(row, beta)
    assert sentence_f_beta([row + [7]], beta)[0] == float(ref.f_beta32(*row, beta))


# ------------------------------------------------------------------------------- scconfig
def test_scconfig_as_moses_reads_it():
    assert parse_scconfig(None) == (M2Options(0.5, 2, False), [])
    opts, notes = parse_scconfig("beta:1.0,max_unchanged_words:3,truecase:1")
    assert opts == M2Options(1.0, 3, True) and notes == []
    # nbest-reranker's key: ignored, as Moses ignores it
    opts, notes = parse_scconfig("ignore_whitespace_casing:true")
    assert opts == M2Options() and notes == ["--scconfig: M2SCORER ignores ignore_whitespace_casing:true"]
    # Moses reads a bool as a number: 'true' is no number, so false
    opts, notes = parse_scconfig("truecase:true")
    assert opts.truecase is False and "as 0" in notes[0]
    assert [moses_bool(t) for t in ("0", "1", "2", "true", "false", " 1")] == [False, True, True, False, False, True]
    assert parse_scconfig("beta:0.1")[0].beta == float(np.float32(0.1))
    for bad in ("beta", "beta:x", "beta:-1", "max_unchanged_words:-1", "max_unchanged_words:1.5", ",beta:1",
                "truecase:"):
        with pytest.raises(InputError, match="--scconfig"):
            parse_scconfig(bad)


# ------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("lines, line, words", [
    (["A 0 1|||X|||a|||REQUIRED|||-NONE-|||0"], 1, "before the first S line"),
    (["S a b", "A 0 1|||X|||a|||REQUIRED|||-NONE-"], 2, "6 fields"),
    (["S a b", "A 0|||X|||a|||REQUIRED|||-NONE-|||0"], 2, "two word offsets"),
    (["S a b", "A 0 x|||X|||a|||REQUIRED|||-NONE-|||0"], 2, "two word offsets"),
    (["S a b", "A -1 1|||X|||a|||REQUIRED|||-NONE-|||0"], 2, "two word offsets"),
    (["S a b", "A 0 1|||X|||a|||REQUIRED|||-NONE-|||one"], 2, "annotator"),
    (["S a b", "A 0 1|||X|||a|||REQUIRED|||-NONE-|||-1"], 2, "annotator"),
    (["S a b", "", "S ", "S c"], 3, "without a sentence"),
    (["S a b", "# comment"], 2, "expected an 'S <sentence>' line"),
    (["S a b", "A 0 1|||X|||a|||REQUIRED|||-NONE-|||1"], 2, "annotator 0 is named on no line"),
    (["S a b", "A 0 1|||X|||a|||REQUIRED|||-NONE-|||0", "", "S c", "A 0 1|||X|||a|||REQUIRED|||-NONE-|||2"], 5,
     "annotator 1 is named on no line"),
])
def test_malformed_m2_names_file_line_and_what_was_expected(lines, line, words):
    with pytest.raises(InputError) as err:
        parse_m2(lines, "gold.m2")
    assert str(err.value).startswith(f"gold.m2:{line}: ")
    assert words in str(err.value)
    assert "\n" not in str(err.value)


def test_an_empty_file_is_an_error(tmp_path):
    p = tmp_path / "empty.m2"
    p.write_text("\n\n")
    with pytest.raises(InputError, match=r"empty\.m2: expected at least one 'S"):
        read_m2(p)


def test_a_sentence_id_outside_the_reference_is_an_error():
    with pytest.raises(ValueError, match=r"sentence 1 is not in gold\.m2"):
        m2_stats(["a"], [1], m2("S a"))


def test_parse_m2_keeps_carriage_returns_as_moses():
    """Lines given to parse_m2 are taken as Moses's getline gives them: a CR stays in the
    S line's last word."""
    reference = parse_m2(["S a b\r", "A 0 1|||X|||c|||REQUIRED|||-NONE-|||0\r", "\r"], "crlf.m2")
    sent = reference.sentences[0]
    assert sent.source[-1] == "b\r" and sent.edits[0].annotator == 0
    # the hypothesis is trimmed of its '\r', the source's last word keeps it: a substitution
    assert m2_stats(["a b\r"], [0], reference).tolist() == [[0, 1, 1, 2]]


def test_read_m2_drops_the_cr_of_crlf_line_ends(tmp_path):
    """As every mtplug reader: a CRLF file reads as its LF copy (Moses would keep the CR in
    the last source word, which then equals no hypothesis word)."""
    p = tmp_path / "crlf.m2"
    p.write_bytes(b"S a b\r\nA 0 1|||X|||c|||REQUIRED|||-NONE-|||0\r\n\r\n")
    lf = parse_m2(["S a b", "A 0 1|||X|||c|||REQUIRED|||-NONE-|||0", ""], str(p))
    assert read_m2(p) == lf
    assert m2_stats(["c b"], [0], read_m2(p)).tolist() == [[1, 1, 1, 2]]


def test_read_m2_refuses_invalid_utf8(tmp_path):
    p = tmp_path / "latin1.m2"
    p.write_bytes(b"S a \xff b\nA 0 1|||X|||c|||REQUIRED|||-NONE-|||0\n")
    with pytest.raises(InputError) as err:
        read_m2(p)
    assert str(err.value) == (f"{p}:1: invalid UTF-8 at byte 4: 'S a \\xff b'; if the file is in another "
                              "encoding, convert it: iconv -f <enc> -t UTF-8")


# ------------------------------------------------------------------------------- kernel = reference
WORDS = ["a", "A", "b", "B", "c", "ab", "the", "The", "x"]
CORRECTIONS = ["", "a", "A", "b", "a b", "ab", "A B", "the", "c x", " a", "a  b", "-NONE-"]


@st.composite
def m2_files(draw):
    """An M2 file (lines) of 1-3 sentences, hypotheses for them (edited copies of the
    source or random words) and options."""
    n_sent = draw(st.integers(1, 3))
    lines, hyps, sids = [], [], []
    for s in range(n_sent):
        src = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6))
        lead = draw(st.sampled_from(["", "", " "]))
        lines.append("S " + lead + " ".join(src))
        n = len(src) + (1 if lead else 0)
        for _ in range(draw(st.integers(0, 5))):
            k = draw(st.integers(0, 2))
            if draw(st.integers(0, 5)) == 0:
                lines.append(f"A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||{k}")
                continue
            i = draw(st.integers(0, n))
            j = draw(st.integers(i, min(n, i + 3)))
            lines.append(f"A {i} {j}|||T|||{draw(st.sampled_from(CORRECTIONS))}|||REQUIRED|||-NONE-|||{k}")
        lines.append("")
        for _ in range(draw(st.integers(1, 4))):
            words = list(src)
            for _ in range(draw(st.integers(0, 3))):
                op = draw(st.integers(0, 2))
                pos = draw(st.integers(0, len(words)))
                if op == 0:
                    words.insert(pos, draw(st.sampled_from(WORDS)))
                elif op == 1 and words:
                    del words[min(pos, len(words) - 1)]
                elif words:
                    words[min(pos, len(words) - 1)] = draw(st.sampled_from(WORDS))
            if draw(st.integers(0, 6)) == 0:
                words = draw(st.lists(st.sampled_from(WORDS), max_size=5))
            hyps.append(draw(st.sampled_from(["", " "])) + " ".join(words))
            sids.append(s)
    # annotator ids must grow from 0 (the reader refuses others): renumber by first use
    order: dict[str, str] = {}
    fixed = []
    for line in lines:
        if line.startswith("A "):
            head, k = line.rsplit("|||", 1)
            line = f"{head}|||{order.setdefault(k, str(len(order)))}"
        fixed.append(line)
    options = dict(beta=draw(st.sampled_from([0.5, 1.0, 0.2, 2.0])), max_unchanged_words=draw(st.integers(0, 3)),
                   truecase=draw(st.booleans()))
    return fixed, hyps, sids, options


@settings(max_examples=300, deadline=None)
@given(m2_files())
def test_statistics_equal_the_reference(case):
    lines, hyps, sids, options = case
    sentences = ref.read_m2("\n".join(lines))
    want = [ref.sentence_stats(sentences[s], h, beta=options["beta"], max_unchanged=options["max_unchanged_words"],
                               truecase=options["truecase"]) for h, s in zip(hyps, sids)]
    reference = parse_m2(lines, "random.m2")
    assert [s.n_annotators for s in reference.sentences] == [len(s.annotators) for s in sentences]
    for threads in (1, 2):
        got = m2_stats(hyps, sids, reference, M2Options(**options), threads=threads)
        assert got.tolist() == want


def test_hypotheses_of_sentences_in_any_order():
    gold = ["S a b c", "A 0 1|||X|||x|||REQUIRED|||-NONE-|||0", "", "S d e", "A 1 2|||X|||f|||REQUIRED|||-NONE-|||0"]
    reference = m2(*gold)
    one = m2_stats(["x b c", "d f"], [0, 1], reference).tolist()
    assert m2_stats(["d f", "x b c", "d f"], [1, 0, 1], reference).tolist() == [one[1], one[0], one[1]]
    assert m2_stats([], [], reference).shape == (0, 4)


def test_a_long_sentence_with_many_edits_equals_the_reference():
    rng = np.random.default_rng(38)
    vocab = ["w%d" % k for k in range(12)]
    src = list(rng.choice(vocab, 14))
    lines = ["S " + " ".join(src)]
    for k in range(3):
        for _ in range(4):
            i = int(rng.integers(0, 14))
            lines.append(f"A {i} {i + int(rng.integers(0, 2))}|||T|||{rng.choice(vocab)}|||REQUIRED|||-NONE-|||{k}")
    hyps = []
    for _ in range(6):
        words = list(src)
        for _ in range(4):
            pos = int(rng.integers(0, len(words)))
            words[pos] = str(rng.choice(vocab))
        hyps.append(" ".join(words))
    sentences = ref.read_m2("\n".join(lines))
    want = [ref.sentence_stats(sentences[0], h) for h in hyps]
    assert m2_stats(hyps, [0] * len(hyps), m2(*lines)).tolist() == want


def _m2_lines(source: list[str], edits) -> list[str]:
    return ["S " + " ".join(source)] + [f"A {i} {j}|||T|||{text}|||REQUIRED|||-NONE-|||{k}" for i, j, text, k in edits]


@pytest.mark.parametrize("source, hyp, max_unchanged, edits, want", [
    # found by comparing the reference with a variant giving every composed edge its fewest
    # moves: Moses keeps the first composition it finds, and these rows depend on it
    ("b a a a b a", "a c b b a a", 2, [(4, 5, "c c", 0), (6, 6, "c b", 1), (6, 6, "c c", 1)], [0, 2, 1, 6]),
    ("a a b a b a", "b a b a a", 3, [(1, 1, "c", 0), (4, 4, "", 0), (6, 6, "b", 1)], [0, 2, 2, 6]),
    ("b b b a", "c b b b c b", 3, [(3, 3, "a c", 0), (0, 1, "a", 1), (1, 1, "a", 1), (2, 2, "", 1)], [0, 2, 1, 4]),
])
def test_a_composed_edge_costs_what_its_first_composition_costs(source, hyp, max_unchanged, edits, want):
    lines = _m2_lines(source.split(), edits)
    assert ref.sentence_stats(ref.read_m2("\n".join(lines))[0], hyp, max_unchanged=max_unchanged, truecase=True) == want
    assert stats(lines, [hyp], max_unchanged_words=max_unchanged, truecase=True) == [want]


@st.composite
def dense_cases(draw):
    """One sentence over a two-word alphabet and a hypothesis over three: many optimal
    alignments and composed edges; gold edits of 1-3 annotators, often spelling hypothesis words."""
    src = draw(st.lists(st.sampled_from("ab"), min_size=2, max_size=7))
    hyp = draw(st.lists(st.sampled_from("abc"), min_size=1, max_size=8))
    n_annotators = draw(st.integers(1, 3))
    edits = []
    for k in range(n_annotators):
        for _ in range(draw(st.integers(0, 3))):
            i = draw(st.integers(0, len(src)))
            j = draw(st.integers(i, min(len(src), i + 2)))
            a = draw(st.integers(0, len(hyp)))
            text = " ".join(hyp[a:a + draw(st.integers(0, 2))]) if draw(st.booleans()) else \
                " ".join(draw(st.lists(st.sampled_from("abc"), max_size=2)))
            edits.append((i, j, text, k))
    return src, " ".join(hyp), edits, n_annotators, draw(st.integers(0, 3)), draw(st.booleans())


@settings(max_examples=400, deadline=None)
@given(dense_cases())
def test_statistics_equal_the_reference_on_dense_lattices(case):
    src, hyp, edits, n_annotators, max_unchanged, truecase = case
    lines = _m2_lines(src, edits) + [f"A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||{k}" for k in range(n_annotators)]
    want = ref.sentence_stats(ref.read_m2("\n".join(lines))[0], hyp, max_unchanged=max_unchanged, truecase=truecase)
    assert stats(lines, [hyp], max_unchanged_words=max_unchanged, truecase=truecase) == [want]


# ------------------------------------------------------------------------------- Moses's own output
GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "moses-m2"
#: golden file -> the --scconfig it was made with (tests/golden/moses-m2/README.md)
GOLDEN_FILES = {
    "gec.default": "beta:0.5", "gec.truecase-1": "truecase:1", "gec.truecase-true": "truecase:true",
    "gec.beta-1.0.mu-0": "beta:1.0,max_unchanged_words:0",
    "gec.beta-0.2.mu-3.truecase-1": "beta:0.2,max_unchanged_words:3,truecase:1",
    "gec.ignore-whitespace-casing": "ignore_whitespace_casing:true",
    "rand.default": "beta:0.5", "rand.truecase-1": "truecase:1", "rand.beta-1.0.mu-0": "beta:1.0,max_unchanged_words:0",
    "rand.beta-0.2.mu-3.truecase-1": "beta:0.2,max_unchanged_words:3,truecase:1",
}


def read_nbest(path: Path) -> tuple[list[int], list[str]]:
    """Sentence ids and hypothesis texts (the field between the first two '|||', as Moses takes it)."""
    rows = [line.split("|||") for line in path.read_text(encoding="utf-8").splitlines()]
    return [int(r[0]) for r in rows], [r[1] for r in rows]


def moses_scores_dat(sids: list[int], rows: list[list[int]]) -> str:
    """A text scores.dat as Moses's extractor writes M2SCORER's (values with %g and a space
    each; the block header names the scorer M2Scorer)."""
    out = []
    for sid, group in itertools.groupby(zip(sids, rows), key=lambda t: t[0]):
        block = [r for _, r in group]
        out.append(f"SCORES_TXT_BEGIN_0 {sid} {len(block)} {N_STATS} M2Scorer")
        out += ["".join("%g " % v for v in r) for r in block]
        out.append("SCORES_TXT_END_0")
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("name", sorted(GOLDEN_FILES))
def test_statistics_equal_moses_extractor_byte_for_byte(name):
    data_set = name.split(".")[0]
    options, _ = parse_scconfig(GOLDEN_FILES[name])
    sids, hyps = read_nbest(GOLDEN / f"{data_set}.nbest")
    rows = m2_stats(hyps, sids, read_m2(GOLDEN / f"{data_set}.m2"), options).tolist()
    want = gzip.decompress((GOLDEN / f"{name}.scores.dat.gz").read_bytes()).decode("utf-8")
    assert moses_scores_dat(sids, rows) == want
    # and the slow reference agrees
    sentences = ref.read_m2((GOLDEN / f"{data_set}.m2").read_text(encoding="utf-8"))
    assert rows == [ref.sentence_stats(sentences[s], h, beta=options.beta, max_unchanged=options.max_unchanged_words,
                                       truecase=options.truecase) for s, h in zip(sids, hyps)]


def test_corpus_f_beta_equals_moses_evaluator():
    sids, hyps = read_nbest(GOLDEN / "gec.nbest")
    by_sentence = [[h for s2, h in zip(sids, hyps) if s2 == s] for s in sorted(set(sids))]
    reference = read_m2(GOLDEN / "gec.m2")
    lines = (GOLDEN / "evaluator.tsv").read_text(encoding="utf-8").splitlines()[1:]
    assert len(lines) == 9
    for line in lines:
        rank, scconfig, printed = line.split("\t")
        options, _ = parse_scconfig(scconfig)
        cand = [hs[min(int(rank), len(hs) - 1)].strip(" ") for hs in by_sentence]
        summed = m2_stats(cand, None, reference, options).sum(axis=0)
        assert "%.4f" % f_beta(summed, options.beta) == printed, line


def test_kernel_buffers_of_another_dtype_are_refused():
    with pytest.raises(ValueError, match="Buffer dtype mismatch"):
        _m2.corpus_f_beta(np.array([1, 2, 3, 4], dtype=np.int32), 0.5)
    with pytest.raises(ValueError, match="expected 4 statistics"):
        _m2.corpus_f_beta(np.array([1, 2, 3], dtype=np.int64), 0.5)


def test_a_loaded_m2_store_takes_new_lists_with_its_references(tmp_path):
    """A store does not keep its M2 file: loaded with it, it merges more n-best lists into
    the same statistics as one read at once; loaded without it, it says so."""
    from mtplug.corpus import NbestCorpus
    from mtplug.metrics.bleu import BleuConfig
    from mtplug.metrics.references import metric_references

    gold = Path(__file__).resolve().parents[1] / "golden" / "moses-m2"
    lines = (gold / "gec.nbest").read_text(encoding="utf-8").splitlines(keepends=True)
    (tmp_path / "a").write_text("".join(lines[::2]), encoding="utf-8")
    (tmp_path / "b").write_text("".join(lines[1::2]), encoding="utf-8")
    refs = metric_references([str(gold / "gec.m2")], "m2")
    whole = NbestCorpus.from_nbest([str(tmp_path / "a"), str(tmp_path / "b")], refs, BleuConfig(), metric="m2")
    first = NbestCorpus.from_nbest([str(tmp_path / "a")], refs, BleuConfig(), metric="m2")
    first.save(str(tmp_path / "store.npz"))
    loaded = NbestCorpus.load(str(tmp_path / "store.npz"), refs)
    assert loaded.add_nbest([str(tmp_path / "b")]) > 0
    assert loaded.n_hypotheses == whole.n_hypotheses
    assert sorted(map(tuple, loaded.stats.tolist())) == sorted(map(tuple, whole.stats.tolist()))
    with pytest.raises(ValueError, match="loaded with its M2 references"):
        NbestCorpus.load(str(tmp_path / "store.npz")).add_nbest([str(tmp_path / "b")])
