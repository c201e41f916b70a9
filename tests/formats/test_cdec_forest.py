"""cdec -O forests (gzipped Boost binary archives of cdec's Hypergraph).

The real files are cdec's own test data (training/dpmert/test_data, ../shared/data/cdec-forests).
Byte offsets patched below were read off a hex dump of test-ch-inside.bin.gz decompressed;
``_patch`` checks the old bytes first, so a wrong offset fails loudly instead of testing nothing.
"""

from __future__ import annotations

import gzip
import math
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplug.errors import InputError
from mtplug.formats.cdec_forest import read_cdec_forest

FILES = ["0.bin.gz", "1.bin.gz", "test-ch-inside.bin.gz", "test-zero-origin.bin.gz"]
#: (nodes, edges) as cdec wrote them; every node is reachable from the goal, so none is dropped.
COUNTS = {"0.bin.gz": (350, 1026), "1.bin.gz": (2197, 14141),
          "test-ch-inside.bin.gz": (6, 8), "test-zero-origin.bin.gz": (7, 10)}
#: Boost archive library version -> the first Boost release writing it (boostorg/serialization
#: src/basic_archive.cpp at each release tag; 21 is develop since PR #354, 2026-07-21).
LIBRARY_VERSIONS = {10: "1.53", 11: "1.56", 12: "1.58", 13: "1.59", 14: "1.60", 15: "1.64", 16: "1.66",
                    17: "1.68", 18: "1.73", 19: "1.76", 20: "1.84", 21: "PR #354"}
#: The dpmert origin of the shared README (every other feature weighs 0).
ORIGIN = {"WordPenalty": 4.25, "LanguageModel": -1.1165, "PhraseModel_0": -0.96, "PhraseModel_1": -0.65,
          "PhraseModel_2": -0.77, "PassThrough": -10.0}
#: Viterbi strings under ORIGIN, computed by ``_viterbi`` below when this reader was written;
#: compare the references c2e.txt.0-3 (line 1: "australia reopens embassy in manila", ...).
ONE_BEST = {
    "0.bin.gz": (-12.835750576, "australia to open embassy in manila"),
    "1.bin.gz": (-58.95597249242, "( 2 ( afp ) - manila ) today to reopen its embassy in the philippines , "
                                  "australia , seven weeks ago , the embassy closed because of the so - called "
                                  "clear the threat of terrorist attacks ."),
}


@pytest.fixture(scope="module")
def forests(shared_data):
    d = shared_data / "cdec-forests"
    return {name: read_cdec_forest(d / name) for name in FILES}


@pytest.fixture(scope="module")
def ch_inside(shared_data) -> bytes:
    """test-ch-inside.bin.gz decompressed (1424 bytes, 6 nodes, 8 edges)."""
    return gzip.decompress((shared_data / "cdec-forests" / "test-ch-inside.bin.gz").read_bytes())


def _viterbi(hg, weights):
    """(best score, its string): max over derivations of weights . features, first edge wins ties."""
    best, arg = [0.0] * hg.n_nodes, [0] * hg.n_nodes
    for v in range(hg.n_nodes):
        scores = [(sum(weights.get(k, 0.0) * x for k, x in hg.edge_features(e).items())
                   + sum(best[int(t)] for t in hg.edge_tails(e)), e) for e in hg.in_edges(v)]
        best[v], arg[v] = max(scores, key=lambda s: s[0])

    def words(v):
        e = arg[v]
        tails = hg.edge_tails(e)
        for r in hg.edge_rhs(e):
            yield from (words(int(tails[-r - 1])) if r < 0 else [hg.words[r]])

    return best[hg.goal], " ".join(words(hg.goal))


def _patch(data: bytes, at: int, old: bytes, new: bytes) -> bytes:
    assert data[at:at + len(old)] == old, data[at:at + len(old)].hex(" ")
    return data[:at] + new + data[at + len(old):]


# ----------------------------------------------------------------------------- the real files


