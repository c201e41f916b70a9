"""What every optimizer takes and returns.

An optimizer is a class with a ``name``, an ``options`` table (option name -> argparse
keyword arguments; the CLI adds ``--option-name`` for each and passes the values to the
constructor as keywords), and ``_optimize(corpus, start, seed) -> Result`` (``optimize`` puts its
result on the metric's 0–100 scale). The registry (``registry.py``) is the one
list of them; the CLI and the Moses programs look algorithms up there.
"""

from __future__ import annotations

import inspect
import textwrap
from dataclasses import dataclass, field, replace
from typing import ClassVar

import numpy as np

from ..formats.weights_core import Weights


@dataclass
class Result:
    """The outcome of one optimizer run.

    weights: float64 [n_features] in the corpus's feature order; seed: the seed used
    (written into outputs); info: algorithm-specific numbers for logs (iterations,
    time, ...).

    score: the store's metric (named in ``metric``) of the tuning set's 1-best under
    ``weights`` on sacrebleu's 0–100 scale, as every output gives it: equal to
    :func:`mtplug.score` of ``weights`` and to ``mtplug score`` / ``mtplug optimize``'s
    ``end:`` line (BLEU 49.95; TER, WER, ... as error rates, lower is better). The numbers of the metric in ``info``
    (:attr:`Optimizer.metric_info`) are on that scale too, by the same map
    (:meth:`mtplug.metrics.layer.Metric.value`): MERT's ``objective`` (the metric of the
    1-best minus its regulariser λ·R, in the metric's units: BLEU − 100·λ·R, or TER +
    100·λ·R for an error rate; equal to ``score`` without a regulariser),
    ``start_objectives`` and the last entry of each ``trace`` step; kbmira's ``best_bleu``
    (its ``score``) and ``bleu_per_pass``. What the other optimizers minimise (PRO's
    ``classifier_objective``, APRO's and RAMPION's ``objective``) is a loss, not a score:
    it stays in its own units. The optimizers compute in the kernels' fractions (BLEU
    0.4995); :meth:`Optimizer.optimize` converts once, at the end.
    """

    weights: np.ndarray
    score: float
    seed: int
    info: dict = field(default_factory=dict)
    #: what the caller should tell the user (a degenerate pool, weights returned unchanged)
    warnings: list = field(default_factory=list)
    #: the names of ``weights``' entries (the store's ``feature_names``), set by :func:`mtplug.optimize`
    feature_names: list = field(default_factory=list)
    #: the metric ``score`` measures, by its ``--metric`` text as JSON outputs name it (``bleu``,
    #: ``ter``, ``bleu:0.6,ter:0.4``); set by :meth:`Optimizer.optimize`
    metric: str = ""

    def on_metric_scale(self, metric, keys) -> Result:
        """This result as users read it: ``score`` and the ``info`` entries named in
        ``keys`` (numbers, lists of numbers, or tuples whose last entry is one) mapped from
        the kernels' fractions by ``metric.value`` (a Metric: 0–100), named by
        ``metric.name``; the one conversion of every optimizer's result
        (:meth:`Optimizer.optimize`)."""

        def scaled(v):
            if isinstance(v, list):
                return [scaled(x) for x in v]
            if isinstance(v, tuple):
                return (*v[:-1], scaled(v[-1]))
            return None if v is None else metric.value(v)

        info = {k: scaled(v) if k in keys else v for k, v in self.info.items()}
        return replace(self, score=metric.value(self.score), info=info, metric=metric.name)

    def named_weights(self) -> Weights:
        """The tuned weights as a mapping feature name -> value (ValueError when the
        result does not know its feature names)."""
        if len(self.feature_names) != len(self.weights):
            raise ValueError("this result does not know its feature names (it did not come from mtplug.optimize)")
        return Weights.from_array(self.feature_names, self.weights)


