"""The decoder in the loop as one cdec process per shard: started once, fed a sentence at a time.

cdec reads its weights file once, at start-up, but with ``--mr_mira_compat`` it adds a
weight change given in the input's markup to its weights before decoding each line
(decoder/decoder.cc, ``ApplyWeightDelta``)::

    <seg delta="BASE64">source text</seg>
    <seg id="7" grammar="g.7.gz" delta="BASE64">source text</seg>   (dtrain's own markup kept)

BASE64 encodes ``name NUL value`` records, the value the 8 bytes of a little-endian
double; cdec adds each to its weight of that name (``w[f] += delta``, in double). The
answer to every line is a line holding k and then exactly k lines (hypotheses, then
blank lines), each written and flushed before cdec reads its next input line, so a line
can be written and its answer read before the next is sent. The answer's features are
base64 too; :func:`mtplug._ext._mira_kbest.mira_block_text` writes them as cdec's
ordinary k-best lines (``%g``), which mtplug's n-best reader then reads as it reads the
per-call decoder's.

**The same weights as the per-call path.** :class:`PersistentCdec` keeps, per feature,
the double cdec holds. For each call it sends, for every feature whose target differs
(the trainer's weight; 0 for a weight of ±0, which the per-call weights file leaves
out), a delta ``d`` with ``held + d == target`` exactly in IEEE double: ``target - held``
or a neighbour of it one or two units in the last place away. When no such double
exists (``target`` and ``held`` of opposite signs or far apart in size: the sum's
rounding steps are coarser than ``target``'s), a line without text goes first with
``-held`` for those weights (``held - held`` is +0 exactly; cdec finds no parse for it
and answers with an empty line), and the sentence's line then adds ``target`` to 0. So
the decoder decodes every sentence with weights bit for bit those of the per-call path's
weights file (``%.17g``, which cdec's ``strtod`` reads back exactly).

What still differs from the per-call path, inside cdec: a fresh process numbers feature
names (``FD``) in the order it meets them, starting with the weights file's, and a
hypothesis's features are summed and listed in hash-map order of those numbers. A
persistent process numbers them in another order, so hypotheses of equal model score
may come in another order, another derivation of a string may represent it under
``-r``, and features are listed in another order. Features whose value is 0 are not in
the base64 records (the per-call list writes them as ``name=0``).

cdec's base64 encoder drops the low four bits of the answer's last byte when the records
take 2 bytes modulo 3 (:mod:`mtplug._ext._mira_kbest` repairs that value from the
list's other lines; :func:`fix_by_score` from the line's score when no other line has
the feature intact); a call with a line neither repairs is decoded again the per-call
way (:class:`mtplug.dtrain.decoder.CdecCalls`), with the same weights.

Faults: every answer must come within ``timeout`` seconds (the first one includes the
decoder's start-up), else the decoder's process group is killed and the run ends with
one line; so it does when the decoder exits or writes something that is not an answer.
The decoder runs in a session of its own (a wrapper script's children are killed with
it) and, on Linux, receives SIGKILL when mtplug dies.
"""

from __future__ import annotations

import base64
import contextlib
import os
import select
import shlex
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from typing import BinaryIO

import numpy as np

from .._ext._mira_kbest import mira_block_text
from ..decoders.cdec import cdec_argv, write_scratch_weights
from ..errors import InputError
from ..fileio import path_error
from ..formats.nbest import scan_nbest
from ..formats.references import References, encode_references
from ..tuning.loop import _has_ended, _killed_with_us
from ..tuning.loop import _stop as stop_groups
from .decoder import CdecCalls
from .kbest import Kbest, split_scan

#: dtrain's default decoder_timeout (seconds): 24 hours, as mtplug tune's --decoder-timeout
DEFAULT_TIMEOUT = 86400.0
#: the flag that makes cdec apply per-line weight deltas (and write base64 k-best lists)
MIRA_FLAG = "--mr_mira_compat"

#: how often (seconds) a decoder that does not answer is looked at: has it ended?
_LOOK_SECONDS = 0.5


