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

Start points (pool_study.py): point 0 is START (cdec's default weights for the system),
points 1..``--start-points`` Gimpel & Smith's N(w, (w/2)^2). Seeds seed MERT's restarts
and PRO's sampling; RAMPION is deterministic, so it runs once per start point. The
baseline of ``mtplug evaluate`` is RAMPION ramp3; the outputs are pool_study.py's.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pool_study

BASELINE = "rampion-ramp3"


def methods(system: str, args) -> dict[str, tuple[str, dict, bool]]:
    """name -> (optimizer, options, depends on the seed)."""
    from mtplug.optimizers.rampion import LOSSES

    table: dict[str, tuple[str, dict, bool]] = {}
    if system == "dense":
        table["mert"] = ("mert", {"restarts": args.restarts}, True)
    table["pro"] = ("pro", {}, True)
    for loss in LOSSES:
        table[f"rampion-{loss}"] = ("rampion", {"loss": loss}, False)
    return table


if __name__ == "__main__":
    pool_study.main(__doc__, methods, BASELINE)
