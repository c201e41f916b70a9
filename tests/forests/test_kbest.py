"""Forest k-best (pyx/_kbest.pyx, mtplug/forests/kbest.py) against brute force.

The reference (tests/reference/forest_brute.py) enumerates every derivation of a small
random hypergraph: k-best must be its ordering by score (ties compared as multisets of
strings), unique k-best its best derivation per string, and the exact order must follow
the documented tie rule. Values are multiples of 1/8 in most tests, so scores are exact
and ties frequent.
"""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplug._ext import _kbest
from mtplug.corpus import NbestCorpus
from mtplug.forests.kbest import Derivation, kbest, kbest_nbest_lines, nbest_line, score_edges
from mtplug.hypergraph import HypergraphBuilder
from tests.reference.forest_brute import derivation_words, dot, enumerate_derivations, kbest_order

WORDS = ("a", "b", "c")
FEATURES = ("lm", "tm_0", "wp", "x_y")   # with and without '_' (two n-best spellings)
BUDGET = 1200                            # derivations per node, so brute force stays fast
TOL = 1e-9

halves = st.integers(-6, 6).map(lambda x: x / 2)
quarters = st.integers(-8, 8).map(lambda x: x / 4)
# strategies are built once: building them per draw costs more than the tests themselves
_ints = {(lo, hi): st.integers(lo, hi) for lo in range(2) for hi in range(lo, 7)}
half_features = st.dictionaries(st.sampled_from(FEATURES), halves, max_size=3)
float_features = st.dictionaries(st.sampled_from(FEATURES), st.floats(-3, 3, allow_subnormal=False), max_size=3)


@st.composite
def forests(draw, features=half_features):
    """A random DAG: node v has 1-3 edges with 0-3 tails among nodes < v (fewer when the
    node would get more than BUDGET derivations), words and tail slots in random order
    (a slot sometimes dropped or repeated), 0-3 features."""
    n = draw(_ints[1, 6])
    rnd = draw(st.randoms(use_true_random=False))
    b = HypergraphBuilder("hypothesis")
    count: list[int] = []
    for v in range(n):
        total = 0
        for j in range(draw(_ints[1, 3])):
            tails, size = [], 1
            for _ in range(0 if v == 0 else draw(_ints[0, 3])):
                t = draw(_ints[0, v - 1])
                if size * count[t] > BUDGET:
                    break
                tails.append(t)
                size *= count[t]
            if j > 0 and total + size > BUDGET:
                break
            total += size
            rhs: list = list(range(len(tails)))
            shape = rnd.choice(("once", "once", "once", "drop", "twice"))
            if rhs and shape == "drop":
                rhs.pop(rnd.randrange(len(rhs)))
            elif rhs and shape == "twice":
                rhs.append(rnd.choice(rhs))
            rhs += rnd.choices(WORDS, k=rnd.randint(0, 2))
            rnd.shuffle(rhs)
            b.edge(v, tails, rhs, draw(features))
        count.append(total)
    return b.build(n - 1)


weight_maps = st.fixed_dictionaries({f: quarters for f in FEATURES})


def _check_features(got: dict, want: dict) -> None:
    assert got.keys() == want.keys()
    for name, value in want.items():
        assert got[name] == pytest.approx(value, abs=TOL)


def _check_ties(got: list[tuple[float, str]], ranked: list[tuple[float, str]]) -> None:
    """``got`` is a prefix of ``ranked`` (both (score, string), score descending) up to
    the order among equal scores: same scores, and per score the same multiset of
    strings (a subset for the score at which ``got`` is cut off)."""
    assert len(got) <= len(ranked)
    np.testing.assert_allclose([s for s, _ in got], [s for s, _ in ranked[: len(got)]], rtol=0, atol=TOL)
    if not got:
        return
    by_score_got, by_score_all = defaultdict(Counter), defaultdict(Counter)
    for s, w in got:
        by_score_got[s][w] += 1
    for s, w in ranked:
        by_score_all[s][w] += 1
    last = got[-1][0]
    for s, strings in by_score_got.items():
        if s == last and len(got) < len(ranked):
            assert not strings - by_score_all[s]
        else:
            assert strings == by_score_all[s]


