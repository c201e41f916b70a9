"""Moses's M2 scorer (``extractor --sctype M2SCORER``): statistics and F_beta, as Moses computes them.

Moses's ``mert/M2.h`` (34452895) ports Dahlmeier & Ng's MaxMatch scorer (2012) for
grammatical error correction: a hypothesis's edits against its source sentence are the
ones that best agree with the gold edits of the reference file, found as a shortest path
in a lattice of candidate edits. Statistics per hypothesis (int32 row, Moses's order)::

    correct proposed gold source_len

``correct``: proposed edits equal to a gold edit; ``proposed``: the hypothesis's edits;
``gold``: the chosen annotator's gold edits; ``source_len``: the source's words (Moses's
``getReferenceLength``). Moses stores them as floats and writes them with ``%g``: whole
numbers, written as integers below 10^6 (mtplug.metrics.moses_scores_format).

How Moses gets there (rule for rule in ``tests/reference/m2_reference.py``; the kernel is
``pyx/_m2.pyx``):

* Words: the hypothesis is trimmed of spaces, ``\\r`` and ``\\n`` and split on single spaces
  with runs compressed, so an empty hypothesis is one empty word; an ``S`` line is split the
  same way without the trimming (a double space after ``S`` gives an empty first word).
  Without ``truecase`` words and edit texts are compared with ASCII letters lowercased
  (C ``tolower``) and spaces removed (``ab`` equals ``a b``); with it, as written.
* A Levenshtein alignment of source and hypothesis (substitution 2, insertion and deletion
  1) whose every optimal move is kept; if the distance exceeds the source length the row is
  ``0 distance 0 source_len`` (no gold edits counted, Moses warns "Levenshtein distance is
  greater than source size").
* Edits are composed from consecutive moves while they change something and keep at most
  ``max_unchanged_words`` words unchanged; for each annotator, the path through them that
  matches most gold edits, fewest edits on ties (gold edits weigh -(max_unchanged_words + 1)
  · |edges|, others their moves + 0.001, in float32).
* Of the annotators, the one whose counts give this hypothesis alone the highest F_beta
  (float32) is taken, the lowest id on ties. (Dahlmeier & Ng's m2scorer chooses with the
  running corpus totals; Moses with the sentence's own counts.)

The reference file (:func:`read_m2`): ``S`` lines open a sentence, ``A start end|||type|||
correction|||REQUIRED|||-NONE-|||annotator`` lines add a gold edit of source words
``start..end-1`` (an empty correction deletes them; a ``noop`` type adds none but names its
annotator). Gold edits equal in start, end, annotator and compared text count once. Moses
never clears its set of annotators between sentences: sentence s is scored against every
annotator named in sentences 0..s (annotator 0 when none was), reproduced. Annotator ids
must grow from 0 (Moses indexes its tables by them).

Corpus F_beta (:func:`f_beta`), Moses's ``M2Scorer::calculateScore`` of the summed
statistics: P = correct / proposed (1 when nothing is proposed), R = correct / gold (1
when there are no gold edits), F = (1 + β²) P R / (β² P + R) (0 when the denominator is
0), in Moses's mix of float and double.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .._ext import _m2
from ..errors import InputError
from ..fileio import read_text_lines
from ..formats.references import References

#: statistics per hypothesis
N_STATS = _m2.M2_STATS
#: what each column of a statistics row holds
STATS_LAYOUT = ("correct", "proposed", "gold", "source_len")
#: the ``--scconfig`` keys M2SCORER reads, with Moses's defaults (as text)
SCCONFIG_DEFAULTS = {"beta": "0.5", "max_unchanged_words": "2", "truecase": "false", "verbose": "false"}

_SPACES = re.compile(" +")
_INTEGER = re.compile(r"[0-9]+")
_A_FIELDS = "'A start end|||type|||correction|||REQUIRED|||-NONE-|||annotator'"


# ----------------------------------------------------------------------------- options
@dataclass(frozen=True)
class M2Options:
    """M2SCORER's settings. beta: F_beta's β (a float32 value, as Moses holds it);
    max_unchanged_words: unchanged words an edit may span (>= 0); truecase: compare words
    and edit texts as written (else ASCII-lowercased, spaces in edit texts removed)."""

    beta: float = 0.5
    max_unchanged_words: int = 2
    truecase: bool = False

    def __post_init__(self):
        if not (isinstance(self.beta, (int, float)) and np.isfinite(self.beta) and self.beta >= 0):
            raise ValueError(f"beta must be a number >= 0, got {self.beta!r}")
        object.__setattr__(self, "beta", float(np.float32(self.beta)))
        if isinstance(self.max_unchanged_words, bool) or not isinstance(self.max_unchanged_words, (int, np.integer)) \
                or self.max_unchanged_words < 0:
            raise ValueError(f"max_unchanged_words must be an integer >= 0, got {self.max_unchanged_words!r}")
        object.__setattr__(self, "max_unchanged_words", int(self.max_unchanged_words))
        object.__setattr__(self, "truecase", bool(self.truecase))

    @property
    def signature(self) -> str:
        """What changes the statistics and the score, in Moses's terms."""
        return (f"moses-sctype:M2SCORER|beta:{self.beta:g}|max_unchanged_words:{self.max_unchanged_words}"
                f"|truecase:{'true' if self.truecase else 'false'}|tok:space")


