"""One name per idea (issue 37, "One interface"): start weights are --weights, an output
file -o/--output, n-best files --nbest, an n-best size --nbest-size, dtrain's flags have
hyphens. The old spellings keep working as hidden aliases with one warning line each per
run naming the new one; docs/usage.md's table lists them all."""

from __future__ import annotations

import argparse
import functools
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
    # issue 47: the decoder's configuration, references, the metric of one hypothesis and
    # decoder processes at once have one name in tune and dtrain; kbest's cdec -r is --unique
    (["tune", "--config", "moses.ini"], "--config", "--decoder-config", "decoder_config", "moses.ini"),
    (["dtrain", "--refs", "r"], "--refs", "--ref", "refs", "r"),
    (["dtrain", "--scorer", "bleu"], "--scorer", "--sentence-metric", "scorer", "bleu"),
    (["dtrain", "--workers", "2"], "--workers", "--jobs", "jobs", 2),
    (["kbest", "--forests", "f", "--weights", "w", "-r"], "-r", "--unique", "unique", True),
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
    assert read_yaml(write("c.yaml", "config: moses.ini\n")) == {"decoder_config": "moses.ini"}
    assert capsys.readouterr().err == warning("config:", "decoder_config:")
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


def test_python_tune_config_keyword_is_the_old_name_of_decoder_config():
    import mtplug

    with pytest.warns(FutureWarning, match=r"config= is the old name of decoder_config="), \
            pytest.raises(ValueError, match="config= and decoder_config= are one option"):
        mtplug.tune(config="a.ini", decoder_config="a.ini")


def test_comma_lists_of_files_are_the_old_form_of_several_files(files, write, tmp_path, capsys):
    f, s = str(tmp_path / "f.dat"), str(tmp_path / "s.dat")
    assert main(["extract", "-q", "--nbest", files["nbest"], "--ref", files["ref"], "--ffile", f, "--scfile", s]) == 0
    base = ["optimize", "none", "-q", "--weights", files["init"], "--output-format", "init-opt"]
    new, old = str(tmp_path / "new"), str(tmp_path / "old")
    assert main([*base, "--ffile", f, f, "--scfile", s, s, "-o", new]) == 0
    assert capsys.readouterr().err == ""
    assert main([*base, "--ffile", f"{f},{f}", "--scfile", f"{s},{s}", "-o", old]) == 0
    assert capsys.readouterr().err == (warning("--ffile F1,F2", "--ffile F1 F2")
                                       + warning("--scfile F1,F2", "--scfile F1 F2"))
    assert Path(new).read_bytes() == Path(old).read_bytes()
    args = build_parser().parse_args(["extract", "--nbest", "n", "--prev-ffile", "a", "b", "--prev-scfile", "c",
                                      "--prev-scfile", "d"])
    assert (args.prev_ffile, args.prev_scfile) == (["a", "b"], ["c", "d"])


# ---------------------------------------------------------------- the table, made from the parsers
def _section() -> str:
    text = (REPO / "docs" / "usage.md").read_text(encoding="utf-8")
    return text.split("## One name per idea", 1)[1].split("\n## ", 1)[0]


def test_the_table_in_the_docs_is_the_one_the_parsers_make():
    table = "".join(line + "\n" for line in _section().splitlines() if line.startswith("|"))
    assert table == aliases.names_table(build_parser()), \
        "docs/usage.md is out of date: replace its table of names with the output of python -m mtplug.names_doc"


def _value(action: argparse.Action) -> list:
    """A value the parser takes for ``action`` (none for a switch)."""
    if action.nargs in (0, "?"):
        return []
    if action.choices:
        return [str(next(iter(action.choices)))]
    return ["bleu" if "metric" in action.dest else "1"]


def _parse(words: tuple, spelling: str, canonical: str):
    """The value that ``spelling`` sets in command ``words``, the command's other required
    arguments filled in."""
    parser = dict(all_parsers(_parser()))["mtplug " + " ".join(words)]
    action = parser._option_string_actions[canonical]
    argv = [*words, spelling, *_value(action)]
    for other in parser._actions:
        if other.required and other is not action:
            argv += [other.option_strings[0], *_value(other)] if other.option_strings else ["x"]
    return getattr(_parser().parse_args(argv), action.dest)


@functools.lru_cache(maxsize=1)
def _parser() -> argparse.ArgumentParser:
    return build_parser()


def table_spellings() -> list:
    """(command words, spelling, its canonical option, whether an old name) of every
    spelling the table names: each option and its short forms in every command it names,
    and every old name."""
    out = []
    for row in aliases.table_rows(build_parser()):
        for flag, commands, shorts, _ in row["flags"]:
            out += [(words, spelling, flag, False) for words in commands for spelling in [flag, *shorts[words]]]
        out += [(words, old, new, True) for old, new, commands in row["old"] for words in commands]
    return out


def test_the_table_names_every_option_of_its_ideas_and_every_alias():
    spellings = [s[:3] for s in table_spellings()]
    assert (("tune",), "-w", "--weights") in spellings and (("dtrain",), "-w", "--weights") in spellings
    assert (("tune",), "-r", "--ref") in spellings and (("dtrain",), "--ref", "--ref") in spellings
    assert (("tune",), "--config", "--decoder-config") in spellings
    named = {(words, old) for words, old, _ in spellings}
    assert {(("mtplug " + " ".join(w)), old) for w, old in named} >= {(prog, old) for prog, old, _ in every_alias()}


@pytest.mark.parametrize("words, spelling, canonical, old", table_spellings(),
                         ids=lambda x: " ".join(x) if isinstance(x, tuple) else str(x))
def test_every_spelling_in_the_table_works(capsys, words, spelling, canonical, old):
    aliases.reset()
    expected = _parse(words, canonical, canonical)
    assert capsys.readouterr().err == ""
    aliases.reset()
    assert _parse(words, spelling, canonical) == expected
    assert capsys.readouterr().err == (warning(spelling, canonical) if old else "")


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
