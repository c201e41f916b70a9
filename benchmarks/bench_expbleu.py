"""Benchmark of the expected-BLEU gradient (mtplug.metrics.expected_bleu).

    python benchmarks/bench_expbleu.py [--sentences 2000] [--nbest 1000] [--dense 15]
                                       [--mu 1 1000] [--repeat 5] [--seed 1]

Builds a seeded synthetic corpus in memory (no files): per sentence a reference length
R (5..60 words), per hypothesis a quality q ~ U(0.2, 0.95) and a length near R, BLEU
statistics t_n = len - n + 1, m_n ~ Binomial(t_n, q^n), ref_len = R, and 15 dense
features that are noisy linear functions of (q, length, 1) with per-feature offsets. The
arrays are assigned to an NbestCorpus directly (no duplicate merging: the rows are
distinct and the point is the gradient). Then, per mu, it times one gradient evaluation
``expected_bleu_gradient(corpus, w, mu)`` (best of --repeat; validation, scores and the
kernel), and the kernel alone on precomputed scores, and prints hypotheses/s and the
peak RSS (resource.getrusage) after building the corpus and at the end.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the repo root

from _common import best_time, peak_rss_mb  # noqa: E402
from mtplug._ext import _expbleu
from mtplug.synthetic import make_bleu_corpus
from mtplug.metrics.expected_bleu import EXPECTED_METRICS, expected_bleu_gradient




def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sentences", type=int, default=2000)
    ap.add_argument("--nbest", type=int, default=1000)
    ap.add_argument("--dense", type=int, default=15)
    ap.add_argument("--mu", type=float, nargs="+", default=[1.0, 1000.0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()

    t = time.perf_counter()
    corpus = make_bleu_corpus(a.sentences, a.nbest, a.dense, seed=a.seed)
    n = corpus.n_hypotheses
    print(f"corpus: {a.sentences} sentences x {a.nbest} hypotheses x {a.dense} dense features "
          f"= {n:,} hypotheses, built in {time.perf_counter() - t:.1f} s; "
          f"peak RSS {peak_rss_mb():.0f} MB")
    weights = np.random.default_rng(a.seed + 1).normal(scale=0.3, size=corpus.n_features)
    scores = corpus.scores(weights)
    grad = np.empty(corpus.n_features)
    totals = np.empty(9)

    def kernel(mu):
        return _expbleu.expected_gradient(
            scores, mu, corpus.sent_offsets, corpus.stats, corpus.dense, corpus.sparse_indptr,
            corpus.sparse_ids, corpus.sparse_values, 1.0, EXPECTED_METRICS["bleu"], 1.0, grad, totals)

    t_scores = best_time(lambda: corpus.scores(weights), a.repeat)
    print(f"scores w.f alone: {t_scores * 1e3:.1f} ms ({n / t_scores / 1e6:.1f} M hyp/s)")
    for mu in a.mu:
        value, _ = expected_bleu_gradient(corpus, weights, mu)
        t_api = best_time(lambda: expected_bleu_gradient(corpus, weights, mu), a.repeat)
        t_kernel = best_time(lambda: kernel(mu), a.repeat)
        print(f"mu = {mu:g}: J = {value:.6f} (expected BLEU {np.exp(value):.4f}); "
              f"one gradient evaluation {t_api * 1e3:.1f} ms = {n / t_api / 1e6:.2f} M hyp/s; "
              f"kernel alone {t_kernel * 1e3:.1f} ms = {n / t_kernel / 1e6:.2f} M hyp/s")
    print(f"peak RSS {peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
