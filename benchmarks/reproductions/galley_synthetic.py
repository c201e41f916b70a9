#!/usr/bin/env python3
"""Galley et al. (2013), Figures 2 and 3 and the D = 1000 cosine: Hopkins & May's synthetic set.

Every mode draws its sets with mtplug.synthetic.make_synthetic (S = ``--sentences``
sentences × M = ``--nbest`` hypotheses, features uniform in [0, 500], gold weights
w* ~ N(0, I), pseudo-BLEU the per-sentence rescaled w*·h; with noise the tuner sees the
features plus N(0, noise²)). ``--results FILE`` (a file under
benchmarks/reproductions/results/) receives what the mode measured, merged with what the
file holds (a row of the same set and settings is replaced), for the pages' tables
(``table(NAME)``, benchmarks/generated_tables.py).

    python benchmarks/reproductions/galley_synthetic.py --out RESULTS [--dims 10 100 500 1000]
        [--noise 0 200] [--seeds 0 1 2] [--sentences 1000] [--nbest 500] [--optimizers ...]

Figure 2: each (D, noise, seed) runs every optimizer once from uniform weights (all 1)
with its defaults (MERT: one start point, no restarts): pseudo-BLEU of the 1-best and the
cosine of the weights to w*. Rows go to ``RESULTS/synthetic.jsonl`` (a finished row is not
run again); ``--plot`` draws ``RESULTS/figure2.png`` (pseudo-BLEU against D) and
``figure3.png`` (cosine against D), one line per optimizer, mean over seeds, per noise.

    python benchmarks/reproductions/galley_synthetic.py --out RESULTS --convergence 500 \\
        [--coordinate-rounds 25] [--noise 0] [--seeds 0]

Figure 3: coordinate-ascent MERT against the expected-BLEU direction finder on one set of
that D, the 1-best objective after every move against seconds and against line searches
(``Result.info["trace"]``), in ``RESULTS/convergence-D-seedN.json`` and ``convergence-D-seedN.png``.
Coordinate ascent stops after ``--coordinate-rounds`` rounds (each is D line searches).

    python benchmarks/reproductions/galley_synthetic.py --out RESULTS --trace 1000 \\
        [--gradient l1|literal|chain] [--start-l1 X] [--mu-max 1000] [--noise 0] [--seeds 0]

The C5 run (Section 6: cosine > 0.999 at D = 1000): expected-BLEU MERT from uniform
weights on one set, the cosine to w* and the pseudo-BLEU logged after every move (a
gradient step, with its μ, or a coordinate round's move: the paper's footnote 8), in
``RESULTS/trace-D-seedN.json``. ``--gradient``: where the distribution p ∝ exp(μ·w·h) is taken:
``l1`` at w/‖w‖₁ (mtplug's MERT, the default), ``literal`` at w itself (the paper's
words), ``chain`` at w/‖w‖₁ with the chain rule's term along sign(w) kept (mtplug leaves
it out). ``--start-l1 X``: the uniform start scaled to ‖w‖₁ = X (default: all ones,
‖w‖₁ = D), the small-norm start under which ``literal`` begins at a small temperature.

    python benchmarks/reproductions/galley_synthetic.py --out RESULTS --cone 200 \\
        [--sentences 200] [--nbest 250] [--seeds 0] [--cone-directions 5]

The plateau check (no optimizer runs), on one noiseless set of that D: how far from w*
the weights can turn while every sentence keeps its best hypothesis (pseudo-BLEU exactly
1, the optimum). For each of ``--cone-directions`` random unit directions u ⟂ w*, (a)
along the ray w* + t·u, the cosine where a sentence first loses its best hypothesis
(bisection), and (b) the linear programme max u·w subject to w*·w = ‖w*‖² and, for every
sentence s and hypothesis m, w·(h_best(s) − h_m) ≥ δ (δ: a thousandth of w*'s smallest
gap between a best and a second-best hypothesis), solved by HiGHS (scipy.optimize.linprog)
with the constraints added as the solution violates them; its point's cosine to w* and the
sentences whose best hypothesis it keeps (all, checked). Also the cosine to w* of the
expected-BLEU finder's first direction (the gradient at a uniform distribution, the
per-sentence covariance of pseudo-BLEU and features) beside 1 − D/(2·S·M), the expected
cosine of such a covariance estimate from S·M uniform hypotheses. ``RESULTS/cone-D-seedN.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
sys.path.insert(0, str(HERE))

from galley_rerank import not_run_yet  # noqa: E402

RESULTS = HERE / "results"
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
GRADIENTS = ("l1", "literal", "chain")


def _commit() -> str:
    return subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"], check=False,
                          capture_output=True, text=True).stdout.strip()


def save_results(path: str | None, kind: str, entries: list[dict], key: tuple[str, ...]) -> None:
    """Merge ``entries`` into the results file ``path`` (kind ``kind``): an entry whose
    ``key`` fields equal a held one's replaces it."""
    if not path:
        return
    file = Path(path)
    held = json.loads(file.read_text()) if file.exists() else {"kind": kind, "entries": []}
    if held["kind"] != kind:
        raise SystemExit(f"{file}: holds {held['kind']} results, not {kind}")
    def ident(e: dict) -> tuple:
        return tuple(str(e.get(k)) for k in key)

    ids = {ident(e) for e in entries}
    held["entries"] = [e for e in held["entries"] if ident(e) not in ids] + entries
    held["entries"].sort(key=lambda e: tuple((e.get(k) is None, e.get(k) if isinstance(e.get(k), (int, float))
                                              else str(e.get(k))) for k in key))
    held.update(script=Path(__file__).name, commit=_commit(), date=time.strftime("%Y-%m-%d"))
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(json.dumps(held, indent=1, sort_keys=True) + "\n")


