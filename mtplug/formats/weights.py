"""Feature weights in memory, and reading/writing them in any supported file format.

:class:`Weights` is the one in-memory form: an ordered mapping feature name -> float.
Names are the column names mtplug uses everywhere: a Moses dense label ``X`` with m
values becomes ``X_0 ... X_{m-1}`` (as Moses's extractor names the features.dat
columns), sparse Moses features and cdec features keep their names.

Formats (the keys of the one registry, see :func:`weights_formats`):

============  =====================================================  ====================
name          file                                                   module
============  =====================================================  ====================
moses-ini     ``[weight]`` section of moses.ini (updated in place)   :mod:`.moses_ini`
init-opt      mert's start point and ranges (positional)             :mod:`.mert_weights`
weights-txt   mert's best point, one line (positional)               :mod:`.mert_weights`
dense-init    kbmira ``--dense-init`` (``Label= value`` lines)       :mod:`.mert_weights`
mira-out      kbmira / megam output (``F<i> w`` and ``name w``)      :mod:`.mert_weights`
sparse        Moses sparse weights (``name value``)                  :mod:`.sparse_weights`
cdec          cdec weights file                                      :mod:`.cdec_weights`
names         any ``name value`` file (read with cdec's rules)       :mod:`.cdec_weights`
============  =====================================================  ====================

Number formats. Lossless formats write the shortest text that reads back as the
same double (:func:`format_shortest`); cdec writes ``%.17g`` as cdec does. The Moses
hand-off files (init-opt, weights-txt, dense-init, mira-out) default to the text the
Moses tools write (``%.6f`` / ``%g``, see :mod:`.mert_weights`), which keeps 6 digits;
pass ``exact=True`` for shortest round-trip text instead.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Optional, Sequence

import numpy as np

from ..errors import InputError
from ..fileio import read_text_lines

# Whitespace that separates fields in every weights format (ASCII only, as Moses's and
# cdec's C++ tokenizers); a feature name can never contain it.
_ASCII_SPACE = frozenset(" \t\n\r\x0b\x0c")
#: runs of blanks between fields (the Moses tools split on ASCII spaces and tabs)
FIELD_SEP = re.compile(r"[ \t]+")

# What strtod accepts in practice in these files; Python's float() alone would also take
# '1_000', Unicode digits and 'infinity', which no Moses or cdec tool reads.
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NON_FINITE = re.compile(r"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)
_DENSE_NAME = re.compile(r"(.+)_(0|[1-9][0-9]*)")
# Names listed in one error message before "... and N more".
_MAX_LISTED = 10


# ---------------------------------------------------------------------------------------
# numbers


def format_shortest(value: float) -> str:
    """Shortest text that reads back as the same double (``repr``), exponent without ``+``.

    ``repr`` gives ``1e+16``; mert-moses.pl's number regexes (``[\\-\\.\\de]+``) stop at
    the ``+``, so the exponent is written ``1e16``, which strtod, Perl and Python read
    back to the same double.
    """
    return repr(float(value)).replace("e+", "e")


def format_fixed6(value: float) -> str:
    """``%.6f``: how ``moses -show-weights`` prints weights, copied by mert-moses.pl."""
    return "%.6f" % value


def format_g6(value: float) -> str:
    """C++ ``ostream`` default (``%g``, 6 significant digits), exponent without ``+``."""
    return ("%g" % value).replace("e+", "e")


def format_perl(value: float) -> str:
    """Perl's number-to-string (``%.15g``), exponent without ``+``."""
    return ("%.15g" % value).replace("e+", "e")


def format_g17(value: float) -> str:
    """``%.17g``: cdec's ``ostream`` with precision 17 (round-trips every double)."""
    return "%.17g" % value


def looks_numeric(token: str) -> bool:
    """True if ``token`` is spelled like a number, finite or not (used to detect formats)."""
    return bool(_NUMBER.fullmatch(token) or _NON_FINITE.fullmatch(token))


