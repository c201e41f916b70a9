"""The slow, obvious features.dat / scores.dat text writers: a line at a time, every value
through Python's ``format(x, "g")`` of its float32 rounding (Moses keeps features as float
and prints with iostreams' default, C's %g). pyx/_textio.pyx's block kernels, and so
mtplug.formats.mert_data's writers and the streamed extraction, are tested against them.
"""

from __future__ import annotations

import numpy as np


def _g32(value: float) -> str:
    with np.errstate(over="ignore"):   # beyond float32's range Moses prints inf, as we do
        return f"{float(np.float32(value)):g}"


def features_text(corpus) -> bytes:
    """A store's features.dat, text blocks, one per sentence with hypotheses."""
    names = corpus.feature_names
    n_dense = corpus.n_dense
    out = []
    for s in range(corpus.n_sentences):
        lo, hi = int(corpus.sent_offsets[s]), int(corpus.sent_offsets[s + 1])
        if hi == lo:
            continue
        out.append(f"FEATURES_TXT_BEGIN_0 {s} {hi - lo} {n_dense} {' '.join(names[:n_dense])} \n")
        for h in range(lo, hi):
            cells = [_g32(v) for v in corpus.dense[h].tolist()]
            cells += [f"{names[i]}={_g32(v)}" for i, v in corpus.sparse_row(h)]
            out.append("".join(c + " " for c in cells) + "\n")
        out.append("FEATURES_TXT_END_0\n")
    return "".join(out).encode("utf-8")


def scores_text(corpus) -> bytes:
    """A BLEU store's scores.dat, text blocks; the reference length divided by the
    store's divisor (reflen:average) prints as a float32 %g."""
    div = corpus.ref_len_divisor
    out = []
    for s in range(corpus.n_sentences):
        lo, hi = int(corpus.sent_offsets[s]), int(corpus.sent_offsets[s + 1])
        if hi == lo:
            continue
        out.append(f"SCORES_TXT_BEGIN_0 {s} {hi - lo} 9 BLEU\n")
        for row in corpus.stats[lo:hi].tolist():
            cells = [str(v) for v in row[:8]] + [str(row[8]) if div == 1 else _g32(row[8] / div)]
            out.append("".join(c + " " for c in cells) + "\n")
        out.append("SCORES_TXT_END_0\n")
    return "".join(out).encode("utf-8")
