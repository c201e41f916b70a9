"""Synthetic tuning sets with a known answer (Hopkins & May 2011, §4.1; Galley et al. 2013, §5).

Every hypothesis has D features drawn uniformly from [0, 500]. A gold weight vector w*
defines each hypothesis's pseudo-BLEU: g_h = w*·f_h, rescaled per n-best list to [0, 1].
The corpus metric is the mean pseudo-BLEU of the chosen hypotheses, so w* (or any
positive multiple) is optimal, and a tuner's quality is the cosine of its weights to w*.
With ``noise`` the tuner sees the features with Gaussian noise of that standard
deviation added, while g still comes from the clean features.

:func:`make_bleu_corpus` makes a large store with realistic BLEU statistics instead,
for the speed benchmarks.
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


def make_bleu_corpus(sentences: int, nbest: int, n_dense: int, *, seed: int = 0):
    """An in-memory store with realistic BLEU statistics, for benchmarks (no files).

    Reference lengths ≈ N(27, 10) clipped to [5, 60]; each hypothesis has a quality
    q ~ U(0.2, 0.95), a length near its reference's, and n-gram matches drawn
    binomially with rate q^n; its n_dense features are noisy linear functions of q and
    the length plus per-feature offsets. Arrays are filled in place (no copies), so a
    2,000 × 1,000 × 15 store costs what its arrays cost.
    """
    from .corpus import NbestCorpus

    rng = np.random.default_rng(seed)
    n = sentences * nbest
    ref_len = np.clip(rng.normal(27, 10, size=sentences), 5, 60).astype(np.int32)
    ref_per_hyp = np.repeat(ref_len, nbest)
    quality = rng.uniform(0.2, 0.95, size=n)
    length = np.maximum(1, ref_per_hyp + rng.integers(-4, 5, size=n)).astype(np.int32)
    stats = np.empty((n, 9), dtype=np.int32)
    for order in range(1, 5):
        total = np.maximum(0, length - order + 1)
        stats[:, 2 * order - 1] = total
        stats[:, 2 * order - 2] = rng.binomial(total, quality ** order)
    stats[:, 8] = ref_per_hyp
    hidden = rng.normal(size=(3, n_dense))
    dense = np.empty((n, n_dense), dtype=np.float64)
    chunk = 1 << 18  # build in chunks: keeps the temporaries small next to the dense block
    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        basis = np.stack([quality[lo:hi], length[lo:hi] / 27.0, np.ones(hi - lo)], axis=1)
        dense[lo:hi] = basis @ hidden + rng.normal(scale=0.5, size=(hi - lo, n_dense))
    dense += rng.normal(scale=10.0, size=n_dense)  # offsets, as LM log-probs have

    corpus = NbestCorpus(n_sentences=sentences, has_strings=False)
    corpus.space.define_dense([f"Feature{j}_0" for j in range(n_dense)])
    corpus.sent_offsets = np.arange(0, n + 1, nbest, dtype=np.int64)
    corpus.dense = dense
    corpus.stats = stats
    corpus.sparse_indptr = np.zeros(n + 1, dtype=np.int64)
    return corpus
