"""One scale per score (issue 37): a tuning run's log, JSON line and state.json give every
score on 0-100 (state version 2); a state.json of version 1 (fractions) is read with its
scores times 100, so that a run tuned before resumes and compares like with like."""

from __future__ import annotations

import json

import pytest

from mtplug.cli import main
from mtplug.tuning.loop import STATE_VERSION, read_state

from .test_tune import START_BLEU, moses_args, run


def test_a_run_writes_version_2_with_scores_on_0_100(system, capsys):
    summary = run(moses_args(system, system / "wd", iterations=2), capsys)
    raw = json.loads((system / "wd" / "state.json").read_text())
    assert raw["version"] == STATE_VERSION == 2
    first = raw["history"][0]
    assert first["bleu"] == pytest.approx(START_BLEU, abs=5e-5)
    assert 10 < first["tuned_bleu"] < 100 and raw["best"]["bleu"] == max(h["bleu"] for h in raw["history"])
    assert summary["history"][0]["bleu"] == first["bleu"] and summary["bleu"] == raw["best"]["bleu"]


def test_a_version_1_state_is_read_on_0_100_and_resumes(system, capsys):
    wd = system / "wd"
    straight = run(moses_args(system, system / "straight", iterations=3), capsys)
    run(moses_args(system, wd, iterations=2), capsys)
    path = wd / "state.json"
    v2 = json.loads(path.read_text())
    # the same run as an mtplug of version-1 states wrote it: scores as fractions
    v1 = json.loads(path.read_text())
    v1["version"] = 1
    for entry in v1["history"]:
        for key in ("bleu", "tuned_bleu"):
            entry[key] = entry[key] / 100 if entry[key] is not None else None
    v1["best"]["bleu"] /= 100
    path.write_text(json.dumps(v1, indent=1) + "\n")
    upgraded = read_state(str(wd))
    assert upgraded["version"] == 2
    for old, new in zip(upgraded["history"], v2["history"]):
        assert new["bleu"] == pytest.approx(old["bleu"], rel=1e-12)
        assert new["tuned_bleu"] == pytest.approx(old["tuned_bleu"], rel=1e-12)
    assert upgraded["best"]["bleu"] == pytest.approx(v2["best"]["bleu"], rel=1e-12)
    # --resume with one more iteration: the old iterations and the new one on one scale
    resumed = run(moses_args(system, wd, "--resume", iterations=3), capsys)
    assert json.loads(path.read_text())["version"] == 2
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
    assert capsys.readouterr().err == f"mtplug: error: {path}: tuning state of another version (expected 2)\n"
