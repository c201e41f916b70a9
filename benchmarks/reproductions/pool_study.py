"""Optimizers compared on fixed pools decoded once, the protocol of the reproductions of
Gimpel & Smith (2012) and Eidelman (2012) (docs/reproductions/): the cdec de-en pools of
make_galley_pools.py, a dense system (the 12 dense features; ``POOLS/dense/``, written by
defaults_evidence.py's ``dense_pools`` when missing) and a sparse one (every feature);
every method tunes on the tune pool's first ``--tune-nbest`` hypotheses per sentence from
every start point with every seed and reranks the test pool.

Start points, Gimpel & Smith's initializer protocol: point 0 is START; points
1..``--start-points`` draw each weight w from N(w, (w/2)^2) (``mtplug compare``'s
``start_distribution: normal``, start seed 0; a weight of 0 stays 0), the same points for
every method. A method whose result does not depend on the seed runs once per start point
and that run stands for every seed, so every method has the same replicas.

Outputs: ``RESULTS/runs.jsonl`` (every run: tune and test BLEU on 0-100, seconds, the test
1-best file), ``RESULTS/SYSTEM/evaluate.txt`` and ``.json`` (``mtplug evaluate`` of every
method's replicas against the baseline), ``RESULTS/table.md``. A finished run is not run
again.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
sys.path.insert(0, str(HERE))

from defaults_evidence import dense_pools  # noqa: E402
from galley_rerank import read_weights, stores, vector  # noqa: E402

SYSTEMS = ("dense", "sparse")


def start_points(start: dict[str, float], n: int) -> list[dict[str, float]]:
    """Point 0 = ``start``; points 1..n drawn from N(w, (w/2)^2) as mtplug compare draws them."""
    from mtplug.experiments.study_config import random_start

    points = [dict(start)]
    for p in range(1, n + 1):
        points.append(dict(random_start(list(start.items()), p, 0, distribution="normal")))
    return points


class PoolStudy:
    """Every method of ``methods(system, args)`` (name -> (optimizer, options, whether the
    seed changes its result)) on each system, from every start point with every seed,
    reranking the test pool; ``extra(result)``: more fields of a run's row from its
    mtplug Result; ``columns``: more table columns, (header, rows -> text)."""

    def __init__(self, args, methods: Callable, baseline: str, extra: Callable | None = None,
                 columns: Sequence[tuple[str, Callable]] = ()):
        self.a = args
        self.methods, self.baseline, self.extra, self.columns = methods, baseline, extra, list(columns)
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
               "tune": res.score, "test": 100 * test.bleu_of_rows(rows).score, "test_hyps": str(hyps),
               **(self.extra(res) if self.extra else {})}
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
        cmd = [sys.executable, "-m", "mtplug", "evaluate", "-q", "--hyps-baseline", *files[self.baseline],
               "--ref", str(ref), "--metric", "bleu", "--seed", "0", "--boot-samples", str(self.a.boot_samples),
               "--ar-shuffles", str(self.a.ar_shuffles), "--json", str(self.out / system / "evaluate.json")]
        for n in names:
            if n != self.baseline:
                cmd += ["--hyps-system", n, *files[n]]
        with open(self.out / system / "evaluate.txt", "w") as fh:    # the table; --json writes the rest
            subprocess.run(cmd, check=True, stdout=fh)

    def table(self, system: str, names: list[str]) -> str:
        report = json.loads((self.out / system / "evaluate.json").read_text())
        p_of = {s["name"]: s["scores"]["bleu"]["p"] for s in report["systems"]}
        headers = ["method", "replicas", "tune BLEU", "test BLEU (mean ± sd)", "sd of the start points' means",
                   f"p vs {self.baseline}", "optimizer s"] + [h for h, _ in self.columns]
        lines = [f"### {system}", "", "| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
        for n in names:
            rows = self.replicas(system, n)
            test = np.array([r["test"] for r in rows])
            per_point = [np.mean([r["test"] for r in rows if r["point"] == p]) for p in range(len(self.points))]
            p = p_of.get(n)
            cells = [n, str(len(rows)), f"{np.mean([r['tune'] for r in rows]):.2f}",
                     f"{test.mean():.2f} ± {test.std(ddof=1) if len(rows) > 1 else 0:.2f}",
                     f"{np.std(per_point, ddof=1) if len(per_point) > 1 else 0:.2f}",
                     "–" if n == self.baseline else ("" if p is None else f"{p:.2f}"),
                     f"{np.mean([r['seconds'] for r in rows]):.1f}"] + [fn(rows) for _, fn in self.columns]
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines) + "\n"

    def main(self) -> None:
        tables = []
        for system in self.a.systems:
            data = self.data(system)
            table = self.methods(system, self.a)
            for name, (optimizer, options, seeded) in table.items():
                for point in range(len(self.points)):
                    for seed in (self.a.seeds if seeded else self.a.seeds[:1]):
                        self.run(system, data, name, optimizer, options, point, seed)
            self.evaluate(system, list(table))
            tables.append(self.table(system, list(table)))
        (self.out / "table.md").write_text("\n".join(tables))
        print((self.out / "table.md").read_text())


def add_arguments(ap: argparse.ArgumentParser) -> None:
    """The options every pool study takes."""
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
    ap.add_argument("--boot-samples", type=int, default=10000, help="mtplug evaluate's (default 10000)")
    ap.add_argument("--ar-shuffles", type=int, default=10000, help="mtplug evaluate's (default 10000)")


def main(doc: str, methods: Callable, baseline: str, **kwargs) -> None:
    """The command line of a study script (``doc``: its docstring, the --help text):
    :func:`add_arguments`, then :class:`PoolStudy` with ``methods``, ``baseline`` and
    ``kwargs`` (extra, columns)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(ap)
    PoolStudy(ap.parse_args(), methods, baseline, **kwargs).main()