class Optimizer:
    """Base class of the tuning algorithms.

    A subclass sets ``name`` (its registry and CLI name), ``help`` (one line for
    ``mtplug optimize --help``) and ``options`` (option name -> :mod:`argparse` keyword
    arguments: ``help``, ``default``, ``type``, ``choices``, ...), takes those options as
    keyword arguments of its constructor (ValueError for a bad or inapplicable value)
    and implements :meth:`_optimize`. Its class docstring says what the algorithm does;
    an "Options" section generated from ``options`` (:func:`options_markdown`) is
    appended to it when the class is created, so the documentation of the options cannot
    drift from the table the CLI is built from.
    """

    name = ""
    help = ""
    options: ClassVar[dict[str, dict]] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        own = inspect.cleandoc(cls.__dict__.get("__doc__") or "")
        cls.__doc__ = f"{own}\n\n{options_markdown(cls)}" if own else options_markdown(cls)
    #: whether :meth:`optimize` takes ``engine=`` (a :mod:`mtplug.distributed` engine whose
    #: workers run its per-sentence or per-shard work)
    distributes = False
    #: whether :meth:`optimize` also takes a :class:`mtplug.distributed.pool.PartitionedPool`
    #: for ``corpus`` (a store that stays on the workers: ``optimize --store F --scheduler A``)
    works_on_pools = False

    #: the ``info`` keys of :meth:`_optimize`'s result that hold numbers of the store's
    #: metric (fractions there; 0–100 in :meth:`optimize`'s result, as ``score``)
    metric_info: ClassVar[tuple[str, ...]] = ()

    def optimize(self, corpus, start: np.ndarray, seed: int, *, threads: int | None = None,
                 ranges: tuple[np.ndarray, np.ndarray] | None = None, progress=None, **kwargs) -> Result:
        """Tune weights on ``corpus`` (NbestCorpus) from ``start`` (float64 [n_features]).

        threads: worker threads (None: all cores); ranges: optional (mins, maxs) float64
        [n_dense] where random start points are drawn (init.opt's second and third lines);
        progress: optional callable, called with a count of finished work units
        (``progress_total(self)`` of them in all); kwargs: what the optimizer's
        :meth:`_optimize` takes besides (``engine=``). Returns :meth:`_optimize`'s result
        with its score and metric numbers on the metric's 0–100 scale
        (:meth:`Result.on_metric_scale`; see :class:`Result`).
        """
        result = self._optimize(corpus, start, seed, threads=threads, ranges=ranges, progress=progress, **kwargs)
        return result.on_metric_scale(corpus.metric, self.metric_info)

    def _optimize(self, corpus, start: np.ndarray, seed: int, *, threads: int | None = None,
                  ranges: tuple[np.ndarray, np.ndarray] | None = None, progress=None) -> Result:
        """The algorithm itself, as :meth:`optimize` with the result in the kernels' units:
        ``score`` and :attr:`metric_info` as the store metric's objective, a fraction
        (BLEU 0.4995, 1 − TER for TER). Moses's programs (mtplug mertdir) print these."""
        raise TypeError(f"{type(self).__name__} does not define _optimize()")

    @staticmethod
    def checked_start(corpus, start) -> np.ndarray:
        """``start`` as a new float64 [n_features] array, after checking it, that every
        sentence of ``corpus`` has hypotheses, and that the model score w·f of every
        hypothesis is a finite number under it (InputError/ValueError otherwise)."""
        corpus.check_complete()
        start = np.array(start, dtype=np.float64)
        if start.shape != (corpus.n_features,):
            raise ValueError(f"start must have shape ({corpus.n_features},), got {start.shape}")
        if not np.all(np.isfinite(start)):
            raise ValueError("start weights must be finite")
        check_feature_magnitudes(corpus)
        check_scores_finite(corpus, start, "the start weights")
        return start

    def progress_total(self) -> int:
        """How many units of work ``optimize`` reports to ``progress``."""
        return 1

    def advice(self, corpus) -> list[str]:
        """Warnings about running on ``corpus`` that the user should see before
        :meth:`optimize` starts (e.g. work that will take very long); none by default."""
        return []