# ---------------------------------------------------------------------- Figure 2
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
                    # pseudo-BLEU as a fraction (Result.score is 0-100)
                    row = {"dims": dims, "noise": noise, "seed": seed, "optimizer": name,
                           "sentences": args.sentences, "nbest": args.nbest,
                           "pseudo_bleu": res.score / 100, "cosine": cosine(res.weights, w_star),
                           "seconds": round(time.perf_counter() - t, 2)}
                    with open(rows_file, "a") as fh:
                        fh.write(json.dumps(row) + "\n")
                    print(json.dumps(row), flush=True)
                del corpus


def grid_table(rows: list[dict]) -> str:
    """Cosine / pseudo-BLEU per (noise, D) and optimizer, mean over seeds (their count)."""
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


# ---------------------------------------------------------------------- Figure 3
def objective_at(trace: list, seconds: float) -> float:
    """A run's 1-best objective at ``seconds``: its trace's last (seconds, line searches,
    objective) entry at or before then (the first entry's before any)."""
    reached = [objective for s, _, objective in trace if s <= seconds]
    return reached[-1] if reached else trace[0][2]


def lead_at_equal_time(runs: dict) -> float:
    """Figure 3 read as one number: the expected-BLEU finder's pseudo-BLEU minus
    coordinate ascent's at the time the first of the two stopped."""
    both = (runs["expected BLEU"], runs["coordinate"])
    until = min(r["trace"][-1][0] for r in both)
    return objective_at(both[0]["trace"], until) - objective_at(both[1]["trace"], until)


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
        # fractions (Result's score and trace are 0-100)
        runs[name] = {"options": options, "seconds": round(time.perf_counter() - t, 2), "pseudo_bleu": res.score / 100,
                      "cosine": cosine(res.weights, w_star), "iterations": res.info.get("iterations"),
                      "line_searches": res.info.get("line_searches"),
                      "trace": [(s, n, objective / 100) for s, n, objective in res.info["trace"]]}
        print(name, json.dumps({k: v for k, v in runs[name].items() if k != "trace"}), flush=True)
    record = {"dims": dims, "noise": noise, "seed": seed, "sentences": args.sentences, "nbest": args.nbest,
              "threads": args.threads, "runs": runs, "expbleu_lead": lead_at_equal_time(runs)}
    (out / f"convergence-{dims}-seed{seed}.json").write_text(json.dumps(record, indent=1) + "\n")
    save_results(args.results, "convergence", [record], ("sentences", "nbest", "dims", "noise", "seed"))

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
    fig.savefig(out / f"convergence-{dims}-seed{seed}.png", dpi=100)
    plt.close(fig)


