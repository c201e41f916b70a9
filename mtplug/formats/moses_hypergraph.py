"""One sentence's search space as Moses writes it for kbmira's hypergraph mode
(``moses -output-search-graph-hypergraph true gz DIR`` → ``kbmira --hgdir DIR``): read,
write, and the file names.

Layout ("Kenneth's hypergraph" / cdec target_graph, bottom-up), as moses/Manager.cpp
``OutputSearchGraphAsHypergraph`` writes it and mert/Hypergraph.cpp ``ReadGraph`` reads
it (Moses HEAD)::

    # target ||| features ||| source-covered
    7 9
    # node 0
    1
    <s> |||  ||| 0
    # node 1
    1
    [0] the  ||| UnknownWordPenalty0=0.000000 WordPenalty0=-1.000000 TranslationModel0_1=-0.356675 TranslationModel0_2=-1.203973 LM0=-5.760000  ||| 1
    ...
    # node 6
    2
    [4] </s> |||  ||| 2
    [5] </s> |||  ||| 2

Line 1 is exactly that header. Then ``<vertices> <edges>``, and per vertex, in
topological order (tails before heads; the last vertex is the goal), a line with its
number of incoming edges followed by that many edge lines. Lines starting with ``#``
are comments where a count is expected, never between edge lines. An edge line is
``target ||| features ||| source-covered``: the target side is space-separated tokens, a
token ``[n]`` being the yield of vertex n (the edge's tails, in order of appearance);
features are ``name=value`` tokens (split at the last ``=``); source-covered is the
number of source words the head covers (Moses reads it from a vertex's first edge and
uses it only to scale the reference length in its hope/fear BLEU; read into
``Hypergraph.node_source_len``).

Moses writes the features of an edge with ``ScoreComponentCollection::Save(out, false)``:
every dense feature, ``Label=value`` for a one-value feature and ``Label_1=v ...
Label_m=v`` (numbered from 1) for one with m values, then the sparse ``name=value``
pairs. mtplug names dense columns as its n-best reader does (``Label_<k>`` from 0), so
reading maps ``LM0`` → ``LM0_0`` and ``TranslationModel0_3`` → ``TranslationModel0_2``
(a name is dense when it has no ``_``, or is ``<label without _>_<k>`` with k ≥ 1); every
other name is sparse and kept (``WT_the~das``). The boundary words ``<s>`` and ``</s>``,
which kbmira's BLEU skips, are dropped from target sides. Only what the goal reaches is
kept (:meth:`HypergraphBuilder.build`).

Files: Moses writes sentence ``i`` to ``DIR/i.<ext>`` (``txt``, ``gz`` or ``bz2``;
moses/IOWrapper.cpp; older versions wrote ``DIR/i`` unless the first value was
``true``) next to a ``weights`` file; kbmira reads every file of DIR except ``weights``,
taking the sentence id from the name without its extension (mert/HopeFearDecoder.cpp
``HypergraphHopeFearDecoder``). mtplug reads plain and gzip files (not bz2).
"""

from __future__ import annotations

import gzip
import os
import re

from ..errors import InputError
from ..fileio import atomic_output, read_text_lines
from ..hypergraph import Hypergraph, HypergraphBuilder
from .number_text import format_shortest, parse_number

HEADER = "# target ||| features ||| source-covered"
#: words kbmira treats as sentence boundaries (never part of a translation)
BOUNDARY = frozenset({"<s>", "</s>"})
#: largest source-covered value (Hypergraph.node_source_len is int32)
MAX_SOURCE_COVERED = 2 ** 31 - 1
#: the file kbmira skips in a hypergraph directory (Moses's weights at decoding time)
WEIGHTS_FILE = "weights"

_FIELD_SEP = " ||| "
# at most 18 digits: counts fit in int64, and int() never meets Python's digit limit
_UINT = re.compile(r"[0-9]{1,18}")
_COUNTS = re.compile(r"([0-9]{1,18}) ([0-9]{1,18})")
_MOSES_DENSE = re.compile(r"([^_]+)_([1-9][0-9]*)")   # as Moses writes a component (from 1)
_COLUMN = re.compile(r"([^_]+)_(0|[1-9][0-9]*)")      # mtplug's dense column name (from 0)
_FILE_NAME = re.compile(r"([0-9]+)(\.[^.]*)?")
_SPACE = frozenset(" \t\n\r\x0b\x0c")


def hypergraph_path(hgdir: str | os.PathLike, sent_id: int, extension: str = "gz") -> str:
    """``hgdir/<sent_id>.<extension>``: where Moses writes (and kbmira finds) a sentence."""
    if int(sent_id) < 0:
        raise ValueError(f"sentence ids are non-negative, got {sent_id}")
    return os.path.join(os.fspath(hgdir), f"{int(sent_id)}.{extension}")


