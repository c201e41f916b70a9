#!/usr/bin/env python3
"""The Moses front end of mtplug's stand-in decoder (mtplug/tuning/standin.py), plus a test hook.

Hook: env STANDIN_KILL_PARENT=COUNTFILE:K counts calls (COUNTFILE.1, .2, ...) and, on the
K-th call, SIGKILLs the parent process (a kill -9 of a tuning loop in mid-decoding).
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from mtplug.tuning import standin  # noqa: E402  (stdlib only: mtplug/__init__ imports nothing)


def kill_parent_hook() -> None:
    spec = os.environ.get("STANDIN_KILL_PARENT")
    if not spec:
        return
    path, _, k = spec.rpartition(":")
    count = 1
    while True:  # exclusive creation counts concurrent calls exactly
        try:
            os.close(os.open(f"{path}.{count}", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            break
        except FileExistsError:
            count += 1
    if count == int(k):
        os.kill(os.getppid(), signal.SIGKILL)


if __name__ == "__main__":
    kill_parent_hook()
    sys.exit(standin.main(["moses", *sys.argv[1:]]))
