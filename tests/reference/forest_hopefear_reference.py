"""Slow, obvious reference for pyx/_forest_hopefear.pyx: the approximate-BLEU Viterbi of
Moses kbmira's hypergraph mode, written with Python lists and dicts.

Per node: try every incoming edge; its model score is the edge's plus its tails' winners'
model scores; its statistics are its tails' winners' plus the n-grams the edge makes
(spelled out below); the winner maximises model + bleu_weight * gain (later edge on ties).
"""

from __future__ import annotations

import math
from collections import Counter

ORDER = 4


def _gain(x, bg):
    t = [a + b for a, b in zip(x, bg)]
    if any(t[2 * n] <= 0 or t[2 * n + 1] <= 0 for n in range(ORDER)):
        return 0.0
    logbleu = sum(math.log(t[2 * n]) - math.log(t[2 * n + 1]) for n in range(ORDER)) / ORDER
    brevity = 1.0 - t[8] / t[1]
    if brevity < 0:
        logbleu += brevity
    g = math.exp(logbleu) * t[8]
    return 0.0 if math.isnan(g) else g


def _ref_totals(refs: list[list[int]]) -> Counter:
    total = Counter()
    for ref in refs:
        for n in range(1, ORDER + 1):
            for i in range(len(ref) - n + 1):
                total[tuple(ref[i:i + n])] += 1
    return total


def _edge_ngrams(hg, e, word_map, state) -> Counter:
    """The n-grams edge e makes, as a token stream with 'new n-gram lengths' per token."""
    stream = []   # (word, smallest length of an n-gram ending here that counts, or None = window reset)
    tails = hg.edge_tails(e)
    for r in hg.edge_rhs(e):
        r = int(r)
        if r >= 0:
            stream.append((word_map[r], 1))
            continue
        left, right = state[int(tails[-r - 1])][:2]
        if not left:
            continue
        for c, w in enumerate(left):
            stream.append((w, c + 2))          # must reach back before the tail
        if len(left) == ORDER - 1:
            stream.append((None, None))        # jump to the tail's right end
            for w in right:
                stream.append((w, ORDER + 1))  # inside the tail: nothing new
    counts = Counter()
    window: list[int] = []
    for w, first in stream:
        if w is None:
            window = []
            continue
        window = (window + [w])[-ORDER:]
        for n in range(first, len(window) + 1):
            counts[tuple(window[-n:])] += 1
    return counts


def _contexts(hg, e, word_map, state):
    tails = hg.edge_tails(e)
    seq_left, seq_right = [], []
    for r in hg.edge_rhs(e):
        r = int(r)
        seq_left.extend([word_map[r]] if r >= 0 else state[int(tails[-r - 1])][0])
        seq_right.extend([word_map[r]] if r >= 0 else state[int(tails[-r - 1])][1])
    return seq_left[:ORDER - 1], seq_right[-(ORDER - 1):] if seq_right else []


def bleu_viterbi(hg, word_map, edge_scores, bleu_weight, node_source_len, refs, ref_len, background):
    """(edges in pre-order, goal total) of the winning derivation; arguments as the kernel's
    but with refs as a list of token-id lists."""
    totals = _ref_totals(refs)
    state = []          # per node: (left context, right context, stats, model score, winning edge)
    total_src = float(node_source_len[-1])
    for v in range(hg.n_nodes):
        best = None
        for e in hg.in_edges(v):
            tails = [int(t) for t in hg.edge_tails(e)]
            model = float(edge_scores[e]) + sum(state[t][3] for t in tails)
            stats = [0.0] * 9
            total = model
            if bleu_weight != 0:
                for gram, c in _edge_ngrams(hg, e, word_map, state).items():
                    n = len(gram)
                    stats[2 * n - 1] += c
                    stats[2 * n - 2] += min(c, totals.get(gram, 0))
                for t in tails:
                    for k in range(8):
                        stats[k] += state[t][2][k]
                stats[8] = node_source_len[v] / total_src * ref_len
                total = model + bleu_weight * _gain(stats, background)
            if best is None or total >= best[0]:
                best = (total, model, stats, e)
        total, model, stats, e = best
        left, right = _contexts(hg, e, word_map, state)
        state.append((left, right, stats, model, e))
    out, stack = [], [hg.n_nodes - 1]
    while stack:
        v = stack.pop()
        e = state[v][4]
        out.append(e)
        stack.extend(int(t) for t in reversed(hg.edge_tails(e)))
    return out, total
