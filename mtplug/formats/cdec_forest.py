"""cdec forests as ``cdec -O DIR`` writes them: ``DIR/<id>.bin.gz``, a gzipped
``boost::archive::binary_oarchive`` of cdec's Hypergraph (little-endian, 64-bit
``long``/``size_t``), as any Boost from 1.53 on writes it: Boost archive library versions 10
(cdec's own test data) to 21 (a cdec built against Boost 1.74 writes 18).

Boost archive library versions. The archive header holds BOOST_ARCHIVE_VERSION() of the
Boost that wrote it: its value at each release tag of boostorg/serialization
(src/basic_archive.cpp), and what the commit that bumped it changed::

    10  1.53 - 1.55   "fixed base64" (text and XML archives)
    11  1.56 - 1.57   none ("not changes")
    12  1.58          loading of collections (what is written is unchanged)
    13  1.59          visibility macros ("bumped in case I break something")
    14  1.60 - 1.63   wide/multibyte character conversion (wide text and XML archives)
    15  1.64 - 1.65   boost::optional<T>
    16  1.66 - 1.67   <codecvt> dropped (wide text and XML archives)
    17  1.68 - 1.72   a gcc warning
    18  1.73 - 1.75   boost::unordered_map's template argument; the header is written from
                      the most derived archive's constructor (the same bytes)
    19  1.76 - 1.83   hash_map includes ("just in case I broke something")
    20  1.84 on       a cast in interface_oarchive.hpp; release tags checked up to 1.84,
                      develop stayed at 20 until PR #354 (2026-07-21)
    21  after PR #354 an enum whose underlying type is wider than int is written at
                      that width instead of as an int (narrower enums keep their bytes)

Which fields change with the version (include/boost/archive/basic_binary_iarchive.hpp
branches on it when reading; basic_binary_oarchive.hpp asserts the widths written today;
boost/serialization/vector.hpp, collections_save_imp.hpp, map.hpp, item_version_type.hpp,
collection_size_type.hpp)::

    library version (header)       u16 from 8 on (one byte up to 5; 6 and 7 vary)
    tracking flag                  u8 in every version
    class id / class id reference  i16 (Boost reads i16 for every version)
    class version                  u32 from 8 on (u8 in 7, u16 in 6, u8 in 3-5, u32 in 1-2)
    object id / object reference   u32
    collection count               u64 (size_t) from 6 on, u32 before
    item_version                   u32 after the count of a collection saved item by item
                                   (std::map, std::list, a vector of classes) from 4 on; a
                                   vector of numbers, saved as one array, has it only in 4, 5
    enum                           i32 up to 20; from 21 as wide as an underlying type wider
                                   than int

Every change of width is at version 8 or earlier; the later bumps concern text and XML
archives, loading, or types that cdec's Hypergraph does not save (map, optional,
unordered_map, hash_map, enum). Versions 10 to 21 therefore write cdec's forests byte for
byte the same apart from the version number. Checked: forests that cdec f7c4899b wrote with
Boost 1.74 (version 18) give cdec's own k-best (tests/golden/cdec-forests-v18), and the tests
build the archive for every version. Versions below 10 (Boost 1.52 and older) and above 21
(a later Boost) are refused: their writers were not checked.

How the pieces of a Hypergraph are written, the same in every version from 10 to 21:

* a class saved by value (Hypergraph, Node, Edge, cdec's SmallVector and SparseVector,
  std::pair) has the default implementation level object_class_info
  (boost/serialization/level.hpp), so archive/detail/oserializer.hpp and
  src/basic_oarchive.cpp (save_object) put a class header (tracking flag, class version)
  before its first object;
* std::vector<int> (a node's in- and out-edges) is object_serializable
  (boost/serialization/collection_traits.hpp): no class header; vector.hpp saves the count,
  then the ints as one array (no item_version);
* cdec's SmallVector (tail nodes) and SparseVector (features) save their own u16 / i32
  count and then item by item: no Boost collection code, so no item_version, and no
  std::map is written although cdec includes boost/serialization/map.hpp;
* boost::shared_ptr<TRule> (boost/serialization/shared_ptr.hpp) is untracked at class
  version 1 and saves the raw pointer: save_pointer in src/basic_oarchive.cpp writes the
  class id, for the first pointer of the class its tracking flag and version (no class name:
  TRule is not polymorphic), then the object id (TRule is tracked, being saved through a
  pointer), then the rule itself the first time that object id appears;
* a string is a size_t length and the bytes (impl/basic_binary_oprimitive.ipp, which also
  writes the header's sizes of int, long, float, double and the byte-order int).

Layout, worked out from cdec's save code and the bytes of its test forests (integers
little-endian; a "string" is a u64 byte count then the bytes; a "class header" is a u8
tracking flag then a u32 class version, written by Boost before the FIRST object of a class
only)::

    archive header  u64 22, "serialization::archive", u16 library version,
                    u8 sizeof(int)=4, sizeof(long)=8, sizeof(float)=4, sizeof(double)=8, i32 1
    Hypergraph      class header, i32 node count N, i32 edge count E
    N nodes         [class header] u64 node hash, i32 id (= position), string category,
                    u64 n + n * i32 in-edges, u64 n + n * i32 out-edges
    E edges         [class header] i32 head, [class header] u16 n + n * u32 tail nodes,
                    [class header of shared_ptr] rule pointer, feature map,
                    4 * i16 spans (i, j, prev_i, prev_j), i32 id (= position)
    trailer         i32 edges_topo, i32 is_linear_chain (unused; often uninitialised)

    rule pointer    i16 class id (-1 = null), on the first one u8 tracking + u32 version,
                    u32 object id: an id seen before refers to that rule (rules are shared
                    between edges); the next new id is followed by the rule:
    rule            string LHS, u32 |f|, u64 f non-terminal mask, |f| strings (a
                    non-terminal's is its category), u32 |e|, u64 e non-terminal mask, per
                    position an i32 <= 0 where the mask bit is set (-v is the 0-based index
                    of the edge's tail whose yield goes there) or else a string (a target
                    word), u8 arity, feature map (the rule's own scores)
    feature map     [class header] i32 n, n * ([class header of the pair] string name,
                    f64 value)

Nodes are topologically sorted with the goal last; the reader checks this (every tail comes
before its head) and refuses a forest that is not. An edge's features are its feature map
(the rule's scores are read and dropped: the decoder has already copied the weighted ones
into the edge). Byte offsets in error messages count from the start of the decompressed
archive.

The parsing is compiled (pyx/_cdec_forest.pyx; real forests read in 0.4 µs per edge, most of
it zlib, where Python ``struct`` over every field took 20-25 µs); it stops at the first fault
with a status, the field it was reading and the byte offset, and :func:`_error` below words
the message, reading the offending value back from the archive. tests/reference/cdec_forest.py is the original pure-Python reader, which
the compiled one equals, messages included (tests/formats/test_cdec_forest_compiled.py).
"""

