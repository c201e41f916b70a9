"""``mtplug rerank``: the command-line face of :mod:`mtplug.experiments.rerank` (flags,
output places, log lines)."""

from __future__ import annotations

import argparse
import sys
import time

from ..errors import InputError
from ..fileio import check_outputs, shown

EXAMPLES = """\
examples:
  mtplug rerank --nbest test.best100.out.gz --weights moses.tuned.ini > test.1best
  mtplug rerank --nbest test.kbest.gz --weights weights.cdec --out test.1best          # cdec k-best
  mtplug rerank --nbest test.best100.out --weights weights.txt --sparse-weights w.sparse-weights --out 1best
  mtplug rerank --nbest test.best100.out --weights mert.out -k 10 --out-nbest test.best10.reranked
  mtplug rerank --nbest test.best100.out --weights w.txt --sentences $(wc -l < test.src) --out 1best

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
    g.add_argument("--sentences", type=int, metavar="N",
                   help="the number of sentences (e.g. $(wc -l < test.src)): sentences missing at the end are "
                        "an error too (default: the largest id + 1)")
    o = p.add_argument_group("output")
    o.add_argument("--out", "-o", metavar="FILE",
                   help="the 1-best of every sentence, one line each in sentence-id order ('-': stdout; the "
                        "default unless --out-nbest is given)")
    o.add_argument("--out-nbest", metavar="FILE",
                   help="the n-best re-sorted by the new model score, in the input's own lines (the feature "
                        "field byte for byte) with the new score in the fourth field")
    o.add_argument("-k", type=int, metavar="K",
                   help="with --out-nbest: keep the best K of every sentence (default: all)")


def run(args, log, progress=None) -> int:
    """Run ``mtplug rerank`` for parsed ``args``; ``log(message)`` writes a log line (unless
    quiet); ``progress(paths, desc)`` returns a byte-count ``(update, close)`` pair."""
    from .rerank import WARNING, rank

    if args.k is not None and not args.out_nbest:
        raise InputError("-k takes effect only with --out-nbest FILE (the 1-best goes to --out)")
    if args.k is not None and args.k < 1:
        raise InputError(f"-k must be >= 1, got {args.k}")
    if args.sentences is not None and args.sentences < 1:
        raise InputError(f"--sentences must be >= 1, got {args.sentences}")
    out = args.out if args.out or args.out_nbest else "-"
    check_outputs({"--out": out, "--out-nbest": args.out_nbest})
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
    written = ranking.write_nbest(args.out_nbest, args.k) if args.out_nbest else 0
    log(f"rerank: {ranking.n_sentences} sentences, {ranking.n_hypotheses} hypotheses in {len(args.nbest)} file(s); "
        f"{ranking.n_changed()} 1-best(s) are not their sentence's first hypothesis"
        + (f"; {written} n-best lines written" if args.out_nbest else "")
        + f"; {time.perf_counter() - t0:.2f} s")
    return 0
