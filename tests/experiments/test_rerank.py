"""mtplug rerank: the 1-best / re-sorted n-best of n-best lists under given weights."""

from __future__ import annotations

import gzip
import json
import os
import tempfile

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplug.cli import EXIT_INPUT_ERROR, main
from mtplug.errors import InputError
from mtplug.experiments.rerank import _read_lines, rank, rerank, weight_vector
from tests.reference import rerank_reference as ref

MOSES = (
    "0 ||| a b c ||| LM0= -1 TM0= 1 2 ||| -9\n"
    "0 ||| a b d ||| LM0= -2 TM0= 1 1 ||| -9\n"
    "1 ||| x y ||| LM0= -1 TM0= 0 1 ||| -9\n"
    "1 ||| x z ||| LM0= -3 TM0= 2 2 ||| -9\n"
)
INIT_OPT = "1 0 1\n0 0 0\n1 1 1\n"       # LM0 = 1, TM0 = 0 1: sentence 0 -> 'a b c', sentence 1 -> 'x y'


def cli(*argv):
    return main(["rerank", *argv])


def lines_of(path) -> list[str]:
    with open(path, encoding="utf-8") as fh:
        return fh.read().splitlines()


# ------------------------------------------------------------------ against the slow reference
@st.composite
def nbest_texts(draw, cdec=False):
    """(file contents, weights): random n-best lists with small integer features and
    weights in halves, so every model score is exact and ties are frequent."""
    n_files = draw(st.integers(1, 2))
    n_sent = draw(st.integers(1, 5))
    dense = [("LM0", 1), ("TM0", 3)] if not cdec else []
    sparse = ["WT_a", "WT_b~c", "PP_x"] if not cdec else ["LM", "Glue", "PassThrough", "e_f"]
    value = st.integers(-3, 3)
    texts = []
    for _ in range(n_files):
        out = []
        # fields after the features: the same on every line of a file (a line with fewer was cut short)
        tail = draw(st.sampled_from(["", " ||| -1.5", " ||| 3 ||| 0-0 1-1"]))
        for sid in range(n_sent):
            for _ in range(draw(st.integers(1 if len(texts) == 0 else 0, 6))):
                words = " ".join(draw(st.lists(st.sampled_from("abcde"), min_size=0, max_size=4)))
                feats = []
                for label, m in dense:
                    feats.append(f"{label}= " + " ".join(str(draw(value)) for _ in range(m)))
                for name in draw(st.lists(st.sampled_from(sparse), unique=True)):
                    feats.append(f"{name}={draw(value)}" if cdec else f"{name}= {draw(value)}")
                blank = draw(st.sampled_from(["", "", " \t\n", "\n"]))
                out.append(f"{blank}{sid} ||| {words} ||| {' '.join(feats)}{tail}\n")
        if out:   # an n-best file without hypotheses is an error of the reader
            texts.append("".join(out))
    names = [f"{label}_{i}" for label, m in dense for i in range(m)] + sparse
    weights = {n: draw(st.integers(-4, 4)) / 2 for n in draw(st.lists(st.sampled_from(names), min_size=1,
                                                                       unique=True))}
    return texts, weights


