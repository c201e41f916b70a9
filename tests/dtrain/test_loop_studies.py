"""The decoder-loop studies of benchmarks/reproductions (eidelman_2012_loop.py,
dreyer_dong_2015_loop.py) end to end over the stand-in decoder's cdec front end (the real
studies run them with cdec: docs/reproductions/)."""

from __future__ import annotations

import json
import os
import runpy
import sys
from pathlib import Path

import pytest

from .conftest import standin_system

STUDIES = Path(__file__).resolve().parents[2] / "benchmarks" / "reproductions"
SCRIPT = STUDIES / "eidelman_2012_loop.py"


def test_eidelman_loop_study(toy, tmp_path, monkeypatch, capsys):
    build, system = standin_system(toy, tmp_path)
    out = tmp_path / "out"
    argv = [str(SCRIPT), "--system", str(system), "--cdec", str(build), "--out", str(out),
            "--selections", "hope/fear", "lu/fear", "--seeds", "1", "2", "--shards", "1", "2", "--epochs", "1",
            "--minibatch", "30"]
    monkeypatch.setattr(sys, "argv", argv)
    monkeypatch.chdir(tmp_path)
    runpy.run_path(str(SCRIPT), run_name="__main__")
    rows = [json.loads(x) for x in (out / "runs.jsonl").read_text().splitlines()]
    assert [r["run"] for r in rows] == [f"{c}+seed={s}" for s in (1, 2)
                                        for c in ("hope-fear", "lu-fear", "hope-fear-mix2", "lu-fear-mix2")]
    for r in rows:
        assert len(r["prediction_bleu_per_epoch"]) == 1 and 0 < r["test_bleu"] <= 100
        assert r["dev_bleu"] == r["test_bleu"]          # dev and test are the same set here
        assert r["shards"] == (2 if "mix2" in r["run"] else 1)
        assert ("--shards 2 " in (out / r["run"] / "dtrain.log").read_text()) == (r["shards"] == 2)
    # mixing two shards is another run than one learner
    assert (out / "hope-fear+seed=1" / "weights").read_bytes() != \
        (out / "hope-fear-mix2+seed=1" / "weights").read_bytes()
    # the two seeds order the sentences differently, so they are two replicas, not one
    assert (out / "hope-fear+seed=1" / "weights").read_bytes() != (out / "hope-fear+seed=2" / "weights").read_bytes()
    report = (out / "evaluate.txt").read_text()
    assert report.startswith("baseline: hope-fear (hope-fear = M-C/M+C, lu-fear = LU/M+C, "
                             "hope-fear-mix2 = M-C/M+C, 2 shards mixed, lu-fear-mix2 = LU/M+C, 2 shards mixed)")
    assert "lu-fear-mix2" in report
    # a second run finds every run done and only evaluates again
    os.remove(out / "evaluate.txt")
    runpy.run_path(str(SCRIPT), run_name="__main__")
    assert len((out / "runs.jsonl").read_text().splitlines()) == 8 and (out / "evaluate.txt").exists()
    # one configuration against another of the same runs, in a report of its own
    monkeypatch.setattr(sys, "argv", [*argv[:argv.index("--selections")], "--selections", "hope/fear", "--seeds",
                                      "1", "2", "--shards", "1", "2", "--report", "mixing"])
    runpy.run_path(str(SCRIPT), run_name="__main__")
    assert len((out / "runs.jsonl").read_text().splitlines()) == 8
    assert (out / "mixing.txt").read_text().startswith(
        "baseline: hope-fear (hope-fear = M-C/M+C, hope-fear-mix2 = M-C/M+C, 2 shards mixed)")
    # the results file the claims name (claims.py's schema), here with LU/M+C as the baseline
    results = tmp_path / "results" / "loop.json"
    monkeypatch.setattr(sys, "argv", [*argv[:argv.index("--selections")], "--selections", "lu/fear", "hope/fear",
                                      "--seeds", "2", "1", "--report", "lu", "--results", str(results)])
    runpy.run_path(str(SCRIPT), run_name="__main__")
    assert len((out / "runs.jsonl").read_text().splitlines()) == 8
    study = json.loads(results.read_text())
    assert study["baseline"] == "mira-lu-fear" and study["settings"]["mira_c"] == 0.01
    methods = study["systems"]["dense"]["methods"]
    assert set(methods) == {"mira-lu-fear", "mira-hope-fear"} and "compared" not in methods["mira-lu-fear"]
    runs = methods["mira-hope-fear"]["runs"]
    assert [r["seed"] for r in runs] == [1, 2] and len(runs[0]["one_best_bleu_per_epoch"]) == 1
    assert runs[0]["test"] == next(r["test_bleu"] for r in rows if r["run"] == "hope-fear+seed=1")
    assert methods["mira-hope-fear"]["compared"]["replicas"] == 2
    sys.path.insert(0, str(STUDIES))
    import claims

    monkeypatch.setattr(claims, "RESULTS", results.parent)
    draw = claims.load_draw("loop", "dense", "mira-hope-fear", "mira-lu-fear")
    assert draw.paired == 2 and draw.method == [r["test"] for r in runs]
    # the page's table of the file: one row a configuration, its epochs' mean 1-best BLEU
    loop = runpy.run_path(str(SCRIPT))
    monkeypatch.setitem(loop["table"].__globals__, "RESULTS", results.parent)
    text = loop["table"]("loop")
    mean = sum(r["test"] for r in runs) / 2
    assert f"| mira-hope-fear (M-C/M+C) | 2 | {mean:.2f} ± " in text and "| mira-lu-fear (LU/M+C) | 2 |" in text
    assert "| p vs mira-lu-fear |" in text and "| – |" in text
    assert all(line.count("|") == 10 for line in text.splitlines() if line.startswith("|"))
    # each run's decoder share from its dtrain log's epoch lines
    share = methods["mira-hope-fear"]["runs"][0]["decoder_share"]
    assert 0 < share <= 1 and text.rstrip().endswith("(2 of 2 runs) |")
    assert "Not run yet" in loop["table"]("none")


