"""``mert``: Moses's mert program over features/scores files, run by mtplug's optimizers.

With Moses's own flags only, Moses's optimizer runs step for step
(:mod:`.moses_mert`: float32 arithmetic, Moses's de-duplication, its powell /
random-direction / random optimizers and glibc ``rand()`` draws), so weights.txt and the
``Best point:`` line are the bytes Moses's mert writes; ``--mtplug-mert`` or any option of
mtplug's MERT below runs mtplug's float64 MERT instead (what the rest of this docstring
describes).

Flags of Moses's ``mert/mert.cpp``; writes ``weights.txt`` (the best point, L1-normalised
when every feature is optimised) in the working directory and the log line
``Best point: w1 w2 ... wD  => SCORE`` on stderr, which mert-moses.pl parses. The score
is that of the scores files' Moses scorer (``--sctype``: BLEU, 1 − TER, an
interpolation, ...; mtplug.metrics.moses_scorers), as Moses's mert prints it.

``--algorithm`` runs another mtplug optimizer over the same data (apro, pro, kbmira,
mira, rampion), and every option of that optimizer is a flag here, so
``mert-moses.pl --mertmertargs="--algorithm apro --c 0.1"`` needs no script change.
For MERT itself, ``--directions`` (coordinate, random, powell, expbleu) and ``--reg``
(l2, l2-fixed, l2-l1norm, l0 with ``--reg-strength``) reach the expected-BLEU direction
finder and the regularised line search.
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
    run_program,
    split_list,
)

PROG = "mert"
WEIGHTS_FILE = "weights.txt"

#: Moses's -t values and the direction finder that does what Moses's does
MOSES_TYPES = {
    "powell": "coordinate",          # Moses's "powell" optimizer searches the coordinate axes
    "random-direction": "random",    # Cer et al. (2008)
    "random": "random",
    "none": None,                    # keep the start point (Moses's NOptimizer)
    "noptimizer": None,
}
#: mert options set through Moses's own flags instead of --option-name
MOSES_MAPPED = {"restarts", "random_directions", "activate_features"}

EXAMPLES = """\
examples:
  # as mert-moses.pl calls it
  mert -d 8 --sctype BLEU --scconfig case:true --ffile run1.features.dat,run2.features.dat \\
      --scfile run1.scores.dat,run2.scores.dat --ifile run2.init.opt -n 20 -r 1000
  # mtplug extras: expected-BLEU directions, l2-regularised line search, another algorithm
  mert -d 8 --ffile run1.features.dat --scfile run1.scores.dat --ifile run1.init.opt --directions expbleu
  mert -d 8 --ffile run1.features.dat --scfile run1.scores.dat --ifile run1.init.opt --reg l2 --reg-strength 0.01
  mert -d 8 --ffile run1.features.dat --scfile run1.scores.dat --ifile run1.init.opt --algorithm apro
  # through mert-moses.pl:
  mert-moses.pl ... --mertdir=$(mtplug mertdir) --mertmertargs="--algorithm rampion"
