"""Forest MERT on cdec's real forests against the numbers cdec computes on them
(tests/golden/cdec-forests/PROVENANCE)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mtplug.cli import main
from mtplug.formats.cdec_forest import read_cdec_forest
from mtplug.formats.references import read_references
from mtplug.forests.corpus import ForestCorpus
from mtplug.optimizers.line_search import line_search

from .conftest import ORIGIN

CDEC_SEGMENTS = [7, 24]       # mr_dpmert_map, after merging equal adjacent strings
CDEC_X, CDEC_BLEU = -8.39879, 0.481539


@pytest.fixture(scope="module")
def corpus(shared_data):
    d = shared_data / "cdec-forests"
    fc = ForestCorpus(read_references([str(d / f"c2e.txt.{i}") for i in range(4)]), feature_names=list(ORIGIN))
    for s in range(2):
        fc.add(s, read_cdec_forest(str(d / f"{s}.bin.gz")))
    return fc


def _line(fc):
    w = np.array([ORIGIN.get(n, 0.0) for n in fc.feature_names])
    d = np.array([1.0 if n == "WordPenalty" else 0.0 for n in fc.feature_names])
    return w, d


def test_envelopes_have_cdecs_segments(corpus):
    w, d = _line(corpus)
    for s, expected in enumerate(CDEC_SEGMENTS):
        (env,) = corpus.envelopes(s, corpus.scores(w), corpus.scores(d))
        strings = [tuple(env.words[env.ptr[i]:env.ptr[i + 1]]) for i in range(len(env))]
        distinct_runs = sum(1 for i in range(len(strings)) if i == 0 or strings[i] != strings[i - 1])
        assert distinct_runs == expected


def test_line_search_finds_cdecs_best_interval(corpus):
    w, d = _line(corpus)
    res = line_search(corpus, w, d)
    assert round(res.score, 6) == CDEC_BLEU
    # our midpoint rule is cdec's reducer's: the same point, to its 6 printed digits
    assert round(res.gamma, 5) == CDEC_X
    assert corpus.metric_of(w + res.gamma * d) == pytest.approx(res.score, abs=1e-12)


def test_cli_mert_over_the_forest_directory(cdec_setup, tmp_path, capsys):
    hg, init, refs = cdec_setup
    out = tmp_path / "tuned.weights"
    args = ["optimize", "mert", "-q", "--forests", str(hg), "--ref", *refs, "--init", str(init),
            "--out", str(out), "--activate-features", "WordPenalty", "--restarts", "0", "--seed", "1"]
    assert main(args) == 0
    report = json.loads(capsys.readouterr().out)
    # one coordinate (WordPenalty) from cdec's origin: at least cdec's single line search
    assert report["bleu"] >= CDEC_BLEU - 1e-6
    tuned = dict(line.split() for line in out.read_text().splitlines() if line and not line.startswith("#"))
    assert set(tuned) >= set(ORIGIN)
    assert main(args[:-4] + ["--out", str(tmp_path / "again.weights"), "--restarts", "0", "--seed", "1"]) == 0
    assert (tmp_path / "again.weights").read_bytes() == out.read_bytes()
