"""The Python API: tune, score and rerank from a notebook with one import.

Everything here calls the objects the command-line tools use (the n-best store
:class:`~mtplug.corpus.NbestCorpus`, the optimizer registry, ``mtplug tune``'s loop,
``mtplug rerank``'s ranking), so a call gives what the matching command gives::

    import mtplug

    corpus = mtplug.load_nbest(["run1.best100.out"], refs=["ref.0", "ref.1"])
    result = mtplug.optimize("mert", corpus, start="moses.ini", seed=1, restarts=20)
    print(result.named_weights())
    mtplug.score(corpus, result)               # BLEU (0-100) of the 1-best under the tuned weights
    mtplug.rerank(["test.best100.out"], result.named_weights())   # 1-best strings

Bad input raises :class:`~mtplug.errors.InputError` (a ValueError) whose message names
the file and line; a bad option value raises ValueError, an unknown option TypeError.
"""

from __future__ import annotations

import argparse
import os
import warnings
from collections.abc import Mapping, Sequence
from typing import Callable, Union

import numpy as np

from .corpus import NbestCorpus
from .errors import InputError
from .experiments.rerank import rerank
from .formats.mert_data import read_mert_data
from .formats.references import References, read_devset, read_references
from .formats.weights import read_weights, write_weights
from .formats.weights_core import Weights
from .metrics.bleu import BleuConfig
from .optimizers.base import Result
from .optimizers.registry import OPTIMIZER_NAMES, get_optimizer
from .validation import check_seed, check_threads

__all__ = ["OPTIMIZER_NAMES", "InputError", "NbestCorpus", "References", "Result", "Weights", "get_optimizer",
           "load_mert_data", "load_nbest", "load_plain", "load_store", "optimize", "read_devset",
           "read_references", "read_weights", "rerank", "score", "tune", "write_weights"]

PathLike = Union[str, "os.PathLike[str]"]
#: what the functions take as references: loaded References, one file, or one file per reference set
RefsLike = Union[References, PathLike, Sequence[PathLike]]
#: what they take as weights: a weights file (any format mtplug reads), a mapping name -> value,
#: a Result of :func:`optimize`, or float64 [n_features] in the store's feature order
WeightsLike = Union[PathLike, Mapping, Result, np.ndarray, Sequence[float]]


def _paths(paths, what: str) -> list[str]:
    """One path or a sequence of them, as a list of str."""
    if isinstance(paths, (str, os.PathLike)):
        return [os.fspath(paths)]
    if isinstance(paths, Sequence) and all(isinstance(p, (str, os.PathLike)) for p in paths):
        return [os.fspath(p) for p in paths]
    raise TypeError(f"{what} must be a file path or a list of file paths, got {type(paths).__name__}")


def _references(refs: RefsLike | None, metric: str) -> References | None:
    """References as ``metric`` reads them (an M2 file under m2)."""
    from .metrics.references import metric_references

    if refs is None or isinstance(refs, References):
        return refs
    return metric_references(_paths(refs, "refs"), metric)


def load_nbest(paths: PathLike | Sequence[PathLike], refs: RefsLike | None = None, *,
               metric: str = "bleu", reflen: str = "closest", lowercase: bool = False) -> NbestCorpus:
    """Read Moses n-best or cdec k-best files into one store (merged, duplicates kept once).

    paths: one file or a list (e.g. every iteration's n-best lists; gzip is read
    transparently). refs: reference files (line i = sentence i; one file per reference
    set; under ``m2`` one M2 file), or :class:`References` from :func:`read_references` / :func:`read_devset`;
    without them the store has no metric statistics and cannot be tuned. metric: what
    the statistics measure, as ``mtplug optimize --metric`` (``bleu``, ``chrf``, ``ter``,
    ``bleu:0.6,ter:0.4``, ...). reflen and lowercase: BLEU's reference length
    (``closest``, ``shortest``, ``average``) and case folding.

    As ``mtplug optimize --nbest F... --ref R...``.
    """
    return NbestCorpus.from_nbest(_paths(paths, "paths"), _references(refs, metric),
                                  BleuConfig(reflen=reflen, lowercase=lowercase), metric=metric)


