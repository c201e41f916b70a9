#!/usr/bin/env python3
"""Galley et al. (2013), Tables 2 and 3 and Figure 4, in the paper's reranking protocol.

    python benchmarks/reproductions/galley_rerank.py --pools POOLS --w0 W0 --out RESULTS \\
        [--seeds 1 2 3 4 5] [--tune-nbest 100] [--sparse-features K] [--random-walks 2] \\
        [--lambdas 1e-4 1e-3 1e-2] [--pro-c 0.1 1 10] [--threads 2] \\
        [--results benchmarks/reproductions/results/NAME.json] [--baseline pro-w0] \\
        [--more-baselines mert-dense-uniform mert-uniform mert-w0 l2v1-w0 w0]

The pools are those of make_galley_pools.py: tune, dev and test sets decoded once by cdec
with its sparse feature functions at the dense-tuned weights w0 (``POOLS/{tune,dev,test}
.kbest`` and ``.en``). Every method tunes on the tune pool (its first ``--tune-nbest``
hypotheses per sentence), then reranks the whole dev and test pools with its weights.
``--sparse-features K`` keeps the 12 dense features and the K sparse features that fire in
most hypotheses of that tune pool (the paper's Table 2 has 224 and 232 features: K = 218
gives 230), in every pool; by default every feature is kept (Table 3's condition).

The methods, named as benchmarks/reproductions/claims/galley-2013.yaml names them. The
paper's MERT rows (Section 6) start from one point, uniform (every dense weight 1, sparse
weights 0) or w0 (sparse weights 0), with no random restarts but ``--random-walks`` random
walks from the best point (Moore & Quirk 2008, mtplug's ``random_walks``); a seed seeds the
walks (and PRO's sampling), so every method but ``w0`` is seeded:

* ``w0``: the dense-tuned weights, not retuned;
* ``mert-dense-uniform``: coordinate-ascent MERT over the 12 dense features from uniform
  (the paper's 14- and 15-feature rows);
* ``mert-uniform``, ``mert-w0``: coordinate-ascent MERT over every feature (the paper's
  unregularised rows: "Koehn-style coordinate ascent");
* ``mert-expbleu-w0``: MERT with the expected-BLEU direction finder over every feature,
  unregularised (not a row of the paper: the regulariser's part apart from the finder's);
* ``pro-w0``: PRO as the paper ran it (Hopkins & May's sampling, Ψ = 0.1, logistic
  regression, no pull toward the start, no length filter: ``psi=0.1, c_start=inf,
  length_z=0``), its C (the ℓ2 penalty) chosen on dev from ``--pro-c``;
* ``l2v1-w0``, ``l2v2-w0``, ``l2v3-w0``, ``l0-w0``: MERT with the expected-BLEU
  direction finder and Galley's regularisers as mtplug names them (``l2``: ‖w − w0‖²;
  ``l2-fixed``: ‖w‖² with the weight of largest |w0| fixed; ``l2-l1norm``: ‖w/‖w‖₁‖²;
  ``l0``), λ chosen on dev from ``--lambdas``;
* ``l2v1-coord-w0``: ``l2v1-w0`` with coordinate ascent instead of the gradient finder
  (Figure 4), λ chosen on dev from ``--lambdas``.

The dev search: each searched method runs every grid value with the first seed, the
value of the best dev BLEU (ties: the first) is kept, and the method's replicas are its
runs at that value with every seed (the first seed's run is the search's). The paper
also tuned PRO's sentence-BLEU smoothing α and a reference-length scale for PRO and
regularised MERT on dev; mtplug has neither knob, so neither method gets them.

Each method is compared with the baseline by ``mtplug evaluate`` on paired independent
runs: seed by seed when both are seeded, else one run each (``w0`` has one run; the other
side's run with the first seed). ``RESULTS/runs.jsonl`` has every run (tune, dev, test
BLEU on 0-100, test length ratio, optimizer seconds, non-zero weights; a finished run is
not run again), ``RESULTS/weights/`` and ``RESULTS/hyps/`` each run's weights and test
1-best, ``RESULTS/evaluate-vs-BASELINE/`` the reports, ``RESULTS/table.md`` the table.
``--results FILE`` (default ``RESULTS/summary.json``) is the committed summary the pages'
tables are made from (benchmarks/reproductions/claims.py's schema: ``systems -> sparse ->
methods -> NAME -> runs`` and ``compared`` ``{p, replicas}`` against the file's
``baseline``), with the settings, the dev search, the pools' provenance and the commit;
each of ``--more-baselines`` gets its own file beside it, ``STEM-vs-BASELINE.json``, the
same runs compared with that baseline. ``table(NAME)`` renders results/NAME.json (and
``NAME:sweep`` its dev search) for benchmarks/generated_tables.py.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

RESULTS = HERE / "results"
SYSTEM = "sparse"
#: the first cdec system's 12 dense features (docs/real-systems.md); pools of another
#: system name theirs in their provenance (:func:`dense_names`)
DENSE = [f"PhraseModel_{i}" for i in range(7)] + ["PassThrough", "Glue", "WordPenalty", "LanguageModel",
                                                  "LanguageModel_OOV"]
#: PRO as Galley et al. (and Hopkins & May) ran it (docs/reproductions/method.md)
PRO_PAPER = dict(psi=0.1, c_start=math.inf, length_z=0.0)
#: the regularised methods: name -> (direction finder, mtplug's regulariser)
REG_METHODS = {"l2v1-w0": ("expbleu", "l2"), "l2v2-w0": ("expbleu", "l2-fixed"), "l2v3-w0": ("expbleu", "l2-l1norm"),
               "l0-w0": ("expbleu", "l0"), "l2v1-coord-w0": ("coordinate", "l2")}
BASELINE = "pro-w0"
MORE_BASELINES = ("mert-dense-uniform", "mert-uniform", "mert-w0", "l2v1-w0", "w0")


def read_weights(path: Path) -> dict[str, float]:
    out = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, value = line.split()[:2]
            out[name] = float(value)
    return out


def dense_names(pools: Path) -> list[str]:
    """The dense features of the system whose pools are in ``pools``: the names
    make_galley_pools.py took from the system's start weights (``dense_feature_names`` in
    POOLS/provenance.json), else the first cdec system's (:data:`DENSE`)."""
    provenance = pools / "provenance.json"
    if provenance.exists():
        names = json.loads(provenance.read_text()).get("dense_feature_names")
        if names:
            return list(names)
    return list(DENSE)


