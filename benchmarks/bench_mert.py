"""MERT benchmarks: speed on the big synthetic Moses set, and gold-weight recovery.

    python benchmarks/bench_mert.py speed [--data DIR] [--restarts 1] [--threads 1] [--directions coordinate powell]
    python benchmarks/bench_mert.py recovery [--dims 10 100 500 1000] [--sentences 1000] [--nbest 500]

``speed`` reads the 2,000 × 1,000 × 15 set made by benchmarks/synth.py (generated if
missing; the store is cached as DIR/work/store.npz) and runs MERT from its init.opt
like ``mert -d 15 -n RESTARTS``, printing BLEU, wall time, time per line search,
envelope lines per second and peak RSS. Moses's mert on such a set on a machine like
ours: -n 1 (start + 1 random start): 113-143 s, 450 MB, BLEU 0.386215 (on the
project's reference set); 20 restarts, 2 threads: 862 s, 0.38926.

``recovery`` runs the synthetic experiment of Hopkins & May (2011) / Galley et al.
(2013, §5) (mtplug.synthetic) for every direction finder and regulariser, with and
without Gaussian noise (sd 200) on the features, and prints the cosine to w* and the
pseudo-BLEU reached.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def load_big(data: str):
    from mtplug.corpus import NbestCorpus
    from mtplug.formats.mert_weights import read_init_opt
    from mtplug.formats.references import read_references

    nbest = os.path.join(data, "nbest.txt")
    if not os.path.exists(nbest):
        sys.path.insert(0, HERE)
        from synth import generate

        print(f"generating {data} ...", file=sys.stderr)
        generate(data)
    store = os.path.join(data, "work", "store.npz")
    try:
        corpus = NbestCorpus.load(store)
    except Exception:
        corpus = NbestCorpus.from_nbest([nbest], read_references([os.path.join(data, "ref.0")]))
        os.makedirs(os.path.dirname(store), exist_ok=True)
        corpus.save(store)
    return corpus, read_init_opt(os.path.join(data, "init.opt"))


def speed(args) -> None:
    from mtplug.optimizers.mert import Mert

    corpus, init = load_big(args.data)
    # Moses's mert reads features.dat/scores.dat only: no hypothesis strings in memory
    corpus.hyp_indptr = corpus.hyp_bytes = None
    print(f"{corpus}; start BLEU {100 * corpus.bleu_of(init.start).score:.4f}")
    for directions in args.directions:
        t = time.perf_counter()
        res = Mert(directions=directions, restarts=args.restarts).optimize(
            corpus, init.start, args.seed, threads=args.threads, ranges=(init.mins, init.maxs))
        wall = time.perf_counter() - t
        i = res.info
        print(f"{directions:10s} restarts {args.restarts:2d} threads {args.threads}: BLEU {res.score:.4f}  "
              f"{wall:7.2f} s  {i['line_searches']} line searches, "
              f"{1000 * i['seconds_per_line_search']:.1f} ms each, "
              f"{i['lines_per_second']:,.0f} envelope lines/s, "
              f"{corpus.n_hypotheses * i['line_searches'] / wall:,.0f} hyp/s  "
              f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB", flush=True)


def recovery(args) -> None:
    from mtplug.optimizers.mert import Mert
    from mtplug.synthetic import cosine, make_synthetic

    settings = [("coordinate", "none", 0.0), ("random", "none", 0.0), ("powell", "none", 0.0),
                ("expbleu", "none", 0.0), ("expbleu", "l2-l1norm", args.strength),
                ("expbleu", "l0", args.strength), ("expbleu", "l2-fixed", args.strength)]
    for dims in args.dims:
        for noise in (0.0, 200.0):
            corpus, w_star = make_synthetic(args.sentences, args.nbest, dims, noise=noise, seed=args.seed)
            for directions, reg, strength in settings:
                if directions in args.skip:
                    continue
                t = time.perf_counter()
                res = Mert(directions=directions, restarts=0, reg=reg, reg_strength=strength if reg != "none" else None,
                           max_iterations=args.max_iterations).optimize(corpus, np.ones(dims), args.seed,
                                                                        threads=1)
                print(f"D {dims:5d} noise {noise:5.0f} {directions:10s} {reg:9s}: cosine {cosine(res.weights, w_star):.5f}"
                      f"  pseudo-BLEU {res.score:.4f}  {time.perf_counter() - t:7.1f} s  "
                      f"{res.info['line_searches']} line searches", flush=True)
            del corpus


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    s = sub.add_parser("speed")
    s.add_argument("--data", default=os.path.join(HERE, "out", "synth-2000x1000"))
    s.add_argument("--restarts", type=int, default=1)
    s.add_argument("--threads", type=int, default=1)
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--directions", nargs="+", default=["coordinate", "powell"])
    r = sub.add_parser("recovery")
    r.add_argument("--dims", type=int, nargs="+", default=[10, 100, 500, 1000])
    r.add_argument("--sentences", type=int, default=1000)
    r.add_argument("--nbest", type=int, default=500)
    r.add_argument("--strength", type=float, default=1e-4)
    r.add_argument("--max-iterations", type=int, default=200)
    r.add_argument("--skip", nargs="*", default=[], help="direction finders to leave out")
    r.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    speed(a) if a.what == "speed" else recovery(a)


if __name__ == "__main__":
    main()