def _write_all(folder, texts):
    paths = []
    for i, text in enumerate(texts):
        p = os.path.join(folder, f"n{i}")
        with open(p, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        paths.append(p)
    return paths


@settings(max_examples=80, deadline=None)
@given(st.booleans().flatmap(nbest_texts), st.integers(1, 4))
def test_one_best_and_top_k_equal_the_slow_reference(case, k):
    texts, weights = case
    expected = ref.ranked(texts, weights)
    present = {name for _, _, feats, _ in ref.hypotheses(texts) for name in feats}
    with tempfile.TemporaryDirectory() as folder:
        paths = _write_all(folder, texts)
        if present and not present & set(weights):
            with pytest.raises(InputError, match="none of its .* names a feature of the n-best lists"):
                rank(paths, weights)
            return
        ranking = rank(paths, weights)
        assert ranking.one_best() == [rows[0][1] for rows in expected]
        assert rerank(paths, weights) == ranking.one_best()
        rows, offsets = ranking.top_rows(k)
        assert np.diff(offsets).tolist() == [min(k, len(r)) for r in expected]
        assert ranking.texts(rows) == [text for r in expected for _, text, _ in r[:k]]
        assert ranking.scores[rows].tolist() == [score for r in expected for score, _, _ in r[:k]]
        out = os.path.join(folder, "out.nbest")
        ranking.write_nbest(out, k)
        with open(out, encoding="utf-8") as fh:
            written = fh.read().splitlines()
    want = [raw for r in expected for _, _, raw in r[:k]]
    assert len(written) == len(want)
    for line, raw in zip(written, want):
        head = raw.split("|||")
        got = line.split("|||")
        # id, text and features byte for byte (a line without a score field gets ' ' before its new '|||')
        space = " " if len(head) == 3 and not raw.endswith((" ", "\t")) else ""
        assert "|||".join(got[:3]) == "|||".join(head[:3]) + space
        assert got[4:] == head[4:]                           # fields after the score kept
        assert float(got[3]) == sum(weights.get(n, 0.0) * v for n, v in ref.parse_line(raw)[2].items())


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_real_valued_scores_match_the_reference(seed):
    rng = np.random.default_rng(seed)
    lines = []
    for sid in range(4):
        for _ in range(rng.integers(1, 20)):
            dense = " ".join(f"{v:.6g}" for v in rng.normal(size=3) * 10)
            sparse = " ".join(f"WT_{j}= {rng.normal():.6g}" for j in rng.choice(6, rng.integers(0, 4), replace=False))
            lines.append(f"{sid} ||| w{rng.integers(9)} ||| F0= {dense} {sparse} ||| 0\n")
    weights = {f"F0_{i}": float(rng.normal()) for i in range(3)} | {f"WT_{j}": float(rng.normal()) for j in range(6)}
    expected = ref.ranked(["".join(lines)], weights)
    with tempfile.TemporaryDirectory() as folder:
        paths = _write_all(folder, ["".join(lines)])
        ranking = rank(paths, weights)
        assert np.array_equal(rank(paths, weights, threads=2).scores, ranking.scores)   # bit for bit
    rows, offsets = ranking.top_rows()
    got = ranking.scores[rows]
    want = np.array([s for r in expected for s, _, _ in r])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    for s in range(ranking.n_sentences):   # the order, wherever the reference's neighbours are apart
        seg = want[offsets[s]:offsets[s + 1]]
        if len(seg) < 2 or np.min(seg[:-1] - seg[1:]) > 1e-9:
            assert ranking.texts(rows[offsets[s]:offsets[s + 1]]) == [t for _, t, _ in expected[s]]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["0 ||| a ||| x=1", "", " \t", "1 ||| b ||| y= 2", "\r", "2 ||| c\r",
                                 " \t3 ||| d ||| z=1"]), max_size=30),
       st.booleans(), st.integers(1, 40), st.data())
def test_line_reader_equals_the_reference(lines, final_newline, chunk, data):
    raw = ("\n".join(lines) + ("\n" if final_newline and lines else "")).encode()
    expected = ref.nonblank_lines(raw)
    rows = np.array(sorted(data.draw(st.sets(st.integers(0, max(len(expected) - 1, 0)))))
                    if expected else [], dtype=np.int64)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "f")
        with open(path, "wb") as fh:
            fh.write(raw)
        buf = bytearray(b"kept")
        numbers, ends = _read_lines(path, rows, len(expected), buf, chunk_bytes=chunk)
        assert _read_lines(path, rows, len(expected), chunk_bytes=chunk)[0].tolist() == numbers.tolist()
        with pytest.raises(InputError, match="changed while being read"):
            _read_lines(path, rows, len(expected) + 1, chunk_bytes=chunk)
    assert numbers.tolist() == [expected[r][0] for r in rows]
    starts = [4] + ends[:-1].tolist()
    assert [bytes(buf[a:b]) for a, b in zip(starts, ends.tolist())] == [expected[r][1] for r in rows]
    assert buf[:4] == b"kept"


