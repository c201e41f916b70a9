"""The dask.distributed engine (``--scheduler ADDRESS``): tasks run on the cluster's workers.

Partitions are placed once, one per worker in turn (``put``), and every task on a
partition runs on the worker that holds it (``run``), so the data crosses the network
once and per-call traffic is the per-hypothesis vectors only. Workers must have the same
mtplug installed (they import it to run the kernels) and, for decoding, see the same
paths as this machine (a shared file system).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Sequence
from typing import Callable

import numpy as np
from distributed import Client, LocalCluster, wait

from .._version import __version__
from ..errors import InputError

#: arrays larger than this (bytes) are scattered to their worker instead of riding in
#: the task message, which dask warns about and copies through the scheduler
_SCATTER_BYTES = 1 << 20
#: how often a wait for results checks that the workers holding the data are still there
_ALIVE_CHECK_SECONDS = 5.0


class Placed:
    """A future on the cluster and the worker that holds (or computes) it."""

    __slots__ = ("future", "worker")

    def __init__(self, future, worker: str):
        self.future = future
        self.worker = worker


def worker_version() -> str:
    """mtplug's version on the machine that calls this (run on every worker)."""
    return __version__


def _done(_) -> None:
    return None


class DaskEngine:
    """Runs tasks on the workers of a dask.distributed cluster (see :mod:`mtplug.distributed`).

    Made by :meth:`connect`. ``client``: a connected dask ``Client``; ``cluster``: the
    LocalCluster it runs (closed with the engine), or None; ``address``: the scheduler
    address, for messages. InputError when the scheduler has no workers, a worker cannot
    import mtplug, or a worker runs another mtplug version.
    """

    def __init__(self, client: Client, cluster: LocalCluster | None = None, address: str = ""):
        self.client = client
        self._cluster = cluster
        self.address = address
        info = client.scheduler_info()["workers"]
        if not info:
            raise InputError(f"the dask scheduler at {address} has no workers")
        self.workers = sorted(info)
        nthreads = client.nthreads()
        self._nthreads = [max(1, int(nthreads.get(w, 1))) for w in self.workers]
        try:
            versions = client.run(worker_version)
        except ImportError as exc:  # the worker cannot unpickle a function of mtplug
            raise InputError(f"a dask worker cannot import mtplug ({exc}): install it on every worker") from None
        other = {w: v for w, v in versions.items() if v != __version__}
        if other:
            w, v = next(iter(other.items()))
            raise InputError(f"worker {w} runs mtplug {v}, this machine {__version__}: install the same "
                             f"version everywhere")

    @classmethod
    def connect(cls, address: str, *, quiet: bool = False, timeout: float = 30.0) -> DaskEngine:
        """Connect to ``address``: ``tcp://host:port`` (or ``host:port``), a scheduler file
        (``dask scheduler --scheduler-file F``), or ``local:N`` for a LocalCluster of N
        worker processes with one thread each (N defaults to the number of cores).
        timeout: seconds to wait for the scheduler."""
        cluster = None
        try:
            if address.startswith("local"):
                count = address.partition(":")[2]
                n = int(count) if count else (os.cpu_count() or 1)
                if n < 1:
                    raise ValueError
                cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                       dashboard_address=":0",
                                       silence_logs=logging.ERROR if quiet else logging.WARNING)
                client = Client(cluster)
            elif os.path.isfile(address):
                client = Client(scheduler_file=address, timeout=timeout)
            else:
                client = Client(address, timeout=timeout)
        except ValueError:
            raise InputError(f"expected local:N with N >= 1, got {address!r}") from None
        except (OSError, TimeoutError) as exc:
            if cluster is not None:
                cluster.close()
            raise InputError(f"cannot reach the dask scheduler at {address} ({exc})") from None
        try:
            try:
                client.wait_for_workers(1, timeout=timeout)  # a cluster that is still starting
            except TimeoutError:
                pass                                         # reported below as "no workers"
            engine = cls(client, cluster, address)
        except Exception:
            client.close()
            if cluster is not None:
                cluster.close()
            raise
        return engine

    def describe(self) -> str:
        """One line for the log: the workers, their threads and the scheduler address."""
        scheduler = self.client.scheduler  # None only once the client is closed
        where = self.address if scheduler is None else scheduler.address
        return (f"dask: {len(self.workers)} worker{'s' if len(self.workers) > 1 else ''} "
                f"({sum(self._nthreads)} threads) at {where}")

    @property
    def n_workers(self) -> int:
        """Workers of the cluster when the engine connected: how many partitions callers cut the data into."""
        return len(self.workers)

    def threads_of(self, i: int) -> int:
        """Threads of the worker that holds partition i."""
        return self._nthreads[i % len(self.workers)]

    def put(self, items: Sequence) -> list:
        """Scatter item i to worker i mod n_workers, once; handles (:class:`Placed`) in order."""
        handles = []
        for i, item in enumerate(items):
            w = self.workers[i % len(self.workers)]
            handles.append(Placed(self.client.scatter(item, workers=[w], direct=False, hash=False), w))
        return handles

    def place(self, fn: Callable, jobs: Sequence) -> list:
        """Run ``fn(job_i)`` on worker i mod n_workers and keep the result there (a worker
        reads its own partition); waits until all are done, so their errors raise here."""
        handles = []
        for i, job in enumerate(jobs):
            w = self.workers[i % len(self.workers)]
            handles.append(Placed(self.client.submit(fn, job, workers=[w], allow_other_workers=False, pure=False),
                                  w))
        self.wait(handles)      # errors (a worker that cannot read the data) show up here
        return handles

    def wait(self, handles: Sequence) -> None:
        """Until every task of ``handles`` is done; raises its error. Nothing travels back."""
        self.fetch([Placed(self.client.submit(_done, h.future, workers=[h.worker], pure=False), h.worker)
                    for h in handles])

    def run(self, fn: Callable, handles: Sequence, *args: Sequence) -> list:
        """Submit ``fn(item_i, *[a[i] for a in args])`` to the worker that holds item i; arrays
        above 1 MiB among the arguments are scattered to it first. Returns handles to the
        results, which stay on the workers (:meth:`fetch` them)."""
        out = []
        for i, h in enumerate(handles):
            w = h.worker
            values = []
            for a in args:
                v = a[i]
                if isinstance(v, Placed):
                    v = v.future
                elif isinstance(v, np.ndarray) and v.nbytes > _SCATTER_BYTES:
                    v = self.client.scatter(v, workers=[w], direct=False, hash=False)
                values.append(v)
            fut = self.client.submit(fn, h.future, *values, workers=[w], allow_other_workers=False, pure=False)
            out.append(Placed(fut, w))
        return out

    def fetch(self, handles: Sequence) -> list:
        """The values, in order. A task pinned to a worker that has left the cluster would
        wait for it forever, so while waiting the workers are checked every few seconds."""
        futures = [h.future for h in handles]
        while True:
            try:
                wait(futures, timeout=_ALIVE_CHECK_SECONDS)
                break
            except TimeoutError:
                alive = set(self.client.scheduler_info()["workers"])
                gone = sorted({h.worker for h in handles if not h.future.done()} - alive)
                if gone:
                    raise InputError(f"dask worker {gone[0]} left the cluster with data of this run; "
                                     f"start again (with --resume for mtplug tune)") from None
        return self.client.gather(futures)

    def map(self, fn: Callable, jobs: Iterable) -> list:
        """``fn(job)`` for independent jobs on any workers; the values, in job order."""
        jobs = list(jobs)
        if not jobs:
            return []
        return self.client.gather(self.client.map(fn, jobs, pure=False))

    def close(self) -> None:
        """Disconnect from the scheduler and shut down the LocalCluster this engine started (if any)."""
        self.client.close()
        if self._cluster is not None:
            self._cluster.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
