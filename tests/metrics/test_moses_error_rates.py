"""Moses's PER, WER and CDER: the compiled statistics against the slow reference, and
against what Moses's own extractor and evaluator wrote (tests/golden/moses_scorers,
Moses 34452895; commands in its README.md); the scores.dat line format byte for byte."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplug._ext import _edit_rates
from mtplug._ext._nbest_scan import Vocabulary, decode_hypotheses
from mtplug.corpus import FeatureSpace, NbestCorpus
from mtplug.formats.nbest import scan_nbest
from mtplug.formats.references import References, encode_references, read_references, tokenize
from mtplug.metrics.moses_error_rates import Cder, Per, Wer, fold_words
from mtplug.metrics.moses_scores_format import FOOTER, format_header, format_stats_line, format_stats_lines, ter_row
from tests.reference import moses_error_rates_reference as ref

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "moses_scorers"
METRICS = {"PER": Per, "WER": Wer, "CDER": Cder}
REF_STATS = {"PER": lambda h, refs, lc: ref.per_stats(h, refs[0], lc),
             "WER": ref.wer_stats, "CDER": ref.cder_stats}
REF_SCORE = {"PER": ref.per_score, "WER": ref.edit_score, "CDER": ref.edit_score}

# case pairs, ASCII and not (Moses's case:false folds ASCII only), and words equal after folding
WORDS = ["a", "A", "b", "B", "ab", "aB", "AB", "ä", "Ä", "İ", "i", "I", "σ", "Σ", "x"]
sentence = st.tuples(st.lists(st.sampled_from(WORDS), min_size=0, max_size=8), st.sampled_from([" ", "  "]),
                     st.sampled_from(["", " "])).map(lambda t: t[2] + t[1].join(t[0]) + t[2])


# ------------------------------------------------------------------------------- helpers
def encode(runs: list[tuple[int, list[str]]], refsets: list[list[str]]):
    """Kernel inputs for runs (sentence id, its hypotheses) against refsets[s] (the
    references of sentence s)."""
    vocab = Vocabulary()
    ptr, ids, run_start, run_sid = [0], [], [0], []
    for sid, hyps in runs:
        for h in hyps:
            ids += [vocab.add(t.encode()) for t in tokenize(h)]
            ptr.append(len(ids))
        run_start.append(len(ptr) - 1)
        run_sid.append(sid)
    enc = encode_references(References(refsets, "refs"), vocab)
    return (np.array(ptr, np.int64), np.array(ids, np.int32), np.array(run_start, np.int64),
            np.array(run_sid, np.int64), enc, vocab.words())


def reference_rows(sctype: str, runs, refsets, lowercase: bool) -> np.ndarray:
    rows = [REF_STATS[sctype](h, refsets[sid], lowercase) for sid, hyps in runs for h in hyps]
    return np.array(rows, dtype=np.int32).reshape(-1, METRICS[sctype].n_stats)


def read_scores_dat(path: Path) -> list[tuple[str, list[str]]]:
    """Blocks of a text scores.dat: (header line, hypothesis lines), newlines removed."""
    lines = gzip.decompress(path.read_bytes()).decode("utf-8").split("\n")
    assert lines[-1] == ""
    blocks, i = [], 0
    while i < len(lines) - 1:
        head = lines[i]
        n = int(head.split()[2])
        assert lines[i + n + 1] == FOOTER
        blocks.append((head, lines[i + 1:i + n + 1]))
        i += n + 2
    return blocks


def golden_rows(name: str) -> np.ndarray:
    """The statistics of a golden file (all integers), hypotheses in file order."""
    return np.array([[float(v) for v in line.split()] for _, lines in read_scores_dat(GOLDEN / name)
                     for line in lines], dtype=np.float64)


def read_nbest_in_order(path: str, refs: References):
    """Every line of an n-best (no de-duplication), as kernel inputs, with BLEU stats."""
    words = Vocabulary()
    enc = encode_references(refs, words)
    a = scan_nbest(path, words=words, space=FeatureSpace(), refs=enc)
    n = len(a["sent_ids"])
    ptr, ids = decode_hypotheses(a["hyp_bytes"], a["hyp_indptr"], 0, n)
    sids = a["sent_ids"].astype(np.int64)
    run_start = np.concatenate([[0], np.flatnonzero(np.diff(sids)) + 1, [n]]).astype(np.int64)
    return ptr, ids, run_start, sids[run_start[:-1]], enc, words.words(), a["stats"]


@pytest.fixture(scope="module")
def toy(shared_data):
    d = shared_data / "moses-toy"
    return read_nbest_in_order(str(d / "run1.best100.out.gz"), read_references([str(d / "ref.0")]))


# ------------------------------------------------------------------------------- properties
@settings(max_examples=250, deadline=None)
@given(data=st.data(), sctype=st.sampled_from(["PER", "WER", "CDER"]), lowercase=st.booleans())
def test_statistics_equal_the_reference(data, sctype, lowercase):
    n_sent = data.draw(st.integers(1, 4))
    max_refs = 1 if sctype == "PER" else 3
    refsets = [[data.draw(sentence) for _ in range(data.draw(st.integers(1, max_refs)))] for _ in range(n_sent)]
    # runs in any sentence order, a sentence possibly twice, runs possibly empty
    runs = [(data.draw(st.integers(0, n_sent - 1)), data.draw(st.lists(sentence, max_size=4)))
            for _ in range(data.draw(st.integers(0, 5)))]
    metric = METRICS[sctype](lowercase=lowercase)
    want = reference_rows(sctype, runs, refsets, lowercase)
    for threads in (1, 2):
        got = metric.stats(*encode(runs, refsets), threads=threads)
        np.testing.assert_array_equal(got, want)
    # scores: per row, and of the column sums
    want_scores = [REF_SCORE[sctype](r) for r in want]
    np.testing.assert_array_equal(metric.sentence_score(want), np.array(want_scores, dtype=np.float64))
    if len(want):
        assert metric.corpus_score(want.sum(axis=0)) == REF_SCORE[sctype](want.sum(axis=0))


def test_threads_do_not_change_the_statistics():
    rng = np.random.default_rng(0)
    sent = lambda: " ".join(rng.choice(WORDS, rng.integers(0, 14)))  # noqa: E731
    refsets = [[sent() for _ in range(2)] for _ in range(300)]
    runs = [(s, [sent() for _ in range(4)]) for s in range(300)]
    inputs = encode(runs, refsets)
    for metric in (Wer(), Cder(lowercase=True)):
        want = reference_rows(metric.name, runs, refsets, metric.lowercase)
        for threads in (1, 2, 4):
            np.testing.assert_array_equal(metric.stats(*inputs, threads=threads), want)
    per_inputs = encode(runs, [r[:1] for r in refsets])
    want = reference_rows("PER", runs, [r[:1] for r in refsets], False)
    for threads in (1, 2, 4):
        np.testing.assert_array_equal(Per().stats(*per_inputs, threads=threads), want)


# the cases the metrics' definitions turn on, with their statistics worked by hand and
# confirmed with Moses's extractor (one sentence per case, --scconfig case:true|false)
CASES = [
    ("PER", "a b c", ["c b a"], False, [3, 3, 3]),
    ("PER", "a a a", ["a b"], False, [1, 3, 2]),
    ("PER", "", ["a b"], False, [0, 0, 2]),
    ("PER", "A Ä", ["a ä"], True, [1, 2, 2]),       # Ä is not ASCII: tolower leaves it
    ("WER", "a b c", ["c b a"], False, [2, 3]),
    ("WER", "", ["a b"], False, [2, 2]),
    ("WER", "a b", [""], False, [2, 0]),
    ("CDER", "c d a b", ["a b c d"], False, [3, 4]),  # blocks swapped: jumps there, back, to the end
    ("CDER", "a b", [""], False, [1, 0]),            # one long jump over the whole hypothesis
    ("CDER", "", ["a b"], False, [2, 2]),
    ("CDER", "", [""], False, [0, 0]),
    # first reference kept on a tie of truncated scores (0.25 and 0.75 both become 0) ...
    ("WER", "a b c d", ["a x y z", "a b c e"], False, [3, 4]),
    # ... replaced when a later one scores 1 (exact) ...
    ("WER", "a b c e", ["a x y z", "a b c e"], False, [0, 4]),
    # ... or truncates higher (-2 for 1 - 3/1, 0 for 1 - 6/6)
    ("WER", "x y z", ["a", "a b c d e f"], False, [6, 6]),
    ("WER", "b", ["a b", ""], False, [1, 0]),        # an empty reference scores 1
]


@pytest.mark.parametrize("sctype, hyp, refs, lowercase, want", CASES)
def test_worked_cases(sctype, hyp, refs, lowercase, want):
    got = METRICS[sctype](lowercase=lowercase).stats(*encode([(0, [hyp])], [refs]))
    assert got.tolist() == [want]
    assert REF_STATS[sctype](hyp, refs, lowercase) == want


@pytest.mark.parametrize("sctype, row, score", [
    ("PER", [3, 3, 3], 1.0), ("PER", [1, 3, 2], 0.0), ("PER", [0, 0, 0], 0.0),
    ("PER", [2, 4, 3], float(np.float32(np.float32(1) / np.float32(3)))),
    ("WER", [1, 3], float(np.float32(1) - np.float32(np.float32(1) / np.float32(3)))),
    ("WER", [5, 0], 1.0), ("CDER", [6, 2], -2.0), ("CDER", [0, 0], 1.0),
])
def test_scores_are_moses_float32_arithmetic(sctype, row, score):
    metric = METRICS[sctype]()
    assert metric.corpus_score(np.array(row)) == score
    assert metric.sentence_score(np.array([row, row])).tolist() == [score, score]
    assert metric.sentence_score(np.array([row])).dtype == np.float64


def test_case_folding_is_moses_ascii_tolower():
    # one class per ASCII-lowercased byte string; Ä, İ and Σ keep their case
    assert fold_words(["The", "the", "THE", "Ä", "ä", "İ", "i", "Σ", "σ"]).tolist() == [0, 0, 0, 1, 2, 3, 4, 5, 6]


# ------------------------------------------------------------------------------- input checks
def test_per_refuses_several_references():
    with pytest.raises(ValueError, match="exactly one reference"):
        Per().stats(*encode([(0, ["a"])], [["a", "b"]]))


def test_kernel_buffer_dtype_mismatch():
    ptr, ids, rs, sid, (sp, wp, rw), _ = encode([(0, ["a b"])], [["a"]])
    out = np.empty((1, 3), np.int32)
    with pytest.raises(ValueError, match="Buffer dtype mismatch"):
        _edit_rates.per_stats(ptr, ids.astype(np.int64), rs, sid, sp, wp, rw, out)
    with pytest.raises(ValueError, match="out must be"):
        _edit_rates.edit_stats(ptr, ids, rs, sid, sp, wp, rw, True, out)
    with pytest.raises(ValueError, match="word ids must be >= 0"):
        _edit_rates.per_stats(ptr, -ids - 1, rs, sid, sp, wp, rw, out)


def test_score_shape_checks():
    with pytest.raises(ValueError, match="expected 3 statistics"):
        Per().corpus_score(np.zeros(2))
    with pytest.raises(ValueError, match="rows of 2 statistics"):
        Cder().sentence_score(np.zeros((4, 3)))


def test_signature_and_names():
    assert [m().name for m in (Per, Wer, Cder)] == ["PER", "WER", "CDER"]
    assert [m().n_stats for m in (Per, Wer, Cder)] == [3, 2, 2]
    assert Per().signature == "moses-sctype:PER|case:true|tok:space"
    assert Cder(lowercase=True).signature == "moses-sctype:CDER|case:false|tok:space"


# ------------------------------------------------------------------------------- Moses golden
TOY_GOLDEN = [("PER", False, "toy.PER.scores.dat.gz"), ("WER", False, "toy.WER.scores.dat.gz"),
              ("CDER", False, "toy.CDER.scores.dat.gz"), ("PER", True, "toy.PER.case-false.scores.dat.gz")]


@pytest.mark.parametrize("sctype, lowercase, name", TOY_GOLDEN)
def test_toy_statistics_and_lines_equal_moses_extractor(toy, sctype, lowercase, name):
    ptr, ids, run_start, run_sid, enc, words, _ = toy
    assert len(ptr) - 1 == 6000
    got = METRICS[sctype](lowercase=lowercase).stats(ptr, ids, run_start, run_sid, enc, words, threads=2)
    blocks = read_scores_dat(GOLDEN / name)
    assert len(blocks) == len(run_sid) == 60
    np.testing.assert_array_equal(got, golden_rows(name))
    for (head, lines), sid, a, b in zip(blocks, run_sid, run_start[:-1], run_start[1:]):
        assert head == format_header(int(sid), int(b - a), sctype)
        assert lines == [format_stats_line(row, sctype) for row in got[a:b]]
        assert lines == format_stats_lines(got[a:b], sctype)


MIXED_GOLDEN = [(t, c) for t in ("PER", "WER", "CDER") for c in (False, True)]


@pytest.mark.parametrize("sctype, lowercase", MIXED_GOLDEN)
def test_mixed_case_statistics_equal_moses_extractor(sctype, lowercase):
    refs = [str(GOLDEN / "mixed.ref.0")] + ([] if sctype == "PER" else [str(GOLDEN / "mixed.ref.1")])
    name = f"mixed.{sctype}.case-{'false' if lowercase else 'true'}.scores.dat.gz"
    ptr, ids, run_start, run_sid, enc, words, _ = read_nbest_in_order(str(GOLDEN / "mixed.nbest"),
                                                                      read_references(refs))
    metric = METRICS[sctype](lowercase=lowercase)
    got = metric.stats(ptr, ids, run_start, run_sid, enc, words)
    np.testing.assert_array_equal(got, golden_rows(name))
    assert [format_stats_line(r, sctype) for r in got] == [l for _, ls in read_scores_dat(GOLDEN / name) for l in ls]
    # the store adapter (NbestCorpus keeps these distinct lines in order) gives the same rows
    corpus = NbestCorpus.from_nbest([str(GOLDEN / "mixed.nbest")], read_references(refs))
    np.testing.assert_array_equal(metric.store_stats(corpus), got)


def test_ter_lines_format_like_moses():
    """TER's three numbers (edits, average reference length and TER, each x100, printed with
    6 digits and read back with atoi) from the edits and lengths the golden files hold."""
    for name in ("toy.TER.scores.dat.gz", "mixed.TER.case-true.scores.dat.gz"):
        for head, lines in read_scores_dat(GOLDEN / name):
            assert head.split()[3:] == ["3", "TER"]
            for line in lines:
                edits, avg, _ = (int(v) for v in line.split())
                assert format_stats_line(ter_row(edits / 100, avg / 100), "TER") == line
    # the mixed set has fractional averages (4.5 words -> 450) and TER above 1 (142.857 -> 142)
    assert format_stats_line(ter_row(5, 3.5), "TER") == "500 350 142 "


@pytest.mark.parametrize("name", ["toy", "mixed"])
def test_ter_kernel_lines_equal_moses_extractor(request, name):
    """mtplug's TER (mtplug.metrics.ter: sacrebleu's algorithm, not Moses's TERCpp, so equal
    edits are a fact about these sets, not a promise) finds the edits Moses found here; with
    the average reference length it gives Moses's TER lines byte for byte."""
    from mtplug.metrics.ter import Ter

    if name == "toy":
        ptr, ids, run_start, run_sid, enc, words, _ = request.getfixturevalue("toy")
    else:
        refs = read_references([str(GOLDEN / "mixed.ref.0"), str(GOLDEN / "mixed.ref.1")])
        ptr, ids, run_start, run_sid, enc, words, _ = read_nbest_in_order(str(GOLDEN / "mixed.nbest"), refs)
    rows = Ter(case_sensitive=True).stats(ptr, ids, run_start, run_sid, enc, words)
    scale = Ter.ref_scale(enc)
    golden = f"{name}.TER.scores.dat.gz" if name == "toy" else "mixed.TER.case-true.scores.dat.gz"
    want = [line for _, ls in read_scores_dat(GOLDEN / golden) for line in ls]
    assert [format_stats_line(ter_row(e, n / scale), "TER") for e, n in rows.tolist()] == want


