"""dtrain's per-sentence scorers (cdec training/dtrain/score.cc), from BLEU statistics rows.

A scorer maps the statistics of one k-best list (int [k, 9] in
:data:`mtplug.metrics.bleu.STATS_LAYOUT`, rows in k-best order, one reference) to a
score per hypothesis. With ``m_n``/``t_n`` the clipped matches / n-grams of order n,
``h = t_1`` the hypothesis length, ``r`` the reference length, ``M = min(N, r)``
orders, ``p_n = m_n / t_n`` and ``BP(h, r) = 1 if h > r else exp(1 - r/h)``; every
score is 0 when ``h = 0`` or ``r = 0``:

``bleu``
    ``BP(h, r) · exp(1/M Σ_{n≤M} log p_n)``; 0 if any ``m_n = 0`` (n ≤ M).
``stupid_bleu`` (``stupid``)
    +1 smoothing for n ≥ 2: ``BP(h, r) · exp(1/M [log p_1 + Σ_{2≤n≤M} log((m_n+1)/(t_n+1))])``;
    0 if ``m_1 = 0``. For N = 4 this is mtplug's compiled ``stupid`` sentence BLEU.
``fixed_stupid_bleu`` (``fixed-stupid``)
    the same with ``BP(h, r + 1)`` (Nakov et al. 2012).
``smooth_bleu`` (Liang et al. 2006)
    ``BP · Σ_{n≤M'} GM(p_1..p_n) / 2^(N-n+1)``, M' the orders before the first zero
    match (maximum 0.9375 for N = 4).
``sum_bleu``, ``sumexp_bleu``, ``sumwhatever_bleu``
    ``BP · Σ_{n≤M'} x_n / 2^(N-n+1)`` with ``x_n = p_n``, ``exp(p_n)``, ``p_n^(1/M)``.
``approx_bleu`` (Chiang et al. 2008, as dtrain codes it)
    ``bleu`` of the context counts plus the hypothesis counts, with the hypothesis's
    own lengths in BP. The context holds the 1-best (k-best position 0) counts of
    earlier sentences: after the 1-best is scored, context = (context + its counts) × d
    (``approx_bleu_d``), so positions 1.. see the updated context, as in dtrain. The
    context is reset after every epoch.
``lc_bleu`` (linear BLEU, as dtrain codes it)
    ``-h / L + 1/M Σ_{n≤M'} t_n / C_n`` where L (start 1) and C_n (start 1) accumulate
    the 1-best's length and n-gram totals; note that dtrain uses the n-gram totals
    ``t_n``, not the matches. Reset after every epoch.

``pseudo_doc`` (mtplug; cdec training/mira's pseudo-document BLEU, Chiang et al. 2008, for
``update=mira``)
    ``(L + |f|) · bleu(C + s)``: the BLEU of the hypothesis's statistics s added to a
    context C of all nine statistics (lengths included, so BP is the pseudo-document's),
    scaled by the context's source length L plus the sentence's |f| (its source words), so
    that score differences weigh like model-score differences. Every hypothesis sees the
    context as it stood before the sentence; then the 1-best joins it:
    ``C = 0.95 (C + s_1best)``, ``L = 0.95 (L + |f|)`` (0.95: cdec's constant). Reset
    after every epoch (mira.py starts the program afresh each pass).

mtplug's other sentence-BLEU variants (``bleu+1``, ``moses-sentence-bleu``, ``nakov``;
:func:`mtplug.metrics.bleu.sentence_bleu`) are accepted too, with N = 4.
"""

from __future__ import annotations

import numpy as np

from ..metrics.bleu import REF_LEN_COLUMN, sentence_bleu
from .config import SCORER_ALIASES

_MATCH = slice(0, 8, 2)
_TOTAL = slice(1, 8, 2)


