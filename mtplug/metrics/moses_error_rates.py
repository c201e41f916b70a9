"""Moses's PER, WER, CDER and TER scorers (``extractor --sctype PER|WER|CDER|TER``) from sufficient statistics.

The statistics equal what Moses's ``extractor`` writes to scores.dat (Moses 34452895,
checked against it on the Moses toy n-best: tests/golden/moses_scorers). Layouts (one
int32 row per hypothesis, Moses's column order):

``PER`` (``mert/PerScorer.cpp``, 3 columns)::

    correct hyp_len ref_len

``correct`` = Σ over distinct hypothesis words of min(count in hypothesis, count in
reference). PER takes exactly one reference per sentence: Moses's PerScorer throws
"PER only supports a single reference" otherwise, and so do we (ValueError).

``WER`` and ``CDER`` (``mert/CderScorer.cpp``; WER is ``CderScorer`` with long jumps off,
``mert/ScorerFactory.cpp``; 2 columns)::

    distance ref_len

``distance``: WER the Levenshtein distance (insertions, deletions, substitutions of
words); CDER the CDER distance of Leusch et al. (2006) as ``CderScorer::computeCD``
computes it (a long jump costs 1 and the first row starts at 1 after position 0).
With several references Moses keeps the first reference's row unless a later one has a
*larger* sentence score, where that score is ``calculateScore`` (a float in (-inf, 1])
stored in an ``int``: truncated toward zero, so every score in (-2, 1) becomes 0 and
only exact matches (1) or scores <= -1 tell references apart. Reproduced as is.

``TER`` (``mert/TerScorer.cpp`` with Moses's TERCpp library, ``mert/TER/``; 3 columns)::

    edits*100 avg_ref_len*100 ter*100

each the double Moses prints with ``%g`` and reads back with ``atoi`` (so ``37.5`` is
stored as ``37`` and ``1.23457e+06`` as ``1``; see :mod:`.moses_scores_format`).
``edits`` are TERCpp's: shifts plus a beam-limited edit distance, with the reference as
the sentence that is shifted (TerScorer swaps the arguments), at most 10 candidate
shifts per round, runs of up to 10 words moved at most 25 words. On harder inputs that
is not sacrebleu's TER (:mod:`.ter`) and can exceed the true minimum: it is Moses's
number, reproduced rule for rule (``pyx/_moses_ter.pyx`` lists them). ``avg_ref_len``
is the mean length of *all* the sentence's references; of several references Moses keeps
the one with the fewest edits, the first on ties. An empty sentence counts as one empty
word inside TERCpp, which changes no count. TERCpp looks runs of words up by a 64-bit hash
of their text, Moses's word ids in decimal, and those hashes collide (``12<tab>54<tab>33<tab>54``
and ``54<tab>54<tab>33<tab>33``): so the result depends on Moses's numbering of the words, which
:class:`MosesTer` reproduces (:func:`moses_numbering`: the order of first sight in the
references, file by file, then in the hypotheses in the order given; one extractor run
over exactly these references and hypotheses). Where TERCpp reads outside its tables
(a pair more than 99999 edits apart; a collision placing a run past the sentence end)
Moses's extractor aborts, and :class:`MosesTer` raises ValueError.

Scores: Moses reports all four as ``1 - error rate`` (higher is better), computed in
32-bit float from the column sums (Moses's totals are ``float``):

* PER: ``(correct - max(0, hyp_len - ref_len)) / ref_len`` (0 when ref_len is 0),
* WER, CDER: ``1 - distance / ref_len`` (1 when ref_len is 0),
* TER: ``1 + (-edits*100) / (avg_ref_len*100)``, float quotient, double sum rounded
  to float (1 when the second column is 0).

:meth:`corpus_score` and :meth:`sentence_score` return that float32 value as a Python
float / float64, so it prints as Moses's ``evaluator`` prints it. Moses sums the
statistics in float: for column sums above 2^24 its totals are rounded (depending on the
order of summation) and ours are exact.

Tokens and case: Moses splits on spaces; ``case:false`` (``lowercase=True`` here)
lowercases every byte with C ``tolower`` in the C locale, i.e. ASCII letters only
(``Scorer::TokenizeAndEncode``): ``"ÄB"`` becomes ``"Äb"``. Every vocabulary word is
mapped once to the id of its folded form (:func:`fold_words`); the kernels in
``pyx/_edit_rates.pyx`` and ``pyx/_moses_ter.pyx`` only compare ids.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from .._ext import _edit_rates, _moses_ter
from .store_text import store_text


def fold_words(words: list[str]) -> np.ndarray:
    """int32 [W]: for every word id the class id of its ASCII-lowercased form (Moses's
    ``case:false``: C ``tolower`` per byte, non-ASCII bytes unchanged). Ids are local."""
    classes: dict[bytes, int] = {}
    return np.fromiter((classes.setdefault(w.encode("utf-8").lower(), len(classes)) for w in words),
                       dtype=np.int32, count=len(words))


def moses_numbering(hyp_words: np.ndarray, sent_ptr: np.ndarray, word_ptr: np.ndarray,
                    ref_words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(hyp_words, ref_words) int32, renumbered as Moses's extractor numbers words: in the
    order it first sees them, over reference k of every sentence for k = 0, 1, ... (its
    reference files one after the other), then over the hypotheses in order.

    hyp_words int32 [N]; references as CSR: sent_ptr int64 [S + 1], word_ptr int64
    [n_refs + 1], ref_words int32 [M]. Moses's TER depends on the numbering (TERCpp
    hashes the ids' decimal text, and hashes collide)."""
    sent_ptr = np.asarray(sent_ptr, dtype=np.int64)
    word_ptr = np.asarray(word_ptr, dtype=np.int64)
    sentence = np.repeat(np.arange(len(sent_ptr) - 1), np.diff(sent_ptr))
    rank_in_sentence = np.arange(len(word_ptr) - 1) - sent_ptr[sentence]
    order = np.lexsort((sentence, rank_in_sentence))
    lengths = np.diff(word_ptr)[order]
    offsets = np.repeat(word_ptr[:-1][order] - (np.cumsum(lengths) - lengths), lengths)
    seen = np.concatenate([ref_words[offsets + np.arange(len(offsets))], hyp_words])
    if not len(seen):
        return hyp_words, ref_words
    ids, first = np.unique(seen, return_index=True)
    table = np.zeros(int(ids[-1]) + 1, dtype=np.int32)
    table[ids[np.argsort(first, kind="stable")]] = np.arange(len(ids), dtype=np.int32)
    return table[hyp_words], table[ref_words]


