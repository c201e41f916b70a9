"""MERT end to end: Moses's numbers, determinism, regularisers, synthetic recovery."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mtplug.cli import main
from mtplug.formats import mert_data
from mtplug.formats.mert_weights import read_init_opt
from mtplug.optimizers.mert import MANY_COORDINATES, Mert
from mtplug.synthetic import cosine, make_synthetic

#: shared/data/moses-toy/README.md: Moses mert -n 20 -r 1 from run1.init.opt (HEAD 34452895)
MOSES_MERT_BLEU = 0.481178


@pytest.fixture(scope="module")
def toy(toy_corpus, toy_init):
    return toy_corpus, toy_init


@pytest.mark.parametrize("directions", ["coordinate", "random", "powell", "expbleu"])
def test_reaches_moses_bleu_on_the_toy_set(toy, directions):
    corpus, init = toy
    res = Mert(directions=directions, restarts=20).optimize(corpus, init.start, 1, ranges=(init.mins, init.maxs))
    assert res.score >= 100 * MOSES_MERT_BLEU - 5e-5  # Moses prints six digits of a fraction; score is 0-100
    assert res.score == corpus.metric.value(corpus.bleu_of(res.weights).score)
    assert np.sum(np.abs(res.weights)) == pytest.approx(1.0)


@pytest.mark.parametrize("directions", ["coordinate", "random", "expbleu"])
def test_same_seed_same_weights_whatever_the_threads(toy, directions):
    corpus, init = toy
    runs = [Mert(directions=directions, restarts=3).optimize(corpus, init.start, 7, threads=t,
                                                              ranges=(init.mins, init.maxs)) for t in (1, 2, 1)]
    for r in runs[1:]:
        assert r.weights.tobytes() == runs[0].weights.tobytes()
    other = Mert(directions=directions, restarts=3).optimize(corpus, init.start, 8, ranges=(init.mins, init.maxs))
    assert other.seed == 8


@pytest.mark.parametrize("directions", ["coordinate", "powell"])
def test_slope_orders_change_no_bit(toy, directions, monkeypatch):
    """Coordinate searches walk each sentence's hypotheses in an order kept per feature (speed only)."""
    import mtplug.optimizers.mert as mert_module

    corpus, init = toy
    with_orders = Mert(directions=directions, restarts=2).optimize(corpus, init.start, 3, threads=2)
    monkeypatch.setattr(mert_module, "ORDERS_MAX_BYTES", 0)
    without = Mert(directions=directions, restarts=2).optimize(corpus, init.start, 3, threads=2)
    assert with_orders.weights.tobytes() == without.weights.tobytes()
    assert with_orders.info["line_searches"] == without.info["line_searches"]


def test_no_restarts_starts_from_the_given_point_only(toy):
    corpus, init = toy
    res = Mert(restarts=0).optimize(corpus, init.start, 1)
    assert res.info["best_start"] == 0 and res.score > corpus.bleu_of(init.start).score


def test_activated_features_only_move(toy):
    corpus, init = toy
    names = corpus.feature_names
    res = Mert(restarts=2, activate_features="LM0_0,WordPenalty0_0").optimize(corpus, init.start, 1)
    frozen = [i for i, n in enumerate(names) if n not in ("LM0_0", "WordPenalty0_0")]
    # the frozen features keep their start weights, up to the one final L1 normalisation
    ratios = res.weights[frozen] / init.start[frozen]
    np.testing.assert_allclose(ratios, ratios[0], rtol=1e-12)
    with pytest.raises(Exception, match="unknown features: Nope"):
        Mert(activate_features="Nope").optimize(corpus, init.start, 1)


def test_l0_regularisation_zeroes_weights(toy):
    corpus, init = toy
    plain = Mert(restarts=2).optimize(corpus, init.start, 1)
    sparse = Mert(restarts=2, reg="l0", reg_strength=0.02).optimize(corpus, init.start, 1)
    assert np.count_nonzero(sparse.weights) < np.count_nonzero(plain.weights)


def test_l2_fixed_keeps_the_fixed_weight(toy):
    corpus, init = toy
    res = Mert(restarts=2, reg="l2-fixed", reg_strength=0.001, reg_fixed_feature="LM0_0").optimize(
        corpus, init.start, 1)
    j = corpus.feature_names.index("LM0_0")
    assert res.weights[j] == init.start[j]  # not normalised: l2 depends on the scale
    assert res.info["objective"] <= res.score


