"""How Moses's ``extractor`` writes score statistics to scores.dat, byte for byte.

Checked against Moses 34452895 (``mert/ScoreArray.cpp``, ``ScoreStats.cpp``, ``Util.h``,
``TerScorer.cpp``, ``InterpolatedScorer.cpp``) and its output (tests/golden/moses_scorers).

One block per sentence::

    SCORES_TXT_BEGIN_0 <sentence id> <n hypotheses> <n stats> <sctype>
    <v1> <v2> ... <vk> \n          (one line per hypothesis, every value followed by a space)
    SCORES_TXT_END_0

``<sctype>`` is the ``--sctype`` string as given (an interpolation ``BLEU,TER`` keeps its
comma; M2SCORER's blocks say ``M2Scorer``, :data:`HEADER_NAMES`), ``<n stats>`` the
scorer's ``NumberOfScores()`` (the sum of its parts' for an interpolation: BLEU 9, PER 3,
WER 2, CDER 2, TER 3; M2SCORER 4; CHRF 20, BLEUDOC 9).

Values are held as ``float`` (ScoreStatsType) and printed by ``operator<<(float)``: C's
``%g`` with 6 significant digits (``1234567`` prints as ``1.23457e+06``). How a value gets
into that float depends on the scorer:

* BLEU, WER, CDER, M2SCORER, CHRF, BLEUDOC hand over a vector: ``float(v)``.
* PER and TER write their statistics into a string that ``ScoreStats::set`` parses with
  ``atoi`` (``ConvertCharToScoreStatsType``): PER's integers go through unchanged; TER
  prints ``edits*100``, ``average reference length*100`` and ``TER*100`` as doubles with
  ``%g`` (6 digits), so ``37.5`` is stored as ``37`` and ``1.23457e+06`` as ``1``.
* An interpolation (``BLEU,TER``) prints each part's stored values with ``%g`` into one
  string and parses it with ``atoi`` again: every part value v becomes ``atoi("%g" % v)``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

#: NumberOfScores() of the scorers whose lines this module formats
N_STATS = {"BLEU": 9, "PER": 3, "WER": 2, "CDER": 2, "TER": 3, "M2SCORER": 4, "CHRF": 20, "BLEUDOC": 9}
#: scorers whose block headers name the scorer itself rather than the --sctype text
#: (Moses's M2 scorer writes ``M2Scorer``; tests/golden/moses-m2/README.md)
HEADER_NAMES = {"M2SCORER": "M2Scorer"}
_HEADER_SCTYPES = {v: k for k, v in HEADER_NAMES.items()}
#: scorers that hand their statistics over as text (parsed with atoi)
_VIA_ATOI = {"PER", "TER"}

_ATOI = re.compile(r"[ \t\n\v\f\r]*([+-]?[0-9]+)")


def _g(x: float) -> str:
    """C++ ``ostream << x`` with the default flags (``%g``, precision 6)."""
    return "%g" % x


def _atoi(text: str) -> int:
    """C ``atoi``: optional blanks and sign, then the leading digits; 0 when there are none."""
    m = _ATOI.match(text)
    return int(m.group(1)) if m else 0


def _f32(x: float) -> float:
    return float(np.float32(x))


def n_stats(sctype: str) -> int:
    """NumberOfScores() of ``sctype`` (an interpolation: the sum of its parts')."""
    unknown = [p for p in sctype.split(",") if p not in N_STATS]
    if unknown:
        raise ValueError(f"no scores.dat format for scorer {unknown[0]!r} (known: {', '.join(N_STATS)})")
    return sum(N_STATS[p] for p in sctype.split(","))


def ter_row(num_edits: float, average_ref_len: float) -> tuple[float, float, float]:
    """What TerScorer::prepareStats prints for a hypothesis (doubles): ``num_edits*100``,
    ``average_ref_len*100`` and ``scoreAv()*100``, where scoreAv is ``num_edits /
    average_ref_len``, 1 when the average is <= 0 and there are edits, else 0."""
    if average_ref_len <= 0.0:
        score = 1.0 if num_edits > 0.0 else 0.0
    else:
        score = num_edits / average_ref_len
    return num_edits * 100.0, average_ref_len * 100.0, score * 100.0


def stored_values(row: Sequence[float], sctype: str) -> list[float]:
    """The float values Moses's ScoreStats holds for one hypothesis of ``sctype``.

    ``row``: the scorer's statistics as it computes them, the parts of an interpolation
    concatenated — integers for BLEU/PER/WER/CDER (mtplug's stats rows), the three
    doubles of :func:`ter_row` for TER.
    """
    parts = sctype.split(",")
    width = n_stats(sctype)
    if len(row) != width:
        raise ValueError(f"{sctype} has {width} statistics, got {len(row)}")
    out: list[float] = []
    k = 0
    for p in parts:
        vals = [float(v) for v in row[k:k + N_STATS[p]]]
        k += N_STATS[p]
        if p in _VIA_ATOI:
            vals = [_f32(_atoi(_g(v) if p == "TER" else str(int(v)))) for v in vals]
        else:
            vals = [_f32(v) for v in vals]
        if len(parts) > 1:
            vals = [_f32(_atoi(_g(v))) for v in vals]
        out += vals
    return out


def format_stats_line(row: Sequence[float], sctype: str) -> str:
    """One hypothesis's line of a text scores.dat, as Moses writes it (with the trailing
    space, without the newline), e.g. ``"5 8 8 "`` for PER. ``row``: see :func:`stored_values`."""
    return "".join(_g(v) + " " for v in stored_values(row, sctype))


def format_stats_lines(rows, sctype: str) -> list[str]:
    """:func:`format_stats_line` of every row of ``rows`` ([n, n_stats]); integer rows with
    every value below 10^6 in magnitude (printed as themselves) take a fast path."""
    a = np.asarray(rows)
    if a.ndim != 2 or a.shape[1] != n_stats(sctype):
        raise ValueError(f"{sctype} has {n_stats(sctype)} statistics, got rows of shape {a.shape}")
    if (a.size and np.issubdtype(a.dtype, np.integer) and "TER" not in sctype.split(",")
            and a.min() > -10**6 and a.max() < 10**6):
        return [" ".join(map(str, r)) + " " for r in a.tolist()]
    return [format_stats_line(r, sctype) for r in a.tolist()]


def format_header(sentence: int, n_hypotheses: int, sctype: str) -> str:
    """``SCORES_TXT_BEGIN_0 <sentence> <n> <n stats> <name>`` (no trailing space or newline):
    the name is ``sctype`` or its :data:`HEADER_NAMES` entry."""
    return f"SCORES_TXT_BEGIN_0 {sentence} {n_hypotheses} {n_stats(sctype)} {HEADER_NAMES.get(sctype, sctype)}"


def sctype_of_header(name: str) -> str:
    """The ``--sctype`` of the scorer a block header names (``M2Scorer``: ``M2SCORER``;
    :func:`format_header`)."""
    return _HEADER_SCTYPES.get(name, name)


#: the line closing a sentence's block
FOOTER = "SCORES_TXT_END_0"
