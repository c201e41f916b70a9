"""Reference translations: one file per reference set, or cdec devset lines.

Tokens are split on ASCII spaces and tabs (as Moses does); references are kept as
token lists per sentence and turned into arrays by :func:`encode_references`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..fileio import read_text_lines

_SPLIT = re.compile(r"[ \t]+")


def tokenize(line: str) -> list[str]:
    """Split on runs of ASCII spaces and tabs; leading/trailing blanks give no token."""
    return [t for t in _SPLIT.split(line) if t]


@dataclass
class References:
    """``sentences[s]`` is the list of reference strings of sentence ``s``."""

    sentences: list[list[str]]
    source: str  # file names, for messages

    def __len__(self) -> int:
        return len(self.sentences)

    @property
    def uniform_count(self) -> int | None:
        """The number of references per sentence if it is the same for all, else None."""
        counts = {len(r) for r in self.sentences}
        return counts.pop() if len(counts) == 1 else None


def read_references(paths: str | os.PathLike | Sequence[str | os.PathLike]) -> References:
    """Read line-aligned reference files (line i of each = a reference of sentence i):
    one path, or a list with one file per reference set.

    Every file must have as many lines as the first; gzip is read transparently.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    if not paths:
        raise InputError("no reference file given")
    names: list[str] = [os.fspath(p) for p in paths]
    columns: list[list[str]] = []
    for path in names:
        lines = read_text_lines(path)
        if not lines:
            raise InputError("empty reference file", path)
        if columns and len(lines) != len(columns[0]):
            raise InputError(
                f"has {len(lines)} lines, expected {len(columns[0])} (as many as {names[0]})", path
            )
        columns.append(lines)
    return References([list(refs) for refs in zip(*columns)], ", ".join(names))


def read_devset(path: str) -> References:
    """Read cdec devset lines ``source ||| ref1 ||| ref2 ...`` (at least one reference)."""
    sentences = []
    for i, line in enumerate(read_text_lines(path), 1):
        fields = line.split("|||")
        if len(fields) < 2:
            raise InputError("expected 'source ||| reference [||| reference ...]'", path, i)
        sentences.append([f.strip(" \t") for f in fields[1:]])
    if not sentences:
        raise InputError("empty devset file", path)
    return References(sentences, os.fspath(path))


#: str.translate table of ASCII case folding (Moses's case:false: C tolower per byte)
_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


def _lower_ascii(text: str) -> str:
    return text.translate(_ASCII_LOWER)


def encode_references(refs: References, vocab, lowercase: bool = False, ascii_case: bool = False):
    """Reference tokens as arrays of word ids interned into ``vocab``; ``lowercase``
    lowercases them first (Unicode rules, or ASCII letters only with ``ascii_case``:
    mtplug.metrics.bleu.BleuConfig).

    Returns ``(sent_ptr int64 [S + 1], tok_ptr int64 [R + 1], tokens int32)``: the
    references of sentence s are rows sent_ptr[s]:sent_ptr[s+1] of the token CSR.
    """
    sent_ptr = [0]
    tok_ptr = [0]
    tokens: list[int] = []
    add = vocab.add
    for sent in refs.sentences:
        for ref in sent:
            text = (_lower_ascii(ref) if ascii_case else ref.lower()) if lowercase else ref
            tokens.extend(add(t.encode("utf-8")) for t in tokenize(text))
            tok_ptr.append(len(tokens))
        sent_ptr.append(len(tok_ptr) - 1)
    return (
        np.asarray(sent_ptr, dtype=np.int64),
        np.asarray(tok_ptr, dtype=np.int64),
        np.asarray(tokens, dtype=np.int32),
    )
