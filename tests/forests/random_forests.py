"""Small random hypergraphs and lattices for the forest tests (seeded, so hypothesis can drive them)."""

from __future__ import annotations

import random

from mtplug.hypergraph import Hypergraph, HypergraphBuilder

WORDS = "a b c d"
FEATURES = ("f", "g", "h")


def random_hypergraph(rng: random.Random, n_nodes: int = 5, max_tails: int = 2, max_in: int = 3,
                      integer_features: bool = True, max_derivations: int = 20000) -> Hypergraph:
    """A random acyclic hypergraph: node v's 1..max_in edges have 0..max_tails tails among
    nodes < v, target sides mixing words and every tail slot (in random order), and 1-3
    features with small values (integers make ties likely, which the tests want). An edge
    whose tails would give its node more than ``max_derivations`` derivations gets no
    tails, so that brute-force enumeration stays possible."""
    b = HypergraphBuilder("random")
    words = WORDS.split()
    count: list[int] = []   # derivations per node
    for v in range(n_nodes):
        count.append(0)
        for _ in range(rng.randint(1, max_in)):
            nt = 0 if v == 0 else rng.randint(0, min(max_tails, v))
            tails = [rng.randrange(v) for _ in range(nt)]
            ways = 1
            for t in tails:
                ways *= count[t]
            if count[v] + ways > max_derivations:
                nt, tails, ways = 0, [], 1
            count[v] += ways
            rhs: list = [rng.choice(words) for _ in range(rng.randint(0, 2))] + list(range(nt))
            rng.shuffle(rhs)
            feats = {name: (rng.randint(-3, 3) if integer_features else rng.uniform(-3, 3))
                     for name in rng.sample(FEATURES, rng.randint(1, len(FEATURES)))}
            b.edge(v, tails, rhs, feats)
    return b.build(n_nodes - 1)


def random_lattice(rng: random.Random, n_nodes: int = 5, integer_features: bool = True) -> Hypergraph:
    """A random word lattice: arcs i -> j (i < j) with one word each, an axiom at node 0."""
    value = (lambda: rng.randint(-3, 3)) if integer_features else (lambda: rng.uniform(-3, 3))
    b = HypergraphBuilder("lattice")
    b.edge(0, [], [], {})
    words = WORDS.split()
    for j in range(1, n_nodes):
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(j)
            b.edge(j, [i], [0, rng.choice(words)], {"f": value(), "g": value()})
    return b.build(n_nodes - 1)
