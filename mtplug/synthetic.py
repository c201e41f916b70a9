"""Synthetic tuning sets with a known answer (Hopkins & May 2011, §4.1; Galley et al. 2013, §5).

Every hypothesis has D features drawn uniformly from [0, 500]. A gold weight vector w*
defines each hypothesis's pseudo-BLEU: g_h = w*·f_h, rescaled per n-best list to [0, 1].
The corpus metric is the mean pseudo-BLEU of the chosen hypotheses, so w* (or any
positive multiple) is optimal, and a tuner's quality is the cosine of its weights to w*.
With ``noise`` the tuner sees the features with Gaussian noise of that standard
deviation added, while g still comes from the clean features.
"""

from __future__ import annotations

import numpy as np

#: pseudo-BLEU is stored as an integer statistic in millionths
SCALE = 1_000_000


def make_synthetic(n_sentences: int, n_hyps: int, n_features: int, *, noise: float = 0.0,
                   seed: int = 0):
    """``(corpus, w_star)``: an NbestCorpus with the ``linear`` metric and the gold weights.

    w* (float64 [D]) is drawn from a standard normal distribution.
    """
    from .corpus import NbestCorpus

    rng = np.random.default_rng(seed)
    w_star = rng.standard_normal(n_features)
    n = n_sentences * n_hyps
    feats = rng.uniform(0.0, 500.0, size=(n, n_features))
    g = (feats @ w_star).reshape(n_sentences, n_hyps)
    lo, hi = g.min(axis=1, keepdims=True), g.max(axis=1, keepdims=True)
    g = (g - lo) / np.where(hi > lo, hi - lo, 1.0)
    stats = np.rint(g.reshape(n, 1) * SCALE).astype(np.int32)
    if noise > 0:
        feats = feats + rng.normal(scale=noise, size=feats.shape)
    names = [f"F{j}_0" for j in range(n_features)]
    corpus = NbestCorpus.from_arrays(np.repeat(np.arange(n_sentences), n_hyps), feats, names, stats,
                                     metric="linear", metric_norm=float(n_sentences * SCALE))
    return corpus, w_star


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine similarity of two weight vectors."""
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))
