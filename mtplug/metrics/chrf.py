"""chrF and chrF++ (Popović 2015, 2017) from sufficient statistics, equal to sacrebleu 2.

Statistics layout (one int32 row per hypothesis, ``3 · (char_order + word_order)``
columns): for each order — character n-grams 1..char_order, then word n-grams
1..word_order — the hypothesis n-gram count, the reference n-gram count and the clipped
matches, of the reference whose sentence chrF is highest (the first on ties). As in
sacrebleu, a hypothesis count is stored as 0 for an order the reference has no n-gram
of, characters exclude whitespace, and chrF++ words have one leading or trailing
punctuation mark split off. The corpus score is computed from the column sums.

Statistics are collected by the compiled kernel ``pyx/_chrf.pyx`` from word ids: every
distinct word is prepared once (:meth:`Chrf.word_tables`), never every hypothesis.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from .._ext import _chrf
from .store_text import store_text

#: the named variants (as ``mtplug score --metric`` and sacrebleu's CLI call them) -> word order
VARIANTS = {"chrf": 0, "chrf++": 2}

#: sacrebleu's punctuation set for chrF++ words (string.punctuation)
PUNCTUATION = frozenset('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~')


@dataclass(frozen=True)
class Chrf:
    """chrF with ``char_order`` (1..6), ``word_order`` (0..2; 2 is chrF++), ``beta`` and
    case folding (Python's ``str.lower``, as sacrebleu's ``lowercase=True``)."""

    char_order: int = 6
    word_order: int = 0
    beta: float = 2.0
    lowercase: bool = False

    def __post_init__(self):
        if not 1 <= int(self.char_order) <= _chrf.MAX_CHAR_ORDER:
            raise ValueError(f"char_order must be 1..{_chrf.MAX_CHAR_ORDER}, got {self.char_order}")
        if not 0 <= int(self.word_order) <= _chrf.MAX_WORD_ORDER:
            raise ValueError(f"word_order must be 0..{_chrf.MAX_WORD_ORDER}, got {self.word_order}")
        if not (0.0 < float(self.beta) < np.inf):
            raise ValueError(f"beta must be a finite number > 0, got {self.beta}")

    @property
    def name(self) -> str:
        """sacrebleu's name of this configuration: ``chrF2``, ``chrF2++`` (β, then one ``+`` per word order)."""
        b = int(self.beta) if float(self.beta).is_integer() else self.beta
        return f"chrF{b}" + "+" * int(self.word_order)

    @property
    def n_stats(self) -> int:
        """Statistics columns per hypothesis: 3 per character and word order (module docstring)."""
        return 3 * (int(self.char_order) + int(self.word_order))

    @property
    def signature(self) -> str:
        """What changes the number, in sacrebleu's signature keys."""
        case = "lc" if self.lowercase else "mixed"
        return f"case:{case}|eff:yes|nc:{self.char_order}|nw:{self.word_order}|space:no"

    def word_tables(self, words: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per word id (``words[w]``): its characters and its chrF++ tokens.

        Returns ``(char_ptr int64 [W + 1], chars int32, tok_ptr int64 [W + 1], toks int32)``:
        code points without whitespace, and ids of the pieces sacrebleu's
        ``_remove_punctuation`` makes of the word (ids are local to this call).
        """
        char_len = np.zeros(len(words) + 1, dtype=np.int64)
        tok_len = np.zeros(len(words) + 1, dtype=np.int64)
        texts: list[str] = []
        tok_ids: list[int] = []
        token_id: dict[str, int] = {}
        for w, word in enumerate(words):
            if self.lowercase:
                word = word.lower()
            pieces = word.split()
            text = "".join(pieces)
            texts.append(text)
            char_len[w + 1] = len(text)
            if self.word_order:
                n0 = len(tok_ids)
                for piece in pieces:
                    for tok in _split_punctuation(piece):
                        tok_ids.append(token_id.setdefault(tok, len(token_id)))
                tok_len[w + 1] = len(tok_ids) - n0
        chars = np.frombuffer("".join(texts).encode("utf-32-le"), dtype="<i4").astype(np.int32)
        return (np.cumsum(char_len), chars, np.cumsum(tok_len), np.asarray(tok_ids, dtype=np.int32))

    def stats(self, hyp_ptr: np.ndarray, hyp_words: np.ndarray, run_start: np.ndarray, run_sid: np.ndarray,
              references: tuple[np.ndarray, np.ndarray, np.ndarray], words: list[str], *,
              threads: int = 1) -> np.ndarray:
        """Statistics int32 [n, n_stats] of word-id hypotheses.

        hyp_ptr int64 [n + 1] / hyp_words int32: hypothesis h's word ids (into ``words``);
        hypotheses run_start[r]..run_start[r+1]-1 (int64 [R + 1]) are translations of
        sentence run_sid[r] (int64 [R]); references: ``(sent_ptr, word_ptr, word_ids)`` as
        :func:`mtplug.formats.references.encode_references` returns them, every sentence
        with at least one reference. threads: OpenMP threads (the result does not depend on it).
        """
        char_ptr, chars, tok_ptr, toks = self.word_tables(words)
        sent_ptr, word_ptr, ref_words = references
        out = np.empty((len(hyp_ptr) - 1, self.n_stats), dtype=np.int32)
        status = _chrf.chrf_stats(
            np.ascontiguousarray(hyp_ptr, dtype=np.int64), np.ascontiguousarray(hyp_words, dtype=np.int32),
            np.ascontiguousarray(run_start, dtype=np.int64), np.ascontiguousarray(run_sid, dtype=np.int64),
            np.ascontiguousarray(sent_ptr, dtype=np.int64), np.ascontiguousarray(word_ptr, dtype=np.int64),
            np.ascontiguousarray(ref_words, dtype=np.int32), char_ptr, chars, tok_ptr, toks,
            int(self.char_order), int(self.word_order), float(self.beta), out,
            max(1, int(threads or os.cpu_count() or 1)))
        if status != 0:
            raise MemoryError("chrF statistics: out of memory")
        return out

    def store_stats(self, corpus, *, threads: int = 1) -> np.ndarray:
        """Statistics int32 [n_hypotheses, n_stats] of every hypothesis of an n-best store
        (an :class:`mtplug.corpus.NbestCorpus` that kept its strings and references)."""
        if corpus.bleu.lowercase and not self.lowercase:
            raise ValueError("the store's references were lowercased (BLEU lowercase): "
                             "case-sensitive chrF cannot be computed from them")
        return self.stats(*store_text(corpus, "chrF"), threads=threads)

    def corpus_score(self, summed) -> float:
        """chrF in [0, 1] from statistics summed over the corpus (int [n_stats]): the
        average precision and recall over the orders both sides have, then F_beta —
        sacrebleu's formula (``eps_smoothing=False``), divided by 100."""
        st = np.ascontiguousarray(summed, dtype=np.int64)
        if st.shape != (self.n_stats,):
            raise ValueError(f"expected {self.n_stats} statistics, got shape {st.shape}")
        return _chrf.corpus_score(st, self.n_stats // 3, float(self.beta)) / 100.0


def _split_punctuation(word: str) -> list[str]:
    # sacrebleu CHRF._remove_punctuation on one whitespace-free word
    if len(word) > 1:
        if word[-1] in PUNCTUATION:
            return [word[:-1], word[-1]]
        if word[0] in PUNCTUATION:
            return [word[0], word[1:]]
    return [word]
