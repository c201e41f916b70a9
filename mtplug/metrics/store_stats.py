"""Statistics rows of a metric for hypotheses read from n-best files.

The n-best scanner collects BLEU statistics as it reads (pyx/_nbest_scan.pyx); every
other metric is computed afterwards from the hypotheses' word ids by its own compiled
kernel (chrF: pyx/_chrf.pyx, TER: pyx/_ter.pyx, WER/PER/CDER: pyx/_edit_rates.pyx), and
external scores come from their file. :class:`StatsBuilder` binds a parsed
:class:`~mtplug.metrics.layer.Metric` to a store's references (widths and parameters)
and turns the scanner's arrays into the metric's rows, part after part.
"""

from __future__ import annotations

import numpy as np

from .._ext._nbest_scan import decode_hypotheses
from .bleu import N_STATS as BLEU_N_STATS
from .bleu import BleuConfig
from .layer import EXT_UNITS, ExternalScores, Metric, Part, default_threads
from .m2 import M2Scorer
from .moses_ngram import NgramScorer

#: parts computed by Moses's scorer classes (mtplug.metrics.moses_error_rates)
MOSES_PARTS = ("wer", "per", "cder", "moses-ter")


def part_scorer(name: str, lowercase: bool):
    """The statistics collector of a text metric part (an object with ``n_stats`` and
    ``stats(hyp_ptr, hyp_words, run_start, run_sid, references, words, threads=)``).

    lowercase: the store's references were lowercased (BLEU ``lowercase``); then every
    metric compares lowercased text.
    """
    if name in ("chrf", "chrf++"):
        from .chrf import VARIANTS, Chrf

        return Chrf(word_order=VARIANTS[name], lowercase=lowercase)
    if name == "ter":
        from .ter import Ter

        return Ter(case_sensitive=False)
    if name in MOSES_PARTS:
        from . import moses_error_rates as mer

        scorers: dict[str, type[mer._MosesErrorRate]] = {"wer": mer.Wer, "per": mer.Per, "cder": mer.Cder,
                                                         "moses-ter": mer.MosesTer}
        return scorers[name](lowercase=lowercase)
    raise ValueError(f"no statistics collector for {name!r}")


