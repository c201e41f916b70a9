"""cdec's JSON hypergraphs (mtplug.formats.cdec_json): a forest in cdec's layout, round trips, bad input."""

from __future__ import annotations

import gzip
import itertools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplug.formats.cdec_json import format_cdec_json, parse_cdec_json, read_cdec_json, rule_target, write_cdec_json
from mtplug.errors import InputError
from mtplug.hypergraph import HypergraphBuilder

# A forest for "el gato negro" in the layout of cdec's WriteToJSON (rules, features, then
# "edges"/"node" per node in topological order), with the variants its reader accepts: the
# one-separator rule form of cdec's own tests, a rule given as a string on the edge, a
# feature given by name, null tails/feats, cat, spans, is_sorted. Node 3 ("un") is not
# reached from the goal.
SAMPLE = (
    '{"rules":[1,"[X] ||| el ||| the",2,"[X] ||| gato ||| cat",3,"[X] ||| negro ||| black",'
    '4,"[X] ||| [X,1] [X,2] ||| [2] [1]",5,"[X] ||| [X,1] [X,2] ||| [1] [2]",6,"[X] ||| un",'
    '7,"[S] ||| [X,1] [X,2] ||| [1] [2] ||| Glue=1"],'
    '"features":["PhraseModel_0","LanguageModel","Glue","Unused"],"is_sorted":true,'
    '"edges":[{"tail":[],"spans":[0,1,-1,-1],"feats":[0,-0.5,1,-2.25],"rule":1}],'
    '"node":{"in_edges":[0],"cat":"X"},'
    '"edges":[{"tail":null,"spans":[1,2,-1,-1],"feats":[0,-1],"rule":2}],"node":{"in_edges":[1],"cat":"X"},'
    '"edges":[{"tail":[],"spans":[2,3,-1,-1],"feats":[0,-1.5,"PassThrough",1],"rule":3}],'
    '"node":{"in_edges":[2],"cat":"X"},'
    '"edges":[{"tail":[],"feats":null,"rule":6}],"node":{"in_edges":[3],"cat":"X"},'
    '"edges":[{"tail":[1,2],"spans":[1,3,-1,-1],"feats":[1,-3],"rule":4},'
    '{"tail":[1,2],"spans":[1,3,-1,-1],"feats":[1,-7e-1,1,-7.5],"rule":5}],"node":{"in_edges":[4,5],"cat":"X"},'
    '"edges":[{"tail":[0,4],"spans":[0,3,-1,-1],"feats":[2,1],"rule":7},'
    '{"tail":[0],"feats":[2,1],"rule":"[S] ||| A [1] ||| A [1]"},'
    '{"tail":[0,4],"feats":[],"rule":"[S] ||| [1] [2]"}],"node":{"in_edges":[6,7,8],"cat":"S"}}\n'
)


def derivations(hg):
    """Every derivation of a small hypergraph: (string, {feature: summed value}), sorted."""
    memo = {}

    def of(v):
        if v not in memo:
            out = []
            for e in hg.in_edges(v):
                for combo in itertools.product(*(of(t) for t in hg.edge_tails(e).tolist())):
                    words = []
                    for r in hg.edge_rhs(e).tolist():
                        words.extend(combo[-r - 1][0] if r < 0 else [hg.words[r]])
                    feats = dict(hg.edge_features(e))
                    for _, f in combo:
                        for k, x in f.items():
                            feats[k] = feats.get(k, 0.0) + x
                    out.append((words, feats))
            memo[v] = out
        return memo[v]

    return sorted(((" ".join(w), f) for w, f in of(hg.goal)), key=lambda d: (d[0], sorted(d[1].items())))


def edges_of(hg):
    """Per edge in order: head, tails, target side (words and tail slots), features."""
    return [(int(hg.edge_head[e]), hg.edge_tails(e).tolist(),
             [hg.words[r] if r >= 0 else r for r in hg.edge_rhs(e).tolist()], hg.edge_features(e))
            for e in range(hg.n_edges)]


@pytest.fixture
def sample(tmp_path):
    p = tmp_path / "0.json.gz"
    p.write_bytes(gzip.compress(SAMPLE.encode()))
    return p


