"""``-`` reads standard input wherever a command reads a file once (issue 37, "One
interface": ``mtplug optimize --nbest -`` was ``-: no such file``). One option at a time
may be ``-``; errors in what came from stdin name ``<stdin>`` and the line."""

from __future__ import annotations

import gzip
import io
import json
import sys

import pytest

from mtplug.cli import EXIT_INPUT_ERROR, STDIN_INPUTS, build_parser, main
from mtplug.fileio import STDIN_NAME, stdin_reader

NBEST = ("0 ||| a b c ||| LM0= -1 TM0= 1 2 ||| 0\n0 ||| a b d ||| LM0= -2 TM0= 1 1 ||| 0\n"
         "1 ||| x y ||| LM0= -1 TM0= 0 1 ||| 0\n1 ||| x z ||| LM0= -3 TM0= 2 1 ||| 0\n")
REF = "a b c\nx y\n"


@pytest.fixture
def stdin(monkeypatch):
    """stdin(data): standard input holds ``data`` (str or bytes) for the next command."""

    def _set(data) -> None:
        raw = data.encode("utf-8") if isinstance(data, str) else data
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8"))

    return _set


@pytest.fixture
def files(write, tmp_path):
    return {"nbest": write("nbest", NBEST), "ref": write("ref", REF), "init": write("init", "0.5 0.2 0.2\n"),
            "out": str(tmp_path / "out")}


def one_error(capsys) -> str:
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err.strip()


def test_every_input_option_listed_exists():
    commands = {name: parser for a in build_parser()._actions if hasattr(a, "choices") and a.choices
                for name, parser in a.choices.items()}
    for command, flags in STDIN_INPUTS.items():
        parser = commands[command]
        if command == "optimize":
            parser = next(a for a in parser._actions if hasattr(a, "choices") and a.choices).choices["mert"]
        dests = {a.dest for a in parser._actions}
        missing = set(flags) - dests - ({"forests", "store"} if command == "optimize" else set())
        assert not missing, (command, missing)


def test_optimize_reads_the_nbest_list_from_stdin(example_data, stdin, tmp_path, capsys):
    base = ["optimize", "mert", "-q", "--ref", str(example_data / "ref.0"), "--weights",
            str(example_data / "run1.init.opt"), "--seed", "3"]
    assert main([*base, "--nbest", str(example_data / "run1.best100.out.gz"), "--output", str(tmp_path / "a")]) == 0
    from_file = json.loads(capsys.readouterr().out)
    stdin(gzip.decompress((example_data / "run1.best100.out.gz").read_bytes()))
    assert main([*base, "--nbest", "-", "--output", str(tmp_path / "b")]) == 0
    from_stdin = json.loads(capsys.readouterr().out)
    assert from_stdin["score"] == from_file["score"]
    assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes()


@pytest.mark.parametrize("argv, data", [
    (["optimize", "none", "-q", "--nbest", "{nbest}", "--ref", "{ref}", "--weights", "-", "--output", "{out}"],
     "0.5 0.2 0.2\n"),
    (["optimize", "none", "-q", "--nbest", "{nbest}", "--ref", "-", "--weights", "{init}", "--output", "{out}"], REF),
    (["optimize", "none", "-q", "--nbest", "{nbest}", "--devset", "-", "--weights", "{init}", "--output", "{out}"],
     "s0 ||| a b c\ns1 ||| x y\n"),
    (["extract", "-q", "--nbest", "-", "--ref", "{ref}", "--ffile", "{out}"], NBEST),
    (["rerank", "-q", "--nbest", "-", "--weights", "{init}", "--output", "{out}"], NBEST),
    (["rerank", "-q", "--nbest", "{nbest}", "--weights", "-", "--output", "{out}"], "0.5 0.2 0.2\n"),
    (["score", "--ref", "-", "--hyp", "{ref}"], REF),
    (["score", "--hyp", "-", "--ref", "{ref}"], REF),
])
def test_an_input_option_reads_stdin(files, stdin, capsys, argv, data):
    argv = [a.format(**files) for a in argv]
    stdin(data)
    assert main(argv) == 0, capsys.readouterr().err
    assert "<stdin>" not in capsys.readouterr().err


