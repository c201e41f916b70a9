#!/usr/bin/env python3
"""Galley et al. (2013), Figures 2 and 3: Hopkins & May's synthetic set, every optimizer.

    python benchmarks/reproductions/galley_synthetic.py --out RESULTS [--dims 10 100 500 1000]
        [--noise 0 200] [--seeds 0 1 2] [--sentences 1000] [--nbest 500] [--optimizers ...]

Each (D, noise, seed) draws a set with mtplug.synthetic.make_synthetic (S sentences × M
hypotheses, features uniform in [0, 500], gold weights w* ~ N(0, I), pseudo-BLEU the
per-sentence rescaled w*·f; with noise the tuner sees the features plus N(0, noise²))
and runs every optimizer once from uniform weights (all 1) with its defaults (MERT: one
start point, no restarts): pseudo-BLEU of the 1-best and the cosine of the weights to w*.
Rows go to ``RESULTS/synthetic.jsonl`` (a finished row is not run again); ``--plot``
draws ``RESULTS/figure2.png`` (pseudo-BLEU against D) and ``figure3.png`` (cosine
against D), one line per optimizer, mean over seeds, for each noise level.

    python benchmarks/reproductions/galley_synthetic.py --out RESULTS --convergence 500 \
        [--coordinate-rounds 25] [--noise 0] [--seeds 0]

is the paper's convergence plot instead: coordinate-ascent MERT against the expected-BLEU
direction finder on one set of that D, the 1-best objective after every move against
seconds and against line searches (``Result.info["trace"]``), in
``RESULTS/convergence-D.json`` and ``convergence-D.png``. Coordinate ascent stops after
``--coordinate-rounds`` rounds (each is D line searches).

    python benchmarks/reproductions/galley_synthetic.py --out RESULTS --cone 1000 [--seeds 0]

measures, on one noiseless set of that D, what bounds C5's cosine (no optimizer runs):
the cosine to w* of the expected-BLEU gradient at a uniform distribution (the per-sentence
covariance of pseudo-BLEU and features, the finder's first direction) beside the sampling
floor 1 - D/(2·S·M) a covariance estimate has, and how far the weights can turn from w*
along random directions before a sentence loses its best hypothesis. Printed and written to
``RESULTS/cone-D.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))

OPTIMIZERS = {
    "mert-coordinate": ("mert", dict(directions="coordinate", restarts=0)),
    "mert-random": ("mert", dict(directions="random", restarts=0)),
    "mert-powell": ("mert", dict(directions="powell", restarts=0)),
    "mert-expbleu": ("mert", dict(directions="expbleu", restarts=0)),
    "pro": ("pro", {}),
    "apro": ("apro", {}),
    "rampion": ("rampion", {}),
    "kbmira": ("kbmira", {}),
    "mira": ("mira", {}),
}


def run(args) -> None:
    from mtplug.optimizers.registry import get_optimizer
    from mtplug.synthetic import cosine, make_synthetic

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows_file = out / "synthetic.jsonl"
    done = set()
    if rows_file.exists():
        for line in rows_file.read_text().splitlines():
            r = json.loads(line)
            done.add((r["dims"], r["noise"], r["seed"], r["optimizer"]))
    for dims in args.dims:
        for noise in args.noise:
            for seed in args.seeds:
                todo = [o for o in args.optimizers if (dims, noise, seed, o) not in done]
                if not todo:
                    continue
                corpus, w_star = make_synthetic(args.sentences, args.nbest, dims, noise=noise, seed=seed)
                for name in todo:
                    kind, options = OPTIMIZERS[name]
                    t = time.perf_counter()
                    res = get_optimizer(kind)(**options).optimize(corpus, np.ones(dims), seed, threads=args.threads)
                    # the rows keep the pseudo-BLEU as a fraction (Result.score is 0-100), as
                    # the rows already written and the tables drawn from them have it
                    row = {"dims": dims, "noise": noise, "seed": seed, "optimizer": name,
                           "pseudo_bleu": res.score / 100, "cosine": cosine(res.weights, w_star),
                           "seconds": round(time.perf_counter() - t, 2)}
                    with open(rows_file, "a") as fh:
                        fh.write(json.dumps(row) + "\n")
                    print(json.dumps(row), flush=True)
                del corpus


def convergence(args) -> None:
    """Coordinate ascent and the gradient finder on one set: their traces and cosines."""
    from mtplug.optimizers.registry import get_optimizer
    from mtplug.synthetic import cosine, make_synthetic

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    dims, noise, seed = args.convergence, args.noise[0], args.seeds[0]
    corpus, w_star = make_synthetic(args.sentences, args.nbest, dims, noise=noise, seed=seed)
    runs = {}
    for name, options in (("coordinate", dict(directions="coordinate", max_iterations=args.coordinate_rounds)),
                          ("expected BLEU", dict(directions="expbleu"))):
        t = time.perf_counter()
        res = get_optimizer("mert")(restarts=0, **options).optimize(corpus, np.ones(dims), seed, threads=args.threads)
        # fractions, as the recorded convergence files have them (Result's score and trace are 0-100)
        runs[name] = {"options": options, "seconds": round(time.perf_counter() - t, 2), "pseudo_bleu": res.score / 100,
                      "cosine": cosine(res.weights, w_star), "iterations": res.info.get("iterations"),
                      "trace": [(s, n, objective / 100) for s, n, objective in res.info["trace"]]}
        print(name, json.dumps({k: v for k, v in runs[name].items() if k != "trace"}), flush=True)
    record = {"dims": dims, "noise": noise, "seed": seed, "sentences": args.sentences, "nbest": args.nbest,
              "threads": args.threads, "runs": runs}
    (out / f"convergence-{dims}.json").write_text(json.dumps(record, indent=1) + "\n")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for name, run_ in runs.items():
        trace = np.array(run_["trace"], dtype=float).reshape(-1, 3)
        for ax, col in zip(axes, (0, 1)):
            keep = trace[:, col] > 0          # a log axis
            ax.plot(trace[keep, col], trace[keep, 2], marker=".", label=f"{name} (cosine {run_['cosine']:.4f})")
    for ax, label in zip(axes, ("seconds", "line searches")):
        ax.set_xlabel(label)
        ax.set_xscale("log")
        ax.set_ylabel("pseudo-BLEU of the 1-best")
        ax.set_title(f"D = {dims}, noise {noise:g}, {args.sentences} x {args.nbest}")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / f"convergence-{dims}.png", dpi=100)
    plt.close(fig)


def cone(args) -> None:
    """The C5 bound: the first expected-BLEU direction's cosine and the width of the cone
    of weights that keep every sentence's best hypothesis, along random directions."""
    from mtplug.synthetic import cosine, make_synthetic

    dims, seed = args.cone, args.seeds[0]
    corpus, w_star = make_synthetic(args.sentences, args.nbest, dims, seed=seed)
    S, M = args.sentences, args.nbest
    feats = corpus.dense.reshape(S, M, dims)
    gold = (corpus.dense @ w_star).reshape(S, M)
    best = gold.argmax(axis=1)

    def right(w: np.ndarray) -> int:
        return int(((corpus.dense @ w).reshape(S, M).argmax(axis=1) == best).sum())

    pseudo = corpus.stats[:, 0].reshape(S, M).astype(np.float64)
    direction = np.einsum("smd,sm->d", feats - feats.mean(axis=1, keepdims=True),
                          pseudo - pseudo.mean(axis=1, keepdims=True))
    record = {"dims": dims, "seed": seed, "sentences": S, "nbest": M,
              "first_direction": {"cosine": cosine(direction, w_star), "floor": 1 - dims / (2 * S * M),
                                  "sentences_right": right(direction)}, "random_directions": []}
    rng = np.random.default_rng(seed + 1)
    for _ in range(args.cone_directions):
        u = rng.standard_normal(dims)
        u -= (u @ w_star) / (w_star @ w_star) * w_star
        u *= np.linalg.norm(w_star) / np.linalg.norm(u)     # w* + t·u has cosine 1/sqrt(1 + t²)
        lo, hi = 0.0, 1.0
        while right(w_star + hi * u) == S:
            hi *= 2
        for _ in range(30):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if right(w_star + mid * u) == S else (lo, mid)
        at = {c: right(w_star + np.sqrt(1 / c ** 2 - 1) * u) for c in (0.999, 0.996)}
        record["random_directions"].append({"cosine_every_sentence_right": 1 / np.sqrt(1 + lo * lo),
                                            "sentences_right_at_cosine": at})
    print(json.dumps(record, indent=1))
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / f"cone-{dims}.json").write_text(json.dumps(record, indent=1) + "\n")