def test_l2_pulls_towards_the_start(toy):
    corpus, init = toy
    free = Mert(restarts=0).optimize(corpus, init.start, 1)
    pulled = Mert(restarts=0, reg="l2", reg_strength=1.0).optimize(corpus, init.start, 1)
    dist = lambda w: np.linalg.norm(w - init.start)  # noqa: E731
    assert dist(pulled.weights) <= dist(free.weights)


def test_expected_bleu_directions_recover_the_gold_weights():
    corpus, w_star = make_synthetic(500, 100, 100, seed=2)
    res = Mert(directions="expbleu", restarts=0).optimize(corpus, np.ones(100), 0, threads=1)
    assert cosine(res.weights, w_star) > 0.999


def test_option_validation():
    with pytest.raises(ValueError, match="directions must be one of"):
        Mert(directions="newton")
    with pytest.raises(ValueError, match="restarts must be >= 0"):
        Mert(restarts=-1)


@pytest.mark.parametrize("options, message", [
    # issue 19, defect 10: options that cannot take effect, and values that make no sense
    ({"reg": "l2"}, "reg l2 needs reg_strength > 0"),
    ({"reg": "l2", "reg_strength": 0.0}, "reg_strength must be a finite number > 0 with reg l2"),
    ({"reg": "l0", "reg_strength": -1.0}, "reg_strength must be a finite number > 0"),
    ({"reg_strength": 0.1}, "reg_strength applies only with a regulariser"),
    ({"reg": "l2", "reg_strength": 0.1, "reg_fixed_feature": "LM0_0"}, "reg_fixed_feature applies only with reg l2-fixed"),
    ({"random_directions": 5}, "random_directions applies only with directions random"),
    ({"directions": "powell", "mu_start": 0.1}, "mu_start applies only with directions expbleu"),
    ({"tolerance": -1.0}, "tolerance must be a finite number >= 0"),
    ({"tolerance": float("nan")}, "tolerance must be a finite number >= 0"),
])
def test_options_that_cannot_take_effect_are_errors(options, message):
    with pytest.raises(ValueError, match=message):
        Mert(**options)


def test_cli_mert_on_extractor_files(shared_data, tmp_path, capsys):
    d = shared_data / "moses-toy"
    out = tmp_path / "best.opt"
    rc = main(["optimize", "mert", "-q", "--ffile", str(d / "run1.features.dat"), "--scfile",
               str(d / "run1.scores.dat"), "--init", str(d / "run1.init.opt"), "--out", str(out),
               "--seed", "1", "--restarts", "5", "--directions", "expbleu"])
    assert rc == 0
    res = json.loads(capsys.readouterr().out)
    assert res["score"] >= 100 * MOSES_MERT_BLEU and res["seed"] == 1 and res["line_searches"] > 0   # 0-100
    written = read_init_opt(str(out))
    np.testing.assert_array_equal(written.mins, np.zeros(8))  # the start file's ranges are kept
    corpus = mert_data.read_mert_data([str(d / "run1.features.dat")], [str(d / "run1.scores.dat")])
    assert 100 * corpus.bleu_of(written.start).score == pytest.approx(res["score"], abs=1e-10)


def test_restarts_cover_named_features(example_data, tmp_path):
    """Issue 19, defect 2: with a cdec k-best (every feature 'name=value', none in a Moses
    dense block) the restarts used to draw nothing, so 20 restarts were 21 identical
    searches. The same pool written both ways now gives the same (better) result."""
    from mtplug.corpus import NbestCorpus
    from mtplug.formats.nbest import write_nbest
    from mtplug.formats.references import read_references

    refs = read_references([str(example_data / "ref.0")])
    moses = NbestCorpus.from_nbest([str(example_data / "run1.best100.out.gz")], refs)
    write_nbest(str(tmp_path / "kbest"), moses, style="cdec")
    cdec = NbestCorpus.from_nbest([str(tmp_path / "kbest")], refs)
    assert cdec.n_dense == 0 and cdec.feature_names == moses.feature_names
    start = np.array([0.3, 0.5, -1, 0.2, 0.2, 0.2, 0.2, 0.2])
    alone = Mert(restarts=0).optimize(cdec, start, 1, threads=2)
    dense = Mert(restarts=20).optimize(moses, start, 1, threads=2)
    named = Mert(restarts=20).optimize(cdec, start, 1, threads=2)
    np.testing.assert_array_equal(named.weights, dense.weights)
    assert named.info["start_objectives"] == dense.info["start_objectives"]
    assert len(set(named.info["start_objectives"])) > 1        # different searches, not 21 copies
    assert named.score >= alone.score