def convergence_table(entries: list[dict]) -> str:
    header = ("| S × M | D | noise | data seed | finder | line searches | seconds | pseudo-BLEU | cosine "
              "| expected BLEU's lead at equal time |")
    lines = [header, "|---|---|---|---|---|---|---|---|---|---|"]
    for e in sorted(entries, key=lambda e: (e["dims"], e["noise"], e["seed"])):
        lead = e["expbleu_lead"]
        for name, r in e["runs"].items():
            lines.append(f"| {e['sentences']} × {e['nbest']} | {e['dims']} | {e['noise']:g} | {e['seed']} | {name} | "
                         f"{r['line_searches']} | {r['seconds']:.1f} | {r['pseudo_bleu']:.6f} | {r['cosine']:.5f} "
                         f"| {lead:+.6f} |")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------- the C5 trace
def _gradient_variant(search, mu: float, variant: str):
    """The unit search direction of ``search`` (mtplug's MERT _Search) at μ with the
    distribution taken as ``variant`` says (module docstring); None where there is none."""
    from mtplug.optimizers.line_search import dot
    from mtplug.optimizers.mert import _quiet_gradient

    w = search.w
    if variant == "literal":
        _, g = _quiet_gradient(search.expected, w, mu)
    else:                                     # chain: J_μ(w/‖w‖₁), the whole chain rule
        l1 = float(np.sum(np.abs(w))) or 1.0
        v = w / l1
        _, g_v = _quiet_gradient(search.expected, v, mu)
        g = (g_v - dot(g_v, v) * np.sign(w)) / l1
    grad = g - search.reg.gradient(w)
    d = np.zeros(len(w))
    d[search.active] = grad[search.active]
    norm = math.sqrt(dot(d, d))
    if norm == 0 or not np.isfinite(norm):
        return None
    return d / norm


@contextlib.contextmanager
def traced(w_star: np.ndarray, moves: list, variant: str = "l1"):
    """While open, every move of mtplug's MERT (``mtplug.optimizers.mert._Search.move``)
    appends to ``moves`` what it reached: line searches so far, the move's kind (a gradient
    step and its μ, or a coordinate round's move), the 1-best objective, the cosine to
    ``w_star`` and ‖w‖₁; gradients are taken as ``variant`` says (GRADIENTS)."""
    from mtplug.optimizers import mert
    from mtplug.synthetic import cosine

    search = mert._Search
    move, gradient, round_ = search.move, search.gradient_direction, search.coordinate_round
    state = {"mu": None, "round": False}

    def traced_gradient(self, mu):
        state["mu"] = mu
        return gradient(self, mu) if variant == "l1" else _gradient_variant(self, mu, variant)

    def traced_round(self):
        state["round"] = True
        try:
            return round_(self)
        finally:
            state["round"] = False

    def traced_move(self, res, d):
        move(self, res, d)
        moves.append({"line_searches": self.line_searches, "by": "coordinate" if state["round"] else "gradient",
                      "mu": None if state["round"] else state["mu"], "objective": self.objective,
                      "cosine": cosine(self.w, w_star), "l1": float(np.sum(np.abs(self.w)))})

    search.move, search.gradient_direction, search.coordinate_round = traced_move, traced_gradient, traced_round
    try:
        yield moves
    finally:
        search.move, search.gradient_direction, search.coordinate_round = move, gradient, round_


