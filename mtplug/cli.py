"""The ``mtplug`` command: argparse subcommands over the package.

Results go to stdout, logs and progress to stderr. Bad input ends the program with a
one-line ``mtplug: error: FILE:LINE: what was expected`` and exit status 2; nothing
is half-written because every writer goes through a temporary file.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Sequence
from typing import Callable

from . import aliases
from ._version import __version__
from .errors import InputError
from .fileio import (
    STDIN_NAME,
    atomic_output,
    check_outputs,
    flush_stdout,
    is_stdout,
    report_os_error,
    shown,
    stdin_as_file,
    stdin_reader,
)
from .jsonable import json_line
from .metric_help import metric_help, one_metric_error

EXIT_INPUT_ERROR = 2

EXAMPLES = """\
examples:
  mtplug example                                   # extract, optimize and tune the bundled example
  mtplug score --hyp out.txt --ref ref.0 ref.1     # corpus BLEU of a translation
  mtplug extract --nbest run1.best100.out.gz --ref ref.0 --ffile run1.features.dat --scfile run1.scores.dat
  mtplug optimize none --nbest run1.best100.out.gz --ref ref.0 --weights run1.init.opt -o weights.txt
  mert-moses.pl dev.src dev.ref $(which moses) moses.ini --mertdir=$(mtplug mertdir)
