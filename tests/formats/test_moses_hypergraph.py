"""Moses's hypergraph files (kbmira --hgdir): reading, writing, round trips, file names."""

from __future__ import annotations

import gzip
import hashlib
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mtplug.errors import InputError
from mtplug.formats.moses_hypergraph import (column_name, hypergraph_path, list_hypergraphs,
                                             read_moses_hypergraph, write_moses_hypergraph)
from mtplug.formats.moses_searchgraph import read_search_graph
from mtplug.hypergraph import HypergraphBuilder

from .test_moses_searchgraph import DENSE, EXTENDED, assert_well_formed, derivations, summary

# Sentence 0 of test_moses_searchgraph.EXTENDED as moses/Manager.cpp
# OutputSearchGraphAsHypergraph writes it: vertex ids in order of first sight in
# GetSearchGraph's list (hyp 0,1,2,3,4,5; hyp 7 was recombined into 4, so it is vertex 4's
# second edge), "<s> |||  ||| 0" for the empty hypothesis, "[prev] words  ||| " then the
# transition's ScoreComponentCollection::Save(out, false) (every feature function, "Name=v "
# or "Name_1=v ... Name_m=v ", then sparse, fixed with 6 decimals), " ||| " and the words
# covered; last, the end vertex with "[v] </s> |||  ||| <source length>" per final hypothesis.
MOSES_HG = """\
# target ||| features ||| source-covered
7 9
# node 0
1
<s> |||  ||| 0
# node 1
1
[0] the  ||| UnknownWordPenalty0=0.000000 WordPenalty0=-1.000000 PhrasePenalty0=1.000000 TranslationModel0_1=-0.356675 TranslationModel0_2=-1.203970 TranslationModel0_3=-0.693147 TranslationModel0_4=-1.609440 Distortion0=0.000000 LM0=-3.410000 WT_the~das=1.000000  ||| 1
# node 2
1
[0] house  ||| UnknownWordPenalty0=0.000000 WordPenalty0=-1.000000 PhrasePenalty0=1.000000 TranslationModel0_1=-0.105361 TranslationModel0_2=-0.510826 TranslationModel0_3=-0.223144 TranslationModel0_4=-0.356675 Distortion0=-2.000000 LM0=-4.020000  ||| 1
# node 3
1
[0] this  ||| UnknownWordPenalty0=0.000000 WordPenalty0=-1.000000 PhrasePenalty0=1.000000 TranslationModel0_1=-1.609440 TranslationModel0_2=-2.302590 TranslationModel0_3=-1.203970 TranslationModel0_4=-1.897120 Distortion0=0.000000 LM0=-4.370000  ||| 1
# node 4
2
[1] house  ||| UnknownWordPenalty0=0.000000 WordPenalty0=-1.000000 PhrasePenalty0=1.000000 TranslationModel0_1=-0.105361 TranslationModel0_2=-0.510826 TranslationModel0_3=-0.223144 TranslationModel0_4=-0.356675 Distortion0=0.000000 LM0=-1.870000  ||| 2
[3] house  ||| UnknownWordPenalty0=0.000000 WordPenalty0=-1.000000 PhrasePenalty0=1.000000 TranslationModel0_1=-0.105361 TranslationModel0_2=-0.510826 TranslationModel0_3=-0.223144 TranslationModel0_4=-0.356675 Distortion0=0.000000 LM0=-2.630000  ||| 2
# node 5
1
[2] the  ||| UnknownWordPenalty0=0.000000 WordPenalty0=-1.000000 PhrasePenalty0=1.000000 TranslationModel0_1=-0.356675 TranslationModel0_2=-1.203970 TranslationModel0_3=-0.693147 TranslationModel0_4=-1.609440 Distortion0=-2.000000 LM0=-3.950000 WT_the~das=1.000000  ||| 2
# node 6
2
[4] </s> |||  ||| 2
[5] </s> |||  ||| 2
"""


def test_moses_layout(write):
    hg = read_moses_hypergraph(write("0", MOSES_HG))
    assert_well_formed(hg)
    assert hg.n_nodes == 7 and hg.n_edges == 9
    assert hg.feature_names == DENSE + ["WT_the~das"]
    assert "<s>" not in hg.words and "</s>" not in hg.words
    # source-covered, per vertex, in the builder's order (the goal covers the sentence)
    assert hg.node_source_len[0] == 0 and hg.node_source_len[-1] == 2
    assert sorted(hg.node_source_len.tolist()) == [0, 1, 1, 1, 2, 2, 2]
    got = summary(hg)
    assert set(got) == {"the house", "this house", "house the"}
    assert got["the house"]["LM0_0"] == round(-3.41 - 1.87, 9)
    assert got["the house"]["TranslationModel0_3"] == round(-1.60944 - 0.356675, 9)
    assert got["house the"]["Distortion0_0"] == -4


