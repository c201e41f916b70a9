"""The start weights of an optimizer run lined up with a store's features, and the tuned
weights written back in the start file's format.

One set of rules for every weights format (:mod:`mtplug.formats.weights`):

* Dense features (Moses labels, e.g. ``TranslationModel0`` with 4 columns) must all have
  a start weight in a moses.ini or kbmira ``--dense-init``, with as many values as the
  n-best has columns: a moses.ini with three ``TM0=`` values for a two-value n-best is
  an error, not a silently dropped value.
* A weight for a feature no hypothesis has (cdec's ``PassThrough`` that never fired, a
  sparse feature not seen yet, a moses.ini line such as ``UnknownWordPenalty0``) is kept
  and written back unchanged.
* A feature with no start weight starts at 0 (cdec's and Moses's convention for sparse
  features); the notes say how many.
* One rule for how well the names match (:func:`check_match`, used by every command and
  the Python API): start weights of which none names a feature are an error; a dense
  feature without a start weight is a warning that also names the weights that matched
  nothing (the likely misspelt ones).
* Positional files (init.opt, weights.txt) hold the dense block only: sparse start
  weights come from a Moses sparse weights file (``--sparse-weights``, or the
  ``[weight-file]`` of a moses.ini), and tuned sparse weights are written next to the
  output as ``OUT.sparse-weights`` (what mert-moses.pl's ``runN.sparse-weights`` holds).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .errors import InputError
from .formats.weights import detect_weights_format, read_weights
from .formats.weights_core import Weights, list_names, split_dense_name

#: formats that hold only the dense block, matched by position
POSITIONAL = ("init-opt", "weights-txt")
#: formats that cannot hold sparse weights: those go to OUT.sparse-weights
DENSE_ONLY = ("init-opt", "weights-txt", "dense-init")
SPARSE_SUFFIX = ".sparse-weights"


@dataclass
class StartWeights:
    """Start weights aligned with a store.

    vector: float64 [n_features] in the store's feature order; kept: the weights of
    features the store does not have (written back unchanged); ranges: init.opt's
    (mins, maxs) over the dense block, or None; notes: lines for the user's log.
    """

    path: str
    fmt: str
    weights: Weights
    vector: np.ndarray
    kept: Weights
    ranges: tuple[np.ndarray, np.ndarray] | None = None
    notes: list = field(default_factory=list)
    warnings: list = field(default_factory=list)


#: names listed in a warning before "and N more"
_WARN_LISTED = 4


def _few(names: Sequence[str]) -> str:
    shown = ", ".join(names[:_WARN_LISTED])
    rest = len(names) - _WARN_LISTED
    return shown + (f" and {rest} more" if rest > 0 else "")


def check_match(weight_names: Sequence[str], names: Sequence[str], n_dense: int, source: str | None = None,
                *, where: str = "the n-best lists") -> list[str]:
    """The one rule for weights lined up with features by name (``optimize --weights``, ``tune``,
    ``rerank``, ``kbest``, ``compare``'s ``weights`` and the Python API's ``start=`` and
    ``weights``).

    ``weight_names``: the names the weights give; ``names``: the features (the first
    ``n_dense`` are the dense block); ``source``: the weights file, for the message.
    Raises :class:`InputError` when there are features but no weight names one: every
    feature would start at 0, every hypothesis tie, and a run would look normal (each
    sentence's first hypothesis scores like the decoder's 1-best). Returns warnings
    (empty or one line) when some dense feature has no weight: the line names those
    features and the weights that name no feature.

    Why only dense features: a sparse feature (Moses's ``name_x`` features, every cdec
    feature, since cdec k-best lists have no dense block) first seen in these lists has
    no start weight by nature; Moses and cdec start it at 0, and a warning would fire on
    every sparse run. A dense feature (a moses.ini ``[weight]`` column) always has a
    weight in a working system, so one without points to a misnamed weight (``LM0`` for
    the column ``LM0_0``) or another system's config. Weights that name no feature while
    every dense feature has one stay a log note: moses.ini lists untuneable features
    (``UnknownWordPenalty0``) that Moses leaves out of its n-best lists, and cdec weights
    files list features that have not fired yet (``PassThrough``).
    """
    names = list(names)
    known = set(names)
    weight_names = list(weight_names)
    unmatched = [n for n in weight_names if n not in known]
    if names and len(unmatched) == len(weight_names):
        given = f"it gives {_few(weight_names)}; " if weight_names else ""
        raise InputError(f"none of its {len(weight_names)} weight(s) names a feature of {where} ({given}expected "
                         f"names such as {_few(names)}), so every model score would be 0", source)
    have = set(weight_names)
    missing = [n for n in names[:n_dense] if n not in have]
    if not missing:
        return []
    message = f"{len(missing)} dense feature(s) of {where} have no weight and start at 0 ({_few(missing)})"
    if unmatched:
        message += f"; {len(unmatched)} weight(s) name no feature ({_few(unmatched)})"
    return [(f"{source}: " if source else "") + message]


def read_start(path: str, names: Sequence[str], n_dense: int, *, sparse_init: str | None = None,
               fmt: str | None = None) -> StartWeights:
    """Read ``path`` (any weights format; detected when ``fmt`` is None) against a store
    whose features are ``names`` (dense block first, ``n_dense`` columns named
    ``Label_<i>``). ``sparse_init``: a Moses sparse weights file with more start weights.
    Raises InputError for a dense layout that does not match and when no weight names a
    feature; ``warnings`` holds :func:`check_match`'s line for a partial match."""
    from .formats.moses_ini import read_weight_file_entry
    from .formats.sparse_weights import read_sparse_weights

    fmt = fmt or detect_weights_format(path)
    names = list(names)
    dense = names[:n_dense]
    # kbmira output numbers its dense weights F0, F1, ... in the column order
    read = read_weights(path, fmt, feature_names=dense if fmt in POSITIONAL or fmt == "mira-out" else None)
    items = dict(read.items())
    if fmt in ("moses-ini", "dense-init"):
        _check_dense_layout(read, dense, path)
    extra_files = []
    if fmt == "moses-ini" and read_weight_file_entry(path):
        extra_files.append(read_weight_file_entry(path))
    if sparse_init:
        extra_files.append(sparse_init)
    for extra in extra_files:
        for name, value in read_sparse_weights(extra).items():
            if name in dense:
                raise InputError(f"names the dense feature {name}; a sparse weights file holds sparse features "
                                 "only", extra)
            items[name] = value
    weights = Weights(items.items(), source=path)
    vector = weights.to_array(names, allow_unknown=True)
    warnings = check_match(list(weights), names, n_dense, path)
    known = set(names)
    kept = [(name, value) for name, value in weights.items() if name not in known]
    notes = []
    if kept:
        notes.append(f"{len(kept)} start weight(s) name features no hypothesis has ({list_names([n for n, _ in kept])}): "
                     "kept unchanged in the output")
    missing = [n for n in names if n not in weights]
    if missing:
        notes.append(f"{len(missing)} feature(s) of the n-best lists have no start weight and start at 0 "
                     f"({list_names(missing)})")
    ranges = None
    if fmt == "init-opt":
        from .formats.mert_weights import read_init_opt

        init = read_init_opt(path)
        ranges = (init.mins, init.maxs)
    return StartWeights(path, fmt, weights, vector, Weights(kept), ranges, notes, warnings)


