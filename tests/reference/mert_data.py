"""The slow, obvious features.dat / scores.dat readers (text form only).

These are mtplug.formats.mert_data's original pure-Python line loops, kept unchanged in
behaviour as the reference the compiled scanner (pyx/_mertdata_scan.pyx) is tested
against. Same signatures and return values as the public readers.
"""

from __future__ import annotations

import os

import numpy as np

from mtplug.errors import InputError
from mtplug.fileio import decode_line, iter_chunks
from mtplug.metrics.bleu import N_STATS

_FEAT_BEGIN = "FEATURES_TXT_BEGIN_0"
_FEAT_END = "FEATURES_TXT_END_0"
_SCORE_BEGIN = "SCORES_TXT_BEGIN_0"
_SCORE_END = "SCORES_TXT_END_0"


def _lines(path: str):
    """(line number, text) of a possibly gzipped UTF-8 file, CR stripped."""
    for chunk, first in iter_chunks(path):
        raws = chunk.split(b"\n")
        if raws[-1] == b"":
            raws.pop()
        for i, raw in enumerate(raws):
            yield first + i, decode_line(raw.rstrip(b"\r"), path, first + i)


def _parse_header(line: str, tag: str, path: str, ln: int) -> list[str]:
    fields = line.split()
    if len(fields) < 4 or fields[0] != tag:
        raise InputError(f"expected '{tag} <sentence> <count> <dim> ...', got {line[:60]!r}", path, ln)
    for f in fields[1:4]:
        if not f.isdigit():
            raise InputError(f"expected '{tag} <sentence> <count> <dim> ...', got {line[:60]!r}", path, ln)
    return fields


def read_features(path: str, space) -> dict:
    """Read a features.dat into arrays, interning names into ``space`` (FeatureSpace).

    Returns ``sent_ids`` int32, ``dense`` float64 [n, n_dense], and the sparse CSR
    (``sparse_indptr``, ``sparse_ids``, ``sparse_values``). Sentence blocks may come
    in any order; a later file may repeat sentences (it is a later iteration).
    """
    path = os.fspath(path)
    sids: list[int] = []
    dense_rows: list[np.ndarray] = []
    sp_ptr = [0]
    sp_ids: list[int] = []
    sp_vals: list[float] = []
    it = _lines(path)
    n_dense = None
    for ln, line in it:
        if not line.strip():
            continue
        head = _parse_header(line, _FEAT_BEGIN, path, ln)
        sid, count, dim = int(head[1]), int(head[2]), int(head[3])
        names = head[4:]
        if len(names) != dim:
            raise InputError(f"header announces {dim} dense features but names {len(names)}", path, ln)
        if n_dense is None:
            space.define_dense(names, path)
            n_dense = dim
        elif dim != n_dense or names != space.feature_names[:n_dense]:
            raise InputError("dense feature names differ from the first block's", path, ln)
        for _ in range(count):
            ln, line = next(it, (ln + 1, None))
            if line is None or line.startswith(_FEAT_END):
                raise InputError(f"block of sentence {sid} ends before its {count} lines", path, ln)
            toks = line.split()
            if len(toks) < dim:
                raise InputError(f"expected {dim} dense values, got {len(toks)}", path, ln)
            try:
                row = np.array(toks[:dim], dtype=np.float64)
            except ValueError:
                raise InputError(f"expected {dim} numbers, got {' '.join(toks[:dim])[:80]!r}", path, ln) from None
            if not np.all(np.isfinite(row)):
                raise InputError("feature value is NaN or infinite", path, ln)
            entries = {}
            for tok in toks[dim:]:
                name, eq, val = tok.rpartition("=")
                if not eq or not name:
                    raise InputError(f"expected 'name=value' after the dense values, got {tok!r}", path, ln)
                try:
                    v = float(val)
                except ValueError:
                    raise InputError(f"expected a number in {tok!r}", path, ln) from None
                if not np.isfinite(v):
                    raise InputError(f"feature value in {tok!r} is NaN or infinite", path, ln)
                fid = space.names.add(name.encode("utf-8"))
                if fid in entries or fid < dim:
                    raise InputError(f"feature {name!r} twice on one line", path, ln)
                entries[fid] = v
            for fid in sorted(entries):
                sp_ids.append(fid)
                sp_vals.append(entries[fid])
            sp_ptr.append(len(sp_ids))
            dense_rows.append(row)
            sids.append(sid)
        ln, line = next(it, (ln + 1, None))
        if line is None or line.strip() != _FEAT_END:
            raise InputError(f"expected {_FEAT_END} after {count} lines of sentence {sid}", path, ln)
    if not sids:
        raise InputError("empty features file", path)
    return {
        "sent_ids": np.asarray(sids, dtype=np.int32),
        "dense": np.array(dense_rows, dtype=np.float64).reshape(len(sids), n_dense),
        "sparse_indptr": np.asarray(sp_ptr, dtype=np.int64),
        "sparse_ids": np.asarray(sp_ids, dtype=np.int32),
        "sparse_values": np.asarray(sp_vals, dtype=np.float64),
    }


def read_scores(path: str) -> tuple[np.ndarray, np.ndarray]:
    """Read a BLEU scores.dat: ``(sent_ids int32 [n], stats int32 [n, 9])``."""
    path = os.fspath(path)
    sids: list[int] = []
    rows: list[list[int]] = []
    it = _lines(path)
    for ln, line in it:
        if not line.strip():
            continue
        head = _parse_header(line, _SCORE_BEGIN, path, ln)
        sid, count, dim = int(head[1]), int(head[2]), int(head[3])
        if dim != N_STATS or head[4:5] != ["BLEU"]:
            raise InputError(f"expected BLEU statistics ({N_STATS} per line), got {' '.join(head[3:])!r}", path, ln)
        for _ in range(count):
            ln, line = next(it, (ln + 1, None))
            if line is None or line.startswith(_SCORE_END):
                raise InputError(f"block of sentence {sid} ends before its {count} lines", path, ln)
            toks = line.split()
            if len(toks) != N_STATS:
                raise InputError(f"expected {N_STATS} statistics, got {len(toks)}", path, ln)
            try:
                row = [int(t) for t in toks]
            except ValueError:
                raise InputError(
                    f"expected {N_STATS} non-negative integers, got {line.strip()!r} "
                    "(reflen:average files cannot be read back)", path, ln) from None
            if min(row) < 0:
                raise InputError(f"negative statistic in {line.strip()!r}", path, ln)
            rows.append(row)
            sids.append(sid)
        ln, line = next(it, (ln + 1, None))
        if line is None or line.strip() != _SCORE_END:
            raise InputError(f"expected {_SCORE_END} after {count} lines of sentence {sid}", path, ln)
    if not sids:
        raise InputError("empty scores file", path)
    return np.asarray(sids, dtype=np.int32), np.asarray(rows, dtype=np.int32).reshape(-1, N_STATS)
