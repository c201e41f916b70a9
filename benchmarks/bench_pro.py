"""PRO benchmark: sampling alone, and sampling + classifier, on a 2,000 × 1,000 × 15 store.

    python benchmarks/bench_pro.py [--store /work/bench_data/big/work/store.npz] [--threads 1 2]
                                   [--classifiers logistic perceptron svm] [--write-pro-data FILE]

Uses the store made by benchmarks/bench_mert.py (``NbestCorpus.load``; start weights from
the init.opt two levels up) if it exists,
otherwise builds one in memory with ``NbestCorpus.from_arrays``: 2,000 sentences × 1,000
hypotheses, 15 dense features and random but valid BLEU statistics, seeded, started from
all-ones weights. Prints wall
seconds, candidate pairs drawn per second, hypotheses per second and peak RSS.
Reference (docs/moses.md): Moses's ``pro`` needs 8-13 s for the sampling alone on such a
set (7 MB RSS; it writes the 199,424 pair lines of pro.data and trains nothing).
Target: sampling + classifier <= 3 s.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from _common import load_store, peak_rss_mb, start_weights  # noqa: E402
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
DEFAULT_STORE = "/work/bench_data/big/work/store.npz"


def synthetic_store(S: int = 2000, M: int = 1000, D: int = 15, seed: int = 0):
    """A store with random, valid BLEU statistics (matches <= totals, totals shrink with n).

    S sentences × M hypotheses, D dense features (normal, per-feature scales 0.5-30).
    """
    from mtplug.corpus import NbestCorpus

    rng = np.random.default_rng(seed)
    n = S * M
    length = rng.integers(5, 40, n)
    stats = np.empty((n, 9), dtype=np.int32)
    for k in range(4):
        total = np.maximum(length - k, 0)
        stats[:, 2 * k + 1] = total
        stats[:, 2 * k] = rng.binomial(total, 0.6 / (k + 1))
    stats[:, 8] = np.repeat(rng.integers(5, 40, S), M)
    dense = rng.normal(size=(n, D)) * rng.uniform(0.5, 30.0, D)
    return NbestCorpus.from_arrays(np.repeat(np.arange(S), M), dense, [f"F{j}_0" for j in range(D)], stats)



def main(argv=None) -> None:
    from mtplug.metrics.sentence import hypothesis_scores
    from mtplug.optimizers import classifiers
    from mtplug.optimizers.pro import Pro, pair_differences, sample_pairs

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", default=DEFAULT_STORE)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, os.cpu_count() or 1])
    ap.add_argument("--classifiers", nargs="+", default=list(classifiers.CLASSIFIERS))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3, help="timed runs of each step; the best is shown")
    ap.add_argument("--write-pro-data", metavar="FILE", help="also time writing Moses's pro.data")
    args = ap.parse_args(argv)

    t = time.perf_counter()
    corpus, source = load_store(args.store, synthetic_store)
    n = corpus.n_hypotheses
    print(f"{corpus} from {source}: {time.perf_counter() - t:.1f} s to load; RSS {peak_rss_mb():.0f} MB")

    def best_of(fn):
        times, out = [], None
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            out = fn()
            times.append(time.perf_counter() - t0)
        return min(times), out

    sec_b, b = best_of(lambda: hypothesis_scores(corpus, "bleu+1"))
    print(f"sentence BLEU+1 of {n:,} hypotheses: {sec_b:.3f} s ({n / sec_b:,.0f} hyp/s)")
    for threads in args.threads:
        sec, sample = best_of(lambda: sample_pairs(b, corpus.sent_offsets, seed=args.seed, threads=threads))
        print(f"sampling, {threads} thread(s): {sec:.3f} s  {sample.draws / sec:,.0f} candidate pairs/s  "
              f"{n / sec:,.0f} hyp/s  ({sample.draws:,} drawn, {int(sample.candidates.sum()):,} above beta, "
              f"{sample.n_pairs:,} kept)  + scoring {sec_b + sec:.3f} s")
    sec_x, X = best_of(lambda: pair_differences(corpus, sample.better, sample.worse))
    print(f"difference vectors of {sample.n_pairs:,} pairs: {sec_x:.3f} s")
    for kind in args.classifiers:
        sec_c, fit = best_of(lambda: classifiers.fit(kind, X, np.ones(sample.n_pairs), loss_weight=2.0,
                                                     seed=args.seed))
        print(f"classifier {kind:10s}: {sec_c:.3f} s, {fit.iterations} iterations")
    # bench_mert.py's data directory keeps the start weights next to work/store.npz
    start = start_weights(args.store, corpus.n_features)
    print(f"start BLEU {100 * corpus.bleu_of(start).score:.4f}")
    for kind in args.classifiers:
        for threads in args.threads:
            sec, res = best_of(lambda: Pro(classifier=kind).optimize(corpus, start, args.seed, threads=threads))
            i = res.info
            print(f"Pro.optimize ({kind}, {threads} thread(s)): {sec:.3f} s total = scoring + sampling "
                  f"{i['seconds_sampling']:.3f} s + pairs and classifier {i['seconds_classifier']:.3f} s "
                  f"(+ BLEU of the result); {i['draws'] / sec:,.0f} candidate pairs/s, {n / sec:,.0f} hyp/s; "
                  f"BLEU {res.score:.4f}")
    if args.write_pro_data:
        from tests.reference.pro_data_writer import pro_data_from_pairs, write_pro_data

        t0 = time.perf_counter()
        write_pro_data(args.write_pro_data, pro_data_from_pairs(corpus, sample.better, sample.worse))
        print(f"pro.data ({2 * sample.n_pairs:,} lines): {time.perf_counter() - t0:.3f} s")
    print(f"peak RSS {peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
