"""What the Moses programs share: Moses-style flag parsing, ``--scconfig``, number
formatting, loading features/scores files, and the error handling around ``main``.

Flags follow Moses's parsers (getopt_long / boost::program_options): ``--name value``,
``--name=value``, unambiguous prefixes of long names, ``-x value`` and ``-xvalue``.
A flag Moses knows but which cannot change mtplug's result (verbosity, memory modes)
is accepted with a warning; a flag Moses knows whose effect mtplug does not provide is
an error naming it; an unknown flag is an error. Nothing is silently misread.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Collection, Sequence
from typing import Callable

from ...errors import InputError, printable
from ...fileio import flush_stdout, report_os_error

EXIT_USAGE = 1          # Moses's programs exit 1 after printing their usage
EXIT_INPUT_ERROR = 2    # as the mtplug command
EXIT_INTERRUPTED = 130


class MosesArgumentParser(argparse.ArgumentParser):
    """argparse with Moses's exit status for usage errors and helpers for the flags
    mtplug ignores or refuses. ``prog``: the program name in messages; ``description`` and
    ``examples``: the text before and after the flags in ``--help``."""

    def __init__(self, prog: str, description: str, examples: str = ""):
        super().__init__(prog=prog, description=description, epilog=examples, allow_abbrev=True,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
        self.warnings: list[str] = []

    def error(self, message):
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        sys.exit(EXIT_USAGE)

    def add_ignored(self, *flags: str, nargs: int = 0, why: str, group=None) -> None:
        """A Moses flag accepted and ignored with a warning (it cannot change the result)."""
        parser = self

        class Ignore(argparse.Action):
            def __call__(self, p, namespace, values, option_string=None):
                parser.warnings.append(f"{option_string} ignored: {why}")

        (group or self).add_argument(*flags, nargs=None if nargs == 1 else 0, action=Ignore,
                                     metavar="VALUE" if nargs else None,
                                     help=f"accepted for Moses compatibility and ignored ({why})",
                                     dest=argparse.SUPPRESS, default=argparse.SUPPRESS)

    def add_unsupported(self, *flags: str, nargs: int = 1, why: str, allowed: Sequence[str] = (),
                        group=None) -> None:
        """A Moses flag whose effect mtplug does not provide: an error when used, unless
        its value is one of ``allowed`` (values that mean "the default")."""
        parser = self

        class Refuse(argparse.Action):
            def __call__(self, p, namespace, values, option_string=None):
                if nargs and values in allowed:
                    return
                parser.error(f"{option_string} is not supported by mtplug: {why}")

        (group or self).add_argument(*flags, nargs=None if nargs == 1 else 0, action=Refuse,
                                     metavar="VALUE" if nargs else None,
                                     help=f"Moses flag not supported: {why}", dest=argparse.SUPPRESS,
                                     default=argparse.SUPPRESS)

    def parse(self, argv: Sequence[str]) -> argparse.Namespace:
        """Parse ``argv``, then print the warnings of ignored flags."""
        args = self.parse_args(list(argv))
        for w in self.warnings:
            print(f"{self.prog}: warning: {w}", file=sys.stderr)
        return args


def unglue_sctype(argv: Sequence[str]) -> list[str]:
    """mert-moses.pl appends ``"$sctype $scconfig"`` to ``"$mertargs $mertmertargs"``
    without a space, so ``--mertmertargs="--directions expbleu"`` reaches mert as
    ``--directions expbleu--sctype BLEU``: split such a token back into its value and
    the ``--sctype`` flag (a value-less flag too: ``--model-bg--sctype``; no value of
    ours contains ``--sctype``)."""
    out: list[str] = []
    for token in argv:
        head, sep, tail = token.partition("--sctype")
        if sep and head:
            out += [head, sep + tail]
        else:
            out.append(token)
    return out


def run_program(prog: str, body: Callable[[], int]) -> int:
    """Run ``body``; bad input becomes one line ``PROG: error: FILE:LINE: what`` and
    exit status 2 (nothing half-written: every output goes through a temp file), as does an
    OSError on a path (a full disk, a read-only or forbidden place: ``PROG: error: PATH: what``)."""
    try:
        rc = body()
        flush_stdout()     # a full disk under stdout is found here, not at exit
        return rc
    except InputError as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        return EXIT_INPUT_ERROR
    except (ValueError, FloatingPointError) as err:
        print(f"{prog}: error: {printable(str(err))}", file=sys.stderr)
        return EXIT_INPUT_ERROR
    except OSError as exc:
        # a full disk, a read-only or forbidden place: one line naming the path
        if not report_os_error(prog, exc):
            raise
        return EXIT_INPUT_ERROR
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def log(message: str) -> None:
    """Write one log line to stderr at once (mert-moses.pl's logs interleave the programs' output)."""
    print(message, file=sys.stderr, flush=True)


class Timer:
    """Seconds since creation, for log lines."""

    def __init__(self):
        self.t0 = time.perf_counter()

    def __str__(self) -> str:
        return f"{time.perf_counter() - self.t0:.2f} s"


# ------------------------------------------------------------------------- values
def split_list(values: Sequence[str] | str | None, *, blanks: bool = False) -> list[str]:
    """Flags given as comma lists and/or repeated (both forms occur in mert-moses.pl);
    ``blanks``: blanks separate items too (mert-moses.pl's --activate-features)."""
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    out: list[str] = []
    for v in values:
        if blanks:
            v = v.replace(" ", ",").replace("\t", ",")
        out.extend(p for p in v.split(",") if p)
    return out


def moses_scorer(sctype: str | None, scconfig):
    """The :class:`mtplug.metrics.moses_scorers.MosesScorer` of ``--sctype`` (None: BLEU)
    and ``--scconfig`` (a string or several); InputError naming the flag."""
    from ...metrics.moses_scorers import parse_moses_scorer

    try:
        scorer = parse_moses_scorer(sctype, scconfig)
    except ValueError as err:
        raise InputError(str(err)) from None
    for note in scorer.notes:
        log(f"warning: {note}")
    return scorer


def scorer_references(scorer, paths: Sequence[str]):
    """The references of ``scorer`` (a MosesScorer) from the ``--reference`` files: for
    M2SCORER the M2 file (Moses reads only the first of a list; its extractor prints
    "Levenshtein distance is greater than source size." per hypothesis too far from its
    source, and so does this), else the line-aligned reference files."""
    from ...formats.references import read_references

    if scorer.ngram is not None:
        # CHRF: the line-aligned texts; BLEUDOC: XML documents (mtplug.metrics.moses_ngram)
        from ...metrics.moses_ngram import bleudoc_references

        if scorer.sctype == "BLEUDOC":
            return bleudoc_references(paths, scorer.ngram)
        refs = read_references(paths)
        refs.ngram_options = scorer.ngram   # type: ignore[attr-defined]
        return refs
    if scorer.m2 is None:
        return read_references(paths)
    from ...metrics.m2 import m2_references

    if len(paths) > 1:
        log(f"warning: M2SCORER reads only the first reference file, {paths[0]}")
    refs = m2_references(paths[0], scorer.m2)
    refs.m2_warn = lambda message: print(message, file=sys.stderr)     # type: ignore[attr-defined]
    return refs


def load_mert_data(ffiles: Sequence[str], scfiles: Sequence[str], sctype: str | None = None, scconfig=None):
    """The deduplicated n-best store of features.dat/scores.dat pairs (every sentence
    must have hypotheses), scored as the scores files' Moses scorer. ``sctype``: the
    program's ``--sctype`` (None: not given; the files' scorer holds); given, it must name
    the files' scorer. ``scconfig``: ``--scconfig`` (an interpolation's weights)."""
    from ...formats.mert_data import read_mert_data
    from ...metrics.moses_scorers import sctype_of

    if not ffiles:
        raise InputError("no features file: give --ffile FILE (comma list or repeated)")
    if len(ffiles) != len(scfiles):
        raise InputError(f"{len(ffiles)} features files (--ffile) but {len(scfiles)} scores files "
                         "(--scfile); expected one scores file per features file")
    corpus = read_mert_data(ffiles, scfiles)
    corpus.check_complete(", ".join(ffiles))
    scorer = moses_scorer(sctype or sctype_of(corpus.metric), scconfig)
    try:
        corpus.metric = scorer.rebind(corpus.metric)
    except ValueError as err:
        raise InputError(f"{err} (--sctype must name the scorer of the extractor's --sctype)", scfiles[0]) from None
    return corpus


# ------------------------------------------------------------------ --algorithm extras
def algorithm_of(argv: Sequence[str], default: str) -> str:
    """The ``--algorithm NAME`` of ``argv`` (``default`` if absent or unknown; the full
    parser then reports an unknown name)."""
    from ...optimizers.registry import OPTIMIZER_NAMES

    pre = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    pre.add_argument("--algorithm", default=default)
    known, _ = pre.parse_known_args(list(argv))
    return known.algorithm if known.algorithm in OPTIMIZER_NAMES else default


def add_algorithm_options(parser: MosesArgumentParser, algorithm: str, default: str,
                          mapped: Collection[str] = (), overrides: dict | None = None):
    """The group ``--algorithm`` plus every option of that optimizer as ``--option-name``
    (except ``mapped`` ones, which the program sets from Moses's own flags; ``overrides``
    replaces argparse keywords of an option). Returns the optimizer class."""
    from ...optimizers.registry import OPTIMIZER_NAMES, get_optimizer

    g = parser.add_argument_group(f"mtplug extras (options of --algorithm {algorithm})")
    g.add_argument("--algorithm", default=default, choices=OPTIMIZER_NAMES,
                   help=f"optimizer to run over the same data (default {default}); its options follow")
    cls = get_optimizer(algorithm)
    for name, kwargs in cls.options.items():
        flag = "--" + name.replace("_", "-")
        if name in mapped or flag in parser._option_string_actions:
            continue     # set from the Moses flag of the same name
        kwargs = {**kwargs, **(overrides or {}).get(name, {})}
        g.add_argument("--" + name.replace("_", "-"), dest=name, **kwargs)
    return cls


def algorithm_options(cls, args, mapped: dict) -> dict:
    """Constructor keywords of optimizer ``cls``: its options parsed into ``args``,
    updated with the values of ``mapped`` that are not None (taken from Moses's flags;
    None = flag not given, so the optimizer's own default holds)."""
    options = {name: getattr(args, name) for name in cls.options if getattr(args, name, None) is not None}
    options.update({k: v for k, v in mapped.items() if k in cls.options and v is not None})
    return options
