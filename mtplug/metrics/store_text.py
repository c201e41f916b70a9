"""The word-id text of a whole n-best store, for the metrics whose statistics are
computed from text (chrF, TER, WER/PER/CDER) rather than collected by the scanner."""

from __future__ import annotations

import numpy as np

from .._ext._nbest_scan import decode_hypotheses


def store_text(corpus, metric_name: str) -> tuple:
    """The word-id text of a whole n-best store, as the collectors' ``stats`` take it:
    ``(hyp_ptr, hyp_words, run_start, run_sid, references, words)`` with one run per
    sentence. ValueError (naming ``metric_name``) for a store without hypothesis strings
    or references (one read from features.dat/scores.dat)."""
    if corpus.hyp_indptr is None or corpus.references is None:
        raise ValueError(f"{metric_name} needs the hypotheses and references of the store "
                         "(a store read from features.dat/scores.dat has neither)")
    ptr, ids = decode_hypotheses(corpus.hyp_bytes, corpus.hyp_indptr, 0, corpus.n_hypotheses)
    return (ptr, ids, corpus.sent_offsets, np.arange(corpus.n_sentences, dtype=np.int64), corpus.references,
            corpus.words.words())
