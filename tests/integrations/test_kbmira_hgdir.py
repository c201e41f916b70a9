"""Moses kbmira's hypergraph mode (``kbmira --hgdir DIR -R REF``) run by mtplug."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

from mtplug.cli import main as mtplug_main
from mtplug.formats.moses_hypergraph import hypergraph_path, write_moses_hypergraph
from mtplug.hypergraph import HypergraphBuilder

from .test_moses_programs import call, mira_weights

DENSE = ["LM0_0", "TM0_0", "TM0_1"]


def _moses_forest(rng: random.Random, n_nodes: int):
    """A random forest with Moses-style feature names, source coverage and one goal."""
    b = HypergraphBuilder("moses")
    words = "a b c d e".split()
    for v in range(n_nodes):
        b.source_covered(v, v + 1)
        for _ in range(rng.randint(1, 3)):
            nt = 0 if v == 0 else rng.randint(0, min(2, v))
            tails = sorted(rng.sample(range(v), nt)) if nt else []
            rhs = [rng.choice(words) for _ in range(rng.randint(1, 2))] + list(range(nt))
            rng.shuffle(rhs)
            feats = {n: rng.uniform(-3, 1) for n in DENSE}
            if rng.random() < 0.3:
                feats[f"WT_{rng.choice(words)}"] = 1.0
            b.edge(v, tails, rhs, feats)
    return b.build(n_nodes - 1)


@pytest.fixture()
def hgdir(tmp_path):
    rng = random.Random(7)
    d = tmp_path / "hg"
    d.mkdir()
    refs = []
    for s in range(6):
        write_moses_hypergraph(hypergraph_path(d, s), _moses_forest(rng, rng.randint(3, 6)))
        refs.append(" ".join(rng.choice("abcde") for _ in range(rng.randint(3, 8))))
    (tmp_path / "ref").write_text("\n".join(refs) + "\n")
    (tmp_path / "run1.dense").write_text("LM0= 0.5\nTM0= 0.2\nTM0= 0.3\n")
    return d


def test_kbmira_hgdir_runs_like_moses_and_matches_mtplug_optimize(hgdir, tmp_path, capfd):
    argv = ["--hgdir", hgdir, "-R", tmp_path / "ref", "--dense-init", tmp_path / "run1.dense", "-r", 3,
            "-J", 8, "-o", "mert.out"]
    rc, _, err = call("kbmira", *argv, cwd=tmp_path, capfd=capfd)
    assert rc == 0, err
    assert re.search(r"^Best BLEU = \S+$", err, re.M) and "Initial BLEU = " in err
    assert len(re.findall(r"^\d+/6 updates, avg loss = \S+, BLEU = \S+$", err, re.M)) == 8
    out = (tmp_path / "mert.out").read_text()
    dense, sparse = mira_weights(out, 3)
    assert len(dense) == 3 and all(k.startswith("WT_") for k in sparse)
    rc, _, _ = call("kbmira", *argv[:-1], "again.out", cwd=tmp_path, capfd=capfd)
    assert rc == 0 and (tmp_path / "again.out").read_text() == out
    # the same optimizer through mtplug's own CLI: the same weights (full precision there)
    init = tmp_path / "start.w"
    init.write_text("LM0_0 0.5\nTM0_0 0.2\nTM0_1 0.3\n")
    assert mtplug_main(["optimize", "kbmira", "-q", "--forests", str(hgdir), "--ref", str(tmp_path / "ref"),
                        "--reflen", "shortest", "--init", str(init), "--out", str(tmp_path / "w.txt"),
                        "--seed", "3", "--passes", "8"]) == 0
    capfd.readouterr()
    tuned = dict(line.split() for line in (tmp_path / "w.txt").read_text().splitlines())
    np.testing.assert_allclose([float(tuned[n]) for n in DENSE], dense, rtol=1e-5)


def test_kbmira_hgdir_errors(hgdir, tmp_path, capfd):
    base = ["--hgdir", hgdir, "-o", "mert.out"]
    cases = [(["-R", tmp_path / "ref"], "--dense-init"),
             (["--dense-init", tmp_path / "run1.dense"], "--reference"),
             (["-R", tmp_path / "ref", "--dense-init", tmp_path / "run1.dense", "--ffile", "f.dat"], "not both"),
             (["-R", tmp_path / "ref", "--dense-init", tmp_path / "short.opt"], "name= value")]
    (tmp_path / "short.opt").write_text("1 2 3\n")
    for argv, expected in cases:
        rc, _, err = call("kbmira", *base, *argv, cwd=tmp_path, capfd=capfd)
        assert rc != 0 and expected in err, (argv, err)
        assert not (tmp_path / "mert.out").exists()
