"""Bad option values, options that cannot take effect, degenerate results and overflow:
one ``mtplug: error:`` line and exit status 2, or a warning and valid JSON (issue 19,
defects 8, 9 and 10). Each case failed (traceback, silence or NaN in the JSON) before."""

from __future__ import annotations

import json

import pytest

from mtplug.cli import EXIT_INPUT_ERROR, main

NBEST = ("0 ||| a b c ||| LM0= -1 TM0= 1 2 ||| 0\n0 ||| a b d ||| LM0= -2 TM0= 1 1 ||| 0\n"
         "0 ||| a x y ||| LM0= -1.5 TM0= 2 1 ||| 0\n1 ||| x y ||| LM0= -1 TM0= 0 1 ||| 0\n"
         "1 ||| x z ||| LM0= -3 TM0= 2 1 ||| 0\n")
REF = "a b c\nx y\n"


@pytest.fixture
def files(write, tmp_path):
    return {"nbest": write("nbest", NBEST), "ref": write("ref", REF), "init": write("init", "0.5 0.2 0.2\n"),
            "out": str(tmp_path / "out")}


def optimize(files, algorithm, *extra, nbest=None, init=None):
    return main(["optimize", algorithm, "-q", "--nbest", nbest or files["nbest"], "--ref", files["ref"],
                 "--weights", init or files["init"], "--output", files["out"], *extra])


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("mtplug") and ": error: " in lines[0], err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize("algorithm, extra, message", [
    ("mert", ["--seed", "-1"], "--seed must be an integer in [0, 2^63), got -1"),
    ("mert", ["--threads", "0"], "--threads must be a thread count >= 1 (leave it out for all cores), got 0"),
    ("apro", ["--threads", "-2"], "--threads must be a thread count >= 1"),
    # the optimizers' messages name the options by their flags (issue 47)
    ("mert", ["--reg", "l2"], "mert: --reg l2 needs --reg-strength > 0"),
    ("mert", ["--reg", "l2", "--reg-strength", "0"], "--reg-strength must be a finite number > 0 with --reg l2"),
    ("mert", ["--reg-strength", "0.1"], "mert: --reg-strength applies only with a regulariser (--reg)"),
    ("mert", ["--tolerance", "-1"], "mert: --tolerance must be a finite number >= 0"),
    ("mert", ["--random-directions", "4"], "--random-directions applies only with --directions random"),
    ("apro", ["--tolerance", "-1"], "apro: --tolerance must be > 0"),
])
def test_bad_option_values(files, capsys, algorithm, extra, message):
    assert optimize(files, algorithm, *extra) == EXIT_INPUT_ERROR
    assert message in one_error_line(capsys)


def test_ref_and_devset_together(files, write, capsys):
    devset = write("devset", "s0 ||| a b c\ns1 ||| x y\n")
    assert optimize(files, "none", "--devset", devset) == EXIT_INPUT_ERROR
    assert "give the references either as --ref files or in --devset, not both" in one_error_line(capsys)


@pytest.mark.parametrize("weights", ["0.1 0.2 0.3\n", "0.1 0.2\n0 0\n1 1\n"])
def test_kbest_refuses_positional_weights(write, capsys, golden_v18, weights):
    path = write("w", weights)
    assert main(["kbest", "-q", "--forests", str(golden_v18 / "forests"), "--weights", path]) == EXIT_INPUT_ERROR
    assert "whose values are matched to features by position" in one_error_line(capsys)


@pytest.mark.parametrize("flag, value, message", [
    ("--threads", "0", "--threads must be a thread count >= 1 (leave it out for all cores), got 0"),
    ("--seed", "-5", "--seed must be an integer in [0, 2^63)"),
])
def test_tune_option_values(system_files, capsys, flag, value, message):
    assert main([*system_files, flag, value]) == EXIT_INPUT_ERROR
    assert message in one_error_line(capsys)


@pytest.fixture
def system_files(write, tmp_path):
    ini = write("moses.ini", "[weight]\nLM0= 0.5\nTM0= 0.2 0.2\n")
    return ["tune", "-q", "--decoder", "moses", "--decoder-bin", "false", "--decoder-config", ini, "--input",
            write("src", "a\nb\n"), "--ref", write("ref", REF), "--workdir", str(tmp_path / "wd")]