def _cut(kbest: Path, out: Path, nbest: int) -> None:
    """The first ``nbest`` hypotheses of each sentence of ``kbest``."""
    with open(kbest) as f, open(out, "w") as o:
        last, n = None, 0
        for line in f:
            sid = line.split(" ||| ", 1)[0]
            n = n + 1 if sid == last else 1
            last = sid
            if n <= nbest:
                o.write(line)


def frequent_sparse(kbest: Path, k: int, dense_features: list[str]) -> list[str]:
    """The ``k`` sparse features (not in ``dense_features``) that fire in most hypotheses
    of ``kbest`` (ties: by name)."""
    counts: Counter = Counter()
    dense = set(dense_features)
    with open(kbest) as f:
        for line in f:
            names = {t.split("=", 1)[0] for t in line.split(" ||| ")[2].split()}
            counts.update(names - dense)
    return [name for name, _ in sorted(counts.items(), key=lambda x: (-x[1], x[0]))[:k]]


def _keep_features(kbest: Path, out: Path, keep: set[str]) -> None:
    with open(kbest) as f, open(out, "w") as o:
        for line in f:
            parts = line.rstrip("\n").split(" ||| ")
            parts[2] = " ".join(t for t in parts[2].split() if t.split("=", 1)[0] in keep)
            o.write(" ||| ".join(parts) + "\n")


