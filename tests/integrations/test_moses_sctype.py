"""The Moses programs with scorers other than BLEU (``--sctype PER|WER|CDER|TER|BLEU,TER``):
the extractor's scores.dat byte for byte against the real extractor's
(tests/golden/moses_scorers, with their commands), and mert, kbmira, pro and evaluator
reading those files and reporting Moses's scores."""

from __future__ import annotations

import gzip
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from mtplug.formats.mert_data import read_mert_data

from .test_moses_programs import BEST_BLEU, BEST_POINT, call

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "moses_scorers"

# (golden file, n-best, references, --sctype, --scconfig): the commands of GOLDEN/README.md
TOY_CASES = [
    ("toy.PER.scores.dat.gz", "PER", "case:true"),
    ("toy.WER.scores.dat.gz", "WER", "case:true"),
    ("toy.CDER.scores.dat.gz", "CDER", "case:true"),
    ("toy.TER.scores.dat.gz", "TER", "case:true"),
    ("toy.PER.case-false.scores.dat.gz", "PER", "case:false"),
    ("toy.BLEU,TER.scores.dat.gz", "BLEU,TER", "case:true,weights:0.6+0.4"),
]
MIXED_CASES = [
    ("mixed.PER.case-true.scores.dat.gz", ["mixed.ref.0"], "PER", "case:true"),
    ("mixed.PER.case-false.scores.dat.gz", ["mixed.ref.0"], "PER", "case:false"),
    ("mixed.WER.case-true.scores.dat.gz", ["mixed.ref.0", "mixed.ref.1"], "WER", "case:true"),
    ("mixed.WER.case-false.scores.dat.gz", ["mixed.ref.0", "mixed.ref.1"], "WER", "case:false"),
    ("mixed.CDER.case-true.scores.dat.gz", ["mixed.ref.0", "mixed.ref.1"], "CDER", "case:true"),
    ("mixed.CDER.case-false.scores.dat.gz", ["mixed.ref.0", "mixed.ref.1"], "CDER", "case:false"),
    ("mixed.TER.case-true.scores.dat.gz", ["mixed.ref.0", "mixed.ref.1"], "TER", "case:true"),
    ("mixed.BLEU.case-false.scores.dat.gz", ["mixed.ref.0", "mixed.ref.1"], "BLEU", "case:false"),
    ("mixed.BLEU,WER.case-false.scores.dat.gz", ["mixed.ref.0", "mixed.ref.1"], "BLEU,WER",
     "case:false,weights:0.7+0.3"),
]
HARD_CASES = [
    ("hard.TER.case-true.scores.dat.gz", "case:true"),
    ("hard.TER.case-false.scores.dat.gz", "case:false"),
]
# GOLDEN/README.md: Moses's evaluator on the toy 1-best
MOSES_EVALUATOR = {"PER": "0.6291", "WER": "0.6039", "CDER": "0.6039", "TER": "0.6039", "BLEU": "0.2658"}
MOSES_EVALUATOR_BLEU_TER = "0.4010"     # --sctype BLEU,TER --scconfig weights:0.6+0.4


@pytest.fixture
def toy_nbest(example_data):
    return example_data / "run1.best100.out.gz", example_data / "ref.0"


def extract(tmp_path, capfd, nbest, refs, sctype, scconfig, name="run1", *extra):
    rc, _, err = call("extractor", "--sctype", sctype, "--scconfig", scconfig, "-r", ",".join(map(str, refs)),
                      "-n", nbest, "--scfile", f"{name}.scores.dat", "--ffile", f"{name}.features.dat", *extra,
                      cwd=tmp_path, capfd=capfd)
    assert rc == 0, err
    return tmp_path / f"{name}.features.dat", tmp_path / f"{name}.scores.dat"


@pytest.mark.parametrize("golden,sctype,scconfig", TOY_CASES, ids=[c[0] for c in TOY_CASES])
def test_extractor_scores_dat_equals_moses_on_the_toy_nbest(tmp_path, capfd, toy_nbest, golden, sctype, scconfig):
    nbest, ref = toy_nbest
    features, scores = extract(tmp_path, capfd, nbest, [ref], sctype, scconfig)
    assert scores.read_bytes() == gzip.decompress((GOLDEN / golden).read_bytes())
    # the features do not depend on the scorer (no duplicates on the toy set)
    bleu_features, _ = extract(tmp_path, capfd, nbest, [ref], "BLEU", "case:true", "bleu")
    assert features.read_bytes() == bleu_features.read_bytes()


