"""The slow, obvious cdec -O forest reader: Python ``struct`` over every field.

This is mtplug.formats.cdec_forest's original pure-Python reader, kept unchanged in
behaviour as the reference the compiled reader (pyx/_cdec_forest.pyx) is tested against:
same signature, same Hypergraph (built through HypergraphBuilder), same InputError
messages. The archive layout is documented in mtplug/formats/cdec_forest.py.
"""

from __future__ import annotations

import math
import struct
import zlib

from mtplug.errors import InputError
from mtplug.fileio import open_binary
from mtplug.formats.cdec_forest import LIBRARY_VERSIONS
from mtplug.hypergraph import Hypergraph, HypergraphBuilder

_SIGNATURE = b"serialization::archive"
_U8, _U16, _I16 = struct.Struct("<B"), struct.Struct("<H"), struct.Struct("<h")
_I32, _U32, _U64, _F64 = struct.Struct("<i"), struct.Struct("<I"), struct.Struct("<Q"), struct.Struct("<d")
#: Fewest bytes a node / an edge can take, to refuse absurd counts before looping over them.
_MIN_NODE_BYTES = 8 + 4 + 8 + 8 + 8
_MIN_EDGE_BYTES = 4 + 2 + 2 + 4 + 4 + 8 + 4
#: The non-terminal masks are one u64, so no rule side can be longer.
_MAX_RULE_SIDE = 64


class _Reader:
    """A cursor over the decompressed archive; every read names what it expected."""

    def __init__(self, data: bytes, path: str):
        self.data = data
        self.pos = 0
        self.path = path
        self._seen: set[str] = set()

    def fail(self, what: str, found: str, at: int | None = None) -> InputError:
        at = self.pos if at is None else at
        return InputError(f"expected {what} at byte {at} of the archive, found {found}", self.path)

    def _take(self, n: int, what: str) -> int:
        start = self.pos
        if n > len(self.data) - start:
            left = len(self.data) - start
            raise self.fail(what, f"the end of the data ({left} byte{'s' if left != 1 else ''} left)")
        self.pos = start + n
        return start

    def unpack(self, fmt: struct.Struct, what: str):
        return fmt.unpack_from(self.data, self._take(fmt.size, what))[0]

    def count(self, fmt: struct.Struct, what: str, item_bytes: int) -> int:
        """A count whose items take at least ``item_bytes`` each, checked against the data left."""
        at = self.pos
        n = self.unpack(fmt, what)
        left = len(self.data) - self.pos
        if n < 0 or n * item_bytes > left:
            raise self.fail(what, f"{n}, more than the {left} bytes left can hold" if n > 0 else str(n), at)
        return n

    def raw_string(self, what: str) -> bytes:
        n = self.count(_U64, f"the byte length of {what}", 1)
        start = self._take(n, what)
        return self.data[start:start + n]

    def text(self, what: str) -> str:
        at = self.pos + 8
        raw = self.raw_string(what)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise self.fail(f"{what} in UTF-8", f"invalid UTF-8 at byte {at + exc.start}", at) from None

    def class_header(self, cls: str, version: int) -> None:
        """Boost's header before the first object of a class: not tracked, known version."""
        if cls in self._seen:
            return
        self._seen.add(cls)
        at = self.pos
        tracking = self.unpack(_U8, f"the tracking flag of class {cls}")
        found = self.unpack(_U32, f"the version of class {cls}")
        if tracking != 0 or found != version:
            raise self.fail(f"class {cls} untracked at version {version}",
                            f"tracking flag {tracking}, version {found}", at)


def _header(r: _Reader) -> None:
    at = r.pos
    if r.unpack(_U64, "the archive signature length 22") != len(_SIGNATURE) or \
            r.data[r.pos:r.pos + len(_SIGNATURE)] != _SIGNATURE:
        raise r.fail("a Boost archive signature 'serialization::archive' (a cdec -O forest)",
                     repr(r.data[at:at + 30]), at)
    r.pos += len(_SIGNATURE)
    at = r.pos
    version = r.unpack(_U16, "the Boost archive library version")
    if version not in LIBRARY_VERSIONS:
        raise r.fail(f"Boost archive library version {LIBRARY_VERSIONS[0]} to {LIBRARY_VERSIONS[-1]} "
                     "(the versions whose layout of cdec's forests is known)", f"version {version}", at)
    at = r.pos
    sizes = tuple(r.unpack(_U8, "the sizes of int, long, float and double") for _ in range(4))
    if sizes != (4, 8, 4, 8):
        raise r.fail("sizes 4 8 4 8 of int, long, float, double (a 64-bit archive)",
                     " ".join(map(str, sizes)), at)
    at = r.pos
    if r.unpack(_I32, "the byte-order mark 1") != 1:
        raise r.fail("the little-endian byte-order mark 01 00 00 00", r.data[at:at + 4].hex(" "), at)


