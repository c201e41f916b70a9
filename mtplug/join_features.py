"""Per-hypothesis features from other files joined into a Moses n-best list (what
nbest-reranker's ``augmenter.py`` does, without computing the features).

A feature file holds either one value per hypothesis, line i for the n-best's i-th
hypothesis line (blank lines of the n-best are not hypotheses), or ``id rank value``
lines (blanks or tabs between), ``rank`` counting a sentence's hypotheses from 0 in the
n-best's order, in any order. Each feature is added to every line's feature field as
the Moses label ``NAME= value`` (a dense column ``NAME_0``; a name with ``_`` is a sparse
feature, as in any Moses n-best). Everything is checked before anything is written.
"""

from __future__ import annotations

import itertools
import re
from array import array
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .errors import InputError
from .fileio import atomic_output, iter_text_lines
from .formats.nbest_formats import MAX_SENTENCE_ID
from .formats.number_text import FIELD_SEP, format_shortest, parse_number

#: a feature name an n-best line can carry: no blanks, '=', ':' or '|'
_NAME = re.compile(r"[^\s=:|]+")


@dataclass(frozen=True)
class NbestIndex:
    """Where each hypothesis line of an n-best list is: ``sids`` int64 [n] (its sentence,
    non-decreasing), ``ranks`` int64 [n] (its place among its sentence's lines, from 0),
    and the feature names its lines give."""

    sids: np.ndarray
    ranks: np.ndarray
    names: frozenset

    def __len__(self) -> int:
        return len(self.sids)

    def span(self, sid: int) -> tuple[int, int]:
        """``(first, count)``: the hypotheses of sentence ``sid`` are ``first .. first + count - 1``."""
        lo, hi = np.searchsorted(self.sids, [sid, sid + 1])
        return int(lo), int(hi - lo)


def parse_feature_specs(specs: Sequence[str]) -> list[tuple[str, str]]:
    """``NAME=FILE`` texts (``--feature``) as ``(name, path)`` pairs; a bad or repeated name
    raises :class:`InputError`."""
    out: list[tuple[str, str]] = []
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not path or not _NAME.fullmatch(name):
            raise InputError(f"--feature {spec!r}: expected NAME=FILE, NAME without blanks, '=', ':' or '|'")
        if any(name == n for n, _ in out):
            raise InputError(f"--feature names {name} twice")
        out.append((name, path))
    return out


def index_nbest(path: str) -> NbestIndex:
    """The :class:`NbestIndex` of a Moses n-best file. A line without 3 fields, a bad or
    decreasing sentence id raises :class:`InputError` naming the file and line."""
    sids, names = array("q"), set()
    prev = -1
    for line_no, line in iter_text_lines(path):
        if not line.strip():
            continue
        fields = line.split("|||")
        if len(fields) < 3:
            raise InputError("expected at least 3 fields 'id ||| hypothesis ||| features', found fewer", path, line_no)
        sid_text = fields[0].strip()
        if not sid_text.isdigit() or not sid_text.isascii():
            raise InputError(f"expected a non-negative integer sentence id, got {sid_text!r}", path, line_no)
        sid = int(sid_text)
        if sid > MAX_SENTENCE_ID:
            raise InputError(f"sentence id {sid} is larger than the largest mtplug holds ({MAX_SENTENCE_ID})",
                             path, line_no)
        if sid < prev:
            raise InputError(f"sentence id {sid} is smaller than the previous line's: n-best lists must be sorted "
                             "by sentence", path, line_no)
        prev = sid
        sids.append(sid)
        names.update(_feature_names(fields[2]))
    if not sids:
        raise InputError("empty file: no hypotheses", path)
    sid_arr = np.frombuffer(sids, dtype=np.int64)
    # sorted ids: a line's rank is its distance from its sentence's first line
    ranks = np.arange(len(sid_arr), dtype=np.int64) - np.searchsorted(sid_arr, sid_arr)
    return NbestIndex(sid_arr, ranks, frozenset(names))


def _feature_names(field: str) -> list[str]:
    """The names a feature field gives: Moses labels (``LM0=``, ``d:``) and cdec's
    ``name=value`` tokens."""
    names = []
    for tok in field.split():
        if tok.endswith(("=", ":")):
            names.append(tok[:-1])
        elif "=" in tok:
            names.append(tok.split("=", 1)[0])
    return names


