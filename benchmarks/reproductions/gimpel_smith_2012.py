#!/usr/bin/env python3
"""Gimpel & Smith (2012), structured ramp loss: the losses and the optimizers compared on
fixed pools (docs/reproductions/gimpel-smith-2012.md).

    python benchmarks/reproductions/gimpel_smith_2012.py --pools POOLS --start START --out RESULTS \\
        [--seeds 1 2 3] [--start-points 3] [--tune-nbest 100] [--restarts 20] [--threads 2]

POOLS is make_galley_pools.py's folder: cdec de-en tune, dev and test sets decoded once
with the sparse feature functions (``POOLS/{tune,dev,test}.kbest`` and ``.en``) and the
same lists with the 12 dense features only (``POOLS/dense/``, written by
defaults_evidence.py's ``dense_pools`` when missing). Two systems, as the
paper's small and large feature sets: ``dense`` (12 features) and ``sparse`` (every
feature of the pools). On each, every method tunes on the tune pool's first
``--tune-nbest`` hypotheses per sentence and reranks the test pool (500-best):

* MERT (dense only: coordinate ascent with ``--restarts`` random restarts, as MERT was
  run on small feature sets), PRO (defaults),
* RAMPION with each loss of ``mtplug optimize rampion --loss`` (ramp1..3, their soft
  versions, and perceptron, hinge, log, Bayes risk, soft-oracle on the same footing).

Start points, the paper's initializer protocol: point 0 is START (cdec's default weights
for the system); points 1..``--start-points`` draw each dense weight w from N(w, (w/2)^2)
(``mtplug compare``'s ``start_distribution: normal``, start seed 0; a weight of 0 stays
0), the same points for every method. Seeds seed MERT's restarts and PRO's sampling;
RAMPION is deterministic, so it runs once per start point (its seeds would repeat it).

Outputs: ``RESULTS/runs.jsonl`` (every run: tune and test BLEU, seconds, the test
1-best file), ``RESULTS/SYSTEM/evaluate.txt`` and ``.json`` (``mtplug evaluate`` of every
method's replicas against RAMPION ramp3), ``RESULTS/table.md``. A finished run is not
run again.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
sys.path.insert(0, str(HERE))

from defaults_evidence import dense_pools  # noqa: E402
from galley_rerank import read_weights, stores, vector  # noqa: E402

SYSTEMS = ("dense", "sparse")
BASELINE = "rampion-ramp3"


def methods(system: str, restarts: int) -> dict[str, tuple[str, dict, bool]]:
    """name -> (optimizer, options, depends on the seed)."""
    from mtplug.optimizers.rampion import LOSSES

    table: dict[str, tuple[str, dict, bool]] = {}
    if system == "dense":
        table["mert"] = ("mert", {"restarts": restarts}, True)
    table["pro"] = ("pro", {}, True)
    for loss in LOSSES:
        table[f"rampion-{loss}"] = ("rampion", {"loss": loss}, False)
    return table


def start_points(start: dict[str, float], n: int) -> list[dict[str, float]]:
    """Point 0 = ``start``; points 1..n drawn from N(w, (w/2)^2) as mtplug compare draws them."""
    from mtplug.experiments.study_config import random_start

    points = [dict(start)]
    for p in range(1, n + 1):
        points.append(dict(random_start(list(start.items()), p, 0, distribution="normal")))
    return points


class Study:
    def __init__(self, args):
        self.a = args
        self.out = Path(args.out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.start = read_weights(Path(args.start))
        self.points = start_points(self.start, args.start_points)
        self.runs_file = self.out / "runs.jsonl"
        self.done: dict[tuple, dict] = {}
        if self.runs_file.exists():
            for line in self.runs_file.read_text().splitlines():
                r = json.loads(line)
                self.done[(r["system"], r["method"], r["point"], r["seed"])] = r

    def data(self, system: str) -> dict:
        pools = dense_pools(Path(self.a.pools)) if system == "dense" else Path(self.a.pools)
        return stores(pools, self.out / system / "stores", self.a.tune_nbest)

    def run(self, system: str, data: dict, method: str, optimizer: str, options: dict, point: int,
            seed: int) -> dict:
        import mtplug

        key = (system, method, point, seed)
        if key in self.done:
            return self.done[key]
        tune, test = data["tune"], data["test"]
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = mtplug.optimize(optimizer, tune, vector(tune, self.points[point]), seed, threads=self.a.threads,
                                  **options)
        seconds = time.perf_counter() - t
        tuned = dict(zip(res.feature_names, res.weights.tolist()))
        rows = test.one_best(vector(test, tuned))
        tag = f"{method}.p{point}.s{seed}"
        hyps = self.out / system / "hyps" / tag
        hyps.parent.mkdir(parents=True, exist_ok=True)
        hyps.write_text("".join(test.hypotheses(int(r), int(r) + 1)[0] + "\n" for r in rows))
        row = {"system": system, "method": method, "point": point, "seed": seed, "optimizer": optimizer,
               "options": options, "seconds": round(seconds, 2), "nonzero": int(np.count_nonzero(res.weights)),
               "tune": res.score, "test": 100 * test.bleu_of_rows(rows).score, "test_hyps": str(hyps)}
        with open(self.runs_file, "a") as fh:
            fh.write(json.dumps(row) + "\n")
        self.done[key] = row
        print(f"{system:6s} {tag:30s} tune {row['tune']:.2f} test {row['test']:.2f} {seconds:6.1f} s", flush=True)
        return row

    def replicas(self, system: str, method: str) -> list[dict]:
        """The method's runs by start point, then seed; a deterministic method's one run per
        point stands for every seed (so every method has the same replicas for evaluate)."""
        out = []
        for point in range(len(self.points)):
            for seed in self.a.seeds:
                row = self.done.get((system, method, point, seed)) or self.done[(system, method, point, self.a.seeds[0])]
                out.append(row)
        return out

    def evaluate(self, system: str, names: list[str]) -> None:
        ref = Path(self.a.pools) / ("dense" if system == "dense" else "") / "test.en"
        files = {n: [r["test_hyps"] for r in self.replicas(system, n)] for n in names}
        cmd = [sys.executable, "-m", "mtplug", "evaluate", "-q", "--hyps-baseline", *files[BASELINE],
               "--ref", str(ref), "--metric", "bleu", "--seed", "0", "--json", str(self.out / system / "evaluate.json")]
        for n in names:
            if n != BASELINE:
                cmd += ["--hyps-system", n, *files[n]]
        subprocess.run(cmd, check=True)
        cmd[cmd.index("--json"):cmd.index("--json") + 2] = []
        with open(self.out / system / "evaluate.txt", "w") as fh:
            subprocess.run(cmd, check=True, stdout=fh)

    def table(self, system: str, names: list[str]) -> str:
        report = json.loads((self.out / system / "evaluate.json").read_text())
        p_of = {s["name"]: s["scores"]["bleu"]["p"] for s in report["systems"]}
        lines = [f"### {system}", "",
                 ("| method | replicas | tune BLEU | test BLEU (mean ± sd) | sd of the start points' means | "
                  "p vs ramp3 | optimizer s |"), "|---|---|---|---|---|---|---|"]
        for n in names:
            rows = self.replicas(system, n)
            test = np.array([r["test"] for r in rows])
            per_point = [np.mean([r["test"] for r in rows if r["point"] == p]) for p in range(len(self.points))]
            p = p_of.get(n)
            lines.append(f"| {n} | {len(rows)} | {np.mean([r['tune'] for r in rows]):.2f} | {test.mean():.2f} ± "
                         f"{test.std(ddof=1) if len(rows) > 1 else 0:.2f} | {np.std(per_point, ddof=1):.2f} | "
                         f"{'–' if n == BASELINE else ('' if p is None else f'{p:.2f}')} | "
                         f"{np.mean([r['seconds'] for r in rows]):.1f} |")
        return "\n".join(lines) + "\n"

    def main(self) -> None:
        tables = []
        for system in self.a.systems:
            data = self.data(system)
            table = methods(system, self.a.restarts)
            for name, (optimizer, options, seeded) in table.items():
                for point in range(len(self.points)):
                    for seed in (self.a.seeds if seeded else self.a.seeds[:1]):
                        self.run(system, data, name, optimizer, options, point, seed)
            self.evaluate(system, list(table))
            tables.append(self.table(system, list(table)))
        (self.out / "table.md").write_text("\n".join(tables))
        print((self.out / "table.md").read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pools", required=True, help="make_galley_pools.py's folder ({tune,dev,test}.kbest, .en, dense/)")
    ap.add_argument("--start", required=True, help="the start weights (cdec weights file): point 0 and the mean "
                                                   "of the random points")
    ap.add_argument("--out", required=True)
    ap.add_argument("--systems", nargs="+", choices=SYSTEMS, default=list(SYSTEMS))
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--start-points", type=int, default=3, help="random start points besides START (default 3)")
    ap.add_argument("--tune-nbest", type=int, default=100)
    ap.add_argument("--restarts", type=int, default=20, help="MERT's random restarts (dense system; default 20)")
    ap.add_argument("--threads", type=int, default=2)
    Study(ap.parse_args()).main()


if __name__ == "__main__":
    main()