# ------------------------------------------------------------------ ties, formats, weights
def test_ties_go_to_the_hypothesis_read_first(write, tmp_path):
    a = write("a", "0 ||| first ||| F= 1 ||| 0\n0 ||| second ||| F= 1 ||| 0\n1 ||| x ||| F= 0 ||| 0\n"
                   "1 ||| y ||| F= 2 ||| 0\n1 ||| z ||| F= 2 ||| 0\n")
    b = write("b", "0 ||| third ||| F= 5 ||| 0\n1 ||| w ||| F= 2 ||| 0\n")
    assert rerank([a], {"F_0": 1.0}) == ["first", "y"]
    assert rerank([a, b], {"F_0": 1.0}) == ["third", "y"]      # the earlier file wins sentence 1's tie
    assert rerank([b, a], {"F_0": 1.0}) == ["third", "w"]
    assert rerank([a], {"F_0": -1.0}) == ["first", "x"]
    out = str(tmp_path / "o")
    assert cli("-q", "--nbest", a, b, "--weights", write("w", "F_0 1\n"), "--output-nbest", out) == 0
    assert [line.split(" ||| ")[1] for line in lines_of(out)] == ["third", "first", "second", "y", "z", "w", "x"]


def test_sparse_features_with_every_way_of_giving_their_weights(write, tmp_path):
    nb = write("nb", "0 ||| a ||| LM0= -1 WT_a= 1 ||| 0\n0 ||| b ||| LM0= -1 WT_b~c= 1 ||| 0\n"
                     "1 ||| c ||| LM0= -2 ||| 0\n1 ||| d ||| LM0= -3 WT_a= 2 ||| 0\n")
    sparse = write("sparse", "WT_a -1\nWT_b~c 0.5\n")
    want = ["b", "c"]
    assert rerank([nb], {"LM0_0": 1, "WT_a": -1, "WT_b~c": 0.5}) == want
    assert rerank([nb], write("init", "1\n0\n2\n"), sparse_weights=sparse) == want          # init.opt
    assert rerank([nb], write("wtxt", "1\n"), sparse_weights=sparse) == want                # weights.txt
    assert rerank([nb], write("names", "LM0_0 1\nWT_a -1\nWT_b~c 0.5\n")) == want          # cdec / 'name value'
    assert rerank([nb], write("mira", "F0 1\nWT_a -1\nWT_b~c 0.5\n")) == want              # kbmira output
    ini = write("moses.ini", f"[weight]\nLM0= 1\n\n[weight-file]\n{sparse}\n")
    assert rerank([nb], ini) == want
    assert rerank([nb], write("dense", "LM0= 1\n"), sparse_weights=sparse) == want         # --dense-init
    # without the sparse weights they count 0
    vector, notes = weight_vector(write("wtxt2", "1\n"), ["LM0_0", "WT_a", "WT_b~c"], 1)
    assert vector.tolist() == [1, 0, 0] and notes[0].startswith("2 feature(s) of the n-best lists have no weight")


def test_gz_input_gives_the_same_output(write, tmp_path):
    nb = write("nb", MOSES)
    gz = tmp_path / "nb.gz"
    gz.write_bytes(gzip.compress(MOSES.encode()))
    init = write("init", INIT_OPT)
    for name, source in (("plain", nb), ("gz", str(gz))):
        assert cli("-q", "--nbest", source, "--weights", init, "--output", str(tmp_path / f"{name}.1"),
                   "--output-nbest", str(tmp_path / f"{name}.n")) == 0
    assert lines_of(tmp_path / "plain.1") == lines_of(tmp_path / "gz.1") == ["a b c", "x y"]
    assert (tmp_path / "plain.n").read_bytes() == (tmp_path / "gz.n").read_bytes()


