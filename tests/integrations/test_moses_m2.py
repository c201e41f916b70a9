"""Moses's M2SCORER through mtplug's Moses programs and CLI: the extractor's scores.dat
byte for byte against the real extractor's (tests/golden/moses-m2, commands in its
README), evaluator's scores against Moses's evaluator's, mert and kbmira reading the files,
and ``mtplug score|optimize --metric m2`` with an M2 reference."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from mtplug.cli import main as cli_main
from mtplug.metrics.m2 import FAR_MESSAGE

from .test_moses_programs import BEST_BLEU, BEST_POINT, call

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "moses-m2"

# (set, golden name, --scconfig): GOLDEN/README.md's tables
EXTRACTOR_CASES = [
    ("gec", "default", "beta:0.5"),
    ("gec", "truecase-1", "truecase:1"),
    ("gec", "truecase-true", "truecase:true"),
    ("gec", "beta-1.0.mu-0", "beta:1.0,max_unchanged_words:0"),
    ("gec", "beta-0.2.mu-3.truecase-1", "beta:0.2,max_unchanged_words:3,truecase:1"),
    ("gec", "ignore-whitespace-casing", "ignore_whitespace_casing:true"),
    ("rand", "default", "beta:0.5"),
    ("rand", "truecase-1", "truecase:1"),
    ("rand", "beta-1.0.mu-0", "beta:1.0,max_unchanged_words:0"),
    ("rand", "beta-0.2.mu-3.truecase-1", "beta:0.2,max_unchanged_words:3,truecase:1"),
]


def _golden_rows() -> list[tuple[int, str, str]]:
    lines = (GOLDEN / "evaluator.tsv").read_text().splitlines()[1:]
    return [(int(r), c, out) for r, c, out in (line.split("\t") for line in lines)]


def _candidates(rank: int, path: Path) -> Path:
    """cand<rank>.txt as GOLDEN/README.md describes it."""
    hyps: dict[int, list[str]] = {}
    for line in (GOLDEN / "gec.nbest").read_text().splitlines():
        fields = line.split("|||")
        text = fields[1]
        text = text.removeprefix(" ")
        text = text.removesuffix(" ")
        hyps.setdefault(int(fields[0]), []).append(text)
    path.write_text("".join((h[rank] if rank < len(h) else h[-1]) + "\n" for h in hyps.values()))
    return path


@pytest.mark.parametrize("name,case,scconfig", EXTRACTOR_CASES)
def test_extractor_scores_are_byte_identical_to_moses(name, case, scconfig, tmp_path, capfd):
    rc, _, err = call("extractor", "--sctype", "M2SCORER", "--scconfig", scconfig, "-r", GOLDEN / f"{name}.m2",
                      "-n", GOLDEN / f"{name}.nbest", "--scfile", "s.dat", "--ffile", "f.dat",
                      cwd=tmp_path, capfd=capfd)
    assert rc == 0, err
    expected = gzip.decompress((GOLDEN / f"{name}.{case}.scores.dat.gz").read_bytes())
    assert (tmp_path / "s.dat").read_bytes() == expected
    # one warning per hypothesis further from its source than it is long (rows with more
    # proposed edits than source words; 41 of rand's 480 at beta:0.5, README)
    far = sum(1 for line in expected.decode().splitlines() if not line.startswith("SCORES_TXT")
              and int(line.split()[1]) > int(line.split()[3]))
    assert far and err.count(FAR_MESSAGE + "\n") == far
    if "ignore_whitespace_casing" in scconfig:
        assert "M2SCORER ignores ignore_whitespace_casing:true" in err


def test_extractor_reads_only_the_first_reference(tmp_path, capfd):
    rc, _, err = call("extractor", "--sctype", "M2SCORER", "-r", f"{GOLDEN / 'gec.m2'},{GOLDEN / 'rand.m2'}",
                      "-n", GOLDEN / "gec.nbest", "--scfile", "s.dat", "--ffile", "f.dat", cwd=tmp_path, capfd=capfd)
    assert rc == 0, err
    assert (tmp_path / "s.dat").read_bytes() == gzip.decompress((GOLDEN / "gec.default.scores.dat.gz").read_bytes())
    assert "reads only the first reference file" in err


def test_m2scorer_is_not_interpolated(tmp_path, capfd):
    rc, _, err = call("extractor", "--sctype", "M2SCORER,BLEU", "-r", GOLDEN / "gec.m2", "-n", GOLDEN / "gec.nbest",
                      cwd=tmp_path, capfd=capfd)
    assert rc == 2 and "cannot be interpolated" in err


@pytest.mark.parametrize("rank,scconfig,expected", _golden_rows())
def test_evaluator_prints_moses_score(rank, scconfig, expected, tmp_path, capfd):
    cand = _candidates(rank, tmp_path / f"cand{rank}.txt")
    rc, out, err = call("evaluator", "--sctype", "M2SCORER", "--scconfig", scconfig, "--reference",
                        GOLDEN / "gec.m2", "--candidate", cand, cwd=tmp_path, capfd=capfd)
    assert rc == 0, err
    assert out == expected + "\n"


def _extracted(tmp_path, capfd, name="rand"):
    rc, _, err = call("extractor", "--sctype", "M2SCORER", "--scconfig", "beta:0.5", "-r", GOLDEN / f"{name}.m2",
                      "-n", GOLDEN / f"{name}.nbest", "--scfile", "s.dat", "--ffile", "f.dat", cwd=tmp_path,
                      capfd=capfd)
    assert rc == 0, err


def test_mert_reads_m2_scores(tmp_path, capfd):
    # gec.nbest: F0 grows with the rank, so weight -1 takes every first hypothesis, which
    # Moses's evaluator scores 0.4237 (evaluator.tsv, rank 0, beta:0.5)
    _extracted(tmp_path, capfd, "gec")
    (tmp_path / "init.opt").write_text("0.5\n-1\n1\n")
    rc, _, err = call("mert", "--sctype", "M2SCORER", "--scconfig", "beta:0.5", "--ffile", "f.dat", "--scfile",
                      "s.dat", "-d", "1", "-n", "2", "-r", "1", cwd=tmp_path, capfd=capfd)
    assert rc == 0, err
    point, score = BEST_POINT.search(err).groups()
    assert float(point) == -1.0 and score == "0.423729"


def test_kbmira_reads_m2_scores(tmp_path, capfd):
    _extracted(tmp_path, capfd)
    (tmp_path / "dense").write_text("0.5\n")
    rc, _, err = call("kbmira", "--sctype", "M2SCORER", "--scconfig", "beta:0.5", "--ffile", "f.dat", "--scfile",
                      "s.dat", "--dense-init", "dense", "-o", "w.txt", cwd=tmp_path, capfd=capfd)
    assert rc == 0, err
    assert BEST_BLEU.search(err)
    assert (tmp_path / "w.txt").read_text().startswith("F0 ")


def test_score_and_optimize_with_m2(tmp_path, capfd):
    cand = _candidates(0, tmp_path / "cand0.txt")
    assert cli_main(["score", "--hyp", str(cand), "--metric", "m2", "--ref", str(GOLDEN / "gec.m2"), "--json"]) == 0
    record = json.loads(capfd.readouterr().out.splitlines()[0])
    assert record["name"] == "M2" and round(record["score"] / 100, 4) == 0.4237
    assert "moses-sctype:M2SCORER|beta:0.5" in record["signature"]
    (tmp_path / "w0").write_text("F0 1\n")
    out = tmp_path / "out.txt"
    for algorithm in ("mert", "pro"):
        rc = cli_main(["optimize", algorithm, "--nbest", str(GOLDEN / "gec.nbest"), "--ref", str(GOLDEN / "gec.m2"),
                       "--metric", "m2", "--weights", str(tmp_path / "w0"), "--output", str(out)])
        assert rc == 0
        assert "M2 = 42.3729" in capfd.readouterr().err
        assert float(out.read_text().split()[1]) < 0     # the first hypotheses, as mert finds them


def test_m2_needs_an_m2_reference(tmp_path, capfd):
    ref = tmp_path / "plain.ref"
    ref.write_text("a b c\n")
    rc = cli_main(["score", "--hyp", str(ref), "--metric", "m2", "--ref", str(ref)])
    assert rc != 0


def test_mert_scores_with_the_scconfig_beta(tmp_path, capfd):
    import numpy as np

    from mtplug.metrics.m2 import f_beta

    _extracted(tmp_path, capfd, "gec")
    lines = (tmp_path / "s.dat").read_text().splitlines()
    first = [lines[i + 1] for i, line in enumerate(lines) if line.startswith("SCORES_TXT_BEGIN_0")]
    totals = np.array([[int(v) for v in row.split()] for row in first]).sum(axis=0)
    (tmp_path / "init.opt").write_text("0.5\n-1\n1\n")
    rc, _, err = call("mert", "--sctype", "M2SCORER", "--scconfig", "beta:1.0", "--ffile", "f.dat", "--scfile",
                      "s.dat", "-d", "1", "-n", "2", "-r", "1", cwd=tmp_path, capfd=capfd)
    assert rc == 0, err
    assert BEST_POINT.search(err).group(2) == f"{f_beta(totals, 1.0):.6g}" != "0.423729"