def test_same_lattice_as_the_extended_search_graph(write):
    """Moses writes both from Manager::GetSearchGraph: same derivations, same features."""
    from_hg = summary(read_moses_hypergraph(write("0.gz", gzip.compress(MOSES_HG.encode()))))
    from_sg = summary(read_search_graph(write("sg", EXTENDED), dense_names=DENSE)[0])
    assert from_hg == from_sg


def test_column_names():
    assert column_name("LM0") == "LM0_0"
    assert column_name("TranslationModel0_1") == "TranslationModel0_0"
    assert column_name("TranslationModel0_12") == "TranslationModel0_11"
    assert column_name("WT_the~das") == "WT_the~das"
    assert column_name("X_0") == "X_0"       # not a Moses component number (those start at 1)
    assert column_name("a_b_1") == "a_b_1"   # label with '_': sparse, as in the n-best reader


def test_comments_only_where_counts_are(write):
    text = MOSES_HG.replace("# node 0\n", "# node 0\n# another comment\n").replace("[3] house ", "[3] #house ")
    hg = read_moses_hypergraph(write("0", text))
    assert "#house" in hg.words


def test_unreachable_vertex_without_edges_is_allowed(write):
    text = "# target ||| features ||| source-covered\n3 2\n1\n<s> |||  ||| 0\n0\n1\n[0] a  ||| LM0=1  ||| 1\n"
    hg = read_moses_hypergraph(write("0", text))
    assert hg.n_nodes == 2 and summary(hg) == {"a": {"LM0_0": 1.0}}


def test_repeated_feature_keeps_the_last_value_as_moses(write):
    text = "# target ||| features ||| source-covered\n1 1\n1\na ||| X_a=1 X_a=2 ||| 1\n"
    assert summary(read_moses_hypergraph(write("0", text))) == {"a": {"X_a": 2.0}}


# ---------------------------------------------------------------------------------------
# bad input

HEAD = "# target ||| features ||| source-covered\n"


@pytest.mark.parametrize("text, line, fragment", [
    ("", 1, "expected the header"),
    ("# target ||| features\n1 1\n", 1, "expected the header"),
    (HEAD + "1\n", 2, "'<vertices> <edges>'"),
    (HEAD + "0 0\n", 2, "no vertices"),
    (HEAD + "1 1\nx\n", 3, "number of edges of vertex 0"),
    (HEAD + "2 2\n1\na ||| ||| 0\n", 4, "found 2 field"),
    (HEAD + "2 2\n1\na |||  ||| 0\n1\n[1] b |||  ||| 1\n", 6, "does not come before vertex 1"),
    (HEAD + "2 2\n1\na |||  ||| 0\n1\n[x] b |||  ||| 1\n", 6, "[<number>]"),
    (HEAD + "1 1\n1\na ||| LM0=nan ||| 0\n", 4, "finite"),
    (HEAD + "1 1\n1\na ||| LM0 ||| 0\n", 4, "name=value"),
    (HEAD + "1 1\n1\na ||| =1 ||| 0\n", 4, "name=value"),
    (HEAD + "1 1\n1\na |||  ||| -1\n", 4, "source words covered"),
    (HEAD + "1 1\n1\na |||  ||| 2147483648\n", 4, "source words covered"),
    (HEAD + "2 2\n1\na |||  ||| 0\n", 5, "unexpected end of file: expected vertex 1 of the 2 the header announces"),
    (HEAD, 2, "unexpected end of file: expected '<vertices> <edges>'"),
    (HEAD + "1 1\n2\na |||  ||| 0\n", 5, "announces 2 edges"),
    (HEAD + "2 1\n1\na |||  ||| 0\n1\n[0] b |||  ||| 1\n", 6, "more edges than the 1"),
    (HEAD + "2 1\n1\na |||  ||| 0\n0\n", 5, "vertex 1 has no incoming edge"),
    (HEAD + "2 3\n1\na |||  ||| 0\n1\n[0] b |||  ||| 1\n", 2, "the header announces 3 edges, the 2 vertices have 2"),
    (HEAD + "1 1\n1\na |||  ||| 0\nextra\n", 5, "after the last"),
    (HEAD.encode() + b"1 1\n1\n\xff |||  ||| 0\n", 4, "invalid UTF-8"),
])
def test_bad_input(write, input_error, text, line, fragment):
    path = write("7.txt", text)
    with input_error(path, line, fragment):
        read_moses_hypergraph(path)


