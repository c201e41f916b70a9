"""``mtplug plot WORKDIR``: PNG figures of a tuning run (matplotlib, Agg backend).

* One figure per metric, its axis named by the metric (:func:`score_figures`):
  ``bleu.png``, BLEU per iteration: the tuning set's decoded 1-best, the optimizer's
  score on the accumulated store (a BLEU run's; a store of another metric holds no BLEU
  statistics) and, for a run with ``--test-input``, the test set's 1-best decoded with
  the same weights as the tuning set's (:func:`bleu_curves`). A run tuned to another
  metric adds its own figure, ``chrf.png``, ``ter.png``, ``bleu_0.5_chrf_0.5.png``
  (the ``--metric`` text with every other character than letters, digits, ``+ . -``
  made ``_``), with the same three curves in that metric (:func:`metric_curves`); an
  error rate's axis says lower is better.
* ``error-surface.png`` (MERT runs): corpus score of the store's metric on the last
  iteration's store as a function of γ along w_start + γ·(w_end − w_start) of the last
  iteration. The MERT optimizer does not report its last search direction, so the
  surface is taken along the net move of that iteration; it is computed exactly (every
  breakpoint of the 1-best) with the line-search sweep of ``mtplug.optimizers.line_search``.

A state written before the scores were named by their metric (version 2: a run under
another metric kept its scores in ``metric_value`` and the like, and ``tuned_bleu``
held the other metric's score on the store) is read as the loop reads it
(:func:`mtplug.tuning.loop.read_state`), so its figures are labelled rightly too.
"""

from __future__ import annotations

import json
import os
import re

import numpy as np

from ..errors import InputError
from ..metrics.layer import parse_metric
from .loop import iteration_dir, read_state

#: a curve: (legend label, matplotlib format, iterations, values)
Curve = tuple[str, str, list[int], list[float]]


