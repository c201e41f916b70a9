"""APRO benchmarks: k log k growth of one sentence's loss and gradient, and training to
tolerance on a 2,000 x 1,000 x 15 in-memory set.

    python benchmarks/bench_apro.py [--ks 100 1000 10000 100000] [--sentences 2000] [--nbest 1000]
                                    [--dense 15] [--c 0.01] [--tolerance 1e-6] [--seed 1] [--store PATH]

(a) For sentences of k hypotheses (15 random dense features, random BLEU statistics, the
generator of (b)) it times the loss + gradient kernel on the model scores and a whole
objective evaluation (scores, kernel, X^T g) per sentence, and prints the kernel time per
k log2 k, which grows only with cache misses while the number of pairs k(k-1)/2 grows a
hundred-fold per step.

(b) It builds a seeded corpus in memory (no files; the arrays go into an NbestCorpus
directly, as in bench_expbleu.py): per sentence a reference length R (5..60 words), per
hypothesis a quality q ~ U(0.2, 0.95) and a length near R, BLEU statistics t_n =
len - n + 1, m_n ~ Binomial(t_n, q^n), and dense features that are noisy linear functions
of (q, length, 1) with per-feature offsets. Then it trains APRO (sentence BLEU+1) from
benchmarks/synth.py's start weights to the tolerance and prints the time, the numbers of
Newton iterations, loss passes, gradients and Hessian products, hypotheses per second
(hypotheses x kernel passes / s), the number of preference pairs, corpus BLEU of the start
and the result, and peak RSS. ``--store PATH`` trains on an NbestCorpus store instead
(e.g. /work/bench_data/big/work/store.npz, made by bench_mert.py: 2M hypotheses).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the repo root

from _common import best_time, peak_rss_mb  # noqa: E402

from mtplug._ext import _apro  # noqa: E402
from mtplug.corpus import NbestCorpus  # noqa: E402
from mtplug.exact_sum import accumulator  # noqa: E402
from mtplug.optimizers.apro import Apro, AproObjective  # noqa: E402
from mtplug.synthetic import make_bleu_corpus  # noqa: E402

#: benchmarks/synth.py's start point for its 15 dense features
START_WEIGHTS = [0.3, 0.5, -1.0, 0.2, 0.2, 0.2, 0.2, 0.2, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 1.0]




def bench_sentence(ks, n_dense: int, seed: int) -> None:
    """Per k: m = 2M / k different random sentences (so that no branch predictor learns one
    sentence by heart), timed in one call; per-sentence times are the total / m."""
    print("(a) one sentence: loss + gradient (mean over m random sentences, best of 3)")
    print(f"{'k':>8} {'m':>6} {'pairs':>14} {'kernel ms':>10} {'eval ms':>10} {'kernel ns/(k log2 k)':>21}")
    for k in ks:
        m = max(1, 2_000_000 // k)
        corpus = make_bleu_corpus(m, k, n_dense, seed=seed)
        obj = Apro().objective(corpus)
        w = np.random.default_rng(seed + 1).normal(scale=0.3, size=corpus.n_features)
        part, ranks = the_partition(obj)
        h = np.empty(m * k)
        _apro.centred_scores(part.dense, part.sp_indptr, part.sp_ids, part.sp_values, part.offsets, w, h)
        g = np.empty(m * k)
        bufs = [np.empty(m * k, np.int32) for _ in range(4)]
        t_kernel = best_time(lambda h=h, ranks=ranks, part=part, g=g, bufs=bufs: _apro.loss_gradient(
            h, np.empty(0), ranks, part.offsets, g, *bufs, accumulator(3)), 3) / m
        t_eval = best_time(lambda obj=obj, w=w: obj.at(w), 3) / m
        print(f"{k:>8} {m:>6} {k * (k - 1) // 2:>14,} {t_kernel * 1e3:>10.3f} {t_eval * 1e3:>10.3f} "
              f"{t_kernel * 1e9 / (k * math.log2(k)):>21.2f}")


def the_partition(obj: AproObjective):
    """(PoolPart, ranks) of the one partition of an objective on a LocalEngine."""
    engine = obj.pool.engine
    (part,), (workspace,) = engine.fetch(obj.pool.parts), engine.fetch(obj.workspaces)
    return part, workspace.ranks


def count_pairs(obj: AproObjective) -> int:
    """Preference pairs (b_p > b_q) over the corpus, from the metric ranks."""
    total = 0
    part, ranks = the_partition(obj)
    offsets = part.offsets
    for s in range(len(offsets) - 1):
        counts = np.bincount(ranks[offsets[s]:offsets[s + 1]])
        total += (int(counts.sum()) ** 2 - int(counts @ counts)) // 2
    return total


def bench_training(corpus: NbestCorpus, start: np.ndarray, c: float, tolerance: float) -> None:
    n = corpus.n_hypotheses
    apro = Apro(c=c, tolerance=tolerance)
    t = time.perf_counter()
    obj = apro.objective(corpus)
    t_setup = time.perf_counter() - t
    print(f"set-up (sentence BLEU+1 and ranks): {t_setup:.2f} s; preference pairs: {count_pairs(obj):,}")
    del obj
    bleu_start = 100 * corpus.bleu_of(start).score     # 0-100, as Result.score
    res = apro.optimize(corpus, start, 0)
    info = res.info
    passes = info["function_evaluations"] + info["hessian_products"]
    print(f"training: {info['seconds']:.2f} s ({info['message']}); {info['iterations']} Newton iterations, "
          f"{info['function_evaluations']} loss passes ({info['line_search_steps']} in line searches), "
          f"{info['gradient_evaluations']} gradients, {info['hessian_products']} Hessian products")
    print(f"  {n * passes / info['seconds'] / 1e6:.2f} M hypotheses/s over {passes} kernel passes; "
          f"|grad F| = {info['gradient_norm']:.3g} <= {info['gradient_tolerance']:.3g}; "
          f"F = {info['objective']:.6f}; active pairs {info['active_pairs']:,}")
    print(f"  corpus BLEU: start {bleu_start:.4f} -> {res.score:.4f}")
    print(f"  weights: {' '.join(f'{x:.4g}' for x in res.weights)}")
    print(f"peak RSS {peak_rss_mb():.0f} MB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ks", type=int, nargs="*", default=[100, 1000, 10000, 100000])
    ap.add_argument("--sentences", type=int, default=2000)
    ap.add_argument("--nbest", type=int, default=1000)
    ap.add_argument("--dense", type=int, default=15)
    ap.add_argument("--c", type=float, default=0.01)
    ap.add_argument("--tolerance", type=float, default=1e-6)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--store", default=None, help="train on this NbestCorpus store instead (.npz)")
    a = ap.parse_args()

    if a.ks:
        bench_sentence(a.ks, a.dense, a.seed)
    t = time.perf_counter()
    if a.store:
        corpus = NbestCorpus.load(a.store)
        what = f"store {a.store}"
    else:
        corpus = make_bleu_corpus(a.sentences, a.nbest, a.dense, seed=a.seed)
        what = f"{a.sentences} sentences x {a.nbest} hypotheses x {a.dense} dense features"
    print(f"(b) training on {what}: {corpus.n_hypotheses:,} hypotheses, {corpus.n_features} features, "
          f"ready in {time.perf_counter() - t:.1f} s; peak RSS {peak_rss_mb():.0f} MB")
    start = np.zeros(corpus.n_features)
    k = min(len(START_WEIGHTS), corpus.n_features)
    start[:k] = START_WEIGHTS[:k]
    bench_training(corpus, start, a.c, a.tolerance)


if __name__ == "__main__":
    main()
