"""The ``[weight]`` section of a Moses config (moses.ini): read it, update it in place.

moses.ini is read as Moses's ``Parameter::ReadConfigFile`` reads it: text from the
first ``#`` on is a comment, lines are trimmed of spaces and TABs, blank lines are
skipped, ``[name]`` starts a section. Each line of ``[weight]`` is ``Label= v1 v2 ...``.

Names: a dense label ``X`` with m values gives ``X_0 ... X_{m-1}`` (the features.dat
column names, also for m = 1: ``LM0= 0.5`` -> ``LM0_0``). A label containing ``_``
is a sparse feature for Moses's extractor and mert-moses.pl, so it keeps its name and
must have exactly one value.

Updating (:func:`write_moses_ini`) rewrites only the value tokens of the features
present in the new weights. Every other byte stays: other sections, comments
(inline ones too), blank lines, spacing, line ends (CRLF stays CRLF), a missing final
newline, and weight lines not being tuned (``UnknownWordPenalty0= 1``). A value that
is numerically unchanged keeps its original spelling (``0.300000`` stays), so writing
back the weights just read leaves the file byte-identical. New values are written as
the shortest text that reads back as the same double (``repr``, exponent without
``+``, see :func:`~mtplug.formats.number_text.format_shortest`): lossless, and readable by
Moses, mert-moses.pl and Python alike.
"""

from __future__ import annotations

import gzip
import os
import re
from dataclasses import dataclass

from ..errors import InputError
from ..fileio import atomic_output, decode_line, iter_chunks, open_binary
from .number_text import format_shortest, parse_number
from .sparse_weights import write_sparse_weights
from .weights_core import Weights, dense_feature_names, is_sparse_label, list_names, weights_from_lines

_TOKEN = re.compile(r"[^ \t]+")
_EXPECTED = "expected 'Label= value [value ...]'"


@dataclass
class _Line:
    raw: bytes  # the line without its end
    end: bytes  # b"\n", b"\r\n" or b"" (last line without newline)
    text: str


@dataclass
class _WeightLine:
    number: int  # 1-based line number
    label: str
    names: list[str]
    values: list[float]
    spans: list[tuple[int, int]]  # (start, end) of each value token in the line's text


@dataclass
class _Ini:
    lines: list[_Line]
    weights: list[_WeightLine]  # file order
    gzipped: bool
    weight_file: list[int]  # line numbers of the [weight-file] section's entries
    weight_file_header: int | None  # line number of [weight-file]


def _split_lines(data: bytes, path) -> list[_Line]:
    lines = []
    pieces = data.split(b"\n")
    for k, piece in enumerate(pieces):
        last = k == len(pieces) - 1
        if last and not piece:
            break
        end = b"" if last else b"\n"
        if piece.endswith(b"\r"):
            piece, end = piece[:-1], b"\r" + end
        lines.append(_Line(piece, end, decode_line(piece, path, k + 1)))
    return lines


def _parse(path) -> _Ini:
    with open_binary(path) as fh:
        gzipped = isinstance(fh, gzip.GzipFile)
    lines = _split_lines(b"".join(chunk for chunk, _ in iter_chunks(path)), path)
    section = None
    header = None  # line number of [weight]
    sections = []
    entries: list[_WeightLine] = []
    first_line: dict[str, int] = {}  # label or feature name -> line
    weight_file: list[int] = []
    weight_file_header = None
    for number, line in enumerate(lines, 1):
        body = line.text.split("#", 1)[0]  # Moses cuts comments at the first '#'
        stripped = body.strip(" \t")
        if not stripped:
            continue
        if stripped.startswith("["):
            close = stripped.find("]")
            if close < 0:
                raise InputError(f"expected '[section]', got {stripped!r}", path, number)
            section = stripped[1:close]
            sections.append(section)
            if section == "weight-file" and weight_file_header is None:
                weight_file_header = number
            if section == "weight":
                if header is not None:
                    raise InputError(
                        f"second [weight] section (the first starts at line {header}); expected one", path, number
                    )
                header = number
            continue
        if section == "weight-file":
            weight_file.append(number)
        if section != "weight":
            continue
        entry = _parse_weight_line(body, path, number)
        # a label twice, or a sparse label equal to an expanded dense name (LM0_0)
        for key in [entry.label] + entry.names:
            if key in first_line:
                raise InputError(
                    f"{key!r} given twice (first at line {first_line[key]}); expected each feature once",
                    path,
                    number,
                )
        first_line.update(dict.fromkeys([entry.label] + entry.names, number))
        entries.append(entry)
    if header is None:
        old = [s for s in sections if s.startswith("weight-")]
        hint = f" (old-style sections such as [{old[0]}] are not supported)" if old else ""
        raise InputError(
            f"no [weight] section; expected a '[weight]' line followed by 'Label= value' lines{hint}", path
        )
    if not entries:
        raise InputError(f"the [weight] section is empty; {_EXPECTED} lines", path, header)
    return _Ini(lines, entries, gzipped, weight_file, weight_file_header)


