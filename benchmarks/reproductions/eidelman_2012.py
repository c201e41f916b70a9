#!/usr/bin/env python3
"""Eidelman (2012), online large-margin strategies: MIRA's oracle/prediction selections,
the max-BLEU (MB) oracle and MERT compared on fixed pools (docs/reproductions/eidelman-2012.md;
its claims: claims/eidelman-2012.yaml).

    python benchmarks/reproductions/eidelman_2012.py --pools POOLS --start START --out RESULTS \\
        [--results results/NAME.json] [--baseline mira-hope-fear] [--seeds 1 2 3] [--start-points 3] \\
        [--tune-nbest 100] [--mb-nbest 500] [--sentence-metric pseudo-doc] [--shards 1] [--restarts 20]

The pools, systems, start points and outputs are pool_study.py's (cdec de-en, dense and
sparse, START and Gimpel & Smith's N(w, (w/2)^2) points). Methods, every one from every
start point with every seed (the seed orders MIRA's sentences and MERT's restarts):

* ``mira-HOPE-FEAR``: MIRA with each of Eidelman's six selections (Tables 3 and 4): the
  oracle ``hope`` (M−C: max model − cost) or ``lu`` (local update: max BLEU), the
  prediction ``fear`` (M+C: max model + cost), ``mc`` (max cost) or ``pb`` (prediction-based:
  the model 1-best); ``mira-hope-fear`` is M±C, the baseline;
* ``mira-mb-lu-mc`` and ``mira-mb-hope-fear`` (Section 3.2, the "augmented k-best list"):
  the oracle from a longer list than the prediction. The paper takes the oracle from a
  50k-best list and the prediction from the 500-best; here the oracle is chosen among the
  tune pool's first ``--mb-nbest`` hypotheses of a sentence and the prediction among the
  ``--tune-nbest`` of them the current model scores best (mtplug MIRA's ``fear_list``).
  Only when ``--mb-nbest`` > ``--tune-nbest``;
* ``mert`` (dense only: coordinate ascent with ``--restarts`` restarts), the paper's MERT
  baseline.

Every MIRA runs with the paper's C = 0.01 (the paper searched no hyper-parameter on dev, so
none is searched here), 10 passes, averaged weights, and the costs of
``--sentence-metric`` (default mtplug's pseudo-doc, the default of cdec's mira.py;
``doc-1best``: the paper's BLEU in the context of the previous pass's 1-best translations,
as cdec's kbest_cut_mira computes it) with ``--shards`` learners mixed after each pass
(the paper: 20 shards of its 2051 tuning sentences). ``--baseline`` names the method the
others are compared with (default M±C; ``mira-lu-mc`` for the claims about LU); a finished
run is not run again, so a second call with another baseline on the same ``--out`` only
evaluates. The results file (``--results``) keeps, beside pool_study.py's fields, each MIRA
run's oracle and prediction BLEU of every pass (``Result.info``: the corpus BLEU of the
hope and the fear rows the pass chose, the error bars of the paper's Figures 1-6) and the
study's MIRA settings.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pool_study
from defaults_evidence import dense_pools
from galley_rerank import stores

BASELINE = "mira-hope-fear"
HOPES = {"hope": "M-C", "lu": "LU"}
FEARS = {"fear": "M+C", "mc": "MC", "pb": "PB"}
#: the MB methods: name -> (oracle, prediction)
MB = {"mira-mb-lu-mc": ("lu", "mc"), "mira-mb-hope-fear": ("hope", "fear")}
#: the paper's C (Section 3.1)
C = 0.01


def mira_options(args, **more) -> dict:
    """The options every MIRA of the study shares, and ``more``."""
    opts: dict = {"c": C}
    if args.sentence_metric:
        opts["sentence_metric"] = args.sentence_metric
    if args.shards > 1:
        opts["shards"] = args.shards
    return {**opts, **more}


def methods(system: str, args) -> dict[str, tuple[str, dict, bool]]:
    """name -> (optimizer, options, depends on the seed)."""
    table: dict[str, tuple[str, dict, bool]] = {}
    for hope in HOPES:
        for fear in FEARS:
            table[f"mira-{hope}-{fear}"] = ("mira", mira_options(args, hope=hope, fear=fear), True)
    if args.mb_nbest > args.tune_nbest:
        for name, (hope, fear) in MB.items():
            table[name] = ("mira", mira_options(args, hope=hope, fear=fear, fear_list=args.tune_nbest), True)
    if system == "dense":
        table["mert"] = ("mert", {"restarts": args.restarts}, True)
    return table


def per_pass(result) -> dict:
    """Every pass's oracle and prediction BLEU (0-100; MIRA only)."""
    oracle, prediction = result.info.get("oracle_per_pass"), result.info.get("prediction_per_pass")
    if not oracle:
        return {}
    return {"oracle_per_pass": [round(float(x), 4) for x in oracle],
            "prediction_per_pass": [round(float(x), 4) for x in prediction]}


