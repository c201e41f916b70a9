"""mtplug dtrain end to end with the stand-in cdec decoder on the Moses toy set (60 sentences)."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from mtplug.cli import EXIT_INPUT_ERROR, main
from mtplug.corpus import NbestCorpus
from mtplug.formats.cdec_weights import read_cdec_weights
from mtplug.formats.references import read_references

from .conftest import MOSES_COLUMNS, TOY_START_BLEU


@pytest.fixture(scope="module")
def pool_corpus(toy):
    """All 6,000 pooled hypotheses with BLEU statistics: the tuning BLEU of any weights."""
    return NbestCorpus.from_nbest([toy["nbest"]], read_references([toy["ref0"]]))


def pool_bleu(corpus, path) -> float:
    w = {MOSES_COLUMNS.get(n, n): v for n, v in read_cdec_weights(path).items()}
    return corpus.bleu_of(np.array([w.get(n, 0.0) for n in corpus.feature_names])).score


def run_cli(*argv):
    return main(["dtrain", "--quiet", *argv])


def test_tuning_bleu_improves(toy, dtrain_ini, standin_command, pool_corpus, tmp_path, capsys):
    """3 epochs, per-sentence decoding (as dtrain), cdec's parallelized example's eta and margin."""
    ini = dtrain_ini(epochs=3, k=100, learning_rate=0.0001, loss_margin=1, scorer="stupid_bleu",
                     pair_sampling="XYX", print_weights="LanguageModel WordPenalty")
    out = str(tmp_path / "weights.txt")
    assert main(["dtrain", "-c", ini, "--decoder-bin", standin_command, "--output", out]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert "epoch 3/3: 1-best avg score" in captured.err and "LanguageModel = " in captured.err
    assert pool_bleu(pool_corpus, toy["weights"]) == pytest.approx(TOY_START_BLEU, abs=1e-6)
    final = pool_bleu(pool_corpus, out)
    per_epoch = [e["bleu"] for e in result["epochs"]]
    print(f"1-best BLEU per epoch {per_epoch}, final weights {final:.6f} (start {TOY_START_BLEU}), "
          f"{result['decoder_calls']} decoder calls, {result['seconds']:.1f} s")
    assert result["decoder_calls"] == 180 and len(per_epoch) == 3
    # the epochs' scores on 0-100 as every mtplug score (TOY_START_BLEU is a fraction, BleuScore's)
    assert min(per_epoch) > 100 * TOY_START_BLEU + 5 and result["bleu"] == per_epoch[-1]
    assert 10 < result["score"] == result["epochs"][-1]["avg_score"] < 100
    assert f"corpus BLEU of the 1-bests {per_epoch[-1]:.3f}," in captured.err
    assert final > TOY_START_BLEU + 0.05
    # where an epoch's time goes: the decoder's calls, the rest is scoring and updates
    for e in result["epochs"]:
        assert 0 < e["decode_seconds"] <= e["seconds"]
    assert f"({result['epochs'][-1]['decode_seconds']:.2f} s decoding)" in captured.err
    assert open(out).readline().startswith("# mtplug") and "seed=0" in open(out).readline()


def test_same_input_and_seed_give_identical_bytes(dtrain_ini, standin_command, tmp_path, capsys):
    ini = dtrain_ini(epochs=2, stop_after=15, minibatch=3, gamma=0.001, loss_margin=0.5, learning_rate=0.01,
                     l1_reg="cumul", l1_reg_strength=0.0001, select_weights="avg", seed=5)
    outs = []
    for name in ("a.txt", "b.txt"):
        out = str(tmp_path / name)
        assert run_cli("-c", ini, "--decoder-bin", standin_command, "--output", out) == 0
        outs.append(open(out, "rb").read())
    assert outs[0] == outs[1] and b"seed=5" in outs[0]
    assert json.loads(capsys.readouterr().out.splitlines()[0])["seed"] == 5


def test_result_does_not_depend_on_the_number_of_workers(dtrain_ini, standin_command, tmp_path, capsys):
    ini = dtrain_ini(epochs=2, shards=2, randomize=True, reshard=True, seed=3, minibatch=2, stop_after=10,
                     lplp_args="l2 select_k 6")
    outs = []
    for workers in ("1", "2"):
        out = str(tmp_path / f"w{workers}.txt")
        assert run_cli("-c", ini, "--decoder-bin", standin_command, "--output", out, "--workers", workers) == 0
        outs.append(open(out, "rb").read())
    assert outs[0] == outs[1]
    lines = [ln for ln in outs[0].decode().splitlines() if not ln.startswith("#")]
    assert len(lines) <= 6                                   # lplp's top-k feature selection
    result = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert result["shards"] == 2 and result["epochs"][0]["sentences"] == 20   # stop_after per shard


def test_batch_noup_keep_and_stdout(dtrain_ini, standin_command, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ini = dtrain_ini(epochs=2, batch=True, keep=True)
    assert run_cli("-c", ini, "--decoder-bin", standin_command) == 0     # output=- : weights on stdout
    captured = capsys.readouterr()
    assert captured.out.startswith("# mtplug") and "\t" in captured.out.splitlines()[1]
    assert captured.err == ""                                           # --quiet: no JSON on stderr either
    assert os.path.exists("weights.0.gz") and os.path.exists("weights.1.gz")
    assert gzip.decompress(open("weights.1.gz", "rb").read()).decode().count(" ") >= 1
    assert main(["dtrain", "-c", ini, "--decoder-bin", standin_command, "--noup", "--output", "never.txt"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert result["out"] is None and len(result["epochs"]) == 1 and result["decoder_calls"] == 1
    assert not os.path.exists("never.txt")


def test_bad_input_exits_2(dtrain_ini, standin_command, write, capsys):
    bad = write("bad.ini", "decoder_config=c\nbitext=b\nk=100\nsmaple_from=kbest\n")
    assert main(["dtrain", "-c", bad, "--decoder-bin", standin_command]) == EXIT_INPUT_ERROR
    assert f"{bad}:4: unknown dtrain key 'smaple_from'" in capsys.readouterr().err
    ini = dtrain_ini()
    assert main(["dtrain", "-c", ini, "--decoder-bin", standin_command, "--hi-lo", "0.9"]) == EXIT_INPUT_ERROR
    assert "--hi-lo: must lie in [0.01, 0.5]" in capsys.readouterr().err
    assert main(["dtrain", "-c", ini, "--decoder-bin", "/nonexistent/cdec", "--output", os.devnull]) \
        == EXIT_INPUT_ERROR
    assert "cannot run the decoder" in capsys.readouterr().err


def test_help_lists_every_key():
    p = subprocess.run([sys.executable, "-m", "mtplug", "dtrain", "--help"], capture_output=True, text=True)
    assert p.returncode == 0 and "examples:" in p.stdout
    from mtplug.dtrain.config import KEYS, flag_of

    for key in KEYS:
        flag = flag_of(key)
        assert f"{flag} " in p.stdout or f"{flag}," in p.stdout or f"{flag}\n" in p.stdout, key


def test_input_weights_that_name_no_feature_are_an_error(dtrain_ini, standin_command, write, tmp_path, capsys):
    """Issue 37, defect 1: input_weights with Moses names on cdec k-best lists (the stand-in names
    cdec features) stop dtrain after the first decoding, in one line, exit 2."""
    moses = write("moses.weights", "LM0_0 0.5\nWordPenalty0_0 -1\n")
    ini = dtrain_ini(epochs=1)
    out = tmp_path / "w.out"
    assert main(["dtrain", "-q", "-c", ini, "--weights", moses, "--decoder-bin", standin_command,
                 "--output", str(out)]) \
        == EXIT_INPUT_ERROR
    err = capsys.readouterr().err
    assert err.startswith(f"mtplug: error: {moses}: none of its 2 weight(s) names a feature of the decoder's "
                          "k-best lists (it gives LM0_0, WordPenalty0_0; expected names such as "), err
    assert err.count("\n") == 1 and not out.exists()


def _visiting_order(err: str) -> list[list[int]]:
    """The sentence indices of each epoch, from --verbose's per-sentence lines."""
    epochs: list[list[int]] = [[]]
    for line in err.splitlines():
        if line.startswith("sentence "):
            epochs[-1].append(int(line.split()[1].rstrip(":")))
        elif line.startswith("epoch "):
            epochs.append([])
    return [e for e in epochs if e]