def _parts(stats: np.ndarray, N: int):
    stats = np.asarray(stats)
    m = stats[:, _MATCH][:, :N].astype(np.float64)
    t = stats[:, _TOTAL][:, :N].astype(np.float64)
    h = stats[:, 1].astype(np.float64)
    r = stats[:, REF_LEN_COLUMN].astype(np.float64)
    M = np.minimum(N, r).astype(np.int64)
    valid = np.arange(N)[None, :] < M[:, None]          # orders that count, per row
    alive = (h > 0) & (r > 0)
    return m, t, h, r, M, valid, alive


def brevity_penalty(h: np.ndarray, r: np.ndarray) -> np.ndarray:
    """dtrain's BP: 1 if h > r else exp(1 - r/h) (h > 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(h > r, 1.0, np.exp(1.0 - r / np.where(h > 0, h, 1.0)))


def _safe_log(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(np.where(x > 0, x, 1.0))


def bleu_scores(m, t, h, r, N: int) -> np.ndarray:
    """dtrain BleuScorer::Bleu on float counts (m, t: [k, N]; h, r: [k])."""
    M = np.minimum(N, r).astype(np.int64)
    valid = np.arange(N)[None, :] < M[:, None]
    zero = ((m <= 0) | (t <= 0)) & valid
    logp = np.where(valid, _safe_log(m) - _safe_log(t), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = logp.sum(axis=1) / np.maximum(M, 1)
    ok = (h > 0) & (r > 0) & ~zero.any(axis=1)
    return np.where(ok, brevity_penalty(h, r) * np.exp(mean), 0.0)


def stupid_scores(stats, N: int, fixed: bool = False) -> np.ndarray:
    """dtrain's ``stupid_bleu`` (``fixed``: ``fixed_stupid_bleu``, BP against r + 1) of N-gram
    orders for each row of ``stats`` (int [k, 9]): float64 [k] in [0, 1] (module docstring)."""
    m, t, h, r, M, valid, alive = _parts(stats, N)
    add = np.zeros(N)
    add[1:] = 1.0
    logp = np.where(valid, _safe_log(m + add) - _safe_log(t + add), 0.0)
    mean = logp.sum(axis=1) / np.maximum(M, 1)
    ok = alive & (m[:, 0] > 0)
    return np.where(ok, brevity_penalty(h, r + 1 if fixed else r) * np.exp(mean), 0.0)


def _sum_scores(stats, N: int, kind: str) -> np.ndarray:
    m, t, h, r, M, valid, alive = _parts(stats, N)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(t > 0, m / np.where(t > 0, t, 1.0), 0.0)
    # orders before the first zero match (and within M) count
    counted = np.cumprod(valid & (m > 0) & (t > 0), axis=1).astype(bool)
    halves = 2.0 ** -(N - np.arange(N, dtype=np.float64))     # 1 / 2^(N-n+1) for n = 1..N
    if kind == "smooth":
        logp = np.where(counted, _safe_log(p), 0.0)
        gm = np.exp(np.cumsum(logp, axis=1) / np.arange(1, N + 1))
        x = gm
    elif kind == "sum":
        x = p
    elif kind == "sumexp":
        x = np.exp(p)
    else:  # sumwhatever
        x = np.exp(_safe_log(p) / np.maximum(M, 1)[:, None])
    total = np.where(counted, x * halves, 0.0).sum(axis=1)
    return np.where(alive, brevity_penalty(h, r) * total, 0.0)


#: pseudo_doc's context decay (cdec training/mira/kbest_cut_mira.cc's PSEUDO_SCALE)
PSEUDO_DOC_DECAY = 0.95


class Scorer:
    """A per-sentence scorer; ``score(stats)`` takes one k-best list in k-best order.

    ``name``: a scorer of the module docstring (dtrain's name or its alias, e.g.
    ``stupid``); ``N``: the highest n-gram order; ``approx_bleu_d``: the context decay d of
    ``approx_bleu``. ``approx_bleu`` and ``lc_bleu`` keep a context across calls
    (:meth:`reset` forgets it).
    """

    def __init__(self, name: str, N: int = 4, approx_bleu_d: float = 0.9):
        name = SCORER_ALIASES.get(name, name)
        self.name, self.N, self.d = name, int(N), float(approx_bleu_d)
        self.reset()

    def reset(self) -> None:
        """Forget the context of approx_bleu / lc_bleu / pseudo_doc (dtrain does it after every epoch)."""
        self.ctx_m = np.zeros(self.N)
        self.ctx_t = np.zeros(self.N)
        self.ctx_h = self.ctx_r = self.ctx_src = 0.0
        self.lc_len = 1.0
        self.lc_t = np.ones(self.N)

    def score(self, stats, source_length: int = 0) -> np.ndarray:
        """Scores float64 [k] of one k-best list's statistics ``stats`` (int [k, 9], k-best
        order: position 0 is the 1-best, which feeds the context of approx_bleu, lc_bleu and
        pseudo_doc); ``source_length``: the sentence's source words (pseudo_doc only)."""
        stats = np.asarray(stats)
        if stats.shape[0] == 0:
            return np.zeros(0)
        name, N = self.name, self.N
        if name == "pseudo_doc":
            return self._pseudo_doc(stats, float(source_length))
        if name in ("stupid_bleu", "fixed_stupid_bleu"):
            if N == 4:  # the compiled kernel (same formula; tested equal)
                return sentence_bleu(stats, "stupid" if name == "stupid_bleu" else "fixed-stupid")
            return stupid_scores(stats, N, fixed=name == "fixed_stupid_bleu")
        if name == "bleu":
            m, t, h, r, *_ = _parts(stats, N)
            return bleu_scores(m, t, h, r, N)
        if name in ("smooth_bleu", "sum_bleu", "sumexp_bleu", "sumwhatever_bleu"):
            return _sum_scores(stats, N, name[:-5])
        if name == "approx_bleu":
            return self._approx(stats)
        if name == "lc_bleu":
            return self._linear(stats)
        return sentence_bleu(stats, name)  # bleu+1, moses-sentence-bleu, nakov

    def _approx(self, stats) -> np.ndarray:
        m, t, h, r, *_ = _parts(stats, self.N)
        out = np.zeros(len(h))
        if r[0] > 0:  # the 1-best sees the old context, then joins it
            out[0] = bleu_scores(self.ctx_m[None] + m[:1], self.ctx_t[None] + t[:1], h[:1], r[:1], self.N)[0]
            self.ctx_m = (self.ctx_m + m[0]) * self.d
            self.ctx_t = (self.ctx_t + t[0]) * self.d
        out[1:] = bleu_scores(self.ctx_m[None] + m[1:], self.ctx_t[None] + t[1:], h[1:], r[1:], self.N)
        return out

    def _pseudo_doc(self, stats, source_length: float) -> np.ndarray:
        m, t, h, r, *_ = _parts(stats, self.N)
        scale = self.ctx_src + source_length
        out = scale * bleu_scores(self.ctx_m[None] + m, self.ctx_t[None] + t, self.ctx_h + h, self.ctx_r + r, self.N)
        self.ctx_m = PSEUDO_DOC_DECAY * (self.ctx_m + m[0])
        self.ctx_t = PSEUDO_DOC_DECAY * (self.ctx_t + t[0])
        self.ctx_h = PSEUDO_DOC_DECAY * (self.ctx_h + float(h[0]))
        self.ctx_r = PSEUDO_DOC_DECAY * (self.ctx_r + float(r[0]))
        self.ctx_src = PSEUDO_DOC_DECAY * scale
        return out

    def _linear(self, stats) -> np.ndarray:
        _m, t, h, r, M, _valid, _ = _parts(stats, self.N)
        out = np.zeros(len(h))
        for i in range(len(h)):
            if r[i] == 0:
                continue
            ratio = 0.0
            for n in range(int(M[i])):
                if t[i, n] == 0 or self.lc_t[n] == 0:
                    break
                ratio += t[i, n] / self.lc_t[n]
            out[i] = -(h[i] / self.lc_len) + ratio / int(M[i])
            if i == 0:
                self.lc_len += h[i]
                self.lc_t[: int(M[i])] += t[i, : int(M[i])]
        return out