def _check_dense_layout(read: Weights, dense: Sequence[str], path: str) -> None:
    """A moses.ini / dense-init must give every dense label of the store as many values as
    the store has columns for it (labels the store lacks are free)."""
    columns: dict[str, int] = {}
    for name in dense:
        split = split_dense_name(name)
        label = split[0] if split else name
        columns[label] = columns.get(label, 0) + 1
    given: dict[str, int] = {}
    for name in read:
        split = split_dense_name(name)
        if split is not None and split[0] in columns:
            given[split[0]] = given.get(split[0], 0) + 1
    for label, count in columns.items():
        have = given.get(label, 0)
        if have != count:
            raise InputError(f"gives {have} value(s) for {label}, but the n-best lists have {count} "
                             f"({label}_0 .. {label}_{count - 1}); expected one start weight per column", path)


def output_files(out: str, fmt: str, n_sparse: int) -> list[str]:
    """The files :func:`write_tuned` may write for ``out`` in ``fmt`` when the store has
    ``n_sparse`` sparse features (to check the places before any work). InputError when
    they cannot all be written: sparse weights beside stdout."""
    if not (n_sparse and fmt in DENSE_ONLY + ("moses-ini",)):
        return [out]
    if out == "-":
        raise InputError(f"the n-best lists have {n_sparse} sparse feature(s), whose weights a {fmt} file cannot "
                         f"hold: give -o a file name (they go to OUT{SPARSE_SUFFIX})")
    return [out, out + SPARSE_SUFFIX]


def write_tuned(out: str, fmt: str, start: StartWeights, names: Sequence[str], values: np.ndarray,
                n_dense: int, comment: str = "") -> list[str]:
    """Write the tuned ``values`` (float64 [n_features], ordered like ``names``) with the
    kept weights of ``start`` to ``out`` in format ``fmt``; returns the files written.

    Order: the start file's names first (kept ones with their start values), then
    features the start did not name. moses-ini updates a copy of the start config and
    writes sparse weights to ``OUT.sparse-weights`` (named in its ``[weight-file]``);
    the dense-only formats write the dense block to ``out`` and nonzero sparse weights
    to ``OUT.sparse-weights``.
    """
    from .formats.weights import write_weights

    tuned = dict(zip(names, np.asarray(values, dtype=np.float64).tolist()))
    full = {name: tuned.get(name, value) for name, value in start.weights.items()}
    full.update((n, v) for n, v in tuned.items() if n not in full)
    weights = Weights(full.items())
    dense = list(names[:n_dense])
    if fmt == "moses-ini":
        from .formats.moses_ini import write_moses_config

        return write_moses_config(out, weights, start.path, out + SPARSE_SUFFIX)
    if fmt == "cdec":
        from .formats.cdec_weights import write_cdec_weights

        write_cdec_weights(out, weights, comment=comment)
        return [out]
    if fmt not in DENSE_ONLY:
        positional = fmt == "mira-out"
        write_weights(out, weights, fmt, feature_names=dense if positional else None, exact=True)
        return [out]
    written = [out]
    dense_weights = Weights((n, full.get(n, 0.0)) for n in dense)
    if fmt == "init-opt" and start.ranges is not None:
        from .formats.mert_weights import InitOpt, write_init_opt

        # keep the start file's restart ranges
        write_init_opt(out, InitOpt(dense_weights.to_array(dense), *start.ranges), exact=True)
    else:
        write_weights(out, dense_weights, fmt, feature_names=dense, exact=True)
    sparse = Weights((n, v) for n, v in full.items() if n not in set(dense) and v != 0.0)
    if len(sparse):   # output_files() has refused stdout for them
        from .formats.sparse_weights import write_sparse_weights

        write_sparse_weights(out + SPARSE_SUFFIX, sparse)
        written.append(out + SPARSE_SUFFIX)
    return written