from __future__ import annotations

import struct
import zlib

from .._ext import _cdec_forest as _k
from ..errors import InputError
from ..fileio import open_binary
from ..hypergraph import Hypergraph

#: The Boost archive library versions read (all lay out cdec's forests the same; see above).
LIBRARY_VERSIONS = range(10, 22)

_S, _F = _k.Status, _k.Field
_U16, _I16 = struct.Struct("<H"), struct.Struct("<h")
_I32, _U32, _U64, _F64 = struct.Struct("<i"), struct.Struct("<I"), struct.Struct("<Q"), struct.Struct("<d")

#: Boost class (the parser's BoostClass) -> its name in messages.
_CLASSES = {_k.BoostClass.HYPERGRAPH: "Hypergraph", _k.BoostClass.NODE: "Node", _k.BoostClass.EDGE: "Edge",
            _k.BoostClass.SMALL_VECTOR: "SmallVector", _k.BoostClass.SHARED_PTR: "shared_ptr",
            _k.BoostClass.SPARSE_VECTOR: "SparseVector", _k.BoostClass.PAIR: "pair"}

#: Field -> (what was expected, the count's format for COUNT errors). {v} / {e}: the node /
#: edge being read, {rule}: "rule <object id> (edge <e>)", {cls}: the class of a header.
_FIELDS = {
    _F.SIGNATURE_LENGTH: ("the archive signature length 22", None),
    _F.LIBRARY_VERSION_NUMBER: ("the Boost archive library version", None),
    _F.TYPE_SIZES: ("the sizes of int, long, float and double", None),
    _F.BYTE_ORDER_MARK: ("the byte-order mark 1", None),
    _F.CLASS_TRACKING: ("the tracking flag of class {cls}", None),
    _F.CLASS_VERSION: ("the version of class {cls}", None),
    _F.NODE_COUNT: ("the node count", None),
    _F.EDGE_COUNT: ("the edge count", None),
    _F.NODE_HASH: ("the hash of node {v}", None),
    _F.NODE_ID_NUMBER: ("the id of node {v}", None),
    _F.CATEGORY_LENGTH: ("the byte length of the category of node {v}", _U64),
    _F.IN_EDGE_COUNT_NUMBER: ("the in-edge count of node {v}", _U64),
    _F.OUT_EDGE_COUNT_NUMBER: ("the out-edge count of node {v}", _U64),
    _F.EDGE_HEAD: ("the head node of edge {e}", None),
    _F.TAIL_COUNT: ("the tail count of edge {e}", _U16),
    _F.RULE_CLASS_ID_NUMBER: ("the rule class id of edge {e}", None),
    _F.RULE_TRACKING: ("the tracking flag of the rule class", None),
    _F.RULE_VERSION: ("the version of the rule class", None),
    _F.RULE_OBJECT_ID: ("the rule object id of edge {e}", None),
    _F.LHS_LENGTH: ("the byte length of the left-hand side of {rule}", _U64),
    _F.SOURCE_LENGTH: ("the source length of {rule}", None),
    _F.SOURCE_MASK: ("the source non-terminal mask of {rule}", None),
    _F.SOURCE_SYMBOL_LENGTH: ("the byte length of a source symbol of {rule}", _U64),
    _F.TARGET_LENGTH: ("the target length of {rule}", None),
    _F.TARGET_MASK: ("the target non-terminal mask of {rule}", None),
    _F.TAIL_REFERENCE_NUMBER: ("a tail reference of {rule}", None),
    _F.WORD_LENGTH: ("the byte length of a target word of {rule}", _U64),
    _F.ARITY: ("the arity of {rule}", None),
    _F.SCORE_COUNT: ("the entry count of the scores of {rule}", _I32),
    _F.SCORE_NAME_LENGTH: ("the byte length of a feature name in the scores of {rule}", _U64),
    _F.SCORE_VALUE: ("the value of a feature in the scores of {rule}", None),
    _F.FEATURE_COUNT: ("the entry count of the features of edge {e}", _I32),
    _F.FEATURE_NAME_LENGTH: ("the byte length of a feature name in the features of edge {e}", _U64),
    _F.FEATURE_VALUE: ("the value of a feature in the features of edge {e}", None),
    _F.SPANS: ("the spans of edge {e}", None),
    _F.EDGE_ID_NUMBER: ("the id of edge {e}", None),
    _F.TRAILER: ("the edges_topo and is_linear_chain flags ending the archive", None),
}
_SIDES = ("source", "target")


