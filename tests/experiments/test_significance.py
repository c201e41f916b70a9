"""Significance kernels and tests: the compiled sums equal slow loops, Monte Carlo
p-values and spreads converge to exact enumeration, and the seeded draws reproduce
sacrebleu's paired tests exactly."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplug._ext import _resample
from mtplug.experiments import significance as sig
from mtplug.metrics import get_metric
from tests.reference import significance_reference as ref


@st.composite
def _stats_and_draws(draw):
    n = draw(st.integers(1, 12))
    w = draw(st.integers(1, 5))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)
    a = rng.integers(-1000, 1000, size=(n, w)).astype(np.int32)
    b = rng.integers(-1000, 1000, size=(n, w)).astype(np.int32)
    rows = draw(st.integers(0, 9))
    idx = rng.integers(0, n, size=(rows, draw(st.integers(0, 15)))).astype(np.int32)
    swap = rng.integers(0, 2, size=(rows, n)).astype(np.uint8)
    return a, b, idx, swap


@settings(max_examples=150, deadline=None)
@given(_stats_and_draws(), st.sampled_from([1, 2]))
def test_gather_totals_equals_the_loop(case, threads):
    a, _, idx, _ = case
    out = np.full((len(idx), a.shape[1]), 7, dtype=np.int64)
    _resample.gather_totals(a, idx, out, threads)
    assert out.tolist() == ref.gather_totals(a.tolist(), idx.tolist()) if len(idx) else out.shape[0] == 0


@settings(max_examples=150, deadline=None)
@given(_stats_and_draws(), st.sampled_from([1, 2]))
def test_masked_sums_equal_the_loop(case, threads):
    a, b, _, swap = case
    rows = a.astype(np.int64) * (2 ** 33) - b     # beyond int32: differences of large statistics
    out = np.full((len(swap), a.shape[1]), 7, dtype=np.int64)
    _resample.masked_sums(rows, swap, out, threads)
    assert out.tolist() == ref.masked_sums(rows.tolist(), swap.tolist())


def test_kernels_refuse_mismatched_shapes_and_dtypes():
    a = np.zeros((3, 2), dtype=np.int32)
    with pytest.raises(ValueError, match="mask covers 4 rows, expected 3"):
        _resample.masked_sums(a.astype(np.int64), np.zeros((1, 4), dtype=np.uint8), np.zeros((1, 2), dtype=np.int64))
    with pytest.raises(ValueError, match="out has shape"):
        _resample.gather_totals(a, np.zeros((2, 3), dtype=np.int32), np.zeros((3, 2), dtype=np.int64))
    with pytest.raises(ValueError, match="Buffer dtype mismatch"):
        _resample.gather_totals(a.astype(np.int64), np.zeros((2, 3), dtype=np.int32), np.zeros((2, 2), dtype=np.int64))


def _ratio(totals):
    """A toy corpus metric: column 0 over column 1 (a precision)."""
    t = np.asarray(totals, dtype=np.float64)
    return t[..., 0] / np.maximum(t[..., 1], 1)


def _tiny_pair():
    rng = np.random.default_rng(3)
    tot = rng.integers(5, 12, size=8)
    a = np.stack([rng.integers(0, tot + 1), tot], axis=1).astype(np.int32)
    b = np.stack([np.minimum(tot, a[:, 0] + rng.integers(0, 3, size=8)), tot], axis=1).astype(np.int32)
    return a, b


def test_randomization_converges_to_the_exact_permutation_p():
    a, b = _tiny_pair()
    exact = ref.exact_randomization_p(a.tolist(), b.tolist(), lambda t: _ratio(t).item())
    shuffles = 20000
    p, = sig.approximate_randomization(a, b, [_ratio], shuffles, seed=11)
    sd = (exact * (1 - exact) / shuffles) ** 0.5
    assert 0.01 < exact < 0.99 and abs(p - exact) < 4 * sd + 1 / shuffles


def test_bootstrap_spread_converges_to_the_exact_one():
    rng = np.random.default_rng(5)
    tot = rng.integers(3, 9, size=5)
    stats = np.stack([rng.integers(0, tot + 1), tot], axis=1).astype(np.int32)
    exact = ref.exact_bootstrap_std(stats.tolist(), lambda t: _ratio(t).item())
    values = sig.bootstrap_scores(stats, _ratio, 40000, seed=2)
    assert sig.sample_std(values) == pytest.approx(exact, rel=0.03)


def test_a_system_against_itself_is_not_significant():
    a, _ = _tiny_pair()
    assert sig.approximate_randomization(a, a, [_ratio], 500, seed=0) == [1.0]
    assert sig.paired_bootstrap(a, a, _ratio, True, 500, seed=0).p == 1.0


def test_draws_are_seeded_and_chunk_free():
    a, b = _tiny_pair()
    one = sig.approximate_randomization(a, b, [_ratio], 3000, seed=4)
    assert one == sig.approximate_randomization(a, b, [_ratio], 3000, seed=4)
    many = sig.bootstrap_scores(a, _ratio, sig.DRAW_ROWS * 2 + 5, seed=9)
    rng = np.random.default_rng(9)
    idx = rng.integers(0, len(a), size=(len(many), len(a)))
    np.testing.assert_array_equal(many, _ratio(a[idx].sum(axis=1)))


def test_sample_std_uses_bessel_and_needs_two_values():
    assert sig.sample_std([1.0, 2.0, 3.0]) == pytest.approx(1.0)
    assert np.isnan(sig.sample_std([4.0]))


def test_stack_replicas_orders_replica_by_replica():
    r1, r2 = np.arange(6, dtype=np.int32).reshape(3, 2), np.arange(6, 12, dtype=np.int32).reshape(3, 2)
    assert sig.stack_replicas([r1, r2]).tolist() == np.concatenate([r1, r2]).tolist()
    with pytest.raises(ValueError, match="same sentences"):
        sig.stack_replicas([r1, r2[:2]])


def test_bad_counts_are_errors():
    a, b = _tiny_pair()
    with pytest.raises(ValueError, match="must be an integer >= 1"):
        sig.approximate_randomization(a, b, [_ratio], 0, seed=0)
    with pytest.raises(ValueError, match="must be an integer >= 1"):
        sig.bootstrap_scores(a, _ratio, 0, seed=0)
    with pytest.raises(ValueError, match="do not pair up"):
        sig.approximate_randomization(a, b[:3], [_ratio], 5, seed=0)


# ---------------------------------------------------------------- sacrebleu's paired tests
def _sentences(seed: int, n: int = 60):
    rng = np.random.default_rng(seed)
    vocab = [f"w{i}" for i in range(40)]
    refs = [" ".join(rng.choice(vocab, size=rng.integers(4, 15))) for _ in range(n)]

    def noisy(p):
        out = []
        for r in refs:
            words = [w if rng.random() > p else str(rng.choice(vocab)) for w in r.split()]
            out.append(" ".join(words))
        return out

    return refs, noisy(0.35), noisy(0.25)


def _bleu_scorer(metric):
    return lambda totals: 100 * metric.objectives(totals)


def test_paired_tests_equal_sacrebleus_exactly():
    from sacrebleu.metrics import BLEU
    from sacrebleu.significance import _paired_ar_test, _paired_bs_test

    refs, base, system = _sentences(1)
    bleu = get_metric("bleu")
    base_rows, metric = bleu.statistics(base, [refs])
    sys_rows, _ = bleu.statistics(system, [refs])
    scorer = _bleu_scorer(metric)

    sb = BLEU(tokenize="none", smooth_method="none")
    bl_stats = sb._extract_corpus_statistics(base, [refs])
    bl_result = sb._aggregate_and_compute(bl_stats)
    info = {"BLEU": (bl_stats, bl_result)}
    seed, n = 12345, 3000
    _, ar = _paired_ar_test(info, "sys", system, [refs], {"BLEU": sb}, n_samples=n, seed=seed)
    _, bs = _paired_bs_test(info, "sys", system, [refs], {"BLEU": sb}, n_samples=n, seed=seed)

    assert sig.approximate_randomization(base_rows, sys_rows, [scorer], n, seed) == [ar["BLEU"].p_value]
    assert sig.paired_bootstrap(base_rows, sys_rows, scorer, True, n, seed).p == bs["BLEU"].p_value
    # and the resampled scores sacrebleu's confidence interval comes from
    values = sig.bootstrap_scores(sys_rows, scorer, n, seed)
    # (sacrebleu sums float32 statistics: equal to 1e-6)
    assert values.mean() == pytest.approx(bs["BLEU"].mean, abs=1e-6)


def test_paired_bootstrap_wins_count_resamples_where_the_system_is_better():
    refs, base, system = _sentences(2)
    bleu = get_metric("bleu")
    base_rows, metric = bleu.statistics(base, [refs])
    sys_rows, _ = bleu.statistics(system, [refs])
    scorer = _bleu_scorer(metric)
    result = sig.paired_bootstrap(base_rows, sys_rows, scorer, True, 2000, seed=3)
    b, s = (scorer(t) for t in sig.bootstrap_totals([base_rows, sys_rows], 2000, seed=3))
    assert result.wins == np.mean(s > b) and result.wins > 0.9
    # for an error rate lower is better: the same resamples, the wins the other way round
    flipped = sig.paired_bootstrap(base_rows, sys_rows, scorer, False, 2000, seed=3)
    assert flipped.wins == np.mean(s < b) and flipped.p == result.p


def test_metric_objectives_equal_the_scalar_objective():
    refs, base, _ = _sentences(4, n=20)
    for name in ("bleu", "ter", "chrf", "bleu:0.6,ter:0.4"):
        rows, metric = get_metric(name).statistics(base, [refs])
        totals = np.cumsum(rows, axis=0, dtype=np.int64)
        want = [metric.objective(t) for t in totals]
        np.testing.assert_array_equal(metric.objectives(totals), want)
