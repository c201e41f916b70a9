"""Moses sparse weight files, as mert-moses.pl writes ``runN.sparse-weights``.

One ``name value`` per line, separated by one space (read: any run of spaces/TABs),
for the decoder's ``-weight-file`` and kbmira's ``--sparse-init``. Moses's reader
stops at a line it cannot parse, so a blank line is an error here too, and ``#``
starts no comment (Moses reads ``#x 1`` as a feature ``#x``). An empty file means
"no sparse weights". Values are written as the shortest text that reads back as the
same double; zero weights are kept (they are explicit in Moses).
"""

from __future__ import annotations

from ..errors import InputError
from ..fileio import atomic_output, read_text_lines
from .number_text import FIELD_SEP, format_shortest, looks_numeric, parse_number
from .weights_core import Weights, weights_from_lines


def read_sparse_weights(path) -> Weights:
    """Read a Moses sparse weights file into :class:`Weights` (file order kept)."""
    entries = []
    for i, line in enumerate(read_text_lines(path), 1):
        fields = FIELD_SEP.split(line.strip(" \t"))
        # '#' is no comment for Moses ('#x 1' is feature '#x'); say so when it was meant as one
        comment = line.startswith("#") and not (len(fields) == 2 and looks_numeric(fields[1]))
        if len(fields) != 2 or not fields[0] or comment:
            raise InputError(_malformed(fields, line, comment), path, i)
        name, text = fields
        entries.append((i, name, parse_number(text, path, i, name)))
    return weights_from_lines(entries, path)


def _malformed(fields: list[str], line: str, comment: bool) -> str:
    """What is wrong with a line that is not ``name value`` (fields: its blank-separated parts)."""
    if comment:
        return f"Moses reads no comments here; expected 'name value', got {line!r}"
    if not fields[0]:
        return "blank line; expected 'name value' on every line (Moses stops reading at a line it cannot parse)"
    if len(fields) == 1:
        return f"feature {fields[0]!r} has no value; expected 'name value', got {line!r}"
    return f"expected 'name value' (2 fields), got {len(fields)} fields: {line!r}"


def write_sparse_weights(path, weights: Weights) -> None:
    """Write ``name value`` lines (shortest round-trip numbers), replacing ``path`` atomically."""
    with atomic_output(path) as fh:
        for name, value in weights.items():
            fh.write(f"{name} {format_shortest(value)}\n")