def float32_of_decimal(text: str) -> float:
    """The float32 nearest to the decimal ``text`` (ties to even), as C++ ``stream >> float``
    reads it (a float32 of the double could differ by rounding twice)."""
    exact = Fraction(text.strip())
    f = np.float32(float(exact))
    candidates = [np.nextafter(f, np.float32(-np.inf)), f, np.nextafter(f, np.float32(np.inf))]
    finite = [c for c in candidates if np.isfinite(c)]
    best = min(finite, key=lambda c: (abs(Fraction(float(c)) - exact), int(np.float32(c).view(np.uint32)) & 1))
    return float(best)


def moses_bool(text: str) -> bool:
    """C++ ``stream >> bool`` (Moses's ``Scan<bool>``), which reads a number: 0 is false,
    any other integer true, and text that is no number (``true``, ``false``) false."""
    m = re.match(r"\s*[+-]?[0-9]+", text)
    return m is not None and int(m.group()) != 0


def parse_scconfig(text: str | None, source: str = "--scconfig") -> tuple[M2Options, list[str]]:
    """``(options, notes)`` from Moses's ``--scconfig`` text for M2SCORER.

    As Moses's ``Scorer::InitConfig``: ``key:value`` items separated by commas (a later
    item overrides), every item needs a colon. Keys: ``beta`` (default 0.5),
    ``max_unchanged_words`` (2), ``truecase`` (false; read as Moses reads a bool: ``1`` is
    true, ``0``, ``false`` *and* ``true`` are false), ``verbose`` (Moses's log only);
    Moses ignores every other key, and so does this (nbest-reranker passes
    ``ignore_whitespace_casing:true``). ``notes``: one line per ignored key and per
    ``truecase`` value that is not 0/1. InputError (naming ``source``) for an item
    without a colon or a value that is not a number of the right kind.
    """
    values: dict[str, str] = {}
    if text:
        for item in text.split(","):
            key, sep, value = item.partition(":")
            if not sep:
                raise InputError(f"{source}: expected key:value items separated by commas, got {item!r}")
            values[key] = value
    notes = [f"{source}: M2SCORER ignores {key}:{value}" for key, value in values.items()
             if key not in SCCONFIG_DEFAULTS]
    beta_text = values.get("beta", SCCONFIG_DEFAULTS["beta"])
    try:
        beta = float32_of_decimal(beta_text)
    except (ValueError, ZeroDivisionError):
        beta = None
    if beta is None or not np.isfinite(beta) or beta < 0:
        raise InputError(f"{source}: beta must be a number >= 0, got {beta_text!r}")
    mu_text = values.get("max_unchanged_words", SCCONFIG_DEFAULTS["max_unchanged_words"])
    if not _INTEGER.fullmatch(mu_text.strip()):
        raise InputError(f"{source}: max_unchanged_words must be an integer >= 0, got {mu_text!r}")
    truecase_text = values.get("truecase", SCCONFIG_DEFAULTS["truecase"])
    if not truecase_text.strip():
        raise InputError(f"{source}: truecase must be 0 or 1, got {truecase_text!r}")
    truecase = moses_bool(truecase_text)
    if "truecase" in values and not re.fullmatch(r"\s*[01]\s*", truecase_text):
        notes.append(f"{source}: Moses reads truecase:{truecase_text} as {int(truecase)} "
                     f"(truecase {'on' if truecase else 'off'}; it reads 0 or 1)")
    return M2Options(beta, int(mu_text), truecase), notes


