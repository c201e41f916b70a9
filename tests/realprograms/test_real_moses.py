"""The real Moses (MTPLUG_MOSES_DIR): its decoder, extractor, mert, kbmira and mert-moses.pl
against mtplug's programs, on a toy phrase-based system made here (toy_systems.py)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from mtplug.corpus import NbestCorpus
from mtplug.formats.references import read_references

ITERATIONS = 3
NBEST = 50


def bleu(hyp: Path, ref: Path) -> float:
    corpus = NbestCorpus.from_plain(str(hyp), read_references([str(ref)]))
    return corpus.bleu_of_rows(corpus.sent_offsets[:-1]).score


def mert_moses(moses_dir, toy, mertdir, workdir: Path, *extra, iterations=ITERATIONS) -> subprocess.CompletedProcess:
    """mert-moses.pl as a user runs it (no phrase-table filtering: the toy table is tiny)."""
    cmd = [str(moses_dir / "scripts" / "training" / "mert-moses.pl"), str(toy.dev_src), str(toy.dev_ref),
           str(moses_dir / "bin" / "moses"), str(toy.config), f"--mertdir={mertdir}", f"--working-dir={workdir}",
           "--no-filter-phrase-table", f"--maximum-iterations={iterations}", "--predictable-seeds",
           f"--nbest={NBEST}", *extra]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    (workdir.parent / f"{workdir.name}.stderr").write_text(p.stderr)
    return p


def decoded_bleus(workdir: Path, ref: Path) -> list[float]:
    runs = sorted(workdir.glob("run*.out"), key=lambda p: int(re.match(r"run(\d+)", p.name).group(1)))
    return [bleu(p, ref) for p in runs if re.fullmatch(r"run\d+\.out", p.name)]


def decoded_ters(workdir: Path, ref: Path) -> list[float]:
    """Moses's TER (mtplug's moses-ter, 0-100) of every decoded iteration's 1-best."""
    from mtplug.metrics import get_metric

    refs = [ref.read_text(encoding="utf-8").splitlines()]
    runs = sorted((p for p in workdir.glob("run*.out") if re.fullmatch(r"run\d+\.out", p.name)),
                  key=lambda p: int(re.match(r"run(\d+)", p.name).group(1)))
    return [get_metric("moses-ter").corpus_score(p.read_text(encoding="utf-8").splitlines(), refs) for p in runs]


def test_extractor_files_are_byte_identical_to_moses(moses_dir, moses_toy, mertdir, tmp_path):
    """The real decoder's n-best list through Moses's extractor and through mtplug's, alone and
    merged with a previous iteration (--prev-ffile/--prev-scfile)."""
    nbest = tmp_path / "run1.best.out"
    subprocess.run([str(moses_dir / "bin" / "moses"), "-f", str(moses_toy.config), "-input-file",
                    str(moses_toy.dev_src), "-n-best-list", str(nbest), str(NBEST), "distinct"],
                   capture_output=True, check=True, timeout=300)
    nbest2 = tmp_path / "run2.best.out"
    subprocess.run([str(moses_dir / "bin" / "moses"), "-f", str(moses_toy.config), "-input-file",
                    str(moses_toy.dev_src), "-n-best-list", str(nbest2), str(NBEST), "distinct",
                    "-weight-overwrite", "LM0= 0.5 WordPenalty0= 0.2"], capture_output=True, check=True, timeout=300)
    for tool, folder in ((moses_dir / "bin" / "extractor", "moses"), (mertdir / "extractor", "mtplug")):
        d = tmp_path / folder
        d.mkdir()
        for n, prev in ((1, []), (2, ["--prev-ffile", str(d / "f1"), "--prev-scfile", str(d / "s1")])):
            subprocess.run([str(tool), "--sctype", "BLEU", "--scconfig", "case:true", "--scfile", str(d / f"s{n}"),
                            "--ffile", str(d / f"f{n}"), "-r", str(moses_toy.dev_ref), "-n",
                            str(nbest if n == 1 else nbest2), *prev], capture_output=True, check=True, timeout=300)
    for name in ("f1", "s1", "f2", "s2"):
        assert (tmp_path / "mtplug" / name).read_bytes() == (tmp_path / "moses" / name).read_bytes(), name


