"""fairseq, Marian and JSON-lines n-best lists: read into the store as the same lines in
Moses's format would be, format told apart by content, bad input named by file and line."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplug.cli import main
from mtplug.corpus import NbestCorpus
from mtplug.formats.nbest_formats import detect_nbest_format
from mtplug.formats.references import read_references

REFS = ["a house", "that is good", "he goes home"]

# fairseq-interactive/generate output: log lines, sentences out of order, --nbest 2
FAIRSEQ = (
    "2024-05-01 10:00:00 | INFO | fairseq_cli.generate | loading model(s) from ckpt.pt\n"
    "S-1\tdas ist gut\n"
    "T-1\tthat is good\n"
    "H-1\t-0.51\tthat is good\n"
    "D-1\t-0.51\tthat is good\n"
    "P-1\t-0.1 -0.2 -0.2 -0.01\n"
    "H-1\t-0.73\tthis is good\n"
    "D-1\t-0.73\tthis is good\n"
    "P-1\t-0.3 -0.2 -0.2 -0.03\n"
    "S-0\tein haus\n"
    "H-0\t-0.2\ta h@@ ouse\n"
    "D-0\t-0.2\ta house\n"
    "P-0\t-0.1 -0.1 -0.05\n"
    "H-0\t-0.9\tthe house\n"
    "D-0\t-0.9\tthe house\n"
    "P-0\t-0.6 -0.3 -0.05\n"
    "2024-05-01 10:00:01 | INFO | fairseq_cli.generate | Translated 2 sentences (10 tokens) in 0.1s\n"
    "Generate test with beam=2: BLEU4 = 40.00, 70.0/50.0/33.3/0.0 (BP=1.000, ratio=1.000, syslen=5, reflen=5)\n"
)

# Marian's n-best (marian-decoder --n-best), as its regression tests show them: plain,
# with a normalised total (--normalize), with --alignment and --word-scores, glued F0=
MARIAN_PLAIN = (
    "0 ||| a house ||| F0= -0.0375563 ||| -0.0125188\n"
    "0 ||| the house ||| F0= -4.98802 ||| -1.66267\n"
    "1 ||| that is good ||| F0= -0.673617 ||| -0.112269\n"
    "2 ||| he goes home ||| F0= -1.1584 ||| -0.5\n"
)
MARIAN_SCORER = "0 ||| a house ||| F0= -1.66407 Score= -1.66407 ||| -1.66407\n"
MARIAN_ALIGNED = (
    "0 ||| a house ||| 0-0 1-1 ||| WordScores= -0.04089 -0.00192 -0.1098 ||| F0= -1.66408 ||| -0.184897\n"
    "1 ||| that is good ||| 0-0 1-1 2-2 ||| WordScores= -0.1 -0.2 -0.3 -0.4 ||| F0= -1.80694 ||| -0.200772\n"
)
MARIAN_GLUED = "0 ||| a house ||| F0=-1.25 ||| -0.4\n1 ||| that is good ||| F0=-2.5 ||| -0.6\n"

JSONL = (
    '{"id": 1, "hyp": "that is good", "features": {"nmt": -0.5, "LM": -12.25}, "score": -3}\n'
    '{"id": 0, "hyp": "a house", "features": {"nmt": -0.2, "LM": -8}}\n'
    "\n"
    '{"id": 1, "hyp": "this is good", "features": {"nmt": -0.75, "LM": -13}}\n'
)


@pytest.fixture
def read(write):
    """read(text, fmt='auto', name=...) -> the store of that n-best against REFS."""

    def _read(text, fmt="auto", name="nbest.txt", refs=REFS):
        ref = write("ref.0", "".join(r + "\n" for r in refs))
        return NbestCorpus.from_nbest([write(name, text)], read_references([ref]), nbest_format=fmt)

    return _read


def rows(c: NbestCorpus) -> list[tuple[int, str, list[float]]]:
    """(sentence, hypothesis, dense features) of every stored row, in store order."""
    sids = np.repeat(np.arange(c.n_sentences), np.diff(c.sent_offsets))
    return [(int(s), h, c.dense[i].tolist()) for i, (s, h) in enumerate(zip(sids, c.hypotheses(0, c.n_hypotheses)))]


# ---------------------------------------------------------------------------- fairseq
def test_fairseq_sorted_by_id_detokenized_text_and_score(read):
    c = read(FAIRSEQ)
    assert c.feature_names == ["fairseq_0"]
    assert rows(c) == [(0, "a house", [-0.2]), (0, "the house", [-0.9]),
                       (1, "that is good", [-0.51]), (1, "this is good", [-0.73])]
    assert c.stats[0].tolist()[:2] == [2, 2]           # 'a house' against 'a house'


def test_fairseq_tokens_and_positional_scores(read, write):
    ref = write("ref.0", "".join(r + "\n" for r in REFS))
    with pytest.raises(ValueError):
        NbestCorpus.from_nbest([write("x", FAIRSEQ)], read_references([ref]), nbest_format="fairseq-h")
    from mtplug.formats.fairseq_nbest import moses_lines

    path = write("gen.out", FAIRSEQ)
    lines = list(moses_lines(path, text="H", positional=True))
    assert lines[2] == (11, 0, "0 ||| a h@@ ouse ||| fairseq= -0.2 fairseqP= -0.25 fairseqLen= 3")
    assert [ln for ln, _, _ in lines] == [4, 7, 11, 14]


BAD_FAIRSEQ = [
    ("H-0\tabc\ta\nD-0\t-1\ta\n", 1, "expected a number for 'score', got 'abc'"),
    ("H-0\tnan\ta\nD-0\t-1\ta\n", 1, "'nan'; expected a finite number"),
    ("H-0\t-1\n", 1, "expected 'H-<id><TAB>score<TAB>text'"),
    ("S-0\tx\nD-0\t-1\ta\n", 2, "D-0 line without the H-0 line of its hypothesis before it"),
    ("H-0\t-1\ta\nD-1\t-1\ta\n", 2, "D-1 line without the H-1"),
    ("H-0\t-1\ta\nH-0\t-2\tb\nD-0\t-2\tb\n", 1, "H-0 has no D-0 line after it"),
    ("H-x\t-1\ta\n", 1, "with a non-negative integer id, got 'H-x'"),
    ("H-0\t-1\ta ||| b\nD-0\t-1\ta ||| b\n", 1, "'|||'"),
    ("H-0\t-1\ta\nD-0\t-1\ta\nP-0\t-0.5 x\n", 3, "positional score"),
    ("H-0\t-1\ta\nD-0\t-1\ta\nH-7\t-1\ta\nD-7\t-1\ta\n", 3, "sentence id 7 has no reference"),
    (b"H-0\t-1\ta \xff\nD-0\t-1\ta\n", 1, "invalid UTF-8"),
    ("H-99999999999999999999\t-1\ta\nD-99999999999999999999\t-1\ta\n", 1, "larger than the largest mtplug holds"),
    ("2024-05-01 | INFO | nothing translated\n", None, "empty file"),
]


@pytest.mark.parametrize("content,line,message", BAD_FAIRSEQ)
def test_bad_fairseq_input(read, input_error, content, line, message):
    with input_error("gen.out", line, message):
        read(content, "fairseq", name="gen.out")


def test_fairseq_positional_needs_p_lines(write, input_error):
    from mtplug.formats.fairseq_nbest import moses_lines

    path = write("gen.out", "H-0\t-1\ta\nD-0\t-1\ta\n")
    with input_error(path, 1, "H-0 has no P-0 line after it"):
        list(moses_lines(path, positional=True))


# ---------------------------------------------------------------------------- Marian
def test_marian_plain_lines_read_as_moses_reads_them(read):
    marian, moses = read(MARIAN_PLAIN, "marian"), read(MARIAN_PLAIN, "moses")
    assert rows(marian) == rows(moses)
    assert marian.feature_names == ["F0_0"]
    np.testing.assert_array_equal(marian.stats, moses.stats)


def test_marian_score_alignment_word_scores_and_glued_labels(read):
    assert read(MARIAN_SCORER, "marian").feature_names == ["F0_0", "Score_0"]
    c = read(MARIAN_ALIGNED)                     # detected: Marian (alignment field)
    assert rows(c) == [(0, "a house", [-1.66408]), (1, "that is good", [-1.80694])]
    c = read(MARIAN_GLUED, "marian")
    assert c.feature_names == ["F0_0"] and rows(c)[1] == (1, "that is good", [-2.5])


BAD_MARIAN = [
    ("0 ||| a house ||| F0= -1\n", 1, "expected 'id ||| hypothesis ||| features ||| total'"),
    ("0 ||| a ||| F0= -1 ||| -0.5\n0 ||| b ||| F0= -1 ||| nan\n", 2, "'nan'; expected a finite number"),
    ("1 ||| a ||| F0= -1 ||| -1\n0 ||| b ||| F0= -2 ||| -2\n", 2, "smaller than the previous line's"),
    ("0 ||| a ||| F0= x ||| -1\n", 1, "expected a number as feature value"),
    ("0 ||| a ||| 0-0 ||| F0= -1 ||| -1\n\n0 ||| b ||| 0-0 ||| F0= nan ||| -1\n", 3, "not finite"),
]


@pytest.mark.parametrize("content,line,message", BAD_MARIAN)
def test_bad_marian_input(read, input_error, content, line, message):
    with input_error("nbest.txt", line, message):
        read(content, "marian")


# ---------------------------------------------------------------------------- JSON lines
def test_jsonl_sorted_by_id_features_by_name(read):
    c = read(JSONL)
    assert c.feature_names == ["nmt_0", "LM_0"]
    assert rows(c) == [(0, "a house", [-0.2, -8.0]), (1, "that is good", [-0.5, -12.25]),
                       (1, "this is good", [-0.75, -13.0])]


BAD_JSONL = [
    ('{"id": 0, "hyp": "a", "features": {"f": 1}\n', 1, "expected a JSON object"),
    ('[0, "a"]\n', 1, "got list"),
    ('{"id": 0, "features": {"f": 1}}\n', 1, "hyp missing"),
    ('{"id": -1, "hyp": "a", "features": {"f": 1}}\n', 1, "non-negative integer"),
    ('{"id": true, "hyp": "a", "features": {"f": 1}}\n', 1, "non-negative integer"),
    ('{"id": 2147483648, "hyp": "a", "features": {"f": 1}}\n', 1, "larger than the largest mtplug holds (2147483647)"),
    ('{"id": 0, "hyp": 3, "features": {"f": 1}}\n', 1, "must be a string"),
    ('{"id": 0, "hyp": "a", "features": {"f": NaN}}\n', 1, "NaN is not a finite number"),
    ('{"id": 0, "hyp": "a", "features": {"f": 1e999}}\n', 1, "must be a finite number"),
    ('{"id": 0, "hyp": "a", "features": {"f": "1"}}\n', 1, "must be a finite number"),
    ('{"id": 0, "hyp": "a", "features": {"a b": 1}}\n', 1, "without blanks"),
    ('{"id": 0, "hyp": "a ||| b", "features": {"f": 1}}\n', 1, "'|||'"),
    ('{"id": 0, "hyp": "a", "features": [1]}\n', 1, "must be an object"),
    # checked in file order, though the third line sorts first
    (('{"id": 1, "hyp": "a", "features": {"f": 1}}\n{"id": 1, "hyp": "b", "features": {"f": 1}}\n'
      '{"id": 0, "hyp": "c", "features": {"g": 1}}\n'), 3, "expected the features of line 1 (f), got g"),
    ('{"id": 1, "hyp": "a", "features": {"f": 1, "g": 2}}\n\n{"id": 0, "hyp": "c", "features": {"g": 1}}\n',
     3, "expected the features of line 1 (f, g), got g"),
    ('{"id": 0, "hyp": "a", "features": {"f": 1}}\n{"id": 5, "hyp": "c", "features": {"f": 1}}\n',
     2, "sentence id 5 has no reference"),
]


@pytest.mark.parametrize("content,line,message", BAD_JSONL)
def test_bad_jsonl_input(read, input_error, content, line, message):
    with input_error("nbest.jsonl", line, message):
        read(content, "jsonl", name="nbest.jsonl")


# ---------------------------------------------------------------------------- detection, CLI
@pytest.mark.parametrize("text,fmt", [(FAIRSEQ, "fairseq"), (JSONL, "jsonl"), (MARIAN_ALIGNED, "marian"),
                                      (MARIAN_PLAIN, "moses"), ("0 ||| a ||| LM0= -1 ||| -1 ||| 0-0\n", "moses"),
                                      ("", "moses"), ("garbage\n", "moses")])
def test_format_told_by_content(write, text, fmt):
    assert detect_nbest_format(write("f", text)) == fmt


def test_command_reads_fairseq_and_refuses_bad_lines(write, capsys):
    ref = write("ref.0", "".join(r + "\n" for r in REFS[:2]))
    weights = write("w.txt", "fairseq_0 1\nfairseqP_0 0\nfairseqLen_0 0\n")
    good = write("gen.out", FAIRSEQ)
    assert main(["optimize", "pro", "-q", "--nbest", good, "--ref", ref, "--weights", weights, "-o",
                 write("out.txt", ""), "--fairseq-positional", "--metric", "chrf"]) == 0
    bad = write("bad.out", FAIRSEQ.replace("D-0\t-0.9", "D-0\tNaN"))
    capsys.readouterr()
    assert main(["optimize", "mert", "-q", "--nbest", bad, "--ref", ref, "--weights", weights, "-o", "-"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{bad}:15:" in err and "Traceback" not in err, err


# ---------------------------------------------------------------------------- properties
@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(st.tuples(st.sampled_from(["a", "house", "that", "is", "good", "x"]),
                                   st.floats(-50, 0, allow_nan=False).map(lambda v: round(v, 3))),
                         min_size=1, max_size=4), min_size=1, max_size=4),
       st.randoms(use_true_random=False))
def test_fairseq_and_jsonl_equal_the_same_moses_list(tmp_path_factory, sentences, rng: random.Random):
    """The same hypotheses as a Moses list (sorted), as fairseq output and as JSON lines
    (sentences shuffled) give equal stores."""
    d = tmp_path_factory.mktemp("prop")
    moses, blocks, jsonl = [], [], []
    for sid, hyps in enumerate(sentences):
        block = []
        for k, (word, score) in enumerate(hyps):
            text = " ".join([word] * (k + 1))
            moses.append(f"{sid} ||| {text} ||| fairseq= {score!r}\n")
            block.append(f"H-{sid}\t{score!r}\t{text}\nD-{sid}\t{score!r}\t{text}\nP-{sid}\t{score!r}\n")
            jsonl.append((sid, json.dumps({"id": sid, "hyp": text, "features": {"fairseq": score}}) + "\n"))
        blocks.append(f"S-{sid}\tsrc\n" + "".join(block))
    rng.shuffle(blocks)
    order = sorted(range(len(jsonl)), key=lambda i: (rng.random(), i))
    files = {"moses": "".join(moses), "fairseq": "| log\n" + "".join(blocks),
             "jsonl": "".join(jsonl[i][1] for i in _interleave(order, jsonl))}
    ref = d / "ref"
    ref.write_text("a house\nthat is good\nx\nis\n")
    stores = {}
    for fmt, text in files.items():
        (d / fmt).write_text(text)
        stores[fmt] = NbestCorpus.from_nbest([str(d / fmt)], read_references([str(ref)]), nbest_format=fmt)
    for fmt in ("fairseq", "jsonl"):
        assert rows(stores[fmt]) == rows(stores["moses"])
        np.testing.assert_array_equal(stores[fmt].stats, stores["moses"].stats)


def _interleave(order: list[int], lines) -> list[int]:
    """The sentences of ``order`` (a shuffle of line indices) with each sentence's lines
    put back in their own order: sentences mixed, hypotheses of a sentence in order."""
    queues: dict[int, list[int]] = {}
    for i in range(len(lines)):
        queues.setdefault(lines[i][0], []).append(i)
    return [queues[lines[i][0]].pop(0) for i in order]


def test_extract_and_rerank_read_the_formats(write, tmp_path, capsys):
    ref = write("ref.0", "".join(r + "\n" for r in REFS[:2]))
    gen = write("gen.out", FAIRSEQ)
    ffile, scfile = tmp_path / "f.dat", str(tmp_path / "s.dat")
    assert main(["extract", "-q", "--nbest", gen, "--ref", ref, "--ffile", str(ffile), "--scfile", scfile]) == 0
    assert ffile.read_text().splitlines()[:3] == ["FEATURES_TXT_BEGIN_0 0 2 1 fairseq_0 ", "-0.2 ", "-0.9 "]
    capsys.readouterr()
    weights = write("w.txt", "nmt_0 0\nLM_0 1\n")
    assert main(["rerank", "-q", "--nbest", write("n.jsonl", JSONL), "--weights", weights, "--output-nbest", "-"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "0 ||| a house ||| nmt= -0.2 LM= -8.0 ||| -8.0", "1 ||| that is good ||| nmt= -0.5 LM= -12.25 ||| -12.25",
        "1 ||| this is good ||| nmt= -0.75 LM= -13.0 ||| -13.0"]
