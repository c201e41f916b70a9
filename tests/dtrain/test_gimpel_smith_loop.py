"""benchmarks/reproductions/gimpel_smith_2012_loop.py end to end over the stand-in decoder's
cdec front end (the real study runs cdec: docs/reproductions/gimpel-smith-2012.md): the
initializers, benchmarks/real_systems.py's mtplug tune runs with the paper's options, the
comparison and the results file claims.py reads."""

from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path

from .conftest import standin_system

STUDIES = Path(__file__).resolve().parents[2] / "benchmarks" / "reproductions"
SCRIPT = STUDIES / "gimpel_smith_2012_loop.py"


def test_gimpel_smith_loop_study(toy, tmp_path, monkeypatch):
    from benchmarks.reproductions import claims

    build, system = standin_system(toy, tmp_path)
    out, results = tmp_path / "loop", tmp_path / "results" / "gimpel-smith-2012-loop.json"
    argv = [str(SCRIPT), "--system", str(system), "--cdec", str(build), "--out", str(out), "--start-points", "1",
            "--seeds", "1", "2", "--cap-iterations", "2", "--boot-samples", "50", "--ar-shuffles", "50",
            "--results", str(results)]
    monkeypatch.setattr(sys, "argv", argv)
    runpy.run_path(str(SCRIPT), run_name="__main__")
    # the initializers: the default weights, then N(w, (w/2)^2) around them
    start = (system / "weights.start").read_text().split()
    assert (out / "start.p0").read_text().split() == [x if i % 2 == 0 else repr(float(x))
                                                      for i, x in enumerate(start)]
    assert (out / "start.p1").read_text().split()[::2] == start[::2]
    # every run ran mtplug tune with the paper's options of its method
    commands = {(p, json.loads(x)["run"]): json.loads(x)["command"] for p in (0, 1)
                for x in (out / f"p{p}" / "results.jsonl").read_text().splitlines()}
    assert len(commands) == 2 * (2 + 2 + 1)
    name = "mtplug-pro+seed=2+psi=0.1+c=1+c-start=1e30+length-z=0+nbest-size=1500+iterations=2+final-weights=last"
    pro = commands[(1, name)]
    assert f"--weights {out / 'start.p1'}" in pro
    assert "--psi 0.1 --c 1 --c-start 1e30 --length-z 0 --nbest-size 1500" in pro and pro.endswith("--final-weights last")
    rampion = next(c for (_, r), c in commands.items() if r.startswith("mtplug-rampion"))
    assert "--start-scale given --pool-reset 1 --nbest-size 500 --iterations 2" in rampion
    summary = json.loads(results.read_text())
    assert summary["baseline"] == "rampion-ramp3" and summary["start_points"] == 2
    methods = summary["systems"]["dense"]["methods"]
    assert [(r["point"], r["seed"]) for r in methods["pro"]["runs"]] == [(0, 1), (0, 2), (1, 1), (1, 2)]
    assert [(r["point"], r["seed"]) for r in methods["rampion-ramp3"]["runs"]] == [(0, 1), (1, 1)]
    assert methods["rampion-ramp3"]["options"]["iterations"] == "2"
    for m in methods.values():
        assert all(0 < r["test"] <= 100 and r["iterations"] <= 2 and len(r["weights"]) == 8 for r in m["runs"])
        # where each run's time went, from its state.json
        assert all(0 < r["decode_seconds"] and 0 <= r["optimize_seconds"] < r["seconds"] for r in m["runs"])
    assert methods["mert"]["compared"]["replicas"] == 2 and methods["mert"]["compared"]["per_point"]
    monkeypatch.setattr(claims, "RESULTS", results.parent)
    draw = claims.load_draw(results.stem, "dense", "pro", "rampion-ramp3")
    assert len(draw.method) == 4 and len(draw.baseline) == 2 and 0 <= draw.p <= 1
    # a second call finds every run done and only compares again
    runpy.run_path(str(SCRIPT), run_name="__main__")
    assert sum(len((out / f"p{p}" / "results.jsonl").read_text().splitlines()) for p in (0, 1)) == 10
