"""Pair sampling (XYX, all, PRO) against slow, obvious loop references."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mtplug.dtrain.pairs import all_pairs, pro_pairs, sample_pairs, xyx_groups, xyx_pairs


# ---------------------------------------------------------------- references (plain loops)
def _ranked(scores):
    # positions sorted by score, descending; equal scores keep their k-best order
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))


def _keep(a, b, scores, threshold):
    diff = scores[a] - scores[b]
    return abs(diff) >= threshold if threshold > 0 else diff != 0


def ref_xyx(scores, model, hi_lo, threshold=0.0, max_pairs=10**9, misranked_only=False):
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
    cands = []
    for i in range(len(scores)):
        for j in range(i + 1, len(scores)):
            d = scores[i] - scores[j]
            if d != 0 and abs(d) >= threshold and len(cands) < 5000:
                cands.append((i, j, d))
    if len(cands) > 50:
        cands = sorted(cands, key=lambda c: -abs(c[2]))[:50]    # Python's sort is stable
    return [(i, j) if d > 0 else (j, i) for i, j, d in cands]


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
        assert got == ref_xyx(scores, model, hi_lo, threshold, max_pairs, misranked)
        got = _pairs(all_pairs(scores, model, threshold=threshold, max_pairs=max_pairs,
                               misranked_only=misranked))
        assert got == ref_all(scores, model, threshold, max_pairs, misranked)
    assert _pairs(pro_pairs(scores, model, threshold=threshold)) == ref_pro(scores, threshold)


def test_xyx_samples_middle_versus_bottom():
    # 100 distinct scores, hi_lo 0.1: top 10 x other 90 plus middle 80 x bottom 10 = 1,700 pairs.
    # (cdec's partXYX loops over [sep_hi, sz - sep_lo) for the second part, which is empty here,
    # so cdec itself would give only the 900 top-vs-rest pairs.)
    scores = np.linspace(1, 0, 100)
    first, second = xyx_pairs(scores, np.zeros(100), hi_lo=0.1)
    assert len(first) == 1700
    assert xyx_groups(scores, 0.1) == (10, 90)
    middle = (first >= 10) & (first < 90)
    assert middle.sum() == 800 and (second[middle] >= 90).all()


def test_xyx_groups_widen_over_ties():
    s = np.array([0.9, 0.8, 0.8, 0.7, 0.5, 0.5, 0.5, 0.4, 0.3, 0.3])
    # sep = round(10 * 0.1) = 1; top widens over the tie 0.8? no: s[0] != s[1]; bottom = [9, 10)
    # widens down over s[8] == s[9] to [8, 10)
    assert xyx_groups(s, 0.1) == (1, 8)
    # sep = 2: the top [0, 2) widens over the 0.8 tie to [0, 3); bottom [8, 10) stays
    assert xyx_groups(s, 0.2) == (3, 8)
    assert xyx_groups(np.ones(6), 0.2) == (6, 6)      # all tied: no pairs at all
    assert len(xyx_pairs(np.ones(6), np.zeros(6), hi_lo=0.2)[0]) == 0


def test_pairs_are_better_first_and_never_ties():
    rng = np.random.default_rng(3)
    scores = rng.integers(0, 4, size=30) / 3.0
    model = rng.normal(size=30)
    for method in ("XYX", "all", "PRO"):
        f, s = sample_pairs(method, scores, model)
        assert len(f) and (scores[f] > scores[s]).all()
        f, s = sample_pairs(method, scores, model, misranked_only=True)
        assert (model[f] <= model[s]).all()
    with pytest.raises(ValueError, match="pair_sampling"):
        sample_pairs("XXX", scores, model)


def test_pro_keeps_the_50_largest_differences():
    scores = np.arange(100) / 100.0
    f, s = pro_pairs(scores, np.zeros(100), threshold=0.05)
    assert len(f) == 50
    # the 5000 candidates are the first in (i, j) order: i = 0..50 or so; the kept ones have the largest gaps
    assert (scores[f] - scores[s]).min() >= 0.9