def test_sample_derivations(sample):
    hg = read_cdec_json(sample)
    assert hg.n_nodes == 5 and hg.source == str(sample)  # node "un" dropped
    the = {"PhraseModel_0": -0.5, "LanguageModel": -2.25}
    cat_black = {"PhraseModel_0": -2.5, "PassThrough": 1.0}

    def plus(*fs):
        out = {}
        for f in fs:
            for k, x in f.items():
                out[k] = out.get(k, 0.0) + x
        return out

    assert derivations(hg) == sorted([
        ("A the", plus(the, {"Glue": 1.0})),
        ("the black cat", plus(the, cat_black, {"LanguageModel": -3.0, "Glue": 1.0})),
        ("the black cat", plus(the, cat_black, {"LanguageModel": -3.0})),
        ("the cat black", plus(the, cat_black, {"LanguageModel": -7.5, "Glue": 1.0})),
        ("the cat black", plus(the, cat_black, {"LanguageModel": -7.5})),
    ], key=lambda d: (d[0], sorted(d[1].items())))
    # every name of "features" is kept, in file order, then names met on edges
    assert hg.feature_names == ["PhraseModel_0", "LanguageModel", "Glue", "Unused", "PassThrough"]


def test_sample_round_trip_and_layout(sample, tmp_path):
    hg = read_cdec_json(sample)
    out = tmp_path / "1.json.gz"
    write_cdec_json(out, hg)
    text = gzip.decompress(out.read_bytes()).decode()
    assert text.count("\n") == 1 and text.endswith("}\n")
    assert text.startswith('{"rules":[1,"[X] ||| the ||| the",')
    assert '"[X] ||| [X,2] [X,1] ||| [2] [1]"' in text
    pairs = json.loads(text, object_pairs_hook=lambda p: p)
    assert [k for k, _ in pairs] == ["rules", "features"] + ["edges", "node"] * hg.n_nodes
    back = read_cdec_json(out)
    assert edges_of(back) == edges_of(hg) and back.feature_names == hg.feature_names
    plain = tmp_path / "1.json"
    write_cdec_json(plain, back)
    assert plain.read_text() == text


@pytest.mark.parametrize("rule, target", [
    ("[X] ||| a [X,1] ||| b [1] c", ["b", 0, "c"]),
    ("[X] ||| [X,1] [X,2] ||| [X,2] [Y,1]", [1, 0]),
    ("[X] ||| [1] a", [0, "a"]),                       # LHS ||| target (cdec's tests)
    ("[X] ||| a ||| b ||| PhraseModel_0=1 ||| 0-0", ["b"]),
    ("[X] |||  ||| ", []),
    ("[X] ||| a ||| [10] [0] [,1] [X,] x[1]", ["[10]", "[0]", "[,1]", "[X,]", "x[1]"]),
    ("[X]\t|||\ta\t|||\tb\u00a0c", ["b\u00a0c"]),        # only ASCII blanks separate tokens
    ("no separator", None),
])
def test_rule_target(rule, target):
    assert rule_target(rule) == target


# ---------------------------------------------------------------------------------------
# bad input

GOOD_HEAD = '{"rules":[1,"[X] ||| a ||| a"],"features":["f"],'
GOOD_NODE = '"edges":[{"tail":[],"feats":[0,1],"rule":1}],"node":{"in_edges":[0]}'