def parse_number(token: str, path, line: int, name: Optional[str] = None) -> float:
    """Read one finite number, or raise :class:`InputError` naming file, line and feature."""
    of = "" if name is None else f" for {name!r}"
    if _NUMBER.fullmatch(token):
        value = float(token)
        if math.isfinite(value):
            return value
        raise InputError(f"value{of} {token!r} overflows a double; expected a finite number", path, line)
    if _NON_FINITE.fullmatch(token):
        raise InputError(f"value{of} is {token!r}; expected a finite number", path, line)
    raise InputError(f"expected a number{of}, got {token!r}", path, line)


# ---------------------------------------------------------------------------------------
# names


def check_name(name) -> str:
    """Return ``name`` if it can be a feature name in every format, else raise ValueError."""
    if not isinstance(name, str):
        raise ValueError(f"feature names are strings, got {type(name).__name__} {name!r}")
    if not name:
        raise ValueError("empty feature name")
    if not _ASCII_SPACE.isdisjoint(name):
        raise ValueError(f"feature name {name!r} contains whitespace")
    return name


def dense_feature_names(label: str, count: int) -> list[str]:
    """The column names of a Moses dense label with ``count`` values: ``label_0 ...``."""
    return [f"{label}_{i}" for i in range(count)]


def split_dense_name(name: str) -> Optional[tuple[str, int]]:
    """``'TranslationModel0_3'`` -> ``('TranslationModel0', 3)``; None if not ``Label_<i>``."""
    m = _DENSE_NAME.fullmatch(name)
    return None if m is None else (m.group(1), int(m.group(2)))


def is_sparse_label(label: str) -> bool:
    """Moses's rule (extractor, mert-moses.pl): a feature label with ``_`` is sparse."""
    return "_" in label


def list_names(names: Sequence[str]) -> str:
    """``a, b, c`` for an error message, cut after a few names."""
    shown = ", ".join(names[:_MAX_LISTED])
    rest = len(names) - _MAX_LISTED
    return shown + (f" ... and {rest} more" if rest > 0 else "")


# ---------------------------------------------------------------------------------------
# the in-memory form


class Weights(Mapping):
    """Feature weights: an ordered, read-only mapping feature name -> float.

    ``items`` is a mapping or an iterable of ``(name, value)`` pairs; the order is kept
    (file order for weights read from a file). Names must be non-empty and free of
    whitespace, each at most once; values must be finite. ``source`` is the file the
    weights came from (for error messages); it takes no part in equality.

    Two ``Weights`` are equal when they hold the same names in the same order with
    equal values.
    """

    __slots__ = ("_w", "source")

    def __init__(self, items: Mapping | Iterable[tuple[str, float]] = (), *, source=None):
        pairs = items.items() if isinstance(items, Mapping) else items
        w: dict[str, float] = {}
        for name, value in pairs:
            check_name(name)
            if name in w:
                raise ValueError(f"feature {name!r} given twice")
            v = float(value)
            if not math.isfinite(v):
                raise ValueError(f"weight of {name!r} is {v}; weights must be finite")
            w[name] = v
        self._w = w
        self.source = None if source is None else os.fspath(source)

    def __getitem__(self, name: str) -> float:
        return self._w[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._w)

    def __len__(self) -> int:
        return len(self._w)

    def __contains__(self, name) -> bool:
        return name in self._w

    def __eq__(self, other) -> bool:
        if not isinstance(other, Weights):
            return NotImplemented
        return list(self._w.items()) == list(other._w.items())

    # unhashable like dict: equality is by content, and a mapping is no set member
    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Weights({self._w!r})"

    @property
    def names(self) -> list[str]:
        """Feature names in order."""
        return list(self._w)

    def to_array(self, feature_names: Sequence[str], *, allow_unknown: bool = False) -> np.ndarray:
        """Weights placed by name into a float64 vector ordered like ``feature_names``.

        Features of ``feature_names`` without a weight get 0.0. Weights whose name is
        not in ``feature_names`` raise :class:`InputError` listing them (they would be
        silently lost), unless ``allow_unknown`` is true, which drops them.
        """
        index: dict[str, int] = {}
        for i, name in enumerate(feature_names):
            if name in index:
                raise ValueError(f"feature {name!r} is listed twice in feature_names")
            index[name] = i
        out = np.zeros(len(index), dtype=np.float64)
        unknown = []
        for name, value in self._w.items():
            i = index.get(name)
            if i is None:
                unknown.append(name)
            else:
                out[i] = value
        if unknown and not allow_unknown:
            raise InputError(
                f"{len(unknown)} weight(s) for features not in the feature list: {list_names(unknown)}",
                self.source,
            )
        return out

    @classmethod
    def from_array(cls, names: Sequence[str], values, *, source=None) -> "Weights":
        """Weights from parallel ``names`` and a 1-D array of ``values`` (same length)."""
        arr = np.asarray(values, dtype=np.float64)
        if arr.ndim != 1 or arr.shape[0] != len(names):
            raise ValueError(f"expected {len(names)} values (one per name), got shape {arr.shape}")
        return cls(zip(names, arr.tolist()), source=source)


