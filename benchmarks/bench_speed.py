"""Issue 23's speed targets in one run: every section measures mtplug beside the anchor
program (Moses's or cdec's) in this invocation, on the same files, and says whether the
target is met and whether the outputs are identical.

    python benchmarks/bench_speed.py --moses-bin ~/mosesdecoder/bin --cdec-dir ~/cdec/build \
        [--data benchmarks/out/synth-2000x1000] [--sections extract pro kbmira apro mert] \
        [--sentences N] [--json benchmarks/out/speed.json]

The data is benchmarks/synth.py's 2,000 × 1,000 × 15 set (made into --data when it is
missing, about 2 minutes). Without --moses-bin / --cdec-dir the anchors are skipped and
only mtplug's figures are printed. Sections: benchmarks/speed_<name>.py, each with
``measure(ctx) -> list[SpeedRow]`` (benchmarks/_speed.py).
"""

from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from _speed import SpeedContext, SpeedRow, print_rows, write_rows  # noqa: E402

SECTIONS = ("extract", "pro", "kbmira", "apro", "mert")


def ensure_data(path: str) -> None:
    """Make the synthetic set at ``path`` unless its n-best list is there."""
    if not os.path.exists(os.path.join(path, "nbest.txt")):
        subprocess.run([sys.executable, os.path.join(HERE, "synth.py"), path], check=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=os.path.join(HERE, "out", "synth-2000x1000"))
    ap.add_argument("--work", default=os.path.join(HERE, "out", "speed"))
    ap.add_argument("--moses-bin", help="Moses's bin/ folder (extractor, mert, pro, kbmira)")
    ap.add_argument("--cdec-dir", help="cdec's build folder (training/dpmert/mr_dpmert_map)")
    ap.add_argument("--sentences", type=int, help="the first N sentences only")
    ap.add_argument("--sections", nargs="+", choices=SECTIONS, default=list(SECTIONS))
    ap.add_argument("--json", help="also write the rows to this JSON file")
    args = ap.parse_args(argv)
    ensure_data(args.data)
    rows: list[SpeedRow] = []
    for name in args.sections:
        module = importlib.import_module(f"speed_{name}")
        ctx = SpeedContext(data=args.data, work=os.path.join(args.work, name), moses_bin=args.moses_bin,
                           cdec_dir=args.cdec_dir, sentences=args.sentences)
        os.makedirs(ctx.work, exist_ok=True)
        print(f"== {name}", file=sys.stderr, flush=True)
        section = module.measure(ctx)
        print_rows(section, out=sys.stderr)
        rows.extend(section)
    print()
    print_rows(rows)
    judged = [r for r in rows if r.met is not None]   # the others: a curve, or no anchor to judge by
    missed = [r.work for r in judged if not r.met]
    print(f"\n{len(judged) - len(missed)} of {len(judged)} targets met ({len(rows) - len(judged)} rows without "
          "a verdict)" + (f"; not met: {', '.join(missed)}" if missed else ""))
    if args.json:
        write_rows(rows, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