@pytest.mark.parametrize("name", FILES)
def test_real_forests_load_with_cdec_counts(forests, name):
    hg = forests[name]
    assert (hg.n_nodes, hg.n_edges) == COUNTS[name]
    hg.check()
    heads = hg.edge_head.repeat(hg.tail_indptr[1:] - hg.tail_indptr[:-1])
    assert (hg.tails < heads).all()


def test_feature_names_of_the_dpmert_forests(forests):
    names0, names1 = set(forests["0.bin.gz"].feature_names), set(forests["1.bin.gz"].feature_names)
    assert {"WordPenalty", "LanguageModel", "PhraseModel_0", "PhraseModel_1", "PhraseModel_2", "Glue"} <= names0
    assert set(ORIGIN) | {"Glue"} == names1  # PassThrough: sentence 1 has untranslated words, sentence 0 none
    assert "PassThrough" not in names0


@pytest.mark.parametrize("name", ["0.bin.gz", "1.bin.gz"])
def test_viterbi_string_under_the_dpmert_origin(forests, name):
    score, text = _viterbi(forests[name], ORIGIN)
    assert (score, text) == (pytest.approx(ONE_BEST[name][0], abs=1e-8), ONE_BEST[name][1])


def test_ch_inside_edges_map_rules_and_features(forests):
    hg = forests["test-ch-inside.bin.gz"]
    edges = {}
    for e in range(hg.n_edges):
        tails = [int(t) for t in hg.edge_tails(e)]
        rhs = tuple(hg.words[r] if r >= 0 else ("tail", -r - 1) for r in hg.edge_rhs(e))
        edges[rhs] = (len(tails), hg.edge_features(e))
    # cdec: [X] ||| [X,1] B [X,2] ||| [1] B [2] with e_ = (0, B, -1): -v is the 0-based tail
    assert edges[(("tail", 0), "B", ("tail", 1))] == (2, {"f1": pytest.approx(-1.2), "f2": pytest.approx(-0.2)})
    assert edges[(("tail", 0), "b", ("tail", 1))] == (2, {"f1": pytest.approx(-0.5), "f2": pytest.approx(-1.3)})
    assert edges[("a",)] == (0, {})
    assert edges[("c",)] == (0, {"f2": -1.0})
    assert edges[("Z", ("tail", 0))] == (1, {"f1": pytest.approx(-0.7), "f2": pytest.approx(-0.9)})
    assert len(edges) == 8


def test_edge_features_not_rule_scores(forests):
    hg = forests["test-zero-origin.bin.gz"]
    by_word = {hg.words[int(hg.edge_rhs(e)[0])]: e for e in range(hg.n_edges) if len(hg.edge_rhs(e)) == 1
               and hg.edge_rhs(e)[0] >= 0}
    # the rule's scores hold XFE=0 and LabelledFE~-2e-8 too; the edge map has only what the decoder kept
    assert hg.edge_features(by_word["funny"]) == pytest.approx(
        {"LHSProb": 3.98479, "SingletonRule": 1.0, "LexE2F": 1.79176, "LexF2E": 3.21888,
         "GenerativeProb": 11.1681, "RulePenalty": 1.0, "XEF": 2.30259, "LabelledEF": 2.30259}, abs=1e-5)
    goal_edge = hg.in_edges(hg.goal)[0]
    assert hg.edge_features(goal_edge) == {}
    assert list(hg.edge_rhs(goal_edge)) == [-1]


def test_plain_archive_reads_like_the_gzipped_one(write, ch_inside, forests):
    hg = read_cdec_forest(write("0.bin", ch_inside))
    ref = forests["test-ch-inside.bin.gz"]
    assert hg.words == ref.words and (hg.rhs == ref.rhs).all() and (hg.feat_values == ref.feat_values).all()


# ----------------------------------------------------------------------------- refused inputs