def test_features_and_scores_files_from_stdin(files, tmp_path, stdin, capsys):
    f, s = str(tmp_path / "f.dat"), str(tmp_path / "s.dat")
    assert main(["extract", "-q", "--nbest", files["nbest"], "--ref", files["ref"], "--ffile", f, "--scfile", s]) == 0
    common = ["optimize", "none", "-q", "--weights", files["init"], "--output", files["out"]]
    assert main([*common, "--ffile", f, "--scfile", s]) == 0
    expected = json.loads(capsys.readouterr().out)["score"]
    stdin(open(f).read())
    assert main([*common, "--ffile", "-", "--scfile", s]) == 0
    assert json.loads(capsys.readouterr().out)["score"] == expected
    stdin(open(s).read())
    assert main([*common, "--ffile", f, "--scfile", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["score"] == expected


def test_kbest_reads_lattices_from_stdin(write, tmp_path, stdin, capsys):
    weights = write("w", "LatticeCost_0 -1\n")
    stdin("((('a',0.5,1),('b',0.25,1),),)\n")
    assert main(["kbest", "-q", "--forests", "-", "--weights", weights, "-k", "2"]) == 0
    assert capsys.readouterr().out.startswith("0 ||| b ||| LatticeCost_0= 0.25 ||| -0.25\n")


def test_evaluate_reads_one_system_from_stdin(write, stdin, capsys):
    ref = write("ref", "a b c d\nx y z w\n")
    base = write("base", "a b c d\nx y z q\n")
    stdin("a b c d\nx y z w\n")
    assert main(["evaluate", "-q", "--ref", ref, "--hyps-baseline", base, "--hyps-new", "-", "--metric", "bleu",
                 "--ar-shuffles", "10", "--boot-samples", "10"]) == 0
    assert "new" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["optimize", "none", "--nbest", "-", "--ref", "{ref}", "--weights", "-", "--output", "{out}"],
     "--nbest and --weights both name standard input ('-'), which can be read once: give one of them as a file"),
    (["optimize", "none", "--nbest", "-", "-", "--ref", "{ref}", "--weights", "{init}", "--output", "{out}"],
     "--nbest names standard input ('-') twice; it can be read once"),
    (["optimize", "none", "--ffile", "a", "-", "--scfile", "-", "--weights", "{init}", "--output", "{out}"],
     "--ffile and --scfile both name standard input"),
    (["evaluate", "--ref", "-", "--hyps-baseline", "{ref}", "--hyps-x", "-"],
     "--hyps-x and --ref both name standard input"),
    (["score", "--hyp", "-", "--ref", "-"], "--hyp and --ref both name standard input"),
])
def test_two_options_on_stdin_are_one_error_naming_both(files, stdin, capsys, argv, message):
    stdin(NBEST)
    assert main([a.format(**files) for a in argv]) == EXIT_INPUT_ERROR
    line = one_error(capsys)
    assert line.startswith("mtplug: error: ") and message in line


def test_stdin_reader_rule():
    assert stdin_reader([("--a", "x"), ("--b", "-")]) == "--b"
    assert stdin_reader([("--a", "x")]) is None


@pytest.mark.parametrize("argv, data, where", [
    (["optimize", "none", "-q", "--nbest", "-", "--ref", "{ref}", "--weights", "{init}", "--output", "{out}"],
     NBEST.replace("LM0= -2", "LM0= x"), "<stdin>:2: "),
    (["rerank", "-q", "--nbest", "{nbest}", "--weights", "-"], "LM0 0.5\n\x01bad\n", "<stdin>"),
    (["score", "--hyp", "-", "--ref", "{ref}"], "a b c\n", "<stdin>"),
    (["optimize", "none", "-q", "--nbest", "{nbest}", "--devset", "-", "--weights", "{init}", "--output", "{out}"],
     "s0 ||| a b c\nx y\n", "<stdin>:2: expected 'source ||| reference"),
    (["tune", "--yaml", "-"], "decoder: moses\nfrobnicate: 1\n", "<stdin>:2: unknown option 'frobnicate'"),
    (["dtrain", "-c", "-"], "k=10\nfrobnicate=1\n", "<stdin>:2: unknown dtrain key 'frobnicate'"),
    (["dtrain", "-q", "-c", "{dtrain_ini}", "--weights", "-", "--decoder-bin", "false"], "LM 1\n bad 2\n",
     "<stdin>:2: "),
])
def test_errors_in_stdin_name_it_and_the_line(files, write, stdin, capsys, argv, data, where):
    files = {**files, "dtrain_ini": write("dtrain.ini", f"input={files['ref']}\nrefs={files['ref']}\n"
                                                        "decoder_config=cdec.ini\n")}
    stdin(data)
    assert main([a.format(**files) for a in argv]) == EXIT_INPUT_ERROR
    line = one_error(capsys)
    assert line.startswith(f"mtplug: error: {where}"), line
    assert "mtplug-stdin-" not in line and STDIN_NAME in line


def test_dtrain_ini_and_its_input_cannot_both_be_stdin(stdin, capsys):
    stdin("input=-\nrefs=r\ndecoder_config=c\n")
    assert main(["dtrain", "-c", "-"]) == EXIT_INPUT_ERROR
    assert "-c and input (dtrain.ini) both name standard input" in one_error(capsys)
