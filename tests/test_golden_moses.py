"""Golden tests against what Moses's own tools wrote (see tests/golden/*/PROVENANCE)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import sacrebleu

from mtplug.cli import main
from mtplug.corpus import NbestCorpus
from mtplug.formats import mert_data
from mtplug.formats.references import read_references

MOSES_START_BLEU = 0.265757  # shared/data/moses-toy/README.md, Moses HEAD 34452895
BLEU_PRINT_TOLERANCE = 5e-7  # Moses prints six digits


def test_extract_is_byte_identical_to_moses(shared_data, tmp_path):
    d = shared_data / "moses-toy"
    f, s = tmp_path / "f.dat", tmp_path / "s.dat"
    rc = main(["extract", "--quiet", "--nbest", str(d / "run1.best100.out.gz"), "--ref", str(d / "ref.0"),
               "--ffile", str(f), "--scfile", str(s)])
    assert rc == 0
    assert f.read_bytes() == (d / "run1.features.dat").read_bytes()
    assert s.read_bytes() == (d / "run1.scores.dat").read_bytes()


def test_old_label_format_scores_are_byte_identical(shared_data, tmp_path):
    d = shared_data / "moses-example"
    s = tmp_path / "s.dat"
    rc = main(["extract", "--quiet", "--nbest", str(d / "NBEST"), "--ref", *(str(d / f"REF.{i}") for i in range(3)),
               "--scfile", str(s)])
    assert rc == 0
    assert s.read_bytes() == (d / "SCORESTAT.moses").read_bytes()


def test_mert_data_round_trip_and_start_bleu(shared_data, tmp_path):
    d = shared_data / "moses-toy"
    from_nbest = NbestCorpus.from_nbest([str(d / "run1.best100.out.gz")], read_references([str(d / "ref.0")]))
    from_dat = mert_data.read_mert_data([str(d / "run1.features.dat")], [str(d / "run1.scores.dat")])
    np.testing.assert_array_equal(from_dat.stats, from_nbest.stats)
    np.testing.assert_allclose(from_dat.dense, from_nbest.dense, rtol=0, atol=0)
    assert from_dat.feature_names == from_nbest.feature_names
    mert_data.write_features(str(tmp_path / "f"), from_dat)
    assert (tmp_path / "f").read_bytes() == (d / "run1.features.dat").read_bytes()

    start = np.array((d / "run1.init.opt").read_text().split("\n")[0].split(), dtype=float)
    for corpus in (from_nbest, from_dat):
        assert abs(corpus.bleu_of(start).score - MOSES_START_BLEU) < BLEU_PRINT_TOLERANCE
    # and sacrebleu (tokenize none) agrees on the chosen 1-best
    best = from_nbest.one_best(start)
    hyps = [from_nbest.hypotheses(h, h + 1)[0] for h in best]
    refs = (d / "ref.0").read_text().splitlines()
    sb = sacrebleu.metrics.BLEU(tokenize="none", smooth_method="none").corpus_score(hyps, [refs])
    assert abs(sb.score / 100 - from_nbest.bleu_of(start).score) < 1e-9


def test_merging_iterations_deduplicates_like_moses(shared_data):
    d = shared_data / "moses-toy"
    twice = mert_data.read_mert_data([str(d / "run1.features.dat")] * 2, [str(d / "run1.scores.dat")] * 2)
    assert twice.n_hypotheses == 6000


MERGE = Path(__file__).resolve().parent / "golden" / "moses-extractor-merge"


@pytest.mark.parametrize("program", ["extractor", "mtplug extract"])
def test_extractor_merge_is_byte_identical_to_moses(tmp_path, program):
    """Moses's extractor merging a previous iteration (see golden/moses-extractor-merge/PROVENANCE):
    the same rows in the same order, which Moses's duplicate removal decides."""
    from mtplug.integrations.moses.__main__ import main as moses_main

    for n in (1, 2):
        prev = [] if n == 1 else ["--prev-ffile", str(tmp_path / "run1.features.dat"),
                                  "--prev-scfile", str(tmp_path / "run1.scores.dat")]
        out = [str(tmp_path / f"run{n}.features.dat"), str(tmp_path / f"run{n}.scores.dat")]
        nbest, ref = str(MERGE / f"run{n}.best20.out"), str(MERGE / "ref.0")
        if program == "extractor":
            rc = moses_main(["extractor", "--sctype", "BLEU", "--scconfig", "case:true", "--scfile", out[1],
                             "--ffile", out[0], "-r", ref, "-n", nbest, *prev])
        else:
            rc = main(["extract", "-q", "--nbest", nbest, "--ref", ref, "--ffile", out[0], "--scfile", out[1],
                       *prev])
        assert rc == 0
        for kind in ("features", "scores"):
            assert (tmp_path / f"run{n}.{kind}.dat").read_bytes() == (MERGE / f"run{n}.{kind}.dat").read_bytes()
