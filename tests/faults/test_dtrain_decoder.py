"""Faults of mtplug dtrain's persistent decoder (decoder_process=persistent): a crash, a hang, an
answer that is not a k-best list and a SIGTERM each end the run with one line, no traceback
and no decoder process (nor a child of it) left running; tests/faults/faulty_cdec.py plays
the decoder."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.dtrain.conftest import toy  # noqa: F401 - fixture
from tests.faults.test_faults import alive, one_error_line

REPO = Path(__file__).resolve().parents[2]
FAULTY = Path(__file__).resolve().parent / "faulty_cdec.py"


@pytest.fixture
def run_dtrain(toy, tmp_path):  # noqa: F811
    """run_dtrain(fault, after, *flags) -> the Popen of mtplug dtrain over the toy set, its
    decoder the faulty stand-in with FAULT=fault after ``after`` answers."""

    def start(fault: str, after: int, *flags: str) -> subprocess.Popen:
        decoder = shlex.join([sys.executable, "-S", str(FAULTY), "-standin-pool", toy["pool"],
                              "-standin-source", toy["source_file"]])
        env = {**os.environ, "FAULT": fault, "FAULT_AFTER": str(after), "FAULT_PIDS": str(tmp_path / "pids"),
               "PYTHONPATH": str(REPO)}
        argv = [sys.executable, "-m", "mtplug", "dtrain", "-q", "--input", toy["input"], "--ref", toy["refs"],
                "--decoder-config", toy["cdec_ini"], "--weights", toy["weights"], "--epochs", "1",
                "--decoder-bin", decoder, "-o", str(tmp_path / "w.txt"), *flags]
        return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                cwd=tmp_path)

    return start


def decoder_pids(tmp_path: Path) -> list[int]:
    path = tmp_path / "pids"
    return [int(x) for x in path.read_text().split()] if path.exists() else []


def assert_none_left(pids: list[int]) -> None:
    assert len(pids) == 2, pids          # the decoder and the child it started
    deadline = time.monotonic() + 5      # a child killed with its group is reaped by init
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in pids if alive(p)], "decoder processes left running"


def test_a_crash_is_one_line(run_dtrain, tmp_path):
    proc = run_dtrain("crash", 3)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2
    line = one_error_line(err)
    assert line.startswith("mtplug: error: the decoder exited with status 3 on shard 0 after 3 sentences: ")
    assert "--mr_mira_compat" in line and line.endswith("; its stderr ends 'faulty_cdec: crashed on purpose'")
    assert not (tmp_path / "w.txt").exists()
    assert_none_left(decoder_pids(tmp_path))


def test_a_hang_ends_at_the_decoder_timeout(run_dtrain, tmp_path):
    t0 = time.monotonic()
    proc = run_dtrain("hang", 2, "--decoder-timeout", "3")
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2
    line = one_error_line(err)
    assert line.startswith("mtplug: error: the decoder gave no answer within decoder_timeout 3 s on shard 0 "
                           "(sentence 3 of its process) and was stopped (its process group killed): ")
    assert time.monotonic() - t0 >= 3
    assert_none_left(decoder_pids(tmp_path))


def test_an_answer_that_is_no_kbest_list(run_dtrain, tmp_path):
    proc = run_dtrain("garbage", 1)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2
    line = one_error_line(err)
    assert line.startswith("mtplug: error: the decoder on shard 0 answered b'not a k-best list', not a k-best "
                           "list of --mr_mira_compat (does the decoder take that flag? decoder_process=per_call")
    assert_none_left(decoder_pids(tmp_path))


def test_a_crash_in_one_of_several_shards(run_dtrain, tmp_path):
    """With shards in threads, the shard whose decoder crashed is named and every other
    shard's decoder is stopped too (each writes the pids file; the last one is checked)."""
    proc = run_dtrain("crash", 4, "--shards", "2", "--jobs", "2")
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2
    assert "the decoder exited with status 3 on shard " in one_error_line(err)
    assert_none_left(decoder_pids(tmp_path))


def test_sigterm_stops_the_persistent_decoder(run_dtrain, tmp_path):
    proc = run_dtrain("hang", 2)
    deadline = time.monotonic() + 60
    while len(decoder_pids(tmp_path)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert one_error_line(err) == "mtplug: interrupted by SIGTERM"
    assert_none_left(decoder_pids(tmp_path))
