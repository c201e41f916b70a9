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
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import CancelledError
from typing import Callable

import numpy as np
from distributed import Client, LocalCluster, as_completed, wait
from distributed.comm.core import CommClosedError
from distributed.scheduler import KilledWorker

from .._version import __version__
from ..errors import InputError

#: arrays larger than this (bytes) are scattered to their worker instead of riding in
#: the task message, which dask warns about and copies through the scheduler
_SCATTER_BYTES = 1 << 20
#: how often a wait for results checks that the workers holding the data are still there
_ALIVE_CHECK_SECONDS = 5.0


#: how many times one fetch re-places what lost workers held before it gives up
_REPLACE_ROUNDS = 3


class Placed:
    """A future on the cluster, the worker that holds (or computes) it, and how to make it
    again on another worker when that one leaves the cluster: ``index`` (the partition it
    belongs to, which picks the new worker) and ``recipe``, ``("item", make)`` (``make()``
    gives the data again, e.g. sliced from the corpus this process holds) or ``("task", fn,
    args)`` (``fn(*args)``, whose Placed arguments are made again first); None: it cannot
    be made again."""

    __slots__ = ("future", "index", "recipe", "worker")

    def __init__(self, future, worker: str, index: int = 0, recipe: tuple | None = None):
        self.future = future
        self.worker = worker
        self.index = index
        self.recipe = recipe


class _Lost(Exception):
    """A result of a fetch is lost with a worker that left the cluster."""


def worker_version() -> str:
    """mtplug's version on the machine that calls this (run on every worker)."""
    return __version__


def _done(_) -> None:
    return None


