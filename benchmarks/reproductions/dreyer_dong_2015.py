#!/usr/bin/env python3
"""Dreyer & Dong (2015), APRO: all-pairs ranking against PRO's sampled pairs on fixed
pools (docs/reproductions/dreyer-dong-2015.md; its claims: claims/dreyer-dong-2015.yaml).

    python benchmarks/reproductions/dreyer_dong_2015.py --pools POOLS --start START --out RESULTS \\
        [--study table2|figure1] [--baseline NAME] [--results results/NAME.json] \\
        [--tune-nbest 500] [--iterations 10 30] [--seeds 1 2 3] [--start-points 3] [--threads 2]

The pools, systems, start points and outputs are pool_study.py's: make_galley_pools.py's
cdec de-en pools, a ``dense`` system (12 features) and a ``sparse`` one (every feature);
START (cdec's default weights: the paper starts every run from one untuned point) and
Gimpel & Smith's N(w, (w/2)^2) points. ``--tune-nbest`` is the paper's k (500; 1500 for
its Ara-Eng system): every method tunes on the tune pool's first k hypotheses of each
sentence and reranks the test pool.

Both methods run with the paper's settings (Section 5.1); the paper searched no
hyper-parameter on dev, so none is searched here:

* PRO as Hopkins & May ran it: Γ = 5000 candidate pairs, Ξ = 50 kept, β = 0.05, the
  logistic classifier with C = 1 (MegaM's λ = 1), no pull toward the start and no length
  filter, and the interpolation Ψ = 0.1 with the previous weights. The paper's PRO runs
  Ψ = 0.1 in the decoder loop, iteration after iteration; on a fixed pool one such step
  keeps 90% of its start, so PRO runs ``steps`` iterations on the pool, each from the last
  one's weights with the seed ``mtplug tune`` gives that iteration (pool_study.iterate):
  ``pro-10`` is "after 10 iterations", ``pro-30`` "at convergence (≤ 30 iterations)" of
  Table 2, without the decoder's new hypotheses (``--iterations``: the two counts,
  default the paper's 10 and 30; the names carry them);
* APRO with C = 0.01 and Ψ = 1 (``apro``). Its objective does not involve the start, so
  on a fixed pool more iterations give the same weights: it runs once. ``apro-psi0.1-10``
  is APRO with PRO's Ψ = 0.1 for 10 iterations, the paper's reason for APRO's fast
  convergence (Section 5.2) tested on the pool.

``--study table2`` (Table 2): ``pro-10``, ``pro-30``, ``apro``, ``apro-psi0.1-10``.
``--study figure1`` (Figure 1): PRO at 30 iterations for each of the paper's 8 sampling
settings (Γ ∈ {5000, 8000}, Ξ ∈ {50, 100}, β ∈ {0.03, 0.05}) and Ψ ∈ {0.1, 0.5, 1}
(``pro-30-psiP-gG-xiX-bB``; Hopkins & May's setting with Ψ = 0.1 is ``pro-30``), and
APRO with each Ψ (``apro``, ``apro-psi0.1-30``, ``apro-psi0.5-30``). Both studies may
share one ``--out``: a finished run is not run again (``pro-30`` and ``apro`` are the same
runs in both), and a second call with another ``--baseline`` only evaluates.

PRO depends on the seed; APRO does not, so it runs once per start point and is compared
with PRO on one run per start point (pool_study.py). Each run's row keeps its test length
ratio (Table 2's LR) and its optimizer seconds (all of its iterations: Section 5.2's
runtime is one iteration's, so :func:`table` divides PRO's by its iterations).

``table(NAME)`` makes the page's tables from the committed results files
(benchmarks/generated_tables.py): ``lengths`` (Table 2's LR columns), ``runtime``
(Section 5.2) and ``figure1``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pool_study
from galley_rerank import mean_sd

RESULTS = Path(__file__).resolve().parent / "results"
#: PRO as the paper ran it (Section 5.1; Hopkins & May's settings, docs/reproductions/method.md)
PRO_PAPER = {"gamma": 5000, "xi": 50, "beta": 0.05, "psi": 0.1, "c": 1.0, "c_start": math.inf, "length_z": 0.0}
#: APRO as the paper ran it (Section 5.1)
APRO_PAPER = {"c": 0.01, "psi": 1.0}
#: Figure 1's settings (fn. 4) and its three Ψ (the text names 0.1, 0.5 and 1)
GAMMAS, XIS, BETAS, PSIS = (5000, 8000), (50, 100), (0.03, 0.05), (0.1, 0.5, 1.0)
STUDIES = ("table2", "figure1")
#: Table 2's iterations: "after 10 iterations" and "at convergence (≤ 30 iterations)"
ITERATIONS = (10, 30)
DRAWS = (1, 2)
#: the results files of the page's generated tables (the claims file names them all)
TABLE2 = [f"dreyer-dong-2015-k{k}-pro10-draw{d}" for k in (500, 1500) for d in DRAWS]
LOOPS = [f"dreyer-dong-2015-loop-{s}-at{n}" for s in ("dense", "sparse") for n in (10, 30)]
FIGURE1 = [f"dreyer-dong-2015-fig1-k500-draw{d}" for d in DRAWS]


def pro_name(psi: float, gamma: int, xi: int, beta: float, steps: int = 30) -> str:
    """Figure 1's name of a PRO setting run for ``steps`` iterations (Hopkins & May's with
    Ψ = 0.1: ``pro-30``)."""
    if (psi, gamma, xi, beta) == (PRO_PAPER["psi"], PRO_PAPER["gamma"], PRO_PAPER["xi"], PRO_PAPER["beta"]):
        return f"pro-{steps}"
    return f"pro-{steps}-psi{psi:g}-g{gamma}-xi{xi}-b{beta:g}"


def baseline(args) -> str:
    """The study's default baseline: PRO after 10 iterations (table2), at 30 (figure1)."""
    after, converged = args.iterations
    return f"pro-{after}" if args.study == "table2" else f"pro-{converged}"


