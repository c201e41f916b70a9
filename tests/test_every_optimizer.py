"""Every registered optimizer through the CLI: it improves the toy set and is deterministic."""

from __future__ import annotations

import json
import warnings

import pytest

from mtplug.cli import main
from mtplug.optimizers.registry import FOREST_OPTIMIZERS, OPTIMIZER_NAMES

TOY_START_BLEU = 26.5757  # shared/data/moses-toy/README.md (0.265757 on Moses's 0-1 scale)


@pytest.mark.parametrize("name", sorted(OPTIMIZER_NAMES))
def test_optimizer_runs_and_repeats_bit_for_bit(name, example_data, tmp_path, capsys):
    d = example_data
    outs = []
    for run in range(2):
        out = tmp_path / f"w{run}.opt"
        rc = main(["optimize", name, "-q", "--nbest", str(d / "run1.best100.out.gz"), "--ref",
                   str(d / "ref.0"), "--init", str(d / "run1.init.opt"), "--out", str(out),
                   "--seed", "3"] + (["--restarts", "2"] if name == "mert" else []))
        assert rc == 0
        result = json.loads(capsys.readouterr().out)
        assert result["seed"] == 3
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    assert result["metric"] == "bleu"     # the score on mtplug's 0-100 scale
    if name == "none":
        assert result["score"] == pytest.approx(TOY_START_BLEU, abs=5e-5)
    else:
        assert result["score"] > TOY_START_BLEU + 5


@pytest.mark.parametrize("name", sorted(FOREST_OPTIMIZERS))
def test_forest_optimizer_runs_and_repeats_bit_for_bit(name, shared_data, tmp_path, capsys):
    d = shared_data / "cdec-forests"
    init = tmp_path / "origin.weights"
    init.write_text("WordPenalty 4.25\nLanguageModel -1.1165\nPhraseModel_0 -0.96\nPhraseModel_1 -0.65\n"
                    "PhraseModel_2 -0.77\nPassThrough -10\n")
    outs = []
    for run in range(2):
        out = tmp_path / f"w{run}.txt"
        rc = main(["optimize", name, "-q", "--forests", str(d / "0.bin.gz")[:-len("0.bin.gz")], "--ref",
                   *[str(d / f"c2e.txt.{i}") for i in range(4)], "--init", str(init), "--out", str(out),
                   "--seed", "3"] + (["--restarts", "2"] if name == "mert" else ["--passes", "10"]))
        assert rc == 0
        result = json.loads(capsys.readouterr().out)
        assert result["seed"] == 3
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    assert result["score"] > 29.8243 + 5   # cdec's origin: BLEU 0.298243 on these forests (cdec's 0-1)


@pytest.fixture(scope="module")
def toy_store(example_data):
    import mtplug

    return mtplug.load_nbest([example_data / "run1.best100.out.gz"], refs=[example_data / "ref.0"])


@pytest.mark.parametrize("name", sorted(OPTIMIZER_NAMES))
def test_result_score_is_on_the_scale_of_mtplug_score(name, example_data, toy_store, tmp_path, capsys):
    """Result.score (issue 37, one scale): the tuned 1-best's BLEU on sacrebleu's 0-100
    scale, the number ``mtplug score`` prints for those translations and ``mtplug.score``
    returns for the weights; the metric's numbers in info are on that scale too."""
    import mtplug

    d = example_data
    options = {"mert": {"restarts": 2}, "kbmira": {"passes": 10}, "mira": {"passes": 3}}.get(name, {})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = mtplug.optimize(name, toy_store, d / "run1.init.opt", seed=3, **options)
    hyp = tmp_path / "tuned.1best"
    hyp.write_text("".join(line + "\n" for line in mtplug.rerank([d / "run1.best100.out.gz"],
                                                                 result.named_weights())))
    assert main(["score", "-q", "--json", "--hyp", str(hyp), "--ref", str(d / "ref.0")]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["metric"] == result.metric == "bleu"
    assert result.score == pytest.approx(printed["score"], abs=1e-9)
    assert result.score == pytest.approx(mtplug.score(toy_store, result), abs=1e-9)
    assert mtplug.score(toy_store, d / "run1.init.opt") == pytest.approx(TOY_START_BLEU, abs=5e-5)   # 0-100
    assert TOY_START_BLEU < result.score <= 100 or name == "none"
    if name == "mert":   # no regulariser: the objective is the score; every start's on the same scale
        assert result.info["objective"] == pytest.approx(result.score, abs=1e-9)
        assert all(0 < s <= 100 for s in result.info["start_objectives"])
        assert result.info["trace"][-1][2] == pytest.approx(result.score, abs=1e-9)
    if name == "kbmira":
        assert result.info["best_bleu"] == result.score == max(result.info["bleu_per_pass"])


def test_ter_result_score_is_the_error_rate_mtplug_score_prints(example_data, tmp_path, capsys):
    """On a TER store Result.score is TER as ``mtplug score --metric ter`` prints it (an
    error rate on 0-100, lower is better), not the optimizer's 1 - TER."""
    import mtplug

    d = example_data
    store = mtplug.load_nbest([d / "run1.best100.out.gz"], refs=[d / "ref.0"], metric="ter")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = mtplug.optimize("mert", store, d / "run1.init.opt", seed=1, restarts=1)
    hyp = tmp_path / "tuned.1best"
    hyp.write_text("".join(line + "\n" for line in mtplug.rerank([d / "run1.best100.out.gz"],
                                                                 result.named_weights())))
    assert main(["score", "-q", "--json", "--metric", "ter", "--hyp", str(hyp), "--ref", str(d / "ref.0")]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["metric"] == result.metric == "ter" and 1 < printed["score"] < 100
    assert result.score == pytest.approx(printed["score"], abs=1e-9)
    assert result.score == pytest.approx(mtplug.score(store, result), abs=1e-9)
    assert result.score < mtplug.score(store, d / "run1.init.opt")     # tuned: fewer edits
    assert result.info["objective"] == pytest.approx(result.score, abs=1e-9)
