"""TER with shifts the slow, obvious way: whole matrices of Python lists, shifts made by
slicing, candidates compared as tuples — one hypothesis and one reference at a time.
Written from the description of sacrebleu 2.6's TERCOM re-implementation (the rules
listed in pyx/_ter.pyx's header), not from the kernel; the compiled statistics and
sacrebleu's TER must both agree with it.
"""

from __future__ import annotations

import math
from fractions import Fraction

BEAM = 25              # columns kept either side of the pseudo-diagonal
MAX_SHIFT_SIZE = 10    # words moved at once
MAX_SHIFT_DIST = 50    # |reference start - hypothesis start| of a moved run
MAX_CANDIDATES = 1000  # shift tries per hypothesis and reference, all rounds together
INF = float("inf")

MATCH, SUB, DEL, INS = "match", "sub", "del", "ins"   # DEL: hypothesis word dropped


def beam(n_hyp: int, n_ref: int) -> list[range]:
    """The columns computed in each row 0..n_hyp of the edit-distance matrix."""
    ratio = n_ref / n_hyp if n_hyp else 1
    width = math.ceil(ratio / 2 + BEAM) if ratio / 2 > BEAM else BEAM
    rows = [range(0, n_ref + 1)]
    for i in range(1, n_hyp + 1):
        diag = math.floor(i * ratio)
        last = n_ref + 1 if i == n_hyp else min(n_ref + 1, diag + width)
        rows.append(range(max(0, diag - width), last))
    return rows


def matrix(hyp: list, ref: list, rows: list[range], reuse: list | None = None, start: int = 0) -> list:
    """Cells (cost, step) of the beam edit distance; rows 0..start are taken from
    ``reuse`` (a matrix of a hypothesis with the same first ``start`` words)."""
    if reuse is None:
        m = [[(j, INS) for j in range(len(ref) + 1)]]
        start = 0
    else:
        m = reuse[:start + 1]
    for i in range(start + 1, len(hyp) + 1):
        row = [(INF, None)] * (len(ref) + 1)
        for j in rows[i]:
            if j == 0:
                row[0] = (m[i - 1][0][0] + 1, DEL)
                continue
            same = hyp[i - 1] == ref[j - 1]
            options = [(m[i - 1][j - 1][0] + (0 if same else 1), MATCH if same else SUB),
                       (m[i - 1][j][0] + 1, DEL),
                       (row[j - 1][0] + 1, INS)]
            for cost, step in options:      # the first of equal costs wins
                if cost < row[j][0]:
                    row[j] = (cost, step)
        m.append(row)
    return m


def alignment(m: list, n_hyp: int, n_ref: int):
    """From the path into the corner: align[r] (hypothesis position of reference word
    r, the hypothesis word before it when r was inserted), and 0/1 error flags."""
    align, hyp_err, ref_err = [None] * n_ref, [0] * n_hyp, [0] * n_ref
    i, j = n_hyp, n_ref
    while i or j:
        step = m[i][j][1]
        if step in (MATCH, SUB):
            align[j - 1] = i - 1
            hyp_err[i - 1] = ref_err[j - 1] = int(step == SUB)
            i, j = i - 1, j - 1
        elif step == DEL:
            hyp_err[i - 1] = 1
            i -= 1
        elif step == INS:
            align[j - 1] = i - 1
            ref_err[j - 1] = 1
            j -= 1
        else:
            raise AssertionError("no path through the beam")
    return align, hyp_err, ref_err


def move(words: list, start: int, length: int, target: int) -> list:
    """words with words[start:start+length] moved: to begin at target when target < start,
    to end at target when target > start + length, else right by target - start (as far
    as the words go)."""
    run = words[start:start + length]
    rest = words[:start] + words[start + length:]
    if target < start:
        at = target
    elif target > start + length:
        at = target - length
    else:
        at = start + min(target - start, len(words) - start - length)
    return rest[:at] + run + rest[at:]


def common_runs(hyp: list, ref: list):
    """(hyp start, ref start, length) of equal runs, starts at most MAX_SHIFT_DIST apart,
    lengths 1..MAX_SHIFT_SIZE, in the order TER tries them."""
    for h in range(len(hyp)):
        for r in range(len(ref)):
            if abs(h - r) > MAX_SHIFT_DIST:
                continue
            n = 0
            while n < MAX_SHIFT_SIZE and h + n < len(hyp) and r + n < len(ref) and hyp[h + n] == ref[r + n]:
                n += 1
                yield h, r, n


def pair_edits(hyp: list, ref: list, log: dict | None = None) -> int:
    """Shifts + edit distance of hypothesis tokens against reference tokens; ``log``
    (if given) gets the shifts made and the candidates tried."""
    if not ref:
        return len(hyp)
    rows = beam(len(hyp), len(ref))
    words, shifts, tried = list(hyp), 0, 0
    while True:
        m = matrix(words, ref, rows)
        distance = m[-1][-1][0]
        align, hyp_err, ref_err = alignment(m, len(words), len(ref))
        best = None
        for h, r, n in common_runs(words, ref):
            if not any(hyp_err[h:h + n]) or not any(ref_err[r:r + n]) or h <= align[r] < h + n:
                continue
            targets = [0 if r + k == -1 else align[r + k] + 1 for k in range(-1, n)]
            for k, target in enumerate(targets):
                if k and target == targets[k - 1]:
                    continue
                moved = move(words, h, n, target)
                first = min(h, target)           # rows up to here are those of `words`
                cost = matrix(moved, ref, rows, m, first)[-1][-1][0]
                tried += 1
                key = (distance - cost, n, -h, -target)
                if best is None or key > best[0]:
                    best = (key, moved)
            if tried >= MAX_CANDIDATES:
                break
        if tried >= MAX_CANDIDATES or best is None or best[0][0] <= 0:
            if log is not None:
                log.update(shifts=shifts, tried=tried)
            return shifts + distance
        words = best[1]
        shifts += 1


def sentence_stats(hyp: str, refs: list[str], case_sensitive: bool = False) -> tuple[int, Fraction]:
    """(fewest edits over the references, average reference length) of one sentence,
    tokens split on whitespace after lowercasing unless case_sensitive."""
    prep = (lambda s: s.split()) if case_sensitive else (lambda s: s.lower().split())
    h = prep(hyp)
    ref_tokens = [prep(r) for r in refs]
    edits = min(pair_edits(h, r) for r in ref_tokens)
    return edits, Fraction(sum(len(r) for r in ref_tokens), len(refs))


def corpus_ter(rows: list[tuple[int, Fraction]]) -> float:
    edits = sum(e for e, _ in rows)
    length = sum((n for _, n in rows), Fraction(0))
    if length > 0:
        return float(edits / length)
    return 1.0 if edits > 0 else 0.0