"""


_DIRECTIONS_HELP = ("direction finder: coordinate ascent, random directions (Cer et al. 2008), Powell, or the "
                    "expected-BLEU gradient with cooling (Galley et al. 2013) (default: from -t)")


def build_parser(algorithm: str = "mert") -> MosesArgumentParser:
    """The flags of Moses's ``mert`` plus ``--algorithm`` and the options of ``algorithm``
    (for MERT, ``--directions`` defaults from ``--type``)."""
    p = MosesArgumentParser(PROG, "Tune weights on accumulated n-best lists (mtplug's drop-in for Moses's "
                                  "mert; MERT by default, any mtplug optimizer with --algorithm).", EXAMPLES)
    g = p.add_argument_group("Moses mert flags")
    g.add_argument("--pdim", "-d", type=int, required=True, metavar="D", help="number of dense weights (mandatory)")
    g.add_argument("--ntry", "-n", type=int, default=1, metavar="N",
                   help="random start points besides the given ones (default 1)")
    g.add_argument("--nrandom", "-m", type=int, default=0, metavar="M",
                   help="random directions per round (with -t random-direction; default 0 = 10 for mtplug)")
    g.add_argument("--rseed", "-r", type=validation.seed, default=None, metavar="SEED",
                   help="random seed (default 0: mtplug is deterministic; Moses uses the clock)")
    g.add_argument("--optimize", "-o", default="", metavar="NAMES",
                   help="features to optimise (comma or blank list of features.dat names); others stay fixed")
    g.add_argument("--type", "-t", default="powell", choices=sorted(MOSES_TYPES),
                   help="Moses optimizer type (default powell = coordinate ascent, as Moses's)")
    g.add_argument("--sctype", "-s", default=None,
                   help="scorer whose statistics the scores files hold: BLEU, PER, WER, CDER, TER or a comma "
                        "list (BLEU,TER); default: the one the files name")
    g.add_argument("--scconfig", "-c", action="append", metavar="KEY:VAL,...",
                   help="an interpolation's weights:W1+W2; case and reflen are checked for consistency only "
                        "(the statistics come from the scores files)")
    g.add_argument("--scfile", "-S", action="append", metavar="F1,F2",
                   help="scores files (comma list; default statscore.data)")
    g.add_argument("--ffile", "-F", action="append", metavar="F1,F2",
                   help="features files (comma list; default features.data)")
    g.add_argument("--ifile", "-i", default="init.opt", metavar="I1,I2",
                   help="start point file(s), init.opt format (default init.opt); the first one's "
                        "second and third lines bound the random start points")
    g.add_argument("--sparse-weights", "-p", default=None, metavar="FILE",
                   help="sparse weights ('name value' lines): the sparse features become one extra "
                        "dense column, weighted by them (init files then hold D+1 values)")
    g.add_argument("--threads", "-T", type=validation.threads, default=None, metavar="N",
                   help="threads (default: all cores; the result does not depend on it)")
    p.add_ignored("--verbose", "-v", nargs=1, why="mtplug logs the same at every level", group=g)
    g.add_argument("--positive", "-P", default="", metavar="NAMES",
                   help="features whose weight must stay positive (comma list of names; Moses's -P)")
    g.add_argument("--shard-count", type=_c_float_count, default=0, metavar="N",
                   help="split the sentences into N shards, optimise each and average the best points (Moses's)")
    g.add_argument("--shard-size", type=float, default=0.0, metavar="P",
                   help="shard size as a proportion of the sentences, drawn at random with repeats; 0: "
                        "contiguous shards that do not overlap (default)")

    x = p.add_argument_group("mtplug extras")
    x.add_argument("--mtplug-mert", action="store_true",
                   help="mtplug's MERT (float64, its own search and restarts) instead of Moses's optimizer "
                        "step for step; also chosen by any option of mtplug's MERT below")
    x.add_argument("--fix-slopes", action="store_true",
                   help="with -o: take line-search slopes over the optimised features only (Moses adds the fixed "
                        "weights' part, so its lines are searched off course; docs/mert-moses.md)")
    overrides = {"directions": {"default": None, "help": _DIRECTIONS_HELP}} if algorithm == "mert" else None
    add_algorithm_options(p, algorithm, "mert", MOSES_MAPPED if algorithm == "mert" else (), overrides)
    return p


def _c_float_count(text: str) -> int:
    """Moses reads --shard-count with strtof and keeps it as a size_t."""
    import argparse

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0: {text!r}")
    return int(value)


def main(argv: Sequence[str]) -> int:
    """Run ``mert`` on ``argv`` (the arguments after the program name); returns the exit
    status: 0, or 2 for bad input (one ``mert: error:`` line). A usage error exits with
    status 1, as Moses's programs do."""
    algorithm = algorithm_of(argv, "mert")
    args = build_parser(algorithm).parse(argv)
    return run_program(PROG, lambda: optimize(args, algorithm))


def _read_starts(files: list[str], n_values: int):
    """Start points (float64 [n_values] each) and the first file's (mins, maxs).

    The first file is a full init.opt; later ones (mert-moses.pl --historic-bests) only
    need their first line, as Moses reads them. Moses uses the first n_values numbers
    of each line.
    """
    import numpy as np

    from ...errors import InputError
    from ...fileio import read_text_lines
    from ...formats.mert_weights import read_init_opt
    from ...formats.number_text import parse_number

    first = read_init_opt(files[0])
    starts = [first.start]
    for path in files[1:]:
        lines = read_text_lines(path)
        if not lines:
            raise InputError(f"empty file; expected {n_values} start weights", path)
        starts.append(np.array([parse_number(t, path, 1) for t in lines[0].split()], dtype=np.float64))
    for path, start in zip(files, starts):
        if len(start) < n_values:
            raise InputError(f"line has {len(start)} start weights; expected {n_values} (-d)", path, 1)
    return [s[:n_values] for s in starts], (first.mins[:n_values], first.maxs[:n_values])


