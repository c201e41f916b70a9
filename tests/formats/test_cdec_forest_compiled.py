"""The compiled cdec -O forest reader equals the reference reader (tests/reference/cdec_forest.py):
the same Hypergraph, bit for bit, on real and random forests, and the same InputError
(message, file, line) on every truncation and corruption tried; every parser status is met."""

from __future__ import annotations

import gzip
import math
import random
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mtplug._ext import _cdec_forest
from mtplug.errors import InputError
from mtplug.formats.cdec_forest import read_cdec_forest
from tests.forests.random_forests import random_hypergraph
from tests.formats.test_cdec_forest import FILES, LIBRARY_VERSIONS, ArchiveWriter
from tests.reference.cdec_forest import read_cdec_forest as reference_read
from tests.reliability.bad_input_cases import CH_INSIDE
from tests.reliability.fuzz_readers import mutate

ARRAYS = ("node_edges", "edge_head", "tail_indptr", "tails", "rhs_indptr", "rhs", "feat_indptr", "feat_ids",
          "feat_values")
#: cdec-forests-v18: forests cdec f7c4899b wrote with Boost 1.74 (library version 18)
V18 = ["0.bin.gz", "1.bin.gz", "2.bin.gz"]


def outcome(read, path):
    """("read", the Hypergraph) or ("refused", exception type, message, path, line)."""
    try:
        return ("read", read(path))
    except (InputError, MemoryError) as err:
        return ("refused", type(err), str(err), getattr(err, "path", None), getattr(err, "line", None))


def assert_same_hypergraph(got, want):
    assert (got.n_nodes, got.words, got.feature_names, got.source) == \
        (want.n_nodes, want.words, want.feature_names, want.source)
    for name in ARRAYS:
        a, b = getattr(got, name), getattr(want, name)
        assert (a.dtype, a.shape) == (b.dtype, b.shape), name
        assert a.tobytes() == b.tobytes(), name  # bit-identical: -0.0 and NaN payloads included
    assert got.node_source_len is None and want.node_source_len is None


def assert_same_outcome(path):
    """Both readers read ``path`` to the same Hypergraph or refuse it with the same error."""
    got, want = outcome(read_cdec_forest, path), outcome(reference_read, path)
    assert got[0] == want[0], (got, want)
    if got[0] == "read":
        assert_same_hypergraph(got[1], want[1])
    else:
        assert got == want
    return got


def parse_status(raw: bytes) -> int:
    """The compiled parser's status on a decompressed archive."""
    return _cdec_forest.ArchiveParser(raw, 10, 21).parse()


@pytest.fixture(scope="module")
def small_real(golden_v18):
    """Small real archives in the repository, decompressed: cdec's test-ch-inside (embedded
    in the bad-input cases, checked there to be cdec's) and the forests of Boost 1.74."""
    out = {"test-ch-inside.bin.gz": CH_INSIDE}
    out.update({f"v18/{name}": gzip.decompress((golden_v18 / "forests" / name).read_bytes()) for name in V18})
    return out


@pytest.fixture
def one_file(tmp_path):
    """put(bytes) -> the path of one file rewritten each time (the readers are given paths)."""
    path = tmp_path / "0.bin"

    def put(raw: bytes) -> str:
        path.write_bytes(raw)
        return str(path)

    return put


# ----------------------------------------------------------------------------- real forests


@pytest.mark.parametrize("name", FILES)
def test_cdecs_forests_read_identically(shared_data, name):
    assert assert_same_outcome(shared_data / "cdec-forests" / name)[0] == "read"


@pytest.mark.parametrize("name", V18)
def test_boost_1_74_forests_read_identically(golden_v18, name):
    assert assert_same_outcome(golden_v18 / "forests" / name)[0] == "read"


def test_every_truncation_of_the_small_real_forests(small_real, one_file):
    """Every prefix of 4 real archives (11,600 cuts) is refused by the compiled parser; every
    7th cut, and every cut of the last 100 bytes (the end of the archive, where a cut can
    leave a whole-looking record), through both readers with the reference's message (all
    cuts through both took 25 s; the parser's status is what varies from cut to cut)."""
    ok = _cdec_forest.Status.OK
    for name, raw in small_real.items():
        for n in range(len(raw)):
            assert parse_status(raw[:n]) != ok, (name, n)
            if n % 7 == 0 or n >= len(raw) - 100:
                got = assert_same_outcome(one_file(raw[:n]))
                assert got[0] == "refused", (name, n)


