"""Optimizers compared on fixed pools decoded once, the protocol of the reproductions of
Gimpel & Smith (2012) and Eidelman (2012) (docs/reproductions/): the cdec de-en pools of
make_galley_pools.py, a dense system (the 12 dense features; ``POOLS/dense/``, written by
defaults_evidence.py's ``dense_pools`` when missing) and a sparse one (every feature);
every method tunes on the tune pool's first ``--tune-nbest`` hypotheses per sentence from
every start point with every seed and reranks the test pool.

Start points, Gimpel & Smith's initializer protocol: point 0 is START; points
1..``--start-points`` draw each weight w from N(w, (w/2)^2) (``mtplug compare``'s
``start_distribution: normal``, start seed 0; a weight of 0 stays 0), the same points for
every method. A method whose result does not depend on the seed runs once per start point;
no run stands for another. Each method is compared with the baseline by ``mtplug
evaluate`` on paired independent runs: every (point, seed) run when both depend on the
seed, else one run per start point (a seeded method's run of point p with seed
seeds[p mod len(seeds)]).

Outputs: ``RESULTS/runs.jsonl`` (every run: tune and test BLEU on 0-100, the test output's
length ratio (hypothesis / reference words), seconds, the test 1-best file), ``RESULTS/SYSTEM/evaluate-METHOD.txt`` and ``.json`` (``mtplug evaluate``
against the baseline), ``RESULTS/table.md``, and the summary (``--results``, default
``RESULTS/summary.json``): the study's settings, pool provenance, commit, every distinct
run and each comparison, the committed results file the pages' tables are made from. A
finished run is not run again.
"""

from __future__ import annotations

import argparse
import json
import math
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
from galley_rerank import not_run_yet, read_weights, stores, vector  # noqa: E402

SYSTEMS = ("dense", "sparse")


def start_points(start: dict[str, float], n: int) -> list[dict[str, float]]:
    """Point 0 = ``start``; points 1..n drawn from N(w, (w/2)^2) as mtplug compare draws them."""
    from mtplug.experiments.study_config import random_start

    points = [dict(start)]
    for p in range(1, n + 1):
        points.append(dict(random_start(list(start.items()), p, 0, distribution="normal")))
    return points


def first_step(optimizer: str, options: dict, steps: int) -> int:
    """The first of iterations 1..steps whose start can change the last one's weights.
    With Ψ = 1 and no pull toward the start (APRO; PRO with c_start = ∞) an iteration's
    weights do not depend on its start, so only the last one need run."""
    free = options.get("psi", 1.0) == 1.0 and (optimizer == "apro" or math.isinf(options.get("c_start", 0.0)))
    return steps if free else 1


