"""Brute force over small hypergraphs: every derivation of the goal, spelled out.

The oracle for forest algorithms (k-best, envelopes, hope/fear). A derivation is a tree:
the goal's edge, and for each of its tails, independently, a derivation of that tail
node (a node occurring twice in the tree may be derived differently each time).
Exponential: for hypergraphs with a few thousand derivations at most.
"""

from __future__ import annotations

from itertools import product

import numpy as np

from mtplug.hypergraph import Hypergraph

Derivation = tuple[tuple[int, ...], list[str], dict[str, float]]


def _trees(hg: Hypergraph, max_derivations: int) -> list[list[tuple[int, ...]]]:
    """For every node, its derivations as edge tuples in preorder (an edge, then the
    derivations of its tails in tail order), in edge order then tail-combination order."""
    trees: list[list[tuple[int, ...]]] = []
    for v in range(hg.n_nodes):
        mine = []
        for e in hg.in_edges(v):
            for subs in product(*(trees[int(t)] for t in hg.edge_tails(e))):
                mine.append((e,) + tuple(x for sub in subs for x in sub))
                if len(mine) > max_derivations:
                    raise ValueError(f"node {v} has more than {max_derivations} derivations")
        trees.append(mine)
    return trees


def derivation_words(hg: Hypergraph, edges: tuple[int, ...]) -> list[str]:
    """The target string of the derivation given by ``edges`` in preorder."""
    words, _ = _yield(hg, edges, 0)
    return words


def _yield(hg: Hypergraph, edges: tuple[int, ...], pos: int) -> tuple[list[str], int]:
    # returns the words of the subtree starting at edges[pos] and the position after it
    e = edges[pos]
    pos += 1
    sub = []
    for _ in hg.edge_tails(e):
        w, pos = _yield(hg, edges, pos)
        sub.append(w)
    out: list[str] = []
    for r in hg.edge_rhs(e):
        r = int(r)
        out.extend([hg.words[r]] if r >= 0 else sub[-r - 1])
    return out, pos


def derivation_features(hg: Hypergraph, edges: tuple[int, ...]) -> dict[str, float]:
    """Features summed over ``edges``, in the order given (every feature that occurs)."""
    total: dict[str, float] = {}
    for e in edges:
        for name, value in hg.edge_features(e).items():
            total[name] = total.get(name, 0.0) + value
    return total


def enumerate_derivations(hg: Hypergraph, max_derivations: int = 100_000) -> list[Derivation]:
    """Every derivation of the goal: ``(edges in preorder, target words, features)``.

    Edges in preorder: the goal's edge, then the derivation of its first tail, then of
    its second, ...; an edge used twice appears twice. Features: name -> value summed
    over those edges. Listed in edge order, then tail-combination order. Raises
    ValueError if some node has more than ``max_derivations`` derivations.
    """
    return [(edges, derivation_words(hg, edges), derivation_features(hg, edges))
            for edges in _trees(hg, max_derivations)[hg.goal]]


def dot(features: dict[str, float], weights: dict[str, float]) -> float:
    """Σ weights[name] · value (a missing weight is 0)."""
    return sum(weights.get(name, 0.0) * value for name, value in features.items())


def kbest_order(hg: Hypergraph, edge_scores: np.ndarray,
                max_derivations: int = 100_000) -> list[tuple[float, tuple[int, ...]]]:
    """Every derivation of the goal as ``(score, edges in preorder)`` in the order that
    mtplug.forests.kbest documents, with scores computed as it does (the edge's score,
    plus the tails' scores in tail order), so both agree bit for bit.

    Per node: score descending, then edge id, then the tails' ranks lexicographically
    (a tail's rank: its position in that node's own list).
    """
    lists: list[list[tuple[float, tuple[int, ...]]]] = []
    for v in range(hg.n_nodes):
        keyed = []
        for e in hg.in_edges(v):
            tails = [int(t) for t in hg.edge_tails(e)]
            for ranks in product(*(range(len(lists[t])) for t in tails)):
                s = float(edge_scores[e])
                for t, r in zip(tails, ranks):
                    s += lists[t][r][0]
                edges = (e,) + tuple(x for t, r in zip(tails, ranks) for x in lists[t][r][1])
                keyed.append(((-s, e, ranks), (s, edges)))
                if len(keyed) > max_derivations:
                    raise ValueError(f"node {v} has more than {max_derivations} derivations")
        keyed.sort(key=lambda x: x[0])
        lists.append([x[1] for x in keyed])
    return lists[hg.goal]
