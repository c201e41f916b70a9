"""BLEU: the layout of its sufficient statistics and the options that shape them.

Statistics layout (one int32 row per hypothesis, the same column order as Moses's
scores.dat, so the Moses adapters copy rows unchanged)::

    match1 total1 match2 total2 match3 total3 match4 total4 ref_len

``match_n`` is the clipped count of hypothesis n-grams found in the references,
``total_n`` the number of hypothesis n-grams (``total1`` is the hypothesis length),
``ref_len`` the effective reference length times ``ref_len_divisor`` (see
:class:`BleuConfig`): an integer even for ``reflen=average``.

Scoring from these statistics: :func:`corpus_bleu_from_stats` (corpus BLEU as a
:class:`BleuScore`) and :func:`sentence_bleu` (one smoothed BLEU per row, variants in
:data:`SENTENCE_BLEU_VARIANTS`), both over the nogil kernels of ``pyx/_bleu.pxd``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mtplug._ext import _bleu

NGRAM_ORDER = 4
STATS_LAYOUT = (
    "match1", "total1", "match2", "total2", "match3", "total3", "match4", "total4", "ref_len",
)
N_STATS = len(STATS_LAYOUT)
REF_LEN_COLUMN = STATS_LAYOUT.index("ref_len")

#: reference-length strategies, mirrored as ints in the kernels
REFLEN_CODES = {"closest": 0, "shortest": 1, "average": 2}


@dataclass(frozen=True)
class BleuConfig:
    """How BLEU statistics are collected.

    reflen: ``closest`` (ties go to the shorter reference, as Moses and sacrebleu),
    ``shortest`` or ``average``. lowercase: compare tokens case-insensitively, by
    Python's Unicode ``str.lower`` (as sacrebleu), or with ``ascii_case`` by folding ASCII
    letters only, as Moses's ``--scconfig case:false`` (C ``tolower`` per byte). Tokens are split on ASCII spaces and tabs only,
    as Moses does (sacrebleu ``tokenize='none'`` gives the same split on such text).
    """

    reflen: str = "closest"
    lowercase: bool = False
    ascii_case: bool = False

    def __post_init__(self):
        if self.reflen not in REFLEN_CODES:
            raise ValueError(f"reflen must be one of {sorted(REFLEN_CODES)}, got {self.reflen!r}")

    def ref_len_divisor(self, n_refs: int) -> int:
        """Stored ``ref_len`` divided by this is the effective reference length.

        ``average`` stores the sum of the reference lengths (exact in integers) and
        divides by the number of reference sets; the other strategies store lengths as is.
        """
        return n_refs if self.reflen == "average" else 1


# --------------------------------------------------------------------------------------
# Scoring from sufficient statistics (kernels in pyx/_bleu.pxd, wrappers in pyx/_bleu.pyx)
# --------------------------------------------------------------------------------------

#: sentence-level BLEU variants, name -> kernel code: the one list (CLI choices use it).
#: Formulas and sources: :func:`sentence_bleu`. Codes mirror the C enum in pyx/_bleu.pxd.
SENTENCE_BLEU_VARIANTS = {
    "bleu": 0,
    "bleu+1": 1,
    "moses-sentence-bleu": 2,
    "nakov": 3,
    "stupid": 4,
    "fixed-stupid": 5,
}

_INT32_MAX = np.iinfo(np.int32).max
_INT64_MAX = np.iinfo(np.int64).max


@dataclass(frozen=True)
class BleuScore:
    """Corpus BLEU and its parts, all as fractions (not percentages), as the kernels compute
    them; what mtplug prints and returns is 100 × the score and precisions (sacrebleu's
    scale, docs/metrics.md "One scale"): :meth:`format`, ``mtplug score --json``.

    score: BLEU in [0, 1]. precisions: the four modified n-gram precisions
    ``match_n / total_n`` in [0, 1] (0 when ``total_n`` is 0). brevity_penalty:
    ``exp(min(0, 1 - ref_len / sys_len))``, 1 when ``sys_len >= ref_len`` and 0 when
    ``sys_len == 0 < ref_len`` (as sacrebleu). sys_len: hypothesis tokens. ref_len:
    effective reference length in tokens (fractional for ``reflen=average``).
    """

    score: float
    precisions: tuple[float, ...]  # NGRAM_ORDER (4) values
    brevity_penalty: float
    sys_len: int
    ref_len: float

    @property
    def ratio(self) -> float:
        """Hypothesis to reference length, ``sys_len / ref_len``; 0 when ``ref_len`` is 0."""
        return self.sys_len / self.ref_len if self.ref_len else 0.0

    def format(self) -> str:
        """One line in sacrebleu's layout, without its signature, e.g.::

            BLEU = 48.12 78.3/55.2/40.1/30.0 (BP = 0.912 ratio = 0.916 hyp_len = 1234 ref_len = 1347)

        The score and precisions are printed as percentages (2 and 1 decimals), BP and
        ratio with 3 decimals, lengths as integers; a fractional ``ref_len``
        (``reflen=average``) gets 2 decimals.
        """
        precisions = "/".join(f"{100.0 * p:.1f}" for p in self.precisions)
        if float(self.ref_len).is_integer():
            ref_len = f"{int(self.ref_len):d}"
        else:
            ref_len = f"{self.ref_len:.2f}"
        return (
            f"BLEU = {100.0 * self.score:.2f} {precisions} (BP = {self.brevity_penalty:.3f} "
            f"ratio = {self.ratio:.3f} hyp_len = {self.sys_len:d} ref_len = {ref_len})"
        )

    def as_dict(self) -> dict:
        """Plain JSON-ready dict, unrounded, in the same units as the fields (fractions,
        not percentages; ``mtplug score --json`` prints percentages): name, score,
        precisions (list of 4), brevity_penalty, ratio, sys_len, ref_len."""
        return {
            "name": "BLEU",
            "score": self.score,
            "precisions": list(self.precisions),
            "brevity_penalty": self.brevity_penalty,
            "ratio": self.ratio,
            "sys_len": self.sys_len,
            "ref_len": self.ref_len,
        }


def _check_divisor(ref_len_divisor) -> float:
    if isinstance(ref_len_divisor, (bool, np.bool_)):
        raise TypeError("ref_len_divisor must be a positive number, got a bool")
    divisor = float(ref_len_divisor)
    if not (math.isfinite(divisor) and divisor > 0.0):
        raise ValueError(f"ref_len_divisor must be positive and finite, got {ref_len_divisor!r}")
    return divisor


def _validated_stats(stats) -> np.ndarray:
    """``stats`` as an integer array of shape [n_rows, 9] or [9], checked value by value:
    no negative count and ``match_n <= total_n`` for every order."""
    arr = np.asarray(stats)
    if arr.size == 0 and arr.ndim == 1:
        arr = arr.reshape(0, N_STATS)  # an empty list: no rows
    if arr.size == 0 and arr.dtype.kind == "f":
        arr = arr.astype(np.int64)  # an empty list arrives as float64
    if arr.dtype.kind not in "iu":
        raise TypeError(f"BLEU statistics must be integers, got dtype {arr.dtype}")
    if arr.ndim not in (1, 2) or arr.shape[-1] != N_STATS:
        raise ValueError(
            f"BLEU statistics must have shape [n_rows, {N_STATS}] or [{N_STATS}] "
            f"({' '.join(STATS_LAYOUT)}), got shape {arr.shape}"
        )
    if arr.size == 0:
        return arr
    if arr.dtype.kind == "u" and arr.max() > _INT64_MAX:
        raise ValueError("BLEU statistics do not fit in int64")
    rows = arr.reshape(-1, N_STATS)
    negative = np.flatnonzero((rows < 0).any(axis=1))
    if negative.size:
        raise ValueError(
            f"BLEU statistics row {negative[0]} has a negative count: {rows[negative[0]].tolist()}"
        )
    over = np.flatnonzero((rows[:, 0:2 * NGRAM_ORDER:2] > rows[:, 1:2 * NGRAM_ORDER:2]).any(axis=1))
    if over.size:
        raise ValueError(
            f"BLEU statistics row {over[0]} has more matches than n-grams at some order: "
            f"{rows[over[0]].tolist()}"
        )
    return arr


def _brevity_penalty(sys_len: float, ref_len: float) -> float:
    if sys_len >= ref_len:
        return 1.0
    if sys_len <= 0:
        return 0.0
    return math.exp(1.0 - ref_len / sys_len)


def corpus_bleu_from_stats(stats, ref_len_divisor: float = 1) -> BleuScore:
    """Corpus BLEU (N = 4, uniform weights, no smoothing) from sufficient statistics.

    stats: integer array [n_rows, 9] of per-sentence rows in :data:`STATS_LAYOUT` order
    (summed column-wise in int64), or an already summed vector [9]. ref_len_divisor:
    positive number; the effective reference length is the summed ``ref_len`` divided by
    it (see :meth:`BleuConfig.ref_len_divisor`).

    BLEU = BP * (prod_n match_n / total_n) ** (1/4), BP = exp(min(0, 1 - ref / hyp)), and
    BLEU is 0 when any ``match_n`` is 0: Moses ``BleuScorer::calculateScore``, and sacrebleu
    ``BLEU(smooth_method='none', effective_order=False)`` (tested to 1e-9). Returns a
    :class:`BleuScore` (fractions, not percentages). Raises TypeError for non-integer stats
    and ValueError for a bad shape, negative counts or more matches than n-grams.
    """
    divisor = _check_divisor(ref_len_divisor)
    arr = _validated_stats(stats)
    if arr.ndim == 2:
        totals = arr.sum(axis=0, dtype=np.int64)
    else:
        totals = arr
    totals = np.ascontiguousarray(totals, dtype=np.int64)
    log_score = _bleu.corpus_log_bleu(totals, divisor)
    matches, counts = totals[0:2 * NGRAM_ORDER:2], totals[1:2 * NGRAM_ORDER:2]
    precisions = tuple(float(m) / float(t) if t > 0 else 0.0 for m, t in zip(matches, counts))
    sys_len = int(totals[1])
    ref_len = float(totals[REF_LEN_COLUMN]) / divisor
    return BleuScore(
        score=math.exp(log_score),
        precisions=precisions,
        brevity_penalty=_brevity_penalty(sys_len, ref_len),
        sys_len=sys_len,
        ref_len=ref_len,
    )


def sentence_bleu(stats, variant: str = "bleu+1", ref_len_divisor: float = 1, *,
                  threads: int = 1) -> np.ndarray:
    """Sentence-level BLEU of every stats row: float64 array [n_rows], values in [0, 1].

    stats: integer array [n_rows, 9] in :data:`STATS_LAYOUT` order (a single row [9] is
    scored as [1, 9]); values must fit in int32. variant: a key of
    :data:`SENTENCE_BLEU_VARIANTS`. ref_len_divisor: positive; ``r = ref_len / divisor``.
    threads: OpenMP threads over the rows (default 1); the result does not depend on it.

    With ``m_n``, ``t_n`` the matches and n-grams of order n, ``h = t_1`` and
    ``log BP(h, r) = min(0, 1 - r / h)`` (0 when ``h >= r``, -inf when ``h = 0 < r``),
    each variant is ``exp`` of:

    ``bleu``
        ``1/4 sum_n log(m_n / t_n) + log BP(h, r)``; 0 when any ``m_n = 0``
        (Moses ``mert/BleuScorer.cpp`` ``BleuScorer::calculateScore`` on one row).
    ``bleu+1``
        Lin & Och (2004), +1 for n >= 2 only:
        ``1/4 [log(m_1/t_1) + sum_{n=2..4} log((m_n+1)/(t_n+1))] + log BP(h, r)``; 0 when ``m_1 = 0``.
    ``moses-sentence-bleu``
        Moses ``smoothedSentenceBleu(stats)`` (``mert/BleuScorer.cpp``, printed by
        ``mert/sentence-bleu.cpp``; ``mert/pro.cpp`` without ``-b``), +1 at every order:
        ``1/4 sum_{n=1..4} log((m_n+1)/(t_n+1)) + log BP(h, r)``; 1 when ``h = r = 0``.
    ``nakov``
        Nakov, Guzman & Vogel (2012) BP smoothing as Moses implements it,
        ``smoothedSentenceBleu(stats, 1.0, true)`` (``mert/pro.cpp --smooth-brevity-penalty``):
        ``1/4 sum_{n=1..4} log((m_n+1)/(t_n+1)) + log BP(h, r + 1)``.
    ``stupid``
        cdec ``training/dtrain/score.cc`` ``StupidBleuScorer::Score``: 0 when ``h = 0``,
        ``r = 0`` or ``m_1 = 0``; else with ``M = min(4, ceil(r))`` orders,
        ``1/M [log(m_1/t_1) + sum_{n=2..M} log((m_n+1)/(t_n+1))] + log BP(h, r)``.
    ``fixed-stupid``
        cdec ``FixedStupidBleuScorer::Score``: ``stupid`` (same zero cases, same ``M``)
        with ``log BP(h, r + 1)``.
    """
    if variant not in SENTENCE_BLEU_VARIANTS:
        raise ValueError(
            f"unknown sentence BLEU variant {variant!r}; choose from {', '.join(SENTENCE_BLEU_VARIANTS)}"
        )
    divisor = _check_divisor(ref_len_divisor)
    arr = _validated_stats(stats)
    if arr.ndim == 1:
        arr = arr.reshape(1, N_STATS)
    if arr.size and arr.max() > _INT32_MAX:
        raise ValueError(f"sentence BLEU statistics must fit in int32 (max {_INT32_MAX})")
    rows = np.ascontiguousarray(arr, dtype=np.int32)
    out = np.empty(rows.shape[0], dtype=np.float64)
    _bleu.sentence_bleu_rows(rows, divisor, SENTENCE_BLEU_VARIANTS[variant], out, max(1, int(threads)))
    return out
