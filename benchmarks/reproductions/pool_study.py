"""Optimizers compared on fixed pools decoded once, the protocol of the reproductions of
Gimpel & Smith (2012) and Eidelman (2012) (docs/reproductions/): the cdec de-en pools of
make_galley_pools.py, a dense system (the 12 dense features; ``POOLS/dense/``, written by
defaults_evidence.py's ``dense_pools`` when missing) and a sparse one (every feature);
every method tunes on the tune pool's first ``--tune-nbest`` hypotheses per sentence from
every start point with every seed and reranks the test pool.

Start points, Gimpel & Smith's initializer protocol: point 0 is START; points
1..``--start-points`` draw each weight w from N(w, (w/2)^2) (``mtplug compare``'s
``start_distribution: normal``, start seed 0; a weight of 0 stays 0), the same points for
every method. No run stands for another, so a method's runs depend on what changes its
result (:func:`start_share`, the methods' seeded flag): a seeded method runs from every
point with every seed; a method the seed does not change runs once per point; a method
that forgets its start (APRO, PRO without the pull toward the start, once its Ψ
interpolation has left less than 2^-20 of the start) would give one run from every
point, so a seeded one draws seed s + 1000·p from point p (every run independent) and
a deterministic one runs once, from START. Each method is compared with the baseline by
``mtplug evaluate`` on paired independent runs, at the coarser of the two structures:
every (point, seed) run when both vary with the seed on every point, else one run per
start point (a seeded method's run of point p with seed seeds[p mod len(seeds)]), else
the one run of each (point 0, the first seed).

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


#: a seeded start-free method's run from start point p with seed s draws s + SEED_STRIDE·p
SEED_STRIDE = 1000
#: the start's share of a run's last weights below which the run is taken to have forgotten it
#: (its weights agree with any other start's to about 6 digits)
START_FREE_SHARE = 2.0 ** -20
#: how a method's independent runs are laid out, finest first: every (point, seed), one per
#: start point, one in all
LEVELS = ("seed", "point", "none")


def start_share(optimizer: str, options: dict) -> float:
    """The share of the start point in a run's last weights: 1 for a method that keeps its
    start (a pull toward it, a search from it); for APRO and PRO without the pull toward
    the start (c_start = ∞), whose objective does not involve the start, the share the
    interpolation w_t = Ψ·w_new + (1 − Ψ)·w_{t−1} leaves after ``steps`` iterations:
    (1 − Ψ)^steps (0 with Ψ = 1)."""
    no_pull = optimizer == "apro" or (optimizer == "pro" and math.isinf(options.get("c_start", 0.0)))
    if not no_pull:
        return 1.0
    return (1.0 - options.get("psi", 1.0)) ** int(options.get("steps", 1))


def first_step(optimizer: str, options: dict, steps: int) -> int:
    """The first of iterations 1..steps whose start can change the last one's weights.
    With Ψ = 1 and no pull toward the start an iteration's weights do not depend on its
    start, so only the last one need run."""
    return steps if start_share(optimizer, {**options, "steps": 1}) == 0.0 else 1


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

    def level(self, system: str, method: str) -> str:
        """How the method's independent runs are laid out (``LEVELS``): ``seed`` (every
        start point with every seed), ``point`` (one run per start point: the seed changes
        nothing) or ``none`` (one run: neither the seed nor the start changes it)."""
        optimizer, options, seeded = self.methods(system, self.a)[method]
        if seeded:
            return "seed"
        return "none" if start_share(optimizer, options) < START_FREE_SHARE else "point"

    def key(self, system: str, method: str, point: int, seed: int) -> tuple:
        """The run that stands at (point, seed) for ``method``: (system, method, point, seed
        it runs with). The seed does not change an unseeded method (its run of the first
        seed); a method that forgets its start runs from START once if unseeded, else
        with seed s + SEED_STRIDE·p from point p."""
        optimizer, options, seeded = self.methods(system, self.a)[method]
        free = start_share(optimizer, options) < START_FREE_SHARE
        if not seeded:
            return (system, method, 0 if free else point, self.a.seeds[0])
        return (system, method, point, seed + SEED_STRIDE * point if free else seed)

    def run(self, system: str, data: dict, method: str, optimizer: str, options: dict, point: int,
            seed: int) -> dict:
        key = self.key(system, method, point, seed)
        if key in self.done:
            return self.done[key]
        point, seed = key[2], key[3]
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

    def replicas(self, system: str, method: str, level: str) -> list[dict]:
        """The method's independent runs laid out at ``level`` (``LEVELS``; no finer than
        :meth:`level`): every (point, seed), by start point, then seed; one per start
        point (a seeded method's run of point p with seed seeds[p mod len(seeds)]); or
        the one of point 0 and the first seed. No run stands for another."""
        seeds = self.a.seeds
        cells = {"seed": [(p, s) for p in range(len(self.points)) for s in seeds],
                 "point": [(p, seeds[p % len(seeds)]) for p in range(len(self.points))],
                 "none": [(0, seeds[0])]}[level]
        return [self.done[self.key(system, method, p, s)] for p, s in cells]

    def compared(self, system: str, method: str) -> str:
        """The level ``method`` and the baseline are paired at: the coarser of their two."""
        return max(self.level(system, method), self.level(system, self.baseline), key=LEVELS.index)

    def evaluate(self, system: str, names: list[str]) -> dict:
        """``mtplug evaluate`` of each method against the baseline on the replicas
        :meth:`replicas` pairs them on: {method: {"p", "replicas", ...}}; the reports in
        RESULTS/SYSTEM/evaluate-METHOD.txt and .json."""
        ref = Path(self.a.pools) / ("dense" if system == "dense" else "") / "test.en"
        out = {}
        for n in names:
            if n == self.baseline:
                continue
            level = self.compared(system, n)
            files = {m: [r["test_hyps"] for r in self.replicas(system, m, level)] for m in (self.baseline, n)}
            js = self.out / system / f"evaluate-{n}.json"
            cmd = [sys.executable, "-m", "mtplug", "evaluate", "-q", "--hyps-baseline", *files[self.baseline],
                   "--hyps-system", n, *files[n], "--ref", str(ref), "--metric", "bleu", "--seed", "0",
                   "--boot-samples", str(self.a.boot_samples), "--ar-shuffles", str(self.a.ar_shuffles),
                   "--json", str(js)]
            with open(js.with_suffix(".txt"), "w") as fh:    # the table; --json writes the rest
                subprocess.run(cmd, check=True, stdout=fh)
            report = json.loads(js.read_text())
            scores = {s["name"]: s["scores"]["bleu"] for s in report["systems"]}
            out[n] = {"p": scores[n]["p"], "replicas": len(files[n]), "per_point": level != "seed", "level": level,
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
                    for r in self.replicas(system, n, self.level(system, n))]
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
            for name, (optimizer, options, _) in table.items():
                for point in range(len(self.points)):
                    for seed in self.a.seeds:
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
