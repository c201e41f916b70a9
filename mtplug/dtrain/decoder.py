"""The decoder in the loop: cdec run as a program, one call per sentence or mini-batch.

dtrain links cdec as a library (``Decoder::Decode`` with the current weight vector
and a k-best observer). mtplug runs the decoder program instead, once per call::

    DECODER -c cdec.ini -w WEIGHTS -k K [-r]        (-r when filter=uniq)

with the call's input lines (exactly as dtrain passes them: plain text, or
``<seg id="N" grammar=...>text</seg>``) on stdin and the k-best list read from stdout,
``sent_id ||| hyp ||| f1=v1 f2=v2 ... ||| score`` (cdec.md §k-best). cdec numbers a
plain line by a counter that starts at 0 in every process and follows the last
``<seg id>``; the adapter maps the ids back to the call's lines that way. The weights
file is cdec's ``Name value`` (``%.17g``, zeros left out). The model score the trainer
needs is recomputed as w·f with the weights sent (the printed score has 6 digits).

A fresh process per call is what running the program allows — cdec reads its
weights once at start-up — so each call pays the decoder's start-up (loading grammars
and the LM). ``minibatch`` or ``batch`` amortise it.

k-best lines are parsed by mtplug's compiled n-best reader
(:func:`mtplug.formats.nbest.scan_nbest`), which also computes the BLEU statistics
of every hypothesis against its reference.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import tempfile
import threading
from typing import Sequence

import numpy as np

from ..errors import InputError
from ..formats.cdec_weights import format_cdec_weights
from ..formats.nbest import scan_nbest
from ..formats.references import References, encode_references
from .kbest import Kbest, split_scan

_SEG_ID = re.compile(r'^\s*<seg\b[^>]*?\bid\s*=\s*["\']?(\d+)')


def expected_ids(lines: Sequence[str]) -> list[int]:
    """The sent_id cdec gives each input line of one process (-1-based counter, <seg id> resets it)."""
    out, counter = [], -1
    for line in lines:
        counter += 1
        m = _SEG_ID.match(line)
        if m:
            counter = int(m.group(1))
        out.append(counter)
    return out


def write_weights_file(path: str, names: Sequence[str], values: np.ndarray) -> None:
    """cdec weights for one decoder call (a scratch file: not atomic, not synced)."""
    nz = np.flatnonzero(values).tolist()
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(format_cdec_weights((names[i], float(values[i])) for i in nz))


class CdecDecoder:
    """Runs the cdec program (or a stand-in with its command line) for k-best lists.

    ``command``: the program, or a command line (split like a shell does) such as
    ``"python3 standin_cdec.py"``. ``workdir``: where the per-call weight and k-best
    files go (default: a new temporary directory, removed by :meth:`close`).
    """

    def __init__(self, command, decoder_config: str, k: int, unique: bool = True, workdir: str | None = None):
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not self.argv:
            raise InputError("no decoder program given")
        self.decoder_config = os.fspath(decoder_config)
        self.k = int(k)
        self.unique = bool(unique)
        self._own_dir = workdir is None
        self.workdir = tempfile.mkdtemp(prefix="mtplug-dtrain-") if workdir is None else workdir
        self.calls = 0
        self._lock = threading.Lock()

    def close(self) -> None:
        if self._own_dir:
            import shutil

            shutil.rmtree(self.workdir, ignore_errors=True)

    def command_line(self, weights_path: str) -> list[str]:
        cmd = [*self.argv, "-c", self.decoder_config, "-w", weights_path, "-k", str(self.k)]
        return cmd + ["-r"] if self.unique else cmd

    def decode(self, inputs: Sequence[str], refs: Sequence[str], names: Sequence[str], weights: np.ndarray,
               words, space) -> list[Kbest]:
        """k-best lists of ``inputs`` (one per line) under ``weights`` (indexed like ``names``).

        ``refs``: the reference of each input; ``words``/``space``: the caller's token
        vocabulary and FeatureSpace (feature ids of the result index ``space.names``).
        Returns one :class:`Kbest` per input (empty when the decoder wrote none).
        """
        with self._lock:
            self.calls += 1
        fd, wpath = tempfile.mkstemp(prefix="weights.", dir=self.workdir)
        os.close(fd)
        kpath = os.path.join(self.workdir, "kbest." + os.path.basename(wpath)[len("weights."):])
        try:
            write_weights_file(wpath, names, weights)
            cmd = self.command_line(wpath)
            data = "".join(line.rstrip("\n") + "\n" for line in inputs).encode("utf-8")
            try:
                proc = subprocess.run(cmd, input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            except OSError as err:
                raise InputError(f"cannot run the decoder {self.argv[0]!r}: {err.strerror} "
                                 "(give the cdec program with --decoder-bin)") from None
            if proc.returncode != 0:
                tail = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
                raise InputError(f"the decoder failed with exit status {proc.returncode} "
                                 f"({' '.join(map(shlex.quote, cmd))}): {' | '.join(tail) or 'no message'}",
                                 self.decoder_config)
            lines, texts = self._renumber(proc.stdout, expected_ids(inputs))
            if not lines:
                return [Kbest.empty() for _ in inputs]
            with open(kpath, "wb") as fh:
                fh.write(b"".join(lines))
            enc = encode_references(References([[r] for r in refs], "refs"), words)
            arrays = scan_nbest(kpath, words=words, space=space, refs=enc)
            return split_scan(arrays, len(inputs), self.k, texts)
        finally:
            for p in (wpath, kpath):
                if os.path.exists(p):
                    os.unlink(p)

    def _renumber(self, out: bytes, expected: list[int]) -> tuple[list[bytes], list[str]]:
        """Decoder output lines with their sent_id replaced by the input position."""
        lines, texts = [], []
        pos, cur, count = -1, None, 0
        n = len(expected)
        for no, raw in enumerate(out.splitlines(), 1):
            if not raw.strip():
                continue
            head, sep, rest = raw.partition(b"|||")
            try:
                sid = int(head)
            except ValueError:
                sid = None
            if not sep or sid is None:
                raise InputError(f"decoder output line {no}: expected 'id ||| hyp ||| features ||| score', "
                                 f"got {raw[:80]!r}", self.decoder_config)
            if sid != cur or count >= self.k:
                q = pos + 1
                while q < n and expected[q] != sid:
                    q += 1
                if q == n:
                    if sid == cur:      # more than k lines: keep the first k
                        continue
                    raise InputError(f"decoder output line {no}: sentence id {sid} does not belong to the "
                                     f"input (expected {expected})", self.decoder_config)
                pos, cur, count = q, sid, 0
            count += 1
            lines.append(b"%d |||%s\n" % (pos, rest))
            texts.append(rest.split(b"|||", 1)[0].strip().decode("utf-8", "replace"))
        return lines, texts
