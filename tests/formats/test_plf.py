"""PLF lattices (mtplug.formats.plf): cdec's own test lines, the mapping, round trips, bad input."""

from __future__ import annotations

import gzip
import itertools
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mtplug.errors import InputError
from mtplug.formats.plf import format_plf, parse_plf, read_plf, write_plf
from mtplug.hypergraph import HypergraphBuilder

# cdec tests/system_tests/lattice/input.txt (as quoted in shared/docs/cdec.md)
CDEC_LINE_1 = "((('A',0.5,1),('C',0.25,1),('AB',0.125,2),),(('B',2,1),),)"
CDEC_LINE_2 = r"((('A',0.5,1),('D\'',{'LatticeCost_0':0.1, 'UsesDPrime':1.0,},1),('B', 1)),)"


def paths(hg, summed=True):
    """Every derivation of a small hypergraph as (words, features): features summed, or
    (``summed=False``) as the sorted multiset of (name, value) over its edges (exact)."""
    memo = {}

    def of(v):
        if v not in memo:
            out = []
            for e in hg.in_edges(v):
                tails = hg.edge_tails(e).tolist()
                for combo in itertools.product(*(of(t) for t in tails)):
                    words = []
                    for r in hg.edge_rhs(e).tolist():
                        words.extend(combo[-r - 1][0] if r < 0 else [hg.words[r]])
                    feats = list(hg.edge_features(e).items())
                    for _, f in combo:
                        feats.extend(f)
                    out.append((tuple(words), feats))
            memo[v] = out
        return memo[v]

    if not summed:
        return sorted((" ".join(w), tuple(sorted(f))) for w, f in of(hg.goal))
    out = []
    for w, f in of(hg.goal):
        total = Counter()
        for name, value in f:
            total[name] += value
        out.append((" ".join(w), dict(total)))
    return sorted(out, key=lambda x: (x[0], sorted(x[1].items())))


def canonical(hg):
    """Node count and the multiset of edges (tails, head, words/slots, features)."""
    edges = []
    for e in range(hg.n_edges):
        rhs = tuple(hg.words[r] if r >= 0 else r for r in hg.edge_rhs(e).tolist())
        edges.append((tuple(hg.edge_tails(e).tolist()), int(hg.edge_head[e]), rhs,
                      tuple(sorted(hg.edge_features(e).items()))))
    return hg.n_nodes, sorted(edges, key=repr)


# ---------------------------------------------------------------------------------------
# cdec's lines


def test_cdec_line_1_paths_and_layout():
    hg = parse_plf(CDEC_LINE_1)
    assert hg.n_nodes == 3 and hg.goal == 2 and hg.is_lattice
    assert paths(hg) == [("A B", {"LatticeCost_0": 2.5}), ("AB", {"LatticeCost_0": 0.125}),
                         ("C B", {"LatticeCost_0": 2.25})]
    # node 0: one axiom edge, nothing on it
    (axiom,) = hg.in_edges(0)
    assert len(hg.edge_tails(axiom)) == 0 and len(hg.edge_rhs(axiom)) == 0 and hg.edge_features(axiom) == {}
    for e in range(hg.n_edges):
        if e != axiom:
            rhs = hg.edge_rhs(e).tolist()
            assert len(hg.edge_tails(e)) == 1 and rhs[0] == -1 and len(rhs) == 2


def test_cdec_line_2_sparse_escape_and_lone_jump():
    hg = parse_plf(CDEC_LINE_2)
    assert hg.n_nodes == 2
    assert paths(hg) == [("A", {"LatticeCost_0": 0.5}), ("B", {}),
                         ("D'", {"LatticeCost_0": 0.1, "UsesDPrime": 1.0})]


def test_cdec_lines_are_written_as_cdec_writes_them():
    assert format_plf(parse_plf(CDEC_LINE_1)) == \
        "((('A',0.5,1),('C',0.25,1),('AB',0.125,2),),(('B',2.0,1),),)"
    # arcs carry different feature sets: the dict form for all of them, names sorted
    assert format_plf(parse_plf(CDEC_LINE_2)) == \
        r"((('A',{'LatticeCost_0':0.5},1),('D\'',{'LatticeCost_0':0.1,'UsesDPrime':1.0},1),('B',{},1),),)"


