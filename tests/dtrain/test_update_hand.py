"""dtrain's update reproduced on a hand-computed example (two sentences, one epoch).

The k-best lists are fixed, so the update code is fed directly: for each sentence
the "decoder" model scores are w·f under the weights at that moment (what cdec would
report after decoding with them), the per-sentence scores (BLEU) are given. Two
features, a and b; start weights w = (a, b) = (1, -1).

Sentence A, 5 hypotheses, in k-best (model) order::

    hyp  f=(a,b)  model w·f  score
    A0   (3, 1)    2         0.2
    A1   (2, 1)    1         0.6
    A2   (0, 0)    0         0.4
    A3   (0, 1)   -1         0.5
    A4   (1, 3)   -2         0.1

    by score: A1 > A3 > A2 > A0 > A4

Sentence B, 3 hypotheses (k-best order depends on the weights; given per case)::

    B0 (1, 0) score 0.3     B1 (0, 1) score 0.7     B2 (1, 1) score 0.5
    by score: B1 > B2 > B0

The derivations below are done by hand (numbers written out); the code must agree
to 1e-12.
"""

from __future__ import annotations

import numpy as np
import pytest

from mtplug._ext._nbest_scan import Vocabulary
from mtplug.dtrain.config import DtrainConfig
from mtplug.dtrain.kbest import Kbest
from mtplug.dtrain.update import Learner

A_ROWS = [(3, 1), (2, 1), (0, 0), (0, 1), (1, 3)]
A_SCORES = [0.2, 0.6, 0.4, 0.5, 0.1]
B = {"B0": ((1, 0), 0.3), "B1": ((0, 1), 0.7), "B2": ((1, 1), 0.5)}
EPS = 1e-12


def _kbest(rows, names):
    return Kbest.from_dicts([{"a": a, "b": b} for a, b in rows], names)


def run_epoch(cfg, b_order):
    """One epoch over A then B (B's hypotheses in ``b_order``); returns the learner and stats."""
    names = Vocabulary()
    names.add(b"a")
    names.add(b"b")
    learner = Learner(cfg, weights=[1.0, -1.0])
    stats = []
    for rows, scores in ((A_ROWS, A_SCORES), ([B[h][0] for h in b_order], [B[h][1] for h in b_order])):
        kb = _kbest(rows, names)
        model = kb.model(learner.w)          # the decoder's scores under the current weights
        stats.append(learner.step(kb, np.array(scores), model))
    learner.end_epoch()
    return learner, stats


def test_xyx_with_margin_gamma_and_clip():
    """XYX-full, hi_lo=0.2, loss_margin=1.5, eta=0.5, gamma=0.42, l1_reg=clip 0.05."""
    cfg = DtrainConfig(pair_sampling="XYX-full", hi_lo=0.2, loss_margin=1.5, learning_rate=0.5, gamma=0.42,
                       l1_reg="clip", l1_reg_strength=0.05)
    # --- sentence A. sz=5, sep = round(5*0.2) = 1: top {A1}, bottom {A4}, middle {A3, A2, A0}.
    # XYX-full pairs, top x (middle+bottom) then middle x bottom, with Δ = model(first) - model(second):
    #   (A1,A3) Δ=2   ok (>= 1.5)          (A1,A2) Δ=1  margin violation -> d=(2,1)
    #   (A1,A0) Δ=-1  rank error -> d=(-1,0) (A1,A4) Δ=3  ok
    #   (A3,A4) Δ=1   margin violation -> d=(-1,-2)
    #   (A2,A4) Δ=2   ok                     (A0,A4) Δ=4  ok
    # P = 7 pairs, so each update is followed by w *= a, a = 1 - 2*0.42*0.5/7 = 0.94:
    #   (1,-1)      + 0.5*(2,1)   = (2, -0.5)        *0.94 = (1.88, -0.47)
    #   (1.88,-0.47)+ 0.5*(-1,0)  = (1.38, -0.47)    *0.94 = (1.2972, -0.4418)
    #   ...         + 0.5*(-1,-2) = (0.7972, -1.4418) *0.94 = (0.749368, -1.355292)
    # clip (both changed): (0.749368 - 0.05, -1.355292 + 0.05) = (0.699368, -1.305292)
    #
    # --- sentence B under w = (0.699368, -1.305292): model B0 = 0.699368, B2 = -0.605924,
    # B1 = -1.305292, so the k-best order is B0, B2, B1. sz=3 <= 4: top = {B1};
    # sep = round(0.6) = 1: bottom {B0}, middle {B2}. Pairs (B1,B2), (B1,B0), (B2,B0):
    #   Δ = -0.699368, -2.00466, -1.305292: three rank errors, d = (-1,0), (-1,1), (0,1).
    # P = 3, a = 1 - 2*0.42*0.5/3 = 0.86:
    #   (0.699368,-1.305292) + (-0.5,0)   = (0.199368, -1.305292)  *0.86 = (0.17145648, -1.12255112)
    #                        + (-0.5,0.5) = (-0.32854352, -0.62255112) *0.86 = (-0.2825474272, -0.5353939632)
    #                        + (0,0.5)    = (-0.2825474272, -0.0353939632) *0.86
    #                                     = (-0.242990787392, -0.030438808352)
    # clip: a -> -0.242990787392 + 0.05 = -0.192990787392; b -> min(0, -0.0304... + 0.05) = 0
    learner, (sa, sb) = run_epoch(cfg, ["B0", "B2", "B1"])
    assert (sa.pairs, sa.updates, sa.rank_errors, sa.margin_violations) == (7, 3, 1, 2)
    assert (sb.pairs, sb.updates, sb.rank_errors, sb.margin_violations) == (3, 3, 3, 0)
    assert learner.w == pytest.approx([-0.192990787392, 0.0], abs=EPS)
    assert learner.w[1] == 0.0  # clipped to exactly zero


