"""The tuning loop: decode, merge the n-best into the store, optimize, repeat; with checkpoints.

Working directory layout::

    DIR/iter001/          one folder per iteration: the decoder's weight files (moses.ini /
                          sparse-weights or weights), nbest.out (all shards, renumbered),
                          onebest.txt, store.npz (every n-best so far), weights.json (start
                          and end weights of the iteration), out = the new weights in the
                          decoder's format; with --forests, forests/<line>.bin.gz (cdec's
                          union of every iteration's forest so far); the store and the
                          forests are kept for the newest iteration only; with --test-input,
                          test.out (the test set's 1-best with the weights this iteration
                          decoded the tuning set with)
    DIR/state.json        the loop state: written last and atomically after every iteration
                          (with the sha256 of the newest store: mtplug/tuning/state.py)
    DIR/tune.lock         while a run works here: its flock, pid, host and start time
                          (one run per working directory: mtplug/tuning/lock.py)
    DIR/final             the tuned weights (moses.ini updated in place / cdec weights)
    DIR/final.test.out    with --test-input: the test set's 1-best with DIR/final's weights
                          (decoded in DIR/final-decode/ when no iteration decoded them)

Resuming: ``state.json`` names the last completed iteration and holds its weights at
full precision, and that iteration's store holds every n-best up to it. An interrupted
iteration is redone from scratch: decoding is a function of the weights, and iteration
i's optimizer seed is derived from (base seed, i) only, so a resumed run ends with the
same final weights as an uninterrupted one. Every iteration (resumed or not) reads the
previous store back from disk, so both paths see identical arrays.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..corpus import NbestCorpus
from ..decoders import get_decoder
from ..errors import InputError
from ..fileio import FILE_SYSTEM_ERRNOS, atomic_output
from ..formats.weights_core import Weights
from ..metrics.layer import SCALE, parse_metric
from ..start_weights import check_match
from . import lock as workdir_lock
from . import state as state_checks
from .state import pool_start

#: 3: every history entry names the metric it was tuned to (``metric``) and gives that metric's
#: scores under neutral keys (``score``, ``tuned_score``, ``test_score``) beside the decoded
#: BLEU (``bleu``, ``test_bleu``); 2: scores on sacrebleu's scale (0-100, docs/metrics.md "One
#: scale") under BLEU's keys; 1: fractions. Versions 1 and 2 are read as version 3
#: (:func:`read_state`), so their runs resume
STATE_VERSION = 3
STATE_FILE = "state.json"
#: the score fields of a version 1 state's history entries, its best and its final_test (scaled by 100)
SCORE_FIELDS = ("bleu", "tuned_bleu", "tuned_metric_value", "metric_value", "objective", "test_bleu",
                "test_metric_value", "test_objective")
#: where a version 2 entry kept the tuned metric's scores (score, tuned_score, test_score): BLEU's
#: keys in a BLEU run, the ``metric_value`` keys under another metric
_VERSION_2_KEYS = {True: ("bleu", "tuned_bleu", "test_bleu"),
                   False: ("metric_value", "tuned_metric_value", "test_metric_value")}
#: the stop reason of --patience (the metric's label, the patience)
_NO_BETTER = re.compile(r"no better (.+) for (\d+) iterations")
#: an iteration's test set translations; the final weights' are DIR/final.test.out
TEST_OUT = "test.out"
#: where the test set is decoded with final weights no iteration decoded (--final-weights last)
FINAL_DECODE = "final-decode"


def iteration_seed(base: int, iteration: int) -> int:
    """The optimizer seed of an iteration: a function of (base seed, iteration) only."""
    return int(np.random.SeedSequence([int(base) & 0xFFFFFFFF, int(iteration)]).generate_state(1)[0] >> 1)


def iteration_dir(workdir: str, n: int) -> str:
    """``WORKDIR/iterNNN``, the folder of iteration ``n`` (from 1)."""
    return os.path.join(workdir, f"iter{n:03d}")


@dataclass(frozen=True)
class Hooks:
    """How the loop talks to the user: ``log(line)`` and ``counter(total, desc) ->
    (update or None, close)`` for a progress bar."""

    log: Callable[[str], None] = lambda m: None
    counter: Callable = lambda total, desc: (None, lambda: None)
    #: a line the user should see even when the log is quiet (a stale lock taken over, a
    #: store rebuilt); None: through ``log``
    warn: Callable[[str], None] | None = None

    def warning(self, message: str) -> None:
        """Show ``message`` (one line) through ``warn``, else through ``log``."""
        (self.warn or self.log)(message)


def _write_json(path: str, obj) -> None:
    with atomic_output(path) as fh:
        fh.write(json.dumps(obj, indent=1) + "\n")


def read_state(workdir: str) -> dict | None:
    """The state a run left in ``workdir`` (what ``--resume`` continues from), or None when
    there is none; InputError when it is unreadable, of another version or of another shape
    than the loop writes (:func:`mtplug.tuning.state.check_shape`)."""
    path = os.path.join(workdir, STATE_FILE)
    if not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as fh:
            state = json.load(fh)
    except (OSError, ValueError) as exc:
        raise InputError(f"unreadable tuning state ({exc})", path) from None
    if isinstance(state, dict) and state.get("version") == 1:
        state = _scores_of_version_1(state)
    if isinstance(state, dict) and state.get("version") == 2:
        state = _named_scores_of_version_2(state)
    if isinstance(state, dict) and state.get("version") != STATE_VERSION:
        raise InputError(f"tuning state of another version (expected {STATE_VERSION})", path)
    state_checks.check_shape(state, path)
    return state


def _scores_of_version_1(state: dict) -> dict:
    """A version 1 state (scores as fractions) as version 2 (scores on 0-100): its
    :data:`SCORE_FIELDS` times 100; anything else as it is (check_shape judges it)."""
    def scaled(entry):
        if not isinstance(entry, dict):
            return entry
        return {k: v * SCALE if k in SCORE_FIELDS and isinstance(v, (int, float)) and not isinstance(v, bool) else v
                for k, v in entry.items()}

    history = state.get("history")
    return {**state, "version": 2, "history": [scaled(h) for h in history] if isinstance(history, list) else history,
            **{key: scaled(state[key]) for key in ("best", "final_test") if key in state}}


def _named_scores_of_version_2(state: dict) -> dict:
    """A version 2 state as version 3: each history entry gets ``metric``, ``score``,
    ``tuned_score`` (and ``test_score``) from the keys version 2 kept them under
    (:data:`_VERSION_2_KEYS`), the best record ``metric`` and ``score``, the final test record
    ``test_score``. A run under another metric than BLEU loses version 2's ``tuned_bleu``,
    which held 100 x the objective on the store (the chrF, 100 - TER), not a BLEU, and its
    stop reason ``no better BLEU for P iterations`` (chosen by that metric) is named by the
    metric. Anything else stays as it is (check_shape judges it)."""
    fingerprint = state.get("fingerprint")
    metric = fingerprint.get("metric", "bleu") if isinstance(fingerprint, dict) else "bleu"
    is_bleu = metric == "bleu"
    score_key, tuned_key, test_key = _VERSION_2_KEYS[is_bleu]

    def entry(old):
        if not isinstance(old, dict):
            return old
        named = {"metric": metric, "score": old.get(score_key), "tuned_score": old.get(tuned_key)}
        if test_key in old:
            named["test_score"] = old[test_key]
        rest = {k: v for k, v in old.items() if k not in named and (is_bleu or k != "tuned_bleu")}
        head = {k: rest.pop(k) for k in ("iteration",) if k in rest}
        return {**head, **named, **rest}

    history = state.get("history")
    history = [entry(h) for h in history] if isinstance(history, list) else history
    out = {**state, "version": 3, "history": history}
    best = state.get("best")
    if isinstance(best, dict) and isinstance(history, list):
        index = best.get("iteration")
        decoded = history[index - 1] if isinstance(index, int) and 1 <= index <= len(history) else None
        if isinstance(decoded, dict) and "score" in decoded:
            out["best"] = {**best, "metric": metric, "score": decoded["score"]}
    final_test = state.get("final_test")
    if isinstance(final_test, dict) and test_key in final_test:
        out["final_test"] = {**final_test, "test_score": final_test[test_key]}
    stop = state.get("stop")
    old_stop = _NO_BETTER.fullmatch(stop) if isinstance(stop, str) and not is_bleu else None
    if old_stop is not None and old_stop.group(1) == "BLEU":
        with contextlib.suppress(ValueError):
            out["stop"] = f"no better {parse_metric(metric).label} for {old_stop.group(2)} iterations"
    return out


def _count_lines(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read().splitlines()
    except OSError as exc:
        raise InputError(f"cannot read ({exc.strerror})", path) from None


# ------------------------------------------------------------------ decoding
def _shard_count(cfg, engine) -> int:
    """Shards of the input: ``jobs``; on a dask cluster at least one per worker."""
    return max(cfg.jobs, engine.n_workers) if engine is not None else cfg.jobs


def _shards(lines: list[str], jobs: int) -> list[tuple[int, list[str]]]:
    """Contiguous shards as (first sentence, lines); at most ``jobs``, none empty."""
    jobs = max(1, min(jobs, len(lines)))
    bounds = np.linspace(0, len(lines), jobs + 1).round().astype(int)
    return [(int(a), lines[a:b]) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


def _positions(ids: list[int], where: str) -> dict[int, int]:
    """Decoder sentence id -> line of the shard; ids must be unique to be told apart."""
    position = {sid: k for k, sid in enumerate(ids)}
    if len(position) != len(ids):
        dup = next(sid for k, sid in enumerate(ids) if position[sid] != k)
        raise InputError(f"two input lines get the sentence id {dup} (repeated <seg id>?), so their "
                         f"hypotheses cannot be told apart", where)
    return position


#: run by a guard process beside a decoder on a dask worker: it holds the read end of a
#: pipe whose write end only the worker holds; EOF without the "done" byte means the worker
#: died (kill -9, a lost machine), and the decoder's process group is killed
_GUARD = ("import os, signal, sys\n"
          "if not sys.stdin.buffer.read(1):\n"
          "    try:\n"
          "        os.killpg(int(sys.argv[1]), signal.SIGKILL)\n"
          "    except OSError:\n"
          "        pass\n")


def _guard(proc: subprocess.Popen) -> subprocess.Popen | None:
    """A guard process that kills ``proc``'s process group if this process dies first (see
    _GUARD); None when it cannot start (the decoder then runs unguarded)."""
    try:
        return subprocess.Popen([sys.executable, "-S", "-c", _GUARD, str(proc.pid)], stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:
        return None


def _release_guard(guard: subprocess.Popen | None) -> None:
    """Tell the guard the decoder was dealt with here (it then exits without killing)."""
    if guard is None:
        return
    with contextlib.suppress(OSError):
        assert guard.stdin is not None
        guard.stdin.write(b"x")
        guard.stdin.close()
    guard.wait()


def run_shard_remotely(job) -> tuple[int, str, bool]:
    """Run one decoder shard where this is called (a dask worker): job = (ShardRun, stderr
    path, timeout in seconds[, stop file]). Returns (exit status, the end of its stderr or
    why it could not start, whether it ran out of time: then its process group was killed).

    The decoder writes files of this attempt (its n-best and stdout files with an
    ``.attempt-*`` suffix, renamed to the shard's names when it succeeds): when dask runs
    the shard again on another worker because this one died, a decoder the dead worker
    left running cannot write into the retry's files. A guard process kills the decoder's
    process group when this worker dies; the decoder is stopped (its group killed) when
    the stop file appears (the driver saw another shard fail)."""
    run, err_path, timeout, *rest = job
    stop = rest[0] if rest else None
    import socket
    import uuid

    suffix = f".attempt-{uuid.uuid4().hex[:12]}"
    out_path = run.stdout + suffix
    nbest_path = out_path if run.nbest == run.stdout else run.nbest + suffix
    argv = [nbest_path if a == run.nbest else a for a in run.argv]
    err_attempt = err_path + suffix
    guard = None
    try:
        with contextlib.ExitStack() as files:  # closes those opened when a later open fails
            stdin = files.enter_context(open(run.stdin, "rb")) if run.stdin else subprocess.DEVNULL
            out = files.enter_context(open(out_path, "wb"))
            err = files.enter_context(open(err_attempt, "wb"))
            proc = subprocess.Popen(argv, stdin=stdin, stdout=out, stderr=err, start_new_session=True)
    except OSError as exc:
        for path in (out_path, err_attempt):
            with contextlib.suppress(OSError):
                os.unlink(path)
        return -1, (f"on worker {socket.gethostname()}: {exc} (is the working directory on a file system "
                    f"every worker shares, and the decoder installed there?)"), False
    ok = False
    try:
        guard = _guard(proc)
        deadline = time.monotonic() + timeout
        while not _has_ended(proc):
            if time.monotonic() >= deadline:
                return -signal.SIGKILL, "", True    # the finally kills its process group
            if stop is not None and os.path.exists(stop):
                return -signal.SIGKILL, "stopped: another shard failed", False
            time.sleep(POLL_SECONDS)
        _kill_group(proc)   # whatever the decoder left running in its group
        ok = True
    finally:
        _stop([proc])
        _release_guard(guard)
        with contextlib.suppress(OSError):
            os.replace(err_attempt, err_path)
        if ok and proc.returncode == 0:
            os.replace(out_path, run.stdout)
            if nbest_path != out_path and os.path.exists(nbest_path):
                os.replace(nbest_path, run.nbest)
        else:
            for path in {out_path, nbest_path}:
                with contextlib.suppress(OSError):
                    os.unlink(path)
    with open(err_path, encoding="utf-8", errors="replace") as fh:
        return int(proc.returncode), fh.read()[-2000:].strip(), False


def _shard_failed(k: int, run, rc: int, tail: str, err_path: str | None = None) -> InputError:
    """The one line of a decoder process that failed: status or signal, command, the last
    line of its stderr and where all of it is."""
    try:
        how = f"was killed by {signal.Signals(-rc).name}" if rc < 0 else f"exited with status {rc}"
    except ValueError:
        how = f"exited with status {rc}"
    said = [ln.strip() for ln in tail.splitlines() if ln.strip()]
    said_text = f"; its stderr ends {said[-1][-300:]!r}" if said else "; nothing on its stderr"
    where = f" (all of it in {err_path})" if said and err_path else ""
    return InputError(f"the decoder {how} on shard {k}: {shlex.join(run.argv)}{said_text}{where}")


def _shard_timed_out(k: int, run, timeout: float) -> InputError:
    return InputError(f"the decoder ran longer than --decoder-timeout {timeout:g} s on shard {k} and was stopped "
                      f"(its process group killed): {shlex.join(run.argv)}")


def _decode_on(engine, runs: list, tmp: str, update, timeout: float) -> None:
    """The shards' decoder processes on the dask workers, looked at as each one ends: the
    first that failed or ran out of time is raised at once, and the others are stopped
    (those not started cancelled; the running ones see the stop file and kill their
    process groups). A shard whose worker died runs again on another (dask does so)."""
    stop = os.path.join(tmp, "stop")
    jobs = [(run, os.path.join(tmp, f"shard{k}.err"), timeout, stop) for k, (_, _, run) in enumerate(runs)]
    done = engine.as_done(run_shard_remotely, jobs)
    try:
        for k, (rc, tail, timed_out) in done:
            if timed_out:
                raise _shard_timed_out(k, runs[k][2], timeout)
            if rc != 0:
                raise _shard_failed(k, runs[k][2], rc, tail, os.path.join(tmp, f"shard{k}.err"))
            if update:
                update(1)
    except BaseException:
        with contextlib.suppress(OSError), open(stop, "w"):
            pass
        raise
    finally:
        done.close()


#: how often (seconds) the loop looks whether one of its decoder processes ended
POLL_SECONDS = 0.05


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the process group of ``proc`` (a decoder started in a session of its own,
    so a wrapper script's children go too). Call it before ``proc`` is reaped: until then
    its pid, the group's id, cannot name another process."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _stop(procs) -> None:
    """Kill the process groups of ``procs`` and reap them, with SIGINT, SIGTERM and SIGHUP
    held back meanwhile (a second Ctrl-C cannot leave a decoder running; the signal is
    delivered after)."""
    procs = list(procs)
    if not procs:
        return
    held = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
    before = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        for proc in procs:
            _kill_group(proc)
        for proc in procs:
            proc.wait()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _has_ended(proc: subprocess.Popen) -> bool:
    """Whether ``proc`` ended, without reaping it (its group id stays reserved)."""
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


@functools.cache
def _prctl():
    """libc's ``prctl`` (resolved before any fork), or None where there is none (not Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    return prctl


#: prctl's option: the signal a process receives when its parent dies
_PR_SET_PDEATHSIG = 1


def _killed_with_us():
    """A ``preexec_fn`` for a decoder: on Linux it receives SIGKILL when mtplug dies (even
    by ``kill -9``, which leaves no cleanup to run); None elsewhere. It reaches the decoder
    process itself, not the children a wrapper script of it starts."""
    prctl = _prctl()
    if prctl is None:
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:     # mtplug died before the prctl: no signal would come
            os.kill(os.getpid(), signal.SIGKILL)
    return preexec


def _start(run, tmp: str, k: int) -> subprocess.Popen:
    """Start shard ``k``'s decoder in a session (and process group) of its own; on Linux it
    is killed when mtplug dies."""
    # the child has its own copies of the descriptors: ours close once it started
    with contextlib.ExitStack() as files:
        stdin = files.enter_context(open(run.stdin, "rb")) if run.stdin else subprocess.DEVNULL
        out = files.enter_context(open(run.stdout, "wb"))
        err = files.enter_context(open(os.path.join(tmp, f"shard{k}.err"), "wb"))
        try:
            # the preexec_fn calls only a C function resolved before the fork, getppid and kill:
            # no lock another thread may hold at the fork is needed in the child
            return subprocess.Popen(run.argv, stdin=stdin, stdout=out, stderr=err, start_new_session=True,
                                    preexec_fn=_killed_with_us())  # noqa: PLW1509
        except OSError as exc:
            raise InputError(f"cannot run the decoder {run.argv[0]!r} ({exc.strerror})") from None


def _decode_here(runs: list, tmp: str, jobs: int, update, timeout: float) -> None:
    """The shards' decoder processes on this machine, ``jobs`` at once, each in a process
    group of its own. Whichever ends first is looked at first: the first that fails or
    runs longer than ``timeout`` seconds raises at once, and every decoder still running
    (its whole process group) is killed; so are they when anything else (Ctrl-C, SIGTERM)
    ends the wait."""
    pending = list(range(len(runs)))
    active: dict[int, tuple[subprocess.Popen, float]] = {}
    try:
        while pending or active:
            while pending and len(active) < jobs:
                k = pending.pop(0)
                active[k] = (_start(runs[k][2], tmp, k), time.monotonic() + timeout)
            ended = None
            while ended is None:
                now = time.monotonic()
                for k, (proc, deadline) in active.items():
                    if _has_ended(proc):
                        ended = k
                        break
                    if now >= deadline:
                        raise _shard_timed_out(k, runs[k][2], timeout)
                else:
                    soonest = min(deadline for _, deadline in active.values())
                    time.sleep(min(POLL_SECONDS, max(0.0, soonest - now)))
            proc, _ = active.pop(ended)
            _kill_group(proc)   # whatever the decoder left running in its group
            rc = proc.wait()
            if rc != 0:
                err_path = os.path.join(tmp, f"shard{ended}.err")
                with open(err_path, encoding="utf-8", errors="replace") as fh:
                    tail = fh.read()[-2000:]
                raise _shard_failed(ended, runs[ended][2], rc, tail, err_path)
            if update:
                update(1)
    finally:
        _stop(proc for proc, _ in active.values())


def _run_shards(decoder, cfg, folder: str, lines: list[str], update, engine, onebest: bool,
                pooled_forests: str | None = None) -> tuple[str, list]:
    """Write the shards of ``lines`` and run the decoder on each (``cfg.jobs`` processes at
    once here, or on the workers of a dask ``engine``). Returns (the attempt's scratch
    folder, [(first sentence, lines, ShardRun)])."""
    # shard files of this attempt live in a fresh folder: decoders orphaned by a killed
    # earlier attempt may still be writing into theirs
    for stale in os.listdir(folder):
        if stale.startswith("decode-"):
            shutil.rmtree(os.path.join(folder, stale), ignore_errors=True)
    tmp = tempfile.mkdtemp(prefix="decode-", dir=folder)
    shards = _shards(lines, _shard_count(cfg, engine))
    runs = []
    for k, (first, part) in enumerate(shards):
        path = os.path.join(tmp, f"shard{k}.in")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("".join(t + "\n" for t in part))
        run = decoder.shard_run(tmp, path, f"shard{k}", onebest=onebest)
        if run.forests is not None and pooled_forests is not None:
            for position, sid in enumerate(decoder.output_ids(part)):
                shutil.copyfile(os.path.join(pooled_forests, f"{first + position}.bin.gz"),
                                os.path.join(run.forests, f"{sid}.bin.gz"))
        runs.append((first, part, run))
    if engine is not None:
        _decode_on(engine, runs, tmp, update, cfg.decoder_timeout)
    else:
        _decode_here(runs, tmp, cfg.jobs, update, cfg.decoder_timeout)
    return tmp, runs


#: a field separator of an n-best line: ``|||`` between blanks or the line's ends
_SEPARATOR = re.compile(r"(?<!\S)\|\|\|(?!\S)")


def _check_field_counts(lines: list[str], path: str) -> None:
    """The non-empty lines of one decoder output have one number of ``|||``-separated
    fields (the number most of them have; of equally many, the larger): a line cut short
    (a crash, a full disk) is an InputError naming it, not a hypothesis without a score."""
    counts = [len(_SEPARATOR.findall(line)) + 1 if line else 0 for line in lines]
    tally = Counter(c for c in counts if c)
    if len(tally) <= 1:
        return
    expected = max(tally, key=lambda c: (tally[c], c))
    i, found = next((i, c) for i, c in enumerate(counts, 1) if c and c != expected)
    raise InputError(f"expected {expected} ' ||| '-separated fields as the file's other lines have, found {found} "
                     f"(a line cut short: did the decoder die while writing?)", path, i)


def _read_lists(decoder, runs: list, n_lines: int, source: str, out, where: str) -> list[str]:
    """The shards' n-best lists with sentence ids renumbered to lines of ``source`` (written
    to the text stream ``out`` unless None); returns the 1-best text of every line. ``where``:
    the file a missing sentence is reported against."""
    onebest: dict[int, str] = {}
    for first, part, run in runs:
        position = _positions(decoder.output_ids(part), source)
        lines = _count_lines(run.nbest)
        _check_field_counts(lines, run.nbest)
        for i, line in enumerate(lines, 1):
            if not line:
                continue
            sid_text, sep, rest = line.partition(" ||| ")
            try:
                sid = position[int(sid_text)]
            except (ValueError, KeyError):
                sid = None
            if not sep or sid is None:
                raise InputError(f"expected 'id ||| hypothesis ||| ...' with one of the {len(part)} ids the "
                                 f"decoder gives this shard's lines", run.nbest, i)
            onebest.setdefault(first + sid, rest.split(" ||| ", 1)[0])
            if out is not None:
                out.write(f"{first + sid} ||| {rest}\n")
    missing = [s for s in range(n_lines) if s not in onebest]
    if missing:
        raise InputError(f"the decoder wrote no hypotheses for {len(missing)} sentence(s), first {missing[0]}",
                         where)
    return [onebest[s].strip() for s in range(n_lines)]


def _write_lines(path: str, lines: list[str]) -> None:
    with atomic_output(path) as out:
        out.write("".join(t + "\n" for t in lines))


def decode(decoder, cfg, folder: str, lines: list[str], update, engine=None,
           pooled_forests: str | None = None) -> tuple[str, str]:
    """Decode the tuning set into ``folder``: the shards' n-best lists concatenated with
    sentence ids renumbered. Returns (n-best path, 1-best path). With forests,
    ``pooled_forests`` is the previous iteration's forest folder: each shard's forest folder
    starts with copies of its sentences' forests there, into which cdec unions the new ones
    (as dpmert.pl's hgs/)."""
    tmp, runs = _run_shards(decoder, cfg, folder, lines, update, engine, False, pooled_forests)
    nbest_path = os.path.join(folder, "nbest.out")
    onebest_path = os.path.join(folder, "onebest.txt")
    with atomic_output(nbest_path) as out:
        onebest = _read_lists(decoder, runs, len(lines), cfg.input, out, nbest_path)
    _write_lines(onebest_path, onebest)
    if runs[0][2].forests is not None:
        _collect_forests(decoder, runs, os.path.join(folder, FORESTS), len(lines))
    shutil.rmtree(tmp, ignore_errors=True)
    return nbest_path, onebest_path


def decode_test(decoder, cfg, folder: str, lines: list[str], update, engine=None) -> str:
    """Decode the held-out test set (``cfg.test_input``, its ``lines``) with the weights
    ``decoder`` was last prepared with, as the tuning set is decoded (same shards, jobs and
    scheduler) but into a 1-best list: its first hypothesis per line is the translation, as
    the tuning set's onebest.txt is taken. Returns the path of ``folder``/test.out."""
    tmp, runs = _run_shards(decoder, cfg, folder, lines, update, engine, True)
    path = os.path.join(folder, TEST_OUT)
    _write_lines(path, _read_lists(decoder, runs, len(lines), cfg.test_input, None, path))
    shutil.rmtree(tmp, ignore_errors=True)
    return path


#: the folder of an iteration's forests, ``<sentence>.bin.gz`` by tuning-set line (from 0)
FORESTS = "forests"


def _collect_forests(decoder, runs: list, target: str, n_sentences: int) -> None:
    """Move every shard's forests into ``target`` under the sentence's line in the tuning
    set (cdec names them by its own per-process ids); every sentence needs one."""
    os.makedirs(target, exist_ok=True)
    found = set()
    for first, part, run in runs:
        position = _positions(decoder.output_ids(part), run.forests)
        for name in sorted(os.listdir(run.forests)):
            sid_text = name[:-len(".bin.gz")] if name.endswith(".bin.gz") else None
            if sid_text is None or not sid_text.isdigit() or int(sid_text) not in position:
                raise InputError(f"unexpected file {name!r} among the decoder's forests (expected <id>.bin.gz for "
                                 f"the {len(part)} ids of this shard)", run.forests)
            sid = first + position[int(sid_text)]
            os.replace(os.path.join(run.forests, name), os.path.join(target, f"{sid}.bin.gz"))
            found.add(sid)
    missing = [s for s in range(n_sentences) if s not in found]
    if missing:
        raise InputError(f"the decoder wrote no forest for {len(missing)} sentence(s), first {missing[0]}", target)


# ------------------------------------------------------------------ the loop
def _forest_corpus(cfg, refs, bleu, weights: Weights, n: int, hooks):
    """The ForestCorpus of iteration n's forests, in which the decoder has unioned those of
    every earlier iteration (the current weights' features first, so none of them is lost
    when no forest has it)."""
    from ..forests.corpus import ForestCorpus
    from ..formats.forests import read_forests

    t0 = time.perf_counter()
    folder = os.path.join(iteration_dir(cfg.workdir, n), FORESTS)
    corpus = ForestCorpus(refs, bleu, list(weights), source=folder)
    for sid, hg, path, line in read_forests([folder]):
        corpus.add(sid, hg, where=(path, line))
    corpus.check_complete(folder)
    hooks.log(f"iteration {n}: {corpus.n_forests} forests (the decoder's union of {n} iteration(s)), "
              f"{corpus.n_hypotheses} edges, read in {time.perf_counter() - t0:.2f} s")
    return corpus


def _weights_of(pairs) -> Weights:
    return Weights([(n, float(v)) for n, v in pairs])


def _next_weights(previous: Weights, names: list, tuned: np.ndarray, interpolate: float) -> Weights:
    """The weights of the next iteration: the optimizer's (indexed like ``names``) over
    the previous ones, as ``interpolate*tuned + (1-interpolate)*previous`` (a weight the
    optimizer did not see keeps its previous value)."""
    merged = dict(previous.items())
    for name, value in zip(names, tuned.tolist()):
        merged[name] = value if interpolate == 1.0 else \
            interpolate * value + (1.0 - interpolate) * previous.get(name, 0.0)
    return Weights(merged.items())


def _limit_lifted(state: dict, cfg) -> bool:
    """Whether a run that stopped on its iteration limit or patience may go on with the new limits."""
    stop = state["stop"] or ""
    if stop == "iteration limit":
        return state["completed"] < cfg.iterations
    if _NO_BETTER.fullmatch(stop):    # "no better BLEU (chrF, TER, ...) for P iterations"
        best = state["best"]["iteration"]
        return state["completed"] < cfg.iterations and (not cfg.patience or state["completed"] - best < cfg.patience)
    return False


_FILE_SYSTEM_ERRNOS = FILE_SYSTEM_ERRNOS   # errors of a place even when they name no file


@contextlib.contextmanager
def _file_errors(workdir: str):
    """An OSError of the file system as an InputError (one line, exit status 2) naming its
    path, or ``workdir`` when it names none. Nothing is half-written: the loop's writers go
    through temporary files, and state.json, the commit point, keeps the last completed
    iteration for ``--resume``."""
    try:
        yield
    except OSError as exc:
        if isinstance(exc, (BrokenPipeError, ConnectionError, TimeoutError)) or (
                exc.filename is None and exc.errno not in _FILE_SYSTEM_ERRNOS):
            raise
        path = os.fsdecode(exc.filename) if exc.filename is not None else workdir
        what = exc.strerror or str(exc)
        if exc.filename is None:
            what += " (writing in the working directory)"
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            what += "; free some space, then --resume continues after the last completed iteration"
        raise InputError(what, path) from None


def _lock_workdir(workdir: str, hooks: Hooks) -> workdir_lock.WorkdirLock:
    """Make ``workdir`` and take its lock (DIR/tune.lock: one run per working directory),
    before any decoding: InputError naming the holder when another run holds it, or when
    the directory cannot be written in."""
    os.makedirs(workdir, exist_ok=True)
    try:
        return workdir_lock.acquire(workdir, hooks.warning)
    except OSError as exc:
        raise InputError(f"cannot write in the working directory ({exc.strerror})", workdir) from None


def _release(lock: workdir_lock.WorkdirLock) -> None:
    """Release the workdir's lock with SIGINT, SIGTERM and SIGHUP held back (a second
    Ctrl-C cannot leave the lock file behind; the signal is delivered after)."""
    held = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
    before = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        lock.release()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def run_tuning(cfg, hooks: Hooks = Hooks()) -> dict:
    """Run (or resume) the loop described by ``cfg`` (a TuneConfig); returns the summary
    printed as the command's JSON line. A full, read-only or forbidden place is an
    InputError naming it; an unwritable working directory, or one another run holds
    (DIR/tune.lock), is found before any decoding. ``--resume`` checks the state first
    (its shape, its iterations' folders, its store: :mod:`mtplug.tuning.state`)."""
    with _file_errors(cfg.workdir):
        return _run_tuning(cfg, hooks)


def _run_tuning(cfg, hooks: Hooks) -> dict:
    test = _read_test_set(cfg)
    lock = _lock_workdir(cfg.workdir, hooks)
    try:
        return _run_locked(cfg, hooks, test)
    finally:
        _release(lock)


def _run_locked(cfg, hooks: Hooks, test) -> dict:
    from ..metrics.bleu import BleuConfig
    from ..metrics.references import metric_references
    from ..optimizers.registry import get_optimizer

    decoder = get_decoder(cfg)
    refs = metric_references(cfg.ref, cfg.metric)
    lines = _count_lines(cfg.input)
    if len(lines) != len(refs):
        raise InputError(f"{len(lines)} source sentences but {len(refs)} references", cfg.input)
    bleu = BleuConfig(reflen=cfg.reflen, lowercase=cfg.lowercase)
    state_path = os.path.join(cfg.workdir, STATE_FILE)
    state = read_state(cfg.workdir)
    fingerprint = json.loads(json.dumps(cfg.fingerprint()))
    if state is not None and not cfg.resume:
        raise InputError("holds a tuning run: pass --resume to continue it, or choose another --workdir", state_path)
    if state is not None and state["fingerprint"] != fingerprint:
        changed = state_checks.same_run_so_far(state["fingerprint"], fingerprint, state["completed"])
        if changed:
            raise InputError(f"--resume with other settings than the run in this directory: {', '.join(changed)}",
                             state_path)
        state = {**state, "fingerprint": fingerprint}   # the run goes on under the new setting
    if state is None:
        state = {"version": STATE_VERSION, "fingerprint": fingerprint, "completed": 0, "stop": None,
                 "weights": list(decoder.start_weights().items()), "history": []}
    elif state["completed"]:
        state_checks.check_folders(state, cfg.workdir, state_path)
        if _limit_lifted(state, cfg):
            state = {**state, "stop": None}  # a higher --iterations or --patience continues the run
        if state["stop"] is None and state["completed"] < cfg.iterations:
            state = _checked_store(cfg, hooks, state, state_path, refs, bleu)
        hooks.log(f"resuming after iteration {state['completed']}")

    cls = get_optimizer(cfg.optimizer)
    weights = _weights_of(state["weights"])
    n = state["completed"]
    engine = None
    if cfg.scheduler and state["stop"] is None and n < cfg.iterations:
        engine = _connect(cfg, hooks)
    try:
        state, weights, n = _iterate(cfg, hooks, decoder, refs, lines, bleu, state, state_path, cls, weights, n,
                                     engine, test)
        return _finish(cfg, hooks, decoder, state, state_path, bleu, test, engine)
    finally:
        if engine is not None:
            engine.close()


def _checked_store(cfg, hooks: Hooks, state: dict, state_path: str, refs, bleu) -> dict:
    """The state of a run to resume, its newest store checked against the state's record and
    rebuilt from the kept n-best lists when it does not match (the state then records the
    rebuilt one); InputError when it cannot be rebuilt."""
    why = state_checks.store_mismatch(state, cfg.workdir)
    if why is None:
        return state
    state = state_checks.rebuild_store(state, cfg.workdir,
                                       lambda: NbestCorpus.from_nbest([], refs, bleu, metric=cfg.metric), why,
                                       hooks.warning, cfg.pool_reset, references=refs)
    _write_json(state_path, state)
    return state


def _connect(cfg, hooks):
    from ..distributed import connect

    engine = connect(cfg.scheduler)
    hooks.log(engine.describe())
    return engine


def _read_test_set(cfg):
    """(source lines, References) of ``--test-input``/``--test-ref``, or None; checked
    before the working directory is made."""
    if cfg.test_input is None:
        return None
    from ..metrics.references import metric_references

    lines = _count_lines(cfg.test_input)
    if not lines:
        raise InputError("empty test set (expected one sentence per line)", cfg.test_input)
    refs = metric_references(cfg.test_ref, cfg.metric)
    if len(lines) != len(refs):
        raise InputError(f"{len(lines)} test sentences but {len(refs)} test references ({refs.source})",
                         cfg.test_input)
    return lines, refs


def _scores(onebest_path: str, refs, bleu, metric: str) -> tuple[float, float, float | None]:
    """(BLEU, the metric's objective, the metric's value or None under BLEU) of a 1-best
    file, each on the 0-100 scale of every score (the objective × 100)."""
    decoded = NbestCorpus.from_plain(onebest_path, refs, bleu, metric=metric)
    rows = decoded.sent_offsets[:-1]
    objective = decoded.metric.objective(decoded.corpus_stats(rows))
    value = None if metric == "bleu" else decoded.metric.value(objective)
    if decoded.metric.columns("bleu") is None:   # BLEU is logged whatever is tuned to
        decoded = NbestCorpus.from_plain(onebest_path, refs, bleu)
    return SCALE * decoded.bleu_of_rows(rows).score, SCALE * objective, value


def _test_fields(cfg, scores: tuple) -> dict:
    """The test scores of a history entry or the summary: ``test_score`` (the tuned metric's)
    and ``test_bleu``; under another metric than BLEU also ``test_metric_value`` (the
    ``test_score`` of version 2 states, kept for their readers) and ``test_objective``."""
    test_bleu, objective, value = scores
    if cfg.metric == "bleu":
        return {"test_score": test_bleu, "test_bleu": test_bleu}
    return {"test_score": value, "test_bleu": test_bleu, "test_metric_value": value, "test_objective": objective}


def _test_line(cfg, fields: dict) -> str:
    measured = "" if cfg.metric == "bleu" else f", {_label(cfg)} = {fields['test_score']:.4f}"
    return f"test BLEU = {fields['test_bleu']:.4f}{measured}"


def _named(cfg, score: float, bleu: float) -> str:
    """A decoded score as the stop line gives it: ``BLEU 48.1178``; under another metric the
    metric's first, then BLEU's (``chrF 61.6399, BLEU 36.3678``)."""
    return f"BLEU {bleu:.4f}" if cfg.metric == "bleu" else f"{_label(cfg)} {score:.4f}, BLEU {bleu:.4f}"


def _label(cfg) -> str:
    """How the log names the tuning metric (BLEU, TER, chrF, or a combination's text)."""
    return parse_metric(cfg.metric).label


def _iterate(cfg, hooks, decoder, refs, lines, bleu, state, state_path, cls, weights, n, engine, test):
    """The iterations of :func:`run_tuning`; returns (state, weights, last iteration). With a
    ``test`` set (lines, references), each iteration decodes it after the optimizer step with
    the weights it decoded the tuning set with, so that a history row's BLEU and test BLEU
    are of the same weights."""
    advised = False
    while state["stop"] is None and n < cfg.iterations:
        n += 1
        t0 = time.perf_counter()
        folder = iteration_dir(cfg.workdir, n)
        os.makedirs(folder, exist_ok=True)
        decoder.prepare(folder, weights)
        optimizer = cls(**cfg.optimizer_options)
        shards = len(_shards(lines, _shard_count(cfg, engine)))
        if test is not None:
            shards += len(_shards(test[0], _shard_count(cfg, engine)))
        update, close = hooks.counter(shards + optimizer.progress_total(), f"iteration {n}")
        try:
            pooled = os.path.join(iteration_dir(cfg.workdir, n - 1), FORESTS) if cfg.forests and n > 1 else None
            nbest_path, onebest_path = decode(decoder, cfg, folder, lines, update, engine, pooled)
            t_decode = time.perf_counter() - t0
            decoded_bleu, decoded_objective, metric_value = _scores(onebest_path, refs, bleu, cfg.metric)
            if n == pool_start(n, cfg.pool_reset):
                corpus = NbestCorpus.from_nbest([], refs, bleu, metric=cfg.metric)
            else:
                corpus = NbestCorpus.load(os.path.join(iteration_dir(cfg.workdir, n - 1), "store.npz"), refs)
            added = corpus.add_nbest([nbest_path])
            corpus.save(os.path.join(folder, "store.npz"))
            store_record = state_checks.store_record(os.path.join(folder, "store.npz"))   # ties it to the run
            corpus = NbestCorpus.load(os.path.join(folder, "store.npz"))
            store_size = corpus.n_hypotheses
            if n == 1:   # the start weights against the features the decoder gives (the rule of optimize --weights)
                source = cfg.weights if decoder.name == "cdec" or not cfg.config else cfg.config
                for warning in check_match(list(weights), corpus.feature_names, corpus.n_dense, source,
                                           where="the decoder's n-best lists"):
                    hooks.warning(f"iteration 1: {warning}")
            if cfg.forests:
                # forest MERT/kbmira over the forests of every iteration so far (dpmert pools them
                # too); the k-best store above only decides "no new hypotheses"
                corpus = _forest_corpus(cfg, refs, bleu, weights, n, hooks)
            names = corpus.feature_names
            start = weights.to_array(names, allow_unknown=True)
            seed = iteration_seed(cfg.seed, n)
            t1 = time.perf_counter()
            stop: str | None
            tuned_score = None
            if added == 0:
                new, stop = weights, "no new hypotheses"
                reported = {}
            else:
                on_cluster = {"engine": engine} if engine is not None and optimizer.distributes else {}
                advice = [] if advised else optimizer.advice(corpus)
                for warning in advice:          # once per run, not every iteration
                    hooks.log(f"iteration {n}: warning: {warning}")
                advised = advised or bool(advice)
                try:
                    result = optimizer.optimize(corpus, start, seed, threads=cfg.threads, progress=update,
                                                **on_cluster)
                except ValueError as err:     # what the store cannot serve (e.g. a sentence metric NaN)
                    if isinstance(err, InputError):
                        raise
                    raise InputError(f"iteration {n}: {cfg.optimizer}: {err}") from None
                for warning in result.warnings:
                    hooks.log(f"iteration {n}: warning: {warning}")
                # the optimizer's own numbers (e.g. the start's pair margin and which start it kept); not
                # its timings, so that a resumed run writes the same bytes
                reported = {k: v for k, v in result.info.items()
                            if (v is None or isinstance(v, (bool, int, float, str))) and "seconds" not in k}
                # the metric on the store as users read it (TER as an error rate); under BLEU the number
                # state.json's tuned_bleu has always held (100 x the objective: the same BLEU)
                tuned_score = SCALE * corpus.metric_of(result.weights) if cfg.metric == "bleu" else result.score
                new = _next_weights(weights, names, result.weights, cfg.interpolate if n > 1 else 1.0)
                change = max(abs(new[k] - weights.get(k, 0.0)) for k in new)
                stop = (f"no weight changed by {cfg.min_change:g} or more" if change < cfg.min_change
                        else "iteration limit" if n >= cfg.iterations else None)
            t_opt = time.perf_counter() - t1
            tested = {}
            if test is not None:    # the decoder still holds the weights it decoded the tuning set with
                test_path = decode_test(decoder, cfg, folder, test[0], update, engine)
                tested = {**_test_fields(cfg, _scores(test_path, test[1], bleu, cfg.metric)),
                          "test_decode_seconds": round(time.perf_counter() - t1 - t_opt, 3)}
        finally:
            close()
        change = max((abs(new[k] - weights.get(k, 0.0)) for k in new), default=0.0)
        _write_json(os.path.join(folder, "weights.json"),
                    {"iteration": n, "optimizer": cfg.optimizer, "seed": seed,
                     "start": list(weights.items()), "end": list(new.items()), "optimizer_info": reported})
        decoder.write_weights(os.path.join(folder, "out"), new,
                              comment=f"mtplug tune {cfg.optimizer} iteration {n} seed {seed}")
        # score, tuned_score, test_score: the tuned metric's (BLEU's in a BLEU run), named by metric;
        # bleu, test_bleu: the decoded BLEU, whatever is tuned to. Kept for readers of version 2
        # states: a BLEU run's tuned_bleu, another metric's metric_value and tuned_metric_value
        # (objective: 100 x what the optimizer maximises, 100 - TER for TER; the best is chosen by it)
        score = decoded_bleu if cfg.metric == "bleu" else metric_value
        entry = {"iteration": n, "metric": cfg.metric, "score": score, "tuned_score": tuned_score,
                 "bleu": decoded_bleu,
                 **({"tuned_bleu": tuned_score} if cfg.metric == "bleu" else
                    {"objective": decoded_objective, "metric_value": metric_value, "tuned_metric_value": tuned_score}),
                 "hypotheses": store_size, "new": added, "seed": seed, "change": change,
                 "decode_seconds": round(t_decode, 3), "optimize_seconds": round(t_opt, 3), **tested,
                 "seconds": round(time.perf_counter() - t0, 3)}
        best = state.get("best")
        if best is None or decoded_objective > best.get("objective", best["bleu"]):
            best = {"iteration": n, "metric": cfg.metric, "score": score, "bleu": decoded_bleu,
                    "weights": list(weights.items()),
                    **({"objective": decoded_objective} if cfg.metric != "bleu" else {})}
        if stop is None and cfg.patience and n - best["iteration"] >= cfg.patience:
            stop = f"no better {_label(cfg)} for {cfg.patience} iterations"
        state = {**state, "completed": n, "stop": stop, "weights": list(new.items()), "best": best,
                 "history": state["history"] + [entry], "store": store_record}
        _write_json(state_path, state)  # the commit point of iteration n
        if n > 1:  # the new store holds everything the next iteration or a resume needs
            prev = os.path.join(iteration_dir(cfg.workdir, n - 1), "store.npz")
            if os.path.exists(prev):
                os.remove(prev)
            shutil.rmtree(os.path.join(iteration_dir(cfg.workdir, n - 1), FORESTS), ignore_errors=True)
        pool = "the forests" if cfg.forests else "the store"
        tuned = "" if tuned_score is None else \
            f", {_label(cfg)} {tuned_score:.4f} on {pool} ({cfg.optimizer}, seed {seed})"
        measured = "" if metric_value is None else f", {_label(cfg)} = {metric_value:.4f}"
        timing = "" if not tested else f", test {tested['test_decode_seconds']:.2f} s"
        hooks.log(f"iteration {n}: BLEU = {decoded_bleu:.4f}{measured} (decoded 1-best){tuned}, "
                  f"{store_size} unique hypotheses (+{added}), max weight change {change:.3g}, "
                  f"{entry['seconds']:.2f} s (decoding {t_decode:.2f} s, optimizer {t_opt:.2f} s{timing})")
        if tested:
            hooks.log(f"iteration {n}: {_test_line(cfg, tested)} (decoded 1-best of {cfg.test_input} with the "
                      f"weights this iteration decoded the tuning set with)")
        weights = new
    return state, weights, n


def _finish(cfg, hooks, decoder, state, state_path, bleu, test, engine) -> dict:
    """Mark the run stopped, write the final weights (and with a ``test`` set their test
    translations); the summary of :func:`run_tuning`: ``metric`` and the tuned metric's
    scores under neutral keys (``score``, ``last_score``, ``tuned_score``, ``test_score``),
    the decoded BLEU (``bleu``, ``last_bleu``, ``test_bleu``), and in a BLEU run
    ``tuned_bleu`` (``tuned_score``'s old name)."""
    if state["stop"] is None:
        state = {**state, "stop": "iteration limit"}
        _write_json(state_path, state)
    final = os.path.join(cfg.workdir, decoder.final_name)
    best = state["best"]
    last = state["history"][-1] if state["history"] else {}
    is_bleu = cfg.metric == "bleu"
    if cfg.final_weights == "best":
        # the weights that decoded the best score: never the optimizer's next weights, which
        # no decoder has run with (even when the last iteration decoded best)
        final_weights, final_iteration = best["weights"], best["iteration"]
        final_score, final_bleu = best["score"], best["bleu"]
        which = f"the weights decoded in iteration {final_iteration} ({_named(cfg, final_score, final_bleu)})"
    else:
        final_weights = state["weights"]
        # only a run that stopped for lack of new hypotheses kept the weights it decoded last
        decoded = state["stop"] == "no new hypotheses"
        final_iteration = state["completed"] if decoded else None
        final_score = last.get("score") if decoded else None
        final_bleu = last.get("bleu") if decoded else None
        which = f"the weights after iteration {state['completed']}" + (
            "" if decoded else f" (not decoded: their {_label(cfg)} on the store was "
                               f"{last['tuned_score']:.4f})" if last.get("tuned_score") is not None else "")
    written = decoder.write_weights(final, _weights_of(final_weights),
                                    comment=f"mtplug tune {cfg.optimizer}: {which}")
    hooks.log(f"stopped after iteration {state['completed']}: {state['stop']}; final weights ({which}): {final}")
    tested = {}
    if test is not None:
        tested = _final_test(cfg, hooks, decoder, state, state_path, bleu, test, engine,
                             json.loads(json.dumps(final_weights)), final_iteration)
    keys = (("iteration", "score", "tuned_score", "bleu") + (("tuned_bleu",) if is_bleu else ())
            + ("hypotheses", "new") + (("test_score", "test_bleu") if test is not None else ()))
    return {"final": written[0], "files": written, "iterations": state["completed"], "stop": state["stop"],
            "seed": cfg.seed, "final_weights": cfg.final_weights, "final_iteration": final_iteration,
            "metric": cfg.metric, "score": final_score, "last_score": last.get("score"),
            "tuned_score": last.get("tuned_score"), "bleu": final_bleu, "last_bleu": last.get("bleu"),
            **({"tuned_bleu": last.get("tuned_bleu")} if is_bleu else {}), **tested,
            "history": [{k: h.get(k) for k in keys} for h in state["history"]]}


def _final_test(cfg, hooks, decoder, state, state_path, bleu, test, engine, final_weights: list,
                final_iteration: int | None) -> dict:
    """DIR/final.test.out, the test translations of the final weights, and their scores (the
    summary's ``test_*`` fields): a copy of the iteration's test.out when an iteration decoded
    them, else a decode of the test set (recorded in the state, so that a --resume of the
    finished run does not repeat it)."""
    out = os.path.join(cfg.workdir, decoder.final_name + "." + TEST_OUT)
    source = None if final_iteration is None else os.path.join(iteration_dir(cfg.workdir, final_iteration),
                                                                TEST_OUT)
    done = state.get("final_test") or {}
    if final_iteration is not None and source is not None and os.path.exists(source):
        entry = state["history"][final_iteration - 1]
        fields = {k: v for k, v in entry.items() if k.startswith("test_") and k != "test_decode_seconds"}
        with open(source, "rb") as fh, atomic_output(out, "wb") as fo:
            shutil.copyfileobj(fh, fo)
    elif done.get("weights") == final_weights and os.path.exists(out):
        fields = {k: v for k, v in done.items() if k != "weights"}
    else:
        folder = os.path.join(cfg.workdir, FINAL_DECODE)
        os.makedirs(folder, exist_ok=True)
        decoder.prepare(folder, _weights_of(final_weights))
        own = engine is None and bool(cfg.scheduler)   # a finished run resumed: no cluster yet
        engine = _connect(cfg, hooks) if own else engine
        try:
            path = decode_test(decoder, cfg, folder, test[0], None, engine)
        finally:
            if own:
                engine.close()
        fields = _test_fields(cfg, _scores(path, test[1], bleu, cfg.metric))
        os.replace(path, out)
        _write_json(state_path, {**state, "final_test": {"weights": final_weights, **fields}})
    hooks.log(f"final weights: {_test_line(cfg, fields)} ({out})")
    return {**fields, "test_out": out}