def _feature_map(r: _Reader, names: dict[bytes, str] | None, what: str) -> list[tuple[str, float]]:
    """The (name, value) pairs of a SparseVector; ``names`` None = skip them (rule scores)."""
    r.class_header("SparseVector", 0)
    n = r.count(_I32, f"the entry count of {what}", 16)
    if n:
        r.class_header("pair", 0)
    data, end, pos = r.data, len(r.data), r.pos
    out = []
    for _ in range(n):
        # the hot loop of big forests: plain slicing; on any shortfall the checked reads
        # below re-read from here and raise the precise error
        k = _U64.unpack_from(data, pos)[0] if end - pos >= 8 else end
        if k > end - pos - 16:
            r.pos = pos
            r.raw_string(f"a feature name in {what}")
            r.unpack(_F64, f"the value of a feature in {what}")
        at = pos
        raw = data[pos + 8:pos + 8 + k]
        value = _F64.unpack_from(data, pos + 8 + k)[0]
        pos += 16 + k
        if names is None:
            continue
        name = names.get(raw)
        if name is None:
            try:
                name = names[raw] = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise r.fail(f"a UTF-8 feature name in {what}", repr(raw), at) from None
        if not math.isfinite(value):
            raise r.fail(f"a finite value of feature {name!r} in {what}", repr(value), pos - 8)
        out.append((name, value))
    r.pos = pos
    return out


def _rule_side(r: _Reader, side: str, what: str) -> tuple[int, int]:
    at = r.pos
    n = r.unpack(_U32, f"the {side} length of {what}")
    if n > _MAX_RULE_SIDE:
        raise r.fail(f"a {side} length of {what} of at most {_MAX_RULE_SIDE}", str(n), at)
    at = r.pos
    mask = r.unpack(_U64, f"the {side} non-terminal mask of {what}")
    if mask >> n:
        raise r.fail(f"a {side} non-terminal mask of {what} within its {n} positions", hex(mask), at)
    return n, mask


def _rule(r: _Reader, what: str) -> tuple[tuple, int]:
    """The target side of a rule (words as str, tails as 0-based int) and its largest tail + 1."""
    r.raw_string(f"the left-hand side of {what}")
    f_len, _ = _rule_side(r, "source", what)
    for _ in range(f_len):
        r.raw_string(f"a source symbol of {what}")
    e_len, e_mask = _rule_side(r, "target", what)
    rhs, need = [], 0
    for k in range(e_len):
        if e_mask >> k & 1:
            at = r.pos
            v = r.unpack(_I32, f"a tail reference of {what}")
            if v > 0:
                raise r.fail(f"a non-positive tail reference of {what}", str(v), at)
            rhs.append(-v)
            need = max(need, 1 - v)
        else:
            rhs.append(r.text(f"a target word of {what}"))
    r.unpack(_U8, f"the arity of {what}")
    _feature_map(r, None, f"the scores of {what}")
    return tuple(rhs), need


