"""Metrics: sufficient statistics per hypothesis and scores from their sums.

:func:`get_metric` is the Python entry point: the same parsing (``--metric`` text,
:func:`mtplug.metrics.layer.parse_metric`) and the same statistics collectors as the
command line, over strings::

    >>> from mtplug.metrics import get_metric
    >>> ter = get_metric("ter")
    >>> ter.corpus_score(["the cat sat"], [["the cat sat on the mat"]])   # sacrebleu's TER
    50.0
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .bleu import BleuConfig
    from .layer import Metric

#: get_metric's options: name -> what it sets
METRIC_OPTIONS = {"reflen": "BLEU's effective reference length: closest, shortest or average",
                  "lowercase": "compare lowercased text (Unicode rules; bool)",
                  "moses_case": "with lowercase: fold ASCII letters only, as Moses's case:false (bool)"}


@dataclass(frozen=True)
class TextMetric:
    """A metric ready to score strings: ``metric`` (mtplug.metrics.layer.Metric, as
    ``--metric`` parses it) with ``bleu`` (mtplug.metrics.bleu.BleuConfig: reference
    length and case of every part)."""

    metric: Metric
    bleu: BleuConfig

    @property
    def name(self) -> str:
        """The metric's name as ``--metric`` gives it (e.g. ``bleu``, ``ter``, ``bleu:0.6,ter:0.4``)."""
        return self.metric.name

    def statistics(self, hypotheses: Sequence[str], references: Sequence[Sequence[str]]):
        """``(rows, bound metric)``: rows int32 [n_sentences, n_stats], the statistics of each
        hypothesis (one per sentence), and the metric bound to these references (widths
        and parameters, :class:`mtplug.metrics.layer.Metric`). references: reference
        streams as sacrebleu takes them (``references[k][s]`` is the k-th reference of
        sentence s). ValueError for a hypothesis or reference with a line break, or
        streams of another length."""
        import os
        import tempfile

        from ..corpus import NbestCorpus
        from ..formats.references import References

        hyps = list(hypotheses)
        streams = [list(r) for r in references]
        if not streams or any(len(r) != len(hyps) for r in streams):
            raise ValueError(f"need reference streams of {len(hyps)} sentences each, got lengths "
                             f"{[len(r) for r in streams]}")
        if any("\n" in t or "\r" in t for t in hyps + [x for r in streams for x in r]):
            raise ValueError("a hypothesis or reference contains a line break")
        fd, path = tempfile.mkstemp(suffix=".hyp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.writelines(h + "\n" for h in hyps)
            corpus = NbestCorpus.from_plain(path, References([list(s) for s in zip(*streams)], "references"),
                                            self.bleu, metric=self.metric)
        finally:
            os.unlink(path)
        return np.ascontiguousarray(corpus.stats[corpus.sent_offsets[:-1]]), corpus.metric

    def corpus_score(self, hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> float:
        """The corpus score on sacrebleu's scale, as sacrebleu's ``corpus_score(...).score``
        (BLEU and chrF in 0-100, TER as an error rate in 0-100, an interpolation as
        100 · Σ wᵢ · goodnessᵢ)."""
        rows, metric = self.statistics(hypotheses, references)
        return metric.value(metric.objective(rows.sum(axis=0, dtype=np.int64)))

    def sentence_scores(self, hypotheses: Sequence[str], references: Sequence[Sequence[str]],
                        bleu_variant: str = "bleu+1") -> np.ndarray:
        """float64 [n_sentences]: each sentence's score (0-100, as :meth:`corpus_score`), as
        PRO, MIRA and the other pairwise learners rank hypotheses (BLEU parts with the
        sentence-BLEU ``bleu_variant``)."""
        rows, metric = self.statistics(hypotheses, references)
        return metric.values(metric.row_objectives(rows, bleu_variant, n_sentences=len(rows)))


def get_metric(name: str, **options) -> TextMetric:
    """The metric ``name`` (any ``--metric`` text: ``bleu``, ``chrf``, ``ter``,
    ``moses-ter``, ``bleu:0.6,ter:0.4``, ``ext:FILE`` ...; mtplug.metrics.layer) with
    :data:`METRIC_OPTIONS`; ValueError names an unknown name, option or value."""
    from .bleu import BleuConfig
    from .layer import parse_metric

    unknown = sorted(set(options) - set(METRIC_OPTIONS))
    if unknown:
        raise ValueError(f"unknown metric option(s) {', '.join(unknown)}; known: {', '.join(METRIC_OPTIONS)}")
    metric = parse_metric(name)
    if "reflen" in options and metric.columns("bleu") is None:
        raise ValueError(f"reflen is a BLEU option and {metric.name} has no BLEU part")
    if options.get("moses_case") and not options.get("lowercase"):
        raise ValueError("moses_case chooses how lowercase folds: give lowercase=True with it")
    bleu = BleuConfig(reflen=options.get("reflen", "closest"), lowercase=bool(options.get("lowercase", False)),
                      ascii_case=bool(options.get("moses_case", False)))
    return TextMetric(metric, bleu)
