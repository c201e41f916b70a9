"""kbmira benchmark on the 2,000 × 1,000 × 15 store (Moses defaults: 60 passes).

    python benchmarks/bench_mira.py [--store /work/bench_data/big/work/store.npz] [--passes 60]

Loads the store with ``NbestCorpus.load``; start weights from the init.opt two levels up
(all ones without it). Prints load time, total and per-pass seconds, best BLEU and
peak RSS. Reference (docs/moses.md): Moses kbmira 7.7-8.0 s. Target: <= 8 s.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
DEFAULT_STORE = "/work/bench_data/big/work/store.npz"


def main() -> None:
    from mtplug.corpus import NbestCorpus
    from mtplug.optimizers.mira import KbMira

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", default=DEFAULT_STORE)
    ap.add_argument("--passes", type=int, default=60)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    t0 = time.perf_counter()
    corpus = NbestCorpus.load(args.store)
    t_load = time.perf_counter() - t0
    init_opt = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(args.store))), "init.opt")
    if os.path.exists(init_opt):
        from mtplug.formats.mert_weights import read_init_opt
        start = read_init_opt(init_opt).start
    else:
        start = np.ones(corpus.n_features)
    print(f"{corpus}; load {t_load:.2f} s; start BLEU {corpus.metric_of(start):.6f}")
    t1 = time.perf_counter()
    res = KbMira(passes=args.passes).optimize(corpus, start, args.seed)
    total = time.perf_counter() - t1
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"kbmira {args.passes} passes: {total:.2f} s total, {total / args.passes * 1000:.1f} ms/pass "
          f"(incl. per-pass evaluation), best BLEU {res.info['best_bleu']:.6f} at pass {res.info['best_pass']}, "
          f"peak RSS {rss:.0f} MB")


if __name__ == "__main__":
    main()