def test_cdec_lines_in_a_file(tmp_path):
    p = tmp_path / "input.txt"
    p.write_text(CDEC_LINE_1 + "\n" + CDEC_LINE_2 + "\n")
    hgs = read_plf(p)
    assert [paths(h) for h in hgs] == [paths(parse_plf(CDEC_LINE_1)), paths(parse_plf(CDEC_LINE_2))]
    assert all(h.source == str(p) for h in hgs)


# ---------------------------------------------------------------------------------------
# the forms PLF allows


@pytest.mark.parametrize("text, expected", [
    ("()", [("", {})]),
    ("((('a',1),),)", [("a", {})]),
    ("((('a',1)))", [("a", {})]),                                    # no trailing commas
    ("  ( ( ( 'a' ,\t-1.5 , 1 , ) , ) , )  ", [("a", {"LatticeCost_0": -1.5})]),
    ("((('a',1,2,3,1),),)", [("a", {"LatticeCost_0": 1.0, "LatticeCost_1": 2.0, "LatticeCost_2": 3.0})]),
    ("((('*EPS*',0.5,1),('b',1),),)", [("", {"LatticeCost_0": 0.5}), ("b", {})]),
    ("((('a',0.5,lm=-2,tm=1e-3,1),),)", [("a", {"LatticeCost_0": 0.5, "lm": -2.0, "tm": 0.001})]),  # Moses
    ("((('a',{},1),),)", [("a", {})]),
    ("((('a',0.5,{'x\\\\y':1},1),),)", [("a", {"LatticeCost_0": 0.5, "x\\y": 1.0})]),
    ("((('it\\'s a \\\\ \"w\"',1),),)", [("it's a \\ \"w\"", {})]),
    ("((('a',1),('b',2),),(('c',1),),)", [("a c", {}), ("b", {})]),
    ("((('a',+2,+1),),)", [("a", {"LatticeCost_0": 2.0})]),
])
def test_accepted_forms(text, expected):
    assert paths(parse_plf(text)) == expected


def test_epsilon_is_a_bare_tail_slot():
    hg = parse_plf("((('*EPS*',1),),)")
    (arc,) = [e for e in range(hg.n_edges) if len(hg.edge_tails(e))]
    assert hg.edge_rhs(arc).tolist() == [-1] and hg.words == []
    assert format_plf(hg) == "((('*EPS*',1),),)"


def test_columns_out_of_builder_order_round_trip():
    # the builder's topological order differs from the PLF column order here
    text = "((('a',1),('b',2),),(('c',2),),(('d',2),),(('e',1),),)"
    hg = parse_plf(text)
    assert paths(hg) == [("a c e", {}), ("b d", {})]
    written = format_plf(hg)
    again = parse_plf(written)
    assert canonical(again) == canonical(hg)
    assert format_plf(again) == written


# ---------------------------------------------------------------------------------------
# bad input: file:line and the character where reading stopped

BAD = [
    ("x", 1, "expected '('"),
    ("(", 2, "expected '(' starting a column"),
    ("(,)", 2, "expected '(' starting a column or ')' ending the lattice, found ','"),
    ("((),)", 2, "the column of node 0 is empty"),
    ("((('a',1),)", 12, "expected ',' or ')'"),
    ("((('a',1),),) x", 15, "unexpected text after the lattice"),
    ("((('a',1),),))", 14, "unexpected text"),
    ('((("a",1),),)', 4, "single-quoted"),
    ("(((a,1),),)", 4, "expected a single-quoted word"),
    ("((('a,1),),)", 4, "unterminated quoted word"),
    (r"((('a\n',1),),)", 6, "unknown escape"),
    ("((('',1),),)", 4, "empty word"),
    ("((('a'),),)", 7, "expected ',' after the word 'a'"),
    ("((('a',),),)", 8, "expected a cost or the jump (a positive integer), found ')'"),
    ("((('a',0.5),),)", 8, "expected the jump (a positive integer)"),
    ("((('a',0.5,1.0),),)", 12, "expected the jump"),
    ("((('a',{'x':1}),),)", 8, "expected the jump"),
    ("((('a',1,0),),)", 10, "expected a jump of at least 1"),
    ("((('a',1,2),),)", 10, "past the final node 1"),
    ("((('a',1,99999999999999999999999),),)", 10, "past the final node"),
    ("((('a',nan,1),),)", 8, "a cost is 'nan'; expected a finite number"),
    ("((('a',inf,1),),)", 8, "a cost is 'inf'; expected a finite number"),
    ("((('a',1e999,1),),)", 8, "overflows a double"),
    ("((('a',0x10,1),),)", 8, "expected a number"),
    ("((('a',{'x':nan},1),),)", 13, "feature 'x'"),
    ("((('a',{'x':1,'x':2},1),),)", 15, "feature 'x' is given twice"),
    ("((('a',{x:1},1),),)", 9, "expected a single-quoted word"),
    ("((('a',{'x' 1},1),),)", 13, "expected ':'"),
    ("((('a',{'x':1 'y':2},1),),)", 15, "expected ',' or '}'"),
    ("((('a',1,{'LatticeCost_0':1},1),),)", 11, "'LatticeCost_0' is given twice"),
    ("((('a',x=1,2,1),),)", 12, "a dense cost cannot follow sparse features"),
    ("((('a',=1,1),),)", 8, "expected 'name=value'"),
    ("((('a',x=y,1),),)", 8, "expected a number for feature 'x'"),
    ("((('a',1,2),),(('b',1),),)", 15, "no arc reaches node 1"),
]


