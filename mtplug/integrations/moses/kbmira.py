"""``kbmira``: Moses's batch k-best MIRA program (Cherry & Foster 2012), run by mtplug.

Flags of Moses's ``mert/kbmira.cpp``. Writes ``F<i> <weight>`` lines for the dense
features and ``<name> <weight>`` for sparse ones with |weight| > 1e-8 (to ``-o`` or
stdout), and on stderr ``Initial BLEU = …``, one line per pass and ``Best BLEU = …``
(mert-moses.pl reads that line). On BLEU features/scores files it is Moses 34452895's
kbmira byte for byte (mtplug.integrations.moses.kbmira_moses: its rows, float32
arithmetic, random numbers and output; ``--keep-all-hypotheses`` runs mtplug's float64
kbmira instead); with another ``--sctype`` (TER, BLEU,TER, ...) the
lines keep the word BLEU, as Moses's kbmira prints them, and give that scorer's score;
there, and with ``--keep-all-hypotheses``, every unique hypothesis is used (Moses's
de-duplication compares an item with itself and keeps at most 16 per sentence).
``--algorithm`` runs another mtplug optimizer (mira, rampion, pro, apro, ...) over the
same data and writes its weights the same way, sparse features included.
"""

from __future__ import annotations

from collections.abc import Sequence

from ... import validation
from .common import (
    MosesArgumentParser,
    Timer,
    add_algorithm_options,
    algorithm_of,
    algorithm_options,
    load_mert_data,
    log,
    moses_scorer,
    run_program,
    split_list,
)

PROG = "kbmira"
SPARSE_ZERO = 1e-8     # Moses writes a sparse weight only above this

#: kbmira options that Moses's flags set
MOSES_MAPPED = ("passes", "c", "decay", "model_bg", "safe_hope", "order")

EXAMPLES = """\
examples:
  # as mert-moses.pl --batch-mira calls it
  kbmira --dense-init run2.dense --sparse-init run2.sparse-weights -r 1000 --ffile run1.features.dat \\
      --ffile run2.features.dat --scfile run1.scores.dat --scfile run2.scores.dat -o mert.out
  # mtplug extra: RAMPION over the same data (mert-moses.pl --batch-mira-args="--algorithm rampion")
  kbmira --algorithm rampion --dense-init run1.dense --ffile run1.features.dat --scfile run1.scores.dat -o mert.out
"""


