"""The Moses drop-in programs on Moses's own toy run (shared/data/moses-toy), against the
files and numbers Moses's programs produced there (its README), and the regexes
mert-moses.pl reads their output with (shared/docs/moses.md)."""

from __future__ import annotations

import gzip
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from mtplug.integrations.moses import PROGRAMS
from mtplug.integrations.moses.__main__ import main as run_program

# shared/data/moses-toy/README.md (Moses HEAD 34452895)
TOY_START_BLEU = 0.265757
MOSES_MERT_BLEU = 0.481178     # mert -d 8 ... -n 20 -r 1
MOSES_KBMIRA_BLEU = 0.377161   # kbmira --dense-init run1.dense ... -r 1, re-scored on all hypotheses

# mert-moses.pl's regexes (scripts/training/mert-moses.pl, get_weights_from_mert)
BEST_POINT = re.compile(r"Best point:\s*([\s\d\.\-e]+?)\s*=> ([\-\d\.]+)")
DENSE_LINE = re.compile(r"^F(\d+) ([\-\.\de]+)")
SPARSE_LINE = re.compile(r"^(.+_.+) ([\-\.\de]+)")
BEST_BLEU = re.compile(r"Best BLEU = ([\-\d\.]+)")


@pytest.fixture
def toy(shared_data):
    return shared_data / "moses-toy"


def call(prog, *argv, cwd, capfd):
    """Run a program in-process in ``cwd``: (exit status, stdout, stderr)."""
    old = os.getcwd()
    os.chdir(cwd)
    try:
        try:
            rc = run_program([prog, *map(str, argv)])
        except SystemExit as stop:
            rc = stop.code
    finally:
        os.chdir(old)
    out, err = capfd.readouterr()
    return rc, out, err


def toy_corpus(toy):
    from mtplug.formats.mert_data import read_mert_data

    return read_mert_data([str(toy / "run1.features.dat")], [str(toy / "run1.scores.dat")])


def mira_weights(text, n_dense):
    """mert-moses.pl's reading of kbmira/megam output: (dense list, sparse dict)."""
    dense, sparse = [0.0] * n_dense, {}
    for line in text.splitlines(keepends=True):
        if m := DENSE_LINE.match(line):
            dense[int(m.group(1))] = float(m.group(2))
        elif m := SPARSE_LINE.match(line):
            sparse[m.group(1)] = float(m.group(2))
    return dense, sparse


# ---------------------------------------------------------------------------- mertdir
def test_mertdir_holds_every_program_and_runs_them(tmp_path):
    out = subprocess.run([sys.executable, "-m", "mtplug", "mertdir"], capture_output=True, text=True, check=True)
    d = out.stdout.strip()
    assert os.path.isabs(d)
    scripts = set()
    for name in PROGRAMS:
        path = os.path.join(d, name)
        assert os.access(path, os.X_OK), name
        scripts.add(open(path, "rb").read())
    assert len(scripts) == 1, "every program file is a copy of the one script"
    # mert-moses.pl runs them by path, from another directory, without our environment
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "MTPLUG_PYTHON")}
    env["PATH"] = "/usr/bin:/bin"
    for name in PROGRAMS:
        res = subprocess.run([os.path.join(d, name), "--help"], capture_output=True, text=True, cwd=tmp_path,
                             env=env)
        assert res.returncode == 0, (name, res.stderr)
        assert "usage:" in res.stdout


# ---------------------------------------------------------------------------- extractor
def test_extractor_is_byte_identical_to_moses(toy, tmp_path, capfd):
    rc, _, err = call("extractor", "--sctype", "BLEU", "--scconfig", "case:true", "--scfile", "run1.scores.dat",
                      "--ffile", "run1.features.dat", "-r", toy / "ref.0", "-n", toy / "run1.best100.out.gz",
                      cwd=tmp_path, capfd=capfd)
    assert rc == 0, err
    assert (tmp_path / "run1.features.dat").read_bytes() == (toy / "run1.features.dat").read_bytes()
    assert (tmp_path / "run1.scores.dat").read_bytes() == (toy / "run1.scores.dat").read_bytes()


