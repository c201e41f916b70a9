"""Work split over dask workers (a LocalCluster of 2 processes) gives the single-process
results bit for bit: APRO, expected BLEU (MERT's gradient directions), MIRA shards."""

from __future__ import annotations

import subprocess
import sys
import time

import numpy as np
import pytest

from mtplug.distributed import LocalEngine, connect
from mtplug.distributed.partition import partition_sentences
from mtplug.errors import InputError
from mtplug.metrics.expected_bleu import ExpectedBleu
from mtplug.optimizers.apro import Apro
from mtplug.optimizers.mert import Mert
from mtplug.optimizers.mira import Mira
from tests.reference.random_store import random_store


@pytest.fixture(scope="module")
def corpus():
    sizes = tuple(int(x) for x in np.random.default_rng(5).integers(1, 30, 70))
    return random_store(11, sizes=sizes, gaussian=True)


def same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def test_partitions_cover_the_sentences_in_order():
    offsets = np.array([0, 5, 5, 9, 30, 31, 40], dtype=np.int64)
    for parts in (1, 2, 3, 6, 10):
        runs = partition_sentences(offsets, parts)
        assert runs[0][0] == 0 and runs[-1][1] == 6 and len(runs) <= parts
        assert all(a < b for a, b in runs) and all(runs[i][1] == runs[i + 1][0] for i in range(len(runs) - 1))
    assert partition_sentences(np.zeros(1, dtype=np.int64), 4) == [(0, 0)]


def test_engine_places_partitions_on_both_workers(dask_engine):
    assert dask_engine.n_workers == 2
    handles = dask_engine.put([np.arange(3), np.arange(4)])
    assert {h.worker for h in handles} == set(dask_engine.workers)
    assert [int(x) for x in dask_engine.fetch(dask_engine.run(np.sum, handles))] == [3, 6]
    assert dask_engine.map(abs, [-1, 2, -3]) == [1, 2, 3]
    assert "2 workers" in dask_engine.describe()


@pytest.mark.parametrize("c", [0.01, 1.0])
def test_apro_on_workers_equals_one_process(corpus, dask_engine, c):
    start = np.linspace(-1, 1, corpus.n_features)
    local = Apro(c=c).optimize(corpus, start, seed=0, threads=1)
    remote = Apro(c=c).optimize(corpus, start, seed=0, engine=dask_engine)
    assert same(local.weights, remote.weights)
    assert local.info["hessian_products"] == remote.info["hessian_products"] > 0
    assert local.info["objective"] == remote.info["objective"]


@pytest.mark.parametrize("mu", [0.5, 20.0])
def test_expected_bleu_on_workers_equals_one_process(corpus, dask_engine, mu):
    w = np.random.default_rng(1).normal(size=corpus.n_features)
    v1, g1 = ExpectedBleu(corpus).gradient(w, mu)
    v2, g2 = ExpectedBleu(corpus, engine=dask_engine).gradient(w, mu)
    assert v1 == v2 and same(g1, g2) and np.any(g1 != 0)


def test_mert_expbleu_directions_on_workers_equal_one_process(corpus, dask_engine):
    start = np.ones(corpus.n_features)
    mert = dict(directions="expbleu", restarts=1, max_iterations=12)
    local = Mert(**mert).optimize(corpus, start, seed=4, threads=1)
    remote = Mert(**mert).optimize(corpus, start, seed=4, threads=1, engine=dask_engine)
    assert same(local.weights, remote.weights) and local.score == remote.score


@pytest.mark.parametrize("metric", ["bleu+1", "pseudo-doc"])
def test_mira_shards_on_workers_equal_one_process(corpus, dask_engine, metric):
    start = np.zeros(corpus.n_features)
    opts = dict(passes=3, shards=3, sentence_metric=metric)
    local = Mira(**opts).optimize(corpus, start, seed=8, threads=1)
    remote = Mira(**opts).optimize(corpus, start, seed=8, engine=dask_engine)
    assert same(local.weights, remote.weights) and local.info["steps"] == remote.info["steps"] > 0


