"""Forest line search speed: the envelope semiring plus the corpus sweep.

    python benchmarks/bench_forest_mert.py [--edges 10000 100000] [--sentences 20] [--searches 10]

Part 1 builds synthetic CKY-shaped forests (per sentence of 25 source words: about E edges,
0-2 tails per edge, 12 features; see synthetic_forest) and times
line searches along random directions, printing ms per forest line search, edges per
second, goal-envelope segments and peak RSS, and the time of kbmira's hope/fear/model
derivations per forest. Part 2 times the same on the real cdec
forests of ../shared/data/cdec-forests (when present) from cdec's recorded origin along
WordPenalty and prints the result next to cdec's numbers (x = -8.39879, BLEU 0.481539).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _common import peak_rss_mb  # noqa: E402

SHARED = os.path.join(HERE, "..", "..", "shared", "data", "cdec-forests")


def synthetic_forest(rng: np.random.Generator, n_edges: int, src_len: int = 25, n_features: int = 12,
                     vocab: int = 2000):
    """A random CKY-shaped Hypergraph with about ``n_edges`` edges, built as arrays.

    Every source span (i, j) has ``c`` nodes (LM-state splits); each node has ``r`` edges:
    a span of width 1 is translated by 1-3 words, a wider one by 0-2 words around two
    tails (one node of [i, k) and one of [k, j), in either order) or one tail (a sub-span
    of width - 1). The goal's edges take the nodes of the whole sentence. c·r is set so
    that the edge count comes out near ``n_edges``; strings stay as long as real ones.
    """
    from mtplug.hypergraph import Hypergraph

    spans = [(i, i + w) for w in range(1, src_len + 1) for i in range(src_len - w + 1)]
    per_span = max(2, n_edges // len(spans))
    c = max(1, int(round(np.sqrt(per_span / 2))))
    r = max(1, per_span // c)
    node_of = {}
    heads, tail_lists, rhs_lists = [], [], []
    for sp in spans:
        first = len(node_of)
        node_of[sp] = first
        i, j = sp
        for v in range(first * c, first * c + c):
            for _ in range(r):
                words = list(rng.integers(0, vocab, rng.integers(0 if j - i > 1 else 1, 3)))
                if j - i == 1:
                    tails = []
                elif rng.random() < 0.8:
                    k = int(rng.integers(i + 1, j))
                    tails = [node_of[(i, k)] * c + int(rng.integers(c)), node_of[(k, j)] * c + int(rng.integers(c))]
                else:
                    k = int(rng.integers(0, 2))
                    sub = (i + k, j - 1 + k)
                    tails = [node_of[sub] * c + int(rng.integers(c))]
                slots = [-1 - t for t in range(len(tails))]
                if len(slots) == 2 and rng.random() < 0.3:
                    slots.reverse()
                cut = int(rng.integers(0, len(words) + 1))
                heads.append(v)
                tail_lists.append(tails)
                rhs_lists.append(words[:cut] + slots + words[cut:])
    goal = len(spans) * c
    full = node_of[(0, src_len)] * c
    for v in range(full, full + c):
        heads.append(goal)
        tail_lists.append([v])
        rhs_lists.append([-1])
    n_nodes, n = goal + 1, len(heads)
    heads = np.asarray(heads, np.int32)
    tail_ptr = np.zeros(n + 1, np.int64)
    tail_ptr[1:] = np.cumsum([len(t) for t in tail_lists])
    rhs_ptr = np.zeros(n + 1, np.int64)
    rhs_ptr[1:] = np.cumsum([len(x) for x in rhs_lists])
    node_edges = np.zeros(n_nodes + 1, np.int64)
    node_edges[1:] = np.cumsum(np.bincount(heads, minlength=n_nodes))
    hg = Hypergraph(n_nodes, node_edges, heads, tail_ptr,
                    np.fromiter((t for ts in tail_lists for t in ts), np.int32, int(tail_ptr[-1])),
                    rhs_ptr, np.fromiter((x for xs in rhs_lists for x in xs), np.int32, int(rhs_ptr[-1])),
                    np.arange(n + 1, dtype=np.int64) * n_features,
                    np.tile(np.arange(n_features, dtype=np.int32), n), rng.normal(size=n * n_features),
                    [f"w{i}" for i in range(vocab)], [f"F{i}" for i in range(n_features)], "synthetic")
    hg.check()
    return hg


def bench_synthetic(n_edges: int, n_sentences: int, n_searches: int) -> None:
    from mtplug.formats.references import References
    from mtplug.forests.corpus import ForestCorpus
    from mtplug.optimizers.line_search import line_search

    rng = np.random.default_rng(0)
    refs = References([[" ".join(f"w{i}" for i in rng.integers(0, 2000, 25))] for _ in range(n_sentences)], "synth")
    corpus = ForestCorpus(refs)
    t = time.perf_counter()
    for s in range(n_sentences):
        corpus.add(s, synthetic_forest(rng, n_edges))
    build = time.perf_counter() - t
    w = rng.normal(size=corpus.n_features)
    lines = segments = 0
    t = time.perf_counter()
    for _ in range(n_searches):
        d = rng.normal(size=corpus.n_features)
        res = line_search(corpus, w, d)
        lines += res.lines
    wall = time.perf_counter() - t
    per_forest = wall / (n_searches * n_sentences)
    segments = lines / (n_searches * n_sentences)
    edges = corpus.n_hypotheses / n_sentences
    print(f"synthetic {edges:>9,.0f} edges/forest x {n_sentences} forests: {per_forest * 1e3:8.2f} ms per forest "
          f"line search, {edges / per_forest / 1e6:6.2f} M edges/s, {segments:6.1f} goal segments/forest "
          f"(build {build:.1f} s), peak RSS {peak_rss_mb():.0f} MB")
    from mtplug.forests.hopefear import hope_fear_model

    bg = np.array([4, 4, 3, 3, 2, 2, 1, 1, 4], np.float64)
    t = time.perf_counter()
    for s in range(n_sentences):
        hope_fear_model(corpus, s, w, bg)
    per = (time.perf_counter() - t) / n_sentences
    print(f"    hope + fear + model derivations: {per * 1e3:8.2f} ms per forest")


def bench_cdec(repeat: int) -> None:
    from mtplug.formats.cdec_forest import read_cdec_forest
    from mtplug.formats.references import read_references
    from mtplug.forests.corpus import ForestCorpus
    from mtplug.optimizers.line_search import line_search

    refs = read_references([os.path.join(SHARED, f"c2e.txt.{i}") for i in range(4)])
    origin = {"WordPenalty": 4.25, "LanguageModel": -1.1165, "PhraseModel_0": -0.96, "PhraseModel_1": -0.65,
              "PhraseModel_2": -0.77, "PassThrough": -10}
    corpus = ForestCorpus(refs, feature_names=list(origin))
    for s in range(2):
        corpus.add(s, read_cdec_forest(os.path.join(SHARED, f"{s}.bin.gz")))
    w = np.array([origin.get(n, 0.0) for n in corpus.feature_names])
    d = np.array([1.0 if n == "WordPenalty" else 0.0 for n in corpus.feature_names])
    t = time.perf_counter()
    for _ in range(repeat):
        res = line_search(corpus, w, d)
    per = (time.perf_counter() - t) / repeat
    print(f"cdec forests ({corpus.n_hypotheses:,} edges in 2 forests): {per * 1e3 / 2:.3f} ms per forest line "
          f"search; best step {res.gamma:.5f}, BLEU {res.score:.6f} (cdec: -8.39879, 0.481539)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--edges", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--sentences", type=int, default=20)
    ap.add_argument("--searches", type=int, default=10)
    args = ap.parse_args()
    for n in args.edges:
        bench_synthetic(n, args.sentences, args.searches)
    if os.path.isdir(SHARED):
        bench_cdec(repeat=200)


if __name__ == "__main__":
    main()
