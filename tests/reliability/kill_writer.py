#!/usr/bin/env python3
"""Run ``mtplug`` with every output file SIGKILLing the process at its K-th write.

    kill_writer.py K ARGS...      (ARGS as for the mtplug command line)

The hook wraps the file objects that :func:`mtplug.fileio.atomic_output` opens, so a
writer dies with part of its output written: what a crash or kill -9 does.
"""

from __future__ import annotations

import os
import signal
import sys

import mtplug.fileio as fileio

K = int(sys.argv[1])
_count = 0
_fdopen = os.fdopen


class _Dying:
    def __init__(self, fh):
        self._fh = fh

    def write(self, data):
        global _count
        _count += 1
        if _count == K:
            n = self._fh.write(data[: max(1, len(data) // 2)])  # half of this write reaches the file
            self._fh.flush()
            os.kill(os.getpid(), signal.SIGKILL)
            return n
        return self._fh.write(data)

    def __getattr__(self, name):
        return getattr(self._fh, name)

    def __enter__(self):
        self._fh.__enter__()
        return self

    def __exit__(self, *exc):
        return self._fh.__exit__(*exc)


class _OsProxy:
    """mtplug.fileio's ``os`` with a dying fdopen (the real module stays untouched)."""

    def __getattr__(self, name):
        if name == "fdopen":
            return lambda *a, **k: _Dying(_fdopen(*a, **k))
        return getattr(os, name)


fileio.os = _OsProxy()

if __name__ == "__main__":
    from mtplug.cli import main

    sys.exit(main(sys.argv[2:]))
