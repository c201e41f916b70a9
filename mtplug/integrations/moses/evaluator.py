"""``evaluator``: corpus scores of translation files, printed as Moses's evaluator does.

Flags of Moses's ``mert/evaluator.cpp``; scorers as ``--sctype`` names them (BLEU, PER,
WER, CDER, TER, interpolations such as ``CDER,PER`` with ``--scconfig
weights:0.25+0.75``, M2SCORER with an M2 ``--reference``, CHRF, and BLEUDOC with XML
references, a candidate line a document; mtplug.metrics.moses_scorers),
each with the ``--scconfig`` that
follows it. The score is Moses's (BLEU, 1 − TER, ...). One candidate and one scorer: the
score alone (``%.4f``); several: ``FILE<TAB>`` and/or ``SCTYPE<TAB>`` before it; with ``--bootstrap
N``: ``mean<TAB>[low,high]``, the 95 % interval of N resamplings of the sentences.
mert-moses.pl (``--return-best-dev``) reads the one number.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from ... import validation
from .common import MosesArgumentParser, log, moses_scorer, run_program, scorer_references, split_list

PROG = "evaluator"
ALPHA = 0.05

EXAMPLES = """\
examples:
  evaluator --reference ref.0,ref.1 -s BLEU --candidate run3.out
  evaluator --sctype BLEU --scconfig case:false --reference ref.0 --candidate a.out,b.out --bootstrap 1000 -r 1
  evaluator --sctype BLEU --sctype TER --sctype CDER,PER --scconfig weights:0.25+0.75 --reference ref.0 \\
      --candidate run3.out
