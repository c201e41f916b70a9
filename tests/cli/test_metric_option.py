"""--metric means the same in every command (issue 37, "One interface"): a comma joins the
parts of one interpolation (Moses's --sctype BLEU,TER), several metrics are several values
after one --metric (score, evaluate), and the commands that measure one metric (extract,
optimize, tune) refuse several saying how to join them. Every --help and docs/metrics.md
describe it in the same words (mtplug.metric_help.METRIC_HELP)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from mtplug import aliases
from mtplug.cli import EXIT_INPUT_ERROR, build_parser, main
from mtplug.metric_help import METRIC_HELP
from tests.cli.parsers import all_parsers

REPO = Path(__file__).resolve().parents[2]
HYPS = ["the small house .", "a big , big house", "he reads a book", "nothing here"]
REFS = ["the small house .", "a big house !", "he reads the book", "nothing at all here"]
NBEST = ("0 ||| the small house . ||| LM0= -1 TM0= 1 2 ||| 0\n0 ||| a small house ||| LM0= -2 TM0= 1 1 ||| 0\n"
         "1 ||| a big house ! ||| LM0= -1 TM0= 0 1 ||| 0\n1 ||| big house ||| LM0= -3 TM0= 2 1 ||| 0\n")


@pytest.fixture
def text(write):
    return write("hyp", "".join(h + "\n" for h in HYPS)), write("ref", "".join(r + "\n" for r in REFS))




def _score(capsys, hyp, ref, *metrics, json_lines=False):
    argv = ["score", "--hyp", hyp, "--ref", ref, *(["--metric", *metrics] if metrics else [])]
    assert main([*argv, *(["--json"] if json_lines else [])]) == 0
    out = capsys.readouterr().out.splitlines()
    return [json.loads(x) for x in out] if json_lines else out


def _value(line: str) -> float:
    return float(line.split(" = ")[1].split()[0])


def test_score_several_values_print_a_line_each(text, capsys):
    hyp, ref = text
    lines = _score(capsys, hyp, ref, "bleu", "ter")
    assert [x.split(" = ")[0] for x in lines] == ["BLEU", "TER"]
    assert _score(capsys, hyp, ref, "bleu")[0] == lines[0] == _score(capsys, hyp, ref)[0]   # bleu by default


def test_score_comma_prints_the_interpolation_under_its_name(text, capsys):
    hyp, ref = text
    bleu, ter = (_value(x) for x in _score(capsys, hyp, ref, "bleu", "ter"))
    # bleu,ter is Moses's BLEU,TER: equal weights of BLEU and 1 - TER, one line
    records = _score(capsys, hyp, ref, "bleu,ter", json_lines=True)
    assert len(records) == 1 and records[0]["name"] == records[0]["metric"] == "bleu:0.5,ter:0.5"
    assert records[0]["signature"].startswith("parts:BLEU+TER|")
    assert records[0]["score"] == pytest.approx(0.5 * bleu + 0.5 * (100 - ter), abs=0.006)
    lines = _score(capsys, hyp, ref, "bleu:0.6,ter:0.4", "bleu", "ter")
    assert [x.split(" = ")[0] for x in lines] == ["bleu:0.6,ter:0.4", "BLEU", "TER"]
    assert _value(lines[0]) == pytest.approx(0.6 * bleu + 0.4 * (100 - ter), abs=0.011)   # 2 decimals each


def test_score_refuses_a_metric_named_twice(text, capsys):
    hyp, ref = text
    assert main(["score", "--hyp", hyp, "--ref", ref, "--metric", "bleu,ter", "bleu:0.5,ter:0.5"]) == EXIT_INPUT_ERROR
    assert capsys.readouterr().err == "mtplug: error: --metric names bleu:0.5,ter:0.5 twice\n"


@pytest.mark.parametrize("argv", [
    ["extract", "--nbest", "NB", "--ref", "REF", "--store", "OUT"],
    ["optimize", "mert", "--nbest", "NB", "--ref", "REF", "--weights", "W", "-o", "OUT"],
    ["optimize", "pro", "--nbest", "NB", "--ref", "REF", "--weights", "W", "-o", "OUT"],
    ["tune", "--decoder", "moses", "--decoder-bin", "moses", "--decoder-config", "W", "--input", "REF", "--ref", "REF",
     "--workdir", "OUT"],
])
def test_one_metric_commands_refuse_several_saying_how_to_join_them(write, tmp_path, capsys, argv):
    files = {"NB": write("nb", NBEST), "REF": write("ref", "a b\nc d\n"), "W": write("w", "LM0= 1\n"),
             "OUT": str(tmp_path / "out")}
    argv = [files.get(a, a) for a in argv]
    assert main([*argv, "--metric", "bleu", "ter"]) == EXIT_INPUT_ERROR
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert ("error: --metric takes one metric here, got 2 (bleu ter); the parts of an interpolation are joined "
            "by a comma: --metric bleu,ter") in err
    assert not (tmp_path / "out").exists()


def test_tune_yaml_metric_list_is_refused_in_the_same_words(write, capsys):
    path = write("t.yaml", "metric: [bleu, ter]\n")
    assert main(["tune", "--yaml", path]) == EXIT_INPUT_ERROR
    assert capsys.readouterr().err == (f"mtplug: error: {path}:1: metric takes one metric here, got 2 (bleu ter); "
                                       "the parts of an interpolation are joined by a comma: metric: bleu,ter\n")


def test_optimize_comma_is_the_interpolation(write, tmp_path, capsys):
    nb, ref, w = write("nb", NBEST), write("ref", "the small house .\na big house !\n"), write("w", "1 1 0.5\n")
    assert main(["optimize", "none", "-q", "--nbest", nb, "--ref", ref, "--weights", w, "-o",
                 str(tmp_path / "o"), "--metric", "bleu,ter"]) == 0
    assert json.loads(capsys.readouterr().out)["metric"] == "bleu:0.5,ter:0.5"


def test_evaluate_several_values_are_columns_and_a_comma_is_one(text, tmp_path, capsys):
    hyp, ref = text
    base = ["evaluate", "-q", "--ref", ref, "--hyps-baseline", hyp, "--boot-samples", "20", "--ar-shuffles", "20"]
    out = tmp_path / "r.json"
    assert main([*base, "--metric", "bleu", "ter", "--json", str(out)]) == 0
    assert [m["metric"] for m in json.loads(out.read_text())["metrics"]] == ["bleu", "ter"]
    assert main([*base, "--metric", "bleu,ter", "--json", str(out)]) == 0
    assert [m["metric"] for m in json.loads(out.read_text())["metrics"]] == ["bleu:0.5,ter:0.5"]


def test_evaluate_metrics_is_the_old_name_of_metric(text, tmp_path, capsys):
    hyp, ref = text
    base = ["evaluate", "-q", "--ref", ref, "--hyps-baseline", hyp, "--boot-samples", "20", "--ar-shuffles", "20"]
    assert main([*base, "--metric", "bleu", "ter"]) == 0
    new = capsys.readouterr()
    assert new.err == ""
    assert main([*base, "--metrics", "bleu", "ter"]) == 0
    old = capsys.readouterr()
    assert old.out == new.out
    assert old.err == ("mtplug: warning: --metrics is the old name of --metric (it still works; use --metric)\n")


def test_compare_evaluate_metrics_key_is_the_old_name_of_metric(write, tmp_path, capsys):
    from mtplug.experiments.study_config import load_study

    nbest, ref, init = write("nbest", NBEST), write("ref", "a b\nc d\n"), write("init", "0.5 0.2 0.2\n")
    study = {"workdir": str(tmp_path / "wd"), "mode": "pool", "optimizers": {"mert": {"optimizer": "mert"}},
             "pool": {"nbest": [nbest], "ref": [ref], "weights": init, "test_nbest": [nbest], "test_ref": [ref]},
             "evaluate": {"metrics": ["bleu", "bleu,ter"]}}
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(study))
    aliases.reset()
    assert load_study(str(path)).metrics == ["bleu", "bleu,ter"]
    assert capsys.readouterr().err == ("mtplug: warning: evaluate: metrics: is the old name of evaluate: metric: "
                                       "(it still works; use evaluate: metric:)\n")


def test_every_metric_help_says_the_same_words():
    found = []
    for prog, p in all_parsers(build_parser()):
        action = p._option_string_actions.get("--metric")
        if action is None:
            continue
        found.append(prog.split()[1])
        assert METRIC_HELP in action.help, prog
        several = action.nargs == "+"
        assert several == (prog in ("mtplug score", "mtplug evaluate")), prog
    assert {"score", "extract", "optimize", "tune", "evaluate"} <= set(found)


def test_the_metrics_page_quotes_the_help():
    page = (REPO / "docs" / "metrics.md").read_text(encoding="utf-8")
    section = page.split("## Metric names", 1)[1].split("\n## ", 1)[0]
    quoted = " ".join(line[1:].strip() for line in section.splitlines() if line.startswith(">"))
    assert quoted == " ".join(METRIC_HELP.split())


def test_usage_page_commands_use_one_syntax():
    # the command lines of docs/usage.md list several metrics as several values
    page = (REPO / "docs" / "usage.md").read_text(encoding="utf-8")
    for line in page.splitlines():
        if line.startswith(("mtplug score", "mtplug evaluate")):
            m = re.search(r"--metric ([^\]]+)\]", line)
            assert m and "," not in m.group(1), line