def options_markdown(cls: type[Optimizer]) -> str:
    """The "Options" section of the documentation of optimizer class ``cls``, made from
    its ``options`` table: Markdown that also reads as plain text (a heading, then one list
    item per option: keyword, CLI flag, type or choices, default, help). Appended to every
    subclass's docstring; a docs build can call it to render the section."""
    lines = ["Options", "-------"]
    if not cls.options:
        return "\n".join([*lines, f"``{cls.__name__}`` takes no options."])
    lines += [(f"Keyword arguments of ``{cls.__name__}(...)``; ``mtplug optimize {cls.name}`` takes each "
              "as the flag shown."), ""]
    for opt, kwargs in cls.options.items():
        text = f"- ``{opt}`` ({_option_facts(opt, kwargs)}): {kwargs.get('help', '').replace('%%', '%')}"
        lines.append(textwrap.fill(text, width=100, subsequent_indent="  ", break_long_words=False,
                                   break_on_hyphens=False))
    return "\n".join(lines)


def _option_facts(opt: str, kwargs: dict) -> str:
    """``--flag METAVAR``; type or choices; default, as argparse would take the option."""
    flag = "--" + opt.replace("_", "-")
    if kwargs.get("action") == "store_true":
        return f"``{flag}``; a flag, off by default"
    metavar = kwargs.get("metavar") or ("" if "choices" in kwargs else opt.upper())
    facts = [f"``{flag} {metavar}``" if metavar else f"``{flag}``"]
    if "choices" in kwargs:
        facts.append("one of " + ", ".join(f"``{c}``" for c in kwargs["choices"]))
    else:
        facts.append(getattr(kwargs.get("type", str), "__name__", "str"))
    default = kwargs.get("default")
    facts.append("unset by default" if default is None else f"default ``{default!r}``")
    return "; ".join(facts)


def reject_inapplicable(checks) -> None:
    """Options that cannot take effect are errors, not silence.

    ``checks``: ``(name, value, applies, what)`` tuples; a value other than None (the
    option was given) where ``applies`` is false raises ValueError naming ``what`` it needs.
    """
    for name, value, applies, what in checks:
        if value is not None and not applies:
            raise ValueError(f"{name} applies only with {what}")


#: Largest |feature value| the optimizers take: their arithmetic squares feature
#: differences and sums them over many hypotheses (1e100² · 1e8 terms still fits a double).
MAX_FEATURE_MAGNITUDE = 1e100


def _largest_magnitude(a: np.ndarray) -> float:
    """max |a| (0 when empty; NaN when a holds a NaN, as np.max(np.abs(a))), without the
    temporary copy np.abs would make (240 MB for 2M hypotheses x 15 features)."""
    if not a.size:
        return 0.0
    return max(float(a.max()), -float(a.min()))


def check_feature_magnitudes(corpus) -> None:
    """InputError naming the feature (and sentence) of a |feature value| above
    :data:`MAX_FEATURE_MAGNITUDE` (n-best stores only; other corpora are not checked)."""
    from ..errors import InputError

    dense, values = getattr(corpus, "dense", None), getattr(corpus, "sparse_values", None)
    if dense is None or values is None:
        return
    row = feature = None
    if _largest_magnitude(dense) > MAX_FEATURE_MAGNITUDE:
        row, feature = map(int, np.argwhere(np.abs(dense) > MAX_FEATURE_MAGNITUDE)[0])
    elif _largest_magnitude(values) > MAX_FEATURE_MAGNITUDE:
        k = int(np.flatnonzero(np.abs(values) > MAX_FEATURE_MAGNITUDE)[0])
        row = int(np.searchsorted(corpus.sparse_indptr, k, side="right")) - 1
        feature = int(corpus.sparse_ids[k])
    if row is None:
        return
    sentence = int(np.searchsorted(corpus.sent_offsets, row, side="right")) - 1
    value = corpus.dense[row, feature] if feature < corpus.n_dense else values[k]
    raise InputError(f"feature {corpus.feature_names[feature]} has the value {value:g} in sentence {sentence}; "
                     f"expected |feature values| <= {MAX_FEATURE_MAGNITUDE:g} (the optimizers square and sum "
                     "feature differences): rescale the feature")


