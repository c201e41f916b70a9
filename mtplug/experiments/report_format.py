"""The forms of an evaluate report: an aligned text table (MultEval's layout), a LaTeX
table, and a PNG of every replica's score.

Text and LaTeX round as MultEval prints: scores and spreads to one decimal, p-values to
two (the JSON form, :meth:`mtplug.experiments.evaluate.Report.to_json`, keeps every digit).
"""

from __future__ import annotations

import math

from .evaluate import Report


def _num(x, digits: int) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def text_table(report: Report) -> str:
    """MultEval's table: one row per system, per metric ``mean (s_sel/s_dev/p)``; with one
    replica the paired bootstrap's p-values and win shares follow the table."""
    header = [f"n={report.n_replicas}"] + [f"{m.label} (s_sel/s_dev/p)" for m in report.metrics]
    rows = [header]
    for s in report.systems:
        cells = [s.name]
        for m in report.metrics:
            r = s.metrics[m.label]
            cells.append(f"{_num(r.mean, 1)} ({_num(r.s_sel, 1)}/{_num(r.s_dev, 1)}/{_num(r.p, 2)})")
        rows.append(cells)
    widths = [max(len(r[k]) for r in rows) for k in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    if report.n_replicas == 1 and len(report.systems) > 1:
        lines.append("")
        lines.append(f"paired bootstrap resampling ({report.boot_samples} samples), against {report.systems[0].name}:")
        for s in report.systems[1:]:
            parts = []
            for m in report.metrics:
                r = s.metrics[m.label]
                wins = "" if r.bootstrap_wins is None else f", better in {100 * r.bootstrap_wins:.1f}% of samples"
                parts.append(f"{m.label} p = {_num(r.p_bootstrap, 4)}{wins}")
            lines.append(f"  {s.name}: " + "; ".join(parts))
    lines.append("")
    lines.append(f"p: approximate randomization ({report.ar_shuffles} shuffles"
                 + (f", stratified over {report.n_replicas} replicas" if report.n_replicas > 1 else "")
                 + f"); s_sel: bootstrap ({report.boot_samples} samples); seed {report.seed}")
    lines.append(report.signature)
    return "\n".join(lines) + "\n"


_LATEX_ESCAPES = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def _tex(text: str) -> str:
    return "".join(_LATEX_ESCAPES.get(ch, ch) for ch in text)


def latex_table(report: Report) -> str:
    """A booktabs LaTeX table (MultEval's columns): metric, system, mean, s_sel, s_dev, p."""
    arrow = {True: r" $\uparrow$", False: r" $\downarrow$", None: ""}
    out = [r"\begin{tabular}{llrrrr}", r"\toprule",
           r"Metric & System & Avg & $\overline{s}_{\mathrm{sel}}$ & $s_{\mathrm{Test}}$ & $p$-value \\",
           r"\midrule"]
    for i, m in enumerate(report.metrics):
        if i:
            out.append(r"\midrule")
        for j, s in enumerate(report.systems):
            r = s.metrics[m.label]
            name = _tex(m.label) + arrow[m.higher_is_better] if j == 0 else ""
            out.append(f"{name} & {_tex(s.name)} & {_num(r.mean, 1)} & {_num(r.s_sel, 1)} & {_num(r.s_dev, 1)} & "
                       f"{_num(r.p, 2)} \\\\")
    out += [r"\bottomrule", r"\end{tabular}",
            f"% {report.n_replicas} optimizer replica(s) per system; p: approximate randomization "
            f"({report.ar_shuffles} shuffles); seed {report.seed}", f"% {report.signature}"]
    return "\n".join(out) + "\n"


def plot_replicas(report: Report, path: str, title: str | None = None) -> None:
    """A PNG at ``path``: one panel per metric, every replica's score as a dot per
    system and the mean as a bar (the spread across optimizer runs is what it shows)."""
    from ..fileio import atomic_output
    from ..tune.plot import pyplot

    plt = pyplot()
    k = len(report.metrics)
    fig, axes = plt.subplots(1, k, figsize=(max(4.0, 1.2 * len(report.systems) + 2.0) * k, 4.0), squeeze=False)
    for ax, m in zip(axes[0], report.metrics):
        for x, s in enumerate(report.systems):
            r = s.metrics[m.label]
            n = len(r.replicas)
            offsets = [0.0] if n == 1 else [-0.2 + 0.4 * i / (n - 1) for i in range(n)]
            ax.plot([x + o for o in offsets], r.replicas, "o", alpha=0.75, color=f"C{x % 10}")
            ax.hlines(r.mean, x - 0.3, x + 0.3, color="black", linewidth=1.5)
        ax.set_xticks(range(len(report.systems)), [s.name for s in report.systems], rotation=20, ha="right")
        direction = {True: " (higher is better)", False: " (lower is better)", None: ""}[m.higher_is_better]
        ax.set_title(m.label + direction)
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle(title or f"test-set scores of {report.n_replicas} optimizer replica(s) per system (bar: mean)")
    fig.tight_layout()
    with atomic_output(path, "wb") as fh:
        fig.savefig(fh, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
