"""The forms of an evaluate report: MultEval's aligned text table and LaTeX table, and a
PNG of every replica's score.

Text and LaTeX follow MultEval 0.5.1's layout (tests/golden/multeval): a 15-character
system column (wider for a longer name, which MultEval runs into its scores), 23-character metric cells ``mean (s_sel/s_opt/p)`` (s_opt is s_dev, the
spread across optimizer replicas), scores and spreads to one decimal and p-values to two,
rounded half up from the shortest decimal form of the number as Java prints them. With one
replica ``*`` stands for s_dev, and the p-value is printed (MultEval leaves it out). The
JSON form (:meth:`mtplug.experiments.evaluate.Report.to_json`) keeps every digit.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

from .evaluate import Report


def _num(x, digits: int, missing: str = "-") -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return missing
    return str(Decimal(repr(float(x))).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def text_table(report: Report) -> str:
    """MultEval's table: one row per system, per metric ``mean (s_sel/s_opt/p)``; notes on
    the tests (and, with one replica, the paired bootstrap's p-values) follow it."""
    one = report.n_replicas == 1
    # MultEval's 15 characters, wider when a system's name would run into its scores
    width = max(15, *(len(s.name) + 1 for s in report.systems))
    lines = [f"{'n=' + str(report.n_replicas):<{width}}"
             + "".join(f"{m.label + ' (s_sel/s_opt/p)':<23}" for m in report.metrics)]
    for s in report.systems:
        cells = []
        for m in report.metrics:
            r = s.metrics[m.text]
            cells.append(f"{_num(r.mean, 1)} ({_num(r.s_sel, 1)}/{_num(r.s_dev, 1, '*')}/{_num(r.p, 2)})")
        lines.append(f"{s.name:<{width}}" + "".join(f"{c:<23}" for c in cells))
    if one:
        lines.append("  *  no estimate of optimizer instability from a single optimizer run; consider several")
    lines.append("")
    lines.append(f"p: approximate randomization against {report.systems[0].name} ({report.ar_shuffles} shuffles"
                 + (f", stratified over {report.n_replicas} replicas" if not one else "")
                 + f"); s_sel: bootstrap ({report.boot_samples} samples); seed {report.seed}")
    if one and len(report.systems) > 1:
        lines.append(f"paired bootstrap resampling ({report.boot_samples} samples) against {report.systems[0].name}:")
        for s in report.systems[1:]:
            parts = []
            for m in report.metrics:
                r = s.metrics[m.text]
                wins = "" if r.bootstrap_wins is None else f", better in {100 * r.bootstrap_wins:.1f}% of samples"
                parts.append(f"{m.label} p = {_num(r.p_bootstrap, 4)}{wins}")
            lines.append(f"  {s.name}: " + "; ".join(parts))
    lines.append(report.signature)
    return "\n".join(line.rstrip() for line in lines) + "\n"


_LATEX_ESCAPES = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def _tex(text: str) -> str:
    return "".join(_LATEX_ESCAPES.get(ch, ch) for ch in text)


def latex_table(report: Report) -> str:
    """MultEval's LaTeX table (needs ``\\usepackage{multirow}``): per metric a block of
    systems with mean, s_sel, s_dev (s_Test) and p."""
    arrow = {True: r" $\uparrow$", False: r" $\downarrow$", None: " "}
    out = [r"\begin{table}[htb]", r"\begin{center}", r"\begin{footnotesize}", r"\begin{tabular}{|l|l|l|l|l|l|}",
           r"\hline",
           (r"\bf Metric & \bf System & \bf Avg & \bf $\overline{s}_{\text{sel}}$ & \bf $s_{\text{Test}}$ & "
            r"\bf $p$-value \\"), r"\hline"]
    for m in report.metrics:
        out.append(f"\\multirow{{{len(report.systems)}}}{{*}}{{{_tex(m.label)}{arrow[m.higher_is_better]}}}")
        for s in report.systems:
            r = s.metrics[m.text]
            out.append(f"& {_tex(s.name)} & {_num(r.mean, 1)} & {_num(r.s_sel, 1)} & {_num(r.s_dev, 1)} & "
                       f"{_num(r.p, 2)} \\\\")
        out.append(r"\hline")
    shuffles = (f"approximate randomization, {report.ar_shuffles} shuffles"
                + (f" stratified over the {report.n_replicas} optimizer replicas" if report.n_replicas > 1 else ""))
    out += [r"\end{tabular}", r"\end{footnotesize}", r"\end{center}",
            r"\caption{\label{tab:scores} Metric scores averaged over " + str(report.n_replicas)
            + r" optimizer replica(s) per system. $\overline{s}_{\text{sel}}$: standard deviation over "
            + str(report.boot_samples) + r" bootstrap resamples of the test set (test-set selection), averaged over "
            r"replicas; $s_{\text{Test}}$: standard deviation across replicas (optimizer instability); $p$: "
            + shuffles + r", relative to " + _tex(report.systems[0].name) + r" (Clark et al., 2011).}",
            r"\end{table}", f"% {report.signature}"]
    return "\n".join(out) + "\n"


def plot_replicas(report: Report, path: str, title: str | None = None) -> None:
    """A PNG at ``path``: one panel per metric, every replica's score as a dot per
    system and the mean as a bar (the spread across optimizer runs is what it shows)."""
    from ..fileio import atomic_output
    from ..tuning.plot import pyplot

    plt = pyplot()
    k = len(report.metrics)
    fig, axes = plt.subplots(1, k, figsize=(max(4.0, 1.2 * len(report.systems) + 2.0) * k, 4.0), squeeze=False)
    for ax, m in zip(axes[0], report.metrics):
        for x, s in enumerate(report.systems):
            r = s.metrics[m.text]
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