def _with_merged_sparse(corpus, path: str):
    """Moses's --sparse-weights: a store whose dense block gains one column, the sparse
    features' score under the given weights."""
    import numpy as np

    from ...formats.sparse_weights import read_sparse_weights

    names = corpus.feature_names
    # features the lists never show weigh nothing here (Moses ignores them too)
    w = read_sparse_weights(path).to_array(names, allow_unknown=True)
    w[: corpus.n_dense] = 0.0
    merged = corpus.scores(w)      # dense weights 0: the sparse part of the model score
    view = corpus.dense_only()
    view.space = type(view.space)()
    view.space.define_dense(names[: corpus.n_dense] + ["SparseMerged_0"])
    view.dense = np.ascontiguousarray(np.column_stack([corpus.dense, merged]))
    return view


def optimize(args, algorithm: str) -> int:
    """Run ``algorithm`` (MERT by default) on the features/scores files from the init.opt
    start point(s); write ``weights.txt`` and the ``Best point:`` log line (module
    docstring). InputError for bad input or options."""
    import numpy as np

    from ...errors import InputError
    from ...fileio import check_output
    from ...formats.number_text import format_g6
    from ...metrics.moses_scorers import sctype_of
    from ...optimizers.registry import get_optimizer

    check_output(WEIGHTS_FILE, "weights")      # before any work (a full disk comes later)
    if _moses_exact(args, algorithm):
        from .moses_mert import NotMoses

        try:
            return _optimize_as_moses(args)
        except NotMoses as why:
            log(f"{PROG}: note: {why}: Moses's optimizer is not reproduced for it; mtplug's MERT runs")
    for flag, given in (("-P/--positive", args.positive), ("--fix-slopes", args.fix_slopes),
                        ("--shard-count", args.shard_count), ("--shard-size", args.shard_size)):
        if given:
            raise InputError(f"{flag} applies to Moses's optimizer, not to mtplug's MERT or another --algorithm")
    seed = 0 if args.rseed is None else args.rseed
    log(f"Seeding random numbers with {seed}" + (" (mtplug's default; give -r to choose)"
                                                 if args.rseed is None else ""))
    t = Timer()
    ffiles = split_list(args.ffile) or ["features.data"]
    scfiles = split_list(args.scfile) or ["statscore.data"]
    for ff, sf in zip(ffiles, scfiles):
        log(f"Loading Data from: {sf} and {ff}")
    full = load_mert_data(ffiles, scfiles, args.sctype, args.scconfig)
    corpus = _with_merged_sparse(full, args.sparse_weights) if args.sparse_weights else full.dense_only()
    pdim = args.pdim + (1 if args.sparse_weights else 0)
    if pdim != corpus.n_dense:
        raise InputError(f"-d {args.pdim} but the features files hold {full.n_dense} dense features "
                         f"({' '.join(full.feature_names[: full.n_dense])})", ffiles[0])
    log(f"Data loaded: {corpus.n_hypotheses} unique hypotheses of {corpus.n_sentences} sentences, "
        f"{corpus.n_dense} weights, in {t}")
    starts, ranges = _read_starts(split_list(args.ifile), pdim)
    label = sctype_of(full.metric)

    cls = get_optimizer(algorithm)
    options = algorithm_options(cls, args, {})
    active = split_list(args.optimize, blanks=True)
    if algorithm == "mert":
        directions = args.directions or MOSES_TYPES[args.type]
        if directions is None:
            algorithm, cls, options = "none", get_optimizer("none"), {}
        else:
            options.update(directions=directions, restarts=max(0, args.ntry), activate_features=",".join(active)
                           or None, random_directions=(args.nrandom or None) if directions == "random" else None)
            if not active and args.ntry > 0:
                # Moses's own -n random start points (its srand(-r) stream), searched one by
                # one after the given starts, so that the result is Moses's or better
                from .moses_random import moses_start_points

                starts += moses_start_points(seed, args.ntry, starts[0], *ranges)
                options["restarts"] = 0
            if args.type == "powell" and args.nrandom and not args.directions:
                log(f"{PROG}: note: -m {args.nrandom} with -t powell: Moses adds random directions to its "
                    "coordinate search; mtplug searches the coordinates only (use -t random-direction)")
    elif active:
        raise InputError(f"-o (features to optimise) applies to MERT only, not to --algorithm {algorithm}")
    try:
        optimizer = cls(**options)
    except ValueError as err:
        raise InputError(f"--algorithm {algorithm}: {err}") from None
    log(f"{PROG}: {algorithm} {' '.join(f'{k}={v}' for k, v in options.items())} seed={seed}")

    best = None
    for i, start in enumerate(starts):
        if algorithm == "mert" and i > 0:
            # later init files (mert-moses.pl --historic-bests) and Moses's random points
            # are extra start points
            optimizer = cls(**{**options, "restarts": 0})
        log(f"{PROG}: start point {i + 1} of {len(starts)}: {label} = {corpus.metric_of(start):.6f}")
        for warning in optimizer.advice(corpus) if i == 0 else ():
            log(f"{PROG}: warning: {warning}")
        # the kernels' fractions, as Moses's mert compares and prints them
        result = optimizer._optimize(corpus, start, seed, threads=args.threads, ranges=ranges)
        for warning in result.warnings:
            log(f"{PROG}: warning: {warning}")
        objective = result.info.get("objective", result.score)
        if best is None or objective > best[0]:
            best = (objective, result)
    assert best is not None  # starts holds at least the first init file's point
    result = best[1]
    w = result.weights
    if not active:
        norm = float(np.abs(w).sum())
        if norm > 0:
            w = w / norm        # Moses normalises when every weight is optimised
    else:
        # the optimizer may rescale the whole vector (the 1-best does not change); Moses
        # keeps the features left out of -o at their start values, so undo the scale
        names = corpus.feature_names
        fixed = [k for k in range(len(w)) if names[k] not in active and starts[0][k] != 0 and w[k] != 0]
        if fixed:
            w = w * (starts[0][fixed[0]] / w[fixed[0]])
    score = corpus.metric_of(w)
    point = "".join(format_g6(v) + " " for v in w.tolist())
    _write_weights(point)
    log(f"{PROG}: {algorithm} finished in {t} (seed {seed})")
    log(f"Best point: {point} => {format_g6(score)}")
    return 0


