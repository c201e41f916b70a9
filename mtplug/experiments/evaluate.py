"""MultEval's report (Clark et al. 2011) over the test-set translations of systems,
each tuned several times (optimizer replicas).

For every metric and system: the mean over replicas of the corpus score, s_sel (the
standard deviation of the score over bootstrap resamples of the test sentences, averaged
over replicas), s_dev (the standard deviation across replicas, Bessel-corrected; none
for one replica), median, min and max. For every system against the baseline: the
p-value of the approximate randomization test stratified over replicas (the replicas'
sentences as paired data points, :func:`mtplug.experiments.significance.approximate_randomization`);
with one replica per system, also the paired bootstrap's p-value and win share
(Koehn 2004).

Scores are on the 0-100 scale of every mtplug score, as MultEval prints them (BLEU,
TER and the other metrics in percent; Length = 100 · hypothesis length / effective
reference length from BLEU's statistics). Statistics are read once per file and metric
(mtplug's scanners); every resample and shuffle is an integer sum in pyx/_resample.pyx.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import numpy as np

from ..errors import InputError
from . import significance as sig

if TYPE_CHECKING:
    from ..metrics.layer import Metric

#: MultEval's defaults
DEFAULT_METRICS = ("bleu", "ter", "length")
DEFAULT_BOOT_SAMPLES = 10000
DEFAULT_AR_SHUFFLES = 10000

@dataclass(frozen=True)
class ReportMetric:
    """One column of the report: ``text`` as given (``bleu``, ``ter``, ``length``, any
    ``--metric`` text of mtplug.metrics.layer), ``label`` as printed, whether higher is
    better (None for Length, which has no better direction), and ``stats_metric``: the
    layer metric whose statistics rows it scores."""

    text: str
    label: str
    higher_is_better: bool | None
    stats_metric: str

    def scorer(self, bound) -> Callable[[np.ndarray], np.ndarray]:
        """totals int64 [B, w] -> float64 [B] scores (0-100), for statistics of ``bound``
        (the layer metric bound to the references, as the corpus reader returns it)."""
        if self.text == "length":
            from ..metrics.bleu import REF_LEN_COLUMN, STATS_LAYOUT

            hyp_col = STATS_LAYOUT.index("total1")
            return lambda t: 100.0 * t[:, hyp_col] / np.maximum(t[:, REF_LEN_COLUMN], 1)
        return lambda t: bound.values(bound.objectives(t))


def report_metric(text: str) -> ReportMetric:
    """The :class:`ReportMetric` of ``--metric`` text; ValueError names a bad one."""
    from ..metrics.layer import parse_metric

    low = text.strip().lower()
    if low == "length":
        return ReportMetric("length", "Length", None, "bleu")
    metric = parse_metric(text)
    return ReportMetric(metric.name, metric.label, metric.higher_is_better, metric.name)


@dataclass
class MetricResult:
    """One metric of one system. Scores 0-100; p-values against the baseline (None for
    the baseline itself); ``p_bootstrap``/``bootstrap_wins`` with one replica only."""

    replicas: list[float]
    mean: float
    s_sel: float
    s_dev: float | None
    median: float
    min: float
    max: float
    p: float | None = None
    p_bootstrap: float | None = None
    bootstrap_wins: float | None = None


@dataclass
class SystemResult:
    """One system of the report: its name, its translation files (one per replica) and
    its :class:`MetricResult` per metric by its ``--metric`` text (``bleu``, ``ter``, ``length``),
    as the JSON report names them."""

    name: str
    files: list[str]
    metrics: dict[str, MetricResult] = field(default_factory=dict)


@dataclass
class Report:
    """Everything ``mtplug evaluate`` prints; :meth:`to_json` is its JSON form."""

    metrics: list[ReportMetric]
    systems: list[SystemResult]
    n_sentences: int
    n_replicas: int
    references: list[str]
    boot_samples: int
    ar_shuffles: int
    seed: int
    signature: str

    def to_json(self) -> dict:
        """The report as JSON values: settings, metrics (``name`` as the table prints it,
        ``metric`` the ``--metric`` text), and per system the numbers of
        :class:`MetricResult` under each metric's ``--metric`` text (lower case: ``bleu``,
        ``ter``, ``length``; scores 0-100; NaN, e.g. s_dev of one replica, as null)."""
        def clean(x):
            return None if x is None or (isinstance(x, float) and math.isnan(x)) else x

        return {
            "seed": self.seed, "boot_samples": self.boot_samples, "ar_shuffles": self.ar_shuffles,
            "n_sentences": self.n_sentences, "n_replicas": self.n_replicas, "references": self.references,
            "signature": self.signature,
            "metrics": [{"name": m.label, "metric": m.text, "higher_is_better": m.higher_is_better}
                        for m in self.metrics],
            "systems": [{"name": s.name, "files": s.files,
                         "scores": {m.text: {k: clean(v) for k, v in vars(s.metrics[m.text]).items()}
                                    for m in self.metrics}}
                        for s in self.systems],
        }


def _median(values: Sequence[float]) -> float:
    # MultEval's median: the upper middle value for an even count
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def progress_total(systems: Sequence[tuple[str, Sequence[str]]], metrics: Sequence[str]) -> int:
    """The units :func:`evaluate` reports to its progress callback."""
    kinds = {report_metric(m).stats_metric for m in metrics}
    return sum(len(files) for _, files in systems) * len(kinds) + len(systems) - 1


def read_statistics(path: str, references, bleu_config, stats_metric: str):
    """(rows int32 [n_sentences, w], bound layer metric) of one translation file (line i =
    sentence i); InputError when its line count is not the references'."""
    from ..corpus import NbestCorpus
    from ..fileio import read_text_lines

    n_lines = len(read_text_lines(path))
    if n_lines != len(references):
        raise InputError(f"has {n_lines} line{'' if n_lines == 1 else 's'}, expected {len(references)} (one per "
                         "reference sentence)", path)
    corpus = NbestCorpus.from_plain(path, references, bleu_config, metric=stats_metric)
    return np.ascontiguousarray(corpus.stats[corpus.sent_offsets[:-1]]), corpus.metric


