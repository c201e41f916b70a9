#!/usr/bin/env python3
"""A faulty decoder: the Moses front end of mtplug's stand-in decoder (mtplug/tuning/standin.py)
with one fault injected, for the fault-injection tests of ``mtplug tune`` (tests/faults/).

Environment:

* ``FAULT``: ``none`` (default: the stand-in as it is), ``crash`` (exit 3 at once, with one
  line on stderr), ``hang`` (never ends), ``partial`` (the n-best list's last line loses its
  score field, exit 0) or ``slow`` (waits ``FAULT_SLEEP`` seconds, default 2, then decodes);
* ``FAULT_SHARD``: the shard (``shardK.in``) the fault hits (default: every shard); other
  shards decode normally, or with ``FAULT_OTHERS=hang`` never end;
* ``FAULT_ITERATION``: the iteration (``iterNNN``) the fault hits (default: every one);
* ``FAULT_AWAIT``: with ``crash``, first wait until ``FAULT_PIDS`` names this many
  processes (its own two included), so that the other shards have started theirs;
* ``FAULT_PIDS``: a file to which every call appends ``pid iterNNN decoder`` for itself and
  ``pid iterNNN child`` for a child it starts (a ``sleep`` in its process group, as a
  wrapper script's decoder would be), so that a test can check none of them is left running.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from mtplug.tuning import standin  # stdlib only: mtplug/__init__ imports nothing


def _value(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


def _note(pid: int, where: str, role: str) -> None:
    path = os.environ.get("FAULT_PIDS")
    if path:
        with open(path, "a") as fh:
            fh.write(f"{pid} {where} {role}\n")


def _await_noted(count: int, limit: float = 30.0) -> None:
    """Wait (at most ``limit`` s) until ``FAULT_PIDS`` names ``count`` processes: a crash
    that other shards' processes must see started (on a loaded machine they may start
    after it)."""
    path = os.environ.get("FAULT_PIDS")
    deadline = time.monotonic() + limit
    while path and count and time.monotonic() < deadline:
        if os.path.exists(path) and len(Path(path).read_text().splitlines()) >= count:
            return
        time.sleep(0.05)


def main(argv: list[str]) -> int:
    shard_input = Path(_value(argv, "-input-file"))
    shard = shard_input.stem                     # shard0, shard1, ...
    iteration = shard_input.parent.parent.name   # iterNNN/decode-XXXX/shardK.in
    target = os.environ.get("FAULT_SHARD")
    fault = os.environ.get("FAULT", "none")
    if target is not None and shard != f"shard{target}":
        fault = os.environ.get("FAULT_OTHERS", "none")
    if os.environ.get("FAULT_ITERATION", iteration) != iteration:
        fault = "none"
    if fault == "none":
        return standin.main(["moses", *argv])
    child = subprocess.Popen(["sleep", "300"])   # left behind unless its process group is killed
    _note(os.getpid(), iteration, "decoder")
    _note(child.pid, iteration, "child")
    if fault == "crash":
        _await_noted(int(os.environ.get("FAULT_AWAIT", "0")))
        print("faulty_decoder: segmentation fault (injected)", file=sys.stderr, flush=True)
        return 3
    if fault == "hang":
        time.sleep(300)
        return 0
    if fault == "slow":
        time.sleep(float(os.environ.get("FAULT_SLEEP", "2")))
        return standin.main(["moses", *argv])
    if fault == "partial":
        rc = standin.main(["moses", *argv])
        nbest = Path(_value(argv, "-n-best-list"))
        lines = nbest.read_text().splitlines(keepends=True)
        lines[-1] = lines[-1].rsplit(" ||| ", 1)[0] + "\n"   # cut short: no score field
        nbest.write_text("".join(lines))
        return rc
    raise SystemExit(f"faulty_decoder: unknown FAULT {fault!r}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