def load_plain(path: PathLike, refs: RefsLike, *, metric: str = "bleu", reflen: str = "closest",
               lowercase: bool = False) -> NbestCorpus:
    """A store of one hypothesis per sentence from a plain translation file (line i =
    sentence i), for :func:`score`; options as :func:`load_nbest`. As ``mtplug score``."""
    return NbestCorpus.from_plain(os.fspath(path), _references(refs, metric),
                                  BleuConfig(reflen=reflen, lowercase=lowercase), metric=metric)


def load_mert_data(features: PathLike | Sequence[PathLike],
                   scores: PathLike | Sequence[PathLike]) -> NbestCorpus:
    """A store from Moses's features.dat / scores.dat files (pairs, in order), as
    ``mtplug optimize --ffile --scfile``; its metric is the scores files' scorer."""
    return read_mert_data(_paths(features, "features"), _paths(scores, "scores"))


def load_store(path: PathLike) -> NbestCorpus:
    """A store saved by :meth:`NbestCorpus.save` or ``mtplug extract --store``."""
    return NbestCorpus.load(os.fspath(path))


def _weight_vector(corpus, weights: WeightsLike, what: str) -> tuple[np.ndarray, tuple | None, list[str]]:
    """``weights`` lined up with the store's features: (float64 [n_features], init.opt's
    (mins, maxs) ranges or None, warnings). Named weights follow
    :func:`mtplug.start_weights.check_match`: InputError when none names a feature, a
    warning when a dense feature has none."""
    from .start_weights import check_match, read_start

    names = list(corpus.feature_names)
    n_dense = getattr(corpus, "n_dense", 0)
    if isinstance(weights, (str, os.PathLike)):
        start = read_start(os.fspath(weights), names, n_dense)
        return start.vector, start.ranges, list(start.warnings)
    if isinstance(weights, Result):
        if weights.feature_names and list(weights.feature_names) != names:
            named = weights.named_weights()
            return named.to_array(names, allow_unknown=True), None, check_match(list(named), names, n_dense, what)
        weights = weights.weights
    if isinstance(weights, Mapping):
        try:
            named = Weights(weights)
        except ValueError as err:
            raise InputError(str(err), what) from None
        return named.to_array(names, allow_unknown=True), None, check_match(list(named), names, n_dense, what)
    vector = np.array(weights, dtype=np.float64)
    if vector.shape != (len(names),):
        raise ValueError(f"{what} must have one value per feature of the store ({len(names)}: "
                         f"{', '.join(names[:5])}{', ...' if len(names) > 5 else ''}), got shape {vector.shape}")
    return vector, None, []


def optimize(name: str, corpus: NbestCorpus, start: WeightsLike, seed: int = 0, *,
             threads: int | None = None, progress: Callable[[int], None] | None = None,
             **options) -> Result:
    """Tune weights on ``corpus`` with the optimizer ``name`` from ``start``.

    name: one of :data:`OPTIMIZER_NAMES` (``mert``, ``pro``, ``apro``, ``mira``,
    ``kbmira``, ``rampion``, ``none``). start: a weights file (moses.ini, init.opt, a cdec
    weights file, ...), a mapping feature name -> value (features without one start
    at 0), a :class:`Result`, or float64 [n_features] in ``corpus.feature_names`` order.
    Named start weights of which none names a feature raise InputError; a dense feature
    without one is a warning, also in ``Result.warnings``
    (:func:`mtplug.start_weights.check_match`).
    seed: the seed of every random choice (same input and seed, same weights).
    threads: worker threads, >= 1 (None: all cores; no effect on the result; 0 is an
    error, as ``--threads 0`` is). progress:
    called with counts of finished work units. options: the optimizer's own, as in its
    class docstring and ``mtplug optimize NAME --help`` with ``_`` for ``-``
    (``restarts=20``, ``directions="powell"``).

    Returns a :class:`Result`: ``weights`` float64 [n_features], ``score`` the store's
    metric of the tuning set's 1-best under them on the 0-100 scale (BLEU 49.95, equal to
    :func:`score` of the result), ``seed``, ``info`` (its metric numbers, such as MERT's
    regularised ``objective``, on the same scale: :class:`Result`), ``feature_names`` and
    :meth:`Result.named_weights`. Warnings the command prints
    (a degenerate pool, weights returned unchanged) are issued with :mod:`warnings`.
    As ``mtplug optimize NAME``.
    """
    cls = get_optimizer(name)
    unknown = sorted(set(options) - set(cls.options))
    if unknown:
        raise TypeError(f"{name} has no option {', '.join(unknown)} (its options: {', '.join(sorted(cls.options))})")
    try:
        optimizer = cls(**options)
    except ValueError as err:
        raise ValueError(f"{name}: {err}") from None
    seed = check_seed(seed, "seed=")
    threads = check_threads(threads, "threads=")   # as --threads: None is every core, 0 an error
    corpus.check_complete()
    if corpus.n_stats == 0:
        raise InputError("the store has no metric statistics: load it with references (refs=...)")
    vector, ranges, start_warnings = _weight_vector(corpus, start, "start")
    for advice in optimizer.advice(corpus):
        warnings.warn(advice, stacklevel=2)
    result = optimizer.optimize(corpus, vector, seed, threads=threads, ranges=ranges, progress=progress)
    result.feature_names = list(corpus.feature_names)
    result.warnings = start_warnings + list(result.warnings)
    for message in result.warnings:
        warnings.warn(message, stacklevel=2)
    return result


