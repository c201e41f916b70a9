"""``mtplug tune --decoder cdec --forests``: forest MERT (and kbmira) in the decoder loop over
the forests of every iteration, as dpmert.pl does (issue 19, section 3). The decoder is
tests/tune/forest_decoder.py: cdec's k-best and -O files from fixed real cdec forests
(tests/golden/cdec-forests-v18)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from mtplug.cli import EXIT_INPUT_ERROR, main

HERE = Path(__file__).resolve().parent
GOLDEN = HERE.parent / "golden" / "cdec-forests-v18"
REFS = "the black cat sleeps\nthe cat and the dog\nthe cat mange\n"


def tune_args(tmp_path, *extra, optimizer="mert"):
    (tmp_path / "ref").write_text(REFS)
    decoder = shlex.join([sys.executable, str(HERE / "forest_decoder.py"), str(GOLDEN / "forests"),
                          str(GOLDEN / "input.txt")])
    return ["tune", "--decoder", "cdec", "--decoder-bin", decoder, "--decoder-config", str(GOLDEN / "cdec.ini"),
            "--weights", str(GOLDEN / "weights"), "--input", str(GOLDEN / "input.txt"), "--ref",
            str(tmp_path / "ref"), "--optimizer", optimizer, "--nbest-size", "5", "--forests", "--seed", "2", *extra]


@pytest.mark.parametrize("optimizer, options", [("mert", ["--restarts", "2"]), ("kbmira", ["--passes", "5"])])
def test_forest_tuning_pools_the_forests_of_every_iteration(tmp_path, capsys, monkeypatch, optimizer, options):
    """Each iteration seeds the decoder's -O folders with the sentences' forests so far (cdec
    unions the new forest into them, as dpmert.pl's hgs/), every shard with its own."""
    results = []
    for run in range(2):
        wd = tmp_path / f"wd{run}"
        seeds = tmp_path / f"seeds{run}"
        seeds.write_text("")
        monkeypatch.setenv("FOREST_DECODER_SEEDS", str(seeds))
        assert main(tune_args(tmp_path, "--workdir", str(wd), "--jobs", "2", "--iterations", "3", *options,
                              optimizer=optimizer)) == 0
        out, err = capsys.readouterr()
        summary = json.loads(out)
        assert "iteration 1: 3 forests (the decoder's union of 1 iteration(s))" in err
        n = summary["iterations"]
        assert sorted(seeds.read_text().split()) == sorted(["0", "1", "2"] * (n - 1))
        assert sorted(p.name for p in (wd / f"iter{n:03d}" / "forests").iterdir()) == ["0.bin.gz", "1.bin.gz",
                                                                                       "2.bin.gz"]
        assert not (wd / "iter001" / "forests").exists() or n == 1      # only the newest iteration keeps them
        results.append(((wd / "final").read_bytes(), summary["history"]))
    assert results[0] == results[1]                                   # deterministic
    bleus = [h["bleu"] for h in results[0][1]]
    if optimizer == "mert":   # kbmira's sentence-level gains find no 4-gram on 3 sentences
        assert max(bleus) > bleus[0], bleus


def test_forest_tuning_resumes_to_the_same_weights(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FOREST_DECODER_SEEDS", str(tmp_path / "seeds"))
    wd = tmp_path / "wd"
    assert main(tune_args(tmp_path, "--workdir", str(wd), "--iterations", "1", "--restarts", "1")) == 0
    assert main(tune_args(tmp_path, "--workdir", str(wd), "--iterations", "2", "--restarts", "1", "--resume")) == 0
    assert main(tune_args(tmp_path, "--workdir", str(tmp_path / "straight"), "--iterations", "2",
                          "--restarts", "1")) == 0
    capsys.readouterr()
    assert (wd / "final").read_bytes() == (tmp_path / "straight" / "final").read_bytes()


@pytest.mark.parametrize("change, message", [
    (("--optimizer", "pro"), "--forests needs an optimizer that runs over forests (mert, kbmira), not pro"),
    (("--decoder", "moses"), "--forests needs --decoder cdec (its -O forests)"),
])
def test_forests_need_cdec_and_a_forest_optimizer(tmp_path, capsys, change, message):
    args = tune_args(tmp_path, "--workdir", str(tmp_path / "wd"), "-q")
    args[args.index(change[0]) + 1] = change[1]
    assert main(args) == EXIT_INPUT_ERROR
    assert capsys.readouterr().err == f"mtplug: error: {message}\n"


def test_forest_mert_searches_as_dpmert_unless_told(tmp_path):
    """A forest line search costs seconds on a real tuning set: under --forests, MERT searches
    from the current point, at most 5 rounds, unless the flags say otherwise."""
    from mtplug.cli import build_parser
    from mtplug.tuning.config import config_from_args

    def options(*extra):
        args = build_parser().parse_args(tune_args(tmp_path, "--workdir", str(tmp_path / "wd"), *extra))
        return config_from_args(args).optimizer_options

    assert options() == {"restarts": 0, "max_iterations": 5}
    assert options("--restarts", "3") == {"restarts": 3, "max_iterations": 5}
    args = tune_args(tmp_path, "--workdir", str(tmp_path / "wd"))
    args.remove("--forests")
    assert config_from_args(build_parser().parse_args(args)).optimizer_options == {}
