"""Hypergraph: one sentence's search space — the one structure every lattice/forest reader
produces and every forest algorithm reads (nothing downstream knows the source format).

Layout (``N`` nodes, ``E`` edges)::

    n_nodes                              nodes 0 .. N-1 in topological order; the goal is N-1
    node_edges     int64 [N + 1]         the incoming edges of node v are
                                           node_edges[v]:node_edges[v+1] (edges sorted by head)
    edge_head      int32 [E]             head node of each edge (non-decreasing)
    tail_indptr    int64 [E + 1]         tail nodes of edge e: tails[tail_indptr[e]:tail_indptr[e+1]],
    tails          int32                   each smaller than the head
    rhs_indptr     int64 [E + 1]         target side of edge e: rhs[rhs_indptr[e]:rhs_indptr[e+1]];
    rhs            int32                   a value >= 0 is a word (index into ``words``), a value
                                           -(k+1) is the yield of the edge's k-th tail
    feat_indptr    int64 [E + 1]         features of edge e (CSR): ids into ``feature_names``,
    feat_ids       int32                   unique within an edge
    feat_values    float64                 finite
    words          list[str]             the target words
    feature_names  list[str]
    node_source_len int32 [N] or None    source words each node covers, when the format says
                                           (Moses hypergraphs, cdec spans); hope/fear BLEU uses it

A derivation is a tree: an incoming edge of the goal and, for each of its tails, a
derivation of that tail (a node met twice may be derived differently each time, as in
Huang & Chiang 2005 and cdec); its features are the sums over its edges and its string is
the goal's yield. An edge with no tails is an
axiom (a rule with only terminals; a lattice's start). A word lattice is a hypergraph whose
edges have at most one tail, with right-hand side ``[-1, word]`` (``[-1]`` for epsilon).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .errors import InputError


@dataclass
class Hypergraph:
    """One sentence's search space in the arrays of the module docstring's layout.

    Readers make it with :class:`HypergraphBuilder`, which sorts it and runs :meth:`check`;
    ``source`` names the file it came from, for messages.
    """

    n_nodes: int
    node_edges: np.ndarray
    edge_head: np.ndarray
    tail_indptr: np.ndarray
    tails: np.ndarray
    rhs_indptr: np.ndarray
    rhs: np.ndarray
    feat_indptr: np.ndarray
    feat_ids: np.ndarray
    feat_values: np.ndarray
    words: list[str]
    feature_names: list[str]
    source: str = ""  # where it was read from, for messages
    node_source_len: np.ndarray | None = None

    @property
    def n_edges(self) -> int:
        """Edges E (hyperedges: rules or lattice arcs)."""
        return int(self.edge_head.shape[0])

    @property
    def goal(self) -> int:
        """The goal node, N - 1 (the last in topological order); derivations end there."""
        return self.n_nodes - 1

    @property
    def is_lattice(self) -> bool:
        """Every edge has at most one tail."""
        return bool(np.all(np.diff(self.tail_indptr) <= 1))

    def edge_tails(self, e: int) -> np.ndarray:
        """Tail nodes of edge ``e`` (int32 view, rule order; empty for an axiom)."""
        return self.tails[self.tail_indptr[e]:self.tail_indptr[e + 1]]

    def edge_rhs(self, e: int) -> np.ndarray:
        """Target side of edge ``e`` (int32 view): word indices >= 0, -(k+1) for tail k's yield."""
        return self.rhs[self.rhs_indptr[e]:self.rhs_indptr[e + 1]]

    def edge_features(self, e: int) -> dict[str, float]:
        """Features of edge ``e`` as ``{name: value}``."""
        a, b = self.feat_indptr[e], self.feat_indptr[e + 1]
        return {self.feature_names[int(i)]: float(v) for i, v in zip(self.feat_ids[a:b], self.feat_values[a:b])}

    def in_edges(self, v: int) -> range:
        """The incoming edges of node ``v`` (edge ids, consecutive since edges are sorted by head)."""
        return range(int(self.node_edges[v]), int(self.node_edges[v + 1]))

    def edge_feature_ids(self, index: dict[str, int]) -> np.ndarray:
        """``feat_ids`` mapped through ``index`` (feature name -> global id); int32 [nnz].

        A name missing from ``index`` maps to -1 (a feature with no weight)."""
        local = np.array([index.get(n, -1) for n in self.feature_names], dtype=np.int32)
        return local[self.feat_ids] if len(local) else np.zeros(0, np.int32)

    def check(self) -> None:
        """Raise InputError (naming ``source``) unless the arrays satisfy the layout above."""
        n, E = self.n_nodes, self.n_edges
        bad = None
        if n < 1:
            bad = "has no nodes"
        elif self.node_edges.shape != (n + 1,) or self.node_edges[0] != 0 or self.node_edges[-1] != E:
            bad = "node edge offsets do not cover the edges"
        elif np.any(np.diff(self.node_edges) < 0) or np.any(
                np.repeat(np.arange(n, dtype=np.int32), np.diff(self.node_edges)) != self.edge_head):
            bad = "edges are not sorted by head node"
        elif len(self.tail_indptr) != E + 1 or len(self.rhs_indptr) != E + 1 or len(self.feat_indptr) != E + 1:
            bad = "edge arrays have different lengths"
        elif len(self.tails) and (np.any(self.tails < 0) or np.any(
                self.tails >= np.repeat(self.edge_head, np.diff(self.tail_indptr)))):
            bad = "a tail node does not come before its head (nodes must be in topological order)"
        elif np.any(np.diff(self.node_edges) == 0):
            v = int(np.flatnonzero(np.diff(self.node_edges) == 0)[0])
            bad = f"node {v} has no incoming edge"
        elif len(self.rhs) and (np.any(self.rhs >= len(self.words))
                                or np.any(-self.rhs - 1 >= np.repeat(np.diff(self.tail_indptr), np.diff(self.rhs_indptr)))):
            bad = "a target word or tail slot is out of range"
        elif len(self.feat_ids) and (np.any(self.feat_ids < 0) or np.any(self.feat_ids >= len(self.feature_names))):
            bad = "a feature id is out of range"
        elif not np.all(np.isfinite(self.feat_values)):
            bad = "a feature value is NaN or infinite"
        elif self.node_source_len is not None and (self.node_source_len.shape != (n,)
                                                   or np.any(self.node_source_len < 0)):
            bad = "source lengths do not match the nodes"
        if bad is not None:
            raise InputError(f"hypergraph {bad}", self.source or None)


