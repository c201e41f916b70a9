"""What a new user met (issue 47, items 2 and 7): a misspelt algorithm is reported as such
whatever options follow it; every choice (command, algorithm, metric, choice-valued
option) names the closest valid one, a prefix first; usage errors have the form of every
other error, ``mtplug: error: ...``; the optimizers' messages name options by their flags
where the flags gave them; dtrain names its required keys by their flags; ``score --help``
names M2; ``tune --help`` says what each optimizer option means and its default.

Each case: the exact line, exit status 2, nothing on stdout, no traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mtplug import aliases
from mtplug.cli import EXIT_INPUT_ERROR, build_parser, main
from tests.cli.parsers import all_parsers

ALGORITHMS = "none, mert, pro, apro, mira, kbmira, rampion"
COMMANDS = "score, extract, optimize, kbest, rerank, evaluate, compare, mertdir, join-features, tune, plot, dtrain, example"
METRICS = "bleu, chrf, chrf++, ter, wer, per, cder, moses-ter, m2, moses-chrf, bleudoc, ext:FILE, bleu-ter, ter-bleu"


@pytest.fixture
def nbest_args(example_data, tmp_path):
    return ["--nbest", str(example_data / "run1.best100.out.gz"), "--ref", str(example_data / "ref.0"),
            "--weights", str(example_data / "run1.init.opt"), "-o", str(tmp_path / "x.opt")]


@pytest.fixture
def tune_args(write, tmp_path):
    ini = write("moses.ini", "[weight]\nLM0= 0.5\n")
    ref = write("ref", "a b c\n")
    return ["tune", "-q", "--decoder", "moses", "--decoder-bin", "false", "--decoder-config", ini, "--input", ref,
            "-r", ref, "--workdir", str(tmp_path / "wd")]


def one_error(capsys) -> str:
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err and len(err.splitlines()) == 1, err
    return err.rstrip("\n")


def run(argv, capsys) -> str:
    assert main(argv) == EXIT_INPUT_ERROR
    return one_error(capsys)


# ---------------------------------------------------------------- item 2: choices and their closest
@pytest.mark.parametrize("argv, line", [
    # the algorithm is reported, not the first of its options
    (["optimize", "mertt", "{nbest}"],
     f"mtplug: error: unknown algorithm 'mertt' (did you mean mert?); choose from {ALGORITHMS}; "
     "see 'mtplug optimize --help'"),
    (["optimize", "mertt"],
     f"mtplug: error: unknown algorithm 'mertt' (did you mean mert?); choose from {ALGORITHMS}; "
     "see 'mtplug optimize --help'"),
    (["optimize", "-q", "kbmria", "{nbest}"],
     f"mtplug: error: unknown algorithm 'kbmria' (did you mean kbmira?); choose from {ALGORITHMS}; "
     "see 'mtplug optimize --help'"),
    (["optimize", "frobnicate", "{nbest}"],
     f"mtplug: error: unknown algorithm 'frobnicate'; choose from {ALGORITHMS}; see 'mtplug optimize --help'"),
    (["scre", "--hyp", "h"],
     f"mtplug: error: unknown command 'scre' (did you mean score?); choose from {COMMANDS}; see 'mtplug --help'"),
    (["optimize", "mert", "{nbest}", "--metric", "blue"],
     f"mtplug: error: --metric: unknown metric blue (did you mean bleu?); choose from {METRICS}; "
     "see 'mtplug optimize mert --help'"),
    (["optimize", "mert", "{nbest}", "--metric", "bleu:0.6,tre:0.4"],
     f"mtplug: error: --metric: unknown metric tre (did you mean ter?); choose from {METRICS}; "
     "see 'mtplug optimize mert --help'"),
    (["optimize", "mert", "{nbest}", "--directions", "powel"],
     "mtplug: error: --directions: invalid choice: 'powel' (did you mean powell?); choose from coordinate, "
     "random, powell, expbleu; see 'mtplug optimize mert --help'"),
    (["optimize", "pro", "{nbest}", "--sentence-metric", "bleu1"],
     "mtplug: error: --sentence-metric: invalid choice: 'bleu1' (did you mean bleu+1?); choose from bleu, bleu+1, "
     "moses-sentence-bleu, nakov, stupid, fixed-stupid; see 'mtplug optimize pro --help'"),
    (["optimize", "mert", "{nbest}", "--reflen", "longest"],
     "mtplug: error: --reflen: invalid choice: 'longest'; choose from closest, shortest, average; "
     "see 'mtplug optimize mert --help'"),
])
def test_a_choice_names_the_closest_valid_one(nbest_args, capsys, argv, line):
    argv = [a for x in argv for a in (nbest_args if x == "{nbest}" else [x])]
    assert run(argv, capsys) == line


def test_score_and_evaluate_metrics(example_data, capsys):
    ref = str(example_data / "ref.0")
    assert run(["score", "--hyp", ref, "--ref", ref, "--metric", "bleu", "chrff"], capsys) == (
        f"mtplug: error: --metric: unknown metric chrff (did you mean chrf?); choose from {METRICS}; "
        "see 'mtplug score --help'")
    assert run(["evaluate", "-q", "--ref", ref, "--hyps-baseline", ref, "--metric", "blue"], capsys) == (
        f"mtplug: error: --metric blue: unknown metric blue (did you mean bleu?); choose from {METRICS}")


@pytest.mark.parametrize("extra, line", [
    (["--optimizer", "mertt"], "mtplug: error: --optimizer must be one of mert, pro, apro, mira, kbmira, rampion, "
                               "got 'mertt' (did you mean mert?)"),
    (["--directions", "powel"], "mtplug: error: --directions must be one of coordinate, random, powell, expbleu, "
                                "got 'powel' (did you mean powell?)"),
    (["--metric", "blue"], f"mtplug: error: --metric: unknown metric blue (did you mean bleu?); choose from {METRICS}"),
    (["--decoder", "mosses"], "mtplug: error: --decoder: invalid choice: 'mosses' (did you mean moses?); choose from "
                              "moses, cdec; see 'mtplug tune --help'"),
    (["--optimizer", "pro", "--restart", "2"],
     "mtplug: error: unknown option --restart (did you mean --restarts?); see 'mtplug tune --help'"),
])
def test_tune_names_the_closest_valid_one(tune_args, capsys, extra, line):
    assert run([*tune_args, *extra], capsys) == line


def test_tune_yaml_names_the_closest_valid_one(tune_args, write, capsys):
    path = write("t.yaml", "optimizer: mert\noptimizer_options:\n  restart: 2\n")
    assert run([*tune_args, "--yaml", path], capsys) == (
        f"mtplug: error: {path}:3: optimizer_options: restart is not an option of mert (did you mean restarts?); "
        "its options: activate_features, directions, max_iterations, mu_max, mu_start, random_directions, "
        "random_walks, reg, reg_fixed_feature, reg_strength, restarts, tolerance")


def test_dtrain_names_the_closest_valid_one(capsys):
    assert run(["dtrain", "--decoder-config", "c", "--input", "x", "--ref", "y", "--pair-sampling", "xyx"],
               capsys) == "mtplug: error: --pair-sampling: 'xyx' is not one of XYX, XYX-full, all, PRO (did you mean XYX?)"


@pytest.mark.parametrize("word, names, expected", [
    ("--rest", ["--forests", "--restarts", "--reg"], "--restarts"),      # a prefix wins
    ("--se", ["--sentence-metric", "--seed", "--scheduler"], "--seed"),  # the closest of the prefixed
    ("--boot", ["--plot", "--output", "--seed"], None),                  # nothing close enough
    ("--boot", ["--seed", "--boot-samples"], "--boot-samples"),
    ("mertt", ["none", "mert", "pro"], "mert"),
    ("blue", ["bleu", "chrf", "ter"], "bleu"),
    ("tre", ["bleu", "ter", "wer"], "ter"),                                # two letters swapped
    ("powel", ["coordinate", "powell"], "powell"),
    ("--frobnicate", ["--ref", "--format"], None),
    ("", ["a"], None),
])
def test_closest(word, names, expected):
    assert aliases.closest(word, names) == expected


# ---------------------------------------------------------------- item 7: one form, flags, help texts
def test_every_usage_error_has_the_form_of_every_other_error(nbest_args, capsys):
    cases = [["optimize", "mert", *nbest_args, "--rest", "1"], ["optimize", "mert", *nbest_args, "--seed", "-1"],
             ["optimize", "mert", *nbest_args, "--restarts", "x"], ["optimize", "mertt"], ["mertdir", "extra"],
             ["kbest", "--forests", "f"], ["--frobnicate", "mertdir"], ["optimize", "mert", *nbest_args, "--reg", "l2"]]
    for argv in cases:
        line = run(argv, capsys)
        assert line.startswith("mtplug: error: ") and line.count("mtplug") <= 2, line
    assert run(["optimize", "mert", *nbest_args, "--restarts", "x"], capsys) == (
        "mtplug: error: --restarts: invalid int value: 'x'; see 'mtplug optimize mert --help'")
    assert run(["kbest", "--forests", "f"], capsys) == (
        "mtplug: error: the following arguments are required: --weights/-w; see 'mtplug kbest --help'")


@pytest.mark.parametrize("extra, line", [
    (["--reg-strength", "2"], "mtplug: error: mert: --reg-strength applies only with a regulariser (--reg)"),
    (["--reg", "l2"], "mtplug: error: mert: --reg l2 needs --reg-strength > 0 (the regulariser's λ)"),
    (["--reg", "l2", "--reg-strength", "0"],
     "mtplug: error: mert: --reg-strength must be a finite number > 0 with --reg l2 (0 is no regulariser: leave --reg "
     "out), got 0.0"),
    (["--random-directions", "3"],
     "mtplug: error: mert: --random-directions applies only with --directions random"),
])
def test_optimizer_messages_name_the_flags(nbest_args, capsys, extra, line):
    assert run(["optimize", "mert", *nbest_args, *extra], capsys) == line


def test_tune_names_the_optimizer_options_as_they_were_given(tune_args, write, capsys):
    assert run([*tune_args, "--reg-strength", "1"], capsys) == (
        "mtplug: error: mert: --reg-strength applies only with a regulariser (--reg)")
    path = write("t.yaml", "optimizer_options:\n  reg_strength: 1\n")
    assert run([*tune_args, "--yaml", path], capsys) == (
        f"mtplug: error: {path}: mert: reg_strength applies only with a regulariser (reg)")


def test_optimizer_names_in_messages_become_flags_only_where_they_are_options():
    labels = {"hope": "--hope", "fear": "--fear", "average": "--average", "order": "--order", "c": "--c"}
    choices = {"average": ("average", "last")}
    assert aliases.flags_in("order must be fixed|shuffle and average average|last", labels, choices) == (
        "--order must be fixed|shuffle and --average average|last")
    assert aliases.flags_in("hope must be one of ('lu', 'hope'), fear one of ('pb',)", labels, choices) == (
        "--hope must be one of ('lu', 'hope'), --fear one of ('pb',)")
    assert aliases.flags_in("a step from the fear toward the hope of c words", labels, choices) == (
        "a step from the fear toward the hope of c words")


@pytest.mark.parametrize("argv, line", [
    (["dtrain", "--input", "x", "--ref", "y"],
     "mtplug: error: --decoder-config is required (the cdec.ini of the decoder)"),
    (["dtrain", "--decoder-config", "c", "--input", "x"], "mtplug: error: --ref: give --input and --ref, or --bitext"),
    (["dtrain", "--decoder-config", "c", "--input", "x", "--ref", "y", "--l1-reg", "clip"],
     "mtplug: error: --l1-reg: clip needs --l1-reg-strength"),
])
def test_dtrain_names_its_flags(capsys, argv, line):
    assert run(argv, capsys) == line


def test_dtrain_names_the_keys_of_its_ini(write, capsys):
    ini = write("dtrain.ini", "input=x\nrefs=y\n")
    assert run(["dtrain", "-c", ini], capsys) == (
        f"mtplug: error: {ini}: decoder_config is required (the cdec.ini of the decoder; or give --decoder-config)")


def _help(command: str) -> str:
    return dict(all_parsers(build_parser()))[f"mtplug {command}"].format_help()


def test_score_help_names_every_metric_kind():
    text = " ".join(_help("score").split())
    assert "BLEU, chrF, chrF++, TER, WER, PER, CDER, M2 (grammatical error correction), Moses's scorers" in text


def test_tune_help_says_what_each_optimizer_option_means_and_its_default():
    text = " ".join(_help("tune").split())
    assert ("--restarts N mert: random start points besides the given one (0 = only the start; default 20, as "
            "mert-moses.pl passes)") in text
    # one option of several optimizers: each one's meaning and default
    assert "--passes N mira: passes over the sentences (default 10); kbmira: passes over the sentences (Moses -J; " \
           "default 60)" in text
    for opt in ("--directions", "--c", "--sentence-metric", "--loss", "--start-scale"):
        line = text.split(f" {opt} ", 1)[1].split(" --", 1)[0]
        assert "default" in line, (opt, line)


def test_through_the_program_there_is_no_traceback(example_data, tmp_path):
    p = subprocess.run([sys.executable, "-m", "mtplug", "optimize", "mertt", "--nbest",
                        str(example_data / "run1.best100.out.gz"), "-o", str(tmp_path / "x.opt")],
                       check=False, capture_output=True, text=True)
    assert p.returncode == EXIT_INPUT_ERROR and p.stdout == ""
    assert p.stderr == (f"mtplug: error: unknown algorithm 'mertt' (did you mean mert?); choose from {ALGORITHMS}; "
                        "see 'mtplug optimize --help'\n")