def trace(args) -> dict:
    """Expected-BLEU MERT on one set with the cosine after every move (module docstring)."""
    from mtplug.optimizers.mert import Mert
    from mtplug.synthetic import cosine, make_synthetic

    dims, noise, seed = args.trace, args.noise[0], args.seeds[0]
    corpus, w_star = make_synthetic(args.sentences, args.nbest, dims, noise=noise, seed=seed)
    start = np.ones(dims) * (args.start_l1 / dims if args.start_l1 else 1.0)
    moves: list[dict] = []
    t = time.perf_counter()
    with traced(w_star, moves, args.gradient):
        res = Mert(directions="expbleu", restarts=0, mu_max=args.mu_max).optimize(corpus, start, seed,
                                                                                 threads=args.threads)
    record = {"sentences": args.sentences, "nbest": args.nbest, "dims": dims, "noise": noise, "seed": seed,
              "gradient": args.gradient, "start_l1": float(args.start_l1 or dims), "mu_max": args.mu_max,
              "seconds": round(time.perf_counter() - t, 2), "iterations": res.info["iterations"],
              "start_cosine": cosine(start, w_star), "pseudo_bleu": res.score / 100,
              "cosine": cosine(res.weights, w_star), "moves": moves}
    print(json.dumps({k: v for k, v in record.items() if k != "moves"}), flush=True)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / f"trace-{dims}-seed{seed}.json").write_text(json.dumps(record, indent=1) + "\n")
    save_results(args.results, "trace", [record],
                 ("sentences", "nbest", "dims", "noise", "seed", "gradient", "start_l1", "mu_max"))
    return record