def stores(pools: Path, cache: Path, tune_nbest: int, sparse_features: int | None = None):
    """The tune pool cut to its first tune_nbest hypotheses per sentence, and dev and test
    whole, as stores (cached under ``cache``); with ``sparse_features`` K, every pool keeps
    the dense features and the K sparse features that fire in most hypotheses of the cut
    tune pool (listed in ``cache/features.txt``)."""
    import mtplug

    cache.mkdir(parents=True, exist_ok=True)
    kbests = {name: pools / f"{name}.kbest" for name in ("tune", "dev", "test")}
    if not (cache / f"tune{tune_nbest}.store").exists():
        _cut(kbests["tune"], cache / f"tune{tune_nbest}.kbest", tune_nbest)
    kbests["tune"] = cache / f"tune{tune_nbest}.kbest"
    if sparse_features is not None:
        listed = cache / "features.txt"
        if not listed.exists():
            dense = dense_names(pools)
            listed.write_text("".join(f"{n}\n" for n in dense + frequent_sparse(kbests["tune"], sparse_features, dense)))
        keep = set(listed.read_text().split())
        for name, kbest in list(kbests.items()):
            cut = cache / f"{name}{tune_nbest if name == 'tune' else ''}.f{sparse_features}.kbest"
            if not cut.exists():
                _keep_features(kbest, cut, keep)
            kbests[name] = cut
    out = {}
    for name, kbest in kbests.items():
        store = cache / f"{name}{tune_nbest if name == 'tune' else ''}.store"
        if not store.exists():
            mtplug.load_nbest([str(kbest)], [str(pools / f"{name}.en")]).save(str(store))
        out[name] = mtplug.load_store(str(store))
    return out


def vector(corpus, weights: dict[str, float]) -> np.ndarray:
    index = {n: i for i, n in enumerate(corpus.feature_names)}
    v = np.zeros(corpus.n_features)
    for name, value in weights.items():
        if name in index:
            v[index[name]] = value
    return v


def methods(random_walks: int, dense_features: list[str] = DENSE) -> dict[str, tuple[str, str, dict, str | None]]:
    """name -> (optimizer, start: "w0" or "uniform", options, the option searched on dev
    or None). Every MERT starts from its one start point with ``random_walks`` walks;
    ``mert-dense-uniform`` moves ``dense_features`` only."""
    mert = dict(restarts=0, random_walks=random_walks)
    table: dict[str, tuple[str, str, dict, str | None]] = {
        "w0": ("none", "w0", {}, None),
        "mert-dense-uniform": ("mert", "uniform", dict(mert, directions="coordinate",
                                                       activate_features=",".join(dense_features)), None),
        "mert-uniform": ("mert", "uniform", dict(mert, directions="coordinate"), None),
        "mert-w0": ("mert", "w0", dict(mert, directions="coordinate"), None),
        "mert-expbleu-w0": ("mert", "w0", dict(mert, directions="expbleu"), None),
        "pro-w0": ("pro", "w0", dict(PRO_PAPER), "c"),
    }
    for name, (directions, reg) in REG_METHODS.items():
        table[name] = ("mert", "w0", dict(mert, directions=directions, reg=reg), "reg_strength")
    return table


def seeded(optimizer: str, options: dict) -> bool:
    """Whether a run's result depends on its seed: PRO's sampling, MERT's random walks."""
    return optimizer == "pro" or (optimizer == "mert" and options.get("random_walks", 0) > 0)


