"""The top-level Python API gives what the matching commands give, from one import."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from importlib import resources

import numpy as np
import pytest

import mtplug
from mtplug.cli import _EXAMPLE_INI, main
from mtplug.formats.weights import read_weights

DATA = resources.files("mtplug") / "data" / "example"
NBEST, REF, INIT = (str(DATA / n) for n in ("run1.best100.out.gz", "ref.0", "run1.init.opt"))


@pytest.fixture(scope="module")
def corpus():
    return mtplug.load_nbest(NBEST, refs=REF)


def test_all_names_resolve_and_import_is_lazy():
    for name in mtplug.__all__:
        assert getattr(mtplug, name) is not None
    assert set(mtplug.__all__) <= set(dir(mtplug))
    with pytest.raises(AttributeError):
        mtplug.no_such_name  # noqa: B018
    # the Moses programs import submodules: `import mtplug` alone must not load the API
    code = "import sys, mtplug; print('mtplug.api' in sys.modules, 'mtplug.corpus' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_references_from_one_path_or_a_list(corpus):
    one = mtplug.read_references(REF)
    assert one.sentences == mtplug.read_references([REF]).sentences
    assert len(one) == corpus.n_sentences == 60
    with pytest.raises(TypeError, match="References"):
        mtplug.NbestCorpus.from_nbest([NBEST], [REF])


@pytest.mark.parametrize("name, options", [("mert", {"restarts": 3}), ("pro", {}), ("kbmira", {"passes": 5})])
def test_optimize_equals_the_command(tmp_path, corpus, name, options):
    result = mtplug.optimize(name, corpus, INIT, seed=7, **options)
    out = tmp_path / "w.opt"
    flags = [f"--{k.replace('_', '-')}={v}" for k, v in options.items()]
    assert main(["optimize", name, "--nbest", NBEST, "--ref", REF, "--init", INIT, "--out", str(out),
                 "--seed", "7", "--quiet", *flags]) == 0
    # init.opt holds 6 significant digits; compare with that precision, and the score exactly
    np.testing.assert_allclose(result.weights, read_weights(str(out), "init-opt",
                                                            feature_names=corpus.feature_names).to_array(
                                                                corpus.feature_names), rtol=1e-5, atol=1e-6)
    assert result.seed == 7 and result.feature_names == corpus.feature_names
    # Result.score on 0-100 (sacrebleu's scale), as mtplug.score of the result
    assert mtplug.score(corpus, result) == pytest.approx(result.score, abs=1e-10)
    again = mtplug.optimize(name, corpus, INIT, seed=7, **options)
    assert again.weights.tobytes() == result.weights.tobytes()


def test_start_weights_as_mapping_array_or_result(corpus):
    named = mtplug.optimize("none", corpus, INIT).named_weights()
    vector = named.to_array(corpus.feature_names)
    for start in (dict(named), vector, list(vector)):
        assert mtplug.optimize("none", corpus, start).weights.tobytes() == vector.tobytes()
    assert mtplug.score(corpus, named) == mtplug.score(corpus, INIT) == mtplug.score(corpus, vector)
    with pytest.raises(ValueError, match="one value per feature"):
        mtplug.optimize("none", corpus, vector[:3])


def test_bad_options_and_stores(corpus):
    with pytest.raises(TypeError, match="no option bogus"):
        mtplug.optimize("mert", corpus, INIT, bogus=1)
    with pytest.raises(ValueError, match="mert: restarts must be >= 0"):
        mtplug.optimize("mert", corpus, INIT, restarts=-1)
    with pytest.raises(ValueError, match="unknown optimizer"):
        mtplug.optimize("simplex", corpus, INIT)
    with pytest.raises(mtplug.InputError, match="no metric statistics"):
        mtplug.optimize("mert", mtplug.load_nbest(NBEST), INIT)
    with pytest.raises(ValueError, match="more than one hypothesis"):
        mtplug.score(corpus)


def test_score_and_rerank_equal_the_commands(tmp_path, corpus, capsys):
    weights = mtplug.optimize("mert", corpus, INIT, seed=1, restarts=2).named_weights()
    best = mtplug.rerank([NBEST], weights)
    hyp = tmp_path / "best.txt"
    hyp.write_text("".join(line + "\n" for line in best), encoding="utf-8")
    assert mtplug.score(mtplug.load_plain(hyp, REF)) == pytest.approx(mtplug.score(corpus, weights), abs=1e-12)
    capsys.readouterr()
    assert main(["score", "--hyp", str(hyp), "--ref", REF, "--json"]) == 0
    # the command's BLEU JSON is on 0-100, as the API's
    score = mtplug.score(corpus, weights)
    assert json.loads(capsys.readouterr().out)["score"] == pytest.approx(score, abs=1e-10) and 1 < score < 100


def test_mert_data_and_store(tmp_path, corpus):
    ff, sf, store = (str(tmp_path / n) for n in ("f.dat", "s.dat", "store.npz"))
    assert main(["extract", "--nbest", NBEST, "--ref", REF, "--ffile", ff, "--scfile", sf, "--store", store,
                 "--quiet"]) == 0
    for loaded in (mtplug.load_mert_data(ff, sf), mtplug.load_store(store)):
        assert loaded.n_hypotheses == corpus.n_hypotheses
        assert mtplug.score(loaded, INIT) == pytest.approx(mtplug.score(corpus, INIT), abs=1e-12)


def _tune_options(tmp_path, workdir: str) -> dict:
    ini = tmp_path / "moses.ini"
    with open(INIT, encoding="utf-8") as fh:
        ini.write_text(_EXAMPLE_INI.format(*fh.readline().split()), encoding="utf-8")
    standin = shlex.join([sys.executable, "-m", "mtplug.tuning.standin", "moses", "-standin-pool", NBEST,
                          "-standin-source", REF])
    return {"decoder": "moses", "decoder_bin": standin, "decoder_config": str(ini), "input": REF, "ref": [REF],
            "iterations": 2, "nbest_size": 10, "seed": 3, "workdir": str(tmp_path / workdir), "restarts": 2}


def test_tune_equals_the_command(tmp_path, capsys):
    options = _tune_options(tmp_path, "api")
    lines: list[str] = []
    summary = mtplug.tune(log=lines.append, **options)
    assert lines and summary["seed"] == 3
    flags = [f"--{k.replace('_', '-')}={v if k != 'ref' else v[0]}" for k, v in _tune_options(tmp_path, "cli").items()]
    capsys.readouterr()
    assert main(["tune", "--quiet", *flags]) == 0
    command = json.loads(capsys.readouterr().out)
    assert {k: v for k, v in summary.items() if k not in ("final", "files")} == \
        {k: v for k, v in command.items() if k not in ("final", "files")}
    api_state = json.loads((tmp_path / "api" / "state.json").read_text())
    cli_state = json.loads((tmp_path / "cli" / "state.json").read_text())
    assert [h["bleu"] for h in api_state["history"]] == [h["bleu"] for h in cli_state["history"]]
    assert (tmp_path / "api" / "final").read_bytes() == (tmp_path / "cli" / "final").read_bytes()


def test_tune_option_errors_name_the_keyword(tmp_path):
    options = _tune_options(tmp_path, "bad")
    with pytest.raises(mtplug.InputError, match="iterations= must be an integer"):
        mtplug.tune(**{**options, "iterations": "many"})
    with pytest.raises(mtplug.InputError, match="is not an option of mert"):
        mtplug.tune(**{**options, "c": 0.01})
    assert not os.path.exists(options["workdir"])