def build_parser(algorithm: str = "kbmira") -> MosesArgumentParser:
    """The flags of Moses's ``kbmira`` plus ``--algorithm`` and the options of ``algorithm``
    (the mtplug optimizer to run; its options that Moses flags already set are mapped)."""
    p = MosesArgumentParser(PROG, "Batch k-best MIRA over accumulated n-best lists (mtplug's drop-in for "
                                  "Moses's kbmira; any mtplug optimizer with --algorithm).", EXAMPLES)
    g = p.add_argument_group("Moses kbmira flags")
    g.add_argument("--scfile", "-S", action="append", metavar="FILE", help="scores files (repeated)")
    g.add_argument("--ffile", "-F", action="append", metavar="FILE", help="features files (repeated)")
    g.add_argument("--random-seed", "-r", type=validation.seed, default=None, metavar="SEED",
                   help="random seed (default: the clock, as Moses's kbmira, whose shuffles a seed reproduces; 0 "
                        "with --keep-all-hypotheses, --algorithm or a non-BLEU --sctype)")
    g.add_argument("--output-file", "-o", default=None, metavar="FILE", help="weights file (default stdout)")
    # None = not given: the optimizer's default holds (kbmira's are Moses's: 0.01, 0.999, 60)
    g.add_argument("--cparam", "-C", type=float, default=None, metavar="C",
                   help="MIRA C, lower for more regularisation (default 0.01)")
    g.add_argument("--decay", "-D", type=float, default=None, help="BLEU background decay (default 0.999)")
    g.add_argument("--iters", "-J", type=int, default=None, metavar="J", help="passes (default 60)")
    g.add_argument("--dense-init", "-d", default=None, metavar="FILE",
                   help="start weights of the dense features: 'Label= value' lines (runN.dense) or a line "
                        "of numbers (init.opt); required")
    g.add_argument("--sparse-init", "-s", default=None, metavar="FILE",
                   help="start weights of sparse features ('name value' lines)")
    g.add_argument("--no-shuffle", action="store_true", help="visit sentences in file order")
    g.add_argument("--streaming", action="store_true",
                   help="Moses: stream the files (implies --no-shuffle); mtplug holds them compactly in "
                        "memory and keeps the file order")
    g.add_argument("--streaming-out", action="store_true",
                   help="write the current weights to stdout after every sentence (Moses's i:w lines)")
    g.add_argument("--keep-all-hypotheses", action="store_true",
                   help="mtplug's kbmira (float64, every unique hypothesis) instead of Moses's, whose duplicate "
                        "check keeps at most 16 rows per sentence (docs/mert-moses.md)")
    g.add_argument("--verbose", action="store_true",
                   help="accepted (Moses dumps every update; mtplug does not)")
    g.add_argument("--model-bg", action="store_true", default=None,
                   help="BLEU background from the model 1-best, not the hope")
    g.add_argument("--safe-hope", action="store_true", default=None,
                   help="limit the model score's weight in hope selection")
    g.add_argument("--sctype", default=None,
                   help="scorer whose statistics the scores files hold: BLEU, PER, WER, CDER, TER or a comma "
                        "list (BLEU,TER); default: the one the files name. Without BLEU alone, hope and fear "
                        "use the sentence-level score (no pseudo-document background)")
    g.add_argument("--scconfig", "-c", action="append", metavar="KEY:VAL,...",
                   help="an interpolation's weights:W1+W2; case and reflen are checked for consistency only")
    g.add_argument("--type", "-t", choices=("nbest", "hypergraph"), default=None,
                   help="nbest (features/scores files) or hypergraph (--hgdir; implied by --hgdir)")
    g.add_argument("--hgdir", "-H", default=None, metavar="DIR",
                   help="hypergraph mode: the directory of Moses -output-search-graph-hypergraph files")
    g.add_argument("--reference", "-R", action="append", metavar="FILE",
                   help="reference files (repeated), hypergraph mode only")
    g.add_argument("--hg-prune", type=int, default=None, metavar="N",
                   help="accepted for compatibility; mtplug searches the whole hypergraph (no pruning)")
    add_algorithm_options(p, algorithm, "kbmira", MOSES_MAPPED if algorithm == "kbmira" else ())
    return p


def main(argv: Sequence[str]) -> int:
    """Run ``kbmira`` on ``argv`` (the arguments after the program name); returns the exit
    status: 0, or 2 for bad input (one ``kbmira: error:`` line). A usage error exits with
    status 1, as Moses's programs do."""
    algorithm = algorithm_of(argv, "kbmira")
    args = build_parser(algorithm).parse(argv)
    return run_program(PROG, lambda: train(args, algorithm))


def _dense_start(path: str | None, corpus):
    """float64 [n_dense] from a runN.dense or init.opt file; its names (when it has
    them) must be the features files' dense columns, in order."""
    import numpy as np

    from ...errors import InputError
    from ...fileio import read_text_lines
    from ...formats.mert_weights import read_dense_init
    from ...formats.number_text import parse_number

    names = corpus.feature_names[: corpus.n_dense]
    if path is None:
        raise InputError(f"kbmira needs start weights: --dense-init FILE with {len(names)} dense weights "
                         f"({' '.join(names)}); mert-moses.pl passes runN.dense")
    lines = read_text_lines(path)
    if not lines:
        raise InputError(f"empty file; expected {len(names)} dense weights", path)
    if "=" in lines[0]:
        weights = read_dense_init(path)
        got = list(weights)
        if got != names:
            first = next((i for i, (a, b) in enumerate(zip(got, names)) if a != b), min(len(got), len(names)))
            raise InputError(f"dense weights {' '.join(got)} do not match the features files' "
                             f"{' '.join(names)} (first difference at position {first})", path)
        return np.array(list(weights.values()), dtype=np.float64)
    values = [parse_number(t, path, 1) for t in lines[0].split()]     # Moses's older init.opt form
    if len(values) != len(names):
        raise InputError(f"line has {len(values)} dense weights; the features files have {len(names)} "
                         f"({' '.join(names)})", path, 1)
    return np.array(values, dtype=np.float64)