def test_extractor_prev_files_and_binary(toy, tmp_path, capfd):
    args = ["-r", toy / "ref.0", "-n", toy / "run1.best100.out.gz"]
    rc, _, err = call("extractor", *args, "--prev-ffile", toy / "run1.features.dat", "--prev-scfile",
                      toy / "run1.scores.dat", "--ffile", "f.dat", "--scfile", "s.dat", cwd=tmp_path, capfd=capfd)
    assert rc == 0, err    # the same n-best again: every hypothesis is a duplicate
    assert (tmp_path / "f.dat").read_bytes() == (toy / "run1.features.dat").read_bytes()
    rc, _, err = call("extractor", *args, "--binary", "--ffile", "f.bin", "--scfile", "s.bin", cwd=tmp_path,
                      capfd=capfd)
    assert rc == 0, err
    assert (tmp_path / "f.bin").read_bytes().startswith(b"FEATURES_BIN_BEGIN_0 0 100 8 ")
    # mert reads the binary files to the same result
    points = []
    for f, s in (("f.bin", "s.bin"), (toy / "run1.features.dat", toy / "run1.scores.dat")):
        rc, _, err = call("mert", "-d", 8, "--ffile", f, "--scfile", s, "--ifile", toy / "run1.init.opt",
                          "-n", 2, "-r", 5, cwd=tmp_path, capfd=capfd)
        assert rc == 0, err
        points.append([float(x) for x in BEST_POINT.search(err).group(1).split()])
    # binary keeps float32 values, text their six digits: the same optimum up to that rounding
    assert points[0] == pytest.approx(points[1], rel=1e-4, abs=1e-6)


def test_extractor_bad_input_writes_nothing(toy, tmp_path, capfd, write):
    ref = write("short.ref", "only one line\n")
    rc, _, err = call("extractor", "-r", ref, "-n", toy / "run1.best100.out.gz", "--ffile", "f.dat", "--scfile",
                      "s.dat", cwd=tmp_path, capfd=capfd)
    assert rc != 0 and "run1.best100.out.gz:101: sentence id 1 has no reference" in err
    assert not (tmp_path / "f.dat").exists() and not (tmp_path / "s.dat").exists()
    for bad in (["--sctype", "METEOR"], ["--sctype", "BLEU,FOO"], ["--scconfig", "case:maybe"], ["--scconfig", "weights:1+2"], ["--factors", "0|1"], ["--no-such-flag"]):
        rc, _, err = call("extractor", *bad, "-r", toy / "ref.0", "-n", toy / "run1.best100.out.gz",
                          cwd=tmp_path, capfd=capfd)
        assert rc != 0, bad
        assert bad[0].lstrip("-").split("-")[0] in err or "unrecognized" in err


# ---------------------------------------------------------------------------- mert
def mert(toy, tmp_path, capfd, *extra):
    rc, out, err = call("mert", "-d", 8, "--sctype", "BLEU", "--scconfig", "case:true", "--ffile",
                        toy / "run1.features.dat", "--scfile", toy / "run1.scores.dat", "--ifile",
                        toy / "run1.init.opt", *extra, cwd=tmp_path, capfd=capfd)
    assert rc == 0, err
    m = BEST_POINT.search(err)
    assert m, err
    weights = [float(x) for x in m.group(1).split()]
    return weights, float(m.group(2)), (tmp_path / "weights.txt").read_text()


def test_mert_reaches_moses_bleu_and_writes_what_mert_moses_reads(toy, tmp_path, capfd):
    weights, bleu, text = mert(toy, tmp_path, capfd, "-n", 20, "-r", 1)
    assert len(weights) == 8
    assert bleu >= MOSES_MERT_BLEU
    assert text.endswith(" \n") and [float(x) for x in text.split()] == weights
    assert sum(abs(w) for w in weights) == pytest.approx(1.0, abs=1e-5)     # L1-normalised, as Moses
    # the printed BLEU is the BLEU of the printed point
    assert toy_corpus(toy).bleu_of(np.array(weights)).score == pytest.approx(bleu, abs=2e-6)
    # same input and seed: the same bytes
    assert mert(toy, tmp_path, capfd, "-n", 20, "-r", 1)[2] == text