def table(out: Path) -> str:
    rows = [json.loads(x) for x in (out / "synthetic.jsonl").read_text().splitlines()]
    keys = sorted({(r["noise"], r["dims"]) for r in rows})
    names = [n for n in OPTIMIZERS if any(r["optimizer"] == n for r in rows)]
    lines = ["| noise | D | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]
    for noise, dims in keys:
        cells = []
        for n in names:
            sel = [r for r in rows if (r["noise"], r["dims"], r["optimizer"]) == (noise, dims, n)]
            if not sel:
                cells.append("")
                continue
            cos = np.array([r["cosine"] for r in sel])
            bleu = np.array([r["pseudo_bleu"] for r in sel])
            cells.append(f"{cos.mean():.4f} / {bleu.mean():.4f} ({len(sel)})")
        lines.append(f"| {noise:g} | {dims} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot(out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [json.loads(x) for x in (out / "synthetic.jsonl").read_text().splitlines()]
    for field, name in (("pseudo_bleu", "figure2"), ("cosine", "figure3")):
        noises = sorted({r["noise"] for r in rows})
        fig, axes = plt.subplots(1, len(noises), figsize=(6 * len(noises), 4), squeeze=False)
        for ax, noise in zip(axes[0], noises):
            for opt in OPTIMIZERS:
                sel = [r for r in rows if r["noise"] == noise and r["optimizer"] == opt]
                dims = sorted({r["dims"] for r in sel})
                if not dims:
                    continue
                ys = [np.mean([r[field] for r in sel if r["dims"] == d]) for d in dims]
                ax.plot(dims, ys, marker="o", label=opt)
            ax.set_xscale("log")
            ax.set_xlabel("features D")
            ax.set_ylabel(field.replace("_", "-"))
            ax.set_title(f"noise {noise:g}")
        axes[0][0].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out / f"{name}.png", dpi=100)
        plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--dims", type=int, nargs="+", default=[10, 100, 500, 1000])
    ap.add_argument("--noise", type=float, nargs="+", default=[0.0, 200.0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--sentences", type=int, default=1000)
    ap.add_argument("--nbest", type=int, default=500)
    ap.add_argument("--optimizers", nargs="+", default=list(OPTIMIZERS), choices=list(OPTIMIZERS))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--plot", action="store_true", help="only write the table and the plots of the rows so far")
    ap.add_argument("--convergence", type=int, metavar="D",
                    help="the convergence plot at this D instead (first --noise and --seeds value)")
    ap.add_argument("--coordinate-rounds", type=int, default=25, metavar="N",
                    help="with --convergence: coordinate ascent's rounds at most (default 25)")
    ap.add_argument("--cone", type=int, metavar="D",
                    help="the C5 bound at this D instead (first --seeds value; no optimizer runs)")
    ap.add_argument("--cone-directions", type=int, default=5, metavar="N",
                    help="with --cone: random directions to walk (default 5)")
    a = ap.parse_args()
    if a.cone:
        cone(a)
        return
    if a.convergence:
        convergence(a)
        return
    if not a.plot:
        run(a)
    (Path(a.out) / "table.md").write_text(table(Path(a.out)))
    plot(Path(a.out))
    print(table(Path(a.out)))


if __name__ == "__main__":
    main()
