"""``mtplug evaluate``: the command-line face of :mod:`mtplug.experiments.evaluate`.

Systems are named by their flags as in MultEval: ``--hyps-baseline F...`` and
``--hyps-NAME F...`` for every other system (one file per optimizer replica).
argparse cannot take flags whose names the user chooses, so :func:`named_hyps_argv`
turns each ``--hyps-NAME`` into ``--hyps-system NAME`` before parsing.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence

from .. import validation
from ..aliases import add_alias, suggest_choice
from ..errors import InputError
from ..metric_help import metric_help

EXAMPLES = """\
examples:
  # three optimizer replicas of a baseline and of a system (MultEval's report)
  mtplug evaluate --ref test.ref --hyps-baseline base.opt{1,2,3} --hyps-sys1 sys1.opt{1,2,3}
  # one replica each: approximate randomization and paired bootstrap; LaTeX, JSON and a plot
  mtplug evaluate --ref test.ref.0 test.ref.1 --hyps-baseline base.out --hyps-new new.out \\
      --metric bleu ter chrf --latex table.tex --json report.json --plot replicas.png
  # the test translations of tuning runs (mtplug tune --test-input writes DIR/final.test.out)
  mtplug evaluate --ref test.ref --hyps-baseline mert.s{1,2,3}/final.test.out --hyps-pro pro.s{1,2,3}/final.test.out

The same seed prints the same numbers (every test draws from numpy's default_rng(seed)).
"""

_NAMED = re.compile(r"--hyps-(?!baseline(?:=|$))(?!system(?:=|$))([^=]+)(?:=(.*))?$")


def named_hyps_argv(argv: Sequence[str]) -> list[str]:
    """argv with every ``--hyps-NAME [F...]`` (and ``--hyps-NAME=F``) of the evaluate
    command rewritten to ``--hyps-system NAME [F...]``."""
    out: list[str] = []
    for token in argv:
        m = _NAMED.match(token)
        if m and token != "--":
            out += ["--hyps-system", m.group(1)] + ([m.group(2)] if m.group(2) is not None else [])
        else:
            out.append(token)
    return out


def uses_bleu_statistics(metrics: Sequence[str]) -> bool:
    """Whether any of the report's ``--metric`` texts reads BLEU statistics (bleu, length,
    a sum with a BLEU part); unknown texts count as not (their error comes later)."""
    from ..metrics.layer import parse_metric

    for text in metrics:
        if text.strip().lower() == "length":
            return True
        try:
            if parse_metric(text).columns("bleu") is not None:
                return True
        except ValueError:
            continue
    return False


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The ``mtplug evaluate`` flags on ``p`` (references via the caller)."""
    from .evaluate import DEFAULT_AR_SHUFFLES, DEFAULT_BOOT_SAMPLES, DEFAULT_METRICS

    g = p.add_argument_group("systems (one translation file per optimizer replica, line i = sentence i)")
    g.add_argument("--hyps-baseline", nargs="+", required=True, metavar="FILE",
                   help="the baseline's translations, one file per optimizer replica")
    g.add_argument("--hyps-system", nargs="+", action="append", default=[], metavar="NAME FILE",
                   help="--hyps-NAME FILE...: another system called NAME (as many as you like), with as many "
                        "replicas as the baseline")
    s = p.add_argument_group("statistics")
    s.add_argument("--metric", nargs="+", default=list(DEFAULT_METRICS), metavar="M",
                   help=metric_help("the report's metrics, a column each (also length: the hypothesis to "
                                    "reference length)", f"{' '.join(DEFAULT_METRICS)}, as MultEval without METEOR"))
    add_alias(p, "--metrics", "--metric")     # MultEval's spelling (a list there too)
    s.add_argument("--boot-samples", type=validation.count, default=DEFAULT_BOOT_SAMPLES, metavar="B",
                   help=f"bootstrap resamples of the test set per replica for s_sel (default {DEFAULT_BOOT_SAMPLES})")
    s.add_argument("--ar-shuffles", type=validation.count, default=DEFAULT_AR_SHUFFLES, metavar="S",
                   help=f"shuffles of the approximate randomization test (default {DEFAULT_AR_SHUFFLES})")
    s.add_argument("--seed", type=validation.seed, default=0, help="random seed of the resamples and shuffles (default 0)")
    s.add_argument("--threads", type=validation.threads, default=None, metavar="N",
                   help="threads summing resamples (default: all cores; no effect on the numbers)")
    o = p.add_argument_group("output (the text table goes to stdout)")
    o.add_argument("--json", metavar="FILE", help="the whole report as JSON ('-': stdout, instead of the table)")
    o.add_argument("--latex", metavar="FILE", help="a LaTeX table ('-': stdout, instead of the table)")
    o.add_argument("--plot", metavar="FILE.png", help="a PNG of every replica's score per system and metric")


def _systems(args) -> list[tuple[str, list[str]]]:
    systems = [("baseline", list(args.hyps_baseline))]
    for entry in args.hyps_system:
        name, files = entry[0], entry[1:]
        if not files:
            raise InputError(f"--hyps-{name} needs at least one translation file")
        if any(name == n for n, _ in systems):
            raise InputError(f"system {name} is given twice (--hyps-{name})")
        systems.append((name, files))
    return systems


def run(args, log, counter, references, bleu_config) -> int:
    """Run ``mtplug evaluate`` for parsed ``args``: ``log(message)`` writes a log line,
    ``counter(total, desc)`` returns a progress ``(update, close)`` pair."""
    import json
    import os

    from ..fileio import atomic_output, check_outputs, shown
    from ..metrics.layer import default_threads
    from .evaluate import evaluate, progress_total, report_metric
    from .report_format import latex_table, plot_replicas, text_table

    for m in args.metric:
        try:
            report_metric(m)
        except ValueError as err:
            raise InputError(f"--metric {m}: {suggest_choice(str(err))}") from None
    if args.plot == "-":
        raise InputError("--plot needs a file name (a PNG is not written to stdout)")
    check_outputs({"--json": args.json, "--latex": args.latex, "--plot": args.plot})
    systems = _systems(args)
    for _, files in systems:
        for path in files:
            if not os.path.isfile(path):
                raise InputError("no such file" if not os.path.exists(path) else "is not a file", path)

    update, close = counter(progress_total(systems, args.metric), "evaluate")
    try:
        report = evaluate(systems, references, bleu_config, args.metric, args.boot_samples, args.ar_shuffles,
                          args.seed, default_threads(args.threads), progress=update,
                          reference_names=[shown(r) for r in references.source.split(", ")])
    finally:
        close()
    log(f"{len(systems)} systems x {report.n_replicas} replica(s), {report.n_sentences} sentences; seed {args.seed}")
    if args.json:
        with atomic_output(args.json) as fh:
            fh.write(json.dumps(report.to_json(), indent=1, sort_keys=False) + "\n")
    if args.latex:
        with atomic_output(args.latex) as fh:
            fh.write(latex_table(report))
    if args.plot:
        plot_replicas(report, args.plot)
        log(f"wrote {args.plot}")
    if "-" not in (args.json, args.latex):
        print(text_table(report), end="")
    return 0
