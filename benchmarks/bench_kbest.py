"""Forest k-best speed and memory: k = 100 and 1000 on random CKY-shaped forests.

    python benchmarks/bench_kbest.py [--edges 10000 100000] [--k 100 1000] [--repeat 3]

Builds one forest per size (a sentence of --src-len source words; every span has a few
nodes, every node about the same number of edges: binary edges with their tails in either
order, words around them; 8 features per edge; seeded) and times, for plain and unique
k-best, the kernel alone (pyx/_kbest.pyx) and the full mtplug.forests.kbest.kbest call
(which also builds the words and summed features of every derivation). Prints derivations
per second, the candidates the kernel created, and the peak RSS of a first call above the
RSS before it (each measured in a forked child, whose high-water mark is reset through
/proc/self/clear_refs where allowed; otherwise the child's peak so far is shown).

Measured here (src-len 30, 1,861 nodes, 60 edges per derivation): 98,584 edges, k = 1000:
kernel 12 ms (82,000 derivations/s; about 8 ms of it is the bottom-up pass over all edges),
+3 MB peak; kbest() with words and features 33 ms, +20 MB. 9,304 edges, k = 1000: kernel
5 ms, kbest() 28 ms.
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
sys.path.insert(0, os.path.dirname(HERE))
from _common import peak_rss_mb  # noqa: E402

FEATURES = ["LanguageModel", "PhraseModel_0", "PhraseModel_1", "PhraseModel_2", "PhraseModel_3",
            "WordPenalty", "Glue", "PassThrough"]


def random_forest(n_edges: int, src_len: int = 30, seed: int = 0, vocab: int = 5000):
    """A random CKY-shaped Hypergraph with about ``n_edges`` edges, as arrays.

    Spans (i, j) of a sentence of ``src_len`` words have ``c`` nodes each; a node of a
    width-1 span has axiom edges of 1-2 words, any other node binary edges (split point,
    tail nodes and their order at random) with 0-1 words; the goal has one unary edge per
    node of the whole sentence. Nodes are ordered by span width, so tails come first.
    """
    from mtplug.hypergraph import Hypergraph

    rng = np.random.default_rng(seed)
    spans = [(i, i + w) for w in range(1, src_len + 1) for i in range(src_len - w + 1)]
    c = 4
    r = max(1, n_edges // (len(spans) * c))
    first = {sp: n * c for n, sp in enumerate(spans)}
    n_nodes = len(spans) * c + 1
    heads, tails, rhs = [], [], []
    for (i, j), base in first.items():
        for v in range(base, base + c):
            for _ in range(r):
                heads.append(v)
                if j - i == 1:
                    tails.append([])
                    rhs.append([int(x) for x in rng.integers(0, vocab, rng.integers(1, 3))])
                    continue
                k = int(rng.integers(i + 1, j))
                tails.append([first[(i, k)] + int(rng.integers(c)), first[(k, j)] + int(rng.integers(c))])
                slots = [-1, -2] if rng.random() < 0.7 else [-2, -1]
                if rng.random() < 0.3:
                    slots.insert(int(rng.integers(3)), int(rng.integers(vocab)))
                rhs.append(slots)
    for v in range(first[(0, src_len)], first[(0, src_len)] + c):
        heads.append(n_nodes - 1)
        tails.append([v])
        rhs.append([-1])
    E = len(heads)

    def csr(parts, dtype):
        ptr = np.zeros(len(parts) + 1, np.int64)
        ptr[1:] = np.cumsum([len(p) for p in parts])
        return ptr, np.fromiter((x for p in parts for x in p), dtype=dtype, count=int(ptr[-1]))

    tail_ptr, tail_arr = csr(tails, np.int32)
    rhs_ptr, rhs_arr = csr(rhs, np.int32)
    nf = len(FEATURES)
    feat_ptr = np.arange(E + 1, dtype=np.int64) * nf
    feat_ids = np.tile(np.arange(nf, dtype=np.int32), E)
    feat_values = rng.normal(size=E * nf)
    node_edges = np.zeros(n_nodes + 1, np.int64)
    node_edges[1:] = np.cumsum(np.bincount(np.array(heads), minlength=n_nodes))
    hg = Hypergraph(n_nodes, node_edges, np.array(heads, np.int32), tail_ptr, tail_arr, rhs_ptr, rhs_arr,
                    feat_ptr, feat_ids, feat_values, [f"w{i}" for i in range(vocab)], list(FEATURES),
                    "synthetic")
    hg.check()
    return hg


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _rss_mb(field: str) -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def measure(fn, repeat: int):
    """(best seconds, result of the first call, peak RSS of the first call above the RSS
    before it in MB, whether the peak could be reset)."""
    before = _rss_mb("VmRSS")
    reset = _reset_peak()
    t = time.perf_counter()
    out = fn()
    best = time.perf_counter() - t
    peak = (_rss_mb("VmHWM") if reset else peak_rss_mb()) - before
    for _ in range(repeat - 1):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best, out, peak, reset


def in_child(fn):
    """fn() in a forked child (its memory starts from the parent's, untouched by earlier
    runs); its result comes back through a pipe."""
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=lambda: child.send(fn()))
    proc.start()
    result = parent.recv()
    proc.join()
    return result


def main(argv=None) -> None:
    from mtplug._ext import _kbest
    from mtplug.forests.kbest import kbest, score_edges

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--edges", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--k", type=int, nargs="+", default=[100, 1000])
    ap.add_argument("--src-len", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(1)
    weights = dict(zip(FEATURES, rng.normal(size=len(FEATURES))))
    for n_edges in args.edges:
        t = time.perf_counter()
        hg = random_forest(n_edges, args.src_len)
        scores = score_edges(hg, weights)
        print(f"forest: {hg.n_edges} edges, {hg.n_nodes} nodes, built in {time.perf_counter() - t:.1f} s")
        arrays = (hg.node_edges, hg.tail_indptr, hg.tails, hg.rhs_indptr, hg.rhs,
                  np.arange(len(hg.words), dtype=np.int32), scores)
        for unique in (False, True):
            for k in args.k:
                def kernel():
                    sec, res, mem, reset = measure(lambda: _kbest.kbest(*arrays, k, unique, -1), args.repeat)
                    return sec, len(res[1]), len(res[3]), res[6], res[7], mem, reset

                def full():
                    sec, ders, mem, _ = measure(lambda: kbest(hg, scores, k, unique), args.repeat)
                    return sec, len(ders), mem

                sec, n_out, n_edges_out, examined, n_cand, mem, reset = in_child(kernel)
                full_sec, n_full, full_mem = in_child(full)
                label = "unique" if unique else "plain "
                print(f"  {label} k={k:5d}: kernel {sec * 1e3:7.1f} ms = {n_out / sec:8.0f} derivations/s "
                      f"({examined} examined, {n_cand} candidates, {n_edges_out / max(n_out, 1):.0f} edges each), "
                      f"peak +{mem:.1f} MB{'' if reset else ' (process peak)'}; "
                      f"kbest() {full_sec * 1e3:7.1f} ms = {n_full / full_sec:7.0f} derivations/s, "
                      f"peak +{full_mem:.1f} MB", flush=True)
    print(f"peak RSS {peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