def _parse_weight_line(body: str, path, number: int) -> _WeightLine:
    tokens = list(_TOKEN.finditer(body))
    first = tokens[0].group()
    if not first.endswith("=") or len(first) < 2:
        got = body.strip(" \t")
        raise InputError(f"{_EXPECTED}, got {got!r}", path, number)
    label = first[:-1]
    if len(tokens) == 1:
        raise InputError(f"label {label!r} has no value; {_EXPECTED}", path, number)
    values = [parse_number(m.group(), path, number, label) for m in tokens[1:]]
    if is_sparse_label(label):
        if len(values) != 1:
            raise InputError(
                f"label {label!r} contains '_', which Moses reads as a sparse feature, and sparse features take "
                f"one value; got {len(values)}",
                path,
                number,
            )
        names = [label]
    else:
        names = dense_feature_names(label, len(values))
    return _WeightLine(number, label, names, values, [m.span() for m in tokens[1:]])


def read_moses_ini(path) -> Weights:
    """Read the ``[weight]`` section of a moses.ini into :class:`Weights` (expanded names).

    Raises :class:`InputError` (file and line) for: no or two ``[weight]`` sections,
    an empty one, a line that is not ``Label= value ...``, a non-numeric, NaN or
    infinite value, a label given twice.
    """
    ini = _parse(path)
    return weights_from_lines(
        ((e.number, name, value) for e in ini.weights for name, value in zip(e.names, e.values)), path
    )


def read_weight_file_entry(path) -> str | None:
    """The sparse weights file named in the ``[weight-file]`` section (Moses's
    ``weight-file`` parameter), or None when there is none."""
    ini = _parse(path)
    if not ini.weight_file:
        return None
    return ini.lines[ini.weight_file[0] - 1].text.split("#", 1)[0].strip(" \t")


def write_moses_ini(path, weights: Weights, template=None, *, allow_unknown: bool = False,
                    weight_file: str | None = None) -> None:
    """Write ``template`` (default: ``path``, i.e. update in place) with new weight values.

    Only the value tokens of features in ``weights`` change; everything else is
    copied byte for byte (see the module docstring). Weights naming features that
    have no ``[weight]`` line raise :class:`InputError` listing them (their values
    would be lost) unless ``allow_unknown`` is true. A gzipped template is refused.
    ``weight_file``: the sparse weights file Moses should read; it replaces the
    entry of the template's ``[weight-file]`` section, or that section is appended
    (as mert-moses.pl writes the final config when there are sparse weights).
    The output is replaced atomically.
    """
    template = path if template is None else template
    ini = _parse(template)
    if ini.gzipped:
        raise InputError("a gzip-compressed moses.ini cannot be updated in place; decompress it first", template)
    known = {name for e in ini.weights for name in e.names}
    unknown = [name for name in weights if name not in known]
    if unknown and not allow_unknown:
        src = f" (weights from {weights.source})" if weights.source else ""
        raise InputError(
            f"{len(unknown)} weight(s) have no line in the [weight] section{src}: {list_names(unknown)}", template
        )
    by_line = {e.number: e for e in ini.weights}
    replace = set(ini.weight_file) if weight_file is not None else set()
    end = ini.lines[0].end if ini.lines and ini.lines[0].end else b"\n"
    with atomic_output(path, "wb") as fh:
        for number, line in enumerate(ini.lines, 1):
            if number in replace:
                if number == ini.weight_file[0] and weight_file is not None:
                    fh.write(weight_file.encode("utf-8") + (line.end or end))
                continue
            entry = by_line.get(number)
            raw = line.raw if entry is None else _rewrite(line, entry, weights)
            fh.write(raw + line.end)
            if weight_file is not None and number == ini.weight_file_header and not ini.weight_file:
                fh.write(weight_file.encode("utf-8") + (line.end or end))
        if weight_file is not None and ini.weight_file_header is None:
            last_end = ini.lines[-1].end if ini.lines else end
            fh.write((end if ini.lines and not last_end else b"") + end + b"[weight-file]" + end
                     + weight_file.encode("utf-8") + end)


def write_moses_config(path, weights: Weights, template, sparse_path: str) -> list[str]:
    """moses.ini and its sparse weights as mert-moses.pl writes a tuned config: features
    with a ``[weight]`` line of ``template`` are updated there (:func:`write_moses_ini`),
    the others (sparse features; zero weights left out) go to ``sparse_path``, which the
    config names in ``[weight-file]`` (by absolute path). A template that names a sparse
    file of its own gets the new one even when there is no sparse weight (the old one
    must not apply). Returns the files written."""
    ini = _parse(template)
    known = {name for e in ini.weights for name in e.names}
    dense = Weights((n, v) for n, v in weights.items() if n in known)
    sparse = Weights((n, v) for n, v in weights.items() if n not in known and v != 0.0)
    if not len(sparse) and not ini.weight_file:
        write_moses_ini(path, dense, template=template)
        return [os.fspath(path)]
    write_sparse_weights(sparse_path, sparse)
    write_moses_ini(path, dense, template=template, weight_file=os.path.abspath(sparse_path))
    return [os.fspath(path), os.fspath(sparse_path)]


def _rewrite(line: _Line, entry: _WeightLine, weights: Weights) -> bytes:
    text = line.text
    changed = False
    # right to left, so earlier spans stay valid while the text changes length
    for name, old, (start, end) in reversed(list(zip(entry.names, entry.values, entry.spans))):
        new = weights.get(name)
        if new is not None and new != old:
            text = text[:start] + format_shortest(new) + text[end:]
            changed = True
    return text.encode("utf-8") if changed else line.raw