def test_cdec_kbest_with_cdec_weights(write, tmp_path):
    kb = write("kb", "0 ||| a ||| LanguageModel=-5 Glue=1 ||| -4\n0 ||| b ||| LanguageModel=-4 Glue=2 PassThrough=1 ||| -3\n"
                     "1 ||| c ||| LanguageModel=-1 ||| -1\n")
    weights = write("weights", "# cdec weights\nLanguageModel 1\nGlue -0.5\nPassThrough -1\nUnused 3\n")
    out, nbest = str(tmp_path / "1best"), str(tmp_path / "nbest")
    assert cli("-q", "--nbest", kb, "--weights", weights, "--output", out, "--output-nbest", nbest) == 0
    assert lines_of(out) == ["a", "c"]
    assert lines_of(nbest) == ["0 ||| a ||| LanguageModel=-5 Glue=1 ||| -5.5",
                               "0 ||| b ||| LanguageModel=-4 Glue=2 PassThrough=1 ||| -6.0",
                               "1 ||| c ||| LanguageModel=-1 ||| -1.0"]


def test_weights_that_cannot_be_lined_up_are_errors_naming_the_file(write, capsys):
    nb = write("nb", MOSES)
    cases = [
        (write("short.opt", "1 0\n0 0\n1 1\n"), "short.opt:1: has 2 values, expected 3"),
        (write("moses.ini", "[weight]\nLM0= 1\nTM0= 0 1 1\n"), "moses.ini: gives 3 value(s) for TM0"),
        (write("other", "X 1\nY 2\n"), "other: none of its 2 weight(s) names a feature of the n-best lists"),
        (write("garbage", "hello there world\n"), "garbage:1: cannot tell the weights format"),
        (write("mira", "F0 1\nF7 2\n"), "mira:2: dense feature F7 out of range"),
    ]
    for path, message in cases:
        assert cli("-q", "--nbest", nb, "--weights", path) == EXIT_INPUT_ERROR
        err = capsys.readouterr().err
        assert err.startswith("mtplug: error: ") and message in err and err.count("\n") == 1, err


def test_log_counts_features_without_weights_and_weights_without_features(write, capsys):
    nb = write("nb", "0 ||| a ||| LM0= -1 WT_a= 1 WT_b= 2 ||| 0\n")
    assert cli("--nbest", nb, "--weights", write("w", "LM0_0 1\nGone 2\n")) == 0
    captured = capsys.readouterr()
    assert captured.out == "a\n"
    assert "weights: 2 feature(s) of the n-best lists have no weight and count 0 (WT_a, WT_b)" in captured.err
    assert "weights: 1 weight(s) name features no hypothesis has (Gone): ignored" in captured.err
    assert "rerank: 1 sentences, 1 hypotheses in 1 file(s); 0 1-best(s)" in captured.err


# ------------------------------------------------------------------ n-best output, fields
def test_nbest_output_keeps_lines_and_replaces_only_the_score(write, tmp_path):
    # three files (the lines of one file have the same fields): read in this order, ties as in one file
    nb = [write("nb1", "0 ||| a  b ||| LM0= -1  TM0= 1 2  ||| -9 ||| 0-0 1-1\r\n\n"),
          write("nb2", "0 ||| c ||| LM0= 0 TM0= 0 0\n \t\n"), write("nb3", "0 ||| d ||| LM0= -0.5 TM0= 0 0 |||\n")]
    out = str(tmp_path / "o")
    assert cli("-q", "--nbest", *nb, "--weights", write("init", INIT_OPT), "--output-nbest", out, "--nbest-size", "2") == 0
    # later fields kept, the CR dropped; a line without a score field gets one; an empty one is filled
    lines = [b"0 ||| a  b ||| LM0= -1  TM0= 1 2  ||| 1.0 ||| 0-0 1-1\n", b"0 ||| c ||| LM0= 0 TM0= 0 0 ||| 0.0\n",
             b"0 ||| d ||| LM0= -0.5 TM0= 0 0 ||| -0.5\n"]
    assert (tmp_path / "o").read_bytes() == b"".join(lines[:2])
    assert cli("-q", "--nbest", *nb, "--weights", write("init2", "-1 0 -1\n0 0 0\n1 1 1\n"), "--output-nbest", out) == 0
    assert lines_of(out) == ["0 ||| d ||| LM0= -0.5 TM0= 0 0 ||| 0.5", "0 ||| c ||| LM0= 0 TM0= 0 0 ||| 0.0",
                             "0 ||| a  b ||| LM0= -1  TM0= 1 2  ||| -1.0 ||| 0-0 1-1"]


