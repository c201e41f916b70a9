"""ForestCorpus: the hypergraphs of a tuning set, as the MERT line search sees them.

The counterpart of :class:`mtplug.corpus.NbestCorpus` for lattices and forests. Its
"hypotheses" for the optimizers are the edges of all forests: :meth:`scores` gives
every edge's w·f (float64 [n_edges]), and :meth:`line_sweep` turns edge intercepts and
slopes into the corpus metric along the line. For that it runs the envelope semiring
(pyx/_envelope.pyx) on every forest, scores the string of every segment of the goal's
envelope against the references, and hands those lines to the same corpus sweep as the
n-best line search (pyx/_linesearch.pyx). A sentence may have several forests (one per
decoding iteration, as cdec's dpmert unions them): their envelopes simply pool, since the
sentence's 1-best along the line is the highest line of any of them.

Edge features are kept as one CSR over all forests, with global feature ids.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._ext import _linesearch
from .._ext._envelope import goal_envelope
from .._ext._nbest_scan import NbestScanner, Vocabulary
from ..corpus import checked_weights
from ..errors import InputError
from ..formats.nbest import lower_ascii, lower_utf8
from ..hypergraph import Hypergraph
from ..metrics.bleu import N_STATS, REFLEN_CODES, BleuConfig, corpus_bleu_from_stats


@dataclass
class Envelope:
    """The goal envelope of one forest: segment i is the best derivation for γ in
    [x[i], x[i+1]); its line is b[i] + γ·m[i]; its string is words[ptr[i]:ptr[i+1]] (word ids
    of the forest); its edges are edges[edge_ptr[i]:edge_ptr[i+1]]."""

    x: np.ndarray
    m: np.ndarray
    b: np.ndarray
    ptr: np.ndarray
    words: np.ndarray
    edge_ptr: np.ndarray
    edges: np.ndarray

    def __len__(self) -> int:
        return len(self.x)


def envelope(hg: Hypergraph, edge_b: np.ndarray, edge_m: np.ndarray) -> Envelope:
    """The upper envelope at the goal of score(γ) = Σ_edges (edge_b + γ·edge_m) (float64 [E] each)."""
    return Envelope(*goal_envelope(hg.node_edges, hg.tail_indptr, hg.tails, hg.rhs_indptr, hg.rhs,
                                   np.ascontiguousarray(edge_b, dtype=np.float64),
                                   np.ascontiguousarray(edge_m, dtype=np.float64)))


def derivation_words(hg: Hypergraph, edges: np.ndarray) -> np.ndarray:
    """The string (word ids of ``hg``, int64) of the derivation whose edges are given in
    pre-order (an edge, then the derivations of its tails in tail order)."""
    done: list[list[int]] = []          # finished sub-derivations, innermost last
    stack: list[tuple[int, int]] = []   # (edge, number of finished subs when it started)
    tail_ptr, rhs_ptr, rhs = hg.tail_indptr, hg.rhs_indptr, hg.rhs
    for e in edges.tolist():
        stack.append((e, len(done)))
        # close every edge whose tails are all derived
        while stack and len(done) - stack[-1][1] == tail_ptr[stack[-1][0] + 1] - tail_ptr[stack[-1][0]]:
            e, base = stack.pop()
            subs = done[base:]
            del done[base:]
            out: list[int] = []
            for r in rhs[rhs_ptr[e]:rhs_ptr[e + 1]].tolist():
                if r >= 0:
                    out.append(r)
                else:
                    out.extend(subs[-r - 1])
            done.append(out)
    if stack or len(done) != 1:
        raise ValueError("edges do not form one derivation in pre-order")
    return np.asarray(done[0], dtype=np.int64)


class ForestCorpus:
    """Forests of ``n_sentences`` sentences with their references.

    Build with the references (:class:`mtplug.formats.references.References`; one sentence
    each) and ``bleu`` (BLEU's options), then :meth:`add` each forest (any order; several
    per sentence accumulate). ``feature_names`` fixes the order of the first features (e.g.
    those of the start weights); features first seen in forests follow in order of
    appearance. ``source``: what the forests were read from, for messages. InputError for
    ``reflen=average`` with varying reference counts.
    """

    n_dense = 0

    def __init__(self, references, bleu: BleuConfig = BleuConfig(), feature_names=(), source: str | None = None):
        from ..formats.references import encode_references

        if bleu.reflen == "average" and references.uniform_count is None:
            raise InputError("reflen=average needs the same number of references for every sentence",
                             references.source)
        self.bleu = bleu
        self.source = source
        self.n_sentences = len(references)
        self.ref_len_divisor = int(bleu.ref_len_divisor(references.uniform_count or 1))
        self._words = Vocabulary()
        refs = encode_references(references, self._words, bleu.lowercase, bleu.ascii_case)
        self._refs = refs
        lengths = np.diff(refs[1])
        #: the shortest reference length of each sentence (hope/fear's approximate BLEU uses it)
        self.shortest_ref_len = np.array([lengths[refs[0][s]:refs[0][s + 1]].min() for s in range(len(references))],
                                         dtype=np.float64)
        self._scanner = NbestScanner(self._words, Vocabulary(), Vocabulary(), np.zeros(0, np.int32),
                                     np.zeros(0, np.int32), 0, lowercase=bleu.lowercase,
                                     lower_fn=lower_ascii if bleu.ascii_case else lower_utf8,
                                     refs=refs, reflen_mode=REFLEN_CODES[bleu.reflen])
        self._index: dict[str, int] = {}
        for n in feature_names:
            self._index.setdefault(n, len(self._index))
        #: per sentence, its forests as (hypergraph, offset of its edges, word ids in the reference
        #: vocabulary, global feature id int32 of each of its feature values)
        self.forests: list[list[tuple[Hypergraph, int, np.ndarray, np.ndarray]]] = [
            [] for _ in range(self.n_sentences)]
        self._edge_offset = 0
        self._added: list[tuple[int, int]] = []    # (sentence, forest index) in the order added = edge order
        self._flat: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    # ------------------------------------------------------------------ building
    def add(self, sent_id: int, hg: Hypergraph, where: tuple[str, int | None] | None = None) -> None:
        """Add the forest of sentence ``sent_id`` (0-based); ``where`` = (file, line) it came
        from, for the message when the sentence has no reference (default: hg.source)."""
        if not 0 <= sent_id < self.n_sentences:
            path, line = where if where is not None else (hg.source or None, None)
            raise InputError(f"sentence id {sent_id} has no reference (the references have "
                             f"{self.n_sentences} sentences)", path, line)
        for n in hg.feature_names:
            self._index.setdefault(n, len(self._index))
        lower = self.bleu.lowercase
        word_ids = np.array([self._words.add((w.lower() if lower else w).encode("utf-8")) for w in hg.words],
                            dtype=np.int32)
        fids = hg.edge_feature_ids(self._index).astype(np.int32)
        self._added.append((sent_id, len(self.forests[sent_id])))
        self.forests[sent_id].append((hg, self._edge_offset, word_ids, fids))
        self._edge_offset += hg.n_edges
        self._flat = None

    def check_complete(self, where: str | None = None) -> None:
        """InputError (naming ``where`` or the corpus source) if a sentence has no forest."""
        empty = [s for s, f in enumerate(self.forests) if not f]
        if empty:
            raise InputError(f"sentence {empty[0]} has no forest ({len(empty)} of {self.n_sentences} "
                             "sentences have none)", where or self.source)

    # ------------------------------------------------------------------ sizes
    @property
    def feature_names(self) -> list[str]:
        """Feature names by id: the given ``feature_names``, then those the forests added."""
        return list(self._index)

    @property
    def n_features(self) -> int:
        """Features seen so far: the length of a weight vector."""
        return len(self._index)

    @property
    def n_hypotheses(self) -> int:
        """The number of edges over all forests (the length of :meth:`scores`)."""
        return self._edge_offset

    @property
    def n_forests(self) -> int:
        """Forests added, over all sentences."""
        return sum(len(f) for f in self.forests)

    # ------------------------------------------------------------------ scoring
    def _features(self):
        """The edge features of all forests as one CSR in edge order: (indptr int64 [E + 1],
        global ids int32, values float64). Built once after the last add; each forest's own
        arrays then become views into it, so the values are held once."""
        if self._flat is None:
            parts = [self.forests[s][k] for s, k in self._added]
            indptr = np.zeros(self._edge_offset + 1, dtype=np.int64)
            fids = np.concatenate([p[3] for p in parts]) if parts else np.zeros(0, np.int32)
            vals = np.concatenate([p[0].feat_values for p in parts]) if parts else np.zeros(0, np.float64)
            at = 0
            for (s, k), (hg, off, words, f) in zip(self._added, parts):
                n = len(f)
                indptr[off + 1:off + hg.n_edges + 1] = hg.feat_indptr[1:] + at
                hg.feat_values = vals[at:at + n]
                self.forests[s][k] = (hg, off, words, fids[at:at + n])
                at += n
            self._flat = (indptr, fids, vals)
        return self._flat

    def scores(self, weights: np.ndarray, threads: int = 1) -> np.ndarray:
        """w·f of every edge, float64 [n_edges], for ``weights`` float64 [n_features], on
        ``threads`` OpenMP threads (the same result for any number)."""
        from .._ext import _rows

        w = checked_weights(weights, self.n_features)
        indptr, fids, vals = self._features()
        out = np.empty(self._edge_offset, dtype=np.float64)
        _rows.hyp_scores(np.zeros((self._edge_offset, 0)), indptr, fids, vals, w, out, max(1, int(threads)))
        return out

    def reference_tokens(self, sent_id: int) -> tuple[np.ndarray, np.ndarray]:
        """``(ptr int64 [R + 1], tokens int32)``: reference r of the sentence is tokens[ptr[r]:ptr[r+1]]
        (word ids of the vocabulary the forests' word ids use)."""
        sent_ptr, tok_ptr, tokens = self._refs
        return np.ascontiguousarray(tok_ptr[sent_ptr[sent_id]:sent_ptr[sent_id + 1] + 1]), tokens

    def forest_features(self, sent_id: int, k: int) -> np.ndarray:
        """Global feature ids int32 [nnz] of the k-th forest of ``sent_id`` (aligned with its feat_values)."""
        return self.forests[sent_id][k][3]

    def edge_scores(self, sent_id: int, k: int, weights: np.ndarray) -> np.ndarray:
        """w·f of each edge of the k-th forest of ``sent_id``, float64 [E]."""
        from .._ext import _rows

        hg, _, _, fids = self.forests[sent_id][k]
        out = np.empty(hg.n_edges, dtype=np.float64)
        _rows.hyp_scores(np.zeros((hg.n_edges, 0)), np.ascontiguousarray(hg.feat_indptr, dtype=np.int64), fids,
                         np.ascontiguousarray(hg.feat_values, dtype=np.float64),
                         np.ascontiguousarray(weights, dtype=np.float64), out, 1)
        return out

    def derivation(self, sent_id: int, k: int, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Features float64 [n_features] and BLEU statistics int32 [9] of the derivation of the
        k-th forest of ``sent_id`` given by ``edges`` (pre-order from the goal's edge)."""
        hg, _, word_ids, fids = self.forests[sent_id][k]
        a, b = hg.feat_indptr[edges], hg.feat_indptr[edges + 1]
        idx = np.concatenate([np.arange(x, y) for x, y in zip(a, b)]) if len(edges) else np.zeros(0, np.int64)
        feats = np.bincount(fids[idx], weights=hg.feat_values[idx], minlength=self.n_features).astype(np.float64,
                                                                                              copy=False)
        words = word_ids[derivation_words(hg, edges)]
        stats = np.empty((1, N_STATS), dtype=np.int32)
        self._scanner.hypothesis_stats(sent_id, words.astype(np.int32), np.array([0, len(words)], np.int64), stats)
        return feats, stats[0]

    def kbest_corpus(self, weights: np.ndarray, k: int = 100):
        """The k best distinct strings of every forest under ``weights`` as an NbestCorpus
        whose dense columns are this corpus's features (same order), with BLEU statistics:
        what n-best algorithms (e.g. the expected-BLEU gradient) see of the forests."""
        from ..corpus import NbestCorpus
        from .kbest import kbest

        sent_ids, feats, stats = [], [], []
        for s, forests in enumerate(self.forests):
            for j, (hg, _, _, _) in enumerate(forests):
                for d in kbest(hg, self.edge_scores(s, j, weights), k, unique=True):
                    f, st = self.derivation(s, j, np.asarray(d.edges, dtype=np.int64))
                    sent_ids.append(s)
                    feats.append(f)
                    stats.append(st)
        view = NbestCorpus.from_arrays(np.asarray(sent_ids), np.asarray(feats).reshape(len(feats), self.n_features),
                                       self.feature_names, np.asarray(stats, dtype=np.int32).reshape(-1, N_STATS))
        view.ref_len_divisor = self.ref_len_divisor
        return view

    def envelopes(self, sent_id: int, intercepts: np.ndarray, slopes: np.ndarray) -> list[Envelope]:
        """The goal envelope of each forest of ``sent_id`` under edge intercepts/slopes [n_edges]."""
        return [envelope(hg, intercepts[off:off + hg.n_edges], slopes[off:off + hg.n_edges])
                for hg, off, _, _ in self.forests[sent_id]]

    def envelope_lines(self, intercepts: np.ndarray, slopes: np.ndarray, threads: int = 1):
        """All goal-envelope segments as an n-best-like set of lines.

        Returns ``(b, m, sent_offsets, stats)``: float64 [K] intercepts and slopes, int64
        [S + 1] grouping the K segments by sentence, int32 [K, 9] their BLEU statistics.
        ``threads``: sentences' envelopes computed at once (the kernel releases the GIL;
        results are gathered in sentence order, so any number gives the same result).
        """
        self.check_complete()
        b_parts, m_parts, stat_parts = [], [], []
        offsets = np.zeros(self.n_sentences + 1, dtype=np.int64)
        if threads > 1:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(max_workers=threads) as pool:
                all_envs = list(pool.map(lambda s: self.envelopes(s, intercepts, slopes), range(self.n_sentences)))
        else:
            all_envs = [self.envelopes(s, intercepts, slopes) for s in range(self.n_sentences)]
        for s, forests in enumerate(self.forests):
            words, ptrs, n = [], [np.zeros(1, np.int64)], 0
            for (_, _, word_ids, _), env in zip(forests, all_envs[s]):
                b_parts.append(env.b)
                m_parts.append(env.m)
                words.append(word_ids[env.words])
                ptrs.append(env.ptr[1:] + n)
                n += len(env.words)
            ptr = np.concatenate(ptrs)
            stats = np.empty((len(ptr) - 1, N_STATS), dtype=np.int32)
            self._scanner.hypothesis_stats(s, np.concatenate(words).astype(np.int32, copy=False), ptr, stats)
            stat_parts.append(stats)
            offsets[s + 1] = offsets[s] + len(stats)
        return np.concatenate(b_parts), np.concatenate(m_parts), offsets, np.concatenate(stat_parts)

    def line_sweep(self, intercepts: np.ndarray, slopes: np.ndarray, threads: int = 1):
        """``(xs, scores, n_lines)`` of the corpus metric along the line whose edge
        intercepts and slopes (float64 [n_edges]) are given; as mtplug.optimizers.line_search.sweep."""
        b, m, offsets, stats = self.envelope_lines(np.asarray(intercepts, np.float64),
                                                   np.asarray(slopes, np.float64), threads)
        return _linesearch.line_sweep(b, m, offsets, stats, self.metric.kernel_spec(),
                                      _linesearch.ENVELOPE_METHODS["auto"], max(1, int(threads)))

    @property
    def metric(self):
        """BLEU (mtplug.metrics.layer.Metric): forests carry BLEU statistics only, since
        other metrics do not decompose over hypergraph edges."""
        from ..metrics.layer import bleu_metric

        return bleu_metric(self.ref_len_divisor)

    def one_best_stats(self, weights: np.ndarray) -> np.ndarray:
        """BLEU statistics int32 [S, 9] of each sentence's best derivation under ``weights``
        (over all its forests; ties: the earliest forest, then the earliest edge)."""
        b, _, offsets, stats = self.envelope_lines(self.scores(weights), np.zeros(self.n_hypotheses))
        rows = np.array([offsets[s] + int(np.argmax(b[offsets[s]:offsets[s + 1]]))
                         for s in range(self.n_sentences)], dtype=np.int64)
        return stats[rows]

    def bleu_of(self, weights: np.ndarray):
        """Corpus BLEU (mtplug.metrics.bleu.BleuScore) of the best derivations under ``weights``."""
        return corpus_bleu_from_stats(self.one_best_stats(weights).sum(axis=0, dtype=np.int64),
                                      self.ref_len_divisor)

    def metric_of(self, weights: np.ndarray) -> float:
        """Corpus BLEU (0..1) of the best derivations under ``weights`` (float64 [n_features])."""
        return self.bleu_of(weights).score
