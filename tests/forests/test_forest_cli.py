"""`mtplug kbest` and forest MERT/kbmira from the command line, on cdec's real forests."""

from __future__ import annotations

import numpy as np
import pytest

from mtplug.cli import main
from mtplug.corpus import NbestCorpus
from mtplug.formats.references import read_references
from mtplug.forests.corpus import ForestCorpus
from mtplug.formats.cdec_forest import read_cdec_forest
from mtplug.optimizers.mert import Mert
from tests.formats.test_cdec_forest import ONE_BEST

from .conftest import ORIGIN


def test_kbest_lines_read_back_as_an_nbest_list(cdec_setup, tmp_path, capsys):
    hg, init, refs = cdec_setup
    out = tmp_path / "k.best"
    assert main(["kbest", "-q", "--forests", str(hg), "--weights", str(init), "--nbest-size", "20", "--unique",
                 "--output", str(out)]) == 0
    lines = out.read_text().splitlines()
    by_sent = [[ln for ln in lines if ln.startswith(f"{s} |||")] for s in range(2)]
    assert [len(x) for x in by_sent] == [20, 20]
    for s, name in enumerate(["0.bin.gz", "1.bin.gz"]):
        score, words = ONE_BEST[name]
        first = by_sent[s][0].split(" ||| ")
        assert first[1] == words and float(first[3]) == pytest.approx(score, abs=1e-6)
        strings = [ln.split(" ||| ")[1] for ln in by_sent[s]]
        assert len(set(strings)) == len(strings)
        scores = [float(ln.split(" ||| ")[3]) for ln in by_sent[s]]
        assert scores == sorted(scores, reverse=True)
    corpus = NbestCorpus.from_nbest([str(out)], read_references(refs))
    w = np.array([ORIGIN.get(n, 0.0) for n in corpus.feature_names])
    fc = ForestCorpus(read_references(refs), feature_names=corpus.feature_names)
    for s in range(2):
        fc.add(s, read_cdec_forest(str(hg / f"{s}.bin.gz")))
    w_fc = np.array([ORIGIN.get(n, 0.0) for n in fc.feature_names])
    assert corpus.metric_of(w) == pytest.approx(fc.metric_of(w_fc), abs=1e-12)


def test_kbest_refuses_bad_k(cdec_setup, capsys):
    hg, init, _ = cdec_setup
    assert main(["kbest", "-q", "--forests", str(hg), "--weights", str(init), "--nbest-size", "0"]) == 2
    assert "--nbest-size must be an integer >= 1, got 0" in capsys.readouterr().err


def test_expbleu_directions_over_forests(cdec_setup):
    hg, _, refs = cdec_setup
    fc = ForestCorpus(read_references(refs), feature_names=list(ORIGIN))
    for s in range(2):
        fc.add(s, read_cdec_forest(str(hg / f"{s}.bin.gz")))
    start = np.array([ORIGIN.get(n, 0.0) for n in fc.feature_names])
    a = Mert(directions="expbleu", restarts=0, max_iterations=6).optimize(fc, start, seed=1)
    b = Mert(directions="expbleu", restarts=0, max_iterations=6).optimize(fc, start, seed=1)
    assert a.weights.tobytes() == b.weights.tobytes()
    assert a.score > 100 * (fc.metric_of(start) + 0.1)     # Result.score is 0-100, metric_of a fraction


@pytest.mark.parametrize("algorithm", ["mert", "kbmira"])
def test_a_forest_without_features_is_fine(tmp_path, algorithm, capsys):
    # an untranslatable sentence: PLF '()' is an empty lattice, whose one edge has no features
    (tmp_path / "dev.plf").write_text("((('a',0.5,1),('b',0.25,1),),)\n()\n")
    (tmp_path / "ref").write_text("a\nx\n")
    (tmp_path / "init").write_text("LatticeCost_0 1\n")
    args = ["optimize", algorithm, "-q", "--forests", str(tmp_path / "dev.plf"), "--ref", str(tmp_path / "ref"),
            "--weights", str(tmp_path / "init"), "--output", str(tmp_path / "out")]
    assert main(args + (["--passes", "2"] if algorithm == "kbmira" else ["--restarts", "1"])) == 0, \
        capsys.readouterr().err
    assert (tmp_path / "out").exists()


def test_kbest_refuses_weights_that_name_no_feature_of_the_forests(cdec_setup, tmp_path, capsys):
    """Issue 37, defect 1: Moses names on cdec forests would score every edge 0."""
    hg, _, _ = cdec_setup
    moses = tmp_path / "moses.weights"
    moses.write_text("LM0_0 0.5\nWordPenalty0_0 -1\n")
    out = tmp_path / "k.best"
    assert main(["kbest", "-q", "--forests", str(hg), "--weights", str(moses), "--nbest-size", "5", "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mtplug: error: {moses}: none of its 2 weight(s) names a feature of the forests "
                          "(it gives LM0_0, WordPenalty0_0; expected names such as "), err
    assert err.count("\n") == 1 and not out.exists()


def test_forest_optimize_refuses_weights_that_name_no_feature_of_the_forests(cdec_setup, tmp_path, capsys):
    """Issue 37, defect 1: optimize --forests matches the start weights against the edges' features."""
    hg, _, refs = cdec_setup
    moses = tmp_path / "moses.weights"
    moses.write_text("LM0_0 0.5\nWordPenalty0_0 -1\n")
    out = tmp_path / "out"
    assert main(["optimize", "mert", "-q", "--forests", str(hg), "--ref", *refs, "--weights", str(moses),
                 "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mtplug: error: {moses}: none of its 2 weight(s) names a feature of the forests "), err
    assert err.count("\n") == 1 and not out.exists()
