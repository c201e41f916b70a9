"""``mtplug join-features``: per-hypothesis features from other files joined into an
n-best list; bad or mismatched feature files refused with one line, nothing written."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplug.cli import EXIT_INPUT_ERROR, main
from mtplug.corpus import NbestCorpus

NBEST = ("0 ||| a house ||| F0= -0.5 ||| -0.5\n"
         "0 ||| the house ||| F0= -0.9 ||| -0.9\n"
         "\n"
         "1 ||| that is good ||| F0= -0.3 WT_a~b= 1 ||| -0.3\n")
FAIRSEQ = ("S-1\tdas ist gut\nH-1\t-0.3\tthat is good\nD-1\t-0.3\tthat is good\n"
           "S-0\tein haus\nH-0\t-0.5\ta house\nD-0\t-0.5\ta house\nH-0\t-0.9\tthe house\nD-0\t-0.9\tthe house\n")


@pytest.fixture
def run(write, capsys, tmp_path):
    """run(*args) -> (exit status, stdout, stderr) of ``mtplug join-features -q ARGS``,
    the files of tmp_path named without their folder in stderr."""

    def _run(*args):
        capsys.readouterr()
        rc = main(["join-features", "-q", *args])
        out, err = capsys.readouterr()
        return rc, out, err.replace(str(tmp_path) + os.sep, "")

    return _run


def test_per_line_and_keyed_files(write, run):
    nbest = write("nbest", NBEST)
    lm = write("lm.scores", "-10.5\n-12\n-7.25\n")
    qe = write("qe.tsv", "1\t0\t0.5\n0 1 0.125\n0 0 1e-3\n")
    rc, out, err = run("--nbest", nbest, "--feature", f"LM={lm}", "-f", f"QE={qe}")
    assert (rc, err) == (0, "")
    assert out == ("0 ||| a house ||| F0= -0.5 LM= -10.5 QE= 0.001 ||| -0.5\n"
                   "0 ||| the house ||| F0= -0.9 LM= -12.0 QE= 0.125 ||| -0.9\n"
                   "1 ||| that is good ||| F0= -0.3 WT_a~b= 1 LM= -7.25 QE= 0.5 ||| -0.3\n")


def test_fairseq_input_in_sorted_order_and_read_back(write, run, tmp_path):
    out = str(tmp_path / "joined.nbest")
    qe = write("qe", "0 0 1\n0 1 2\n1 0 3\n")
    rc, _, err = run("--nbest", write("gen.out", FAIRSEQ), "--feature", f"QE={qe}", "-o", out)
    assert (rc, err) == (0, "")
    ref = write("ref", "a house\nthat is good\n")
    from mtplug.formats.references import read_references

    c = NbestCorpus.from_nbest([out], read_references([ref]))
    assert c.feature_names == ["fairseq_0", "QE_0"]
    np.testing.assert_array_equal(c.dense, [[-0.5, 1], [-0.9, 2], [-0.3, 3]])


def test_no_feature_writes_a_moses_copy(write, run):
    rc, out, _ = run("--nbest", write("gen.out", FAIRSEQ))
    assert rc == 0 and out.splitlines()[0] == "0 ||| a house ||| fairseq= -0.5"


BAD = [
    ("LM", "-1\n-2\n", "lm: has 2 values, nbest has 3 hypotheses"),
    ("LM", "-1\n-2\n-3\n-4\n", "lm:4: more values than the 3 hypotheses of nbest"),
    ("LM", "-1\nnan\n-3\n", "lm:2: value is 'nan'; expected a finite number"),
    ("LM", "-1\n\n-3\n", "lm:2: expected one number on the line"),
    ("LM", "-1 -2\n", "lm:1: expected one value per line or 'id rank value', found 2 fields"),
    ("LM", "", "lm: empty file; expected a value for each of the 3 hypotheses of nbest"),
    ("LM", "0 0 1\n0 1 2\n", "lm: no value for sentence 1, rank 0 of nbest (1 of its 3 hypotheses have none)"),
    ("LM", "0 0 1\n0 1 2\n0 0 3\n", "lm:3: sentence 0, rank 0 given twice (first on line 1)"),
    ("LM", "0 0 1\n0 2 2\n", "lm:2: sentence 0, rank 2 is not in nbest (sentence 0 has 2 hypotheses"),
    ("LM", "0 0 1\n7 0 2\n", "lm:2: sentence 7, rank 0 is not in nbest (sentence 7 has 0 hypotheses"),
    ("LM", "0 -1 1\n", "lm:1: expected a non-negative integer rank, got '-1'"),
    ("LM", "0 0 1\n99999999999999999999 0 2\n", "lm:2: sentence 99999999999999999999, rank 0 is not in nbest"),
    ("LM", "0 0 1\n0 1\n", "lm:2: expected 'id rank value', found 2 fields"),
    ("LM", "0 0 inf\n", "lm:1: value is 'inf'"),
    ("F0", "1\n2\n3\n", "nbest: already has a feature F0"),
    ("WT_a~b", "1\n2\n3\n", "nbest: already has a feature WT_a~b"),
]


@pytest.mark.parametrize("name,content,message", BAD)
def test_bad_feature_files_write_nothing(write, run, tmp_path, name, content, message):
    out = tmp_path / "out"
    out.write_text("old\n")
    rc, stdout, err = run("--nbest", write("nbest", NBEST), "--feature", f"{name}={write('lm', content)}",
                          "-o", str(out))
    assert rc == EXIT_INPUT_ERROR and stdout == "" and out.read_text() == "old\n"
    assert err.count("\n") == 1 and message in err and "Traceback" not in err, err


@pytest.mark.parametrize("args,message", [
    (["--feature", "LM=a", "--feature", "LM=b"], "--feature names LM twice"),
    (["--feature", "LM"], "expected NAME=FILE"),
    (["--feature", "L M=x"], "expected NAME=FILE"),
    (["--feature", "LM=nope"], "nope: no such file"),
])
def test_bad_feature_options(write, run, args, message):
    rc, out, err = run("--nbest", write("nbest", NBEST), *args)
    assert rc == EXIT_INPUT_ERROR and out == "" and message in err and err.count("\n") == 1, err


def test_bad_nbest_named_by_its_own_line(write, run):
    lm = write("lm", "1\n2\n")
    rc, _, err = run("--nbest", write("nbest", "1 ||| a ||| F= 1\n0 ||| b ||| F= 2\n"), "-f", f"LM={lm}")
    assert rc == EXIT_INPUT_ERROR and "nbest:2: sentence id 0 is smaller" in err
    rc, _, err = run("--nbest", write("gen.out", "H-0\t-1\ta\n"), "-f", f"LM={lm}")
    assert rc == EXIT_INPUT_ERROR and "gen.out:1: H-0 has no D-0 line after it" in err, err


def test_output_place_checked_first_and_symlink_written_through(write, run, tmp_path):
    rc, _, err = run("--nbest", str(tmp_path / "missing"), "-o", str(tmp_path))
    assert rc == EXIT_INPUT_ERROR and "is a directory" in err
    target = tmp_path / "target"
    link = tmp_path / "link"
    link.symlink_to(target)
    rc, _, _ = run("--nbest", write("nbest", NBEST), "-o", str(link))
    assert rc == 0 and os.path.islink(link) and target.read_text().startswith("0 ||| a house")


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=5), st.randoms(use_true_random=False))
def test_keyed_and_per_line_files_agree(tmp_path_factory, sizes, rng):
    """The same values given per line and as shuffled 'id rank value' lines join equally."""
    d = tmp_path_factory.mktemp("join")
    lines, keyed = [], []
    for sid, size in enumerate(sizes):
        for rank in range(size):
            lines.append(f"{sid} ||| w{sid} h{rank} ||| F0= {rank}\n")
            keyed.append(f"{sid}\t{rank}\t{rng.uniform(-5, 5)!r}\n")
    rng.shuffle(keyed)
    values = {tuple(k.split("\t")[:2]): k.split("\t")[2] for k in keyed}
    per_line = [values[(ln.split()[0], str(i - next(j for j, x in enumerate(lines) if x.split()[0] == ln.split()[0])))]
                for i, ln in enumerate(lines)]
    (d / "nbest").write_text("".join(lines))
    (d / "keyed").write_text("".join(keyed))
    (d / "lines").write_text("".join(per_line))
    outs = []
    for name in ("keyed", "lines"):
        assert main(["join-features", "-q", "--nbest", str(d / "nbest"), "-f", f"X={d / name}",
                     "-o", str(d / f"out.{name}")]) == 0
        outs.append((d / f"out.{name}").read_text())
    assert outs[0] == outs[1] and outs[0].count("X= ") == len(lines)
