"""Start weights against the n-best lists' features, and tuned weights written back
(mtplug/start_weights.py; issue 19, defects 3, 4 and 10)."""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pytest

from mtplug.cli import EXIT_INPUT_ERROR, main
from mtplug.formats.moses_ini import read_moses_ini, read_weight_file_entry
from mtplug.formats.sparse_weights import read_sparse_weights
from mtplug.start_weights import read_start

# Moses n-best with dense labels LM0 (1 column), TM0 (2) and sparse features
SPARSE_NBEST = (
    "0 ||| a b c ||| LM0= -1 TM0= 1 2 WT_a~a= 1 ||| 0\n"
    "0 ||| a b d ||| LM0= -2 TM0= 1 1 WT_b~a= 1 ||| 0\n"
    "1 ||| x y ||| LM0= -1 TM0= 0 1 WT_x~x= 1 ||| 0\n"
    "1 ||| x z ||| LM0= -3 TM0= 2 1 WT_z~x= 2 ||| 0\n"
)
REF = "a b c\nx y\n"
NAMES = ["LM0_0", "TM0_0", "TM0_1", "WT_a~a", "WT_b~a", "WT_x~x", "WT_z~x"]


@pytest.fixture
def nbest(write):
    return write("nbest", SPARSE_NBEST), write("ref", REF)


def optimize(nbest, init, out, *extra):
    nb, ref = nbest
    return main(["optimize", "apro", "-q", "--nbest", nb, "--ref", ref, "--weights", init, "--output", out, *extra])


def test_init_opt_output_gets_the_sparse_weights_beside_it(nbest, write, tmp_path, capsys):
    init = write("run1.init.opt", "0.5 0.2 0.2\n0 0 0\n1 1 1\n")
    out = tmp_path / "tuned.opt"
    assert optimize(nbest, init, str(out)) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["files"] == [str(out), str(out) + ".sparse-weights"]
    lines = out.read_text().splitlines()
    assert len(lines) == 3 and len(lines[0].split()) == 3 and lines[1:] == ["0.0 0.0 0.0", "1.0 1.0 1.0"]
    sparse = read_sparse_weights(str(out) + ".sparse-weights")
    assert set(sparse) <= set(NAMES[3:]) and len(sparse) > 0


def test_moses_ini_output_names_its_sparse_weights_file(nbest, write, tmp_path, capsys):
    init = write("moses.ini", "[feature]\nKENLM name=LM0\n\n[weight]\nLM0= 0.5\nTM0= 0.2 0.2\nUnknownWordPenalty0= 1\n")
    out = tmp_path / "tuned.ini"
    assert optimize(nbest, init, str(out)) == 0
    assert read_weight_file_entry(str(out)) == str(out) + ".sparse-weights"
    dense = read_moses_ini(str(out))
    assert dense["UnknownWordPenalty0_0"] == 1.0           # not in the n-best: written back unchanged
    assert "[feature]\nKENLM name=LM0\n" in out.read_text()
    assert len(read_sparse_weights(str(out) + ".sparse-weights")) > 0


def test_sparse_start_weights_beside_a_moses_ini_and_by_flag(nbest, write):
    sparse = write("start.sparse", "WT_a~a 0.75\n")
    init = write("moses.ini", f"[weight]\nLM0= 0.5\nTM0= 0.2 0.2\n\n[weight-file]\n{sparse}\n")
    start = read_start(init, NAMES, 3)
    assert start.vector.tolist() == [0.5, 0.2, 0.2, 0.75, 0, 0, 0]
    flag = write("flag.sparse", "WT_z~x -1\n")
    start = read_start(write("init.opt", "0.5 0.2 0.2\n0 0 0\n1 1 1\n"), NAMES, 3, sparse_init=flag)
    assert start.vector.tolist() == [0.5, 0.2, 0.2, 0, 0, 0, -1.0]
    assert start.ranges is not None


def test_sparse_weights_cannot_go_to_stdout_in_a_dense_format(nbest, write, capsys):
    init = write("run1.init.opt", "0.5 0.2 0.2\n0 0 0\n1 1 1\n")
    assert optimize(nbest, init, "-") == EXIT_INPUT_ERROR
    err = capsys.readouterr().err
    assert err.startswith("mtplug: error: the n-best lists have 4 sparse feature(s)") and err.count("\n") == 1


def test_the_sidecar_place_is_checked_before_the_work(nbest, write, tmp_path, capsys):
    init = write("run1.init.opt", "0.5 0.2 0.2\n0 0 0\n1 1 1\n")
    (tmp_path / "tuned.opt.sparse-weights").mkdir()
    assert optimize(nbest, init, str(tmp_path / "tuned.opt")) == EXIT_INPUT_ERROR
    assert "is a directory" in capsys.readouterr().err
    assert not (tmp_path / "tuned.opt").exists()


def test_named_start_weights_keep_what_the_store_lacks(write):
    path = write("w", "PassThrough 2\nLM0_0 1\nWT_new 0.5\n")
    start = read_start(path, NAMES, 3)
    assert start.vector.tolist() == [1.0, 0, 0, 0, 0, 0, 0]
    assert dict(start.kept.items()) == {"PassThrough": 2.0, "WT_new": 0.5}
    assert any("6 feature(s) of the n-best lists have no start weight" in n for n in start.notes)


def test_moses_ini_label_counts_must_match(write):
    from mtplug.errors import InputError

    with pytest.raises(InputError, match="gives 3 value.s. for TM0, but the n-best lists have 2"):
        read_start(write("ini", "[weight]\nLM0= 1\nTM0= 1 2 3\n"), NAMES, 3)
    start = read_start(write("ini2", "[weight]\nLM0= 1\nTM0= 1 2\nDistortion0= 0.3\n"), NAMES, 3)
    assert dict(start.kept.items()) == {"Distortion0_0": 0.3}
    np.testing.assert_array_equal(start.vector[:3], [1, 1, 2])