def methods(system: str, args) -> dict[str, tuple[str, dict, bool]]:
    """name -> (optimizer, options, depends on the seed); ``steps`` in the options is the
    number of iterations on the pool (pool_study.iterate), not an mtplug option."""
    after, converged = args.iterations
    apro = ("apro", dict(APRO_PAPER), False)
    if args.study == "table2":
        return {f"pro-{after}": ("pro", {**PRO_PAPER, "steps": after}, True),
                f"pro-{converged}": ("pro", {**PRO_PAPER, "steps": converged}, True),
                "apro": apro,
                f"apro-psi0.1-{after}": ("apro", {**APRO_PAPER, "psi": 0.1, "steps": after}, False)}
    table: dict[str, tuple[str, dict, bool]] = {}
    for psi in PSIS:
        for gamma in GAMMAS:
            for xi in XIS:
                for beta in BETAS:
                    options = {**PRO_PAPER, "gamma": gamma, "xi": xi, "beta": beta, "psi": psi, "steps": converged}
                    table[pro_name(psi, gamma, xi, beta, converged)] = ("pro", options, True)
    table["apro"] = apro
    for psi in PSIS[:-1]:
        table[f"apro-psi{psi:g}-{converged}"] = ("apro", {**APRO_PAPER, "psi": psi, "steps": converged}, False)
    return table


class Study(pool_study.PoolStudy):
    """pool_study.PoolStudy whose results file keeps the study and its iteration counts
    (``study``, ``iterations``); a method's ``steps`` are iterations on the pool
    (pool_study.iterate)."""

    def summary(self, systems: dict) -> dict:
        return {**super().summary(systems), "study": self.a.study, "iterations": list(self.a.iterations)}


def _load(name: str) -> dict | None:
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def _runs(study: dict, system: str, method: str) -> list[dict]:
    return study["systems"].get(system, {}).get("methods", {}).get(method, {}).get("runs", [])


def _test_cell(study: dict, system: str, method: str) -> str:
    runs = _runs(study, system, method)
    return mean_sd([r["test"] for r in runs]) if runs else "not run"


def lengths_table() -> str:
    """Table 2's BLEU and length ratio columns, ours: every run's test length ratio
    (hypothesis / reference words), after 10 iterations and at convergence."""
    lines = ["| results file | system | method | runs | test BLEU | test length ratio (mean ± sd) |",
             "|---|---|---|---|---|---|"]
    for name in TABLE2 + LOOPS:
        study = _load(name)
        if study is None:
            lines.append(f"| {name} | | | | | not run yet |")
            continue
        after, converged = study.get("iterations", ITERATIONS)
        for system in study["systems"]:
            for method in (f"pro-{after}", f"pro-{converged}", "apro", "pro"):
                runs = _runs(study, system, method)
                if runs:
                    lines.append(f"| {name} | {system} | {method} | {len(runs)} | "
                                 f"{np.mean([r['test'] for r in runs]):.2f} | "
                                 f"{mean_sd([r['length_ratio'] for r in runs], 3)} |")
    return "\n".join(lines)


