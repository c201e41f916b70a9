"""Option abbreviations are refused and an unknown option is one did-you-mean line
(issue 37, "One interface"): ``--restart 2`` was taken as ``--restarts``, ``--se 1`` as
``--seed``. The line has the form of every error (issue 47): ``mtplug: error: ...; see
'PROG --help'``. The Moses programs keep Moses's parsing (getopt_long and
boost::program_options take unambiguous prefixes)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mtplug.cli import EXIT_INPUT_ERROR, build_parser, main
from tests.cli.parsers import all_parsers


def test_no_parser_of_the_mtplug_command_takes_abbreviations():
    parsers = [p for _, p in all_parsers(build_parser())]
    assert len(parsers) > 15
    assert [p.prog for p in parsers if p.allow_abbrev] == []


@pytest.fixture
def nbest_args(example_data, tmp_path):
    return ["--nbest", str(example_data / "run1.best100.out.gz"), "--ref", str(example_data / "ref.0"),
            "--weights", str(example_data / "run1.init.opt"), "--output", str(tmp_path / "w")]


@pytest.mark.parametrize("argv, line", [
    (["optimize", "mert", "{nbest}", "--restart", "2"],
     "mtplug: error: unknown option --restart (did you mean --restarts?); see 'mtplug optimize mert --help'"),
    (["optimize", "mert", "{nbest}", "--se", "1"],
     "mtplug: error: unknown option --se (did you mean --seed?); see 'mtplug optimize mert --help'"),
    (["optimize", "mert", "{nbest}", "--restart=2"],
     "mtplug: error: unknown option --restart (did you mean --restarts?); see 'mtplug optimize mert --help'"),
    (["score", "--hyp", "h", "--rf", "r"],
     "mtplug: error: unknown option --rf (did you mean --ref?); see 'mtplug score --help'"),
    (["score", "--hyp", "h", "--ref", "r", "--frobnicate"],
     "mtplug: error: unknown option --frobnicate; see 'mtplug score --help'"),
    (["tune", "--restart", "3"],
     "mtplug: error: unknown option --restart (did you mean --restarts?); see 'mtplug tune --help'"),
    (["rerank", "--nbest", "n", "--weight", "w"],
     "mtplug: error: unknown option --weight (did you mean --weights?); see 'mtplug rerank --help'"),
    (["optimize", "--restart", "2", "mert"],
     "mtplug: error: unknown option --restart; see 'mtplug optimize --help'"),
    (["--frobnicate", "mertdir"], "mtplug: error: unknown option --frobnicate; see 'mtplug --help'"),
    # a prefix of an option wins over a closer-looking other (--rest is not --forests); no
    # option looks enough like --boot in optimize (not --plot, --output), one begins with it in evaluate
    (["optimize", "mert", "{nbest}", "--rest", "2"],
     "mtplug: error: unknown option --rest (did you mean --restarts?); see 'mtplug optimize mert --help'"),
    (["optimize", "mert", "{nbest}", "--boot", "2"], "mtplug: error: unknown option --boot; see 'mtplug optimize mert --help'"),
    (["evaluate", "--hyps-baseline", "h", "--boot", "2"],
     "mtplug: error: unknown option --boot (did you mean --boot-samples?); see 'mtplug evaluate --help'"),
])
def test_an_unknown_option_is_one_did_you_mean_line(nbest_args, capsys, argv, line):
    argv = [a for x in argv for a in (nbest_args if x == "{nbest}" else [x])]
    assert main(argv) == EXIT_INPUT_ERROR
    captured = capsys.readouterr()
    assert captured.err == line + "\n" and captured.out == ""


def test_an_unknown_option_is_reported_before_the_required_ones_it_hides(capsys):
    # --int for --init: the missing --weights is a consequence, the misspelling the cause; the
    # suggestion is the new name of the option --int resembles (--init, now --weights)
    assert main(["optimize", "none", "--store", "s.npz", "--int", "w", "--output", "o"]) == EXIT_INPUT_ERROR
    assert capsys.readouterr().err == ("mtplug: error: unknown option --int (did you mean --weights?); "
                                       "see 'mtplug optimize none --help'\n")


def test_a_stray_argument_names_the_command(capsys):
    assert main(["mertdir", "extra"]) == EXIT_INPUT_ERROR
    assert capsys.readouterr().err == "mtplug: error: unexpected argument(s): extra; see 'mtplug mertdir --help'\n"


def test_values_that_look_like_options_are_still_values(nbest_args, capsys):
    # a negative number and '-' (stdin) are values, not unknown options
    assert main(["optimize", "mert", *nbest_args, "--seed", "-1"]) == EXIT_INPUT_ERROR
    assert "--seed must be an integer in [0, 2^63), got -1" in capsys.readouterr().err


def test_through_the_program_there_is_no_traceback():
    p = subprocess.run([sys.executable, "-m", "mtplug", "optimize", "pro", "--se", "1"], check=False,
                       capture_output=True,
                       text=True)
    assert p.returncode == EXIT_INPUT_ERROR and p.stdout == ""
    assert p.stderr == "mtplug: error: unknown option --se (did you mean --seed?); see 'mtplug optimize pro --help'\n"


def test_the_moses_programs_take_unambiguous_prefixes_as_moses_does(write, capsys):
    # Moses's evaluator parses with getopt_long, which takes --refer for --reference
    from mtplug.integrations.moses import evaluator

    ref = write("ref", "a b c d\n")
    assert evaluator.main(["--refer", ref, "--cand", ref]) == 0
    assert capsys.readouterr().out.strip() == "1.0000"
