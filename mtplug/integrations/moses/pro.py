"""``pro``: Moses's PRO sampler (Hopkins & May 2011) writing pro.data, run by mtplug.

Flags of Moses's ``mert/pro.cpp``: per sentence Γ = 5000 random pairs, pairs whose
sentence BLEU (Moses's smoothed sentence BLEU; ``-b``: with Nakov et al.'s smoothed
brevity penalty) differs by less than β = 0.05 dropped, the Ξ = 50 with the largest
difference kept, each written twice (label 1: better − worse, label 0: the mirror) in
Moses's byte layout (:mod:`mtplug.formats.pro_data`). The draws are mtplug's seeded
stream (``-r``), so the pairs are not Moses's, but the sampling rule is. The pro.data
then goes to ``megam_i686.opt`` (mtplug's stands in for megam).

Scores files of another Moses scorer (``extractor --sctype TER``, ``BLEU,TER``, ...) are
ranked by its sentence-level score (BLEU parts with the sentence-BLEU variant): Moses's
pro reads every scores file as BLEU and has no ``--sctype``; mtplug takes the scorer the
files name, or ``--sctype``/``--scconfig`` when given (an interpolation's weights).
"""

from __future__ import annotations

from collections.abc import Sequence

from ... import validation
from .common import MosesArgumentParser, Timer, load_mert_data, log, run_program, split_list

PROG = "pro"

EXAMPLES = """\
example (as mert-moses.pl --pairwise-ranked calls it):
  pro -r 1000 --ffile run1.features.dat --ffile run2.features.dat --scfile run1.scores.dat \\
      --scfile run2.scores.dat -o run2.pro.data
"""


def build_parser() -> MosesArgumentParser:
    """The flags of Moses's ``pro`` (``--ffile``, ``--scfile``, ``-r``, ``-b``, ``-o``) plus
    the sampler's Γ, Ξ, β and the sentence metric."""
    p = MosesArgumentParser(PROG, "Sample PRO training pairs into pro.data (mtplug's drop-in for Moses's pro).",
                            EXAMPLES)
    g = p.add_argument_group("Moses pro flags")
    g.add_argument("--scfile", "-S", action="append", metavar="FILE", help="scores files (repeated)")
    g.add_argument("--ffile", "-F", action="append", metavar="FILE", help="features files (repeated)")
    g.add_argument("--random-seed", "-r", type=validation.seed, default=None, metavar="SEED",
                   help="random seed (default 0: mtplug is deterministic; Moses uses the clock)")
    g.add_argument("--output-file", "-o", default=None, metavar="FILE", help="pro.data to write (default stdout)")
    g.add_argument("--smooth-brevity-penalty", "-b", action="store_true",
                   help="smooth the brevity penalty of sentence BLEU (Nakov et al. 2012)")
    x = p.add_argument_group("mtplug extras")
    x.add_argument("--gamma", type=int, default=5000, metavar="N", help="pairs drawn per sentence (default 5000)")
    x.add_argument("--xi", type=int, default=50, metavar="N", help="pairs kept per sentence (default 50)")
    x.add_argument("--beta", type=float, default=0.05, metavar="B",
                   help="smallest sentence-BLEU difference kept (default 0.05)")
    x.add_argument("--sctype", default=None, metavar="TYPE",
                   help="scorer of the scores files (default: the one they name): BLEU, PER, WER, CDER, TER "
                        "or a comma list")
    x.add_argument("--scconfig", action="append", metavar="KEY:VAL,...",
                   help="an interpolation's weights:W1+W2 (equal weights by default, as Moses)")
    x.add_argument("--sentence-metric", default=None, metavar="VARIANT",
                   help="sentence-BLEU variant (default moses-sentence-bleu, or nakov with -b); any of "
                        "mtplug.metrics.bleu.SENTENCE_BLEU_VARIANTS")
    return p


def main(argv: Sequence[str]) -> int:
    """Run ``pro`` on ``argv`` (the arguments after the program name); returns the exit
    status: 0, or 2 for bad input (one ``pro: error:`` line). A usage error exits with
    status 1, as Moses's programs do."""
    args = build_parser().parse(argv)
    return run_program(PROG, lambda: sample(args))


def sample(args) -> int:
    """Sample PRO's pairs from the features/scores files (seed ``-r``, default 0) and write
    them as pro.data to ``-o`` or stdout; InputError for bad input or an unknown metric."""
    import sys

    from ...errors import InputError
    from ...formats.pro_data import pro_data_from_pairs, write_pro_data
    from ...metrics.bleu import SENTENCE_BLEU_VARIANTS
    from ...metrics.sentence import hypothesis_scores
    from ...optimizers.pro import sample_pairs

    metric = args.sentence_metric or ("nakov" if args.smooth_brevity_penalty else "moses-sentence-bleu")
    if metric not in SENTENCE_BLEU_VARIANTS:
        raise InputError(f"--sentence-metric {metric}: expected one of {', '.join(SENTENCE_BLEU_VARIANTS)}")
    seed = 0 if args.random_seed is None else args.random_seed
    log(f"Initialising random seed to {seed}" + (" (mtplug's default; give -r to choose)"
                                                 if args.random_seed is None else ""))
    t = Timer()
    corpus = load_mert_data(split_list(args.ffile), split_list(args.scfile), args.sctype, args.scconfig)
    b = hypothesis_scores(corpus, metric)
    try:
        pairs = sample_pairs(b, corpus.sent_offsets, seed=seed, gamma=args.gamma, xi=args.xi, beta=args.beta)
    except ValueError as err:
        raise InputError(f"{PROG}: {err}") from None
    data = pro_data_from_pairs(corpus, pairs.better, pairs.worse)
    if args.output_file:
        write_pro_data(args.output_file, data)
    else:
        _write_stdout(data, write_pro_data)
        sys.stdout.flush()
    log(f"{PROG}: {pairs.n_pairs} pairs ({data.n_lines} lines) from {corpus.n_hypotheses} hypotheses of "
        f"{corpus.n_sentences} sentences, metric {corpus.metric.name} (sentence BLEU: {metric}), seed {seed}, "
        f"in {t}")
    return 0


def _write_stdout(data, writer) -> None:
    """pro.data to stdout (Moses's default), through a temporary file so the writer stays one."""
    import os
    import shutil
    import sys
    import tempfile

    fd, tmp = tempfile.mkstemp(suffix=".pro.data")
    os.close(fd)
    try:
        writer(tmp, data)
        with open(tmp, "rb") as fh:
            shutil.copyfileobj(fh, sys.stdout.buffer)
    finally:
        os.unlink(tmp)
