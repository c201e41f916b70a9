"""Find and read the forests of a tuning set, whatever wrote them.

A path given to ``--forests`` is either

* a directory of per-sentence files, the sentence id being the file name's number:
  ``<id>.bin.gz`` (cdec ``-O``, Boost binary), ``<id>.json.gz`` / ``<id>.json`` (cdec's older
  JSON), ``<id>.gz`` / ``<id>.txt`` / ``<id>`` (Moses ``-output-search-graph-hypergraph``, as kbmira
  ``--hgdir`` reads them); or
* one file holding every sentence: PLF lattices (one per line, line i = sentence i) or a
  Moses search graph (``-output-search-graph``; sentence ids in the lines).

Several paths (e.g. the forests of several decoding iterations) accumulate.
"""

from __future__ import annotations

import os
import re
import zlib
from collections.abc import Iterator

from ..errors import InputError
from ..fileio import open_binary
from ..hypergraph import Hypergraph

_DIR_PATTERNS = (
    ("cdec-binary", re.compile(r"^(\d+)\.bin\.gz$")),
    ("cdec-json", re.compile(r"^(\d+)\.json(?:\.gz)?$")),
    ("moses-hypergraph", re.compile(r"^(\d+)(?:\.gz|\.txt)?$")),
)


def _read_one(kind: str, path: str) -> Hypergraph:
    if kind == "cdec-binary":
        from .cdec_forest import read_cdec_forest

        return read_cdec_forest(path)
    if kind == "cdec-json":
        from .cdec_json import read_cdec_json

        return read_cdec_json(path)
    from .moses_hypergraph import read_moses_hypergraph

    return read_moses_hypergraph(path)


def forest_files(directory: str) -> list[tuple[int, str, str]]:
    """``(sentence id, path, format)`` of the forest files in ``directory``, by id.

    Files of no known name are ignored; a directory with none, or with two files for
    one sentence, is an InputError."""
    try:
        names = sorted(os.listdir(directory))
    except OSError as err:  # permission denied, removed meanwhile, ...
        raise InputError(f"cannot list the directory ({err.strerror})", directory) from None
    found: dict[int, tuple[str, str]] = {}
    for name in names:
        for kind, pattern in _DIR_PATTERNS:
            m = pattern.match(name)
            if m:
                sid = int(m.group(1))
                path = os.path.join(directory, name)
                if sid in found:
                    raise InputError(f"two forests for sentence {sid}: {os.path.basename(found[sid][0])} and "
                                     f"{name}", directory)
                found[sid] = (path, kind)
                break
    if not found:
        raise InputError("no forest files (expected <id>.bin.gz, <id>.json.gz or Moses hypergraph files <id>.gz)",
                         directory)
    return [(sid, path, kind) for sid, (path, kind) in sorted(found.items())]


def _sniff(path: str) -> str:
    with open_binary(path) as fh:
        try:
            head = fh.read(4096)
        except (OSError, EOFError, zlib.error) as err:
            raise InputError(f"corrupt or truncated compressed data ({err})", path) from None
    text = head.lstrip()
    if text.startswith(b"("):
        return "plf"
    if b"hyp=" in head:
        return "moses-searchgraph"
    expected = ("PLF lattices (lines starting with '(') or a Moses search graph (lines with 'hyp='), or a "
                "directory of per-sentence forests")
    raise InputError(f"{'empty file' if not head else 'not a forest file'}: expected {expected}", path)


def read_forests(paths: list[str]) -> Iterator[tuple[int, Hypergraph, str, int | None]]:
    """Yield ``(sentence id, hypergraph, file, line)`` for every forest under ``paths`` (in
    order); file and line (None where a forest is a whole file or several lines) say where
    it came from, for messages."""
    for path in paths:
        path = os.fspath(path)
        if os.path.isdir(path):
            for sid, file, kind in forest_files(path):
                yield sid, _read_one(kind, file), file, None
        elif not os.path.exists(path):
            raise InputError("no such file or directory", path)
        elif _sniff(path) == "plf":
            from .plf import read_plf

            for sid, hg in enumerate(read_plf(path)):
                yield sid, hg, path, sid + 1   # one lattice per line, blank lines refused
        else:
            from .moses_searchgraph import read_search_graph

            for sid, hg in sorted(read_search_graph(path).items()):
                yield sid, hg, path, None