"""


# ---------------------------------------------------------------------------- helpers
def _log(args, message: str) -> None:
    if not getattr(args, "quiet", False):
        print(shown(message), file=sys.stderr, flush=True)


def _warn(message: str) -> None:
    """A warning line on stderr (shown even with --quiet)."""
    print(f"mtplug: warning: {shown(message)}", file=sys.stderr, flush=True)


def _progress(args, paths: Sequence[str], desc: str) -> tuple[Callable[[int], object] | None, Callable[[], None]]:
    """A byte-count progress callback (tqdm on a terminal, nothing otherwise) and its closer."""
    if getattr(args, "quiet", False) or not sys.stderr.isatty():
        return None, lambda: None
    try:
        from tqdm import tqdm
    except ImportError:
        return None, lambda: None
    total = sum(os.path.getsize(p) for p in paths if os.path.exists(p))
    bar = tqdm(total=total, unit="B", unit_scale=True, desc=desc, file=sys.stderr, leave=False)
    return bar.update, bar.close


def _counter(args, total: int, desc: str):
    """A progress callback counting work units (tqdm on a terminal, nothing otherwise)."""
    if getattr(args, "quiet", False) or not sys.stderr.isatty():
        return None, lambda: None
    try:
        from tqdm import tqdm
    except ImportError:
        return None, lambda: None
    bar = tqdm(total=total, desc=desc, file=sys.stderr, leave=False)
    return bar.update, bar.close


def _named_weights(path: str, fmt: str | None = None):
    """Weights that name their features (for forests, whose features have no positions):
    refuses init.opt, weights.txt and kbmira --dense-init files with an InputError."""
    from .formats.weights import detect_weights_format, read_weights

    fmt = fmt or detect_weights_format(path)
    if fmt in ("init-opt", "weights-txt", "dense-init"):
        raise InputError(f"is a Moses {fmt} file, whose values are matched to features by position; forests name "
                         "their features: give 'name value' lines, a cdec weights file or a moses.ini", path)
    return read_weights(path, fmt)


def _bleu_config(args):
    from .metrics.bleu import BleuConfig

    return BleuConfig(reflen=args.reflen, lowercase=args.lowercase)


def _references(args):
    from .formats.references import read_devset
    from .metrics.references import metric_references

    if args.devset:
        if args.ref:
            raise InputError("give the references either as --ref files or in --devset, not both", args.devset)
        return read_devset(args.devset)
    if not args.ref:
        raise InputError("no references: give --ref FILE [FILE ...] or --devset FILE")
    return metric_references(args.ref, getattr(args, "metric", None))


def _split_list(values: Sequence[str] | None) -> list[str]:
    """The files of --ffile/--scfile/--prev-ffile/--prev-scfile: several after one flag
    and/or the flag repeated; comma lists (the old form, as mert-moses.pl passes them to
    Moses's programs) are split too."""
    out: list[str] = []
    for v in values or ():
        out.extend(p for p in v.split(",") if p)
    return out


def _file_list_item(flag: str) -> Callable[[str], str]:
    """argparse type of a flag taking several files (--ffile F1 F2): a comma list in one
    value (--ffile F1,F2, the old form) is taken, with one warning per run."""
    def check(value: str) -> str:
        if "," in value:
            aliases.warn_old_name(f"{flag} F1,F2", f"{flag} F1 F2")
        return value
    return check


#: the options of each command that read a file once, by dest -> flag: '-' reads standard input
#: there (one of them at a time; see _stdin_inputs). Not here: tune's and compare's files, which a
#: run records by path and reads again when resumed or passes to the decoder; dtrain (its
#: dtrain.ini keys, dtrain.command); outputs.
STDIN_INPUTS: dict[str, dict[str, str]] = {
    "score": {"hyp": "--hyp", "ref": "--ref", "devset": "--devset"},
    "extract": {"nbest": "--nbest", "ref": "--ref", "devset": "--devset", "prev_ffile": "--prev-ffile",
                "prev_scfile": "--prev-scfile"},
    "optimize": {"nbest": "--nbest", "ffile": "--ffile", "scfile": "--scfile", "store": "--store",
                 "forests": "--forests", "ref": "--ref", "devset": "--devset", "weights": "--weights",
                 "sparse_weights": "--sparse-weights"},
    "kbest": {"forests": "--forests", "weights": "--weights"},
    "rerank": {"nbest": "--nbest", "weights": "--weights", "sparse_weights": "--sparse-weights"},
    "join-features": {"nbest": "--nbest"},
    "evaluate": {"hyps_baseline": "--hyps-baseline", "hyps_system": "--hyps-NAME", "ref": "--ref",
                 "devset": "--devset"},
    "tune": {"yaml": "--yaml"},
}
#: options whose values are comma lists of files (as mert-moses.pl passes them)
_COMMA_LISTS = frozenset({"ffile", "scfile", "prev_ffile", "prev_scfile"})


def _input_paths(args, flags: dict[str, str]):
    """``(flag, path)`` of every file given to the options ``flags`` (dest -> flag)."""
    for dest, flag in flags.items():
        value = getattr(args, dest, None)
        for item in [] if value is None else value if isinstance(value, list) else [value]:
            if dest == "hyps_system":    # [NAME, FILE...] of --hyps-NAME
                yield from ((f"--hyps-{item[0]}", path) for path in item[1:])
            elif dest in _COMMA_LISTS:
                yield from ((flag, path) for path in item.split(","))
            else:
                yield flag, item


def _dash_to(value, tmp: str, comma: bool):
    """``value`` (a path, a list of them, a comma list) with ``-`` replaced by ``tmp``."""
    if isinstance(value, list):
        return [_dash_to(v, tmp, comma) for v in value]
    if comma and isinstance(value, str):
        return ",".join(tmp if part == "-" else part for part in value.split(","))
    return tmp if value == "-" else value


@contextlib.contextmanager
def _stdin_inputs(args, flags: dict[str, str]):
    """Standard input for the one input option of ``flags`` given as ``-``: copied to a
    temporary file (:func:`fileio.stdin_as_file`, whose errors name ``<stdin>``) whose
    path replaces ``-`` in ``args`` while the command runs; two options given as ``-``
    are an InputError naming both."""
    if stdin_reader(_input_paths(args, flags)) is None:
        yield
        return
    with stdin_as_file("-") as tmp:
        for dest in flags:
            if hasattr(args, dest):
                setattr(args, dest, _dash_to(getattr(args, dest), tmp, dest in _COMMA_LISTS))
        yield


def _add_nbest_format_args(g) -> None:
    """--nbest-format and the fairseq options, on the group holding --nbest."""
    from .formats.nbest_formats import NBEST_FORMATS

    g.add_argument("--nbest-format", choices=NBEST_FORMATS, default="auto",
                   help="format of the --nbest files: Moses/cdec, Marian, fairseq generate/interactive output, "
                        "JSON lines {\"id\", \"hyp\", \"features\"} (default auto: told apart by content)")
    g.add_argument("--fairseq-text", choices=("D", "H"), default="D",
                   help="fairseq: the hypothesis text of the D lines (detokenized, default) or of the H lines")
    g.add_argument("--fairseq-positional", action="store_true",
                   help="fairseq: add the features fairseqP (sum of the P line's scores) and fairseqLen (their "
                        "number) to the model score 'fairseq'")


@contextlib.contextmanager
def _nbest_inputs(args):
    """--nbest files in another format than Moses's (--nbest-format) replaced in ``args``
    by Moses copies while the command runs; errors name the original files and lines."""
    fmt = getattr(args, "nbest_format", None)
    if fmt is None or not getattr(args, "nbest", None):
        yield
        return
    from .formats.nbest_formats import moses_copies

    with moses_copies(args.nbest, fmt, fairseq_text=args.fairseq_text,
                      fairseq_positional=args.fairseq_positional) as paths:
        args.nbest = paths
        yield


def _add_reference_args(p: argparse.ArgumentParser, reflen_default: str | None = "closest"):
    """The reference and BLEU options; returns their argument group."""
    g = p.add_argument_group("references and metric")
    g.add_argument("--ref", "-r", nargs="+", action="extend", metavar="FILE",
                   help="reference files, line i = sentence i (several: one per reference set; '-': stdin)")
    g.add_argument("--devset", metavar="FILE", help="cdec devset instead: 'source ||| ref1 ||| ref2' lines")
    g.add_argument("--reflen", choices=("closest", "shortest", "average"), default=reflen_default,
                   help="effective reference length (default: closest, ties to the shorter)")
    g.add_argument("--lowercase", action="store_true", help="compare case-insensitively")
    return g


def _metric_text(value: str) -> str:
    """argparse type of --metric: checked here, parsed again where the store is made."""
    from .metrics.layer import parse_metric

    try:
        parse_metric(value)
        return value.strip()
    except ValueError as err:
        raise argparse.ArgumentTypeError(aliases.suggest_choice(str(err))) from None


def _add_metric_arg(g) -> None:
    g.add_argument("--metric", type=_metric_text, default=None, metavar="M",
                   help=metric_help("what the statistics measure and the optimizer maximises, one metric"))


def _check_store_metric(args, corpus, where: str) -> None:
    """--metric given with input whose statistics are fixed already must name them (it
    may weigh them otherwise: bleu:0.6,moses-ter:0.4 for a BLEU,TER scores.dat)."""
    from .metrics.layer import parse_metric

    asked = getattr(args, "metric", None)
    if asked is None:
        return
    try:
        corpus.metric = corpus.metric.reweighted(parse_metric(asked))
    except ValueError:
        raise InputError(f"holds {corpus.metric.name} statistics, so --metric {asked} cannot take effect "
                         "(extract the n-best lists again with --metric)", where) from None


def _metric_value(corpus, weights) -> str:
    """'NAME = score' of the 1-best under weights (0-100, TER as an error rate; 4 decimals)."""
    return f"{corpus.metric.label} = {corpus.metric.value(corpus.metric_of(weights)):.4f}"


def _load_corpus(args):
    """The n-best store from --nbest/--ref, --ffile/--scfile or --store."""
    from .corpus import NbestCorpus
    from .formats.mert_data import read_mert_data

    sources = sum(bool(x) for x in (args.nbest, args.ffile, args.store))
    if sources != 1:
        raise InputError("give exactly one input: --nbest FILE... (with --ref), --ffile/--scfile, or --store"
                         + (", or --forests PATH..." if hasattr(args, "forests") else ""))
    t0 = time.perf_counter()
    if args.nbest:
        update, close = _progress(args, args.nbest, "reading n-best")
        try:
            corpus = NbestCorpus.from_nbest(args.nbest, _references(args), _bleu_config(args), progress=update,
                                            metric=getattr(args, "metric", None) or "bleu")
        finally:
            close()
    elif args.ffile:
        corpus = read_mert_data(_split_list(args.ffile), _split_list(args.scfile))
        _check_store_metric(args, corpus, ", ".join(_split_list(args.scfile)))
    else:
        corpus = NbestCorpus.load(args.store)
        _check_store_metric(args, corpus, args.store)
    _log(args, f"read {corpus.n_hypotheses} unique hypotheses of {corpus.n_sentences} sentences, "
               f"{corpus.n_dense} dense and {corpus.n_features - corpus.n_dense} sparse features "
               f"in {time.perf_counter() - t0:.2f} s")
    return corpus


def _load_forests(args, feature_names=()):
    """The ForestCorpus of --forests (with --ref): lattices or hypergraphs per sentence;
    ``feature_names`` come first in its feature order."""
    from .forests.corpus import ForestCorpus
    from .formats.forests import read_forests

    t0 = time.perf_counter()
    if args.nbest or args.ffile or args.store:
        raise InputError("give either --forests or n-best input (--nbest, --ffile/--scfile, --store), not both")
    from .metrics.layer import parse_metric

    if getattr(args, "metric", None) is not None and not parse_metric(args.metric).is_bleu:
        raise InputError(f"forests carry BLEU statistics only (other metrics do not decompose over their edges): "
                         f"--metric {args.metric} needs n-best lists")
    corpus = ForestCorpus(_references(args), _bleu_config(args), feature_names, source=", ".join(args.forests))
    for sid, hg, path, line in read_forests(args.forests):
        corpus.add(sid, hg, where=(path, line))
    _log(args, f"read {corpus.n_forests} forests of {corpus.n_sentences} sentences ({corpus.n_hypotheses} edges, "
               f"{corpus.n_features} features) in {time.perf_counter() - t0:.2f} s")
    return corpus


def _add_input_args(p: argparse.ArgumentParser, forests: bool = False) -> None:
    g = p.add_argument_group("input (one of)")
    g.add_argument("--nbest", "-n", nargs="+", action="extend", metavar="FILE",
                   help="Moses n-best or cdec k-best files (merged; gzip read transparently; '-': stdin)")
    _add_nbest_format_args(g)
    g.add_argument("--ffile", nargs="+", action="extend", type=_file_list_item("--ffile"), metavar="FILE",
                   help="Moses features.dat files (several after one --ffile, as --nbest)")
    g.add_argument("--scfile", nargs="+", action="extend", type=_file_list_item("--scfile"), metavar="FILE",
                   help="Moses scores.dat files, matching --ffile")
    g.add_argument("--store", metavar="FILE.npz", help="an n-best store saved by 'mtplug extract --store'")
    if forests:
        g.add_argument("--forests", nargs="+", action="extend", metavar="PATH",
                       help="lattices/hypergraphs instead of n-best lists: a directory of per-sentence forests "
                            "(cdec -O <id>.bin.gz or <id>.json.gz, Moses hypergraphs <id>.gz) or one file of PLF "
                            "lattices or a Moses search graph; several accumulate")
    _add_metric_arg(_add_reference_args(p))


# ---------------------------------------------------------------------------- commands
def cmd_score(args) -> int:
    """``mtplug score``: corpus scores of one translation (--hyp) against references, one
    line per --metric value with a signature, or JSON lines with --json; every score on
    sacrebleu's scale (0-100). Returns the exit status (0); bad input raises InputError."""
    from .metrics.layer import parse_metric, part_label

    metrics = [parse_metric(text) for text in args.metric]
    names = [m.name for m in metrics]
    twice = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if twice is not None:
        raise InputError(f"--metric names {twice} twice")
    if args.reflen is not None and not any(m.columns("bleu") is not None for m in metrics):
        raise InputError("--reflen is a BLEU option: add bleu to --metric or leave it out")
    reflen = args.reflen or "closest"
    refs = _references(args)
    nrefs = refs.uniform_count or "var"
    case = "lc" if args.lowercase else "mixed"
    version = f"version:mtplug-{__version__}"
    parts = _score_parts(args.hyp, refs, reflen, args.lowercase, metrics)
    for metric in metrics:
        bound, totals = _bound_totals(metric, parts)
        value = bound.value(bound.objective(totals))
        record = {"name": bound.label, "metric": metric.name, "score": value}
        if bound.label != part_label(metric.parts[0].name):    # a combination (or one weighted part)
            signature = f"parts:{'+'.join(part_label(p.name) for p in metric.parts)}|{version}"
            text = f"{bound.label} = {value:.2f}"
        elif metric.parts[0].name == "bleu":
            corpus = parts[("bleu", None)][0]
            score = corpus.bleu_of_rows(corpus.sent_offsets[:-1])
            signature = f"nrefs:{nrefs}|case:{case}|reflen:{reflen}|tok:none|smooth:none|{version}"
            record.update(_bleu_details(score))
            text = score.format()
        elif metric.parts[0].name == "ext":
            signature = f"file:{metric.parts[0].source}|mean|{version}"
            text = f"{bound.label} = {value:.2f}"
        elif metric.parts[0].name == "m2":
            signature = f"{refs.m2_options.signature}|{version}"
            text = f"{bound.label} = {value:.2f}"
        elif metric.parts[0].name in ("moses-chrf", "bleudoc"):    # Moses's CHRF, BLEUDOC (fixed; metrics.md)
            signature = f"nrefs:{nrefs}|case:{case}|moses:34452895+fix|{version}"
            text = f"{bound.label} = {value:.2f}"
        else:
            from .metrics.store_stats import part_scorer

            signature = f"nrefs:{nrefs}|{part_scorer(metric.parts[0].name, args.lowercase).signature}|{version}"
            text = f"{bound.label} = {value:.2f}"
        print(json_line({**record, "signature": signature}) if args.json else f"{text} {signature}")
    return 0


def _score_parts(path: str, refs, reflen: str, lowercase: bool, metrics) -> dict:
    """{(part name, source): (store of the translation with that part's statistics alone,
    its summed statistics)} for every part of ``metrics``: each part is computed once,
    however many metrics share it."""
    from .corpus import NbestCorpus
    from .metrics.bleu import BleuConfig

    out = {}
    for metric in metrics:
        for part in metric.parts:
            key = (part.name, part.source)
            if key not in out:
                text = f"ext:{part.source}" if part.name == "ext" else part.name
                corpus = NbestCorpus.from_plain(path, refs, BleuConfig(reflen=reflen, lowercase=lowercase),
                                                metric=text)
                out[key] = (corpus, corpus.corpus_stats(corpus.sent_offsets[:-1]))
    return out


def _bound_totals(metric, parts: dict):
    """``metric`` bound to the statistics of :func:`_score_parts` (each part's width and
    parameter) and its summed statistics row (the parts' side by side)."""
    import numpy as np

    from .metrics.layer import Metric, Part

    bound_parts, totals = [], []
    for p in metric.parts:
        corpus, summed = parts[(p.name, p.source)]
        b = corpus.metric.parts[0]
        bound_parts.append(Part(p.name, p.weight, b.width, b.param, p.source))
        totals.append(summed)
    bound = Metric(metric.name, tuple(bound_parts), metric.constant, metric.value_offset, metric.value_sign)
    return bound, np.concatenate(totals)


def _bleu_details(score) -> dict:
    """BLEU's --json fields, as sacrebleu's: the score and the n-gram precisions in percent
    (0-100; those of the text line), the brevity penalty and length ratio as fractions
    (ratios, not scores), the lengths."""
    from .metrics.layer import SCALE

    return {"score": SCALE * score.score, "precisions": [SCALE * p for p in score.precisions],
            "brevity_penalty": score.brevity_penalty,
            "ratio": score.ratio, "sys_len": score.sys_len, "ref_len": score.ref_len}


def cmd_extract(args) -> int:
    """``mtplug extract``: n-best lists + references -> Moses's features.dat/scores.dat
    (--ffile/--scfile, byte-identical to Moses's extractor) and/or an n-best store
    (--store). Outputs are checked before reading; returns 0, raises InputError."""
    from .formats.mert_data import extract_files, extractor_store, write_features, write_scores
    from .metrics.layer import parse_metric
    from .metrics.moses_scorers import sctype_of

    if not args.nbest:
        raise InputError("extract needs --nbest FILE [FILE ...]")
    outputs = {"--ffile": args.ffile_out, "--scfile": args.scfile_out, "--store": args.store_out}
    if not any(outputs.values()):
        raise InputError("extract writes nothing: name at least one output (--ffile, --scfile or --store)")
    check_outputs(outputs)
    prev_f, prev_s = _split_list(args.prev_ffile), _split_list(args.prev_scfile)
    metric = parse_metric(args.metric or "bleu")
    if args.scfile_out or prev_s:
        try:
            sctype_of(metric)
        except ValueError as err:
            raise InputError(f"--metric {metric.name}: {err}; write it with --store instead of "
                             "--scfile/--prev-scfile") from None
    t0 = time.perf_counter()
    update, close = _progress(args, args.nbest, "reading n-best")
    try:
        # the rows and order of Moses's extractor, so features.dat/scores.dat are byte-identical
        if not args.store_out:   # no store needed: extract_files streams the list when it can
            done = extract_files(args.nbest, _references(args), _bleu_config(args), args.ffile_out,
                                 args.scfile_out, prev_f, prev_s, progress=update, metric=metric)
        else:
            corpus = extractor_store(args.nbest, _references(args), _bleu_config(args), prev_f, prev_s,
                                     progress=update, metric=metric)
    finally:
        close()
    if not args.store_out:
        _log(args, f"wrote {done.n_hypotheses} hypotheses of {done.n_sentences} sentences ({len(prev_f)} earlier "
                   f"file pair(s)), {done.n_dense} dense and {done.n_sparse} sparse features "
                   f"in {time.perf_counter() - t0:.2f} s")
        return 0
    _log(args, f"read {corpus.n_hypotheses} hypotheses of {corpus.n_sentences} sentences ({len(prev_f)} earlier "
               f"file pair(s)), {corpus.n_dense} dense and {corpus.n_features - corpus.n_dense} sparse features "
               f"in {time.perf_counter() - t0:.2f} s")
    if args.ffile_out:
        write_features(args.ffile_out, corpus)
    if args.scfile_out:
        write_scores(args.scfile_out, corpus)
    if args.store_out:
        corpus.save(args.store_out)
    _log(args, f"wrote {corpus.n_hypotheses} hypotheses")
    return 0


def cmd_optimize(args) -> int:
    """``mtplug optimize ALGORITHM``: one optimizer run over an n-best store or forests,
    from the --weights start weights; writes the tuned weights to --output (in the format
    of --weights or --output-format) and a JSON summary line (score, seed, the optimizer's info) to
    stdout, or to stderr when the weights go to stdout. Options are checked before any
    file is read; a bad option or input raises InputError. Returns 0."""
    import numpy as np

    from .formats.weights import detect_weights_format
    from .optimizers.registry import get_optimizer
    from .start_weights import check_match, output_files, read_start, write_tuned

    algorithm = get_optimizer(args.algorithm)
    try:   # options are checked before any file is read
        optimizer = algorithm(**{name: getattr(args, name) for name in algorithm.options})
    except ValueError as err:
        raise _option_error(args.algorithm, algorithm, err) from None
    check_outputs({"--output": args.output})
    in_fmt = detect_weights_format(args.weights)
    out_fmt = args.output_format or ("sparse" if in_fmt == "names" else in_fmt)
    if out_fmt == "moses-ini" and in_fmt != "moses-ini":
        raise InputError("--output-format moses-ini updates a moses.ini: give one as --weights", args.weights)
    with contextlib.ExitStack() as stack:
        engine = None
        if getattr(args, "scheduler", None):
            from .distributed import connect

            engine = stack.enter_context(connect(args.scheduler, quiet=args.quiet))
            _log(args, engine.describe())
        if getattr(args, "forests", None):
            # the start weights' features come first and stay in the output even if no forest has them
            start_names = _named_weights(args.weights, in_fmt).names
            corpus = _load_forests(args, start_names)
            corpus.check_complete(", ".join(args.forests))
            # the store's names hold the start weights' own: match them against the edges' features
            ids = sorted({int(i) for forests in corpus.forests for *_, fids in forests for i in np.unique(fids)})
            all_names = corpus.feature_names
            check_match(start_names, [all_names[i] for i in ids], 0, args.weights, where="the forests")
        else:
            if engine is not None and args.store and shown(args.store) == STDIN_NAME:
                raise InputError("--store -: the workers of --scheduler read the store by its path; give it as a file")
            if engine is not None and args.store and algorithm.works_on_pools:
                # the workers read their sentences of the store; this process only its offsets and names
                from .distributed.pool import PartitionedPool

                corpus = PartitionedPool.from_store(args.store, engine, threads=args.threads or 1)
                _log(args, f"{corpus.n_hypotheses} hypotheses of {corpus.n_sentences} sentences stay on the "
                           f"workers ({len(corpus.parts)} partitions)")
            else:
                corpus = _load_corpus(args)
            corpus.check_complete(", ".join(args.nbest or _split_list(args.ffile or []) or [args.store]))
            if corpus.n_stats == 0:
                raise InputError("no metric statistics: give references (--ref or --devset)")
        names = corpus.feature_names
        n_dense = getattr(corpus, "n_dense", 0)
        start = read_start(args.weights, names, n_dense, sparse_init=args.sparse_weights, fmt=in_fmt)
        for note in start.notes:
            _log(args, f"start weights: {note}")
        for warning in start.warnings:   # a partial match (check_match), shown even with -q
            _warn(warning)
        sidecar = output_files(args.output, out_fmt, len(names) - n_dense)[1:]
        check_outputs({"--output": args.output,
                       "sparse weights (beside --output)": sidecar[0] if sidecar else None})
        _log(args, f"start: {_metric_value(corpus, start.vector)}")
        for warning in optimizer.advice(corpus):
            _warn(warning)
        t0 = time.perf_counter()
        update, close = _counter(args, optimizer.progress_total(), f"{args.algorithm}")
        on_cluster = {"engine": engine} if engine is not None else {}
        try:
            result = optimizer.optimize(corpus, start.vector, args.seed, threads=args.threads, ranges=start.ranges,
                                        progress=update, **on_cluster)
        except ValueError as err:   # an option the store cannot serve (e.g. expbleu directions on TER)
            if isinstance(err, InputError):
                raise
            raise _option_error(args.algorithm, algorithm, err) from None
        finally:
            close()
    for warning in result.warnings:
        _warn(warning)
    _log(args, f"{args.algorithm}: {time.perf_counter() - t0:.2f} s, seed {result.seed}")
    metric = corpus.metric
    value, label = result.score, metric.label
    written = write_tuned(args.output, out_fmt, start, names, result.weights, n_dense,
                          comment=f"mtplug optimize {args.algorithm} seed={result.seed} {label}={value:.4f}")
    _log(args, f"end: {label} = {value:.4f}" + (f"; sparse weights in {written[1]}" if len(written) > 1 else ""))
    # with the weights on stdout (-o - or /dev/stdout), the JSON line goes to stderr; the
    # score and the metric's numbers in info on sacrebleu's scale (0-100), as Result keeps them
    scores = {"metric": metric.name, "score": value}
    # MERT's convergence trace stays in the Python Result: one line per run here
    info = {k: v for k, v in result.info.items() if k != "trace"}
    print(json_line({"algorithm": args.algorithm, **scores, "seed": result.seed,
                     "out": args.output, "files": written, **info}),
          file=sys.stderr if is_stdout(args.output) else sys.stdout)
    return 0


def option_flags(cls) -> tuple[dict[str, str], dict[str, tuple]]:
    """The flags of an optimizer's options by Python name (``reg_strength`` ->
    ``--reg-strength``) and their choices, for :func:`mtplug.aliases.flags_in`."""
    return ({name: "--" + name.replace("_", "-") for name in cls.options},
            {name: tuple(kw.get("choices") or ()) for name, kw in cls.options.items()})


def _option_error(name: str, cls, err: ValueError) -> InputError:
    """The InputError of an optimizer's ValueError about its options, which names them as
    Python does (``reg_strength applies only with a regulariser (reg)``): named here by
    their flags (``mert: --reg-strength applies only with a regulariser (--reg)``)."""
    return InputError(f"{name}: {aliases.flags_in(str(err), *option_flags(cls))}")


def cmd_kbest(args) -> int:
    """k-best lists from lattices/forests, as n-best lines any optimizer reads."""
    import numpy as np

    from .fileio import atomic_output
    from .forests.kbest import kbest_nbest_lines
    from .formats.forests import read_forests
    from .start_weights import check_match

    if args.output:
        check_outputs({"--output": args.output})
    w = _named_weights(args.weights)
    weights = {name: w[name] for name in w}
    t0 = time.perf_counter()
    per_sentence: list[tuple[int, list[str]]] = []
    seen: dict[str, None] = {}   # the features some edge has, in order of appearance
    for sid, hg, path, line in read_forests(args.forests):
        seen.update((hg.feature_names[i], None) for i in np.unique(hg.feat_ids).tolist())
        try:
            per_sentence.append((sid, kbest_nbest_lines(sid, hg, weights, args.nbest_size, args.unique)))
        except ValueError as err:
            raise InputError(str(err), path, line) from None
    # forests have no dense block: only "no weight names a feature" is checked (check_match)
    check_match(list(weights), list(seen), 0, args.weights, where="the forests")
    per_sentence.sort(key=lambda item: item[0])   # n-best files are sorted by sentence (stable)
    text = "".join(line + "\n" for _, lines in per_sentence for line in lines)
    if args.output:
        with atomic_output(args.output) as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    _log(args, f"kbest: {sum(len(x) for _, x in per_sentence)} derivations of {len(per_sentence)} forests in "
               f"{time.perf_counter() - t0:.2f} s")
    return 0


def cmd_join_features(args) -> int:
    """``mtplug join-features``: an n-best list with per-hypothesis features from other
    files added (:mod:`mtplug.join_features`), written as a Moses n-best to --output;
    everything is checked before anything is written. Returns 0; bad input raises InputError."""
    from .join_features import join_features, parse_feature_specs

    features = parse_feature_specs(args.feature or [])
    check_outputs({"--output": args.output})
    t0 = time.perf_counter()
    written = join_features(args.nbest[0], features, args.output)
    _log(args, f"join-features: {written} hypotheses, {len(features)} feature(s) added in "
               f"{time.perf_counter() - t0:.2f} s")
    return 0


def cmd_mertdir(args) -> int:
    """``mtplug mertdir``: print the directory of the Moses drop-in programs (extractor,
    mert, pro, kbmira, ...) to pass as mert-moses.pl's ``--mertdir``; with ``--moses-root
    DIR``, make DIR/bin hold them and print DIR. Returns 0."""
    from .integrations.moses.mertdir import mertdir, moses_root

    print(moses_root(args.moses_root) if args.moses_root else mertdir())
    return 0


def cmd_tune(args) -> int:
    """``mtplug tune``: the decode -> merge n-best -> optimize loop with a real decoder
    (or print the YAML template, --write-config); prints the run's summary as one JSON
    line. Returns 0; a bad configuration raises InputError."""
    from .tuning.config import TEMPLATE, config_from_args
    from .tuning.loop import Hooks, run_tuning

    if args.write_config:
        sys.stdout.write(TEMPLATE)
        return 0
    cfg = config_from_args(args)
    summary = run_tuning(cfg, Hooks(log=lambda m: _log(args, m),
                                    counter=lambda total, desc: _counter(args, total, desc),
                                    warn=_warn))
    print(json_line(summary))
    return 0


def cmd_plot(args) -> int:
    """``mtplug plot``: PNG figures of a ``mtplug tune`` work directory (BLEU per iteration,
    MERT's last error surface, :mod:`mtplug.tuning.plot`); logs each file written and
    prints their list as a JSON line. Returns 0."""
    from .tuning.plot import plot_workdir

    written = plot_workdir(args.workdir, args.output)
    for path in written:
        _log(args, f"wrote {path}")
    print(json_line({"files": written}))
    return 0


def cmd_rerank(args) -> int:
    """``mtplug rerank``: the 1-best (or the re-sorted n-best) of n-best lists under given
    weights (:mod:`mtplug.experiments.rerank_command`). Returns the exit status."""
    from .experiments.rerank_command import run

    return run(args, log=lambda m: _log(args, m), progress=lambda paths, desc: _progress(args, paths, desc))


def cmd_evaluate(args) -> int:
    """``mtplug evaluate``: MultEval's report over systems' test translations, each tuned
    several times (mean, spreads, approximate-randomisation p-values against the baseline;
    :mod:`mtplug.experiments.evaluate`). Returns the exit status; --reflen without a
    metric that uses BLEU statistics raises InputError."""
    from .experiments.evaluate_command import run, uses_bleu_statistics

    if args.reflen is not None and not uses_bleu_statistics(args.metric):
        raise InputError("--reflen is BLEU's option (BLEU and Length): add bleu or length to --metric or leave it out")
    args.reflen = args.reflen or "closest"
    return run(args, log=lambda m: _log(args, m), counter=lambda total, desc: _counter(args, total, desc),
               references=_references(args), bleu_config=_bleu_config(args))


def cmd_compare(args) -> int:
    """``mtplug compare``: run a study of optimizers × seeds × start points from its YAML
    file and report it (:mod:`mtplug.experiments.compare_command`). Returns the exit status."""
    from .experiments.compare_command import run

    return run(args, log=lambda m: _log(args, m), counter=lambda total, desc: _counter(args, total, desc))


def cmd_dtrain(args) -> int:
    """``mtplug dtrain``: cdec's dtrain (online pairwise training with the decoder in the
    loop) from a dtrain.ini (:mod:`mtplug.dtrain.command`). Returns the exit status."""
    from .dtrain.command import run

    return run(args, log=lambda m: _log(args, m), counter=lambda total: _counter(args, total, "dtrain"))


_EXAMPLE_INI = """\
# moses.ini of the example: only [weight] matters to the stand-in decoder
[weight]
Distortion0= {0}
LM0= {1}
WordPenalty0= {2}
PhrasePenalty0= {3}
TranslationModel0= {4} {5} {6} {7}
UnknownWordPenalty0= 1
"""


def cmd_example(args) -> int:
    """Run extract → optimize → tune (with the built-in stand-in decoder) on the bundled
    example; stdout gets the tuning-set BLEU of each tuning iteration. The outputs go to a
    temporary folder removed at the end, or stay in ``--keep DIR``."""
    import shutil
    import tempfile

    if args.keep is None:
        workdir = tempfile.mkdtemp(prefix="mtplug-example-")
        try:
            return _run_example(args, workdir)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    if os.path.exists(args.keep) and not os.path.isdir(args.keep):
        raise InputError("--keep names a file; expected a folder for the example's outputs (created if missing)",
                         args.keep)
    try:
        os.makedirs(args.keep, exist_ok=True)
    except OSError as exc:
        raise InputError(f"--keep: cannot create the folder ({exc.strerror})", args.keep) from None
    return _run_example(args, args.keep)


def _run_example(args, workdir: str) -> int:
    import shlex
    from importlib import resources

    from .tuning.loop import read_state

    data = resources.files("mtplug") / "data" / "example"
    nbest, ref, init = (str(data / n) for n in ("run1.best100.out.gz", "ref.0", "run1.init.opt"))
    _log(args, f"example data: {data}\nworking directory: {workdir}"
         + ("" if args.keep else " (removed at the end; --keep DIR keeps the outputs)"))
    quiet = ["--quiet"] if args.quiet else []
    steps = [
        ["extract", "--nbest", nbest, "--ref", ref, *quiet, "--ffile", os.path.join(workdir, "features.dat"),
         "--scfile", os.path.join(workdir, "scores.dat"), "--store", os.path.join(workdir, "store.npz")],
        ["optimize", "none", "--store", os.path.join(workdir, "store.npz"), "--weights", init,
         "--output", os.path.join(workdir, "weights.opt"), *quiet],
    ]
    # decoder in the loop: the stand-in re-ranks the bundled pool (the toy system is
    # English->English, so the reference doubles as the source it looks sentences up by)
    ini = os.path.join(workdir, "moses.ini")
    with open(init, encoding="utf-8") as fh, atomic_output(ini) as out:
        out.write(_EXAMPLE_INI.format(*fh.readline().split()))
    standin = shlex.join([sys.executable, "-m", "mtplug.tuning.standin", "moses", "-standin-pool", nbest,
                          "-standin-source", ref])
    tune_dir = os.path.join(workdir, "tune")
    steps.append(["tune", "--decoder", "moses", "--decoder-bin", standin, "--decoder-config", ini, "--input", ref,
                  "--ref", ref, "--optimizer", "mert", "--iterations", "6", "--nbest-size", "10", "--jobs", "2",
                  "--seed", "1", "--workdir", tune_dir, "--resume", *quiet])
    # each step's own result line is a log line here: stdout is the example's result alone
    with contextlib.ExitStack() as stack:
        step_stdout = stack.enter_context(open(os.devnull, "w")) if args.quiet else sys.stderr
        for step in steps:
            _log(args, "$ mtplug " + shlex.join(step))
            with contextlib.redirect_stdout(step_stdout):
                rc = main(step)
            if rc:
                return rc
    state = read_state(tune_dir)
    assert state is not None, "tune ended with status 0, so it wrote its state"
    for it in state["history"]:
        print(f"iteration {it['iteration']}: BLEU = {it['bleu']:.4f}")
    return 0


# ---------------------------------------------------------------------------- parser
class _Parser(argparse.ArgumentParser):
    """argparse whose usage errors are one line in the form of every other error,
    ``mtplug: error: MESSAGE; see 'PROG --help'`` (exit status 2).

    Options are never abbreviated (``--restart 2`` is not ``--restarts``); an option the
    command does not know is ``mtplug: error: unknown option --restart (did you mean
    --restarts?); see 'PROG --help'``, reported before any other usage error of the command
    (a misspelt option is the likely cause of a missing one). A value that is not one of
    the choices (a command, an algorithm, ``--directions powel``) is named with the closest
    choice (:func:`mtplug.aliases.closest`); a misspelt command or algorithm is reported as
    such whatever options follow it."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)   # the subcommands' parsers are made by this class too
        super().__init__(*args, **kwargs)
        self._argv: list[str] = []

    def _own_tokens(self) -> list[str]:
        """The arguments this parser parses itself: all of them, or those before the
        subcommand (whose parser checks the rest; a misspelt subcommand too: the first word
        that is no option is where this parser's own part ends, since none of the options of
        a parser with subcommands takes a value)."""
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                cut = next((i for i, t in enumerate(self._argv) if t == "--" or not t.startswith("-") or t == "-"),
                           len(self._argv))
                return self._argv[:cut]
        return self._argv

    def parse_known_args(self, args=None, namespace=None):
        # old names (aliases.add_alias) become the new ones, each warned of once
        self._argv = aliases.respell(self, sys.argv[1:] if args is None else args)
        namespace, extras = super().parse_known_args(self._argv, namespace)
        self._refuse_unknown(extras)
        self._refuse_several_metrics(extras)
        if extras and self._own_tokens() is self._argv:
            # a command's own parser: what is left over is its user's mistake
            self.error(f"unexpected argument(s): {' '.join(extras)}")
        return namespace, extras

    def _check_value(self, action, value):
        """A value outside ``action``'s choices: the closest choice in the message."""
        if action.choices is None or value in action.choices:
            return
        choices = [str(c) for c in action.choices]
        hint = aliases.did_you_mean(str(value), choices)
        if isinstance(action, argparse._SubParsersAction):
            what = str(action.metavar or action.dest).lower()
            message = f"unknown {what} {value!r}{hint}; choose from {', '.join(choices)}"
        else:
            name = action.option_strings[-1] if action.option_strings else (action.metavar or action.dest)
            flag = next((o for o in action.option_strings if o.startswith("--")), name)
            message = f"{flag}: invalid choice: {value!r}{hint}; choose from {', '.join(choices)}"
        raise argparse.ArgumentError(None, message)

    def _refuse_several_metrics(self, extras: Sequence[str]) -> None:
        """``--metric bleu ter`` where --metric takes one value (extract, optimize, tune):
        the one-metric message (one_metric_error) instead of 'unexpected argument(s)'."""
        action = self._option_string_actions.get("--metric")
        if not extras or action is None or action.nargs is not None:
            return
        argv = self._argv
        for i, token in enumerate(argv[:-2]):
            if token == "--metric" and argv[i + 2] == extras[0]:
                values = list(itertools.takewhile(lambda t: not t.startswith("-") or t == "-", argv[i + 1:]))
                from .metrics.layer import parse_metric

                try:
                    for value in values:
                        parse_metric(value)
                except ValueError:    # not metrics: a stray argument, reported as such
                    return
                self.error(one_metric_error("--metric", values))

    def _unknown_options(self, tokens: Sequence[str]) -> list[str]:
        """The options among ``tokens`` (as typed, without ``=value``) that this parser lacks."""
        unknown = []
        for token in tokens:
            if token == "--":
                break
            if not token.startswith("-") or token == "-" or " " in token:
                continue
            if self._negative_number_matcher.match(token) and not self._has_negative_number_optionals:
                continue
            name = token.split("=", 1)[0] if token.startswith("--") else token
            if name in self._option_string_actions:
                continue
            if not token.startswith("--") and token[:2] in self._option_string_actions:
                continue   # -k10, -qv
            unknown.append(name)
        return unknown

    def _refuse_unknown(self, tokens: Sequence[str]) -> None:
        """Exit with the unknown-option line if ``tokens`` hold an option this parser lacks."""
        unknown = self._unknown_options(tokens)
        if not unknown:
            return
        name = unknown[0]
        # the old names count too: --int is closest to --init, which is now --weights; a
        # short option (-x) is too short to resemble anything
        known = {s: s for a in self._actions if a.help is not argparse.SUPPRESS for s in a.option_strings
                 if s.startswith("--")}
        known.update((old, new) for old, new in aliases.old_names(self).items() if old.startswith("--"))
        close = aliases.closest(name, known) if name.startswith("--") else None
        hint = f" (did you mean {known[close]}?)" if close else ""
        self._exit_with(f"unknown option {name}{hint}")

    def _exit_with(self, message: str) -> None:
        print(f"mtplug: error: {message}; see '{self.prog} --help'", file=sys.stderr)
        sys.exit(EXIT_INPUT_ERROR)

    def error(self, message):
        self._refuse_unknown(self._own_tokens())
        # a bad value in the words of mtplug.validation, whoever checks it: '--seed must be ...';
        # the option named by its long flag, without argparse's 'argument' ('--fear-list: invalid int value')
        match = re.match(r"argument ([^:/ ]+)((?:/[^: ]+)*): ", message)
        if match:
            names = [match.group(1), *match.group(2).split("/")[1:]]
            flag = next((n for n in names if n.startswith("--")), names[0])
            rest = message[match.end():]
            message = f"{flag} {rest}" if rest.startswith("must be ") else f"{flag}: {rest}"
        self._exit_with(message)


def build_parser() -> argparse.ArgumentParser:
    """The ``mtplug`` argument parser: one subcommand per ``cmd_*`` function (set as
    ``func``), each with --help examples; ``mtplug optimize ALGO`` gets one flag per entry
    of the optimizer's ``options`` table. Usage errors exit with status 2."""
    from . import validation
    from ._ext._build_info import OPENMP
    from .formats.weights import weights_formats
    from .optimizers.registry import FOREST_OPTIMIZERS, OPTIMIZER_NAMES, get_optimizer

    parser = _Parser(
        prog="mtplug", description="Tune the feature weights of SMT systems (Moses, cdec).",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version",
                        version=f"mtplug {__version__} (OpenMP: {'yes' if OPENMP else 'no'})")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def add(name, func, help, examples=""):
        p = sub.add_parser(name, help=help, description=help, epilog=examples,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        p.add_argument("--quiet", "-q", action="store_true", help="no progress or log lines on stderr")
        p.set_defaults(func=func)
        return p

    p = add("score", cmd_score, "corpus scores of a translation (one hypothesis per line): BLEU, chrF, chrF++, TER, "
                                "WER, PER, CDER, M2 (grammatical error correction), Moses's scorers, external scores",
            "examples:\n  mtplug score --hyp out.txt --ref ref.0 ref.1 --json\n"
            "  mtplug score --hyp out.txt --ref ref.0 --metric bleu chrf chrf++ ter     # four lines\n"
            "  mtplug score --hyp out.txt --ref ref.0 --metric bleu:0.6,ter:0.4 bleu ter  # the interpolation, "
            "then its parts\n")
    p.add_argument("--hyp", required=True, metavar="FILE", help="translations, line i = sentence i ('-': stdin)")
    p.add_argument("--metric", type=_metric_text, nargs="+", default=["bleu"], metavar="M",
                   help=metric_help("the metrics to print, one line each (scores on sacrebleu's 0-100 scale; wer, "
                                    "per, cder as error rates)"))
    p.add_argument("--json", action="store_true", help="print one JSON object per metric instead of text lines")
    _add_reference_args(p, reflen_default=None)

    p = add("extract", cmd_extract, "n-best lists + references -> Moses features.dat / scores.dat (and a store)",
            "examples:\n  mtplug extract --nbest run2.best100.out.gz --ref ref.0 --ffile run2.features.dat \\\n"
            "      --scfile run2.scores.dat --prev-ffile run1.features.dat --prev-scfile run1.scores.dat\n"
            "  # Moses's TER scores.dat (as extractor --sctype TER), and a chrF store\n"
            "  mtplug extract --nbest run1.best100.out.gz --ref ref.0 --metric moses-ter --ffile f.dat --scfile s.dat\n"
            "  mtplug extract --nbest run1.best100.out.gz --ref ref.0 --metric chrf --store run1.npz\n")
    g = p.add_argument_group("input")
    g.add_argument("--nbest", "-n", nargs="+", action="extend", metavar="FILE", help="n-best/k-best files")
    _add_nbest_format_args(g)
    g.add_argument("--prev-ffile", nargs="+", action="extend", type=_file_list_item("--prev-ffile"), metavar="FILE",
                   help="earlier features.dat files to merge (several after one flag)")
    g.add_argument("--prev-scfile", nargs="+", action="extend", type=_file_list_item("--prev-scfile"),
                   metavar="FILE", help="earlier scores.dat files to merge, matching --prev-ffile")
    _add_metric_arg(_add_reference_args(p))
    o = p.add_argument_group("output (any of)")
    o.add_argument("--ffile", dest="ffile_out", metavar="FILE", help="write features.dat")
    o.add_argument("--scfile", dest="scfile_out", metavar="FILE", help="write scores.dat")
    o.add_argument("--store", dest="store_out", metavar="FILE.npz", help="write the n-best store (binary)")
    p.set_defaults(ffile=None, store=None)

    p = add("optimize", cmd_optimize, "tune weights over accumulated n-best lists",
            "example:\n  mtplug optimize none --nbest run1.best100.out.gz --ref ref.0 --weights run1.init.opt "
            "-o weights.txt\n")
    algos = p.add_subparsers(dest="algorithm", metavar="ALGORITHM", required=True)
    for name in OPTIMIZER_NAMES:
        cls = get_optimizer(name)
        a = algos.add_parser(
            name, help=cls.help, description=cls.help, formatter_class=argparse.RawDescriptionHelpFormatter,
            epilog=f"examples:\n  mtplug optimize {name} --ffile run1.features.dat run2.features.dat "
                   f"--scfile run1.scores.dat run2.scores.dat \\\n      --weights run2.init.opt -o best.opt --seed 1\n"
                   f"  mtplug optimize {name} --nbest run1.best100.out.gz --ref ref.0 --weights moses.ini "
                   f"-o moses.tuned.ini\n")
        a.add_argument("--quiet", "-q", action="store_true", help="no progress or log lines on stderr")
        _add_input_args(a, forests=name in FOREST_OPTIMIZERS)
        g = a.add_argument_group("weights")
        g.add_argument("--weights", "-w", required=True, metavar="FILE",
                       help="start weights: init.opt, moses.ini, or 'name value' lines (told apart by content; "
                            "'-': stdin)")
        g.add_argument("--sparse-weights", metavar="FILE",
                       help="Moses sparse start weights ('name value' lines; as kbmira --sparse-init), for "
                            "--weights that hold dense weights only (init.opt, weights.txt) or beside a moses.ini "
                            "(whose own [weight-file] is read too)")
        g.add_argument("--output", "-o", required=True, metavar="FILE",
                       help="where to write the tuned weights ('-': stdout); sparse weights that its format "
                            "cannot hold go to FILE.sparse-weights (named in a moses.ini's [weight-file])")
        g.add_argument("--output-format", metavar="FMT", choices=sorted(set(weights_formats()) - {"names"}),
                       help="format of --output: %(choices)s (default: that of --weights; 'names' files are "
                            "written as 'sparse')")
        for old_name, new_name in (("--init", "--weights"), ("--sparse-init", "--sparse-weights"),
                                   ("--out", "--output"), ("--out-format", "--output-format")):
            aliases.add_alias(a, old_name, new_name)
        if name in FOREST_OPTIMIZERS:
            aliases.add_alias(a, "--hgdir", "--forests")
        g.add_argument("--seed", type=validation.seed, default=0, help="random seed (default 0); written to the log")
        g.add_argument("--threads", type=validation.threads, default=None,
                       help="worker threads (default: all cores)")
        if cls.distributes:
            g.add_argument("--scheduler", metavar="ADDRESS",
                           help="run the per-sentence work on the workers of this dask scheduler (tcp://host:port, "
                                "a scheduler file, or local:N); needs pip install mtplug[distributed]; same result"
                                + ("; with --store, each worker reads its own sentences of the store (a shared file "
                                   "system) and the pool never has to fit on this machine" if cls.works_on_pools
                                   else ""))
        if cls.options:
            g = a.add_argument_group(f"{name} options")
            for opt, kwargs in cls.options.items():
                g.add_argument("--" + opt.replace("_", "-"), dest=opt, **kwargs)

    p = add("kbest", cmd_kbest, "k-best derivations of lattices/forests as an n-best list (for any optimizer)",
            "examples:\n  mtplug kbest --forests hgs/ --weights weights.txt --nbest-size 100 --unique "
            "-o run1.best100.out\n"
            "  mtplug kbest --forests dev.plf --weights weights.txt --nbest-size 10 | head\n")
    p.add_argument("--forests", nargs="+", action="extend", required=True, metavar="PATH",
                   help="a directory of per-sentence forests (cdec -O, cdec JSON, Moses hypergraphs) or one file "
                        "of PLF lattices or a Moses search graph; several are merged by sentence")
    p.add_argument("--weights", "-w", required=True, metavar="FILE",
                   help="weights by name: 'name value' lines, a cdec weights file or a moses.ini")
    p.add_argument("--nbest-size", type=validation.count, default=100, metavar="N",
                   help="derivations per forest, the size of each n-best list (default 100)")
    p.add_argument("--unique", action="store_true", help="distinct strings only (cdec -r, Moses 'distinct')")
    p.add_argument("--output", "-o", metavar="FILE", help="write here (default stdout)")
    aliases.add_alias(p, "-k", "--nbest-size")
    aliases.add_alias(p, "--out", "--output")
    aliases.add_alias(p, "-r", "--unique")     # cdec's -r; -r is --ref in every other command

    from .experiments.rerank_command import EXAMPLES as RERANK_EXAMPLES
    from .experiments.rerank_command import add_arguments as add_rerank_arguments

    p = add("rerank", cmd_rerank, "the 1-best (or the re-sorted n-best) of n-best lists under given weights",
            RERANK_EXAMPLES)
    add_rerank_arguments(p)
    _add_nbest_format_args(p)

    from .experiments.evaluate_command import EXAMPLES as EVALUATE_EXAMPLES
    from .experiments.evaluate_command import add_arguments as add_evaluate_arguments

    p = add("evaluate", cmd_evaluate, "MultEval's report of systems tuned several times: mean, s_sel, s_dev and "
                                      "p-values (approximate randomization, paired bootstrap)", EVALUATE_EXAMPLES)
    add_evaluate_arguments(p)
    _add_reference_args(p, reflen_default=None)

    from .experiments.compare_command import EXAMPLES as COMPARE_EXAMPLES
    from .experiments.compare_command import add_arguments as add_compare_arguments

    p = add("compare", cmd_compare, "an optimizer study from one YAML file: tune with every optimizer, seed and "
                                    "start point, decode the test set, report (mtplug evaluate)", COMPARE_EXAMPLES)
    add_compare_arguments(p)

    p = add("mertdir", cmd_mertdir, "print the directory of Moses-compatible programs for mert-moses.pl --mertdir",
            "examples:\n  mert-moses.pl dev.src dev.ref $(which moses) moses.ini --mertdir=$(mtplug mertdir)\n"
            "  python train.py ... --moses-dir $(mtplug mertdir --moses-root ~/mtplug-moses)   # nbest-reranker\n")
    p.add_argument("--moses-root", metavar="DIR",
                   help="make DIR/bin hold the programs under Moses's names, for tools that take a Moses root and "
                        "run DIR/bin/extractor, DIR/bin/mert, ...; prints DIR (refuses a DIR/bin holding other files)")

    p = add("join-features", cmd_join_features,
            "add per-hypothesis features from other files to an n-best list (written in Moses's format)",
            "examples:\n  mtplug join-features --nbest nmt.nbest --feature LM=lm.scores --feature QE=qe.tsv "
            "-o nmt.lm-qe.nbest\n"
            "  mtplug join-features --nbest generate.out --nbest-format fairseq -o nmt.nbest   # a Moses copy\n"
            "feature files: one value per n-best hypothesis line, in the n-best's order (fairseq and JSON\n"
            "lines: sorted by id), or 'id rank value' lines, rank counting a sentence's hypotheses from 0\n")
    g = p.add_argument_group("input")
    g.add_argument("--nbest", "-n", nargs=1, required=True, metavar="FILE",
                   help="the n-best list (gzip read transparently; '-': stdin)")
    _add_nbest_format_args(g)
    g.add_argument("--feature", "-f", action="append", metavar="NAME=FILE",
                   help="a feature to add, NAME= on every line (repeat for several); FILE: one value per n-best "
                        "line or 'id rank value' lines")
    p.add_argument("--output", "-o", default="-", metavar="FILE", help="where to write the n-best (default '-': stdout)")

    from .tuning.config import add_tune_arguments

    p = add("tune", cmd_tune, "decoder-in-the-loop tuning: decode, merge n-best, optimize, repeat (Moses, cdec)",
            "examples:\n  mtplug tune --decoder moses --decoder-bin ~/moses/bin/moses --decoder-config moses.ini "
            "--input dev.src --ref dev.ref \\\n      --optimizer mert --iterations 10 --nbest-size 100 --jobs 4 "
            "--workdir tuning\n  mtplug tune --yaml tune.yaml --resume\n"
            "  mtplug tune --write-config > tune.yaml\n")
    add_tune_arguments(p)

    p = add("plot", cmd_plot, "PNG figures of a tuning run: BLEU per iteration, MERT error surface",
            "example:\n  mtplug plot tuning -o tuning/plots\n")
    p.add_argument("workdir", metavar="WORKDIR", help="the --workdir of 'mtplug tune'")
    p.add_argument("--output", "-o", metavar="DIR", help="where to write the PNG files (default: WORKDIR/plots)")
    aliases.add_alias(p, "--out", "--output")

    from .dtrain.command import EXAMPLES as DTRAIN_EXAMPLES
    from .dtrain.command import add_arguments as add_dtrain_arguments

    p = add("dtrain", cmd_dtrain, "cdec dtrain: online pairwise-ranking training with the decoder in the loop",
            DTRAIN_EXAMPLES)
    add_dtrain_arguments(p)

    p = add("example", cmd_example, "run extract, optimize and a decoder-in-the-loop tuning on the bundled example",
            "result (stdout): the tuning-set BLEU of each iteration of the tuning, that is the BLEU of the\n"
            "1-best the decoder gave under the iteration's weights, one line each:\n"
            "  iteration 1: BLEU = 26.5757\n  iteration 2: BLEU = ...\n"
            "Without --quiet, each step's command line, logs and own result go to stderr.\n\n"
            "examples:\n  mtplug example -q\n"
            "  mtplug example --keep ex    # ex/: features.dat scores.dat store.npz weights.opt moses.ini tune/\n")
    p.add_argument("--keep", metavar="DIR", help="write the outputs to DIR (created if missing) and keep them "
                   "(default: a temporary folder, removed at the end)")
    return parser


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP (what SLURM, SGE, ``timeout`` and a closed terminal send), raised
    where the program is, as Ctrl-C raises KeyboardInterrupt: the same cleanup runs (the
    tuning loop kills its decoders' process groups) and the same exit status follows."""


def _raise_terminated(signum, frame) -> None:
    for sig in (signal.SIGTERM, signal.SIGHUP):   # one is enough: a second cannot cut the cleanup short
        signal.signal(sig, signal.SIG_IGN)
    raise Terminated(signal.Signals(signum).name)


@contextlib.contextmanager
def _terminate_like_interrupt():
    """SIGTERM and SIGHUP end the command as SIGINT does while it runs (in the main thread
    only; a signal ignored when mtplug started, as nohup ignores SIGHUP, stays ignored)."""
    installed: dict = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(sig) == signal.SIG_DFL:
                installed[sig] = signal.signal(sig, _raise_terminated)
    try:
        yield
    finally:
        for sig, handler in installed.items():
            signal.signal(sig, handler)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``mtplug`` command on ``argv`` (default: ``sys.argv[1:]``) and return its exit
    status: 0 on success, 2 for a usage error or bad input (one ``mtplug: error: ...`` line
    on stderr, no traceback), 141 when stdout's reader went away, 130 on Ctrl-C, SIGTERM
    or SIGHUP (one ``mtplug: interrupted`` line)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    aliases.reset()     # each run warns of each old name once
    if argv[:1] == ["evaluate"]:
        from .experiments.evaluate_command import named_hyps_argv

        argv = named_hyps_argv(argv)
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exit_:   # --help, --version, or a usage error already printed
        return int(exit_.code or 0)
    try:
        with _terminate_like_interrupt(), _stdin_inputs(args, STDIN_INPUTS.get(args.command, {})), \
                _nbest_inputs(args):
            rc = args.func(args)
            flush_stdout()
        return rc
    except BrokenPipeError:
        # the reader of stdout went away (| head): stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except (InputError, FloatingPointError) as err:
        # FloatingPointError: an optimizer overflowed on the values it was given
        print(f"mtplug: error: {err}", file=sys.stderr)
        return EXIT_INPUT_ERROR
    except OSError as exc:
        # a full disk, a read-only or forbidden place of any command, named by its path
        # (writers go through atomic_output, which names the file it writes and leaves
        # nothing half-written); stdout on a full disk is named as such
        if not report_os_error("mtplug", exc):
            raise
        return EXIT_INPUT_ERROR
    except KeyboardInterrupt as exc:
        print("mtplug: interrupted" + (f" by {exc}" if isinstance(exc, Terminated) else ""), file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