def list_hypergraphs(hgdir: str | os.PathLike) -> dict[int, str]:
    """sentence id -> file, for the files of a ``--hgdir`` directory, as kbmira finds them.

    Skips ``weights`` and hidden files (an interrupted writer's temporary files); any
    other name must be ``<id>`` or ``<id>.<ext>`` (else :class:`InputError` naming it).
    """
    hgdir = os.fspath(hgdir)
    try:
        names = sorted(os.listdir(hgdir))
    except FileNotFoundError:
        raise InputError("no such directory", hgdir) from None
    except NotADirectoryError:
        raise InputError("is not a directory", hgdir) from None
    except OSError as err:  # permission denied, ...
        raise InputError(f"cannot list the directory ({err.strerror})", hgdir) from None
    found: dict[int, str] = {}
    for name in names:
        if name == WEIGHTS_FILE or name.startswith("."):
            continue
        path = os.path.join(hgdir, name)
        m = _FILE_NAME.fullmatch(name)
        if m is None:
            raise InputError("expected a hypergraph file named <sentence id> or <sentence id>.<ext>", path)
        sid = int(m[1])
        if sid in found:
            raise InputError(f"a second file for sentence {sid} (the first is {found[sid]})", path)
        found[sid] = path
    return found


# ---------------------------------------------------------------------------------------
# reading


def column_name(moses_name: str) -> str:
    """mtplug's name of a feature Moses wrote as ``moses_name`` (``LM0`` → ``LM0_0``)."""
    if "_" not in moses_name:
        return moses_name + "_0"
    m = _MOSES_DENSE.fullmatch(moses_name)
    return f"{m[1]}_{int(m[2]) - 1}" if m else moses_name


def read_moses_hypergraph(path: str | os.PathLike) -> Hypergraph:
    """The hypergraph in one file of a kbmira ``--hgdir`` (plain or gzip).

    Raises :class:`InputError` (file and line) on a bad header or count (the vertices
    must hold exactly the announced number of edges), an edge line
    without three `` ||| `` fields, a tail that is not an earlier vertex, a malformed or
    non-finite feature, a missing vertex, or a vertex the goal needs that has no edge.
    """
    path = os.fspath(path)
    lines = read_text_lines(path)
    if not lines or lines[0] != HEADER:
        got = repr(lines[0][:60]) if lines else "an empty file"
        raise InputError(f"expected the header {HEADER!r}, got {got}", path, 1)
    pos = 1

    def next_count_line(what: str) -> tuple[int, str]:
        nonlocal pos
        while pos < len(lines) and lines[pos].startswith("#"):
            pos += 1
        if pos >= len(lines):
            raise InputError(f"unexpected end of file: expected {what}", path, len(lines) + 1)
        pos += 1
        return pos, lines[pos - 1]

    counts_line_no, text = next_count_line("'<vertices> <edges>'")
    m = _COUNTS.fullmatch(text)
    if m is None:
        raise InputError(f"expected '<vertices> <edges>', got {text[:60]!r}", path, counts_line_no)
    n_vertices, n_edges = int(m[1]), int(m[2])
    if n_vertices == 0:
        raise InputError("the hypergraph has no vertices (expected at least the goal)", path, counts_line_no)
    vertices: list[tuple[int, list]] = []   # (line of the count, [(line, tails, rhs, features)])
    total = 0
    for v in range(n_vertices):
        count_line, text = next_count_line(f"vertex {v} of the {n_vertices} the header announces")
        if not _UINT.fullmatch(text):
            raise InputError(f"expected the number of edges of vertex {v}, got {text[:60]!r}", path, count_line)
        count = int(text)
        edges = []
        for _ in range(count):
            if pos >= len(lines):
                raise InputError(f"unexpected end of file: vertex {v} announces {count} edges",
                                 path, len(lines) + 1)
            edges.append(_parse_edge(lines[pos], v, path, pos + 1))
            pos += 1
        total += count
        if total > n_edges:
            raise InputError(f"more edges than the {n_edges} the header announces", path, pos)
        vertices.append((count_line, edges))
    for rest in range(pos, len(lines)):
        if lines[rest].strip() and not lines[rest].startswith("#"):
            raise InputError(f"unexpected line after the last of the {n_vertices} vertices", path, rest + 1)
    if total != n_edges:
        # fewer edges than announced: a vertex's edges went missing (or the counts are wrong)
        raise InputError(f"the header announces {n_edges} edges, the {n_vertices} vertices have {total}",
                         path, counts_line_no)
    return _build(vertices, path)