def _mean_of(key: str, of: Callable[[list[float]], float]):
    """A column: the mean over the runs of ``of`` of each run's per-pass list ``key``."""
    def cell(runs) -> str:
        values = [of(r[key]) for r in runs if key in r]
        return f"{np.mean(values):.2f}" if values else ""
    return cell


COLUMNS = [("oracle BLEU, last pass", _mean_of("oracle_per_pass", lambda x: x[-1])),
           ("prediction BLEU, last pass", _mean_of("prediction_per_pass", lambda x: x[-1])),
           ("sd of prediction BLEU over passes", _mean_of("prediction_per_pass", lambda x: float(np.std(x))))]
#: the per-run fields of per_pass the results file keeps beside pool_study.py's
PER_PASS = ("oracle_per_pass", "prediction_per_pass")


def table(name: str) -> str:
    """results/NAME.json as the page shows it (benchmarks/generated_tables.py)."""
    return pool_study.table(name, COLUMNS)


class Study(pool_study.PoolStudy):
    """pool_study.PoolStudy with the MB methods tuned on the longer tune list (``--mb-nbest``)."""

    def __init__(self, args, *a, **kw):
        super().__init__(args, *a, **kw)
        self._long: dict[str, dict] = {}

    def long_data(self, system: str) -> dict:
        """The stores with the tune pool cut to its first ``--mb-nbest`` hypotheses."""
        if system not in self._long:
            pools = dense_pools(Path(self.a.pools)) if system == "dense" else Path(self.a.pools)
            self._long[system] = stores(pools, self.out / system / "stores", self.a.mb_nbest)
        return self._long[system]

    def run(self, system, data, method, optimizer, options, point, seed):
        if method in MB:
            data = self.long_data(system)
        return super().run(system, data, method, optimizer, options, point, seed)

    def summary(self, systems: dict) -> dict:
        out = super().summary(systems)
        out["mira"] = {"c": C, "sentence_metric": self.a.sentence_metric or "pseudo-doc (mtplug's default)",
                       "shards": self.a.shards, "mb_nbest": self.a.mb_nbest}
        for system, entry in out["systems"].items():
            for name, method in entry["methods"].items():
                if name in MB:
                    method["tune_nbest"] = self.a.mb_nbest
                for run in method["runs"]:
                    row = self.done[(system, name, run["point"], run["seed"])]
                    run.update({k: row[k] for k in PER_PASS if k in row})
        return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    pool_study.add_arguments(ap)
    ap.add_argument("--baseline", default=BASELINE,
                    help=f"the method every other is compared with (default {BASELINE}, M±C)")
    ap.add_argument("--mb-nbest", type=int, default=500,
                    help="the MB methods' oracle list: the tune pool's first N hypotheses (default 500; "
                         "no MB methods unless N > --tune-nbest)")
    ap.add_argument("--sentence-metric", choices=("pseudo-doc", "doc-1best"), default=None,
                    help="every MIRA's costs (default mtplug's, pseudo-doc; doc-1best: the paper's reading)")
    ap.add_argument("--shards", type=int, default=1, help="every MIRA's parameter mixing over N shards (default 1)")
    a = ap.parse_args()
    if a.shards < 1:
        ap.error("--shards must be >= 1")
    for system in a.systems:
        if a.baseline not in methods(system, a):
            ap.error(f"--baseline {a.baseline}: not a method of the {system} system ({', '.join(methods(system, a))})")
    Study(a, methods, a.baseline, extra=per_pass, columns=COLUMNS).main()


if __name__ == "__main__":
    main()
