"""Moses's M2 scorer (``extractor --sctype M2SCORER``) the slow, obvious way, on strings.

Written from reading Moses 34452895's mert/M2.h, mert/M2.cpp and mert/M2Scorer.cpp (a port
of Dahlmeier & Ng's MaxMatch scorer, 2012), in our own structure and not from the kernel
(pyx/_m2.pyx): the edge set is a dict keyed by its two end points and walked in sorted
order, every round of the closure tries every pair of edges, and Bellman-Ford runs its
|V| - 1 full passes. Floats are 32-bit (NumPy float32 scalars), as Moses's ``float``.

What Moses does for one hypothesis of sentence s (source words x, hypothesis words y):

1. Tokens: the hypothesis text is trimmed of ``' '``, ``'\\r'``, ``'\\n'`` at both ends and
   split on ``' '`` with runs of spaces compressed (boost::split with token_compress_on):
   an empty hypothesis is one empty word, leading/trailing spaces of a source give empty
   words. Without ``truecase`` a word is compared in ASCII lower case with its spaces removed
   (``Annot::transform``); with it, as written.
2. Levenshtein table d between x (rows i) and y (columns j): insertion and deletion
   cost 1, substitution 2, a match 0; every move that reaches a cell with its optimal value
   is kept. If d(n, m) > n the statistics are ``0, d(n, m), 0, n`` (no gold edits counted).
3. The lattice: the cells reachable backwards from (n, m) along kept moves, one edge per
   move (cost 1; a match "unchanged", every other move "changed"; its text the hypothesis
   word it passes over, nothing for a deletion). Then rounds: every pair of edges
   (a -> w, w -> b) whose concatenation changes something and keeps at most
   ``max_unchanged_words`` words unchanged adds an edge a -> b unless one exists; the first
   such pair in sorted order (a, w, then b) gives its cost (the sum) and text (the texts
   joined by a space, empty ones left out). Rounds go on while they add an edge.
4. Per annotator k: every changed edge costs 0.001 more, and one that equals a gold edit of
   annotator k (same source start and end, same text after ``transform``) costs
   -(max_unchanged_words + 1) * |E| instead. Bellman-Ford from (0, 0) (edges in sorted
   order, a strictly shorter path replaces); the path to (n, m) is the hypothesis's edit
   sequence: its changed edges are proposed, those equal to a gold edit of k are correct.
5. Among the annotators ("users"), the one with the highest F_beta (float32, M2::FScore) of
   this hypothesis's own counts wins, the lowest id on ties. Statistics:
   ``correct, proposed, gold, n`` (gold: annotator k's edits, duplicates counted once).

The reference file: ``S`` lines start a sentence; ``A i j|||type|||text|||...|||k``
lines add an edit of annotator k unless the type is ``noop`` (which only names k). Quirk
kept: the set of annotators is never cleared between sentences, so sentence s is scored
against every annotator named in sentences 0..s (0 when none was).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

F = np.float32


# ----------------------------------------------------------------------------- text
def split_spaces(text: str) -> list[str]:
    """boost::split(..., is_any_of(" "), token_compress_on): a run of spaces is one
    separator; a leading or trailing run still gives an empty piece ("" gives [""])."""
    return re.split(" +", text)


def hypothesis_words(text: str) -> list[str]:
    """M2Scorer::prepareStats: trimStr (" \\r\\n") then split_spaces."""
    return split_spaces(text.strip(" \r\n"))


def ascii_lower(text: str) -> str:
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in text)


def transform(text: str, truecase: bool) -> str:
    """Annot::transform: as written with truecase, else spaces removed and ASCII lower case."""
    return text if truecase else ascii_lower(text.replace(" ", ""))


# ----------------------------------------------------------------------------- reference file
@dataclass
class Sentence:
    """One sentence of an M2 file: source words, edits (start, end, text, annotator) in
    file order (duplicates kept), and the annotators it is scored against."""

    source: list[str]
    edits: list[tuple[int, int, str, int]] = field(default_factory=list)
    annotators: list[int] = field(default_factory=list)


def read_m2(text: str) -> list[Sentence]:
    """The sentences of a well-formed M2 file, the way Moses's M2::ReadM2 collects them
    (lines of 2 characters or fewer, and lines that are neither S nor A, are skipped)."""
    sentences: list[Sentence] = []
    users: set[int] = set()        # never cleared: Moses's quirk

    def close():
        if sentences:
            if not users:
                users.add(0)
            sentences[-1].annotators = sorted(users)

    for line in text.split("\n"):
        if len(line) <= 2:
            continue
        if line.startswith("S "):
            close()
            sentences.append(Sentence(split_spaces(line[2:])))
        elif line.startswith("A "):
            fields = line[2:].split("|||")
            k = int(fields[5])
            users.add(k)
            if fields[1] != "noop":
                i, j = (int(x) for x in fields[0].split()[:2])
                sentences[-1].edits.append((i, j, fields[2], k))
    close()
    return sentences


# ----------------------------------------------------------------------------- F score
def f_beta32(correct, proposed, gold, beta: float) -> np.float32:
    """M2::FScore: everything in float32; p = 1 without proposed edits, r = 1 without gold
    edits, 0 when beta^2 p + r is 0."""
    b = F(beta)
    c, pr, g = F(correct), F(proposed), F(gold)
    p = F(1.0) if pr == 0 else F(c / pr)
    r = F(1.0) if g == 0 else F(c / g)
    denom = F(F(b * b) * p) + r
    if denom == 0:
        return F(0.0)
    return F(F(F(F(1) + F(b * b)) * p) * r) / F(denom)


def corpus_f(stats, beta: float) -> float:
    """M2Scorer::calculateScore of summed statistics (correct, proposed, gold[, n]): the
    quotients in double stored in float, beta^2 in float, the numerator in double."""
    c, pr, g = (F(v) for v in stats[:3])
    b = F(beta)
    bb = F(b * b)
    p = F(1.0) if pr == 0 else F(float(c) / float(pr))
    r = F(1.0) if g == 0 else F(float(c) / float(g))
    denom = F(F(bb * p) + r)
    if denom == 0:
        return 0.0
    return float(F((1.0 + float(bb)) * float(p) * float(r) / float(denom)))


# ----------------------------------------------------------------------------- statistics
@dataclass
class _Edge:
    cost: np.float32
    changed: int
    unchanged: int
    text: str


def _join(a: str, b: str) -> str:
    return a + " " + b if a and b else (a or b)


def _levenshtein(x: list[str], y: list[str], truecase: bool):
    n, m = len(x), len(y)
    d = [[0] * (m + 1) for _ in range(n + 1)]
    moves: dict[tuple[int, int], dict[tuple[int, int], _Edge]] = {}
    for i in range(n + 1):
        d[i][0] = i
        if i:
            moves[(i, 0)] = {(i - 1, 0): _Edge(F(1), 1, 0, "")}
    for j in range(m + 1):
        d[0][j] = j
        if j:
            moves[(0, j)] = {(0, j - 1): _Edge(F(1), 1, 0, y[j - 1])}
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            same = transform(x[i - 1], truecase) == transform(y[j - 1], truecase)
            left, down, diag = d[i][j - 1] + 1, d[i - 1][j] + 1, d[i - 1][j - 1] + (0 if same else 2)
            d[i][j] = best = min(left, down, diag)
            kept = {}
            if left == best:
                kept[(i, j - 1)] = _Edge(F(1), 1, 0, y[j - 1])
            if down == best:
                kept[(i - 1, j)] = _Edge(F(1), 1, 0, "")
            if diag == best:
                kept[(i - 1, j - 1)] = _Edge(F(1), 0, 1, y[j - 1]) if same else _Edge(F(1), 1, 0, y[j - 1])
            moves[(i, j)] = kept
    return d[n][m], moves


def _lattice(n: int, m: int, moves, max_unchanged: int) -> dict:
    """Edges {(a, b): _Edge} after the closure rounds."""
    edges: dict = {}
    seen, todo = set(), [(n, m)]
    while todo:
        v = todo.pop()
        if v in seen:
            continue
        seen.add(v)
        for u, e in moves.get(v, {}).items():
            edges[(u, v)] = e
            todo.append(u)
    while True:
        added: dict = {}
        ordered = sorted(edges.items())
        for (a, w), e1 in ordered:
            for (w2, b), e2 in ordered:
                if w2 != w:
                    continue
                e = _Edge(F(e1.cost + e2.cost), e1.changed + e2.changed, e1.unchanged + e2.unchanged,
                          _join(e1.text, e2.text))
                if e.changed > 0 and e.unchanged <= max_unchanged and (a, b) not in edges and (a, b) not in added:
                    added[(a, b)] = e
        if not added:
            return edges
        edges.update(added)


def _matches(a, b, text: str, edit, k: int, truecase: bool) -> bool:
    i, j, etext, ek = edit
    return a[0] == i and b[0] == j and ek == k and transform(text, truecase) == transform(etext, truecase)


def _path(edges: dict, weights: dict, n: int, m: int) -> list:
    vertices = sorted({v for pair in edges for v in pair})
    dist = {v: F(np.inf) for v in vertices}
    dist[(0, 0)] = F(0)
    pred: dict = {}
    order = sorted(edges)
    for _ in range(len(vertices) - 1):
        for a, b in order:
            cand = F(dist[a] + weights[(a, b)])
            if cand < dist[b]:
                dist[b] = cand
                pred[b] = a
    path, v = [], (n, m)
    while v != (0, 0):
        path.append((pred[v], v))
        v = pred[v]
    return path[::-1]


def unique_edits(edits, truecase: bool) -> list:
    """Moses keeps the edits in a std::set keyed by (start, end, annotator, transform(text)): one of each."""
    seen, out = set(), []
    for i, j, text, k in edits:
        key = (i, j, k, transform(text, truecase))
        if key not in seen:
            seen.add(key)
            out.append((i, j, text, k))
    return out


def sentence_stats(sentence: Sentence, hypothesis: str, *, beta: float = 0.5, max_unchanged: int = 2,
                   truecase: bool = False) -> list[int]:
    """``[correct, proposed, gold, source length]`` of one hypothesis (text, as in the n-best)."""
    x, y = sentence.source, hypothesis_words(hypothesis)
    n = len(x)
    gold_edits = unique_edits(sentence.edits, truecase)
    distance, moves = _levenshtein(x, y, truecase)
    if distance > n:
        return [0, distance, 0, n]
    per_annotator = {}
    for k in sentence.annotators:
        gold = sum(1 for e in gold_edits if e[3] == k)
        correct = proposed = 0
        if distance > 0:
            edges = _lattice(n, len(y), moves, max_unchanged)
            weights = {}
            for (a, b), e in edges.items():
                w = e.cost
                if e.changed > 0:
                    w = F(float(w) + 0.001)
                    if any(_matches(a, b, e.text, g, k, truecase) for g in gold_edits):
                        w = F(-(max_unchanged + 1) * len(edges))
                weights[(a, b)] = w
            for a, b in _path(edges, weights, n, len(y)):
                e = edges[(a, b)]
                if e.changed > 0:
                    proposed += 1
                    correct += sum(1 for g in gold_edits if _matches(a, b, e.text, g, k, truecase))
        per_annotator[k] = (correct, proposed, gold)
    best, best_f = None, F(-1)
    for k in sentence.annotators:
        f = f_beta32(*per_annotator[k], beta)
        if f > best_f:
            best, best_f = k, f
    return [*per_annotator[best], n]
