"""cdec, run as a program: ``cdec -c cdec.ini -w WEIGHTS -k N [-r]`` with input lines on
stdin and the k-best list (``sent_id ||| hyp ||| f=v ... ||| score``, cdec.md §k-best) on
stdout. The one place that knows cdec's command line and how it numbers sentences;
``mtplug tune`` (a shard per process, :class:`CdecDecoder`) and ``mtplug dtrain`` (a
sentence or mini-batch per process, :mod:`mtplug.dtrain.decoder`) both build on it.

cdec numbers a plain input line by a counter that starts at 0 in every process and
follows the last ``<seg id="N">``; :func:`expected_ids` replays that counter so the
k-best lines can be mapped back to input lines.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

import numpy as np

from ..errors import InputError
from ..formats.cdec_weights import format_cdec_weights, read_cdec_weights, write_cdec_weights
from ..formats.weights_core import Weights
from .base import Decoder, ShardRun

_SEG_ID = re.compile(r'^\s*<seg\b[^>]*?\bid\s*=\s*["\']?(\d+)')


_SEG_TAGS = re.compile(r"^\s*<seg\b[^>]*>|</seg>\s*$")


def source_words(line: str) -> int:
    """The number of source words of one cdec input line, plain or ``<seg ...>text</seg>``
    (what cdec's SentenceMetadata::GetSourceLength counts for a sentence)."""
    return len(_SEG_TAGS.sub(" ", line).split())


def cdec_argv(program: Sequence[str], config: str, weights: str, k: int, unique: bool,
              extra: Sequence[str] = ()) -> list[str]:
    """The decoder call: ``PROGRAM -c CONFIG -w WEIGHTS -k K [-r] EXTRA...``."""
    return [*program, "-c", config, "-w", weights, "-k", str(k), *(["-r"] if unique else []), *extra]


def expected_ids(lines: Sequence[str]) -> list[int]:
    """The sent_id cdec gives each input line of one process (a counter from 0 that
    ``<seg id="N">`` sets to N)."""
    out, counter = [], -1
    for line in lines:
        counter += 1
        m = _SEG_ID.match(line)
        if m:
            counter = int(m.group(1))
        out.append(counter)
    return out


def renumber_kbest(out: bytes, expected: Sequence[int], k: int, where: str) -> tuple[list[bytes], list[str]]:
    """k-best output lines with cdec's sent_id replaced by the input position (0-based).

    ``expected``: :func:`expected_ids` of the process's input; lines are matched in
    order (a repeated seg id maps to its next occurrence after k lines); more than ``k``
    lines for an input are dropped. Returns (renumbered lines, hypothesis texts).
    Raises InputError naming ``where`` on a malformed line or an id not in the input.
    """
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
                             f"got {raw[:80]!r}", where)
        if sid != cur or count >= k:
            q = pos + 1
            while q < n and expected[q] != sid:
                q += 1
            if q == n:
                if sid == cur:      # more than k lines: keep the first k
                    continue
                raise InputError(f"decoder output line {no}: sentence id {sid} does not belong to the "
                                 f"input (expected {list(expected)[:10]}{' ...' if n > 10 else ''})", where)
            pos, cur, count = q, sid, 0
        count += 1
        lines.append(b"%d |||%s\n" % (pos, rest))
        texts.append(rest.split(b"|||", 1)[0].strip().decode("utf-8", "replace"))
    return lines, texts


def write_scratch_weights(path: str, names: Sequence[str], values: np.ndarray) -> None:
    """cdec weights for one decoder call, zeros left out (a scratch file: not atomic)."""
    nz = np.flatnonzero(values).tolist()
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(format_cdec_weights((names[i], float(values[i])) for i in nz))


class CdecDecoder(Decoder):
    """``mtplug tune``'s cdec: one process per shard, the shard on stdin, the unique
    k-best list on stdout, as cdec's tuning scripts call it."""

    name = "cdec"

    def start_weights(self) -> Weights:
        """The cdec weights file of ``--weights`` (required: InputError without it)."""
        if not self.cfg.weights:
            raise InputError("cdec needs --weights FILE (the start weights)")
        return read_cdec_weights(self.cfg.weights)

    def prepare(self, folder: str, weights: Weights) -> None:
        self._weights = os.path.join(folder, "weights")
        write_cdec_weights(self._weights, weights)

    def shard_run(self, folder: str, shard_input: str, tag: str, onebest: bool = False) -> ShardRun:
        kbest = os.path.join(folder, f"{tag}.kbest")
        argv = cdec_argv(self.bin, self.cfg.config, self._weights, 1 if onebest else self.cfg.nbest_size, True,
                         self.extra)
        forests = None
        if self.cfg.forests and not onebest:
            # a fresh folder per shard: cdec unions a forest into a file already there, and
            # every shard numbers its sentences from 0 (cdec crashes if the folder is missing)
            forests = os.path.join(folder, f"{tag}.forests")
            os.makedirs(forests, exist_ok=True)
            argv += ["-O", forests]
        return ShardRun(argv, shard_input, kbest, kbest, forests)

    def output_ids(self, lines: Sequence[str]) -> list[int]:
        return expected_ids(lines)

    def write_weights(self, path: str, weights: Weights, comment: str) -> list[str]:
        write_cdec_weights(path, weights, comment=comment)
        return [path]