@pytest.mark.parametrize("extra", [["--directions", "expbleu"], ["--reg", "l2", "--reg-strength", "0.01"],
                                   ["-t", "random-direction", "-m", "5"], ["--algorithm", "apro"],
                                   ["--algorithm", "rampion"], ["--algorithm", "kbmira", "--passes", "5"]])
def test_mert_extras_reach_other_optimizers(toy, tmp_path, capfd, extra):
    weights, bleu, _ = mert(toy, tmp_path, capfd, "-n", 2, "-r", 3, *extra)
    assert len(weights) == 8 and bleu > TOY_START_BLEU


def test_mert_activated_features_and_several_start_files(toy, tmp_path, capfd, write):
    start = [float(x) for x in (toy / "run1.init.opt").read_text().splitlines()[0].split()]
    weights, _, _ = mert(toy, tmp_path, capfd, "-n", 2, "-r", 1, "-o", "LM0_0,WordPenalty0_0")
    # Moses does not normalise when only some features are optimised: the others keep their start
    assert [w for i, w in enumerate(weights) if i not in (1, 2)] == pytest.approx(
        [s for i, s in enumerate(start) if i not in (1, 2)], rel=1e-5)
    second = write("prev.init.opt", " ".join(["0.1"] * 8) + "\n")
    _, bleu_two, _ = mert(toy, tmp_path, capfd, "-n", 0, "--ifile", f"{toy / 'run1.init.opt'},{second}")
    _, bleu_one, _ = mert(toy, tmp_path, capfd, "-n", 0)
    assert bleu_two >= bleu_one


def test_mert_merges_sparse_features_with_sparse_weights(tmp_path, capfd, write):
    # two sentences, two hypotheses each; only the sparse feature tells the better one
    nbest = write("n.best", "".join(
        f"{s} ||| {h} ||| LM0= {lm} WT_a~b= {sp} ||| 0\n"
        for s, h, lm, sp in [(0, "a b c d e", -1, 0), (0, "v w x y z", -2, 1), (1, "d e f g h", -1, 0),
                             (1, "q r s t u", -2, 1)]))
    ref = write("ref", "v w x y z\nq r s t u\n")
    rc, _, err = call("extractor", "-r", ref, "-n", nbest, "--ffile", "f.dat", "--scfile", "s.dat",
                      cwd=tmp_path, capfd=capfd)
    assert rc == 0, err
    write("sw", "WT_a~b 1\n")
    write("init.opt", "1 1\n0 0\n1 1\n")
    rc, _, err = call("mert", "-d", 1, "--ffile", "f.dat", "--scfile", "s.dat", "--ifile", "init.opt",
                      "--sparse-weights", "sw", "-n", 0, cwd=tmp_path, capfd=capfd)
    assert rc == 0, err
    weights = [float(x) for x in BEST_POINT.search(err).group(1).split()]
    assert len(weights) == 2 and float(BEST_POINT.search(err).group(2)) == 1.0
    assert weights[1] > 0       # the merged sparse column decides


def test_mert_errors_name_the_problem(toy, tmp_path, capfd, write):
    base = ["--ffile", toy / "run1.features.dat", "--scfile", toy / "run1.scores.dat"]
    cases = [
        (["-d", 9, *base, "--ifile", toy / "run1.init.opt"], "-d 9"),
        # Moses reads init.opt as one stream of numbers: 8 start weights fill lines 1-3
        (["-d", 8, *base, "--ifile", write("short.opt", "1 2 3\n0 0 0\n1 1 1\n")], "Too few minimum weights"),
        (["-d", 8, "--ffile", toy / "run1.features.dat", "--ifile", toy / "run1.init.opt"], "statscore.data: no such file"),
        (["-d", 8, *base, "--ifile", toy / "run1.init.opt", "--shard-size", 0.5], "without shard-count"),
        (["-d", 8, *base, "--ifile", toy / "run1.init.opt", "--sctype", "TER"], "BLEU"),
        (["-d", 8, *base, "--ifile", toy / "run1.init.opt", "--frobnicate"], "unrecognized"),
        ([*base, "--ifile", toy / "run1.init.opt"], "--pdim"),
    ]
    for argv, expected in cases:
        rc, _, err = call("mert", *argv, cwd=tmp_path, capfd=capfd)
        assert rc != 0 and expected in err, (argv, err)
        assert not (tmp_path / "weights.txt").exists()
    rc, _, err = call("mert", "-d", 8, *base, "--ifile", toy / "run1.init.opt", "-v", 2, "-n", 0, cwd=tmp_path,
                      capfd=capfd)
    assert rc == 0 and "warning: -v ignored" in err