def test_truncated_gzip(write, input_error):
    data = gzip.compress(MOSES_HG.encode())
    path = write("0.gz", data[:40])
    with input_error(path, None, "truncated"):
        read_moses_hypergraph(path)


# ---------------------------------------------------------------------------------------
# file names


def test_hypergraph_path():
    assert hypergraph_path("hg", 5) == os.path.join("hg", "5.gz")
    assert hypergraph_path("hg", 0, "txt") == os.path.join("hg", "0.txt")
    with pytest.raises(ValueError):
        hypergraph_path("hg", -1)


def test_list_hypergraphs(tmp_path, input_error):
    for name in ("0.gz", "1", "12.txt", "weights", ".3.gz.abc.tmp"):
        (tmp_path / name).write_text("")
    assert list_hypergraphs(tmp_path) == {0: str(tmp_path / "0.gz"), 1: str(tmp_path / "1"),
                                          12: str(tmp_path / "12.txt")}
    (tmp_path / "1.gz").write_text("")
    with input_error(tmp_path / "1.gz", None, "second file for sentence 1"):
        list_hypergraphs(tmp_path)
    os.remove(tmp_path / "1.gz")
    (tmp_path / "notes.md").write_text("")
    with input_error(tmp_path / "notes.md", None, "<sentence id>"):
        list_hypergraphs(tmp_path)
    with input_error(tmp_path / "missing", None, "no such directory"):
        list_hypergraphs(tmp_path / "missing")


# ---------------------------------------------------------------------------------------
# writing


def test_written_layout(tmp_path):
    b = HypergraphBuilder()
    b.edge("s", (), ())
    b.edge("a", ("s",), (0, "the"), {"LM0_0": -1.5, "TM0_0": 0.25, "TM0_1": 0.0, "WT_the~das": 1.0})
    b.edge("g", ("a",), (0, "house"), {"LM0_0": -2.0, "TM0_0": 1e-20, "TM0_1": -3.0})
    path = tmp_path / "0.txt"
    write_moses_hypergraph(path, b.build("g"))
    assert path.read_text() == (
        "# target ||| features ||| source-covered\n"
        "3 3\n"
        "# node 0\n1\n |||  ||| 0\n"
        "# node 1\n1\n[0] the  ||| LM0=-1.5 TM0_1=0.25 TM0_2=0.0 WT_the~das=1.0  ||| 1\n"
        "# node 2\n1\n[1] house  ||| LM0=-2.0 TM0_1=1e-20 TM0_2=-3.0  ||| 2\n")


def test_written_source_lengths(tmp_path):
    b = HypergraphBuilder()
    b.edge("s", (), ())
    b.edge("g", ("s",), (0, "a", "b"))
    b.source_covered("s", 0)
    b.source_covered("g", 5)
    write_moses_hypergraph(tmp_path / "0.txt", b.build("g"))
    assert (tmp_path / "0.txt").read_text().endswith("[0] a b  |||  ||| 5\n")
    assert read_moses_hypergraph(tmp_path / "0.txt").node_source_len.tolist() == [0, 5]


def test_gzip_written_deterministically(tmp_path):
    hg = read_moses_hypergraph(_write_text(tmp_path / "src", MOSES_HG))
    a, b = tmp_path / "a" / "0.gz", tmp_path / "b" / "0.gz"
    for p in (a, b):
        p.parent.mkdir()
        write_moses_hypergraph(p, hg)
    assert a.read_bytes()[:2] == b"\x1f\x8b" and a.read_bytes() == b.read_bytes()
    assert summary(read_moses_hypergraph(a)) == summary(hg)


def test_moses_file_round_trip(tmp_path):
    hg = read_moses_hypergraph(_write_text(tmp_path / "src", MOSES_HG))
    write_moses_hypergraph(tmp_path / "1.txt", hg)
    again = read_moses_hypergraph(tmp_path / "1.txt")
    _assert_same(hg, again)
    write_moses_hypergraph(tmp_path / "2.txt", again)
    assert (tmp_path / "1.txt").read_bytes() == (tmp_path / "2.txt").read_bytes()


