"""Speed-up of the sentence-parallel kernels from 1 to 2 threads (results are bit-identical).

    python benchmarks/bench_threads.py [--sentences 2000] [--nbest 1000] [--forests 20] [--repeat 9]

1. The n-best line sweep (pyx/_linesearch.pyx, OpenMP over sentences) on S × k random
   lines with BLEU statistics, as in a MERT line search over the 2,000 × 1,000 set.
2. The expected-BLEU gradient (pyx/_expbleu.pyx; model scores, both per-sentence passes)
   over the same S × k hypotheses with 15 dense features, the store checked once.
3. The APRO loss + gradient kernel, a Hessian-vector product (pyx/_apro.pyx) and the
   exact X^T c (pyx/_rows.pyx transpose_pairs) over them: with 15 dense features, and with
   5 of 10^6 sparse features per hypothesis.
4. The forest line search (envelope semiring per sentence in threads, then the sweep) on
   synthetic 10⁴-edge forests (benchmarks/bench_forest_mert.py).
5. Hope/fear selection (pyx/_hopefear.pyx, MIRA / RAMPION): the per-sentence argmax of
   model score + α·gain over the S × k hypotheses.
6. Sentence BLEU of every row (pyx/_bleu.pyx sentence_bleu_rows, bleu+1) over the S × k
   statistics rows: the gains of PRO, APRO, MIRA and RAMPION.
7. BLEU statistics of n-best hypotheses (pyx/_nbest_scan.pyx bleu_stats, what reading an
   n-best file does after the scan): S × k hypotheses of 15-34 tokens against 4
   references per sentence.
Prints the best and the median of ``repeat`` timings per thread count and the speed-ups
(best over best, median over median). Last, the machine's own ceiling: how much two
processes that share nothing get done side by side against one alone, for floating-point
work in cache and for streaming memory. On a VM the two vCPUs share the host's memory
bandwidth (and, at busy times, its cores), so a memory-bound kernel cannot go faster
than the stream ceiling, whatever its code.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _common import best_time, peak_rss_mb, synthetic_store  # noqa: E402


def compare_threads(label: str, call_for, repeat: int, items: int = 0, unit: str = "", extra=lambda: "") -> None:
    """Print the best and the median of ``repeat`` timings of ``call_for(t)()`` for t = 1
    and 2 threads and the speed-ups; with ``items``, also the best rate in millions of
    ``unit`` per second.

    The two thread counts are timed in alternation, so that both see the same load from
    other tenants of a shared machine (which changes from second to second on a VM). The
    best time of 2 threads needs both vCPUs quiet at once, which is rarer than one quiet
    vCPU, so the median speed-up is printed too.
    """
    calls = {t: call_for(t) for t in (1, 2)}
    times = {1: [], 2: []}
    for _ in range(repeat):
        for t in (1, 2):
            times[t].append(best_time(calls[t], 1))
    best = {t: min(times[t]) for t in (1, 2)}
    median = {t: float(np.median(times[t])) for t in (1, 2)}
    for t in (1, 2):
        rate = f" ({items / best[t] / 1e6:.2f} M {unit}/s)" if items else ""
        print(f"{label}, {t} thread(s): best {best[t] * 1e3:8.1f} ms{rate}, median {median[t] * 1e3:8.1f} ms")
    print(f"    speed-up 1 -> 2 threads: {best[1] / best[2]:.2f}x best, {median[1] / median[2]:.2f}x median"
          f"{extra()}")


def nbest_sweep(S: int, k: int, repeat: int) -> None:
    from mtplug._ext import _linesearch
    from mtplug.metrics.layer import bleu_metric

    spec = bleu_metric().kernel_spec()
    rng = np.random.default_rng(0)
    n = S * k
    offsets = np.arange(S + 1, dtype=np.int64) * k
    a, b = rng.normal(size=n), rng.normal(size=n)
    stats = rng.integers(0, 20, size=(n, 9)).astype(np.int32)
    stats[:, 8] = rng.integers(10, 40, n)
    compare_threads(f"n-best line sweep, {S} x {k} = {n:,} lines",
                    lambda t: lambda: _linesearch.line_sweep(a, b, offsets, stats, spec, 0, t), repeat,
                    n, "lines")


def expbleu_gradient(S: int, k: int, repeat: int) -> None:
    from mtplug.metrics.expected_bleu import ExpectedBleu

    n = S * k
    corpus = synthetic_store(S, k, 15, seed=2)
    w = np.random.default_rng(2).normal(size=15) * 0.1
    # the store is checked once, as MERT's direction finder does
    compare_threads(f"expected-BLEU gradient, {n:,} hypotheses x 15 features",
                    lambda t: (lambda objective: lambda: objective.gradient(w, 1.0))(ExpectedBleu(corpus, threads=t)),
                    repeat)


def apro_kernels(S: int, k: int, repeat: int) -> None:
    from mtplug._ext import _apro, _rows
    from mtplug.exact_sum import accumulator

    rng = np.random.default_rng(3)
    n = S * k
    offsets = np.arange(S + 1, dtype=np.int64) * k
    ranks = np.empty(n, dtype=np.int32)
    _apro.metric_ranks(rng.normal(size=n), offsets, ranks)
    h, v = rng.normal(size=n) * 0.3, rng.normal(size=n)
    g, out = np.empty(n), np.empty(n)
    bufs = [np.empty(n, dtype=np.int32) for _ in range(4)]
    dense = rng.normal(size=(n, 15))
    no_sparse = (np.zeros(n + 1, dtype=np.int64), np.zeros(0, dtype=np.int32), np.zeros(0))
    no_acc = np.empty((0, accumulator(0).shape[1]), dtype=np.int64)

    def transpose(sparse, n_features):
        pairs = _rows.sentence_pairs(*sparse, offsets, n_features)[1:]
        out = np.empty(n_features)
        return lambda t: _rows.transpose_pairs(dense, *pairs, offsets, offsets[:-1], v, out, no_acc, t)

    for name, fn in (("APRO loss + gradient", lambda t: _apro.loss_gradient(h, np.empty(0), ranks, offsets, g,
                                                                          *bufs, accumulator(3), t)),
                     ("APRO Hessian product", lambda t: _apro.hessian_product(v, ranks, offsets, *bufs, out, t)),
                     ("X^T c (exact sums), 15 dense features", transpose(no_sparse, 15))):
        compare_threads(f"{name}, {n:,} hypotheses", lambda t: lambda: fn(t), repeat)
    # sparse features as sparse-feature tuning has them: 5 per hypothesis out of 10^6 ids
    n_sparse = 1_000_000
    indptr = np.arange(n + 1, dtype=np.int64) * 5
    ids = rng.integers(15, n_sparse, 5 * n).astype(np.int32)
    values = rng.normal(size=5 * n)
    sparse_fn = transpose((indptr, ids, values), n_sparse + 15)
    compare_threads(f"X^T c (exact sums), 15 dense + 5 of 10^6 sparse features, {n:,} hypotheses",
                    lambda t: lambda: sparse_fn(t), max(3, repeat // 3))


def forest_search(n_forests: int, repeat: int) -> None:
    from bench_forest_mert import synthetic_forest

    from mtplug.formats.references import References
    from mtplug.forests.corpus import ForestCorpus
    from mtplug.optimizers.line_search import sweep

    rng = np.random.default_rng(1)
    refs = References([[" ".join(f"w{i}" for i in rng.integers(0, 2000, 25))] for _ in range(n_forests)], "synth")
    corpus = ForestCorpus(refs)
    for s in range(n_forests):
        corpus.add(s, synthetic_forest(rng, 10_000))
    a = corpus.scores(rng.normal(size=corpus.n_features))
    b = corpus.scores(rng.normal(size=corpus.n_features))
    compare_threads(f"forest line search, {n_forests} forests of ~10^4 edges",
                    lambda t: lambda: sweep(corpus, a, b, threads=t), repeat,
                    extra=lambda: f"  (peak RSS {peak_rss_mb():.0f} MB)")


def hopefear_select(S: int, k: int, repeat: int) -> None:
    from mtplug._ext import _hopefear

    rng = np.random.default_rng(4)
    n = S * k
    offsets = np.arange(S + 1, dtype=np.int64) * k
    scores, gains = rng.normal(size=n), rng.random(n)
    out = np.empty(S, dtype=np.int64)
    compare_threads(f"hope/fear select, {S} x {k} = {n:,} hypotheses",
                    lambda t: lambda: _hopefear.select(scores, gains, offsets, 1.0, 10.0, out, t), repeat)


def sentence_bleu_rows(S: int, k: int, repeat: int) -> None:
    from mtplug._ext import _bleu

    n = S * k
    stats = np.ascontiguousarray(synthetic_store(S, k, 1, seed=5).stats, dtype=np.int32)
    out = np.empty(n)
    code = _bleu.VARIANT_CODES["bleu+1"]
    compare_threads(f"sentence BLEU rows (bleu+1), {n:,} rows",
                    lambda t: lambda: _bleu.sentence_bleu_rows(stats, 1.0, code, out, t), repeat, n, "rows")


def ngram_statistics(S: int, k: int, repeat: int) -> None:
    from mtplug._ext import _nbest_scan

    rng = np.random.default_rng(6)
    n = S * k
    lengths = rng.integers(15, 35, n)
    hyp_indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=hyp_indptr[1:])
    # a 120-word vocabulary: every id is one LEB128 byte
    hyp_bytes = rng.integers(0, 120, int(hyp_indptr[-1])).astype(np.uint8)
    run_start = np.arange(S + 1, dtype=np.int64) * k
    run_sid = np.arange(S, dtype=np.int64)
    ref_lengths = rng.integers(15, 35, 4 * S)
    ref_tok_ptr = np.zeros(4 * S + 1, dtype=np.int64)
    np.cumsum(ref_lengths, out=ref_tok_ptr[1:])
    ref_tokens = rng.integers(0, 120, int(ref_tok_ptr[-1])).astype(np.int32)
    ref_sent_ptr = np.arange(S + 1, dtype=np.int64) * 4
    out = np.empty((n, 9), dtype=np.int32)
    compare_threads(f"BLEU statistics, {n:,} hypotheses of 15-34 tokens x 4 references",
                    lambda t: lambda: _nbest_scan.bleu_stats(hyp_indptr, hyp_bytes, run_start, run_sid,
                                                             np.zeros(0, np.int32), ref_sent_ptr, ref_tok_ptr,
                                                             ref_tokens, 0, out, t), repeat, n, "hyp")


def _ceiling_work(kind: str, start, result) -> None:
    """One side of the ceiling test: wait for ``start``, then time a fixed piece of work."""
    if kind == "fp":
        x = np.random.default_rng(0).random(16384) + 0.5
        y = np.empty_like(x)
        work = lambda: [np.log(x, out=y) for _ in range(4000)]  # noqa: E731
    else:
        big = np.ones(25_000_000)  # 200 MB, far beyond the caches
        work = lambda: [big.sum() for _ in range(4)]  # noqa: E731
    work()
    start.wait()
    t = time.perf_counter()
    work()
    result.put(time.perf_counter() - t)


def machine_ceiling(repeat: int) -> None:
    """Print 2 x (time of one process alone) / (time of two side by side), best of repeat,
    for cached floating-point work and for streaming memory."""
    ctx = multiprocessing.get_context("spawn")
    for kind, label in (("fp", "floating point in cache"), ("stream", "streaming memory")):
        best = {1: float("inf"), 2: float("inf")}
        for _ in range(max(3, repeat // 3)):
            for n in (1, 2):
                start, result = ctx.Barrier(n), ctx.Queue()
                procs = [ctx.Process(target=_ceiling_work, args=(kind, start, result)) for _ in range(n)]
                for p in procs:
                    p.start()
                took = max(result.get() for _ in procs)
                for p in procs:
                    p.join()
                best[n] = min(best[n], took)
        print(f"machine ceiling, {label}: one process {best[1] * 1e3:.0f} ms, two side by side "
              f"{best[2] * 1e3:.0f} ms each: {2 * best[1] / best[2]:.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sentences", type=int, default=2000)
    ap.add_argument("--nbest", type=int, default=1000)
    ap.add_argument("--forests", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=9)
    args = ap.parse_args()
    nbest_sweep(args.sentences, args.nbest, args.repeat)
    expbleu_gradient(args.sentences, args.nbest, args.repeat)
    apro_kernels(args.sentences, args.nbest, args.repeat)
    forest_search(args.forests, args.repeat)
    hopefear_select(args.sentences, args.nbest, args.repeat)
    sentence_bleu_rows(args.sentences, args.nbest, args.repeat)
    ngram_statistics(args.sentences, args.nbest, args.repeat)
    machine_ceiling(args.repeat)


if __name__ == "__main__":
    main()