def test_kbmira_output_lines_up_its_dense_weights_by_position(write):
    # kbmira writes the dense weights as F0, F1, ... in the features.dat column order
    path = write("mert.out", "F0 0.5\nF1 -0.25\nF2 0.125\nWT_a~a 2\n")
    start = read_start(path, NAMES, 3)
    assert dict(start.weights.items()) == {"LM0_0": 0.5, "TM0_0": -0.25, "TM0_1": 0.125, "WT_a~a": 2.0}


# ---------------------------------------------------------------------------------------
# issue 37, defect 1: one rule for how well start weights name the features (check_match)

CDEC_STYLE = "LanguageModel 0.5\nWordPenalty -1\n"     # cdec names on a Moses n-best


def test_check_match_rule():
    from mtplug.errors import InputError
    from mtplug.start_weights import check_match

    names, n_dense = NAMES, 3
    assert check_match(["LM0_0", "TM0_0", "TM0_1"], names, n_dense) == []   # sparse ones without: normal
    # every dense feature weighted: weights for features no hypothesis has stay a note
    assert check_match(["LM0_0", "TM0_0", "TM0_1", "UnknownWordPenalty0_0"], names, n_dense) == []
    with pytest.raises(InputError) as err:
        check_match(["LanguageModel", "WordPenalty"], names, n_dense, "w.cdec")
    assert str(err.value) == ("w.cdec: none of its 2 weight(s) names a feature of the n-best lists (it gives "
                              "LanguageModel, WordPenalty; expected names such as LM0_0, TM0_0, TM0_1, WT_a~a and "
                              "3 more), so every model score would be 0")
    with pytest.raises(InputError, match="none of its 0 weight"):
        check_match([], names, n_dense)
    assert check_match(["LM0_0", "TM0", "A", "B", "C", "D", "E"], names, n_dense, "w") == [
        "w: 2 dense feature(s) of the n-best lists have no weight and start at 0 (TM0_0, TM0_1); "
        "6 weight(s) name no feature (TM0, A, B, C and 2 more)"]
    assert check_match(["x"], [], 0) == []   # nothing to match (no features)


def test_optimize_refuses_start_weights_that_name_no_feature(nbest, write, tmp_path, capsys):
    out = tmp_path / "out"
    init = write("w.cdec", CDEC_STYLE)
    assert optimize(nbest, init, str(out)) == EXIT_INPUT_ERROR
    err = capsys.readouterr().err
    assert err.startswith(f"mtplug: error: {init}: none of its 2 weight(s) names a feature of the n-best lists "
                          "(it gives LanguageModel, WordPenalty; expected names such as LM0_0"), err
    assert err.count("\n") == 1 and not out.exists()


def test_optimize_warns_of_a_partial_match_even_when_quiet(nbest, write, tmp_path, capsys):
    init = write("w.part", "LM0_0 1\nTM0 0.5\nWT_a~a 0.1\n")
    assert optimize(nbest, init, str(tmp_path / "out")) == 0
    err = capsys.readouterr().err
    assert err == (f"mtplug: warning: {init}: 2 dense feature(s) of the n-best lists have no weight and start at 0 "
                   "(TM0_0, TM0_1); 1 weight(s) name no feature (TM0)\n")


def test_python_api_refuses_no_match_and_warns_of_a_partial_one(nbest):
    import mtplug
    from mtplug.errors import InputError

    corpus = mtplug.load_nbest(nbest[0], refs=nbest[1])
    with pytest.raises(InputError, match=r"^start: none of its 1 weight\(s\) names a feature .*\(it gives LM0;"):
        mtplug.optimize("none", corpus, start={"LM0": 0.5})
    with pytest.raises(InputError, match=r"^weights: none of its 1 weight\(s\) names a feature .*\(it gives Bogus;"):
        mtplug.score(corpus, {"Bogus": 1.0})
    partial = "dense feature(s) of the n-best lists have no weight and start at 0 (TM0_0, TM0_1); " \
              "1 weight(s) name no feature (LM0)"
    with pytest.warns(UserWarning, match=re.escape(partial)):
        result = mtplug.optimize("none", corpus, start={"LM0_0": 1.0, "LM0": 0.5})
    assert result.warnings == ["start: 2 " + partial]
    with pytest.warns(UserWarning, match=re.escape(partial)):
        mtplug.score(corpus, {"LM0_0": 1.0, "LM0": 0.5})
    # a full dense match with sparse features left out is normal: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert mtplug.optimize("none", corpus, start={"LM0_0": 1.0, "TM0_0": 0.5, "TM0_1": 0.5}).warnings == []
        mtplug.score(corpus, {"LM0_0": 1.0, "TM0_0": 0.5, "TM0_1": 0.5})


def test_rerank_warns_of_a_partial_match_even_when_quiet(nbest, write, capsys):
    init = write("w.part", "LM0_0 1\nTM0 0.5\n")
    assert main(["rerank", "-q", "--nbest", nbest[0], "--weights", init]) == 0
    err = capsys.readouterr().err
    assert err == (f"mtplug: warning: {init}: 2 dense feature(s) of the n-best lists have no weight and start at 0 "
                   "(TM0_0, TM0_1); 1 weight(s) name no feature (TM0)\n")
    assert main(["rerank", "-q", "--nbest", nbest[0], "--weights", write("w.cdec", CDEC_STYLE)]) == EXIT_INPUT_ERROR
    assert capsys.readouterr().err.count("\n") == 1
