#!/usr/bin/env python3
"""The stand-in decoder (mtplug/tuning/standin.py) made as slow as a real one: it burns
``$STANDIN_MS_PER_LINE`` ms of CPU per input line (default 20) before decoding, so that
benchmarks/bench_dask.py measures shard scheduling against decoding work, not start-up."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mtplug.tuning import standin  # noqa: E402


def burn(seconds: float) -> None:
    end = time.process_time() + seconds
    x = 0
    while time.process_time() < end:
        x += 1


if __name__ == "__main__":
    args = sys.argv[1:]
    src = args[args.index("-input-file") + 1]
    with open(src, encoding="utf-8") as fh:
        lines = sum(1 for _ in fh)
    burn(lines * float(os.environ.get("STANDIN_MS_PER_LINE", "20")) / 1000)
    sys.exit(standin.main(args))