"""


class _Scorer(argparse.Action):
    """--sctype: one more scorer, with an empty configuration (Moses's evaluator)."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, [*getattr(namespace, self.dest), [values, ""]])


class _ScorerConfig(argparse.Action):
    """--scconfig: the configuration of the --sctype before it (Moses's evaluator)."""

    def __call__(self, parser, namespace, values, option_string=None):
        scorers = getattr(namespace, self.dest)
        if not scorers:
            parser.error(f"{option_string} {values}: give the --sctype it configures before it")
        scorers[-1][1] = values


def build_parser() -> MosesArgumentParser:
    """The flags of Moses's ``evaluator`` (``--sctype``/``--scconfig`` pairs, ``--reference``,
    ``--candidate``, ``--bootstrap``, ``--rseed``)."""
    p = MosesArgumentParser(PROG, "Corpus scores of translation files (mtplug's drop-in for Moses's evaluator).",
                            EXAMPLES)
    p.add_argument("--sctype", "-s", action=_Scorer, dest="scorers", default=[], metavar="TYPE",
                   help="scorer (repeatable): BLEU, PER, WER, CDER, TER, a comma list (an interpolation) "
                        "M2SCORER (the reference an M2 file), CHRF, or BLEUDOC (XML references)")
    p.add_argument("--scconfig", "-c", action=_ScorerConfig, dest="scorers", metavar="KEY:VAL,...",
                   help="configuration of the preceding --sctype: case:true|false, reflen:..., weights:W1+W2")
    p.add_argument("--reference", "-R", action="append", metavar="REF0[,REF1]", help="reference files")
    p.add_argument("--candidate", "-C", action="append", metavar="FILE[,FILE]",
                   help="translations, one sentence per line")
    p.add_argument("--bootstrap", "-b", type=int, default=0, metavar="N",
                   help="bootstrap resamplings for a 95%% interval (default 0: none)")
    p.add_argument("--rseed", "-r", type=validation.seed, default=None, metavar="SEED",
                   help="seed of the resampling (default: the clock, as Moses's evaluator, whose samples a "
                        "seed reproduces)")
    p.add_unsupported("--factors", "-f", why="factored hypotheses are not split by mtplug", allowed=("",))
    p.add_unsupported("--filter", "-l", why="pre-processing filters are not run by mtplug", allowed=("",))
    return p


def main(argv: Sequence[str]) -> int:
    """Run ``evaluator`` on ``argv`` (the arguments after the program name); returns the exit
    status: 0, or 2 for bad input (one ``evaluator: error:`` line). A usage error exits with
    status 1, as Moses's programs do."""
    args = build_parser().parse(argv)
    return run_program(PROG, lambda: evaluate(args))


def evaluate(args) -> int:
    """Print the score of every candidate file under every scorer (module docstring) to
    stdout; InputError for missing references or candidates or a bad ``--bootstrap``."""
    import numpy as np

    from ...corpus import NbestCorpus
    from ...errors import InputError

    scorers = args.scorers or [["BLEU", ""]]
    chosen = [moses_scorer(name, config) for name, config in scorers]
    refs_files, cands = split_list(args.reference), split_list(args.candidate)
    if not refs_files:
        raise InputError("You have to specify at least one reference file (--reference).")
    if not cands:
        raise InputError("You have to specify at least one candidate file (--candidate).")
    refs = {_refs_key(scorer): scorer_references(scorer, refs_files) for scorer in chosen}   # M2SCORER: its M2 file
    if args.bootstrap < 0:
        raise InputError(f"--bootstrap must be >= 0, got {args.bootstrap}")
    gen = None
    if args.bootstrap:
        # Moses seeds C's rand() once (the clock without --rseed) and draws on through every
        # candidate file and scorer
        import time

        from .moses_random import GlibcRand

        if args.rseed is None:
            log("Seeding random numbers with system clock ")
            gen = GlibcRand(int(time.time()) & 0xFFFFFFFF)
        else:
            log(f"Seeding random numbers with {args.rseed}")
            gen = GlibcRand(int(args.rseed) & 0xFFFFFFFF)
    for cand in cands:
        read: dict = {}     # one reading per candidate and scorer configuration
        for (name, _), scorer in zip(scorers, chosen):
            key = (scorer.bleu, scorer.metric(), scorer.m2, scorer.ngram)
            if key not in read:
                read[key] = NbestCorpus.from_plain(cand, refs[_refs_key(scorer)], scorer.bleu, metric=scorer.metric())
            corpus = read[key]
            metric = corpus.metric
            stats = corpus.stats[corpus.sent_offsets[:-1]].astype(np.int64)
            prefix = (f"{cand}\t" if len(cands) > 1 else "") + (f"{name}\t" if len(scorers) > 1 else "")
            if args.bootstrap:
                mean, lo, hi = moses_bootstrap(gen, stats, metric, args.bootstrap)
                print(f"{prefix}{mean:.4f}\t[{lo:.4f},{hi:.4f}]")
            else:
                score = metric.objective(stats.sum(axis=0))
                print(f"{prefix}{float(np.float32(score)):.4f}")
    return 0


def _refs_key(scorer):
    """Scorers reading the reference files alike share one reading (M2SCORER: its M2 file;
    CHRF and BLEUDOC: their own, with their --scconfig)."""
    return (scorer.m2, scorer.sctype if scorer.ngram is not None else None, scorer.ngram)


def moses_bootstrap(gen, stats, metric, samples: int) -> tuple[float, float, float]:
    """Moses's evaluator bootstrap (mert/evaluator.cpp): ``samples`` resamples of the
    sentences' statistics ``stats`` (int [n, k]), drawn as ``rand() % n`` from ``gen``
    (GlibcRand, advanced), each scored in float (BLEU: Moses's float BLEU); returns the
    float mean (summed in order), and the sorted scores at ``int(samples * 0.025f)`` and
    ``int(samples * 0.975f)`` (float products, as Moses computes the indexes)."""
    import numpy as np

    from ..._ext import _moses_sbleu
    from .moses_random import rand_mod_many

    f32 = np.float32
    n = len(stats)
    idx = rand_mod_many(gen, samples * n, n).reshape(samples, n)
    totals = np.stack([stats[row].sum(axis=0) for row in idx]) if n else np.zeros((samples, stats.shape[1]))
    if _is_plain_bleu(metric):
        scores = _moses_sbleu.corpus_bleu(np.ascontiguousarray(totals, dtype=f32))
    else:
        scores = np.array([metric.objective(t) for t in totals], dtype=f32)
    mean = f32(np.cumsum(scores, dtype=f32)[-1] / f32(samples))
    scores = np.sort(scores)
    half = f32(f32(ALPHA) / f32(2))     # Moses: g_alpha / 2, a float
    lo = scores[int(f32(f32(samples) * half))]
    hi = scores[int(f32(f32(samples) * f32(f32(1) - half)))]
    return float(mean), float(lo), float(hi)


def _is_plain_bleu(metric) -> bool:
    """Whether ``metric`` is Moses's BLEU scorer alone (its statistics: the 9 BLEU columns)."""
    parts = getattr(metric, "parts", None) or []
    return len(parts) == 1 and parts[0].name == "bleu"