@pytest.mark.parametrize("feature, word", [
    ("LanguageModel", "a"),     # no '_': would come back as LanguageModel_0
    ("LM 0_0", "a"),
    ("LM0_0", "<s>"),
    ("LM0_0", "</s>"),
    ("LM0_0", "[3]"),
    ("LM0_0", "|||"),
    ("LM0_0", "a b"),
    ("LM0_0", ""),
])
def test_unwritable(tmp_path, feature, word):
    b = HypergraphBuilder()
    b.edge("g", (), (word,), {feature: 1.0})
    with pytest.raises(ValueError):
        write_moses_hypergraph(tmp_path / "0.txt", b.build("g"))
    assert not os.path.exists(tmp_path / "0.txt")


def test_unused_tail_is_unwritable(tmp_path):
    b = HypergraphBuilder()
    b.edge("s", (), ("a",))
    b.edge("g", ("s",), ("b",))
    with pytest.raises(ValueError, match="tail"):
        write_moses_hypergraph(tmp_path / "0.txt", b.build("g"))


WORDS = ["a", "b", "das", "Haus", "ü", "x|y", "#", "[", "]", "a=b", "[x"]
FEATURES = ["LM0_0", "TM0_0", "TM0_1", "TM0_3", "D_0", "P_0", "WT_a~b", "WT_x=y", "a_b_c", "X_01", "Y_12"]


@st.composite
def hypergraphs(draw):
    """Random acyclic hypergraphs through HypergraphBuilder (each tail used once)."""
    n = draw(st.integers(1, 7))
    b = HypergraphBuilder()
    for v in range(n):
        for _ in range(draw(st.integers(1, 3))):
            k = draw(st.integers(0, min(v, 3)))
            tails = [draw(st.integers(0, v - 1)) for _ in range(k)]
            words = draw(st.lists(st.sampled_from(WORDS), max_size=3))
            rhs = draw(st.permutations(list(range(k)) + words))
            feats = draw(st.dictionaries(st.sampled_from(FEATURES),
                                         st.floats(allow_nan=False, allow_infinity=False), max_size=4))
            b.edge(v, tails, rhs, feats)
    return b.build(n - 1)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(hg=hypergraphs())
def test_round_trip_random(tmp_path, hg):
    first, second = tmp_path / "first.gz", tmp_path / "second.gz"
    write_moses_hypergraph(first, hg)
    back = read_moses_hypergraph(first)
    assert_well_formed(back)
    assert back.n_nodes == hg.n_nodes and back.n_edges == hg.n_edges
    assert _signature(back) == _signature(hg)
    write_moses_hypergraph(second, back)
    assert first.read_bytes() == second.read_bytes()
    _assert_same(back, read_moses_hypergraph(second))


def _signature(hg) -> str:
    """A digest of the goal's derivation structure, independent of node and id order."""
    sig: list[str] = []
    for v in range(hg.n_nodes):
        edges = []
        for e in hg.in_edges(v):
            tails = hg.edge_tails(e)
            rhs = [hg.words[r] if r >= 0 else ("tail", sig[int(tails[-r - 1])]) for r in hg.edge_rhs(e).tolist()]
            edges.append(repr((rhs, sorted(hg.edge_features(e).items()))))
        sig.append(hashlib.sha1(repr(sorted(edges)).encode()).hexdigest())
    return sig[hg.goal]


def _assert_same(a, b) -> None:
    for name in ("node_edges", "edge_head", "tail_indptr", "tails", "rhs_indptr", "rhs",
                 "feat_indptr", "feat_ids", "feat_values"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.n_nodes == b.n_nodes and a.words == b.words and a.feature_names == b.feature_names
    assert (a.node_source_len is None) == (b.node_source_len is None)
    if a.node_source_len is not None:
        assert np.array_equal(a.node_source_len, b.node_source_len)


def _write_text(path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_derivations_keep_features_through_writing(tmp_path):
    hg = read_moses_hypergraph(_write_text(tmp_path / "src", MOSES_HG))
    write_moses_hypergraph(tmp_path / "x.txt", hg)
    assert sorted(derivations(read_moses_hypergraph(tmp_path / "x.txt")), key=repr) == \
        sorted(derivations(hg), key=repr)


def test_input_error_is_raised_not_value_error_on_bad_files(write):
    with pytest.raises(InputError):
        read_moses_hypergraph(write("0", "garbage"))
