"""``mtplug rerank``: the command-line face of :mod:`mtplug.experiments.rerank` (flags,
output places, log lines)."""

from __future__ import annotations

import argparse
import sys
import time

from .. import validation
from ..aliases import add_alias
from ..errors import InputError
from ..fileio import check_outputs, shown

EXAMPLES = """\
examples:
  mtplug rerank --nbest test.best100.out.gz --weights moses.tuned.ini > test.1best
  mtplug rerank --nbest test.kbest.gz --weights weights.cdec -o test.1best          # cdec k-best
  mtplug rerank --nbest test.best100.out --weights weights.txt --sparse-weights w.sparse-weights -o 1best
  mtplug rerank --nbest test.best100.out --weights mert.out --nbest-size 10 --output-nbest test.best10.reranked
  mtplug rerank --nbest test.best100.out --weights w.txt --sentences $(wc -l < test.src) -o 1best

Ties go to the hypothesis read first (earlier file, then earlier line), as Moses orders its
n-best lists. Every sentence id from 0 to the last (or to --sentences - 1) needs a hypothesis.
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The ``mtplug rerank`` flags on ``p``."""
    g = p.add_argument_group("input")
    g.add_argument("--nbest", "-n", nargs="+", action="extend", required=True, metavar="FILE",
                   help="Moses n-best or cdec k-best files (gzip read transparently); several are merged by "
                        "sentence id, in the order given")
    g.add_argument("--weights", "-w", required=True, metavar="FILE",
                   help="the weights: moses.ini, init.opt, weights.txt, kbmira --dense-init or output, 'name value' "
                        "lines, cdec weights (told apart by content)")
    g.add_argument("--sparse-weights", metavar="FILE",
                   help="Moses sparse weights ('name value' lines) beside a --weights file that holds the dense "
                        "ones only (init.opt, weights.txt, --dense-init); a moses.ini's [weight-file] is read "
                        "without it")
    g.add_argument("--sentences", type=validation.count, metavar="N",
                   help="the number of sentences (e.g. $(wc -l < test.src)): sentences missing at the end are "
                        "an error too (default: the largest id + 1)")
    o = p.add_argument_group("output")
    o.add_argument("--output", "-o", metavar="FILE",
                   help="the 1-best of every sentence, one line each in sentence-id order ('-': stdout; the "
                        "default unless --output-nbest is given)")
    o.add_argument("--output-nbest", metavar="FILE",
                   help="the n-best re-sorted by the new model score, in the input's own lines (the feature "
                        "field byte for byte) with the new score in the fourth field")
    o.add_argument("--nbest-size", type=validation.count, metavar="K",
                   help="with --output-nbest: keep the best K of every sentence (default: all)")
    for old, new in (("--out", "--output"), ("--out-nbest", "--output-nbest"), ("-k", "--nbest-size")):
        add_alias(p, old, new)


def run(args, log, progress=None) -> int:
    """Run ``mtplug rerank`` for parsed ``args``; ``log(message)`` writes a log line (unless
    quiet); ``progress(paths, desc)`` returns a byte-count ``(update, close)`` pair."""
    from .rerank import WARNING, rank

    if args.nbest_size is not None and not args.output_nbest:
        raise InputError("--nbest-size takes effect only with --output-nbest FILE (the 1-best goes to --output)")
    out = args.output if args.output or args.output_nbest else "-"
    check_outputs({"--output": out, "--output-nbest": args.output_nbest})
    t0 = time.perf_counter()
    update, close = progress(args.nbest, "reading n-best") if progress else (None, lambda: None)
    try:
        ranking = rank(args.nbest, args.weights, sparse_weights=args.sparse_weights, sentences=args.sentences,
                       progress=update)
    finally:
        close()
    for note in ranking.notes:
        if note.startswith(WARNING):   # shown even with -q
            print(f"mtplug: {shown(note)}", file=sys.stderr)
        else:
            log(f"weights: {note}")
    if out:
        ranking.write_one_best(out)
    written = ranking.write_nbest(args.output_nbest, args.nbest_size) if args.output_nbest else 0
    log(f"rerank: {ranking.n_sentences} sentences, {ranking.n_hypotheses} hypotheses in {len(args.nbest)} file(s); "
        f"{ranking.n_changed()} 1-best(s) are not their sentence's first hypothesis"
        + (f"; {written} n-best lines written" if args.output_nbest else "")
        + f"; {time.perf_counter() - t0:.2f} s")
    return 0