def test_tune_workdir_that_is_a_file(system_files, write, capsys):
    args = list(system_files)
    args[args.index("--workdir") + 1] = write("afile", "x\n")
    assert main(args) == EXIT_INPUT_ERROR
    assert "--workdir must be a directory" in one_error_line(capsys)


# ---------------------------------------------------------------- degenerate results (defect 9)
def test_pro_without_pairs_warns_and_prints_valid_json(files, write, capsys):
    # every hypothesis of a sentence equally good: no pair to learn from
    flat = write("flat", "0 ||| a b c ||| LM0= -1 TM0= 1 2 ||| 0\n0 ||| a b c ||| LM0= -2 TM0= 1 1 ||| 0\n"
                         "1 ||| x y ||| LM0= -1 TM0= 0 1 ||| 0\n")
    for algorithm in ("pro", "apro"):
        assert optimize(files, algorithm, nbest=flat) == 0
        out, err = capsys.readouterr()
        result = json.loads(out, parse_constant=lambda c: pytest.fail(f"{c} in the JSON line"))
        assert result["metric"] == "bleu" and result["score"] >= 0 and f"mtplug: warning: {algorithm}: no " in err
        assert open(files["out"]).read().split() == ["0.5", "0.2", "0.2"]   # the start, unchanged


@pytest.mark.parametrize("algorithm", ["mira", "kbmira", "rampion"])
def test_online_optimizers_that_never_update_say_so(files, write, capsys, algorithm):
    # every hypothesis of a sentence is the same string: hope = fear = the model's 1-best
    same = write("same", "0 ||| a b c ||| LM0= -1 TM0= 1 2 ||| 0\n0 ||| a b c ||| LM0= -2 TM0= 1 1 ||| 0\n"
                         "1 ||| x y ||| LM0= -1 TM0= 0 1 ||| 0\n1 ||| x y ||| LM0= -3 TM0= 2 1 ||| 0\n")
    assert optimize(files, algorithm, nbest=same) == 0
    out, err = capsys.readouterr()
    json.loads(out)
    assert f"mtplug: warning: {algorithm}: the result is the start weights unchanged" in err


@pytest.mark.parametrize("algorithm", ["mira", "kbmira", "rampion"])
def test_a_start_at_a_huge_scale_is_shrunk_and_moves(files, write, capsys, algorithm):
    # once the steps (at most C) vanished against weights this large; the start shrunk to a
    # mean pair margin of 1 moves (optimizers/base.from_scaled_start)
    huge = write("huge", "1e200 1e200 1e200\n")
    assert optimize(files, algorithm, "--start-scale", "unit", init=huge) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["start_used"] == "shrunk"
    assert "the result is the start weights unchanged" not in err
    # by default both run; on this store neither scores higher (BLEU 0 on 2- and 3-word
    # sentences), so the start as given is kept, and the warning says why
    assert optimize(files, algorithm, init=huge) == 0
    out, err = capsys.readouterr()
    result = json.loads(out)
    assert result["start_used"] == "given" and result["score_from_given"] == result["score_from_shrunk"]
    assert "the result is the start weights unchanged" in err
    assert "the run from the start shrunk to a mean pair margin of 1 scored no higher on the tuning store" in err


def test_apro_from_start_weights_whose_objective_overflows(files, write, capsys):
    huge = write("huge", "1e200 1e200 1e200\n")
    assert optimize(files, "apro", init=huge) == 0
    out, err = capsys.readouterr()
    assert "Newton starts from w = 0 instead" in err and json.loads(out)["converged"]


@pytest.mark.parametrize("algorithm", ["apro", "rampion", "pro", "mira", "mert"])
def test_huge_feature_values_are_one_error_line(files, write, capsys, algorithm):
    nbest = write("big", NBEST.replace("LM0= -3", "LM0= -3e250"))
    assert optimize(files, algorithm, nbest=nbest) == EXIT_INPUT_ERROR
    assert "feature LM0_0 has the value -3e+250 in sentence 1; expected |feature values| <= 1e+100" \
        in one_error_line(capsys)


def test_start_weights_that_overflow_the_model_score(files, write, capsys):
    huge = write("huge", "1e308 1e308 1e308\n")
    assert optimize(files, "mira", init=huge) == EXIT_INPUT_ERROR
    assert "the start weights make" in one_error_line(capsys)