def _error(parser, data: bytes, path: str) -> Exception:
    """The InputError (or MemoryError) for the parser's failure: the message the reference
    reader gives, with the value at fault read back from ``data``."""
    status, field, at, index, rule, cls, a, b = parser.error()
    if status == _S.MEMORY:
        return MemoryError(f"out of memory reading {path}")
    if status == _S.NO_INCOMING:
        return InputError(f"node {index!r} has no incoming edge", path)
    this_rule = f"rule {rule} (edge {index})"

    def fail(what: str, found: str) -> InputError:
        return InputError(f"expected {what} at byte {at} of the archive, found {found}", path)

    def ints(count_at: int, count: struct.Struct) -> list[int]:
        """The i32 list after a count at ``count_at``."""
        n = count.unpack_from(data, count_at)[0]
        return list(struct.unpack_from(f"<{n}i", data, count_at + count.size))

    if status in (_S.TRUNCATED, _S.COUNT):
        template, count = _FIELDS[field]
        what = template.format(v=index, e=index, rule=this_rule, cls=_CLASSES.get(cls))
        if status == _S.TRUNCATED:
            left = len(data) - at
            return fail(what, f"the end of the data ({left} byte{'s' if left != 1 else ''} left)")
        assert count is not None, field  # the kernel reports COUNT only for fields read with a count
        n = count.unpack_from(data, at)[0]
        left = len(data) - at - count.size
        return fail(what, f"{n}, more than the {left} bytes left can hold" if n > 0 else str(n))
    if status == _S.SIGNATURE:
        return fail("a Boost archive signature 'serialization::archive' (a cdec -O forest)", repr(data[at:at + 30]))
    if status == _S.LIBRARY_VERSION:
        return fail(f"Boost archive library version {LIBRARY_VERSIONS[0]} to {LIBRARY_VERSIONS[-1]} "
                    "(the versions whose layout of cdec's forests is known)", f"version {_U16.unpack_from(data, at)[0]}")
    if status == _S.SIZES:
        return fail("sizes 4 8 4 8 of int, long, float, double (a 64-bit archive)", " ".join(map(str, data[at:at + 4])))
    if status == _S.BYTE_ORDER:
        return fail("the little-endian byte-order mark 01 00 00 00", data[at:at + 4].hex(" "))
    if status == _S.CLASS_HEADER:
        return fail(f"class {_CLASSES[cls]} untracked at version {a}",
                    f"tracking flag {data[at]}, version {_U32.unpack_from(data, at + 1)[0]}")
    if status == _S.GRAPH_COUNTS:
        n_nodes, n_edges = struct.unpack_from("<ii", data, at)
        return fail("a node count >= 1 and an edge count that the rest of the archive can hold",
                    f"{n_nodes} nodes, {n_edges} edges in {len(data) - at - 8} bytes")
    if status == _S.NODE_ID:
        return fail(f"node id {index} (nodes in order)", str(_I32.unpack_from(data, at)[0]))
    if status == _S.EDGE_LIST:
        return fail(f"{('in', 'out')[a]}-edges of node {index} among the {parser.n_edges} edges",
                    str(ints(at - 8, _U64)))
    if status == _S.HEAD:
        return fail(f"the head of edge {index} among the {parser.n_nodes} nodes", str(_I32.unpack_from(data, at)[0]))
    if status == _S.TAILS:
        return fail(f"tails of edge {index} before its head node {a} (nodes in topological order)",
                    str(ints(at - 2, _U16)))
    if status == _S.NULL_RULE:
        return fail(f"a rule for edge {index}", "a null rule pointer")
    if status == _S.RULE_CLASS:
        return fail("a tracked rule class at version 0", f"class id {_I16.unpack_from(data, at)[0]}, "
                    f"tracking flag {data[at + 2]}, version {_U32.unpack_from(data, at + 3)[0]}")
    if status == _S.RULE_CLASS_ID:
        return fail(f"the rule class id {a} of edge {index}", str(_I16.unpack_from(data, at)[0]))
    if status == _S.RULE_ID:
        return fail(f"a rule object id of at most {a} for edge {index}", str(_U32.unpack_from(data, at)[0]))
    if status == _S.SIDE_LENGTH:
        return fail(f"a {_SIDES[a]} length of {this_rule} of at most {b}", str(_U32.unpack_from(data, at)[0]))
    if status == _S.SIDE_MASK:
        return fail(f"a {_SIDES[a]} non-terminal mask of {this_rule} within its "
                    f"{_U32.unpack_from(data, at - 4)[0]} positions", hex(_U64.unpack_from(data, at)[0]))
    if status == _S.TAIL_REFERENCE:
        return fail(f"a non-positive tail reference of {this_rule}", str(_I32.unpack_from(data, at)[0]))
    if status == _S.WORD_UTF8:
        raw = data[at:at + _U64.unpack_from(data, at - 8)[0]]
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return fail(f"a target word of {this_rule} in UTF-8", f"invalid UTF-8 at byte {at + exc.start}")
    if status == _S.RULE_TAILS:
        return fail(f"a rule whose target side refers to at most the {a} tails of edge {index}",
                    f"a reference to tail {b}")
    if status == _S.NAME_UTF8:
        return fail(f"a UTF-8 feature name in the features of edge {index}",
                    repr(data[at + 8:at + 8 + _U64.unpack_from(data, at)[0]]))
    if status == _S.VALUE:
        name = data[a + 8:a + 8 + _U64.unpack_from(data, a)[0]].decode("utf-8")
        return fail(f"a finite value of feature {name!r} in the features of edge {index}",
                    repr(_F64.unpack_from(data, at)[0]))
    if status == _S.EDGE_ID:
        return fail(f"edge id {index} (edges in order)", str(_I32.unpack_from(data, at)[0]))
    if status == _S.TRAILING:
        extra = len(data) - at
        return fail("the end of the archive", f"{extra} more byte{'s' if extra != 1 else ''}")
    if status == _S.IN_EDGES:
        ids, heads = ints(at - 8, _U64), parser.edge_heads()
        return fail(f"in-edges of node {index} with head {index}",
                    f"edges {ids} with heads {[int(heads[e]) for e in ids]}")
    if status == _S.IN_EDGE_COUNT:
        return fail(f"nodes whose in-edges cover the {parser.n_edges} edges", f"{a} in-edges listed")
    raise AssertionError(f"cdec forest parser status {status} has no message")


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
    parser = _k.ArchiveParser(data, LIBRARY_VERSIONS[0], LIBRARY_VERSIONS[-1])
    if parser.parse() != _S.OK:
        raise _error(parser, data, path)
    hg = Hypergraph(*parser.build(), path)
    hg.check()  # what HypergraphBuilder.build checks (a repeated feature summing to inf fails here)
    return hg
