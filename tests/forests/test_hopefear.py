"""Forest hope/fear (pyx/_forest_hopefear.pyx) against the scalar reference, and kbmira over forests."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplug._ext._forest_hopefear import bleu_viterbi
from mtplug.formats.cdec_forest import read_cdec_forest
from mtplug.formats.references import References, read_references
from mtplug.forests.corpus import ForestCorpus
from mtplug.forests.hopefear import hope_fear_model
from mtplug.optimizers.mira import KbMira
from tests.reference.forest_hopefear_reference import bleu_viterbi as reference_viterbi

from .random_forests import random_hypergraph, random_lattice


def _case(seed: int):
    rng = random.Random(seed)
    hg = random_hypergraph(rng, rng.randint(1, 7)) if seed % 2 else random_lattice(rng, rng.randint(2, 7))
    word_map = np.arange(len(hg.words), dtype=np.int32)
    w = {k: rng.uniform(-1, 1) for k in "fgh"}
    scores = np.array([sum(w[k] * v for k, v in hg.edge_features(e).items()) for e in range(hg.n_edges)])
    src = np.array([rng.randint(1, 5) for _ in range(hg.n_nodes)], np.int32)
    refs = [[rng.randrange(len(hg.words) + 1) for _ in range(rng.randint(1, 8))] for _ in range(2)]
    bg = np.array([rng.uniform(0, 5) for _ in range(9)])
    return hg, word_map, scores, src, refs, bg


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), bleu_weight=st.sampled_from([1.0, -1.0, 0.0]))
def test_kernel_matches_the_reference(seed, bleu_weight):
    hg, word_map, scores, src, refs, bg = _case(seed)
    ref_ptr = np.cumsum([0] + [len(r) for r in refs]).astype(np.int64)
    tokens = np.array([t for r in refs for t in r], np.int32)
    ref_len = float(min(map(len, refs)))
    edges, total = bleu_viterbi(hg.node_edges, hg.tail_indptr, hg.tails, hg.rhs_indptr, hg.rhs, word_map, scores,
                                bleu_weight, src, ref_ptr, tokens, ref_len, bg)
    want, want_total = reference_viterbi(hg, word_map, scores, bleu_weight, src, refs, ref_len, bg)
    assert edges.tolist() == want
    assert total == pytest.approx(want_total, rel=1e-12, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_model_derivation_is_the_viterbi_one(seed):
    hg, word_map, scores, src, refs, bg = _case(seed)
    edges, total = bleu_viterbi(hg.node_edges, hg.tail_indptr, hg.tails, hg.rhs_indptr, hg.rhs, word_map, scores,
                                0.0, src, np.array([0, len(refs[0])], np.int64), np.array(refs[0], np.int32),
                                1.0, bg)
    # the best model score by the plain recursion over nodes in topological order (random
    # forests can have too many derivations to enumerate)
    best: list[float] = []
    for v in range(hg.n_nodes):
        best.append(max(float(scores[e]) + sum(best[int(t)] for t in hg.edge_tails(e)) for e in hg.in_edges(v)))
    assert total == pytest.approx(best[hg.goal], abs=1e-9)
    assert float(scores[edges].sum()) == pytest.approx(total, abs=1e-9)


def test_no_choice_beats_the_model_derivation_on_model_score():
    rng = random.Random(4)
    refs = References([["a b c d a b"], ["b c a"], ["d d a b c"]], "refs")
    fc = ForestCorpus(refs)
    for s in range(3):
        fc.add(s, random_hypergraph(rng, 6, integer_features=False))
    w = np.array([rng.uniform(-1, 1) for _ in range(fc.n_features)])
    bg = np.array([4, 4, 3, 3, 2, 2, 1, 1, 4], np.float64)
    for s in range(3):
        hope, fear, model = hope_fear_model(fc, s, w, bg)
        assert float(model.features @ w) >= float(hope.features @ w) - 1e-9
        assert float(model.features @ w) >= float(fear.features @ w) - 1e-9
        for choice in (hope, fear, model):
            assert choice.stats[8] > 0 and choice.stats[1] >= choice.stats[0] >= 0


@pytest.fixture(scope="module")
def cdec_forests(shared_data):
    d = shared_data / "cdec-forests"
    origin = {"WordPenalty": 4.25, "LanguageModel": -1.1165, "PhraseModel_0": -0.96, "PhraseModel_1": -0.65,
              "PhraseModel_2": -0.77, "PassThrough": -10.0}
    fc = ForestCorpus(read_references([str(d / f"c2e.txt.{i}") for i in range(4)]), feature_names=list(origin))
    for s in range(2):
        fc.add(s, read_cdec_forest(str(d / f"{s}.bin.gz")))
    return fc, np.array([origin.get(n, 0.0) for n in fc.feature_names])


def test_kbmira_over_cdec_forests_improves_and_is_deterministic(cdec_forests):
    fc, start = cdec_forests
    a = KbMira(passes=15).optimize(fc, start, seed=2)
    b = KbMira(passes=15).optimize(fc, start, seed=2)
    assert a.weights.tobytes() == b.weights.tobytes()
    assert a.score > 100 * fc.metric_of(start) + 5     # Result.score is 0-100, metric_of a fraction
    assert a.score == pytest.approx(fc.metric.value(fc.metric_of(a.weights)), abs=1e-10)


class _NoForest:
    """A forest corpus whose one sentence has no forest (its check_complete not called)."""

    def __init__(self):
        self.forests: list = [[]]
        self.shortest_ref_len = np.array([3])

    def reference_tokens(self, sent_id):
        return np.array([0, 3], np.int64), np.array([1, 2, 3], np.int32)


def test_a_sentence_without_a_forest_is_a_value_error():
    with pytest.raises(ValueError, match="sentence 0 has no forest"):
        hope_fear_model(_NoForest(), 0, np.zeros(1), np.zeros(9))
