"""Slow, obvious metric objective from summed statistics: the oracle for pyx/_metric.pxd.

Each part's goodness written out from its definition (mtplug.metrics.layer): BLEU from
tests.reference.bleu_reference, chrF from tests.reference.chrf_reference, TER, the Moses
error rates and sums by hand; the objective is constant + Σ weight · goodness.
"""

from __future__ import annotations

import math

from tests.reference.bleu_reference import bleu
from tests.reference.chrf_reference import f_score


def goodness(name: str, t: list[int], param: float) -> float:
    """One part's goodness (higher is better) from its summed statistics ``t``."""
    if name == "bleu":
        return bleu(t, param)
    if name in ("ext", "linear"):
        g = t[0] * 2 ** 31 + t[1] if len(t) == 2 else t[0]
        return g / param
    if name in ("chrf", "chrf++"):
        return f_score(t, param) / 100.0
    if name == "ter":
        ref = t[1] / param
        ter = t[0] / ref if ref > 0 else (1.0 if t[0] > 0 else 0.0)
        return 1.0 - ter
    if name in ("wer", "cder"):
        return 1.0 if t[1] == 0 else 1.0 - t[0] / t[1]
    if name == "per":
        return 0.0 if t[2] == 0 else (t[0] - max(0, t[1] - t[2])) / t[2]
    raise ValueError(name)


def objective(metric, totals) -> float:
    """``metric`` (mtplug.metrics.layer.Metric) of summed statistics ``totals``."""
    totals = [int(x) for x in totals]
    g, col = metric.constant, 0
    for p in metric.parts:
        g += p.weight * goodness(p.name, totals[col:col + p.width], p.param)
        col += p.width
    return g


def close(a: float, b: float) -> bool:
    return a == b or math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)
