"""N-best lists of neural systems (fairseq, Marian, JSON lines) read as Moses n-best lists.

Each reader (:mod:`~mtplug.formats.fairseq_nbest`, :mod:`~mtplug.formats.marian_nbest`,
:mod:`~mtplug.formats.jsonl_nbest`) turns its lines into Moses n-best lines; the
commands and :meth:`mtplug.corpus.NbestCorpus.from_nbest` read a temporary Moses copy
(:func:`moses_copies`) with the compiled Moses reader, so every store, statistic and
message of the Moses reader serves them too. An error about a copy is raised naming
the original file and its line.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import zlib
from array import array
from collections.abc import Iterator, Sequence

import numpy as np

from ..errors import InputError
from ..fileio import open_binary
from . import fairseq_nbest, jsonl_nbest, marian_nbest

#: the formats --nbest-format takes ("auto": told apart by content, :func:`detect_nbest_format`)
NBEST_FORMATS = ("auto", "moses", "marian", "fairseq", "jsonl")
_READERS = {"marian": marian_nbest, "fairseq": fairseq_nbest, "jsonl": jsonl_nbest}

#: bytes read to tell the format (fairseq's log lines may come first)
_SNIFF_BYTES = 1 << 20
_FAIRSEQ_LINE = re.compile(rb"[STHDPAWIE]-[0-9]+(?:_[0-9]+)?\t")
_ALIGNMENT = re.compile(rb"\s*[0-9]+-[0-9]+(?:\s+[0-9]+-[0-9]+)*\s*")
#: the largest sentence id the store holds (int32, as the Moses reader's)
MAX_SENTENCE_ID = 2**31 - 1


def detect_nbest_format(path: str) -> str:
    """``moses``, ``marian``, ``fairseq`` or ``jsonl``, from the first lines of ``path``
    that tell: a ``H-0<TAB>`` (``S-``, ``D-`` ...) line is fairseq, a line starting with
    ``{`` JSON lines, a ``|||`` line whose third field is a word alignment or Marian's
    ``WordScores=`` Marian, any other ``|||`` line Moses (which also reads Marian's plain
    lines). A file that tells nothing (empty, unreadable, missing) is ``moses``, whose
    reader reports what is wrong with it."""
    try:
        with open_binary(path) as fh:
            head = fh.read(_SNIFF_BYTES)
    except (InputError, EOFError, OSError, zlib.error):
        return "moses"
    for raw in head.split(b"\n"):
        line = raw.strip()
        if not line:
            continue
        if _FAIRSEQ_LINE.match(raw):
            return "fairseq"
        if line.startswith(b"{"):
            return "jsonl"
        if b"|||" in line:
            fields = line.split(b"|||")
            if len(fields) >= 5 and (_ALIGNMENT.fullmatch(fields[2]) or fields[2].strip().startswith(b"WordScores=")):
                return "marian"
            return "moses"
    return "moses"


@contextlib.contextmanager
def moses_copies(paths: Sequence[str], fmt: str = "auto", *, fairseq_text: str = "D",
                 fairseq_positional: bool = False) -> Iterator[list[str]]:
    """``paths`` with each n-best file that is not in Moses's format replaced by a
    temporary Moses copy (removed at the end), for any reader of Moses n-best lists.

    ``fmt``: one of :data:`NBEST_FORMATS` for every file (``auto``: each file's own,
    :func:`detect_nbest_format`); ``fairseq_text``/``fairseq_positional``: the options of
    :func:`mtplug.formats.fairseq_nbest.moses_lines`. An :class:`InputError` raised in the
    body about a copy is raised again naming the original file and line (and a copy a
    message names, by its original's name).
    """
    if fmt not in NBEST_FORMATS:
        raise ValueError(f"unknown n-best format {fmt!r}; expected one of {', '.join(NBEST_FORMATS)}")
    copies: dict[str, tuple[str, np.ndarray]] = {}     # copy -> (original, line number of each copy line)
    out = []
    try:
        for path in paths:
            kind = detect_nbest_format(path) if fmt == "auto" else fmt
            if kind == "moses":
                out.append(path)
                continue
            options = {"text": fairseq_text, "positional": fairseq_positional} if kind == "fairseq" else {}
            copy, line_map = _write_copy(path, _READERS[kind], options)
            copies[copy] = (os.fspath(path), line_map)
            out.append(copy)
        try:
            yield out
        except InputError as err:
            message, where, line = err.message, err.path, err.line
            if where in copies:
                where, line_map = copies[where]
                line = int(line_map[line - 1]) if line and line <= len(line_map) else None
            for copy, (original, _) in copies.items():   # a message about another file may name a copy
                message = message.replace(copy, original)
            if (message, where, line) == (err.message, err.path, err.line):
                raise
            raise InputError(message, where, line) from None
    finally:
        for copy in copies:
            with contextlib.suppress(OSError):
                os.unlink(copy)


def _write_copy(path: str, reader, options: dict) -> tuple[str, np.ndarray]:
    """The Moses copy of ``path`` (a temporary file) and the line number in ``path`` of
    each of its lines, int64 [n]. The lines are kept as bytes in one buffer and numbers
    in arrays (no object per hypothesis) until sorted by id, if the format needs it."""
    text = bytearray()
    starts, sids, line_nos = array("q"), array("q"), array("q")
    for line_no, sid, line in reader.moses_lines(path, **options):
        if sid > MAX_SENTENCE_ID:
            raise InputError(f"sentence id {sid} is larger than the largest mtplug holds ({MAX_SENTENCE_ID})",
                             path, line_no)
        starts.append(len(text))
        sids.append(sid)
        line_nos.append(line_no)
        text += line.encode("utf-8") + b"\n"
    if not line_nos:
        raise InputError("empty file: no hypotheses", path)
    bounds = np.append(np.frombuffer(starts, dtype=np.int64), len(text))
    order = (np.argsort(np.frombuffer(sids, dtype=np.int64), kind="stable") if reader.SORT_BY_ID
             else np.arange(len(line_nos)))
    fd, copy = tempfile.mkstemp(prefix="mtplug-nbest-", suffix=".txt")
    try:
        with os.fdopen(fd, "wb") as fh:
            view = memoryview(text)
            for i in order.tolist():
                fh.write(view[bounds[i]:bounds[i + 1]])
    except BaseException:
        os.unlink(copy)
        raise
    return copy, np.frombuffer(line_nos, dtype=np.int64)[order]
