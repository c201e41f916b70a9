"""Pair sampling (XYX, XYX-full, all, PRO) against slow, obvious loop references."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mtplug.dtrain.pairs import (PAIR_SAMPLINGS, all_pairs, pro_pairs, sample_pairs, xyx_full_pairs, xyx_groups,
                                 xyx_pairs)
from tests.reference.introsort_reference import sort_descending as sort_descending_reference


# ---------------------------------------------------------------- references (plain loops)
def _ranked(scores):
    # positions sorted by score, descending, ties where dtrain's std::sort leaves them
    return sort_descending_reference(list(scores))


def _keep(a, b, scores, threshold):
    diff = scores[a] - scores[b]
    return abs(diff) >= threshold if threshold > 0 else diff != 0


def ref_xyx_cdec(scores, model, hi_lo, threshold=0.0, max_pairs=10**9, misranked_only=False):
    """cdec's partXYX (training/dtrain/pairsampling.h) line by line, its out-of-bounds
    reads (sep == 0) replaced by 'no tie'."""
    order = _ranked(scores)
    s = [scores[i] for i in order]
    sz = len(s)
    if sz < 2:
        return []
    sep = math.floor(float(np.float32(sz) * np.float32(hi_lo)) + 0.5)
    sep_hi = max(sep, 1)
    if sz > 4:
        while sep_hi < sz and s[sep_hi - 1] == s[sep_hi]:
            sep_hi += 1
    else:
        sep_hi = 1
    out, count, stop = [], 0, False

    def visit(i, j):
        nonlocal count
        a, b = order[i], order[j]
        if misranked_only and not model[a] <= model[b]:
            return False
        if _keep(a, b, scores, threshold):
            out.append((a, b))
        count += 1
        return count == max_pairs

    for i in range(sep_hi):
        for j in range(sep_hi, sz):
            if visit(i, j):
                stop = True
                break
        if stop:
            break
    sep_lo = sz - sep
    while 0 < sep_lo < sz and s[sep_lo - 1] == s[sep_lo]:
        sep_lo -= 1
    for i in range(sep_hi, sz - sep_lo):
        for j in range(sz - sep_lo, sz):
            if visit(i, j):
                return out
    return out


def ref_xyx_full(scores, model, hi_lo, threshold=0.0, max_pairs=10**9, misranked_only=False):
    """XYX as described: top 'hi_lo' vs everything below, middle vs bottom 'hi_lo'."""
    order = _ranked(scores)
    s = [scores[i] for i in order]
    sz = len(s)
    if sz < 2:
        return []
    sep = math.floor(float(np.float32(sz) * np.float32(hi_lo)) + 0.5)
    if sz <= 4:
        top = 1
    else:
        top = max(sep, 1)
        while top < sz and s[top - 1] == s[top]:   # a tie with the last top item joins the top
            top += 1
    bottom = sz - sep
    if sep > 0:
        while 0 < bottom < sz and s[bottom - 1] == s[bottom]:   # a tie with the first bottom item joins it
            bottom -= 1
    bottom = max(bottom, top)
    candidates = [(i, j) for i in range(top) for j in range(top, sz)]
    candidates += [(i, j) for i in range(top, bottom) for j in range(bottom, sz)]
    out, count = [], 0
    for i, j in candidates:
        a, b = order[i], order[j]
        if misranked_only and not model[a] <= model[b]:
            continue
        count += 1
        if count > max_pairs:
            break
        if _keep(a, b, scores, threshold):
            out.append((a, b))
    return out


def ref_all(scores, model, threshold=0.0, max_pairs=10**9, misranked_only=False):
    order = _ranked(scores)
    out, count = [], 0
    for i in range(len(order)):
        for j in range(i + 1, len(order)):
            a, b = order[i], order[j]
            if misranked_only and not model[a] <= model[b]:
                continue
            count += 1
            if count > max_pairs:
                return out
            if _keep(a, b, scores, threshold):
                out.append((a, b))
    return out


def ref_pro(scores, threshold=0.0):
    """cdec's PROsampling, then mtplug's one change: tied pairs dropped."""
    order = _ranked(scores)
    s = [scores[i] for i in order]
    cands = []
    for i in range(len(s) - 1):
        for j in range(i + 1, len(s)):
            if not abs(s[i] - s[j]) < threshold and len(cands) < 5000:
                cands.append((i, j))
    if len(cands) > 50:
        top = sort_descending_reference([abs(s[i] - s[j]) for i, j in cands])[:50]
        cands = [cands[t] for t in top]
    return [(order[i], order[j]) for i, j in cands if s[i] != s[j]]


def _pairs(result):
    return list(zip(result[0].tolist(), result[1].tolist()))


# ---------------------------------------------------------------- tests
@pytest.mark.parametrize("seed", range(40))
def test_xyx_and_all_match_the_references(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 40))
    scores = (rng.integers(0, 6 if seed % 2 else 1000, size=k) / 10.0).tolist()   # ties on odd seeds
    model = rng.integers(-5, 5, size=k).astype(float).tolist()
    hi_lo = float(rng.choice([0.01, 0.1, 0.2, 0.25, 0.33, 0.5]))
    threshold = float(rng.choice([0.0, 0.0, 0.15]))
    max_pairs = int(rng.choice([10**9, 5, 37]))
    for misranked in (False, True):
        got = _pairs(xyx_pairs(scores, model, hi_lo=hi_lo, threshold=threshold, max_pairs=max_pairs,
                               misranked_only=misranked))
        assert got == ref_xyx_cdec(scores, model, hi_lo, threshold, max_pairs, misranked)
        got = _pairs(xyx_full_pairs(scores, model, hi_lo=hi_lo, threshold=threshold, max_pairs=max_pairs,
                                    misranked_only=misranked))
        assert got == ref_xyx_full(scores, model, hi_lo, threshold, max_pairs, misranked)
        got = _pairs(all_pairs(scores, model, threshold=threshold, max_pairs=max_pairs,
                               misranked_only=misranked))
        assert got == ref_all(scores, model, threshold, max_pairs, misranked)
    assert _pairs(pro_pairs(scores, threshold=threshold)) == ref_pro(scores, threshold)


def test_xyx_full_samples_middle_versus_bottom_and_xyx_does_not():
    # 100 distinct scores, hi_lo 0.1: top 10 x other 90 plus middle 80 x bottom 10 = 1,700 pairs.
    # cdec's partXYX loops over [sep_hi, sz - sep_lo) = [10, 10) for the second part: 900 pairs.
    scores = np.linspace(1, 0, 100)
    first, second = xyx_full_pairs(scores, np.zeros(100), hi_lo=0.1)
    assert len(first) == 1700
    assert xyx_groups(scores, 0.1) == (10, 90)
    middle = (first >= 10) & (first < 90)
    assert middle.sum() == 800 and (second[middle] >= 90).all()
    first, second = xyx_pairs(scores, np.zeros(100), hi_lo=0.1)
    assert len(first) == 900 and (first < 10).all() and (second >= 10).all()


def test_xyx_second_loop_runs_when_ties_reach_above_the_top():
    # 20 hypotheses, sep 2; the last 15 tie, so cdec's lower bound widens from 18 to 5 and its
    # second loop pairs ranks [2, 15) with ranks [15, 20): the 3 untied middle items (k-best
    # 2, 3, 4) with the 5 zeros that the sort leaves last; ties with each other are never pairs.
    scores = np.concatenate([np.linspace(1.0, 0.6, 5), np.zeros(15)])
    first, second = xyx_pairs(scores, np.zeros(20), hi_lo=0.1)
    assert len(first) == 36 + 15
    assert set(_pairs((first[:36], second[:36]))) == {(i, j) for i in range(2) for j in range(2, 20)}
    tail = sort_descending_reference(scores.tolist())[15:]
    assert set(_pairs((first[36:], second[36:]))) == {(i, j) for i in range(2, 5) for j in tail}


def test_xyx_max_pairs_stops_only_the_first_loop_once_reached():
    scores = np.concatenate([np.linspace(1.0, 0.6, 5), np.zeros(15)])
    # the first loop stops at 10 candidates; cdec's '++count == max' never holds again after it
    first, _ = xyx_pairs(scores, np.zeros(20), hi_lo=0.1, max_pairs=10)
    assert len(first) == 10 + 15
    # not reached in the first loop (36 candidates): the count runs on into the second
    first, _ = xyx_pairs(scores, np.zeros(20), hi_lo=0.1, max_pairs=40)
    assert len(first) == 40


def test_xyx_groups_widen_over_ties():
    s = np.array([0.9, 0.8, 0.8, 0.7, 0.5, 0.5, 0.5, 0.4, 0.3, 0.3])
    # sep = round(10 * 0.1) = 1; top widens over the tie 0.8? no: s[0] != s[1]; bottom = [9, 10)
    # widens down over s[8] == s[9] to [8, 10)
    assert xyx_groups(s, 0.1) == (1, 8)
    # sep = 2: the top [0, 2) widens over the 0.8 tie to [0, 3); bottom [8, 10) stays
    assert xyx_groups(s, 0.2) == (3, 8)
    assert xyx_groups(np.ones(6), 0.2) == (6, 0)      # all tied: no pairs at all
    assert len(xyx_pairs(np.ones(6), np.zeros(6), hi_lo=0.2)[0]) == 0
    assert len(xyx_full_pairs(np.ones(6), np.zeros(6), hi_lo=0.2)[0]) == 0


def test_pairs_are_better_first_and_never_ties():
    rng = np.random.default_rng(3)
    scores = rng.integers(0, 4, size=30) / 3.0
    model = rng.normal(size=30)
    for method in PAIR_SAMPLINGS:
        f, s = sample_pairs(method, scores, model)
        assert len(f) and (scores[f] > scores[s]).all()
        f2, s2 = sample_pairs(method, scores, model, misranked_only=True)
        if method == "PRO":     # as cdec's PROsampling: every PRO pair updates
            assert f2.tolist() == f.tolist() and s2.tolist() == s.tolist()
        else:
            assert (model[f2] <= model[s2]).all()
    with pytest.raises(ValueError, match="pair_sampling"):
        sample_pairs("XXX", scores, model)


def test_pro_keeps_the_50_largest_differences():
    scores = np.arange(100) / 100.0
    f, s = pro_pairs(scores, threshold=0.05)
    assert len(f) == 50
    # the 5000 candidates are the first in (i, j) order: i = 0..50 or so; the kept ones have the largest gaps
    assert (scores[f] - scores[s]).min() >= 0.9