@pytest.mark.parametrize("golden,refs,sctype,scconfig", MIXED_CASES, ids=[c[0] for c in MIXED_CASES])
def test_extractor_scores_dat_equals_moses_on_the_mixed_set(tmp_path, capfd, golden, refs, sctype, scconfig):
    """Mixed case, non-ASCII words, empty hypotheses and references; case:false folds
    ASCII letters only, as Moses."""
    _, scores = extract(tmp_path, capfd, GOLDEN / "mixed.nbest", [GOLDEN / r for r in refs], sctype, scconfig)
    assert scores.read_bytes() == gzip.decompress((GOLDEN / golden).read_bytes())


@pytest.mark.parametrize("golden,scconfig", HARD_CASES, ids=[c[0] for c in HARD_CASES])
def test_extractor_ter_equals_moses_where_sacrebleus_differs(tmp_path, capfd, golden, scconfig):
    """Repeated words, long sentences, three references: Moses's TERCpp numbers, not sacrebleu's."""
    refs = [GOLDEN / f"hard.ref.{k}" for k in range(3)]
    _, scores = extract(tmp_path, capfd, GOLDEN / "hard.nbest", refs, "TER", scconfig)
    assert scores.read_bytes() == gzip.decompress((GOLDEN / golden).read_bytes())


def test_extractor_merges_earlier_files_of_the_same_scorer_only(tmp_path, capfd, toy_nbest):
    nbest, ref = toy_nbest
    f1, s1 = extract(tmp_path, capfd, nbest, [ref], "TER", "case:true")
    f2, s2 = extract(tmp_path, capfd, nbest, [ref], "TER", "case:true", "run2", "--prev-ffile", f1,
                     "--prev-scfile", s1)
    assert s2.read_bytes() == s1.read_bytes()       # the second run adds only duplicates
    rc, _, err = call("extractor", "--sctype", "BLEU", "-r", ref, "-n", nbest, "--prev-ffile", f1,
                      "--prev-scfile", s1, "--scfile", "x.scores.dat", "--ffile", "x.features.dat",
                      cwd=tmp_path, capfd=capfd)
    assert rc == 2 and "run1.scores.dat: holds TER statistics, the first scores file BLEU's" in err, err
    assert not (tmp_path / "x.scores.dat").exists()


def test_extractor_refuses_scorers_it_does_not_provide(tmp_path, capfd, toy_nbest):
    nbest, ref = toy_nbest
    cases = [(["--sctype", "METEOR"], "Moses's METEOR scorer is not provided by mtplug"),
             (["--sctype", "HAMMING"], "HAMMING scorer is not provided"),
             (["--sctype", "BLEU,SEMPOS"], "SEMPOS scorer is not provided"),
             (["--sctype", "TER", "--scconfig", "reflen:average"], "reflen:average is a BLEU setting"),
             (["--sctype", "TER", "--scconfig", "weights:0.5+0.5"], "has one scorer"),
             (["--sctype", "BLEU,TER", "--scconfig", "weights:0.5"], "gives 1 weights for the 2 scorers"),
             (["--sctype", "BLEU,TER", "--scconfig", "weights:a+b"], "expected numbers joined by '+'"),
             (["--sctype", "TER,TER"], "names a scorer twice")]
    for flags, message in cases:
        rc, _, err = call("extractor", *flags, "-r", ref, "-n", nbest, "--scfile", "s.dat", "--ffile", "f.dat",
                          cwd=tmp_path, capfd=capfd)
        assert rc == 2 and message in err and "Traceback" not in err, (flags, err)
        assert not (tmp_path / "s.dat").exists()


def _onebest(nbest: Path, out: Path) -> Path:
    """The hypothesis of each sentence's first n-best line (GOLDEN/README.md's onebest.txt)."""
    seen, lines = set(), []
    with gzip.open(nbest, "rt", encoding="utf-8") as fh:
        for line in fh:
            sid, hyp = line.split(" ||| ")[:2]
            if sid not in seen:
                seen.add(sid)
                lines.append(hyp.strip() + "\n")
    out.write_text("".join(lines))
    return out


def test_evaluator_prints_moses_scores(tmp_path, capfd, toy_nbest):
    nbest, ref = toy_nbest
    onebest = _onebest(nbest, tmp_path / "onebest.txt")
    for sctype, want in MOSES_EVALUATOR.items():
        rc, out, err = call("evaluator", "--sctype", sctype, "--scconfig", "case:true", "--reference", ref,
                            "--candidate", onebest, cwd=tmp_path, capfd=capfd)
        assert rc == 0 and out == want + "\n", (sctype, out, err)
    rc, out, err = call("evaluator", "--sctype", "BLEU,TER", "--scconfig", "weights:0.6+0.4", "--reference", ref,
                        "--candidate", onebest, cwd=tmp_path, capfd=capfd)
    assert rc == 0 and out == MOSES_EVALUATOR_BLEU_TER + "\n", out
    # several scorers: one line each, named
    rc, out, _ = call("evaluator", "--sctype", "TER", "--sctype", "PER", "--reference", ref, "--candidate", onebest,
                      cwd=tmp_path, capfd=capfd)
    assert out == f"TER\t{MOSES_EVALUATOR['TER']}\nPER\t{MOSES_EVALUATOR['PER']}\n"