def iterate(optimizer: str, corpus, start, seed: int, options: dict, threads: int):
    """``mtplug.optimize(optimizer, corpus, start, seed, **options)``; with ``steps`` N in
    ``options`` (not an mtplug option), iterations :func:`first_step`..N of the optimizer
    on the pool instead, each from the last one's weights with the seed ``mtplug tune``
    gives iteration t of a run of that seed (``iteration_seed``), as the decoder loop
    iterates on lists that here stay the same. The last iteration's Result, with
    ``info["steps"]`` the iterations that ran."""
    import mtplug
    from mtplug.tuning.loop import iteration_seed

    if "steps" not in options:
        return mtplug.optimize(optimizer, corpus, start, seed, threads=threads, **options)
    steps = int(options["steps"])
    once = {k: v for k, v in options.items() if k != "steps"}
    first, result = first_step(optimizer, once, steps), None
    for t in range(first, steps + 1):
        result = mtplug.optimize(optimizer, corpus, start if result is None else result.weights,
                                 iteration_seed(seed, t), threads=threads, **once)
    result.info["steps"] = steps - first + 1
    return result


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
        known = methods(SYSTEMS[0], args)
        unknown = [n for n in (getattr(args, "methods", None) or []) if n not in known]
        if unknown:
            print(f"{Path(sys.argv[0]).name}: error: --methods {unknown[0]}: not a method of this study "
                  f"({', '.join(known)})", file=sys.stderr)
            raise SystemExit(2)
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
        key = (system, method, point, seed)
        if key in self.done:
            return self.done[key]
        tune, test = data["tune"], data["test"]
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = iterate(optimizer, tune, vector(tune, self.points[point]), seed, options, self.a.threads)
        seconds = time.perf_counter() - t
        tuned = dict(zip(res.feature_names, res.weights.tolist()))
        rows = test.one_best(vector(test, tuned))
        bleu = test.bleu_of_rows(rows)
        tag = f"{method}.p{point}.s{seed}"
        hyps = self.out / system / "hyps" / tag
        hyps.parent.mkdir(parents=True, exist_ok=True)
        hyps.write_text("".join(test.hypotheses(int(r), int(r) + 1)[0] + "\n" for r in rows))
        row = {"system": system, "method": method, "point": point, "seed": seed, "optimizer": optimizer,
               "options": {k: v for k, v in options.items() if k != "steps"}, "seconds": round(seconds, 2), "nonzero": int(np.count_nonzero(res.weights)),
               "tune": res.score, "test": 100 * bleu.score, "length_ratio": bleu.ratio, "test_hyps": str(hyps),
               "steps": res.info.get("steps", 1) if "steps" in options else 1,
               **(self.extra(res) if self.extra else {})}
        with open(self.runs_file, "a") as fh:
            fh.write(json.dumps(row) + "\n")
        self.done[key] = row
        print(f"{system:6s} {tag:30s} tune {row['tune']:.2f} test {row['test']:.2f} {seconds:6.1f} s", flush=True)
        return row

    def chosen(self, system: str) -> dict[str, tuple[str, dict, bool]]:
        """The methods this call runs: ``--methods`` and the baseline, else all of them."""
        table = self.methods(system, self.a)
        keep = getattr(self.a, "methods", None)
        return table if not keep else {n: v for n, v in table.items() if n in keep or n == self.baseline}

    def seeded(self, system: str, method: str) -> bool:
        """Whether the method's result depends on the seed (``methods``' third entry)."""
        return self.methods(system, self.a)[method][2]

    def replicas(self, system: str, method: str, per_point: bool) -> list[dict]:
        """The method's independent runs: by start point, then seed; with ``per_point``
        one run per start point (a seeded method's run of point p with seed
        seeds[p mod len(seeds)]), the replicas it is compared on against a method whose
        result does not depend on the seed. No run stands for another."""
        if per_point:
            return [self.done.get((system, method, p, self.a.seeds[p % len(self.a.seeds)]))
                    or self.done[(system, method, p, self.a.seeds[0])] for p in range(len(self.points))]
        return [self.done[(system, method, p, seed)] for p in range(len(self.points)) for seed in self.a.seeds]

    def compared(self, system: str, method: str) -> bool:
        """Whether ``method`` is compared with the baseline one run per start point (either
        of the two does not depend on the seed), else on every (point, seed) run."""
        return not (self.seeded(system, method) and self.seeded(system, self.baseline))

    def evaluate(self, system: str, names: list[str]) -> dict:
        """``mtplug evaluate`` of each method against the baseline on the replicas
        :meth:`replicas` pairs them on: {method: {"p", "replicas", ...}}; the reports in
        RESULTS/SYSTEM/evaluate-METHOD.txt and .json."""
        ref = Path(self.a.pools) / ("dense" if system == "dense" else "") / "test.en"
        out = {}
        for n in names:
            if n == self.baseline:
                continue
            per_point = self.compared(system, n)
            files = {m: [r["test_hyps"] for r in self.replicas(system, m, per_point)] for m in (self.baseline, n)}
            js = self.out / system / f"evaluate-{n}.json"
            cmd = [sys.executable, "-m", "mtplug", "evaluate", "-q", "--hyps-baseline", *files[self.baseline],
                   "--hyps-system", n, *files[n], "--ref", str(ref), "--metric", "bleu", "--seed", "0",
                   "--boot-samples", str(self.a.boot_samples), "--ar-shuffles", str(self.a.ar_shuffles),
                   "--json", str(js)]
            with open(js.with_suffix(".txt"), "w") as fh:    # the table; --json writes the rest
                subprocess.run(cmd, check=True, stdout=fh)
            report = json.loads(js.read_text())
            scores = {s["name"]: s["scores"]["bleu"] for s in report["systems"]}
            out[n] = {"p": scores[n]["p"], "replicas": len(files[n]), "per_point": per_point,
                      "baseline_mean": scores["baseline"]["mean"], "mean": scores[n]["mean"],
                      "s_sel": scores[n]["s_sel"]}
        return out

    def summary(self, systems: dict) -> dict:
        """The study as a committed results file holds it (``--results``): what ran, every
        distinct run's numbers, and each comparison with the baseline."""
        provenance = Path(self.a.pools) / "provenance.json"
        commit = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"], check=False,
                                capture_output=True, text=True).stdout.strip()
        keep = ("point", "seed", "tune", "test", "length_ratio", "seconds", "nonzero")

        def method(system: str, n: str, compared: dict) -> dict:
            optimizer, options, seeded = self.methods(system, self.a)[n]
            runs = [{k: (round(r[k], 4) if isinstance(r[k], float) else r[k]) for k in keep if k in r}
                    for r in self.replicas(system, n, not seeded)]
            # strict JSON: an infinite option value (c_start=inf) as the text the CLI takes
            options = {k: ("inf" if isinstance(v, float) and np.isinf(v) else v) for k, v in options.items()}
            return {"optimizer": optimizer, "options": options, "seeded": seeded, "runs": runs,
                    **({"compared": compared[n]} if n in compared else {})}

        return {
            "script": Path(sys.argv[0]).name, "commit": commit, "date": time.strftime("%Y-%m-%d"),
            "tune_nbest": self.a.tune_nbest, "seeds": self.a.seeds, "start_points": len(self.points),
            "pools": json.loads(provenance.read_text()) if provenance.exists() else None,
            "baseline": self.baseline,
            "systems": {system: {"methods": {n: method(system, n, compared) for n in names}}
                        for system, (names, compared) in systems.items()}}

    def main(self) -> None:
        systems = {}
        for system in self.a.systems:
            data = self.data(system)
            table = self.chosen(system)
            for name, (optimizer, options, seeded) in table.items():
                for point in range(len(self.points)):
                    for seed in (self.a.seeds if seeded else self.a.seeds[:1]):
                        self.run(system, data, name, optimizer, options, point, seed)
            systems[system] = (list(table), self.evaluate(system, list(table)))
        study = self.summary(systems)
        (self.out / "table.md").write_text(render(study, self.columns))
        results = Path(self.a.results) if self.a.results else self.out / "summary.json"
        results.parent.mkdir(parents=True, exist_ok=True)
        results.write_text(json.dumps(study, indent=1, sort_keys=True, allow_nan=False) + "\n")
        print((self.out / "table.md").read_text())