class Study:
    def __init__(self, args):
        self.a = args
        self.out = Path(args.out)
        self.out.mkdir(parents=True, exist_ok=True)
        k = args.sparse_features
        self.data = stores(Path(args.pools), self.out / ("stores" if k is None else f"stores-f{k}"), args.tune_nbest,
                           k)
        dense = dense_names(Path(args.pools))
        self.starts = {"w0": read_weights(Path(args.w0)), "uniform": dict.fromkeys(dense, 1.0)}
        self.table = methods(args.random_walks, dense)
        self.grids = {"c": args.pro_c, "reg_strength": args.lambdas}
        self.runs_file = self.out / "runs.jsonl"
        self.done: dict[tuple, dict] = {}
        if self.runs_file.exists():
            for line in self.runs_file.read_text().splitlines():
                r = json.loads(line)
                self.done[(r["method"], r["seed"], r["param"])] = r
        self.chosen: dict[str, float] = {}

    def run(self, method: str, seed: int, param: float | None = None) -> dict:
        """One run of ``method`` (its searched option at ``param``), tuned with ``seed``."""
        import mtplug

        key = (method, seed, param)
        if key in self.done:
            return self.done[key]
        optimizer, start, options, searched = self.table[method]
        if searched is not None:
            options = {**options, searched: param}
        tune = self.data["tune"]
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = mtplug.optimize(optimizer, tune, vector(tune, self.starts[start]), seed, threads=self.a.threads,
                                  **options)
        seconds = time.perf_counter() - t
        tuned = dict(zip(res.feature_names, res.weights.tolist()))
        tag = f"{method}.seed{seed}" + (f".{searched}{param:g}" if searched else "")
        (self.out / "weights").mkdir(exist_ok=True)
        with open(self.out / "weights" / tag, "w") as fh:
            fh.write(f"# {method} seed {seed} {json.dumps(options)}\n")
            fh.writelines(f"{n} {v!r}\n" for n, v in tuned.items() if v != 0.0)
        row = {"method": method, "seed": seed, "param": param, "optimizer": optimizer, "options": options,
               "seconds": round(seconds, 2), "nonzero": int(np.count_nonzero(res.weights)), "tune": res.score}
        for name in ("dev", "test"):
            corpus = self.data[name]
            rows = corpus.one_best(vector(corpus, tuned))
            bleu = corpus.bleu_of_rows(rows)
            row[name] = 100 * bleu.score
            if name == "test":
                row["length_ratio"] = bleu.ratio
                path = self.out / "hyps" / tag
                path.parent.mkdir(exist_ok=True)
                path.write_text("".join(corpus.hypotheses(int(r), int(r) + 1)[0] + "\n" for r in rows))
                row["test_hyps"] = str(path)
        with open(self.runs_file, "a") as fh:
            fh.write(json.dumps(row) + "\n")
        self.done[key] = row
        print(f"{tag:45s} tune {row['tune']:.2f} dev {row['dev']:.2f} test {row['test']:.2f} "
              f"{seconds:7.1f} s  nonzero {row['nonzero']}", flush=True)
        return row

    def search(self) -> dict[str, dict]:
        """The dev search of every method with a searched option: {method: {option, grid,
        dev (BLEU per value, first seed), chosen}}; sets ``self.chosen``."""
        found = {}
        for method, (_, _, _, searched) in self.table.items():
            if searched is None:
                continue
            grid = self.grids[searched]
            dev = [self.run(method, self.a.seeds[0], float(v))["dev"] for v in grid]
            chosen = float(grid[int(np.argmax(dev))])
            self.chosen[method] = chosen
            found[method] = {"option": searched, "grid": [float(v) for v in grid],
                             "dev": [round(d, 4) for d in dev], "chosen": chosen}
        return found

    def seeded(self, method: str) -> bool:
        optimizer, _, options, _ = self.table[method]
        return seeded(optimizer, options)

    def replicas(self, method: str) -> list[dict]:
        """The method's independent runs: one per seed, or its one run when it does not
        depend on the seed (no run stands for another)."""
        seeds = self.a.seeds if self.seeded(method) else self.a.seeds[:1]
        return [self.run(method, s, self.chosen.get(method)) for s in seeds]

    def paired(self, method: str, baseline: str) -> tuple[list[dict], list[dict]]:
        """The runs ``method`` and ``baseline`` are compared on: seed by seed when both
        depend on the seed, else one run each (the seeded side's first seed)."""
        if self.seeded(method) and self.seeded(baseline):
            return self.replicas(method), self.replicas(baseline)
        return self.replicas(method)[:1], self.replicas(baseline)[:1]

    def evaluate(self, baseline: str) -> dict[str, dict]:
        """``mtplug evaluate`` of every method against ``baseline`` on their paired runs:
        {method: {p, replicas, mean, baseline_mean, s_sel}}; the reports in
        RESULTS/evaluate-vs-BASELINE/METHOD.txt and .json."""
        folder = self.out / f"evaluate-vs-{baseline}"
        folder.mkdir(exist_ok=True)
        out = {}
        for method in self.table:
            if method == baseline:
                continue
            mine, theirs = self.paired(method, baseline)
            js = folder / f"{method}.json"
            cmd = [sys.executable, "-m", "mtplug", "evaluate", "-q",
                   "--hyps-baseline", *[r["test_hyps"] for r in theirs],
                   "--hyps-system", method, *[r["test_hyps"] for r in mine],
                   "--ref", str(Path(self.a.pools) / "test.en"), "--metric", "bleu", "--seed", "0",
                   "--boot-samples", str(self.a.boot_samples), "--ar-shuffles", str(self.a.ar_shuffles),
                   "--json", str(js)]
            with open(js.with_suffix(".txt"), "w") as fh:
                subprocess.run(cmd, check=True, stdout=fh)
            scores = {s["name"]: s["scores"]["bleu"] for s in json.loads(js.read_text())["systems"]}
            out[method] = {"p": scores[method]["p"], "replicas": len(mine), "mean": scores[method]["mean"],
                           "baseline_mean": scores["baseline"]["mean"], "s_sel": scores[method]["s_sel"]}
        return out

    def summary(self, baseline: str, compared: dict, search: dict) -> dict:
        """The study as a committed results file holds it (``--results``)."""
        provenance = Path(self.a.pools) / "provenance.json"
        commit = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"], check=False,
                                capture_output=True, text=True).stdout.strip()
        keep = ("seed", "param", "tune", "dev", "test", "length_ratio", "seconds", "nonzero")

        def method(name: str) -> dict:
            optimizer, start, options, searched = self.table[name]
            if searched is not None:
                options = {**options, searched: self.chosen[name]}
            runs = [{k: (round(r[k], 4) if isinstance(r[k], float) else r[k]) for k in keep}
                    for r in self.replicas(name)]
            return {"optimizer": optimizer, "start": start, "options": options, "seeded": self.seeded(name),
                    "runs": runs, **({"compared": compared[name]} if name in compared else {})}

        return {"script": Path(__file__).name, "commit": commit, "date": time.strftime("%Y-%m-%d"),
                "tune_nbest": self.a.tune_nbest, "sparse_features": self.a.sparse_features,
                "features": self.data["tune"].n_features, "tune_hypotheses": self.data["tune"].n_hypotheses,
                "seeds": self.a.seeds, "random_walks": self.a.random_walks,
                "ar_shuffles": self.a.ar_shuffles, "boot_samples": self.a.boot_samples,
                "pools": json.loads(provenance.read_text()) if provenance.exists() else None,
                "search": search, "baseline": baseline,
                "systems": {SYSTEM: {"methods": {n: method(n) for n in self.table}}}}

    def main(self) -> None:
        search = self.search()
        for method in self.table:
            self.replicas(method)
        results = Path(self.a.results) if self.a.results else self.out / "summary.json"
        results.parent.mkdir(parents=True, exist_ok=True)
        for i, baseline in enumerate([self.a.baseline, *self.a.more_baselines]):
            if baseline not in self.table:
                raise SystemExit(f"--baseline/--more-baselines: no method {baseline!r} (methods: "
                                 f"{', '.join(self.table)})")
            study = self.summary(baseline, self.evaluate(baseline), search)
            path = results if i == 0 else results.with_name(f"{results.stem}-vs-{baseline}.json")
            path.write_text(json.dumps(study, indent=1, sort_keys=True) + "\n")
            if i == 0:
                (self.out / "table.md").write_text(render(study) + "\n" + render_search(study))
        print((self.out / "table.md").read_text())


