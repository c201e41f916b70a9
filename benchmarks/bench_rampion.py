"""RAMPION benchmark: Rampion.optimize with the defaults on a 2,000 × 1,000 × 15 store.

    python benchmarks/bench_rampion.py [--store /work/bench_data/big/work/store.npz]
                                       [--loss ramp3 ...] [--cccp-iterations 10] [--epochs 5]

Uses the store made by benchmarks/bench_mert.py (``NbestCorpus.load``; start weights from
the init.opt two levels up) if it exists, otherwise bench_pro.py's in-memory synthetic
store from all-ones weights. Prints seconds per SSD epoch (compiled, one thread), total
seconds (T′ CCCP iterations × T″ epochs, the hope imputation, objective and BLEU),
start and final BLEU, the objective per CCCP iteration and peak RSS. Target: total <= 5 s.
"""

from __future__ import annotations

import argparse
import os
import sys
import time


from _common import load_store, peak_rss_mb, start_weights  # noqa: E402
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
DEFAULT_STORE = "/work/bench_data/big/work/store.npz"


def main(argv=None) -> None:
    from bench_pro import synthetic_store

    from mtplug.optimizers.rampion import LOSSES, Rampion

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", default=DEFAULT_STORE)
    ap.add_argument("--loss", nargs="+", default=["ramp3"], choices=LOSSES)
    ap.add_argument("--cccp-iterations", type=int, default=10)
    ap.add_argument("--epochs", type=int, default=5)
    args = ap.parse_args(argv)

    t = time.perf_counter()
    corpus, source = load_store(args.store, synthetic_store)
    print(f"{corpus} from {source}: {time.perf_counter() - t:.1f} s to load; RSS {peak_rss_mb():.0f} MB")
    start = start_weights(args.store, corpus.n_features)
    print(f"start BLEU {100 * corpus.bleu_of(start).score:.4f}")
    for loss in args.loss:
        opt = Rampion(loss=loss, cccp_iterations=args.cccp_iterations, epochs=args.epochs)
        t0 = time.perf_counter()
        res = opt.optimize(corpus, start, 0)
        total = time.perf_counter() - t0
        i = res.info
        print(f"Rampion ({loss}, T'={opt.cccp_iterations}, T''={opt.epochs}): {i['seconds_per_epoch']:.3f} s per "
              f"epoch, {total:.3f} s total; {corpus.n_hypotheses * opt.epochs * opt.cccp_iterations / total:,.0f} "
              f"hyp-visits/s; BLEU {res.score:.4f}")
        print("  objective per CCCP iteration: " + " ".join(f"{o:.4f}" for o in i["objective"]))
    print(f"peak RSS {peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
