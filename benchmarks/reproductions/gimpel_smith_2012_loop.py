#!/usr/bin/env python3
"""Gimpel & Smith (2012) with the decoder in the loop: Table 1 and Figure 3 (Section 4.2),
MERT, PRO and RAMPION tuned from the default weights and random initializers
(docs/reproductions/gimpel-smith-2012.md; its claims: claims/gimpel-smith-2012.yaml).

    python benchmarks/reproductions/gimpel_smith_2012_loop.py --system SYSTEM --cdec CDEC_BUILD --out LOOP \\
        [--results results/NAME.json] [--start-points 2] [--seeds 1 2 3] [--jobs 2] [--cap-iterations N]

SYSTEM is a cdec system folder as benchmarks/real_systems.py reads it (cdec.ini, dev.de,
dev.en, test.de, test.en, weights.start). The initializers, as the paper's Section 4.2:
point 0 is SYSTEM/weights.start (cdec's default weights, where the paper starts from
Moses's), points 1..``--start-points`` draw each weight w from N(w, (w/2)^2) as
pool_study.py draws them (the fixed-pool study's points 1..N; start seed 0), written to
LOOP/start.pP. From each point, ``benchmarks/real_systems.py cdec --start LOOP/start.pP
--out LOOP/pP`` runs ``mtplug tune`` with the paper's settings (Section 4, "Training
Algorithms"):

* ``mert``: 100-best lists merged over the iterations, 20 random restarts
  (mert-moses.pl's), until no weight moves (at most 25 iterations), one run per seed;
* ``pro``: Hopkins & May's PRO (Γ = 5000, Ξ = 50, β = 0.05, logistic C = 1, no pull toward
  the start (``--c-start 1e30``: see METHODS), no length filter, Ψ = 0.1), 1500-best lists
  merged, 25 iterations, one run per seed;
* ``rampion-ramp3``: RAMPION (Alg. 1: T = 20 iterations of 500-best lists, each tuned on
  its own lists alone, ``--pool-reset 1``; T' = 10, T'' = 5, η = 0.0001, C = 1, α = 10, the
  start as given), deterministic: one run per point.

Every run returns its last iteration's weights (``--final-weights last``, as the paper's
algorithms do), which real_systems.py decodes on dev and test (a finished run is not run
again). ``mtplug evaluate`` compares MERT and PRO with RAMPION on one run per start point
(a seeded method's run of point p with seed seeds[p mod len(seeds)], pool_study.py's
pairing), in LOOP/evaluate.txt and .json. The results file (``--results``, default
LOOP/summary.json) holds the settings, every run (test and dev BLEU, the decoded tuning
BLEU per iteration, the final weights) and the comparisons, as pool_study.py's summary
names them (system ``dense``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

BASELINE = "rampion-ramp3"
#: name -> (mtplug tune's optimizer, the options of its real_systems.py run name, depends on the seed).
#: PRO's c-start 1e30 is "no pull toward the start" (c-start inf, which mtplug tune's flags refuse):
#: 1/C + 1/1e30 is 1/C in double precision, and the pull's centre start·C/1e30 is 0 to 30 digits
METHODS: dict[str, tuple[str, dict[str, str], bool]] = {
    "mert": ("mert", {"restarts": "20", "nbest-size": "100", "iterations": "25"}, True),
    "pro": ("pro", {"psi": "0.1", "c": "1", "c-start": "1e30", "length-z": "0", "nbest-size": "1500",
                    "iterations": "25"}, True),
    BASELINE: ("rampion", {"loss": "ramp3", "start-scale": "given", "pool-reset": "1", "nbest-size": "500",
                           "iterations": "20"}, False),
}


def options_of(method: str, cap: int | None = None) -> dict[str, str]:
    """The method's mtplug tune options, its iterations at most ``cap`` (smoke runs)."""
    options = dict(METHODS[method][1])
    if cap is not None:
        options["iterations"] = str(min(int(options["iterations"]), cap))
    return options


def run_name(method: str, seed: int, cap: int | None = None) -> str:
    """The real_systems.py run name of ``method`` with ``seed`` (it passes each +option=value
    to mtplug tune; the last --seed wins over real_systems.py's --seed 1)."""
    return "+".join([f"mtplug-{METHODS[method][0]}", f"seed={seed}",
                     *(f"{k}={v}" for k, v in options_of(method, cap).items()), "final-weights=last"])


def write_starts(start: Path, n: int, out: Path) -> list[Path]:
    """LOOP/start.p0..pN: the default weights and N random initializers (cdec weights files)."""
    from galley_rerank import read_weights
    from pool_study import start_points

    files = []
    for p, point in enumerate(start_points(read_weights(start), n)):
        f = out / f"start.p{p}"
        f.write_text("".join(f"{name} {value!r}\n" for name, value in point.items()))
        files.append(f)
    return files


def runs_of(a) -> dict[tuple[str, int, int], str]:
    """(method, point, seed) -> run name: every run the study needs."""
    out = {}
    for method, (_, _, seeded) in METHODS.items():
        for p in range(a.start_points + 1):
            for seed in (a.seeds if seeded else a.seeds[:1]):
                out[(method, p, seed)] = run_name(method, seed, a.cap_iterations)
    return out


def tune(a, starts: list[Path], out: Path) -> None:
    """real_systems.py's runs from every start point (it skips the finished ones)."""
    names = sorted(set(runs_of(a).values()))
    for p, start in enumerate(starts):
        cmd = [sys.executable, str(HERE.parent / "real_systems.py"), "cdec", "--system", a.system, "--cdec", a.cdec,
               "--out", str(out / f"p{p}"), "--start", str(start), "--jobs", str(a.jobs), "--runs", ",".join(names)]
        subprocess.run(cmd, check=True)


