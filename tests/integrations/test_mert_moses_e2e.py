"""End to end: mert-moses.pl's main loop (played by moses_driver.py) against ``python -m mtplug mertdir``.

The decoder is the stand-in (standin_decoder.py): it re-ranks the fixed pool of the
real Moses n-best list in shared/data/moses-toy and writes the top 20 per sentence,
so later iterations bring new hypotheses. Every mode runs 3 iterations. A missing
mertdir or program FAILS these tests (it is never a skip).
"""

from __future__ import annotations

import gzip
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from .moses_driver import (RE_BEST_BLEU, RE_BEST_POINT, RE_DENSE, RE_SPARSE, STANDIN_DECODER, TOY, MosesDriverError,
                           check_mertdir, find_mertdir, perl_num, read_dense_file, run_mert_moses)

REPO = Path(__file__).resolve().parents[2]
REF = TOY / "ref.0"
# the stand-in decoder's pool and the start weights are shared/data/moses-toy's
pytestmark = pytest.mark.usefixtures("shared_data")
START_BLEU = 0.265757      # shared/data/moses-toy/README.md: Moses's BLEU of the pool's 1-best at the start
DIM = 8
NBEST = 20
EVAL_TOL = 5e-5 + 1e-9   # evaluator output is rounded to 4 decimals (Moses: fixed, precision 4)


# ------------------------------------------------------------------ helpers
def mtplug_bleu(hyp_path) -> float:
    """Corpus BLEU (Moses's definition, case-sensitive) of a plain translation file, by mtplug."""
    from mtplug.corpus import NbestCorpus
    from mtplug.formats.references import read_references

    corpus = NbestCorpus.from_plain(str(hyp_path), read_references([str(REF)]))
    return corpus.bleu_of_rows(np.arange(corpus.n_sentences, dtype=np.int64)).score


