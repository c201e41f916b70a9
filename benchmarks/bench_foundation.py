"""Benchmark of the foundation: parse a large Moses n-best, compute BLEU statistics, store.

    python benchmarks/bench_foundation.py [--data DIR] [--sentences 2000] [--nbest 1000]

Generates the seeded synthetic set with benchmarks/synth.py into DIR (default
benchmarks/out/synth-<S>x<N>) if it is not there, then reads it into an NbestCorpus
in a fresh child process (so peak RSS is the reader's alone) and prints time,
hypotheses/s, MB/s and peak RSS; then the same for saving and reloading the store
and for writing features.dat/scores.dat. Reference figures for Moses's extractor on
the 2,000 × 1,000 × 15 set on a machine like ours: 82–93 s, 529 MB peak.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

CHILD = r"""
import json, os, resource, sys, time
from mtplug.corpus import NbestCorpus
from mtplug.formats.references import read_references
from mtplug.formats import mert_data
nbest, ref, work, step = sys.argv[1:5]
size = os.path.getsize(nbest)
out = {}
t = time.perf_counter()
if step == "read":
    c = NbestCorpus.from_nbest([nbest], read_references([ref]))
    out["seconds"] = time.perf_counter() - t
    out["hypotheses"] = c.n_hypotheses
    nbytes = sum(a.nbytes for a in (c.dense, c.stats, c.sparse_indptr, c.sparse_ids, c.sparse_values,
                                    c.hyp_indptr, c.hyp_bytes, c.sent_offsets))
    out["store_bytes_per_hyp"] = nbytes / c.n_hypotheses
    t = time.perf_counter()
    c.save(os.path.join(work, "store.npz"))
    out["save_seconds"] = time.perf_counter() - t
elif step == "load":
    c = NbestCorpus.load(os.path.join(work, "store.npz"))
    out["seconds"] = time.perf_counter() - t
    out["hypotheses"] = c.n_hypotheses
elif step == "write":
    c = NbestCorpus.load(os.path.join(work, "store.npz"))
    t = time.perf_counter()
    mert_data.write_features(os.path.join(work, "features.dat"), c)
    mert_data.write_scores(os.path.join(work, "scores.dat"), c)
    out["seconds"] = time.perf_counter() - t
    out["hypotheses"] = c.n_hypotheses
out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
out["input_mb"] = size / 1e6
print(json.dumps(out))
"""


def run_step(step: str, nbest: str, ref: str, work: str) -> dict:
    res = subprocess.run([sys.executable, "-c", CHILD, nbest, ref, work, step],
                         check=True, capture_output=True, text=True)
    return json.loads(res.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", help="directory of the synthetic set (made if missing)")
    ap.add_argument("--sentences", type=int, default=2000)
    ap.add_argument("--nbest", type=int, default=1000)
    a = ap.parse_args()
    data = a.data or os.path.join(HERE, "out", f"synth-{a.sentences}x{a.nbest}")
    nbest, ref = os.path.join(data, "nbest.txt"), os.path.join(data, "ref.0")
    if not os.path.exists(nbest):
        sys.path.insert(0, HERE)
        from synth import generate

        print(f"generating {data} ...", file=sys.stderr)
        generate(data, a.sentences, a.nbest)
    work = os.path.join(data, "work")
    os.makedirs(work, exist_ok=True)
    for step in ("read", "load", "write"):
        r = run_step(step, nbest, ref, work)
        line = (f"{step:6s} {r['seconds']:7.2f} s  {r['hypotheses'] / r['seconds']:>12,.0f} hyp/s  "
                f"peak RSS {r['peak_rss_mb']:6.0f} MB")
        if step == "read":
            line += (f"  {r['input_mb'] / r['seconds']:6.1f} MB/s of n-best  "
                     f"store {r['store_bytes_per_hyp']:.0f} B/hyp  (save {r['save_seconds']:.2f} s)")
        print(line, flush=True)


if __name__ == "__main__":
    main()
