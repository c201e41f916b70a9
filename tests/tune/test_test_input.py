"""``mtplug tune --test-input SRC --test-ref REF`` (issue 21): every iteration decodes a held-out
test set with the weights it decoded the tuning set with. The stand-in decoder re-ranks the
moses-toy pool (60 sentences); its first 30 sentences are the tuning set, the other 30 the test
set, and ``all.src`` names them all for the stand-in's look-up (``-standin-source``)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import sacrebleu

from mtplug.cli import EXIT_INPUT_ERROR, main
from mtplug.tuning.loop import Hooks, read_state, run_tuning
from mtplug.tuning.plot import bleu_curves
from tests.tune.test_tune import CDEC_WEIGHTS, INI, MOSES_STANDIN, TOY, run

HALF = 30
#: history fields that measure time, not results
CLOCK = ("decode_seconds", "optimize_seconds", "test_decode_seconds", "seconds")


@pytest.fixture
def split(tmp_path) -> Path:
    """all.src (s0 .. s59), dev.src/dev.ref (the first 30), test.src/test.ref (the other 30),
    moses.ini, cdec.ini and cdec start weights."""
    refs = (TOY / "ref.0").read_text(encoding="utf-8").splitlines()
    sources = [f"s{i}" for i in range(2 * HALF)]
    for name, lines in (("all.src", sources), ("dev.src", sources[:HALF]), ("test.src", sources[HALF:]),
                        ("dev.ref", refs[:HALF]), ("test.ref", refs[HALF:])):
        (tmp_path / name).write_text("".join(t + "\n" for t in lines), encoding="utf-8")
    (tmp_path / "moses.ini").write_text(INI)
    (tmp_path / "cdec.ini").write_text("formalism=scfg\n")
    (tmp_path / "weights").write_text(CDEC_WEIGHTS)
    return tmp_path


def tune_args(d: Path, workdir: str, *extra, decoder="moses", test=("test.src", "test.ref"), iterations=3,
              quiet=True):
    """A tuning on dev.src (mert, 10-best) with ``test`` = (source, reference files...) in ``d``."""
    if decoder == "moses":   # the hook of tests/integrations/standin_decoder.py counts decoder calls
        system = ["--decoder", "moses", "--decoder-bin",
                  shlex.join([sys.executable, str(MOSES_STANDIN), "-standin-source", str(d / "all.src")]),
                  "--decoder-config", str(d / "moses.ini")]
    else:
        system = ["--decoder", "cdec", "--decoder-bin",
                  shlex.join([sys.executable, "-m", "mtplug.tuning.standin", "cdec", "-standin-source",
                              str(d / "all.src")]),
                  "--decoder-config", str(d / "cdec.ini"), "--weights", str(d / "weights")]
    tested = ["--test-input", str(d / test[0]), "--test-ref", *(str(d / r) for r in test[1:])] if test else []
    return ["tune", *(["-q"] if quiet else []), *system, "--input", str(d / "dev.src"), "--ref", str(d / "dev.ref"),
            *tested, "--optimizer", "mert", "--restarts", "2", "--iterations", str(iterations), "--nbest-size", "10",
            "--workdir", str(d / workdir), "--seed", "3", *extra]


@pytest.fixture
def calls(tmp_path, monkeypatch):
    """The number of decoder processes started so far (the stand-in's STANDIN_KILL_PARENT hook
    with a call number never reached)."""
    monkeypatch.setenv("STANDIN_KILL_PARENT", f"{tmp_path}/call:{10**9}")
    return lambda: len(list(tmp_path.glob("call.*")))


def score_json(hyp: Path, ref: Path, metric: str) -> dict:
    p = subprocess.run([sys.executable, "-m", "mtplug", "score", "--hyp", str(hyp), "--ref", str(ref), "--metric",
                        metric, "--json"], capture_output=True, text=True, check=True)
    return json.loads(p.stdout)


def standin_onebest(d: Path, ini: Path, src: Path) -> str:
    """The stand-in's own 1-best (its stdout) of ``src`` with the weights of ``ini``."""
    p = subprocess.run([sys.executable, "-m", "mtplug.tuning.standin", "moses", "-config", str(ini), "-input-file",
                        str(src), "-standin-source", str(d / "all.src")], capture_output=True, text=True, check=True)
    return p.stdout


def strip_clock(history: list[dict]) -> list[dict]:
    return [{k: v for k, v in h.items() if k not in CLOCK} for h in history]


