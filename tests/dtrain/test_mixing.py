"""Sharding (parallelize.rb), mixing (lplp.rb), select_weights and dtrain weight files."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from mtplug.dtrain.mixing import make_shards, mix
from mtplug.dtrain.trainer import _Selector
from mtplug.dtrain.weights_io import read_start_weights, write_weights
from mtplug.formats.cdec_weights import format_cdec_weights
from mtplug.formats.cdec_weights import read_cdec_weights

# lplp.rb's own _test(): w["a"] = [1, 2, 3], w["b"] = [1, 2], w["c"] = [66], w["d"] = [10, 20, 30], n = 3
LPLP_SHARDS = [{"a": 1.0, "b": 1.0, "c": 66.0, "d": 10.0}, {"a": 2.0, "b": 2.0, "d": 20.0}, {"a": 3.0, "d": 30.0}]


@pytest.mark.parametrize("norm, how, x, names", [
    ("l0", "select_k", 2, ["a", "d"]),      # lplp.rb: "l0 expect ad"
    ("l1", "select_k", 2, ["c", "d"]),      # "l1 expect cd"
    ("l2", "select_k", 1, ["c"]),           # "l2 expect c"
    ("l1", "cut", 7, ["c", "d"]),           # "cut l1 expect cd"
])
def test_lplp_selftest(norm, how, x, names):
    out = mix(LPLP_SHARDS, norm, how, x)
    assert sorted(out) == names
    for name in names:   # the mean over all 3 shards, a missing value counting 0
        assert out[name] == pytest.approx(sum(s.get(name, 0.0) for s in LPLP_SHARDS) / 3)


def test_mix_orders_by_norm_and_keeps_first_seen_on_ties():
    out = mix([{"x": 1.0, "y": -3.0, "z": 1.0}, {"x": 1.0, "w": 2.0}], "l2", "select_k", 10)
    assert list(out) == ["y", "w", "x", "z"]
    assert out == {"y": -1.5, "w": 1.0, "x": 1.0, "z": 0.5}
    assert mix([{"a": 1.0}, {"a": 3.0}, {"a": 2.0}, {}], "median", "cut", 1.5) == {"a": 1.5}


@pytest.mark.parametrize("n, shards, sizes", [
    (10, 4, [3, 3, 3, 1]),   # round(2.5) = 3: the fourth shard gets what is left
    (10, 3, [3, 3, 4]),      # round(3.33) = 3, the leftover line goes to the last shard
    (60, 2, [30, 30]),
    (3, 5, [1, 1, 1]),       # shards that would be empty are dropped
])
def test_make_shards_like_parallelize_rb(n, shards, sizes):
    parts = make_shards(n, shards)
    assert [len(p) for p in parts] == sizes
    assert np.concatenate(parts).tolist() == list(range(n))
    shuffled = make_shards(n, shards, np.random.default_rng(1))
    assert sorted(np.concatenate(shuffled).tolist()) == list(range(n))
    assert [p.tolist() for p in shuffled] == [p.tolist() for p in make_shards(n, shards, np.random.default_rng(1))]


def test_select_weights():
    epochs = [({"a": 1.0}, 0.2), ({"a": 3.0, "b": 2.0}, 0.4), ({"a": 5.0}, 0.4)]
    result = {}
    for how in ("last", "avg", "best", "VOID"):
        sel = _Selector(how)
        for t, (w, score) in enumerate(epochs, 1):
            sel.add(t, w, score)
        result[how] = sel.result(epochs[-1][0], 3)
        assert sel.best_epoch == 2     # the first of the tied best
    assert result == {"last": {"a": 5.0}, "avg": {"a": 3.0, "b": 2 / 3}, "best": {"a": 3.0, "b": 2.0},
                      "VOID": None}
    sel = _Selector("best")
    sel.add(1, {"a": 1.0}, 0.0)
    sel.add(2, {"a": 2.0}, 0.0)
    assert sel.result({}, 2) == {"a": 1.0} and sel.best_epoch == 1   # dtrain: no score > 0 -> first epoch


def test_weight_files(tmp_path, capsys):
    items = [("PhraseModel_2", 0.8365578543552836), ("Glue", -1e-05), ("Zero", 0.0), ("WordPenalty", 1 / 3)]
    text = format_cdec_weights(items, comment="mtplug dtrain seed=7", sep="\t")
    assert text == ("# mtplug dtrain seed=7\nPhraseModel_2\t0.83655785435528363\nGlue\t-1.0000000000000001e-05\n"
                    "WordPenalty\t0.33333333333333331\n")
    path = str(tmp_path / "w.txt")
    write_weights(path, items, comment="mtplug dtrain seed=7")
    back = read_cdec_weights(path)      # cdec's reader skips the comment and reads the TAB form
    assert dict(back.items()) == {n: v for n, v in items if v}
    assert read_start_weights(path) == dict(back.items())
    gz = str(tmp_path / "w.gz")
    write_weights(gz, items)
    first = open(gz, "rb").read()
    write_weights(gz, items)
    assert open(gz, "rb").read() == first and gzip.decompress(first).decode() == format_cdec_weights(items, sep="\t")
    write_weights("-", items)
    assert capsys.readouterr().out == format_cdec_weights(items, sep="\t")