def weights_from_lines(pairs: Iterable[tuple[int, str, float]], path) -> Weights:
    """Build :class:`Weights` from ``(line, name, value)`` read from ``path``.

    A repeated name or a name that cannot be a feature name raises :class:`InputError`
    naming the line (and the line of the first occurrence).
    """
    first_line: dict[str, int] = {}
    items = []
    for line, name, value in pairs:
        try:
            check_name(name)
        except ValueError as exc:
            raise InputError(str(exc), path, line) from None
        if name in first_line:
            raise InputError(
                f"feature {name!r} given twice (first at line {first_line[name]}); expected each feature once",
                path,
                line,
            )
        first_line[name] = line
        items.append((name, value))
    return Weights(items, source=path)


# ---------------------------------------------------------------------------------------
# format registry, detection and dispatch


@dataclass(frozen=True)
class WeightsFormat:
    """One entry of the format registry.

    ``sniff(lines)`` tells (from content, never the file name) whether the file is in
    this format; formats without it are never detected. ``read(path, feature_names)``
    returns :class:`Weights`; ``write(path, weights, template, feature_names, exact)``
    writes them (None: read-only). ``positional``: values are matched to features by
    position, so reading needs ``feature_names``. ``template``: writing updates a
    template file (moses.ini).
    """

    name: str
    description: str
    sniff: Optional[Callable[[list[str]], bool]]
    read: Callable
    write: Optional[Callable]
    positional: bool = False
    template: bool = False


def _numbered_content(lines: list[str]) -> list[tuple[int, str]]:
    # blank lines and whole-line '#' comments carry no format evidence
    return [(i, ln) for i, ln in enumerate(lines, 1) if ln.strip(" \t") and not ln.startswith("#")]


def _content_lines(lines: list[str]) -> list[str]:
    return [ln for _, ln in _numbered_content(lines)]


def _tokens(line: str) -> list[str]:
    return FIELD_SEP.split(line.strip(" \t"))


def _numeric_rows(lines: list[str]) -> Optional[list[list[str]]]:
    rows = [_tokens(ln) for ln in _content_lines(lines)]
    if rows and all(all(looks_numeric(t) for t in row) for row in rows):
        return rows
    return None


_SECTION = re.compile(r"[ \t]*\[[^\]\s]+\][ \t]*(?:#.*)?")


def _sniff_moses_ini(lines):
    return any(_SECTION.fullmatch(ln) for ln in lines)


def _sniff_weights_txt(lines):
    rows = _numeric_rows(lines)
    return rows is not None and len(rows) == 1


def _sniff_init_opt(lines):
    rows = _numeric_rows(lines)
    return rows is not None and len(rows) == 3 and len({len(r) for r in rows}) == 1


def _sniff_dense_init(lines):
    content = _content_lines(lines)
    for ln in content:
        toks = _tokens(ln)
        if len(toks) < 2 or not toks[0].endswith("=") or len(toks[0]) < 2:
            return False
        if not all(looks_numeric(t) for t in toks[1:]):
            return False
    return bool(content)


def _sniff_mira_out(lines):
    content = _content_lines(lines)
    rows = [_tokens(ln) for ln in content]
    # kbmira writes F0 first; a name-value file that starts so is its output
    return (
        bool(rows)
        and rows[0][0] == "F0"
        and all(len(r) == 2 and looks_numeric(r[1]) for r in rows)
    )


def _sniff_names(lines):
    from . import cdec_weights

    content = _content_lines(lines)
    if not content or _numeric_rows(lines) is not None:
        return False  # lines made of numbers only are a positional file gone wrong
    return all(cdec_weights.parse_cdec_line(ln) is not None for ln in content)


