"""The Moses ``pro`` program with ``--mtplug-sampler`` streams the files sentence block by sentence block; its
pro.data is byte for byte what sampling the whole store writes (the pairs of
optimizers.pro.sample_pairs, the lines of formats.pro_data), and its errors are those of
reading the files whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.reference.pro_data_writer import pro_data_from_pairs, write_pro_data
from mtplug.integrations.moses.common import load_mert_data
from mtplug.integrations.moses.pro import main
from mtplug.metrics.sentence import hypothesis_scores
from mtplug.optimizers.pro import sample_pairs
from tests.formats.test_mert_data_stream import blocks_of, iteration_files


def whole_store_pro_data(ffiles, sfiles, path, seed, variant="moses-sentence-bleu", gamma=5000, xi=50):
    corpus = load_mert_data(ffiles, sfiles)
    pairs = sample_pairs(hypothesis_scores(corpus, variant), corpus.sent_offsets, seed=seed, gamma=gamma, xi=xi)
    write_pro_data(path, pro_data_from_pairs(corpus, pairs.better, pairs.worse))
    return path.read_bytes()


def run_pro(ffiles, sfiles, *extra):
    """mtplug's own sampler (--mtplug-sampler): the one that streams block by block."""
    argv = ["--mtplug-sampler"] + [str(a) for a in extra]
    for f, s in zip(ffiles, sfiles):
        argv += ["--ffile", f, "--scfile", s]
    return main(argv)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("n_files", [1, 3])
def test_streamed_pro_data_is_the_whole_stores(tmp_path, capfd, seed, n_files):
    ffiles, sfiles = iteration_files(str(tmp_path), seed, n_files, gz=seed == 1)
    want = whole_store_pro_data(ffiles, sfiles, tmp_path / "want", seed, gamma=300, xi=20)
    assert run_pro(ffiles, sfiles, "-r", seed, "--gamma", 300, "--xi", 20, "-o", tmp_path / "got") == 0
    assert (tmp_path / "got").read_bytes() == want
    capfd.readouterr()
    assert run_pro(ffiles, sfiles, "-r", seed, "--gamma", 300, "--xi", 20) == 0   # to stdout
    assert capfd.readouterr().out.encode() == want


def test_blocks_out_of_order_are_read_whole(tmp_path, capfd):
    ffiles, sfiles = iteration_files(str(tmp_path), 5, 1)
    for path, end in ((ffiles[0], b"FEATURES_TXT_END_0"), (sfiles[0], b"SCORES_TXT_END_0")):
        blocks = blocks_of(Path(path).read_bytes(), end)
        Path(path).write_bytes(b"".join(blocks[::-1]))
    want = whole_store_pro_data(ffiles, sfiles, tmp_path / "want", 2)
    assert run_pro(ffiles, sfiles, "-r", 2, "-o", tmp_path / "got") == 0
    assert (tmp_path / "got").read_bytes() == want


def test_a_sentence_without_hypotheses_is_an_error_after_the_files(write, capfd, tmp_path):
    f = write("f", "FEATURES_TXT_BEGIN_0 1 1 1 A_0 \n1 \nFEATURES_TXT_END_0\n")
    s = write("s", "SCORES_TXT_BEGIN_0 1 1 9 BLEU\n1 1 1 1 1 1 1 1 1 \nSCORES_TXT_END_0\n")
    assert run_pro([f], [s], "-o", tmp_path / "out", "--sctype", "TER") == 2
    err = capfd.readouterr().err
    assert f"pro: error: {f}: sentence 0 has no hypotheses (1 of 2 sentences are empty)" in err
    assert not (tmp_path / "out").exists()
    bad_s = write("bad", "SCORES_TXT_BEGIN_0 1 1 9 BLEU\n1 1 1 1 1 1 1 1 \nSCORES_TXT_END_0\n")
    assert run_pro([f], [bad_s]) == 2
    assert "expected 9 statistics, got 8" in capfd.readouterr().err


def test_the_scorer_must_be_the_files(write, capfd):
    f = write("f", "FEATURES_TXT_BEGIN_0 0 1 1 A_0 \n1 \nFEATURES_TXT_END_0\n")
    s = write("s", "SCORES_TXT_BEGIN_0 0 1 9 BLEU\n1 1 1 1 1 1 1 1 1 \nSCORES_TXT_END_0\n")
    assert run_pro([f], [s], "--sctype", "TER") == 2
    out = capfd.readouterr()
    assert "--sctype must name the scorer" in out.err and out.out == ""
    assert run_pro([f], [s], "--sctype", "BLEU") == 0