@pytest.mark.parametrize("metric", ["bleu", "ter"])
def test_each_iteration_scores_the_test_translations_of_its_decoded_weights(split, metric, capsys):
    rc = main(tune_args(split, "wd", "--jobs", "3", "--metric", metric, quiet=False))
    out, err = capsys.readouterr()
    assert rc == 0, err
    summary = json.loads(out)
    wd = split / "wd"
    state = read_state(str(wd))
    assert len(state["history"]) == summary["iterations"] >= 2
    for h in state["history"]:
        n = h["iteration"]
        test_out = wd / f"iter{n:03d}" / "test.out"
        # the translations of the weights this row's tuning BLEU was decoded with (their moses.ini
        # copy), as the decoder itself gives them on stdout; --jobs 3 shards them
        assert test_out.read_text(encoding="utf-8") == standin_onebest(split, wd / f"iter{n:03d}" / "moses.ini",
                                                                       split / "test.src")
        hyps = test_out.read_text(encoding="utf-8").splitlines()
        refs = (split / "test.ref").read_text(encoding="utf-8").splitlines()
        bleu = score_json(test_out, split / "test.ref", "bleu")
        assert h["test_bleu"] == bleu["score"]
        # sacrebleu's scale, 0-100, in the state as in mtplug score and sacrebleu
        assert h["test_bleu"] == pytest.approx(sacrebleu.BLEU(tokenize="none", smooth_method="none").corpus_score(
            hyps, [refs]).score, abs=1e-7)
        assert f"iteration {n}: test BLEU = {h['test_bleu']:.4f}" in err
        if metric == "ter":
            ter = score_json(test_out, split / "test.ref", "ter")["score"]
            assert h["test_metric_value"] == pytest.approx(ter, abs=1e-10)
            assert h["test_objective"] == pytest.approx(100 - ter, abs=1e-10)
            assert f"iteration {n}: test BLEU = {h['test_bleu']:.4f}, TER = {ter:.4f}" in err
        else:
            assert "test_metric_value" not in h
    # improves on the test set too (25.21 -> 44.85 with BLEU)
    assert state["history"][-1]["test_bleu"] > state["history"][0]["test_bleu"] + 10
    # DIR/final's test translations and score: those of the iteration that decoded its weights
    n = summary["final_iteration"]
    assert (wd / "final.test.out").read_bytes() == (wd / f"iter{n:03d}" / "test.out").read_bytes()
    assert summary["test_bleu"] == state["history"][n - 1]["test_bleu"]
    assert summary["test_out"] == str(wd / "final.test.out")
    assert [h["test_bleu"] for h in summary["history"]] == [h["test_bleu"] for h in state["history"]]
    assert f"final weights: test BLEU = {summary['test_bleu']:.4f}" in err


@pytest.mark.parametrize("decoder", ["moses", "cdec"])
def test_the_tuning_set_as_test_set_scores_as_the_tuning_set(split, decoder, capsys):
    """The test decode is a 1-best list through the tuning decode's machinery: on the tuning set
    itself it gives the tuning set's onebest.txt and BLEU, with the jobs of the tuning decode."""
    summary = run(tune_args(split, "wd", "--jobs", "2", decoder=decoder, test=("dev.src", "dev.ref")), capsys)
    for h in summary["history"]:
        folder = split / "wd" / f"iter{h['iteration']:03d}"
        assert (folder / "test.out").read_bytes() == (folder / "onebest.txt").read_bytes()
        assert h["test_bleu"] == h["bleu"]


def test_resume_decodes_only_new_iterations(split, calls, capsys):
    straight = run(tune_args(split, "straight", iterations=3), capsys)
    assert straight["iterations"] == 3 and calls() == 6        # the tuning set and the test set, 3 times
    run(tune_args(split, "wd", iterations=2), capsys)
    before = calls()
    resumed = run(tune_args(split, "wd", "--resume", iterations=3), capsys)
    assert calls() == before + 2                                # iteration 3 only
    assert strip_clock(read_state(str(split / "wd"))["history"]) == \
        strip_clock(read_state(str(split / "straight"))["history"])
    assert (split / "wd" / "final.test.out").read_bytes() == (split / "straight" / "final.test.out").read_bytes()
    assert resumed["test_bleu"] == straight["test_bleu"]
    before = calls()
    again = run(tune_args(split, "wd", "--resume", iterations=3), capsys)   # a finished run
    assert calls() == before and again == resumed