@dataclass(frozen=True)
class _MosesErrorRate(ABC):
    """Common part: case folding, the store adapter and the signature."""

    lowercase: bool = False   # Moses --scconfig case:false

    name = ""
    n_stats = 0

    @property
    def signature(self) -> str:
        """What changes the number, in Moses's own terms (``--sctype`` and ``--scconfig``)."""
        return f"moses-sctype:{self.name}|case:{'false' if self.lowercase else 'true'}|tok:space"

    def stats(self, hyp_ptr: np.ndarray, hyp_words: np.ndarray, run_start: np.ndarray, run_sid: np.ndarray,
              references: tuple[np.ndarray, np.ndarray, np.ndarray], words: list[str], *,
              threads: int = 1) -> np.ndarray:
        """Statistics int32 [n, n_stats] of word-id hypotheses, equal to Moses's.

        hyp_ptr int64 [n + 1] / hyp_words int32: hypothesis h's word ids (into ``words``);
        hypotheses run_start[r]..run_start[r+1]-1 (int64 [R + 1]) are translations of
        sentence run_sid[r] (int64 [R]); references: ``(sent_ptr, word_ptr, word_ids)`` as
        :func:`mtplug.formats.references.encode_references` returns them (not lowercased by
        it: folding is done here, Moses's way). threads: OpenMP threads (the result does
        not depend on it).
        """
        sent_ptr, word_ptr, ref_words = references
        hyp_words = np.ascontiguousarray(hyp_words, dtype=np.int32)
        ref_words = np.ascontiguousarray(ref_words, dtype=np.int32)
        if self.lowercase:
            fold = fold_words(list(words))
            hyp_words, ref_words = fold[hyp_words], fold[ref_words]
        out = np.empty((len(hyp_ptr) - 1, self.n_stats), dtype=np.int32)
        status = self._kernel(
            np.ascontiguousarray(hyp_ptr, dtype=np.int64), hyp_words,
            np.ascontiguousarray(run_start, dtype=np.int64), np.ascontiguousarray(run_sid, dtype=np.int64),
            np.ascontiguousarray(sent_ptr, dtype=np.int64), np.ascontiguousarray(word_ptr, dtype=np.int64),
            ref_words, out, max(1, int(threads or os.cpu_count() or 1)))
        if status != 0:
            raise MemoryError(f"{self.name} statistics: out of memory")
        return out

    def store_stats(self, corpus, *, threads: int = 1) -> np.ndarray:
        """Statistics int32 [n_hypotheses, n_stats] of every hypothesis of an n-best store
        (an :class:`mtplug.corpus.NbestCorpus` that kept its strings and references)."""
        if corpus.bleu.lowercase:
            raise ValueError("the store's references were lowercased (BLEU lowercase, Unicode rules): "
                             f"Moses's {self.name} needs them as written (its case:false folds ASCII only)")
        return self.stats(*store_text(corpus, self.name), threads=threads)

    @abstractmethod
    def _kernel(self, hyp_ptr, hyp_words, run_start, run_sid, sent_ptr, word_ptr, ref_words, out, threads) -> int:
        """Fill ``out`` (int32 [n, n_stats]) with the compiled scorer; 0, or nonzero when out of memory."""

    @abstractmethod
    def sentence_score(self, rows) -> np.ndarray:
        """float64 [n]: Moses's ``calculateScore`` of each row of statistics (higher is better)."""

    def _columns(self, rows) -> np.ndarray:
        a = np.asarray(rows)
        if a.ndim != 2 or a.shape[1] != self.n_stats:
            raise ValueError(f"expected rows of {self.n_stats} statistics, got shape {a.shape}")
        return a.astype(np.float32)

    def corpus_score(self, summed) -> float:
        """Moses's ``calculateScore`` of statistics summed over the corpus (int
        [n_stats]): ``1 - error rate`` (higher is better), with Moses's float32
        arithmetic, returned as a Python float (each scorer's ``sentence_score`` of the sum)."""
        st = np.asarray(summed)
        if st.shape != (self.n_stats,):
            raise ValueError(f"expected {self.n_stats} statistics, got shape {st.shape}")
        return float(self.sentence_score(st[None, :])[0])


