"""cdec weights files (utils/weights.cc): one ``Name value`` per line.

Reading follows cdec's ``Weights::InitFromFile``: empty lines and lines starting with
``#`` are skipped; the LAST ``=`` or TAB of a line (not its first character) is the
separator, otherwise spaces separate name and value (so ``Name value``,
``Name=value``, ``Name= value`` and dtrain's ``Name<TAB>value`` all read the same); a
line starting with whitespace is an error, as is NaN. mtplug is stricter than cdec
where cdec silently guesses: a missing or non-numeric value, trailing text, an
infinite value and a feature given twice are errors too. Gzipped files are read
transparently.

Writing follows ``Weights::WriteToFile``: an optional ``# comment`` first line, then
``Name value`` with ``%.17g`` (which round-trips every double) and zero weights left
out (cdec reads a missing feature as 0), so a read-write-read round trip keeps every
non-zero weight.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import InputError
from ..fileio import atomic_output, read_text_lines
from .number_text import format_g17, parse_number
from .weights_core import Weights, weights_from_lines

_EXPECTED = "expected 'Name value' (separated by spaces, a TAB or '=')"


def parse_cdec_line(line: str) -> tuple[str, str] | None:
    """Split one non-comment line into ``(name, value text)`` by cdec's rules, or None.

    None means the line does not have the ``Name value`` shape (leading whitespace, no
    separator, no value, or more than one value). The value is not checked here.
    """
    if not line or line[0] in " \t":
        return None
    cut = max(line.rfind("="), line.rfind("\t"))
    if cut > 0:
        line = line[:cut] + " " + line[cut + 1:]
    name, sep, rest = line.partition(" ")
    value = rest.lstrip(" ").rstrip(" \t")
    if not sep or not value or " " in value or "\t" in value:
        return None
    return name, value


def _what_is_missing(line: str) -> str:
    """The start of the message for a line that :func:`parse_cdec_line` refused (not a
    blank or whitespace-led one): which part of ``Name value`` is missing or extra."""
    if line[0] == "=":
        return "no feature name before '='; "
    cut = max(line.rfind("="), line.rfind("\t"))
    spaced = line[:cut] + " " + line[cut + 1:] if cut > 0 else line
    name, _, rest = spaced.partition(" ")
    if not rest.strip(" \t"):
        return f"feature {name!r} has no value; "
    return f"feature {name!r} has more than one value; "


def read_cdec_weights(path) -> Weights:
    """Read a (possibly gzipped) cdec weights file into :class:`Weights`, file order kept."""
    entries = []
    for i, line in enumerate(read_text_lines(path), 1):
        if not line or line.startswith("#"):
            continue
        if line[0] in " \t":
            raise InputError(f"line starts with whitespace, which cdec rejects; {_EXPECTED}", path, i)
        parsed = parse_cdec_line(line)
        if parsed is None:
            raise InputError(f"{_what_is_missing(line)}{_EXPECTED}, got {line!r}", path, i)
        name, text = parsed
        entries.append((i, name, parse_number(text, path, i, name)))
    return weights_from_lines(entries, path)


def format_cdec_weights(items: Iterable[tuple[str, float]], comment: str | None = None, sep: str = " ") -> str:
    """The text of a cdec weights file: optional ``# comment`` line, then ``Name<sep>%.17g``
    per non-zero weight (``sep`` TAB gives dtrain's output form; cdec reads both)."""
    if comment is not None and ("\n" in comment or "\r" in comment):
        raise ValueError("the comment must be a single line")
    head = f"# {comment}\n" if comment is not None else ""
    body = "".join(f"{name}{sep}{format_g17(value)}\n" for name, value in items if value != 0.0)
    if len(head + body) < 5:
        # cdec reads a weights file's first 5 bytes (looking for its binary header) and a
        # cdec built with assertions aborts on a shorter file: all zeros, or "a 1\n"
        head = "# weights\n"
    return head + body


def write_cdec_weights(path, weights: Weights, comment: str | None = None) -> None:
    """Write ``weights`` as cdec does: optional ``# comment`` line, ``Name %.17g``, zeros left out.

    Names containing ``=`` or starting with ``#`` are refused (ValueError): cdec would
    read them back differently. The file is replaced atomically.
    """
    for name in weights:
        if "=" in name or name.startswith("#"):
            raise ValueError(f"feature {name!r} cannot be written to a cdec weights file (cdec reads it differently)")
    text = format_cdec_weights(weights.items(), comment)
    with atomic_output(path) as fh:
        fh.write(text)
