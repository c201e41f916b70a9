"""The decoder in the loop: cdec run as a program, one call per sentence or mini-batch.

dtrain links cdec as a library (``Decoder::Decode`` with the current weight vector
and a k-best observer). mtplug runs the decoder program instead, once per call,
with cdec's command line (:func:`mtplug.decoders.cdec.cdec_argv`; ``-r`` when
filter=uniq), the call's input lines on stdin exactly as dtrain passes them (plain
text, or ``<seg id="N" grammar=...>text</seg>``), and the k-best list read from
stdout, its sentence ids mapped back to the call's lines as cdec counts them
(:func:`mtplug.decoders.cdec.renumber_kbest`). The model score the trainer needs is
recomputed as w·f with the weights sent (the printed score has 6 digits).

A fresh process per call is what running the program allows — cdec reads its
weights once at start-up — so each call pays the decoder's start-up (loading grammars
and the LM). ``minibatch`` or ``batch`` amortise it.

k-best lines are parsed by mtplug's compiled n-best reader
(:func:`mtplug.formats.nbest.scan_nbest`), which also computes the BLEU statistics
of every hypothesis against its reference.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
import threading
from collections.abc import Sequence

import numpy as np

from ..decoders.cdec import cdec_argv, expected_ids, renumber_kbest, write_scratch_weights
from ..errors import InputError
from ..fileio import path_error
from ..formats.nbest import scan_nbest
from ..formats.references import References, encode_references
from .kbest import Kbest, split_scan


class CdecCalls:
    """Runs the cdec program (or a stand-in with its command line) for k-best lists.

    ``command``: the program, or a command line (split like a shell does) such as
    ``"python3 -m mtplug.tuning.standin cdec"``. ``decoder_config``: the cdec.ini passed
    with ``-c``; ``k``: k-best size; ``unique``: distinct strings only (cdec ``-r``).
    ``workdir``: where the per-call weight and k-best files go (default: a new temporary
    directory, removed by :meth:`close`); ``timeout``: seconds a call may take (None: no
    limit), after which the decoder is killed and InputError raised. InputError when
    ``command`` is empty.
    """

    def __init__(self, command, decoder_config: str, k: int, unique: bool = True, workdir: str | None = None,
                 timeout: float | None = None):
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not self.argv:
            raise InputError("no decoder program given")
        self.decoder_config = os.fspath(decoder_config)
        self.k = int(k)
        self.unique = bool(unique)
        self.timeout = timeout
        self._own_dir = workdir is None
        self.workdir = tempfile.mkdtemp(prefix="mtplug-dtrain-") if workdir is None else workdir
        self.calls = 0
        self._lock = threading.Lock()

    def close(self) -> None:
        """Remove the temporary ``workdir`` this object made (one given by the caller is kept)."""
        if self._own_dir:
            import shutil

            shutil.rmtree(self.workdir, ignore_errors=True)

    def command_line(self, weights_path: str) -> list[str]:
        """argv of one decoder call: the program, ``-c decoder_config``, the weights file
        ``weights_path`` and the k-best options (``-k``, ``-r`` when ``unique``)."""
        return cdec_argv(self.argv, self.decoder_config, weights_path, self.k, self.unique)

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
            write_scratch_weights(wpath, names, weights)
            cmd = self.command_line(wpath)
            data = "".join(line.rstrip("\n") + "\n" for line in inputs).encode("utf-8")
            try:
                proc = subprocess.run(cmd, input=data, capture_output=True, check=False, timeout=self.timeout)
            except subprocess.TimeoutExpired:
                raise InputError(f"the decoder ran longer than decoder_timeout {self.timeout:g} s and was stopped: "
                                 f"{' '.join(map(shlex.quote, cmd))}") from None
            except OSError as err:
                raise InputError(f"cannot run the decoder {self.argv[0]!r}: {err.strerror} "
                                 "(give the cdec program with --decoder-bin)") from None
            if proc.returncode != 0:
                tail = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
                raise InputError(f"the decoder failed with exit status {proc.returncode} "
                                 f"({' '.join(map(shlex.quote, cmd))}): {' | '.join(tail) or 'no message'}",
                                 self.decoder_config)
            lines, texts = renumber_kbest(proc.stdout, expected_ids(inputs), self.k, self.decoder_config)
            if not lines:
                return [Kbest.empty() for _ in inputs]
            try:
                with open(kpath, "wb") as fh:
                    fh.write(b"".join(lines))
            except OSError as exc:     # a full disk names no file at write()
                raise (path_error(exc, kpath) or exc) from None
            enc = encode_references(References([[r] for r in refs], "refs"), words)
            arrays = scan_nbest(kpath, words=words, space=space, refs=enc, threads=1)
            return split_scan(arrays, len(inputs), self.k, texts)
        finally:
            for p in (wpath, kpath):
                if os.path.exists(p):
                    os.unlink(p)
