"""Significance tests and test-set-selection spread over sentence statistics.

Every function takes int32 statistics rows [n, w] (one row per test sentence, a metric
part's sufficient statistics) and ``score``, a function from int64 totals [B, w] (one
row per resample) to float64 [B] scores. The sums run in the compiled kernels of
``pyx/_resample.pyx``; only the draws and the counting are NumPy.

Draws are seeded and made in one documented way, so a rerun gives the same numbers and
so do other tools that draw the same way: each test starts a fresh
``numpy.random.default_rng(seed)`` and draws bootstrap samples as
``rng.integers(0, n, size=(B, n))`` and shuffles as ``rng.integers(2, size=(S, n),
dtype=bool)``, as sacrebleu's paired tests do (their p-values are reproduced exactly,
tests/experiments/test_significance.py). The draws are made :data:`DRAW_ROWS` rows at a
time to bound memory; that many rows hold a multiple of 32 draws, so the stream equals
one call's.

References: Koehn (2004), paired bootstrap; Riezler & Maxwell (2005), approximate
randomization; Clark et al. (2011), optimizer replicas: s_sel, s_dev and the stratified
test (MultEval).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .._ext import _resample
from ..validation import check_count

#: rows of draws made at once (a multiple of 32: see the module docstring)
DRAW_ROWS = 1024

Scorer = Callable[[np.ndarray], np.ndarray]


def _rows(stats, name: str) -> np.ndarray:
    rows = np.ascontiguousarray(stats, dtype=np.int32)
    if rows.ndim != 2 or rows.shape[0] == 0:
        raise ValueError(f"{name}: need statistics rows [n > 0, w], got shape {rows.shape}")
    return rows


def _check_count(count: int, what: str) -> None:
    check_count(count, what)     # the words of every command (mtplug.validation)


def bootstrap_scores(stats, score: Scorer, n_samples: int, seed: int, threads: int = 1) -> np.ndarray:
    """float64 [n_samples]: the score of each bootstrap resample of the test set (n
    sentences drawn with replacement from the n rows of stats int32 [n, w])."""
    return score(bootstrap_totals([stats], n_samples, seed, threads)[0])


def bootstrap_totals(systems: Sequence, n_samples: int, seed: int, threads: int = 1) -> list[np.ndarray]:
    """The summed statistics of the same bootstrap resamples (one draw of sentence
    numbers) for each of several systems' statistics (each int32 [n, w], the same n): a
    list of int64 [n_samples, w]. Score them with any metric whose columns they hold."""
    _check_count(n_samples, "the number of bootstrap samples")
    rows = [_rows(s, "bootstrap") for s in systems]
    n = rows[0].shape[0]
    if any(r.shape[0] != n for r in rows):
        raise ValueError("paired bootstrap: every system needs statistics of the same sentences")
    rng = np.random.default_rng(seed)
    out = [np.empty((n_samples, r.shape[1]), dtype=np.int64) for r in rows]
    for start in range(0, n_samples, DRAW_ROWS):
        count = min(DRAW_ROWS, n_samples - start)
        idx = rng.integers(0, n, size=(count, n)).astype(np.int32)
        for r, o in zip(rows, out):
            _resample.gather_totals(r, idx, o[start:start + count], max(1, int(threads)))
    return out


def sample_std(values) -> float:
    """The standard deviation with Bessel's correction (n - 1), as MultEval's; NaN for
    fewer than two values."""
    v = np.asarray(values, dtype=np.float64)
    return float(np.std(v, ddof=1)) if v.size > 1 else float("nan")


@dataclass(frozen=True)
class PairedBootstrap:
    """Paired bootstrap resampling of a system against a baseline (Koehn 2004).

    p: the p-value of Moses's bootstrap-hypothesis-difference-significance.pl and
    sacrebleu's ``paired_bs``: (1 + #{b: |d_b| - mean_b |d_b| >= |d|}) / (B + 1), d the
    observed difference and d_b that of resample b (``>=``: see
    :func:`approximate_randomization`). wins: the share of resamples in which the
    system scores better than the baseline (Koehn's "system is better in x% of
    samples"; ties count for neither)."""

    p: float
    wins: float
    n_samples: int


def paired_bootstrap(baseline, system, score: Scorer, higher_is_better: bool, n_samples: int, seed: int,
                     threads: int = 1) -> PairedBootstrap:
    """:class:`PairedBootstrap` of ``system`` against ``baseline`` (statistics int32
    [n, w] of the same n sentences)."""
    base_rows, sys_rows = _rows(baseline, "baseline"), _rows(system, "system")
    base, sys_ = (score(t) for t in bootstrap_totals([base_rows, sys_rows], n_samples, seed, threads))
    return compare_resamples(score_of(base_rows, score), score_of(sys_rows, score), base, sys_, higher_is_better)


def compare_resamples(base_score: float, sys_score: float, base, system, higher_is_better: bool) -> PairedBootstrap:
    """:class:`PairedBootstrap` from the two systems' scores on the full test set and on the
    same resamples (float64 [B] each, scored from :func:`bootstrap_totals`)."""
    base, system = np.asarray(base, dtype=np.float64), np.asarray(system, dtype=np.float64)
    observed = abs(base_score - sys_score)
    diffs = np.abs(system - base)
    count = int(np.sum(diffs - diffs.mean() >= observed))
    better = system > base if higher_is_better else system < base
    return PairedBootstrap((count + 1) / (len(base) + 1), float(np.mean(better)), len(base))


def score_of(rows: np.ndarray, score: Scorer) -> float:
    """The score of the full test set: statistics int32 [n, w] summed."""
    return float(score(rows.sum(axis=0, dtype=np.int64)[None])[0])


def approximate_randomization(baseline, system, scores: Sequence[Scorer], n_shuffles: int, seed: int,
                              threads: int = 1) -> list[float]:
    """Two-sided p-values, one per scorer in ``scores`` (the same shuffles for all), of the
    paired approximate randomization test (Riezler & Maxwell
    2005) over statistics int32 [n, w] of the same n data points: each shuffle swaps
    each pair with probability 1/2; p = (1 + #{shuffles: |x - y| >= |d|}) / (S + 1).

    ``>=`` is the test's definition (Noreen 1989; Riezler & Maxwell 2005) and gives a
    system against itself p = 1. MultEval and sacrebleu count ``>``, which gives that
    pair p = 1 / (S + 1); the two agree unless a shuffle reproduces the observed
    difference exactly (nearly never when more than a few sentences differ).

    Stratified over optimizer replicas (Clark et al. 2011): stack each system's replicas
    (replica k of the baseline paired with replica k of the system, sentence by
    sentence) so that the data points are (replica, sentence) pairs and the score is
    that of the replicas' concatenation, as MultEval scores them.
    """
    _check_count(n_shuffles, "the number of shuffles")
    base_rows, sys_rows = _rows(baseline, "baseline"), _rows(system, "system")
    if base_rows.shape != sys_rows.shape:
        raise ValueError(f"approximate randomization: statistics of shapes {base_rows.shape} and "
                         f"{sys_rows.shape} do not pair up")
    base_total = base_rows.sum(axis=0, dtype=np.int64)
    sys_total = sys_rows.sum(axis=0, dtype=np.int64)
    observed = [abs(float(f(base_total[None])[0]) - float(f(sys_total[None])[0])) for f in scores]
    # a shuffle's first pseudo-system is the system with the swapped rows' differences added;
    # rows where the two agree change nothing, so only the others are summed
    diff = base_rows.astype(np.int64) - sys_rows
    differ = np.flatnonzero(np.any(diff != 0, axis=1))
    rows = np.ascontiguousarray(diff[differ])
    rng = np.random.default_rng(seed)
    counts = [0] * len(scores)
    for start in range(0, n_shuffles, DRAW_ROWS):
        n_rows = min(DRAW_ROWS, n_shuffles - start)
        # True: the first pseudo-system takes the baseline's row (sacrebleu's pos_sel)
        keep = rng.integers(2, size=(n_rows, len(base_rows)), dtype=bool)
        sums = np.empty((n_rows, rows.shape[1]), dtype=np.int64)
        _resample.masked_sums(rows, np.ascontiguousarray(keep[:, differ]).view(np.uint8), sums, max(1, int(threads)))
        first = sys_total + sums
        second = base_total + sys_total - first
        for k, f in enumerate(scores):
            counts[k] += int(np.sum(np.abs(f(first) - f(second)) >= observed[k]))
    return [(c + 1) / (n_shuffles + 1) for c in counts]


def stack_replicas(replicas: Sequence) -> np.ndarray:
    """int32 [R * n, w]: the statistics of R replicas (each [n, w]) one after another, the
    data points of :func:`approximate_randomization` across replicas."""
    rows = [_rows(r, "replica") for r in replicas]
    if len({r.shape for r in rows}) != 1:
        raise ValueError("every replica needs statistics of the same sentences")
    return np.ascontiguousarray(np.concatenate(rows, axis=0))
