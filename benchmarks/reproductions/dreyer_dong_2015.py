#!/usr/bin/env python3
"""Dreyer & Dong (2015), APRO: all-pairs ranking against PRO's sampled pairs on fixed
pools (docs/reproductions/dreyer-dong-2015.md).

    python benchmarks/reproductions/dreyer_dong_2015.py --pools POOLS --start START --out RESULTS \\
        [--tune-nbest 100] [--seeds 1 2 3] [--start-points 3] [--threads 2]

The pools, systems, start points and outputs are pool_study.py's (cdec de-en, dense and
sparse; START and Gimpel & Smith's N(w, (w/2)^2) points). Methods: PRO (its defaults:
sampled pairs, the MegaM-style classifier) and APRO (every pair of each list; its default
C = 0.01 and C = 1, docs/pro.md's two choices), each from every start point with every seed (APRO's result does not depend on
the seed: it runs once per start point). ``--tune-nbest`` sets the size of the tuning
lists (the paper's k: the pools hold 500 per sentence), so two runs give the k = 100 and
k = 500 columns. The optimizer seconds of the two methods are measured in the same run on
the same store.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pool_study

BASELINE = "pro"


def methods(system: str, args) -> dict[str, tuple[str, dict, bool]]:
    """name -> (optimizer, options, depends on the seed)."""
    return {"pro": ("pro", {}, True), "apro": ("apro", {}, False), "apro-c1": ("apro", {"c": 1.0}, False)}


if __name__ == "__main__":
    pool_study.main(__doc__, methods, BASELINE)
