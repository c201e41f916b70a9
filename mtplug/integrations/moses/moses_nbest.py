"""Features/scores files as Moses's kbmira holds them (mosesdecoder 34452895,
``mert/HypPackEnumerator.cpp``, ``FeatureDataIterator.cpp``, ``HopeFearDecoder.cpp``).

mtplug's own store (:func:`mtplug.formats.mert_data.read_mert_data`) merges the files by
sentence id, drops exact duplicates and numbers sparse features its own way. Moses's
kbmira instead

* pairs the k-th block of every file (position, not sentence id) and lists the block's
  rows file by file;
* parses every value to double and stores it as float;
* numbers feature names in one global table (``SparseVector::encode``) in the order it
  first meets them: the ``--dense-init`` names (``name= value`` form only, a repeated
  name becoming ``name_1``, ``name_2``, ...), the ``--sparse-init`` names, then the data's
  sparse names block by block, file by file, row by row, left to right; a row's sparse
  features are summed in that order;
* keeps a row only when its bucket in a 16-bucket hash set is still free
  (pyx/_moses_dedup.pyx: Moses's duplicate check compares an item with itself), so at
  most 16 rows per sentence.

:func:`read_moses_nbest` returns those rows as arrays for the float32 kernels of
pyx/_kbmira_m2.pyx; :func:`read_dense_init` and :func:`read_sparse_init` read the start
weights as Moses's ``InitialiseWeights`` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...errors import InputError

F32 = np.float32


@dataclass
class MosesRows:
    """Moses's rows, in its order. n rows, D dense features, S blocks (sentences).

    dense float32 [n, D]; indptr int64 [n + 1], ids int64 [nnz] (weight indices:
    ``D + SparseVector id``, ascending per row), vals float32 [nnz]; stats float32
    [n, k]; offsets int64 [S + 1]; names: SparseVector's table (id -> name); sctype:
    the scores files' scorer; n_read: rows before Moses's de-duplication."""

    dense: np.ndarray
    indptr: np.ndarray
    ids: np.ndarray
    vals: np.ndarray
    stats: np.ndarray
    offsets: np.ndarray
    names: list
    sctype: str
    n_read: int

    @property
    def n_dense(self) -> int:
        """D, the dense features of the files."""
        return self.dense.shape[1]

    @property
    def n_sentences(self) -> int:
        """S, the blocks (sentences) of the first features file."""
        return len(self.offsets) - 1

    @property
    def n_weights(self) -> int:
        """Size of the weight vector: the dense weights, then one per SparseVector id."""
        return self.n_dense + len(self.names)


def read_dense_init(path: str) -> tuple[np.ndarray, list, bool]:
    """``(float32 [D] weights, names, legacy)`` of a ``--dense-init`` file as Moses reads
    it: the first line without ``=`` is the legacy init.opt form (its numbers; no names;
    legacy True); otherwise every line is ``name= value`` (the name before the last
    ``=``, the value from 2 characters after it), consecutive repeats of a name renamed
    ``name_1``, ``name_2``, ..."""
    from ...fileio import read_text_lines

    lines = read_text_lines(path)
    if not lines:
        raise InputError("empty file; expected the dense weights", path)
    if "=" not in lines[0]:
        try:
            return np.array([float(t) for t in lines[0].split()], dtype=F32), [], True
        except ValueError:
            raise InputError(f"expected numbers, got {lines[0]!r}", path, 1) from None
    names, values, last, count = [], [], None, 1
    for number, line in enumerate(lines, 1):
        eq = line.rfind("=")
        if eq < 0:
            raise InputError(f"expected 'name= value', got {line!r}", path, number)
        name = line[:eq]
        try:
            values.append(float(line[eq + 2:]))
        except ValueError:
            raise InputError(f"expected 'name= value', got {line!r}", path, number) from None
        count = count if name == last else 1
        last = name
        names.append(name)
        if count > 1:
            names[-1] = f"{name}_{count}"
            if count == 2:
                names[-2] = f"{names[-2]}_1"
        count += 1
    return np.array(values, dtype=F32), names, False


def read_sparse_init(path: str) -> list:
    """``[(name, value)]`` of a ``--sparse-init`` file: whitespace-separated name value
    pairs (Moses's ``opt >> name >> val``, which stops at the first pair it cannot read)."""
    from ...fileio import read_text_lines

    tokens = " ".join(read_text_lines(path)).split()
    pairs = []
    for i in range(0, len(tokens) - 1, 2):
        try:
            pairs.append((tokens[i], float(tokens[i + 1])))
        except ValueError:
            break
    return pairs


def _blocks(sent_ids: np.ndarray) -> np.ndarray:
    """int64 [B + 1]: the starts of the runs of equal sentence ids (one per block)."""
    if len(sent_ids) == 0:
        return np.zeros(1, dtype=np.int64)
    cut = np.flatnonzero(np.diff(sent_ids)) + 1
    return np.concatenate([[0], cut, [len(sent_ids)]]).astype(np.int64)


def _ranges(starts: np.ndarray, lengths: np.ndarray, indptr: np.ndarray) -> np.ndarray:
    """int64 [indptr[-1]]: the indices starts[i] .. starts[i] + lengths[i] - 1 of every i in
    turn (indptr: the running sum of lengths, from 0)."""
    within = np.arange(indptr[-1], dtype=np.int64) - np.repeat(indptr[:-1], lengths)
    return np.repeat(starts.astype(np.int64), lengths) + within


def read_moses_nbest(ffiles: Sequence[str], sfiles: Sequence[str], encoded: Sequence[str] = ()) -> MosesRows:
    """The rows of the features/scores file pairs as Moses's kbmira holds them (module
    docstring). ``encoded``: names SparseVector numbers before the data (the dense-init
    names, then the sparse-init names), in that order."""
    from ..._ext import _moses_dedup
    from ...corpus import FeatureSpace
    from ...formats.mert_data import read_features, read_scores

    if not ffiles:
        raise InputError("no features file: give --ffile FILE")
    if len(ffiles) != len(sfiles):
        raise InputError(f"{len(ffiles)} features files but {len(sfiles)} scores files")
    table: dict = {}
    for name in encoded:
        table.setdefault(name, len(table))
    files: list[tuple] = []
    sctype: str | None = None
    n_dense = None
    for ff, sf in zip(ffiles, sfiles):
        space = FeatureSpace()
        feats = read_features(ff, space)
        sids, stats, kind = read_scores(sf)
        if len(sids) != len(feats["sent_ids"]) or not np.array_equal(sids, feats["sent_ids"]):
            raise InputError(f"sentence blocks do not match those of {ff}", sf)
        if sctype is None:
            sctype, n_dense = kind, feats["dense"].shape[1]
        elif kind != sctype or feats["dense"].shape[1] != n_dense:
            raise InputError(f"holds {kind} statistics with {feats['dense'].shape[1]} dense features; the first "
                             f"pair {sctype} with {n_dense}", sf)
        files.append((feats, stats, space.feature_names, _blocks(feats["sent_ids"])))
    n_blocks = len(files[0][3]) - 1
    for (_, _, _, b), ff in zip(files, ffiles):
        if len(b) - 1 != n_blocks:
            raise InputError(f"has {len(b) - 1} sentence blocks, the first features file {n_blocks} (Moses pairs "
                             "the files block by block)", ff)
    # SparseVector's numbering: each name at its first (block, file, row in block, place in line)
    keys: list[np.ndarray] = []
    cand: list[str] = []
    for f, (feats, _, local, b) in enumerate(files):
        ip, lid = feats["sparse_indptr"], feats["sparse_ids"].astype(np.int64)
        if len(lid) == 0:
            continue
        row = np.repeat(np.arange(len(ip) - 1), np.diff(ip))
        first = np.unique(lid, return_index=True)
        ids_u, at = first[0], first[1]
        r = row[at]
        blk = np.searchsorted(b, r, side="right") - 1
        # within a row a file's own numbering is the line order of names new to the file
        keys.append(np.stack([blk, np.full(len(r), f), r - b[blk], ids_u], axis=1))
        cand.extend(local[i] for i in ids_u.tolist())
    if keys:
        k = np.concatenate(keys)
        for i in np.lexsort(k.T[::-1]).tolist():
            table.setdefault(cand[i], len(table))
    names = list(table)
    # rows in Moses's order: block by block, file by file
    parts = []
    for f, (feats, stats, local, b) in enumerate(files):
        gid_of = np.array([table.get(nm, -1) for nm in local], dtype=np.int64)
        lid = feats["sparse_ids"].astype(np.int64)
        gid = gid_of[lid] if len(lid) else lid
        row_len = np.diff(feats["sparse_indptr"])
        row = np.repeat(np.arange(len(row_len)), row_len)
        o = np.lexsort((gid, row))
        blk = np.searchsorted(b, np.arange(len(row_len)), side="right") - 1
        parts.append(dict(dense=feats["dense"].astype(F32), stats=stats.astype(F32), blk=blk,
                          file=np.full(len(row_len), f), row_len=row_len, gid=gid[o],
                          vals=feats["sparse_values"][o].astype(F32), indptr=feats["sparse_indptr"]))
    blk = np.concatenate([p["blk"] for p in parts])
    fil = np.concatenate([p["file"] for p in parts])
    order = np.lexsort((np.arange(len(blk)), fil, blk))
    dense = np.ascontiguousarray(np.concatenate([p["dense"] for p in parts])[order])
    stats = np.ascontiguousarray(np.concatenate([p["stats"] for p in parts])[order])
    row_len = np.concatenate([p["row_len"] for p in parts])
    base = np.concatenate([p["indptr"][:-1] + sum(len(q["gid"]) for q in parts[:i]) for i, p in enumerate(parts)])
    gid_all = np.concatenate([p["gid"] for p in parts])
    val_all = np.concatenate([p["vals"] for p in parts])
    indptr = np.zeros(len(order) + 1, dtype=np.int64)
    np.cumsum(row_len[order], out=indptr[1:])
    take = _ranges(base[order], row_len[order], indptr)
    gid_all, val_all = gid_all[take], val_all[take]
    offsets = np.zeros(n_blocks + 1, dtype=np.int64)
    np.cumsum(np.bincount(blk[order], minlength=n_blocks), out=offsets[1:])
    # Moses's de-duplication on SparseVector ids
    buckets = _moses_dedup.row_buckets(dense, indptr, np.ascontiguousarray(gid_all), np.ascontiguousarray(val_all))
    keep = _moses_dedup.moses_kept(buckets, offsets)
    kept_rows = np.flatnonzero(keep)
    counts = np.diff(indptr)[kept_rows]
    new_ip = np.zeros(len(kept_rows) + 1, dtype=np.int64)
    np.cumsum(counts, out=new_ip[1:])
    sel = _ranges(indptr[kept_rows], counts, new_ip)
    new_off = np.concatenate([[0], np.cumsum(keep, dtype=np.int64)])[offsets]
    if sctype is None:
        raise InputError("no features file to read")
    return MosesRows(dense=np.ascontiguousarray(dense[kept_rows]), indptr=new_ip,
                     ids=np.ascontiguousarray(gid_all[sel] + n_dense), vals=np.ascontiguousarray(val_all[sel]),
                     stats=np.ascontiguousarray(stats[kept_rows]), offsets=new_off, names=names, sctype=sctype,
                     n_read=len(order))