def score(corpus: NbestCorpus, weights: WeightsLike | None = None) -> float:
    """The store's metric of the 1-best under ``weights`` (as :func:`optimize`'s
    ``start``), on sacrebleu's scale as every score of mtplug: BLEU 26.58, TER as an
    error rate in 0-100 (docs/metrics.md, "One scale"). Without weights every
    sentence must have exactly one hypothesis (a store from :func:`load_plain`), as
    ``mtplug score``."""
    if corpus.n_stats == 0:
        raise InputError("the store has no metric statistics: load it with references (refs=...)")
    if weights is None:
        counts = np.diff(corpus.sent_offsets)
        if np.any(counts != 1):
            raise ValueError("give weights: some sentence has more than one hypothesis to choose from")
        rows = corpus.sent_offsets[:-1]
    else:
        vector, _, weight_warnings = _weight_vector(corpus, weights, "weights")
        for message in weight_warnings:
            warnings.warn(message, stacklevel=2)
        rows = corpus.one_best(vector)
    return float(corpus.metric.value(corpus.metric.objective(corpus.corpus_stats(rows))))


def tune(yaml: PathLike | None = None, *, resume: bool = False, log: Callable[[str], None] | None = None,
         **options) -> dict:
    """Run ``mtplug tune``: decode, accumulate n-best lists, optimize, repeat.

    yaml: a tune YAML file (``mtplug tune --write-config`` prints a template); options:
    the same settings as keywords (``decoder="moses"``, ``decoder_bin=...``,
    ``decoder_config="moses.ini"``, ``input="dev.src"``, ``ref=["dev.ref"]``,
    ``workdir="tune"``, ``optimizer="mert"``, ``iterations=10``, ...) and the optimizer's
    own options (``restarts=20``); keywords override the file, which overrides the
    defaults. resume: continue the run in ``workdir``. log: called with each log line
    (default: silent). Returns the summary the command prints (final weights file,
    best iteration, its BLEU, seed, ...). Bad values raise InputError naming the option.
    """
    from .tuning.config import OLD_NAMES, TUNE_OPTIONS, config_from_args, convert_value
    from .tuning.loop import Hooks, run_tuning

    given: dict = {"yaml": None if yaml is None else os.fspath(yaml), "resume": resume}
    for key, value in options.items():
        name = key.replace("-", "_")
        if name in OLD_NAMES:    # nbest= -> nbest_size=, as the command's --nbest
            warnings.warn(f"{name}= is the old name of {OLD_NAMES[name]}= (it still works; use "
                          f"{OLD_NAMES[name]}=)", FutureWarning, stacklevel=2)
            if OLD_NAMES[name] in options:
                raise InputError(f"{name}= and {OLD_NAMES[name]}= are one option (its old and new name); give it once")
            name = OLD_NAMES[name]
        where = (None, None, f"{name}=")
        if name in TUNE_OPTIONS:
            default, kwargs = TUNE_OPTIONS[name]
            given[name] = convert_value(value, kwargs, where, default)
        else:  # an optimizer's option: config_from_args checks it against the chosen optimizer
            given["opt__" + name] = value
    cfg = config_from_args(argparse.Namespace(**given))
    return run_tuning(cfg, Hooks(log=log or (lambda message: None)))