class StatsBuilder:
    """A metric bound to a store's references: its statistics rows for scanned arrays.

    metric: from :func:`mtplug.metrics.layer.parse_metric`; references: the store's
    encoded references (sent_ptr, word_ptr, word ids); words: the store's Vocabulary;
    bleu: the store's BleuConfig; ref_len_divisor: BLEU's; m2: the
    :class:`mtplug.metrics.m2.M2Scorer` of an ``m2`` part (it reads the hypotheses' text,
    not the store's references); text_refs: the References read (their texts, or BLEUDOC's
    documents) for ``moses-chrf`` and ``bleudoc`` parts (mtplug.metrics.moses_ngram).
    ``metric`` is the bound metric (every part with its width
    and parameter).
    """

    def __init__(self, metric: Metric, references, words, bleu: BleuConfig, ref_len_divisor: int, m2=None,
                 text_refs=None):
        self.references = references
        self.words = words
        self.bleu = bleu
        self._scorers: dict[int, object] = {}
        self._external: dict[int, ExternalScores] = {}
        parts = []
        for i, p in enumerate(metric.parts):
            if p.name == "bleu":
                parts.append(Part("bleu", p.weight, BLEU_N_STATS, float(ref_len_divisor)))
            elif p.name == "ext":
                if p.source is None:  # parse_metric refuses it too; a Metric built by hand may not
                    raise ValueError("ext needs a file: ext:FILE")
                self._external[i] = ExternalScores(p.source)
                n_sent = len(references[0]) - 1 if references is not None else 1
                parts.append(Part("ext", p.weight, 2, float(n_sent) * EXT_UNITS, p.source))
            elif p.name == "m2":
                if m2 is None:
                    raise ValueError("the m2 metric needs an M2 reference file (mtplug.metrics.m2.m2_references)")
                self._scorers[i] = m2
                parts.append(Part("m2", p.weight, int(m2.n_stats), float(m2.options.beta)))
            elif p.name in ("moses-chrf", "bleudoc"):
                if text_refs is None:
                    raise ValueError(f"the {p.name} metric needs its references' text (mtplug.metrics.moses_ngram)")
                from .moses_ngram import NgramOptions, ngram_scorer

                self._scorers[i] = scorer = ngram_scorer(p.name, text_refs,
                                                         NgramOptions(reflen=bleu.reflen, lowercase=bleu.lowercase))
                param = float(scorer.options.beta) if p.name == "moses-chrf" else 1.0
                parts.append(Part(p.name, p.weight, int(scorer.n_stats), param))
            elif p.name == "linear":
                raise ValueError("the linear metric exists only for synthetic stores (mtplug.synthetic)")
            else:
                scorer = part_scorer(p.name, bleu.lowercase)
                self._scorers[i] = scorer
                param = 1.0
                if p.name in ("chrf", "chrf++"):
                    param = float(scorer.beta)
                elif p.name == "ter":
                    param = float(scorer.ref_scale(references))
                parts.append(Part(p.name, p.weight, int(scorer.n_stats), param))
        self.metric = Metric(metric.name, tuple(parts), metric.constant, metric.value_offset, metric.value_sign)
        self.needs_text = bool(self._scorers)

    def rows(self, arrays: dict, where: str, threads: int | None = None) -> np.ndarray:
        """The metric's statistics int32 [n, n_stats] of scanned rows (``arrays`` as
        :func:`mtplug.formats.nbest.scan_nbest` returns them, BLEU statistics included);
        ``where``: the file they came from, for messages."""
        sids = np.asarray(arrays["sent_ids"], dtype=np.int64)
        n = len(sids)
        if self.metric.is_bleu:
            return arrays["stats"]
        out = np.empty((n, self.metric.n_stats), dtype=np.int32)
        text = None
        if self.needs_text and n:
            text = decode_hypotheses(arrays["hyp_bytes"], arrays["hyp_indptr"], 0, n)
            starts = np.flatnonzero(np.r_[True, sids[1:] != sids[:-1]])
            run_start = np.r_[starts, n].astype(np.int64)
            run_sid = sids[starts]
            word_list = self.words.words()
            # Moses's scorers fold ASCII letters only; a store lowercased by Unicode rules
            # (its references already are) gives them its hypotheses' words folded likewise
            unicode_words = [w.lower() for w in word_list] if self.bleu.lowercase and not self.bleu.ascii_case \
                else word_list
        col = 0
        for i, p in enumerate(self.metric.parts):
            block = out[:, col:col + p.width]
            if p.name == "bleu":
                block[:] = arrays["stats"]
            elif p.name == "ext":
                block[:] = self._external[i].take(sids, where)
            elif p.name == "m2" and text is not None:
                # Moses's M2SCORER reads the hypothesis text split on spaces; the store's
                # words joined by one space are that text with its runs of blanks
                # compressed and its ends trimmed, which M2SCORER does anyway
                ptr, ids = text
                hyps = [" ".join(word_list[k] for k in ids[ptr[r]:ptr[r + 1]]) for r in range(n)]
                m2 = self._scorers[i]
                assert isinstance(m2, M2Scorer)
                block[:] = m2.text_stats(hyps, sids, threads=default_threads(threads))
            elif p.name in ("moses-chrf", "bleudoc") and text is not None:
                # Moses's CHRF drops spaces and BLEUDOC splits on ' \n ' between words: the
                # store's words joined by one space (mtplug.metrics.moses_ngram)
                ptr, ids = text
                hyps = [" ".join(word_list[k] for k in ids[ptr[r]:ptr[r + 1]]) for r in range(n)]
                ngram = self._scorers[i]
                assert isinstance(ngram, NgramScorer)
                block[:] = ngram.text_stats(hyps, sids, plain=bool(arrays.get("plain", False)))
            elif n:
                words = unicode_words if p.name in MOSES_PARTS else word_list
                block[:] = self._part_stats(self._scorers[i], p, text, run_start, run_sid, words, threads)
            col += p.width
        return out

    def _part_stats(self, scorer, part: Part, text, run_start, run_sid, word_list, threads):
        ptr, ids = text
        return scorer.stats(ptr, ids, run_start, run_sid, self.references, word_list,
                            threads=default_threads(threads))

    def finish(self) -> None:
        """InputError if an external score file has scores left over."""
        for ext in self._external.values():
            ext.check_used()

