"""One name per idea (issue 37, "One interface"): start weights are --weights, an output
file -o/--output, n-best files --nbest, an n-best size --nbest-size, dtrain's flags have
hyphens. The old spellings keep working as hidden aliases with one warning line each per
run naming the new one; docs/usage.md's table lists them all."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
import yaml

from mtplug import aliases
from mtplug.cli import EXIT_INPUT_ERROR, build_parser, main
from tests.cli.parsers import all_parsers

REPO = Path(__file__).resolve().parents[2]
NBEST = ("0 ||| a b c ||| LM0= -1 TM0= 1 2 ||| 0\n0 ||| a b d ||| LM0= -2 TM0= 1 1 ||| 0\n"
         "1 ||| x y ||| LM0= -1 TM0= 0 1 ||| 0\n1 ||| x z ||| LM0= -3 TM0= 2 1 ||| 0\n")
REF = "a b c\nx y\n"




def every_alias() -> list:
    """(command, old, new) of every alias of every parser."""
    return [(prog, old, new) for prog, p in all_parsers(build_parser()) for old, new in aliases.old_names(p).items()]


def warning(old: str, new: str) -> str:
    return f"mtplug: warning: {old} is the old name of {new} (it still works; use {new})\n"


def test_aliases_exist_and_are_hidden_from_help():
    found = every_alias()
    olds = {old for _, old, _ in found}
    assert {"--init", "--sparse-init", "--out", "--out-format", "--out-nbest", "-k", "--hgdir", "--continue",
            "--learning_rate", "--input_weights", "--input-weights", "--k", "--metrics"} <= olds
    for prog, p in all_parsers(build_parser()):
        shown = [s for a in p._actions if a.help is not argparse.SUPPRESS for s in a.option_strings]
        usage = p.format_usage()
        for old, new in aliases.old_names(p).items():
            assert old not in shown and new in shown, (prog, old)
            assert not re.search(rf"(?<![\w-]){re.escape(old)}(?![\w-])", usage), (prog, old)


@pytest.fixture
def files(write, tmp_path):
    return {"nbest": write("nbest", NBEST), "ref": write("ref", REF), "init": write("init", "0.5 0.2 0.2\n")}


def test_optimize_old_names_give_the_same_weights_with_one_warning_each(files, tmp_path, capsys):
    new, old = str(tmp_path / "new"), str(tmp_path / "old")
    base = ["optimize", "none", "-q", "--nbest", files["nbest"], "--ref", files["ref"]]
    assert main([*base, "--weights", files["init"], "-o", new, "--output-format", "init-opt"]) == 0
    assert capsys.readouterr().err == ""
    assert main([*base, "--init", files["init"], "--out", old, "--out-format", "init-opt"]) == 0
    err = capsys.readouterr().err
    assert err == (warning("--init", "--weights") + warning("--out", "--output")
                   + warning("--out-format", "--output-format"))
    assert Path(new).read_bytes() == Path(old).read_bytes()


def test_an_old_name_is_warned_of_once_per_run(files, tmp_path, capsys):
    argv = ["optimize", "none", "-q", "--nbest", files["nbest"], "--ref", files["ref"], "--init", files["init"],
            "--init", files["init"], "--init=" + files["init"], "--output", str(tmp_path / "w")]
    assert main(argv) == 0
    assert capsys.readouterr().err == warning("--init", "--weights")
    assert main(argv) == 0     # a new run warns again
    assert capsys.readouterr().err == warning("--init", "--weights")


@pytest.mark.parametrize("argv, old, new, dest, value", [
    (["kbest", "--forests", "f", "--weights", "w", "-k", "7"], "-k", "--nbest-size", "nbest_size", 7),
    (["kbest", "--forests", "f", "--weights", "w", "-k7"], "-k", "--nbest-size", "nbest_size", 7),
    (["kbest", "--forests", "f", "--weights", "w", "--out", "o"], "--out", "--output", "output", "o"),
    (["rerank", "--nbest", "n", "--weights", "w", "-k", "3"], "-k", "--nbest-size", "nbest_size", 3),
    (["rerank", "--nbest", "n", "--weights", "w", "--out-nbest", "o"], "--out-nbest", "--output-nbest",
     "output_nbest", "o"),
    (["plot", "wd", "--out", "d"], "--out", "--output", "output", "d"),
    (["optimize", "mert", "--hgdir", "hg", "--weights", "w", "-o", "o"], "--hgdir", "--forests", "forests", ["hg"]),
    (["optimize", "mert", "--nbest", "n", "--sparse-init", "s", "--weights", "w", "-o", "o"], "--sparse-init",
     "--sparse-weights", "sparse_weights", "s"),
    (["tune", "--nbest", "50"], "--nbest", "--nbest-size", "nbest_size", 50),
    (["tune", "--continue"], "--continue", "--resume", "resume", True),
    (["dtrain", "--learning_rate", "0.5"], "--learning_rate", "--learning-rate", "learning_rate", "0.5"),
    (["dtrain", "--input_weights", "w"], "--input_weights", "--weights", "input_weights", "w"),
    (["dtrain", "--input-weights", "w"], "--input-weights", "--weights", "input_weights", "w"),
    (["dtrain", "--k", "20"], "--k", "--nbest-size", "k", "20"),
    (["evaluate", "--hyps-baseline", "b", "--metrics", "bleu", "ter"], "--metrics", "--metric", "metric",
     ["bleu", "ter"]),
])
def test_each_old_name_sets_what_the_new_one_sets(capsys, argv, old, new, dest, value):
    aliases.reset()
    args = build_parser().parse_args(argv)
    assert getattr(args, dest) == value
    assert capsys.readouterr().err == warning(old, new)


def test_tune_yaml_old_key(write, capsys):
    from mtplug.tuning.config import read_yaml

    aliases.reset()
    assert read_yaml(write("t.yaml", "nbest: 20\n")) == {"nbest_size": 20}
    assert capsys.readouterr().err == warning("nbest:", "nbest_size:")
    path = write("both.yaml", "nbest: 20\nnbest_size: 30\n")
    with pytest.raises(ValueError, match="nbest and nbest_size are one option"):
        read_yaml(path)


def test_compare_pool_init_key_is_the_old_name_of_weights(tmp_path, write, capsys):
    from mtplug.experiments.study_config import load_study

    nbest, ref, init = write("nbest", NBEST), write("ref", REF), write("init", "0.5 0.2 0.2\n")
    study = {"workdir": str(tmp_path / "wd"), "mode": "pool", "optimizers": {"mert": {"optimizer": "mert"}},
             "pool": {"nbest": [nbest], "ref": [ref], "init": init, "test_nbest": [nbest], "test_ref": [ref]}}
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(study))
    aliases.reset()
    loaded = load_study(str(path))
    assert loaded.pool["weights"] == init
    assert capsys.readouterr().err == warning("pool: init:", "pool: weights:")
    # replicas run before the renaming keep their fingerprint (pool.init)
    assert "pool.init" in loaded.fingerprint(loaded.replicas()[0])
    study["pool"]["weights"] = init
    path.write_text(yaml.safe_dump(study))
    with pytest.raises(ValueError, match="pool: init and weights are one key"):
        load_study(str(path))


def test_python_tune_nbest_keyword_is_the_old_name_of_nbest_size():
    import mtplug

    with pytest.warns(FutureWarning, match=r"nbest= is the old name of nbest_size="), \
            pytest.raises(ValueError, match="nbest= and nbest_size= are one option"):
        mtplug.tune(nbest=5, nbest_size=5)


def test_the_table_in_the_docs_names_every_alias():
    text = (REPO / "docs" / "usage.md").read_text(encoding="utf-8")
    section = text.split("## One name per idea", 1)[1].split("\n## ", 1)[0]
    code = " ".join(re.findall(r"`([^`]*)`", section))

    def named(option: str) -> bool:
        return re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", code) is not None

    for prog, old, new in every_alias():
        if prog == "mtplug dtrain" and old not in ("--input_weights", "--input-weights", "--k"):
            continue   # dtrain's underscore spellings: one row for all of them
        assert named(old) and named(new), (prog, old, new)


def test_unknown_option_suggests_the_new_name_of_an_old_one(capsys):
    assert main(["kbest", "--forests", "f", "--weights", "w", "--ot", "x"]) == EXIT_INPUT_ERROR
    assert "(did you mean --output?)" in capsys.readouterr().err


def test_no_example_in_help_uses_an_old_name():
    for prog, p in all_parsers(build_parser()):
        for old in aliases.old_names(p):
            assert not re.search(rf"(?<![\w-]){re.escape(old)}(?![\w-])", p.epilog or ""), (prog, old)