def test_a_loop_study_tunes_on_the_set_it_is_told(toy, tmp_path, monkeypatch):
    # a system with tune, dev and test sets (the Multi30k system's layout) tunes on tune.*
    build, system = standin_system(toy, tmp_path)
    for ext in ("de", "en"):
        (system / f"dev.{ext}").rename(system / f"tune.{ext}")
    out = tmp_path / "out"
    argv = [str(SCRIPT), "--system", str(system), "--cdec", str(build), "--out", str(out), "--selections",
            "hope/fear", "--seeds", "1", "--epochs", "1", "--minibatch", "30", "--tune-set", "tune"]
    monkeypatch.setattr(sys, "argv", argv)
    runpy.run_path(str(SCRIPT), run_name="__main__")
    (row,) = [json.loads(x) for x in (out / "runs.jsonl").read_text().splitlines()]
    assert f"--input {system / 'tune.de'} " in (out / "hope-fear+seed=1" / "dtrain.log").read_text()
    assert row["dev_bleu"] == row["test_bleu"]          # tune and test are the same sentences here


def _tune_folder(path: Path, start: Path, bleus: list[float], scale: float,
                 stop: str | None = "iteration limit") -> None:
    """A tune folder: iteration i decoded start weights times (1 + scale * i); ``stop`` as
    state.json has it (None: still running)."""
    lines = start.read_text().split("\n")
    for i in range(1, len(bleus) + 1):
        d = path / f"iter{i:03d}"
        d.mkdir(parents=True)
        out = [f"{name} {float(v) * (1 + scale * i)!r}" for name, v in (x.split() for x in lines if x.strip())]
        (d / "weights").write_text("\n".join(out) + "\n")
    history = [{"iteration": i, "bleu": b} for i, b in enumerate(bleus, 1)]
    (path / "state.json").write_text(json.dumps({"history": history, "stop": stop}))


