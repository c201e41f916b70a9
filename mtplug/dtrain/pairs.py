"""Pair sampling from one scored k-best list: XYX, XYX-full, all, PRO (cdec dtrain's pairsampling.h).

Every sampler returns ``(first, second)``: int64 arrays of k-best positions, one entry
per pair, ``first`` the hypothesis with the higher per-sentence score. The order of
the pairs is the order dtrain enumerates them in (it matters for the update when
gamma > 0). Hypotheses are ranked by score, descending, in the order that dtrain's
``std::sort`` leaves them in: the sort is not stable, and which of several hypotheses
with equal scores lands where decides XYX's pairs, so mtplug reproduces GCC's
libstdc++ introsort (pyx/_introsort.pyx; a cdec built against another C++ library
may order ties differently).

Filters, applied as dtrain applies them while enumerating candidate pairs:

1. ``misranked_only`` (dtrain's "faster perceptron", gamma = loss_margin = 0): keep
   only pairs the model gets wrong, ``model[first] <= model[second]``;
2. ``max_pairs``: only the first ``max_pairs`` candidates left by (1) go on (dtrain
   counts a candidate even when step 3 drops it);
3. ``threshold``: keep the pair if ``|score diff| >= threshold`` when threshold > 0,
   else if the scores differ (ties are never pairs).

XYX (multipartite ranking). With ``sz`` hypotheses sorted by score and
``sep = round(sz * hi_lo)``: the top group is ``[0, sep_hi)`` with
``sep_hi = max(sep, 1)`` widened downwards over ties with its last member (for
``sz <= 4`` the top is the 1-best alone).

* ``XYX`` samples the pairs cdec's dtrain samples (pairsampling.h ``partXYX``): the
  top × everything below it, then a second loop over ``i in [sep_hi, sz - lo)``,
  ``j in [sz - lo, sz)`` where ``lo = sz - sep`` widened upwards over ties — which
  with ``lo ≈ 0.9·sz`` is empty unless ties at the 90% mark reach above the top.
  The candidate count that ``max_pairs`` bounds runs on over both loops, but once
  the first loop has stopped at ``max_pairs`` the second is not bounded (cdec tests
  ``++count == max``). (cdec reads out of bounds where ``sep`` is 0; mtplug's top is
  then the 1-best and the second loop is empty.)
* ``XYX-full`` samples what the method and dtrain's README describe (Simianer et al.
  2012): the top × (middle ∪ bottom), then the middle × the bottom, where the bottom
  is ``[sep_lo, sz)``, ``sep_lo = sz - sep`` widened upwards over ties (never into
  the top). It is mtplug's addition; on real cdec systems it tuned worse than ``XYX``
  (docs/real-systems.md: 3.2 test BLEU below on the dense de-en set, 2.3 on the sparse
  one), so it is not the default.

PRO (Hopkins & May 2011 as dtrain does it): with the hypotheses ranked as above, the
pairs (i above j) whose scores differ by at least ``threshold`` (with threshold 0, tied
pairs too), in dtrain's loop order, at most 5000; if more than 50, the 50 with the
largest score difference (std::sort again). Unlike cdec, mtplug then drops tied pairs
(they have no better side; cdec keeps them, and they reach the 50 only when fewer than
50 untied pairs exist). As in cdec, PRO ignores ``misranked_only``: in the faster
perceptron every PRO pair updates, misranked or not.
"""

from __future__ import annotations

import math

import numpy as np

from .._ext import _introsort

PRO_CANDIDATES = 5000
PRO_KEEP = 50

_EMPTY = np.zeros(0, dtype=np.int64)

XYX_METHODS = ("XYX", "XYX-full")
PAIR_SAMPLINGS = XYX_METHODS + ("all", "PRO")


def sort_descending(keys: np.ndarray) -> np.ndarray:
    """Positions of ``keys`` (float64 [n], no NaN) in the order libstdc++'s std::sort
    with ``a > b`` leaves them (int64 [n])."""
    keys = np.ascontiguousarray(keys, dtype=np.float64)
    order = np.empty(len(keys), dtype=np.int64)
    _introsort.sort_descending(keys, order)
    return order


def rank_by_score(scores: np.ndarray) -> np.ndarray:
    """k-best positions sorted by score, descending, ties as dtrain's std::sort leaves them."""
    return sort_descending(scores)


def xyx_groups(sorted_scores: np.ndarray, hi_lo: float) -> tuple[int, int]:
    """(sep_hi, sep_lo) of XYX for scores sorted descending: the top is [0, sep_hi);
    ``sep_lo`` is ``sz - sep`` widened upwards over ties, where XYX-full's bottom
    [max(sep_lo, sep_hi), sz) starts and what XYX's second loop is bounded by."""
    s = sorted_scores
    sz = len(s)
    # dtrain computes sz * hi_lo in single precision (hi_lo is a float) and rounds half away from 0
    sep = math.floor(float(np.float32(sz) * np.float32(hi_lo)) + 0.5)
    if sz > 4:
        sep_hi = max(sep, 1)
        while sep_hi < sz and s[sep_hi - 1] == s[sep_hi]:
            sep_hi += 1
    else:
        sep_hi = 1
    sep_lo = sz - sep
    while sep > 0 and 0 < sep_lo < sz and s[sep_lo - 1] == s[sep_lo]:
        sep_lo -= 1
    return sep_hi, sep_lo


def _xyx_ranking(scores: np.ndarray, hi_lo: float) -> tuple[np.ndarray, int, int]:
    """(order, sep_hi, sep_lo): the ranking and the XYX groups (xyx_groups) of ``scores``."""
    order = rank_by_score(scores)
    if len(order) < 2:
        return order, 0, 0
    return (order, *xyx_groups(scores[order], hi_lo))


