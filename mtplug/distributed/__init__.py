"""Where partition tasks run: in this process, or on dask.distributed workers.

:class:`LocalEngine` (the default) runs every task here. :func:`connect` returns a
:class:`~mtplug.distributed.dask_engine.DaskEngine` on a dask scheduler; it is the only
place that imports dask, so without ``--scheduler`` nothing does.

Both engines offer the same calls, so an optimizer writes its distributed code once:

- ``put(items)`` → handles: place each item (a partition of the data) on a worker, once;
- ``place(fn, jobs)`` → handles: ``fn(job_i)`` run on the worker that will hold item i
  (a worker reads its own partition), results left there;
- ``run(fn, handles, *args)`` → handles: ``fn(item_i, *[a[i] for a in args])`` next to
  item i (each ``args`` entry is a list with one value per handle), results left there;
- ``fetch(handles)`` → values, in order;
- ``wait(handles)``: until the tasks are done (their errors raised), nothing fetched;
- ``map(fn, jobs)`` → values: ``fn(job)`` for independent jobs, anywhere, results in order;
- ``as_done(fn, jobs)`` → ``(i, fn(job_i))`` as each independent job ends (stop early:
  the rest are cancelled).

On dask, a worker that leaves the cluster (killed, its machine lost) takes what it held
with it: the partitions it held are placed again on the other workers (scattered again
from the corpus this process holds, or read again from the store's path by another
worker), the results derived from them computed again there, and the fetch goes on; where
that cannot be done (no worker left) the run ends in one line, ``dask worker ADDRESS left
the cluster with data of this run; start again (with --resume for mtplug tune)``.

Results never depend on the engine or the number of workers: callers split work into
partitions whose results are combined in a fixed order.
"""

from __future__ import annotations

from .local import LocalEngine


def connect(address: str, *, quiet: bool = False, timeout: float = 30.0):
    """A dask engine on the scheduler at ``address`` (``tcp://host:8786``, a scheduler
    file path, or ``local:N`` for a fresh LocalCluster of N worker processes); InputError
    when dask is not installed or the scheduler cannot be reached in ``timeout`` seconds."""
    try:
        from .dask_engine import DaskEngine  # imports dask
    except ImportError as exc:
        from ..errors import InputError

        raise InputError(f"--scheduler needs dask.distributed ({exc}): pip install 'mtplug[distributed]'") from None
    return DaskEngine.connect(address, quiet=quiet, timeout=timeout)


def engine_for(address: str | None, *, quiet: bool = False):
    """``connect(address)`` when an address is given, else a :class:`LocalEngine`."""
    return connect(address, quiet=quiet) if address else LocalEngine()


__all__ = ["LocalEngine", "connect", "engine_for"]