def decoder(args, cwd, env=None):
    p = subprocess.run([sys.executable, str(STANDIN_DECODER), "-standin-by-position", *args], cwd=cwd,
                       capture_output=True, text=True,
                       env=env, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout


def start_weight_string() -> str:
    return " ".join(f"{name}= {' '.join(vals)}" for name, vals in read_dense_file(TOY / "run1.dense"))


@pytest.fixture(scope="module")
def mertdir() -> Path:
    """``python -m mtplug mertdir`` with every program present; anything else fails the test."""
    try:
        path = find_mertdir(REPO)
        check_mertdir(path)
    except MosesDriverError as exc:
        pytest.fail(f"no usable mertdir: {exc}")
    p = subprocess.run([str(path / "extractor"), "--help"], capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        pytest.fail(f"{path / 'extractor'} --help exited {p.returncode}:\n{p.stderr[-2000:]}")
    return path


# ------------------------------------------------------------------ the stand-in decoder alone
def test_standin_decoder_reranks_the_pool(tmp_path):
    dev = tmp_path / "dev.src"
    dev.write_text("".join(f"s{i}\n" for i in range(60)))
    w = start_weight_string()
    out = decoder(["-weight-overwrite", w, "-n-best-list", "nb.out", str(NBEST), "distinct",
                   "-input-file", str(dev), "-config", "ignored.ini", "-inputtype", "0"], tmp_path)
    (tmp_path / "one.out").write_text(out)
    assert len(out.splitlines()) == 60
    # the pool's 1-best at the start weights is Moses's 0.265757 (README of moses-toy)
    assert mtplug_bleu(tmp_path / "one.out") == pytest.approx(START_BLEU, abs=5e-7)

    # n-best: NBEST per sentence, sorted, total = weighted sum, today's Moses format
    weights = {"Distortion0": [0.3], "LM0": [0.5], "WordPenalty0": [-1.0], "PhrasePenalty0": [0.2],
               "TranslationModel0": [0.2] * 4}
    lines = (tmp_path / "nb.out").read_text().splitlines()
    assert len(lines) == 60 * NBEST
    by_sent: dict = {}
    for line in lines:
        sid, hyp, feats, total = line.split(" ||| ")
        assert hyp.endswith(" ") and not hyp.endswith("  ")  # "house .  |||" as Moses writes it
        score, label = 0.0, None
        for tok in feats.split():
            if tok.endswith("="):
                label, k = tok[:-1], 0
            else:
                score += weights[label][k] * float(tok)
                k += 1
        assert float(total) == pytest.approx(score, rel=1e-5, abs=1e-5)
        by_sent.setdefault(int(sid), []).append((float(total), hyp))
    assert sorted(by_sent) == list(range(60))
    for sid, hyps in by_sent.items():
        assert len(hyps) == NBEST
        assert [t for t, _ in hyps] == sorted((t for t, _ in hyps), reverse=True)
        assert len({h for _, h in hyps}) == NBEST  # distinct
        assert out.splitlines()[sid] == hyps[0][1].rstrip(" ")

    # deterministic
    out2 = decoder(["-weight-overwrite", w, "-n-best-list", "nb2.out", str(NBEST), "distinct",
                    "-input-file", str(dev)], tmp_path)
    assert out2 == out and (tmp_path / "nb2.out").read_text() == (tmp_path / "nb.out").read_text()

    # other weights change the 1-best, and a sensible direction raises BLEU (0.466 for these)
    better = ("Distortion0= 0.03 LM0= 0.05 WordPenalty0= -0.1 PhrasePenalty0= 0.02 "
              "TranslationModel0= 0.02 0.02 0.5 0.3")
    out3 = decoder(["-weight-overwrite", better, "-input-file", str(dev)], tmp_path)
    (tmp_path / "three.out").write_text(out3)
    assert out3 != out
    assert mtplug_bleu(tmp_path / "three.out") > START_BLEU + 0.1

    # -show-weights reads the config's [weight] section
    (tmp_path / "moses.ini").write_text("[weight]\n" + "\n".join(
        f"{n}= {' '.join(v)}" for n, v in read_dense_file(TOY / "run1.dense")) + "\nUnknownWordPenalty0= 1\n")
    shown = decoder(["-config", "moses.ini", "-inputtype", "0", "-show-weights"], tmp_path).splitlines()
    assert shown[0] == "Distortion0= 0.300000"
    assert shown[4] == "TranslationModel0= 0.200000 0.200000 0.200000 0.200000"
    assert shown[-1] == "UnknownWordPenalty0 UNTUNEABLE"

    # sparse features: names with '_', weighted by -weight-file
    sp = decoder(["-weight-overwrite", w, "-standin-sparse", "-n-best-list", "nbs.out", "5",
                  "-input-file", str(dev)], tmp_path)
    assert sp == out  # sparse weights default to 0
    first = (tmp_path / "nbs.out").read_text().splitlines()[0]
    assert re.search(r" WT_\S+~x= 1 WT_\S+~y= 1 \|\|\| ", first)
    (tmp_path / "sparse.w").write_text("WT_every~x 100\n")
    sp2 = decoder(["-weight-overwrite", w, "-standin-sparse", "-weight-file", "sparse.w",
                   "-input-file", str(dev)], tmp_path)
    assert sp2 != out
    assert all(line.startswith("every ") for line, orig in zip(sp2.splitlines(), out.splitlines())
               if orig.startswith("every "))

    # bad input is an error (exit 1), not a silent default
    p = subprocess.run([sys.executable, str(STANDIN_DECODER), "-weight-overwrite", "LM0= 1",
                        "-input-file", str(dev)], capture_output=True, text=True)
    assert p.returncode == 1 and "no weight for feature" in p.stderr


# ------------------------------------------------------------------ end to end
def check_run(run, mode, mertdir, *, sparse=False, strictly_better=False):
    wd = run.workdir
    recs = run.records
    assert len(recs) == 3 or (run.stopped_early and len(recs) >= 2), (len(recs), run.stopped_early)
    bleus = [r.bleu for r in recs]
    exact = [mtplug_bleu(wd / f"run{r.run}.out") for r in recs]
    # the evaluator prints 4 decimals, as Moses's does (cout.precision(4), fixed); it reproduces
    # Moses's BLEU of the start point and agrees with mtplug on every run
    assert bleus[0] == pytest.approx(START_BLEU, abs=EVAL_TOL), bleus
    assert exact[0] == pytest.approx(START_BLEU, abs=5e-7), exact
    for r, b in zip(recs, exact):
        assert r.bleu == pytest.approx(b, abs=EVAL_TOL), (r.run, r.bleu, b)
    assert bleus[-1] >= bleus[0], bleus
    assert exact[-1] >= exact[0], exact
    if strictly_better:
        assert bleus[-1] > bleus[0], bleus
        assert exact[-1] > exact[0], exact

    for r in recs:
        n = r.run
        for name in (f"run{n}.moses.ini", f"run{n}.dense", f"run{n}.out", f"run{n}.best{NBEST}.out.gz",
                     f"run{n}.features.dat", f"run{n}.scores.dat", f"run{n}.init.opt", f"run{n}.mert.out",
                     f"run{n}.mert.log", f"run{n}.weights.txt", f"run{n}.extract.out", f"run{n}.extract.err"):
            assert (wd / name).is_file(), name
        with gzip.open(wd / f"run{n}.best{NBEST}.out.gz", "rt") as fh:
            assert sum(1 for _ in fh) == r.n_hypotheses
        init = (wd / f"run{n}.init.opt").read_text().splitlines()
        assert len(init) == 3 and all(len(line.split()) == DIM for line in init)
        assert [perl_num(x) for x in init[0].split()] == pytest.approx(r.start_weights)
        assert len(r.weights) == DIM and all(np.isfinite(r.weights))
        weights_txt = (wd / f"run{n}.weights.txt").read_text()
        assert weights_txt.strip(), "weights.txt is empty"
        if mode == "mert":
            # mert.log's Best point line, read with mert-moses.pl's regex, gives the new weights
            m = None
            for line in (wd / f"run{n}.mert.log").read_text().splitlines():
                m = RE_BEST_POINT.search(line)
                if m:
                    break
            assert m, f"run{n}.mert.log has no Best point line"
            assert m.group(1).split() == r.weight_strings
            assert 0.0 <= float(m.group(2)) <= 1.0
            assert float(m.group(2)) == pytest.approx(r.reported_bleu)
            wt = [float(x) for x in weights_txt.split()]
            assert len(wt) == DIM and np.allclose(wt, r.weights, rtol=1e-4, atol=1e-7)
        else:
            assert weights_txt == "not used\n"
            dense = {}
            sparse_w = {}
            for line in (wd / f"run{n}.mert.out").read_text().splitlines():
                md = RE_DENSE.match(line)
                if md:
                    assert int(md.group(1)) not in dense
                    dense[int(md.group(1))] = float(md.group(2))
                    continue
                ms = RE_SPARSE.match(line)
                assert ms, f"run{n}.mert.out: unparsed line {line!r}"
                sparse_w[ms.group(1)] = float(ms.group(2))
            assert sorted(dense) == list(range(DIM))
            total = sum(abs(v) for v in dense.values())
            assert total >= 1e-9
            assert np.allclose([dense[i] / total for i in range(DIM)], r.weights, rtol=1e-12, atol=1e-15)
            assert set(sparse_w) == set(r.sparse_weights)
            if mode == "batch-mira":
                assert (wd / f"run{n}.mira.out").is_file()
                log = (wd / f"run{n}.mert.log").read_text()
                found = RE_BEST_BLEU.findall(log)
                assert found, f"run{n}.mert.log has no 'Best BLEU = x' line"
                assert 0.0 < float(found[-1]) <= 1.0 and float(found[-1]) == pytest.approx(r.reported_bleu)
            else:
                assert r.reported_bleu is None
                pro = (wd / f"run{n}.pro.data").read_text().splitlines()
                assert pro and all(line.split()[0] in ("0", "1") for line in pro)
        if sparse:
            assert r.n_sparse_features > 0, "no sparse features reached features.dat"
            assert r.sparse_weights, f"run {n}: no sparse weights in mert.out"
            assert all(np.isfinite(v) for v in r.sparse_weights.values())
            sw = (wd / f"run{n + 1}.sparse-weights").read_text().splitlines()
            assert {line.split()[0] for line in sw} == set(r.sparse_weights)

    # the command lines: the decoder gets the previous iteration's weights and sparse weights
    decodes = [c.cmd for c in run.commands if c.label == "decoder"]
    assert len(decodes) == len(recs)
    for n, cmd in enumerate(decodes[1:], 2):
        assert ("-weight-file run%d.sparse-weights" % n in cmd) == sparse, cmd
    opt_label = {"mert": "mert", "batch-mira": "kbmira", "pairwise-ranked": "pro ; megam"}[mode]
    opt_cmds = [c.cmd for c in run.commands if c.label == opt_label]
    assert len(opt_cmds) == len(recs)
    last = opt_cmds[-1]
    k = len(recs)
    if mode == "mert":
        files = ",".join(f"run{i}.features.dat" for i in range(1, k + 1))
        scores = ",".join(f"run{i}.scores.dat" for i in range(1, k + 1))
        assert f"/mert -d {DIM} " in last     # then "$mertargs $mertmertargs", here blank
        assert f"--sctype BLEU --scconfig case:true --ffile {files} --scfile {scores} --ifile run{k}.init.opt -n " \
            in last
        assert last.endswith(f" -r {k * 1000} > mert.out 2> mert.log")
    else:
        files = " ".join(f"--ffile run{i}.features.dat" for i in range(1, k + 1))
        assert files in last
        assert f" -r {k * 1000} " in last
    extract = [c.cmd for c in run.commands if c.label == "extractor"]
    assert extract[-1].endswith("/extractor.sh > extract.out 2> extract.err")
    script = (wd / "extractor.sh").read_text()
    assert (f"/extractor --sctype BLEU --scconfig case:true  --scfile run{k}.scores.dat --ffile "
            f"run{k}.features.dat -r {REF} -n run{k}.best{NBEST}.out.gz") in script
    assert sum(1 for c in run.commands if c.label == "evaluator") == len(recs)


def test_e2e_mert(mertdir, tmp_path):
    run = run_mert_moses(mertdir, tmp_path / "mert", "mert", 3, random_restarts=2)
    check_run(run, "mert", mertdir, strictly_better=True)
    for r in run.records:
        assert 0.0 < r.reported_bleu <= 1.0


def test_e2e_mert_other_algorithm(mertdir, tmp_path):
    """mert-moses.pl --mertmertargs='--algorithm apro': mert runs another optimizer on the same files."""
    run = run_mert_moses(mertdir, tmp_path / "apro", "mert", 3, random_restarts=2,
                         mertmertargs="--algorithm apro")
    check_run(run, "mert", mertdir)
    # mert-moses.pl glues the value to its --sctype (issue 19, defect 6); mert splits it again
    assert all(" --algorithm apro--sctype BLEU " in c.cmd for c in run.commands if c.label == "mert")


def test_e2e_mertmertargs_as_the_readme_writes_them(mertdir, tmp_path):
    """The --mertmertargs values as docs/mert-moses.md and the README write them, glued to
    --sctype by mert-moses.pl, and a value-less flag last."""
    run = run_mert_moses(mertdir, tmp_path / "expbleu", "mert", 3, random_restarts=1,
                         mertmertargs="--directions expbleu")
    check_run(run, "mert", mertdir)
    assert all("--directions expbleu--sctype BLEU" in c.cmd for c in run.commands if c.label == "mert")
    run = run_mert_moses(mertdir, tmp_path / "kbmira", "mert", 3, random_restarts=1,
                         mertmertargs="--algorithm kbmira --passes 5 --model-bg")
    check_run(run, "mert", mertdir)
    assert all("--model-bg--sctype BLEU" in c.cmd for c in run.commands if c.label == "mert")


def test_e2e_batch_mira(mertdir, tmp_path):
    run = run_mert_moses(mertdir, tmp_path / "mira", "batch-mira", 3, sparse=True)
    check_run(run, "batch-mira", mertdir, sparse=True)


def test_e2e_pairwise_ranked(mertdir, tmp_path):
    run = run_mert_moses(mertdir, tmp_path / "pro", "pairwise-ranked", 3, sparse=True)
    check_run(run, "pairwise-ranked", mertdir, sparse=True)


def _moses_ter_goodness(hyp_path) -> float:
    """Moses's TER score (1 - TER, TerScorer::calculateScore) of a plain translation file."""
    from mtplug.metrics import get_metric

    hyps = Path(hyp_path).read_text(encoding="utf-8").splitlines()
    refs = REF.read_text(encoding="utf-8").splitlines()
    return 1.0 - get_metric("moses-ter").corpus_score(hyps, [refs])


@pytest.mark.parametrize("mode,flags", [
    ("mert", {"mertargs": "--sctype TER "}),
    ("mert", {"mertargs": "--sctype BLEU,TER --scconfig weights:0.6+0.4"}),
    ("batch-mira", {"batch_mira_args": "--sctype TER"}),
    ("pairwise-ranked", {"mertargs": "--sctype TER"}),
    ("mert", {"mertargs": "--sctype TER ", "mertmertargs": "--algorithm apro"}),
    ("mert", {"mertargs": "--sctype TER ", "mertmertargs": "--algorithm mira"}),
    ("batch-mira", {"batch_mira_args": "--sctype TER --algorithm rampion"}),
], ids=["mert-TER", "mert-BLEU,TER", "batch-mira-TER", "pro-TER", "apro-TER", "mira-TER", "rampion-TER"])
def test_e2e_other_scorers(mertdir, tmp_path, mode, flags):
    """mert-moses.pl --mertargs="--sctype TER " (the issue's command line): the extractor
    writes Moses's TER statistics, mert/kbmira/pro tune to them, and the decoded 1-best's
    TER improves over the start."""
    sctype = "BLEU,TER" if "BLEU,TER" in str(flags) else "TER"
    run = run_mert_moses(mertdir, tmp_path / mode, mode, 3, random_restarts=2, **flags)
    wd = run.workdir
    script = (wd / "extractor.sh").read_text()
    assert f"/extractor --sctype {sctype} " in script, script
    heads = [line for line in gzip.open(wd / "run1.scores.dat", "rt") if line.startswith("SCORES_TXT_BEGIN_0")] \
        if (wd / "run1.scores.dat").read_bytes()[:2] == b"\x1f\x8b" else \
        [line for line in (wd / "run1.scores.dat").read_text().splitlines() if line.startswith("SCORES_TXT_BEGIN_0")]
    width = {"TER": 3, "BLEU,TER": 12}[sctype]
    assert heads and all(h.split()[3:] == [str(width), sctype] for h in heads)
    if mode == "mert":
        assert all(f"--sctype {sctype}" in c.cmd for c in run.commands if c.label == "mert")
        for r in run.records:
            assert 0.0 < r.reported_bleu <= 1.0      # Moses's score of the scorer, not BLEU
    ter = [_moses_ter_goodness(wd / f"run{r.run}.out") for r in run.records]
    assert max(ter[1:]) > ter[0], ter