@pytest.mark.parametrize("text, line, fragment", [
    ("", None, "empty file; expected a cdec JSON forest"),
    (GOOD_HEAD + GOOD_NODE, 1, "invalid JSON"),                       # truncated
    (GOOD_HEAD + "\n" + GOOD_NODE + ",\n}", 3, "invalid JSON"),
    ("[1, 2]", None, "expected a JSON object"),
    ("{}", None, "no nodes"),
    ('{"rules":[1,"a ||| b"],"foo":1}', None, "unexpected key 'foo'"),
    ('{"features":["a"],"features":["b"]}', None, "'features' is given twice"),
    ('{"features":[1]}', None, "'features' must be a list of feature names"),
    ('{"rules":[1]}', None, "flat list of rule id, rule string pairs"),
    ('{"rules":["1","[X] ||| a ||| a"]}', None, "expected an integer rule id"),
    ('{"rules":[1,"[X] ||| a ||| a",1,"[X] ||| b ||| b"]}', None, "rule id 1 is defined twice"),
    ('{"rules":[1,"[X] a"]}', None, "rule 1: expected a rule"),
    ('{"is_sorted":1}', None, "'is_sorted' must be true or false"),
    ('{"edges":{}}', None, "'edges' must be a list"),
    ('{"edges":[1]}', None, "edge 0: expected an object"),
    ('{"edges":[{"tail":[],"rule":"[X] ||| a ||| a","span":[]}]}', None, "unexpected key 'span'"),
    ('{"edges":[{"tail":[],"tail":[],"rule":"[X] ||| a ||| a"}]}', None, "key 'tail' is given twice"),
    ('{"edges":[{"tail":[-1],"rule":"[X] ||| a ||| a"}]}', None, "'tail' must be a list of node ids"),
    ('{"edges":[{"tail":[true],"rule":"[X] ||| a ||| a"}]}', None, "'tail' must be a list of node ids"),
    ('{"edges":[{"tail":[],"spans":[1,2,3,4,5],"rule":"[X] ||| a ||| a"}]}', None, "'spans'"),
    ('{"edges":[{"tail":[]}]}', None, "edge 0 has no rule"),
    ('{"edges":[{"tail":[],"rule":3}]}', None, "rule id 3 is not defined"),
    ('{"edges":[{"tail":[],"rule":1.5}]}', None, "'rule' must be a rule id or a rule string"),
    ('{"edges":[{"tail":[],"rule":"[X] ||| a ||| [1]"}]}', None, "refers to [1] but the edge has 0 tails"),
    ('{"edges":[{"tail":[],"feats":[0],"rule":"[X] ||| a ||| a"}]}', None, "flat list of feature, value"),
    ('{"edges":[{"tail":[],"feats":[0,1],"rule":"[X] ||| a ||| a"}]}', None, "feature index 0 is not in"),
    ('{"edges":[{"tail":[],"feats":[1.5,1],"rule":"[X] ||| a ||| a"}]}', None, "an index into 'features'"),
    ('{"edges":[{"tail":[],"feats":["f","1"],"rule":"[X] ||| a ||| a"}]}', None, "must be a number"),
    ('{"edges":[{"tail":[],"feats":["f",true],"rule":"[X] ||| a ||| a"}]}', None, "must be a number"),
    ('{"edges":[{"tail":[],"feats":["f",NaN],"rule":"[X] ||| a ||| a"}]}', 1, "NaN is not a number; expected a finite value (column 35)"),
    ('{"edges":[{"tail":[],"feats":["f",-Infinity],"rule":"[X] ||| a ||| a"}]}', 1, "-Infinity is not a number"),
    ('{"edges":[{"tail":[],"feats":["f",1e999],"rule":"[X] ||| a ||| a"}]}', None, "overflows a double"),
    ('{"edges":[{"tail":[],"feats":["f",' + "9" * 400 + '],"rule":"[X] ||| a ||| a"}]}', None,
     "overflows a double"),
    ('{"edges":[{"tail":[],"feats":["f",' + "9" * 5000 + '],"rule":"[X] ||| a ||| a"}]}', None, "invalid JSON"),
    ('{"node":[]}', None, "node 0: expected an object"),
    ('{"node":{"in_edges":[0]}}', None, "in-edge 0 is not one of the 0 edges"),
    ('{"node":{"in_edges":["0"]}}', None, "'in_edges' must be a list of edge numbers"),
    ('{"node":{"in_edges":[],"cat":1}}', None, "'cat' must be a string"),
    ('{"node":{"in_edges":[],"x":1}}', None, "unexpected key 'x'"),
    ('{"node":{"in_edges":[],"in_edges":[]}}', None, "key 'in_edges' is given twice"),
    (GOOD_HEAD + GOOD_NODE + ',"node":{"in_edges":[0]}}', None, "edge 0 is already an in-edge of node 0"),
    ('{"edges":[{"tail":[0],"rule":"[X] ||| a ||| a"}],"node":{"in_edges":[0]}}', None,
     "not an earlier node"),
    ('{"edges":[{"tail":[],"rule":"[X] ||| a ||| a"},{"tail":[],"rule":"[X] ||| a ||| a"}],'
     '"node":{"in_edges":[0]}}', None, "edge 1 is not an in-edge of any node"),
    ('{"edges":[],"node":{"in_edges":[]}}', None, "has no incoming edge"),
    ("[" * 100000, None, "invalid JSON"),
])
def test_bad_input(tmp_path, input_error, text, line, fragment):
    p = tmp_path / "bad.json"
    p.write_text(text)
    with input_error(p, line, fragment):
        read_cdec_json(p)


