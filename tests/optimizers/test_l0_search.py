"""ℓ0-regularised MERT: a search claims only what the point it moves to gives, and the
expected-BLEU finder skips the gradients ℓ0 cannot pay for (issue 34)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import mtplug.optimizers.line_search as line_search_module
from mtplug.corpus import NbestCorpus
from mtplug.optimizers.line_search import (
    LineResult,
    Regularizer,
    SparseColumns,
    best_sparse_unit_move,
    line_search,
    sweep,
)
from mtplug.optimizers.mert import Mert, _Search
from tests.reference.random_store import random_store

# found by search: 6.404… · 1 + 0.02636… and 6.404… · 1 differ by a few ulps less than
# 0.02636…, so the sweep puts the breakpoint of the two hypotheses below −w_j
DENSE, WJ = 6.40422650443282, 0.026362359173243803


def _tie_at_the_crossing() -> NbestCorpus:
    """One sentence, two hypotheses that differ only in sparse feature S_0, which the
    better one (BLEU 1; the other 0) has: at w_j = 0 they tie."""
    stats = np.array([[5, 5, 4, 4, 3, 3, 2, 2, 5], [4, 5, 2, 4, 1, 3, 0, 2, 5]], dtype=np.int32)
    return NbestCorpus.from_arrays(np.array([0, 0]), np.array([[DENSE], [DENSE]]), ["D0"], stats,
                                   sparse=(np.array([0, 1, 1]), np.array([0]), np.array([1.0])),
                                   sparse_names=["S_0"])


def _objective_at(corpus, w, d, reg) -> float:
    """The objective at w as a search from w along d sees it (its γ = 0)."""
    res = line_search(corpus, w, d, reg)
    return res.objective - res.gain


@pytest.mark.parametrize("tolerance, claims_the_crossing", [(0.0, True), (None, False)])
def test_a_crossing_a_few_ulps_from_a_breakpoint_is_a_tie(monkeypatch, tolerance, claims_the_crossing):
    """Zeroing w_j is a tie of the two hypotheses; the sweep's breakpoint and −w_j are that
    one point computed two ways. Taken as distinct (tolerance 0, the search before), the
    search claimed λ for the zero and the better side's BLEU, and the point it moved to
    scored the worse side: the next search started 1.0 lower than this one claimed."""
    corpus = _tie_at_the_crossing()
    w, d, reg = np.array([1.0, WJ]), np.array([0.0, 1.0]), Regularizer("l0", 0.01)
    xs, _, _ = sweep(corpus, corpus.scores(w), corpus.scores(d))
    assert len(xs) == 1 and xs[0] != -WJ and abs(xs[0] + WJ) < 1e-15   # the set-up: a few ulps apart
    if tolerance is not None:
        monkeypatch.setattr(line_search_module, "TIE_TOLERANCE", tolerance)
    res = line_search(corpus, w, d, reg)
    moved = res.apply(w, d)
    assert (res.gamma == -WJ) is claims_the_crossing
    if claims_the_crossing:
        assert moved[1] == 0.0 and _objective_at(corpus, moved, d, reg) == pytest.approx(res.objective - 1.0)
    else:
        assert res.gain == 0.0 and _objective_at(corpus, moved, d, reg) == res.objective


def test_a_move_to_a_crossing_leaves_an_exact_zero():
    w, d = np.array([0.82, 2.0]), np.array([0.01, 1.0])
    gamma = -0.82 / 0.01
    assert 0.82 + gamma * 0.01 != 0.0                         # floating point misses the zero
    moved = LineResult(gamma, 0.5, 0.5, 0.1, 1, 1).apply(w, d)
    assert moved[0] == 0.0 and moved[1] == 2.0 + gamma
    assert np.array_equal(LineResult(0.25, 0.5, 0.5, 0.1, 1, 1).apply(w, d), w + 0.25 * d)


@pytest.mark.parametrize("strength", [0.0005, 0.002, 0.05, 5.0])
@pytest.mark.parametrize("seed", range(8))
def test_the_l0_bound_of_a_zero_weight_keeps_the_best_move(seed, strength):
    """Most weights 0, as in ℓ0's regime: a zero weight's search pays λ wherever it moves,
    which the bound now subtracts; the pick is still that of line-searching every feature."""
    rng = np.random.default_rng(seed)
    corpus = random_store(seed, sizes=tuple(int(x) for x in rng.integers(1, 40, 8)), n_sparse=10,
                          gaussian=bool(seed % 2))
    w = rng.normal(size=corpus.n_features)
    w[corpus.n_dense:][rng.random(corpus.n_features - corpus.n_dense) < 0.7] = 0.0
    reg = Regularizer("l0", strength)
    features = np.arange(corpus.n_dense, corpus.n_features)
    pos, res, _, _ = best_sparse_unit_move(corpus, SparseColumns.of(corpus), w, features, reg,
                                           intercepts=corpus.scores(w), tolerance=1e-6)
    every = [line_search(corpus, w, np.eye(corpus.n_features)[j], reg) for j in features]
    gains = [r.gain for r in every]
    expect = next((i for i, g in enumerate(gains) if g > 1e-6 and g == max(gains)), -1)
    assert pos == expect and res == (every[expect] if expect >= 0 else None)


def _tie_prone_store(seed: int) -> NbestCorpus:
    """A random store whose every hypothesis has a twin that differs in one sparse
    feature only (so ℓ0's zero crossings are ties)."""
    base = random_store(seed, sizes=(6, 4, 8, 5, 7, 3), n_sparse=12, gaussian=True)
    rows, sids, indptr, ids, vals, stats = [], [], [0], [], [], []
    rng = np.random.default_rng(seed)
    for h in range(base.n_hypotheses):
        lo, hi = base.sparse_indptr[h], base.sparse_indptr[h + 1]
        own = (base.sparse_ids[lo:hi] - base.n_dense).tolist(), base.sparse_values[lo:hi].tolist()
        extra = int(rng.integers(0, 12))
        for twin in (False, True):
            sids.append(int(np.searchsorted(base.sent_offsets, h, side="right")) - 1)
            rows.append(base.dense[h])
            f = dict(zip(*own))
            if twin:
                f[extra] = f.get(extra, 0.0) + 1.0
            ids += sorted(f)
            vals += [f[k] for k in sorted(f)]
            indptr.append(len(ids))
            stats.append(base.stats[(h + twin) % base.n_hypotheses])
    return NbestCorpus.from_arrays(np.array(sids), np.array(rows), [f"D{j}" for j in range(base.n_dense)],
                                   np.array(stats, dtype=np.int32),
                                   sparse=(np.array(indptr), np.array(ids), np.array(vals)),
                                   sparse_names=[f"S_{j}" for j in range(12)])


@pytest.mark.parametrize("seed", range(6))
def test_every_move_scores_what_its_search_claimed(monkeypatch, seed):
    """Each move of an ℓ0 expected-BLEU run lands where the metric is what the search
    claimed (before: 36 moves over 9 of 12 such stores claimed the better side of a tie
    at a zero crossing, or of an interval a few ulps wide, and the runs cycled)."""
    corpus = _tie_prone_store(seed)
    strength = 0.002
    # every weight non-zero: twins tie only where a search zeroes their feature
    start = np.random.default_rng(seed).normal(size=corpus.n_features)
    claims = []
    move = _Search.move

    def checked_move(self, res, d):
        move(self, res, d)
        claims.append((res.score, corpus.metric_of(self.w)))

    monkeypatch.setattr(_Search, "move", checked_move)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = Mert(directions="expbleu", restarts=0, reg="l0", reg_strength=strength).optimize(corpus, start, seed)
    assert claims and all(claimed == actual for claimed, actual in claims)
    # score and trace on the 0-100 scale: the objective is BLEU - 100·λ·R there
    assert res.info["trace"][-1][2] == pytest.approx(res.score - 100 * strength * np.count_nonzero(res.weights),
                                                     abs=1e-10)


def test_gradients_l0_cannot_pay_for_are_skipped_with_the_same_weights(monkeypatch):
    """λ · (sparse features that fire) far above BLEU's range: the gradient's search fails at
    every μ. Skipping them gives the run that tries them all (given the iterations to end),
    in one gradient per pass instead of one per μ."""
    corpus = random_store(5, sizes=tuple(range(3, 30)), n_sparse=40, gaussian=True)
    start = np.zeros(corpus.n_features)
    start[: corpus.n_dense] = np.random.default_rng(5).normal(size=corpus.n_dense)
    mert = Mert(directions="expbleu", restarts=0, reg="l0", reg_strength=0.05, max_iterations=100000)

    def run():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return mert.optimize(corpus, start, 1)

    skipping = run()
    monkeypatch.setattr(_Search, "l0_hopeless", lambda self, new, zeroable: False)
    trying = run()
    assert skipping.weights.tobytes() == trying.weights.tobytes()
    assert skipping.score == trying.score
    assert skipping.info["iterations"] < trying.info["iterations"]


def _varying_by_hand(corpus) -> np.ndarray:
    """Each sparse feature's value in every hypothesis, sentence by sentence, written out."""
    out = np.zeros(corpus.n_features, dtype=bool)
    for s in range(corpus.n_sentences):
        lo, hi = corpus.sent_offsets[s], corpus.sent_offsets[s + 1]
        values = np.zeros((hi - lo, corpus.n_features))
        for h in range(lo, hi):
            for p in range(corpus.sparse_indptr[h], corpus.sparse_indptr[h + 1]):
                values[h - lo, corpus.sparse_ids[p]] += corpus.sparse_values[p]
        out |= values.min(axis=0) != values.max(axis=0)
    out[: corpus.n_dense] = False
    return out


@pytest.mark.parametrize("seed", range(10))
def test_varying_features_equal_the_written_out_values(seed):
    """Repeated ids in a row sum; a feature firing in every hypothesis of a sentence with
    one value, or only with value 0, does not vary there."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 7, 6)
    n = int(sizes.sum())
    indptr, ids, vals = [0], [], []
    for _h in range(n):
        for _ in range(int(rng.integers(0, 4))):
            ids.append(int(rng.integers(0, 5)))
            vals.append(float(rng.choice([0.0, 1.0, 1.0, 2.0, -1.0])))
        indptr.append(len(ids))
    if seed % 2:     # a feature constant within each sentence: fires once per hypothesis, one value
        rows = []
        for h in range(n):
            lo, hi = indptr[h], indptr[h + 1]
            rows.append((ids[lo:hi] + [5], vals[lo:hi] + [3.0]))
        indptr, ids, vals = [0], [], []
        for i, v in rows:
            ids += i
            vals += v
            indptr.append(len(ids))
    stats = random_store(seed, sizes=tuple(int(x) for x in sizes)).stats
    corpus = NbestCorpus.from_arrays(np.repeat(np.arange(len(sizes)), sizes), rng.normal(size=(n, 2)), ["D0", "D1"],
                                     stats, sparse=(np.array(indptr), np.array(ids, dtype=int), np.array(vals)),
                                     sparse_names=[f"S_{j}" for j in range(6)])
    varying = SparseColumns.of(corpus).varying
    assert np.array_equal(varying, _varying_by_hand(corpus))
    if seed % 2:
        assert not varying[corpus.n_dense + 5]
