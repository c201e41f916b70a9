"""chrF statistics the slow, obvious way: Counters of string slices, one hypothesis and
one reference at a time (the definition of mtplug.metrics.chrf, written from the papers
and sacrebleu's documented behaviour, not from the kernel)."""

from __future__ import annotations

from collections import Counter

PUNCT = set('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~')


def words_of(sentence: str) -> list[str]:
    out = []
    for w in sentence.split():
        if len(w) > 1 and w[-1] in PUNCT:
            out += [w[:-1], w[-1]]
        elif len(w) > 1 and w[0] in PUNCT:
            out += [w[0], w[1:]]
        else:
            out.append(w)
    return out


def ngrams(seq, n) -> Counter:
    return Counter(tuple(seq[i:i + n]) for i in range(len(seq) - n + 1))


def f_score(row: list[int], beta: float) -> float:
    ps, rs = [], []
    for i in range(0, len(row), 3):
        h, r, m = row[i:i + 3]
        if h > 0 and r > 0:
            ps.append(m / h)
            rs.append(m / r)
    if not ps:
        return 0.0
    p, r = sum(ps) / len(ps), sum(rs) / len(rs)
    if not p + r:
        return 0.0
    # in this order of operations: the best reference is chosen on this number, and a
    # different rounding turns ties into wins (sacrebleu: (1 + β²)·p·r, then / (β²·p + r))
    f = (1 + beta ** 2) * p * r
    f /= beta ** 2 * p + r
    return 100 * f


def sentence_stats(hyp: str, refs: list[str], char_order=6, word_order=0, beta=2.0, lowercase=False) -> list[int]:
    """The statistics row of ``hyp`` against its best reference (first on ties)."""
    if lowercase:
        hyp, refs = hyp.lower(), [r.lower() for r in refs]
    best, best_f = None, -1.0
    for ref in refs:
        row = []
        units = [("".join(hyp.split()), "".join(ref.split()), n) for n in range(1, char_order + 1)]
        units += [(words_of(hyp), words_of(ref), n) for n in range(1, word_order + 1)]
        for h, r, n in units:
            hc, rc = ngrams(h, n), ngrams(r, n)
            matches = sum(min(c, rc[g]) for g, c in hc.items())
            row += [sum(hc.values()) if rc else 0, sum(rc.values()), matches]
        f = f_score(row, beta)
        if f > best_f:
            best, best_f = row, f
    return best
