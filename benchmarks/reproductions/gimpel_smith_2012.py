#!/usr/bin/env python3
"""Gimpel & Smith (2012), structured ramp loss: RAMPION, its losses and settings, MERT and
PRO compared on fixed pools (docs/reproductions/gimpel-smith-2012.md; its claims:
claims/gimpel-smith-2012.yaml).

    python benchmarks/reproductions/gimpel_smith_2012.py --pools POOLS --start START --out RESULTS \\
        [--results results/NAME.json] [--tune-nbest 500] [--seeds 1 2 3] [--start-points 3] \\
        [--restarts 20] [--pro-steps 25] [--threads 2]

The pools, systems, start points and outputs are pool_study.py's: make_galley_pools.py's
cdec de-en tune, dev and test sets decoded once, a ``dense`` system (the 12 dense
features: the paper's Moses default features, Table 1) and a ``sparse`` one (every
feature of the pools: the paper's extended feature set, Table 2). Every method tunes on
the tune pool's first ``--tune-nbest`` hypotheses per sentence (500: the paper's k for
RAMPION) and reranks the test pool. Start points: point 0 is START (cdec's default weights,
as the paper starts from Moses's), points 1..``--start-points`` the paper's random
initializers N(w, (w/2)^2) (Section 4.2, fn. 13).

Methods, each run with the paper's settings (Section 4, "Training Algorithms"); the paper
searched no hyper-parameter per experiment, so none is searched here:

* ``mert`` (dense only; the paper leaves MERT out of its large feature sets): coordinate
  ascent with ``--restarts`` random restarts (mert-moses.pl's 20), seeded;
* ``pro``: Hopkins & May's PRO as the paper ran it (Moses's, with Hopkins & May's
  settings): Γ = 5000, Ξ = 50, β = 0.05, the logistic classifier with C = 1, no pull toward
  the start and no length filter, and the interpolation Ψ = 0.1 with the previous weights,
  for ``--pro-steps`` iterations (the paper's 25) on the fixed pool, iteration t with the
  seed mtplug tune gives it. One step of Ψ = 0.1 would keep 90% of the start: the paper's
  PRO ran 25 such steps, which leave 0.9^25 = 7% of it;
* ``rampion-LOSS``: RAMPION (Alg. 1) with each loss of ``mtplug optimize rampion --loss``,
  the paper's T' = 10 CCCP iterations, T'' = 5 epochs, η = 0.0001, C = 1, α = 10, from the
  start as given (``start_scale`` given: Alg. 1 neither shrinks nor rescales θ0). The fixed
  pool is one outer iteration of Alg. 1 (its T = 20 decodes, the decoder-loop script
  gimpel_smith_2012_loop.py). ``rampion-ramp3`` is the paper's RAMPION and the baseline;
* footnote 12's settings of RAMPION ramp3 (dense only): ``rampion-ramp3-t50`` (T' = 50,
  larger than the paper's 10), ``rampion-ramp3-alpha1`` and ``-alpha5`` (α = 1, 5),
  ``rampion-ramp3-c0.1`` and ``-c10`` (C = 0.1, 10).

The sparse system runs ``pro`` and ``rampion-ramp3`` only (Table 2). MERT and PRO depend on
the seed; RAMPION does not, so it runs once per start point and is compared with the
others on one run per start point (pool_study.py). The outputs are pool_study.py's, with
each run's PRO step count in its row.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pool_study

BASELINE = "rampion-ramp3"
#: PRO's iterations in the paper (Hopkins & May's settings, fn. 11)
PRO_STEPS = 25
#: the paper's RAMPION settings (Section 4): T' = 10, T'' = 5, η = 0.0001, C = 1, α = 10
RAMPION = {"cccp_iterations": 10, "epochs": 5, "eta": 1e-4, "c": 1.0, "alpha": 10.0, "start_scale": "given"}
#: footnote 12's variations of RAMPION ramp3: name suffix -> the option that differs
FOOTNOTE_12 = {"t50": {"cccp_iterations": 50}, "alpha1": {"alpha": 1.0}, "alpha5": {"alpha": 5.0},
               "c0.1": {"c": 0.1}, "c10": {"c": 10.0}}


def methods(system: str, args) -> dict[str, tuple[str, dict, bool]]:
    """name -> (optimizer, options, depends on the seed); ``steps`` in PRO's options is
    the number of PRO iterations on the pool (pool_study.iterate), not an mtplug option."""
    from mtplug.optimizers.rampion import LOSSES

    pro = {"psi": 0.1, "c": 1.0, "c_start": float("inf"), "length_z": 0.0, "steps": args.pro_steps}
    if system == "sparse":
        return {"pro": ("pro", pro, True), BASELINE: ("rampion", {**RAMPION, "loss": "ramp3"}, False)}
    table: dict[str, tuple[str, dict, bool]] = {"mert": ("mert", {"restarts": args.restarts}, True),
                                                "pro": ("pro", pro, True)}
    for loss in LOSSES:
        table[f"rampion-{loss}"] = ("rampion", {**RAMPION, "loss": loss}, False)
    for suffix, change in FOOTNOTE_12.items():
        table[f"{BASELINE}-{suffix}"] = ("rampion", {**RAMPION, "loss": "ramp3", **change}, False)
    return table


def table(name: str) -> str:
    """results/NAME.json as the page shows it (benchmarks/generated_tables.py)."""
    return pool_study.table(name)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    pool_study.add_arguments(ap)
    ap.set_defaults(tune_nbest=500)
    ap.add_argument("--pro-steps", type=int, default=PRO_STEPS,
                    help=f"PRO's iterations on the pool, each Ψ = 0.1 (default {PRO_STEPS}, the paper's)")
    a = ap.parse_args()
    if a.pro_steps < 1:
        ap.error("--pro-steps must be >= 1")
    pool_study.PoolStudy(a, methods, BASELINE).main()


if __name__ == "__main__":
    main()