def pyplot():
    """matplotlib.pyplot on the Agg backend; InputError when matplotlib is missing."""
    try:
        import matplotlib
    except ImportError:
        raise InputError("plots need matplotlib: pip install 'mtplug[plot]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _metric(state: dict) -> str:
    """The ``--metric`` text the run was tuned to (its fingerprint names any but BLEU)."""
    return state["fingerprint"].get("metric", "bleu")


def _curves(state: dict, decoded: str, tuned: str | None, test: str) -> list[Curve]:
    """The decoded 1-best's curve (history key ``decoded``), the store's (``tuned``; leaving
    out iterations without an optimizer run; None: none) and, with a test set, the test
    set's (``test``)."""
    hist = state["history"]
    its = [h["iteration"] for h in hist]
    curves = [("tuning set, decoded 1-best", "o-", its, [h[decoded] for h in hist])]
    stored = [(h["iteration"], h[tuned]) for h in hist if tuned is not None and h[tuned] is not None]
    if stored:
        x, y = zip(*stored)
        curves.append((f"{state['fingerprint']['optimizer']} on the store", "s--", list(x), list(y)))
    if "test_input" in state["fingerprint"]:
        curves.append(("test set, decoded 1-best", "^-", its, [h[test] for h in hist]))
    return curves


def bleu_curves(state: dict) -> list[Curve]:
    """The curves of ``bleu.png`` from a run's state (as :func:`read_state` gives it): BLEU
    of the tuning set's decoded 1-best, on the store (a BLEU run only), of the test set's
    1-best (a run with a test set only)."""
    return _curves(state, "bleu", "tuned_score" if _metric(state) == "bleu" else None, "test_bleu")


def metric_curves(state: dict) -> list[Curve]:
    """The curves of the tuned metric's figure: its score of the tuning set's decoded
    1-best, on the store, of the test set's 1-best (with a test set); BLEU's for a BLEU run."""
    return _curves(state, "score", "tuned_score", "test_score")


def score_figures(state: dict) -> list[tuple[str, str, bool, list[Curve]]]:
    """The score figures of a run: (file name, axis label: the metric's name as text
    outputs give it, whether higher is better, curves) each; ``bleu.png`` first, then
    under another metric than BLEU that metric's own figure."""
    figures = [("bleu.png", "BLEU", True, bleu_curves(state))]
    text = _metric(state)
    if text != "bleu":
        metric = parse_metric(text)
        name = re.sub(r"[^A-Za-z0-9+.-]+", "_", text) + ".png"
        figures.append((name, metric.label, metric.higher_is_better, metric_curves(state)))
    return figures


def plot_workdir(workdir: str, out: str | None = None) -> list[str]:
    """Write the figures of the run in ``workdir``; returns the paths written."""
    state = read_state(workdir)
    if state is None or not state["history"]:
        raise InputError("no completed tuning iteration here (state.json missing or empty)", workdir)
    plt = pyplot()
    out = out or os.path.join(workdir, "plots")
    os.makedirs(out, exist_ok=True)
    written = []

    its = [h["iteration"] for h in state["history"]]
    for name, label, higher_is_better, curves in score_figures(state):
        fig, ax = plt.subplots(figsize=(6, 4))
        for legend, style, x, y in curves:
            ax.plot(x, y, style, label=legend)
        ax.set_xlabel("iteration")
        ax.set_ylabel(label if higher_is_better else f"{label} (lower is better)")
        ax.set_xticks(its)
        ax.set_title(f"{label} per iteration")
        ax.legend()
        ax.grid(alpha=0.3)
        path = os.path.join(out, name)
        fig.savefig(path, dpi=100, bbox_inches="tight")
        plt.close(fig)
        written.append(path)

    if state["fingerprint"]["optimizer"] == "mert":
        surface = _error_surface(plt, workdir, state, out)
        if surface:
            written.append(surface)
    return written


def _error_surface(plt, workdir: str, state: dict, out: str) -> str | None:
    from ..corpus import NbestCorpus
    from ..formats.weights_core import Weights
    from ..optimizers.line_search import sweep

    store = os.path.join(iteration_dir(workdir, state["completed"]), "store.npz")
    if not os.path.exists(store):
        return None
    corpus = NbestCorpus.load(store)  # holds every iteration's n-best
    names = corpus.feature_names
    # the last iteration that moved the weights (a converged last one did not)
    for n in range(state["completed"], 0, -1):
        wfile = os.path.join(iteration_dir(workdir, n), "weights.json")
        if not os.path.exists(wfile):
            return None
        with open(wfile, encoding="utf-8") as fh:
            w = json.load(fh)
        start = Weights(w["start"]).to_array(names, allow_unknown=True)
        d = Weights(w["end"]).to_array(names, allow_unknown=True) - start
        if np.any(d):
            break
    else:
        return None
    xs, scores, _ = sweep(corpus, corpus.scores(start), corpus.scores(d))
    lo, hi = -1.0, 2.0
    inside = xs[(xs > lo) & (xs < hi)]
    gx = np.concatenate([[lo], inside, [hi]])
    # score of each interval between consecutive gx points: the interval holding its midpoint
    mids = 0.5 * (gx[:-1] + gx[1:])
    gy = corpus.metric.values(np.asarray(scores)[np.searchsorted(xs, mids, side="right")])   # 0-100
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.step(gx, np.concatenate([gy, gy[-1:]]), where="post")
    ax.axvline(0.0, color="grey", lw=0.8, ls=":")
    ax.axvline(1.0, color="red", lw=0.8, ls=":")
    ax.set_xlabel("γ  (0 = start weights, 1 = tuned weights)")
    ax.set_ylabel(f"corpus {corpus.metric.label} on the store of iteration {state['completed']}")
    ax.set_title(f"MERT error surface, iteration {n}: along (final − start) weights,\n"
                 "exact envelope sweep (the optimizer does not expose its last direction)", fontsize=9)
    ax.grid(alpha=0.3)
    path = os.path.join(out, "error-surface.png")
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)
    return path