# ---------------------------------------------------------------------------- kbmira
def test_kbmira_is_moses_kbmira_on_the_toy(toy, tmp_path, capfd):
    """Moses's numbers for this call (tests/data README: Moses 34452895, `-r 1`): its Best
    BLEU over the 16 hypotheses per sentence its duplicate check keeps, and the weights'
    BLEU over all hypotheses."""
    rc, _, err = call("kbmira", "--dense-init", toy / "run1.dense", "--ffile", toy / "run1.features.dat",
                      "--scfile", toy / "run1.scores.dat", "-o", "mert.out", "-r", 1, cwd=tmp_path, capfd=capfd)
    assert rc == 0, err
    dense, sparse = mira_weights((tmp_path / "mert.out").read_text(), 8)
    assert not sparse
    assert "Best BLEU = 0.385089" in err.splitlines()[-1]
    w = np.array(dense) / np.abs(dense).sum()
    assert toy_corpus(toy).bleu_of(w).score == pytest.approx(MOSES_KBMIRA_BLEU, abs=2e-6)
    assert err.startswith("kbmira with c=0.01 decay=0.999 no_shuffle=0\nInitialising random seed to 1\n")


def test_kbmira_keep_all_hypotheses_parses_and_beats_moses(toy, tmp_path, capfd):
    rc, _, err = call("kbmira", "--keep-all-hypotheses", "--dense-init", toy / "run1.dense", "--ffile",
                      toy / "run1.features.dat", "--scfile", toy / "run1.scores.dat", "-o", "mert.out", "-r", 1,
                      cwd=tmp_path, capfd=capfd)
    assert rc == 0, err
    text = (tmp_path / "mert.out").read_text()
    dense, sparse = mira_weights(text, 8)
    assert len(text.splitlines()) == 8 and not sparse
    reported = float(BEST_BLEU.search(err).group(1))
    w = np.array(dense) / np.abs(dense).sum()     # what mert-moses.pl does with them
    bleu = toy_corpus(toy).bleu_of(w).score
    assert bleu == pytest.approx(reported, abs=2e-6)
    assert bleu > MOSES_KBMIRA_BLEU
    assert "Initial BLEU = 0.265757" in err
    assert len(re.findall(r"^\d+/60 updates, avg loss = \S+, BLEU = \S+$", err, re.M)) == 60


def test_kbmira_start_files_and_errors(toy, tmp_path, capfd, write):
    base = ["--ffile", toy / "run1.features.dat", "--scfile", toy / "run1.scores.dat", "-o", "mert.out", "-J", 3]
    # Moses's older call passes init.opt as --dense-init: its first line
    rc, _, err = call("kbmira", "--dense-init", toy / "run1.init.opt", *base, cwd=tmp_path, capfd=capfd)
    assert rc == 0, err
    os.unlink(tmp_path / "mert.out")
    dense = (toy / "run1.dense").read_text().splitlines()
    # Moses runs on with 5 of 8 dense weights (the rest become sparse weights named by
    # shifted ids: its output, kept); where it would read past its names, an error
    short = write("short.dense", "\n".join(dense[:5]) + "\n")
    rc, _, err = call("kbmira", "--dense-init", short, *base, "--sparse-init", write("s.w", "a_b 1\nc_d 2\nx_y 3\n"),
                      cwd=tmp_path, capfd=capfd)
    assert rc == 0, err
    assert [x.split()[0] for x in (tmp_path / "mert.out").read_text().splitlines()][:5] == ["F0", "F1", "F2", "F3",
                                                                                            "F4"]
    os.unlink(tmp_path / "mert.out")
    cases = [([], "--dense-init"), (["--dense-init", write("short.opt", "1 2\n")], "no feature name"),
             (["--dense-init", toy / "run1.dense", "--hgdir", "hg"], "--hgdir"),
             (["--dense-init", toy / "run1.dense", "--frobnicate"], "unrecognized")]
    for argv, expected in cases:
        rc, _, err = call("kbmira", *argv, *base, cwd=tmp_path, capfd=capfd)
        assert rc != 0 and expected in err, (argv, err)
        assert not (tmp_path / "mert.out").exists()
    # sparse start weights of features absent from the lists are kept, as in Moses
    sw = write("run1.sparse-weights", "WT_unseen~x 0.5\n")
    rc, _, err = call("kbmira", "--dense-init", toy / "run1.dense", "--sparse-init", sw, *base, cwd=tmp_path,
                      capfd=capfd)
    assert rc == 0, err
    # Moses's averaging: the totals start at the start weights, so an untouched weight w
    # averages to w (N + 1) / N after N updates (N: the updates up to the best pass)
    steps = np.cumsum([int(x) for x in re.findall(r"^(\d+)/60 updates", err, re.MULTILINE)])
    best = int(np.argmax([float(x) for x in re.findall(r", BLEU = (\S+)$", err, re.MULTILINE)]))
    value = mira_weights((tmp_path / "mert.out").read_text(), 8)[1]["WT_unseen~x"]
    assert value == pytest.approx(0.5 * (steps[best] + 1) / steps[best], rel=1e-5)