def runtime_table() -> str:
    """Section 5.2's runtime, ours: one PRO iteration and one APRO run on the same tune
    store in one study run (the seconds of ``pro-10`` divided by its iterations, the
    seconds of ``apro``: one run, as Section 5.2 times one of APRO's iterations)."""
    lines = ["| results file | system | k | PRO s per iteration (mean) | APRO s (mean) | APRO / PRO |",
             "|---|---|---|---|---|---|"]
    for name in TABLE2:
        study = _load(name)
        if study is None:
            lines.append(f"| {name} | | | | | not run yet |")
            continue
        after = study.get("iterations", ITERATIONS)[0]
        for system in study["systems"]:
            pro = study["systems"][system]["methods"][f"pro-{after}"]
            per_step = [r["seconds"] / pro["options"]["steps"] for r in pro["runs"]]
            apro = [r["seconds"] for r in _runs(study, system, "apro")]
            lines.append(f"| {name} | {system} | {study['tune_nbest']} | {np.mean(per_step):.2f} | "
                         f"{np.mean(apro):.2f} | {np.mean(apro) / np.mean(per_step):.2f} |")
    return "\n".join(lines)


def figure1_table() -> str:
    """Figure 1, ours: test BLEU (mean ± sd of the runs) of each PRO setting for each Ψ,
    and of APRO; a setting none of whose Ψ ran (a run of ``--methods``) has no row."""
    header = "| results file | system | Γ | Ξ | β | " + " | ".join(f"Ψ = {p:g}" for p in PSIS) + " |"
    lines = [header, "|" + "---|" * (5 + len(PSIS))]
    for name in FIGURE1:
        study = _load(name)
        if study is None:
            lines.append(f"| {name} | | | | | " + " | " * (len(PSIS) - 1) + "not run yet |")
            continue
        converged = study.get("iterations", ITERATIONS)[1]
        for system in study["systems"]:
            for gamma in GAMMAS:
                for xi in XIS:
                    for beta in BETAS:
                        cells = [_test_cell(study, system, pro_name(p, gamma, xi, beta, converged)) for p in PSIS]
                        if any(c != "not run" for c in cells):     # a run of --methods: only what ran
                            lines.append(f"| {name} | {system} | {gamma} | {xi} | {beta:g} | " + " | ".join(cells) + " |")
            cells = [_test_cell(study, system, "apro" if p == 1.0 else f"apro-psi{p:g}-{converged}") for p in PSIS]
            lines.append(f"| {name} | {system} | APRO | | | " + " | ".join(cells) + " |")
    return "\n".join(lines)


TABLES = {"lengths": lengths_table, "runtime": runtime_table, "figure1": figure1_table}


def table(name: str) -> str:
    """A table of the page from the committed results files (benchmarks/generated_tables.py):
    one of ``TABLES``, or the study table of results/NAME.json."""
    return TABLES[name]() if name in TABLES else pool_study.table(name)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    pool_study.add_arguments(ap)
    ap.set_defaults(tune_nbest=500)
    ap.add_argument("--study", choices=STUDIES, default="table2",
                    help="table2: PRO after 10 and 30 iterations, APRO (default); figure1: PRO's sampling "
                         "settings and Ψ, APRO's Ψ")
    ap.add_argument("--baseline", help="the method every other is compared with (default pro-10 for table2, "
                                       "pro-30 for figure1)")
    ap.add_argument("--iterations", type=int, nargs=2, default=list(ITERATIONS), metavar=("AFTER", "CONVERGED"),
                    help="Table 2's iterations on the pool: after AFTER and at convergence, CONVERGED (default "
                         "10 30, the paper's; Figure 1 runs CONVERGED)")
    a = ap.parse_args()
    if min(a.iterations) < 1 or a.iterations[0] == a.iterations[1]:
        ap.error("--iterations: two different counts >= 1")
    chosen = a.baseline or baseline(a)
    names = methods("dense", a)
    if chosen not in names:
        ap.error(f"--baseline {chosen}: not a method of the {a.study} study ({', '.join(names)})")
    Study(a, methods, chosen).main()


if __name__ == "__main__":
    main()
