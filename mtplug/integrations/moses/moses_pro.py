"""Moses's pro (mert/pro.cpp, Moses 34452895), draw for draw: the pairs and bytes its
``pro -r SEED`` writes.

What Moses's pro does, and so this module:

* the features/scores files are read side by side, block by block (the k-th sentence block
  of every file is sentence k, whatever number its header gives); the hypotheses of
  sentence k are those of file 1's block, then file 2's, ..., duplicates kept;
* every hypothesis's smoothed sentence BLEU is computed in float32 (``-b``: with the
  smoothed brevity penalty), and the sentences are sampled one after another from one
  glibc ``rand()`` stream after ``srand(SEED)`` (``pyx/_moses_pro.pyx`` says how);
* sparse features are written in the order in which Moses first met their names (its
  global name ids), reading sentence 1 of every file, then sentence 2, ...

mtplug's own sampler (``--sctype`` of another scorer, ``--sentence-metric`` of another
variant) keeps its thread-independent streams: pro.py chooses.
"""

from __future__ import annotations

import numpy as np

from ...errors import InputError

#: sentence-BLEU variants Moses's pro computes (without and with -b)
MOSES_VARIANTS = {"moses-sentence-bleu": False, "nakov": True}


class NotBleu(Exception):
    """A scores file of another scorer: Moses's pro reads BLEU statistics only (mtplug's
    sampler ranks by that scorer instead)."""


def _read_pair(ff: str, sf: str, space) -> dict:
    """One features/scores pair in file order (not merged, not sorted): the features
    arrays of mtplug.formats.mert_data.read_features plus ``stats`` int32 [n, 9] and
    ``rows`` int64 [k] (rows per block, in file order) for each file's blocks."""
    from ...formats.mert_data import read_blocks

    feats = read_blocks(ff, False, space)
    feats["names"], feats["n_dense"] = space.feature_names, space.n_dense
    scores = read_blocks(sf, True)
    if scores["sctype"] != "BLEU" or scores["stats"].shape[1] != 9:
        raise NotBleu(scores["sctype"])
    feats["stats"] = scores["stats"]
    feats["score_rows"] = scores["blocks"][:, 1]
    feats["rows"] = feats["blocks"][:, 1]
    return feats


def moses_pro_data(ffiles, scfiles, seed: int, smooth_bp: bool, gamma: int = 5000, xi: int = 50,
                   beta: float = 0.05) -> tuple[bytes, int, int, int]:
    """The pro.data bytes Moses's pro writes for these files after ``srand(seed)``
    (``seed`` as its int; glibc keeps it mod 2**32), and (pairs, hypotheses, sentences).
    InputError where Moses stops with an error (a file ends before the first features
    file, a sentence's features and scores differ in size, a sentence has no hypotheses:
    Moses divides by zero there); NotBleu for scores files of another scorer."""
    from ..._ext import _moses_pro, _pro
    from ...corpus import FeatureSpace

    # one name space per file: a file's sparse ids then follow its tokens' first appearance,
    # which orders the names that Moses meets first in one line of that file
    parts = [_read_pair(ff, sf, FeatureSpace()) for ff, sf in zip(ffiles, scfiles)]
    n_blocks = len(parts[0]["rows"])
    for i, p in enumerate(parts):
        if len(p["rows"]) < n_blocks:
            raise InputError(f"features file {i} ended prematurely (sentence {len(p['rows'])})", ffiles[i])
        if len(p["score_rows"]) < n_blocks:
            raise InputError(f"scores file {i} ended prematurely (sentence {len(p['score_rows'])})", scfiles[i])
        bad = np.flatnonzero(p["rows"][:n_blocks] != p["score_rows"][:n_blocks])
        if len(bad):
            raise InputError(f"for sentence {int(bad[0])} features and scores have different size", scfiles[i])
        if p["names"][: p["n_dense"]] != parts[0]["names"][: parts[0]["n_dense"]]:
            raise InputError("dense features differ from those of the first features file", ffiles[i])
    D = parts[0]["n_dense"]
    # the rows of the blocks Moses reads, all files one after another
    kept = [int(p["rows"][:n_blocks].sum()) for p in parts]
    row0 = np.concatenate([[0], np.cumsum(kept)]).astype(np.int64)
    n_rows = int(row0[-1])
    dense = np.concatenate([p["dense"][:k] for p, k in zip(parts, kept)]) if n_rows else np.zeros((0, D))
    stats = np.ascontiguousarray(np.concatenate([p["stats"][:k] for p, k in zip(parts, kept)]), dtype=np.int32)
    indptr, ids, values = _concat_sparse(parts, kept)
    block = np.concatenate([np.repeat(np.arange(n_blocks), p["rows"][:n_blocks]) for p in parts])
    file_of = np.repeat(np.arange(len(parts)), kept)
    # Moses's hypotheses of sentence k: file 1's rows of block k, then file 2's, ...
    order = np.lexsort((np.arange(n_rows), file_of, block)).astype(np.int64)
    sizes = np.bincount(block, minlength=n_blocks)
    empty = np.flatnonzero(sizes == 0)
    if len(empty):
        raise InputError(f"sentence {int(empty[0])} has no hypotheses (Moses's pro divides by zero there)",
                         ", ".join(ffiles))
    offsets = np.zeros(n_blocks + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])

    bleu = _moses_pro.smoothed_sentence_bleu(stats, 1.0, smooth_bp)
    rng = _moses_pro.GlibcRandom(seed)
    better, worse = _moses_pro.sample_moses_pairs(rng, bleu, order, offsets, gamma, xi, beta)

    names, ids, perm = _moses_name_order(parts, ids, indptr, block, file_of, D)
    values = np.ascontiguousarray(values[perm])
    blob = "".join(names).encode("utf-8")
    name_off = np.zeros(len(names) + 1, dtype=np.int64)
    np.cumsum([len(n.encode("utf-8")) for n in names], out=name_off[1:])
    text = _pro.format_pro_lines(np.ascontiguousarray(dense, dtype=np.float64), indptr, ids, values, better, worse,
                                 np.frombuffer(blob, dtype=np.uint8) if blob else np.zeros(0, np.uint8), name_off)
    return text, len(better), n_rows, n_blocks