# ----------------------------------------------------------------------------- reference file
def split_words(text: str) -> list[str]:
    """Moses's split of a line on spaces (boost::split, token_compress_on): runs of spaces
    are one separator, leading and trailing runs give an empty word ("" gives [""])."""
    return _SPACES.split(text)


def hypothesis_words(text: str) -> list[str]:
    """The words Moses's M2SCORER sees in a hypothesis: trimmed of ``' '``, ``'\\r'``,
    ``'\\n'``, then :func:`split_words` (an empty hypothesis is one empty word)."""
    return split_words(text.strip(" \r\n"))


@dataclass(frozen=True)
class M2Edit:
    """A gold edit: source words start..end-1 become ``correction`` (as written), by
    ``annotator``; ``line``: its line in the file (1-based)."""

    start: int
    end: int
    correction: str
    annotator: int
    line: int


@dataclass(frozen=True)
class M2Sentence:
    """One sentence of an M2 file: its source words (Moses's split), gold edits in file
    order (duplicates kept), the number of annotators it is scored against (ids
    0..n_annotators-1), and the line of its ``S`` line."""

    source: tuple[str, ...]
    edits: tuple[M2Edit, ...]
    n_annotators: int
    line: int


@dataclass(frozen=True)
class M2Reference:
    """The sentences of an M2 file, in order; ``path`` for messages."""

    sentences: tuple[M2Sentence, ...]
    path: str

    def __len__(self) -> int:
        return len(self.sentences)


def read_m2(path: str | os.PathLike) -> M2Reference:
    """Read an M2 reference file (see the module docstring; gzip is read transparently).
    InputError ``path:line: ...`` for invalid UTF-8 (Moses would compare the bytes, but
    the hypotheses mtplug reads are UTF-8, so no word of another encoding could match) and
    for a line Moses would misread (:func:`parse_m2`). A CR before the newline is dropped,
    as every mtplug reader drops it (Moses keeps it in the last word of an ``S`` line,
    which then equals no hypothesis word: the hypotheses are trimmed of it)."""
    path = os.fspath(path)
    return parse_m2(read_text_lines(path), path)