@settings(max_examples=80, deadline=None)
@given(hg=forests(), weights=weight_maps, data=st.data())
def test_kbest_is_the_brute_force_ranking(hg, weights, data):
    brute = enumerate_derivations(hg)
    k = data.draw(st.integers(1, len(brute) + 3), label="k")
    got = kbest(hg, score_edges(hg, weights), k)
    assert len(got) == min(k, len(brute))
    by_edges = {edges: (words, feats, dot(feats, weights)) for edges, words, feats in brute}
    assert len({tuple(d.edges.tolist()) for d in got}) == len(got)
    for d in got:
        words, feats, score = by_edges[tuple(d.edges.tolist())]
        assert d.words == words
        _check_features(d.features, feats)
        assert d.score == pytest.approx(score, abs=TOL)
    assert all(a.score >= b.score for a, b in zip(got, got[1:]))
    ranked = sorted(((s, " ".join(w)) for w, _, s in by_edges.values()), key=lambda x: -x[0])
    _check_ties([(d.score, " ".join(d.words)) for d in got], ranked)


@settings(max_examples=80, deadline=None)
@given(hg=forests(), weights=weight_maps, data=st.data())
def test_unique_kbest_is_the_best_derivation_of_each_string(hg, weights, data):
    best: dict[str, float] = {}
    for _, words, feats in enumerate_derivations(hg):
        s, text = dot(feats, weights), " ".join(words)
        best[text] = max(best.get(text, -np.inf), s)
    k = data.draw(st.integers(1, len(best) + 3), label="k")
    got = kbest(hg, score_edges(hg, weights), k, unique=True)
    assert len(got) == min(k, len(best))
    texts = [" ".join(d.words) for d in got]
    assert len(set(texts)) == len(texts)
    for d, text in zip(got, texts):
        assert d.score == pytest.approx(best[text], abs=TOL)
    ranked = sorted(((s, w) for w, s in best.items()), key=lambda x: -x[0])
    _check_ties([(d.score, t) for d, t in zip(got, texts)], ranked)


@settings(max_examples=80, deadline=None)
@given(hg=forests(float_features),
       weights=st.fixed_dictionaries({f: st.floats(-2, 2, allow_subnormal=False) for f in FEATURES}),
       coarse=st.booleans())
def test_order_and_ties_follow_the_documented_rule(hg, weights, coarse):
    scores = score_edges(hg, weights)
    if coarse:  # many exact ties
        scores = np.round(scores)
    oracle = kbest_order(hg, scores)
    got = kbest(hg, scores, len(oracle) + 5)
    assert [(d.score, tuple(d.edges.tolist())) for d in got] == oracle
    seen, first = set(), []
    for s, edges in oracle:
        text = " ".join(derivation_words(hg, edges))
        if text not in seen:
            seen.add(text)
            first.append((s, edges))
    got = kbest(hg, scores, len(first) + 5, unique=True)
    assert [(d.score, tuple(d.edges.tolist())) for d in got] == first


def test_k_beyond_the_forest_returns_everything():
    hg = _lattice()
    assert len(kbest(hg, score_edges(hg, {"lm": 1}), 10**12)) == 8
    assert len(kbest(hg, score_edges(hg, {"lm": 1}), 10**12, unique=True)) == 6
    assert kbest(hg, score_edges(hg, {"lm": 1}), 0) == []


def _lattice():
    """0 -a|b-> 1 -c|ε-> 2 -c|ε-> 3: eight paths, six strings."""
    b = HypergraphBuilder("lattice")
    b.edge(0, [], [], {})
    b.edge(1, [0], [0, "a"], {"lm": -1})
    b.edge(1, [0], [0, "b"], {"lm": -1.5})
    b.edge(2, [1], [0, "c"], {"lm": -1})
    b.edge(2, [1], [0], {"lm": -0.25, "eps": 1})
    b.edge(3, [2], [0, "c"], {"lm": -2})
    b.edge(3, [2], [0], {"lm": -0.5, "eps": 1})
    return b.build(3)


