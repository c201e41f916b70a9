"""PRO: pairwise ranking optimisation (Hopkins & May 2011, "Tuning as Ranking").

One PRO step on the accumulated n-best lists:

1. score every hypothesis with a sentence-level metric b (BLEU+1 by default; any
   variant of :func:`mtplug.metrics.sentence.hypothesis_scores`);
2. per sentence draw Γ candidate pairs (i, j) uniformly and independently, drop those
   with i == j or |b_i - b_j| < β (or b_i == b_j), keep the Ξ with the largest
   |b_i - b_j| (ties: the earlier draw) — compiled, seeded per (seed, sentence), so the
   pairs never depend on threads (rules in full: pyx/_pro.pyx); with ``length_z`` > 0 a
   pair whose hypothesis lengths differ by more than length_z standard deviations is
   drawn again (cdec's mr_pro_map);
3. train a linear classifier without bias on the difference vectors, each pair taken as
   both (f_better - f_worse, +1) and (f_worse - f_better, -1)
   (:mod:`mtplug.optimizers.classifiers`; logistic regression by default), under the
   ℓ2 penalty ‖w‖²/(2C) and a pull toward the start, ‖w - w_t‖²/(2·c_start) (cdec's
   ``mr_pro_reduce -C -y``; c_start = ∞ turns it off): one Gaussian prior of precision
   1/C + 1/c_start centred on w_t / (1 + c_start/C). Here w_t is the start, shrunk to a
   mean |w·x| of 1 over the sampled differences x when it ranks them with larger margins
   (a 1-best ranking ignores the scale of the weights; a pull does not);
4. interpolate: w_{t+1} = Ψ·w' + (1 - Ψ)·w_t with the classifier's w' and that w_t.

Weights are returned as interpolated (not normalised).
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .._ext import _pro
from ..metrics.bleu import SENTENCE_BLEU_VARIANTS, STATS_LAYOUT
from ..metrics.sentence import hypothesis_scores
from . import classifiers
from .base import Optimizer, Result, reject_inapplicable, start_at_unit_margin
from .classifiers import CLASSIFIERS, PairMatrix

_MASK64 = (1 << 64) - 1
_MAX_SENTENCE = (1 << 32) - 1
HYP_LEN_COLUMN = STATS_LAYOUT.index("total1")
#: cdec's mr_pro_map z-score threshold; chosen by runs on a real cdec system (docs/real-systems.md)
DEFAULT_LENGTH_Z = 2.0


@dataclass
class PairSample:
    """Sampled PRO pairs in CSR form over sentences.

    indptr int64 [S + 1]: sentence s owns pairs indptr[s] .. indptr[s+1] - 1 (in draw order);
    better, worse int64 [P]: row indices into the store (b[better] > b[worse]);
    candidates int64 [S]: per sentence, the draws that passed the i != j and β tests
    (before the top-Ξ cut); draws: Γ times the sentences with at least two hypotheses;
    redrawn int64 [S]: per sentence, the draws rejected by the length filter and drawn again.
    """

    indptr: np.ndarray
    better: np.ndarray
    worse: np.ndarray
    candidates: np.ndarray
    draws: int
    redrawn: np.ndarray

    @property
    def n_pairs(self) -> int:
        """Pairs P kept, over all sentences."""
        return len(self.better)


def sample_pairs(scores, sent_offsets, *, seed: int, gamma: int = 5000, xi: int = 50, beta: float = 0.05,
                 lengths=None, length_z: float = 0.0, threads: int | None = None,
                 first_sentence: int = 0) -> PairSample:
    """Hopkins & May's sampler over the whole store (one compiled pass per thread).

    scores: float64 [n_hyp], the sentence metric of every hypothesis (finite);
    sent_offsets: int64 [S + 1], sentence s = rows sent_offsets[s] .. sent_offsets[s+1] - 1;
    seed: any Python int (taken mod 2^64); gamma >= 0 draws per sentence; xi >= 1 pairs
    kept per sentence at most; beta >= 0 the smallest metric difference kept.
    length_z > 0: redraw pairs whose hypothesis lengths (``lengths``, int [n_hyp], words)
    differ by more than length_z standard deviations of the sentence's length differences
    (cdec's mr_pro_map uses 2; rules in pyx/_pro.pyx); 0: no length filter.
    threads: sentences are split into that many contiguous chunks (default: all cores);
    the result is the same for any number. first_sentence: the store's number of the first
    of these sentences (sentence s draws from stream (seed, first_sentence + s), so the
    sentences of a store sampled block by block get the pairs of the whole store; the
    rows stay numbered from 0 here).
    """
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    offsets = np.ascontiguousarray(sent_offsets, dtype=np.int64)
    if offsets.ndim != 1 or len(offsets) < 1 or offsets[0] != 0 or offsets[-1] != len(scores):
        raise ValueError(f"sent_offsets must run from 0 to {len(scores)} (the number of scores)")
    sizes = np.diff(offsets)
    if np.any(sizes < 0):
        raise ValueError("sent_offsets must be non-decreasing")
    if len(sizes) and sizes.max() > _MAX_SENTENCE:
        raise ValueError(f"a sentence has more than {_MAX_SENTENCE} hypotheses")
    if not np.all(np.isfinite(scores)):
        bad = int(np.flatnonzero(~np.isfinite(scores))[0])
        raise ValueError(f"sentence metric of hypothesis {bad} is not finite ({scores[bad]})")
    gamma, xi, beta = int(gamma), int(xi), float(beta)
    if gamma < 0 or xi < 1 or not (beta >= 0 and np.isfinite(beta)):
        raise ValueError(f"need gamma >= 0, xi >= 1 and a finite beta >= 0; got {gamma}, {xi}, {beta}")
    length_z = float(length_z)
    if not (length_z >= 0 and np.isfinite(length_z)):
        raise ValueError(f"length_z must be a finite number >= 0, got {length_z}")
    if length_z > 0:
        if lengths is None:
            raise ValueError("length_z > 0 needs the hypothesis lengths")
        lengths = np.ascontiguousarray(lengths, dtype=np.int64)
        if lengths.shape != scores.shape or (len(lengths) and lengths.min() < 0):
            raise ValueError(f"lengths must be {len(scores)} non-negative word counts")
    else:
        lengths = np.zeros(0, dtype=np.int64)
    S = len(sizes)
    cap = max(1, min(xi, gamma))
    slots_b = np.empty(S * cap, dtype=np.int64)
    slots_w = np.empty(S * cap, dtype=np.int64)
    counts = np.zeros(S, dtype=np.int64)
    above = np.zeros(S, dtype=np.int64)
    redrawn = np.zeros(S, dtype=np.int64)
    seed64 = int(seed) & _MASK64
    first_sentence = int(first_sentence)
    if first_sentence < 0:
        raise ValueError(f"first_sentence must be >= 0, got {first_sentence}")

    def run(bounds):
        return _pro.sample_pairs(scores, offsets, bounds[0], bounds[1], seed64, gamma, cap, beta, lengths, length_z,
                                 slots_b, slots_w, counts, above, redrawn, first_sentence)

    threads = max(1, min(threads or os.cpu_count() or 1, S or 1))
    cuts = np.linspace(0, S, threads + 1).astype(np.int64)
    chunks = [(int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:]) if b > a]
    if len(chunks) <= 1:
        status = [run(c) for c in chunks]
    else:
        with ThreadPoolExecutor(max_workers=len(chunks)) as pool:
            status = list(pool.map(run, chunks))
    if any(st != 0 for st in status):
        raise MemoryError(f"PRO sampling: no memory for {cap} candidates per sentence")
    indptr = np.zeros(S + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    P = int(indptr[-1])
    # slot of pair p of sentence s: s * cap + (p - indptr[s])
    slot = np.repeat(np.arange(S, dtype=np.int64) * cap - indptr[:-1], counts) + np.arange(P, dtype=np.int64)
    return PairSample(indptr, slots_b[slot], slots_w[slot], above, gamma * int(np.count_nonzero(sizes >= 2)),
                      redrawn)


def pair_differences(corpus, better, worse) -> PairMatrix:
    """f_better - f_worse for P pairs of store rows (better, worse int64 [P]).

    Returns a :class:`PairMatrix`: dense float64 [P, n_dense], and when the store has
    sparse features a CSR float64 [P, n_features - n_dense] whose column c is feature
    n_dense + c (exact-zero differences are not stored).
    """
    better = np.ascontiguousarray(better, dtype=np.int64)
    worse = np.ascontiguousarray(worse, dtype=np.int64)
    n = corpus.n_hypotheses
    if better.shape != worse.shape or better.ndim != 1:
        raise ValueError("better and worse must be 1-D arrays of the same length")
    if len(better) and (min(better.min(), worse.min()) < 0 or max(better.max(), worse.max()) >= n):
        raise ValueError(f"pair rows must lie in [0, {n})")
    nd = corpus.n_dense
    dense = np.empty((len(better), nd), dtype=np.float64)
    indptr, ids, values = _pro.pair_differences(
        np.ascontiguousarray(corpus.dense, dtype=np.float64), np.ascontiguousarray(corpus.sparse_indptr, np.int64),
        np.ascontiguousarray(corpus.sparse_ids, np.int32), np.ascontiguousarray(corpus.sparse_values, np.float64),
        better, worse, nd, dense)
    n_sparse = corpus.n_features - nd
    sparse = None
    if n_sparse > 0:
        import scipy.sparse

        sparse = scipy.sparse.csr_matrix((values, ids, indptr), shape=(len(better), n_sparse))
    return PairMatrix(dense, sparse)


class Pro(Optimizer):
    """Pairwise ranking optimisation (Hopkins & May 2011, "Tuning as Ranking"): one PRO step.

    Ranks the hypotheses of every sentence with a sentence-level metric, samples
    ``gamma`` candidate pairs per sentence and keeps the ``xi`` with the largest metric
    difference (at least ``beta``; pairs whose lengths differ too much are drawn again,
    ``length_z``), trains a linear classifier without bias (``classifier``: logistic
    regression, perceptron or linear SVM) on the feature differences under an ℓ2 prior
    (``c``) and a pull toward the start (``c_start``; for it a start that ranks the sampled
    pairs with a mean margin above 1 is first shrunk to 1), and returns ``psi``·(classifier
    weights) + (1 − ``psi``)·(that start; without a pull, the start as given: Hopkins &
    May's PRO is ``psi=0.1, c_start=inf, length_z=0``), not normalised. Sampling is
    compiled and seeded per (seed, sentence): the pairs do not depend on the number of
    threads. With no pair at all, the start weights come back with a warning.
    A bad or inapplicable option value (e.g. ``epochs`` with the logistic classifier)
    raises ValueError.
    """

    name = "pro"
    help = "pairwise ranking optimisation (Hopkins & May 2011): sampled pairs, a linear classifier, interpolation"
    options: ClassVar[dict[str, dict]] = {
        "gamma": dict(type=int, default=5000, metavar="N",
                      help="Γ: candidate pairs drawn per sentence (default 5000)"),
        "xi": dict(type=int, default=50, metavar="N",
                   help="Ξ: pairs kept per sentence, those with the largest metric difference (default 50)"),
        "beta": dict(type=float, default=0.05, metavar="B",
                     help="β: candidate pairs whose metric difference is below this are dropped (default 0.05)"),
        "psi": dict(type=float, default=1.0, metavar="P",
                    help="Ψ: result = Ψ·(classifier weights) + (1 − Ψ)·start (default 1, with c_start "
                         "holding the step back; Hopkins & May interpolate with 0.1 instead)"),
        "classifier": dict(choices=CLASSIFIERS, default="logistic",
                           help="binary classifier on the pair differences, no bias (default logistic)"),
        "c": dict(type=float, default=None, metavar="C",
                  help="inverse ℓ2 strength: logistic and svm minimise Σ loss over both orientations of "
                       "every pair + ‖w‖²/(2C) (default 1, megam's prior; not with the perceptron)"),
        "c_start": dict(type=float, default=None, metavar="C",
                        help="inverse strength of an ℓ2 pull toward the start weights (shrunk to a mean "
                             "margin of 1 on the sampled pairs when larger): adds "
                             "‖w − start‖²/(2·c_start) to the classifier's objective; inf: none (default "
                             "0.001; evidence on the synthetic set and real cdec pools with dense and sparse "
                             "features: docs/reproductions/galley-2013.md; cdec's pro.pl is c 0.001, "
                             "c_start 0.0001, psi 1; not with the perceptron)"),
        "length_z": dict(type=float, default=None, metavar="Z",
                         help="redraw candidate pairs whose hypothesis lengths differ by more than Z standard "
                              "deviations of the sentence's length differences (at least 2 words), as cdec's "
                              "pro.pl does; 0: no length filter (default 2 where the hypotheses have lengths, "
                              "i.e. BLEU statistics: on a real cdec system 0.5 test BLEU better than none with "
                              "sparse features over 3 seeds, equal with dense ones, docs/real-systems.md)"),
        "sentence_metric": dict(choices=tuple(SENTENCE_BLEU_VARIANTS), default="bleu+1",
                                help="sentence-level metric that ranks the hypotheses (default bleu+1; "
                                     "moses-sentence-bleu is what Moses's pro uses)"),
        "epochs": dict(type=int, default=None, metavar="N",
                       help="perceptron and svm: passes over the pairs at most (default 20)"),
        "max_iterations": dict(type=int, default=None, metavar="N",
                               help="logistic: L-BFGS iterations at most (default 500)"),
    }

    def __init__(self, gamma=5000, xi=50, beta=0.05, psi=1.0, classifier="logistic", c=None, c_start=None,
                 length_z=None, sentence_metric="bleu+1", epochs=None, max_iterations=None):
        if classifier not in CLASSIFIERS:
            raise ValueError(f"classifier must be one of {', '.join(CLASSIFIERS)}, got {classifier!r}")
        reject_inapplicable((("c", c, classifier != "perceptron", "classifier logistic or svm"),
                             ("c_start", c_start, classifier != "perceptron", "classifier logistic or svm"),
                             ("epochs", epochs, classifier != "logistic", "classifier perceptron or svm"),
                             ("max_iterations", max_iterations, classifier == "logistic", "classifier logistic")))
        c = 1.0 if c is None else c
        c_start = 0.001 if c_start is None else c_start
        epochs = 20 if epochs is None else epochs
        max_iterations = 500 if max_iterations is None else max_iterations
        if int(gamma) < 1 or int(xi) < 1:
            raise ValueError(f"gamma and xi must be >= 1, got {gamma}, {xi}")
        if not (0.0 <= float(beta) < np.inf):
            raise ValueError(f"beta must be a finite number >= 0, got {beta}")
        if not (0.0 <= float(psi) <= 1.0):
            raise ValueError(f"psi must lie in [0, 1], got {psi}")
        if not (0.0 < float(c) < np.inf):
            raise ValueError(f"c must be a finite number > 0, got {c}")
        if not (0.0 < float(c_start) <= np.inf):
            raise ValueError(f"c_start must be a number > 0 (inf: no pull), got {c_start}")
        if length_z is not None and not (0.0 <= float(length_z) < np.inf):
            raise ValueError(f"length_z must be a finite number >= 0 (0: no length filter), got {length_z}")
        if sentence_metric not in SENTENCE_BLEU_VARIANTS:
            raise ValueError(f"sentence_metric must be one of {', '.join(SENTENCE_BLEU_VARIANTS)}, "
                             f"got {sentence_metric!r}")
        if int(epochs) < 1 or int(max_iterations) < 1:
            raise ValueError(f"epochs and max_iterations must be >= 1, got {epochs}, {max_iterations}")
        super().__init__()
        self.gamma, self.xi, self.beta, self.psi = int(gamma), int(xi), float(beta), float(psi)
        self.classifier, self.c, self.sentence_metric = classifier, float(c), sentence_metric
        self.c_start = float(c_start)
        #: None: DEFAULT_LENGTH_Z where the store has hypothesis lengths, no filter where it has none
        self.length_z = None if length_z is None else float(length_z)
        self.epochs, self.max_iterations = int(epochs), int(max_iterations)

    def progress_total(self) -> int:
        return 2   # sampling, then the classifier

    def start_at_pair_scale(self, start: np.ndarray, X) -> np.ndarray:
        """:func:`start_at_unit_margin` measured on what the classifier sees: the mean
        |margin| of the start on the sampled pair differences ``X``. Shrunk, a one-shot run
        from uniform weights on Hopkins & May's synthetic set reaches cosine 0.997 to the
        gold weights at D = 100 (0.746 unshrunk, the pull holding it at its start)."""
        margin = float(np.mean(np.abs(X.matvec(start)))) if X.n_rows else 0.0
        return start_at_unit_margin(start, margin)

    def prior(self, start: np.ndarray) -> tuple[float, np.ndarray | None]:
        """The classifier's (C, center) for a start already at the pairs' scale
        (:meth:`start_at_pair_scale`): ‖w‖²/(2c) + ‖w - start‖²/(2·c_start) is, up to a
        constant, ‖w - center‖²/(2C) with 1/C = 1/c + 1/c_start and center = start·C/c_start."""
        if np.isinf(self.c_start) or self.classifier == "perceptron":
            return self.c, None
        C = 1.0 / (1.0 / self.c + 1.0 / self.c_start)
        return C, start * (C / self.c_start)

    def _optimize(self, corpus, start: np.ndarray, seed: int, *, threads: int | None = None,
                 ranges: tuple[np.ndarray, np.ndarray] | None = None, progress=None) -> Result:
        """One PRO step from ``start`` (float64 [n_features]); ``ranges`` is not used.

        threads: sampling threads (the pairs do not depend on it). The perceptron and
        the SVM shuffle with ``seed`` too. With no pair at all (every sentence's
        hypotheses score alike), the start weights are returned unchanged.
        """
        t0 = time.perf_counter()
        start = self.checked_start(corpus, start)
        b = hypothesis_scores(corpus, self.sentence_metric, threads=max(1, threads or os.cpu_count() or 1))
        lengths, length_z = None, self.length_z
        bleu_cols = corpus.metric.columns("bleu")
        if bleu_cols is None:
            if length_z:
                raise ValueError(f"length_z needs hypothesis lengths, which a store of {corpus.metric.name} "
                                 "statistics does not have (BLEU's do)")
            length_z = 0.0
        else:
            length_z = DEFAULT_LENGTH_Z if length_z is None else length_z
            lengths = corpus.stats[:, bleu_cols.start + HYP_LEN_COLUMN] if length_z > 0 else None
        sample = sample_pairs(b, corpus.sent_offsets, seed=seed, gamma=self.gamma, xi=self.xi, beta=self.beta,
                              lengths=lengths, length_z=length_z, threads=threads)
        t_sample = time.perf_counter() - t0
        if progress is not None:
            progress(1)
        t1 = time.perf_counter()
        fit = None
        if sample.n_pairs:
            X = pair_differences(corpus, sample.better, sample.worse)
            # the pull toward the start needs the start at the pairs' scale; without it the
            # start is interpolated as given, as Hopkins & May interpolate (Ψ < 1)
            pulls = not (np.isinf(self.c_start) or self.classifier == "perceptron")
            scaled = self.start_at_pair_scale(start, X) if pulls else start
            C, center = self.prior(scaled)
            # each pair stands for (x, +1) and (-x, -1): same loss without a bias, so weight 2
            fit = classifiers.fit(self.classifier, X, np.ones(sample.n_pairs), C=C, center=center, loss_weight=2.0,
                                  epochs=self.epochs, max_iterations=self.max_iterations, seed=seed)
            weights = self.psi * fit.weights + (1.0 - self.psi) * scaled
        else:
            weights = start.copy()
        t_fit = time.perf_counter() - t1
        if progress is not None:
            progress(1)
        if not np.all(np.isfinite(weights)):
            raise FloatingPointError(f"PRO: the {self.classifier} classifier produced non-finite weights")
        score = corpus.metric_of(weights)
        warnings = [] if sample.n_pairs else [
            (f"pro: no pair of hypotheses differs by {self.beta:g} or more in {self.sentence_metric} in any "
             "sentence: the start weights are returned unchanged")]
        info = {
            "classifier": self.classifier,
            "draws": sample.draws,
            "pairs_sampled": int(sample.candidates.sum()),
            "pairs_kept": sample.n_pairs,
            "pairs_redrawn_for_length": int(sample.redrawn.sum()),
            "classifier_iterations": fit.iterations if fit else 0,
            "classifier_converged": fit.converged if fit else True,
            "classifier_objective": fit.objective if fit else None,
            "seconds_sampling": t_sample,
            "seconds_classifier": t_fit,
            "seconds": time.perf_counter() - t0,
        }
        return Result(weights=weights, score=score, seed=seed, info=info, warnings=warnings)
