"""``mtplug dtrain --scheduler``: shards trained on dask workers, mixed here, give the same
weights as shards in local threads."""

from __future__ import annotations

import json

from mtplug.cli import main


def test_shards_on_a_dask_cluster_equal_local_threads(dtrain_ini, standin_command, dask_cluster, tmp_path, capsys):
    ini = dtrain_ini(epochs=2, shards=3, randomize=True, reshard=True, seed=3, minibatch=2, stop_after=8,
                     lplp_args="l2 select_k 6")
    outs, results = [], []
    for name, extra in (("local", ["--workers", "2"]), ("dask", ["--scheduler", dask_cluster.scheduler_address])):
        out = str(tmp_path / f"{name}.txt")
        assert main(["dtrain", "--quiet", "-c", ini, "--decoder-bin", standin_command, "--output", out, *extra]) == 0
        outs.append(open(out, "rb").read())
        results.append(json.loads(capsys.readouterr().out.splitlines()[-1]))
    assert outs[0] == outs[1]
    assert results[0]["decoder_calls"] == results[1]["decoder_calls"] > 0
    assert [e["bleu"] for e in results[0]["epochs"]] == [e["bleu"] for e in results[1]["epochs"]]