def test_interpolated_lines_equal_moses_extractor(toy):
    """BLEU,TER: the parts' statistics side by side under the header name ``BLEU,TER``;
    BLEU from mtplug's own BLEU statistics, TER's numbers read from the TER golden file."""
    *_, bleu = toy
    ter = [line for _, ls in read_scores_dat(GOLDEN / "toy.TER.scores.dat.gz") for line in ls]
    blocks = read_scores_dat(GOLDEN / "toy.BLEU,TER.scores.dat.gz")
    assert [head.split()[3:] for head, _ in blocks] == [["12", "BLEU,TER"]] * 60
    lines = [line for _, ls in blocks for line in ls]
    assert len(lines) == len(ter) == len(bleu) == 6000
    for b, t, line in zip(bleu, ter, lines):
        edits, avg, _ = (int(v) for v in t.split())
        assert format_stats_line([*b, *ter_row(edits / 100, avg / 100)], "BLEU,TER") == line


# Moses's evaluator on the toy 1-best (the first hypothesis of every sentence):
#   evaluator --sctype T --reference ref.0 --candidate onebest.txt   (prints "%.4f")
MOSES_EVALUATOR = {("PER", False): "0.6291", ("PER", True): "0.6291", ("WER", False): "0.6039",
                   ("CDER", False): "0.6039"}


