"""kbmira with Moses's M2SCORER: mtplug's kbmira (the Moses program and the optimizer)
does what Moses's ``kbmira --sctype M2SCORER`` does, step for step: the F_beta background
scaled by source length, Moses's averaging and float32 arithmetic, its sentence shuffles.
Goldens: tests/golden/moses-kbmira-m2 (README: provenance)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from mtplug.integrations.moses.__main__ import main as run_program
from mtplug.integrations.moses.common import load_mert_data
from mtplug.optimizers.kbmira_m2 import kbmira_m2
from mtplug.optimizers.mira import KbMira

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "moses-kbmira-m2"
CONFIGS = {
    "no-shuffle": ["-r", "1", "--no-shuffle"],
    "shuffle-r1": ["-r", "1"],
    "shuffle-r7": ["-r", "7"],
    "safe-hope": ["-r", "1", "--safe-hope"],
    "model-bg": ["-r", "1", "--model-bg", "-D", "0.9", "-C", "0.05", "-J", "30"],
}
LOG_LINES = ("Initial BLEU = ", "Best BLEU = ")


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_kbmira_m2_writes_moses_weights_and_log(name, tmp_path, capfd):
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        capfd.readouterr()
        rc = run_program(["kbmira", "--sctype", "M2SCORER", "--dense-init", str(GOLDEN / "dense"), "--ffile",
                          str(GOLDEN / "features.dat"), "--scfile", str(GOLDEN / "scores.dat"), *CONFIGS[name],
                          "-o", "out.weights"])
        err = capfd.readouterr().err
    finally:
        os.chdir(old)
    assert rc == 0, err
    assert (tmp_path / "out.weights").read_text() == (GOLDEN / f"{name}.weights").read_text()
    lines = [line for line in err.splitlines() if line.startswith(LOG_LINES) or " updates, avg loss = " in line]
    assert lines == (GOLDEN / f"{name}.log").read_text().splitlines()


def _golden_corpus():
    corpus = load_mert_data([str(GOLDEN / "features.dat")], [str(GOLDEN / "scores.dat")], "M2SCORER").dense_only()
    start = np.array([1.0, 0.2, 0.2, 0.2, 0.1, 0.05])
    return corpus, start


def _weights(path: Path) -> list[float]:
    return [float(line.split()[1]) for line in path.read_text().splitlines()]


def test_kbmira_optimizer_on_an_m2_store_is_moses_kbmira():
    corpus, start = _golden_corpus()
    opt = KbMira(order="fixed")
    run = getattr(opt, "_optimize", None) or opt.optimize     # the result in Moses's fractions
    result = run(corpus, start, 1)
    assert result.weights.tolist() == pytest.approx(_weights(GOLDEN / "no-shuffle.weights"), rel=1e-5)
    best = float((GOLDEN / "no-shuffle.log").read_text().split("Best BLEU = ")[1])
    assert result.info["best_bleu"] == pytest.approx(best, abs=1e-6)
    # the result's 1-best scores what Moses printed for it
    assert corpus.metric_of(result.weights) == pytest.approx(best, abs=1e-6)


def test_start_scale_cannot_take_effect_on_an_m2_store():
    # Moses's kbmira on M2 runs from the start as given (docs/mira.md, "The start's scale")
    corpus, start = _golden_corpus()
    with pytest.raises(ValueError, match="start_scale applies only with a store of another metric than M2"):
        KbMira(order="fixed", start_scale="best").optimize(corpus, start, 1)
    units = []
    KbMira(order="fixed", passes=3).optimize(corpus, start, 1, progress=units.append)
    assert sum(units) == KbMira(passes=3).progress_total()


def _tiny(tmp_path, rows):
    """features.dat / scores.dat of one sentence: rows of (feature, (correct, proposed, gold, srclen))."""
    f = ["FEATURES_TXT_BEGIN_0 0 %d 1 F0_0 " % len(rows)] + [f"{x} " for x, _ in rows] + ["FEATURES_TXT_END_0"]
    s = ["SCORES_TXT_BEGIN_0 0 %d 4 M2Scorer" % len(rows)] + [" ".join(map(str, st)) + " " for _, st in rows]
    (tmp_path / "f.dat").write_text("\n".join(f) + "\n")
    (tmp_path / "s.dat").write_text("\n".join(s + ["SCORES_TXT_END_0"]) + "\n")
    return load_mert_data([str(tmp_path / "f.dat")], [str(tmp_path / "s.dat")], "M2SCORER").dense_only()


def test_kbmira_m2_one_step_by_hand(tmp_path):
    # hyp A: one correct edit of one, feature 0; hyp B: a wrong edit, feature 1; source 4 words.
    # Against the background (1,1,1,1): gain A = F0.5(2,2,2) * 5 = 5, gain B = F0.5(1,2,2) * 5 = 2.5.
    corpus = _tiny(tmp_path, [(0, (1, 1, 1, 4)), (1, (0, 1, 1, 4))])
    f32 = np.float32
    w0 = f32(0.001)
    # hope A (0 + 5 > w0 + 2.5), fear B (w0 - 2.5 > -5); loss = 2.5 - w0 * (0 - 1) > 0; eta = C = 0.01
    w1 = f32(w0 + f32(f32(-1) * f32(0.01)))
    # Moses's average: the totals start at the start weights and are divided by the steps (1)
    avg = f32(f32(w0 + f32(f32(f32(1) * w0) + f32(-0.01))) / f32(1))
    one = kbmira_m2(corpus, np.array([float(w0)]), 0, passes=1, order="fixed")
    assert one.info["last_weights"].tolist() == [float(w1)]
    assert one.weights.tolist() == [float(avg)]
    assert one.info["steps_per_pass"] == [1]
    assert one.info["loss_per_pass"] == [float(f32(f32(2.5) - f32(-w0)))]
    # the hope's statistics join the decayed background
    assert one.info["background"].tolist() == [float(f32(f32(0.999) + f32(x))) for x in (1, 1, 1, 4)]
    assert one.info["best_bleu"] == 1.0     # avg < 0: A is the 1-best


def test_kbmira_m2_keeps_the_start_when_no_pass_beats_zero(tmp_path):
    # from w = 1 the step leaves w = 0.99, the average 1.99 (Moses's): B stays the 1-best, F = 0
    # in every pass; Moses writes no weights then, mtplug returns the start
    corpus = _tiny(tmp_path, [(0, (1, 1, 1, 4)), (1, (0, 1, 1, 4))])
    res = kbmira_m2(corpus, np.array([1.0]), 0, passes=3, order="fixed")
    assert res.info["bleu_per_pass"] == [0.0, 0.0, 0.0]
    assert res.weights.tolist() == [1.0] and res.score == 0.0


def _random_store(tmp_path, seed, sentences=25, sparse=True):
    """features.dat / scores.dat of random M2 rows: 2 dense features, sparse ones (some rows
    share a feature with a value 1e-7 apart, some rows have none), duplicate features."""
    rng = np.random.default_rng(seed)
    f, s = [], []
    for k in range(sentences):
        n = int(rng.integers(1, 9))
        f.append(f"FEATURES_TXT_BEGIN_0 {k} {n} 2 A_0 B_0 ")
        s.append(f"SCORES_TXT_BEGIN_0 {k} {n} 4 M2Scorer")
        for _ in range(n):
            row = f"{rng.normal():.4f} {int(rng.integers(-5, 5))}"
            if sparse:
                for name in ("x", "y", "z"):
                    if rng.random() < 0.4:
                        row += f" {name}={rng.choice([0.5, 0.5000001, -1.25, 2.0])}"
            f.append(row + " ")
            gold = int(rng.integers(0, 4))
            prop = int(rng.integers(0, 5))
            s.append(f"{int(rng.integers(0, min(gold, prop) + 1))} {prop} {gold} {int(rng.integers(1, 15))} ")
        f.append("FEATURES_TXT_END_0")
        s.append("SCORES_TXT_END_0")
    (tmp_path / "f.dat").write_text("\n".join(f) + "\n")
    (tmp_path / "s.dat").write_text("\n".join(s) + "\n")
    return load_mert_data([str(tmp_path / "f.dat")], [str(tmp_path / "s.dat")], "M2SCORER")


@pytest.mark.parametrize("seed", range(6))
def test_kbmira_m2_kernel_is_the_python_reference_bit_for_bit(tmp_path, seed):
    corpus = _random_store(tmp_path, seed, sparse=seed % 3 != 2)
    start = np.zeros(corpus.n_features)
    start[:2] = [1.0, -0.3]
    opts = [dict(), dict(order="fixed"), dict(safe_hope=True), dict(model_bg=True, decay=0.9, c=0.05),
            dict(safe_hope=True, model_bg=True), dict(order="fixed", c=1.0)][seed]
    fast = kbmira_m2(corpus, start, seed, passes=12, **opts)
    slow = kbmira_m2(corpus, start, seed, passes=12, reference=True, **opts)
    for key in ("bleu_per_pass", "steps_per_pass", "loss_per_pass"):
        assert fast.info[key] == slow.info[key], key
    assert fast.weights.tobytes() == slow.weights.tobytes()
    assert fast.info["last_weights"].tobytes() == slow.info["last_weights"].tobytes()
    assert fast.info["background"].tobytes() == slow.info["background"].tobytes()
    assert sum(fast.info["steps_per_pass"]) > 0
