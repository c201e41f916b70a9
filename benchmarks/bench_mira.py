"""kbmira benchmark on the 2,000 × 1,000 × 15 store (Moses defaults: 60 passes).

    python benchmarks/bench_mira.py [--store /work/bench_data/big/work/store.npz] [--passes 60]

Loads the store with ``NbestCorpus.load``; start weights from the init.opt two levels up
(all ones without it). Prints load time, total and per-pass seconds, best BLEU and
peak RSS. Reference (docs/moses.md): Moses kbmira 7.7-8.0 s. Target: <= 8 s.
"""

from __future__ import annotations

import argparse
import os
import sys
import time


from _common import peak_rss_mb, start_weights  # noqa: E402
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
    start = start_weights(args.store, corpus.n_features)
    print(f"{corpus}; load {t_load:.2f} s; start BLEU {100 * corpus.metric_of(start):.4f}")
    t1 = time.perf_counter()
    res = KbMira(passes=args.passes).optimize(corpus, start, args.seed)
    total = time.perf_counter() - t1
    rss = peak_rss_mb()
    print(f"kbmira {args.passes} passes: {total:.2f} s total, {total / args.passes * 1000:.1f} ms/pass "
          f"(incl. per-pass evaluation), best BLEU {res.info['best_bleu']:.4f} at pass {res.info['best_pass']}, "
          f"peak RSS {rss:.0f} MB")


if __name__ == "__main__":
    main()
