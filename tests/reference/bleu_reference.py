"""Slow, obvious BLEU formulas: the oracle for the compiled kernels in pyx/_bleu.pxd.

Written from the papers' and the tools' formulas in linear space (the kernels work in
log space), with exact fractions for every ratio, so that an agreement to 1e-12 is
meaningful. A stats row is ``match1 total1 match2 total2 match3 total3 match4 total4
ref_len``; ``ref_len / divisor`` is the effective reference length r, ``total1`` the
hypothesis length c. Every function returns a float BLEU in [0, 1].

Sources (read, not copied):
- Papineni et al. (2002): BLEU = BP * (prod_n p_n) ** (1/N), BP = 1 if c > r else
  exp(1 - r/c); Moses mert/BleuScorer.cpp BleuScorer::calculateScore gives 0 when a
  match count is 0.
- Lin & Och (2004, ORANGE): BLEU+1 adds 1 to the matches and totals of n > 1.
- Moses mert/BleuScorer.cpp smoothedSentenceBleu(stats, smoothing=1, smoothBP=false):
  +1 at every order; with smoothBP the reference length in the BP gets +1 too
  (mert/pro.cpp --smooth-brevity-penalty, "as in Nakov et al. (Coling 2012)").
- cdec training/dtrain/score.cc StupidBleuScorer / FixedStupidBleuScorer, with
  LocalScorer::brevity_penalty (1 if hyp_len > ref_len else exp(1 - ref_len/hyp_len)).
"""

from __future__ import annotations

import math
from fractions import Fraction

ORDER = 4


def _parts(row, divisor):
    matches = [int(row[2 * n]) for n in range(ORDER)]
    totals = [int(row[2 * n + 1]) for n in range(ORDER)]
    hyp_len = totals[0]
    ref_len = Fraction(int(row[8])) / Fraction(divisor)
    return matches, totals, hyp_len, ref_len


def brevity_penalty(hyp_len, ref_len) -> float:
    """BP = 1 if c >= r (so also c = r = 0), 0 if c = 0 < r, else exp(1 - r/c)."""
    if hyp_len >= ref_len:
        return 1.0
    if hyp_len == 0:
        return 0.0
    return math.exp(float(1 - Fraction(ref_len) / hyp_len))


def _geometric_mean(precisions) -> float:
    product = Fraction(1)
    for p in precisions:
        product *= p
    return float(product) ** (1.0 / len(precisions))


def bleu(row, divisor=1) -> float:
    """Unsmoothed BLEU of one row (or of summed corpus stats): 0 if any match is 0."""
    matches, totals, hyp_len, ref_len = _parts(row, divisor)
    if any(m == 0 for m in matches):
        return 0.0
    precisions = [Fraction(m, t) for m, t in zip(matches, totals)]
    return brevity_penalty(hyp_len, ref_len) * _geometric_mean(precisions)


def bleu_plus_one(row, divisor=1) -> float:
    """Lin & Och (2004): p_1 = m_1/t_1, p_n = (m_n + 1)/(t_n + 1) for n >= 2; 0 if m_1 = 0."""
    matches, totals, hyp_len, ref_len = _parts(row, divisor)
    if matches[0] == 0:
        return 0.0
    precisions = [Fraction(matches[0], totals[0])]
    precisions += [Fraction(m + 1, t + 1) for m, t in zip(matches[1:], totals[1:])]
    return brevity_penalty(hyp_len, ref_len) * _geometric_mean(precisions)


def moses_sentence_bleu(row, divisor=1) -> float:
    """Moses smoothedSentenceBleu(stats): p_n = (m_n + 1)/(t_n + 1) for all n, plain BP."""
    matches, totals, hyp_len, ref_len = _parts(row, divisor)
    precisions = [Fraction(m + 1, t + 1) for m, t in zip(matches, totals)]
    return brevity_penalty(hyp_len, ref_len) * _geometric_mean(precisions)


def nakov_bleu(row, divisor=1) -> float:
    """Moses smoothedSentenceBleu(stats, 1, true): moses_sentence_bleu with BP(c, r + 1)."""
    matches, totals, hyp_len, ref_len = _parts(row, divisor)
    precisions = [Fraction(m + 1, t + 1) for m, t in zip(matches, totals)]
    return brevity_penalty(hyp_len, ref_len + 1) * _geometric_mean(precisions)


def _stupid(row, divisor, bp_ref_extra) -> float:
    matches, totals, hyp_len, ref_len = _parts(row, divisor)
    if hyp_len == 0 or ref_len == 0 or matches[0] == 0:
        return 0.0
    n_orders = ORDER if ref_len >= ORDER else math.ceil(ref_len)
    precisions = [Fraction(matches[0], totals[0])]
    precisions += [Fraction(m + 1, t + 1) for m, t in zip(matches[1:n_orders], totals[1:n_orders])]
    return brevity_penalty(hyp_len, ref_len + bp_ref_extra) * _geometric_mean(precisions)


def stupid_bleu(row, divisor=1) -> float:
    """cdec stupid_bleu: 0 if c = 0, r = 0 or m_1 = 0; M = min(4, ceil(r)) orders, +1 for n >= 2."""
    return _stupid(row, divisor, 0)


def fixed_stupid_bleu(row, divisor=1) -> float:
    """cdec fixed_stupid_bleu: stupid_bleu with BP(c, r + 1)."""
    return _stupid(row, divisor, 1)


#: variant name (as in mtplug.metrics.bleu.SENTENCE_BLEU_VARIANTS) -> oracle
SENTENCE_VARIANTS = {
    "bleu": bleu,
    "bleu+1": bleu_plus_one,
    "moses-sentence-bleu": moses_sentence_bleu,
    "nakov": nakov_bleu,
    "stupid": stupid_bleu,
    "fixed-stupid": fixed_stupid_bleu,
}


def corpus_bleu(rows, divisor=1) -> dict:
    """Corpus BLEU of a list of rows: the rows summed as Python ints, then :func:`bleu`.

    Returns score, precisions (m_n/t_n, 0 if t_n = 0), brevity_penalty, sys_len, ref_len.
    """
    totals = [sum(int(row[k]) for row in rows) for k in range(2 * ORDER + 1)]
    matches, counts, hyp_len, ref_len = _parts(totals, divisor)
    return {
        "score": bleu(totals, divisor),
        "precisions": [m / t if t else 0.0 for m, t in zip(matches, counts)],
        "brevity_penalty": brevity_penalty(hyp_len, ref_len),
        "sys_len": hyp_len,
        "ref_len": float(ref_len),
    }