def _parse_edge(text: str, head: int, path: str, line: int) -> tuple:
    parts = text.split(_FIELD_SEP)
    if len(parts) != 3:
        raise InputError(f"expected an edge 'target ||| features ||| source-covered', found {len(parts)} "
                         f"field(s)", path, line)
    target, feats, covered = parts
    if not _UINT.fullmatch(covered) or int(covered) > MAX_SOURCE_COVERED:
        raise InputError(f"expected the number of source words covered (0 to {MAX_SOURCE_COVERED}), "
                         f"got {covered[:40]!r}", path, line)
    tails: list[int] = []
    rhs: list = []
    for tok in target.split(" "):
        if not tok or tok in BOUNDARY:
            continue
        if len(tok) >= 2 and tok[0] == "[" and tok[-1] == "]":
            inner = tok[1:-1]
            if not _UINT.fullmatch(inner):
                raise InputError(f"expected a vertex reference [<number>], got {tok[:40]!r}", path, line)
            tail = int(inner)
            if tail >= head:
                raise InputError(f"{tok} refers to vertex {tail}, which does not come before vertex {head} "
                                 f"(tails come first: the file must be bottom-up)", path, line)
            rhs.append(len(tails))
            tails.append(tail)
        else:
            rhs.append(tok)
    features: dict[str, float] = {}
    for tok in feats.split(" "):
        if not tok:
            continue
        name, eq, value = tok.rpartition("=")
        if not eq or not name:
            raise InputError(f"expected a feature name=value, got {tok[:40]!r}", path, line)
        # Moses keeps the last value of a repeated name (SparseVector::set)
        features[column_name(name)] = parse_number(value, path, line, name)
    return line, tails, rhs, features, int(covered)


def _build(vertices: list, path: str) -> Hypergraph:
    goal = len(vertices) - 1
    tails_of = [sorted({t for _, tails, _, _, _ in edges for t in tails}) for _, edges in vertices]
    b = HypergraphBuilder(source=path)
    # Nodes and edges go to the builder in the order it will give them (words and
    # features then get their ids in that order too), so a file we wrote reads back as
    # the hypergraph it was written from.
    for v in _postorder(goal, tails_of):
        count_line, edges = vertices[v]
        if not edges:
            raise InputError(f"vertex {v} has no incoming edge", path, count_line)
        b.node(v)
        b.source_covered(v, edges[0][4])  # Moses takes a vertex's coverage from its first edge
        for line, tails, rhs, features, _ in edges:
            b.edge(v, tails, rhs, features, line=line)
    return b.build(goal)


def _postorder(goal: int, tails_of: list[list[int]]) -> list[int]:
    """The nodes the goal reaches, in the order HypergraphBuilder.build gives them.

    Post-order of a depth-first search from the goal that visits tails by ascending id
    (``tails_of[v]`` sorted); a graph already in this order keeps it.
    """
    done = [False] * len(tails_of)
    order: list[int] = []
    stack = [(goal, 0)]
    done[goal] = True
    while stack:
        v, k = stack[-1]
        if k < len(tails_of[v]):
            stack[-1] = (v, k + 1)
            t = tails_of[v][k]
            if not done[t]:
                done[t] = True
                stack.append((t, 0))
        else:
            stack.pop()
            order.append(v)
    return order


# ---------------------------------------------------------------------------------------
# writing