@pytest.mark.parametrize("text, char, fragment", BAD)
def test_bad_lines_name_file_line_and_character(tmp_path, input_error, text, char, fragment):
    p = tmp_path / "bad.plf"
    p.write_text(CDEC_LINE_1 + "\n" + text + "\n")
    with input_error(p, 2, f"character {char}: ", fragment):
        read_plf(p)


def test_parse_plf_without_a_file_names_the_line():
    with pytest.raises(InputError) as info:
        parse_plf("((", line=7)
    assert str(info.value).startswith("line 7: character 3: ")


def test_blank_line_is_an_error(tmp_path, input_error):
    p = tmp_path / "blank.plf"
    p.write_text(CDEC_LINE_1 + "\n \n" + CDEC_LINE_1 + "\n")
    with input_error(p, 2, "blank line", "()"):
        read_plf(p)


def test_empty_file_has_no_lattices(tmp_path):
    p = tmp_path / "empty.plf"
    p.write_bytes(b"")
    assert read_plf(p) == []


@pytest.mark.parametrize("data, line, fragment", [
    (b"((('\xff',1),),)\n", 1, "invalid UTF-8"),
    (gzip.compress(b"((('a',1),),)\n" * 50)[:-12], None, "truncated"),
])
def test_bytes_that_are_not_text(tmp_path, input_error, data, line, fragment):
    p = tmp_path / "bytes.plf"
    p.write_bytes(data)
    with input_error(p, line, fragment):
        read_plf(p)


def test_missing_file(tmp_path, input_error):
    with input_error(tmp_path / "nope.plf", None, "no such file"):
        read_plf(tmp_path / "nope.plf")


# ---------------------------------------------------------------------------------------
# writing


def _lattice(edges, n, axiom_features=()):
    """A hypergraph from (head, tails, rhs, features) edges plus node 0's axiom."""
    b = HypergraphBuilder()
    for v in range(n):
        b.node(v)
    b.edge(0, (), (), axiom_features)
    for head, tails, rhs, feats in edges:
        b.edge(head, tails, rhs, feats)
    return b.build(n - 1)


@pytest.mark.parametrize("hg, fragment", [
    (lambda: _lattice([(1, (0,), [0, "a"], {}), (2, (0, 1), [0, 1], {})], 3), "more than one tail"),
    (lambda: _lattice([(1, (0,), [0, "a"], {})], 2, {"f": 1}), "node 0 must have exactly one edge"),
    (lambda: _lattice([(1, (0,), [0, "a"], {}), (2, (1,), [0, "b"], {}), (2, (), ["c"], {})], 3), "has no tail"),
    (lambda: _lattice([(1, (0,), ["a", 0], {})], 2), "right-hand side"),
    (lambda: _lattice([(1, (0,), [0, "a", "b"], {})], 2), "right-hand side"),
    (lambda: _lattice([(1, (0,), [0, "*EPS*"], {})], 2), "'*EPS*'"),
    (lambda: _lattice([(1, (0,), [0, "a\nb"], {})], 2), "line break"),
    (lambda: _lattice([(1, (0,), [0, "a"], {"f\r": 1})], 2), "line break"),
])
def test_writer_refuses_what_plf_cannot_hold(hg, fragment):
    with pytest.raises(ValueError, match=None) as info:
        format_plf(hg())
    assert fragment in str(info.value)


