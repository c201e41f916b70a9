"""``mtplug plot WORKDIR``: PNG figures of a tuning run (matplotlib, Agg backend).

* ``bleu.png``: BLEU per iteration: the tuning set's decoded 1-best, the optimizer's
  score on the accumulated store and, for a run with ``--test-input``, the test set's
  1-best decoded with the same weights as the tuning set's (:func:`bleu_curves`).
* ``error-surface.png`` (MERT runs): corpus BLEU on the last iteration's store as a
  function of γ along w_start + γ·(w_end − w_start) of the last iteration. The MERT
  optimizer does not report its last search direction, so the surface is taken along
  the net move of that iteration; it is computed exactly (every breakpoint of the
  1-best) with the line-search sweep of ``mtplug.optimizers.line_search``.
"""

from __future__ import annotations

import json
import os

import numpy as np

from ..errors import InputError
from .loop import iteration_dir, read_state


def pyplot():
    """matplotlib.pyplot on the Agg backend; InputError when matplotlib is missing."""
    try:
        import matplotlib
    except ImportError:
        raise InputError("plots need matplotlib: pip install 'mtplug[plot]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def bleu_curves(state: dict) -> list[tuple[str, str, list[int], list[float]]]:
    """The curves of ``bleu.png`` from a run's state: (label, matplotlib format,
    iterations, BLEU values) each; the store's curve leaves out iterations without an
    optimizer run, the test curve is there only for a run with a test set."""
    hist = state["history"]
    curves = [("tuning set, decoded 1-best", "o-", [h["iteration"] for h in hist], [h["bleu"] for h in hist])]
    tuned = [(h["iteration"], h["tuned_bleu"]) for h in hist if h["tuned_bleu"] is not None]
    if tuned:
        its, values = zip(*tuned)
        curves.append((f"{state['fingerprint']['optimizer']} on the store", "s--", list(its), list(values)))
    if "test_input" in state["fingerprint"]:
        curves.append(("test set, decoded 1-best", "^-", [h["iteration"] for h in hist],
                       [h["test_bleu"] for h in hist]))
    return curves


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
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, style, x, y in bleu_curves(state):
        ax.plot(x, y, style, label=label)
    ax.set_xlabel("iteration")
    ax.set_ylabel("BLEU")
    ax.set_xticks(its)
    ax.set_title("BLEU per iteration")
    ax.legend()
    ax.grid(alpha=0.3)
    path = os.path.join(out, "bleu.png")
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
