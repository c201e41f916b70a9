#!/usr/bin/env python3
"""Eidelman (2012), online large-margin strategies: MIRA's hope/fear pairings, MB,
parameter mixing and MERT compared on fixed pools (docs/reproductions/eidelman-2012.md).

    python benchmarks/reproductions/eidelman_2012.py --pools POOLS --start START --out RESULTS \\
        [--seeds 1 2 3] [--start-points 3] [--tune-nbest 100] [--restarts 20] [--threads 2]

The pools, systems, start points and outputs are pool_study.py's (cdec de-en, dense and
sparse, START and Gimpel & Smith's N(w, (w/2)^2) points). Methods, every one from every
start point with every seed (the seed orders MIRA's sentences and MERT's restarts):

* MIRA with each of Eidelman's six selections: hope ``hope`` (M−C: max model − cost) or
  ``lu`` (local update: max metric), fear ``fear`` (M+C: max model + cost), ``mc`` (max
  cost) or ``pb`` (prediction-based: the model 1-best);
* M−C/M+C with MB (the fear among each sentence's 10 best by model score, the hope among
  all), with the paper's sentence BLEU (``doc-1best``), and with parameter mixing over 4
  shards;
* MERT (dense only: coordinate ascent with ``--restarts`` restarts) and PRO.

The baseline of ``mtplug evaluate`` is MIRA M−C/M+C (mtplug's default). Each run's row
keeps the last pass's oracle and prediction BLEU and their spread over the passes
(``Result.info``), the paper's per-iteration numbers.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pool_study

BASELINE = "mira-hope-fear"
HOPES = {"hope": "M-C", "lu": "LU"}
FEARS = {"fear": "M+C", "mc": "MC", "pb": "PB"}


def methods(system: str, args) -> dict[str, tuple[str, dict, bool]]:
    """name -> (optimizer, options, depends on the seed)."""
    table: dict[str, tuple[str, dict, bool]] = {}
    for hope in HOPES:
        for fear in FEARS:
            table[f"mira-{hope}-{fear}"] = ("mira", {"hope": hope, "fear": fear}, True)
    table["mira-hope-fear-mb10"] = ("mira", {"fear_list": 10}, True)
    table["mira-hope-fear-doc1best"] = ("mira", {"sentence_metric": "doc-1best"}, True)
    table["mira-hope-fear-mix4"] = ("mira", {"shards": 4}, True)
    if system == "dense":
        table["mert"] = ("mert", {"restarts": args.restarts}, True)
    table["pro"] = ("pro", {}, True)
    return table


def per_pass(result) -> dict:
    """The last pass's oracle and prediction BLEU (0-100) and the sd of the prediction BLEU
    over the passes (MIRA only)."""
    oracle, prediction = result.info.get("oracle_per_pass"), result.info.get("prediction_per_pass")
    if not oracle:
        return {}
    return {"oracle": oracle[-1], "prediction": prediction[-1], "prediction_sd": float(np.std(prediction))}


def _mean_of(key: str):
    def cell(rows) -> str:
        values = [r[key] for r in rows if key in r]
        return f"{np.mean(values):.2f}" if values else ""
    return cell


COLUMNS = [("oracle BLEU, last pass", _mean_of("oracle")), ("prediction BLEU, last pass", _mean_of("prediction")),
           ("sd of prediction BLEU over passes", _mean_of("prediction_sd"))]


if __name__ == "__main__":
    pool_study.main(__doc__, methods, BASELINE, extra=per_pass, columns=COLUMNS)