def test_options_that_cannot_take_effect_and_bad_values(write, tmp_path, capsys):
    nb, init = write("nb", MOSES), write("init", INIT_OPT)
    cases = [
        (["--nbest-size", "2"], "--nbest-size takes effect only with --output-nbest FILE"),
        (["--nbest-size", "0", "--output-nbest", str(tmp_path / "o")], "--nbest-size must be an integer >= 1, got 0"),
        (["--sentences", "0"], "--sentences must be an integer >= 1, got 0"),
        (["--output", "-", "--output-nbest", "-"], "--output and --output-nbest name the same stream"),
        (["--output", str(tmp_path / "same"), "--output-nbest", str(tmp_path / "same")], "name the same file"),
        (["--output", str(tmp_path)], "is a directory"),
        (["--output", str(tmp_path / "no" / "such")], "no such folder"),
    ]
    for extra, message in cases:
        assert cli("-q", "--nbest", nb, "--weights", init, *extra) == EXIT_INPUT_ERROR
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err
    assert cli("-q", "--nbest", nb, "--weights", init, "--nbest-size", "x") == EXIT_INPUT_ERROR
    assert "--nbest-size must be an integer >= 1, got 'x'" in capsys.readouterr().err


def test_bad_inputs_name_the_file_and_line(write, tmp_path, capsys):
    init = write("init", INIT_OPT)
    cases = [
        ([str(tmp_path / "missing")], init, "missing: no such file"),
        ([write("nb", MOSES)], str(tmp_path / "nowts"), "nowts: no such file"),
        ([write("plain", "just a translation\n")], init, "plain:1: expected at least 3 fields"),
        ([write("gap", "0 ||| a ||| LM0= 1 TM0= 1 1\n2 ||| b ||| LM0= 1 TM0= 1 1\n")], init,
         "gap: sentence 1 has no hypotheses (1 of 3 sentences are empty)"),
        ([write("order", "1 ||| a ||| LM0= 1 TM0= 1 1\n0 ||| b ||| LM0= 1 TM0= 1 1\n")], init,
         "order:2: sentence id 0 is smaller than the previous line's"),
        ([write("huge", "0 ||| a ||| LM0= 1 TM0= 1 1\n\n0 ||| b ||| LM0= 1e308 TM0= 1e308 1\n")],
         write("big", "1e308 0 0\n0 0 0\n1 1 1\n"), "huge:3: the model score of this hypothesis is inf"),
    ]
    for nbest, weights, message in cases:
        assert cli("-q", "--nbest", *nbest, "--weights", weights) == EXIT_INPUT_ERROR
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err


def test_sentences_checks_ids_at_the_end_too(write, tmp_path, capsys):
    nb, init = write("nb", "\n" + MOSES), write("init", INIT_OPT)
    assert cli("-q", "--nbest", nb, "--weights", init, "--sentences", "2") == 0
    assert capsys.readouterr().out == "a b c\nx y\n"
    assert cli("-q", "--nbest", nb, "--weights", init, "--sentences", "3") == EXIT_INPUT_ERROR
    assert "nb: sentence 2 has no hypotheses (1 of 3 sentences are empty)" in capsys.readouterr().err
    assert cli("-q", "--nbest", nb, "--weights", init, "--sentences", "1") == EXIT_INPUT_ERROR
    assert "nb:4: sentence id 1 is out of range: expected 1 sentences (ids 0 .. 0)" in capsys.readouterr().err


def test_output_places(write, tmp_path, capsys):
    nb, init = write("nb", MOSES), write("init", INIT_OPT)
    assert cli("-q", "--nbest", nb, "--weights", init) == 0                 # default: the 1-best on stdout
    assert capsys.readouterr().out == "a b c\nx y\n"
    nbest = str(tmp_path / "n")
    assert cli("-q", "--nbest", nb, "--weights", init, "--output-nbest", nbest) == 0   # then no 1-best unless --output
    assert capsys.readouterr().out == "" and len(lines_of(nbest)) == 4
    assert cli("-q", "--nbest", nb, "--weights", init, "--output-nbest", "-", "--nbest-size", "1", "--output", "/dev/null") == 0
    assert capsys.readouterr().out == ("0 ||| a b c ||| LM0= -1 TM0= 1 2 ||| 1.0\n"
                                       "1 ||| x y ||| LM0= -1 TM0= 0 1 ||| 0.0\n")
    # an error leaves an existing output as it was
    keep = tmp_path / "keep"
    keep.write_text("old\n")
    assert cli("-q", "--nbest", write("bad", "0 ||| a ||| LM0= x\n"), "--weights", init, "--output", str(keep)) == 2
    assert keep.read_text() == "old\n"
    capsys.readouterr()


