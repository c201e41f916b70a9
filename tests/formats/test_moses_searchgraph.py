"""Moses search graphs (-output-search-graph, -output-search-graph-extended) as lattices."""

from __future__ import annotations

import gzip
import math

import pytest

from mtplug.formats.moses_searchgraph import read_search_graph

# Plain form, in the layout moses/Manager.cpp OutputSearchNode writes (non-extended branch)
# for the nodes Manager::GetSearchGraph lists: stacks in order, each winner followed by the
# hypotheses recombined into it (hyp 7 lost to hyp 4). "das Haus" → the house / this house /
# house the; "klein" → small / little / deleted (nothing after out=); sentence 2 is empty.
PLAIN = """\
0 hyp=0 stack=0
0 hyp=1 stack=1 back=0 score=-1.62 transition=-1.62 forward=4 fscore=-2.28 covered=0-0 out=the
0 hyp=2 stack=1 back=0 score=-2.31 transition=-2.31 forward=5 fscore=-2.49 covered=1-1 out=house
0 hyp=3 stack=1 back=0 score=-2.05 transition=-2.05 forward=7 fscore=-2.85 covered=0-0 out=this
0 hyp=4 stack=2 back=1 score=-3.9 transition=-2.28 forward=-1 fscore=0 covered=1-1 out=house
0 hyp=7 stack=2 back=3 score=-4.9 transition=-2.85 recombined=4 forward=-1 fscore=0 covered=1-1 out=house
0 hyp=5 stack=2 back=2 score=-4.8 transition=-2.49 forward=-1 fscore=0 covered=0-0 out=the
1 hyp=0 stack=0
1 hyp=1 stack=1 back=0 score=-0.9 transition=-0.9 forward=-1 fscore=0 covered=0-0 out=small
1 hyp=2 stack=1 back=0 score=-1.4 transition=-1.4 forward=-1 fscore=0 covered=0-0 out=little
1 hyp=3 stack=1 back=0 score=-7.3 transition=-7.3 forward=-1 fscore=0 covered=0-0 out=
2 hyp=0 stack=0
"""

# Extended form of sentence 0 (OutputSearchNode, extended branch): scores="..." is the
# transition's ScoreComponentCollection printed by FVector::print (moses/FeatureVector.cpp):
# core=(dense...) then sparse name=value; out="source|target" (GetSourcePhraseStringRep).
EXTENDED = """\
0 hyp=0 stack=0 forward=1 fscore=-2.28
0 hyp=1 stack=1 back=0 score=-1.62 transition=-1.62 forward=4 fscore=-2.28 covered=0-0 scores="core=(0,-1,1,-0.356675,-1.20397,-0.693147,-1.60944,0,-3.41) WT_the~das=1" out="das|the"
0 hyp=2 stack=1 back=0 score=-2.31 transition=-2.31 forward=5 fscore=-2.49 covered=1-1 scores="core=(0,-1,1,-0.105361,-0.510826,-0.223144,-0.356675,-2,-4.02) " out="Haus|house"
0 hyp=3 stack=1 back=0 score=-2.05 transition=-2.05 forward=7 fscore=-2.85 covered=0-0 scores="core=(0,-1,1,-1.60944,-2.30259,-1.20397,-1.89712,0,-4.37) " out="das|this"
0 hyp=4 stack=2 back=1 score=-3.9 transition=-2.28 forward=-1 fscore=0 covered=1-1 scores="core=(0,-1,1,-0.105361,-0.510826,-0.223144,-0.356675,0,-1.87) " out="Haus|house"
0 hyp=7 stack=2 back=3 score=-4.9 transition=-2.85 recombined=4 forward=-1 fscore=0 covered=1-1 scores="core=(0,-1,1,-0.105361,-0.510826,-0.223144,-0.356675,0,-2.63) " out="Haus|house"
0 hyp=5 stack=2 back=2 score=-4.8 transition=-2.49 forward=-1 fscore=0 covered=0-0 scores="core=(0,-1,1,-0.356675,-1.20397,-0.693147,-1.60944,-2,-3.95) WT_the~das=1" out="das|the"
"""

