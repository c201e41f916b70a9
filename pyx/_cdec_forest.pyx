# cdec -O forests: one pass over the decompressed Boost binary archive of cdec's
# Hypergraph, then the Hypergraph of what the goal reaches, as arrays.
#
# The layout, field by field, is documented in mtplug/formats/cdec_forest.py, which reads
# the file, calls ArchiveParser and words every error. The parser checks what the
# reference reader (tests/reference/cdec_forest.py) checks, in the same order, and on
# the first failure stops with a Status, the Field it was reading (for a truncated field
# or a count the data left cannot hold), the byte offset and the node, edge, rule or class
# being read: the wrapper reads the offending value back from the bytes at that offset.
#
# The Hypergraph is the one HypergraphBuilder.build makes of cdec's nodes and edges:
# * nodes renumbered in post-order of a depth-first search from the goal (cdec's last
#   node) that visits each node's tails in ascending order, nodes it does not reach
#   dropped; the edges of a node in archive order;
# * words and feature names numbered in the order the archive first uses them, by every
#   edge, reached or not (a rule's words the first time the rule is written);
# * an edge's features sorted by id, a name repeated in one edge summed in archive order,
#   starting from 0.0 (so a lone -0.0 becomes 0.0, as in the builder's dict).
# Words and feature names are interned as bytes (strict UTF-8 checked once per string).

from libc.stdint cimport int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcmp, memcpy, memset
from libc.math cimport isfinite

import numpy as np

from _growbuf cimport GrowBuf, growbuf_append, growbuf_free, growbuf_reserve
from _intern cimport InternTable, hash_bytes, intern_add, intern_find, intern_free, intern_init
from _utf8 cimport valid_utf8


cpdef enum Status:
    OK = 0
    MEMORY = 1              # out of memory
    TRUNCATED = 2           # `field` does not fit in the bytes left
    COUNT = 3               # `field` is a count of more items than the bytes left can hold
    SIGNATURE = 4           # not "serialization::archive" (at 0)
    LIBRARY_VERSION = 5     # outside [version_min, version_max]
    SIZES = 6               # sizes of int, long, float, double not 4 8 4 8
    BYTE_ORDER = 7          # byte-order mark not 1 (little-endian)
    CLASS_HEADER = 8        # class `cls` tracked or at another version (a: the version expected)
    GRAPH_COUNTS = 9        # node and edge counts the rest of the archive cannot hold
    NODE_ID = 10            # node `index` has another id
    EDGE_LIST = 11          # an in- (a = 0) or out- (a = 1) edge of node `index` out of range
    HEAD = 12               # head of edge `index` out of range
    TAILS = 13              # a tail of edge `index` not before its head (a: the head)
    NULL_RULE = 14          # edge `index` has a null rule pointer
    RULE_CLASS = 15         # the first rule pointer's class is not a tracked class at version 0
    RULE_CLASS_ID = 16      # another rule class id (a: the first one)
    RULE_ID = 17            # rule object id beyond the next new one (a: rules read so far)
    SIDE_LENGTH = 18        # a rule side longer than b = MAX_RULE_SIDE (a: 0 source, 1 target)
    SIDE_MASK = 19          # non-terminal mask bits beyond the side's length (a: side)
    TAIL_REFERENCE = 20     # a positive tail reference in a rule's target side
    WORD_UTF8 = 21          # a target word (at: its bytes) not in UTF-8
    RULE_TAILS = 22         # the rule refers to tail b of edge `index`'s a tails
    NAME_UTF8 = 23          # an edge's feature name (at: its entry) not in UTF-8
    VALUE = 24              # an edge's feature value (at) NaN or infinite (a: its entry)
    EDGE_ID = 25            # edge `index` has another id
    TRAILING = 26           # bytes after the archive's end (at)
    IN_EDGES = 27           # node `index` lists an in-edge with another head (at: the list)
    IN_EDGE_COUNT = 28      # the in-edge lists have a entries for the edges (at: the counts)
    NO_INCOMING = 29        # node `index`, reached from the goal, has no edge


# What was being read when the data ended (TRUNCATED) or a count did not fit (COUNT).
cpdef enum Field:
    SIGNATURE_LENGTH
    LIBRARY_VERSION_NUMBER
    TYPE_SIZES
    BYTE_ORDER_MARK
    CLASS_TRACKING          # of class `cls`
    CLASS_VERSION
    NODE_COUNT
    EDGE_COUNT
    NODE_HASH               # node `index`
    NODE_ID_NUMBER
    CATEGORY_LENGTH
    IN_EDGE_COUNT_NUMBER
    OUT_EDGE_COUNT_NUMBER
    EDGE_HEAD               # edge `index`
    TAIL_COUNT
    RULE_CLASS_ID_NUMBER
    RULE_TRACKING
    RULE_VERSION
    RULE_OBJECT_ID
    LHS_LENGTH              # rule `rule` of edge `index`
    SOURCE_LENGTH
    SOURCE_MASK
    SOURCE_SYMBOL_LENGTH
    TARGET_LENGTH
    TARGET_MASK
    TAIL_REFERENCE_NUMBER
    WORD_LENGTH
    ARITY
    SCORE_COUNT             # the rule's own scores
    SCORE_NAME_LENGTH
    SCORE_VALUE
    FEATURE_COUNT           # edge `index`'s features
    FEATURE_NAME_LENGTH
    FEATURE_VALUE
    SPANS
    EDGE_ID_NUMBER
    TRAILER


