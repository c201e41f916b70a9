"""The tuning loop's rules in isolation: next weights, lifted limits, decoder sentence ids."""

from __future__ import annotations

import numpy as np
import pytest

from mtplug.errors import InputError
from mtplug.formats.weights_core import Weights
from mtplug.tuning.config import TuneConfig
from mtplug.tuning.loop import _limit_lifted, _next_weights, _positions, iteration_seed


def cfg(**kw) -> TuneConfig:
    base = dict(decoder="moses", decoder_bin="x", config="c", input="i", ref=["r"], workdir="w")
    return TuneConfig(**{**base, **kw})


def test_next_weights_interpolates_like_mert_moses():
    prev = Weights([("a", 1.0), ("b", -2.0), ("untuned", 5.0)])
    tuned = np.array([3.0, 0.0, 4.0])
    names = ["a", "b", "new_sparse"]
    assert list(_next_weights(prev, names, tuned, 1.0).items()) == \
        [("a", 3.0), ("b", 0.0), ("untuned", 5.0), ("new_sparse", 4.0)]
    # 0.25*new + 0.75*previous; a feature new to the store interpolates with 0
    assert list(_next_weights(prev, names, tuned, 0.25).items()) == \
        [("a", 1.5), ("b", -1.5), ("untuned", 5.0), ("new_sparse", 1.0)]


def state(completed, stop, best_iteration=1):
    return {"completed": completed, "stop": stop, "best": {"iteration": best_iteration, "bleu": 0.3}}


def test_limits_that_a_resume_may_lift():
    assert _limit_lifted(state(4, "iteration limit"), cfg(iterations=6))
    assert not _limit_lifted(state(4, "iteration limit"), cfg(iterations=4))
    stopped = state(5, "no better BLEU for 3 iterations", best_iteration=2)
    assert _limit_lifted(stopped, cfg(iterations=10, patience=4))
    assert _limit_lifted(stopped, cfg(iterations=10, patience=0))
    assert not _limit_lifted(stopped, cfg(iterations=10, patience=3))
    assert not _limit_lifted(stopped, cfg(iterations=5, patience=0))
    # the patience stop names the metric the best iteration was chosen by (issue 47); a state
    # written before says BLEU whatever the metric: both are lifted alike
    for stop in ("no better chrF for 3 iterations", "no better bleu:0.5,chrf:0.5 for 3 iterations",
                 "no better TER for 3 iterations"):
        assert _limit_lifted(state(5, stop, best_iteration=2), cfg(iterations=10, patience=4))
        assert not _limit_lifted(state(5, stop, best_iteration=2), cfg(iterations=10, patience=3))
    # convergence is final
    assert not _limit_lifted(state(3, "no new hypotheses"), cfg(iterations=10))
    assert not _limit_lifted(state(3, "no weight changed by 1e-05 or more"), cfg(iterations=10))


def test_positions_map_decoder_ids_to_lines():
    assert _positions([0, 1, 2], "in") == {0: 0, 1: 1, 2: 2}
    assert _positions([7, 8, 2], "in") == {7: 0, 8: 1, 2: 2}   # cdec: <seg id="7"> then the counter
    with pytest.raises(InputError, match="two input lines get the sentence id 7"):
        _positions([7, 8, 7], "in")


def test_iteration_seeds_differ_and_repeat():
    seeds = [iteration_seed(3, n) for n in range(1, 6)]
    assert len(set(seeds)) == 5 and seeds == [iteration_seed(3, n) for n in range(1, 6)]
    assert iteration_seed(4, 1) != seeds[0]