def write_moses_hypergraph(path: str | os.PathLike, hg: Hypergraph) -> None:
    """Write ``hg`` in Moses's layout (gzip when ``path`` ends in ``.gz``), atomically.

    Only what the goal reaches is written, in a canonical order (reading the file back
    gives the same file again). Dense columns ``X_k`` are written as Moses names them
    (``X`` when k = 0 is X's only column on the written edges, else ``X_<k+1>``), values
    as the shortest text that reads back exactly. The source-covered field of a vertex
    is ``hg.node_source_len``; without it, the length in words of the vertex's longest
    yield, a stand-in for the source coverage Moses writes (kbmira divides it by the
    goal's value to scale the reference length, so it must not be 0 at the goal).

    Raises ValueError for what the format cannot carry: a feature name without ``_``
    (it would read back as a dense ``<name>_0``), names or words that are empty or hold
    whitespace, words ``<s>``/``</s>`` (dropped when read) or ``[...]`` (read as a tail),
    an edge with a tail its target side does not use.
    """
    hg.check()
    order = _postorder(hg.goal, [sorted({int(t) for e in hg.in_edges(v) for t in hg.edge_tails(e)})
                                 for v in range(hg.n_nodes)])
    new_id = {v: i for i, v in enumerate(order)}
    edges = [e for v in order for e in hg.in_edges(v)]
    words = _WordTable(hg.words)
    rank = _feature_ranks(hg, edges)
    moses_names = _moses_names(hg, rank)
    covered = _source_covered(hg, order, new_id)
    out = [HEADER, f"{len(order)} {len(edges)}"]
    for i, v in enumerate(order):
        out.append(f"# node {i}")
        out.append(str(len(hg.in_edges(v))))
        for e in hg.in_edges(v):
            tails = hg.edge_tails(e)
            slots = {-r - 1 for r in hg.edge_rhs(e).tolist() if r < 0}
            if len(slots) != len(tails):
                raise ValueError(f"edge {e} has a tail its target side does not use; Moses's format names the "
                                 "tails only through the target side")
            target = "".join((words[r] if r >= 0 else f"[{new_id[int(tails[-r - 1])]}]") + " "
                             for r in hg.edge_rhs(e).tolist())
            a, b = int(hg.feat_indptr[e]), int(hg.feat_indptr[e + 1])
            feats = sorted(zip(hg.feat_ids[a:b].tolist(), hg.feat_values[a:b].tolist()), key=lambda f: rank[f[0]])
            features = "".join(f"{moses_names[f]}={format_shortest(x)} " for f, x in feats)
            out.append(f"{target}{_FIELD_SEP}{features}{_FIELD_SEP}{covered[i]}")
    data = ("\n".join(out) + "\n").encode("utf-8")
    if os.fspath(path).endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    with atomic_output(path, "wb") as fh:
        fh.write(data)


def _feature_ranks(hg: Hypergraph, edges: list[int]) -> dict[int, int]:
    """feature id -> rank of first appearance in the written edges (each edge by id).

    Writing every edge's features in this order makes the reader assign the same
    order, so a file read and written again is byte-identical.
    """
    rank: dict[int, int] = {}
    for e in edges:
        for f in sorted(hg.feat_ids[hg.feat_indptr[e]:hg.feat_indptr[e + 1]].tolist()):
            rank.setdefault(f, len(rank))
    return rank


def _moses_names(hg: Hypergraph, used: dict[int, int]) -> dict[int, str]:
    names = {f: _checked_name(hg.feature_names[f]) for f in used}
    components: dict[str, set] = {}
    for name in names.values():
        m = _COLUMN.fullmatch(name)
        if m:
            components.setdefault(m[1], set()).add(int(m[2]))
    out = {}
    for f, name in names.items():
        m = _COLUMN.fullmatch(name)
        if m is None:
            out[f] = name
        elif components[m[1]] == {0}:
            out[f] = m[1]
        else:
            out[f] = f"{m[1]}_{int(m[2]) + 1}"
    return out


def _checked_name(name: str) -> str:
    if not name or not _SPACE.isdisjoint(name):
        raise ValueError(f"feature name {name!r} is empty or contains whitespace")
    if "_" not in name:
        raise ValueError(f"feature name {name!r} has no '_': Moses's hypergraph format would read it back as "
                         f"the dense column {name + '_0'!r}")
    return name


class _WordTable(dict):
    """word id -> text, checked once on first use (unused words are not written)."""

    def __init__(self, words: list[str]):
        super().__init__()
        self.words = words

    def __missing__(self, i: int) -> str:
        self[i] = _checked_word(self.words[i])
        return self[i]


def _checked_word(word: str) -> str:
    if not word or not _SPACE.isdisjoint(word):
        raise ValueError(f"word {word!r} is empty or contains whitespace")
    if word in BOUNDARY or word == "|||" or (len(word) >= 2 and word[0] == "[" and word[-1] == "]"):
        raise ValueError(f"word {word!r} cannot be written in Moses's hypergraph format "
                         f"(a boundary marker, a field separator or a vertex reference)")
    return word


def _source_covered(hg: Hypergraph, order: list[int], new_id: dict[int, int]) -> list[int]:
    """Per written vertex: ``hg.node_source_len``, or the number of words of its longest
    yield (capped at MAX_SOURCE_COVERED) when the hypergraph has no source lengths."""
    if hg.node_source_len is not None:
        return [int(hg.node_source_len[v]) for v in order]
    cap = MAX_SOURCE_COVERED
    longest = [0] * len(order)
    for i, v in enumerate(order):
        best = 0
        for e in hg.in_edges(v):
            n = int((hg.edge_rhs(e) >= 0).sum()) + sum(longest[new_id[int(t)]] for t in hg.edge_tails(e))
            best = max(best, n)
        longest[i] = min(best, cap)
    return longest
