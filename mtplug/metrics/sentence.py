"""Per-hypothesis scores for the pairwise and margin learners (PRO, APRO, MIRA, RAMPION).

A store with BLEU statistics scores every hypothesis with a sentence-level BLEU
variant (mtplug.metrics.bleu.SENTENCE_BLEU_VARIANTS); a store with the synthetic
``linear`` metric (mtplug.synthetic) scores it with its own pseudo-BLEU g_h, scaled so
that the mean over sentences of the chosen hypotheses is the corpus metric.
"""

from __future__ import annotations

import numpy as np

from .bleu import SENTENCE_BLEU_VARIANTS, sentence_bleu


def hypothesis_scores(corpus, variant: str = "bleu+1", *, threads: int = 1) -> np.ndarray:
    """Sentence-level metric of every hypothesis: float64 [n_hyp], higher is better.

    threads: OpenMP threads for the sentence-BLEU kernel (default 1); the result does not
    depend on it.
    """
    return row_scores(corpus.stats, variant, metric=corpus.metric, ref_len_divisor=corpus.ref_len_divisor,
                      linear_scale=corpus.n_sentences / corpus.metric_norm, threads=threads)


def row_scores(stats: np.ndarray, variant: str = "bleu+1", *, metric: str = "bleu", ref_len_divisor: float = 1,
               linear_scale: float = 1.0, threads: int = 1) -> np.ndarray:
    """:func:`hypothesis_scores` of some rows of a store: stats int32 [n, n_stats] of a
    ``metric`` store; linear_scale: S / metric_norm of the whole store (``linear`` only)."""
    if metric == "linear":
        return stats[:, 0].astype(np.float64) * linear_scale
    if variant not in SENTENCE_BLEU_VARIANTS:
        raise ValueError(f"unknown sentence metric {variant!r}; known: {', '.join(SENTENCE_BLEU_VARIANTS)}")
    return sentence_bleu(stats, variant, ref_len_divisor, threads=threads)