@pytest.mark.parametrize("sctype,scconfig", [("TER", "case:true"), ("PER", "case:false"), ("WER", "case:true"),
                                             ("CDER", "case:true"), ("BLEU,TER", "case:true,weights:0.6+0.4")])
def test_extractor_scores_of_other_scorers_are_byte_identical(moses_dir, moses_toy, mertdir, tmp_path, sctype,
                                                               scconfig):
    """The real decoder's n-best through both extractors with --sctype, and the merge of a second
    iteration (whose duplicate removal compares these statistics)."""
    lists = []
    for n, extra in ((1, []), (2, ["-weight-overwrite", "LM0= 0.5 WordPenalty0= 0.2"])):
        lists.append(tmp_path / f"run{n}.best.out")
        subprocess.run([str(moses_dir / "bin" / "moses"), "-f", str(moses_toy.config), "-input-file",
                        str(moses_toy.dev_src), "-n-best-list", str(lists[-1]), str(NBEST), "distinct", *extra],
                       capture_output=True, check=True, timeout=300)
    for tool, folder in ((moses_dir / "bin" / "extractor", "moses"), (mertdir / "extractor", "mtplug")):
        d = tmp_path / folder
        d.mkdir()
        for n, prev in ((1, []), (2, ["--prev-ffile", str(d / "f1"), "--prev-scfile", str(d / "s1")])):
            subprocess.run([str(tool), "--sctype", sctype, "--scconfig", scconfig, "--scfile", str(d / f"s{n}"),
                            "--ffile", str(d / f"f{n}"), "-r", str(moses_toy.dev_ref), "-n", str(lists[n - 1]),
                            *prev], capture_output=True, check=True, timeout=300)
    for name in ("f1", "s1", "f2", "s2"):
        assert (tmp_path / "mtplug" / name).read_bytes() == (tmp_path / "moses" / name).read_bytes(), name


