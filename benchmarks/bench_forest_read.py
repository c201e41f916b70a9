"""Benchmark of reading cdec -O forests: the compiled reader against the pure-Python reference.

    python benchmarks/bench_forest_read.py [FOREST_OR_DIR ...] [--repeat 7] [--reference-repeat 3]

Reads the same forests (default: /work/runs/cdec-smoke/forests/*.bin.gz, 5 forests a real
cdec wrote with Boost 1.74; else ../shared/data/cdec-forests/*.bin.gz) with
``mtplug.formats.cdec_forest.read_cdec_forest`` and with tests/reference/cdec_forest.py
(the struct-per-field reader it replaced), checks that both give the same Hypergraphs,
and prints the best of ``--repeat`` / ``--reference-repeat`` passes over all forests,
edges/s both ways and the ratio. The two readers are timed in alternation in one process,
so both see the same machine. Decompression (zlib, the same for both) is timed on its own
too: it is most of what the compiled reader's time is left with.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DEFAULT_DIRS = ["/work/runs/cdec-smoke/forests", os.path.join(os.path.dirname(REPO), "shared", "data", "cdec-forests")]
ARRAYS = ("node_edges", "edge_head", "tail_indptr", "tails", "rhs_indptr", "rhs", "feat_indptr", "feat_ids",
          "feat_values")


def forest_files(args: list[str]) -> list[str]:
    if not args:
        args = [next((d for d in DEFAULT_DIRS if glob.glob(os.path.join(d, "*.bin.gz"))), DEFAULT_DIRS[0])]
    files = []
    for a in args:
        files += sorted(glob.glob(os.path.join(a, "*.bin.gz"))) if os.path.isdir(a) else [a]
    if not files:
        sys.exit(f"no forests (*.bin.gz) in {' '.join(args)}")
    return files


def same(a, b) -> bool:
    return (a.n_nodes, a.words, a.feature_names) == (b.n_nodes, b.words, b.feature_names) and all(
        getattr(a, k).dtype == getattr(b, k).dtype and getattr(a, k).tobytes() == getattr(b, k).tobytes()
        for k in ARRAYS)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("forests", nargs="*", help="forest files or directories of <id>.bin.gz")
    ap.add_argument("--repeat", type=int, default=7, help="passes of the compiled reader (best is printed)")
    ap.add_argument("--reference-repeat", type=int, default=3, help="passes of the reference reader")
    args = ap.parse_args()
    sys.path.insert(0, REPO)
    from mtplug.fileio import open_binary
    from mtplug.formats.cdec_forest import read_cdec_forest
    from tests.reference.cdec_forest import read_cdec_forest as reference_read

    files = forest_files(args.forests)
    compiled = [read_cdec_forest(f) for f in files]
    reference = [reference_read(f) for f in files]
    bad = [f for f, a, b in zip(files, compiled, reference) if not same(a, b)]
    if bad:
        sys.exit(f"the readers disagree on {' '.join(bad)}")
    edges = sum(hg.n_edges for hg in compiled)

    def one_pass(read) -> float:
        t = time.perf_counter()
        for f in files:
            read(f)
        return time.perf_counter() - t

    def gunzip(f):
        with open_binary(f) as fh:
            return fh.read()

    times: dict[str, list[float]] = {"compiled": [], "reference": [], "decompress": []}
    for i in range(max(args.repeat, args.reference_repeat)):
        if i < args.repeat:
            times["compiled"].append(one_pass(read_cdec_forest))
            times["decompress"].append(one_pass(gunzip))
        if i < args.reference_repeat:
            times["reference"].append(one_pass(reference_read))
    best = {k: min(v) for k, v in times.items()}
    mb = sum(len(gunzip(f)) for f in files) / 1e6
    where = sorted({os.path.dirname(os.path.abspath(f)) for f in files})
    print(f"{len(files)} forests in {', '.join(where)}: {edges:,} edges, {mb:.1f} MB decompressed")
    print(f"reference (Python struct): {best['reference']:8.3f} s  {edges / best['reference']:12,.0f} edges/s  "
          f"{best['reference'] / edges * 1e6:6.2f} us/edge   (best of {args.reference_repeat})")
    print(f"compiled:                  {best['compiled']:8.3f} s  {edges / best['compiled']:12,.0f} edges/s  "
          f"{best['compiled'] / edges * 1e6:6.2f} us/edge   (best of {args.repeat}; "
          f"decompressing alone {best['decompress']:.3f} s)")
    print(f"speed-up: {best['reference'] / best['compiled']:.1f}x (same Hypergraphs, bit for bit)")


if __name__ == "__main__":
    main()
