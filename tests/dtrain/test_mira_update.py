"""``mtplug dtrain --update mira`` (Eidelman 2012's online MIRA in dtrain's loop): the learner
against the scalar reference (tests/reference/dtrain_mira_reference.py), the options it
refuses, and end-to-end runs with the stand-in cdec decoder on the Moses toy set."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplug.cli import EXIT_INPUT_ERROR, main
from mtplug.dtrain.config import DTRAIN_KEYS, KEYS, MIRA_KEYS, PAIRWISE_KEYS, DtrainConfig, flag_of, load_config
from mtplug.dtrain.kbest import Kbest
from mtplug.dtrain.update import Learner, mira_hope_fear
from mtplug.errors import InputError

from ..reference import dtrain_mira_reference as ref
from .conftest import TOY_START_BLEU
from .test_e2e import pool_bleu, pool_corpus  # noqa: F401  (pool_corpus: a fixture)

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "dtrain-pairs"
N_FEATURES = 5


def kbest(rows) -> Kbest:
    """A Kbest from rows of (id, value) pairs, in the given order (ids need not be sorted)."""
    indptr = np.cumsum([0] + [len(r) for r in rows]).astype(np.int64)
    ids = np.array([i for r in rows for i, _ in r], dtype=np.int64)
    values = np.array([v for r in rows for _, v in r], dtype=np.float64)
    return Kbest(indptr, ids, values, np.zeros((len(rows), 9), np.int32))


def mira_cfg(**keys) -> DtrainConfig:
    return DtrainConfig(decoder_config="cdec.ini", input="in", refs="ref", update="mira", **keys)


def learner_epoch(lists, w0, **keys):
    learner = Learner(mira_cfg(**keys), weights=[w0.get(i, 0.0) for i in range(N_FEATURES)])
    stats = []
    for rows, scores in lists:
        kb = kbest(rows)
        stats.append(learner.step(kb, np.array(scores, dtype=np.float64), kb.model(learner.w)))
    return learner, stats


# ---------------------------------------------------------------------------- strategies
# small integer features and a few score values: ties in model score and in sentence score
# are common, structurally (equal rows, equal scores) and by coincidence
VALUES = st.one_of(st.sampled_from([-2.0, -1.0, 0.0, 1.0, 2.0, 0.5]),
                   st.floats(-3, 3, allow_nan=False, allow_subnormal=False))
SCORES = st.one_of(st.sampled_from([0.0, 0.25, 0.5, 1.0]), st.floats(0, 1, allow_subnormal=False))
ROW = st.lists(st.tuples(st.integers(0, N_FEATURES - 1), VALUES), max_size=4)
KBEST = st.integers(1, 7).flatmap(lambda k: st.tuples(st.lists(ROW, min_size=k, max_size=k),
                                                      st.lists(SCORES, min_size=k, max_size=k)))
WEIGHTS = st.dictionaries(st.integers(0, N_FEATURES - 1),
                          st.one_of(st.sampled_from([-1.0, 0.0, 1.0]), st.floats(-2, 2, allow_subnormal=False)))
STRATEGY = st.tuples(st.sampled_from(list(ref.HOPE)), st.sampled_from(list(ref.FEAR)),
                     st.sampled_from([0.01, 0.5, 100.0]))


def dense(w: dict) -> list[float]:
    return [w.get(i, 0.0) for i in range(N_FEATURES)]


@settings(max_examples=400, deadline=None)
@given(KBEST, WEIGHTS, STRATEGY)
def test_one_sentence_matches_the_reference(kb, w0, strategy):
    """Hope, fear (ties included), loss, η and the new weights, bit for bit."""
    (rows, scores), (hope, fear, C) = kb, strategy
    expected, info = ref.sentence(rows, scores, w0, hope, fear, C)
    learner, (stats,) = learner_epoch([(rows, scores)], w0, mira_hope=hope, mira_fear=fear, mira_c=C)
    if len(rows) >= 2:
        model = kbest(rows).model(np.array(dense(w0)))
        assert mira_hope_fear(model, np.array(scores), hope, fear) == (info["hope"], info["fear"])
    assert learner.w.tolist() == dense(expected)
    assert stats.pairs == int(len(rows) >= 2) and stats.updates == int(info["stepped"])
    assert stats.loss_before == (max(0.0, info["loss"]))
    assert 0 <= stats.loss_after <= stats.loss_before + 1e-12 * (1 + stats.loss_before)
    if not info["stepped"]:
        assert stats.loss_after == stats.loss_before


@settings(max_examples=150, deadline=None)
@given(st.lists(KBEST, min_size=1, max_size=8), WEIGHTS, STRATEGY)
def test_an_epoch_matches_the_reference(lists, w0, strategy):
    """Sentence after sentence, each scored with the weights of the moment."""
    hope, fear, C = strategy
    expected, infos, average = ref.epoch(lists, w0, hope, fear, C)
    learner, stats = learner_epoch(lists, w0, mira_hope=hope, mira_fear=fear, mira_c=C)
    assert learner.w.tolist() == dense(expected)
    assert [s.updates for s in stats] == [int(i["stepped"]) for i in infos]
    assert learner.averaged().tolist() == dense(average)      # mira_average (the default)
    unaveraged, _ = learner_epoch(lists, w0, mira_hope=hope, mira_fear=fear, mira_c=C, mira_average=False)
    assert unaveraged.averaged().tolist() == dense(expected)


# hand-made ties: two hypotheses with equal model score and equal sentence score, or equal
# combined values, go to the larger model score, then the earlier position
TIE_CASES = [
    # model, scores, hope strategy, fear strategy, expected (hope, fear)
    ([1.0, 1.0, 0.5], [0.5, 0.25, 1.0], "hope", "fear", (0, 1)),    # hope 1.5 1.25 1.5: larger model; fear .5 .75 -.5
    ([0.0, 1.0, 2.0], [1.0, 0.0, 0.0], "hope", "fear", (2, 2)),     # hope 1, 1, 2; fear -1, 1, 2
    ([0.0, 0.5, 1.0], [1.0, 0.5, 0.0], "hope", "fear", (2, 2)),     # all hope values 1: larger model wins
    ([0.0, 0.5, 1.0], [0.0, 0.5, 1.0], "lu", "mc", (2, 0)),
    ([2.0, 1.0, 2.0], [0.3, 0.3, 0.3], "lu", "mc", (0, 0)),         # equal scores: larger model, then first
    ([1.0, 3.0, 3.0], [0.9, 0.1, 0.2], "hope", "pb", (2, 1)),       # hope 1.9 3.1 3.2; pb: first tied 1-best
]


@pytest.mark.parametrize("model,scores,hope,fear,expected", TIE_CASES)
def test_ties(model, scores, hope, fear, expected):
    assert mira_hope_fear(np.array(model), np.array(scores), hope, fear) == expected
    assert (ref.choose(model, scores, ref.HOPE[hope]), ref.choose(model, scores, ref.FEAR[fear])) == expected


def test_a_step_by_hand():
    """Two features; w = (1, -1); rows f0 = (1, 0) score 0.2, f1 = (0, 1) score 0.9.
    Model 1, -1. hope = argmax s + g = f0 (1.2 > -0.1); fear = argmax s - g = f0 too: no step.
    With lu: hope f1, fear f0; loss = 0.7 - (-2) = 2.7; Δf = (-1, 1), ‖Δf‖² = 2;
    η = min(C, 1.35): C = 0.5 gives w = (0.5, -0.5); C = 10 gives 1.35 -> w = (-0.35, 0.35)."""
    rows = [[(0, 1.0)], [(1, 1.0)]]
    learner, (st_,) = learner_epoch([(rows, [0.2, 0.9])], {0: 1.0, 1: -1.0})
    assert learner.w[:2].tolist() == [1.0, -1.0] and st_.pairs == 1 and st_.updates == 0
    for C, w in ((0.5, [0.5, -0.5]), (10.0, [1.0 - 1.35, -1.0 + 1.35])):
        learner, (st_,) = learner_epoch([(rows, [0.2, 0.9])], {0: 1.0, 1: -1.0}, mira_hope="lu", mira_c=C)
        assert learner.w[:2] == pytest.approx(w, abs=1e-15) and st_.updates == 1 and st_.rank_errors == 1
        assert st_.loss_before == pytest.approx(2.7)


def test_rescale_and_l1_act_after_the_step():
    rows = [[(0, 1.0)], [(1, 1.0)]]
    learner, _ = learner_epoch([(rows, [0.2, 0.9])], {0: 1.0, 1: -1.0}, mira_hope="lu", mira_c=0.5, rescale=True)
    assert learner.w[:2] == pytest.approx([math.sqrt(0.5), -math.sqrt(0.5)])
    learner, _ = learner_epoch([(rows, [0.2, 0.9])], {0: 1.0, 1: -1.0}, mira_hope="lu", mira_c=0.5,
                               l1_reg="clip", l1_reg_strength=0.1)
    assert learner.w[:2] == pytest.approx([0.4, -0.4])


def test_a_list_of_one_hypothesis_is_no_pair():
    learner, (st_,) = learner_epoch([([[(0, 1.0)]], [0.5])], {0: 1.0})
    assert st_.pairs == 0 and st_.updates == 0 and learner.w[0] == 1.0


# ---------------------------------------------------------------------------- options
NON_DEFAULT = {"pair_sampling": "all", "hi_lo": "0.2", "pair_threshold": "0.1", "learning_rate": "0.5",
               "gamma": "0.1", "loss_margin": "1", "scale_bleu_diff": True, "max_pairs": "10", "pclr": "simple",
               "batch": True, "repeat": "2", "check": True, "mira_hope": "lu", "mira_fear": "mc", "mira_c": "0.5",
               "mira_average": "false"}


def test_the_new_keys_are_mtplugs():
    assert set(NON_DEFAULT) == set(PAIRWISE_KEYS) | set(MIRA_KEYS)
    for key in ("update", *MIRA_KEYS):
        assert KEYS[key].metadata["help"].startswith("mtplug:") and key not in DTRAIN_KEYS
        assert KEYS[key].metadata["group"] == "update rule"
    assert "learning_rate" in DTRAIN_KEYS and "shards" not in DTRAIN_KEYS


@pytest.mark.parametrize("key", PAIRWISE_KEYS)
def test_pairwise_options_are_refused_with_mira(key, dtrain_ini, standin_command, tmp_path, capsys):
    base = {"input": "in", "refs": "ref", "decoder_config": "c.ini", "update": "mira"}
    with pytest.raises(InputError, match="has no effect with update=mira; it belongs to the pairwise update"):
        load_config(None, {**base, key: NON_DEFAULT[key]})
    load_config(None, {**base, key: None if isinstance(NON_DEFAULT[key], bool) else str(KEYS[key].default)})
    flag = flag_of(key)
    value = [] if NON_DEFAULT[key] is True else [NON_DEFAULT[key]]
    out = tmp_path / "w.txt"
    assert main(["dtrain", "-q", "-c", dtrain_ini(), "--update", "mira", flag, *value, "--decoder-bin",
                 standin_command, "--output", str(out)]) == EXIT_INPUT_ERROR
    err = capsys.readouterr().err
    assert err == (f"mtplug: error: {flag}: has no effect with update=mira; it belongs to the pairwise update "
                   "(update=pairs)\n") and not out.exists()


@pytest.mark.parametrize("key", MIRA_KEYS)
def test_mira_options_are_refused_with_pairs(key, dtrain_ini, standin_command, capsys):
    ini = dtrain_ini(**{key: NON_DEFAULT[key]})
    assert main(["dtrain", "-q", "-c", ini, "--decoder-bin", standin_command]) == EXIT_INPUT_ERROR
    assert capsys.readouterr().err == (f"mtplug: error: {ini}:5: {key}: has no effect with update=pairs; it "
                                       "belongs to update=mira\n")


@pytest.mark.parametrize("value", ["0", "-1"])
def test_mira_c_must_be_positive(value, dtrain_ini, standin_command, capsys):
    assert main(["dtrain", "-q", "-c", dtrain_ini(update="mira"), "--mira-c", value, "--decoder-bin",
                 standin_command]) == EXIT_INPUT_ERROR
    assert capsys.readouterr().err == f"mtplug: error: --mira-c: must be a finite number > 0, got {float(value)}\n"


# ---------------------------------------------------------------------------- end to end
def run(ini, standin_command, out, *extra):
    assert main(["dtrain", "-c", ini, "--decoder-bin", standin_command, "--output", str(out), *extra]) == 0


def test_mira_learns_on_the_toy_set_and_is_deterministic(dtrain_ini, standin_command, pool_corpus,  # noqa: F811
                                                          tmp_path, capsys):
    """3 epochs, decoding 5 sentences at a time (per-sentence decoding is the same code with one
    decoder start per sentence, 5 times the stand-in starts): the final weights' 1-best over the
    whole pool scores well above the start; the same input and seed give the same bytes."""
    ini = dtrain_ini(epochs=3, update="mira", scorer="approx_bleu", minibatch=5)
    outs = []
    for name in ("a.txt", "b.txt"):
        run(ini, standin_command, tmp_path / name)
        outs.append((tmp_path / name).read_bytes())
    captured = capsys.readouterr()
    assert outs[0] == outs[1]
    assert b"update=mira mira_hope=hope mira_fear=fear mira_c=0.01 mira_average=true" in outs[0].splitlines()[0]
    result = json.loads(captured.out.splitlines()[-1])
    epochs = result["epochs"]
    assert [e["avg_pairs"] for e in epochs] == [1.0] * 3 and all(0 < e["avg_updates"] <= 1 for e in epochs)
    assert "update=mira hope=hope fear=fear C=0.01" in captured.err
    final = pool_bleu(pool_corpus, tmp_path / "a.txt")
    print(f"pool BLEU {TOY_START_BLEU} -> {final:.6f}; 1-best BLEU per epoch {[e['bleu'] for e in epochs]}")
    assert final > TOY_START_BLEU + 0.10
    assert min(e["bleu"] for e in epochs) > 100 * TOY_START_BLEU + 5
    assert epochs[-1]["avg_score"] > epochs[0]["avg_score"]


def test_mira_with_shards_minibatch_and_the_other_strategies(dtrain_ini, standin_command, tmp_path, capsys):
    """Parameter mixing over shards, mini-batches, lu/mc, avg: runs, and workers do not matter."""
    ini = dtrain_ini(epochs=2, update="mira", mira_hope="lu", mira_fear="mc", shards=2, randomize=True, seed=3,
                     minibatch=3, stop_after=9, select_weights="avg")
    outs = []
    for workers in ("1", "2"):
        run(ini, standin_command, tmp_path / f"w{workers}.txt", "--workers", workers)
        outs.append((tmp_path / f"w{workers}.txt").read_bytes())
    assert outs[0] == outs[1]
    result = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert result["shards"] == 2 and result["epochs"][0]["sentences"] == 18


# update=pairs is unchanged: tests/golden/dtrain-pairs holds the weights of mtplug before
# update=mira existed (PROVENANCE), for configurations that reach every branch of the update
PAIRS_CASES = {
    "xyx": dict(epochs=2, stop_after=20, learning_rate=0.0001, loss_margin=1),
    "gamma-l1-avg-rescale": dict(epochs=2, stop_after=15, minibatch=3, gamma=0.001, loss_margin=0.5,
                                 learning_rate=0.01, l1_reg="cumul", l1_reg_strength=0.0001, select_weights="avg",
                                 seed=5, rescale=True),
    "batch-gamma": dict(epochs=2, stop_after=20, batch=True, gamma=0.01, loss_margin=2, learning_rate=0.001),
    "pclr-shards": dict(epochs=3, shards=3, randomize=True, reshard=True, seed=4, minibatch=4, stop_after=6,
                        pair_sampling="all", scale_bleu_diff=True, learning_rate=0.001, pclr="simple"),
    "pro-approx-check": dict(epochs=2, stop_after=12, pair_sampling="PRO", scorer="approx_bleu", check=True,
                             l1_reg="clip", l1_reg_strength=0.001, select_weights="best"),
}


@pytest.mark.parametrize("case", sorted(PAIRS_CASES))
def test_update_pairs_is_unchanged(case, dtrain_ini, standin_command, tmp_path, capsys):
    out = tmp_path / "w.txt"
    run(dtrain_ini(**PAIRS_CASES[case]), standin_command, out)
    capsys.readouterr()
    got = out.read_text().splitlines()
    expected = (GOLDEN / f"{case}.weights").read_text().splitlines()
    # the comment line (no update=... for pairs), but for mtplug's version
    assert got[0].split(" ", 2)[2] == expected[0].split(" ", 2)[2]
    parse = [{n: float(v) for n, v in (ln.split("\t") for ln in lines[1:])} for lines in (got, expected)]
    assert parse[0].keys() == parse[1].keys()
    for name, value in parse[1].items():               # within 1e-12 (bytes on the machine that wrote them)
        assert parse[0][name] == pytest.approx(value, rel=1e-12, abs=1e-300), name
