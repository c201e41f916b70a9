"""``sentence-bleu``: smoothed BLEU of every line of a translation, as Moses's program.

``sentence-bleu REF [REF ...] < candidate > scores`` (Moses's ``mert/sentence-bleu.cpp``):
one number per input line (C++'s default six significant digits), Moses's smoothed
sentence BLEU (add one to the n-gram counts for n > 1; ``moses-sentence-bleu`` in
:mod:`mtplug.metrics.bleu`). ``--variant`` picks another sentence-BLEU variant.
"""

from __future__ import annotations

from collections.abc import Sequence

from .common import MosesArgumentParser, moses_scorer, run_program

PROG = "sentence-bleu"

EXAMPLES = """\
examples:
  sentence-bleu ref.0 ref.1 < run3.out > run3.sentence-bleu
  sentence-bleu --variant bleu+1 ref.0 < run3.out
"""


def build_parser() -> MosesArgumentParser:
    """The flags of Moses's ``sentence-bleu``: the reference files, plus ``--variant``."""
    from ...metrics.bleu import SENTENCE_BLEU_VARIANTS

    p = MosesArgumentParser(PROG, "Sentence-level smoothed BLEU of each line read from stdin "
                                  "(mtplug's drop-in for Moses's sentence-bleu).", EXAMPLES)
    p.add_argument("references", nargs="+", metavar="REF", help="reference files, line i = sentence i")
    p.add_argument("--variant", default="moses-sentence-bleu", choices=sorted(SENTENCE_BLEU_VARIANTS),
                   help="sentence-BLEU variant (default moses-sentence-bleu, as Moses)")
    p.add_argument("--scconfig", default="", metavar="KEY:VAL,...",
                   help="case:true|false, reflen:closest|shortest|average (mtplug extra)")
    return p


def main(argv: Sequence[str]) -> int:
    """Run ``sentence-bleu`` on ``argv`` (the arguments after the program name); returns the exit
    status: 0, or 2 for bad input (one ``sentence-bleu: error:`` line). A usage error exits with
    status 1, as Moses's programs do."""
    args = build_parser().parse(argv)
    return run_program(PROG, lambda: score(args))


def score(args) -> int:
    """Read the candidate from stdin and print one sentence-BLEU value per line (six
    significant digits) to stdout; InputError for bad input (named ``<stdin>``)."""
    import os
    import sys
    import tempfile

    from ...corpus import NbestCorpus
    from ...errors import InputError
    from ...formats.number_text import format_g6
    from ...formats.references import read_references
    from ...metrics.bleu import sentence_bleu

    refs = read_references(args.references)
    # the candidate comes on stdin; the compiled reader takes a file
    fd, tmp = tempfile.mkstemp(suffix=".hyp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(sys.stdin.buffer.read())
        try:
            corpus = NbestCorpus.from_plain(tmp, refs, moses_scorer("BLEU", args.scconfig).bleu)
        except InputError as err:
            raise InputError(str(err).replace(tmp, "<stdin>")) from None
    finally:
        os.unlink(tmp)
    stats = corpus.stats[corpus.sent_offsets[:-1]]
    if args.variant == "moses-sentence-bleu":
        # Moses's own number: float32 arithmetic, printed as C++ prints a float
        values = moses_sentence_bleu(stats, corpus.ref_len_divisor)
        sys.stdout.write("".join("%g\n" % v for v in values.tolist()))
        return 0
    values = sentence_bleu(stats, args.variant, corpus.ref_len_divisor)
    sys.stdout.write("".join(format_g6(v) + "\n" for v in values.tolist()))
    return 0


def moses_sentence_bleu(stats, ref_len_divisor: int = 1):
    """float32 [n]: Moses's smoothedSentenceBleu (pyx/_moses_sbleu.pyx) of BLEU statistics
    [n, 9] (int); an averaged reference length (``ref_len_divisor`` > 1, the stored sum
    over that many references) is truncated to an integer as Moses's
    ``Reference::CalcAverage`` does: ``int(float(sum) / n)``."""
    import numpy as np

    from ..._ext import _moses_sbleu

    f = np.ascontiguousarray(stats, dtype=np.float32)
    if ref_len_divisor != 1:
        f[:, 8] = np.trunc(f[:, 8] / np.float32(ref_len_divisor))
    return _moses_sbleu.smoothed_sentence_bleu(f)
