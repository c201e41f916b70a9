"""``mtplug dtrain``: the command-line face of :mod:`mtplug.dtrain` (flags, output, JSON line).

Every dtrain key is a flag ``--key VALUE`` with hyphens (``--learning-rate`` for dtrain's
``learning_rate``); start weights (``input_weights``) are ``--weights`` (``-w``), the k-best
size (``k``) ``--nbest-size``, the references (``refs``) ``--ref`` (``-r``) and the metric of
one hypothesis (``scorer``) ``--sentence-metric``, as in the other commands; shards trained at
once are ``--jobs``, as tune's decoder processes. The old spellings (``--learning_rate``,
``--input_weights``, ``--k``, ``--refs``, ``--scorer``, ``--workers``) still work, with a
warning; dtrain.ini keeps cdec's keys, and ``--config``/``-c`` is the dtrain.ini, as cdec's
dtrain ``-c``. Flags given alone (``--keep``) are switched on; the flags override
``-c dtrain.ini``. The weights go to ``output`` (dtrain's default ``-`` is stdout; then
the JSON summary goes to stderr instead of stdout).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
from dataclasses import replace
from typing import Any

from .. import validation
from .._version import __version__
from ..aliases import add_alias
from ..errors import InputError
from ..fileio import check_output, stdin_as_file, stdin_reader
from ..jsonable import json_line
from .config import GROUPS, KEYS, flag_of, load_config, old_flags_of
from .pairs import XYX_METHODS

EXAMPLES = """\
examples:
  mtplug dtrain -c dtrain.ini --decoder-bin ~/cdec/decoder/cdec -o weights.txt
  mtplug dtrain -c dtrain.ini --epochs 2 --pair-sampling all --loss-margin 1 --gamma 0.001 -o w.txt
  mtplug dtrain -c dtrain.ini --l1-reg cumul --l1-reg-strength 0.0001 --select-weights avg -o w.txt
  mtplug dtrain -c dtrain.ini --update mira --sentence-metric pseudo_doc -o w.txt   # online MIRA (Eidelman 2012)
  mtplug dtrain -c dtrain.ini --shards 4 --jobs 2 -o w.txt      # as parallelize.rb -s 4 (mixed each epoch)
  mtplug dtrain -c dtrain.ini --shards 8 --scheduler tcp://head:8786 -o w.txt  # shards on dask workers
  mtplug dtrain -c dtrain.ini > weights.txt                     # output=- : weights on stdout

dtrain.ini holds key=value lines ('#' comments, flags alone) with cdec's keys: the flags below with
'_' for '-' (learning_rate=1), input_weights for --weights, k for --nbest-size, refs for --ref and
scorer for --sentence-metric.
"""

_SHORT = {"refs": ["-r"], "bitext": ["-b"], "output": ["-o"], "input_weights": ["-w"]}
#: the metavars of the file keys (the others: the flag in capitals)
_METAVARS = {"input": "SRC", "refs": "FILE", "bitext": "FILE", "output": "FILE", "input_weights": "FILE",
             "decoder_config": "INI"}


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The dtrain flags on ``p`` (the ``mtplug dtrain`` subparser)."""
    p.add_argument("--config", "-c", metavar="dtrain.ini", help="dtrain configuration file")
    p.add_argument("--decoder-bin", metavar="PATH",
                   help="the cdec decoder program, or a command line (default: $CDEC, else 'cdec' on PATH)")
    p.add_argument("--jobs", type=validation.count, metavar="N",
                   help="shards trained at once, each with its own decoder calls (default: min(shards, cores)); "
                        "does not change the result")
    add_alias(p, "--workers", "--jobs")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="run the shards (--shards > 1) on the workers of this dask scheduler (tcp://host:port, "
                        "a scheduler file, or local:N); needs pip install mtplug[distributed], the same mtplug, "
                        "decoder and paths on every worker; does not change the result")
    p.add_argument("--verbose", "-v", action="store_true", help="log one line per sentence")
    groups = {name: p.add_argument_group(f"dtrain: {name}") for name in GROUPS}
    for name, f in KEYS.items():
        meta = f.metadata
        flags = [flag_of(name)] + _SHORT.get(name, [])
        default = "none" if f.default is None else ("off" if f.default is False else f.default)
        help_text = f"{meta['help']} (default: {default})".replace("%", "%%")
        kwargs: dict[str, Any] = dict(dest=name, default=None, help=help_text)
        if meta["kind"] == "bool":
            kwargs.update(nargs="?", const=True, metavar="BOOL")
        else:
            kwargs.update(metavar=_METAVARS.get(name) or (flags[0][2:].upper().replace("-", "_") if not meta["choices"]
                                                          else "{" + ",".join(meta["choices"]) + "}"))
        groups[meta["group"]].add_argument(*flags, **kwargs)
        for old in old_flags_of(name):   # dtrain's --learning_rate: an alias of --learning-rate
            add_alias(p, old, flags[0])


def _decoder_command(args) -> str:
    command = args.decoder_bin or os.environ.get("CDEC") or shutil.which("cdec")
    if not command:
        raise InputError("no decoder: give --decoder-bin PATH (the cdec program), or set $CDEC")
    return command


