"""Forest MERT on cdec's real forests against the numbers cdec computes on them
(tests/golden/cdec-forests/PROVENANCE), and k-best of forests cdec wrote with Boost 1.74
against cdec's own k-best (tests/golden/cdec-forests-v18/PROVENANCE)."""

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
    assert report["metric"] == "bleu" and report["score"] >= 100 * CDEC_BLEU - 1e-4   # 0-100; cdec's is 0-1
    tuned = dict(line.split() for line in out.read_text().splitlines() if line and not line.startswith("#"))
    assert set(tuned) >= set(ORIGIN)
    assert main(args[:-4] + ["--out", str(tmp_path / "again.weights"), "--restarts", "0", "--seed", "1"]) == 0
    assert (tmp_path / "again.weights").read_bytes() == out.read_bytes()


# ----------------------------------------------------------------------------- Boost 1.74 forests

def _kbest_lines(text: str) -> list[tuple[int, str, dict[str, float], float]]:
    """``(sid, hypothesis, features, score)`` of k-best lines: cdec's ``name=value`` tokens or
    mtplug's Moses-style ``name= value`` (a label ending in '=' takes the next token)."""
    out = []
    for line in text.splitlines():
        sid, hyp, feats, score = (f.strip() for f in line.split("|||"))
        values, label = {}, None
        for tok in feats.split():
            if tok.endswith("="):
                label = tok[:-1]
            elif label is not None:
                values[label], label = float(tok), None
            else:
                name, value = tok.rsplit("=", 1)
                values[name] = float(value)
        out.append((int(sid), hyp, {k: v for k, v in values.items() if v != 0.0}, float(score)))
    return out


def test_kbest_of_boost_1_74_forests_is_cdecs(golden_v18, capsys):
    """cdec prints 6 significant digits and its derivations here have no ties: the same lines
    in the same order, values within cdec's rounding."""
    gold = _kbest_lines((golden_v18 / "gold.stdout").read_text())
    assert main(["kbest", "-q", "--forests", str(golden_v18 / "forests"), "--weights", str(golden_v18 / "weights"),
                 "-k", "5"]) == 0
    got = _kbest_lines(capsys.readouterr().out)
    assert len(got) == len(gold) == 15
    for (sid, hyp, feats, score), want in zip(got, gold):
        assert (sid, hyp, sorted(feats)) == (want[0], want[1], sorted(want[2]))
        assert feats == pytest.approx(want[2], rel=1e-5, abs=1e-6)
        assert score == pytest.approx(want[3], rel=1e-5, abs=1e-6)
    # the [X,1] et [X,2] -> [2] and [1] rule: tails in the rule's order, not the source's
    assert (1, "the cat and the dog") in {(sid, hyp) for sid, hyp, _, _ in got}
