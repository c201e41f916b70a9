"""Where outputs go (issue 19, defect 7): through symlinks, straight into special files,
``-`` as stdout, and a place that cannot take a file refused before any work."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading

import pytest

from mtplug.cli import EXIT_INPUT_ERROR, main
from mtplug.errors import InputError
from mtplug.fileio import atomic_output, check_output

NBEST = "0 ||| a b c ||| LM0= -1 TM0= 1 2 ||| 0\n0 ||| a b d ||| LM0= -2 TM0= 1 1 ||| 0\n1 ||| x y ||| LM0= -1 TM0= 0 1 ||| 0\n"
REF = "a b c\nx y\n"
INIT = "0.5 0.2 0.2\n"


@pytest.fixture
def inputs(write):
    return write("nbest", NBEST), write("ref", REF), write("init", INIT)


def optimize(inputs, out, *extra):
    nb, ref, init = inputs
    return main(["optimize", "none", "-q", "--nbest", nb, "--ref", ref, "--weights", init, "--output", out, *extra])


def test_symlink_is_written_through(inputs, tmp_path):
    target = tmp_path / "real.txt"
    target.write_text("old\n")
    os.chmod(target, 0o640)
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    assert optimize(inputs, str(link)) == 0
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == "0.5 0.2 0.2 \n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    # a dangling link creates its target, as a shell redirection would
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "new.txt")
    assert optimize(inputs, str(dangling)) == 0
    assert dangling.is_symlink() and (tmp_path / "new.txt").read_text() == "0.5 0.2 0.2 \n"


def test_special_files_are_written_directly(inputs, tmp_path):
    # /dev/null stays a character device (writing as root must never replace it)
    assert optimize(inputs, "/dev/null") == 0
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo).read()))
    reader.start()
    assert optimize(inputs, str(fifo)) == 0
    reader.join(timeout=30)
    assert got == ["0.5 0.2 0.2 \n"] and stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_dash_and_dev_stdout_are_stdout(inputs, tmp_path):
    nb, ref, init = inputs
    for out in ("-", "/dev/stdout"):
        p = subprocess.run([sys.executable, "-m", "mtplug", "optimize", "none", "-q", "--nbest", nb, "--ref", ref,
                            "--weights", init, "--output", out], capture_output=True, text=True, cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        assert p.stdout.startswith("0.5 0.2 0.2 \n")
        assert not (tmp_path / "-").exists()
    # redirected to a file: /dev/stdout must not replace that file (the shell holds it open)
    with open(tmp_path / "redirected", "w") as fh:
        fh.write("")
        p = subprocess.run([sys.executable, "-m", "mtplug", "optimize", "none", "-q", "--nbest", nb, "--ref", ref,
                            "--weights", init, "--output", "/dev/stdout"], stdout=fh, stderr=subprocess.PIPE, text=True)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "redirected").read_text().startswith("0.5 0.2 0.2 \n")


@pytest.mark.parametrize("place, message", [
    ("DIR", "is a directory; expected a file path for the --output output"),
    ("DIR/missing/out.txt", "cannot write the --output output: no such folder DIR/missing"),
    ("/sys/out.txt", "cannot write the --output output in /sys (Permission denied)"),
])
def test_unusable_places_are_refused_before_the_work(inputs, tmp_path, capsys, monkeypatch, place, message):
    import mtplug.optimizers.none as none_module

    ran = []
    monkeypatch.setattr(none_module.KeepStart, "optimize", lambda *a, **k: ran.append(1))
    out = place.replace("DIR", str(tmp_path))
    assert optimize(inputs, out) == EXIT_INPUT_ERROR
    err = capsys.readouterr().err
    assert err == f"mtplug: error: {out}: {message.replace('DIR', str(tmp_path))}\n"
    assert not ran


def test_extract_checks_every_output_and_needs_one(inputs, tmp_path, capsys):
    nb, ref, _ = inputs
    assert main(["extract", "-q", "--nbest", nb, "--ref", ref]) == EXIT_INPUT_ERROR
    assert "extract writes nothing" in capsys.readouterr().err
    assert main(["extract", "-q", "--nbest", nb, "--ref", ref, "--ffile", str(tmp_path / "f"), "--scfile",
                 str(tmp_path)]) == EXIT_INPUT_ERROR
    assert "is a directory" in capsys.readouterr().err and not (tmp_path / "f").exists()
    assert main(["extract", "-q", "--nbest", nb, "--ref", ref, "--ffile", "-", "--scfile", "-"]) == EXIT_INPUT_ERROR
    assert "--ffile and --scfile name the same stream" in capsys.readouterr().err


def test_atomic_output_to_dash_writes_stdout(capsys):
    with atomic_output("-") as fh:
        fh.write("x\n")
    assert capsys.readouterr().out == "x\n"
    check_output("-")
    with pytest.raises(InputError, match="empty path"):
        check_output("")
