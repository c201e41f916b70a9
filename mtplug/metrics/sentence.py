"""Per-hypothesis scores for the pairwise and margin learners (PRO, APRO, MIRA, RAMPION).

Every hypothesis is scored with its store metric's sentence-level objective
(:meth:`mtplug.metrics.layer.Metric.row_objectives`): BLEU parts with a sentence-level
BLEU variant (mtplug.metrics.bleu.SENTENCE_BLEU_VARIANTS), TER, chrF and the Moses error
rates as their corpus formula on one row (as goodness: 1 − TER, ...), external scores and
the synthetic ``linear`` pseudo-BLEU scaled so that the mean over sentences of the chosen
hypotheses is the corpus value; an interpolation is the weighted sum. Higher is better.
"""

from __future__ import annotations

import numpy as np


def hypothesis_scores(corpus, variant: str = "bleu+1", *, threads: int = 1) -> np.ndarray:
    """Sentence-level objective of every hypothesis: float64 [n_hyp], higher is better.

    variant: the sentence-BLEU variant for BLEU parts. threads: OpenMP threads (default
    1); the result does not depend on it.
    """
    return row_scores(corpus.stats, variant, metric=corpus.metric, n_sentences=corpus.n_sentences,
                      threads=threads)


def row_scores(stats: np.ndarray, variant: str, *, metric, n_sentences: int, threads: int = 1) -> np.ndarray:
    """:func:`hypothesis_scores` of some rows of a store: stats int32 [n, n_stats] of a
    store whose metric is ``metric`` (mtplug.metrics.layer.Metric) and which has
    ``n_sentences`` sentences in all."""
    return metric.row_objectives(stats, variant, n_sentences=n_sentences, threads=threads)