def trace_table(entries: list[dict]) -> str:
    head = ("| S × M | D | noise | gradient at | start ‖w‖₁ | μ max | moves (gradient / coordinate) | "
            "cosine: start | after the first move | highest (move) | final | pseudo-BLEU: first move | final |")
    lines = [head, "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for e in entries:
        moves = e["moves"]
        kinds = [m["by"] for m in moves]
        cos = [m["cosine"] for m in moves]
        top = int(np.argmax(cos)) if cos else -1
        first = moves[0] if moves else {"cosine": math.nan, "objective": math.nan}
        lines.append(f"| {e['sentences']} × {e['nbest']} | {e['dims']} | {e['noise']:g} | {e['gradient']} | "
                     f"{e['start_l1']:g} | {e['mu_max']:g} | {len(moves)} ({kinds.count('gradient')} / "
                     f"{kinds.count('coordinate')}) | {e['start_cosine']:.5f} | {first['cosine']:.5f} | "
                     f"{cos[top] if cos else math.nan:.5f} ({top + 1}) | {e['cosine']:.5f} | "
                     f"{first['objective']:.6f} | {e['pseudo_bleu']:.6f} |")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------- the plateau
def plateau_lp(feats: np.ndarray, best: np.ndarray, S: int, M: int, w_star: np.ndarray, u: np.ndarray,
               margin: float, per_round: int = 10) -> dict:
    """max u·w subject to w*·w = ‖w*‖² and w·(h_best(s) − h_m) ≥ ``margin`` for every
    sentence s and hypothesis m ≠ best(s) (``feats`` [S·M, D], ``best`` [S] the index of
    each sentence's best hypothesis within it), by HiGHS with constraints added as they
    are violated (each round: each sentence's ``per_round`` most violated). Returns the
    point, its status and how many constraints and rounds it took."""
    from scipy.optimize import linprog

    D = feats.shape[1]
    H = feats.reshape(S, M, D)
    hb = H[np.arange(S), best]                                  # [S, D]
    gold = (H @ w_star) - (hb @ w_star)[:, None]                # ≤ 0; the best's is 0
    gold[np.arange(S), best] = -np.inf
    k = min(M - 1, 5)
    rows = {(s, int(m)) for s in range(S) for m in np.argsort(-gold[s])[:k]}
    rounds = 0
    while True:
        rounds += 1
        pairs = sorted(rows)
        si = np.array([p[0] for p in pairs])
        mi = np.array([p[1] for p in pairs])
        A = H[si, mi] - hb[si]                                  # w·(h_m − h_best) ≤ −margin
        res = linprog(-u, A_ub=A, b_ub=np.full(len(pairs), -margin), A_eq=w_star[None, :],
                      b_eq=[float(w_star @ w_star)], bounds=[(None, None)] * D, method="highs")
        if res.status != 0:
            return {"status": res.status, "message": res.message, "constraints": len(pairs), "rounds": rounds}
        w = res.x
        slack = (H @ w) - (hb @ w)[:, None]                     # ≤ −margin where kept
        slack[np.arange(S), best] = -np.inf
        violated = slack > -margin / 2                          # beyond the solver's tolerance
        added = 0
        for s in np.flatnonzero(violated.any(axis=1)):
            for m in np.argsort(-slack[s])[:per_round]:
                if violated[s, m] and (int(s), int(m)) not in rows:
                    rows.add((int(s), int(m)))
                    added += 1
        if not added:
            return {"status": 0, "w": w, "constraints": len(pairs), "rounds": rounds}


def cone(args) -> dict:
    """The plateau check of one noiseless set (module docstring)."""
    from mtplug.synthetic import SCALE, cosine, make_synthetic

    dims, seed, S, M = args.cone, args.seeds[0], args.sentences, args.nbest
    t0 = time.perf_counter()
    corpus, w_star = make_synthetic(S, M, dims, seed=seed)
    feats = corpus.dense
    gold = (feats @ w_star).reshape(S, M)
    best = gold.argmax(axis=1)
    ordered = np.sort(gold, axis=1)
    margin = 1e-3 * float((ordered[:, -1] - ordered[:, -2]).min())

    def right(w: np.ndarray) -> int:
        return int(((feats @ w).reshape(S, M).argmax(axis=1) == best).sum())

    pseudo = corpus.stats[:, 0].reshape(S, M).astype(np.float64)
    H = feats.reshape(S, M, dims)
    direction = np.einsum("smd,sm->d", H - H.mean(axis=1, keepdims=True), pseudo - pseudo.mean(axis=1, keepdims=True))
    record = {"sentences": S, "nbest": M, "dims": dims, "seed": seed, "margin": margin,
              "first_direction": {"cosine": cosine(direction, w_star), "expected": 1 - dims / (2 * S * M),
                                  "sentences_right": right(direction)},
              "directions": []}
    rng = np.random.default_rng(seed + 1)
    for _ in range(args.cone_directions):
        u = rng.standard_normal(dims)
        u -= (u @ w_star) / (w_star @ w_star) * w_star
        u /= np.linalg.norm(u)
        ray = u * np.linalg.norm(w_star)           # w* + t·ray has cosine 1/sqrt(1 + t²)
        lo, hi = 0.0, 1.0
        while right(w_star + hi * ray) == S and hi < 1e6:
            hi *= 2
        for _ in range(40):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if right(w_star + mid * ray) == S else (lo, mid)
        t = time.perf_counter()
        lp = plateau_lp(feats, best, S, M, w_star, u, margin)
        row = {"ray_cosine": 1 / math.sqrt(1 + lo * lo), "lp_status": lp["status"],
               "lp_constraints": lp["constraints"], "lp_rounds": lp["rounds"],
               "lp_seconds": round(time.perf_counter() - t, 2)}
        if lp["status"] == 0:
            w = lp["w"]
            rows = (feats @ w).reshape(S, M).argmax(axis=1)
            row.update(lp_cosine=cosine(w, w_star), lp_sentences_right=right(w),
                       lp_pseudo_bleu=float(pseudo[np.arange(S), rows].sum() / (S * SCALE)))
        else:
            row["lp_message"] = lp["message"]
        record["directions"].append(row)
        print(json.dumps(row), flush=True)
    record["seconds"] = round(time.perf_counter() - t0, 2)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / f"cone-{dims}-seed{seed}.json").write_text(json.dumps(record, indent=1) + "\n")
    save_results(args.results, "cone", [record], ("sentences", "nbest", "dims", "seed"))
    return record


