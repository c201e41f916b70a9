"""fairseq ``generate`` / ``interactive`` output as Moses n-best lines.

The lines read (tab-separated; ``<id>`` is the sentence number)::

    S-<id>  source            T-<id>  reference         W-<id>  time  seconds
    H-<id>  score  tokens     D-<id>  score  detokenized text
    P-<id>  positional scores (one per target token and </s>)
    A-<id>  alignment         I-<id>  steps             E-<id>_<step>  history

Each ``H`` line starts a hypothesis (several per id with ``--nbest``); the ``D`` and
``P`` lines after it, of the same id, belong to it. Other lines (``| ...`` logs,
``2024-... | INFO | ...``, ``Generate test with beam=5: BLEU4 = ...``) are skipped.
fairseq prints sentences in the order its batches finish, so the hypotheses are
returned sorted by id, each id's in file order.

Features: ``fairseq`` is the hypothesis score (fairseq's, length-normalised by its
``--lenpen``, base 2); with ``positional``, also ``fairseqP``, the sum of the ``P``
scores (the unnormalised log-probability), and ``fairseqLen``, their number. A ``P``
line has one score per token and one for ``</s>``: at least one more than the words of
the ``H`` or the ``D`` text, whichever has fewer (``--post-process`` and detokenizing join
tokens); fewer are an error naming it (a line cut short).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

from ..errors import InputError
from ..fileio import iter_text_lines
from .number_text import format_shortest, parse_number

#: fairseq writes sentences out of order: the Moses copy sorts them by id (stable)
SORT_BY_ID = True

#: a line fairseq writes about a sentence: its kind, the id, the rest
_TAGGED = re.compile(r"([STHDPAWIE])-([0-9]+)(?:_[0-9]+)?\t(.*)", re.DOTALL)
#: a tagged-looking line with a bad id (H-x, H-1a): an error, not noise
_LOOKS_TAGGED = re.compile(r"[HDP]-\S*\t")


def moses_lines(path: str, *, text: str = "D", positional: bool = False) -> Iterator[tuple[int, int, str]]:
    """``(line number, sentence id, Moses n-best line)`` of every hypothesis of a fairseq
    output file, in file order (the caller sorts by id).

    ``text``: ``"D"`` (the detokenized text, default) or ``"H"`` (the tokens);
    ``positional``: add the ``fairseqP`` and ``fairseqLen`` features (needs ``P`` lines).
    Bad lines raise :class:`InputError` naming the file and line.
    """
    if text not in ("D", "H"):
        raise ValueError(f"text must be 'D' or 'H', got {text!r}")
    hyp: _Hypothesis | None = None
    for line_no, line in iter_text_lines(path):
        m = _TAGGED.match(line)
        if m is None:
            if _LOOKS_TAGGED.match(line):
                raise InputError(f"expected '{line[0]}-<id><TAB>...' with a non-negative integer id, "
                                 f"got {line.split(chr(9), 1)[0]!r}", path, line_no)
            continue                                  # log lines, BLEU summary
        kind, sid, rest = m.group(1), int(m.group(2)), m.group(3)
        if kind == "H":
            if hyp is not None:
                yield hyp.line(path, text, positional)
            score, tokens = _score_and_text(rest, "H", path, line_no)
            hyp = _Hypothesis(line_no, sid, score, tokens)
        elif kind in ("D", "P"):
            if hyp is None or hyp.sid != sid:
                raise InputError(f"{kind}-{sid} line without the H-{sid} line of its hypothesis before it",
                                 path, line_no)
            if kind == "D":
                hyp.detok = _score_and_text(rest, "D", path, line_no)[1]
            else:
                hyp.p_sum, hyp.p_len = _positional(rest, path, line_no)
                hyp.p_line = line_no
    if hyp is not None:
        yield hyp.line(path, text, positional)


class _Hypothesis:
    """The hypothesis being read: its H line and the D and P lines after it."""

    __slots__ = ("detok", "line_no", "p_len", "p_line", "p_sum", "score", "sid", "tokens")

    def __init__(self, line_no: int, sid: int, score: float, tokens: str):
        self.line_no, self.sid, self.score, self.tokens = line_no, sid, score, tokens
        self.detok: str | None = None
        self.p_sum: float | None = None
        self.p_len = 0
        self.p_line = 0

    def line(self, path: str, text: str, positional: bool) -> tuple[int, int, str]:
        hyp = self.tokens
        if text == "D":
            if self.detok is None:
                raise InputError(f"H-{self.sid} has no D-{self.sid} line after it (older fairseq writes none: "
                                 "read the H lines with --fairseq-text H)", path, self.line_no)
            hyp = self.detok
        if "|||" in hyp:
            raise InputError("the hypothesis holds '|||', which an n-best line cannot hold", path, self.line_no)
        feats = f"fairseq= {format_shortest(self.score)}"
        if positional:
            if self.p_sum is None:
                raise InputError(f"H-{self.sid} has no P-{self.sid} line after it (--fairseq-positional needs "
                                 "fairseq's positional scores)", path, self.line_no)
            words = len(self.tokens.split()) if self.detok is None else \
                min(len(self.tokens.split()), len(self.detok.split()))
            if self.p_len <= words:
                raise InputError(f"expected at least {words + 1} positional scores (one per word of the hypothesis "
                                 f"and one for </s>), found {self.p_len}: a line cut short?", path, self.p_line)
            feats += f" fairseqP= {format_shortest(self.p_sum)} fairseqLen= {self.p_len}"
        return self.line_no, self.sid, f"{self.sid} ||| {hyp} ||| {feats}"


def _score_and_text(rest: str, kind: str, path: str, line_no: int) -> tuple[float, str]:
    parts = rest.split("\t", 1)
    if len(parts) != 2:
        raise InputError(f"expected '{kind}-<id><TAB>score<TAB>text', found no tab after the score",
                         path, line_no)
    return parse_number(parts[0].strip(), path, line_no, "score"), parts[1].strip()


def _positional(rest: str, path: str, line_no: int) -> tuple[float, int]:
    values = [parse_number(tok, path, line_no, "positional score") for tok in rest.split()]
    if not values:
        raise InputError("expected 'P-<id><TAB>score score ...', found no scores", path, line_no)
    total = math.fsum(values)
    if not math.isfinite(total):
        raise InputError("the positional scores sum to more than a double holds", path, line_no)
    return total, len(values)