def collect(a, out: Path) -> dict[tuple[str, int, int], dict]:
    """(method, point, seed) -> its run: results.jsonl's row and the test output."""
    from galley_rerank import read_weights

    rows: dict[tuple[str, int, int], dict] = {}
    for (method, p, seed), name in runs_of(a).items():
        path = out / f"p{p}" / "results.jsonl"
        found = [json.loads(x) for x in path.read_text().splitlines() if json.loads(x)["run"] == name] \
            if path.exists() else []
        if not found or "error" in found[-1]:
            raise SystemExit(f"{path.parent / name}: " + (found[-1]["error"] if found else "not run"))
        r = found[-1]
        rows[(method, p, seed)] = {
            "point": p, "seed": seed, "test": round(100 * r["test_bleu"], 4), "dev": round(100 * r["dev_bleu"], 4),
            "seconds": r["seconds"], "iterations": len(r["history"] or []),
            **{k: r[k] for k in ("decode_seconds", "optimize_seconds") if k in r},
            "tune_per_iteration": [round(100 * b, 2) for b in r["history"] or []],
            "weights": read_weights(Path(r["final_weights"])), "test_hyps": str(out / f"p{p}" / name / "final.test.hyp")}
    return rows


def replicas(a, rows: dict, method: str, per_point: bool) -> list[dict]:
    """The method's independent runs by start point, then seed; with ``per_point`` one per
    start point (pool_study.py's pairing)."""
    points = range(a.start_points + 1)
    if per_point:
        return [rows.get((method, p, a.seeds[p % len(a.seeds)])) or rows[(method, p, a.seeds[0])] for p in points]
    return [rows[(method, p, seed)] for p in points for seed in (a.seeds if METHODS[method][2] else a.seeds[:1])]


def evaluate(a, rows: dict, out: Path, test_ref: Path) -> dict:
    """``mtplug evaluate`` of every method against the baseline on one run per start point:
    {method: {"p", "replicas", ...}}."""
    files = {m: [r["test_hyps"] for r in replicas(a, rows, m, True)] for m in METHODS}
    report = out / "evaluate.json"
    cmd = [sys.executable, "-m", "mtplug", "evaluate", "-q", "--ref", str(test_ref), "--metric", "bleu", "--seed",
           "0", "--boot-samples", str(a.boot_samples), "--ar-shuffles", str(a.ar_shuffles), "--json", str(report),
           "--hyps-baseline", *files[BASELINE]]
    for m in METHODS:
        if m != BASELINE:
            cmd += ["--hyps-system", m, *files[m]]
    with open(out / "evaluate.txt", "w") as fh:
        subprocess.run(cmd, check=True, stdout=fh)
    scores = {s["name"]: s["scores"]["bleu"] for s in json.loads(report.read_text())["systems"]}
    return {m: {"p": scores[m]["p"], "replicas": len(files[m]), "per_point": True,
                "baseline_mean": scores["baseline"]["mean"], "mean": scores[m]["mean"], "s_sel": scores[m]["s_sel"]}
            for m in METHODS if m != BASELINE}


def summary(a, rows: dict, compared: dict) -> dict:
    """The results file: settings, every run, each comparison with the baseline."""
    commit = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip()
    methods = {}
    for m, (optimizer, _, seeded) in METHODS.items():
        methods[m] = {"optimizer": f"mtplug tune --optimizer {optimizer}", "options": options_of(m, a.cap_iterations),
                      "seeded": seeded,
                      "runs": [{k: v for k, v in r.items() if k != "test_hyps"} for r in replicas(a, rows, m, False)],
                      **({"compared": compared[m]} if m in compared else {})}
    return {"script": Path(sys.argv[0]).name, "commit": commit, "date": time.strftime("%Y-%m-%d"),
            "system": str(Path(a.system).resolve()), "start_points": a.start_points + 1, "seeds": a.seeds,
            "final_weights": "last", "baseline": BASELINE, "systems": {"dense": {"methods": methods}}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--system", required=True, help="the cdec system folder (real_systems.py's)")
    ap.add_argument("--cdec", required=True, help="the cdec build folder")
    ap.add_argument("--out", required=True)
    ap.add_argument("--start-points", type=int, default=2,
                    help="random initializers besides the default weights (default 2, the paper's)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3], help="MERT's and PRO's (default 1 2 3)")
    ap.add_argument("--jobs", type=int, default=2, help="decoder processes (default 2)")
    ap.add_argument("--boot-samples", type=int, default=10000, help="mtplug evaluate's (default 10000)")
    ap.add_argument("--ar-shuffles", type=int, default=10000, help="mtplug evaluate's (default 10000)")
    ap.add_argument("--cap-iterations", type=int, help="every method's iterations at most N (smoke runs; the "
                                                         "default is the paper's)")
    ap.add_argument("--results", help="where the summary goes (default LOOP/summary.json): a file under "
                                      "benchmarks/reproductions/results/ for the page's tables")
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    tune(a, write_starts(Path(a.system) / "weights.start", a.start_points, out), out)
    rows = collect(a, out)
    compared = evaluate(a, rows, out, Path(a.system) / "test.en")
    results = Path(a.results) if a.results else out / "summary.json"
    results.parent.mkdir(parents=True, exist_ok=True)
    results.write_text(json.dumps(summary(a, rows, compared), indent=1, sort_keys=True) + "\n")
    print((out / "evaluate.txt").read_text())


if __name__ == "__main__":
    main()
