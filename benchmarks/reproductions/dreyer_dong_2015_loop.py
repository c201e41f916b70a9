#!/usr/bin/env python3
"""Dreyer & Dong (2015) with the decoder in the loop: APRO against PRO after N iterations
of finished ``mtplug tune`` runs (docs/reproductions/dreyer-dong-2015.md, D4).

    python benchmarks/reproductions/dreyer_dong_2015_loop.py --system SYSTEM --cdec CDEC_BUILD \\
        --out RESULTS --baseline PRO_RUN [PRO_RUN ...] --other NAME RUN [RUN ...] [--other ...] \\
        [--at 10 30] [--jobs 2]

The runs are working folders of ``mtplug tune`` (e.g. made by benchmarks/real_systems.py
with ``+iterations=30+pool-reset=10``). For each N of ``--at``, a run's result after N
iterations is what ``mtplug tune --iterations N`` returns: the weights of its best
decoded tuning BLEU among iterations 1..N (``iterK/weights``); a reset after iteration N
does not change iterations 1..N, so a 30-iteration run holds its 10-iteration result. Those
weights are decoded on SYSTEM's test set by SYSTEM's cdec (once per weights file), and
``mtplug evaluate`` compares every ``--other`` group with the baseline group. A group
with fewer runs than the baseline is allowed for a deterministic optimizer only (APRO):
its runs must have identical weights at every N, and the first stands for the missing
replicas. Results: ``RESULTS/at-N.txt`` / ``.json`` and ``RESULTS/rows.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from real_systems import Cdec, bleu


def result_after(run: Path, n: int) -> tuple[int, float]:
    """(iteration, decoded tuning BLEU) of the best of iterations 1..n of a tune run."""
    history = json.loads((run / "state.json").read_text())["history"]
    if len(history) < n:
        raise SystemExit(f"{run}: {len(history)} iterations, fewer than {n}")
    best = max(history[:n], key=lambda h: (h["bleu"], -h["iteration"]))   # ties: the earliest, as tune
    return int(best["iteration"]), float(best["bleu"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--system", required=True)
    ap.add_argument("--cdec", required=True, help="the cdec build folder")
    ap.add_argument("--out", required=True)
    ap.add_argument("--baseline", nargs="+", required=True, help="the baseline's tune folders (PRO)")
    ap.add_argument("--other", nargs="+", action="append", default=[], metavar="NAME RUN",
                    help="a name and its tune folders (repeatable)")
    ap.add_argument("--at", type=int, nargs="+", default=[10, 30])
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    groups = {"baseline": [Path(p) for p in a.baseline]}
    for name, *runs in a.other:
        if not runs:
            ap.error(f"--other {name}: give its tune folders")
        groups[name] = [Path(p) for p in runs]
    system = Cdec(argparse.Namespace(system=a.system, cdec=a.cdec, config="cdec.ini", start=None, jobs=a.jobs))
    out = Path(a.out)
    (out / "hyps").mkdir(parents=True, exist_ok=True)
    rows = []
    for n in a.at:
        files = {}
        for name, runs in groups.items():
            picked = [(run, *result_after(run, n)) for run in runs]
            weights = [(run / f"iter{k:03d}" / "weights").read_bytes() for run, k, _ in picked]
            if len(runs) < len(groups["baseline"]):
                if len(set(weights)) != 1:
                    raise SystemExit(f"{name}: fewer runs than the baseline, and their weights after {n} "
                                     "iterations differ: only a deterministic optimizer's runs may stand for more")
                picked += [picked[0]] * (len(groups["baseline"]) - len(runs))
            files[name] = []
            for run, k, tune_bleu in picked:
                hyp = out / "hyps" / f"{run.name}.iter{k:03d}.test.hyp"
                if not hyp.exists():
                    system.decode(run / f"iter{k:03d}" / "weights", system.test_src, hyp, out / "decode.log")
                files[name].append(hyp)
                rows.append({"at": n, "group": name, "run": str(run), "iteration": k, "tune_bleu": tune_bleu,
                             "test_bleu": round(bleu(hyp, system.test_ref) * 100, 2)})
        cmd = [sys.executable, "-m", "mtplug", "evaluate", "-q", "--ref", str(system.test_ref), "--metric", "bleu",
               "length", "--hyps-baseline", *map(str, files["baseline"]), "--json", str(out / f"at-{n}.json")]
        for name, hyps in files.items():
            if name != "baseline":
                cmd += [f"--hyps-{name}", *map(str, hyps)]
        text = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        (out / f"at-{n}.txt").write_text(text)
        print(f"after {n} iterations\n{text}", flush=True)
    (out / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


if __name__ == "__main__":
    main()