#: Moses's dense order for that model (moses.ini feature order), as mtplug names the columns
DENSE = ["UnknownWordPenalty0_0", "WordPenalty0_0", "PhrasePenalty0_0", "TranslationModel0_0",
         "TranslationModel0_1", "TranslationModel0_2", "TranslationModel0_3", "Distortion0_0", "LM0_0"]


# ---------------------------------------------------------------------------------------
# helpers shared with test_moses_hypergraph


def derivations(hg, v=None):
    """All derivations of node v (default: the goal) as (words, features) pairs."""
    v = hg.goal if v is None else v
    out = []
    for e in hg.in_edges(v):
        partial = [((), {})]
        tails = hg.edge_tails(e)
        for r in hg.edge_rhs(e).tolist():
            if r >= 0:
                partial = [(w + (hg.words[r],), f) for w, f in partial]
            else:
                partial = [(w + tw, _add(f, tf)) for w, f in partial for tw, tf in derivations(hg, int(tails[-r - 1]))]
        out += [(w, _add(f, hg.edge_features(e))) for w, f in partial]
    return out


def _add(a: dict, b: dict) -> dict:
    c = dict(a)
    for k, x in b.items():
        c[k] = c.get(k, 0.0) + x
    return c


def summary(hg) -> dict:
    """yield string -> its features (rounded), for lattices with distinct yields."""
    ds = derivations(hg)
    out = {" ".join(w): {k: round(x, 9) for k, x in f.items()} for w, f in ds}
    assert len(out) == len(ds), "yields are not distinct"
    return out


def assert_well_formed(hg) -> None:
    """Arrays valid, tails before heads, every node reached from the goal."""
    hg.check()
    for e in range(hg.n_edges):
        assert all(t < hg.edge_head[e] for t in hg.edge_tails(e))
    seen, todo = {hg.goal}, [hg.goal]
    while todo:
        v = todo.pop()
        for e in hg.in_edges(v):
            for t in hg.edge_tails(e).tolist():
                if t not in seen:
                    seen.add(t)
                    todo.append(t)
    assert seen == set(range(hg.n_nodes))


# ---------------------------------------------------------------------------------------
# valid input


def test_plain_form_lattices(write):
    graphs = read_search_graph(write("sg.txt", PLAIN))
    assert sorted(graphs) == [0, 1, 2]
    for hg in graphs.values():
        assert_well_formed(hg)
        assert hg.is_lattice
    got = summary(graphs[0])
    assert got == {"the house": {"transition": -3.9}, "this house": {"transition": -4.9},
                   "house the": {"transition": -4.8}}
    # hyps 0..5 (7 was recombined into 4, so it is an edge, not a node) + the goal
    assert graphs[0].n_nodes == 7 and graphs[0].n_edges == 9
    assert summary(graphs[1]) == {"small": {"transition": -0.9}, "little": {"transition": -1.4},
                                  "": {"transition": -7.3}}
    # stack = source words covered; the goal covers the sentence
    assert sorted(graphs[0].node_source_len.tolist()) == [0, 1, 1, 1, 2, 2, 2]
    assert graphs[1].node_source_len[-1] == 1 and graphs[2].node_source_len.tolist() == [0, 0]
    # a sentence with only the empty hypothesis: its lattice yields the empty string
    assert derivations(graphs[2]) == [((), {})]


def test_recombined_hypothesis_is_an_extra_edge_into_the_winner(write):
    hg = read_search_graph(write("sg.txt", PLAIN))[0]
    into_goal = list(hg.in_edges(hg.goal))
    assert len(into_goal) == 2             # hyps 4 and 5 cover both words
    heads_with_two = [v for v in range(hg.n_nodes) if len(hg.in_edges(v)) == 2 and v != hg.goal]
    assert len(heads_with_two) == 1        # hyp 4: its own edge and hyp 7's
    values = sorted(hg.edge_features(e)["transition"] for e in hg.in_edges(heads_with_two[0]))
    assert values == [-2.85, -2.28]
    for e in hg.in_edges(hg.goal):
        assert hg.edge_rhs(e).tolist() == [-1] and hg.edge_features(e) == {}