def cone_table(entries: list[dict]) -> str:
    head = ("| S × M | D | seed | first direction: cosine | 1 − D/(2SM) | its sentences right | "
            "along random rays: cosine where a sentence is lost | LP: cosine at pseudo-BLEU 1 | "
            "LP: sentences right | LP constraints used |")
    lines = [head, "|---|---|---|---|---|---|---|---|---|---|"]

    def span(xs: list[float], fmt: str) -> str:
        if not xs:
            return "–"
        lo, hi = min(xs), max(xs)
        return f"{lo:{fmt}}" if f"{lo:{fmt}}" == f"{hi:{fmt}}" else f"{lo:{fmt}}–{hi:{fmt}}"

    for e in entries:
        ds = e["directions"]
        solved = [d for d in ds if d["lp_status"] == 0]
        f = e["first_direction"]
        right = sorted({d["lp_sentences_right"] for d in solved})
        lines.append(f"| {e['sentences']} × {e['nbest']} | {e['dims']} | {e['seed']} | {f['cosine']:.5f} | "
                     f"{f['expected']:.5f} | {f['sentences_right']} of {e['sentences']} | "
                     f"{span([d['ray_cosine'] for d in ds], '.7f')} ({len(ds)} rays) | "
                     f"{span([d['lp_cosine'] for d in solved], '.3f')} ({len(solved)} of {len(ds)} solved) | "
                     f"{', '.join(map(str, right)) or '–'} | {span([d['lp_constraints'] for d in solved], 'd')} |")
    return "\n".join(lines) + "\n"


def table(name: str) -> str:
    """results/NAME.json as the page shows it (benchmarks/generated_tables.py)."""
    path = RESULTS / f"{name}.json"
    if not path.exists():
        return not_run_yet(name)
    held = json.loads(path.read_text())
    render = {"cone": cone_table, "trace": trace_table, "convergence": convergence_table,
              "grid": grid_table}[held["kind"]]
    return f"*{name}: commit {held['commit']}, {held['date']}.*\n\n" + render(held["entries"])


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
    ap.add_argument("--results", help="merge what this mode measured into this results file "
                                      "(benchmarks/reproductions/results/NAME.json)")
    ap.add_argument("--plot", action="store_true", help="only write the table and the plots of the rows so far")
    ap.add_argument("--convergence", type=int, metavar="D",
                    help="the convergence plot at this D instead (first --noise value, once per --seeds value)")
    ap.add_argument("--coordinate-rounds", type=int, default=25, metavar="N",
                    help="with --convergence: coordinate ascent's rounds at most (default 25)")
    ap.add_argument("--trace", type=int, metavar="D",
                    help="expected-BLEU MERT at this D with the cosine after every move instead "
                         "(first --noise value, once per --seeds value)")
    ap.add_argument("--gradient", choices=GRADIENTS, default="l1",
                    help="with --trace: the distribution at w/‖w‖₁ (l1, mtplug's), at w (literal), or at "
                         "w/‖w‖₁ with the whole chain rule (chain) (default l1)")
    ap.add_argument("--start-l1", type=float, metavar="X",
                    help="with --trace: the uniform start scaled to ‖w‖₁ = X (default: all ones)")
    ap.add_argument("--mu-max", type=float, default=1000.0, help="with --trace: MERT's mu_max (default 1000)")
    ap.add_argument("--cone", type=int, metavar="D",
                    help="the plateau check at this D instead (once per --seeds value; no optimizer runs)")
    ap.add_argument("--cone-directions", type=int, default=5, metavar="N",
                    help="with --cone: random directions (default 5)")
    a = ap.parse_args()
    mode = cone if a.cone else trace if a.trace else convergence if a.convergence else None
    if mode:
        for seed in a.seeds:        # one set per data seed, each saved as it finishes
            mode(argparse.Namespace(**{**vars(a), "seeds": [seed]}))
        return
    if not a.plot:
        run(a)
    rows = [json.loads(x) for x in (Path(a.out) / "synthetic.jsonl").read_text().splitlines()]
    (Path(a.out) / "table.md").write_text(grid_table(rows))
    plot(Path(a.out))
    save_results(a.results, "grid", rows, ("sentences", "nbest", "dims", "noise", "seed", "optimizer"))
    print(grid_table(rows))


if __name__ == "__main__":
    main()