def test_lattice_paths_in_order():
    hg = _lattice()
    assert hg.is_lattice
    got = kbest(hg, score_edges(hg, {"lm": 1.0, "unused": 5.0}), 100)
    assert [(d.score, " ".join(d.words)) for d in got] == [
        (-1.75, "a"), (-2.25, "b"), (-2.5, "a c"), (-3.0, "b c"), (-3.25, "a c"), (-3.75, "b c"),
        (-4.0, "a c c"), (-4.5, "b c c")]
    assert got[0].features == {"lm": -1.75, "eps": 2.0}
    assert [hg.edge_head[e] for e in got[0].edges] == [3, 2, 1, 0]   # goal first, then down the path
    uniq = kbest(hg, score_edges(hg, {"lm": 1.0}), 100, unique=True)
    assert [(d.score, " ".join(d.words)) for d in uniq] == [
        (-1.75, "a"), (-2.25, "b"), (-2.5, "a c"), (-3.0, "b c"), (-4.0, "a c c"), (-4.5, "b c c")]
    # max_derivations bounds the derivations looked at, duplicates included
    assert len(kbest(hg, score_edges(hg, {"lm": 1.0}), 100, unique=True, max_derivations=5)) == 4


def test_long_chain_needs_no_recursion():
    # the second best of the goal asks every node down the chain for its second best
    n = 5_000
    b = HypergraphBuilder("chain")
    b.edge(0, [], ["w"], {})
    for v in range(1, n):
        b.edge(v, [v - 1], [0, "x"], {})
        b.edge(v, [v - 1], [0, "y"], {"p": -(1 + v / 65536)})
    hg = b.build(n - 1)
    got = kbest(hg, score_edges(hg, {"p": 1.0}), 5)
    assert [d.score for d in got] == [0.0] + [-(1 + v / 65536) for v in range(1, 5)]
    assert got[1].words[:3] == ["w", "y", "x"] and len(got[1].words) == n
    assert len(got[4].edges) == n


def test_bad_arguments():
    hg = _lattice()
    s = score_edges(hg, {"lm": 1})
    for k in (-1, 1.5, True):
        with pytest.raises(ValueError, match="k must be"):
            kbest(hg, s, k)
    with pytest.raises(ValueError, match="shape"):
        kbest(hg, s[:-1], 3)
    bad = s.copy()
    bad[2] = np.nan
    with pytest.raises(ValueError, match=r"edge_scores\[2\] is not finite"):
        kbest(hg, bad, 3)
    with pytest.raises(ValueError, match="not finite"):
        score_edges(hg, {"lm": np.inf})
    with pytest.raises(ValueError, match="max_derivations"):
        kbest(hg, s, 3, True, max_derivations=2.5)
    with pytest.raises(ValueError, match="sent_id"):
        kbest_nbest_lines(-1, hg, {"lm": 1}, 3)


def test_kernel_wants_exact_dtypes():
    hg = _lattice()
    args = [hg.node_edges, hg.tail_indptr, hg.tails, hg.rhs_indptr, hg.rhs, np.arange(len(hg.words), dtype=np.int32),
            score_edges(hg, {}).astype(np.float32), 3, False, -1]
    with pytest.raises(ValueError, match="Buffer dtype mismatch"):
        _kbest.kbest(*args)


def test_overflowing_scores_are_reported():
    # +inf and -inf sub-derivations meeting at the goal: a NaN score
    b = HypergraphBuilder()
    b.edge("p", [], ["a"], {"f": 1.5e308})
    b.edge("n", [], ["b"], {"f": -1.5e308})
    b.edge("pp", ["p", "p"], [0, 1], {})
    b.edge("nn", ["n", "n"], [0, 1], {})
    b.edge("goal", ["pp", "nn"], [0, 1], {})
    hg = b.build("goal")
    with pytest.raises(FloatingPointError, match="NaN"):
        kbest(hg, score_edges(hg, {"f": 1.0}), 2)


