"""Slow, obvious significance machinery: the oracle for pyx/_resample.pyx and
mtplug.experiments.significance.

Sums written as Python loops over sentences, and the exact p-values that the Monte
Carlo tests estimate: approximate randomization enumerated over all 2^n swaps, paired
bootstrap over all n^n resamples (tiny n only).
"""

from __future__ import annotations

import itertools


def gather_totals(stats, idx):
    """[[sum of stats rows idx[b]] for each b] as Python ints."""
    w = len(stats[0])
    out = []
    for row in idx:
        t = [0] * w
        for j in row:
            for k in range(w):
                t[k] += int(stats[j][k])
        out.append(t)
    return out


def masked_sums(rows, mask):
    """Per sample s, the sum of rows[i] over the i with mask[s][i] set."""
    w = len(rows[0]) if len(rows) else 0
    out = []
    for m in mask:
        t = [0] * w
        for i, on in enumerate(m):
            if on:
                for k in range(w):
                    t[k] += int(rows[i][k])
        out.append(t)
    return out


def exact_randomization_p(a, b, score) -> float:
    """The exact two-sided permutation p-value: the share of all 2^n swap patterns whose
    |score difference| is >= the observed one (score: list of totals -> float)."""
    n, w = len(a), len(a[0])
    total = lambda rows: [sum(int(r[k]) for r in rows) for k in range(w)]  # noqa: E731
    observed = abs(score(total(a)) - score(total(b)))
    hits = 0
    for mask in itertools.product((0, 1), repeat=n):
        x = [b[i] if s else a[i] for i, s in enumerate(mask)]
        y = [a[i] if s else b[i] for i, s in enumerate(mask)]
        hits += abs(score(total(x)) - score(total(y))) >= observed
    return hits / 2 ** n


def exact_bootstrap_std(stats, score) -> float:
    """The standard deviation (population form) of the score over all n^n equally likely
    resamples: what the bootstrap estimate converges to."""
    n, w = len(stats), len(stats[0])
    values = []
    for idx in itertools.product(range(n), repeat=n):
        values.append(score([sum(int(stats[j][k]) for j in idx) for k in range(w)]))
    mean = sum(values) / len(values)
    return (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