def test_final_weights_last_decodes_the_test_set_once(split, calls, capsys):
    """Undecoded last weights: the test set is decoded with them for DIR/final.test.out, once;
    the next iteration of a continued run decodes the same weights to the same translations."""
    first = run(tune_args(split, "wd", "--final-weights", "last", iterations=1), capsys)
    assert calls() == 3 and first["final_iteration"] is None and first["bleu"] is None
    final_out = (split / "wd" / "final.test.out").read_bytes()
    assert final_out != (split / "wd" / "iter001" / "test.out").read_bytes()
    assert first["test_bleu"] == score_json(split / "wd" / "final.test.out", split / "test.ref", "bleu")["score"]
    assert run(tune_args(split, "wd", "--final-weights", "last", "--resume", iterations=1), capsys) == first
    assert calls() == 3
    run(tune_args(split, "wd", "--final-weights", "last", "--resume", iterations=2), capsys)
    assert (split / "wd" / "iter002" / "test.out").read_bytes() == final_out
    assert read_state(str(split / "wd"))["history"][1]["test_bleu"] == first["test_bleu"]


@pytest.mark.parametrize("first, then, changed", [
    (("test.src", "test.ref"), ("test.src", "dev.ref"), "test_ref"),
    (("test.src", "test.ref"), ("dev.src", "dev.ref"), "test_input, test_ref"),
    (("test.src", "test.ref"), None, "test_input, test_ref"),       # the test set left out
    (None, ("test.src", "test.ref"), "test_input, test_ref"),       # a test set added
])
def test_resume_with_another_test_set_is_an_error(split, capsys, first, then, changed):
    run(tune_args(split, "wd", test=first, iterations=1), capsys)
    assert main(tune_args(split, "wd", "--resume", test=then, iterations=2)) == EXIT_INPUT_ERROR
    assert capsys.readouterr().err == (f"mtplug: error: {split / 'wd' / 'state.json'}: --resume with other "
                                       f"settings than the run in this directory: {changed}\n")


def test_plot_draws_the_test_curve(split, capsys):
    run(tune_args(split, "wd", iterations=2), capsys)
    state = read_state(str(split / "wd"))
    curves = {label: (x, y) for label, _, x, y in bleu_curves(state)}
    assert curves["test set, decoded 1-best"] == ([1, 2], [h["test_bleu"] for h in state["history"]])
    assert curves["tuning set, decoded 1-best"] == ([1, 2], [h["bleu"] for h in state["history"]])
    run(tune_args(split, "plain", test=None, iterations=1), capsys)
    assert "test set, decoded 1-best" not in {c[0] for c in bleu_curves(read_state(str(split / "plain")))}
    pytest.importorskip("matplotlib")
    assert main(["plot", "-q", str(split / "wd")]) == 0


@pytest.mark.parametrize("test, message", [
    (("test.src", None), "--test-input needs --test-ref too (a test set is its source and its references)"),
    ((None, "test.ref"), "--test-ref needs --test-input too (a test set is its source and its references)"),
    (("all.src", "test.ref"), "{d}/all.src: 60 test sentences but 30 test references ({d}/test.ref)"),
    (("missing.src", "test.ref"), "{d}/missing.src: cannot read (No such file or directory)"),
    (("test.src", "missing.ref"), "{d}/missing.ref: no such file"),
    (("test.src", "empty"), "{d}/empty: empty reference file"),
    (("empty", "test.ref"), "{d}/empty: empty test set (expected one sentence per line)"),
])
def test_test_set_errors_come_before_any_decoding(split, calls, capsys, test, message):
    (split / "empty").write_text("")
    args = tune_args(split, "wd", test=None)
    for flag, name in zip(("--test-input", "--test-ref"), test):
        if name:
            args += [flag, str(split / name)]
    assert main(args) == EXIT_INPUT_ERROR
    assert capsys.readouterr().err == f"mtplug: error: {message.format(d=split)}\n"
    assert calls() == 0 and not (split / "wd").exists()


