"""The versions of state.json. Version 2 (issue 37): every score on 0-100; a state of version 1
(fractions) is read with its scores times 100, so that a run tuned before resumes and compares
like with like. Version 3 (issue 47, item 3): every entry names the metric it was tuned to and
gives that metric's scores under neutral keys (score, tuned_score, test_score); a version 2
state (BLEU's keys, another metric's in metric_value and the like, and a tuned_bleu that held
the other metric's score on the store) is read as version 3 and resumes. old_states/ holds
state.json files the mtplug before version 3 wrote (old_states/PROVENANCE)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mtplug.cli import main
from mtplug.metrics.layer import parse_metric
from mtplug.tuning.loop import STATE_VERSION, read_state

from .test_test_input import split, strip_clock, tune_args  # noqa: F401  (split: a fixture)
from .test_tune import START_BLEU, moses_args, run

OLD_STATES = Path(__file__).resolve().parent / "old_states"
#: where the summary's paths differ between two working directories
PATHS = ("final", "files", "test_out")


def as_version_2(state: dict) -> dict:
    """A version 3 state as the mtplug before version 3 wrote it: no score, tuned_score,
    test_score, and no metric in a BLEU run's entries; under another metric tuned_bleu held
    100 x the objective on the store (100 - TER for TER) and the patience stop said BLEU. The
    keys are checked against real ones (old_states/) in test_a_version_2_state_resumes."""
    metric = state["fingerprint"].get("metric", "bleu")
    is_bleu = metric == "bleu"
    parsed = parse_metric(metric)

    def objective(value):     # 100 x the objective of a value (value = 100 (offset + sign x objective))
        return None if value is None else (value / 100 - parsed.value_offset) / parsed.value_sign * 100

    def entry(h):
        old = {k: v for k, v in h.items() if k not in ("score", "tuned_score", "test_score")
               and not (is_bleu and k == "metric")}
        return old if is_bleu else {**old, "tuned_bleu": objective(h["tuned_score"])}

    old = {**state, "version": 2, "history": [entry(h) for h in state["history"]],
           "best": {k: v for k, v in state["best"].items() if k not in ("score", "metric")}}
    if "final_test" in state:
        old["final_test"] = {k: v for k, v in state["final_test"].items() if k != "test_score"}
    if not is_bleu and (state["stop"] or "").startswith("no better "):
        old["stop"] = "no better BLEU for " + state["stop"].rsplit(" for ", 1)[1]
    return old


def test_a_run_writes_version_3_with_scores_on_0_100(system, capsys):
    summary = run(moses_args(system, system / "wd", iterations=2), capsys)
    raw = json.loads((system / "wd" / "state.json").read_text())
    assert raw["version"] == STATE_VERSION == 3
    first = raw["history"][0]
    assert first["bleu"] == first["score"] == pytest.approx(START_BLEU, abs=5e-5) and first["metric"] == "bleu"
    assert 10 < first["tuned_bleu"] < 100 and raw["best"]["bleu"] == max(h["bleu"] for h in raw["history"])
    assert summary["history"][0]["bleu"] == first["bleu"] and summary["bleu"] == raw["best"]["bleu"]


def test_a_version_1_state_is_read_on_0_100_and_resumes(system, capsys):
    wd = system / "wd"
    straight = run(moses_args(system, system / "straight", iterations=3), capsys)
    run(moses_args(system, wd, iterations=2), capsys)
    path = wd / "state.json"
    written = json.loads(path.read_text())
    # the same run as an mtplug of version-1 states wrote it: scores as fractions
    v1 = as_version_2(json.loads(path.read_text()))
    v1["version"] = 1
    for entry in v1["history"]:
        for key in ("bleu", "tuned_bleu"):
            entry[key] = entry[key] / 100 if entry[key] is not None else None
    v1["best"]["bleu"] /= 100
    path.write_text(json.dumps(v1, indent=1) + "\n")
    upgraded = read_state(str(wd))
    assert upgraded["version"] == 3
    for old, new in zip(upgraded["history"], written["history"]):
        assert new["bleu"] == pytest.approx(old["bleu"], rel=1e-12)
        assert new["tuned_bleu"] == pytest.approx(old["tuned_bleu"], rel=1e-12)
        assert (old["score"], old["tuned_score"]) == (old["bleu"], old["tuned_bleu"])
    assert upgraded["best"]["bleu"] == pytest.approx(written["best"]["bleu"], rel=1e-12)
    # --resume with one more iteration: the old iterations and the new one on one scale
    resumed = run(moses_args(system, wd, "--resume", iterations=3), capsys)
    assert json.loads(path.read_text())["version"] == 3
    assert [h["bleu"] for h in resumed["history"]] == pytest.approx([h["bleu"] for h in straight["history"]],
                                                                   rel=1e-12)
    assert resumed["final_iteration"] == straight["final_iteration"]
    assert (wd / "final").read_bytes() == (system / "straight" / "final").read_bytes()


def test_another_version_is_still_refused(system, capsys):
    run(moses_args(system, system / "wd", iterations=1), capsys)
    path = system / "wd" / "state.json"
    state = json.loads(path.read_text())
    path.write_text(json.dumps({**state, "version": 7}))
    assert main(moses_args(system, system / "wd", "--resume", iterations=2)) == 2
    assert capsys.readouterr().err == f"mtplug: error: {path}: tuning state of another version (expected 3)\n"


def pro_args(d: Path, workdir: str, *extra, iterations: int, **kw) -> list[str]:
    """tune_args with PRO (as the runs of old_states/) instead of MERT."""
    args = tune_args(d, workdir, *extra, iterations=iterations, **kw)
    i = args.index("--restarts")
    del args[i:i + 2]
    args[args.index("mert")] = "pro"
    return args


def _keys(state: dict) -> tuple:
    """The key sets of a state: its own, each history entry's, the best's, the final test's."""
    return (set(state), [set(h) for h in state["history"]], set(state["best"]), set(state.get("final_test", ())))