def _concat_sparse(parts, kept):
    """The sparse CSR of the kept rows of every part, one after another."""
    indptrs, ids, values, base = [np.zeros(1, dtype=np.int64)], [], [], 0
    for p, k in zip(parts, kept):
        ip = p["sparse_indptr"][: k + 1]
        nnz = int(ip[-1])
        indptrs.append(ip[1:] + base)
        ids.append(p["sparse_ids"][:nnz])
        values.append(p["sparse_values"][:nnz])
        base += nnz
    return (np.concatenate(indptrs).astype(np.int64), np.concatenate(ids).astype(np.int32),
            np.concatenate(values).astype(np.float64))


def _moses_name_order(parts, ids, indptr, block, file_of, D: int):
    """Feature names in Moses's id order (dense first, then sparse names as Moses met them:
    sentence by sentence, file by file, row by row, token by token) and the sparse ids
    (file-local in ``ids``, as each part's space numbered them) renumbered to it, sorted
    within each row (int32 [nnz]), and the permutation of the entries that sorts them
    (int64 [nnz]; apply it to the values)."""
    if len(ids) == 0:
        return list(parts[0]["names"][:D]), ids, np.arange(0)
    union: dict[str, int] = {}
    to_union = []
    for p in parts:
        to_union.append(np.array([union.setdefault(n, len(union)) if i >= D else -1
                                  for i, n in enumerate(p["names"])], dtype=np.int64))
    union_names = list(union)
    row = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    f = file_of[row]
    glob = np.empty(len(ids), dtype=np.int64)
    for i, table in enumerate(to_union):
        sel = f == i
        glob[sel] = table[ids[sel]]
    # first meeting of each name: the smallest (block, file, row, file-local id); a file's
    # local ids follow the first appearance of its tokens, so they order one line's names
    first = np.lexsort((ids, row, f, block[row]))
    seen, at = np.unique(glob[first], return_index=True)
    met = seen[np.argsort(at, kind="stable")]
    rank = np.full(len(union_names), -1, dtype=np.int64)
    rank[met] = D + np.arange(len(met))
    new_names = list(parts[0]["names"][:D]) + [union_names[i] for i in met.tolist()]
    new_ids = rank[glob].astype(np.int32)
    # sorted within rows again: format_pro_lines writes a row's sparse part in id order
    perm = np.lexsort((new_ids, row))
    return new_names, np.ascontiguousarray(new_ids[perm]), perm


__all__ = ["MOSES_VARIANTS", "NotBleu", "moses_pro_data"]
