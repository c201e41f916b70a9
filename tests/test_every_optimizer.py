"""Every registered optimizer through the CLI: it improves the toy set and is deterministic."""

from __future__ import annotations

import json

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