@pytest.mark.parametrize("metric, old, extra", [
    ("bleu", "bleu-test.json", ()),
    ("ter", "ter-test.json", ()),
    ("bleu:0.5,chrf:0.5", "bleu0.5-chrf0.5-test.json", ()),
    ("ter", "ter-test-last.json", ("--final-weights", "last")),
])
def test_a_version_2_state_resumes(split, capsys, metric, old, extra):  # noqa: F811
    """A run whose state.json the mtplug before version 3 wrote (as_version_2 gives the keys of
    old_states/' real ones) resumes, and ends as a run without the interruption: the same
    history (the old iterations' scores under their new names), the same summary and final
    weights, written as version 3."""
    iterations = 2 if "last" in extra else 3
    straight = run(pro_args(split, "straight", "--metric", metric, *extra, iterations=iterations), capsys)
    run(pro_args(split, "wd", "--metric", metric, *extra, iterations=iterations - 1), capsys)
    path = split / "wd" / "state.json"
    v2 = as_version_2(json.loads(path.read_text()))
    real = json.loads((OLD_STATES / old).read_text())
    done = len(v2["history"])
    assert _keys(v2) == _keys({**real, "history": real["history"][:done]})
    path.write_text(json.dumps(v2, indent=1) + "\n")
    resumed = run(pro_args(split, "wd", "--metric", metric, *extra, "--resume", iterations=iterations), capsys)
    assert {k: v for k, v in resumed.items() if k not in PATHS} == {k: v for k, v in straight.items()
                                                                   if k not in PATHS}
    written = json.loads(path.read_text())
    assert written["version"] == 3
    assert strip_clock(written["history"]) == strip_clock(read_state(str(split / "straight"))["history"])
    assert (split / "wd" / "final").read_bytes() == (split / "straight" / "final").read_bytes()


@pytest.mark.parametrize("old", sorted(p.name for p in OLD_STATES.glob("*.json")))
def test_the_states_old_runs_wrote_read_as_version_3(tmp_path, old):
    """Every score of an old state under its version 3 name: a BLEU run's BLEU keys as score,
    tuned_score, test_score; another metric's metric_value, tuned_metric_value and
    test_metric_value, without the tuned_bleu that held that metric's score on the store."""
    real = json.loads((OLD_STATES / old).read_text())
    shutil.copy(OLD_STATES / old, tmp_path / "state.json")
    state = read_state(str(tmp_path))
    metric = real["fingerprint"].get("metric", "bleu")
    assert real["version"] == 2 and state["version"] == 3
    names = ("bleu", "tuned_bleu", "test_bleu") if metric == "bleu" else \
        ("metric_value", "tuned_metric_value", "test_metric_value")
    for before, after in zip(real["history"], state["history"]):
        assert after["metric"] == metric and after["bleu"] == before["bleu"]
        assert (after["score"], after["tuned_score"], after.get("test_score")) == tuple(before.get(k) for k in names)
        assert ("tuned_bleu" in after) == (metric == "bleu")
        assert {k: v for k, v in after.items() if k not in ("metric", "score", "tuned_score", "test_score")} == \
            {k: v for k, v in before.items() if k != "metric" and (metric == "bleu" or k != "tuned_bleu")}
    best = state["best"]
    assert best["score"] == state["history"][best["iteration"] - 1]["score"] and best["metric"] == metric
    if "final_test" in real:
        assert state["final_test"]["test_score"] == real["final_test"][names[2]]
    if metric == "bleu":
        assert state["stop"] == real["stop"]
    else:    # chosen by the metric, and now named by it
        assert state["stop"] == real["stop"].replace("BLEU", parse_metric(metric).label)
