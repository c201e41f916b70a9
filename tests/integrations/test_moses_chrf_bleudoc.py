"""Moses's CHRF and BLEUDOC scorers through mtplug's Moses programs: the extractor's files
byte for byte against Moses 34452895's with its two one-line fixes (tests/golden/moses-chrf,
tests/golden/moses-bleudoc; READMEs), the evaluator's scores, mert reading the files."""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_moses_programs import call

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
REFS = {"CHRF": ("ref.0", "ref.1"), "BLEUDOC": ("ref.0.xml", "ref.1.xml")}
CASES = [
    ("CHRF", "default", ""), ("CHRF", "case-false", "case:false"), ("CHRF", "reflen-shortest", "reflen:shortest"),
    ("CHRF", "reflen-average.case-false", "reflen:average,case:false"),
    ("BLEUDOC", "default", ""), ("BLEUDOC", "case-false", "case:false"),
    ("BLEUDOC", "reflen-shortest", "reflen:shortest"), ("BLEUDOC", "reflen-average", "reflen:average"),
]


def _dir(sctype: str) -> Path:
    return GOLDEN / f"moses-{sctype.lower()}"


def _refs(sctype: str) -> str:
    return ",".join(str(_dir(sctype) / r) for r in REFS[sctype])


@pytest.mark.parametrize("sctype,name,scconfig", CASES)
def test_extractor_files_are_byte_identical_to_fixed_moses(sctype, name, scconfig, tmp_path, capfd):
    rc, _, err = call("extractor", "--sctype", sctype, "--scconfig", scconfig, "-r", _refs(sctype),
                      "-n", _dir(sctype) / "dev.nbest", "--scfile", "s.dat", "--ffile", "f.dat", cwd=tmp_path, capfd=capfd)
    assert rc == 0, err
    assert (tmp_path / "s.dat").read_bytes() == (_dir(sctype) / f"{name}.scores.dat").read_bytes()
    assert (tmp_path / "f.dat").read_bytes() == (_dir(sctype) / "features.dat").read_bytes()


def _candidates(sctype: str, rank: int, path: Path) -> Path:
    hyps: dict[int, list[str]] = {}
    for line in (_dir(sctype) / "dev.nbest").read_text(encoding="utf-8").splitlines():
        fields = line.split("|||")
        hyps.setdefault(int(fields[0]), []).append(fields[1][1:-1])
    path.write_text("".join((h[rank] if rank < len(h) else h[-1]) + "\n" for _, h in sorted(hyps.items())),
                    encoding="utf-8")
    return path


@pytest.mark.parametrize("sctype", ["CHRF", "BLEUDOC"])
def test_evaluator_prints_fixed_moses_scores(sctype, tmp_path, capfd):
    rows = [line.split("\t") for line in (_dir(sctype) / "evaluator.tsv").read_text().splitlines()[1:]]
    for rank, scconfig, want, *_ in rows:
        cand = _candidates(sctype, int(rank), tmp_path / f"cand{rank}.txt")
        rc, out, err = call("evaluator", "--sctype", sctype, "--scconfig", scconfig, "--reference", _refs(sctype),
                            "--candidate", cand, cwd=tmp_path, capfd=capfd)
        assert rc == 0, err
        assert out == want + "\n", (rank, scconfig)


@pytest.mark.parametrize("sctype,weights", [("CHRF", "-0.966667 0.0333333 \n"), ("BLEUDOC", None)])
def test_mert_reads_the_scores_files(sctype, weights, tmp_path, capfd):
    """CHRF: the weights of the fixed Moses's ``mert -d 2 -n 5 -r 1`` (init.opt below)
    on the golden files (checked once, 2026-11-28). BLEUDOC's run ends 1 ulp from Moses's
    in the last printed digit as plain BLEU does on the same statistics (mtplug's mert)."""
    (tmp_path / "init.opt").write_text("1 1\n-10 -10\n10 10\n")
    rc, _, err = call("mert", "-d", "2", "--sctype", sctype, "--scfile", _dir(sctype) / "default.scores.dat",
                      "--ffile", _dir(sctype) / "features.dat", "-n", "5", "-r", "1", cwd=tmp_path, capfd=capfd)
    assert rc == 0, err
    if weights is not None:
        assert (tmp_path / "weights.txt").read_text() == weights
        assert "=> 0.93634" in err


def test_chrf_and_bleudoc_stand_alone(tmp_path, capfd):
    for sctype in ("CHRF,BLEU", "BLEU,BLEUDOC"):
        rc, _, err = call("extractor", "--sctype", sctype, "-r", _refs("CHRF"), "-n", _dir("CHRF") / "dev.nbest",
                          "--scfile", "s.dat", "--ffile", "f.dat", cwd=tmp_path, capfd=capfd)
        assert rc != 0 and "cannot be interpolated" in err
    rc, _, err = call("extractor", "--sctype", "BLEUDOC", "-r", _refs("CHRF"), "-n", _dir("CHRF") / "dev.nbest",
                      "--scfile", "s.dat", "--ffile", "f.dat", cwd=tmp_path, capfd=capfd)
    assert rc == 2 and "doc docid" in err


@pytest.mark.parametrize("metric,sctype", [("moses-chrf", "CHRF"), ("bleudoc", "BLEUDOC")])
def test_mtplug_score_and_optimize_with_moses_chrf_and_bleudoc(metric, sctype, tmp_path, capfd):
    import json

    from mtplug.cli import main as cli_main

    rows = [line.split("\t") for line in (_dir(sctype) / "evaluator.tsv").read_text().splitlines()[1:]]
    want = next(float(score) for rank, scconfig, score, *_ in rows if rank == "0" and scconfig == "")
    cand = _candidates(sctype, 0, tmp_path / "cand0.txt")
    refs = _refs(sctype).split(",")
    assert cli_main(["score", "--hyp", str(cand), "--metric", metric, "--ref", *refs, "--json"]) == 0
    record = json.loads(capfd.readouterr().out.splitlines()[0])
    assert round(record["score"] / 100, 4) == want
    (tmp_path / "w0").write_text("F0 1\nF1 1\n")
    out = tmp_path / "out.txt"
    assert cli_main(["optimize", "mert", "--nbest", str(_dir(sctype) / "dev.nbest"), "--ref", *refs,
                     "--metric", metric, "--weights", str(tmp_path / "w0"), "--output", str(out)]) == 0
    assert out.read_text().split()[0] == "F0"