def mean_sd(values: list[float], digits: int = 2) -> str:
    """"mean ± sd" of independent runs (sd 0 for one run), as the pages' tables print them."""
    sd = float(np.std(values, ddof=1)) if len(values) > 1 else 0.0
    return f"{np.mean(values):.{digits}f} ± {sd:.{digits}f}"


def render(study: dict, also: dict[str, dict] | None = None) -> str:
    """The study's table: every method's runs and its comparison with the baseline, and
    with each baseline of ``also`` (baseline -> that file's study of the same runs)."""
    also = also or {}
    base = study["baseline"]
    head = (f"| method | runs | λ or C | tune BLEU | dev BLEU | test BLEU (mean ± sd) | test length ratio | "
            f"p vs {base} (paired runs) | " + "".join(f"p vs {b} | " for b in also) +
            "optimizer s | non-zero weights |")
    lines = [head, "|" + "---|" * (10 + len(also))]

    def p_of(s: dict, name: str) -> str:
        c = s["systems"][SYSTEM]["methods"][name].get("compared")
        return "–" if c is None else f"{c['p']:.2f} ({c['replicas']})"

    for name, m in study["systems"][SYSTEM]["methods"].items():
        runs = m["runs"]
        col = {k: [r[k] for r in runs] for k in ("tune", "dev", "test", "length_ratio", "seconds", "nonzero")}
        searched = study["search"].get(name)
        value = f"{searched['chosen']:g}" if searched else ""
        lines.append(f"| {name} | {len(runs)} | {value} | {np.mean(col['tune']):.2f} | {np.mean(col['dev']):.2f} | "
                     f"{mean_sd(col['test'])} | {np.mean(col['length_ratio']):.3f} | {p_of(study, name)} | "
                     + "".join(f"{p_of(s, name)} | " for s in also.values()) +
                     f"{np.mean(col['seconds']):.1f} | {np.mean(col['nonzero']):.0f} |")
    return "\n".join(lines) + "\n"