def test_all_pairs_with_margin_gamma_and_cumulative_l1():
    """all pairs, loss_margin=1.5, eta=0.5, gamma=0.3, l1_reg=cumul 0.1 (Tsuruoka et al. 2009)."""
    cfg = DtrainConfig(pair_sampling="all", loss_margin=1.5, learning_rate=0.5, gamma=0.3,
                       l1_reg="cumul", l1_reg_strength=0.1)
    # --- sentence A: all 10 pairs in score order (A1, A3, A2, A0, A4), Δ and decision:
    #   (A1,A3) 2 ok   (A1,A2) 1 viol d=(2,1)   (A1,A0) -1 err d=(-1,0)   (A1,A4) 3 ok
    #   (A3,A2) -1 err d=(0,1)   (A3,A0) -3 err d=(-3,0)   (A3,A4) 1 viol d=(-1,-2)
    #   (A2,A0) -2 err d=(-3,-1) (A2,A4) 2 ok   (A0,A4) 4 ok
    # P = 10, a = 1 - 2*0.3*0.5/10 = 0.97:
    #   (1,-1)  +(1,0.5)    = (2,-0.5)                 *0.97 = (1.94, -0.485)
    #           +(-0.5,0)   = (1.44,-0.485)            *0.97 = (1.3968, -0.47045)
    #           +(0,0.5)    = (1.3968, 0.02955)        *0.97 = (1.354896, 0.0286635)
    #           +(-1.5,0)   = (-0.145104, 0.0286635)   *0.97 = (-0.14075088, 0.027803595)
    #           +(-0.5,-1)  = (-0.64075088, -0.972196405)  *0.97 = (-0.6215283536, -0.94303051285)
    #           +(-1.5,-0.5)= (-2.1215283536, -1.44303051285) *0.97 = (-2.057882502992, -1.3997395974645)
    # cumul: u = 0.1 (one sentence), q = 0; both negative: w = min(0, w + (u - q)) = w + 0.1
    #   -> (-1.957882502992, -1.2997395974645), q = (0.1, 0.1)
    #
    # --- sentence B: model B0 = -1.957882502992, B1 = -1.2997395974645, B2 = -3.2576221004565;
    # k-best order B1, B0, B2. Pairs in score order:
    #   (B1,B2) Δ = 1.957882502992  ok (>= 1.5)
    #   (B1,B0) Δ = 0.6581429055275 margin violation, d = (-1,1)
    #   (B2,B0) Δ = -1.2997395974645 rank error, d = (0,1)
    # P = 3, a = 1 - 2*0.3*0.5/3 = 0.9:
    #   + (-0.5,0.5) = (-2.457882502992, -0.7997395974645) *0.9 = (-2.2120942526928, -0.71976563771805)
    #   + (0,0.5)    = (-2.2120942526928, -0.21976563771805) *0.9 = (-1.99088482742352, -0.197789073946245)
    # cumul: u = 0.2, q = (0.1, 0.1): w + (u - q) = w + 0.1
    #   -> (-1.89088482742352, -0.097789073946245)
    learner, (sa, sb) = run_epoch(cfg, ["B1", "B0", "B2"])
    assert (sa.pairs, sa.updates, sa.rank_errors, sa.margin_violations) == (10, 6, 4, 2)
    assert (sb.pairs, sb.updates, sb.rank_errors, sb.margin_violations) == (3, 2, 1, 1)
    assert learner.w == pytest.approx([-1.89088482742352, -0.097789073946245], abs=EPS)
    assert learner.l1.q == pytest.approx([0.2, 0.2], abs=EPS)


def test_faster_perceptron_xyx():
    """gamma = loss_margin = 0 (dtrain's default): only misranked pairs, w += eta*d with eta = 1."""
    cfg = DtrainConfig(pair_sampling="XYX-full", hi_lo=0.2)
    # A: of the 7 XYX-full pairs only (A1,A0) has Δ <= 0: w = (1,-1) + (2,1) - (3,1) = (0,-1).
    # B under (0,-1): model B0 = 0, B1 = -1, B2 = -1 (a model tie counts as misranked, as in dtrain):
    #   (B1,B2) Δ = 0, (B1,B0) Δ = -1, (B2,B0) Δ = -1 -> d = (-1,0) + (-1,1) + (0,1) = (-2,2)
    # w = (0,-1) + (-2,2) = (-2, 1)
    learner, (sa, sb) = run_epoch(cfg, ["B0", "B2", "B1"])
    assert (sa.pairs, sb.pairs) == (1, 3)
    assert learner.w.tolist() == [-2.0, 1.0]