def exact_deltas(held: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The deltas that move cdec's weights ``held`` to ``target`` exactly.

    ``held``, ``target``: float64 [n], the weights cdec holds and those it should hold
    (no -0.0 in either). Returns ``(changed, deltas, impossible)``: the indices whose
    bits differ (int64 [m]), a float64 [m] with ``held[changed] + deltas == target[changed]``
    bit for bit wherever that is possible, and the indices for which no double does it.
    """
    changed = np.flatnonzero(held.view(np.int64) != target.view(np.int64))
    h, t = held[changed], target[changed]
    d = t - h
    bad = (h + d).view(np.int64) != t.view(np.int64)
    if bad.any():
        # h + d rounds to t for a d at most a couple of units in the last place away when one
        # exists (a step past the largest double is infinite and never fits)
        for step in (1, 2):
            for toward in (np.inf, -np.inf):
                idx = np.flatnonzero(bad)
                if not len(idx):
                    break
                trial = d[idx]
                with np.errstate(over="ignore"):
                    for _ in range(step):
                        trial = np.nextafter(trial, toward)
                    ok = (h[idx] + trial).view(np.int64) == t[idx].view(np.int64)
                d[idx[ok]] = trial[ok]
                bad[idx[ok]] = False
    return changed, d, changed[bad]


def encode_delta(names: Sequence[bytes], values: np.ndarray) -> str:
    """cdec's base64 weight records (``name NUL little-endian double``) of ``names`` with
    ``values`` (float64 [len(names)]); padded with NUL bytes to a multiple of 3 so that
    no ``=`` is needed (cdec's decoder stops at an empty name)."""
    raw = np.ascontiguousarray(values, dtype="<f8").tobytes()
    data = b"".join(b"%s\0%s" % (name, raw[8 * i:8 * i + 8]) for i, name in enumerate(names))
    data += b"\0" * (-len(data) % 3)
    return base64.b64encode(data).decode("ascii")


def with_delta(line: str, delta: str) -> str:
    """An input line with ``delta="..."`` in its ``<seg>`` tag (one is added around a plain
    line). cdec takes a line for markup only when it starts with ``<seg``; the seg id and
    the other attributes (dtrain's ``grammar=``) are kept."""
    attr = f' delta="{delta}"' if delta else ""
    if line.startswith("<seg") and ">" in line and (len(line) == 4 or line[4] in " \t>"):
        return "<seg" + attr + line[4:]
    return f"<seg{attr}>{line}</seg>"


def fix_by_score(unresolved: list, weights: Mapping[str, float]) -> dict[int, float]:
    """Cut values (lines :func:`mira_block_text` could not repair from other lines) told
    apart by the line's score: cdec writes ``w·f`` under the weights it decoded with, 6
    significant digits. ``unresolved``: mira_block_text's tuples; ``weights``: the weights
    cdec holds, by name (a name not there weighs 0). A candidate is taken when it alone gives ``w·f`` within the score's
    rounding (1e-5 relative) and every other candidate misses by a thousand times more;
    returns ``{hypothesis index: value}`` of the lines so restored."""
    fixes = {}
    for index, recs, name, candidates, score_text in unresolved:
        try:
            score = float(score_text)
        except ValueError:
            continue
        w = weights.get(name, 0.0)
        if not np.isfinite(score) or w == 0.0:
            continue
        rest = float(sum(weights.get(n, 0.0) * v for n, v in recs))
        tol = 1e-5 * max(1.0, abs(score))
        fits = [c for c in candidates if np.isfinite(c) and c != 0.0 and abs(rest + w * c - score) <= tol]
        near = [c for c in candidates if np.isfinite(c) and c != 0.0 and abs(rest + w * c - score) <= 1000 * tol]
        if len(fits) == 1 and len(near) == 1:
            fixes[index] = fits[0]
    return fixes


class DecoderFault(InputError):
    """The persistent decoder exited, hung, or answered something that is not a k-best list."""


class PersistentCdec:
    """One cdec process (or a stand-in with its command line) answering sentence after sentence.

    Same interface as :class:`mtplug.dtrain.decoder.CdecCalls` (:meth:`decode`,
    :meth:`close`, ``calls``), and the same arguments: ``command`` the program or a command
    line, ``decoder_config`` the cdec.ini, ``k`` the k-best size, ``unique`` distinct strings
    only (``-r``), ``workdir`` where its files go (default: a temporary folder, removed by
    :meth:`close`); ``timeout``: seconds allowed for each answer (the first
    includes the decoder's start-up); ``label``: how messages name this decoder (``shard
    0``). ``starts`` counts the processes started, ``weight_lines`` the lines without text
    sent to set weights no single addition reaches, ``repaired`` the values cut by cdec's
    base64 encoder that were restored and ``fallbacks`` the calls decoded the per-call
    way because one was not.
    """

    def __init__(self, command, decoder_config: str, k: int, unique: bool = True, workdir: str | None = None,
                 timeout: float = DEFAULT_TIMEOUT, label: str = "shard 0"):
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not self.argv:
            raise InputError("no decoder program given")
        self.decoder_config = os.fspath(decoder_config)
        self.k, self.unique, self.timeout, self.label = int(k), bool(unique), float(timeout), label
        self._own_dir = workdir is None
        self.workdir = tempfile.mkdtemp(prefix="mtplug-dtrain-") if workdir is None else workdir
        self.calls = self.starts = self.weight_lines = self.repaired = self.fallbacks = 0
        self.answers = 0                       # lines answered by the running process
        self._proc: subprocess.Popen | None = None
        self._buf = bytearray()
        self._err_path = os.path.join(self.workdir, f"decoder.{os.getpid()}.{id(self)}.err")
        self._cmd: list[str] = []
        self._err: BinaryIO | None = None
        self._held = np.zeros(0)               # the weights cdec holds, by the caller's feature id
        self._names_obj: Sequence[str] | None = None   # the caller's names list they are indexed by
        self._encoded: list[bytes] = []        # those names as bytes
        self._orphans: dict[str, float] = {}   # weights cdec holds under names the caller lacks
        self._percall = CdecCalls(self.argv, self.decoder_config, self.k, self.unique, workdir=self.workdir)

    # ---------------------------------------------------------------- process
    def command_line(self, weights_path: str) -> list[str]:
        """argv of the process: cdec's k-best call with ``--mr_mira_compat``."""
        return [*cdec_argv(self.argv, self.decoder_config, weights_path, self.k, self.unique), MIRA_FLAG]

    def _start(self, names: Sequence[str], target: np.ndarray) -> None:
        wpath = os.path.join(self.workdir, f"weights.start.{id(self)}")
        write_scratch_weights(wpath, names, target)
        self._cmd = self.command_line(wpath)
        # O_APPEND: the file is truncated after each answer and cdec's writes follow it to 0
        self._err = open(self._err_path, "ab")  # noqa: SIM115 - open while the process runs
        try:
            # the preexec_fn calls only a C function resolved before the fork, getppid and kill
            self._proc = subprocess.Popen(self._cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=self._err, start_new_session=True,
                                          preexec_fn=_killed_with_us())  # noqa: PLW1509
        except OSError as err:
            raise InputError(f"cannot run the decoder {self.argv[0]!r}: {err.strerror} "
                             "(give the cdec program with --decoder-bin)") from None
        self.starts += 1
        self.answers = 0
        self._buf = bytearray()
        self._held = np.array(target, dtype=np.float64)
        self._names_obj = names
        self._encoded = [name.encode("utf-8") for name in names]
        self._orphans = {}

    def _stop(self) -> None:
        """Kill the process group of the running decoder and reap it."""
        proc, self._proc = self._proc, None
        if proc is not None:
            for pipe in (proc.stdin, proc.stdout):
                with contextlib.suppress(OSError):
                    if pipe is not None:
                        pipe.close()
            stop_groups([proc])   # its process group killed (SIGINT, SIGTERM held back meanwhile)
        if self._err is not None:
            self._err.close()
            self._err = None

    def close(self) -> None:
        """Stop the decoder; remove the temporary ``workdir`` this object made."""
        self._stop()
        self._percall.close()
        if self._own_dir:
            import shutil

            shutil.rmtree(self.workdir, ignore_errors=True)
        elif os.path.exists(self._err_path):
            os.unlink(self._err_path)

    def _stderr_tail(self) -> str:
        try:
            with open(self._err_path, "rb") as fh:
                lines = [ln.strip() for ln in fh.read().decode("utf-8", "replace").splitlines() if ln.strip()]
        except OSError:
            return "; nothing on its stderr"
        return f"; its stderr ends {lines[-1][-300:]!r}" if lines else "; nothing on its stderr"

    def _fault(self, what: str) -> DecoderFault:
        """Stop the decoder and make the one line that reports ``what`` happened."""
        proc = self._proc
        cmd = shlex.join(self._cmd)
        if what == "exited":
            assert proc is not None
            # wait for its end without reaping it: its pid names its process group until _stop
            deadline = time.monotonic() + 5
            while not _has_ended(proc) and time.monotonic() < deadline:
                time.sleep(0.02)
            ended = _has_ended(proc)
            tail = self._stderr_tail()
            self._stop()
            rc = proc.returncode if ended else None
            if rc is None:
                how = "closed its output"
            elif rc < 0:
                how = f"was killed by {signal.Signals(-rc).name}" if -rc in signal.valid_signals() else \
                    f"exited with status {rc}"
            else:
                how = f"exited with status {rc}"
            return DecoderFault(f"the decoder {how} on {self.label} after {self.answers} sentences: {cmd}{tail}")
        self._stop()
        if what == "timeout":
            return DecoderFault(f"the decoder gave no answer within decoder_timeout {self.timeout:g} s on "
                                f"{self.label} (sentence {self.answers + 1} of its process) and was stopped "
                                f"(its process group killed): {cmd}")
        return DecoderFault(f"the decoder on {self.label} answered {what}, not a k-best list of "
                            f"--mr_mira_compat (does the decoder take that flag? decoder_process=per_call runs "
                            f"one process per call instead): {cmd}")

    def _take(self, count: int, deadline: float) -> bytes:
        """The next ``count`` lines of the decoder's output as one bytes object, without the
        last newline (no object per line: a block goes whole to mira_block_text), waiting
        at most until ``deadline`` (time.monotonic)."""
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
        end, seen = -1, 0             # the last newline found, and how many so far
        while True:
            while seen < count:
                found = self._buf.find(b"\n", end + 1)
                if found < 0:
                    break
                end, seen = found, seen + 1
            if seen == count:
                break
            left = deadline - time.monotonic()
            if left <= 0:
                raise self._fault("timeout")
            # a child of the decoder (a wrapper script's) may hold the pipe open after the
            # decoder ended: look at the process too, not only for the end of its output
            if not poller.poll(max(1, int(min(left, _LOOK_SECONDS) * 1000) + 1)):
                if _has_ended(self._proc):
                    raise self._fault("exited")
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise self._fault("exited")
            self._buf += chunk
        out = bytes(self._buf[:end])
        del self._buf[:end + 1]
        return out

    def _answer(self, line: str) -> bytes | None:
        """Send one input line; the k lines of its answer as one block (None: no parse)."""
        assert self._proc is not None and self._proc.stdin is not None
        deadline = time.monotonic() + self.timeout
        try:
            self._proc.stdin.write(line.encode("utf-8") + b"\n")
            self._proc.stdin.flush()
        except (BrokenPipeError, ConnectionResetError):
            raise self._fault("exited") from None
        head = self._take(1, deadline).strip()
        if not head:
            block = None                  # cdec writes one empty line when it finds no parse
        elif head == str(self.k).encode():
            block = self._take(self.k, deadline)
        else:
            raise self._fault(f"{bytes(head[:60])!r}")
        self.answers += 1
        if self._err is not None:
            with contextlib.suppress(OSError):
                os.truncate(self._err_path, 0)   # keeps the file at one sentence's messages
        return block

    # ---------------------------------------------------------------- weights
    def _align(self, names: Sequence[str]) -> None:
        """Index the held weights like ``names``: the same list grown (the caller's vocabulary
        adds names at the end), or another caller's, matched by name. Weights cdec holds
        under names ``names`` lacks are kept in ``_orphans`` (set to 0 by the next delta)."""
        n = len(names)
        if names is self._names_obj:
            if len(self._held) < n:
                self._held = np.concatenate([self._held, np.zeros(n - len(self._held))])
                self._encoded.extend(name.encode("utf-8") for name in names[len(self._encoded):n])
            return
        known = dict(zip(self._held_names(), self._held.tolist()))
        self._held = np.array([known.pop(name, 0.0) for name in names], dtype=np.float64)
        self._orphans.update({name: v for name, v in known.items() if v != 0.0})
        self._names_obj = names
        self._encoded = [name.encode("utf-8") for name in names]

    def _held_names(self) -> list[str]:
        return [b.decode("utf-8") for b in self._encoded[:len(self._held)]]

    def _delta(self, names: Sequence[str], target: np.ndarray) -> tuple[str, str]:
        """The base64 deltas that make cdec hold ``target`` (by the ids of ``names``), and
        record that it does: ``(first, second)``. ``first`` (often empty) sets to 0 the
        weights no single addition reaches (``-held + held`` is +0 exactly), to be sent on a
        line of its own; ``second`` then adds the rest (``0 + target`` is exact too)."""
        self._align(names)
        changed, deltas, impossible = exact_deltas(self._held, target)
        first = ""
        if len(impossible) or self._orphans:
            names_first = [self._encoded[i] for i in impossible.tolist()] + \
                [name.encode("utf-8") for name in self._orphans]
            values_first = np.concatenate([-self._held[impossible],
                                           -np.fromiter(self._orphans.values(), dtype=np.float64)])
            first = encode_delta(names_first, values_first)
            self._orphans = {}
            deltas[np.isin(changed, impossible)] = target[impossible]
        self._held[changed] = target[changed]
        second = encode_delta([self._encoded[i] for i in changed.tolist()], deltas) if len(changed) else ""
        return first, second

    # ---------------------------------------------------------------- decoding
    def decode(self, inputs: Sequence[str], refs: Sequence[str], names: Sequence[str], weights: np.ndarray,
               words, space) -> list[Kbest]:
        """k-best lists of ``inputs`` under ``weights`` (indexed like ``names``), as
        :meth:`mtplug.dtrain.decoder.CdecCalls.decode`: one :class:`Kbest` per input."""
        self.calls += 1
        w = np.asarray(weights, dtype=np.float64)
        target = np.where(w == 0.0, 0.0, w)     # ±0: the per-call weights file leaves it out, cdec holds +0
        if self._proc is None:
            self._start(names, target)
            delta = ""
        else:
            first, delta = self._delta(names, target)
            if first:
                # a line with no text: cdec applies its delta, finds no parse and says so
                self.weight_lines += 1
                self._answer(with_delta("", first))
        texts: list[str] = []
        chunks: list[bytes] = []
        by_name: dict[str, float] | None = None     # the weights by name, made when a line needs them
        unresolved = False
        for pos, line in enumerate(inputs):
            line = line.rstrip("\n")
            if not line:
                continue                   # cdec skips an empty line: no answer, no list (as per call)
            block = self._answer(with_delta(line, delta))
            delta = ""                     # the rest of a mini-batch: the same weights
            if block is None:
                continue
            try:
                text, hyps, repaired, bad = mira_block_text(block, pos)
                if bad:
                    if by_name is None:
                        by_name = dict(zip(names, target.tolist()))
                    fixes = fix_by_score(bad, by_name)
                    if len(fixes) == len(bad):
                        text, hyps, more, bad = mira_block_text(block, pos, fixes)
                        repaired = more + len(fixes)     # the witnesses' repairs again, and the score's
            except ValueError as err:
                raise self._fault(f"a malformed line ({err})") from None
            self.repaired += repaired
            unresolved = unresolved or len(bad) > 0
            chunks.append(text)
            texts.extend(hyps)
        if unresolved:
            self.fallbacks += 1
            return self._percall.decode(inputs, refs, names, weights, words, space)
        data = b"".join(chunks)
        if not data:
            return [Kbest.empty() for _ in inputs]
        kpath = os.path.join(self.workdir, f"kbest.{id(self)}")
        try:
            with open(kpath, "wb") as fh:
                fh.write(data)
        except OSError as exc:     # a full disk names no file at write()
            raise (path_error(exc, kpath) or exc) from None
        try:
            enc = encode_references(References([[r] for r in refs], "refs"), words)
            arrays = scan_nbest(kpath, words=words, space=space, refs=enc, threads=1)
        finally:
            os.unlink(kpath)
        return split_scan(arrays, len(inputs), self.k, texts)