def render_search(study: dict) -> str:
    """The dev search: each searched method's dev BLEU at every grid value (first seed)."""
    lines = ["| method | option | value: dev BLEU (first seed) | chosen |", "|---|---|---|---|"]
    for name, s in study["search"].items():
        cells = ", ".join(f"{v:g}: {d:.2f}" for v, d in zip(s["grid"], s["dev"]))
        lines.append(f"| {name} | {s['option']} | {cells} | {s['chosen']:g} |")
    return "\n".join(lines) + "\n"


def not_run_yet(name: str) -> str:
    """What a page's generated table says while results/NAME.json does not exist."""
    return (f"*Not run yet: no `benchmarks/reproductions/results/{name}.json` "
            "(see [Running it again](#running-it-again)).*\n")


def table(name: str) -> str:
    """results/NAME.json as the page shows it (benchmarks/generated_tables.py), with a
    column of p-values against w0 where NAME-vs-w0.json exists; ``NAME:sweep`` its dev
    search."""
    stem, _, part = name.partition(":")
    path = RESULTS / f"{stem}.json"
    if not path.exists():
        return not_run_yet(stem)
    study = json.loads(path.read_text())
    against_w0 = RESULTS / f"{stem}-vs-w0.json"
    also = {"w0": json.loads(against_w0.read_text())} if part != "sweep" and against_w0.exists() else {}
    head = (f"*{stem}: commit {study['commit']}, {study['date']}; {study['features']} features, "
            f"{study['tune_hypotheses']} tune hypotheses; seeds {', '.join(map(str, study['seeds']))}; "
            f"{study['random_walks']} random walks.*\n\n")
    return head + (render_search(study) if part == "sweep" else render(study, also))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pools", required=True, help="folder with {tune,dev,test}.kbest and .en")
    ap.add_argument("--w0", required=True, help="the dense-tuned weights (cdec weights file)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    ap.add_argument("--tune-nbest", type=int, default=100)
    ap.add_argument("--sparse-features", type=int, metavar="K",
                    help="keep the dense features and the K most frequent sparse ones (default: every feature)")
    ap.add_argument("--random-walks", type=int, default=2, help="MERT's random walks from its best point (default 2)")
    ap.add_argument("--lambdas", type=float, nargs="+", default=[1e-4, 1e-3, 1e-2],
                    help="the regularised methods' λ grid, searched on dev (default 1e-4 1e-3 1e-2)")
    ap.add_argument("--pro-c", type=float, nargs="+", default=[0.1, 1.0, 10.0],
                    help="PRO's C grid, searched on dev (default 0.1 1 10)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--boot-samples", type=int, default=10000, help="mtplug evaluate's (default 10000)")
    ap.add_argument("--ar-shuffles", type=int, default=10000, help="mtplug evaluate's (default 10000)")
    ap.add_argument("--results", help="the summary (default RESULTS/summary.json): a file under "
                                      "benchmarks/reproductions/results/ for the pages' tables")
    ap.add_argument("--baseline", default=BASELINE, help=f"the summary's baseline (default {BASELINE})")
    ap.add_argument("--more-baselines", nargs="*", default=list(MORE_BASELINES),
                    help="a summary STEM-vs-NAME.json beside --results for each (default: "
                         f"{' '.join(MORE_BASELINES)})")
    Study(ap.parse_args()).main()


if __name__ == "__main__":
    main()
