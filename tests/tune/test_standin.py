"""The stand-in decoder's own behaviour (mtplug/tune/standin.py): both front ends."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
STANDIN = REPO / "mtplug" / "tune" / "standin.py"
POOL = REPO / "mtplug" / "data" / "example" / "run1.best100.out.gz"
WEIGHTS = ("Distortion 0.3\nLanguageModel 0.5\nWordPenalty -1\nPhrasePenalty 0.2\n"
           "PhraseModel_0 0.2\nPhraseModel_1 0.2\nPhraseModel_2 0.2\nPhraseModel_3 0.2\n")


def standin(*args, stdin="", cwd=None):
    """Run the stand-in as dtrain does (python -S on the file: it must not need site or mtplug)."""
    return subprocess.run([sys.executable, "-S", str(STANDIN), *map(str, args)], input=stdin, capture_output=True,
                          text=True, cwd=cwd, timeout=60)


@pytest.fixture
def cdec(tmp_path):
    (tmp_path / "cdec.ini").write_text("# a comment\nformalism=scfg\n\nadd_pass_through_rules=true\n")
    (tmp_path / "weights").write_text(WEIGHTS)
    (tmp_path / "src").write_text("".join(f"source {i}\n" for i in range(60)))
    return tmp_path


def kbest(cdec, *extra, stdin):
    p = standin("cdec", "-c", cdec / "cdec.ini", "-w", cdec / "weights", "-standin-source", cdec / "src", *extra,
                stdin=stdin)
    assert p.returncode == 0, p.stderr
    return [line.split(" ||| ") for line in p.stdout.splitlines()]


def test_cdec_ids_follow_cdec_counting(cdec):
    rows = kbest(cdec, "-k", "2", "-r", stdin='source 3\n<seg id="9">anything</seg>\nsource 4\n')
    assert [r[0] for r in rows] == ["0", "0", "9", "9", "10", "10"]
    # seg id 9 decodes pool sentence 9; the plain line after it is found in the source file
    alone = kbest(cdec, "-k", "2", "-r", stdin="source 9\nsource 4\n")
    assert [r[1:] for r in rows[2:]] == [r[1:] for r in alone]
    assert [r[1:] for r in rows[:2]] == [r[1:] for r in kbest(cdec, "-k", "2", stdin="source 3\n")]


def test_cdec_kbest_format(cdec):
    rows = kbest(cdec, "-k", "100", "-r", stdin="source 0\n")
    assert len(rows) == 100 and all(len(r) == 4 for r in rows)
    names = {tok.rsplit("=", 1)[0] for r in rows for tok in r[2].split()}
    assert names <= {"Distortion", "LanguageModel", "WordPenalty", "PhrasePenalty", "PhraseModel_0",
                     "PhraseModel_1", "PhraseModel_2", "PhraseModel_3"} and "LanguageModel" in names
    assert any("Distortion=" not in r[2] for r in rows)  # zero values are left out, as cdec does
    w = dict(line.split() for line in WEIGHTS.splitlines())
    scores = [float(r[3]) for r in rows]
    for r, score in zip(rows, scores):
        wf = sum(float(w[n]) * float(v) for n, v in (tok.rsplit("=", 1) for tok in r[2].split()))
        assert score == pytest.approx(wf, rel=1e-5, abs=1e-5)
    assert scores == sorted(scores, reverse=True)
    assert not rows[0][1].endswith(" ")


def test_cdec_one_best_without_k(cdec):
    p = standin("cdec", "-c", cdec / "cdec.ini", "-w", cdec / "weights", stdin="x\ny\n")
    assert p.returncode == 0, p.stderr
    top = kbest(cdec, "-k", "1", stdin="source 0\nsource 1\n")
    assert p.stdout.splitlines() == [r[1] for r in top]   # positions 0 and 1 without a source file


@pytest.mark.parametrize("args, ini, message", [
    (["-k", "2"], "formalism scfg\n", "cdec.ini:1: expected 'key=value'"),
    (["-k", "two"], "a=b\n", "-k: bad size 'two'"),
    (["--bogus"], "a=b\n", "unknown argument '--bogus'"),
])
def test_cdec_bad_input(cdec, args, ini, message):
    (cdec / "cdec.ini").write_text(ini)
    p = standin("cdec", "-c", cdec / "cdec.ini", *args, stdin="x\n")
    assert p.returncode == 1 and message in p.stderr


def test_cdec_unknown_source_line(cdec):
    p = standin("cdec", "-c", cdec / "cdec.ini", "-standin-source", cdec / "src", stdin="not a source\n")
    assert p.returncode == 1 and "'not a source' is not in" in p.stderr


def test_moses_nbest_is_verbatim_and_deterministic(tmp_path):
    (tmp_path / "in").write_text("a\nb\n")
    args = ["moses", "-weight-overwrite", "Distortion0= 0.3 LM0= 0.5 WordPenalty0= -1 PhrasePenalty0= 0.2 "
            "TranslationModel0= 0.2 0.2 0.2 0.2", "-n-best-list", "nb", "3", "distinct", "-input-file", "in"]
    first = standin(*args, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    nb = (tmp_path / "nb").read_text()
    again = standin(*args, cwd=tmp_path)
    assert again.stdout == first.stdout and (tmp_path / "nb").read_text() == nb
    pool = {line.split(" ||| ")[1]: line.split(" ||| ")[2] for line in gzip.open(POOL, "rt") if line.startswith("0 ")}
    for line in nb.splitlines()[:3]:
        sid, text, feats, _ = line.split(" ||| ")
        assert sid == "0" and text in pool and feats == pool[text].strip()  # text with its trailing space
