"""The weight files Moses's optimizers read and write (mert, kbmira, pro + megam).

* ``init.opt`` (mert ``--ifile``): three lines of space-separated numbers, the start
  weights, the minimums and the maximums of the random restarts, one column per
  features.dat column (positional). mert-moses.pl writes the start weights as
  ``moses -show-weights`` prints them (``%.6f``, e.g. ``0.300000``) and the ranges as
  Perl numbers (``%.15g``: ``0``, ``1``); :func:`write_init_opt` does the same, which
  reproduces mert-moses.pl's files byte for byte.
* ``weights.txt``: mert's best point on one line. mert writes each weight with the
  C++ stream default (``%g``, 6 significant digits) followed by a space, then a
  newline (mert.cpp ``WriteFinalWeights``, Point.cpp ``operator<<``).
* kbmira ``--dense-init`` (``runN.dense``): one ``Label= value`` line per dense
  column, a multi-valued label repeated (``TranslationModel0= 0.2`` four times); the
  values as in init.opt (``%.6f``). Reading also takes several values per line
  (``Label= v1 v2``, the ``-show-weights`` layout mert-moses.pl reads it with).
* kbmira / megam output (``mert.out``): ``F<i> <weight>`` for dense column i and
  ``<name> <weight>`` for sparse features; kbmira writes ``%g``.

Exponents are written without ``+`` (``1e-07``, ``1.5e20``): mert-moses.pl's number
regexes stop at a ``+``. The 6-digit defaults match the Moses tools; pass
``exact=True`` to any writer here for shortest round-trip text instead (lossless).
A read-write-read round trip is exact for files whose numbers have at most 6
decimals (``%.6f``) or 6 significant digits (``%g``), which is all the Moses tools
write; re-writing a file written here gives the same bytes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..fileio import atomic_output, read_text_lines
from .number_text import FIELD_SEP, format_fixed6, format_g6, format_perl, format_shortest, parse_number
from .weights_core import Weights, split_dense_name, weights_from_lines

_INIT_ROLES = ("start weights", "minimums", "maximums")
_F_NAME = re.compile(r"F(0|[1-9][0-9]*)")


def _fields(line: str) -> list[str]:
    stripped = line.strip(" \t")
    return FIELD_SEP.split(stripped) if stripped else []


def _numbers(line: str, path, number: int, role: str) -> list[float]:
    fields = _fields(line)
    if not fields:
        raise InputError(f"empty line; expected the {role} as space-separated numbers", path, number)
    return [parse_number(t, path, number) for t in fields]


# ---------------------------------------------------------------------------------------
# init.opt


@dataclass(frozen=True, eq=False)
class InitOpt:
    """mert's start point and restart ranges: three float64 vectors of equal length.

    The arrays are read-only copies. Positions are features.dat columns; names come
    from there (see :meth:`from_weights` / :meth:`start_weights`).
    """

    start: np.ndarray
    mins: np.ndarray
    maxs: np.ndarray

    def __post_init__(self):
        for field in ("start", "mins", "maxs"):
            arr = np.array(getattr(self, field), dtype=np.float64)
            if arr.ndim != 1:
                raise ValueError(f"{field} must be 1-D, got shape {arr.shape}")
            if not np.isfinite(arr).all():
                raise ValueError(f"{field} holds non-finite values")
            arr.flags.writeable = False
            object.__setattr__(self, field, arr)
        if not (len(self.start) == len(self.mins) == len(self.maxs)) or len(self.start) == 0:
            raise ValueError(
                f"start, mins and maxs need the same non-zero length, got "
                f"{len(self.start)}, {len(self.mins)}, {len(self.maxs)}"
            )

    def __len__(self) -> int:
        return len(self.start)

    def __eq__(self, other) -> bool:
        if not isinstance(other, InitOpt):
            return NotImplemented
        return all(np.array_equal(getattr(self, f), getattr(other, f)) for f in ("start", "mins", "maxs"))

    __hash__ = None  # type: ignore[assignment]  # holds arrays, compared by value

    @classmethod
    def from_weights(
        cls, weights: Weights, feature_names: Sequence[str] | None = None, mins=0.0, maxs=1.0
    ) -> InitOpt:
        """Start point from ``weights`` in ``feature_names`` order (default: their own order).

        ``mins``/``maxs`` are scalars or one value per feature; the defaults 0 and 1 are
        mert-moses.pl's.
        """
        if feature_names is None:
            start = np.array(list(weights.values()), dtype=np.float64)
        else:
            start = weights.to_array(feature_names)
        return cls(start, np.broadcast_to(np.asarray(mins, np.float64), start.shape),
                   np.broadcast_to(np.asarray(maxs, np.float64), start.shape))

    def start_weights(self, feature_names: Sequence[str]) -> Weights:
        """The start point as :class:`Weights` named by ``feature_names`` (same length)."""
        return Weights.from_array(feature_names, self.start)


def read_init_opt(path) -> InitOpt:
    """Read an init.opt: exactly three lines with the same number of numbers each."""
    lines = read_text_lines(path)
    if not lines:
        raise InputError("empty file; expected 3 lines: start weights, minimums, maximums", path)
    if len(lines) > 3:
        raise InputError(f"expected 3 lines (start weights, minimums, maximums), got {len(lines)}", path, 4)
    if len(lines) < 3:
        raise InputError(
            f"file ends after line {len(lines)}; expected 3 lines: start weights, minimums, maximums",
            path,
            len(lines),
        )
    rows = [_numbers(line, path, i, role) for i, (line, role) in enumerate(zip(lines, _INIT_ROLES), 1)]
    for i, (row, role) in enumerate(zip(rows, _INIT_ROLES), 1):
        if len(row) != len(rows[0]):
            raise InputError(
                f"line has {len(row)} {role}, line 1 has {len(rows[0])} start weights; expected one per feature",
                path,
                i,
            )
    inverted = [j for j, (lo, hi) in enumerate(zip(rows[1], rows[2])) if lo > hi]
    if inverted:
        j = inverted[0]
        raise InputError(f"feature {j} (column {j + 1}) has the range [{rows[1][j]:g}, {rows[2][j]:g}]: expected "
                         f"each minimum (line 2) <= its maximum (line 3)", path, 3)
    start, mins, maxs = (np.array(row, dtype=np.float64) for row in rows)
    return InitOpt(start, mins, maxs)


def write_init_opt(path, init: InitOpt, *, exact: bool = False) -> None:
    """Write ``init`` as mert-moses.pl does (``%.6f`` start, Perl-style ranges), or exactly."""
    start_fmt = format_shortest if exact else format_fixed6
    range_fmt = format_shortest if exact else format_perl
    with atomic_output(path) as fh:
        for values, fmt in ((init.start, start_fmt), (init.mins, range_fmt), (init.maxs, range_fmt)):
            fh.write(" ".join(fmt(v) for v in values.tolist()) + "\n")


# ---------------------------------------------------------------------------------------
# weights.txt


def read_weights_txt(path) -> np.ndarray:
    """Read mert's weights.txt: one line of numbers (a trailing space is fine)."""
    lines = read_text_lines(path)
    if not lines:
        raise InputError("empty file; expected one line of numbers (mert's best point)", path)
    if len(lines) > 1:
        raise InputError("expected one line of numbers (mert's best point), got a second line", path, 2)
    return np.array(_numbers(lines[0], path, 1, "weights"), dtype=np.float64)


