"""Issue 36: faults a tuning run meets end in one error line and a known exit status, with no
traceback and no decoder process left running, and a signalled run resumes to the same final
weights. ``mtplug tune`` runs as a program (``python -m mtplug``) with the faulty decoder
(tests/faults/faulty_decoder.py: the Moses stand-in with a crash, a hang, a cut n-best line or
a slow start injected); every decoder call writes its pid and its child's pid to a file, and
each case checks them all gone."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mtplug.cli import main
from mtplug.decoders.base import ShardRun
from mtplug.tuning.lock import LOCK_FILE
from mtplug.tuning.loop import read_state, run_shard_remotely
from tests.tune.test_tune import REPO, make_system, moses_args

FAULTY = Path(__file__).resolve().parent / "faulty_decoder.py"


@pytest.fixture
def system(tmp_path):
    return make_system(tmp_path)


def tune_args(system, workdir, *extra, iterations=3):
    """``mtplug tune`` with the faulty decoder, 2 shards."""
    args = moses_args(system, workdir, "--jobs", "2", *extra, iterations=iterations)
    args[args.index("--decoder-bin") + 1] = shlex.join([sys.executable, str(FAULTY), "-standin-source",
                                                        str(system / "dev.src")])
    return args


def start(system, workdir, *extra, iterations=3, **fault):
    """``python -m mtplug tune ...`` started with the faulty decoder configured by ``fault``
    (FAULT=..., FAULT_SHARD=...); decoder pids go to ``system/pids``."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "FAULT_PIDS": str(system / "pids"),
           **{k: str(v) for k, v in fault.items()}}
    return subprocess.Popen([sys.executable, "-m", "mtplug", *tune_args(system, workdir, *extra,
                                                                       iterations=iterations)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_default_signals)


def _default_signals() -> None:
    """In the child: the default actions of the signals the tests send, whatever this test
    run inherited (under ``nohup`` SIGHUP is ignored, and mtplug keeps an ignored signal
    ignored)."""
    for signum in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, signal.SIG_DFL)


def finish(proc, timeout=60):
    """(exit status, stderr, seconds until it ended)."""
    t0 = time.monotonic()
    _, err = proc.communicate(timeout=timeout)
    return proc.returncode, err, time.monotonic() - t0


def one_error_line(err: str) -> str:
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def noted_pids(system, role: str | None = None) -> list[tuple[int, str]]:
    """(pid, iterNNN) of the faulty decoder's processes: ``decoder`` (the process mtplug
    started), ``child`` (the one it started), or both (None)."""
    path = system / "pids"
    if not path.exists():
        return []
    return [(int(pid), where) for pid, where, kind in (line.split() for line in path.read_text().splitlines())
            if role in (None, kind)]


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"   # a zombie has ended
    except FileNotFoundError:
        return False


def assert_no_decoder_left(system, expected: int) -> None:
    pids = [pid for pid, _ in noted_pids(system)]
    assert len(pids) >= expected, pids
    deadline = time.monotonic() + 5    # an orphan killed with its group is reaped by init
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in pids if alive(p)], "decoder processes left running"


def test_a_crash_is_reported_at_once_while_another_shard_hangs(system):
    """Shard 1 crashes at once while shard 0 hangs (300 s): the crash is reported at once and
    shard 0's process group (the wrapper and its child) is killed."""
    proc = start(system, system / "wd", FAULT="crash", FAULT_SHARD=1, FAULT_OTHERS="hang", FAULT_AWAIT=4)
    rc, err, seconds = finish(proc)
    assert rc == 2
    line = one_error_line(err)
    assert line.startswith("mtplug: error: the decoder exited with status 3 on shard 1: "), line
    assert "segmentation fault (injected)" in line and "shard1.err" in line
    assert seconds < 60   # long before the hanging shard would end
    assert_no_decoder_left(system, 4)
    assert not (system / "wd" / LOCK_FILE).exists()   # the lock released after an error


def test_a_hang_ends_at_the_decoder_timeout(system):
    proc = start(system, system / "wd", "--decoder-timeout", "2", FAULT="hang", FAULT_SHARD=1)
    rc, err, _ = finish(proc)
    assert rc == 2
    line = one_error_line(err)
    assert line.startswith("mtplug: error: the decoder ran longer than --decoder-timeout 2 s on shard 1 and was "
                           "stopped"), line
    assert str(FAULTY) in line and "shard1.in" in line   # the command
    assert_no_decoder_left(system, 2)
    assert read_state(str(system / "wd")) is None   # nothing committed