def test_every_truncation_of_test_zero_origin(shared_data, one_file):
    raw = _decompressed(shared_data / "cdec-forests" / "test-zero-origin.bin.gz")
    for n in range(len(raw)):
        assert assert_same_outcome(one_file(raw[:n]))[0] == "refused", n


@pytest.mark.parametrize("name", ["0.bin.gz", "1.bin.gz"])
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.floats(0, 1, exclude_max=True))
def test_truncations_of_the_large_real_forests(shared_data, one_file, name, cut):
    raw = _decompressed(shared_data / "cdec-forests" / name)
    assert assert_same_outcome(one_file(raw[:int(cut * len(raw))]))[0] == "refused"


_CACHE: dict = {}


def _decompressed(path) -> bytes:
    if path not in _CACHE:
        _CACHE[path] = gzip.decompress(path.read_bytes())
    return _CACHE[path]


def test_every_byte_of_cdecs_test_forest_corrupted(small_real, one_file):
    """Each byte of test-ch-inside set to 0, 0xff, flipped in its lowest and its highest bit:
    both readers read it the same or refuse it with the same message."""
    raw = small_real["test-ch-inside.bin.gz"]
    for at in range(len(raw)):
        for new in {0, 0xFF, raw[at] ^ 1, raw[at] ^ 0x80} - {raw[at]}:
            assert_same_outcome(one_file(raw[:at] + bytes([new]) + raw[at + 1:]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_edits_of_the_real_forests(small_real, one_file, data):
    """A few bytes overwritten, inserted or deleted anywhere in a small real forest."""
    raw = bytearray(small_real[data.draw(st.sampled_from(sorted(small_real)))])
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(raw) - 1))
        op = data.draw(st.sampled_from(["set", "insert", "delete"]))
        if op == "set":
            raw[at] = data.draw(st.integers(0, 255))
        elif op == "insert":
            raw[at:at] = data.draw(st.binary(min_size=1, max_size=9))
        else:
            del raw[at:at + data.draw(st.integers(1, 9))]
    assert_same_outcome(one_file(bytes(raw)))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_edits_of_a_large_real_forest(shared_data, one_file, data):
    raw = bytearray(_decompressed(shared_data / "cdec-forests" / "0.bin.gz"))
    for _ in range(data.draw(st.integers(1, 3))):
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    assert_same_outcome(one_file(bytes(raw)))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1))
def test_the_fuzzers_mutations(small_real, one_file, seed):
    """tests/reliability's mutations (token inserts, repeats, cuts, gzip, ...) of cdec's test forest."""
    assert_same_outcome(one_file(mutate(small_real["test-ch-inside.bin.gz"], random.Random(seed))))


