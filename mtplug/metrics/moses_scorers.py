"""Moses's scorer flags (``--sctype``, ``--scconfig``) in terms of the metric layer.

Moses's ``extractor``, ``mert``, ``kbmira`` and ``evaluator`` name their metric with
``--sctype`` (``mert/ScorerFactory.cpp``) and configure it with ``--scconfig
key:value,...``. This module maps both onto :class:`mtplug.metrics.layer.Metric`:

=============  =================  ==================================================
``--sctype``   metric part        statistics per hypothesis (Moses's scores.dat)
=============  =================  ==================================================
``BLEU``       ``bleu``           9: n-gram matches and totals, reference length
``PER``        ``per``            3: correct, hypothesis length, reference length
``WER``        ``wer``            2: edit distance, reference length
``CDER``       ``cder``           2: CDER distance, reference length
``TER``        ``moses-ter``      3: edits, average reference length, TER (each ×100)
``M2SCORER``   ``m2``             4: correct, proposed, gold edits, source length
``CHRF``       ``moses-chrf``     20: byte n-gram counts 1..6, 2 x length, ref length
``BLEUDOC``    ``bleudoc``        9: BLEU's, summed over a document's sentences
``A,B,...``    ``a:w1,b:w2,...``  the parts' rows side by side (InterpolatedScorer)
=============  =================  ==================================================

``TER`` is Moses's own TER (TERCpp, ``mert/TerScorer.cpp``), not sacrebleu's (mtplug's
``ter``): the two algorithms differ on some sentences. Every part is scored as Moses's
``calculateScore`` (higher is better: BLEU, 1 − PER, 1 − WER, 1 − CDER, 1 − TER) and an
interpolation is Σ wᵢ · scoreᵢ with ``--scconfig weights:w1+w2+...`` (equal weights when
absent), which is the objective of the metric layer: the Moses programs print it as Moses
does. Moses's other scorers (SEMPOS, METEOR, ...) are errors that name them. ``CHRF``
and ``BLEUDOC`` (mtplug.metrics.moses_ngram) are what Moses 34452895's code computes once
its two bugs are fixed (Moses itself writes all-zero CHRF statistics and cannot read
BLEUDOC references; docs/metrics.md); they stand alone, read ``case``, ``reflen`` and
(CHRF) ``beta``, ``smooth`` (0 only), and BLEUDOC reads XML references. ``M2SCORER`` (mtplug.metrics.m2) scores grammatical error corrections against an M2
reference file; it stands alone (no interpolation).

``--scconfig`` keys: ``case`` (true/false; false compares text with ASCII letters
lowercased, as Moses's C ``tolower``: ``ÄPFEL`` becomes ``Äpfel``), ``reflen`` and
``ngramlen`` (BLEU only) and ``weights`` (interpolations only). A key that cannot take
effect for the scorer is an error. ``M2SCORER`` reads its own keys as Moses does
(:func:`mtplug.metrics.m2.parse_scconfig`: ``beta``, ``max_unchanged_words``, ``truecase``)
and ignores every other key, as Moses (nbest-reranker passes ``ignore_whitespace_casing``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .bleu import BleuConfig
from .layer import Metric, Part
from .m2 import M2Options, parse_scconfig
from .moses_ngram import NgramOptions
from .moses_ngram import parse_scconfig as ngram_scconfig
from .scconfig import case_folds, scconfig_pairs

#: Moses --sctype -> metric part name
SCTYPE_PARTS = {"BLEU": "bleu", "PER": "per", "WER": "wer", "CDER": "cder", "TER": "moses-ter", "M2SCORER": "m2",
                "CHRF": "moses-chrf", "BLEUDOC": "bleudoc"}
#: metric part name -> Moses --sctype
PART_SCTYPES = {v: k for k, v in SCTYPE_PARTS.items()}
#: Moses's scorers mtplug does not provide (ScorerFactory::getTypes and the permutation ones)
NOT_PROVIDED = ("MERGE", "SEMPOS", "LRSCORE", "METEOR", "HWCM", "HAMMING", "KENDALL")


@dataclass(frozen=True)
class MosesScorer:
    """A Moses ``--sctype`` with its ``--scconfig``.

    sctype: as given (``BLEU``, ``TER``, ``BLEU,TER``); bleu: the BLEU settings (reference
    length, case); weights: one per part (an interpolation's ``weights:``; equal weights
    when absent); m2: M2SCORER's settings (None for the other scorers); ngram: CHRF's or
    BLEUDOC's (mtplug.metrics.moses_ngram; None for the others); notes: what
    ``--scconfig`` held that Moses ignores (to print as warnings).
    """

    sctype: str
    bleu: BleuConfig
    weights: tuple[float, ...]
    m2: M2Options | None = None
    ngram: NgramOptions | None = None
    notes: tuple[str, ...] = field(default=(), compare=False)

    @property
    def parts(self) -> list[str]:
        """The Moses scorer names of ``sctype`` (``["BLEU", "TER"]`` for ``BLEU,TER``)."""
        return self.sctype.split(",")

    @property
    def interpolated(self) -> bool:
        """Whether ``sctype`` names more than one scorer (Moses's interpolated scorer)."""
        return len(self.parts) > 1

    def metric(self) -> Metric:
        """The metric layer's Metric (unbound: widths and params come from the store or
        the scores files) whose objective is Moses's score of this scorer."""
        parts = tuple(Part(SCTYPE_PARTS[p], w, param=self.m2.beta if p == "M2SCORER" and self.m2 else
                           self.ngram.beta if p == "CHRF" and self.ngram else 1.0)
                      for p, w in zip(self.parts, self.weights))
        if not self.interpolated:
            return Metric(parts[0].name, parts, value_offset=0.0 if parts[0].higher_is_better else 1.0,
                          value_sign=1.0 if parts[0].higher_is_better else -1.0)
        return Metric(",".join(f"{p.name}:{p.weight:g}" for p in parts), parts)

    def rebind(self, metric: Metric) -> Metric:
        """``metric`` (bound to a store, e.g. read from scores files of this sctype) with
        this scorer's weights; ValueError if its parts are not this sctype's."""
        try:
            return metric.reweighted(self.metric())
        except ValueError:
            raise ValueError(f"the scores files hold {sctype_of(metric)} statistics, not --sctype "
                             f"{self.sctype}'s") from None


def check_sctype(sctype: str) -> list[str]:
    """The parts of ``sctype`` (``BLEU``, ``TER``, ``BLEU,TER``); ValueError naming the
    flag for a scorer mtplug does not provide or an empty part."""
    parts = sctype.split(",")
    for p in parts:
        if p in SCTYPE_PARTS:
            continue
        if p in NOT_PROVIDED:
            raise ValueError(f"--sctype {sctype}: Moses's {p} scorer is not provided by mtplug; "
                             f"expected {', '.join(SCTYPE_PARTS)} or a comma list of them")
        raise ValueError(f"--sctype {sctype}: unknown scorer {p!r}; expected {', '.join(SCTYPE_PARTS)} "
                         "or a comma list of them (BLEU,TER)")
    if len(set(parts)) != len(parts):
        raise ValueError(f"--sctype {sctype} names a scorer twice")
    if "M2SCORER" in parts and len(parts) > 1:
        raise ValueError(f"--sctype {sctype}: M2SCORER reads an M2 reference file and cannot be interpolated "
                         "with other scorers in mtplug")
    for alone in ("CHRF", "BLEUDOC"):
        if alone in parts and len(parts) > 1:
            raise ValueError(f"--sctype {sctype}: {alone} cannot be interpolated with other scorers in mtplug")
    return parts


def parse_moses_scorer(sctype: str | None, scconfig: str | list[str] | None) -> MosesScorer:
    """A :class:`MosesScorer` from the flags' text (``sctype`` None: BLEU). ``scconfig``:
    ``key:value`` pairs separated by commas or blanks, possibly several strings (later
    pairs override earlier ones). ValueError names what is wrong."""
    sctype = "BLEU" if sctype is None else sctype
    parts = check_sctype(sctype)
    items = [scconfig] if isinstance(scconfig, str) else list(scconfig or [])
    if parts == ["M2SCORER"]:
        options, notes = parse_scconfig(",".join(t for t in items if t))
        return MosesScorer(sctype, BleuConfig(), (1.0,), options, notes=tuple(notes))
    if parts in (["CHRF"], ["BLEUDOC"]):
        return MosesScorer(sctype, BleuConfig(), (1.0,), ngram=ngram_scconfig(sctype, ",".join(t for t in items if t)))
    has_bleu = "BLEU" in parts
    reflen, lowercase, weights = "closest", False, None
    for text in items:
        for key, value in scconfig_pairs(text):
            if key == "case":
                lowercase = case_folds(value)
            elif key in ("reflen", "ngramlen"):
                if not has_bleu:
                    raise ValueError(f"--scconfig {key}:{value} is a BLEU setting and --sctype {sctype} has no BLEU")
                if key == "reflen" and value not in ("closest", "shortest", "average"):
                    raise ValueError(f"--scconfig reflen:{value}: expected closest, shortest or average")
                if key == "ngramlen" and value != "4":
                    raise ValueError(f"--scconfig ngramlen:{value}: mtplug's BLEU uses n-grams up to 4 only")
                reflen = value if key == "reflen" else reflen
            elif key == "weights":
                weights = _weights(value, parts, sctype)
            else:
                raise ValueError(f"--scconfig: unknown key {key!r}; mtplug's Moses scorers know case, "
                                 "reflen and ngramlen (BLEU), weights (interpolations)")
    if weights is None:
        weights = tuple(1.0 / len(parts) for _ in parts) if len(parts) > 1 else (1.0,)
    return MosesScorer(sctype, BleuConfig(reflen=reflen, lowercase=lowercase, ascii_case=True), weights)


def _weights(value: str, parts: list[str], sctype: str) -> tuple[float, ...]:
    if len(parts) == 1:
        raise ValueError(f"--scconfig weights:{value} weighs the parts of an interpolation and "
                         f"--sctype {sctype} has one scorer")
    try:
        weights = tuple(float(w) for w in value.split("+"))
    except ValueError:
        raise ValueError(f"--scconfig weights:{value}: expected numbers joined by '+'") from None
    if len(weights) != len(parts):
        raise ValueError(f"--scconfig weights:{value} gives {len(weights)} weights for the {len(parts)} "
                         f"scorers of --sctype {sctype}")
    return weights


def sctype_of(metric: Metric) -> str:
    """The Moses ``--sctype`` whose statistics ``metric`` holds (``TER``, ``BLEU,TER``);
    ValueError if a part has no Moses scorer (chrF, sacrebleu's TER, external scores)."""
    missing = [p.name for p in metric.parts if p.name not in PART_SCTYPES]
    if missing:
        raise ValueError(f"{missing[0]} statistics have no Moses scores.dat form; Moses's scorers are "
                         f"{', '.join(f'{k} ({v})' for k, v in PART_SCTYPES.items())}")
    return ",".join(PART_SCTYPES[p.name] for p in metric.parts)


def metric_of_sctype(sctype: str, widths: int) -> Metric:
    """The bound Metric of statistics read from scores files of ``sctype`` (Moses's
    default equal weights; :meth:`MosesScorer.rebind` sets others); ``widths``: the
    files' statistics per hypothesis, checked against the scorer's. ValueError when
    they disagree or the sctype is unknown."""
    from .moses_scores_format import N_STATS, n_stats

    parts = check_sctype(sctype)
    need = n_stats(sctype)
    if widths != need:
        raise ValueError(f"scorer {sctype} has {need} statistics per hypothesis, the header says {widths}")
    metric = parse_moses_scorer(sctype, None).metric()
    return Metric(metric.name, tuple(Part(p.name, p.weight, N_STATS[s], p.param) for p, s in zip(metric.parts, parts)),
                  metric.constant, metric.value_offset, metric.value_sign)
