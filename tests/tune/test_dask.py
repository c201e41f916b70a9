"""``mtplug tune --scheduler``: decoding shards (and the optimizer's partitions) on dask
workers give the same n-best lists and final weights as local processes."""

from __future__ import annotations

import re

import pytest

from tests.tune.test_tune import moses_args, run


@pytest.mark.parametrize("optimizer", ["apro", "mira"])
def test_tune_on_a_dask_cluster_equals_local_processes(system, dask_cluster, optimizer, capsys):
    local = run(moses_args(system, system / "local", "--jobs", "2", optimizer=optimizer), capsys)
    remote = run(moses_args(system, system / "dask", "--scheduler", dask_cluster.scheduler_address,
                            optimizer=optimizer), capsys)
    assert (system / "local" / "final").read_bytes() == (system / "dask" / "final").read_bytes()
    for it in ("iter001", "iter002"):
        assert (system / "local" / it / "nbest.out").read_bytes() == (system / "dask" / it / "nbest.out").read_bytes()
    assert local["history"] == remote["history"] and local["bleu"] > 20


def test_decoder_failure_on_a_worker_names_the_shard(system, dask_cluster, capsys):
    args = moses_args(system, system / "bad", "--scheduler", dask_cluster.scheduler_address)
    args[args.index("--decoder-bin") + 1] = "false"
    from mtplug.cli import main

    assert main(args) != 0
    err = capsys.readouterr().err
    # both shards fail: the one that ends first is reported (shards are looked at as they end)
    assert re.search(r"the decoder exited with status 1 on shard [01]: ", err), err