def train(args, algorithm: str) -> int:
    """Run ``algorithm`` (kbmira by default) on the features/scores files or the hypergraphs
    of ``--hgdir`` from the ``--dense-init``/``--sparse-init`` weights; write the weights
    and Moses's log lines (module docstring). InputError for bad input or options."""
    import numpy as np

    from ...fileio import atomic_output, check_output
    from ...formats.number_text import format_g6
    from ...optimizers.registry import get_optimizer

    if args.output_file:
        check_output(args.output_file, "--output-file")    # before any work (a full disk comes later)
    if _moses_exact(args, algorithm):
        from .kbmira_moses import run

        return run(args)
    seed = 0 if args.random_seed is None else args.random_seed
    log(f"Initialising random seed to {seed}" + (" (mtplug's default; give -r to choose)"
                                                 if args.random_seed is None else ""))
    t = Timer()
    from ...errors import InputError

    if args.type == "nbest" and args.hgdir:
        raise InputError("--hgdir is for --type hypergraph")
    if args.hgdir or args.type == "hypergraph":
        if not moses_scorer(args.sctype, args.scconfig).metric().is_bleu:
            raise InputError(f"--sctype {args.sctype}: hypergraph mode scores BLEU only (as Moses's kbmira)")
        corpus, start, n_dense = _hypergraph_start(args)
    else:
        corpus, start, n_dense = _nbest_start(args)
    log(f"Initial BLEU = {format_g6(corpus.metric_of(start))}")
    cls = get_optimizer(algorithm)
    options = algorithm_options(cls, args, {
        "passes": args.iters, "c": args.cparam, "decay": args.decay, "model_bg": args.model_bg or None,
        "safe_hope": args.safe_hope or None, "order": "fixed" if (args.no_shuffle or args.streaming) else None})
    optimizer = cls(**options)
    result = optimizer._optimize(corpus, start, seed)    # the kernels' fractions, as Moses's kbmira prints them
    for warning in result.warnings:
        log(f"{PROG}: warning: {warning}")
    info = result.info
    for bleu, steps, loss in zip(info.get("bleu_per_pass", ()), info.get("steps_per_pass", ()),
                                 info.get("loss_per_pass", ())):
        # Moses divides its float total by the sentence count in float
        avg_loss = float(np.float32(np.float32(loss) / np.float32(corpus.n_sentences)))
        log(f"{steps}/{corpus.n_sentences} updates, avg loss = {format_g6(avg_loss)}, "
            f"BLEU = {format_g6(bleu)}")
    w = result.weights
    names = corpus.feature_names
    lines = [f"F{i} {format_g6(v)}\n" for i, v in enumerate(w[:n_dense].tolist())]
    lines += [f"{names[k]} {format_g6(w[k])}\n" for k in range(n_dense, corpus.n_features)
              if abs(w[k]) > SPARSE_ZERO]
    if args.output_file:
        with atomic_output(args.output_file) as fh:
            fh.writelines(lines)
    else:
        import sys

        sys.stdout.writelines(lines)
        sys.stdout.flush()
    log(f"{PROG}: {algorithm} finished in {t} (seed {seed})")
    log(f"Best BLEU = {format_g6(result.score)}")
    return 0


def _moses_exact(args, algorithm: str) -> bool:
    """Whether Moses's own kbmira is what to run (mtplug.integrations.moses.kbmira_moses):
    kbmira on BLEU features/scores files (--keep-all-hypotheses runs mtplug's float64
    kbmira instead, which keeps every unique hypothesis)."""
    if algorithm != "kbmira" or args.hgdir or args.type == "hypergraph" or not args.ffile:
        return False
    if args.keep_all_hypotheses or not args.scfile:
        return False
    if args.sctype not in (None, "BLEU") or (args.scconfig and any("weights" in c for c in args.scconfig)):
        return False
    return _scores_sctype(split_list(args.scfile)[0]) == "BLEU"