def test_randomize_and_reshard_shuffle_one_shard(dtrain_ini, standin_command, tmp_path, capsys):
    """With one shard, randomize shuffles the visiting order by the seed and reshard
    reshuffles it after each epoch (they used to do nothing there, silently)."""
    orders = {}
    for name, keys in {"plain": {}, "seed1": dict(randomize=True, seed=1), "seed2": dict(randomize=True, seed=2),
                       "reshard": dict(randomize=True, reshard=True, seed=1)}.items():
        ini = dtrain_ini(epochs=2, minibatch=20, **keys)
        assert main(["dtrain", "-c", ini, "--verbose", "--decoder-bin", standin_command, "--output",
                     str(tmp_path / f"{name}.w")]) == 0
        orders[name] = _visiting_order(capsys.readouterr().err)
    plain, seed1, seed2, reshard = (orders[k] for k in ("plain", "seed1", "seed2", "reshard"))
    assert plain == [list(range(60))] * 2
    assert sorted(seed1[0]) == list(range(60)) and seed1[0] != plain[0] and seed1[0] != seed2[0]
    assert seed1[1] == seed1[0]                                     # randomize alone: once
    assert reshard[0] == seed1[0] and reshard[1] != reshard[0] and sorted(reshard[1]) == list(range(60))


def test_reshard_without_randomize_is_an_error(dtrain_ini, standin_command, capsys):
    assert main(["dtrain", "-q", "-c", dtrain_ini(reshard=True), "--decoder-bin", standin_command]) == EXIT_INPUT_ERROR
    err = capsys.readouterr().err
    assert "reshard: has no effect without randomize" in err and err.count("\n") == 1