def _read_init_opt(path, feature_names):
    from .mert_weights import read_init_opt

    init = read_init_opt(path)
    _check_count(path, len(init), feature_names)
    return Weights.from_array(feature_names, init.start, source=path)


def _write_init_opt(path, weights, template, feature_names, exact):
    from .mert_weights import InitOpt, write_init_opt

    write_init_opt(path, InitOpt.from_weights(weights, feature_names), exact=exact)


def _read_weights_txt(path, feature_names):
    from .mert_weights import read_weights_txt

    values = read_weights_txt(path)
    _check_count(path, len(values), feature_names)
    return Weights.from_array(feature_names, values, source=path)


def _write_weights_txt(path, weights, template, feature_names, exact):
    from .mert_weights import write_weights_txt

    values = weights.to_array(feature_names) if feature_names is not None else list(weights.values())
    write_weights_txt(path, values, exact=exact)


def _check_count(path, count, names):
    if count != len(names):
        raise InputError(f"has {count} values, expected {len(names)} (one per feature)", path, 1)


def _read_dense_init(path, feature_names):
    from .mert_weights import read_dense_init

    return read_dense_init(path)


def _write_dense_init(path, weights, template, feature_names, exact):
    from .mert_weights import write_dense_init

    if feature_names is not None:
        weights = Weights.from_array(feature_names, weights.to_array(feature_names))
    write_dense_init(path, weights, exact=exact)


def _read_mira_out(path, feature_names):
    from .mert_weights import read_mira_weights

    return read_mira_weights(path, dense_names=feature_names)


def _write_mira_out(path, weights, template, feature_names, exact):
    from .mert_weights import write_mira_weights

    write_mira_weights(path, weights, dense_names=feature_names, exact=exact)


def _read_moses_ini(path, feature_names):
    from .moses_ini import read_moses_ini

    return read_moses_ini(path)


def _write_moses_ini(path, weights, template, feature_names, exact):
    from .moses_ini import write_moses_ini

    write_moses_ini(path, weights, template=template)


def _read_sparse(path, feature_names):
    from .sparse_weights import read_sparse_weights

    return read_sparse_weights(path)


def _write_sparse(path, weights, template, feature_names, exact):
    from .sparse_weights import write_sparse_weights

    write_sparse_weights(path, weights)


def _read_cdec(path, feature_names):
    from .cdec_weights import read_cdec_weights

    return read_cdec_weights(path)


def _write_cdec(path, weights, template, feature_names, exact):
    from .cdec_weights import write_cdec_weights

    write_cdec_weights(path, weights)


# The one registry. Insertion order is the detection order: the first format whose
# sniff accepts the content wins. (The format modules import this module, so the
# adapters above import them at call time.)
_FORMATS: dict[str, WeightsFormat] = {
    f.name: f
    for f in (
        WeightsFormat("moses-ini", "moses.ini [weight] section", _sniff_moses_ini,
                      _read_moses_ini, _write_moses_ini, template=True),
        WeightsFormat("weights-txt", "Moses mert weights.txt (one line of numbers)", _sniff_weights_txt,
                      _read_weights_txt, _write_weights_txt, positional=True),
        WeightsFormat("init-opt", "Moses mert init.opt (start, minimums, maximums)", _sniff_init_opt,
                      _read_init_opt, _write_init_opt, positional=True),
        WeightsFormat("dense-init", "Moses kbmira --dense-init ('Label= value' lines)", _sniff_dense_init,
                      _read_dense_init, _write_dense_init),
        WeightsFormat("mira-out", "Moses kbmira/megam output ('F<i> w' and 'name w' lines)", _sniff_mira_out,
                      _read_mira_out, _write_mira_out),
        WeightsFormat("names", "'name value' lines (Moses sparse or cdec; read with cdec's rules)",
                      _sniff_names, _read_cdec, None),
        WeightsFormat("sparse", "Moses sparse weights ('name value', one space)", None,
                      _read_sparse, _write_sparse),
        WeightsFormat("cdec", "cdec weights file", None, _read_cdec, _write_cdec),
    )
}


