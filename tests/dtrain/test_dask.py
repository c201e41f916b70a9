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


def test_verbose_lines_of_shards_on_dask_workers(dtrain_ini, standin_command, dask_cluster, tmp_path, capsys):
    """The per-sentence lines of shards trained on workers reach this process's log: the
    same lines as with local threads (whose shards interleave, so compared as a multiset)."""
    ini = dtrain_ini(epochs=1, shards=2, seed=3, stop_after=4)
    logs = []
    for name, extra in (("local", ["--workers", "2"]), ("dask", ["--scheduler", dask_cluster.scheduler_address])):
        out = str(tmp_path / f"{name}.txt")
        assert main(["dtrain", "--verbose", "-c", ini, "--decoder-bin", standin_command, "--output", out, *extra]) == 0
        logs.append(sorted(line for line in capsys.readouterr().err.splitlines() if line.startswith("sentence ")))
    assert len(logs[0]) == 8
    assert logs[0] == logs[1]