# Classes Boost writes a header for before their first object (the `cls` of errors).
cpdef enum BoostClass:
    HYPERGRAPH
    NODE
    EDGE
    SMALL_VECTOR
    SHARED_PTR
    SPARSE_VECTOR
    PAIR


cdef enum:
    N_CLASSES = 7
    # fewest bytes a node / an edge can take: absurd counts are refused before any loop
    MIN_NODE_BYTES = 8 + 4 + 8 + 8 + 8
    MIN_EDGE_BYTES = 4 + 2 + 2 + 4 + 4 + 8 + 4
    # the non-terminal masks are one u64, so no rule side can be longer
    MAX_RULE_SIDE = 64
    # feature-name ids remembered by position in the feature map (see feature_map)
    NAME_CACHE = 64


cdef struct Parser:
    const uint8_t* p
    int64_t n
    int64_t pos
    int64_t version_min, version_max
    # what an error names: set as the parser goes, copied by fail()
    int64_t index            # the node or edge being read
    int64_t rule             # the object id of the rule being read
    int cls                  # the class whose header is being read
    int status, field, err_cls
    int64_t at, err_index, err_rule, a, b
    uint8_t seen[N_CLASSES]  # class headers read
    # the archive's nodes and edges
    int64_t n_nodes, n_edges, counts_at
    int64_t* in_pos          # [N] offset of node v's in-edge ids (checked against the heads)
    int64_t* in_count        # [N]
    int32_t* head            # [E]
    int32_t* edge_rule       # [E]
    int64_t* tail_ptr        # [E + 1]
    int64_t* feat_ptr        # [E + 1]
    GrowBuf tails            # int32, cdec's node ids
    GrowBuf feat_ids         # int32, final feature ids (first use order), sorted per edge
    GrowBuf feat_vals        # float64
    # rules, by object id
    int64_t n_rules
    bint have_rule_class
    int16_t rule_class
    GrowBuf rule_ptr         # int64 [n_rules + 1]
    GrowBuf rule_rhs         # int32: word id >= 0, or -(k+1) for the k-th tail
    GrowBuf rule_need        # int64: largest tail referred to + 1
    InternTable words, names
    int32_t name_at[NAME_CACHE]  # id of the name last read at entry i of an edge's features
    # the nodes the goal reaches (order_nodes)
    int64_t* inc_ptr         # [N + 1] edges by head: inc_edges[inc_ptr[v]:inc_ptr[v + 1]]
    int32_t* inc_edges       # [E]
    int32_t* order           # [n_kept] cdec ids in the new order
    int32_t* new_id          # [N] new id, -1 if not reached
    int64_t n_kept, kept_edges, kept_tails, kept_rhs, kept_feats


# ---------------------------------------------------------------- reading fields

# Little-endian loads whatever the host's byte order (gcc turns them into single loads).
cdef inline uint16_t ld16(const uint8_t* s) noexcept nogil:
    return <uint16_t>(s[0] | (<uint16_t>s[1] << 8))


cdef inline uint32_t ld32(const uint8_t* s) noexcept nogil:
    return s[0] | (<uint32_t>s[1] << 8) | (<uint32_t>s[2] << 16) | (<uint32_t>s[3] << 24)


cdef inline uint64_t ld64(const uint8_t* s) noexcept nogil:
    return ld32(s) | (<uint64_t>ld32(s + 4) << 32)


cdef inline double ldf64(const uint8_t* s) noexcept nogil:
    cdef uint64_t u = ld64(s)
    cdef double d
    memcpy(&d, &u, 8)
    return d


cdef inline int fail(Parser* P, int status, int field, int64_t at) noexcept nogil:
    """Record the error (with the node, edge, rule and class being read); returns status."""
    P.status = status
    P.field = field
    P.at = at
    P.err_index = P.index
    P.err_rule = P.rule
    P.err_cls = P.cls
    return status


cdef inline int need(Parser* P, int64_t k, int field) noexcept nogil:
    """OK when ``k`` more bytes follow, else the truncation of ``field``."""
    if k <= P.n - P.pos:
        return OK
    return fail(P, TRUNCATED, field, P.pos)


cdef inline int skip(Parser* P, int64_t k, int field) noexcept nogil:
    if need(P, k, field) != OK:
        return P.status
    P.pos += k
    return OK


cdef inline int get_u8(Parser* P, int field, uint8_t* out) noexcept nogil:
    if need(P, 1, field) != OK:
        return P.status
    out[0] = P.p[P.pos]
    P.pos += 1
    return OK


cdef inline int get_u16(Parser* P, int field, uint16_t* out) noexcept nogil:
    if need(P, 2, field) != OK:
        return P.status
    out[0] = ld16(P.p + P.pos)
    P.pos += 2
    return OK