def weights_formats() -> dict[str, str]:
    """Format name -> one-line description, for every format :func:`read_weights` knows."""
    return {name: f.description for name, f in _FORMATS.items()}


def _lookup(fmt: str) -> WeightsFormat:
    try:
        return _FORMATS[fmt]
    except KeyError:
        raise ValueError(f"unknown weights format {fmt!r}; expected one of {', '.join(_FORMATS)}") from None


def detect_weights_format(path) -> str:
    """Tell a weights file's format from its content (never its name).

    Returns ``moses-ini`` (has a ``[section]`` line), ``weights-txt`` (one line of
    numbers), ``init-opt`` (three lines of numbers, equally long), ``dense-init``
    (``Label= value`` lines), ``mira-out`` (``name value`` lines starting with ``F0``)
    or ``names`` (other ``name value`` lines: Moses sparse weights and cdec weights
    read the same). Raises :class:`InputError` if none fits.
    """
    lines = read_text_lines(path)
    content = _content_lines(lines)
    if not content:
        raise InputError("no weights in the file (only blank or '#' lines); cannot detect its format", path)
    for f in _FORMATS.values():
        if f.sniff is not None and f.sniff(lines):
            return f.name
    raise _undetected(path, lines)


def _undetected(path, lines: list[str]) -> InputError:
    from . import cdec_weights

    numbered = _numbered_content(lines)
    if _numeric_rows(lines) is not None:
        rows = [(i, _tokens(ln)) for i, ln in numbered]
        if len(rows) == 3:
            i, row = next((i, r) for i, r in rows[1:] if len(r) != len(rows[0][1]))
            return InputError(
                f"line has {len(row)} numbers, line {rows[0][0]} has {len(rows[0][1])}; "
                "an init.opt needs three lines of equal length",
                path,
                i,
            )
        line = rows[1][0] if len(rows) == 2 else rows[3][0]
        return InputError(
            f"{len(rows)} lines of numbers; expected 1 (weights.txt) or 3 of equal length (init.opt)",
            path,
            line,
        )
    # Not numbers only, and not all 'name value' (else 'names' had matched): show the
    # first line that is not.
    i, ln = next((i, ln) for i, ln in numbered if cdec_weights.parse_cdec_line(ln) is None)
    return InputError(
        "cannot tell the weights format: expected a '[section]' line (moses.ini), lines of numbers "
        f"(init.opt, weights.txt), 'Label= value' or 'name value' lines, got {ln!r}",
        path,
        i,
    )


def read_weights(path, fmt: Optional[str] = None, *, feature_names: Optional[Sequence[str]] = None) -> Weights:
    """Read a weights file in format ``fmt`` (detected from the content if None).

    Positional formats (``init-opt``: its start line; ``weights-txt``) need
    ``feature_names``, the features.dat column order. For ``mira-out``,
    ``feature_names`` names the dense features ``F0, F1, ...`` (optional).
    """
    fmt = detect_weights_format(path) if fmt is None else fmt
    entry = _lookup(fmt)
    if entry.positional and feature_names is None:
        raise ValueError(f"format {fmt!r} is positional: pass feature_names (the features.dat column order)")
    return entry.read(path, None if feature_names is None else list(feature_names))


def write_weights(
    path,
    weights: Weights,
    fmt: str,
    *,
    template=None,
    feature_names: Optional[Sequence[str]] = None,
    exact: bool = False,
) -> None:
    """Write ``weights`` to ``path`` in format ``fmt`` (atomically: no half-written file).

    ``moses-ini`` updates the ``[weight]`` values of ``template`` (default: ``path``
    itself, i.e. in place). ``feature_names`` orders positional and dense output
    (missing features are written as 0); without it the weights' own order is used.
    ``exact`` switches the Moses hand-off formats (init-opt, weights-txt, dense-init,
    mira-out) from the Moses tools' 6-digit text to shortest round-trip text; the
    other formats are always lossless.
    """
    entry = _lookup(fmt)
    if entry.write is None:
        raise ValueError(f"format {fmt!r} is read-only; write 'sparse' (Moses) or 'cdec' instead")
    if template is not None and not entry.template:
        raise ValueError(f"format {fmt!r} takes no template (only moses-ini does)")
    entry.write(path, weights, template, feature_names, exact)
