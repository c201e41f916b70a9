"""Issue 36, item 3 beyond tune: every command that writes files (extract, optimize, kbest,
rerank, evaluate, example, and the Moses programs extractor, mert, kbmira, pro) ends a full
disk, a read-only or a forbidden place in one line naming the path (``mtplug: error: PATH:
...`` or the Moses program's ``PROG: error: PATH: ...``), exit status 2, no traceback, and
nothing half-written: the old file is kept and no temporary file is left. The full disk and
the read-only place are a small tmpfs (root only: skipped with that reason otherwise);
/dev/full, a refused rename and stdout on /dev/full run everywhere."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mtplug.cli import main
from mtplug.integrations.moses.__main__ import main as moses_main
from tests.conftest import EXAMPLE, REPO

NBEST = "0 ||| a b c ||| LM0= -1 TM0= 1 2 ||| 0\n0 ||| a b d ||| LM0= -2 TM0= 1 1 ||| 0\n1 ||| x y ||| LM0= -1 TM0= 0 1 ||| 0\n"
REF = "a b c\nx y\n"
INIT = "0.5 0.2 0.2\n"
FULL = "No space left on device (nothing was written; free some space and run again)"


def one_error_line(err: str) -> str:
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture
def small(tmp_path):
    """``fs(kind)``: a mounted tmpfs, ``"full"`` (every block taken by a filler file) or
    ``"ro"`` (read-only); unmounted after the test. Skips where mounting needs root."""
    points = []

    def fs(kind: str) -> Path:
        if os.geteuid() != 0:
            pytest.skip("mounting a tmpfs needs root")
        point = tmp_path / f"fs{len(points)}"
        point.mkdir()
        p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(point)],
                           check=False, capture_output=True, text=True)
        if p.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {p.stderr.strip()}")
        points.append(point)
        (point / "old").write_text("old\n")     # a file an output replaces
        if kind == "full":
            with open(point / "filler", "wb", buffering=0) as fh:
                try:
                    while fh.write(b"\0" * 4096):
                        pass
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC
        else:
            subprocess.run(["mount", "-o", "remount,ro", str(point)], check=True)
        return point

    yield fs
    for point in points:
        subprocess.run(["umount", "-l", str(point)], check=False)


def left_over(point: Path) -> list[str]:
    """Files in ``point`` other than the filler and the old file (temporary files, outputs)."""
    return sorted(p.name for p in point.iterdir() if p.name not in ("filler", "old"))


@pytest.fixture
def inputs(write):
    return write("nbest", NBEST), write("ref", REF), write("init", INIT)


def optimize(inputs, out):
    nb, ref, init = inputs
    return main(["optimize", "none", "-q", "--nbest", nb, "--ref", ref, "--weights", init, "--output", str(out)])


# ------------------------------------------------------------------------ mtplug commands
def test_extract_on_a_full_disk(small, capsys):
    fs = small("full")
    rc = main(["extract", "-q", "--nbest", str(EXAMPLE / "run1.best100.out.gz"), "--ref", str(EXAMPLE / "ref.0"),
               "--ffile", str(fs / "f.dat"), "--scfile", str(fs / "s.dat")])
    assert rc == 2
    assert one_error_line(capsys.readouterr().err) == f"mtplug: error: {fs / 's.dat'}: {FULL}"
    assert left_over(fs) == []           # neither file, no temporary file
    rc = main(["extract", "-q", "--nbest", str(EXAMPLE / "run1.best100.out.gz"), "--ref", str(EXAMPLE / "ref.0"),
               "--store", str(fs / "old")])
    assert rc == 2
    assert one_error_line(capsys.readouterr().err) == f"mtplug: error: {fs / 'old'}: {FULL}"
    assert (fs / "old").read_text() == "old\n" and left_over(fs) == []


def test_extract_into_a_read_only_place_is_refused_before_reading(small, capsys, tmp_path):
    fs = small("ro")
    rc = main(["extract", "-q", "--nbest", str(tmp_path / "never-read"), "--ref", str(EXAMPLE / "ref.0"),
               "--ffile", str(fs / "f.dat")])
    assert rc == 2
    assert one_error_line(capsys.readouterr().err) == (f"mtplug: error: {fs / 'f.dat'}: cannot write the --ffile "
                                                       f"output in {fs} (Read-only file system)")


def test_optimize_on_a_full_disk_keeps_the_old_file(small, inputs, capsys):
    fs = small("full")
    assert optimize(inputs, fs / "old") == 2
    assert one_error_line(capsys.readouterr().err) == f"mtplug: error: {fs / 'old'}: {FULL}"
    assert (fs / "old").read_text() == "old\n" and left_over(fs) == []


def test_optimize_into_a_read_only_place(small, inputs, capsys):
    fs = small("ro")
    assert optimize(inputs, fs / "w.txt") == 2
    assert one_error_line(capsys.readouterr().err) == (f"mtplug: error: {fs / 'w.txt'}: cannot write the --output "
                                                       f"output in {fs} (Read-only file system)")


def test_kbest_rerank_and_evaluate_on_a_full_disk(small, write, capsys):
    fs = small("full")
    plf = write("dev.plf", "((('a',0.5,1),('b',0.25,1),),)\n")
    weights = write("w", "LatticeCost_0 1\n")
    assert main(["kbest", "-q", "--forests", plf, "--weights", weights, "--nbest-size", "2", "--output", str(fs / "kb")]) == 2
    assert one_error_line(capsys.readouterr().err) == f"mtplug: error: {fs / 'kb'}: {FULL}"
    nbest, ref = write("nbest", NBEST), write("ref", REF)
    assert main(["rerank", "-q", "--nbest", nbest, "--weights", write("init", INIT), "--output", str(fs / "old")]) == 2
    assert one_error_line(capsys.readouterr().err) == f"mtplug: error: {fs / 'old'}: {FULL}"
    hyps = [write(f"h{k}", REF) for k in range(2)]
    assert main(["evaluate", "-q", "--ref", ref, "--hyps-baseline", *hyps, "--json", str(fs / "r.json")]) == 2
    assert one_error_line(capsys.readouterr().err) == f"mtplug: error: {fs / 'r.json'}: {FULL}"
    assert (fs / "old").read_text() == "old\n" and left_over(fs) == []


def test_example_keep_on_a_full_disk(small, capsys):
    fs = small("full")
    assert main(["example", "-q", "--keep", str(fs / "ex")]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert line.startswith(f"mtplug: error: {fs / 'ex'}/") and line.endswith(FULL), line
    assert not [p for p in (fs / "ex").iterdir() if p.name.endswith(".tmp")]


# ------------------------------------------------------------- everywhere (no mount needed)
def test_a_special_file_that_is_full(inputs, capsys):
    assert optimize(inputs, "/dev/full") == 2
    assert one_error_line(capsys.readouterr().err) == f"mtplug: error: /dev/full: {FULL}"


def test_stdout_on_a_full_disk(write):
    with open("/dev/full", "w") as full:
        p = subprocess.run([sys.executable, "-m", "mtplug", "score", "--hyp", write("h", REF), "--ref",
                            write("ref", REF)], check=False, stdout=full, stderr=subprocess.PIPE, text=True,
                           env={**os.environ, "PYTHONPATH": str(REPO)})
    assert p.returncode == 2
    assert one_error_line(p.stderr) == f"mtplug: error: stdout: {FULL}"


def test_a_refused_rename_names_the_output_and_leaves_no_temporary_file(inputs, tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    (out / "w.txt").write_text("old\n")

    def refuse(src, dst):
        raise PermissionError(errno.EACCES, "Permission denied", src, None, dst)

    monkeypatch.setattr(os, "replace", refuse)
    assert optimize(inputs, out / "w.txt") == 2
    assert one_error_line(capsys.readouterr().err) == f"mtplug: error: {out / 'w.txt'}: Permission denied"
    assert sorted(p.name for p in out.iterdir()) == ["w.txt"] and (out / "w.txt").read_text() == "old\n"


# ------------------------------------------------------------------------ Moses programs
def call(prog, *argv, cwd, capfd):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        try:
            rc = moses_main([prog, *map(str, argv)])
        except SystemExit as stop:
            rc = stop.code
    finally:
        os.chdir(old)
    return rc, capfd.readouterr().err


def test_moses_programs_into_a_read_only_place_are_refused_before_reading(small, tmp_path, capfd):
    fs = small("ro")
    missing = tmp_path / "never-read"
    rc, err = call("extractor", "--sctype", "BLEU", "--reference", missing, "--nbest", missing,
                   "--ffile", fs / "f.dat", "--scfile", fs / "s.dat", cwd=tmp_path, capfd=capfd)
    assert rc == 2 and one_error_line(err) == (f"extractor: error: {fs / 'f.dat'}: cannot write the --ffile output "
                                               f"in {fs} (Read-only file system)")
    rc, err = call("mert", "--ffile", missing, "--scfile", missing, "-d", "8", cwd=fs, capfd=capfd)
    assert rc == 2 and err.splitlines()[-1] == (f"mert: error: weights.txt: cannot write the weights in {fs} "
                                                "(Read-only file system)"), err
    for prog in ("kbmira", "pro"):
        rc, err = call(prog, "--ffile", missing, "--scfile", missing, "-o", fs / "w", cwd=tmp_path, capfd=capfd)
        assert rc == 2 and err.splitlines()[-1] == (f"{prog}: error: {fs / 'w'}: cannot write the --output-file "
                                                    f"in {fs} (Read-only file system)"), err


def test_moses_programs_on_a_full_disk(small, tmp_path, capfd):
    fs = small("full")
    nbest, ref = str(EXAMPLE / "run1.best100.out.gz"), str(EXAMPLE / "ref.0")
    rc, err = call("extractor", "--sctype", "BLEU", "--reference", ref, "--nbest", nbest,
                   "--ffile", fs / "f.dat", "--scfile", fs / "s.dat", cwd=tmp_path, capfd=capfd)
    assert rc == 2 and one_error_line(err) == f"extractor: error: {fs / 's.dat'}: {FULL}"
    # the inputs of the optimizers, written where there is room
    rc, err = call("extractor", "--sctype", "BLEU", "--reference", ref, "--nbest", nbest,
                   "--ffile", "f.dat", "--scfile", "s.dat", cwd=tmp_path, capfd=capfd)
    assert rc == 0, err
    f, s = tmp_path / "f.dat", tmp_path / "s.dat"
    rc, err = call("mert", "--sctype", "BLEU", "--ffile", f, "--scfile", s, "-n", "1", "-d", "8",
                   "--ifile", EXAMPLE / "run1.init.opt", cwd=fs, capfd=capfd)
    # mert logs as Moses's does; the error is its last line
    assert rc == 2 and "Traceback" not in err and err.splitlines()[-1] == f"mert: error: weights.txt: {FULL}", err
    for prog, init in (("kbmira", ["--dense-init", EXAMPLE / "run1.init.opt"]), ("pro", [])):
        rc, err = call(prog, *init, "--ffile", f, "--scfile", s, "-o", fs / "old", cwd=tmp_path, capfd=capfd)
        assert rc == 2 and "Traceback" not in err and err.splitlines()[-1] == f"{prog}: error: {fs / 'old'}: {FULL}", err
    assert (fs / "old").read_text() == "old\n" and left_over(fs) == []


# ------------------------------------------------------------------------------- dtrain
from tests.dtrain.conftest import dtrain_ini, standin_command, toy  # noqa: E402, F401 - fixtures


def test_dtrain_into_a_read_only_place_and_on_a_full_disk(small, dtrain_ini, standin_command, capsys):  # noqa: F811
    ini = dtrain_ini(epochs=1, stop_after=3)
    ro = small("ro")
    assert main(["dtrain", "-q", "-c", ini, "--decoder-bin", "never-run", "--output", str(ro / "w.txt")]) == 2
    assert one_error_line(capsys.readouterr().err) == (f"mtplug: error: {ro / 'w.txt'}: cannot write the dtrain "
                                                       f"weights in {ro} (Read-only file system)")
    full = small("full")
    assert main(["dtrain", "-q", "-c", ini, "--decoder-bin", standin_command, "--output", str(full / "old")]) == 2
    assert one_error_line(capsys.readouterr().err) == f"mtplug: error: {full / 'old'}: {FULL}"
    assert (full / "old").read_text() == "old\n" and left_over(full) == []
