"""Faults of a tuning run with the real cdec (MTPLUG_CDEC_DIR; issue 36): SIGTERM while the
real decoder runs, then --resume to the undisturbed run's weights; a decoder that cannot
read its configuration is one line. The decoder is cdec behind a small wrapper that, when
told to, waits before starting cdec in one iteration (a window for the signal) and notes
its pid."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

WRAPPER = '''#!{python}
import os, sys, time
# the shard's input is our stdin: its path names the iteration
where = os.readlink("/proc/self/fd/0") if os.path.exists("/proc/self/fd/0") else ""
if os.environ.get("HOLD_ITERATION") and os.environ["HOLD_ITERATION"] in where:
    with open(os.environ["HOLD_PIDS"], "a") as fh:
        fh.write(f"{{os.getpid()}}\\n")
    time.sleep(300)
os.execv({cdec!r}, [{cdec!r}, *sys.argv[1:]])
'''


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as fh:      # a zombie has ended
        return fh.read().split(")")[-1].split()[0] != "Z"


@pytest.fixture
def wrapper(cdec_dir, tmp_path) -> Path:
    path = tmp_path / "cdec-wrapper"
    path.write_text(WRAPPER.format(python=sys.executable, cdec=str(cdec_dir / "decoder" / "cdec")))
    path.chmod(0o755)
    return path


def tune_argv(decoder: Path, toy, workdir: Path, *extra) -> list[str]:
    return [sys.executable, "-m", "mtplug", "tune", "--decoder", "cdec", "--decoder-bin", str(decoder),
            "--decoder-config", str(toy.config), "--weights", str(toy.weights), "--input", str(toy.dev_src),
            "--ref", str(toy.dev_ref), "--optimizer", "mert", "--restarts", "2", "--iterations", "3",
            "--nbest-size", "50", "--jobs", "2", "--workdir", str(workdir), "--seed", "1", "-q", *extra]


def test_sigterm_during_real_decoding_then_resume(cdec_toy, wrapper, tmp_path):
    whole = subprocess.run(tune_argv(wrapper, cdec_toy, tmp_path / "whole"), capture_output=True, text=True, check=False,
                           timeout=900)
    assert whole.returncode == 0, whole.stderr[-2000:]
    pids = tmp_path / "pids"
    env = {**os.environ, "HOLD_ITERATION": "iter002", "HOLD_PIDS": str(pids)}
    proc = subprocess.Popen(tune_argv(wrapper, cdec_toy, tmp_path / "wd"), env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 600
    while not (pids.exists() and len(pids.read_text().split()) == 2) and time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read()
        time.sleep(0.1)
    held = [int(p) for p in pids.read_text().split()]
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == ["mtplug: interrupted by SIGTERM"]
    deadline = time.monotonic() + 5
    while any(alive(p) for p in held) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in held if alive(p)], "decoders left running"
    resumed = subprocess.run(tune_argv(wrapper, cdec_toy, tmp_path / "wd", "--resume"), capture_output=True, check=False,
                             text=True, timeout=900)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert (tmp_path / "wd" / "final").read_bytes() == (tmp_path / "whole" / "final").read_bytes()


def test_a_real_decoder_that_fails_is_one_line(cdec_dir, cdec_toy, tmp_path):
    config = tmp_path / "broken.ini"
    config.write_text(cdec_toy.config.read_text().replace("grammar=", "grammar=/nonexistent/"))
    argv = tune_argv(cdec_dir / "decoder" / "cdec", cdec_toy, tmp_path / "wd")
    argv[argv.index("--decoder-config") + 1] = str(config)
    p = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    # cdec aborts on an unreadable grammar (an uncaught exception: SIGABRT)
    assert len(lines) == 1 and lines[0].startswith("mtplug: error: the decoder was killed by SIGABRT on shard "), \
        p.stderr
    assert "couldn't read nonexistant file" in lines[0] and "shard" in lines[0]
    assert "Traceback" not in p.stderr