def parse_m2(lines: Sequence[str], path: str | None = None) -> M2Reference:
    """The sentences of the lines of an M2 file (newlines removed; a ``\\r`` is kept, as
    Moses's ``getline`` keeps it). InputError naming ``path`` and the line:

    * a line that is neither ``S ...``, ``A ...`` nor blank (Moses skips such lines);
    * an ``S`` line without a sentence (Moses skips it, so every later sentence would
      take the edits and place of the one before);
    * an ``A`` line before the first ``S`` line, with fewer than 6 ``|||`` fields, without
      two offsets ``start end`` (integers, 0 <= start <= end <= the sentence's word count;
      a ``noop`` line's are not read; Moses would keep an edit outside the sentence, which
      no edit of a hypothesis can equal) or with an annotator that is not an integer >= 0;
    * an annotator id reached while a smaller one was never named: Moses indexes its
      annotators 0, 1, ... and would read outside its tables;
    * no ``S`` line at all.
    """
    sentences: list[M2Sentence] = []
    users: set[int] = set()        # Moses never clears it between sentences
    first_line: dict[int, int] = {}
    source: list[str] | None = None
    edits: list[M2Edit] = []
    s_line = 0

    def close() -> None:
        if source is None:
            return
        if not users:
            users.add(0)
        if max(users) + 1 != len(users):     # then one of 0 .. len(users)-1 is missing
            missing = next(k for k in range(len(users)) if k not in users)
            bad = min(k for k in users if k > missing)
            raise InputError(f"annotator {bad}, but annotator {missing} is named on no line up to this "
                             "sentence: expected annotator ids 0, 1, 2, ... (Moses indexes its tables by them)",
                             path, first_line[bad])
        sentences.append(M2Sentence(tuple(source), tuple(edits), len(users), s_line))

    for number, line in enumerate(lines, 1):
        if line.startswith("S ") and len(line) > 2:
            close()
            source, edits, s_line = split_words(line[2:]), [], number
        elif line.startswith("A ") and len(line) > 2:
            if source is None:
                raise InputError("an A line before the first S line: expected 'S <source sentence>' first",
                                 path, number)
            fields = line[2:].split("|||")
            if len(fields) < 6:
                raise InputError(f"expected {_A_FIELDS} (6 fields separated by |||), got {len(fields)} field"
                                 f"{'s' if len(fields) != 1 else ''}", path, number)
            k_text = fields[5].strip()
            if not _INTEGER.fullmatch(k_text):
                raise InputError(f"expected the annotator (field 6) to be an integer >= 0, got {fields[5]!r}",
                                 path, number)
            k = int(k_text)
            users.add(k)
            first_line.setdefault(k, number)
            if fields[1] != "noop":
                offsets = fields[0].split()
                if len(offsets) != 2 or not all(_INTEGER.fullmatch(o) for o in offsets) \
                        or not int(offsets[0]) <= int(offsets[1]) <= len(source):
                    raise InputError(f"expected two word offsets 'start end' after 'A ', 0 <= start <= end <= "
                                     f"{len(source)} (the words of the S line on line {s_line}), got {fields[0]!r}",
                                     path, number)
                edits.append(M2Edit(int(offsets[0]), int(offsets[1]), fields[2], k, number))
        elif not line.strip():
            continue
        elif line.rstrip("\r") in ("S", "S "):
            raise InputError("an S line without a sentence: expected 'S <source sentence>' (Moses skips such "
                             "a line, and every later sentence would shift by one)", path, number)
        else:
            raise InputError(f"expected an 'S <sentence>' line, an {_A_FIELDS} line or a blank line, "
                             f"got {line[:40]!r}", path, number)
    close()
    if not sentences:
        raise InputError("expected at least one 'S <source sentence>' line, found none", path, None)
    return M2Reference(tuple(sentences), path or "<m2>")


# ----------------------------------------------------------------------------- statistics
def _compared(text: str, truecase: bool) -> bytes:
    """Moses's Annot::transform of a word or an edit text, as bytes."""
    b = text.encode("utf-8", "surrogateescape")
    return b if truecase else b.replace(b" ", b"").lower()    # bytes.lower: ASCII only, as C tolower