def test_kbmira_algorithm_extra_and_determinism(toy, tmp_path, capfd):
    outs = []
    for _ in range(2):
        rc, _, err = call("kbmira", "--algorithm", "rampion", "--dense-init", toy / "run1.dense", "--ffile",
                          toy / "run1.features.dat", "--scfile", toy / "run1.scores.dat", "-o", "mert.out",
                          "-r", 4, cwd=tmp_path, capfd=capfd)
        assert rc == 0, err
        outs.append((tmp_path / "mert.out").read_bytes())
        assert BEST_BLEU.search(err)
    assert outs[0] == outs[1]
    assert len(mira_weights(outs[0].decode(), 8)[0]) == 8


# ---------------------------------------------------------------------------- pro + megam
def test_pro_and_megam_as_mert_moses_runs_them(toy, tmp_path, capfd):
    argv = ["-r", 1, "--ffile", toy / "run1.features.dat", "--scfile", toy / "run1.scores.dat", "-o", "run1.pro.data"]
    rc, _, err = call("pro", *argv, cwd=tmp_path, capfd=capfd)
    assert rc == 0, err
    data = (tmp_path / "run1.pro.data").read_bytes()
    lines = data.decode().splitlines()
    assert len(lines) == 6000     # Moses: 6,000 pair lines on this set (README)
    assert all(re.fullmatch(r"[01]( F\d \S+)*", line) for line in lines)
    assert lines[0].startswith("1") and lines[1].startswith("0")
    call("pro", *argv, cwd=tmp_path, capfd=capfd)
    assert (tmp_path / "run1.pro.data").read_bytes() == data        # seeded
    rc, out, err = call("megam_i686.opt", "-fvals", "-maxi", 30, "-nobias", "binary", "run1.pro.data",
                        cwd=tmp_path, capfd=capfd)
    assert rc == 0, err
    dense, sparse = mira_weights(out, 8)
    assert len(out.splitlines()) == 8 and not sparse
    w = np.array(dense) / np.abs(dense).sum()
    assert toy_corpus(toy).bleu_of(w).score > TOY_START_BLEU + 0.05
    rc, out, err = call("megam_i686.opt", "-fvals", "binary", "run1.pro.data", cwd=tmp_path, capfd=capfd)
    assert rc == 0 and out.startswith("**BIAS** ")
    rc, _, err = call("megam_i686.opt", "-fvals", "multiclass", "run1.pro.data", cwd=tmp_path, capfd=capfd)
    assert rc != 0 and "multiclass" in err


def test_pro_writes_sparse_differences(tmp_path, capfd, write):
    nbest = write("n.best", "".join(
        f"0 ||| {h} ||| LM0= {lm} WT_{h[0]}~x= 1 ||| 0\n" for h, lm in [("a b c d", -1), ("a b x y", -2), ("q r s t", -3)]))
    ref = write("ref", "a b c d\n")
    assert call("extractor", "-r", ref, "-n", nbest, "--ffile", "f.dat", "--scfile", "s.dat", cwd=tmp_path,
                capfd=capfd)[0] == 0
    rc, out, err = call("pro", "--ffile", "f.dat", "--scfile", "s.dat", "-r", 2, cwd=tmp_path, capfd=capfd)
    assert rc == 0, err
    lines = out.splitlines(keepends=True)
    assert lines and all(line.endswith(" \n") for line in lines)       # Moses's sparse part ends with a space
    assert any("WT_a~x" in line and "WT_q~x" in line for line in lines)