def read_values(path: str, index: NbestIndex, nbest: str) -> np.ndarray:
    """The values float64 [n] of one feature file for the hypotheses of ``index`` (the
    n-best ``nbest``), in its order: one value per line, or ``id rank value`` lines (told
    apart by the first line). Bad, missing, extra or repeated values raise
    :class:`InputError` naming the file and line."""
    lines = iter_text_lines(path)
    for line_no, line in lines:
        tokens = FIELD_SEP.split(line.strip())
        if tokens == [""]:
            raise InputError("blank line; expected one value per line or 'id rank value'", path, line_no)
        if len(tokens) == 1:
            return _per_line(path, line_no, tokens[0], lines, index, nbest)
        if len(tokens) == 3:
            return _keyed(path, line_no, tokens, lines, index, nbest)
        raise InputError(f"expected one value per line or 'id rank value', found {len(tokens)} fields", path, line_no)
    raise InputError(f"empty file; expected a value for each of the {len(index)} hypotheses of {nbest}", path)


def _per_line(path, first_no, first, lines, index: NbestIndex, nbest: str) -> np.ndarray:
    values = np.empty(len(index), dtype=np.float64)
    n = 0
    for line_no, token in itertools.chain([(first_no, first)], ((no, text.strip()) for no, text in lines)):
        if n == len(index):
            raise InputError(f"more values than the {len(index)} hypotheses of {nbest}", path, line_no)
        if not token or len(FIELD_SEP.split(token)) != 1:
            raise InputError("expected one number on the line (a value per n-best hypothesis)", path, line_no)
        values[n] = parse_number(token, path, line_no)
        n += 1
    if n < len(index):
        raise InputError(f"has {_count_of(n, 'value')}, {nbest} has {_count_of(len(index), 'hypothesis')}", path)
    return values


def _keyed(path, first_no, first, lines, index: NbestIndex, nbest: str) -> np.ndarray:
    values = np.empty(len(index), dtype=np.float64)
    seen = np.zeros(len(index), dtype=np.int64)       # the line that gave each value, 0: none yet
    rows = itertools.chain([(first_no, first)],
                           ((no, FIELD_SEP.split(text.strip())) for no, text in lines if text.strip()))
    for line_no, tokens in rows:
        if len(tokens) != 3:
            raise InputError(f"expected 'id rank value', found {len(tokens)} fields", path, line_no)
        sid, rank = (_count(tok, what, path, line_no) for tok, what in zip(tokens, ("id", "rank")))
        first, held = index.span(sid) if sid <= MAX_SENTENCE_ID else (0, 0)
        if rank >= held:
            raise InputError(f"sentence {sid}, rank {rank} is not in {nbest} (sentence {sid} has "
                             f"{_count_of(held, 'hypothesis')}, ranks from 0)", path, line_no)
        i = first + rank
        if seen[i]:
            raise InputError(f"sentence {sid}, rank {rank} given twice (first on line {seen[i]})", path, line_no)
        seen[i] = line_no
        values[i] = parse_number(tokens[2], path, line_no)
    missing = np.flatnonzero(seen == 0)
    if len(missing):
        i = int(missing[0])
        raise InputError(f"no value for sentence {index.sids[i]}, rank {index.ranks[i]} of {nbest} ({len(missing)} "
                         f"of its {len(index)} hypotheses have none)", path)
    return values


def _count_of(n: int, noun: str) -> str:
    """``1 value``, ``2 values``, ``1 hypothesis``, ``0 hypotheses``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun[:-2] + 'es' if noun.endswith('is') else noun + 's'}"


def _count(token: str, what: str, path: str, line_no: int) -> int:
    if not token.isdigit() or not token.isascii():
        raise InputError(f"expected a non-negative integer {what}, got {token!r}", path, line_no)
    return int(token)


def join_features(nbest: str, features: Sequence[tuple[str, str]], out: str) -> int:
    """Write ``nbest`` (a Moses n-best file) to ``out`` (``-``: stdout) with the features
    ``(name, file)`` added to every hypothesis line, in the order given; the other fields
    are copied as they are, blank lines dropped. Everything is read and checked first: a
    name the n-best has already, or a bad feature file, raises :class:`InputError` and
    nothing is written. Returns the number of lines written."""
    index = index_nbest(nbest)
    for name, _ in features:
        if name in index.names:
            raise InputError(f"already has a feature {name}: name the joined feature otherwise", nbest)
    columns = [(name, read_values(path, index, nbest)) for name, path in features]
    with atomic_output(out) as fh:
        i = 0
        for _, line in iter_text_lines(nbest):
            if not line.strip():
                continue
            fields = line.split("|||")
            added = " ".join(f"{name}= {format_shortest(values[i])}" for name, values in columns)
            fields[2] = f" {' '.join(fields[2].split() + ([added] if added else []))} "
            fh.write("|||".join(fields).strip() + "\n")
            i += 1
    return i