def test_coordinate_search_over_many_features_is_announced():
    """More than MANY_COORDINATES dense features, each swept over every sentence in every
    round: the user hears so before the search starts, with what to use instead."""
    corpus, _ = make_synthetic(3, 4, MANY_COORDINATES + 1, seed=1)
    (note,) = Mert(restarts=4).advice(corpus)
    assert f"over {MANY_COORDINATES + 1} features" in note and "5 start points" in note and "expbleu" in note
    assert Mert(directions="random").advice(corpus) == [] and Mert(directions="expbleu").advice(corpus) == []
    assert Mert(activate_features=",".join(corpus.feature_names[:2])).advice(corpus) == []
    few, _ = make_synthetic(3, 4, MANY_COORDINATES, seed=1)
    assert Mert().advice(few) == []


def test_many_sparse_features_need_no_warning():
    """Sparse features are swept over the sentences they touch: no warning for them."""
    from tests.reference.random_store import random_store

    corpus = random_store(1, n_sparse=MANY_COORDINATES + 5)
    assert corpus.n_features > MANY_COORDINATES and Mert().advice(corpus) == []


def test_cli_announces_a_long_coordinate_search_before_it(shared_data, tmp_path, capsys, monkeypatch):
    import mtplug.optimizers.mert as mert_module

    monkeypatch.setattr(mert_module, "MANY_COORDINATES", 5)    # the toy set has 8 features
    d = shared_data / "moses-toy"
    rc = main(["optimize", "mert", "--ffile", str(d / "run1.features.dat"), "--scfile", str(d / "run1.scores.dat"),
               "--init", str(d / "run1.init.opt"), "--out", str(tmp_path / "w.opt"), "--restarts", "0"])
    assert rc == 0
    err = capsys.readouterr().err
    warning = err.index("mtplug: warning: mert: coordinate directions over 8 features")
    assert warning < err.index("mert: ", warning + 10) and "end: BLEU" in err[warning:]


SPARSE_SEARCHES = [dict(directions="coordinate"), dict(directions="powell"), dict(directions="expbleu"),
                   dict(directions="coordinate", reg="l0", reg_strength=0.01),
                   dict(directions="coordinate", reg="l2", reg_strength=0.01),
                   dict(directions="coordinate", reg="l2-l1norm", reg_strength=0.01),
                   dict(directions="random", activate_features="S_0,S_1,S_2,S_3,S_4,S_5,S_6,S_7")]


@pytest.mark.parametrize("options", SPARSE_SEARCHES, ids=lambda o: "-".join(str(v)[:10] for v in o.values()))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sparse_searches_change_no_bit(options, seed, monkeypatch):
    """Searches that touch only the sentences a sparse direction moves give the weights,
    line-search counts and objectives of sweeping every sentence, on 1 and 2 threads."""
    import mtplug.optimizers.mert as mert_module
    from tests.reference.random_store import random_store

    rng = np.random.default_rng(seed)
    corpus = random_store(seed, sizes=tuple(int(x) for x in rng.integers(1, 30, 10)), n_sparse=8,
                          gaussian=bool(seed % 2))
    start = rng.normal(size=corpus.n_features)
    sparse = Mert(restarts=2, **options).optimize(corpus, start, seed, threads=1)
    sparse2 = Mert(restarts=2, **options).optimize(corpus, start, seed, threads=2)
    monkeypatch.setattr(mert_module.SparseColumns, "of", staticmethod(lambda corpus: None))
    full = Mert(restarts=2, **options).optimize(corpus, start, seed, threads=2)
    for run in (sparse, sparse2):
        assert run.weights.tobytes() == full.weights.tobytes()
        assert run.info["line_searches"] == full.info["line_searches"]
        assert run.info["start_objectives"] == full.info["start_objectives"]
