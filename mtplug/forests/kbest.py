"""K-best derivations of a forest or lattice, and their n-best lines, so that forests feed
every n-best optimizer.

Lazy enumeration after Huang & Chiang (2005), "Better k-best parsing", Algorithm 3; the
kernel is pyx/_kbest.pyx.

Scores. Weights are a mapping feature name -> float (the names of
``Hypergraph.feature_names``; a missing name weighs 0, extra names are ignored).
:func:`score_edges` gives every edge's score Σ weight · value; a derivation's score is
the sum of its edges' scores, added as: the top edge's score, then the tails'
sub-derivation scores in tail order (recursively).

Derivations are trees: a node occurring twice in one derivation (two tails of an edge,
or reached along two paths) may be derived differently at each occurrence, as in the
paper and in cdec. In parse forests and lattices no node can occur twice.

Order. Score descending. Equal scores: the derivation whose top edge has the lower edge
id (the order of ``Hypergraph`` edges), then the one whose tails' sub-derivations rank
earlier, compared tail by tail (a sub-derivation's rank is its position in its node's
own list, by this same rule). The order is a function of the forest and the edge scores
alone (tests/reference/forest_brute.py reproduces it).

Unique (cdec ``-r``, Moses ``distinct``): keep the first derivation of each target
string (a sequence of words) and go on until k strings are found or the forest has no
more derivations. The forest may hold many derivations per string, so
``max_derivations`` can bound the derivations examined.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .._ext import _kbest
from ..formats.number_text import format_shortest
from ..hypergraph import Hypergraph

# Kernel status codes (pyx/_kbest.pyx).
_ERRORS = {
    1: (MemoryError, "out of memory during forest k-best"),
    2: (FloatingPointError, "a derivation's score is NaN: edge scores add up to +inf and -inf"),
    3: (OverflowError, "a node has more than 2**31 - 1 derivations"),
}

# Text that cannot stand in an n-best line: the reader splits fields at '|||' and tokens
# at ASCII blanks; line breaks end the line.
_UNWRITABLE = re.compile(r"[ \t\n\r\x0b\x0c]|\|\|\|")
# Feature sums use a dense [derivations, features] table up to this many cells (32 MB).
_DENSE_CELLS = 4_000_000


@dataclass
class Derivation:
    """One derivation of a forest's goal.

    ``score``: its model score; ``edges``: int32 [n] its edges in preorder (an edge, then
    the derivations of its tails in tail order; an edge used twice appears twice);
    ``words``: the target string; ``features``: name -> value summed over ``edges`` (every
    feature occurring on one of its edges, even if the sum is 0).
    """

    score: float
    edges: np.ndarray
    words: list[str]
    features: dict[str, float]


def score_edges(hg: Hypergraph, weights: Mapping[str, float]) -> np.ndarray:
    """Every edge's score Σ weights[name] · value over its features: float64 [E].

    Raises ValueError if a weight used is not finite or a score overflows."""
    w = np.array([float(weights.get(name, 0.0)) for name in hg.feature_names], dtype=np.float64)
    if not np.all(np.isfinite(w)):
        bad = hg.feature_names[int(np.flatnonzero(~np.isfinite(w))[0])]
        raise ValueError(f"weight of feature {bad!r} is not finite")
    edge_of_entry = np.repeat(np.arange(hg.n_edges), np.diff(hg.feat_indptr))
    with np.errstate(over="ignore", invalid="ignore"):
        scores = np.bincount(edge_of_entry, weights=w[hg.feat_ids] * hg.feat_values,
                             minlength=hg.n_edges).astype(np.float64, copy=False)
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    if not np.all(np.isfinite(scores)):
        raise ValueError(f"edge {int(np.flatnonzero(~np.isfinite(scores))[0])}: score overflows")
    return scores


def kbest(hg: Hypergraph, edge_scores: np.ndarray, k: int, unique: bool = False, *,
          max_derivations: int | None = None) -> list[Derivation]:
    """The k best derivations of ``hg``'s goal under ``edge_scores`` (float64 [E], see
    :func:`score_edges`), best first (order: see the module docstring).

    Fewer than k when the forest has fewer derivations (or, with ``unique``, fewer
    distinct strings). ``max_derivations`` (unique mode) stops after examining that many
    derivations. Raises ValueError on bad arguments.
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
        raise ValueError(f"k must be a non-negative integer, got {k!r}")
    if max_derivations is not None and (isinstance(max_derivations, bool) or not isinstance(
            max_derivations, (int, np.integer)) or max_derivations < 0):
        raise ValueError(f"max_derivations must be a non-negative integer or None, got {max_derivations!r}")
    scores = np.ascontiguousarray(edge_scores, dtype=np.float64)
    if scores.shape != (hg.n_edges,):
        raise ValueError(f"edge_scores must have shape ({hg.n_edges},), got {scores.shape}")
    if not np.all(np.isfinite(scores)):
        raise ValueError(f"edge_scores[{int(np.flatnonzero(~np.isfinite(scores))[0])}] is not finite")
    if k == 0:
        return []
    # equal strings must get one id for the unique filter (the builder interns words,
    # but a Hypergraph may be assembled otherwise)
    first: dict[str, int] = {}
    word_map = np.array([first.setdefault(w, i) for i, w in enumerate(hg.words)], dtype=np.int32)
    status, out_scores, edge_ptr, edges, word_ptr, word_ids, _, _ = _kbest.kbest(
        np.ascontiguousarray(hg.node_edges, dtype=np.int64),
        np.ascontiguousarray(hg.tail_indptr, dtype=np.int64),
        np.ascontiguousarray(hg.tails, dtype=np.int32),
        np.ascontiguousarray(hg.rhs_indptr, dtype=np.int64),
        np.ascontiguousarray(hg.rhs, dtype=np.int32),
        word_map, scores, int(k), bool(unique),
        -1 if max_derivations is None else int(max_derivations))
    if status != 0:
        exc, message = _ERRORS.get(status, (RuntimeError, f"forest k-best failed (status {status})"))
        raise exc(f"{message} ({hg.source or 'hypergraph'})")
    features = _summed_features(hg, edge_ptr, edges)
    words = np.asarray(hg.words, dtype=object)[word_ids].tolist() if len(word_ids) else []
    return [Derivation(float(out_scores[i]), edges[edge_ptr[i]:edge_ptr[i + 1]],
                       words[word_ptr[i]:word_ptr[i + 1]], features[i])
            for i in range(len(out_scores))]


