# Stub for the compiled module built from pyx/_cdec_forest.pyx.
import enum

import numpy as np

class Status(enum.IntEnum):  # what stopped the parse (mtplug/formats/cdec_forest.py words each)
    OK = 0
    MEMORY = 1
    TRUNCATED = 2
    COUNT = 3
    SIGNATURE = 4
    LIBRARY_VERSION = 5
    SIZES = 6
    BYTE_ORDER = 7
    CLASS_HEADER = 8
    GRAPH_COUNTS = 9
    NODE_ID = 10
    EDGE_LIST = 11
    HEAD = 12
    TAILS = 13
    NULL_RULE = 14
    RULE_CLASS = 15
    RULE_CLASS_ID = 16
    RULE_ID = 17
    SIDE_LENGTH = 18
    SIDE_MASK = 19
    TAIL_REFERENCE = 20
    WORD_UTF8 = 21
    RULE_TAILS = 22
    NAME_UTF8 = 23
    VALUE = 24
    EDGE_ID = 25
    TRAILING = 26
    IN_EDGES = 27
    IN_EDGE_COUNT = 28
    NO_INCOMING = 29

class Field(enum.IntEnum):  # what was being read at a TRUNCATED or COUNT error
    SIGNATURE_LENGTH = 0
    LIBRARY_VERSION_NUMBER = 1
    TYPE_SIZES = 2
    BYTE_ORDER_MARK = 3
    CLASS_TRACKING = 4
    CLASS_VERSION = 5
    NODE_COUNT = 6
    EDGE_COUNT = 7
    NODE_HASH = 8
    NODE_ID_NUMBER = 9
    CATEGORY_LENGTH = 10
    IN_EDGE_COUNT_NUMBER = 11
    OUT_EDGE_COUNT_NUMBER = 12
    EDGE_HEAD = 13
    TAIL_COUNT = 14
    RULE_CLASS_ID_NUMBER = 15
    RULE_TRACKING = 16
    RULE_VERSION = 17
    RULE_OBJECT_ID = 18
    LHS_LENGTH = 19
    SOURCE_LENGTH = 20
    SOURCE_MASK = 21
    SOURCE_SYMBOL_LENGTH = 22
    TARGET_LENGTH = 23
    TARGET_MASK = 24
    TAIL_REFERENCE_NUMBER = 25
    WORD_LENGTH = 26
    ARITY = 27
    SCORE_COUNT = 28
    SCORE_NAME_LENGTH = 29
    SCORE_VALUE = 30
    FEATURE_COUNT = 31
    FEATURE_NAME_LENGTH = 32
    FEATURE_VALUE = 33
    SPANS = 34
    EDGE_ID_NUMBER = 35
    TRAILER = 36

class BoostClass(enum.IntEnum):  # the `cls` of a CLASS_HEADER error or a class field
    HYPERGRAPH = 0
    NODE = 1
    EDGE = 2
    SMALL_VECTOR = 3
    SHARED_PTR = 4
    SPARSE_VECTOR = 5
    PAIR = 6

class ArchiveParser:
    n_nodes: int  # as the archive declares them (0 until read)
    n_edges: int
    def __init__(
        self,
        data: bytes,  # const uint8_t[::1], the whole decompressed archive (kept)
        version_min: int,  # Boost archive library versions read
        version_max: int,
    ) -> None: ...
    def parse(self) -> int: ...  # a Status; once per parser
    def error(self) -> tuple[int, int, int, int, int, int, int, int]: ...
    # (status, field, byte offset, node or edge, rule object id, class, a, b)
    def edge_heads(self) -> np.ndarray: ...  # int32 [E], cdec's heads (for IN_EDGES)
    def build(
        self,
    ) -> tuple[
        int,  # nodes the goal reaches
        np.ndarray,  # node_edges int64 [N + 1]
        np.ndarray,  # edge_head int32 [E]
        np.ndarray,  # tail_indptr int64 [E + 1]
        np.ndarray,  # tails int32
        np.ndarray,  # rhs_indptr int64 [E + 1]
        np.ndarray,  # rhs int32
        np.ndarray,  # feat_indptr int64 [E + 1]
        np.ndarray,  # feat_ids int32
        np.ndarray,  # feat_values float64
        list[str],  # words
        list[str],  # feature names
    ]: ...  # after parse() returned OK
