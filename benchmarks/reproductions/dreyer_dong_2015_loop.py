#!/usr/bin/env python3
"""Dreyer & Dong (2015), Table 2 with the decoder in the loop: APRO against PRO after N
iterations of finished ``mtplug tune`` runs (docs/reproductions/dreyer-dong-2015.md, "In
the decoder loop (D4)"; its claims: claims/dreyer-dong-2015.yaml).

    python benchmarks/reproductions/dreyer_dong_2015_loop.py starts --start SYSTEM/weights.start \\
        --out STARTS [--start-points 3]
    python benchmarks/reproductions/dreyer_dong_2015_loop.py compare --system SYSTEM --cdec CDEC_BUILD \\
        --out RESULTS --baseline PRO_RUN [PRO_RUN ...] --other apro RUN [RUN ...] [--other ...] \\
        [--config cdec.ini] [--system-name dense] [--baseline-name pro] [--at 10 30] [--jobs 2] \\
        [--results results/NAME-at{at}.json]

``starts`` writes the start points as cdec weights files, ``STARTS/pointP.weights``: point
0 is START, points 1..``--start-points`` Gimpel & Smith's N(w, (w/2)^2) draws, the points
of the fixed-pool studies (pool_study.py). Each is the ``--start`` of a set of
benchmarks/real_systems.py runs, one folder per start point: APRO's result does not depend
on the seed, so its replicas are its start points, and PRO runs once from each of them too
(point p with seed 1 + p mod 3), as the fixed-pool studies pair them.

``compare``: the runs are working folders of ``mtplug tune`` (real_systems.py with
``--nbest 500 --iterations 30`` and ``+pool-reset=10``, the paper's reset). For each N of
``--at``, a run's result after N iterations is what ``mtplug tune --iterations N`` returns:
the weights of its best decoded tuning BLEU among iterations 1..N (``iterK/weights``); a
reset after iteration N does not change iterations 1..N, so a 30-iteration run holds its
10-iteration result. A run that stopped before N by itself (e.g. no new hypotheses: the
paper's "we stop earlier when the accumulated k-best list does not change anymore") counts
with all its iterations. Those weights are decoded on SYSTEM's test set by SYSTEM's cdec
with ``--config`` (once per weights file), and ``mtplug evaluate`` compares every
``--other`` group with the baseline group, run by run in the order given (every group has
one run per start point, in the same order: no run stands for another). Results:
``RESULTS/at-N.txt`` / ``.json``, ``RESULTS/rows.jsonl`` (every run's iteration, tuning and
test BLEU and test length ratio) and, with ``--results``, the committed results file of
each N (claims.py's schema; ``{at}`` in the path is N): the runs of each group under its
name (``--baseline-name`` for the baseline) in the system ``--system-name``, and each
group's comparison with the baseline.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from real_systems import Cdec  # noqa: E402


def result_after(run: Path, n: int) -> tuple[int, float]:
    """(iteration, decoded tuning BLEU) of the best of iterations 1..n of a tune run (all
    its iterations when it stopped by itself before n)."""
    state = json.loads((run / "state.json").read_text())
    history = state["history"]
    stopped_early = state.get("stop") not in (None, "iteration limit")
    if len(history) < n and not stopped_early:
        raise SystemExit(f"{run}: {len(history)} iterations, fewer than {n}")
    best = max(history[:n], key=lambda h: (h["bleu"], -h["iteration"]))   # ties: the earliest, as tune
    return int(best["iteration"]), float(best["bleu"])


def bleu_and_ratio(hyp: Path, ref: Path) -> tuple[float, float]:
    """Corpus BLEU (0-100) of a 1-best file and its length ratio (hypothesis / reference words)."""
    from mtplug.corpus import NbestCorpus
    from mtplug.formats.references import read_references

    corpus = NbestCorpus.from_plain(str(hyp), read_references([str(ref)]))
    score = corpus.bleu_of_rows(corpus.sent_offsets[:-1])
    return 100 * score.score, score.ratio


def write_starts(start: Path, n: int, out: Path) -> list[Path]:
    """STARTS/pointP.weights for P = 0..n (pool_study.py's start points)."""
    from galley_rerank import read_weights
    from pool_study import start_points

    out.mkdir(parents=True, exist_ok=True)
    files = []
    for p, weights in enumerate(start_points(read_weights(start), n)):
        files.append(out / f"point{p}.weights")
        files[-1].write_text("".join(f"{name} {value!r}\n" for name, value in weights.items()))
    return files


def summary(a, n: int, rows: list[dict], report: dict, system: Cdec) -> dict:
    """The results file of the comparison after ``n`` iterations (``--results``)."""
    commit = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip()
    scores = {s["name"]: s["scores"]["bleu"] for s in report["systems"]}
    methods: dict[str, dict] = {}
    for group in dict.fromkeys(r["group"] for r in rows):
        name = a.baseline_name if group == "baseline" else group
        runs = [{"run": Path(r["run"]).name, "point": i, "iteration": r["iteration"], "tune": r["tune_bleu"],
                 "test": r["test_bleu"], "length_ratio": r["length_ratio"]}
                for i, r in enumerate(x for x in rows if x["group"] == group)]
        methods[name] = {"optimizer": "mtplug tune", "runs": runs}
        if group != "baseline":
            c = scores[group]
            methods[name]["compared"] = {"p": c["p"], "replicas": len(runs), "per_point": True,
                                         "baseline_mean": scores["baseline"]["mean"], "mean": c["mean"],
                                         "s_sel": c["s_sel"]}
    return {"script": Path(__file__).name, "commit": commit, "date": time.strftime("%Y-%m-%d"),
            "system": str(system.sys), "config": a.config, "cdec": str(system.cdec), "at": n,
            "baseline": a.baseline_name, "systems": {a.system_name: {"methods": methods}}}


def compare(a) -> None:
    groups = {"baseline": [Path(p) for p in a.baseline]}
    for name, *runs in a.other:
        if not runs:
            raise SystemExit(f"--other {name}: give its tune folders")
        if len(runs) != len(groups["baseline"]):
            raise SystemExit(f"--other {name}: {len(runs)} runs against the baseline's {len(groups['baseline'])}: "
                             "every group needs one run per start point (no run stands for another)")
        groups[name] = [Path(p) for p in runs]
    system = Cdec(argparse.Namespace(system=a.system, cdec=a.cdec, config=a.config, start=None, jobs=a.jobs))
    out = Path(a.out)
    (out / "hyps").mkdir(parents=True, exist_ok=True)
    rows = []
    for n in a.at:
        files: dict[str, list[Path]] = {}
        at = []
        for name, runs in groups.items():
            files[name] = []
            for run in runs:
                k, tune_bleu = result_after(run, n)
                hyp = out / "hyps" / f"{run.parent.name}.{run.name}.iter{k:03d}.test.hyp"
                if not hyp.exists():
                    system.decode(run / f"iter{k:03d}" / "weights", system.test_src, hyp, out / "decode.log")
                files[name].append(hyp)
                test, ratio = bleu_and_ratio(hyp, system.test_ref)
                at.append({"at": n, "group": name, "run": str(run), "iteration": k, "tune_bleu": tune_bleu,
                           "test_bleu": round(test, 2), "length_ratio": round(ratio, 4)})
        rows += at
        cmd = [sys.executable, "-m", "mtplug", "evaluate", "-q", "--ref", str(system.test_ref), "--metric", "bleu",
               "length", "--hyps-baseline", *map(str, files["baseline"]), "--json", str(out / f"at-{n}.json")]
        for name, hyps in files.items():
            if name != "baseline":
                cmd += [f"--hyps-{name}", *map(str, hyps)]
        text = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        (out / f"at-{n}.txt").write_text(text)
        print(f"after {n} iterations\n{text}", flush=True)
        if a.results:
            results = Path(a.results.replace("{at}", str(n)))
            results.parent.mkdir(parents=True, exist_ok=True)
            report = json.loads((out / f"at-{n}.json").read_text())
            results.write_text(json.dumps(summary(a, n, at, report, system), indent=1, sort_keys=True) + "\n")
    (out / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    s = sub.add_parser("starts", help="write the start points as cdec weights files")
    s.add_argument("--start", required=True, help="the start weights (cdec weights file): point 0")
    s.add_argument("--out", required=True)
    s.add_argument("--start-points", type=int, default=3, help="random start points besides START (default 3)")
    c = sub.add_parser("compare", help="APRO against PRO after N iterations of finished tune runs")
    c.add_argument("--system", required=True)
    c.add_argument("--cdec", required=True, help="the cdec build folder")
    c.add_argument("--config", default="cdec.ini", help="the cdec config the runs tuned (default cdec.ini)")
    c.add_argument("--out", required=True)
    c.add_argument("--baseline", nargs="+", required=True, help="the baseline's tune folders (PRO), by start point")
    c.add_argument("--baseline-name", default="pro", help="the baseline's name in the results file (default pro)")
    c.add_argument("--other", nargs="+", action="append", default=[], metavar="NAME RUN",
                   help="a name and its tune folders, by start point as --baseline (repeatable)")
    c.add_argument("--system-name", default="dense", help="the system's name in the results file (default dense)")
    c.add_argument("--at", type=int, nargs="+", default=[10, 30])
    c.add_argument("--jobs", type=int, default=2)
    c.add_argument("--results", help="the results file of each N ({at} in the path stands for N)")
    a = ap.parse_args()
    if a.command == "starts":
        for f in write_starts(Path(a.start), a.start_points, Path(a.out)):
            print(f)
        return
    if a.results and len(a.at) > 1 and "{at}" not in a.results:
        ap.error("--results: with several --at, the path needs {at}")
    compare(a)


if __name__ == "__main__":
    main()