def render(study: dict, columns: Sequence[tuple[str, Callable]] = ()) -> str:
    """A study's tables, one per system, from its summary (the results file): each method's
    independent runs (tune and test BLEU, the spread of its start points' means, p against
    the baseline on the paired runs, seconds) and ``columns`` (header, runs -> text)."""
    base = study["baseline"]
    headers = ["method", "runs", "tune BLEU", "test BLEU (mean ± sd)", "sd of the start points' means",
               f"p vs {base}", "test length ratio", "optimizer s"] + [h for h, _ in columns]
    out = []
    for system, entry in sorted(study["systems"].items()):
        lines = [f"**{system}**", "", "| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
        for name, m in sorted(entry["methods"].items()):    # as the results file (sorted keys)
            runs = m["runs"]
            test = np.array([r["test"] for r in runs])
            points = sorted({r["point"] for r in runs})
            per_point = [np.mean([r["test"] for r in runs if r["point"] == p]) for p in points]
            c = m.get("compared")
            p_text = "–" if c is None else f"{c['p']:.2f} ({c['replicas']} paired)"
            cells = [name, str(len(runs)), f"{np.mean([r['tune'] for r in runs]):.2f}",
                     f"{test.mean():.2f} ± {test.std(ddof=1) if len(runs) > 1 else 0:.2f}",
                     f"{np.std(per_point, ddof=1) if len(per_point) > 1 else 0:.2f}", p_text,
                     f"{np.mean([r['length_ratio'] for r in runs]):.3f}",
                     f"{np.mean([r['seconds'] for r in runs]):.1f}"] + [fn(runs) for _, fn in columns]
            lines.append("| " + " | ".join(cells) + " |")
        out.append("\n".join(lines) + "\n")
    return "\n".join(out)


def table(name: str, columns: Sequence[tuple[str, Callable]] = ()) -> str:
    """results/NAME.json as a page shows it (benchmarks/generated_tables.py, through a study
    script's ``table``), headed by its commit, date and settings."""
    path = HERE / "results" / f"{name}.json"
    if not path.exists():
        return not_run_yet(name)
    study = json.loads(path.read_text())
    head = (f"*{name}: commit {study['commit']}, {study['date']}; tune pool's first {study['tune_nbest']} "
            f"hypotheses; {study['start_points']} start points × seeds {', '.join(map(str, study['seeds']))}.*\n\n")
    return head + render(study, columns)


def add_arguments(ap: argparse.ArgumentParser) -> None:
    """The options every pool study takes."""
    ap.add_argument("--pools", required=True, help="make_galley_pools.py's folder ({tune,dev,test}.kbest, .en, dense/)")
    ap.add_argument("--start", required=True, help="the start weights (cdec weights file): point 0 and the mean "
                                                   "of the random points")
    ap.add_argument("--out", required=True)
    ap.add_argument("--systems", nargs="+", choices=SYSTEMS, default=list(SYSTEMS))
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--methods", nargs="+", metavar="NAME",
                    help="run and compare only these of the study's methods, besides its baseline (default "
                         "all); the results file holds only what ran")
    ap.add_argument("--start-points", type=int, default=3, help="random start points besides START (default 3)")
    ap.add_argument("--tune-nbest", type=int, default=100)
    ap.add_argument("--restarts", type=int, default=20, help="MERT's random restarts (dense system; default 20)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--boot-samples", type=int, default=10000, help="mtplug evaluate's (default 10000)")
    ap.add_argument("--ar-shuffles", type=int, default=10000, help="mtplug evaluate's (default 10000)")
    ap.add_argument("--results", help="where the study's summary goes (default RESULTS/summary.json): a file "
                                      "under benchmarks/reproductions/results/ for the pages' tables")


def main(doc: str, methods: Callable, baseline: str, **kwargs) -> None:
    """The command line of a study script (``doc``: its docstring, the --help text):
    :func:`add_arguments`, then :class:`PoolStudy` with ``methods``, ``baseline`` and
    ``kwargs`` (extra, columns)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(ap)
    PoolStudy(ap.parse_args(), methods, baseline, **kwargs).main()
