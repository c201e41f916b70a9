"""Marian n-best lists (``marian-decoder --n-best``) as Moses n-best lines.

Marian writes (``src/translator/output_printer.h``)::

    id ||| hypothesis [||| alignment] [||| WordScores= s1 s2 ...] ||| F0= -1.2 F1= -3.4 ||| total

and, when a model gives no score breakdown, ``F0=-1.2`` with the value glued to its
label. The total is the (possibly length-normalised, ``--normalize``) score. Without
alignment and word scores a line is a Moses n-best line, which the Moses reader takes as
it is; this reader keeps the id, the hypothesis and the next-to-last field (the features,
``F0`` becomes the dense column ``F0_0``), drops the fields between them, and checks that
the total is a number. Marian writes sentences in order; ids out of order are an error
(the Moses reader's).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..errors import InputError
from ..fileio import iter_text_lines
from .number_text import parse_number

#: Marian writes sentences in order, as Moses's reader requires
SORT_BY_ID = False

#: ``F0=-1.2``: a label with its value glued on (Marian without a score breakdown)
_GLUED = re.compile(r"(?<!\S)([A-Za-z][A-Za-z0-9]*=)(?=[-+.0-9])")


def moses_lines(path: str) -> Iterator[tuple[int, int, str]]:
    """``(line number, -1, Moses n-best line)`` of every line of a Marian n-best file
    (blank lines skipped; the id is checked by the Moses reader). A line with fewer than
    4 fields or a total that is not a finite number raises :class:`InputError`."""
    for line_no, line in iter_text_lines(path):
        if not line.strip():
            continue
        fields = line.split("|||")
        if len(fields) < 4:
            raise InputError("expected 'id ||| hypothesis ||| features ||| total' (alignment and WordScores fields "
                             f"may come before the features), found {len(fields)} field(s)", path, line_no)
        parse_number(fields[-1].strip(), path, line_no, "total")
        features = _GLUED.sub(r"\1 ", fields[-2].strip())
        yield line_no, -1, f"{fields[0].strip()} ||| {fields[1].strip()} ||| {features}"