def test_local_engine_threads_do_not_change_mira(corpus):
    opts = dict(passes=2, shards=4)
    one = Mira(**opts).optimize(corpus, np.zeros(corpus.n_features), seed=1, engine=LocalEngine(1))
    two = Mira(**opts).optimize(corpus, np.zeros(corpus.n_features), seed=1, engine=LocalEngine(2))
    assert same(one.weights, two.weights)


def test_unreachable_scheduler_is_a_clear_error():
    with pytest.raises(InputError, match="cannot reach the dask scheduler at tcp://127.0.0.1:9"):
        connect("tcp://127.0.0.1:9", quiet=True, timeout=1)
    with pytest.raises(InputError, match="local:N with N >= 1"):
        connect("local:0", quiet=True)


def test_without_a_scheduler_nothing_imports_dask():
    """The whole example job (extract, optimizers, tune-free paths) runs without dask."""
    code = ("import sys\nfrom mtplug.cli import main\n"
            "rc = main(['example', '--quiet'])\n"
            "assert rc == 0, rc\n"
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed'))\n"
            "assert not bad, bad\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]


@pytest.mark.parametrize("algorithm, extra", [("apro", []), ("mira", ["--shards", "3", "--passes", "2"])])
def test_optimize_command_on_a_cluster_writes_the_same_weights(dask_cluster, tmp_path, algorithm, extra):
    from pathlib import Path

    from mtplug.cli import main

    example = Path(__file__).resolve().parents[2] / "mtplug" / "data" / "example"
    common = ["optimize", algorithm, "-q", "--nbest", str(example / "run1.best100.out.gz"), "--ref",
              str(example / "ref.0"), "--init", str(example / "run1.init.opt"), "--seed", "2", *extra]
    assert main([*common, "--out", str(tmp_path / "local"), "--threads", "1"]) == 0
    assert main([*common, "--out", str(tmp_path / "dask"), "--scheduler", dask_cluster.scheduler_address]) == 0
    assert (tmp_path / "local").read_bytes() == (tmp_path / "dask").read_bytes()


def test_a_worker_leaving_with_data_is_a_retry_then_an_error_not_a_hang(monkeypatch):
    """Tasks are pinned to the worker that holds their partition; if it goes, its partition is
    placed again on the other worker and the fetch goes on; with no worker left, fetch says so."""
    import logging
    import operator

    from distributed import LocalCluster

    import mtplug.distributed.dask_engine as dask_engine

    monkeypatch.setattr(dask_engine, "_ALIVE_CHECK_SECONDS", 0.5)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                      silence_logs=logging.CRITICAL) as cluster:
        with connect(cluster.scheduler_address, quiet=True) as engine:
            handles = engine.put([np.arange(2), np.arange(3)])
            assert [int(x) for x in engine.fetch(engine.run(operator.length_hint, handles))] == [2, 3]
            gone = handles[1].worker
            engine.client.retire_workers([gone], close_workers=True)
            assert [int(x) for x in engine.fetch(engine.run(operator.length_hint, handles))] == [2, 3]
            assert gone not in {h.worker for h in handles}
            cluster.scale(0)                  # every worker gone: nothing can be placed again
            deadline = time.monotonic() + 60
            while engine.client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.workers)):
                assert time.monotonic() < deadline
                time.sleep(0.1)
            with pytest.raises(InputError, match="left the cluster with data of this run and no worker is left"):
                engine.fetch(engine.run(operator.length_hint, handles))


def test_a_scheduler_without_workers_is_a_clear_error():
    import logging

    from distributed import LocalCluster

    with LocalCluster(n_workers=0, processes=False, dashboard_address=":0", silence_logs=logging.CRITICAL) as cl:
        with pytest.raises(InputError, match="has no workers"):
            connect(cl.scheduler_address, quiet=True, timeout=1)
