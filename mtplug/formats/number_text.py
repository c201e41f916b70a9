"""Numbers as the Moses and cdec tools write and read them in text files.

Reading (:func:`parse_number`) accepts what strtod accepts in these files and nothing
Python's ``float()`` would add; a non-finite value is an error naming file and line.
Writing: :func:`format_shortest` is lossless (the shortest text that reads back as
the same double); the others copy one tool's output (``%.6f``, ``%g``, ``%.15g``,
``%.17g``) so that files mtplug writes match the tools' own byte for byte. Exponents
are written without ``+``: mert-moses.pl's number regexes stop at it.
"""

from __future__ import annotations

import math
import re

from ..errors import InputError

#: runs of blanks between fields (the Moses tools split on ASCII spaces and tabs)
FIELD_SEP = re.compile(r"[ \t]+")

# What strtod accepts in practice in these files; Python's float() alone would also take
# '1_000', Unicode digits and 'infinity', which no Moses or cdec tool reads.
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NON_FINITE = re.compile(r"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)


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


def parse_number(token: str, path, line: int, name: str | None = None) -> float:
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