def m2_stats(hypotheses: Sequence[str], sentence_ids: Sequence[int] | None, reference: M2Reference,
             options: M2Options = M2Options(), *, threads: int = 1) -> np.ndarray:
    """Statistics int32 [n, 4] (``correct proposed gold source_len``) of hypotheses, equal
    to what Moses's extractor computes for them.

    hypotheses: n hypothesis texts as in the n-best (tokenised, words separated by spaces);
    sentence_ids: int [n], the reference sentence of each (None: hypothesis i is of sentence
    i). Hypotheses of one sentence are best given next to each other (each run of one
    sentence is one task for the threads). threads: OpenMP threads (the result does not
    depend on it). ValueError for a sentence id outside the reference.
    """
    hyps = list(hypotheses)
    sids = np.arange(len(hyps), dtype=np.int64) if sentence_ids is None else \
        np.asarray(sentence_ids, dtype=np.int64).reshape(-1)
    if len(sids) != len(hyps):
        raise ValueError(f"{len(hyps)} hypotheses but {len(sids)} sentence ids")
    S = len(reference.sentences)
    if len(sids) and (sids.min() < 0 or sids.max() >= S):
        bad = int(sids[(sids < 0) | (sids >= S)][0])
        raise ValueError(f"sentence {bad} is not in {reference.path} ({S} sentences)")
    truecase = options.truecase
    vocab: dict[bytes, int] = {}

    def word_id(word: str) -> int:
        return vocab.setdefault(_compared(word, truecase), len(vocab))

    src_ptr, src_words = [0], []
    gold_ptr, gold_start, gold_end, gold_annotator, gold_text_ptr, gold_text = [0], [], [], [], [0], []
    n_annotators = []
    for sentence in reference.sentences:
        src_words += [word_id(w) for w in sentence.source]
        src_ptr.append(len(src_words))
        seen = set()
        for e in sentence.edits:
            key = (e.start, e.end, e.annotator, _compared(e.correction, truecase))
            if key in seen:
                continue
            seen.add(key)
            gold_start.append(e.start)
            gold_end.append(e.end)
            gold_annotator.append(e.annotator)
            gold_text.append(key[3])
            gold_text_ptr.append(gold_text_ptr[-1] + len(key[3]))
        gold_ptr.append(len(gold_start))
        n_annotators.append(sentence.n_annotators)
    hyp_ptr, hyp_words = [0], []
    for h in hyps:
        hyp_words += [word_id(w) for w in hypothesis_words(h)]
        hyp_ptr.append(len(hyp_words))
    texts = list(vocab)
    text_ptr = np.zeros(len(texts) + 1, dtype=np.int64)
    text_ptr[1:] = np.cumsum([len(t) for t in texts])
    run_start = np.concatenate([[0], np.flatnonzero(np.diff(sids)) + 1, [len(sids)]]).astype(np.int64) \
        if len(sids) else np.zeros(1, dtype=np.int64)
    out = np.zeros((len(hyps), N_STATS), dtype=np.int32)
    status = _m2.m2_stats(
        np.asarray(hyp_ptr, dtype=np.int64), np.asarray(hyp_words, dtype=np.int32), run_start,
        np.ascontiguousarray(sids[run_start[:-1]]), np.asarray(src_ptr, dtype=np.int64),
        np.asarray(src_words, dtype=np.int32), text_ptr, np.frombuffer(b"".join(texts), dtype=np.uint8),
        np.asarray(gold_ptr, dtype=np.int64), np.asarray(gold_start, dtype=np.int64),
        np.asarray(gold_end, dtype=np.int64), np.asarray(gold_annotator, dtype=np.int32),
        np.asarray(gold_text_ptr, dtype=np.int64), np.frombuffer(b"".join(gold_text), dtype=np.uint8),
        np.asarray(n_annotators, dtype=np.int32), options.max_unchanged_words, options.beta, truecase, out,
        max(1, int(threads or os.cpu_count() or 1)))
    if status == -1:
        raise MemoryError("M2 statistics: out of memory")
    if status != 0:     # hypothesis_words never gives an empty list
        raise AssertionError(f"hypothesis {status - 1} has no word")
    return out


# ----------------------------------------------------------------------------- in a store
#: what Moses's extractor prints (stderr) for each hypothesis further from its source than
#: the source is long
FAR_MESSAGE = "Levenshtein distance is greater than source size."


def far_from_source(stats) -> np.ndarray:
    """bool [n]: the rows (:func:`m2_stats`) of hypotheses whose edit distance exceeds
    the source length, those Moses warns of (:data:`FAR_MESSAGE`). Their rows are
    ``0 distance 0 source_len``; any other row proposes at most its distance <= source_len
    edits, so ``proposed > source_len`` tells them apart."""
    a = np.asarray(stats)
    return a[:, 1] > a[:, 3]


