"""Issue 36, item 6: a dask worker killed (SIGKILL) while an optimizer pass or a decoder shard
runs on it. The partitions it held are placed again on the other worker (scattered again
from the corpus held by the client, or read again from the store's path) and the optimizer
ends with the weights of an undisturbed run; a decoder shard runs again elsewhere, the dead
worker's decoder is stopped (its process group) and never writes the retry's file; a shard
that fails is reported at once and the others are stopped."""

from __future__ import annotations

import logging
import os
import shlex
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("distributed")

from mtplug.decoders.base import ShardRun
from mtplug.distributed import connect
from mtplug.distributed.pool import PartitionedPool
from mtplug.errors import InputError
from mtplug.optimizers.apro import Apro
from mtplug.tuning.loop import _decode_on, run_shard_remotely
from tests.reference.random_store import random_store


@pytest.fixture
def engine(monkeypatch):
    """A DaskEngine on a LocalCluster of its own (2 worker processes under nannies)."""
    from distributed import LocalCluster

    import mtplug.distributed.dask_engine as dask_engine

    monkeypatch.setattr(dask_engine, "_ALIVE_CHECK_SECONDS", 0.5)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                      silence_logs=logging.CRITICAL) as cluster, connect(cluster.scheduler_address, quiet=True) as eng:
        yield eng


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def gone_soon(pids, seconds: float = 30.0) -> bool:
    """Whether every pid has ended within ``seconds`` (a deadline, not a timing assertion)."""
    deadline = time.monotonic() + seconds
    while any(alive(p) for p in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def kill_worker(engine, worker: str) -> None:
    os.kill(engine.client.run(os.getpid)[worker], signal.SIGKILL)


def kill_during_fetch(engine, monkeypatch, call: int) -> list:
    """SIGKILL the worker of the second partition at the ``call``-th fetch; returns [killed]."""
    real, calls, killed = engine.fetch, [0], []

    def fetch(handles):
        calls[0] += 1
        if calls[0] == call:
            victim = engine.workers[1]
            kill_worker(engine, victim)
            killed.append(victim)
        return real(handles)

    monkeypatch.setattr(engine, "fetch", fetch)
    return killed


@pytest.fixture(scope="module")
def corpus():
    sizes = tuple(int(x) for x in np.random.default_rng(5).integers(1, 30, 70))
    return random_store(11, sizes=sizes, gaussian=True)


def test_apro_goes_on_when_a_worker_is_killed_during_a_pass(corpus, engine, monkeypatch):
    start = np.linspace(-1, 1, corpus.n_features)
    local = Apro(c=1.0).optimize(corpus, start, seed=0, threads=1)
    killed = kill_during_fetch(engine, monkeypatch, 4)
    remote = Apro(c=1.0).optimize(corpus, start, seed=0, engine=engine)
    assert killed and killed[0] not in engine.workers
    assert remote.weights.tobytes() == local.weights.tobytes()
    assert remote.info["objective"] == local.info["objective"]


def test_a_pool_read_from_the_store_is_read_again_by_another_worker(corpus, engine, monkeypatch, tmp_path):
    path = str(tmp_path / "store.npz")
    corpus.save(path)
    start = np.linspace(-1, 1, corpus.n_features)
    local = Apro(c=1.0).optimize(corpus, start, seed=0, threads=1)
    pool = PartitionedPool.from_store(path, engine)
    killed = kill_during_fetch(engine, monkeypatch, 6)
    remote = Apro(c=1.0).optimize(pool, start, seed=0, engine=engine)
    assert killed and {h.worker for h in pool.parts} <= set(engine.workers)
    assert remote.weights.tobytes() == local.weights.tobytes()


# ----------------------------------------------------------------------- decoder shards
#: a decoder (sh) that notes its pid and its child's in PIDS; the first attempt of a shard
#: hangs (its child sleeps), a later one prints its n-best line at once
DECODER = ('echo $$ >> "$PIDS"; if [ -e "$FIRST" ]; then echo "0 ||| retry ||| a=1 ||| 0"; '
           'else : > "$FIRST"; sleep 300 & echo $! >> "$PIDS"; wait; fi')


def shard(tmp_path: Path, k: int, script: str) -> ShardRun:
    """Shard k's run of ``script`` (the workers do not see this process's environment: the
    file names are set in the command)."""
    out = str(tmp_path / f"shard{k}.out")
    env = f'PIDS={shlex.quote(str(tmp_path / "pids"))}; FIRST={shlex.quote(str(tmp_path / "first"))}; '
    return ShardRun(["sh", "-c", env + script], None, out, out)


def pids_of(path: Path, at_least: int, seconds: float = 60.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while not path.exists() or len(path.read_text().split()) < at_least:
        assert time.monotonic() < deadline, "the decoder did not start"
        time.sleep(0.05)
    return [int(p) for p in path.read_text().split()]


def test_a_shard_on_a_killed_worker_runs_again_and_its_decoder_is_stopped(engine, tmp_path):
    run = shard(tmp_path, 0, DECODER)
    results = engine.as_done(run_shard_remotely, [(run, str(tmp_path / "shard0.err"), 600.0)])
    got = []
    waiter = threading.Thread(target=lambda: got.extend(results))
    waiter.start()
    first = pids_of(tmp_path / "pids", 2)           # the hanging attempt: sh and its sleep
    with open(f"/proc/{first[0]}/stat") as fh:          # the decoder's parent: the worker
        worker_pid = int(fh.read().rsplit(")", 1)[1].split()[1])
    os.kill(worker_pid, signal.SIGKILL)
    waiter.join(120)
    assert got == [(0, (0, "", False))]
    assert gone_soon(first), "the dead worker's decoder was left running"
    assert Path(run.stdout).read_text() == "0 ||| retry ||| a=1 ||| 0\n"
    # what is left of the killed attempt is its own files (the decode folder is scratch)
    left = [p for p in os.listdir(tmp_path) if ".attempt-" in p]
    assert len({p.rsplit(".attempt-", 1)[1] for p in left}) <= 1
    assert all((tmp_path / p).read_text() == "" for p in left if p.startswith("shard0.out"))


def test_a_failed_shard_on_dask_is_reported_at_once_and_the_others_stopped(engine, tmp_path):
    hang = 'echo $$ >> "$PIDS"; sleep 300 & echo $! >> "$PIDS"; wait'
    crash = 'while [ ! -s "$PIDS" ]; do sleep 0.05; done; echo "segmentation fault (injected)" >&2; exit 3'
    runs = [(0, ["a"], shard(tmp_path, 0, hang)), (1, ["b"], shard(tmp_path, 1, crash))]
    with pytest.raises(InputError, match="the decoder exited with status 3 on shard 1") as caught:
        _decode_on(engine, runs, str(tmp_path), None, 600.0)
    assert "segmentation fault (injected)" in str(caught.value)
    assert gone_soon(pids_of(tmp_path / "pids", 2)), "the hanging shard's process group was left running"
