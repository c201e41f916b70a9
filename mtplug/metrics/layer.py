"""The metric layer: what a store's statistics columns hold and how they score.

A metric is sufficient statistics per hypothesis (a fixed-width int32 row), a corpus
value from the column sums, and a sentence-level value from one row. A store may hold
several metrics side by side (an interpolation needs each part's statistics): its row
is the concatenation of its :class:`Part` rows, in the order the metric names them.

Every part turns its summed statistics into a *goodness* in which higher is better —
Moses's ``calculateScore`` for the metrics Moses has: BLEU, chrF, the mean of external
scores, 1 − TER, 1 − WER, 1 − CDER, 1 − PER (Moses's PER scorer). Moses's scorer
names (``--sctype``) map onto these parts in mtplug.metrics.moses_scorers. A :class:`Metric`'s
*objective* is ``constant + Σ weight_p · goodness_p``, a fraction as the kernels compute
it; optimizers maximise it, whatever the metric. Its *value* (what users read) is the
metric's score on sacrebleu's scale, :data:`SCALE` × (``value_offset + value_sign ·
objective``): BLEU 26.58 for the fraction 0.2658, TER as an error rate (lower is better),
a Moses interpolation as Moses computes it, (TER − BLEU)/2 as cdec and Z-MERT minimise it.
Every score mtplug prints or returns is a value (docs/metrics.md, "One scale"); outputs
name a metric by its :attr:`Metric.label` (:data:`LABELS`: ``BLEU``, ``chrF``, ``TER``).

The formulas are compiled (pyx/_metric.pxd); the line sweep evaluates the objective
at every breakpoint from summed statistics, so MERT works for every metric here.

Names (one syntax for the CLI, ``--metric``, and :func:`parse_metric`; a comma always
joins the parts of one interpolation, as in Moses's ``--sctype BLEU,TER``):

================  ============================================================
``bleu``          BLEU (reference lengths and case as the store's BleuConfig)
``chrf``          chrF (character 6-grams, β = 2), sacrebleu's
``chrf++``        chrF++ (plus word 2-grams)
``ter``           TER with shifts, sacrebleu's (case-insensitive, as its default)
``wer``           word error rate as Moses's WER scorer (CDER without jumps)
``per``           position-independent error rate as Moses's PER scorer
``cder``          CDER as Moses's CDER scorer
``moses-ter``     TER as Moses's TER scorer (TERCpp; Moses ``--sctype TER``)
``m2``            F0.5 of grammatical error corrections against an M2 file, as Moses's
                  M2SCORER (mtplug.metrics.m2; ``--ref`` is the M2 file)
``moses-chrf``    Moses's CHRF (byte 6-grams, β = 3; mtplug.metrics.moses_ngram), not sacrebleu's
``bleudoc``       Moses's BLEUDOC: BLEU of documents (`` \n ``-separated sentences) against
                  XML references (``--ref`` the ``<doc docid>``/``<seg>`` files)
``ext:FILE``      the mean of external per-hypothesis scores (one per n-best line)
``bleu-ter``      BLEU − TER (Z-MERT's and Phrasal's name)
``ter-bleu``      (TER − BLEU) / 2, minimised (cdec's and Z-MERT's)
``A:w1,B:w2,..``  Σ w_i · goodness_i, Moses's ``--sctype A,B --scconfig weights:w1+w2``
                  (``A,B`` without weights: equal weights, as Moses)
================  ============================================================
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

import numpy as np

from .._ext import _metric
from ..errors import InputError
from .bleu import N_STATS as BLEU_N_STATS
from .bleu import SENTENCE_BLEU_VARIANTS

#: metrics a part can be, name -> (kernel kind, higher is better); ``linear`` is the
#: synthetic pseudo-BLEU of mtplug.synthetic (not a CLI name)
PART_KINDS = {
    "bleu": ("bleu", True), "chrf": ("chrf", True), "chrf++": ("chrf", True), "ter": ("ter", False),
    "wer": ("error_rate", False), "cder": ("error_rate", False), "per": ("per", False),
    # Moses's TER rows are (edits, average reference length, TER), each x100: an error
    # rate of the first two columns
    "moses-ter": ("error_rate", False),
    "ext": ("sum", True), "linear": ("sum", True),
    # Moses's M2SCORER (mtplug.metrics.m2): rows (correct, proposed, gold, source length),
    # F_beta with beta the part's parameter (M2Options.beta)
    "m2": ("m2", True),
    # Moses's CHRF and BLEUDOC scorers (mtplug.metrics.moses_ngram): CHRF's 20 columns scored
    # by CHRFScorer::calculateScore with beta the part's parameter; BLEUDOC's rows are BLEU's
    "moses-chrf": ("moses_chrf", True), "bleudoc": ("bleu", True),
}

#: the names ``--metric`` accepts (``ext`` as ``ext:FILE``), for --help and error messages
METRIC_NAMES = ("bleu", "chrf", "chrf++", "ter", "wer", "per", "cder", "moses-ter", "m2", "moses-chrf", "bleudoc",
                "ext:FILE", "bleu-ter",
                "ter-bleu")

#: how text outputs name each metric part (JSON keys use the ``--metric`` text, lower case);
#: a combination is named by its ``--metric`` text
LABELS = {"bleu": "BLEU", "chrf": "chrF", "chrf++": "chrF++", "ter": "TER", "wer": "WER", "per": "PER",
          "cder": "CDER", "moses-ter": "MosesTER", "m2": "M2", "moses-chrf": "MosesCHRF", "bleudoc": "BLEUDOC", "ext": "ext",
          "linear": "linear"}


def part_label(name: str) -> str:
    """How text outputs name the metric part ``name`` (:data:`LABELS`; a part without an
    entry there by its own name)."""
    return LABELS.get(name, name)


#: the scale of every score mtplug prints or returns (sacrebleu's: BLEU, chrF, TER, ... in
#: 0-100; docs/metrics.md, "One scale"); the kernels, the objective and Moses's programs
#: work in fractions
SCALE = 100.0

#: external scores are stored in fixed point, two int32 columns (hi · 2^31 + lo) of this many units per 1.0
EXT_UNITS = 10 ** 9


@dataclass(frozen=True)
class Part:
    """One metric inside a store's statistics row.

    name: a :data:`PART_KINDS` key; weight: its weight in the objective; width: its
    columns; param: what the kernel needs (BLEU: the reference-length divisor; chrF: β;
    TER: the reference-length scale; ``ext``/``linear``: the divisor of the summed column
    to the corpus value; others 1). source: the file of ``ext`` scores.
    """

    name: str
    weight: float = 1.0
    width: int = 0
    param: float = 1.0
    source: str | None = None

    @property
    def kind(self) -> str:
        """The compiled formula that scores this part (``bleu``, ``chrf``, ``ter``, ``error_rate``,
        ``per``, ``m2`` or ``sum``; :data:`PART_KINDS`)."""
        return PART_KINDS[self.name][0]

    @property
    def higher_is_better(self) -> bool:
        """Whether the metric itself is better when larger (False for error rates; its goodness always is)."""
        return PART_KINDS[self.name][1]


#: Metric.kernel_spec(): kinds, offsets, widths (int32 [P]), weights, params (float64 [P]), constant
KernelSpec = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]


@dataclass(frozen=True)
class Metric:
    """What a store's statistics hold and how they score (see the module docstring).

    parts: in column order; name: the canonical text (``bleu``, ``ter``,
    ``bleu:0.6,ter:0.4``); value = value_offset + value_sign · objective.
    """

    name: str
    parts: tuple[Part, ...]
    constant: float = 0.0
    value_offset: float = 0.0
    value_sign: float = 1.0
    _spec: KernelSpec | None = field(default=None, compare=False, repr=False)

    # ------------------------------------------------------------------ layout
    @property
    def n_stats(self) -> int:
        """Columns of a statistics row: the parts' widths summed (a part whose width is
        not yet known, before the metric is bound to a store, counts 0)."""
        return sum(p.width for p in self.parts)

    @property
    def higher_is_better(self) -> bool:
        """Whether a larger :meth:`value` is better (the objective always is)."""
        return self.value_sign > 0

    @property
    def is_bleu(self) -> bool:
        """The store holds BLEU statistics alone (what BLEU-only methods need)."""
        return len(self.parts) == 1 and self.parts[0].name == "bleu"

    @property
    def label(self) -> str:
        """How text outputs name it: :data:`LABELS` for one metric (``BLEU``, ``chrF``,
        ``TER``), the ``--metric`` text for a combination (``bleu:0.6,ter:0.4``, ``bleu-ter``)."""
        if len(self.parts) == 1 and self.name == _part_text(self.parts[0], None):
            return part_label(self.parts[0].name)
        return self.name

    def columns(self, name: str) -> slice | None:
        """The columns of the first part called ``name``, or None."""
        start = 0
        for p in self.parts:
            if p.name == name:
                return slice(start, start + p.width)
            start += p.width
        return None

    def kernel_spec(self) -> KernelSpec:
        """The arrays pyx/_metric.pxd's fill_spec takes: (kinds int32 [P], offsets int32
        [P], widths int32 [P], weights float64 [P], params float64 [P], constant)."""
        spec = self._spec
        if spec is None:
            offsets = np.cumsum([0] + [p.width for p in self.parts[:-1]]).astype(np.int32)
            spec = (np.array([_metric.KINDS[p.kind] for p in self.parts], dtype=np.int32), offsets,
                    np.array([p.width for p in self.parts], dtype=np.int32),
                    np.array([p.weight for p in self.parts], dtype=np.float64),
                    np.array([p.param for p in self.parts], dtype=np.float64), float(self.constant))
            object.__setattr__(self, "_spec", spec)
        return spec

    def reweighted(self, other: Metric) -> Metric:
        """This (bound) metric scored as ``other``: a metric of the same parts in the same
        order (e.g. parsed ``--metric`` text with other weights, or ``bleu-ter`` for a store
        of ``bleu,ter``). ValueError when the parts differ."""
        if [(p.name, p.source) for p in self.parts] != [(p.name, p.source) for p in other.parts]:
            raise ValueError(f"{other.name} is not a weighting of the {self.name} statistics")
        # an m2 or moses-chrf part's parameter (β) is a scoring setting, not a property of its statistics
        parts = tuple(Part(p.name, o.weight, p.width, o.param if p.name in ("m2", "moses-chrf") else p.param, p.source)
                      for p, o in zip(self.parts, other.parts))
        return Metric(other.name, parts, other.constant, other.value_offset, other.value_sign)

    # ------------------------------------------------------------------ scoring
    def objective(self, totals) -> float:
        """The objective (higher is better) of statistics summed over a corpus (int [n_stats])."""
        t = np.ascontiguousarray(totals, dtype=np.int64)
        if t.shape != (self.n_stats,):
            raise ValueError(f"{self.name} needs {self.n_stats} summed statistics, got shape {t.shape}")
        return float(_metric.objective(t, *self.kernel_spec()))

    def objectives(self, totals) -> np.ndarray:
        """float64 [B]: the objective of each row of summed statistics (int [B, n_stats]),
        e.g. one row per bootstrap resample; as :meth:`objective` row by row."""
        t = np.ascontiguousarray(totals, dtype=np.int64)
        if t.ndim != 2 or t.shape[1] != self.n_stats:
            raise ValueError(f"{self.name} needs rows of {self.n_stats} summed statistics, got shape {t.shape}")
        out = np.empty(len(t), dtype=np.float64)
        _metric.totals_objectives(t, *self.kernel_spec(), out)
        return out

    def value(self, objective: float) -> float:
        """The metric's score from an objective, as users read it: on sacrebleu's scale
        (:data:`SCALE`: BLEU 26.58, not 0.2658), TER as an error rate, an interpolation as
        Σ wᵢ · goodnessᵢ (× 100)."""
        return SCALE * (self.value_offset + self.value_sign * float(objective))

    def values(self, objectives) -> np.ndarray:
        """float64 [B]: :meth:`value` of each objective (e.g. of :meth:`objectives`' rows)."""
        return SCALE * (self.value_offset + self.value_sign * np.asarray(objectives, dtype=np.float64))

    def part_values(self, totals) -> list[tuple[str, float]]:
        """``(name, value)`` of every part (its score, as :meth:`value`), from summed statistics."""
        t = np.ascontiguousarray(totals, dtype=np.int64)
        out, start = [], 0
        for p in self.parts:
            single = Metric(p.name, (Part(p.name, 1.0, p.width, p.param, p.source),),
                            value_offset=0.0 if p.higher_is_better else 1.0,
                            value_sign=1.0 if p.higher_is_better else -1.0)
            out.append((p.name, single.value(single.objective(t[start:start + p.width]))))
            start += p.width
        return out

    def row_objectives(self, stats: np.ndarray, bleu_variant: str = "bleu+1", *, n_sentences: int = 1,
                       threads: int = 1) -> np.ndarray:
        """Sentence-level objective of every row: float64 [n], higher is better.

        stats int32 [n, n_stats]. BLEU parts are scored with the sentence-BLEU
        ``bleu_variant`` (mtplug.metrics.bleu.SENTENCE_BLEU_VARIANTS); ``ext``/``linear``
        parts are multiplied by ``n_sentences``, so that the mean over sentences of the
        chosen rows is their corpus value; every other part is its corpus formula on one
        row. threads: OpenMP threads (the result does not depend on them).
        """
        if bleu_variant not in SENTENCE_BLEU_VARIANTS:
            raise ValueError(f"unknown sentence metric {bleu_variant!r}; known: {', '.join(SENTENCE_BLEU_VARIANTS)}")
        rows = np.ascontiguousarray(stats, dtype=np.int32)
        if rows.ndim != 2 or rows.shape[1] != self.n_stats:
            raise ValueError(f"{self.name} rows need {self.n_stats} columns, got shape {rows.shape}")
        out = np.empty(len(rows), dtype=np.float64)
        _metric.row_objectives(rows, *self.kernel_spec(), SENTENCE_BLEU_VARIANTS[bleu_variant],
                               float(n_sentences), out, max(1, int(threads)))
        return out

    # ------------------------------------------------------------------ persistence
    def to_json(self) -> dict:
        """The metric as JSON values (name, constant, value offset and sign, parts), as a
        store's ``metric_json`` holds it; :meth:`from_json` reads it back."""
        return {"name": self.name, "constant": self.constant, "value_offset": self.value_offset,
                "value_sign": self.value_sign,
                "parts": [{"name": p.name, "weight": p.weight, "width": p.width, "param": p.param,
                           "source": p.source} for p in self.parts]}

    @classmethod
    def from_json(cls, d: dict) -> Metric:
        """The metric :meth:`to_json` wrote (``d``: its dict)."""
        return cls(str(d["name"]), tuple(Part(str(p["name"]), float(p["weight"]), int(p["width"]),
                                              float(p["param"]), p.get("source")) for p in d["parts"]),
                   float(d["constant"]), float(d["value_offset"]), float(d["value_sign"]))


def bleu_metric(ref_len_divisor: float = 1) -> Metric:
    """BLEU alone (9 columns, mtplug.metrics.bleu.STATS_LAYOUT)."""
    return Metric("bleu", (Part("bleu", 1.0, BLEU_N_STATS, float(ref_len_divisor)),))


def linear_metric(norm: float) -> Metric:
    """The synthetic ``linear`` metric: one column g, corpus value Σ g / norm."""
    return Metric("linear", (Part("linear", 1.0, 1, float(norm)),))


def parse_metric(text: str) -> Metric:
    """A :class:`Metric` from ``--metric`` text (module docstring), with widths and
    params not yet bound to a store (:class:`mtplug.metrics.store_stats.StatsBuilder` binds it).
    ValueError names what is wrong."""
    text = str(text).strip()
    if not text:
        raise ValueError("empty metric; choose from " + ", ".join(METRIC_NAMES))
    low = text.lower()
    if low == "bleu-ter":
        return Metric("bleu-ter", (Part("bleu"), Part("ter")), constant=-1.0)
    if low == "ter-bleu":
        return Metric("ter-bleu", (Part("bleu", 0.5), Part("ter", 0.5)), constant=-0.5, value_sign=-1.0)
    items = _split_items(text)
    parts = []
    weighted = []
    for item in items:
        name, source, weight = _parse_item(item)
        parts.append(Part(name, 1.0 if weight is None else weight, source=source))
        weighted.append(weight is not None)
    if any(weighted) and not all(weighted):
        raise ValueError(f"metric {text!r}: give a weight to every part or to none")
    if len(parts) == 1 and not weighted[0]:
        p = parts[0]
        minimised = not p.higher_is_better
        return Metric(_part_text(p, None), (p,), value_offset=1.0 if minimised else 0.0,
                      value_sign=-1.0 if minimised else 1.0)
    if not any(weighted):
        parts = [Part(p.name, 1.0 / len(parts), source=p.source) for p in parts]
    names = [p.name for p in parts]
    if len(set(names)) != len(names) and "ext" not in names:
        raise ValueError(f"metric {text!r} names a part twice")
    if len(parts) > _metric.PARTS_MAX:
        raise ValueError(f"metric {text!r} has more than {_metric.PARTS_MAX} parts")
    canonical = ",".join(_part_text(p, p.weight) for p in parts)
    return Metric(canonical, tuple(parts))


def _split_items(text: str) -> list[str]:
    # commas separate parts (a FILE of ext:FILE cannot contain one; a missing file says so)
    return [t.strip() for t in text.split(",")]


def _parse_item(item: str) -> tuple[str, str | None, float | None]:
    low = item.lower()
    if low.startswith("ext:"):
        rest = item[4:]
        head, sep, tail = rest.rpartition(":")
        weight = _weight(tail, item) if sep and _is_number(tail) else None
        path = head if weight is not None else rest
        if not path:
            raise ValueError(f"metric part {item!r}: ext needs a file, ext:FILE")
        return "ext", path, weight
    name, sep, tail = item.partition(":")
    name = name.strip().lower()
    if name not in PART_KINDS or name == "linear":
        raise ValueError(f"unknown metric {name}; choose from {', '.join(METRIC_NAMES)}")
    if name == "ext":
        raise ValueError("ext needs a file: ext:FILE")
    return name, None, _weight(tail, item) if sep else None


def _is_number(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


def _weight(s: str, item: str) -> float:
    try:
        w = float(s)
    except ValueError:
        raise ValueError(f"metric part {item!r}: the weight must be a number, got {s!r}") from None
    if not math.isfinite(w):
        raise ValueError(f"metric part {item!r}: the weight must be finite")
    return w


def _part_text(p: Part, weight: float | None) -> str:
    base = f"ext:{p.source}" if p.name == "ext" else p.name
    return base if weight is None else f"{base}:{weight:g}"


class ExternalScores:
    """Per-hypothesis scores from a file, handed out in n-best line order.

    The file holds one line per n-best line (of all n-best files, in the order given):
    either the score alone, or ``SENTENCE_ID SCORE``, where the id must equal the n-best
    line's. Scores must be finite. They are kept in fixed point (:data:`EXT_UNITS` per
    1.0; a score is rounded to the nearest 1e-9) so that sums are exact.

    ``path``: the file, read whole at construction; InputError (file and line) for an
    unreadable file, a malformed line or a score that is not finite or too large.
    """

    def __init__(self, path: str):
        self.path = path
        values: list[float] = []
        ids: list[int] = []
        try:
            fh = open(path, encoding="utf-8")  # noqa: SIM115 - opened apart to report OSError; `with fh` below
        except OSError as e:
            raise InputError(f"cannot read the external scores: {e.strerror}", path) from None
        with fh:
            for lineno, line in enumerate(fh, 1):
                fields = line.split()
                try:
                    if len(fields) == 1:
                        sid, v = -1, float(fields[0])
                    elif len(fields) == 2:
                        sid, v = int(fields[0]), float(fields[1])
                    else:
                        raise ValueError
                except ValueError:
                    raise InputError("expected a score, or a sentence id and a score", path, lineno) from None
                if not math.isfinite(v) or abs(v) >= 2.0 ** 61 / EXT_UNITS:
                    raise InputError(f"score {fields[-1]!r} is not a finite number below 2^31 in size", path, lineno)
                values.append(v)
                ids.append(sid)
        self.fixed = np.rint(np.asarray(values, dtype=np.float64) * EXT_UNITS).astype(np.int64)
        self.ids = np.asarray(ids, dtype=np.int64)
        self.used = 0

    def take(self, sent_ids: np.ndarray, where: str) -> np.ndarray:
        """The next ``len(sent_ids)`` scores as int32 [n, 2] (hi, lo) rows; InputError if
        the file runs out or a line's sentence id differs from the n-best line's."""
        n = len(sent_ids)
        if self.used + n > len(self.fixed):
            raise InputError(f"has {len(self.fixed)} scores, fewer than the n-best lines ({where} and before)",
                             self.path)
        fixed = self.fixed[self.used:self.used + n]
        ids = self.ids[self.used:self.used + n]
        bad = np.flatnonzero((ids >= 0) & (ids != np.asarray(sent_ids, dtype=np.int64)))
        if len(bad):
            i = int(bad[0])
            raise InputError(f"sentence id {int(ids[i])} where the n-best line has {int(sent_ids[i])}",
                             self.path, self.used + i + 1)
        self.used += n
        hi = np.floor_divide(fixed, 1 << 31)
        return np.ascontiguousarray(np.stack([hi, fixed - hi * (1 << 31)], axis=1).astype(np.int32))

    def check_used(self) -> None:
        """InputError if the file has more scores than n-best lines were read."""
        if self.used != len(self.fixed):
            raise InputError(f"has {len(self.fixed)} scores for {self.used} n-best lines", self.path)


def default_threads(threads: int | None) -> int:
    """``threads``, or every core when it is None or 0 (at least 1)."""
    return max(1, int(threads or os.cpu_count() or 1))
