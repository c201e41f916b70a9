"""dtrain's weight files: read the start weights, write the result.

dtrain writes ``Name<TAB>value`` per non-zero weight with 17 significant digits
(``%.17g``), to a file (gzipped when the name ends in ``.gz``) or to stdout for
``-``. mtplug writes the same lines after one ``# mtplug dtrain seed=S ...`` comment
line, which cdec's weights reader (``Weights::InitFromFile``, used for dtrain's
``input_weights`` and by the decoder's ``-w``) skips. Per-epoch files (``keep``) are
written like cdec's ``Weights::WriteToFile``: ``Name value``, gzipped.
Start weights are read with cdec's rules (:mod:`mtplug.formats.cdec_weights`).
"""

from __future__ import annotations

import gzip
import sys
from collections.abc import Iterable

from ..fileio import atomic_output
from ..formats.cdec_weights import format_cdec_weights, read_cdec_weights


def read_start_weights(path: str | None) -> dict[str, float]:
    """``{name: value}`` in file order; empty (all zero) when ``path`` is None."""
    if path is None:
        return {}
    return dict(read_cdec_weights(path).items())


def write_weights(path: str, items: Iterable[tuple[str, float]], sep: str = "\t",
                  comment: str | None = None, stdout=None) -> None:
    """Write weights to ``path`` ('-': ``stdout``, default sys.stdout); ``.gz`` is gzipped
    (header time 0, so equal weights give equal bytes). Files are replaced atomically."""
    text = format_cdec_weights(items, comment, sep)
    if path == "-":
        out = stdout if stdout is not None else sys.stdout
        out.write(text)
        out.flush()
        return
    data = text.encode("utf-8")
    if path.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    with atomic_output(path, "wb") as fh:
        fh.write(data)