def _summed_features(hg: Hypergraph, edge_ptr: np.ndarray, edges: np.ndarray) -> list[dict[str, float]]:
    """Per derivation (edges[edge_ptr[i]:edge_ptr[i+1]]), its features summed over its
    edges, keyed by name in feature-id order."""
    n = len(edge_ptr) - 1
    lo = hg.feat_indptr[edges]
    count = hg.feat_indptr[edges + 1] - lo
    total = int(count.sum())
    if total == 0:
        return [{} for _ in range(n)]
    # CSR gather: the feature entries of every edge occurrence, tagged with its derivation
    entry = np.arange(total) + np.repeat(lo - (np.cumsum(count) - count), count)
    deriv = np.repeat(np.repeat(np.arange(n, dtype=np.int64), np.diff(edge_ptr)), count)
    n_feats = len(hg.feature_names)
    key = deriv * n_feats + hg.feat_ids[entry]
    if n * n_feats <= _DENSE_CELLS:
        # a dense [n, F] table: no sort, and sums in edge order
        present = np.bincount(key, minlength=n * n_feats) > 0
        table = np.bincount(key, weights=hg.feat_values[entry], minlength=n * n_feats).astype(np.float64, copy=False)
        key = np.flatnonzero(present)
        sums = table[key].tolist()
    else:
        order = np.argsort(key, kind="stable")
        key = key[order]
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        sums = np.add.reduceat(hg.feat_values[entry][order], starts).tolist()
        key = key[starts]
    names = [hg.feature_names[f] for f in (key % n_feats).tolist()]
    bounds = np.searchsorted(key // n_feats, np.arange(n + 1)).tolist()
    return [dict(zip(names[a:b], sums[a:b])) for a, b in zip(bounds[:-1], bounds[1:])]


def nbest_line(sent_id: int, derivation: Derivation) -> str:
    """The n-best line ``sid ||| words ||| features ||| score`` (no line break).

    Features are sorted by name; a zero value is left out (it is the same as none for
    every optimizer, and would make equal vectors look different to the store's dedup).
    A name containing ``_`` is written ``name= value``, as Moses writes sparse features;
    any other name ``name=value``, cdec's form, since Moses would read ``name= value`` as
    the dense column ``name_0``. Either way :class:`mtplug.corpus.NbestCorpus` reads the
    feature back under its own name, with the same value (shortest round-trip text).
    Raises ValueError on a word or feature name that cannot stand in a line.
    """
    parts = []
    for name, value in sorted(derivation.features.items()):
        if value == 0.0:
            continue
        if not name or _UNWRITABLE.search(name):
            raise ValueError(f"feature name {name!r} cannot be written in an n-best line")
        parts.append(f"{name}= {format_shortest(value)}" if "_" in name else f"{name}={format_shortest(value)}")
    for w in derivation.words:
        if not w or _UNWRITABLE.search(w):
            raise ValueError(f"target word {w!r} cannot be written in an n-best line")
    return (f"{int(sent_id)} ||| {' '.join(derivation.words)} ||| {' '.join(parts)} ||| "
            f"{format_shortest(derivation.score)}")


def kbest_nbest_lines(sent_id: int, hg: Hypergraph, weights_by_name: Mapping[str, float], k: int,
                      unique: bool = False) -> list[str]:
    """The k best derivations of ``hg`` under ``weights_by_name`` as n-best lines for
    sentence ``sent_id`` (see :func:`nbest_line`; no line breaks), best first."""
    if isinstance(sent_id, bool) or not isinstance(sent_id, (int, np.integer)) or sent_id < 0:
        raise ValueError(f"sent_id must be a non-negative integer, got {sent_id!r}")
    return [nbest_line(sent_id, d) for d in kbest(hg, score_edges(hg, weights_by_name), k, unique)]