def m2_references(path: str | os.PathLike, options: M2Options = M2Options()) -> References:
    """An M2 file as the store's references: one reference per sentence, its source text
    (what BLEU and the store's checks see; the M2 statistics read ``m2`` and ``m2_options``,
    attributes of the returned object). InputError as :func:`read_m2`."""
    ref = read_m2(path)
    refs = References([[" ".join(s.source)] for s in ref.sentences], ref.path)
    refs.m2 = ref                   # type: ignore[attr-defined]
    refs.m2_options = options       # type: ignore[attr-defined]
    return refs


class M2Scorer:
    """The statistics collector of the ``m2`` metric part in a store
    (mtplug.metrics.store_stats): rows of hypothesis texts against an M2 reference.

    reference: the M2 file read; options: M2SCORER's settings; warn: called once per
    hypothesis further from its source than the source is long (Moses's extractor prints
    :data:`FAR_MESSAGE` to stderr for each; None: say nothing).
    """

    n_stats = N_STATS

    def __init__(self, reference: M2Reference, options: M2Options = M2Options(), warn=None):
        self.reference = reference
        self.options = options
        self.warn = warn

    def text_stats(self, hypotheses: Sequence[str], sentence_ids, threads: int = 1) -> np.ndarray:
        """int32 [n, 4] of hypothesis texts and their sentence ids (:func:`m2_stats`)."""
        out = m2_stats(hypotheses, sentence_ids, self.reference, self.options, threads=threads)
        if self.warn is not None:
            for _ in range(int(far_from_source(out).sum())):
                self.warn(FAR_MESSAGE)
        return out


# ----------------------------------------------------------------------------- scores
def f_beta(summed, beta: float = 0.5) -> float:
    """Moses's corpus F_beta (``M2Scorer::calculateScore``) of statistics summed over the
    corpus (``correct proposed gold [source_len]``): P = correct/proposed (1 when
    proposed is 0), R = correct/gold (1 when gold is 0), (1 + β²)PR / (β²P + R), 0 when
    β²P + R is 0. As Moses: the sums as float32, P and R divided in double and stored in
    float32, β² and the denominator in float32, the numerator and quotient in double;
    returned as the float32 value (a fraction in [0, 1])."""
    st = np.asarray(summed, dtype=np.float64).reshape(-1)
    if len(st) not in (3, N_STATS):
        raise ValueError(f"expected {N_STATS} statistics, got {len(st)}")
    c, pr, g = (np.float32(v) for v in st[:3])
    bb = np.float32(np.float32(beta) * np.float32(beta))
    p = np.float32(1.0) if pr == 0 else np.float32(float(c) / float(pr))
    r = np.float32(1.0) if g == 0 else np.float32(float(c) / float(g))
    denom = np.float32(np.float32(bb * p) + r)
    if denom == 0:
        return 0.0
    return float(np.float32((1.0 + float(bb)) * float(p) * float(r) / float(denom)))


def sentence_f_beta(rows, beta: float = 0.5) -> np.ndarray:
    """float64 [n]: M2::FScore of each statistics row (float32 throughout; what Moses
    compares annotators by). rows: [n, 3 or 4]."""
    a = np.asarray(rows, dtype=np.float64)
    if a.ndim != 2 or a.shape[1] not in (3, N_STATS):
        raise ValueError(f"expected rows of {N_STATS} statistics, got shape {a.shape}")
    c, pr, g = (a[:, k].astype(np.float32) for k in range(3))
    one = np.float32(1)
    b = np.float32(beta)
    bb = np.float32(b * b)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(pr == 0, one, c / np.where(pr == 0, one, pr)).astype(np.float32)
        r = np.where(g == 0, one, c / np.where(g == 0, one, g)).astype(np.float32)
        denom = (bb * p + r).astype(np.float32)
        num = ((np.float32(one + bb) * p) * r).astype(np.float32)
        f = np.where(denom == 0, np.float32(0), num / np.where(denom == 0, one, denom)).astype(np.float32)
    return f.astype(np.float64)
