"""benchmarks/reproductions/eidelman_2012_loop.py end to end over the stand-in decoder's cdec
front end (the real study runs it with cdec: docs/reproductions/eidelman-2012.md)."""

from __future__ import annotations

import json
import os
import runpy
import shlex
import sys
from pathlib import Path

from .conftest import STANDIN

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "reproductions" / "eidelman_2012_loop.py"


def test_eidelman_loop_study(toy, tmp_path, monkeypatch, capsys):
    build = tmp_path / "build" / "decoder"
    build.mkdir(parents=True)
    cdec = build / "cdec"
    cdec.write_text("#!/bin/sh\nexec " + shlex.join([sys.executable, "-S", str(STANDIN), "cdec", "-standin-pool",
                                                       toy["pool"], "-standin-source", toy["source_file"]])
                    + ' "$@"\n')
    cdec.chmod(0o755)
    system = tmp_path / "system"
    system.mkdir()
    for part in ("dev", "test"):
        (system / f"{part}.de").write_bytes(Path(toy["source_file"]).read_bytes())
        (system / f"{part}.en").write_bytes(Path(toy["refs"]).read_bytes())
    (system / "cdec.ini").write_bytes(Path(toy["cdec_ini"]).read_bytes())
    (system / "weights.start").write_bytes(Path(toy["weights"]).read_bytes())
    out = tmp_path / "out"
    argv = [str(SCRIPT), "--system", str(system), "--cdec", str(build.parent), "--out", str(out),
            "--selections", "hope/fear", "lu/fear", "--seeds", "1", "2", "--epochs", "1", "--minibatch", "60"]
    monkeypatch.setattr(sys, "argv", argv)
    monkeypatch.chdir(tmp_path)
    runpy.run_path(str(SCRIPT), run_name="__main__")
    rows = [json.loads(x) for x in (out / "runs.jsonl").read_text().splitlines()]
    assert [r["run"] for r in rows] == ["hope-fear+seed=1", "lu-fear+seed=1", "hope-fear+seed=2", "lu-fear+seed=2"]
    for r in rows:
        assert len(r["prediction_bleu_per_epoch"]) == 1 and 0 < r["test_bleu"] <= 100
        assert r["dev_bleu"] == r["test_bleu"]          # dev and test are the same set here
    # the two seeds order the sentences differently, so they are two replicas, not one
    assert (out / "hope-fear+seed=1" / "weights").read_bytes() != (out / "hope-fear+seed=2" / "weights").read_bytes()
    report = (out / "evaluate.txt").read_text()
    assert report.startswith("baseline: hope-fear (hope-fear = M-C/M+C, lu-fear = LU/M+C)") and "lu-fear" in report
    # a second run finds every run done and only evaluates again
    os.remove(out / "evaluate.txt")
    runpy.run_path(str(SCRIPT), run_name="__main__")
    assert len((out / "runs.jsonl").read_text().splitlines()) == 4 and (out / "evaluate.txt").exists()
