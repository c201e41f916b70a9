"""Issue 36, items 4 and 5: one run per working directory (DIR/tune.lock) and a tampered
state. A second run on a held workdir is refused with one line before any decoding; a
killed run's lock (and its decoders: they die with mtplug on Linux) is taken over by the
next run with one line; ``--resume`` refuses a state of the wrong shape or one naming
iterations whose folders are missing, and rebuilds a store that is not the run's (or is
corrupt) from the kept n-best lists, ending bit-identically with an undisturbed run."""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest

from mtplug.cli import main
from mtplug.tuning.lock import LOCK_FILE, acquire
from mtplug.tuning.loop import read_state
from tests.faults.test_faults import alive, finish, noted_pids, one_error_line, start, tune_args
from tests.tune.test_tune import make_system

HOST = socket.gethostname()


def wait_for_decoders(system, proc, where: str, count: int) -> None:
    deadline = time.monotonic() + 60
    while len(noted_pids(system, "decoder")) < count or not all(w == where for _, w in noted_pids(system)):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)


def kill_children(system) -> None:
    """The ``sleep`` children of the faulty decoder (a wrapper's children, which outlive a
    decoder killed alone)."""
    for pid, _ in noted_pids(system, "child"):
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A toy system, its undisturbed 3-iteration run (``ref``), the same run stopped after 2
    iterations (``two``, resumable with --iterations 3) and a 2-iteration run of another
    seed (``other``)."""
    system = make_system(tmp_path_factory.mktemp("runs"))
    for name, extra, iterations in [("ref", (), 3), ("two", (), 2), ("other", ("--seed", "4"), 2)]:
        args = tune_args(system, system / name, *extra, iterations=iterations)
        assert main(args) == 0
    return system


@pytest.fixture
def two(runs, tmp_path, capsys):
    """A copy of the 2-iteration run to tamper with; capsys drained of the fixture's output."""
    capsys.readouterr()
    shutil.copytree(runs / "two", tmp_path / "wd")
    return tmp_path / "wd"


def resume(runs, wd, capsys, iterations=3):
    rc = main(tune_args(runs, wd, "--resume", iterations=iterations))
    return rc, capsys.readouterr().err


# ---------------------------------------------------------------- one run per workdir
def test_a_second_run_is_refused_and_the_first_ends_as_alone(runs, tmp_path, capsys, monkeypatch):
    system = make_system(tmp_path)
    wd = system / "wd"
    # iteration 2 decodes for 8 s (time enough for the second run's refusals on a loaded machine)
    first = start(system, wd, FAULT="slow", FAULT_SLEEP=8, FAULT_ITERATION="iter002")
    wait_for_decoders(system, first, "iter002", 2)
    decoding = sorted((wd / "iter002").glob("decode-*"))
    monkeypatch.setenv("FAULT", "crash")       # a decoder of the second run would note its pid
    monkeypatch.setenv("FAULT_PIDS", str(system / "pids2"))
    for extra in [(), ("--resume",)]:
        assert main(tune_args(system, wd, *extra)) == 2
        line = one_error_line(capsys.readouterr().err)
        assert re.fullmatch(rf"mtplug: error: {re.escape(str(wd / LOCK_FILE))}: another mtplug tune run works in "
                            rf"this directory \(pid {first.pid} on host {re.escape(HOST)}, started "
                            r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\); wait for it to end, or choose another --workdir",
                            line), line
    assert not (system / "pids2").exists()                   # no decoding
    assert sorted((wd / "iter002").glob("decode-*")) == decoding   # the first run's folders untouched
    rc, err, _ = finish(first)
    kill_children(system)
    assert rc == 0 and err == "", err
    assert (wd / "final").read_bytes() == (runs / "ref" / "final").read_bytes()
    assert read_state(str(wd))["weights"] == read_state(str(runs / "ref"))["weights"]
    assert not (wd / LOCK_FILE).exists()


def test_kill_9_leaves_no_decoder_and_resume_takes_the_stale_lock_over(runs, tmp_path):
    """kill -9 of mtplug while iteration 2 decodes: its decoders die with it (Linux), its
    lock file stays with the flock free, and --resume takes it over with one line and ends
    as the undisturbed run."""
    system = make_system(tmp_path)
    wd = system / "wd"
    proc = start(system, wd, FAULT="slow", FAULT_SLEEP=30, FAULT_ITERATION="iter002")
    wait_for_decoders(system, proc, "iter002", 2)
    proc.kill()
    proc.communicate()
    try:
        if sys.platform.startswith("linux"):
            decoders = [pid for pid, _ in noted_pids(system, "decoder")]
            deadline = time.monotonic() + 10
            while any(alive(p) for p in decoders) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not [p for p in decoders if alive(p)], "decoders outlived mtplug's kill -9"
    finally:
        kill_children(system)
    holder = json.loads((wd / LOCK_FILE).read_text())
    assert (holder["pid"], holder["host"]) == (proc.pid, HOST)
    rc, err, _ = finish(start(system, wd, "--resume"))
    assert rc == 0, err
    assert one_error_line(err) == (f"mtplug: warning: {wd / LOCK_FILE}: took over the stale lock of pid {proc.pid} "
                                   f"on host {HOST}, started {holder['started']} (its lock was free: the run was "
                                   f"killed or its machine restarted)")
    assert (wd / "final").read_bytes() == (runs / "ref" / "final").read_bytes()
    assert not (wd / LOCK_FILE).exists()