def test_extended_form_with_dense_names(write):
    hg = read_search_graph(write("sg.txt", EXTENDED), dense_names=DENSE)[0]
    assert_well_formed(hg)
    got = summary(hg)
    assert set(got) == {"the house", "this house", "house the"}
    assert got["the house"]["LM0_0"] == round(-3.41 - 1.87, 9)
    assert got["the house"]["WT_the~das"] == 1
    assert got["house the"]["Distortion0_0"] == -4
    assert got["this house"]["TranslationModel0_0"] == round(-1.60944 - 0.105361, 9)
    assert got["this house"]["WordPenalty0_0"] == -2
    assert "WT_the~das" not in got["this house"]
    assert "transition" not in hg.feature_names


def test_extended_form_without_names_numbers_the_dense_scores(write):
    hg = read_search_graph(write("sg.txt", EXTENDED))[0]
    assert hg.feature_names[:9] == [f"core_{j}" for j in range(9)]
    assert summary(hg)["the house"]["core_8"] == round(-3.41 - 1.87, 9)


@pytest.mark.parametrize("out, words", [
    ("das Haus|the house", ["the", "house"]),
    ("das|", []),                                                  # phrase without target words
    ("das|DET Haus|NN|the|DT house|NN", ["the|DT", "house|NN"]),   # factors counted from a source word
    ("Haus|NN|the|DT house|NN", ["the|DT", "house|NN"]),           # ... from a target word
    ("Haus|NN|house", ["house"]),                                  # one token: one target factor
    ("|the", ["the"]),
])
def test_extended_out_field_source_target_split(write, out, words):
    line = (f'0 hyp=0 stack=0\n0 hyp=1 stack=1 back=0 score=-1 transition=-1 forward=-1 fscore=0 covered=0-0 '
            f'scores="core=(-1) " out="{out}"\n')
    hg = read_search_graph(write("sg.txt", line))[0]
    assert [w.split() for w in summary(hg)] == [words]


def test_gzip_and_crlf(write):
    path = write("sg.txt.gz", gzip.compress(PLAIN.replace("\n", "\r\n").encode()))
    assert summary(read_search_graph(path)[0])["the house"] == {"transition": -3.9}


def test_empty_file_has_no_sentences(write):
    assert read_search_graph(write("sg.txt", "")) == {}


# ---------------------------------------------------------------------------------------
# bad input

H0 = "0 hyp=0 stack=0\n"
TAIL = "score=-1 transition=-1 forward=-1 fscore=0 covered=0-0"


