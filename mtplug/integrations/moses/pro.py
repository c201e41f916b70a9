"""``pro``: Moses's PRO sampler (Hopkins & May 2011) writing pro.data, run by mtplug.

Flags of Moses's ``mert/pro.cpp``: per sentence Γ = 5000 random pairs, pairs whose
sentence BLEU (Moses's smoothed sentence BLEU; ``-b``: with Nakov et al.'s smoothed
brevity penalty) differs by less than β = 0.05 dropped, the Ξ = 50 with the largest
difference kept, each written twice (label 1: better − worse, label 0: the mirror) in
Moses's byte layout (:mod:`mtplug.formats.pro_data`). With BLEU scores files and
Moses's flags the pairs are Moses's own, draw for draw (:mod:`.moses_pro`: glibc's
``rand()`` after ``srand(-r)``, every hypothesis kept, float32 sentence BLEU), so the
pro.data is the bytes Moses's pro writes. The pro.data then goes to ``megam_i686.opt``
(mtplug's stands in for megam).

Scores files of another Moses scorer (``extractor --sctype TER``, ``BLEU,TER``, ...) are
ranked by its sentence-level score (BLEU parts with the sentence-BLEU variant): Moses's
pro reads every scores file as BLEU and has no ``--sctype``; mtplug takes the scorer the
files name, or ``--sctype``/``--scconfig`` when given (an interpolation's weights).

With ``--mtplug-sampler`` (or ``--sctype``/``--scconfig``, or scores of another scorer)
mtplug's own sampler runs: each sentence draws from its own seeded stream over the
de-duplicated store, so the pairs are not Moses's, but the sampling rule is. It streams:
it reads the files a block of sentences at a time
(all files side by side, merged and de-duplicated as the whole store would be), samples
and writes those sentences' pairs, and holds no more than a few blocks, so memory does
not grow with the n-best lists. The pairs and bytes are those of sampling the whole
store (each sentence draws from its own seeded stream). Files whose sentence blocks are
out of order (Moses's extractor writes them in order) are read whole instead.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence

import numpy as np

from ... import validation
from ..._ext import _pro
from .common import MosesArgumentParser, Timer, load_mert_data, log, moses_scorer, run_program, split_list
from .moses_pro import MOSES_VARIANTS, NotBleu, moses_pro_data

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
    x.add_argument("--mtplug-sampler", action="store_true",
                   help="mtplug's own sampler (one seeded stream per sentence, hypotheses de-duplicated, "
                        "reads the files block by block) instead of Moses's draws")
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
    from ...fileio import atomic_output, check_output
    from ...formats.mert_data import NotStreamable
    from ...metrics.bleu import SENTENCE_BLEU_VARIANTS

    metric = args.sentence_metric or ("nakov" if args.smooth_brevity_penalty else "moses-sentence-bleu")
    if metric not in SENTENCE_BLEU_VARIANTS:
        raise InputError(f"--sentence-metric {metric}: expected one of {', '.join(SENTENCE_BLEU_VARIANTS)}")
    if args.output_file:
        check_output(args.output_file, "--output-file")    # before any work (a full disk comes later)
    seed = 0 if args.random_seed is None else args.random_seed
    log(f"Initialising random seed to {seed}" + (" (mtplug's default; give -r to choose)"
                                                 if args.random_seed is None else ""))
    t = Timer()
    ffiles, scfiles = split_list(args.ffile), split_list(args.scfile)
    if not ffiles:
        raise InputError("no features file: give --ffile FILE (comma list or repeated)")
    if len(ffiles) != len(scfiles):
        raise InputError(f"{len(ffiles)} features files (--ffile) but {len(scfiles)} scores files "
                         "(--scfile); expected one scores file per features file")
    target = args.output_file or _stdout_copy()
    try:
        done = None
        if not args.mtplug_sampler and args.sctype is None and not args.scconfig and metric in MOSES_VARIANTS:
            try:
                with atomic_output(target, "wb") as out:
                    done = _moses(args, ffiles, scfiles, seed, metric, out)
            except NotBleu:
                pass      # another scorer's statistics: mtplug's sampler ranks by it
        if done is None:
            try:
                with atomic_output(target, "wb") as out:
                    done = _stream(args, ffiles, scfiles, seed, metric, out)
            except NotStreamable:
                with atomic_output(target, "wb") as out:
                    done = _whole(args, ffiles, scfiles, seed, metric, out)
        if not args.output_file:
            with open(target, "rb") as fh:
                shutil.copyfileobj(fh, sys.stdout.buffer)
            sys.stdout.flush()
    finally:
        if not args.output_file and os.path.exists(target):
            os.unlink(target)
    n_pairs, n_hyp, n_sent, name = done
    log(f"{PROG}: {n_pairs} pairs ({2 * n_pairs} lines) from {n_hyp} hypotheses of {n_sent} sentences, "
        f"metric {name} (sentence BLEU: {metric}), seed {seed}, in {t}")
    return 0


def _moses(args, ffiles, scfiles, seed: int, variant: str, out):
    """Moses's own sampler and draws (mtplug.integrations.moses.moses_pro); (pairs,
    hypotheses, sentences, metric name)."""
    text, n_pairs, n_hyp, n_sent = moses_pro_data(ffiles, scfiles, seed, MOSES_VARIANTS[variant], args.gamma,
                                                  args.xi, args.beta)
    out.write(text)
    return n_pairs, n_hyp, n_sent, "BLEU"


def _stdout_copy() -> str:
    """A temporary file for pro.data on its way to stdout (Moses's default): nothing
    reaches stdout unless the whole file was written."""
    import tempfile

    fd, tmp = tempfile.mkstemp(suffix=".pro.data")
    os.close(fd)
    return tmp


class _Writer:
    """Samples the pairs of blocks of sentences and writes their pro.data lines."""

    def __init__(self, args, seed: int, variant: str, space, out):
        self.args, self.seed, self.variant, self.space, self.out = args, seed, variant, space, out
        self.n_pairs = 0
        self._names = (np.zeros(0, np.uint8), np.zeros(1, np.int64))

    def write(self, scores, offsets, first: int, dense, sp_indptr, sp_ids, sp_values) -> None:
        """Pairs of the sentences first, first + 1, ... (rows by ``offsets``, int64 from 0),
        whose metric scores are ``scores`` (float64 [n])."""
        from ...errors import InputError
        from ...optimizers.pro import sample_pairs

        a = self.args
        try:
            pairs = sample_pairs(scores, offsets, seed=self.seed, gamma=a.gamma, xi=a.xi, beta=a.beta, threads=1,
                                 first_sentence=first)
        except ValueError as err:
            raise InputError(f"{PROG}: {err}") from None
        if len(self._names[1]) != len(self.space) + 1:
            self._names = self.space.names.to_arrays()
        self.out.write(_pro.format_pro_lines(dense, sp_indptr, sp_ids, sp_values, pairs.better, pairs.worse,
                                             *self._names))
        self.n_pairs += pairs.n_pairs


def _stream(args, ffiles, scfiles, seed: int, variant: str, out):
    """Read, sample and write block by block; (pairs, hypotheses, sentences, metric name)."""
    from ...corpus import FeatureSpace
    from ...errors import InputError
    from ...formats.mert_data import NotStreamable, iter_mert_batches
    from ...metrics.moses_scorers import sctype_of

    bound: dict = {}

    def on_metric(metric):
        # as load_mert_data: the scorer of --sctype/--scconfig, its errors after the files'
        # own and after a sentence without hypotheses
        try:
            scorer = moses_scorer(args.sctype or sctype_of(metric), args.scconfig)
            try:
                bound["metric"] = scorer.rebind(metric)
            except ValueError as err:
                raise InputError(f"{err} (--sctype must name the scorer of the extractor's --sctype)",
                                 scfiles[0]) from None
        except InputError as err:
            bound["error"] = err
            return
        if any(p.name in ("ext", "linear") for p in bound["metric"].parts):
            # their sentence scores scale with the number of sentences, unknown until the end
            raise NotStreamable("the metric needs the whole store")

    space = FeatureSpace()
    writer = _Writer(args, seed, variant, space, out)
    n_hyp = n_sent = 0
    empty: list[int] = []
    for batch in iter_mert_batches(ffiles, scfiles, space, on_metric=on_metric):
        sizes = np.diff(batch.sent_offsets)
        empty += (np.flatnonzero(sizes == 0) + batch.first).tolist()
        n_hyp += batch.n_hypotheses
        n_sent = batch.first + batch.n_sentences
        if empty or "error" in bound:
            continue   # an error comes; read on for the errors that come before it
        scores = bound["metric"].row_objectives(batch.stats, variant, n_sentences=n_sent)
        writer.write(scores, batch.sent_offsets, batch.first, batch.dense, batch.sparse_indptr, batch.sparse_ids,
                     batch.sparse_values)
    if empty:
        raise InputError(f"sentence {empty[0]} has no hypotheses ({len(empty)} of {n_sent} sentences are empty)",
                         ", ".join(ffiles))
    if "error" in bound:
        raise bound["error"]
    return writer.n_pairs, n_hyp, n_sent, bound["metric"].name


def _whole(args, ffiles, scfiles, seed: int, variant: str, out):
    """The store read whole (blocks out of order), then sampled and written in blocks."""
    from ...metrics.sentence import hypothesis_scores

    corpus = load_mert_data(ffiles, scfiles, args.sctype, args.scconfig)
    b = hypothesis_scores(corpus, variant)
    writer = _Writer(args, seed, variant, corpus.space, out)
    offsets = corpus.sent_offsets
    step = 256
    for s0 in range(0, corpus.n_sentences, step):
        s1 = min(s0 + step, corpus.n_sentences)
        lo, hi = int(offsets[s0]), int(offsets[s1])
        a, z = int(corpus.sparse_indptr[lo]), int(corpus.sparse_indptr[hi])
        writer.write(b[lo:hi], offsets[s0:s1 + 1] - lo, s0, corpus.dense[lo:hi],
                     corpus.sparse_indptr[lo:hi + 1] - a, corpus.sparse_ids[a:z], corpus.sparse_values[a:z])
    return writer.n_pairs, corpus.n_hypotheses, corpus.n_sentences, corpus.metric.name
