"""dtrain's per-sentence scorers (cdec training/dtrain/score.cc) from BLEU statistics rows."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplug.dtrain.scorers import Scorer, stupid_scores

EPS = 1e-12


def row(m, t, ref_len):
    """A stats row from matches m1..m4, n-gram totals t1..t4 and the reference length."""
    return [m[0], t[0], m[1], t[1], m[2], t[2], m[3], t[3], ref_len]


# hypothesis of 5 words, reference of 6: matches 4/5, 2/4, 1/3, 0/2
R1 = row((4, 2, 1, 0), (5, 4, 3, 2), 6)
# short reference (2 words): only M = 2 orders count
R2 = row((2, 1, 0, 0), (3, 2, 1, 0), 2)
# no unigram match
R3 = row((0, 0, 0, 0), (3, 2, 1, 0), 4)
# perfect match of 4 words
R4 = row((4, 3, 2, 1), (4, 3, 2, 1), 4)


def bp(h, r):
    return 1.0 if h > r else math.exp(1 - r / h)


def test_stupid_bleu_by_hand():
    s = Scorer("stupid_bleu").score(np.array([R1, R2, R3]))
    # R1: 1/4 [log 4/5 + log 3/5 + log 2/4 + log 1/3], BP(5, 6) = exp(1 - 6/5)
    assert s[0] == pytest.approx(bp(5, 6) * math.exp((math.log(4 / 5) + math.log(3 / 5) + math.log(2 / 4)
                                                      + math.log(1 / 3)) / 4), abs=EPS)
    # R2: M = 2: 1/2 [log 2/3 + log 2/3], h = 3 > r = 2: BP 1
    assert s[1] == pytest.approx(math.exp((math.log(2 / 3) + math.log(2 / 3)) / 2), abs=EPS)
    assert s[2] == 0.0
    fixed = Scorer("fixed-stupid").score(np.array([R1]))
    assert fixed[0] == pytest.approx(s[0] / bp(5, 6) * bp(5, 7), abs=EPS)


def test_compiled_stupid_equals_the_numpy_formula():
    rng = np.random.default_rng(0)
    t = rng.integers(0, 30, size=(500, 1))
    totals = np.maximum(t - np.arange(4), 0)
    matches = (totals * rng.uniform(0, 1, size=(500, 4))).astype(int)
    stats = np.zeros((500, 9), dtype=np.int32)
    stats[:, 0:8:2], stats[:, 1:8:2] = matches, totals
    stats[:, 8] = rng.integers(0, 30, size=500)
    for fixed, name in ((False, "stupid_bleu"), (True, "fixed_stupid_bleu")):
        assert Scorer(name).score(stats) == pytest.approx(stupid_scores(stats, 4, fixed), abs=1e-12)


def test_bleu_uses_min_n_and_reference_length_orders():
    s = Scorer("bleu").score(np.array([R1, R2, R4]))
    assert s[0] == 0.0                                   # a zero 4-gram match
    assert s[1] == pytest.approx(math.exp((math.log(2 / 3) + math.log(1 / 2)) / 2), abs=EPS)  # M = 2
    assert s[2] == pytest.approx(1.0, abs=EPS)
    s3 = Scorer("bleu", N=3).score(np.array([R1]))
    assert s3[0] == pytest.approx(bp(5, 6) * math.exp((math.log(4 / 5) + math.log(2 / 4) + math.log(1 / 3)) / 3),
                                  abs=EPS)


def test_smooth_and_sum_bleu():
    # perfect match: smooth_bleu = 1/16 + 1/8 + 1/4 + 1/2 = 0.9375 (its maximum, cdec's note)
    assert Scorer("smooth_bleu").score(np.array([R4]))[0] == pytest.approx(0.9375, abs=EPS)
    # R1: orders 1..3 before the first zero match; GM(p1..pn) / 2^(4-n+1)
    p = [4 / 5, 2 / 4, 1 / 3]
    gm = [p[0], math.sqrt(p[0] * p[1]), (p[0] * p[1] * p[2]) ** (1 / 3)]
    want = bp(5, 6) * (gm[0] / 16 + gm[1] / 8 + gm[2] / 4)
    assert Scorer("smooth_bleu").score(np.array([R1]))[0] == pytest.approx(want, abs=EPS)
    assert Scorer("sum_bleu").score(np.array([R1]))[0] == pytest.approx(
        bp(5, 6) * (p[0] / 16 + p[1] / 8 + p[2] / 4), abs=EPS)
    assert Scorer("sumexp_bleu").score(np.array([R1]))[0] == pytest.approx(
        bp(5, 6) * (math.exp(p[0]) / 16 + math.exp(p[1]) / 8 + math.exp(p[2]) / 4), abs=EPS)
    assert Scorer("sumwhatever_bleu").score(np.array([R1]))[0] == pytest.approx(
        bp(5, 6) * (p[0] ** 0.25 / 16 + p[1] ** 0.25 / 8 + p[2] ** 0.25 / 4), abs=EPS)


def test_approx_bleu_context_of_one_best():
    sc = Scorer("approx_bleu", approx_bleu_d=0.5)
    first = sc.score(np.array([R4, R1]))
    # position 0 sees the empty context: plain BLEU of R4 = 1; then context = 0.5 * R4's counts,
    # and position 1 (R1) is scored with them added: matches (4+2, 2+1.5, 1+1, 0+0.5) ...
    assert first[0] == pytest.approx(1.0, abs=EPS)
    m = np.array([4, 2, 1, 0]) + 0.5 * np.array([4, 3, 2, 1])
    t = np.array([5, 4, 3, 2]) + 0.5 * np.array([4, 3, 2, 1])
    assert first[1] == pytest.approx(bp(5, 6) * math.exp(np.log(m / t).mean()), abs=EPS)
    sc.reset()
    assert sc.score(np.array([R1]))[0] == 0.0    # no context after reset: the zero 4-gram match counts


def test_linear_bleu_as_dtrain_codes_it():
    sc = Scorer("lc_bleu")
    s = sc.score(np.array([R1, R1]))
    # position 0: L = 1, C = (1,1,1,1): -5/1 + 1/4 (5/1 + 4/1 + 3/1 + 2/1) = -1.5
    assert s[0] == pytest.approx(-1.5, abs=EPS)
    # then L = 6, C = (6,5,4,3): -5/6 + 1/4 (5/6 + 4/5 + 3/4 + 2/3)
    assert s[1] == pytest.approx(-5 / 6 + (5 / 6 + 4 / 5 + 3 / 4 + 2 / 3) / 4, abs=EPS)


def test_mtplug_variants_and_degenerate_rows():
    zero = np.zeros((2, 9), dtype=np.int32)
    for name in ("stupid_bleu", "bleu", "smooth_bleu", "sum_bleu", "sumexp_bleu", "sumwhatever_bleu",
                 "approx_bleu", "bleu+1", "nakov", "pseudo_doc"):
        out = Scorer(name).score(zero)
        assert out.shape == (2,) and np.isfinite(out).all()
    assert Scorer("stupid").score(np.zeros((0, 9)))[0:0].shape == (0,)
    assert 0 < Scorer("nakov").score(np.array([R1]))[0] < 1


def _reference_pseudo_doc(lists, N=4, decay=0.95):
    """pseudo_doc, scalar: [(rows, source length)] in visiting order -> scores per list."""
    ctx, src, out = [0.0] * 9, 0.0, []
    for rows, f in lists:
        scale = src + f
        scores = []
        for x in rows:
            s = [c + v for c, v in zip(ctx, x)]
            m, t, h, r = [s[2 * n] for n in range(N)], [s[2 * n + 1] for n in range(N)], s[1], s[8]
            orders = int(min(N, r))
            if h <= 0 or r <= 0 or any(m[n] <= 0 or t[n] <= 0 for n in range(orders)):
                scores.append(0.0)
                continue
            mean = sum(math.log(m[n]) - math.log(t[n]) for n in range(orders)) / max(orders, 1)
            scores.append(scale * bp(h, r) * math.exp(mean))
        out.append(scores)
        ctx = [decay * (c + v) for c, v in zip(ctx, rows[0])]
        src = decay * scale
    return out


def test_pseudo_doc_by_hand():
    sc = Scorer("pseudo_doc")
    first = sc.score(np.array([R4, R1]), source_length=3)
    # the empty context: 3 source words times plain BLEU (R1's zero 4-gram match gives 0)
    assert first.tolist() == pytest.approx([3.0, 0.0], abs=EPS)
    second = sc.score(np.array([R1]), source_length=2)
    m = np.array([4, 2, 1, 0]) + 0.95 * np.array([4, 3, 2, 1])
    t = np.array([5, 4, 3, 2]) + 0.95 * np.array([4, 3, 2, 1])
    want = (0.95 * 3 + 2) * bp(5 + 0.95 * 4, 6 + 0.95 * 4) * math.exp(np.log(m / t).mean())
    assert second[0] == pytest.approx(want, abs=EPS)
    sc.reset()
    assert sc.score(np.array([R4]), source_length=5)[0] == pytest.approx(5.0, abs=EPS)


ROWS = st.lists(st.tuples(*[st.integers(0, 6)] * 8, st.integers(0, 9)), min_size=1, max_size=5)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(ROWS, st.integers(0, 30)), min_size=1, max_size=6))
def test_pseudo_doc_equals_the_scalar_reference(lists):
    sc = Scorer("pseudo_doc")
    want = _reference_pseudo_doc([([list(x) for x in rows], f) for rows, f in lists])
    for (rows, f), expected in zip(lists, want):
        got = sc.score(np.array(rows, dtype=np.int32), source_length=f)
        assert got.tolist() == pytest.approx(expected, rel=1e-12, abs=1e-12)
