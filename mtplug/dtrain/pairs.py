"""Pair sampling from one scored k-best list: XYX, all, PRO (cdec dtrain's pairsampling.h).

Every sampler returns ``(first, second)``: int64 arrays of k-best positions, one entry
per pair, ``first`` the hypothesis with the higher per-sentence score. The order of
the pairs is the order dtrain enumerates them in (it matters for the update when
gamma > 0). Hypotheses are ranked by score, descending, with a STABLE sort (ties
keep their k-best order; dtrain's ``std::sort`` leaves that unspecified).

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
``sz <= 4`` the top is the 1-best alone); the bottom group is ``[sep_lo, sz)`` with
``sep_lo = sz - sep`` widened upwards over ties (never into the top); the middle is
what lies between. Pairs: top × (middle ∪ bottom), then middle × bottom.
NOTE: cdec's code (pairsampling.h ``partXYX``) runs its middle-vs-bottom loop over
``i in [sep_hi, sz - sep_lo)``, which with ``sep_lo ≈ 0.9·sz`` is (almost always)
empty, so cdec's XYX in practice samples only top-vs-rest pairs; and its
``max_pairs`` count stops only the first loop. mtplug samples both parts, as the
method is described (Simianer et al. 2012) and as dtrain's own documentation says.

PRO (Hopkins & May 2011 as dtrain does it): pairs ``i < j`` in k-best order whose
scores differ by at least ``threshold`` (and are not tied), at most 5000, then the 50
with the largest score difference (stable). Unlike cdec — which keeps tied pairs,
orients them by k-best order rather than by score and ignores ``misranked_only`` —
the pairs are oriented better-first and (1) applies after the selection.
"""

from __future__ import annotations

import math

import numpy as np

PRO_CANDIDATES = 5000
PRO_KEEP = 50

_EMPTY = np.zeros(0, dtype=np.int64)


def rank_by_score(scores: np.ndarray) -> np.ndarray:
    """k-best positions sorted by score, descending; ties keep k-best order."""
    return np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")


def xyx_groups(sorted_scores: np.ndarray, hi_lo: float) -> tuple[int, int]:
    """(sep_hi, sep_lo) of XYX for scores sorted descending: top = [0, sep_hi),
    middle = [sep_hi, sep_lo), bottom = [sep_lo, sz)."""
    s = sorted_scores
    sz = len(s)
    # dtrain computes sz * hi_lo in single precision (hi_lo is a float) and rounds half away from 0
    sep = int(math.floor(float(np.float32(sz) * np.float32(hi_lo)) + 0.5))
    if sz > 4:
        sep_hi = max(sep, 1)
        while sep_hi < sz and s[sep_hi - 1] == s[sep_hi]:
            sep_hi += 1
    else:
        sep_hi = 1
    sep_lo = sz - sep
    while sep > 0 and 0 < sep_lo < sz and s[sep_lo - 1] == s[sep_lo]:
        sep_lo -= 1
    return sep_hi, max(sep_lo, sep_hi)


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
    """Top × (middle ∪ bottom), then middle × bottom (see the module docstring)."""
    scores = np.asarray(scores, dtype=np.float64)
    order = rank_by_score(scores)
    sz = len(order)
    if sz < 2:
        return _EMPTY, _EMPTY
    sep_hi, sep_lo = xyx_groups(scores[order], hi_lo)
    pos = np.arange(sz, dtype=np.int64)
    f1, s1 = _block(pos[:sep_hi], pos[sep_hi:])
    f2, s2 = _block(pos[sep_hi:sep_lo], pos[sep_lo:])
    first = order[np.concatenate([f1, f2])]
    second = order[np.concatenate([s1, s2])]
    return _filter(first, second, scores, np.asarray(model, dtype=np.float64), threshold, max_pairs,
                   misranked_only)


def pro_pairs(scores, model, *, threshold: float = 0.0, misranked_only: bool = False,
              candidates: int = PRO_CANDIDATES, keep: int = PRO_KEEP) -> tuple[np.ndarray, np.ndarray]:
    """PRO as dtrain samples it (see the module docstring)."""
    scores = np.asarray(scores, dtype=np.float64)
    sz = len(scores)
    if sz < 2:
        return _EMPTY, _EMPTY
    i, j = np.triu_indices(sz, 1)
    diff = scores[i] - scores[j]
    ok = (np.abs(diff) >= threshold) & (diff != 0)
    i, j, diff = i[ok][:candidates], j[ok][:candidates], diff[ok][:candidates]
    if len(i) > keep:
        top = np.argsort(-np.abs(diff), kind="stable")[:keep]
        i, j, diff = i[top], j[top], diff[top]
    first = np.where(diff > 0, i, j).astype(np.int64)
    second = np.where(diff > 0, j, i).astype(np.int64)
    if misranked_only:
        model = np.asarray(model, dtype=np.float64)
        bad = model[first] <= model[second]
        first, second = first[bad], second[bad]
    return first, second


def sample_pairs(method: str, scores, model, *, hi_lo: float = 0.1, threshold: float = 0.0,
                 max_pairs: int = 2**62, misranked_only: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Dispatch on dtrain's ``pair_sampling`` name: ``XYX``, ``all`` or ``PRO``."""
    if method == "XYX":
        return xyx_pairs(scores, model, hi_lo=hi_lo, threshold=threshold, max_pairs=max_pairs,
                         misranked_only=misranked_only)
    if method == "all":
        return all_pairs(scores, model, threshold=threshold, max_pairs=max_pairs, misranked_only=misranked_only)
    if method == "PRO":
        return pro_pairs(scores, model, threshold=threshold, misranked_only=misranked_only)
    raise ValueError(f"unknown pair_sampling {method!r}; choose XYX, all or PRO")