def _moses_exact(args, algorithm: str) -> bool:
    """Whether to run Moses's optimizer step for step (moses_mert.py): MERT with Moses's
    own flags only (no --mtplug-mert, --directions or other mtplug MERT option changed)."""
    from ...optimizers.registry import get_optimizer

    if algorithm != "mert" or args.mtplug_mert or args.directions or args.type not in ("powell", "random",
                                                                                         "random-direction"):
        return False
    for name, kwargs in get_optimizer("mert").options.items():
        if name in MOSES_MAPPED or name == "directions":
            continue
        if getattr(args, name, kwargs.get("default")) != kwargs.get("default"):
            return False
    return True


def _optimize_as_moses(args) -> int:
    """Moses's mert step for step (mtplug.integrations.moses.moses_mert): weights.txt and
    the log lines as Moses writes them."""
    from .moses_mert import format_point, moses_mert

    seed = 0 if args.rseed is None else args.rseed
    log(f"Seeding random numbers with {seed}" + (" (mtplug's default; give -r to choose)"
                                                 if args.rseed is None else ""))
    ffiles = split_list(args.ffile) or ["features.data"]
    scfiles = split_list(args.scfile) or ["statscore.data"]
    if len(ffiles) != len(scfiles):
        from ...errors import InputError

        raise InputError("Error: there is a different number of previous score and feature files")
    for ff, sf in zip(ffiles, scfiles):
        log(f"Loading Data from: {sf} and {ff}")
    config = ",".join(args.scconfig or [])
    weights, score = moses_mert(ffiles, scfiles, split_list(args.ifile), args.pdim, seed=seed, ntry=args.ntry,
                                nrandom=args.nrandom, opt_type=args.type, sctype=args.sctype, scconfig=config,
                                optimize=split_list(args.optimize, blanks=True), positive=split_list(args.positive),
                                sparse_weights=args.sparse_weights, fix_slopes=args.fix_slopes,
                                shard_count=args.shard_count, shard_size=args.shard_size)
    point = format_point(weights)
    log(f"Best point: {point} => {format_point([score]).strip()}")
    _write_weights(point)
    return 0


def _write_weights(point: str) -> None:
    from ...fileio import atomic_output

    with atomic_output(WEIGHTS_FILE) as fh:
        fh.write(point + "\n")