def read_cdec_forest(path) -> Hypergraph:
    """Read one cdec ``-O`` forest (``<id>.bin.gz``, or the same archive not gzipped).

    Returns the Hypergraph of the nodes the goal (cdec's last node) reaches; edges keep
    cdec's head and tails, ``rhs`` is the rule's target side and the features are the
    edge's feature map. Any malformed, truncated or foreign input raises InputError(path)
    whose message says what was expected at which byte offset.
    """
    path = str(path)
    try:
        with open_binary(path) as fh:
            data = fh.read()
    except (EOFError, OSError, zlib.error) as exc:
        raise InputError(f"corrupt or truncated compressed data ({exc})", path) from None
    r = _Reader(data, path)
    _header(r)
    r.class_header("Hypergraph", 0)
    at = counts_at = r.pos
    n_nodes = r.unpack(_I32, "the node count")
    n_edges = r.unpack(_I32, "the edge count")
    left = len(data) - r.pos
    if n_nodes < 1 or n_edges < 0 or n_nodes * _MIN_NODE_BYTES + n_edges * _MIN_EDGE_BYTES > left:
        raise r.fail("a node count >= 1 and an edge count that the rest of the archive can hold",
                     f"{n_nodes} nodes, {n_edges} edges in {left} bytes", at)

    in_edges = []
    for v in range(n_nodes):
        r.class_header("Node", 0)
        r.unpack(_U64, f"the hash of node {v}")
        at = r.pos
        if r.unpack(_I32, f"the id of node {v}") != v:
            raise r.fail(f"node id {v} (nodes in order)", str(_I32.unpack_from(data, at)[0]), at)
        r.raw_string(f"the category of node {v}")
        for kind in ("in", "out"):
            at = r.pos + 8
            n = r.count(_U64, f"the {kind}-edge count of node {v}", 4)
            ids = struct.unpack_from(f"<{n}i", data, r.pos)
            r.pos += 4 * n
            if any(not 0 <= e < n_edges for e in ids):
                raise r.fail(f"{kind}-edges of node {v} among the {n_edges} edges", str(list(ids)), at)
            if kind == "in":
                in_edges.append((ids, at))

    builder = HypergraphBuilder(source=path)
    for v in range(n_nodes):
        builder.node(v)
    rules: list[tuple[tuple, int]] = []
    names: dict[bytes, str] = {}
    heads = []
    rule_class = None
    for e in range(n_edges):
        r.class_header("Edge", 0)
        at = r.pos
        head = r.unpack(_I32, f"the head node of edge {e}")
        if not 0 <= head < n_nodes:
            raise r.fail(f"the head of edge {e} among the {n_nodes} nodes", str(head), at)
        r.class_header("SmallVector", 0)
        n_tails = r.count(_U16, f"the tail count of edge {e}", 4)
        at = r.pos
        tails = struct.unpack_from(f"<{n_tails}i", data, at)
        r.pos += 4 * n_tails
        if any(not 0 <= t < head for t in tails):
            raise r.fail(f"tails of edge {e} before its head node {head} (nodes in topological order)",
                         str(list(tails)), at)
        r.class_header("shared_ptr", 1)
        at = r.pos
        cid = r.unpack(_I16, f"the rule class id of edge {e}")
        if cid == -1:
            raise r.fail(f"a rule for edge {e}", "a null rule pointer", at)
        if rule_class is None:
            tracking = r.unpack(_U8, "the tracking flag of the rule class")
            version = r.unpack(_U32, "the version of the rule class")
            if cid < 0 or tracking != 1 or version != 0:
                raise r.fail("a tracked rule class at version 0",
                             f"class id {cid}, tracking flag {tracking}, version {version}", at)
            rule_class = cid
        elif cid != rule_class:
            raise r.fail(f"the rule class id {rule_class} of edge {e}", str(cid), at)
        at = r.pos
        oid = r.unpack(_U32, f"the rule object id of edge {e}")
        if oid == len(rules):
            rules.append(_rule(r, f"rule {oid} (edge {e})"))
        elif oid > len(rules):
            raise r.fail(f"a rule object id of at most {len(rules)} for edge {e}", str(oid), at)
        rhs, need = rules[oid]
        if need > n_tails:
            raise r.fail(f"a rule whose target side refers to at most the {n_tails} tails of edge {e}",
                         f"a reference to tail {need}", at)
        feats = _feature_map(r, names, f"the features of edge {e}")
        r._take(8, f"the spans of edge {e}")
        at = r.pos
        if r.unpack(_I32, f"the id of edge {e}") != e:
            raise r.fail(f"edge id {e} (edges in order)", str(_I32.unpack_from(data, at)[0]), at)
        heads.append(head)
        builder.edge(head, tails, rhs, feats)
    r._take(8, "the edges_topo and is_linear_chain flags ending the archive")
    if r.pos != len(data):
        extra = len(data) - r.pos
        raise r.fail("the end of the archive", f"{extra} more byte{'s' if extra != 1 else ''}")
    for v, (ids, at) in enumerate(in_edges):
        if any(heads[e] != v for e in ids):
            raise r.fail(f"in-edges of node {v} with head {v}", f"edges {list(ids)} with heads "
                         f"{[heads[e] for e in ids]}", at)
    listed = sum(len(ids) for ids, _ in in_edges)
    if listed != n_edges:
        raise r.fail(f"nodes whose in-edges cover the {n_edges} edges", f"{listed} in-edges listed", counts_at)
    return builder.build(n_nodes - 1)
