"""The trivial optimizer: returns the start weights (for checking the pipeline)."""

from __future__ import annotations

import numpy as np

from .base import Optimizer, Result


class KeepStart(Optimizer):
    """The trivial optimizer ``none``: :meth:`optimize` returns the start weights unchanged
    with their corpus score, which checks a pipeline (input, output, scoring) without
    tuning."""

    name = "none"
    help = "return the start weights unchanged (checks input, output and scoring)"

    def _optimize(self, corpus, start: np.ndarray, seed: int, *, threads=None, ranges=None,
                 progress=None) -> Result:
        """A copy of ``start`` (float64 [n_features]) and its metric score on ``corpus``;
        ``seed``, ``threads`` and ``ranges`` are not used (the seed is recorded)."""
        weights = np.array(start, dtype=np.float64)
        if progress is not None:
            progress(1)
        return Result(weights=weights, score=corpus.metric_of(weights), seed=seed)