def _scheduler_workers(dask_scheduler) -> list[str]:
    """Run on the scheduler: the addresses of its workers now."""
    return list(dask_scheduler.workers)


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

    def put(self, items: Sequence, remake: Callable[[int], object] | None = None) -> list:
        """Scatter item i to worker i mod n_workers, once; handles (:class:`Placed`) in order.
        ``remake(i)`` gives item i again when its worker leaves the cluster (default: the
        item itself, kept here)."""
        handles = []
        for i, item in enumerate(items):
            w = self.workers[i % len(self.workers)]
            make = (lambda i=i: remake(i)) if remake is not None else (lambda item=item: item)
            handles.append(Placed(self.client.scatter(item, workers=[w], direct=False, hash=False), w, i,
                                  ("item", make)))
        return handles

    def place(self, fn: Callable, jobs: Sequence) -> list:
        """Run ``fn(job_i)`` on worker i mod n_workers and keep the result there (a worker
        reads its own partition); waits until all are done, so their errors raise here.
        A worker that leaves the cluster: its jobs run again on another."""
        handles = []
        for i, job in enumerate(jobs):
            w = self.workers[i % len(self.workers)]
            handles.append(Placed(self.client.submit(fn, job, workers=[w], allow_other_workers=False, pure=False),
                                  w, i, ("task", fn, (job,))))
        self.wait(handles)      # errors (a worker that cannot read the data) show up here
        return handles

    def wait(self, handles: Sequence) -> None:
        """Until every task of ``handles`` is done; raises its error. Nothing travels back."""
        self.fetch([self._submit(_done, (h,), h.worker, h.index) for h in handles])

    def _argument(self, v, worker: str):
        """What a task on ``worker`` gets for the argument ``v``: a Placed's future, a large
        array scattered to that worker first, any other value itself."""
        if isinstance(v, Placed):
            return v.future
        if isinstance(v, np.ndarray) and v.nbytes > _SCATTER_BYTES:
            return self.client.scatter(v, workers=[worker], direct=False, hash=False)
        return v

    def _submit(self, fn: Callable, args: tuple, worker: str, index: int) -> Placed:
        fut = self.client.submit(fn, *(self._argument(v, worker) for v in args), workers=[worker],
                                 allow_other_workers=False, pure=False)
        return Placed(fut, worker, index, ("task", fn, args))

    def run(self, fn: Callable, handles: Sequence, *args: Sequence) -> list:
        """Submit ``fn(item_i, *[a[i] for a in args])`` to the worker that holds item i; arrays
        above 1 MiB among the arguments are scattered to it first. Returns handles to the
        results, which stay on the workers (:meth:`fetch` them)."""
        return [self._submit(fn, (h, *(a[i] for a in args)), h.worker, h.index) for i, h in enumerate(handles)]

    # ------------------------------------------------------------------ lost workers
    def _alive(self) -> list[str]:
        """The workers the scheduler has now (asked, not the client's periodic copy)."""
        return sorted(self.client.run_on_scheduler(_scheduler_workers))

    @staticmethod
    def _lineage(handles: Sequence) -> list:
        """``handles`` and every Placed they were made from, each once."""
        seen: dict[int, Placed] = {}
        todo = list(handles)
        while todo:
            h = todo.pop()
            if id(h) in seen:
                continue
            seen[id(h)] = h
            if h.recipe is not None and h.recipe[0] == "task":
                todo.extend(v for v in h.recipe[2] if isinstance(v, Placed))
        return list(seen.values())

    def _replace(self, handles: Sequence, gone: str) -> None:
        """Make again, on the workers still there, every handle (and what it was made from)
        that a worker took with it when it left; InputError when no worker is left or a
        handle cannot be made again."""
        alive = self._alive()
        lost = [h for h in self._lineage(handles) if h.worker not in alive or h.future.status in ("lost", "cancelled")]
        gone = next((h.worker for h in lost if h.worker not in alive), gone)
        if not alive or any(h.recipe is None for h in lost):
            raise InputError(f"dask worker {gone} left the cluster with data of this run"
                             f"{' and no worker is left' if not alive else ''}; start again (with --resume for "
                             f"mtplug tune)")
        remade: set[int] = set()
        lost_ids = {id(h) for h in lost}

        def remake(h: Placed) -> None:
            if id(h) in remade:
                return
            assert h.recipe is not None
            w = alive[h.index % len(alive)]
            if h.recipe[0] == "item":
                fut = self.client.scatter(h.recipe[1](), workers=[w], direct=False, hash=False)
            else:
                _, fn, args = h.recipe
                for v in args:
                    if isinstance(v, Placed) and id(v) in lost_ids:
                        remake(v)
                fut = self.client.submit(fn, *(self._argument(v, w) for v in args), workers=[w],
                                         allow_other_workers=False, pure=False)
            h.future, h.worker = fut, w
            remade.add(id(h))

        for h in lost:
            remake(h)
        if self.workers != alive:
            self.workers = alive

    def _gather(self, handles: Sequence) -> list:
        """The values of ``handles``; _Lost (with the worker) when one is lost with its worker.
        A task pinned to a worker that has left the cluster would wait for it forever, so
        while waiting the workers are checked every few seconds."""
        futures = [h.future for h in handles]
        while True:
            try:
                wait(futures, timeout=_ALIVE_CHECK_SECONDS)
                break
            except CancelledError:     # "lost dependencies": what a task needed left with a worker
                raise _Lost(self._first_lost(handles)) from None
            except TimeoutError:
                pending = [h for h in handles if not h.future.done()]
                alive = set(self._alive())
                gone = sorted({h.worker for h in self._lineage(pending)} - alive)
                if gone:
                    raise _Lost(gone[0]) from None
        if any(f.status in ("lost", "cancelled") for f in futures):
            raise _Lost(self._first_lost(handles))
        try:
            return self.client.gather(futures)
        except (CancelledError, KilledWorker, CommClosedError):
            raise _Lost(self._first_lost(handles)) from None

    def _first_lost(self, handles: Sequence) -> str:
        """For messages: a worker that left with (what went into) one of ``handles``."""
        alive = set(self._alive())
        gone = sorted({h.worker for h in self._lineage(handles)} - alive)
        return gone[0] if gone else next((h.worker for h in handles if h.future.status != "finished"),
                                         handles[0].worker if handles else "?")

    def fetch(self, handles: Sequence) -> list:
        """The values, in order. What a worker that left the cluster held is made again on
        the others (:class:`Placed` recipes) and the fetch tried again; InputError naming
        the worker when that is not possible."""
        handles = list(handles)
        for _ in range(_REPLACE_ROUNDS):
            try:
                return self._gather(handles)
            except _Lost as lost:
                self._replace(handles, str(lost))
        try:
            return self._gather(handles)
        except _Lost as lost:
            raise InputError(f"dask worker {lost} left the cluster with data of this run; start again "
                             f"(with --resume for mtplug tune)") from None

    def as_done(self, fn: Callable, jobs: Sequence) -> Iterator[tuple[int, object]]:
        """``(i, fn(job_i))`` for independent jobs on any workers, as each one ends (dask runs
        a job again elsewhere when its worker leaves the cluster); closing the generator
        early (the caller stops at a failure) cancels the jobs that have not ended."""
        futures = self.client.map(fn, list(jobs), pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        try:
            for fut in as_completed(futures):
                try:
                    value = fut.result()
                except KilledWorker as exc:
                    raise InputError(f"dask workers kept dying while running a job ({exc})") from None
                yield index[fut.key], value
        finally:
            pending = [f for f in futures if not f.done()]
            if pending:
                self.client.cancel(pending)

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