def _scores_sctype(path: str) -> str | None:
    """The scorer a scores file's first header names (its last field), None if unreadable."""
    import gzip

    try:
        with open(path, "rb") as fh:
            gz = fh.read(2) == b"\x1f\x8b"
        with (gzip.open(path, "rb") if gz else open(path, "rb")) as fh:
            fields = fh.readline().split()
    except OSError:
        return None
    return fields[-1].decode("utf-8", "replace") if len(fields) >= 5 and fields[0].startswith(b"SCORES_") else None


def _hypergraph_start(args):
    """Moses's hypergraph mode: ``(ForestCorpus, start weights, number of dense features)``.

    The dense weights must be named ('name= value' lines, as Moses requires in this mode);
    the hypergraphs' BLEU uses the shortest reference length, as Moses's ReferenceSet does."""
    import numpy as np

    from ...errors import InputError
    from ...fileio import read_text_lines
    from ...forests.corpus import ForestCorpus
    from ...formats.mert_weights import read_dense_init
    from ...formats.moses_hypergraph import list_hypergraphs, read_moses_hypergraph
    from ...formats.references import read_references
    from ...formats.sparse_weights import read_sparse_weights
    from ...metrics.bleu import BleuConfig

    if args.ffile or args.scfile:
        raise InputError("give either --hgdir (hypergraph mode) or --ffile/--scfile (n-best mode), not both")
    if not args.hgdir:
        raise InputError("--type hypergraph needs --hgdir DIR")
    if not args.reference:
        raise InputError("hypergraph mode needs the references: --reference FILE (repeated)")
    if args.dense_init is None:
        raise InputError("hypergraph mode needs --dense-init FILE with 'name= value' lines")
    if "=" not in (read_text_lines(args.dense_init) or [""])[0]:
        raise InputError("for hypergraph mode the dense weights must be 'name= value' lines (Moses requires it "
                         "too)", args.dense_init)
    dense = read_dense_init(args.dense_init)
    sparse = read_sparse_weights(args.sparse_init) if args.sparse_init else {}
    if args.sparse_init:
        log(f"Found {len(sparse)} initial sparse features")
    corpus = ForestCorpus(read_references(args.reference), BleuConfig(reflen="shortest"),
                          list(dense) + [n for n in sparse if n not in dense], source=args.hgdir)
    files = list_hypergraphs(args.hgdir)
    if not files:
        raise InputError("no hypergraph files (expected <id>.gz, <id>.txt or <id>, as Moses writes them)",
                         args.hgdir)
    log("Reading hypergraphs")
    for sid, path in sorted(files.items()):
        corpus.add(sid, read_moses_hypergraph(path))
    corpus.check_complete(args.hgdir)
    start = np.zeros(corpus.n_features)
    for name, value in list(dense.items()) + list(sparse.items()):
        start[corpus.feature_names.index(name)] = value
    log(f"{PROG}: {corpus.n_forests} hypergraphs of {corpus.n_sentences} sentences ({corpus.n_hypotheses} edges), "
        f"{len(dense)} dense and {corpus.n_features - len(dense)} sparse features")
    return corpus, start, len(dense)


def _nbest_start(args):
    """n-best mode: ``(NbestCorpus, start weights, number of dense features)``."""
    import numpy as np

    from ...errors import InputError
    from ...formats.sparse_weights import read_sparse_weights

    if args.reference:
        raise InputError("--reference is for hypergraph mode (--hgdir); n-best mode reads the scores files")
    t = Timer()
    corpus = load_mert_data(split_list(args.ffile), split_list(args.scfile), args.sctype, args.scconfig)
    dense = _dense_start(args.dense_init, corpus)
    if args.sparse_init:
        sparse = read_sparse_weights(args.sparse_init)
        for name in sparse:     # weights of features absent from the lists stay as given
            corpus.space.names.add(name.encode("utf-8"))
        log(f"Found {len(sparse)} initial sparse features")
    start = np.zeros(corpus.n_features)
    start[: corpus.n_dense] = dense
    if args.sparse_init:
        index = {n: k for k, n in enumerate(corpus.feature_names)}
        for name, value in sparse.items():
            start[index[name]] = value
    log(f"{PROG}: {corpus.n_hypotheses} unique hypotheses of {corpus.n_sentences} sentences, "
        f"{corpus.n_dense} dense and {corpus.n_features - corpus.n_dense} sparse features, read in {t}")
    return corpus, start, corpus.n_dense