def test_dreyer_dong_loop_study(toy, tmp_path, monkeypatch):
    build, system = standin_system(toy, tmp_path)
    start = system / "weights.start"
    script = str(STUDIES / "dreyer_dong_2015_loop.py")
    # the start points: START and N(w, (w/2)^2) draws, the fixed-pool studies' points
    monkeypatch.setattr(sys, "argv", [script, "starts", "--start", str(start), "--out", str(tmp_path / "starts"),
                                      "--start-points", "1"])
    runpy.run_path(script, run_name="__main__")
    points = sorted(p.name for p in (tmp_path / "starts").iterdir())
    assert points == ["point0.weights", "point1.weights"]
    assert (tmp_path / "starts" / "point0.weights").read_text().split() == start.read_text().split()
    assert (tmp_path / "starts" / "point1.weights").read_text() != (tmp_path / "starts" / "point0.weights").read_text()
    # one PRO and one APRO run per start point; PRO's peak at different iterations; APRO's
    # second run stopped by itself after 3 iterations (no new hypotheses) and counts with them
    runs = tmp_path / "runs"
    _tune_folder(runs / "point0" / "pro", start, [10, 20, 30, 25], 0.5)
    _tune_folder(runs / "point1" / "pro", start, [10, 25, 20, 35], -0.2)
    _tune_folder(runs / "point0" / "apro", start, [10, 30, 30, 31], 0.1)
    _tune_folder(runs / "point1" / "apro", start, [10, 32, 29], 0.3, stop="no new hypotheses")
    out, results = tmp_path / "out", tmp_path / "results"
    argv = [script, "compare", "--system", str(system), "--cdec", str(build), "--out", str(out),
            "--baseline", str(runs / "point0" / "pro"), str(runs / "point1" / "pro"),
            "--other", "apro", str(runs / "point0" / "apro"), str(runs / "point1" / "apro"), "--at", "2", "4",
            "--system-name", "sparse", "--results", str(results / "loop-at{at}.json")]
    monkeypatch.setattr(sys, "argv", argv)
    runpy.run_path(script, run_name="__main__")
    rows = [json.loads(x) for x in (out / "rows.jsonl").read_text().splitlines()]
    # the best tuning BLEU among iterations 1..N, the earliest of ties
    picked = {(r["at"], Path(r["run"]).parent.name, Path(r["run"]).name): r["iteration"] for r in rows}
    assert picked == {(2, "point0", "pro"): 2, (2, "point1", "pro"): 2, (2, "point0", "apro"): 2,
                      (2, "point1", "apro"): 2, (4, "point0", "pro"): 3, (4, "point1", "pro"): 4,
                      (4, "point0", "apro"): 4, (4, "point1", "apro"): 2}
    assert all(0 < r["length_ratio"] < 3 and 0 < r["test_bleu"] <= 100 for r in rows)
    assert "apro" in (out / "at-2.txt").read_text() and (out / "at-4.json").exists()
    # a results file per N, in claims.py's schema: runs paired by start point
    study = json.loads((results / "loop-at4.json").read_text())
    assert study["baseline"] == "pro" and study["at"] == 4 and study["config"] == "cdec.ini"
    methods = study["systems"]["sparse"]["methods"]
    assert [(r["point"], r["iteration"]) for r in methods["apro"]["runs"]] == [(0, 4), (1, 2)]
    assert methods["apro"]["compared"]["replicas"] == 2 and "compared" not in methods["pro"]
    assert methods["pro"]["runs"][1]["test"] == next(r["test_bleu"] for r in rows if r["at"] == 4
                                                     and r["run"] == str(runs / "point1" / "pro"))
    sys.path.insert(0, str(STUDIES))
    import claims

    monkeypatch.setattr(claims, "RESULTS", results)
    draw = claims.load_draw("loop-at2", "sparse", "apro", "pro")
    assert draw.paired == 2 and len(draw.baseline) == 2
    # no run stands for another: every group has one run per start point
    base = argv[:argv.index("--baseline")]
    monkeypatch.setattr(sys, "argv", [*base, "--baseline", str(runs / "point0" / "pro"), str(runs / "point1" / "pro"),
                                      "--other", "apro", str(runs / "point0" / "apro"), "--at", "4"])
    with pytest.raises(SystemExit, match="every group needs one run per start point"):
        runpy.run_path(script, run_name="__main__")
    # a run still under way (or made with fewer iterations) has no result after N
    _tune_folder(runs / "running", start, [10, 20], 0.1, stop=None)
    monkeypatch.setattr(sys, "argv", [*base, "--baseline", str(runs / "running"), "--at", "4"])
    with pytest.raises(SystemExit, match="2 iterations, fewer than 4"):
        runpy.run_path(script, run_name="__main__")