def test_a_gone_holder_whose_descriptor_lives_on_is_taken_over(tmp_path):
    """The lock file's flock is held by a process that inherited the descriptor, while the
    recorded holder (this host) is gone: the lock is taken over with one line."""
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    path = tmp_path / LOCK_FILE
    path.write_text(json.dumps({"pid": gone.pid, "host": HOST, "started": "2026-01-01T00:00:00Z"}))
    fd = os.open(path, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    heir = subprocess.Popen(["sleep", "60"], pass_fds=(fd,))
    os.close(fd)
    try:
        said: list[str] = []
        lock = acquire(str(tmp_path), said.append)
        assert said == [(f"{path}: took over the lock of pid {gone.pid} on host {HOST}, started 2026-01-01T00:00:00Z, "
                        "which is gone (the lock file was still open in another process)")]
        assert json.loads(path.read_text())["pid"] == os.getpid()
        lock.release()
        assert not path.exists()
    finally:
        heir.kill()
        heir.wait()


def test_a_live_holder_on_this_host_keeps_its_lock(tmp_path):
    from mtplug.errors import InputError

    lock = acquire(str(tmp_path), print)
    try:
        with pytest.raises(InputError, match=rf"pid {os.getpid()} on host "):
            acquire(str(tmp_path), print)
    finally:
        lock.release()
    acquire(str(tmp_path), print).release()   # free again


# ---------------------------------------------------------------- a tampered state
def _edit_state(wd, edit) -> None:
    state = json.loads((wd / "state.json").read_text())
    (wd / "state.json").write_text(json.dumps(edit(state)))


@pytest.mark.parametrize("edit, expected", [
    (lambda s: [s], "expected the file to be a JSON object, found a list of 1"),
    (lambda s: {k: v for k, v in s.items() if k != "weights"},
     "expected 'weights' to be a list of [name, number] pairs, found null"),
    (lambda s: {**s, "weights": dict(s["weights"])}, ("expected 'weights' to be a list of [name, number] pairs, "
                                                     "found an object")),
    (lambda s: {**s, "completed": "2"}, "expected 'completed' to be an integer >= 0, found a string"),
    (lambda s: {**s, "history": s["history"][:1]},
     "expected 'history' to be a list of 2 entries (one per completed iteration), found a list of 1"),
    (lambda s: {**s, "best": None}, ("expected 'best' to be an object with an iteration in 1..2, a score, a bleu and "
                                    "weights, found null")),
    (lambda s: {**s, "history": [s["history"][0], {**s["history"][1], "hypotheses": "many"}]},
     ("expected history entry 2 to be an object with iteration 2 and numbers score, tuned_score (or null), "
     "bleu, hypotheses, new, found an object")),
    (lambda s: {**s, "history": [s["history"][0], {**s["history"][1], "tuned_score": "high"}]},
     ("expected history entry 2 to be an object with iteration 2 and numbers score, tuned_score (or null), "
     "bleu, hypotheses, new, found an object")),
])
def test_a_state_of_the_wrong_shape_is_one_line(runs, two, capsys, edit, expected):
    _edit_state(two, edit)
    rc, err = resume(runs, two, capsys)
    assert rc == 2
    assert one_error_line(err) == (f"mtplug: error: {two / 'state.json'}: not the state of a tuning run: "
                                   f"{expected} (was it edited?)")


def test_completed_beyond_the_folders_is_one_line(runs, two, capsys):
    _edit_state(two, lambda s: {**s, "completed": 9,
                                "history": [{**s["history"][-1], "iteration": i} for i in range(1, 10)]})
    rc, err = resume(runs, two, capsys)
    assert rc == 2
    assert one_error_line(err) == (f"mtplug: error: {two / 'state.json'}: names 9 completed iteration(s), but "
                                   f"{two / 'iter003'} is missing (and 6 more) (was the state edited, or folders "
                                   f"removed?)")
    assert not (two / "iter003").exists()   # nothing decoded


def _rebuilt(runs, two, capsys, why: str) -> None:
    rc, err = resume(runs, two, capsys)
    assert rc == 0, err
    store = two / "iter002" / "store.npz"
    assert one_error_line(err) == (f"mtplug: warning: {store}: {why}; rebuilding it from the n-best lists of "
                                   f"iterations 1-2")
    assert (two / "final").read_bytes() == (runs / "ref" / "final").read_bytes()
    assert read_state(str(two))["weights"] == read_state(str(runs / "ref"))["weights"]


def test_another_runs_store_is_rebuilt_and_resume_ends_identically(runs, two, capsys):
    shutil.copyfile(runs / "other" / "iter002" / "store.npz", two / "iter002" / "store.npz")
    _rebuilt(runs, two, capsys, "it is not the store this run wrote (its sha256 differs from the one in the state)")


@pytest.mark.parametrize("damage", ["truncated", "missing"])
def test_a_corrupt_store_is_rebuilt_and_resume_ends_identically(runs, two, capsys, damage):
    store = two / "iter002" / "store.npz"
    if damage == "missing":
        store.unlink()
        _rebuilt(runs, two, capsys, "it is missing")
    else:
        store.write_bytes(store.read_bytes()[:1000])
        _rebuilt(runs, two, capsys, "it is not the store this run wrote (its sha256 differs from the one in the "
                                    "state)")


def test_a_store_that_cannot_be_rebuilt_is_one_line(runs, two, capsys):
    store = two / "iter002" / "store.npz"
    store.write_bytes(store.read_bytes()[:1000])
    (two / "iter001" / "nbest.out").unlink()
    rc, err = resume(runs, two, capsys)
    assert rc == 2
    assert one_error_line(err) == (f"mtplug: error: {store}: it is not the store this run wrote (its sha256 differs "
                                   f"from the one in the state), and it cannot be rebuilt: "
                                   f"{two / 'iter001' / 'nbest.out'} is missing")