def run(args, log, counter) -> int:
    """Run ``mtplug dtrain`` for parsed ``args``; ``log(message)`` writes a log line (unless
    quiet), ``counter(total)`` returns a progress ``(update, close)`` pair."""
    with contextlib.ExitStack() as stack:
        return _run(args, log, counter, stack)


#: the dtrain keys naming a file read once, which '-' (standard input) may stand for
STDIN_KEYS = ("input", "refs", "bitext", "input_weights")


def _run(args, log, counter, stack: contextlib.ExitStack) -> int:
    from .trainer import run_dtrain
    from .weights_io import write_weights

    overrides = {name: getattr(args, name, None) for name in KEYS}
    # '-' is standard input for -c or for one of the data and start-weights files, read once
    # (a temporary copy, fileio.stdin_as_file: its errors name <stdin>)
    given = {key: value for key, value in overrides.items() if key in STDIN_KEYS and value is not None}
    cfg = load_config(stack.enter_context(stdin_as_file(args.config)) if args.config == "-" else args.config,
                      overrides)
    labels = {key: flag_of(key) if key in given else f"{key} (dtrain.ini)" for key in STDIN_KEYS}
    stdin_label = stdin_reader([("-c", args.config)] + [(labels[key], getattr(cfg, key)) for key in STDIN_KEYS])
    if stdin_label is not None and stdin_label != "-c":
        key = next(key for key, label in labels.items() if label == stdin_label)
        copy: dict[str, Any] = {key: stack.enter_context(stdin_as_file("-"))}
        cfg = replace(cfg, **copy)
    command = _decoder_command(args)
    workers = args.jobs or max(1, min(cfg.shards, os.cpu_count() or 1))
    if cfg.update == "mira":
        rule = (f"update=mira hope={cfg.mira_hope} fear={cfg.mira_fear} C={cfg.mira_c} "
                f"average={str(cfg.mira_average).lower()}")
    else:
        rule = (f"pairs={cfg.pair_sampling}{f' hi_lo={cfg.hi_lo}' if cfg.pair_sampling in XYX_METHODS else ''} "
                f"threshold={cfg.pair_threshold} eta={cfg.learning_rate} gamma={cfg.gamma} "
                f"loss_margin={cfg.loss_margin}{' (faster perceptron)' if cfg.faster_perceptron else ''}")
    log(f"dtrain: k={cfg.k} N={cfg.N} epochs={cfg.epochs} scorer={cfg.scorer} {rule} l1_reg={cfg.l1_reg}"
        f"{'' if cfg.l1_reg == 'none' else f' ({cfg.l1_reg_strength})'} select_weights={cfg.select_weights} "
        f"shards={cfg.shards} seed={cfg.seed}; decoder: {command} -c {cfg.decoder_config} "
        f"({'one process per shard' if cfg.decoder_process == 'persistent' else 'one process per call'})")
    if cfg.fselect != -1:
        log("warning: fselect is not implemented (dtrain does not implement it either); ignored")
    check_output(cfg.output, "dtrain weights")
    out_dir = os.path.dirname(os.path.abspath(cfg.output)) if cfg.output != "-" else "."
    from ..distributed import engine_for

    with engine_for(args.scheduler, quiet=getattr(args, "quiet", False)) as engine:
        result = run_dtrain(cfg, command, log=log, verbose=log if args.verbose else None,
                            progress_factory=counter, workers=workers, keep_dir=out_dir,
                            engine=engine if args.scheduler else None)
    comment = (f"mtplug {__version__} dtrain seed={cfg.seed} select_weights={cfg.select_weights} "
               f"epochs={cfg.epochs} shards={result.shards} best_epoch={result.best_epoch}")
    if cfg.update == "mira":
        comment += (f" update=mira mira_hope={cfg.mira_hope} mira_fear={cfg.mira_fear} mira_c={cfg.mira_c}"
                    f" mira_average={str(cfg.mira_average).lower()}")
    if result.weights is not None:
        write_weights(cfg.output, result.weights.items(), comment=comment)
        log(f"wrote {sum(1 for v in result.weights.values() if v)} weights "
            f"({cfg.select_weights}) to {'stdout' if cfg.output == '-' else cfg.output}")
    last = result.epochs[-1]
    log(f"best epoch {result.best_epoch}; {result.decoder_calls} decoder calls; seed {cfg.seed}; "
        f"{result.seconds:.2f} s")
    summary = {"command": "dtrain", "out": None if result.weights is None else cfg.output, "seed": cfg.seed,
               "select_weights": cfg.select_weights, "best_epoch": result.best_epoch,
               "score": last["avg_score"], "bleu": last["bleu"], "shards": result.shards,
               "decoder_calls": result.decoder_calls, "decoder_starts": result.decoder_starts,
               "decoder": result.decoder_stats, "seconds": result.seconds, "epochs": result.epochs}
    line = json_line(summary)
    if cfg.output == "-" and result.weights is not None:
        if not getattr(args, "quiet", False):
            print(line, file=sys.stderr, flush=True)
    else:
        print(line, flush=True)
    return 0