def test_test_refs_need_only_agree_with_each_other(split, capsys):
    """Any number of test references (not as many as --ref), all of one length."""
    one = run(tune_args(split, "one", iterations=1), capsys)
    three = run(tune_args(split, "three", test=("test.src", "test.ref", "test.ref", "test.ref"), iterations=1),
                capsys)
    assert three["test_bleu"] == one["test_bleu"]      # three equal references count as one
    assert main(tune_args(split, "bad", test=("test.src", "test.ref", "all.src"))) == EXIT_INPUT_ERROR
    assert capsys.readouterr().err == (f"mtplug: error: {split / 'all.src'}: has 60 lines, expected 30 "
                                       f"(as many as {split / 'test.ref'})\n")


def test_yaml_keys(split, capsys):
    text = "".join(f"{k}: {v}\n" for k, v in (
        ("decoder", "moses"), ("decoder_bin", json.dumps(shlex.join([sys.executable, str(MOSES_STANDIN),
                                                                     "-standin-source", str(split / "all.src")]))),
        ("decoder_config", split / "moses.ini"), ("input", split / "dev.src"), ("ref", split / "dev.ref"),
        ("test_input", split / "test.src"), ("test_ref", f"[{split / 'test.ref'}]"), ("workdir", split / "y"),
        ("optimizer_options", "{restarts: 2}"), ("iterations", 1), ("nbest_size", 10), ("seed", 3)))
    (split / "tune.yaml").write_text(text)
    from_yaml = run(["tune", "-q", "--yaml", str(split / "tune.yaml")], capsys)
    assert from_yaml["test_bleu"] == run(tune_args(split, "flags", iterations=1), capsys)["test_bleu"]
    (split / "bad.yaml").write_text(text.replace(f"test_input: {split / 'test.src'}\n", ""))
    assert main(["tune", "--yaml", str(split / "bad.yaml")]) == EXIT_INPUT_ERROR
    line = text.replace(f"test_input: {split / 'test.src'}\n", "").splitlines().index(
        f"test_ref: [{split / 'test.ref'}]") + 1
    assert capsys.readouterr().err == (f"mtplug: error: {split / 'bad.yaml'}:{line}: test_ref needs test_input too "
                                       "(a test set is its source and its references)\n")


def test_progress_counts_the_test_shards(split):
    """The progress bar's total covers the test set's shards: the updates add up to it."""
    from mtplug.cli import build_parser
    from mtplug.tuning.config import config_from_args

    cfg = config_from_args(build_parser().parse_args(tune_args(split, "wd", "--jobs", "2", iterations=2)))
    bars = []

    def counter(total, desc):
        bars.append([total, 0])
        return (lambda k: bars[-1].__setitem__(1, bars[-1][1] + k)), (lambda: None)

    run_tuning(cfg, Hooks(counter=counter))
    assert len(bars) == 2 and all(done == total for total, done in bars), bars


def test_forest_tuning_decodes_a_1best_test_set(tmp_path, capsys, monkeypatch):
    """--forests: the test decode is a 1-best list without -O, so the iteration's forests stay
    those of the tuning set; on the tuning set itself it scores as the tuning set."""
    from tests.tune.test_forests import GOLDEN, tune_args as forest_args

    monkeypatch.setenv("FOREST_DECODER_SEEDS", str(tmp_path / "seeds"))
    args = forest_args(tmp_path, "--workdir", str(tmp_path / "wd"), "--iterations", "2", "--restarts", "1", "-q",
                       "--test-input", str(GOLDEN / "input.txt"), "--test-ref", str(tmp_path / "ref"))
    summary = run(args, capsys)
    n = summary["iterations"]
    assert sorted(p.name for p in (tmp_path / "wd" / f"iter{n:03d}" / "forests").iterdir()) == \
        ["0.bin.gz", "1.bin.gz", "2.bin.gz"]
    for h in summary["history"]:
        folder = tmp_path / "wd" / f"iter{h['iteration']:03d}"
        assert (folder / "test.out").read_bytes() == (folder / "onebest.txt").read_bytes()
        assert h["test_bleu"] == h["bleu"]


def test_test_set_on_a_dask_cluster_equals_local_processes(split, dask_cluster, capsys):
    local = run(tune_args(split, "local", "--jobs", "2", iterations=2), capsys)
    remote = run(tune_args(split, "dask", "--scheduler", dask_cluster.scheduler_address, iterations=2), capsys)
    assert local["history"] == remote["history"] and local["test_bleu"] == remote["test_bleu"]
    for name in ("iter001/test.out", "iter002/test.out", "final.test.out"):
        assert (split / "local" / name).read_bytes() == (split / "dask" / name).read_bytes()