def _columns(score, columns: slice):
    """``score`` of the statistics in ``columns`` of wide totals [B, W]."""
    return lambda totals: score(np.ascontiguousarray(totals[:, columns]))


def evaluate(systems: Sequence[tuple[str, Sequence[str]]], references, bleu_config,
             metrics: Sequence[str] = DEFAULT_METRICS, boot_samples: int = DEFAULT_BOOT_SAMPLES,
             ar_shuffles: int = DEFAULT_AR_SHUFFLES, seed: int = 0, threads: int = 1,
             progress: Callable[[int], None] | None = None, reference_names: Sequence[str] = ()) -> Report:
    """MultEval's report. systems: (name, translation files, one per optimizer replica),
    the baseline first; every system has the same number of replicas (replica k of each
    system is paired with replica k of the baseline in the stratified test). references:
    mtplug.formats.references.References. progress: called with the number of finished
    units (one per file and statistics kind read, one per system tested against the
    baseline); :func:`progress_total` counts them."""
    if len(systems) < 1:
        raise ValueError("need at least the baseline system")
    counts = {len(files) for _, files in systems}
    if len(counts) != 1:
        raise InputError("every system needs the same number of optimizer replicas (files), got "
                         + ", ".join(f"{name}: {len(files)}" for name, files in systems))
    n_rep = counts.pop()
    cols = [report_metric(m) for m in metrics]
    labels = [c.label for c in cols]
    if len(set(labels)) != len(labels):
        raise InputError(f"a metric is named twice: {' '.join(metrics)}")
    tick = progress or (lambda k: None)

    # statistics once per (file, statistics metric), side by side in one wide row per
    # sentence, so that one draw of resamples and shuffles serves every metric
    kinds = list(dict.fromkeys(c.stats_metric for c in cols))
    wide: dict[str, np.ndarray] = {}
    bound: dict[str, Metric] = {}
    for _, files in systems:
        for path in files:
            if path in wide:
                tick(len(kinds))
                continue
            parts = []
            for kind in kinds:
                rows, bound[kind] = read_statistics(path, references, bleu_config, kind)
                parts.append(rows)
                tick(1)
            wide[path] = np.ascontiguousarray(np.concatenate(parts, axis=1))
    starts = np.cumsum([0] + [bound[k].n_stats for k in kinds])
    slices = {k: slice(int(starts[i]), int(starts[i + 1])) for i, k in enumerate(kinds)}
    scorers = [_columns(c.scorer(bound[c.stats_metric]), slices[c.stats_metric]) for c in cols]

    flat = [wide[p] for _, files in systems for p in files]
    boot = sig.bootstrap_totals(flat, boot_samples, seed, threads)   # one draw for every replica
    results = [SystemResult(name, list(files)) for name, files in systems]
    full_scores = {}
    for c, score in zip(cols, scorers):
        full = [sig.score_of(r, score) for r in flat]
        resampled = [score(t) for t in boot]
        full_scores[c.text] = (full, resampled)
        for k, res in enumerate(results):
            replicas = full[k * n_rep:(k + 1) * n_rep]
            s_sel = float(np.mean([sig.sample_std(b) for b in resampled[k * n_rep:(k + 1) * n_rep]]))
            res.metrics[c.text] = MetricResult(
                replicas=replicas, mean=float(np.mean(replicas)), s_sel=s_sel,
                s_dev=sig.sample_std(replicas) if n_rep > 1 else None, median=_median(replicas),
                min=min(replicas), max=max(replicas))
    base_stack = sig.stack_replicas([wide[p] for p in systems[0][1]])
    for k, ((_, files), res) in enumerate(zip(systems[1:], results[1:]), start=1):
        p_values = sig.approximate_randomization(base_stack, sig.stack_replicas([wide[p] for p in files]), scorers,
                                                 ar_shuffles, seed, threads)
        for c, p in zip(cols, p_values):
            m = res.metrics[c.text]
            m.p = p
            if n_rep == 1:
                full, resampled = full_scores[c.text]
                pb = sig.compare_resamples(full[0], full[k], resampled[0], resampled[k], bool(c.higher_is_better))
                m.p_bootstrap = pb.p
                m.bootstrap_wins = pb.wins if c.higher_is_better is not None else None
        tick(1)
    from .._version import __version__

    signature = (f"nrefs:{references.uniform_count or 'var'}|case:{'lc' if bleu_config.lowercase else 'mixed'}|"
                 f"reflen:{bleu_config.reflen}|tok:none|boot:{boot_samples}|ar:{ar_shuffles}|seed:{seed}|"
                 f"version:mtplug-{__version__}")
    return Report(cols, results, len(references), n_rep, list(reference_names), boot_samples, ar_shuffles, seed,
                  signature)