@dataclass
class _Edge:
    head: int
    tails: tuple
    rhs: tuple
    feats: tuple


@dataclass
class HypergraphBuilder:
    """Collect nodes and edges in any order; :meth:`build` sorts and validates.

    Readers call :meth:`node` for each node (any hashable key), :meth:`edge` for each
    edge (tails as node keys; ``rhs`` as words (str) and tail slots (int k = k-th tail);
    features as a name -> value mapping or (name, value) pairs) and :meth:`build` with
    the goal's key.
    """

    source: str = ""
    _keys: dict = field(default_factory=dict)
    _edges: list = field(default_factory=list)
    _words: dict = field(default_factory=dict)
    _feats: dict = field(default_factory=dict)
    _source_len: dict = field(default_factory=dict)

    def source_covered(self, key, n_words: int, line: int | None = None) -> None:
        """Record that node ``key`` covers ``n_words`` source words (optional; all or none)."""
        if not 0 <= int(n_words) <= np.iinfo(np.int32).max:
            raise InputError(f"source length {n_words} is out of range", self.source or None, line)
        self._source_len[self.node(key)] = int(n_words)

    def node(self, key) -> int:
        """Declare node ``key`` (idempotent); returns its provisional id."""
        i = self._keys.get(key)
        if i is None:
            i = self._keys[key] = len(self._keys)
        return i

    def word(self, w: str) -> int:
        """The index of target word ``w`` in the hypergraph's ``words`` (added at first use)."""
        i = self._words.get(w)
        if i is None:
            i = self._words[w] = len(self._words)
        return i

    def feature(self, name: str) -> int:
        """The index of feature ``name`` in the hypergraph's ``feature_names`` (added at first use)."""
        i = self._feats.get(name)
        if i is None:
            i = self._feats[name] = len(self._feats)
        return i

    def edge(self, head, tails, rhs, features=(), line: int | None = None) -> None:
        """Add an edge. ``rhs`` items: str = a target word, int k = the yield of tails[k]."""
        h = self.node(head)
        t = tuple(self.node(x) for x in tails)
        code = []
        for r in rhs:
            if isinstance(r, str):
                code.append(self.word(r))
            else:
                if not 0 <= r < len(t):
                    raise InputError(f"target side refers to tail {r + 1} of an edge with {len(t)} tails",
                                     self.source or None, line)
                code.append(-int(r) - 1)
        items = features.items() if hasattr(features, "items") else features
        f: dict[int, float] = {}
        for name, value in items:
            value = float(value)
            if not np.isfinite(value):
                raise InputError(f"feature {name!r} has a non-finite value {value!r}", self.source or None, line)
            fid = self.feature(name)
            f[fid] = f.get(fid, 0.0) + value  # a repeated name adds up, as feature vectors do
        self._edges.append(_Edge(h, t, tuple(code), tuple(sorted(f.items()))))

    def build(self, goal) -> Hypergraph:
        """The hypergraph of everything the goal can reach, nodes in topological order.

        Raises InputError on a cycle, an unknown goal, or a reachable node without edges.
        """
        if goal not in self._keys:
            raise InputError(f"the goal node {goal!r} does not occur", self.source or None)
        n = len(self._keys)
        incoming: list[list[int]] = [[] for _ in range(n)]
        for i, e in enumerate(self._edges):
            incoming[e.head].append(i)
        g = self._keys[goal]
        # iterative DFS post-order from the goal = a topological order of its ancestors
        order, state = [], [0] * n  # 0 new, 1 on stack, 2 done
        stack = [(g, 0)]
        state[g] = 1
        tails_of = [sorted({t for ei in incoming[v] for t in self._edges[ei].tails}) for v in range(n)]
        while stack:
            v, k = stack[-1]
            if k < len(tails_of[v]):
                stack[-1] = (v, k + 1)
                t = tails_of[v][k]
                if state[t] == 1:
                    raise InputError("the hypergraph has a cycle", self.source or None)
                if state[t] == 0:
                    state[t] = 1
                    stack.append((t, 0))
            else:
                stack.pop()
                state[v] = 2
                order.append(v)
        keys = list(self._keys)
        new_id = np.full(n, -1, dtype=np.int64)
        new_id[order] = np.arange(len(order))
        for v in order:
            if not incoming[v]:
                raise InputError(f"node {keys[v]!r} has no incoming edge", self.source or None)
        edges = [i for v in order for i in incoming[v]]
        heads = np.array([new_id[self._edges[i].head] for i in edges], dtype=np.int32)
        counts = np.bincount(heads, minlength=len(order)) if len(edges) else np.zeros(len(order), np.int64)
        node_edges = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)

        def csr(parts, dtype):
            ptr = np.zeros(len(parts) + 1, dtype=np.int64)
            ptr[1:] = np.cumsum([len(p) for p in parts])
            flat = np.fromiter((x for p in parts for x in p), dtype=dtype, count=int(ptr[-1]))
            return ptr, flat

        tail_ptr, tails = csr([[new_id[t] for t in self._edges[i].tails] for i in edges], np.int32)
        rhs_ptr, rhs = csr([self._edges[i].rhs for i in edges], np.int32)
        feat_ptr, fids = csr([[f for f, _ in self._edges[i].feats] for i in edges], np.int32)
        _, fvals = csr([[v for _, v in self._edges[i].feats] for i in edges], np.float64)
        src_len = None
        if self._source_len:
            missing = [keys[v] for v in order if v not in self._source_len]
            if missing:
                raise InputError(f"node {missing[0]!r} has no source length (other nodes have one)",
                                 self.source or None)
            src_len = np.array([self._source_len[v] for v in order], dtype=np.int32)
        hg = Hypergraph(len(order), node_edges, heads, tail_ptr, tails, rhs_ptr, rhs, feat_ptr, fids, fvals,
                        list(self._words), list(self._feats), self.source, src_len)
        hg.check()
        return hg