def test_start_scale_study(toy, tmp_path, monkeypatch, capsys):
    # benchmarks/start_scale.py: the decoder-loop runs, their report and tables, and the
    # learners fed their own results on the store a run left (issue 53)
    import benchmarks.start_scale as study

    build, system = standin_system(toy, tmp_path)
    monkeypatch.setattr(study, "RESULTS", tmp_path / "start-scale.json")
    work = tmp_path / "work"
    script = Path(study.__file__)
    monkeypatch.chdir(tmp_path)
    for argv in (["loop", "--system", str(system), "--cdec", str(build), "--work", str(work),
                  "--optimizers", "kbmira", "rampion", "--replicas", "2", "--iterations", "2", "--nbest", "10"],
                 ["report", "--system", str(system), "--work", str(work), "--name", "toy"]):
        monkeypatch.setattr(sys, "argv", [str(script), *argv])
        study.main()
    results = json.loads((tmp_path / "start-scale.json").read_text())["loop"]["toy"]
    runs = results["runs"]
    # kbmira's replicas are seeds, RAMPION's start points (it is deterministic)
    assert sorted(runs) == sorted(["mtplug-kbmira+start-scale=given+seed=1", "mtplug-kbmira+start-scale=best+seed=1",
                                   "mtplug-kbmira+start-scale=given+seed=2", "mtplug-kbmira+start-scale=best+seed=2",
                                   "mtplug-rampion+start-scale=given", "mtplug-rampion+start-scale=best",
                                   "mtplug-rampion+start-scale=given+weights=point1.weights",
                                   "mtplug-rampion+start-scale=best+weights=point1.weights"])
    for r in runs.values():
        assert len(r["start_margin"]) == len(r["start_used"]) == 2 and 0 < r["test_bleu"] <= 100
        assert r["start_used"][0] in ("given", "shrunk")
    assert set(results["evaluate"]) == {"kbmira", "rampion"}
    assert 0 <= results["evaluate"]["kbmira"]["best"]["p"] <= 1
    loop_table, margins = study.table("loop-toy"), study.table("margins-toy")
    assert "| kbmira | best (the default) |" in loop_table and "| rampion | given (before issue 36) |" in loop_table
    assert "| kbmira | 2 given, 2 best |" in margins
    # the learners fed their own results on the last store of a run
    store = next(work.glob("mtplug-kbmira+start-scale=given+seed=1/iter002/store.npz"))
    monkeypatch.setattr(sys, "argv", [str(script), "pool", "--store", str(store), "--start",
                                      str(system / "weights.start"), "--name", "toy", "--rounds", "2"])
    study.main()
    rows = json.loads((tmp_path / "start-scale.json").read_text())["pool"]["toy"]["rows"]
    assert len(rows) == 3 * 3 * 2
    first = {(r["learner"], r["scale"]): r["tuning_bleu"] for r in rows if r["round"] == 1}
    for learner in ("mira", "kbmira", "rampion"):   # from one start the default never ends lower than either
        assert first[(learner, "best")] == max(first[(learner, "given")], first[(learner, "unit")])
    assert "| mira | unit (issue 36) |" in study.table("pool-toy")


def test_start_scale_synthetic(tmp_path, monkeypatch):
    import benchmarks.start_scale as study

    monkeypatch.setattr(study, "RESULTS", tmp_path / "start-scale.json")
    monkeypatch.setattr(sys, "argv", ["start_scale.py", "synthetic", "--dims", "3", "--noise", "0", "--seeds", "0",
                                      "--sentences", "20", "--nbest", "6", "--threads", "1"])
    study.main()
    rows = json.loads((tmp_path / "start-scale.json").read_text())["synthetic"]["rows"]
    assert len(rows) == 9
    by = {(r["learner"], r["scale"]): r for r in rows}
    for learner in ("mira", "kbmira", "rampion"):
        assert by[(learner, "best")]["pseudo_bleu"] == max(by[(learner, s)]["pseudo_bleu"] for s in ("given", "unit"))
    assert study.table("synthetic").count("\n") == 2
