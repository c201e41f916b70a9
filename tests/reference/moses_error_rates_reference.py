"""Moses's PER, WER and CDER the slow, obvious way, on strings (the definitions of
mtplug.metrics.moses_error_rates, written from Moses's documented behaviour and the
metrics' definitions, not from the kernel).

Moses (mert/Scorer.cpp TokenizeAndEncode) splits a line on spaces; ``case:false``
lowercases each byte with C ``tolower`` (ASCII only). Scores are 32-bit floats.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

F = np.float32


def tokens(line: str, lowercase: bool = False) -> list[bytes]:
    """Moses's tokens of a line: split on ' ', empty pieces dropped; ASCII folding."""
    out = [t.encode("utf-8") for t in line.split(" ") if t]
    return [t.lower() for t in out] if lowercase else out   # bytes.lower: ASCII only


# ----------------------------------------------------------------------------- PER
def per_stats(hyp: str, ref: str, lowercase: bool = False) -> list[int]:
    """``correct hyp_len ref_len``: words of the hypothesis that the reference has, a word
    counted at most as often as the reference has it, whatever the positions."""
    h, r = Counter(tokens(hyp, lowercase)), Counter(tokens(ref, lowercase))
    return [sum((h & r).values()), sum(h.values()), sum(r.values())]


def per_score(row) -> float:
    """1 - PER = (correct - max(0, hyp_len - ref_len)) / ref_len in float32; 0 if ref_len is 0."""
    correct, hyp_len, ref_len = (F(v) for v in row)
    if ref_len == 0:
        return 0.0
    return float(F(F(correct - max(F(0), F(hyp_len - ref_len))) / ref_len))


# ----------------------------------------------------------------------------- WER / CDER
def levenshtein(h: list, r: list) -> int:
    """Fewest word insertions, deletions and substitutions turning h into r (full table)."""
    d = [[0] * (len(h) + 1) for _ in range(len(r) + 1)]
    for i in range(len(h) + 1):
        d[0][i] = i
    for j in range(1, len(r) + 1):
        d[j][0] = j
        for i in range(1, len(h) + 1):
            d[j][i] = min(d[j - 1][i] + 1, d[j][i - 1] + 1, d[j - 1][i - 1] + (h[i - 1] != r[j - 1]))
    return d[len(r)][len(h)]


def cder(h: list, r: list) -> int:
    """CDER distance (Leusch, Ueffing, Ney 2006) as Moses computes it: the cheapest path
    from (0, 0) to (len h, len r) in the grid of (hypothesis position i, reference position
    l) with unit-cost steps (i-1, l) -> (i, l), (i, l-1) -> (i, l), substitution (cost 0 for
    equal words), and a "long jump" of cost 1 from any cell to any other cell of the same
    reference position l. Each row is relaxed to a fixpoint, literally."""
    INF = float("inf")
    prev = None
    for l in range(len(r) + 1):
        row = [INF] * (len(h) + 1)
        if l == 0:
            row[0] = 0
        changed = True
        while changed:
            changed = False
            best = min(row)
            for i in range(len(h) + 1):
                c = row[i]
                if l > 0:
                    c = min(c, prev[i] + 1)
                    if i > 0:
                        c = min(c, prev[i - 1] + (h[i - 1] != r[l - 1]))
                if i > 0:
                    c = min(c, row[i - 1] + 1)
                c = min(c, best + 1)
                if c < row[i]:
                    row[i] = c
                    changed = True
        prev = row
    return int(prev[len(h)])


def edit_score(row) -> float:
    """1 - distance / ref_len in float32; 1 when ref_len is 0 (CderScorer::calculateScore)."""
    d, n = F(row[0]), F(row[1])
    if n == 0:
        return 1.0
    return float(F(F(1) - F(d / n)))


def edit_stats(hyp: str, refs: list[str], long_jumps: bool, lowercase: bool = False) -> list[int]:
    """``distance ref_len`` of the reference Moses keeps: the first, replaced by a later one
    only when its sentence score, truncated to an int, is larger."""
    h = tokens(hyp, lowercase)
    best, best_row = None, None
    for ref in refs:
        r = tokens(ref, lowercase)
        row = [cder(h, r) if long_jumps else levenshtein(h, r), len(r)]
        s = int(edit_score(row))  # C++ float -> int: toward zero
        if best is None or s > best:
            best, best_row = s, row
    return best_row


def wer_stats(hyp: str, refs: list[str], lowercase: bool = False) -> list[int]:
    return edit_stats(hyp, refs, False, lowercase)


def cder_stats(hyp: str, refs: list[str], lowercase: bool = False) -> list[int]:
    return edit_stats(hyp, refs, True, lowercase)