@pytest.mark.parametrize("text, line, fragment", [
    (H0 + f"0 hyp=1 stack=1 back=9 {TAIL} out=a\n", 2, "back=9: hypothesis 9 has no line"),
    (H0 + f"0 hyp=1 stack=1 back=0 {TAIL} out=a\n0 hyp=2 stack=1 back=0 {TAIL.replace('forward', 'recombined=5 forward')} out=a\n",
     3, "recombined=5"),
    (H0 + f"0 hyp=1 stack=1 back=0 {TAIL} out=a\n0 hyp=1 stack=1 back=0 {TAIL} out=b\n", 3, "appears twice"),
    (H0 + "1 hyp=0 stack=0\n0 hyp=0 stack=0\n", 3, "sentence 0 appears again"),
    ("x hyp=0 stack=0\n", 1, "expected a sentence id"),
    (H0 + f"0 hyp=1 stack=1 back=0 {TAIL} bogus=1 out=a\n", 2, "'bogus=1'"),
    (H0 + f"0 hyp=1 stack=1 back=0 {TAIL}\n", 2, "expected out="),
    (H0 + "0 hyp=1 stack=1 back=0 score=-1 forward=-1 fscore=0 covered=0-0 out=a\n", 2, "transition="),
    (H0 + f"0 hyp=1 stack=1 back=0 {TAIL.replace('transition=-1', 'transition=nan')} out=a\n", 2, "finite"),
    (H0 + f"0 hyp=1 stack=1 back=0 {TAIL.replace('transition=-1', 'transition=1e999')} out=a\n", 2, "finite"),
    (H0 + f"0 hyp=1 stack=0 back=0 {TAIL} out=a\n", 2, "no more than its back"),
    (H0 + f"0 hyp=1 stack=1 back=0 {TAIL} out=a\n0 hyp=2 stack=2 back=0 {TAIL.replace('forward', 'recombined=1 forward')} out=a\n",
     3, "recombined into hypothesis 1"),
    (H0 + f"0 hyp=1 stack=1 back=0 {TAIL} out=a\n0 hyp=2 stack=1 back=0 {TAIL} "
     'scores="core=(1) " out="x|a"\n', 3, "extended"),
    (H0 + f'0 hyp=1 stack=1 back=0 {TAIL} scores="core=(1,2) " out="x|a"\n'
     f'0 hyp=2 stack=1 back=0 {TAIL} scores="core=(1) " out="x|a"\n', 3, "expected 2"),
    (H0 + f'0 hyp=1 stack=1 back=0 {TAIL} scores="core=(1,x) " out="x|a"\n', 2, "core_1"),
    (H0 + f'0 hyp=1 stack=1 back=0 {TAIL} scores="core=(1) WT_a" out="x|a"\n', 2, "name=value"),
    (H0 + f'0 hyp=1 stack=1 back=0 {TAIL} scores="core=(1) WT_a=1 WT_a=2" out="x|a"\n', 2,
     "score 'WT_a' appears twice on one line"),
    (H0 + f'0 hyp=1 stack=1 back=0 {TAIL} scores="core=(1) core_0=2" out="x|a"\n', 2, "score 'core_0' appears twice"),
    (H0 + f'0 hyp=1 stack=1 back=0 {TAIL} scores="core=(1) " out="x a"\n', 2, "cannot tell source"),
    (H0 + f'0 hyp=1 stack=1 back=0 {TAIL} scores="core=(1) out="x|a"\n', 2, 'scores="..." out='),
    ("0 hyp=0 stack=0 out=a\n", 1, "empty hypothesis"),
    ("0 hyp=3 stack=0\n", 1, "expected back="),
    (f"0 hyp=0 stack=1 back=0 {TAIL} out=a\n", 1, "hypothesis 0"),
    (f"0 hyp=1 stack=1 back=0 {TAIL} out=a\n", 1, "back=0: hypothesis 0 has no line"),
    (H0 + f"0 hyp=1 stack=99999999999 back=0 {TAIL} out=a\n", 2, "more source words"),
    ((H0 + f"0 hyp=1 stack=1 back=0 {TAIL} out=").encode() + b"\xff\n", 2, "invalid UTF-8"),
])
def test_bad_lines(write, input_error, text, line, fragment):
    path = write("sg.txt", text)
    with input_error(path, line, fragment):
        read_search_graph(path)


def test_dense_names_count_must_match(write, input_error):
    path = write("sg.txt", EXTENDED)
    with input_error(path, 2, "9 dense scores, but 2 dense names"):
        read_search_graph(path, dense_names=["a_0", "b_0"])
    with pytest.raises(ValueError):
        read_search_graph(path, dense_names=["a_0", "a_0"])


def test_truncated_gzip(write, input_error):
    data = gzip.compress(PLAIN.encode())
    path = write("sg.txt.gz", data[: len(data) // 2])
    with input_error(path, None, "truncated"):
        read_search_graph(path)


def test_transition_sums_are_exact_model_scores(write):
    # the derivation's transition sum is Moses's score of the final hypothesis
    got = summary(read_search_graph(write("sg.txt", PLAIN))[0])
    assert math.isclose(got["house the"]["transition"], -4.8)