def check_scores_finite(corpus, weights: np.ndarray, what: str) -> None:
    """InputError when some model score w·f (``weights`` float64 [n_features]) overflows:
    no optimizer can rank hypotheses whose scores are infinite or NaN. Names the first
    such sentence and the largest weight × feature value. Corpora without local model
    scores (a pool kept on dask workers) are not checked here."""
    from ..errors import InputError

    scores_of = getattr(corpus, "scores", None)
    if scores_of is None:
        return
    scores = scores_of(weights)
    bad = np.flatnonzero(~np.isfinite(scores))
    if not len(bad):
        return
    where = ""
    offsets = getattr(corpus, "sent_offsets", None)
    if offsets is not None:
        where = f", first in sentence {int(np.searchsorted(offsets, bad[0], side='right')) - 1}"
    big = int(np.argmax(np.abs(weights)))
    raise InputError(f"{what} make {len(bad)} model score(s) w·f overflow{where}; expected weights and feature "
                     f"values whose products fit a double (largest |weight|: {corpus.feature_names[big]} = "
                     f"{weights[big]:g})")


def mean_pair_margin(scores: np.ndarray, offsets: np.ndarray) -> float:
    """Mean |s_i − s_j| over every pair of hypotheses of one sentence, all sentences
    pooled: scores float64 [n_hyp] (model scores w·f), offsets int64 [S + 1] (sentence s:
    rows offsets[s]:offsets[s + 1]). 0 when no sentence has two hypotheses. Exact in
    O(n log n): after sorting a sentence's n scores, the k-th smallest enters
    2k − n + 1 pair differences with a plus sign."""
    offsets = np.asarray(offsets, dtype=np.int64)
    sizes = np.diff(offsets)
    pairs = float(np.sum(sizes * (sizes - 1) // 2))
    if pairs == 0:
        return 0.0
    sentence = np.repeat(np.arange(len(sizes)), sizes)
    order = np.lexsort((scores, sentence))
    rank = np.arange(len(order)) - offsets[sentence]
    total = float(np.dot(scores[order], 2 * rank - sizes[sentence] + 1))
    return total / pairs


def start_at_unit_margin(start: np.ndarray, margin: float, above: float = 1.0) -> np.ndarray:
    """The start weights (float64 [n_features]) shrunk to a mean pair margin of 1 when their
    hypotheses' model scores differ by a mean ``margin`` above ``above`` (>= 1); else the
    start itself. A 1-best ranking does not depend on the scale of the weights, but the
    learners' losses compare score differences with unit margins (PRO's classifier) or
    metric costs of about that size (MIRA, kbmira, RAMPION): from uniform weights on
    Hopkins & May's synthetic set (features in [0, 500], margins in the hundreds or
    thousands) almost no pair violated its margin and the run ended near its start. A
    start at a smaller scale is kept: scaling it up held a poor start in the decoder loop
    (docs/reproductions/galley-2013.md, "Defaults")."""
    return start / margin if margin > above and np.isfinite(margin) else start


#: ``start_scale`` choices of the margin-based online learners (MIRA, kbmira, RAMPION):
#: best = run from the given start and, where its mean pair margin is above the learner's
#: threshold, from the start shrunk to unit margin too, and keep the result whose 1-best
#: scores higher on the store; given = the given start only; unit = the shrunk start alone
#: where the margin is above the threshold (mtplug 0.x after issue 36)
START_SCALES = ("best", "given", "unit")


#: the info keys :func:`from_scaled_start` adds that hold the store metric (Optimizer.metric_info)
START_SCALE_INFO = ("score_from_given", "score_from_shrunk")


def start_scale_option(above: float) -> dict:
    """The ``start_scale`` entry of an optimizer's ``options`` table (threshold ``above``)."""
    return dict(choices=START_SCALES, default=None,
                help=(f"the start's scale when its hypotheses' mean pair margin is above {above:g}: best = run from "
                      "the start as given and from the start shrunk to a mean margin of 1, keep the result "
                      "whose 1-best scores higher on the tuning store (default; never below either); given = "
                      "as given; unit = shrunk (docs/mira.md, 'The start's scale')"))


def check_start_scale(start_scale: str | None) -> str:
    """``start_scale`` as given (None: ``best``), checked."""
    if start_scale is None:
        return "best"
    if start_scale not in START_SCALES:
        raise ValueError(f"start_scale must be one of {', '.join(START_SCALES)}, got {start_scale!r}")
    return start_scale


def runs_per_start_scale(start_scale: str) -> int:
    """How many optimizer runs ``start_scale`` may take (progress counts each run's units)."""
    return 2 if start_scale == "best" else 1


def from_scaled_start(corpus, start: np.ndarray, above: float, start_scale: str, progress, run) -> Result:
    """The result of ``run(start, progress)`` (a :class:`Result` in the kernels' units,
    ``score`` the store objective of its weights, higher is better) from the start that
    ``start_scale`` names (:data:`START_SCALES`; ``above`` the learner's margin threshold).

    With ``best`` and a mean pair margin above ``above`` both starts run and the result
    with the higher score is kept, the given start's on a tie: in the decoder loop the
    weights a learner produced grow past the threshold (kbmira's margin 10.5 at iteration
    3, 12.0 at 4 on a held-out cdec system) and the shrunk start alone ended lower on the
    same store (issue 53); on Hopkins & May's synthetic set the shrunk start is what
    recovers w* (docs/mira.md, "The start's scale"). ``progress`` receives each run's
    units scaled so that every choice reports :func:`runs_per_start_scale` × the
    learner's units. info gains start_margin (of the given start), start_used ("given" or
    "shrunk"), score_from_given and score_from_shrunk (None where not run).
    """
    margin = start_margin(corpus, start)
    shrunk = start_at_unit_margin(start, margin, above)     # the one rule of when a start is too large
    fires = shrunk is not start
    starts = {"given": start, "shrunk": shrunk} if fires else {"given": start}
    if start_scale == "given":
        starts.pop("shrunk", None)
    elif start_scale == "unit" and fires:
        del starts["given"]
    share = runs_per_start_scale(start_scale) / len(starts)
    scaled = None if progress is None else (lambda n: progress(n * share))
    results = {name: run(s, scaled) for name, s in starts.items()}
    used = max(results, key=lambda name: results[name].score)    # the first (given) on a tie
    kept = results[used]
    if used == "given" and "shrunk" in results and kept.warnings:
        kept.warnings.append("the run from the start shrunk to a mean pair margin of 1 scored no higher on the "
                             "tuning store, so the run from the start as given was kept (start_scale unit keeps "
                             "the shrunk one)")
    kept.info.update(start_margin=margin, start_used=used,
                     score_from_given=results["given"].score if "given" in results else None,
                     score_from_shrunk=results["shrunk"].score if "shrunk" in results else None)
    return kept


def start_margin(corpus, start: np.ndarray) -> float:
    """:func:`mean_pair_margin` of ``start`` (float64 [n_features]) over ``corpus`` (an
    n-best store, or forests: over each forest's 100 best distinct strings at ``start``)."""
    from ..forests.corpus import ForestCorpus

    nbest = corpus.kbest_corpus(start) if isinstance(corpus, ForestCorpus) else corpus
    return mean_pair_margin(nbest.scores(start), nbest.sent_offsets)


def largest_weight(w: np.ndarray) -> float:
    """max |w_i| (0 for an empty vector): the scale of a weight vector in messages, which,
    unlike its norm, never overflows."""
    return float(np.max(np.abs(w))) if len(w) else 0.0


def unchanged_warnings(name: str, start: np.ndarray, weights: np.ndarray) -> list[str]:
    """The warning of an online optimizer whose result is its start (up to the rounding of
    averaging the same vector): no step changed the weights (no hope/fear pair violated its margin, or steps of at most C were
    lost against start weights as large as these)."""
    moved = float(np.max(np.abs(weights - start))) if len(start) else 0.0
    if moved > 1e-12 * largest_weight(start):     # more than the rounding of averaging
        return []
    return [(f"{name}: the result is the start weights unchanged (largest |weight| {largest_weight(start):g}): no "
             "update moved them; no hope/fear pair violated its margin, or the steps (at most C) vanished against "
             "weights that large")]