def test_a_cut_nbest_line_is_refused(system):
    """The last line of shard 1's n-best lost its score field; the decoder exited 0."""
    proc = start(system, system / "wd", FAULT="partial", FAULT_SHARD=1)
    rc, err, _ = finish(proc)
    assert rc == 2
    line = one_error_line(err)
    nbest = next((system / "wd" / "iter001").glob("decode-*/shard1.nbest"))
    n_lines = len(nbest.read_text().splitlines())
    assert line == (f"mtplug: error: {nbest}:{n_lines}: expected 4 ' ||| '-separated fields as the file's other "
                    f"lines have, found 3 (a line cut short: did the decoder die while writing?)")
    assert_no_decoder_left(system, 2)    # the child the wrapper left went with its group


def test_a_slow_decoder_within_the_timeout_is_waited_for(system):
    """Two shards of 1.5 s within --decoder-timeout 2.5: the run goes on; the children the
    wrappers left behind are killed with their process groups."""
    proc = start(system, system / "wd", "--decoder-timeout", "2.5", iterations=1, FAULT="slow", FAULT_SLEEP=1.5)
    rc, err, _ = finish(proc)
    assert rc == 0, err
    assert err == ""
    assert read_state(str(system / "wd"))["completed"] == 1
    assert_no_decoder_left(system, 4)


@pytest.mark.parametrize("lines, bad", [
    (["0 ||| a b ||| LM0= -1 ||| -1", "0 ||| a ||| LM0= -2 ||| -2", "1 ||| c ||| LM0= -1"], (3, 4, 3)),
    (["0 ||| a b ||| LM0= -1 ||| -1", "0 |||  |||  ||| -2", "", "1 ||| c ||| LM0= -1 ||| -3"], None),
    (["0 ||| a ||| ||| -1", "1 ||| b ||| x=1 ||| -2"], None),                  # an empty field, one blank
    (["0 ||| a ||| f ||| -1 ||| 0-0 ", "1 ||| ||| f ||| -2 ||| "], None),      # alignments, one empty
    (["0 ||| a ||| f ||| -1", "0 ||| a ||| f"], (2, 4, 3)),                    # equally many: the larger
])
def test_field_counts_of_one_decoder_output(lines, bad):
    from mtplug.errors import InputError
    from mtplug.tuning.loop import _check_field_counts

    if bad is None:
        _check_field_counts(lines, "f.nbest")
        return
    with pytest.raises(InputError) as caught:
        _check_field_counts(lines, "f.nbest")
    line, expected, found = bad
    assert str(caught.value).startswith(f"f.nbest:{line}: expected {expected} ' ||| '-separated fields as the "
                                        f"file's other lines have, found {found} ")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_stops_the_decoders_and_resume_ends_identically(system, signum, capsys):
    """SIGTERM/SIGHUP (and SIGINT: the decoders run in sessions of their own, out of reach of
    a terminal's Ctrl-C) while iteration 2's (slow) decoders run: one line, exit status 130,
    no decoder left, and --resume ends with the undisturbed run's final weights."""
    assert main(tune_args(system, system / "ref")) == 0
    capsys.readouterr()
    proc = start(system, system / "wd", FAULT="slow", FAULT_SLEEP=30, FAULT_ITERATION="iter002")
    deadline = time.monotonic() + 60
    while sum(where == "iter002" for _, where in noted_pids(system)) < 4:   # both shards and their children
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(signum)
    rc, err, seconds = finish(proc)
    assert rc == 130
    by = "" if signum == signal.SIGINT else f" by {signal.Signals(signum).name}"
    assert one_error_line(err) == f"mtplug: interrupted{by}"
    assert seconds < 20    # the decoders' 30 s were not waited for
    assert_no_decoder_left(system, 4)
    assert not (system / "wd" / LOCK_FILE).exists()   # the lock released
    assert read_state(str(system / "wd"))["completed"] == 1
    proc = start(system, system / "wd", "--resume")
    rc, err, _ = finish(proc)
    assert rc == 0, err
    assert (system / "wd" / "final").read_bytes() == (system / "ref" / "final").read_bytes()
    assert read_state(str(system / "wd"))["weights"] == read_state(str(system / "ref"))["weights"]


