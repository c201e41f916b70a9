"""``megam_i686.opt``: the classifier mert-moses.pl runs on PRO's pro.data, by mtplug.

mert-moses.pl (``--pairwise-ranked``) downloads Hal Daumé's megam unless an executable
``megam_i686.opt`` is in ``--mertdir``; this is one. It accepts the call
``megam_i686.opt -fvals -maxi 30 -nobias binary FILE`` (and megam's other common
flags), trains ℓ2-regularised logistic regression (megam's ``binary`` model: Gaussian
prior of precision ``-lambda``, default 1, i.e. C = 1/λ) by L-BFGS with at most
``-maxi`` iterations, and prints megam's output: one ``name weight`` line per feature
(``F<i>`` dense features in order, then the sparse ones in order of appearance;
``**BIAS**`` first unless ``-nobias``).
"""

from __future__ import annotations

from collections.abc import Sequence

from .common import MosesArgumentParser, Timer, log, run_program

PROG = "megam_i686.opt"

EXAMPLES = """\
example (as mert-moses.pl --pairwise-ranked calls it):
  megam_i686.opt -fvals -maxi 30 -nobias binary run1.pro.data > mert.out
"""


def build_parser() -> MosesArgumentParser:
    """megam's flags as mert-moses.pl passes them (``-fvals``, ``-maxi``, ``-nobias``,
    ``-lambda``, ``-dpp``, ``-quiet``, the model ``binary`` and the file)."""
    p = MosesArgumentParser(PROG, "Logistic regression on PRO's pro.data, printing megam's weight lines "
                                  "(mtplug's stand-in for megam).", EXAMPLES)
    p.add_argument("model", choices=("binary",), help="model type: binary (logistic regression)")
    p.add_argument("file", help="training data: pro.data lines 'label name value name value ...'")
    p.add_argument("-fvals", action="store_true", help="features carry values (required: pro.data has them)")
    p.add_argument("-maxi", type=int, default=100, metavar="N", help="iterations at most (default 100)")
    p.add_argument("-lambda", dest="lam", type=float, default=1.0, metavar="X",
                   help="precision of the Gaussian prior, λ‖w‖²/2 (default 1)")
    p.add_argument("-dpp", type=float, default=None, metavar="X",
                   help="stop when the objective changes by less than X (relative)")
    p.add_argument("-nobias", action="store_true", help="no bias feature")
    p.add_argument("-quiet", action="store_true", help="no progress lines on stderr")
    p.add_ignored("-memory", nargs=1, why="L-BFGS keeps scipy's default history")
    p.add_unsupported("-repeat", why="repeated training with random restarts is not provided")
    p.add_unsupported("-tune", nargs=0, why="tuning lambda on held-out data is not provided")
    p.add_unsupported("-init", why="a start point is not provided (training starts from 0)")
    p.add_unsupported("-predict", why="prediction mode is not provided")
    return p


def main(argv: Sequence[str]) -> int:
    """Run ``megam_i686.opt`` on ``argv`` (the arguments after the program name); returns the exit
    status: 0, or 2 for bad input (one ``megam_i686.opt: error:`` line). A usage error exits with
    status 1, as Moses's programs do."""
    args = build_parser().parse(argv)
    return run_program(PROG, lambda: train(args))


def train(args) -> int:
    """Fit ℓ2-regularised logistic regression (C = 1/``-lambda``) to the pro.data file and
    print megam's ``name weight`` lines to stdout; InputError without ``-fvals``, for a bad
    ``-lambda``/``-maxi`` or an empty file, FloatingPointError if the weights overflow."""
    import sys

    import numpy as np

    from ...errors import InputError
    from ...formats.number_text import format_shortest
    from ...formats.pro_data import read_pro_data
    from ...optimizers.classifiers import PairMatrix, fit_logistic

    if not args.fvals:
        raise InputError("megam without -fvals reads features as names without values; pro.data has values "
                         "(mert-moses.pl passes -fvals)")
    if args.lam <= 0 or args.maxi < 1:
        raise InputError(f"need -lambda > 0 and -maxi >= 1, got {args.lam}, {args.maxi}")
    t = Timer()
    data = read_pro_data(args.file)
    if data.n_lines == 0:
        raise InputError("no training lines; expected pro.data lines 'label name value ...'", args.file)
    X, y = data.design()
    if not args.nobias:
        X = PairMatrix(np.column_stack([np.ones(X.n_rows), X.dense]), X.sparse)
    # megam's -dpp is a relative objective change; fit_logistic's ftol is tolerance/1000
    fit = fit_logistic(X, y, C=1.0 / args.lam, max_iterations=args.maxi,
                       tolerance=args.dpp * 1000 if args.dpp is not None else 1e-6)
    w = fit.weights
    if not np.all(np.isfinite(w)):
        raise FloatingPointError("logistic regression produced non-finite weights")
    lines = []
    if not args.nobias:
        lines.append(f"**BIAS** {format_shortest(w[0])}\n")
        w = w[1:]
    lines += [f"F{j} {format_shortest(v)}\n" for j, v in enumerate(w[: data.n_dense].tolist())]
    lines += [f"{name} {format_shortest(v)}\n" for name, v in zip(data.sparse_names, w[data.n_dense:].tolist())]
    sys.stdout.writelines(lines)
    sys.stdout.flush()
    if not args.quiet:
        log(f"{PROG}: {data.n_lines} lines, {X.n_columns} features, {fit.iterations} L-BFGS iterations "
            f"(-maxi {args.maxi}), objective {fit.objective:.6g}, in {t}")
    return 0