def test_writer_needs_an_outgoing_arc_per_node():
    hg = parse_plf("((('a',1),),(('b',1),),)")
    hg.tails[hg.tails == 1] = 0  # node 1 keeps its in-arc but loses its out-arc
    hg.check()
    with pytest.raises(ValueError, match="node 1 has no outgoing edge"):
        format_plf(hg)


def test_dense_form_needs_the_same_count_everywhere():
    hg = parse_plf("((('a',1,1),('b',1,2,1),),)")
    assert format_plf(hg) == \
        "((('a',{'LatticeCost_0':1.0},1),('b',{'LatticeCost_0':1.0,'LatticeCost_1':2.0},1),),)"


def test_write_plf_round_trip_gz_and_atomic(tmp_path):
    hgs = [parse_plf(CDEC_LINE_1), parse_plf(CDEC_LINE_2), parse_plf("()")]
    for name in ("out.plf", "out.plf.gz"):
        p = tmp_path / name
        write_plf(p, hgs)
        back = read_plf(p)
        assert [canonical(h) for h in back] == [canonical(h) for h in hgs]
    assert gzip.decompress((tmp_path / "out.plf.gz").read_bytes()) == (tmp_path / "out.plf").read_bytes()
    before = (tmp_path / "out.plf").read_bytes()
    bad = _lattice([(1, (0,), [0, "*EPS*"], {})], 2)
    with pytest.raises(ValueError):
        write_plf(tmp_path / "out.plf", [hgs[0], bad])
    assert (tmp_path / "out.plf").read_bytes() == before
    assert sorted(x.name for x in tmp_path.iterdir()) == ["out.plf", "out.plf.gz"]


# ---------------------------------------------------------------------------------------
# property: random lattices in random spellings


def _quote(w):
    return "'" + w.replace("\\", "\\\\").replace("'", "\\'") + "'"


_words = st.one_of(st.just("*EPS*"), st.text(st.characters(blacklist_characters="\n\r",
                                                           blacklist_categories=("Cs",)), min_size=1, max_size=6))
_values = st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.integers(-10**6, 10**6))


@st.composite
def lattices(draw):
    """(PLF text, expected paths) of a random lattice in a random mix of the allowed forms."""
    n = draw(st.integers(0, 5))
    form = draw(st.sampled_from(["dense", "dict", "moses"]))
    k = draw(st.integers(0, 2))
    sep = draw(st.sampled_from(["", " ", " \t"]))
    columns = []
    incoming = [0] * (n + 1)
    for i in range(n):
        arcs = []
        for _ in range(draw(st.integers(1, 3))):
            jump = draw(st.integers(1, n - i))
            incoming[i + jump] += 1
            arcs.append((draw(_words), draw(st.lists(_values, min_size=k, max_size=k)), jump))
        columns.append(arcs)
    for v in range(1, n + 1):
        if not incoming[v]:
            columns[v - 1].append(("fill", [0.0] * k, 1))
    text_cols = []
    for arcs in columns:
        items = []
        for word, costs, jump in arcs:
            if form == "dense":
                feats = [repr(c) for c in costs]
            elif form == "dict":
                feats = ["{" + ",".join(f"{_quote(f'LatticeCost_{j}')}:{c!r}" for j, c in enumerate(costs)) + "}"]
            else:
                feats = [f"LatticeCost_{j}={c!r}" for j, c in enumerate(costs)]
            items.append("(" + f",{sep}".join([_quote(word), *feats, str(jump)]) + ")")
        text_cols.append("(" + f",{sep}".join(items) + ",)")
    text = "(" + f",{sep}".join(text_cols) + ")"

    def walk(v):
        if v == n:
            yield (), ()
            return
        for word, costs, jump in columns[v]:
            here = tuple((f"LatticeCost_{j}", float(c)) for j, c in enumerate(costs))
            for rest, f in walk(v + jump):
                yield (() if word == "*EPS*" else (word,)) + rest, here + f

    expected = sorted((" ".join(w), tuple(sorted(f))) for w, f in walk(0))
    return text, expected


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lattices())
def test_random_lattices_read_write_read(case):
    text, expected = case
    hg = parse_plf(text)
    assert paths(hg, summed=False) == expected
    written = format_plf(hg)
    again = parse_plf(written)
    assert canonical(again) == canonical(hg)  # exact: the same node ids, words and doubles
    assert format_plf(again) == written       # what we wrote comes back byte-identical