def _block(rows: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All (i, j), i from rows, j from cols, i-major."""
    if len(rows) == 0 or len(cols) == 0:
        return _EMPTY, _EMPTY
    return np.repeat(rows, len(cols)), np.tile(cols, len(rows))


def _filter(first, second, scores, model, threshold, max_pairs, misranked_only):
    if misranked_only:
        keep = model[first] <= model[second]
        first, second = first[keep], second[keep]
    if len(first) > max_pairs:
        first, second = first[:max_pairs], second[:max_pairs]
    diff = scores[first] - scores[second]
    keep = np.abs(diff) >= threshold if threshold > 0 else diff != 0
    return first[keep], second[keep]


def all_pairs(scores, model, *, threshold: float = 0.0, max_pairs: int = 2**62,
              misranked_only: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Every pair (i above j in the score ranking), filtered as the module describes."""
    scores = np.asarray(scores, dtype=np.float64)
    order = rank_by_score(scores)
    sz = len(order)
    if sz < 2:
        return _EMPTY, _EMPTY
    i, j = np.triu_indices(sz, 1)
    return _filter(order[i], order[j], scores, np.asarray(model, dtype=np.float64), threshold, max_pairs,
                   misranked_only)


def xyx_pairs(scores, model, *, hi_lo: float = 0.1, threshold: float = 0.0, max_pairs: int = 2**62,
              misranked_only: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """XYX as cdec's dtrain samples it (see the module docstring)."""
    scores = np.asarray(scores, dtype=np.float64)
    model = np.asarray(model, dtype=np.float64)
    order, sep_hi, lo = _xyx_ranking(scores, hi_lo)
    sz = len(order)
    if sz < 2:
        return _EMPTY, _EMPTY
    pos = np.arange(sz, dtype=np.int64)
    f1, s1 = _block(pos[:sep_hi], pos[sep_hi:])
    f2, s2 = _block(pos[sep_hi:sz - lo], pos[sz - lo:])
    f1, s1 = order[f1], order[s1]
    f2, s2 = order[f2], order[s2]
    if misranked_only:
        keep1, keep2 = model[f1] <= model[s1], model[f2] <= model[s2]
        f1, s1, f2, s2 = f1[keep1], s1[keep1], f2[keep2], s2[keep2]
    if len(f1) >= max_pairs:
        f1, s1 = f1[:max_pairs], s1[:max_pairs]
    else:
        f2, s2 = f2[:max_pairs - len(f1)], s2[:max_pairs - len(f1)]
    return _filter(np.concatenate([f1, f2]), np.concatenate([s1, s2]), scores, model, threshold, 2**62, False)


def xyx_full_pairs(scores, model, *, hi_lo: float = 0.1, threshold: float = 0.0, max_pairs: int = 2**62,
                   misranked_only: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Top × (middle ∪ bottom), then middle × bottom (see the module docstring)."""
    scores = np.asarray(scores, dtype=np.float64)
    order, sep_hi, sep_lo = _xyx_ranking(scores, hi_lo)
    sz = len(order)
    if sz < 2:
        return _EMPTY, _EMPTY
    sep_lo = max(sep_lo, sep_hi)
    pos = np.arange(sz, dtype=np.int64)
    f1, s1 = _block(pos[:sep_hi], pos[sep_hi:])
    f2, s2 = _block(pos[sep_hi:sep_lo], pos[sep_lo:])
    first = order[np.concatenate([f1, f2])]
    second = order[np.concatenate([s1, s2])]
    return _filter(first, second, scores, np.asarray(model, dtype=np.float64), threshold, max_pairs,
                   misranked_only)


def pro_pairs(scores, *, threshold: float = 0.0, candidates: int = PRO_CANDIDATES,
              keep: int = PRO_KEEP) -> tuple[np.ndarray, np.ndarray]:
    """PRO as dtrain samples it (see the module docstring)."""
    scores = np.asarray(scores, dtype=np.float64)
    order = rank_by_score(scores)
    sz = len(order)
    if sz < 2:
        return _EMPTY, _EMPTY
    s = scores[order]
    i, j = np.triu_indices(sz, 1)
    ok = ~(np.abs(s[i] - s[j]) < threshold)         # dtrain's accept_pair
    i, j = i[ok][:candidates], j[ok][:candidates]
    if len(i) > keep:
        top = sort_descending(np.abs(s[i] - s[j]))[:keep]
        i, j = i[top], j[top]
    untied = s[i] != s[j]
    return order[i[untied]], order[j[untied]]


def sample_pairs(method: str, scores, model, *, hi_lo: float = 0.1, threshold: float = 0.0,
                 max_pairs: int = 2**62, misranked_only: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Dispatch on the ``pair_sampling`` name: ``XYX``, ``XYX-full``, ``all`` or ``PRO``."""
    if method in XYX_METHODS:
        sampler = xyx_pairs if method == "XYX" else xyx_full_pairs
        return sampler(scores, model, hi_lo=hi_lo, threshold=threshold, max_pairs=max_pairs,
                       misranked_only=misranked_only)
    if method == "all":
        return all_pairs(scores, model, threshold=threshold, max_pairs=max_pairs, misranked_only=misranked_only)
    if method == "PRO":
        return pro_pairs(scores, threshold=threshold)      # dtrain's PRO takes no misranked_only
    raise ValueError(f"unknown pair_sampling {method!r}; choose one of {', '.join(PAIR_SAMPLINGS)}")