def test_same_input_gives_identical_output(write, tmp_path):
    rng = np.random.default_rng(5)
    text = "".join(f"{s} ||| h{i} ||| F= {rng.normal():.6g} {rng.normal():.6g} WT_{i % 3}= 1 ||| 0\n"
                   for s in range(30) for i in range(20))
    nb, w = write("nb", text), write("w", "F= 0.3 -0.7\n")
    outputs = []
    for run in range(2):
        one, n = tmp_path / f"1.{run}", tmp_path / f"n.{run}"
        assert cli("-q", "--nbest", nb, "--weights", w, "--output", str(one), "--output-nbest", str(n), "--nbest-size", "5") == 0
        outputs.append((one.read_bytes(), n.read_bytes()))
    assert outputs[0] == outputs[1]


# ------------------------------------------------------------------ the bundled Moses example
def test_example_moses_one_best_is_the_first_hypothesis(example_data):
    """Moses wrote the example n-best sorted by its total score under run1.init.opt's
    weights (scaled to L1 norm 1), so the first hypothesis of every sentence must win;
    deeper in the lists the order may differ only between neighbours whose Moses scores
    tie in the 6 digits Moses prints (it printed the features rounded too)."""
    nbest = str(example_data / "run1.best100.out.gz")
    ranking = rank([nbest], str(example_data / "run1.init.opt"))
    assert ranking.n_sentences == 60 and ranking.n_hypotheses == 6000
    first = ranking.grouped[ranking.sent_offsets[:-1]]
    assert np.array_equal(ranking.best_rows(), first) and ranking.n_changed() == 0
    with gzip.open(nbest, "rt", encoding="utf-8") as fh:
        moses_scores = np.array([float(line.rsplit("|||", 1)[1]) for line in fh])
    order = ranking.order()
    moved = np.flatnonzero(order != np.arange(6000))
    assert 0 < len(moved) < 60
    assert np.all(np.abs(moses_scores[order[moved]] - moses_scores[moved]) <= 3e-5)
    # Moses's scores are run1.init.opt's scaled by 1 / Σ|w| = 1 / 2.8
    np.testing.assert_allclose(ranking.scores / 2.8, moses_scores, atol=1e-4)


def test_example_one_best_scores_the_bleu_optimize_reports(example_data, tmp_path, capsys):
    nbest, ref0, init = (str(example_data / n) for n in ("run1.best100.out.gz", "ref.0", "run1.init.opt"))
    assert main(["optimize", "none", "-q", "--nbest", nbest, "--ref", ref0, "--weights", init,
                 "--output", str(tmp_path / "w")]) == 0
    reported = json.loads(capsys.readouterr().out)["score"]
    one_best = str(tmp_path / "1best")
    assert cli("-q", "--nbest", nbest, "--weights", init, "--output", one_best) == 0
    assert main(["score", "--hyp", one_best, "--ref", ref0, "--json"]) == 0
    scored = json.loads(capsys.readouterr().out)["score"]
    assert scored == pytest.approx(reported, abs=1e-10) and reported == pytest.approx(26.5757, abs=1e-4)   # 0-100


def test_api_errors(write):
    nb = write("nb", MOSES)
    with pytest.raises(InputError, match="no n-best files"):
        rank([], {"LM0_0": 1})
    with pytest.raises(InputError, match="must be finite"):
        rank([nb], {"LM0_0": float("nan")})
    with pytest.raises(TypeError):
        rank([nb], 3)
    ranking = rank([nb], {"LM0_0": 1})
    with pytest.raises(ValueError, match="k must be an integer >= 1, got 0"):
        ranking.top_rows(0)
