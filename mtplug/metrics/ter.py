"""TER, translation edit rate with shifts (Snover et al. 2006), equal to sacrebleu 2.6's
``sacrebleu.metrics.TER`` (its TERCOM re-implementation, ``metrics/lib_ter.py``) in the
default setting: lowercased unless ``case_sensitive``, tokens split on whitespace, no
normalisation, punctuation kept.

Statistics layout (one int32 row per hypothesis, 2 columns): ``[edits, ref_len]`` —
the fewest edits (shifts + insertions + deletions + substitutions) over the sentence's
references, and the summed token count of its references times ``scale / n_refs``,
where ``scale`` (:meth:`Ter.ref_scale`) is the least common multiple of the reference
counts of all sentences. So ``ref_len / scale`` is sacrebleu's average reference length,
exactly, and rows sum like sacrebleu's statistics. The corpus score is
``Σ edits / (Σ ref_len / scale)`` (1 if that length is 0 but there are edits, else 0).

The algorithm (beam-limited edit distance with beam 25, shift candidates of at most 10
words moved at most 50 positions, at most 1000 candidates per hypothesis and reference,
the order candidates are tried and ties broken) is written out in the compiled kernel
``pyx/_ter.pyx``; statistics are collected there from word ids: every distinct word is
prepared once (:meth:`Ter.word_tables`), never every hypothesis.

Moses's own TER (``mert/TerScorer.cpp``, TERCpp) is a different algorithm and gives
different numbers (it shifts the reference rather than the hypothesis, among others).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np

from .._ext import _ter
from .store_text import store_text

#: sacrebleu's TER options this implementation leaves at sacrebleu's default (False)
UNSUPPORTED_OPTIONS = ("normalized", "no_punct", "asian_support")

_INT32_MAX = np.iinfo(np.int32).max


@dataclass(frozen=True)
class Ter:
    """TER as sacrebleu's ``TER(case_sensitive=...)``. sacrebleu's ``normalized``,
    ``no_punct`` and ``asian_support`` exist only to be refused when set."""

    case_sensitive: bool = False
    normalized: bool = False
    no_punct: bool = False
    asian_support: bool = False

    def __post_init__(self):
        bad = [name for name in UNSUPPORTED_OPTIONS if getattr(self, name)]
        if bad:
            raise ValueError(f"TER option(s) {', '.join(bad)} not supported (only case_sensitive)")

    @property
    def name(self) -> str:
        """``TER``, as sacrebleu labels the score."""
        return "TER"

    @property
    def n_stats(self) -> int:
        """Statistics columns per hypothesis: 2, ``[edits, ref_len]`` (module docstring)."""
        return 2

    @property
    def signature(self) -> str:
        """What changes the number, in sacrebleu's signature keys."""
        case = "mixed" if self.case_sensitive else "lc"
        return f"case:{case}|tok:tercom|norm:no|punct:yes|asian:no"

    def word_tables(self, words: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Per word id (``words[w]``) the tokens sacrebleu sees in it.

        Returns ``(tok_ptr int64 [W + 1], toks int32)``: ids (local to this call) of the
        pieces of the word, lowercased unless ``case_sensitive``, split on whitespace
        (a word may hold a no-break space, for example, which sacrebleu splits on).
        """
        tok_len = np.zeros(len(words) + 1, dtype=np.int64)
        tok_ids: list[int] = []
        token_id: dict[str, int] = {}
        for w, word in enumerate(words):
            pieces = (word if self.case_sensitive else word.lower()).split()
            tok_ids.extend(token_id.setdefault(p, len(token_id)) for p in pieces)
            tok_len[w + 1] = len(pieces)
        return np.cumsum(tok_len), np.asarray(tok_ids, dtype=np.int32)

    @staticmethod
    def ref_scale(references: tuple[np.ndarray, np.ndarray, np.ndarray]) -> int:
        """The least common multiple of the reference counts of the sentences (that have
        any) of encoded references ``(sent_ptr int64 [S + 1], word_ptr, word_ids)``."""
        counts = np.unique(np.diff(np.asarray(references[0], dtype=np.int64)))
        scale = math.lcm(*(int(c) for c in counts if c > 0)) if np.any(counts > 0) else 1
        if scale > _INT32_MAX:
            raise ValueError(f"reference counts {counts.tolist()} have too large a common multiple ({scale})")
        return scale

    def stats(self, hyp_ptr: np.ndarray, hyp_words: np.ndarray, run_start: np.ndarray, run_sid: np.ndarray,
              references: tuple[np.ndarray, np.ndarray, np.ndarray], words: list[str], *,
              threads: int = 1) -> np.ndarray:
        """Statistics int32 [n, 2] of word-id hypotheses (layout in the module docstring;
        the scale is ``self.ref_scale(references)``).

        hyp_ptr int64 [n + 1] / hyp_words int32: hypothesis h's word ids (into ``words``);
        hypotheses run_start[r]..run_start[r+1]-1 (int64 [R + 1]) are translations of
        sentence run_sid[r] (int64 [R]); references: ``(sent_ptr, word_ptr, word_ids)`` as
        :func:`mtplug.formats.references.encode_references` returns them, every sentence
        scored with at least one reference. threads: OpenMP threads (the result does not
        depend on it).
        """
        sent_ptr, word_ptr, ref_words = (np.ascontiguousarray(a, dtype=t) for a, t in
                                         zip(references, (np.int64, np.int64, np.int32)))
        hyp_ptr = np.ascontiguousarray(hyp_ptr, dtype=np.int64)
        run_start = np.ascontiguousarray(run_start, dtype=np.int64)
        run_sid = np.ascontiguousarray(run_sid, dtype=np.int64)
        scale = self.ref_scale(references)
        tok_ptr, toks = self.word_tables(words)
        # the ref_len column must fit int32
        cum = np.concatenate([[0], np.cumsum(np.diff(tok_ptr)[ref_words])])
        per_ref = np.concatenate([[0], np.cumsum(cum[word_ptr[1:]] - cum[word_ptr[:-1]])])
        per_sent = per_ref[sent_ptr[1:]] - per_ref[sent_ptr[:-1]]
        if np.any(per_sent * (scale // np.maximum(np.diff(sent_ptr), 1)) > _INT32_MAX):
            raise ValueError("reference lengths times the reference scale overflow int32")
        out = np.zeros((len(hyp_ptr) - 1, 2), dtype=np.int32)
        status = _ter.ter_stats(
            hyp_ptr, np.ascontiguousarray(hyp_words, dtype=np.int32), run_start, run_sid,
            sent_ptr, word_ptr, ref_words, tok_ptr, toks, scale, out,
            max(1, int(threads or os.cpu_count() or 1)))
        if status == -1:
            raise MemoryError("TER statistics: out of memory")
        if status != 0:
            h = int(np.flatnonzero(out[:, 0] < 0)[0])
            raise ValueError(f"TER statistics: no edit path within the beam for hypothesis {h}")
        return out

    def store_stats(self, corpus, *, threads: int = 1) -> np.ndarray:
        """Statistics int32 [n_hypotheses, 2] of every hypothesis of an n-best store (an
        :class:`mtplug.corpus.NbestCorpus` that kept its strings and references), with
        the scale ``self.ref_scale(corpus.references)``."""
        if corpus.bleu.lowercase and self.case_sensitive:
            raise ValueError("the store's references were lowercased (BLEU lowercase): "
                             "case-sensitive TER cannot be computed from them")
        return self.stats(*store_text(corpus, "TER"), threads=threads)

    def corpus_score(self, summed, scale: int) -> float:
        """TER as a fraction (sacrebleu's score / 100) from statistics summed over the
        corpus (int [2]) with the scale they were made with: edits over the summed
        average reference length; 1.0 when that length is 0 and there are edits, else 0."""
        st = np.asarray(summed)
        if st.shape != (2,):
            raise ValueError(f"expected 2 statistics, got shape {st.shape}")
        edits, ref_len = int(st[0]), int(st[1])
        if int(scale) < 1:
            raise ValueError(f"scale must be >= 1, got {scale}")
        if ref_len > 0:
            return edits * int(scale) / ref_len
        return 1.0 if edits > 0 else 0.0

    def sentence_score(self, row, scale: int) -> float:
        """TER of one hypothesis from its statistics row (int [2]), as a fraction."""
        return self.corpus_score(row, scale)