@dataclass(frozen=True)
class Per(_MosesErrorRate):
    """Moses's PER (``--sctype PER``): position-independent word error rate, reported as
    ``1 - PER`` (higher is better). Statistics ``correct hyp_len ref_len``; one
    reference per sentence. ``lowercase``: Moses's ``case:false`` (ASCII folding)."""

    name = "PER"
    n_stats = _edit_rates.PER_STATS

    def _kernel(self, *args):
        return _edit_rates.per_stats(*args)

    def sentence_score(self, rows) -> np.ndarray:
        """float64 [n]: ``(correct - max(0, hyp_len - ref_len)) / ref_len`` in float32
        (PerScorer::calculateScore; 0 when ref_len is 0) — ``1 - PER``, higher is better."""
        c = self._columns(rows)
        zero = np.float32(0)
        num = c[:, 0] - np.maximum(zero, c[:, 1] - c[:, 2])
        denom = c[:, 2]
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.where(denom == 0, zero, num / np.where(denom == 0, np.float32(1), denom))
        return q.astype(np.float32).astype(np.float64)


@dataclass(frozen=True)
class _Edit(_MosesErrorRate):
    long_jumps = False

    def _kernel(self, hyp_ptr, hyp_words, run_start, run_sid, sent_ptr, word_ptr, ref_words, out, threads) -> int:
        return _edit_rates.edit_stats(hyp_ptr, hyp_words, run_start, run_sid, sent_ptr, word_ptr, ref_words,
                                      self.long_jumps, out, threads)

    def sentence_score(self, rows) -> np.ndarray:
        """float64 [n]: ``1 - distance / ref_len`` in float32 (CderScorer::calculateScore;
        1 when ref_len is 0) — ``1 - error rate``, higher is better."""
        c = self._columns(rows)
        one = np.float32(1)
        denom = c[:, 1]
        q = c[:, 0] / np.where(denom == 0, one, denom)
        return np.where(denom == 0, one, one - q).astype(np.float32).astype(np.float64)


