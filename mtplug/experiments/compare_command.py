"""``mtplug compare``: the command-line face of :mod:`mtplug.experiments.compare` (an
optimizer study from one YAML file, :mod:`mtplug.experiments.study_config`)."""

from __future__ import annotations

import argparse
import sys

from .. import validation
from ..errors import InputError

EXAMPLES = """\
examples:
  mtplug compare --write-config > study.yaml     # a commented study file to fill in
  mtplug compare study.yaml                      # run (or resume) the study, print the report
  mtplug compare study.yaml --scheduler tcp://head:8786   # replicas as tasks on a dask cluster
  mtplug compare study.yaml --workdir study-2 --threads 4

Each replica (optimizer x seed x start point) keeps its own folder WORKDIR/runs/OPT/sN-pM;
finished ones are never run again, so running the command again after an interruption, or
after adding seeds, start points or optimizers to the file, runs only what is missing.
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The ``mtplug compare`` flags on ``p``."""
    p.add_argument("study", nargs="?", metavar="STUDY.yaml", help="the study file (see --write-config)")
    p.add_argument("--write-config", action="store_true", help="print a commented study file and exit")
    p.add_argument("--workdir", metavar="DIR", help="working directory (default: the file's workdir)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="run the replicas as tasks on the workers of this dask scheduler (tcp://host:port, a "
                        "scheduler file, or local:N); WORKDIR and every file of the study must be at the same "
                        "paths on every worker; same results as without it")
    p.add_argument("--threads", type=validation.threads, metavar="N",
                   help="optimizer and report threads (default: the file's threads, else all cores; no effect "
                        "on the results)")


def run(args, log, counter) -> int:
    """Run ``mtplug compare`` for parsed ``args``: ``log(message)`` writes a log line,
    ``counter(total, desc)`` returns a progress ``(update, close)`` pair."""
    from .compare import run_study
    from .study_config import TEMPLATE, load_study

    if args.write_config:
        if args.study:
            raise InputError("--write-config prints a template: give no study file with it")
        sys.stdout.write(TEMPLATE)
        return 0
    if not args.study:
        raise InputError("no study file: mtplug compare STUDY.yaml (mtplug compare --write-config writes one)")
    study = load_study(args.study, workdir=args.workdir, threads=args.threads)
    done = run_study(study, log, counter, scheduler=args.scheduler, quiet=args.quiet)
    sys.stdout.write(done["text"])
    return 0
