"""The in-process engine: every task runs here, at once, in order."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Callable


class LocalEngine:
    """Runs tasks in this process (see :mod:`mtplug.distributed` for the calls); ``run``
    and ``map`` use ``threads`` threads at once (tasks that matter release the GIL).
    partitions: how many partitions callers cut the data into (1; more only to check
    that results do not depend on it)."""

    address = None

    def __init__(self, threads: int = 1, partitions: int = 1):
        self.threads = max(1, int(threads))
        #: how many partitions the data should be cut into
        self.n_workers = max(1, int(partitions))

    def _all(self, fn: Callable, calls: list) -> list:
        if self.threads > 1 and len(calls) > 1:
            with ThreadPoolExecutor(max_workers=min(self.threads, len(calls))) as pool:
                return list(pool.map(lambda a: fn(*a), calls))
        return [fn(*a) for a in calls]

    def put(self, items: Sequence, remake: Callable[[int], object] | None = None) -> list:
        """The items themselves are the handles (nothing is copied; ``remake`` is not needed:
        nothing here can be lost)."""
        return list(items)

    def place(self, fn: Callable, jobs: Sequence) -> list:
        """``fn(job)`` for each job, in order, in this thread; the results are the handles."""
        return [fn(job) for job in jobs]

    def wait(self, handles: Sequence) -> None:
        """Nothing to wait for: every task has run when its call returned."""

    def run(self, fn: Callable, handles: Sequence, *args: Sequence) -> list:
        """``fn(handle_i, *[a[i] for a in args])`` for each handle, on up to ``threads``
        threads; the results, in order, are the new handles."""
        return self._all(fn, [(h, *(a[i] for a in args)) for i, h in enumerate(handles)])

    def fetch(self, handles: Sequence) -> list:
        """The values, in order (the handles are the values)."""
        return list(handles)

    def map(self, fn: Callable, jobs: Iterable) -> list:
        """``fn(job)`` for each job on up to ``threads`` threads; results in job order."""
        return self._all(fn, [(job,) for job in jobs])

    def as_done(self, fn: Callable, jobs: Sequence) -> Iterator[tuple[int, object]]:
        """``(i, fn(job_i))`` for each job, in order, in this thread, as each one ends."""
        for i, job in enumerate(jobs):
            yield i, fn(job)

    def describe(self) -> str:
        """One line for the log: where tasks run and on how many threads."""
        return f"running in this process ({self.threads} thread{'s' if self.threads > 1 else ''})"

    def threads_of(self, i: int) -> int | None:
        """Kernel threads for partition i (None: the caller's default)."""
        return None

    def close(self) -> None:
        """Nothing to release (the engine holds no threads between calls)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