# (what, offset, old bytes, new bytes, fragments of the message)
PATCHES = [
    ("library version", 0x1E, b"\x0a\x00", b"\x16\x00", ["library version 10 to 21", "byte 30", "version 22"]),
    ("32-bit long", 0x20, b"\x04\x08\x04\x08", b"\x04\x04\x04\x08", ["sizes 4 8 4 8", "byte 32"]),
    ("absurd node count", 0x2D, b"\x06\x00\x00\x00", b"\xff\xff\xff\x7f", ["node count", "byte 45", "2147483647"]),
    ("node out of order", 0x6F, b"\x01\x00\x00\x00", b"\x02\x00\x00\x00", ["node id 1", "byte 111"]),
    ("tail not before head", 0x1CB, b"\x00\x00\x00\x00", b"\x01\x00\x00\x00",
     ["tails of edge 1 before its head node 1", "byte 459", "[1]"]),
    ("rule class id", 0x1CF, b"\x06\x00", b"\x07\x00", ["rule class id 6 of edge 1", "byte 463"]),
    ("rule object id", 0x1D1, b"\x01\x00\x00\x00", b"\x05\x00\x00\x00", ["rule object id of at most 1", "byte 465"]),
    ("null rule", 0x1CF, b"\x06\x00", b"\xff\xff", ["a rule for edge 1", "null rule pointer"]),
    ("tail reference beyond the tails", 0x39F, b"\xff\xff\xff\xff", b"\xfe\xff\xff\xff",
     ["at most the 2 tails of edge 4", "reference to tail 3"]),
    ("positive tail reference", 0x39F, b"\xff\xff\xff\xff", b"\x05\x00\x00\x00", ["non-positive tail reference"]),
    ("NaN feature", 0x22D, struct.pack("<d", -0.8), struct.pack("<d", math.nan),
     ["finite value of feature 'f1' in the features of edge 1", "byte 557"]),
    ("invalid UTF-8 word", 0x1AA, b"a", b"\xff", ["target word of rule 0", "invalid UTF-8 at byte 426"]),
    ("in-edges disagree with heads", 0x84, b"\x01\x00\x00\x00", b"\x02\x00\x00\x00",
     ["in-edges of node 1 with head 1", "byte 132"]),
]


@pytest.mark.parametrize("what, at, old, new, fragments", PATCHES, ids=[p[0] for p in PATCHES])
def test_corrupt_archive_names_what_and_where(write, input_error, ch_inside, what, at, old, new, fragments):
    path = write("0.bin.gz", gzip.compress(_patch(ch_inside, at, old, new)))
    with input_error(path, None, *fragments):
        read_cdec_forest(path)


def test_trailing_bytes_are_refused(write, input_error, ch_inside):
    path = write("0.bin", ch_inside + b"\x00")
    with input_error(path, None, "expected the end of the archive at byte 1424", "found 1 more byte"):
        read_cdec_forest(path)


def test_not_a_boost_archive(write, input_error):
    path = write("0.bin.gz", gzip.compress(b'{"rules":[1,"[X] ||| a ||| b"]}'))
    with input_error(path, None, "Boost archive signature", "byte 0"):
        read_cdec_forest(path)


def test_truncations_are_refused(write, ch_inside):
    """Every cut through the header, the nodes and the first two edges (where every class
    header occurs), then every 5th byte: at each, a clean InputError."""
    path = write("0.bin", b"")
    with open(path, "r+b") as fh:
        for n in [*range(0x253), *range(0x253, len(ch_inside), 5)]:
            fh.seek(0)
            fh.truncate()
            fh.write(ch_inside[:n])
            fh.flush()
            with pytest.raises(InputError, match=r"expected .* at byte \d+ of the archive") as info:
                read_cdec_forest(path)
            assert info.value.path == path and info.value.line is None