def test_a_sighup_ignored_at_start_stays_ignored(system):
    """Under nohup (SIGHUP ignored when mtplug starts) a hang-up does not end the run."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "FAULT_PIDS": str(system / "pids"), "FAULT": "slow",
           "FAULT_SLEEP": "2", "FAULT_ITERATION": "iter001"}
    argv = [sys.executable, "-m", "mtplug", *tune_args(system, system / "wd", iterations=1)]
    proc = subprocess.Popen(["nohup", *argv], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_default_signals)
    deadline = time.monotonic() + 60
    while len(noted_pids(system)) < 4:     # both shards and their children: mtplug's handlers are set
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(signal.SIGHUP)
    rc, err, _ = finish(proc)
    assert rc == 0, err
    assert read_state(str(system / "wd"))["completed"] == 1


@pytest.mark.parametrize("value, message", [
    ("-1", "--decoder-timeout must be a number of seconds > 0, got -1.0"),
    ("0", "--decoder-timeout must be a number of seconds > 0, got 0.0"),
    ("nan", "--decoder-timeout must be a number of seconds > 0, got nan"),
    ("inf", "--decoder-timeout must be a number of seconds > 0, got inf"),
])
def test_bad_decoder_timeouts(system, value, message, capsys):
    assert main(tune_args(system, system / "wd", "--decoder-timeout", value)) == 2
    assert one_error_line(capsys.readouterr().err) == f"mtplug: error: {message}"
    assert not (system / "wd").exists()


def test_bad_decoder_timeout_in_yaml(system, capsys):
    (system / "tune.yaml").write_text("decoder_timeout: -3\n")
    assert main([*tune_args(system, system / "wd"), "--yaml", str(system / "tune.yaml")]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert line == (f"mtplug: error: {system / 'tune.yaml'}:1: decoder_timeout must be a number of seconds > 0, "
                    "got -3.0")


def test_the_default_timeout_is_in_help(capsys):
    assert main(["tune", "--help"]) == 0
    assert "(default 86400: 24 hours" in " ".join(capsys.readouterr().out.split())


def test_a_shard_on_a_dask_worker_times_out_too(tmp_path):
    """What a dask worker runs for a shard: stopped at the timeout with its process group."""
    pids = tmp_path / "pids"
    run = ShardRun(["sh", "-c", f"sleep 300 & echo $$ $! > {pids}; sleep 300"], None, str(tmp_path / "out"),
                   str(tmp_path / "out"))
    t0 = time.monotonic()
    _, _, timed_out = run_shard_remotely((run, str(tmp_path / "err"), 2.0))   # time for sh to note the pids
    assert timed_out and time.monotonic() - t0 < 30
    noted = [int(p) for p in pids.read_text().split()]
    deadline = time.monotonic() + 5    # a killed process may take a moment to die on a loaded machine
    while any(alive(p) for p in noted) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(noted) == 2 and not [p for p in noted if alive(p)]


# ---------------------------------------------------------------- a full disk, a read-only place
@pytest.fixture
def small_fs(tmp_path):
    """A mount point for a tmpfs of the test's size: ``mount(size, *options)``; unmounted after."""
    point = tmp_path / "fs"
    point.mkdir()
    mounted = []

    def mount(size: str, *options: str) -> Path:
        if os.geteuid() != 0:
            pytest.skip("mounting a tmpfs needs root")
        action = ["-o", ",".join(["remount", f"size={size}", *options])] if mounted else \
            ["-t", "tmpfs", "-o", ",".join([f"size={size}", *options]), "tmpfs"]
        p = subprocess.run(["mount", *action, str(point)], capture_output=True, text=True, check=False)
        if p.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {p.stderr.strip()}")
        mounted.append(True)
        return point

    yield mount
    if mounted:
        subprocess.run(["umount", "-l", str(point)], check=False)


def test_a_full_disk_is_one_line_and_resume_ends_identically(system, small_fs, capsys):
    assert main(tune_args(system, system / "ref")) == 0
    capsys.readouterr()
    wd = small_fs("420k") / "wd"    # iteration 1 fits, iteration 2 does not
    rc, err, _ = finish(start(system, wd))
    assert rc == 2
    line = one_error_line(err)       # the file being written when the disk filled up (else the workdir)
    assert line.startswith(f"mtplug: error: {wd}") and "No space left on device" in line and line.endswith(
        "; free some space, then --resume continues after the last completed iteration"), line
    assert read_state(str(wd))["completed"] == 1
    assert not list(wd.rglob("*.tmp"))             # nothing half-written
    small_fs("20m")
    rc, err, _ = finish(start(system, wd, "--resume"))
    assert rc == 0, err
    assert (wd / "final").read_bytes() == (system / "ref" / "final").read_bytes()


def test_a_read_only_workdir_is_found_before_decoding(system, small_fs, capsys, monkeypatch):
    monkeypatch.setenv("FAULT", "crash")       # a decoder that ran would note its pid
    monkeypatch.setenv("FAULT_PIDS", str(system / "pids"))
    place = small_fs("1m")
    (place / "wd").mkdir()
    small_fs("1m", "ro")
    existing = f"{place / 'wd'}: cannot write in the working directory (Read-only file system)"
    for wd, message in [(place / "wd", existing), (place / "new", f"{place / 'new'}: Read-only file system")]:
        assert main(tune_args(system, wd)) == 2
        assert one_error_line(capsys.readouterr().err) == f"mtplug: error: {message}"
    assert not (system / "pids").exists()           # no decoder ran
