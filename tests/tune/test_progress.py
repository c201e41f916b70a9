"""Progress bars: drawn on a terminal, absent with --quiet or when stderr is not a terminal."""

from __future__ import annotations

import fcntl
import os
import pty
import shlex
import struct
import subprocess
import sys
import termios
from pathlib import Path
REPO = Path(__file__).resolve().parents[2]
TOY = REPO / "mtplug" / "data" / "example"
INI = "[weight]\nDistortion0= 0.3\nLM0= 0.5\nWordPenalty0= -1\nPhrasePenalty0= 0.2\nTranslationModel0= 0.2 0.2 0.2 0.2\n"


def tune_command(tmp_path, *extra) -> list[str]:
    src = tmp_path / "dev.src"
    src.write_text("".join(f"s{i}\n" for i in range(60)))
    (tmp_path / "moses.ini").write_text(INI)
    standin = shlex.join([sys.executable, "-m", "mtplug.tuning.standin", "moses", "-standin-source", str(src)])
    return [sys.executable, "-m", "mtplug", "tune", "--decoder", "moses", "--decoder-bin", standin,
            "--decoder-config", str(tmp_path / "moses.ini"), "--input", str(src), "--ref", str(TOY / "ref.0"),
            "--optimizer", "kbmira", "--passes", "3", "--iterations", "1", "--nbest-size", "5", "--jobs", "2",
            "--workdir", str(tmp_path / "wd"), *extra]


def stderr_on_a_terminal(cmd: list[str]) -> str:
    """Run ``cmd`` with stderr on a pseudo-terminal of 120 columns; returns what it drew."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=slave, env=env)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    assert proc.wait(timeout=120) == 0, out.decode("utf-8", "replace")[-2000:]
    return out.decode("utf-8", "replace")


def test_bar_on_a_terminal(tmp_path):
    drawn = stderr_on_a_terminal(tune_command(tmp_path))
    frames = [f for f in drawn.replace("\r\n", "\n").split("\r") if f.startswith("iteration 1:") and "%|" in f]
    assert frames, drawn[-1000:]
    # decoding shards (2) and the optimizer's passes (3) from each of the two starts that
    # kbmira's default start_scale may run (docs/mira.md, "The start's scale") are the bar's units
    assert any("| 0/8 " in f for f in frames) and "iteration 1: BLEU = " in drawn


def test_no_bar_when_quiet_or_not_a_terminal(tmp_path):
    drawn = stderr_on_a_terminal(tune_command(tmp_path, "--quiet"))
    assert drawn == ""
    (tmp_path / "piped").mkdir()
    p = subprocess.run(tune_command(tmp_path / "piped"), capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "%|" not in p.stderr and "iteration 1: BLEU = " in p.stderr