def test_mert_reads_moses_ter_files_as_moses_does(moses_dir, moses_toy, mertdir, tmp_path):
    """Moses's extractor --sctype TER files tuned by Moses's mert and by mtplug's (10 random
    starts each): mtplug's best point has at least Moses's score (1 − TER) on the files."""
    nbest = tmp_path / "run1.best.out"
    subprocess.run([str(moses_dir / "bin" / "moses"), "-f", str(moses_toy.config), "-input-file",
                    str(moses_toy.dev_src), "-n-best-list", str(nbest), str(NBEST), "distinct"],
                   capture_output=True, check=True, timeout=300)
    subprocess.run([str(moses_dir / "bin" / "extractor"), "--sctype", "TER", "--scconfig", "case:true", "--scfile",
                    str(tmp_path / "s"), "--ffile", str(tmp_path / "f"), "-r", str(moses_toy.dev_ref), "-n",
                    str(nbest)], capture_output=True, check=True, timeout=300)
    dims = len((tmp_path / "f").read_text().split("\n", 1)[0].split()) - 4
    init = tmp_path / "init.opt"
    init.write_text(" ".join(["0.1"] * dims) + "\n" + " ".join(["-1"] * dims) + "\n" + " ".join(["1"] * dims) + "\n")
    scores = {}
    for tool, folder in ((moses_dir / "bin" / "mert", "moses"), (mertdir / "mert", "mtplug")):
        d = tmp_path / folder
        d.mkdir()
        p = subprocess.run([str(tool), "-d", str(dims), "--sctype", "TER", "--scconfig", "case:true", "--ffile",
                            str(tmp_path / "f"), "--scfile", str(tmp_path / "s"), "--ifile", str(init), "-n", "10",
                            "-r", "1"], cwd=d, capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr[-2000:]
        scores[folder] = float(re.search(r"Best point:.*=> ([\d.]+)", p.stderr).group(1))
    assert 0 < scores["moses"] <= 1 and scores["mtplug"] >= scores["moses"] - 1e-4, scores


def test_evaluator_agrees_with_moses(moses_dir, moses_toy, mertdir, tmp_path):
    hyp = tmp_path / "hyp"
    with open(hyp, "w") as out:
        subprocess.run([str(moses_dir / "bin" / "moses"), "-f", str(moses_toy.config), "-input-file",
                        str(moses_toy.dev_src)], stdout=out, stderr=subprocess.DEVNULL, check=True, timeout=300)
    scorers = ["--sctype", "BLEU", "--sctype", "TER", "--sctype", "PER", "--sctype", "WER", "--sctype", "CDER",
               "--sctype", "BLEU,TER", "--scconfig", "weights:0.6+0.4"]
    for flags in (["--sctype", "BLEU"], ["--sctype", "TER"], scorers):
        outs = [subprocess.run([str(tool), *flags, "--reference", str(moses_toy.dev_ref), "--candidate",
                                str(hyp)], capture_output=True, text=True, check=True).stdout
                for tool in (moses_dir / "bin" / "evaluator", mertdir / "evaluator")]
        assert outs[0] == outs[1], flags


MODES = {
    "mert": [],
    "batch-mira": ["--batch-mira"],
    "pairwise-ranked": ["--pairwise-ranked"],
    # mtplug's algorithms through the flags mert-moses.pl passes on; mert-moses.pl glues
    # --mertmertargs to its own --sctype (the programs split them again)
    "mert-expbleu": ["--mertmertargs=--directions expbleu"],
    "mert-apro": ["--mertmertargs=--algorithm apro"],
    "mert-l2": ["--mertmertargs=--reg l2 --reg-strength 0.01"],
    "kbmira-rampion": ["--batch-mira", "--batch-mira-args=--algorithm rampion"],
    # other scorers (issue 20): the command line, and through kbmira and PRO
    "mert-TER": ["--mertargs=--sctype TER "],
    "mert-BLEU,TER": ["--mertargs=--sctype BLEU,TER --scconfig weights:0.6+0.4"],
    "batch-mira-TER": ["--batch-mira", "--batch-mira-args=--sctype TER"],
    "pairwise-ranked-TER": ["--pairwise-ranked", "--mertargs=--sctype TER"],
}


@pytest.mark.parametrize("mode", list(MODES))
def test_mert_moses_pl_with_mtplugs_mertdir(moses_dir, moses_toy, mertdir, tmp_path, mode):
    """Every mode of the real script runs to the end with mtplug's programs and tunes: some
    iteration decodes clearly better than the start. (PRO's first step, the raw classifier
    weights that mert-moses.pl takes from megam, decodes badly on this toy system; it
    recovers at the next iteration, so PRO gets one iteration more.)"""
    wd = tmp_path / "work"
    p = mert_moses(moses_dir, moses_toy, mertdir, wd, *MODES[mode],
                   iterations=ITERATIONS + mode.startswith("pairwise-ranked"))
    assert p.returncode == 0, p.stderr[-3000:]
    bleus = decoded_bleus(wd, moses_toy.dev_ref)
    assert len(bleus) >= 2, p.stderr[-3000:]
    if "TER" in mode:
        ter = decoded_ters(wd, moses_toy.dev_ref)
        assert min(ter[1:]) < ter[0] - 0.02, ter
    else:
        assert max(bleus[1:]) > bleus[0] + 0.05, bleus
    final = (wd / "moses.ini").read_text()
    assert re.search(r"^LM0= -?[0-9.e-]+$", final, re.M), final
    # the final config (the last optimizer's weights, which mert-moses.pl does not decode) loads and decodes
    subprocess.run([str(moses_dir / "bin" / "moses"), "-f", str(wd / "moses.ini"), "-input-file",
                    str(moses_toy.dev_src)], capture_output=True, check=True, timeout=300)


@pytest.mark.parametrize("mode", ["mert", "batch-mira", "mert-TER"])
def test_mert_moses_pl_with_moses_mertdir_runs_the_same_script(moses_dir, moses_toy, mertdir, tmp_path, mode):
    """The same runs with Moses's own programs (the reference the comparison in
    benchmarks/real_moses.py measures against), and both tune the toy system (tuned to
    TER: both lower the decoded 1-best's TER)."""
    results = {}
    score = decoded_ters if "TER" in mode else decoded_bleus
    for name, directory in (("moses", moses_dir / "bin"), ("mtplug", mertdir)):
        wd = tmp_path / name
        p = mert_moses(moses_dir, moses_toy, directory, wd, *MODES[mode])
        assert p.returncode == 0, p.stderr[-3000:]
        results[name] = score(wd, moses_toy.dev_ref)
    assert results["moses"][0] == results["mtplug"][0]           # the same first decoding
    for name, values in results.items():
        if "TER" in mode:
            assert min(values) < values[0] - 2, (name, values)
        else:
            assert max(values) > values[0] + 0.05, (name, values)


def iteration_weights(workdir: Path) -> list[str]:
    """The weights mert-moses.pl decoded with at each iteration, in order: the [weight]
    section of every run{N}.moses.ini, then of the final moses.ini."""
    def weights(ini: Path) -> str:
        text = ini.read_text()
        return text[text.index("[weight]"):]

    runs = sorted((p for p in workdir.glob("run*.moses.ini") if re.fullmatch(r"run\d+\.moses\.ini", p.name)),
                  key=lambda p: int(re.match(r"run(\d+)", p.name).group(1)))
    return [weights(p) for p in runs] + [weights(workdir / "moses.ini")]


@pytest.mark.parametrize("mode", ["mert", "batch-mira", "pairwise-ranked"])
def test_mert_moses_pl_gives_moses_weights_at_every_iteration(moses_dir, moses_toy, mertdir, tmp_path, mode):
    """Issue 50: with --predictable-seeds, mert-moses.pl through mtplug's mertdir decodes
    with the weights it decodes with through Moses's own programs, iteration by iteration,
    and ends with the same moses.ini weights (the programs write Moses's bytes). PRO's
    classifier is MegaM, which no Moses build holds (mert-moses.pl downloads it): both sides
    run mtplug's megam_i686.opt, so pairwise-ranked compares Moses's extractor and pro
    with mtplug's under one classifier."""
    moses_side = tmp_path / "moses-mertdir"
    moses_side.mkdir()
    for program in (moses_dir / "bin").iterdir():
        (moses_side / program.name).symlink_to(program)
    megam = moses_side / "megam_i686.opt"
    if not megam.exists():
        megam.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m mtplug.integrations.moses megam_i686.opt "$@"\n')
        megam.chmod(0o755)
    found = {}
    for name, directory in (("moses", moses_side), ("mtplug", mertdir)):
        wd = tmp_path / name
        p = mert_moses(moses_dir, moses_toy, directory, wd, *MODES[mode])
        assert p.returncode == 0, p.stderr[-3000:]
        found[name] = iteration_weights(wd)
    assert len(found["moses"]) >= 2
    assert found["mtplug"] == found["moses"]


@pytest.mark.parametrize("optimizer, extra", [("mert", ["--restarts", "5"]), ("kbmira", []), ("apro", [])])
def test_mtplug_tune_with_the_real_decoder(moses_dir, moses_toy, tmp_path, optimizer, extra):
    """mtplug tune --decoder moses with the real decoder: tunes, and --jobs does not change the result."""
    finals = []
    for jobs in ("1", "2"):
        wd = tmp_path / f"jobs{jobs}"
        p = subprocess.run([sys.executable, "-m", "mtplug", "tune", "--decoder", "moses", "--decoder-bin",
                            str(moses_dir / "bin" / "moses"), "--decoder-config", str(moses_toy.config), "--input",
                            str(moses_toy.dev_src), "--ref", str(moses_toy.dev_ref), "--optimizer", optimizer,
                            "--iterations", "3", "--nbest-size", str(NBEST), "--jobs", jobs, "--workdir", str(wd),
                            "--seed", "1", *extra], capture_output=True, text=True, timeout=900)
        assert p.returncode == 0, p.stderr[-3000:]
        finals.append((wd / "final").read_bytes())
        history = [h["bleu"] for h in __import__("json").loads(p.stdout)["history"]]
        assert max(history) > history[0] + 5, history    # 0-100
    assert finals[0] == finals[1]