def _toy_init(example_data, tmp_path) -> Path:
    return Path(shutil.copy(example_data / "run1.init.opt", tmp_path / "run1.init.opt"))


def _corpus_score(features, scores, weights, sctype, scconfig=None):
    from mtplug.integrations.moses.common import load_mert_data

    corpus = load_mert_data([str(features)], [str(scores)], sctype, scconfig)
    return corpus.metric_of(np.asarray(weights, dtype=np.float64))


@pytest.mark.parametrize("sctype,scconfig", [("TER", "case:true"), ("PER", "case:true"),
                                             ("BLEU,TER", "case:true,weights:0.6+0.4")])
def test_mert_tunes_to_the_scorer_of_the_scores_files(tmp_path, capfd, toy_nbest, example_data, sctype, scconfig):
    nbest, ref = toy_nbest
    features, scores = extract(tmp_path, capfd, nbest, [ref], sctype, scconfig)
    init = _toy_init(example_data, tmp_path)
    rc, _, err = call("mert", "-d", 8, "--sctype", sctype, "--scconfig", scconfig, "--ffile", features, "--scfile",
                      scores, "--ifile", init, "-n", 5, "-r", 1, cwd=tmp_path, capfd=capfd)
    assert rc == 0, err
    m = BEST_POINT.search(err)
    point = [float(v) for v in m.group(1).split()]
    start = [float(v) for v in init.read_text().split("\n")[0].split()]
    reported = float(m.group(2))
    again = _corpus_score(features, scores, point, sctype, scconfig)
    assert reported == pytest.approx(again, abs=5e-6)
    assert reported > _corpus_score(features, scores, start, sctype, scconfig) + 0.05
    if sctype == "TER":
        # Moses's score of TER is 1 - TER, the statistics' (edits, average length) sums
        corpus = read_mert_data([str(features)], [str(scores)])
        totals = corpus.corpus_stats(corpus.one_best(np.asarray(point)))
        assert reported == pytest.approx(1 - totals[0] / totals[1], abs=5e-6)
    if sctype == "BLEU,TER":
        # the interpolation is 0.6 BLEU + 0.4 (1 - TER), each from its own columns
        corpus = read_mert_data([str(features)], [str(scores)])
        totals = corpus.corpus_stats(corpus.one_best(np.asarray(point)))
        from mtplug.metrics.bleu import corpus_bleu_from_stats

        bleu = corpus_bleu_from_stats(totals[:9]).score
        assert reported == pytest.approx(0.6 * bleu + 0.4 * (1 - totals[9] / totals[10]), abs=5e-6)


def test_mert_without_sctype_takes_the_files_scorer_and_refuses_another(tmp_path, capfd, toy_nbest, example_data):
    nbest, ref = toy_nbest
    features, scores = extract(tmp_path, capfd, nbest, [ref], "WER", "case:true")
    init = _toy_init(example_data, tmp_path)
    rc, _, err = call("mert", "-d", 8, "--ffile", features, "--scfile", scores, "--ifile", init, "-n", 0,
                      cwd=tmp_path, capfd=capfd)
    assert rc == 0 and "Best point: " in err, err
    # Moses's mert takes weights:... of a single scorer and ignores it; mtplug's MERT refuses it
    for flags, message in [(["--sctype", "BLEU"], "the scores files hold WER statistics, not --sctype BLEU's"),
                           (["--sctype", "WER", "--scconfig", "weights:1+2", "--mtplug-mert"], "has one scorer")]:
        (tmp_path / "weights.txt").unlink(missing_ok=True)
        rc, _, err = call("mert", "-d", 8, *flags, "--ffile", features, "--scfile", scores, "--ifile", init,
                          cwd=tmp_path, capfd=capfd)
        assert rc == 2 and message in err, err
        assert not (tmp_path / "weights.txt").exists()