def test_faster_perceptron_xyx_as_cdec_samples():
    """The same epoch with cdec's XYX: the top against the rest only."""
    cfg = DtrainConfig(pair_sampling="XYX", hi_lo=0.2)
    # A: top {A1} against the 4 others; (A1,A0) is the misranked one: w = (0,-1) as above.
    # B: sz 3, top {B1}: (B1,B2) Δ = 0 and (B1,B0) Δ = -1, no (B2,B0) -> d = (-1,0) + (-1,1)
    # w = (0,-1) + (-2,1) = (-2, 0)
    learner, (sa, sb) = run_epoch(cfg, ["B0", "B2", "B1"])
    assert (sa.pairs, sb.pairs) == (1, 2)
    assert learner.w.tolist() == [-2.0, 0.0]


def test_batch_accumulates_and_updates_once():
    """batch: both sentences are decoded with the start weights, one update at the end of the epoch."""
    cfg = DtrainConfig(pair_sampling="XYX-full", hi_lo=0.2, batch=True, learning_rate=0.5)
    names = Vocabulary()
    names.add(b"a")
    names.add(b"b")
    learner = Learner(cfg, weights=[1.0, -1.0])
    start = learner.w.copy()
    # A under (1,-1): misranked (A1,A0) only: d = (-1,0).
    # B under (1,-1) in order B0, B2, B1: model 1, 0, -1: (B1,B2) -1, (B1,B0) -2, (B2,B0) -1 -> Σd = (-2,2)
    for rows, scores in ((A_ROWS, A_SCORES), ([B[h][0] for h in ("B0", "B2", "B1")], [0.3, 0.5, 0.7])):
        kb = _kbest(rows, names)
        learner.step(kb, np.array(scores), kb.model(start))
        assert learner.w.tolist() == [1.0, -1.0]     # nothing moves during the epoch
    learner.end_epoch()
    # w = (1,-1) + 0.5*((-1,0) + (-2,2)) = (-0.5, 0)
    assert learner.w.tolist() == [-0.5, 0.0]


def test_closed_form_equals_pair_by_pair_rule():
    """The closed form of a sentence's updates equals dtrain's sequential loop (random lists)."""
    rng = np.random.default_rng(7)
    for trial in range(20):
        k, nf = int(rng.integers(2, 12)), 4
        F = rng.integers(-3, 4, size=(k, nf)).astype(float)
        scores = rng.integers(0, 5, size=k) / 4.0
        w0 = rng.normal(size=nf)
        cfg = DtrainConfig(pair_sampling=["XYX", "XYX-full", "all"][trial % 3], loss_margin=float(rng.uniform(0, 3)),
                           gamma=float(rng.uniform(0, 0.5)), learning_rate=float(rng.uniform(0.1, 1)))
        names = Vocabulary()
        kb = Kbest.from_dicts([{f"f{j}": v for j, v in enumerate(row) if v} for row in F], names)
        ids = [names.get(f"f{j}".encode()) for j in range(nf)]
        learner = Learner(cfg)
        learner.grow(nf)
        learner.w[[i for i in ids if i >= 0]] = w0[[j for j, i in enumerate(ids) if i >= 0]]
        model = kb.model(learner.w)
        w_seq = learner.w.copy()
        from mtplug.dtrain.pairs import sample_pairs

        first, second = sample_pairs(cfg.pair_sampling, scores, model, hi_lo=cfg.hi_lo,
                                     misranked_only=cfg.faster_perceptron)
        dense = np.zeros((k, len(learner.w)))
        dense[kb.rows, kb.ids] = kb.values
        for i, j in zip(first, second):          # cdec dtrain.cc, pair by pair
            delta = model[i] - model[j]
            if delta <= 0 or abs(delta) < cfg.loss_margin:
                w_seq += cfg.learning_rate * (dense[i] - dense[j])
                if cfg.gamma:
                    w_seq -= 2 * cfg.gamma * cfg.learning_rate / len(first) * w_seq
        learner.step(kb, scores, model)
        assert learner.w == pytest.approx(w_seq, rel=1e-12, abs=1e-12)


def test_repeat_applies_the_faster_perceptron_update_again():
    # repeat=2 in faster-perceptron mode: the (pre-filtered) misranked pairs update in both rounds
    cfg = DtrainConfig(pair_sampling="XYX", hi_lo=0.2, repeat=2)
    names = Vocabulary()
    names.add(b"a")
    names.add(b"b")
    learner = Learner(cfg, weights=[1.0, -1.0])
    kb = _kbest(A_ROWS, names)
    learner.step(kb, np.array(A_SCORES), kb.model(learner.w))
    assert learner.w.tolist() == [-1.0, -1.0]  # (1,-1) + 2*(-1,0)
