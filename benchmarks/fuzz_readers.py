#!/usr/bin/env python3
"""Long fuzz run of every reader (the bad-input contract at scale).

    python benchmarks/fuzz_readers.py [--inputs 100000] [--seed 0] [--reader NAME ...]

Each input is a seeded mutation of the reader's valid sample (tests/reliability/
fuzz_readers.py); the run stops at the first input for which something other than
mtplug's InputError (naming a file) escapes, printing it. Prints per reader: inputs,
read / refused, inputs per second.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tests.reliability.fuzz_readers import SAMPLES, Fuzzer, mutate  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--inputs", type=int, default=100_000, help="inputs per reader (default 100000)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--reader", nargs="+", choices=sorted(SAMPLES), default=sorted(SAMPLES))
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="mtplug-fuzz-") as d:
        fuzzer = Fuzzer(d)
        for reader in args.reader:
            rng = random.Random(f"{args.seed}:{reader}")
            counts = {"read": 0, "refused": 0}
            t0 = time.perf_counter()
            for i in range(args.inputs):
                data = mutate(SAMPLES[reader], rng)
                try:
                    counts[fuzzer.check(reader, data)] += 1
                except AssertionError as err:
                    print(f"{reader}: FAILED at input {i}: {err}", flush=True)
                    return 1
            dt = time.perf_counter() - t0
            print(f"{reader:13s} {args.inputs:8d} inputs  read {counts['read']:7d}  refused {counts['refused']:7d}  "
                  f"{args.inputs / dt:8.0f} inputs/s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
