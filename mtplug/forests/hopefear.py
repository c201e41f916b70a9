"""Hope, fear and model derivations of a sentence's forests (Moses kbmira's hypergraph mode).

The compiled Viterbi (pyx/_forest_hopefear.pyx) picks, per forest, the derivation that
maximises model score + bleu_weight × approximate background BLEU gain; this module runs it
for hope (+1), fear (−1) and the model's best (0), picks the best forest of the sentence
for each (ties: the earlier forest), and returns their features and true BLEU statistics
(the string scored against the references as any hypothesis is).

Where a forest does not say how many source words its nodes cover (cdec forests, PLF
lattices), every node's reference length is the sentence's whole (shortest) reference
length; Moses hypergraphs carry the coverage and scale it as Moses does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._ext._forest_hopefear import bleu_viterbi


@dataclass
class Choice:
    """One chosen derivation: features float64 [n_features], BLEU statistics int32 [9]."""

    features: np.ndarray
    stats: np.ndarray


def hope_fear_model(corpus, sent_id: int, weights: np.ndarray, background: np.ndarray) -> tuple[Choice, Choice, Choice]:
    """Hope, fear and model-best derivations of sentence ``sent_id`` of a ForestCorpus under
    ``weights`` float64 [n_features] and the BLEU ``background`` float64 [9]."""
    ref_ptr, ref_tokens = corpus.reference_tokens(sent_id)
    ref_len = float(corpus.shortest_ref_len[sent_id])
    bg = np.ascontiguousarray(background, dtype=np.float64)
    best: list[tuple[float, int, np.ndarray] | None] = [None, None, None]
    for k, (hg, _, word_ids, _) in enumerate(corpus.forests[sent_id]):
        scores = corpus.edge_scores(sent_id, k, weights)
        src = hg.node_source_len if hg.node_source_len is not None else np.ones(hg.n_nodes, np.int32)
        for i, bleu_weight in enumerate((1.0, -1.0, 0.0)):
            edges, total = bleu_viterbi(hg.node_edges, hg.tail_indptr, hg.tails, hg.rhs_indptr, hg.rhs, word_ids,
                                        scores, bleu_weight, src, ref_ptr, ref_tokens, ref_len, bg)
            current = best[i]
            if current is None or total > current[0]:
                best[i] = (total, k, edges)
    chosen = []
    for entry in best:
        if entry is None:
            raise ValueError(f"sentence {sent_id} has no forest")
        chosen.append(Choice(*corpus.derivation(sent_id, entry[1], entry[2])))
    return chosen[0], chosen[1], chosen[2]