cdef inline int get_u32(Parser* P, int field, uint32_t* out) noexcept nogil:
    if need(P, 4, field) != OK:
        return P.status
    out[0] = ld32(P.p + P.pos)
    P.pos += 4
    return OK


cdef inline int get_i32(Parser* P, int field, int32_t* out) noexcept nogil:
    cdef uint32_t u
    if get_u32(P, field, &u) != OK:
        return P.status
    out[0] = <int32_t>u
    return OK


cdef inline int get_u64(Parser* P, int field, uint64_t* out) noexcept nogil:
    if need(P, 8, field) != OK:
        return P.status
    out[0] = ld64(P.p + P.pos)
    P.pos += 8
    return OK


cdef inline int get_count(Parser* P, int field, int width, int64_t item, int64_t* out) noexcept nogil:
    """A count (u16 for width 2, i32 for 4, u64 for 8) of items of at least ``item`` bytes
    each: COUNT at the count's offset unless it is >= 0 and the bytes after it can hold them."""
    cdef int64_t at = P.pos
    cdef uint64_t c
    if need(P, width, field) != OK:
        return P.status
    if width == 2:
        c = ld16(P.p + at)
    elif width == 4:
        if <int32_t>ld32(P.p + at) < 0:
            return fail(P, COUNT, field, at)
        c = ld32(P.p + at)
    else:
        c = ld64(P.p + at)
    P.pos = at + width
    if c > <uint64_t>((P.n - P.pos) // item):
        return fail(P, COUNT, field, at)
    out[0] = <int64_t>c
    return OK


cdef inline int skip_string(Parser* P, int field) noexcept nogil:
    """A string nobody reads (a category, a left-hand side, a source symbol)."""
    cdef int64_t k
    if get_count(P, field, 8, 1, &k) != OK:
        return P.status
    P.pos += k
    return OK


cdef int class_header(Parser* P, int cls, uint32_t version) noexcept nogil:
    """Boost's header before the first object of a class: not tracked, ``version``."""
    cdef int64_t at = P.pos
    cdef uint8_t tracking
    cdef uint32_t found
    if P.seen[cls]:
        return OK
    P.seen[cls] = 1
    P.cls = cls
    if get_u8(P, CLASS_TRACKING, &tracking) != OK or get_u32(P, CLASS_VERSION, &found) != OK:
        return P.status
    if tracking != 0 or found != version:
        P.a = version
        return fail(P, CLASS_HEADER, 0, at)
    return OK


cdef int intern(InternTable* t, const uint8_t* s, int64_t k, int32_t* out) noexcept nogil:
    """The id of ``s[:k]``, added if new: 0, -1 when not UTF-8, -2 when out of memory."""
    cdef uint64_t h = hash_bytes(<const char*>s, k)
    cdef int32_t i = intern_find(t, <const char*>s, k, h)
    if i < 0:
        if not valid_utf8(s, k):
            return -1
        i = intern_add(t, <const char*>s, k, h)
        if i < 0:
            return -2
    out[0] = i
    return 0


cdef inline bint same_string(const InternTable* t, int32_t i, const uint8_t* s, int64_t k) noexcept nogil:
    """Whether string ``i`` of the table is ``s[:k]``."""
    cdef const int64_t* offs = <const int64_t*>t.offsets.data
    return offs[i + 1] - offs[i] == k and memcmp(t.arena.data + offs[i], s, k) == 0


# ---------------------------------------------------------------- the archive


cdef int parse_header(Parser* P) noexcept nogil:
    cdef uint64_t sig_len
    cdef uint16_t version
    cdef uint8_t sizes[4]
    cdef int32_t mark
    cdef int k
    if get_u64(P, SIGNATURE_LENGTH, &sig_len) != OK:
        return P.status
    if sig_len != 22 or P.n < 30 or memcmp(P.p + 8, b"serialization::archive", 22) != 0:
        return fail(P, SIGNATURE, 0, 0)
    P.pos = 30
    if get_u16(P, LIBRARY_VERSION_NUMBER, &version) != OK:
        return P.status
    if version < P.version_min or version > P.version_max:
        return fail(P, LIBRARY_VERSION, 0, 30)
    for k in range(4):
        if get_u8(P, TYPE_SIZES, &sizes[k]) != OK:
            return P.status
    if sizes[0] != 4 or sizes[1] != 8 or sizes[2] != 4 or sizes[3] != 8:
        return fail(P, SIZES, 0, 32)
    if get_i32(P, BYTE_ORDER_MARK, &mark) != OK:
        return P.status
    if mark != 1:
        return fail(P, BYTE_ORDER, 0, 36)
    return OK


cdef int parse_nodes(Parser* P) noexcept nogil:
    cdef int64_t v, j, m, at
    cdef int32_t node_id, x
    cdef int kind
    for v in range(P.n_nodes):
        P.index = v
        if class_header(P, NODE, 0) != OK or skip(P, 8, NODE_HASH) != OK:
            return P.status
        at = P.pos
        if get_i32(P, NODE_ID_NUMBER, &node_id) != OK:
            return P.status
        if node_id != v:
            return fail(P, NODE_ID, 0, at)
        if skip_string(P, CATEGORY_LENGTH) != OK:
            return P.status
        for kind in range(2):
            if get_count(P, OUT_EDGE_COUNT_NUMBER if kind else IN_EDGE_COUNT_NUMBER, 8, 4, &m) != OK:
                return P.status
            at = P.pos
            for j in range(m):
                x = <int32_t>ld32(P.p + at + 4 * j)
                if x < 0 or x >= P.n_edges:
                    P.a = kind
                    return fail(P, EDGE_LIST, 0, at)
            if kind == 0:
                P.in_pos[v] = at
                P.in_count[v] = m
            P.pos = at + 4 * m
    return OK


cdef int rule_side(Parser* P, int side, uint32_t* length, uint64_t* mask) noexcept nogil:
    cdef int64_t at = P.pos
    if get_u32(P, TARGET_LENGTH if side else SOURCE_LENGTH, length) != OK:
        return P.status
    if length[0] > MAX_RULE_SIDE:
        P.a = side
        P.b = MAX_RULE_SIDE
        return fail(P, SIDE_LENGTH, 0, at)
    at = P.pos
    if get_u64(P, TARGET_MASK if side else SOURCE_MASK, mask) != OK:
        return P.status
    if length[0] < 64 and mask[0] >> length[0] != 0:
        P.a = side
        return fail(P, SIDE_MASK, 0, at)
    return OK


cdef int feature_map(Parser* P, bint edge) noexcept nogil:
    """A SparseVector: the edge's features (kept) or a rule's scores (read and dropped:
    their names are not decoded, their values not checked, as in the reference)."""
    cdef int f_name = FEATURE_NAME_LENGTH if edge else SCORE_NAME_LENGTH
    cdef int f_value = FEATURE_VALUE if edge else SCORE_VALUE
    cdef int64_t m, i, j, at, pos, k
    cdef uint64_t length
    cdef double value, acc
    cdef int32_t fid
    cdef int32_t* ids = NULL
    cdef double* vals = NULL
    cdef int rc
    if class_header(P, SPARSE_VECTOR, 0) != OK or \
            get_count(P, FEATURE_COUNT if edge else SCORE_COUNT, 4, 16, &m) != OK:
        return P.status
    if m > 0 and class_header(P, PAIR, 0) != OK:
        return P.status
    if edge:
        # m entries of >= 16 bytes fit in the data, so this is bounded by the file's size
        if growbuf_reserve(&P.feat_ids, m * sizeof(int32_t)) != 0 or \
                growbuf_reserve(&P.feat_vals, m * sizeof(double)) != 0:
            return fail(P, MEMORY, 0, P.pos)
        ids = <int32_t*>(P.feat_ids.data + P.feat_ids.size)
        vals = <double*>(P.feat_vals.data + P.feat_vals.size)
    for i in range(m):
        at = P.pos
        if P.n - at < 8:
            return fail(P, TRUNCATED, f_name, at)
        length = ld64(P.p + at)
        if length > <uint64_t>(P.n - at - 8):
            return fail(P, COUNT, f_name, at)
        pos = at + 8 + <int64_t>length
        if P.n - pos < 8:
            return fail(P, TRUNCATED, f_value, pos)
        value = ldf64(P.p + pos)
        P.pos = pos + 8
        if not edge:
            continue
        # cdec writes every edge's features in the same order, so the name at entry i is
        # nearly always the one the previous edge had there: one memcmp instead of a hash
        fid = P.name_at[i] if i < NAME_CACHE else -1
        if fid < 0 or not same_string(&P.names, fid, P.p + at + 8, <int64_t>length):
            rc = intern(&P.names, P.p + at + 8, <int64_t>length, &fid)
            if rc == -1:
                return fail(P, NAME_UTF8, 0, at)
            if rc == -2:
                return fail(P, MEMORY, 0, at)
            if i < NAME_CACHE:
                P.name_at[i] = fid
        if not isfinite(value):
            P.a = at
            return fail(P, VALUE, 0, pos)
        # insertion sort by id as the entries come (stable: a repeated name keeps its order)
        j = i
        while j > 0 and ids[j - 1] > fid:
            ids[j] = ids[j - 1]
            vals[j] = vals[j - 1]
            j -= 1
        ids[j] = fid
        vals[j] = value
    if not edge:
        return OK
    # merge repeated names: the builder's f.get(fid, 0.0) + value, in archive order
    i = 0
    k = 0
    while i < m:
        fid = ids[i]
        acc = 0.0
        while i < m and ids[i] == fid:
            acc = acc + vals[i]
            i += 1
        ids[k] = fid
        vals[k] = acc
        k += 1
    P.feat_ids.size += k * sizeof(int32_t)
    P.feat_vals.size += k * sizeof(double)
    return OK


cdef int parse_rule(Parser* P) noexcept nogil:
    """Rule ``P.rule`` (the next new object id): its target side and arity; the rest is skipped."""
    cdef uint32_t f_len, e_len
    cdef uint64_t f_mask, e_mask
    cdef int64_t k, at, length, need_tails = 0, end
    cdef int32_t ref, wid
    cdef int32_t* rhs
    cdef int rc
    if skip_string(P, LHS_LENGTH) != OK or rule_side(P, 0, &f_len, &f_mask) != OK:
        return P.status
    for k in range(f_len):
        if skip_string(P, SOURCE_SYMBOL_LENGTH) != OK:
            return P.status
    if rule_side(P, 1, &e_len, &e_mask) != OK:
        return P.status
    if growbuf_reserve(&P.rule_rhs, e_len * sizeof(int32_t)) != 0:
        return fail(P, MEMORY, 0, P.pos)
    rhs = <int32_t*>(P.rule_rhs.data + P.rule_rhs.size)
    for k in range(e_len):
        if e_mask >> k & 1:
            at = P.pos
            if get_i32(P, TAIL_REFERENCE_NUMBER, &ref) != OK:
                return P.status
            if ref > 0:
                return fail(P, TAIL_REFERENCE, 0, at)
            # -ref is the 0-based tail; stored as -(tail + 1). A reference past int32 never
            # gets used: no edge has that many tails, which the edge checks right away.
            rhs[k] = <int32_t>(<int64_t>ref - 1)
            if 1 - <int64_t>ref > need_tails:
                need_tails = 1 - <int64_t>ref
        else:
            if get_count(P, WORD_LENGTH, 8, 1, &length) != OK:
                return P.status
            at = P.pos
            P.pos += length
            rc = intern(&P.words, P.p + at, length, &wid)
            if rc == -1:
                return fail(P, WORD_UTF8, 0, at)
            if rc == -2:
                return fail(P, MEMORY, 0, at)
            rhs[k] = wid
    if skip(P, 1, ARITY) != OK or feature_map(P, False) != OK:
        return P.status
    P.rule_rhs.size += e_len * sizeof(int32_t)
    end = P.rule_rhs.size // sizeof(int32_t)
    if growbuf_append(&P.rule_ptr, &end, sizeof(int64_t)) != 0 or \
            growbuf_append(&P.rule_need, &need_tails, sizeof(int64_t)) != 0:
        return fail(P, MEMORY, 0, P.pos)
    P.n_rules += 1
    return OK


cdef int parse_edges(Parser* P) noexcept nogil:
    cdef int64_t e, j, at, n_tails
    cdef int32_t head, t, edge_id
    cdef int32_t* tails
    cdef int16_t cid
    cdef uint8_t tracking
    cdef uint32_t version, oid
    P.tail_ptr[0] = 0
    P.feat_ptr[0] = 0
    for e in range(P.n_edges):
        P.index = e
        if class_header(P, EDGE, 0) != OK:
            return P.status
        at = P.pos
        if get_i32(P, EDGE_HEAD, &head) != OK:
            return P.status
        if head < 0 or head >= P.n_nodes:
            return fail(P, HEAD, 0, at)
        if class_header(P, SMALL_VECTOR, 0) != OK or get_count(P, TAIL_COUNT, 2, 4, &n_tails) != OK:
            return P.status
        at = P.pos
        if growbuf_reserve(&P.tails, n_tails * sizeof(int32_t)) != 0:
            return fail(P, MEMORY, 0, at)
        tails = <int32_t*>(P.tails.data + P.tails.size)
        for j in range(n_tails):
            t = <int32_t>ld32(P.p + at + 4 * j)
            if t < 0 or t >= head:
                P.a = head
                return fail(P, TAILS, 0, at)
            tails[j] = t
        P.tails.size += n_tails * sizeof(int32_t)
        P.pos = at + 4 * n_tails
        P.tail_ptr[e + 1] = P.tail_ptr[e] + n_tails
        # the rule: a shared_ptr, its class described before the first one
        if class_header(P, SHARED_PTR, 1) != OK:
            return P.status
        at = P.pos
        if need(P, 2, RULE_CLASS_ID_NUMBER) != OK:
            return P.status
        cid = <int16_t>ld16(P.p + at)
        P.pos += 2
        if cid == -1:
            return fail(P, NULL_RULE, 0, at)
        if not P.have_rule_class:
            if get_u8(P, RULE_TRACKING, &tracking) != OK or get_u32(P, RULE_VERSION, &version) != OK:
                return P.status
            if cid < 0 or tracking != 1 or version != 0:
                return fail(P, RULE_CLASS, 0, at)
            P.have_rule_class = True
            P.rule_class = cid
        elif cid != P.rule_class:
            P.a = P.rule_class
            return fail(P, RULE_CLASS_ID, 0, at)
        at = P.pos
        if get_u32(P, RULE_OBJECT_ID, &oid) != OK:
            return P.status
        if oid == P.n_rules:
            P.rule = oid
            if parse_rule(P) != OK:
                return P.status
        elif oid > P.n_rules:
            P.a = P.n_rules
            return fail(P, RULE_ID, 0, at)
        if (<int64_t*>P.rule_need.data)[oid] > n_tails:
            P.a = n_tails
            P.b = (<int64_t*>P.rule_need.data)[oid]
            return fail(P, RULE_TAILS, 0, at)
        P.edge_rule[e] = <int32_t>oid
        if feature_map(P, True) != OK:
            return P.status
        P.feat_ptr[e + 1] = P.feat_ids.size // sizeof(int32_t)
        if skip(P, 8, SPANS) != OK:
            return P.status
        at = P.pos
        if get_i32(P, EDGE_ID_NUMBER, &edge_id) != OK:
            return P.status
        if edge_id != e:
            return fail(P, EDGE_ID, 0, at)
        P.head[e] = head
    if skip(P, 8, TRAILER) != OK:
        return P.status
    if P.pos != P.n:
        return fail(P, TRAILING, 0, P.pos)
    return OK


cdef int check_in_edges(Parser* P) noexcept nogil:
    """Each node's in-edge list names edges whose head it is, and the lists cover E entries."""
    cdef int64_t v, j, listed = 0
    cdef int32_t x
    for v in range(P.n_nodes):
        P.index = v
        for j in range(P.in_count[v]):
            x = <int32_t>ld32(P.p + P.in_pos[v] + 4 * j)
            if P.head[x] != v:
                return fail(P, IN_EDGES, 0, P.in_pos[v])
        listed += P.in_count[v]
    if listed != P.n_edges:
        P.a = listed
        return fail(P, IN_EDGE_COUNT, 0, P.counts_at)
    return OK


cdef int parse_archive(Parser* P) noexcept nogil:
    cdef int32_t n_nodes, n_edges
    cdef int64_t left
    if parse_header(P) != OK:
        return P.status
    if class_header(P, HYPERGRAPH, 0) != OK:
        return P.status
    P.counts_at = P.pos
    if get_i32(P, NODE_COUNT, &n_nodes) != OK or get_i32(P, EDGE_COUNT, &n_edges) != OK:
        return P.status
    left = P.n - P.pos
    if n_nodes < 1 or n_edges < 0 or \
            <int64_t>n_nodes * MIN_NODE_BYTES + <int64_t>n_edges * MIN_EDGE_BYTES > left:
        return fail(P, GRAPH_COUNTS, 0, P.counts_at)
    P.n_nodes = n_nodes
    P.n_edges = n_edges
    # bounded by the file's size (the check above)
    P.in_pos = <int64_t*>malloc(n_nodes * sizeof(int64_t))
    P.in_count = <int64_t*>malloc(n_nodes * sizeof(int64_t))
    P.head = <int32_t*>calloc(n_edges + 1, sizeof(int32_t))
    P.edge_rule = <int32_t*>malloc((n_edges + 1) * sizeof(int32_t))
    P.tail_ptr = <int64_t*>malloc((n_edges + 1) * sizeof(int64_t))
    P.feat_ptr = <int64_t*>malloc((n_edges + 1) * sizeof(int64_t))
    if P.in_pos == NULL or P.in_count == NULL or P.head == NULL or P.edge_rule == NULL or \
            P.tail_ptr == NULL or P.feat_ptr == NULL:
        return fail(P, MEMORY, 0, P.pos)
    if parse_nodes(P) != OK or parse_edges(P) != OK:
        return P.status
    return check_in_edges(P)


# ---------------------------------------------------------------- the nodes the goal reaches


cdef int order_nodes(Parser* P) noexcept nogil:
    """HypergraphBuilder.build's order: post-order of a depth-first search from the goal
    over each node's tails (of all its edges) in ascending order; then the sizes of the
    kept arrays. NO_INCOMING for the first node in that order without an edge."""
    cdef int64_t N = P.n_nodes, E = P.n_edges, T = P.tail_ptr[P.n_edges], v, e, x, y, k, top
    cdef int32_t t, w
    cdef const int32_t* tails = <const int32_t*>P.tails.data
    cdef int64_t* fill = NULL
    cdef int64_t* tp = NULL       # [N + 1] tails of node v's edges, ascending: nt[tp[v]:tp[v + 1]]
    cdef int32_t* nt = NULL
    cdef int64_t* bp = NULL       # [N + 1] heads of the edges with tail t: by_tail[bp[t]:bp[t + 1]]
    cdef int32_t* by_tail = NULL
    cdef int32_t* stack = NULL
    cdef int64_t* stack_k = NULL
    cdef uint8_t* state = NULL    # 0 new, 1 on the stack, 2 done
    cdef const int64_t* rule_ptr = <const int64_t*>P.rule_ptr.data
    cdef int rc = OK
    P.inc_ptr = <int64_t*>calloc(N + 1, sizeof(int64_t))
    P.inc_edges = <int32_t*>malloc((E + 1) * sizeof(int32_t))
    P.order = <int32_t*>malloc(N * sizeof(int32_t))
    P.new_id = <int32_t*>malloc(N * sizeof(int32_t))
    fill = <int64_t*>malloc((N + 1) * sizeof(int64_t))
    tp = <int64_t*>calloc(N + 1, sizeof(int64_t))
    stack = <int32_t*>malloc(N * sizeof(int32_t))
    stack_k = <int64_t*>malloc(N * sizeof(int64_t))
    state = <uint8_t*>calloc(N, sizeof(uint8_t))
    bp = <int64_t*>calloc(N + 1, sizeof(int64_t))
    nt = <int32_t*>malloc((T + 1) * sizeof(int32_t))
    by_tail = <int32_t*>malloc((T + 1) * sizeof(int32_t))
    if P.inc_ptr == NULL or P.inc_edges == NULL or P.order == NULL or P.new_id == NULL or \
            fill == NULL or tp == NULL or stack == NULL or stack_k == NULL or state == NULL or \
            bp == NULL or nt == NULL or by_tail == NULL:
        rc = fail(P, MEMORY, 0, P.n)
    if rc == OK:
        # edges by head, in archive order (a counting sort)
        for e in range(E):
            P.inc_ptr[P.head[e] + 1] += 1
            tp[P.head[e] + 1] += P.tail_ptr[e + 1] - P.tail_ptr[e]
        for y in range(T):
            bp[tails[y] + 1] += 1
        for v in range(N):
            P.inc_ptr[v + 1] += P.inc_ptr[v]
            tp[v + 1] += tp[v]
            bp[v + 1] += bp[v]
            fill[v] = P.inc_ptr[v]
        for e in range(E):
            P.inc_edges[fill[P.head[e]]] = <int32_t>e
            fill[P.head[e]] += 1
        # each node's tails in ascending order without a sort: group the (head, tail)
        # pairs by tail, then deal them out to the heads in tail order
        for v in range(N):
            fill[v] = bp[v]
        for e in range(E):
            for y in range(P.tail_ptr[e], P.tail_ptr[e + 1]):
                by_tail[fill[tails[y]]] = P.head[e]
                fill[tails[y]] += 1
        for v in range(N):
            fill[v] = tp[v]
        for t in range(N):
            for y in range(bp[t], bp[t + 1]):
                nt[fill[by_tail[y]]] = t
                fill[by_tail[y]] += 1
        # depth-first search from the goal; a repeated tail is done by its second visit
        for v in range(N):
            P.new_id[v] = -1
        top = 0
        stack[0] = <int32_t>(N - 1)
        stack_k[0] = tp[N - 1]
        state[N - 1] = 1
        while top >= 0:
            w = stack[top]
            k = stack_k[top]
            if k < tp[w + 1]:
                stack_k[top] = k + 1
                t = nt[k]
                if state[t] == 0:   # never 1: every tail comes before its head
                    state[t] = 1
                    top += 1
                    stack[top] = t
                    stack_k[top] = tp[t]
            else:
                top -= 1
                state[w] = 2
                P.new_id[w] = <int32_t>P.n_kept
                P.order[P.n_kept] = w
                P.n_kept += 1
        for x in range(P.n_kept):
            v = P.order[x]
            if P.inc_ptr[v + 1] == P.inc_ptr[v]:
                P.index = v
                rc = fail(P, NO_INCOMING, 0, P.n)
                break
            for k in range(P.inc_ptr[v], P.inc_ptr[v + 1]):
                e = P.inc_edges[k]
                P.kept_edges += 1
                P.kept_tails += P.tail_ptr[e + 1] - P.tail_ptr[e]
                P.kept_rhs += rule_ptr[P.edge_rule[e] + 1] - rule_ptr[P.edge_rule[e]]
                P.kept_feats += P.feat_ptr[e + 1] - P.feat_ptr[e]
    free(fill)
    free(tp)
    free(nt)
    free(bp)
    free(by_tail)
    free(stack)
    free(stack_k)
    free(state)
    return rc


# ---------------------------------------------------------------- Python API


cdef list _strings(InternTable* t):
    cdef const int64_t* offs = <const int64_t*>t.offsets.data
    cdef Py_ssize_t i
    data = t.arena.data[:t.arena.size] if t.arena.size else b""
    return [data[offs[i]:offs[i + 1]].decode("utf-8") for i in range(t.n)]


cdef class ArchiveParser:
    """Parses one decompressed archive: :meth:`parse`, then :meth:`build` or :meth:`error`."""
    cdef Parser P
    cdef const uint8_t[::1] data
    cdef int stage          # 0 new, 1 parsing (without the GIL), 2 parsed

    def __cinit__(self):
        memset(&self.P, 0, sizeof(Parser))

    def __init__(self, const uint8_t[::1] data, int64_t version_min, int64_t version_max):
        """``data``: the whole archive (kept by the parser); Boost archive library versions
        outside ``version_min`` .. ``version_max`` are refused (LIBRARY_VERSION)."""
        cdef int64_t zero = 0
        cdef int i
        self.data = data
        self.P.p = &data[0] if data.shape[0] > 0 else NULL
        self.P.n = data.shape[0]
        self.P.version_min = version_min
        self.P.version_max = version_max
        self.P.cls = HYPERGRAPH
        for i in range(NAME_CACHE):
            self.P.name_at[i] = -1
        if intern_init(&self.P.words, 256) != 0 or intern_init(&self.P.names, 64) != 0 or \
                growbuf_append(&self.P.rule_ptr, &zero, sizeof(int64_t)) != 0:
            raise MemoryError()

    def __dealloc__(self):
        free(self.P.in_pos)
        free(self.P.in_count)
        free(self.P.head)
        free(self.P.edge_rule)
        free(self.P.tail_ptr)
        free(self.P.feat_ptr)
        growbuf_free(&self.P.tails)
        growbuf_free(&self.P.feat_ids)
        growbuf_free(&self.P.feat_vals)
        growbuf_free(&self.P.rule_ptr)
        growbuf_free(&self.P.rule_rhs)
        growbuf_free(&self.P.rule_need)
        intern_free(&self.P.words)
        intern_free(&self.P.names)
        free(self.P.inc_ptr)
        free(self.P.inc_edges)
        free(self.P.order)
        free(self.P.new_id)

    def parse(self):
        """Read the archive and order the nodes the goal reaches; a Status (OK = 0)."""
        cdef int st
        if self.stage != 0:
            raise RuntimeError("ArchiveParser.parse runs once")
        self.stage = 1
        with nogil:
            st = parse_archive(&self.P)
            if st == OK:
                st = order_nodes(&self.P)
        self.stage = 2
        return st

    def error(self):
        """(status, field, at, index, rule, cls, a, b) of the failed parse (see Status)."""
        cdef Parser* P = &self.P
        return (P.status, P.field, P.at, P.err_index, P.err_rule, P.err_cls, P.a, P.b)

    @property
    def n_nodes(self):
        """The node count the archive declares (0 before it is read)."""
        return self.P.n_nodes

    @property
    def n_edges(self):
        return self.P.n_edges

    def edge_heads(self):
        """cdec's head node of every edge (int32 [E]; 0 for the edges not read yet)."""
        cdef int64_t e, n = self.P.n_edges if self.stage == 2 and self.P.head != NULL else 0
        out = np.empty(n, dtype=np.int32)
        cdef int32_t[::1] o = out
        for e in range(n):
            o[e] = self.P.head[e]
        return out

    def build(self):
        """The Hypergraph's arrays after a successful parse: (n_nodes, node_edges,
        edge_head, tail_indptr, tails, rhs_indptr, rhs, feat_indptr, feat_ids,
        feat_values, words, feature_names) as mtplug.hypergraph lays them out."""
        cdef Parser* P = &self.P
        if self.stage != 2 or P.status != OK:
            raise RuntimeError("ArchiveParser.build needs a successful parse")
        node_edges = np.empty(P.n_kept + 1, dtype=np.int64)
        edge_head = np.empty(P.kept_edges, dtype=np.int32)
        tail_indptr = np.empty(P.kept_edges + 1, dtype=np.int64)
        tails = np.empty(P.kept_tails, dtype=np.int32)
        rhs_indptr = np.empty(P.kept_edges + 1, dtype=np.int64)
        rhs = np.empty(P.kept_rhs, dtype=np.int32)
        feat_indptr = np.empty(P.kept_edges + 1, dtype=np.int64)
        feat_ids = np.empty(P.kept_feats, dtype=np.int32)
        feat_values = np.empty(P.kept_feats, dtype=np.float64)
        cdef int64_t[::1] o_node_edges = node_edges, o_tail_indptr = tail_indptr
        cdef int64_t[::1] o_rhs_indptr = rhs_indptr, o_feat_indptr = feat_indptr
        cdef int32_t[::1] o_edge_head = edge_head, o_tails = tails, o_rhs = rhs, o_feat_ids = feat_ids
        cdef double[::1] o_feat_values = feat_values
        cdef const int32_t* in_tails = <const int32_t*>P.tails.data
        cdef const int64_t* rule_ptr = <const int64_t*>P.rule_ptr.data
        cdef const int32_t* rule_rhs = <const int32_t*>P.rule_rhs.data
        cdef const int32_t* in_ids = <const int32_t*>P.feat_ids.data
        cdef const double* in_vals = <const double*>P.feat_vals.data
        cdef int64_t i, x, y, e, j = 0, nt = 0, nr = 0, nf = 0
        cdef int32_t v
        with nogil:
            o_node_edges[0] = 0
            o_tail_indptr[0] = 0
            o_rhs_indptr[0] = 0
            o_feat_indptr[0] = 0
            for i in range(P.n_kept):
                v = P.order[i]
                for x in range(P.inc_ptr[v], P.inc_ptr[v + 1]):
                    e = P.inc_edges[x]
                    o_edge_head[j] = <int32_t>i
                    for y in range(P.tail_ptr[e], P.tail_ptr[e + 1]):
                        o_tails[nt] = P.new_id[in_tails[y]]
                        nt += 1
                    for y in range(rule_ptr[P.edge_rule[e]], rule_ptr[P.edge_rule[e] + 1]):
                        o_rhs[nr] = rule_rhs[y]
                        nr += 1
                    for y in range(P.feat_ptr[e], P.feat_ptr[e + 1]):
                        o_feat_ids[nf] = in_ids[y]
                        o_feat_values[nf] = in_vals[y]
                        nf += 1
                    j += 1
                    o_tail_indptr[j] = nt
                    o_rhs_indptr[j] = nr
                    o_feat_indptr[j] = nf
                o_node_edges[i + 1] = j
        return (P.n_kept, node_edges, edge_head, tail_indptr, tails, rhs_indptr, rhs, feat_indptr, feat_ids,
                feat_values, _strings(&P.words), _strings(&P.names))
