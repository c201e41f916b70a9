"""Reading and writing feature weights in any supported file format: the format table,
detection from content, and dispatch to the per-format modules.

The in-memory form is :class:`~mtplug.formats.weights_core.Weights`; number text is
:mod:`.number_text`. Formats (the keys of the one registry, see :func:`weights_formats`):

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
same double (:func:`~mtplug.formats.number_text.format_shortest`); cdec writes
``%.17g`` as cdec does. The Moses hand-off files (init-opt, weights-txt, dense-init,
mira-out) default to the text the Moses tools write (``%.6f`` / ``%g``, see
:mod:`.mert_weights`), which keeps 6 digits; pass ``exact=True`` for shortest
round-trip text instead.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Callable

from ..errors import InputError
from ..fileio import read_text_lines
from . import cdec_weights, mert_weights, moses_ini, sparse_weights
from .number_text import FIELD_SEP, looks_numeric
from .weights_core import Weights

#: the documentation of the weights formats and of how positional files get their names
WEIGHTS_DOCS = "docs/formats.md, 'Weights files' (the table of formats and their feature names)"
_FILE_NAMES = {"init-opt": "init.opt", "weights-txt": "weights.txt"}

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
    sniff: Callable[[list[str]], bool] | None
    read: Callable
    write: Callable | None
    positional: bool = False
    template: bool = False


def _numbered_content(lines: list[str]) -> list[tuple[int, str]]:
    # blank lines and whole-line '#' comments carry no format evidence
    return [(i, ln) for i, ln in enumerate(lines, 1) if ln.strip(" \t") and not ln.startswith("#")]


def _content_lines(lines: list[str]) -> list[str]:
    return [ln for _, ln in _numbered_content(lines)]


def _tokens(line: str) -> list[str]:
    return FIELD_SEP.split(line.strip(" \t"))


def _numeric_rows(lines: list[str]) -> list[list[str]] | None:
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
    content = _content_lines(lines)
    if not content or _numeric_rows(lines) is not None:
        return False  # lines made of numbers only are a positional file gone wrong
    return all(cdec_weights.parse_cdec_line(ln) is not None for ln in content)


def _read_init_opt(path, feature_names):
    init = mert_weights.read_init_opt(path)
    _check_count(path, len(init), feature_names)
    return Weights.from_array(feature_names, init.start, source=path)


def _write_init_opt(path, weights, template, feature_names, exact):
    init = mert_weights.InitOpt.from_weights(weights, feature_names)
    mert_weights.write_init_opt(path, init, exact=exact)


def _read_weights_txt(path, feature_names):
    values = mert_weights.read_weights_txt(path)
    _check_count(path, len(values), feature_names)
    return Weights.from_array(feature_names, values, source=path)


def _write_weights_txt(path, weights, template, feature_names, exact):
    values = weights.to_array(feature_names) if feature_names is not None else list(weights.values())
    mert_weights.write_weights_txt(path, values, exact=exact)


def _check_count(path, count, names):
    if count != len(names):
        raise InputError(f"has {count} values, expected {len(names)} (one per feature)", path, 1)


def _read_dense_init(path, feature_names):
    return mert_weights.read_dense_init(path)


def _write_dense_init(path, weights, template, feature_names, exact):
    if feature_names is not None:
        weights = Weights.from_array(feature_names, weights.to_array(feature_names))
    mert_weights.write_dense_init(path, weights, exact=exact)


def _read_mira_out(path, feature_names):
    return mert_weights.read_mira_weights(path, dense_names=feature_names)


def _write_mira_out(path, weights, template, feature_names, exact):
    mert_weights.write_mira_weights(path, weights, dense_names=feature_names, exact=exact)


def _read_moses_ini(path, feature_names):
    return moses_ini.read_moses_ini(path)


def _write_moses_ini(path, weights, template, feature_names, exact):
    moses_ini.write_moses_ini(path, weights, template=template)


def _read_sparse(path, feature_names):
    return sparse_weights.read_sparse_weights(path)


def _write_sparse(path, weights, template, feature_names, exact):
    sparse_weights.write_sparse_weights(path, weights)


def _read_cdec(path, feature_names):
    return cdec_weights.read_cdec_weights(path)


def _write_cdec(path, weights, template, feature_names, exact):
    cdec_weights.write_cdec_weights(path, weights)


# The one registry. Insertion order is the detection order: the first format whose
# sniff accepts the content wins.
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


def read_weights(path, fmt: str | None = None, *, feature_names: Sequence[str] | None = None) -> Weights:
    """Read a weights file in format ``fmt`` (detected from the content if None).

    Positional formats (``init-opt``: its start line; ``weights-txt``) need
    ``feature_names``, the features.dat column order; without them the InputError says
    how to give them (docs/formats.md, "Weights files"). For ``mira-out``,
    ``feature_names`` names the dense features ``F0, F1, ...`` (optional).
    """
    fmt = detect_weights_format(path) if fmt is None else fmt
    entry = _lookup(fmt)
    if entry.positional and feature_names is None:
        raise InputError(f"is a Moses {_FILE_NAMES.get(fmt, fmt)} file, whose values name no feature (they go by position): pass "
                         "feature_names, the n-best list's dense features in column order (e.g. "
                         "corpus.feature_names[:corpus.n_dense] of mtplug.load_nbest), or give the weights in a "
                         f"format that names them; see {WEIGHTS_DOCS}", path)
    return entry.read(path, None if feature_names is None else list(feature_names))


def write_weights(
    path,
    weights: Weights,
    fmt: str,
    *,
    template=None,
    feature_names: Sequence[str] | None = None,
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