def test_truncated_gzip_is_refused(write, input_error, shared_data):
    z = (shared_data / "cdec-forests" / "0.bin.gz").read_bytes()
    path = write("0.bin.gz", z[: len(z) // 2])
    with input_error(path, None, "corrupt or truncated compressed data"):
        read_cdec_forest(path)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes_are_refused(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("rand") / "0.bin"
    path.write_bytes(data)
    with pytest.raises(InputError) as info:
        read_cdec_forest(path)
    assert info.value.path == str(path) and info.value.line is None


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_random_edits_of_a_real_archive_read_or_refuse(tmp_path_factory, ch_inside, data):
    """Overwrite a few bytes: the result is a valid forest or an InputError, never anything else."""
    raw = bytearray(ch_inside)
    for _ in range(data.draw(st.integers(1, 4))):
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    path = tmp_path_factory.mktemp("edit") / "0.bin"
    path.write_bytes(bytes(raw))
    try:
        read_cdec_forest(path).check()
    except InputError as err:
        assert err.path == str(path)


# ----------------------------------------------------------------------------- synthetic archives


class ArchiveWriter:
    """Test-only encoder of the layout in mtplug/formats/cdec_forest.py (headers only once)."""

    UNTRACKED = b"\x00" + struct.pack("<I", 0)

    def __init__(self):
        self.seen: set[str] = set()

    def header(self, cls: str, blob: bytes = UNTRACKED) -> bytes:
        if cls in self.seen:
            return b""
        self.seen.add(cls)
        return blob

    @staticmethod
    def string(s: str) -> bytes:
        b = s.encode()
        return struct.pack("<Q", len(b)) + b

    def features(self, items) -> bytes:
        out = self.header("SparseVector") + struct.pack("<i", len(items))
        for name, value in items:
            out += self.header("pair") + self.string(name) + struct.pack("<d", value)
        return out

    def rule(self, arity: int, rhs) -> bytes:
        f = [("X" if k < arity else "src") for k in range(arity + 1)]
        f_mask = (1 << arity) - 1
        out = self.string("X") + struct.pack("<IQ", len(f), f_mask) + b"".join(map(self.string, f))
        e_mask = sum(1 << k for k, r in enumerate(rhs) if isinstance(r, int))
        out += struct.pack("<IQ", len(rhs), e_mask)
        out += b"".join(struct.pack("<i", -r) if isinstance(r, int) else self.string(r) for r in rhs)
        return out + bytes([arity]) + self.features([("RuleScore", 1.0)])

    def archive(self, n_nodes: int, edges, library_version: int = 10) -> bytes:
        """edges: (head, tails, rhs with int k = tails[k], [(name, value)]); identical rhs share a rule.

        ``library_version`` only changes the header's u16: Boost 1.53 to today (versions 10 to
        21) lay out cdec's Hypergraph the same (the table in mtplug/formats/cdec_forest.py)."""
        out = struct.pack("<Q", 22) + b"serialization::archive" + struct.pack("<H", library_version)
        out += bytes([4, 8, 4, 8])
        out += struct.pack("<i", 1) + self.header("Hypergraph") + struct.pack("<ii", n_nodes, len(edges))
        for v in range(n_nodes):
            ins = [i for i, e in enumerate(edges) if e[0] == v]
            outs = [i for i, e in enumerate(edges) if v in e[1]]
            out += self.header("Node") + struct.pack("<Qi", 0, v) + self.string("X")
            out += struct.pack(f"<Q{len(ins)}i", len(ins), *ins) + struct.pack(f"<Q{len(outs)}i", len(outs), *outs)
        rules: dict = {}
        for i, (head, tails, rhs, feats) in enumerate(edges):
            out += self.header("Edge") + struct.pack("<i", head)
            out += self.header("SmallVector") + struct.pack(f"<H{len(tails)}I", len(tails), *tails)
            out += self.header("shared_ptr", b"\x00" + struct.pack("<I", 1)) + struct.pack("<h", 6)
            out += self.header("rule class", b"\x01" + struct.pack("<I", 0))
            key = (len(tails), tuple(rhs))
            if key in rules:
                out += struct.pack("<I", rules[key])
            else:
                rules[key] = len(rules)
                out += struct.pack("<I", rules[key]) + self.rule(len(tails), rhs)
            out += self.features(feats) + struct.pack("<4hi", 0, 1, -1, -1, i)
        return out + struct.pack("<ii", 1, 0)


@st.composite
def _forests(draw):
    """A random forest in cdec's order (tails before heads, every node with an edge, goal last)."""
    n = draw(st.integers(1, 6))
    edges = []
    for v in range(n):
        for _ in range(draw(st.integers(1, 3))):
            tails = draw(st.lists(st.integers(0, v - 1), max_size=min(v, 3))) if v else []
            slots = list(range(len(tails)))
            words = draw(st.lists(st.sampled_from(["a", "b", "Ü"]), max_size=2))
            rhs = draw(st.permutations(slots + words))
            feats = draw(st.lists(st.tuples(st.sampled_from(["F0", "F1", "Glue"]), st.integers(-3, 3)),
                                  max_size=3, unique_by=lambda x: x[0]))
            edges.append((v, tails, rhs, [(k, float(x)) for k, x in feats]))
    return n, edges


def _derivation_counts(n, edges):
    count = [0] * n
    for head, tails, _, _ in edges:  # edges come grouped by head in topological order
        c = 1
        for t in tails:
            c *= count[t]
        count[head] += c
    return count


@settings(max_examples=40, deadline=None)
@given(_forests(), st.sampled_from(sorted(LIBRARY_VERSIONS)))
def test_synthetic_archives_keep_edges_and_derivations(tmp_path_factory, forest, version):
    n, edges = forest
    path = tmp_path_factory.mktemp("syn") / "0.bin"
    path.write_bytes(ArchiveWriter().archive(n, edges, version))
    hg = read_cdec_forest(path)
    reachable = set()
    todo = [n - 1]
    while todo:
        v = todo.pop()
        if v not in reachable:
            reachable.add(v)
            todo.extend(t for h, ts, _, _ in edges if h == v for t in ts)
    kept = [e for e in edges if e[0] in reachable]
    assert (hg.n_nodes, hg.n_edges) == (len(reachable), len(kept))

    def signature(rhs, feats):
        return tuple(("word", r) if isinstance(r, str) else ("tail", str(r)) for r in rhs), tuple(sorted(feats))

    got = sorted(signature([hg.words[r] if r >= 0 else -r - 1 for r in hg.edge_rhs(e)],
                           hg.edge_features(e).items()) for e in range(hg.n_edges))
    assert got == sorted(signature(rhs, feats) for _, _, rhs, feats in kept)
    want = _derivation_counts(n, edges)[n - 1]
    got_count = [0] * hg.n_nodes
    for v in range(hg.n_nodes):
        for e in hg.in_edges(v):
            got_count[v] += math.prod(got_count[int(t)] for t in hg.edge_tails(e))
    assert got_count[hg.goal] == want


def test_shared_rules_are_read_once_and_reused(write):
    edges = [(0, [], ["a"], [("F0", 1.0)]), (0, [], ["a"], [("F0", 2.0)]),
             (1, [0], [0, "b"], []), (1, [0], [0, "b"], [("Glue", 1.0)])]
    raw = ArchiveWriter().archive(2, edges)
    assert raw.count(struct.pack("<Q", 9) + b"RuleScore") == 2  # two rules for four edges
    hg = read_cdec_forest(write("0.bin", raw))
    assert [hg.edge_features(e) for e in range(4)] == [{"F0": 1.0}, {"F0": 2.0}, {}, {"Glue": 1.0}]
    assert [[hg.words[r] if r >= 0 else r for r in hg.edge_rhs(e)] for e in range(4)] == [["a"], ["a"],
                                                                                          [-1, "b"], [-1, "b"]]


# ----------------------------------------------------------------------------- Boost library versions

#: A forest with shared rules, a reordering rule and an unreachable node (3 nodes, goal 3).
VERSION_FOREST = (4, [(0, [], ["a"], [("F0", 1.0)]), (0, [], ["b"], [("F0", -0.5), ("Glue", 1.0)]),
                      (1, [], ["z"], [("F1", 3.0)]),
                      (2, [0], [0, "c"], [("F1", 2.0)]), (2, [0], [0, "c"], [("F1", 0.25)]),
                      (3, [2, 0], [1, "d", 0], []), (3, [2], ["e", 0], [("Glue", 1.0)])])


def _assert_same_hypergraph(got, want):
    assert (got.n_nodes, got.words, got.feature_names) == (want.n_nodes, want.words, want.feature_names)
    for name in ("node_edges", "edge_head", "tail_indptr", "tails", "rhs_indptr", "rhs", "feat_indptr",
                 "feat_ids", "feat_values"):
        assert (getattr(got, name) == getattr(want, name)).all(), name


@pytest.mark.parametrize("version", sorted(LIBRARY_VERSIONS), ids=[f"v{v}-boost{b}" for v, b in
                                                                   sorted(LIBRARY_VERSIONS.items())])
def test_every_known_library_version_reads_like_version_10(write, version):
    n, edges = VERSION_FOREST
    v10 = ArchiveWriter().archive(n, edges)
    raw = ArchiveWriter().archive(n, edges, version)
    assert raw[30:32] == struct.pack("<H", version) and raw[:30] + raw[32:] == v10[:30] + v10[32:]
    want = read_cdec_forest(write("10.bin", v10))
    assert (want.n_nodes, want.n_edges) == (3, 6)  # node 1 is not reachable from the goal
    _assert_same_hypergraph(read_cdec_forest(write(f"{version}.bin.gz", gzip.compress(raw))), want)


@pytest.mark.parametrize("version", sorted(LIBRARY_VERSIONS))
def test_cdecs_test_forest_under_every_known_library_version(write, ch_inside, forests, version):
    raw = _patch(ch_inside, 0x1E, b"\x0a\x00", struct.pack("<H", version))
    _assert_same_hypergraph(read_cdec_forest(write("0.bin", raw)), forests["test-ch-inside.bin.gz"])


@pytest.mark.parametrize("version", [0, 1, 5, 7, 8, 9, 22, 23, 0x100A, 0xFFFF])
def test_unknown_library_versions_are_one_line_errors(write, input_error, version):
    """Below 10 (Boost <= 1.52) and above 21 (a later Boost) the layout is not known."""
    n, edges = VERSION_FOREST
    path = write("0.bin.gz", gzip.compress(ArchiveWriter().archive(n, edges, version)))
    with input_error(path, None, "expected Boost archive library version 10 to 21", "at byte 30 of the archive",
                     f"found version {version}") as info:
        read_cdec_forest(path)
    assert "\n" not in str(info.value)


#: (nodes, edges) of tests/golden/cdec-forests-v18/forests/{0,1,2}.bin.gz as cdec wrote them
V18_COUNTS = [(12, 20), (17, 27), (8, 11)]


@pytest.mark.parametrize("s", range(3))
def test_cdec_built_with_boost_1_74_writes_version_18(golden_v18, s):
    """Forests cdec f7c4899b wrote with Boost 1.74 (tests/golden/cdec-forests-v18/PROVENANCE);
    their k-best against cdec's own is in tests/forests/test_cdec_golden.py."""
    path = golden_v18 / "forests" / f"{s}.bin.gz"
    raw = gzip.decompress(path.read_bytes())
    assert raw[30:32] == struct.pack("<H", 18)
    assert struct.unpack_from("<ii", raw, 45) == V18_COUNTS[s]
    hg = read_cdec_forest(path)
    hg.check()
    assert (hg.n_nodes, hg.n_edges) == V18_COUNTS[s]  # every node is reachable: none dropped
    assert set(hg.feature_names) <= {"PhraseModel_0", "PhraseModel_1", "WordPenalty", "Glue", "PassThrough"}