@pytest.mark.parametrize("data, line, fragment", [
    (b'{"features":["\xff"]}', 1, "invalid UTF-8"),
    (b'{"features":\n["\xc3"]}', 2, "invalid UTF-8"),
    (gzip.compress(SAMPLE.encode())[:-10], None, "truncated"),
    (gzip.compress(SAMPLE.encode())[:30], None, "truncated"),
])
def test_bad_bytes(tmp_path, input_error, data, line, fragment):
    p = tmp_path / "bad.json.gz"
    p.write_bytes(data)
    with input_error(p, line, fragment):
        read_cdec_json(p)


# ---------------------------------------------------------------------------------------
# writing what a cdec rule cannot hold


def _hg(words=("a",), n_tails=0):
    b = HypergraphBuilder()
    for v in range(n_tails):
        b.edge(v, (), ["x"])
    b.edge("goal", list(range(n_tails)), [*words, *range(n_tails)])
    return b.build("goal")


@pytest.mark.parametrize("hg, fragment", [
    (lambda: _hg(["a b"]), "'a b'"),
    (lambda: _hg(["a\tb"]), "cannot be written"),
    (lambda: _hg([""]), "cannot be written"),
    (lambda: _hg(["|||"]), "cannot be written"),
    (lambda: _hg(["a|||b"]), "cannot be written"),
    (lambda: _hg(["[1]"]), "cannot be written"),
    (lambda: _hg(["[X,3]"]), "cannot be written"),
    (lambda: _hg([], n_tails=10), "at most 9 tails"),
])
def test_writer_refuses(tmp_path, hg, fragment):
    p = tmp_path / "out.json"
    p.write_text("old")
    with pytest.raises(ValueError) as info:
        write_cdec_json(p, hg())
    assert fragment in str(info.value)
    assert p.read_text() == "old" and sorted(x.name for x in tmp_path.iterdir()) == ["out.json"]


def test_nine_tails_are_fine(tmp_path):
    hg = _hg(["[10]", "x[1]", "\u00a0"], n_tails=9)
    write_cdec_json(tmp_path / "nine.json", hg)
    assert edges_of(read_cdec_json(tmp_path / "nine.json")) == edges_of(hg)


# ---------------------------------------------------------------------------------------
# property: random hypergraphs survive write -> read exactly

_ascii_blank = " \t\n\r\x0b\x0c"
_words = st.text(st.characters(blacklist_characters=_ascii_blank, blacklist_categories=("Cs",)),
                 min_size=1, max_size=5).filter(lambda w: "|||" not in w and not (w[0] == "[" and w[-1] == "]"))
_names = st.text(st.characters(blacklist_categories=("Cs",)), max_size=6)
_values = st.floats(allow_nan=False, allow_infinity=False)


@st.composite
def hypergraphs(draw):
    n = draw(st.integers(1, 6))
    names = draw(st.lists(_names, min_size=1, max_size=4, unique=True))
    b = HypergraphBuilder()
    for v in range(n):
        b.node(v)
        for _ in range(draw(st.integers(1, 3))):
            tails = draw(st.lists(st.integers(0, v - 1), max_size=3)) if v else []
            items = draw(st.lists(st.one_of(_words, st.integers(0, 2)), max_size=4))
            rhs = [x for x in items if isinstance(x, str) or x < len(tails)]
            feats = draw(st.lists(st.tuples(st.sampled_from(names), _values), max_size=3, unique_by=lambda t: t[0]))
            b.edge(v, tails, rhs, feats)
    return b.build(n - 1)


@settings(max_examples=150, deadline=None)
@given(hypergraphs())
def test_random_hypergraphs_round_trip(hg):
    text = format_cdec_json(hg)
    back = parse_cdec_json(text, "random.json")
    assert back.n_nodes == hg.n_nodes
    assert edges_of(back) == edges_of(hg)  # same node ids and edge order, exact doubles
    assert back.feature_names == hg.feature_names
    assert format_cdec_json(back) == text  # written back byte-identical


def test_parse_without_a_file():
    with pytest.raises(InputError) as info:
        parse_cdec_json("{}")
    assert info.value.path is None and str(info.value) == "the hypergraph has no nodes"