def write_weights_txt(path, values, *, exact: bool = False) -> None:
    """Write ``values`` as mert writes weights.txt: ``%g`` + space each, then newline."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0 or not np.isfinite(arr).all():
        raise ValueError(f"expected a non-empty 1-D vector of finite values, got shape {arr.shape}")
    fmt = format_shortest if exact else format_g6
    with atomic_output(path) as fh:
        for v in arr.tolist():
            fh.write(fmt(v) + " ")
        fh.write("\n")


# ---------------------------------------------------------------------------------------
# kbmira --dense-init


def read_dense_init(path) -> Weights:
    """Read kbmira's dense init file into :class:`Weights` named ``Label_0, Label_1, ...``.

    A label's lines (or values) are numbered in order; they must be consecutive.
    """
    entries = []
    count: dict[str, int] = {}
    last_line: dict[str, int] = {}
    previous = None
    for i, line in enumerate(read_text_lines(path), 1):
        fields = _fields(line)
        if len(fields) < 2 or not fields[0].endswith("=") or len(fields[0]) < 2:
            raise InputError(f"expected 'Label= value', got {line!r}", path, i)
        label = fields[0][:-1]
        if label in count and label != previous:
            raise InputError(
                f"label {label!r} continues here after other labels (last at line {last_line[label]}); "
                "expected the lines of a label together",
                path,
                i,
            )
        for text in fields[1:]:
            value = parse_number(text, path, i, label)
            k = count.get(label, 0)
            entries.append((i, f"{label}_{k}", value))
            count[label] = k + 1
        last_line[label] = i
        previous = label
    if not entries:
        raise InputError("empty file; expected 'Label= value' lines", path)
    return weights_from_lines(entries, path)


def write_dense_init(path, weights: Weights, *, exact: bool = False) -> None:
    """Write one ``Label= value`` line per dense column (``%.6f``, as mert-moses.pl).

    Every name must be ``Label_<i>``, each label's indices 0, 1, ... in order and
    together (ValueError otherwise): kbmira matches the lines to columns by position.
    """
    labels: list[str] = []
    count: dict[str, int] = {}
    for name in weights:
        split = split_dense_name(name)
        if split is None:
            raise ValueError(f"dense-init holds dense features only; {name!r} is not a 'Label_<index>' name")
        label, index = split
        if index != count.get(label, 0) or (label in count and labels[-1] != label):
            raise ValueError(
                f"{name!r} is out of order: a label's columns must come together as {label}_0, {label}_1, ..."
            )
        count[label] = index + 1
        labels.append(label)
    fmt = format_shortest if exact else format_fixed6
    with atomic_output(path) as fh:
        for label, value in zip(labels, weights.values()):
            fh.write(f"{label}= {fmt(value)}\n")


# ---------------------------------------------------------------------------------------
# kbmira / megam output


def read_mira_weights(path, dense_names: Sequence[str] | None = None) -> Weights:
    """Read kbmira/megam output: ``F<i> <weight>`` (dense) and ``<name> <weight>`` lines.

    With ``dense_names`` (the features.dat dense columns), ``F<i>`` becomes
    ``dense_names[i]``; the result lists every dense feature in that order (0.0 for
    an ``F<i>`` the file lacks, as mert-moses.pl does), then the other features in
    file order. Without it, names are kept as written (``F0``, ...), in file order.
    """
    lines = read_text_lines(path)
    if not lines:
        raise InputError("empty file; expected 'F<index> weight' lines", path)
    dense: dict[int, tuple[int, float]] = {}
    others: list[tuple[int | None, str, float]] = []
    dense_index = {} if dense_names is None else {name: k for k, name in enumerate(dense_names)}
    if dense_names is not None and len(dense_index) != len(dense_names):
        raise ValueError("dense_names lists a feature twice")
    for i, line in enumerate(lines, 1):
        fields = _fields(line)
        if len(fields) != 2:
            raise InputError(f"expected 'F<index> weight' or 'name weight', got {line!r}", path, i)
        name, text = fields
        value = parse_number(text, path, i, name)
        m = _F_NAME.fullmatch(name)
        if dense_names is None or m is None:
            if name in dense_index:
                raise InputError(f"{name!r} is dense feature F{dense_index[name]}; expected it as an F line", path, i)
            others.append((i, name, value))
            continue
        k = int(m.group(1))
        if k >= len(dense_names):
            raise InputError(
                f"dense feature {name} out of range; expected F0..F{len(dense_names) - 1} "
                f"({len(dense_names)} dense features)",
                path,
                i,
            )
        if k in dense:
            raise InputError(f"{name} given twice (first at line {dense[k][0]}); expected each feature once", path, i)
        dense[k] = (i, value)
    entries: list[tuple[int | None, str, float]] = []
    for k, name in enumerate(dense_names or ()):
        at, value = dense.get(k, (None, 0.0))  # a missing F<i> means 0, as in mert-moses.pl
        entries.append((at, name, value))
    return weights_from_lines(entries + others, path)


def write_mira_weights(
    path, weights: Weights, dense_names: Sequence[str] | None = None, *, exact: bool = False
) -> None:
    """Write kbmira-style output: ``F<i> w`` per dense feature, then ``name w`` lines (``%g``).

    With ``dense_names``, feature ``dense_names[i]`` is written as ``F<i>`` (0 if
    absent from ``weights``) and the other weights follow as ``name w``; without it,
    every name is written as it is.
    """
    rows: list[tuple[str, float]]
    if dense_names is None:
        rows = list(weights.items())
    else:
        dense_set = set(dense_names)
        rows = [(f"F{k}", weights.get(name, 0.0)) for k, name in enumerate(dense_names)]
        for name, value in weights.items():
            if name in dense_set:
                continue
            if _F_NAME.fullmatch(name):
                raise ValueError(f"feature {name!r} would read back as a dense column")
            rows.append((name, value))
    fmt = format_shortest if exact else format_g6
    with atomic_output(path) as fh:
        for name, value in rows:
            fh.write(f"{name} {fmt(value)}\n")
