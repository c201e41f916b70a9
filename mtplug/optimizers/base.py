"""What every optimizer takes and returns.

An optimizer is a class with a ``name``, an ``options`` table (option name -> argparse
keyword arguments; the CLI adds ``--option-name`` for each and passes the values to the
constructor as keywords), and ``optimize(corpus, start, seed) -> Result``. The registry (``registry.py``) is the one
list of them; the CLI and the Moses programs look algorithms up there.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Result:
    """The outcome of one optimizer run.

    weights: float64 [n_features] in the corpus's feature order; score: tuning-set
    BLEU (0..1) of the 1-best under ``weights``; seed: the seed used (written into
    outputs); info: algorithm-specific numbers for logs (iterations, time, ...).
    """

    weights: np.ndarray
    score: float
    seed: int
    info: dict = field(default_factory=dict)


class Optimizer:
    """Base class: subclasses set ``name`` and ``help`` and implement :meth:`optimize`."""

    name = ""
    help = ""
    options: dict[str, dict] = {}
    #: whether :meth:`optimize` takes ``engine=`` (a :mod:`mtplug.distributed` engine whose
    #: workers run its per-sentence or per-shard work)
    distributes = False
    #: whether :meth:`optimize` also takes a :class:`mtplug.distributed.pool.PartitionedPool`
    #: for ``corpus`` (a store that stays on the workers: ``optimize --store F --scheduler A``)
    works_on_pools = False

    def __init__(self, **options):
        self.options = options

    def optimize(self, corpus, start: np.ndarray, seed: int, *, threads: int | None = None,
                 ranges: tuple[np.ndarray, np.ndarray] | None = None, progress=None) -> Result:
        """Tune weights on ``corpus`` (NbestCorpus) from ``start`` (float64 [n_features]).

        threads: worker threads (None: all cores); ranges: optional (mins, maxs) float64
        [n_dense] where random start points are drawn (init.opt's second and third lines);
        progress: optional callable, called with a count of finished work units
        (``progress_total(self)`` of them in all).
        """
        raise TypeError(f"{type(self).__name__} does not define optimize()")

    @staticmethod
    def checked_start(corpus, start) -> np.ndarray:
        """``start`` as a new float64 [n_features] array, after checking it and that every
        sentence of ``corpus`` has hypotheses (InputError/ValueError otherwise)."""
        corpus.check_complete()
        start = np.array(start, dtype=np.float64)
        if start.shape != (corpus.n_features,):
            raise ValueError(f"start must have shape ({corpus.n_features},), got {start.shape}")
        if not np.all(np.isfinite(start)):
            raise ValueError("start weights must be finite")
        return start

    def progress_total(self) -> int:
        """How many units of work ``optimize`` reports to ``progress``."""
        return 1