def test_truncated_gzip(shared_data, one_file):
    z = (shared_data / "cdec-forests" / "0.bin.gz").read_bytes()
    got = assert_same_outcome(one_file(z[:len(z) // 3]))
    assert "corrupt or truncated compressed data" in got[2]


# ----------------------------------------------------------------------------- random forests


def _archive_edges(hg, rng: random.Random, extra_nodes: int):
    """The edges of a Hypergraph for ArchiveWriter, in random order, with ``extra_nodes``
    unreachable nodes (with edges of their own) slipped in between; node ids stay topological."""
    n = hg.n_nodes + extra_nodes
    extra = set(rng.sample(range(n - 1), extra_nodes))
    ids = [v for v in range(n) if v not in extra]  # hg's node i -> ids[i]
    edges = []
    for e in range(hg.n_edges):
        tails = [ids[int(t)] for t in hg.edge_tails(e)]
        rhs = [hg.words[int(r)] if r >= 0 else int(-r - 1) for r in hg.edge_rhs(e)]
        edges.append((ids[int(hg.edge_head[e])], tails, rhs, list(hg.edge_features(e).items())))
    for v in sorted(extra):
        for _ in range(rng.randint(1, 2)):
            tails = [rng.randrange(v) for _ in range(rng.randint(0, min(v, 2)))]
            rhs = [rng.choice(["x", "ünreached", ""])] + list(range(len(tails)))
            edges.append((v, tails, rhs, [(rng.choice(["only_here", "f"]), rng.uniform(-1, 1))]))
    rng.shuffle(edges)
    return n, edges


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), n_nodes=st.integers(1, 9), extra=st.integers(0, 3),
       version=st.sampled_from(sorted(LIBRARY_VERSIONS)), gz=st.booleans())
def test_random_forests_read_identically(one_file, seed, n_nodes, extra, version, gz):
    """tests/forests/random_forests.py's hypergraphs, written as cdec would (edges in any
    order, unreachable nodes among the others, any known Boost version)."""
    rng = random.Random(seed)
    hg = random_hypergraph(rng, n_nodes=n_nodes, max_tails=3, integer_features=rng.random() < 0.5)
    extra = min(extra, n_nodes - 1) if n_nodes > 1 else 0
    n, edges = _archive_edges(hg, rng, extra)
    raw = ArchiveWriter().archive(n, edges, version)
    assert assert_same_outcome(one_file(gzip.compress(raw) if gz else raw))[0] == "read"


WORDS = st.sampled_from(["a", "b", "Ü", "", "字", "a b", "\x00"])
NAMES = st.sampled_from(["F0", "F1", "Glue", "é", ""])
VALUES = st.one_of(st.floats(allow_nan=False, allow_infinity=False),
                   st.sampled_from([0.0, -0.0, 1.0, -1.0, 1e308, -1e308, 5e-324]))


@st.composite
def _raw_forests(draw):
    """Forests straight in archive form: repeated feature names in one edge (summed), -0.0,
    huge values (whose sums overflow), nodes without edges (refused once reachable), tails
    repeated and in any order, shared rules, empty and non-ASCII words."""
    n = draw(st.integers(1, 6))
    edges = []
    for v in range(n):
        for _ in range(draw(st.integers(0 if v < n - 1 else 1, 3))):
            tails = draw(st.lists(st.integers(0, v - 1), max_size=min(v, 3))) if v else []
            rhs = draw(st.permutations(list(range(len(tails))) + draw(st.lists(WORDS, max_size=3))))
            feats = draw(st.lists(st.tuples(NAMES, VALUES), max_size=4))
            edges.append((v, tails, rhs, feats))
    return n, draw(st.permutations(edges))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(forest=_raw_forests(), version=st.sampled_from(sorted(LIBRARY_VERSIONS)))
def test_synthetic_archives_read_or_refuse_identically(one_file, forest, version):
    n, edges = forest
    assert_same_outcome(one_file(ArchiveWriter().archive(n, edges, version)))


def test_repeated_names_add_up_from_zero_as_the_builder_does(one_file):
    """A name twice in one edge: 0.0 + a + b in archive order; a lone -0.0 becomes 0.0."""
    edges = [(0, [], ["a"], [("F1", 0.1), ("F0", -0.0), ("F1", 0.2), ("F1", 0.3)]),
             (1, [0], [0], [("big", 1e308), ("small", 1.0)])]
    hg = assert_same_outcome(one_file(ArchiveWriter().archive(2, edges)))[1]
    assert hg.feature_names == ["F1", "F0", "big", "small"]
    assert hg.edge_features(0) == {"F1": (0.0 + 0.1) + 0.2 + 0.3, "F0": 0.0}
    assert math.copysign(1.0, hg.feat_values[1]) == 1.0
    overflow = [(0, [], ["a"], [("big", 1e308), ("big", 1e308)])]
    got = assert_same_outcome(one_file(ArchiveWriter().archive(1, overflow)))
    assert got[2].endswith("hypergraph a feature value is NaN or infinite")


def test_the_depth_first_order_renumbers_the_nodes(one_file):
    """The goal's tails are visited in ascending order, each subtree first: node 1 (reached
    first, below node 2) becomes 0; node 0 (under node 2) becomes 1; node 3 is dropped."""
    edges = [(0, [], ["a"], []), (1, [], ["b"], []), (2, [0], [0, "c"], []), (3, [], ["z"], []),
             (4, [2, 1], [1, 0], [])]
    hg = assert_same_outcome(one_file(ArchiveWriter().archive(5, edges)))[1]
    assert hg.n_nodes == 4 and hg.words == ["a", "b", "c", "z"]
    assert [hg.words[int(hg.edge_rhs(int(hg.node_edges[v]))[-1])] for v in range(2)] == ["b", "a"]


def test_a_reachable_node_without_edges(one_file):
    edges = [(0, [], ["a"], []), (2, [0, 1], [0, 1], [])]
    got = assert_same_outcome(one_file(ArchiveWriter().archive(3, edges)))
    assert got[2].endswith("node 1 has no incoming edge")


# ----------------------------------------------------------------------------- every status


def _patched_values(raw: bytes, old: bytes, new: bytes) -> bytes:
    assert raw.count(old) >= 1
    return raw.replace(old, new, 1)


def _crafted():
    """Archives reaching the statuses single-byte edits of test-ch-inside do not (each
    value patched occurs once: the rules' own scores are 1.0)."""
    w = ArchiveWriter()
    good = w.archive(2, [(0, [], ["a"], [("F0", 3.0)]), (1, [0], [0, "b"], [("F0", 2.0)])])
    return {
        "NaN value": _patched_values(good, struct.pack("<d", 2.0), struct.pack("<d", math.nan)),
        "infinite value": _patched_values(good, struct.pack("<d", 3.0), struct.pack("<d", -math.inf)),
        "invalid UTF-8 feature name": _patched_values(good, b"F0", b"F\xff"),
        "no incoming edge": ArchiveWriter().archive(3, [(0, [], ["a"], []), (2, [0, 1], [0, 1], [])]),
        "word over a continuation byte": _patched_values(good, struct.pack("<Q", 1) + b"a", struct.pack("<Q", 1) + b"\x80"),
        "null rule pointer": _patched_values(good, b"\x00" + struct.pack("<Ih", 1, 6), b"\x00" + struct.pack("<Ih", 1, -1)),
        # node 1 lists its edge twice: right heads, one entry too many
        "in-edges listed twice": _patched_values(good, struct.pack("<Q", 1) + b"X" + struct.pack("<Qi", 1, 1),
                                                 struct.pack("<Q", 1) + b"X" + struct.pack("<Qii", 2, 1, 1)),
    }


def test_every_status_is_compared(small_real, one_file):
    """The cases above meet every way the parser can stop (out of memory aside), each
    compared with the reference: no message of the wrapper goes untested."""
    raw = small_real["test-ch-inside.bin.gz"]
    seen = {parse_status(raw[:n]) for n in range(len(raw))}
    for at in range(len(raw)):
        for new in {0, 0xFF, raw[at] ^ 1, raw[at] ^ 0x80} - {raw[at]}:
            seen.add(parse_status(raw[:at] + bytes([new]) + raw[at + 1:]))
    for name, case in _crafted().items():
        assert_same_outcome(one_file(case))
        seen.add(parse_status(case))
    seen.add(parse_status(raw + b"\x00"))
    assert_same_outcome(one_file(raw + b"\x00"))
    Status = _cdec_forest.Status
    assert {Status(s).name for s in set(Status) - seen} == {"MEMORY"}


class _PaddedWriter(ArchiveWriter):
    """Long categories and a long first feature in every map: the archive's size is then
    far above the least its counts need, so a cut anywhere passes the early size check."""

    def features(self, items) -> bytes:
        return super().features([("P" * 300, 0.5)] + list(items))

    @staticmethod
    def string(s: str) -> bytes:
        return ArchiveWriter.string("X" * 400 if s == "X" else s)


def test_a_truncation_in_every_field(one_file):
    """Every prefix of a padded archive: each Field the parser can report is cut at least
    once, and each such message is the reference's."""
    from mtplug.formats import cdec_forest

    edges = [(0, [], ["a"], [("F0", 1.0), ("F1", 2.0)]), (1, [0], [0, "b"], [("F0", 2.0)]),
             (2, [1, 0], [1, "c", 0], [("G", 1.0)])]
    raw = _PaddedWriter().archive(3, edges)
    cut = set()
    for n in range(len(raw)):
        assert assert_same_outcome(one_file(raw[:n]))[0] == "refused"
        parser = _cdec_forest.ArchiveParser(raw[:n], 10, 21)
        if parser.parse() == _cdec_forest.Status.TRUNCATED:
            cut.add(parser.error()[1])
    assert cut == set(_cdec_forest.Field) == set(cdec_forest._FIELDS)


def test_a_parser_parses_once():
    parser = _cdec_forest.ArchiveParser(b"", 10, 21)
    assert parser.parse() == _cdec_forest.Status.TRUNCATED
    with pytest.raises(RuntimeError):
        parser.parse()
    with pytest.raises(RuntimeError):
        parser.build()


def test_the_data_buffer_must_be_bytes_like():
    with pytest.raises(TypeError):
        _cdec_forest.ArchiveParser("not bytes", 10, 21)
    parser = _cdec_forest.ArchiveParser(np.frombuffer(b"\x16" + b"\x00" * 7, dtype=np.uint8), 10, 21)
    assert parser.parse() == _cdec_forest.Status.SIGNATURE
