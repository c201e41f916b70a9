"""N-best lists as JSON lines, one hypothesis an object, as Moses n-best lines::

    {"id": 0, "hyp": "the house is small", "features": {"nmt": -1.25, "lm": -20.5}, "score": -3.1}

``id``: the sentence (a non-negative integer); ``hyp``: the hypothesis text;
``features``: name -> finite number, the same names on every line (each becomes a dense
column ``name_0``, in the first line's order, as a Moses label does; a name with ``_`` is a sparse feature, as in a
Moses n-best); ``score`` and any other keys are ignored. A key given twice in an object is an
error (JSON would keep the last value). Lines need not be grouped by id:
the hypotheses are sorted by id, each id's in file order. Blank lines are skipped.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator

from ..errors import InputError
from ..fileio import iter_text_lines
from .number_text import format_shortest

#: the Moses copy sorts the hypotheses by id (stable)
SORT_BY_ID = True

#: a feature name an n-best line can carry: no blanks, '=', ':' or '|'
_NAME = re.compile(r"[^\s=:|]+")


def moses_lines(path: str) -> Iterator[tuple[int, int, str]]:
    """``(line number, sentence id, Moses n-best line)`` of every object of a JSON-lines
    n-best file, in file order. A line that is not such an object raises
    :class:`InputError` naming the file, the line and what was expected."""
    first: tuple[int, list[str]] | None = None       # the first object's line and feature names
    for line_no, line in iter_text_lines(path):
        if not line.strip():
            continue
        try:
            obj = json.loads(line, parse_constant=_no_constant, object_pairs_hook=_object)
        except _KeyTwice as exc:
            raise InputError(f"expected each key once in an object, got {json.dumps(exc.args[0], ensure_ascii=False)} "
                             "twice (JSON would keep the last value)", path, line_no) from None
        except ValueError as exc:
            raise InputError(f"expected a JSON object {{\"id\", \"hyp\", \"features\"}}: {exc}", path, line_no) from None
        sid, hyp, features = _fields(obj, path, line_no)
        if first is None:
            first = (line_no, list(features))
        elif features.keys() != set(first[1]):
            # checked here, in file order: the Moses reader would name a line of the sorted copy
            raise InputError(f"expected the features of line {first[0]} ({', '.join(first[1])}), got "
                             f"{', '.join(features) or 'none'}", path, line_no)
        values = " ".join(f"{name}= {format_shortest(features[name])}" for name in first[1])
        yield line_no, sid, f"{sid} ||| {hyp} ||| {values}"


def _no_constant(name: str):
    raise ValueError(f"{name} is not a finite number")


class _KeyTwice(ValueError):
    """A key given twice in one JSON object (args[0]: the key)."""


def _object(pairs: list) -> dict:
    """A JSON object of ``pairs``; :class:`_KeyTwice` for a key given twice (json.loads
    would keep the last value: two "id"s put a hypothesis in the other sentence)."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set = set()
        for key, _ in pairs:
            if key in seen:
                raise _KeyTwice(key)
            seen.add(key)
    return obj


def _fields(obj, path: str, line_no: int) -> tuple[int, str, dict[str, float]]:
    """The id, the hypothesis (blanks collapsed) and the features of one object, checked."""
    if not isinstance(obj, dict):
        raise InputError(f"expected a JSON object {{\"id\", \"hyp\", \"features\"}}, got {type(obj).__name__}",
                         path, line_no)
    missing = [k for k in ("id", "hyp", "features") if k not in obj]
    if missing:
        raise InputError(f"expected the keys \"id\", \"hyp\" and \"features\"; {', '.join(missing)} missing",
                         path, line_no)
    sid, hyp, features = obj["id"], obj["hyp"], obj["features"]
    if not isinstance(sid, int) or isinstance(sid, bool) or sid < 0:
        raise InputError(f"\"id\" must be a non-negative integer, got {sid!r}", path, line_no)
    if not isinstance(hyp, str):
        raise InputError(f"\"hyp\" must be a string, got {type(hyp).__name__}", path, line_no)
    if "|||" in hyp or "\n" in hyp or "\r" in hyp:
        raise InputError("\"hyp\" holds '|||' or a line break, which an n-best line cannot hold", path, line_no)
    if not isinstance(features, dict):
        raise InputError(f"\"features\" must be an object name -> number, got {type(features).__name__}",
                         path, line_no)
    values = {}
    for name, value in features.items():
        if not _NAME.fullmatch(name):
            raise InputError(f"feature name {name!r} must be non-empty, without blanks, '=', ':' or '|'",
                             path, line_no)
        number = _finite(value)
        if number is None:
            raise InputError(f"feature {name!r} must be a finite number, got {value!r}", path, line_no)
        values[name] = number
    return sid, " ".join(hyp.split()), values


def _finite(value) -> float | None:
    """``value`` as a finite double, or None (not a number, a bool, or too large)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except OverflowError:       # an integer beyond a double
        return None
    return number if math.isfinite(number) else None