@pytest.mark.parametrize("sctype, lowercase", list(MOSES_EVALUATOR))
def test_corpus_score_prints_as_moses_evaluator(toy, sctype, lowercase):
    ptr, ids, run_start, run_sid, enc, words, _ = toy
    metric = METRICS[sctype](lowercase=lowercase)
    summed = metric.stats(ptr, ids, run_start, run_sid, enc, words)[run_start[:-1]].sum(axis=0)
    assert f"{metric.corpus_score(summed):.4f}" == MOSES_EVALUATOR[sctype, lowercase]
    assert metric.corpus_score(summed) == REF_SCORE[sctype](summed)


def test_large_values_print_like_moses():
    """One hypothesis of 1,234,567 words 'a' against the reference 'a b'. Moses's extractor
    (34452895) wrote for it, with --sctype PER / WER / CDER / PER,WER / BLEU,PER:
    ``1 1.23457e+06 2``, ``1.23457e+06 2``, ``2 2``, ``1 1 2 1 2`` and
    ``1 1 0 1 0 1 0 1 2 1 1 2`` (an interpolation re-reads "%g" text with atoi)."""
    n = 1_234_567
    ptr = np.array([0, n], np.int64)
    ids = np.zeros(n, np.int32)
    enc = (np.array([0, 1], np.int64), np.array([0, 2], np.int64), np.array([0, 1], np.int32))
    args = (ptr, ids, np.array([0, 1], np.int64), np.array([0], np.int64), enc, ["a", "b"])
    per, wer, cder = (m().stats(*args)[0].tolist() for m in (Per, Wer, Cder))
    assert (per, wer, cder) == ([1, n, 2], [n - 1, 2], [2, 2])
    assert format_stats_line(per, "PER") == "1 1.23457e+06 2 "
    assert format_stats_lines(np.array([per, [2, 2, 2]]), "PER") == ["1 1.23457e+06 2 ", "2 2 2 "]
    assert format_stats_line(wer, "WER") == "1.23457e+06 2 "
    assert format_stats_line(cder, "CDER") == "2 2 "
    assert format_stats_line(per + wer, "PER,WER") == "1 1 2 1 2 "
    bleu = [1, n, 0, n - 1, 0, n - 2, 0, n - 3, 2]
    assert format_stats_line(bleu + per, "BLEU,PER") == "1 1 0 1 0 1 0 1 2 1 1 2 "


def test_format_refuses_unknown_scorers_and_widths():
    with pytest.raises(ValueError, match="no scores.dat format"):
        format_stats_line([1, 2], "METEOR")
    with pytest.raises(ValueError, match="has 5 statistics"):
        format_stats_line([1, 2, 3], "PER,WER")
    assert format_header(7, 100, "BLEU,TER") == "SCORES_TXT_BEGIN_0 7 100 12 BLEU,TER"