@dataclass(frozen=True)
class Wer(_Edit):
    """Moses's WER (``--sctype WER``, CderScorer without long jumps): word error rate
    (Levenshtein distance / reference length) reported as ``1 - WER`` (higher is better).
    Statistics ``distance ref_len``; several references as Moses chooses among them (see
    the module docstring). ``lowercase``: Moses's ``case:false``."""

    name = "WER"
    n_stats = _edit_rates.EDIT_STATS
    long_jumps = False


@dataclass(frozen=True)
class Cder(_Edit):
    """Moses's CDER (``--sctype CDER``): CDER distance / reference length, reported as
    ``1 - CDER`` (higher is better). Statistics ``distance ref_len``; several references
    as Moses chooses among them (see the module docstring). ``lowercase``: ``case:false``."""

    name = "CDER"
    n_stats = _edit_rates.EDIT_STATS
    long_jumps = True


@dataclass(frozen=True)
class MosesTer(_MosesErrorRate):
    """Moses's TER (``--sctype TER``, TerScorer with TERCpp): not sacrebleu's TER (see the
    module docstring), reported as ``1 - TER`` (higher is better). Statistics
    ``edits*100 avg_ref_len*100 ter*100`` as Moses stores them; any number of references.
    ``lowercase``: Moses's ``case:false``. The statistics are those of one extractor run
    over the references given and the hypotheses in the order given (that order numbers
    the words, and Moses's TER depends on the numbering: see the module docstring)."""

    name = "TER"
    n_stats = _moses_ter.TER_STATS

    def _kernel(self, hyp_ptr, hyp_words, run_start, run_sid, sent_ptr, word_ptr, ref_words, out, threads):
        hyp_words, ref_words = moses_numbering(hyp_words, sent_ptr, word_ptr, ref_words)
        status = _moses_ter.ter_stats(hyp_ptr, hyp_words, run_start, run_sid, sent_ptr, word_ptr, ref_words, out,
                                      threads)
        if status > 0:
            raise ValueError(f"hypothesis {status - 1}: Moses's TER cannot score it (over 99999 edits from a "
                             "reference, TERCpp reads outside its table and Moses's extractor aborts)")
        return status

    def sentence_score(self, rows) -> np.ndarray:
        """float64 [n]: TerScorer::calculateScore, ``1.0 + (-c0 / c1)`` with the quotient
        in float32 and the sum in double, rounded to float32 (1 when c1 is 0)."""
        c = self._columns(rows)
        denom = c[:, 1]
        q = (-c[:, 0]) / np.where(denom == 0, np.float32(1), denom)
        s = (1.0 + q.astype(np.float64)).astype(np.float32)
        return np.where(denom == 0, np.float32(1), s).astype(np.float64)


#: Moses sctype -> metric class
METRICS = {"PER": Per, "WER": Wer, "CDER": Cder, "TER": MosesTer}
