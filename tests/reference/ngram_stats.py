"""Slow, obvious BLEU sufficient statistics: the oracle for the compiled scanner.

Counts n-grams with Python Counters; clipping takes, per n-gram, the largest count in
any one reference (Papineni et al. 2002; Moses BleuScorer::setReferenceFiles does the
same). Reference length: closest (ties to the shorter), shortest, or the SUM of all
lengths for ``average`` (mtplug stores it so and divides by the number of references).
"""

from __future__ import annotations

from collections import Counter


def ngrams(tokens: list[str], n: int) -> Counter:
    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def bleu_stats(hyp: list[str], refs: list[list[str]], reflen: str = "closest") -> list[int]:
    """``[m1, t1, m2, t2, m3, t3, m4, t4, ref_len]`` of one hypothesis."""
    row: list[int] = []
    for n in range(1, 5):
        h = ngrams(hyp, n)
        best: Counter = Counter()
        for r in refs:
            for g, c in ngrams(r, n).items():
                best[g] = max(best[g], c)
        row += [sum(min(c, best[g]) for g, c in h.items()), max(0, len(hyp) - n + 1)]
    lens = [len(r) for r in refs]
    if reflen == "closest":
        row.append(min(lens, key=lambda L: (abs(L - len(hyp)), L)))
    elif reflen == "shortest":
        row.append(min(lens))
    else:
        row.append(sum(lens))
    return row
