"""The metric layer's ``m2`` part (KIND_M2 in pyx/_metric.pxd) against mtplug.metrics.m2's
Moses formula: corpus objective, per-row objective, β from the part's parameter."""

from __future__ import annotations

import numpy as np
import pytest

from mtplug.metrics import m2
from mtplug.metrics.layer import Metric, Part, parse_metric
from mtplug.metrics.moses_scorers import parse_moses_scorer

# degenerate rows first: nothing proposed, no gold edits, nothing at all
ROWS = [[0, 0, 0, 5], [0, 0, 3, 5], [0, 4, 0, 5], [2, 3, 4, 9], [5, 5, 5, 5], [0, 7, 2, 4]]


@pytest.mark.parametrize("beta", [0.5, 1.0, 0.2, 0.0, 2.0])
def test_objective_is_moses_f_beta(beta):
    metric = Metric("m2", (Part("m2", 1.0, m2.N_STATS, m2.M2Options(beta=beta).beta),))
    rng = np.random.default_rng(38)
    tables = [np.array([r]) for r in ROWS] + [rng.integers(0, 50, size=(20, 4)) for _ in range(20)]
    for rows in tables:
        totals = rows.sum(axis=0)
        assert metric.objective(totals) == m2.f_beta(totals, beta)


def test_parse_and_scconfig_give_beta():
    assert [(p.name, p.kind) for p in parse_metric("m2").parts] == [("m2", "m2")]
    scorer = parse_moses_scorer("M2SCORER", "beta:1.0,max_unchanged_words:0,foo:bar")
    assert scorer.m2 == m2.M2Options(1.0, 0, False)
    assert scorer.notes and "foo:bar" in scorer.notes[0]
    assert scorer.metric().parts[0].param == 1.0
    with pytest.raises(ValueError, match="interpolated"):
        parse_moses_scorer("M2SCORER,BLEU", None)


def test_far_from_source_rows():
    rows = np.array([[0, 6, 0, 5], [0, 5, 0, 5], [2, 3, 4, 9]])
    assert m2.far_from_source(rows).tolist() == [True, False, False]
