#!/usr/bin/env python3
"""A faulty persistent decoder for ``mtplug dtrain``: the stand-in's cdec front end
(mtplug/tuning/standin.py) with ``--mr_mira_compat``, which answers ``FAULT_AFTER`` input
lines (default 0) and then meets its fault on the next one:

* ``FAULT=crash``: one line on stderr, exit status 3;
* ``FAULT=hang``: never answers (sleeps);
* ``FAULT=garbage``: answers ``not a k-best list`` and goes on reading.

``FAULT_PIDS``: a file to which it writes its pid and that of a child (a ``sleep`` in its
process group, as a wrapper script's decoder would be), so that a test can check that
none is left running. Every other argument goes to the stand-in.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from mtplug.tuning import standin  # stdlib only: mtplug/__init__ imports nothing


class _Faulty(io.TextIOBase):
    """stdin for the stand-in: the first FAULT_AFTER lines pass, the next one meets the fault."""

    def __init__(self, after: int, fault: str):
        self.after, self.fault, self.seen = after, fault, 0

    def readline(self, size=-1) -> str:
        line = sys.stdin.readline()
        if not line:
            return line
        if self.seen == self.after:
            if self.fault == "crash":
                sys.stderr.write("faulty_cdec: crashed on purpose\n")
                sys.stderr.flush()
                os._exit(3)
            if self.fault == "hang":
                while True:
                    time.sleep(60)
            if self.fault == "garbage":
                sys.stdout.write("not a k-best list\n")
                sys.stdout.flush()
        self.seen += 1
        return line


def main() -> int:
    pids = os.environ.get("FAULT_PIDS")
    if pids:
        child = subprocess.Popen(["sleep", "300"])
        Path(pids).write_text(f"{os.getpid()}\n{child.pid}\n")
    fault = os.environ.get("FAULT", "none")
    stdin = _Faulty(int(os.environ.get("FAULT_AFTER", "0")), fault) if fault != "none" else sys.stdin
    return standin.main_cdec(sys.argv[1:], stdin=stdin)


if __name__ == "__main__":
    sys.exit(main())
