"""mtplug evaluate against the real MultEval (Clark et al. 2011): MTPLUG_MULTEVAL_DIR names
a MultEval build folder whose ``multeval.sh eval`` runs (METEOR is not needed: the tests
ask for bleu, ter and length). Without it these tests skip, saying so."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from mtplug.cli import main


@pytest.fixture(scope="session")
def multeval_dir() -> Path:
    value = os.environ.get("MTPLUG_MULTEVAL_DIR")
    if not value:
        pytest.skip("set MTPLUG_MULTEVAL_DIR to a MultEval build folder (with multeval.sh) to run this test")
    path = Path(value)
    if not (path / "multeval.sh").exists():
        pytest.fail(f"MTPLUG_MULTEVAL_DIR={value} lacks multeval.sh")
    return path


def _multeval(multeval_dir: Path, refs, systems) -> dict:
    """{(system index, metric, key): value} of MultEval's RESULT lines (--verbosity 1)."""
    argv = [str(multeval_dir / "multeval.sh"), "eval", "--refs", *map(str, refs), "--metrics", "bleu", "ter",
            "length", "--verbosity", "1", "--boot-samples", "2000", "--ar-shuffles", "2000"]
    for k, (name, files) in enumerate(systems):
        argv += ["--hyps-baseline" if k == 0 else f"--hyps-sys{k}", *map(str, files)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    out = {}
    for system, metric, key, value in re.findall(r"^RESULT: (baseline|system \d+): (\w+): ([A-Za-z_ ]+\d*): (\S+)$",
                                                 done.stderr, flags=re.M):
        k = 0 if system == "baseline" else int(system.split()[1])
        out[k, metric, key] = float(value)
    return out


def _ours(tmp_path: Path, refs, systems) -> dict:
    out = tmp_path / "ours.json"
    argv = ["evaluate", "-q", "--ref", *map(str, refs), "--boot-samples", "2000", "--ar-shuffles", "2000",
            "--json", str(out)]
    for k, (name, files) in enumerate(systems):
        argv += ["--hyps-baseline" if k == 0 else f"--hyps-{name}", *map(str, files)]
    assert main(argv) == 0
    return json.loads(out.read_text())


def _compare(ours: dict, theirs: dict, ter_tolerance: float) -> None:
    for k, system in enumerate(ours["systems"]):
        for metric in ("BLEU", "Length", "TER"):
            r = system["scores"][metric.lower()]      # JSON keys: the --metric text
            for i, value in enumerate(r["replicas"]):
                want = theirs[k, metric, f"OptRun {i}"]
                if metric == "TER":
                    assert value == pytest.approx(want, abs=ter_tolerance)
                else:
                    assert round(value, 6) == want
            if metric != "TER":
                assert round(r["mean"], 6) == theirs[k, metric, "AVG"]
                if r["s_dev"] is not None:
                    assert round(r["s_dev"], 6) == theirs[k, metric, "STDDEV"]
            # 2,000 resamples: the relative sd of a bootstrap sd is about 1/sqrt(4000) = 1.6 %
            assert r["s_sel"] == pytest.approx(theirs[k, metric, "RESAMPLED_STDDEV_AVG"], rel=0.08)


def test_report_equals_multevals_on_data_made_here(multeval_dir, tmp_path):
    rng = np.random.default_rng(2611)
    vocab = [f"w{i}" for i in range(80)] + ["the", "of", "a", ",", "."] * 6
    refs = [" ".join(rng.choice(vocab, size=rng.integers(3, 30))) for _ in range(300)]
    ref_path = tmp_path / "ref"
    ref_path.write_text("".join(r + "\n" for r in refs))
    systems = []
    for name, error in (("baseline", 0.35), ("better", 0.3)):
        files = []
        for k in range(3):
            lines = [" ".join(str(rng.choice(vocab)) if rng.random() < error + 0.02 * k else w for w in r.split()
                              if rng.random() > 0.05) or "x" for r in refs]
            path = tmp_path / f"{name}.{k}"
            path.write_text("".join(line + "\n" for line in lines))
            files.append(path)
        systems.append((name, files))
    # one reference: tercom and sacrebleu's TER disagree by an edit on about 1 sentence in 1000
    _compare(_ours(tmp_path, [ref_path], systems), _multeval(multeval_dir, [ref_path], systems), 0.05)


def test_report_equals_multevals_on_its_own_example(multeval_dir, tmp_path):
    example = multeval_dir / "example"
    if not (example / "refs.test2010.lc.tok.en.0").exists():
        pytest.skip(f"{example} does not hold MultEval's example")
    refs = [example / "refs.test2010.lc.tok.en.0"]
    systems = [(name, [example / f"hyps.lc.tok.en.{name}.opt{k}" for k in range(3)]) for name in ("baseline", "sys1")]
    _compare(_ours(tmp_path, refs, systems), _multeval(multeval_dir, refs, systems), 0.05)