def test_kbmira_tunes_to_ter_and_refuses_background_flags(tmp_path, capfd, toy_nbest, example_data):
    nbest, ref = toy_nbest
    features, scores = extract(tmp_path, capfd, nbest, [ref], "TER", "case:true")
    dense = _dense_init(tmp_path)
    rc, _, err = call("kbmira", "--sctype", "TER", "--dense-init", dense, "--ffile", features, "--scfile", scores,
                      "-o", "mert.out", "-r", 1, cwd=tmp_path, capfd=capfd)
    assert rc == 0, err
    # the lines say BLEU whatever the scorer, as Moses's kbmira (mert-moses.pl reads "Best BLEU")
    initial = float(re.search(r"Initial BLEU = ([\d.]+)", err).group(1))
    best = float(BEST_BLEU.search(err).group(1))
    assert initial == pytest.approx(_corpus_score(features, scores, [0.3, 0.5, -1, 0.2, 0.2, 0.2, 0.2, 0.2], "TER"),
                                    abs=5e-6)
    assert best > initial + 0.05
    for flag in (["--decay", "0.9"], ["--model-bg"], ["--safe-hope"]):
        rc, _, err = call("kbmira", *flag, "--dense-init", dense, "--ffile", features, "--scfile", scores,
                          "-o", "x.out", cwd=tmp_path, capfd=capfd)
        assert rc == 2 and "applies only with a store of BLEU statistics" in err, (flag, err)
        assert not (tmp_path / "x.out").exists()


def _dense_init(tmp_path: Path) -> Path:
    # the toy run's start weights as mert-moses.pl writes runN.dense (shared/data/moses-toy/run1.dense)
    path = tmp_path / "run1.dense"
    path.write_text("Distortion0= 0.300000\nLM0= 0.500000\nWordPenalty0= -1.000000\nPhrasePenalty0= 0.200000\n"
                    + "TranslationModel0= 0.200000\n" * 4)
    return path


def test_pro_ranks_by_the_files_scorer(tmp_path, capfd, toy_nbest):
    """Moses's pro reads every scores file as BLEU; mtplug's samples pairs by the files'
    scorer: its pro.data is what the sampler makes of Moses's PER sentence scores."""
    from tests.reference.pro_data_writer import pro_data_from_pairs, write_pro_data
    from mtplug.optimizers.pro import sample_pairs

    nbest, ref = toy_nbest
    features, scores = extract(tmp_path, capfd, nbest, [ref], "PER", "case:true")
    bleu_features, bleu_scores = extract(tmp_path, capfd, nbest, [ref], "BLEU", "case:true", "bleu")
    for f, s, out in ((features, scores, "per.pro.data"), (bleu_features, bleu_scores, "bleu.pro.data")):
        rc, _, err = call("pro", "--ffile", f, "--scfile", s, "-o", out, "-r", 1, cwd=tmp_path, capfd=capfd)
        assert rc == 0, err
    corpus = read_mert_data([str(features)], [str(scores)])
    c = corpus.stats.astype(np.float64)     # correct, hypothesis length, reference length
    per = np.where(c[:, 2] > 0, (c[:, 0] - np.maximum(0, c[:, 1] - c[:, 2])) / np.maximum(c[:, 2], 1), 0.0)
    pairs = sample_pairs(per, corpus.sent_offsets, seed=1, gamma=5000, xi=50, beta=0.05)
    write_pro_data(str(tmp_path / "want.pro.data"), pro_data_from_pairs(corpus, pairs.better, pairs.worse))
    got = (tmp_path / "per.pro.data").read_bytes()
    assert got == (tmp_path / "want.pro.data").read_bytes() and len(got) > 0
    assert got != (tmp_path / "bleu.pro.data").read_bytes()


def test_mtplug_optimize_reads_other_scorers_and_reweighs_them(tmp_path, capfd, toy_nbest, example_data):
    """mtplug optimize over a BLEU,TER scores.dat: --metric may weigh its parts otherwise,
    not name other statistics."""
    import json
    import subprocess
    import sys

    nbest, ref = toy_nbest
    features, scores = extract(tmp_path, capfd, nbest, [ref], "BLEU,TER", "case:true")
    base = [sys.executable, "-m", "mtplug", "optimize", "mert", "--ffile", str(features), "--scfile", str(scores),
            "--init", str(example_data / "run1.init.opt"), "--seed", "1", "--restarts", "2"]
    p = subprocess.run([*base, "--metric", "bleu:0.9,moses-ter:0.1", "--out", str(tmp_path / "w.opt")],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    result = json.loads(p.stdout)
    assert result["metric"] == "bleu:0.9,moses-ter:0.1"
    w = [float(v) for v in (tmp_path / "w.opt").read_text().splitlines()[0].split()]     # init.opt: its first line
    # mtplug's score is Moses's interpolated score on the 0-100 scale
    assert result["score"] == pytest.approx(
        100 * _corpus_score(features, scores, w, "BLEU,TER", "weights:0.9+0.1"), abs=1e-7)
    p = subprocess.run([*base, "--metric", "chrf", "--out", str(tmp_path / "x.opt")], capture_output=True, text=True)
    assert p.returncode == 2 and "holds bleu:0.5,moses-ter:0.5 statistics, so --metric chrf cannot take effect" \
        in p.stderr, p.stderr
    assert not (tmp_path / "x.opt").exists()
