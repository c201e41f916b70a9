"""``extractor``: n-best lists + references -> Moses features.dat and scores.dat.

Moses's ``mert/extractor.cpp`` flags; the text files are byte-identical to Moses's on
today's n-best format (tests/integrations: shared/data/moses-toy), for every scorer of
``--sctype`` mtplug provides: BLEU, PER, WER, CDER, TER and comma lists of them
(interpolations; mtplug.metrics.moses_scorers), and M2SCORER (an M2 reference file;
mtplug.metrics.m2; it prints Moses's "Levenshtein distance is greater than source size."
to stderr for each hypothesis further from its source than the source is long), CHRF and
BLEUDOC (mtplug.metrics.moses_ngram: what Moses's code writes with its two one-line bugs
fixed; the real Moses writes all-zero CHRF statistics and cannot read BLEUDOC references).
"""

from __future__ import annotations

from collections.abc import Sequence

from .common import MosesArgumentParser, Timer, log, moses_scorer, run_program, scorer_references, split_list

PROG = "extractor"

EXAMPLES = """\
examples:
  # as mert-moses.pl calls it
  extractor --sctype BLEU --scconfig case:true --scfile run1.scores.dat --ffile run1.features.dat \\
      -r ref.0,ref.1 -n run1.best100.out.gz
  # Moses's TER, and BLEU and TER interpolated (mert-moses.pl --mertargs="--sctype BLEU,TER")
  extractor --sctype TER --scconfig case:true --scfile run1.scores.dat --ffile run1.features.dat -r ref.0 -n nbest
  extractor --sctype BLEU,TER --scconfig case:true,weights:0.6+0.4 --scfile run1.scores.dat \\
      --ffile run1.features.dat -r ref.0 -n nbest
  # grammatical error correction: Moses's M2 scorer, an M2 reference (S and A lines)
  extractor --sctype M2SCORER --scconfig beta:0.5 --scfile run1.scores.dat --ffile run1.features.dat \\
      -r dev.m2 -n run1.best100.out
"""


def build_parser() -> MosesArgumentParser:
    """The flags of Moses's ``extractor`` (``--nbest``, ``--reference``, ``--ffile``, ``--scfile``,
    ``--prev-ffile``/``--prev-scfile``, ``--sctype``/``--scconfig``, ``--binary``)."""
    p = MosesArgumentParser(PROG, "Compute the metric statistics and features of n-best lists "
                                  "(mtplug's drop-in for Moses's extractor).", EXAMPLES)
    p.add_argument("--nbest", "-n", action="append", metavar="FILE[,FILE]",
                   help="Moses n-best list(s), gzip allowed (comma list or repeated)")
    p.add_argument("--reference", "-r", action="append", metavar="REF0[,REF1]",
                   help="reference files, one per reference set (comma list or repeated)")
    p.add_argument("--sctype", "-s", default="BLEU",
                   help="scorer: BLEU (default), PER, WER, CDER, TER, a comma list of them (BLEU,TER), "
                        "M2SCORER (the reference an M2 file), CHRF, or BLEUDOC (XML references)")
    p.add_argument("--scconfig", "-c", default="", metavar="KEY:VAL,...",
                   help="case:true|false; BLEU: reflen:closest|shortest|average; an interpolation: "
                        "weights:W1+W2; M2SCORER: beta:B,max_unchanged_words:N,truecase:0|1; "
                        "CHRF: beta:B (score only)")
    p.add_argument("--scfile", "-S", default="statscore.data", metavar="FILE",
                   help="scores file to write (default statscore.data)")
    p.add_argument("--ffile", "-F", default="features.data", metavar="FILE",
                   help="features file to write (default features.data)")
    p.add_argument("--prev-scfile", "-E", action="append", metavar="FILE[,FILE]",
                   help="earlier scores files to merge in")
    p.add_argument("--prev-ffile", "-R", action="append", metavar="FILE[,FILE]",
                   help="earlier features files to merge in")
    p.add_argument("--binary", "-b", action="store_true",
                   help="write Moses's binary variant (dense features only)")
    p.add_ignored("--verbose", "-v", nargs=1, why="mtplug logs the same at every level")
    p.add_unsupported("--factors", "-f", why="factored hypotheses are not split by mtplug", allowed=("",))
    p.add_unsupported("--filter", "-l", why="pre-processing filters are not run by mtplug; filter the "
                                            "n-best list beforehand", allowed=("",))
    p.add_unsupported("--allow-duplicates", "-d", nargs=0,
                      why="mtplug always stores identical hypotheses once")
    return p


def main(argv: Sequence[str]) -> int:
    """Run ``extractor`` on ``argv`` (the arguments after the program name); returns the exit
    status: 0, or 2 for bad input (one ``extractor: error:`` line). A usage error exits with
    status 1, as Moses's programs do."""
    args = build_parser().parse(argv)
    return run_program(PROG, lambda: extract(args))


def extract(args) -> int:
    """Read the n-best list(s) and references (merged with the earlier files), then write
    features.dat and scores.dat as Moses's extractor does; InputError for missing or bad input."""
    from ...errors import InputError
    from ...fileio import check_outputs
    from ...formats.mert_data import extract_files

    check_outputs({"--ffile": args.ffile, "--scfile": args.scfile})   # before reading (a full disk comes later)
    scorer = moses_scorer(args.sctype, args.scconfig)
    nbests, refs = split_list(args.nbest), split_list(args.reference)
    if not nbests:
        raise InputError("no n-best list: give --nbest FILE")
    if not refs:
        raise InputError("no reference: give --reference REF0[,REF1...]")
    t = Timer()
    prev_f, prev_s = split_list(args.prev_ffile), split_list(args.prev_scfile)
    done = extract_files(nbests, scorer_references(scorer, refs), scorer.bleu, args.ffile, args.scfile, prev_f, prev_s,
                         binary=args.binary, metric=scorer.metric(), moses_binary=True, integer_average=True)
    log(f"{PROG}: wrote {args.ffile} and {args.scfile}: {done.n_hypotheses} hypotheses of {done.n_sentences} "
        f"sentences after Moses's duplicate removal ({done.n_dense} dense, {done.n_sparse} sparse features; "
        f"{len(prev_f)} earlier file pair(s)) in {t}")
    return 0