def _forest_with_names():
    b = HypergraphBuilder("names")
    b.edge("x", [], ["das"], {"LanguageModel": -2.5, "PhraseModel_0": 0.1, "zero": 0.0})
    b.edge("x", [], ["the"], {"LanguageModel": -1.25, "PhraseModel_0": 0.3})
    b.edge("y", [], ["Haus"], {"LanguageModel": -3.0, "WT_haus~house": 1})
    b.edge("y", [], ["house"], {"LanguageModel": -2.0, "Glue": 1, "x:y=z": 0.5})
    b.edge("S", ["x", "y"], [0, 1], {"WordPenalty": -2})
    b.edge("S", ["x", "y"], [1, 0], {"WordPenalty": -2, "Glue": 1})
    return b.build("S")


def test_nbest_line_format():
    d = Derivation(-3.5, np.array([0], np.int32), ["a", "b"],
                   {"lm": -1.0, "WT_a~b": 1.0, "zero": 0.0, "tm_0": 0.1})
    assert nbest_line(7, d) == "7 ||| a b ||| WT_a~b= 1.0 lm=-1.0 tm_0= 0.1 ||| -3.5"
    with pytest.raises(ValueError, match="feature name"):
        nbest_line(0, Derivation(0.0, d.edges, ["a"], {"two words": 1.0}))
    with pytest.raises(ValueError, match="target word"):
        nbest_line(0, Derivation(0.0, d.edges, ["a|||b"], {}))


@pytest.mark.parametrize("unique", [False, True])
def test_nbest_lines_round_trip_through_the_store(write, unique):
    w = {"LanguageModel": 0.5, "PhraseModel_0": 1.0, "WT_haus~house": -0.1, "Glue": -1.0,
         "WordPenalty": 0.2, "x:y=z": 0.3, "lm": 1.0, "eps": -0.5}
    empty = HypergraphBuilder("empty")
    empty.edge("g", [], [], {"zero": 0.0})   # an empty string and no features: '2 |||  |||  ||| 0.0'
    forests = [_forest_with_names(), _lattice(), empty.build("g")]
    lines = [line for sid, hg in enumerate(forests) for line in kbest_nbest_lines(sid, hg, w, 100, unique)]
    corpus = NbestCorpus.from_nbest([write("kbest.txt", "".join(x + "\n" for x in lines))])
    names = corpus.feature_names
    read = Counter()
    for s in range(corpus.n_sentences):
        lo, hi = corpus.sent_offsets[s], corpus.sent_offsets[s + 1]
        for h, text in zip(range(lo, hi), corpus.hypotheses(lo, hi)):
            read[(s, text, tuple(sorted((names[i], v) for i, v in corpus.sparse_row(h))))] += 1
    assert corpus.n_dense == 0
    want = Counter()
    for sid, hg in enumerate(forests):
        for d in kbest(hg, score_edges(hg, w), 100, unique):
            want[(sid, " ".join(d.words), tuple(sorted((n, v) for n, v in d.features.items() if v != 0)))] += 1
    # the store keeps equal rows once
    assert read == Counter(set(want))
    assert len(lines) == (8 + 6 + 1 if unique else 8 + 8 + 1) and lines[-1] == "2 |||  |||  ||| 0.0"


@pytest.mark.parametrize("dense_cells", [0, 10**6])
def test_feature_sums_by_sorting_and_by_table(monkeypatch, dense_cells):
    import mtplug.forests.kbest as module

    monkeypatch.setattr(module, "_DENSE_CELLS", dense_cells)
    for hg in (_forest_with_names(), _lattice()):
        brute = {edges: feats for edges, _, feats in enumerate_derivations(hg)}
        got = kbest(hg, score_edges(hg, {"lm": 1.0, "LanguageModel": 1.0}), 100)
        assert len(got) == len(brute)
        for d in got:
            assert d.features == brute[tuple(d.edges.tolist())]
