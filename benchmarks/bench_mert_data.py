"""Benchmark of reading Moses extractor files: features.dat + scores.dat, text and binary.

    python benchmarks/bench_mert_data.py [--store /work/bench_data/big/work/store.npz] [--out DIR]
                                         [--sentences 200] [--nbest 1000] [--repeat 3] [--reference]

Takes the store made by benchmarks/bench_foundation.py / bench_mert.py (2,000 sentences
× 1,000-best × 15 dense features, ≈2M hypotheses) if it exists, else generates a smaller
set with benchmarks/synth.py (``--sentences`` × ``--nbest``) and stores it. Writes its
features.dat + scores.dat, in the text form and in Moses's binary variant, into DIR
(default benchmarks/out/mert-data), then reads each file back in a fresh child process
(so peak RSS is the reader's alone: Python + NumPy + mtplug are ≈30 MB of it) and prints
the best of ``--repeat`` times, hypotheses/s, MB/s of file and peak RSS; ``both`` is
``read_mert_data`` (the two readers plus merging into a deduplicated store, as ``mtplug
optimize --ffile`` and the Moses drop-ins load their input). ``--reference`` also times
the pure-Python reference readers (tests/reference/mert_data.py) on the text files, once.

Moses's ``mert`` has to load every iteration's features.dat/scores.dat pair like this; the
target is seconds, not minutes, for ≈2M hypotheses.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DEFAULT_STORE = "/work/bench_data/big/work/store.npz"

CHILD = r"""
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.join(sys.argv[1], "benchmarks"))
from _common import peak_rss_mb
from mtplug.corpus import FeatureSpace
from mtplug.formats import mert_data
step, ffile, sfile, repeat = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
if step == "write":
    from mtplug.corpus import NbestCorpus
    corpus = NbestCorpus.load(sys.argv[6])
    binary = ffile.endswith(".binary.dat")
    if binary and int(corpus.sparse_indptr[-1]):
        print(json.dumps({"skipped": "the store has sparse features: no binary variant"}))
        sys.exit()
    t = time.perf_counter()
    mert_data.write_features(ffile, corpus, binary=binary)
    mert_data.write_scores(sfile, corpus, binary=binary)
    print(json.dumps({"seconds": time.perf_counter() - t, "hypotheses": corpus.n_hypotheses,
                      "features_bytes": os.path.getsize(ffile), "scores_bytes": os.path.getsize(sfile)}))
    sys.exit()
if step.startswith("reference-"):
    from tests.reference import mert_data as reader
    step = step[len("reference-"):]
else:
    reader = mert_data
best, n = float("inf"), 0
for _ in range(repeat):
    t = time.perf_counter()
    if step == "features":
        n = len(reader.read_features(ffile, FeatureSpace())["sent_ids"])
    elif step == "scores":
        n = len(reader.read_scores(sfile)[0])
    else:
        n = mert_data.read_mert_data([ffile], [sfile]).n_hypotheses
    best = min(best, time.perf_counter() - t)
size = {"features": os.path.getsize(ffile), "scores": os.path.getsize(sfile)}.get(
    step, os.path.getsize(ffile) + os.path.getsize(sfile))
print(json.dumps({"seconds": best, "hypotheses": n, "bytes": size, "peak_rss_mb": peak_rss_mb()}))
"""


def load_or_make_store(path: str, sentences: int, nbest: int):
    """The benchmark store: ``path`` if it exists, else a synth.py set of the given size."""
    from mtplug.corpus import NbestCorpus

    if os.path.exists(path):
        return NbestCorpus.load(path), path
    from mtplug.formats.references import read_references
    from synth import generate

    data = os.path.join(HERE, "out", f"synth-{sentences}x{nbest}")
    store = os.path.join(data, "work", "store.npz")
    if not os.path.exists(store):
        print(f"generating {data} ...", file=sys.stderr, flush=True)
        paths = generate(data, sentences, nbest)
        corpus = NbestCorpus.from_nbest([paths["nbest"]], read_references(paths["refs"]))
        os.makedirs(os.path.dirname(store), exist_ok=True)
        corpus.save(store)
    return NbestCorpus.load(store), store


def run_child(step: str, ffile: str, sfile: str, repeat: int = 1, store: str = "") -> dict:
    # every step runs in a fresh process: ru_maxrss survives fork and exec, so a parent
    # that had held the store would lend the children its peak
    res = subprocess.run([sys.executable, "-c", CHILD, REPO, step, ffile, sfile, str(repeat), store],
                         check=True, capture_output=True, text=True)
    return json.loads(res.stdout)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", default=DEFAULT_STORE)
    ap.add_argument("--out", default=os.path.join(HERE, "out", "mert-data"))
    ap.add_argument("--sentences", type=int, default=200, help="size of the generated set if --store is missing")
    ap.add_argument("--nbest", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--reference", action="store_true", help="also time the pure-Python reference readers")
    a = ap.parse_args(argv)

    source = a.store
    if not os.path.exists(source):
        # made (once) in a child, so that this process stays small
        code = (f"import sys; sys.path[:0] = [{REPO!r}, {HERE!r}]; import bench_mert_data as b; "
                f"print(b.load_or_make_store({a.store!r}, {a.sentences}, {a.nbest})[1])")
        source = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                                text=True).stdout.strip()
    print(f"store {source}", flush=True)
    os.makedirs(a.out, exist_ok=True)
    files = {}
    for form in ("text", "binary"):
        ffile = os.path.join(a.out, f"features.{form}.dat")
        sfile = os.path.join(a.out, f"scores.{form}.dat")
        r = run_child("write", ffile, sfile, store=source)
        if "skipped" in r:
            print(r["skipped"])
            continue
        print(f"wrote {form:6s} {r['hypotheses']:,} hypotheses: features.dat {r['features_bytes'] / 1e6:7.1f} MB + "
              f"scores.dat {r['scores_bytes'] / 1e6:6.1f} MB in {r['seconds']:.1f} s", flush=True)
        files[form] = (ffile, sfile)

    steps = [(form, step) for form in files for step in ("features", "scores", "both")]
    if a.reference:
        steps += [("text", "reference-features"), ("text", "reference-scores")]
    for form, step in steps:
        r = run_child(step, *files[form], 1 if step.startswith("reference") else a.repeat)
        print(f"read {form:6s} {step:18s} {r['seconds']:7.2f} s  {r['hypotheses'] / r['seconds']:>12,.0f} hyp/s  "
              f"{r['bytes'] / 1e6 / r['seconds']:7.1f} MB/s  peak RSS {r['peak_rss_mb']:6.0f} MB", flush=True)


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    main()