# ---------------------------------------------------------------------------- evaluator, sentence-bleu
@pytest.fixture
def first_best(toy, tmp_path):
    """The first hypothesis of every sentence of the toy n-best (Moses's 1-best at the start weights)."""
    seen, lines = set(), []
    with gzip.open(toy / "run1.best100.out.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            sid, hyp = line.split(" ||| ")[:2]
            if sid not in seen:
                seen.add(sid)
                lines.append(hyp.strip() + "\n")
    path = tmp_path / "run1.out"
    path.write_text("".join(lines))
    return path


def test_evaluator_prints_moses_lines(toy, tmp_path, capfd, first_best):
    rc, out, err = call("evaluator", "--reference", toy / "ref.0", "-s", "BLEU", "--candidate", first_best,
                        cwd=tmp_path, capfd=capfd)
    assert rc == 0 and out == "0.2658\n", err          # Moses: 0.265757
    ref = toy / "ref.0"
    rc, out, _ = call("evaluator", "-R", ref, "-C", f"{first_best},{ref}", "-s", "BLEU", "-s", "BLEU", "-c",
                      "case:false", cwd=tmp_path, capfd=capfd)
    assert out.splitlines() == [f"{first_best}\tBLEU\t0.2658", f"{first_best}\tBLEU\t0.2658",
                                f"{ref}\tBLEU\t1.0000", f"{ref}\tBLEU\t1.0000"]
    rc, out, _ = call("evaluator", "-R", ref, "-C", first_best, "-b", 200, "-r", 3, cwd=tmp_path, capfd=capfd)
    mean, lo, hi = re.fullmatch(r"(\d\.\d{4})\t\[(\d\.\d{4}),(\d\.\d{4})\]\n", out).groups()
    assert float(lo) < 0.2658 < float(hi) and float(lo) <= float(mean) <= float(hi)
    assert call("evaluator", "-R", ref, "-C", first_best, "-b", 200, "-r", 3, cwd=tmp_path, capfd=capfd)[1] == out


def test_sentence_bleu_is_moses_smoothed_bleu(toy, tmp_path, capfd, first_best, monkeypatch):
    import io

    from mtplug.corpus import NbestCorpus
    from mtplug.formats.references import read_references
    from mtplug.metrics.bleu import sentence_bleu

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(first_best.read_bytes())))
    rc, out, err = call("sentence-bleu", toy / "ref.0", cwd=tmp_path, capfd=capfd)
    assert rc == 0, err
    corpus = NbestCorpus.from_plain(str(first_best), read_references([str(toy / "ref.0")]))
    expected = sentence_bleu(corpus.stats, "moses-sentence-bleu")
    assert np.allclose([float(x) for x in out.split()], expected, rtol=1e-5, atol=1e-7)


def test_mertdir_copies_the_programs_when_the_install_is_read_only(tmp_path, monkeypatch):
    import shutil

    from mtplug.integrations.moses import mertdir as md

    installed = tmp_path / "site" / "moses_integration"
    shutil.copytree(md.installed_dir(), installed, ignore=shutil.ignore_patterns(".python", "__pycache__"))
    record = md._record

    def read_only(directory, python):     # CI may run as root, who can write anywhere: refuse here
        if directory == str(installed):
            raise PermissionError(13, "Permission denied", directory)
        record(directory, python)

    monkeypatch.setattr(md, "_record", read_only)
    monkeypatch.setattr(md, "installed_dir", lambda: str(installed))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    d = md.mertdir("/opt/python/bin/python3")
    assert d.startswith(str(tmp_path / "cache"))
    assert open(os.path.join(d, ".python")).read() == "/opt/python/bin/python3\n"
    assert all(os.access(os.path.join(d, n), os.X_OK) for n in PROGRAMS)
    assert md.mertdir("/opt/python/bin/python3") == d
    assert not (installed / ".python").exists()
