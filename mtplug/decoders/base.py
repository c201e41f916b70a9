"""What every decoder adapter is: :class:`Decoder`, and :class:`ShardRun`, the one
decoder process it asks the loop to run."""

from __future__ import annotations

import abc
import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from ..formats.weights_core import Weights


@dataclass
class ShardRun:
    """One decoder process: argv, the file for its stdin (None: no stdin), where its
    stdout goes, and the n-best file it leaves (may be the stdout file)."""

    argv: list[str]
    stdin: str | None
    stdout: str
    nbest: str
    #: the folder the decoder writes this shard's forests to, ``<decoder's sentence id>.bin.gz``
    #: (cdec -O), or None
    forests: str | None = None


class Decoder(abc.ABC):
    """A decoder adapter: builds its command lines and names its files (one subclass per decoder).

    Made from ``cfg``, a :class:`mtplug.tuning.config.TuneConfig` (the decoder's
    ``decoder_bin``, ``decoder_args``, ``config``, ``weights``, ``nbest``, ...).
    """

    name = ""
    #: the file name of the final weights' format in the working directory
    final_name = "final"

    def __init__(self, cfg):
        self.cfg = cfg
        self.bin = decoder_command(cfg.decoder_bin)
        self.extra = shlex.split(cfg.decoder_args or "")

    @abc.abstractmethod
    def start_weights(self) -> Weights:
        """The weights of the first iteration, by feature name, read from the decoder's
        configuration (and ``--weights``); InputError when they are missing or malformed."""
        ...

    @abc.abstractmethod
    def prepare(self, folder: str, weights: Weights) -> None:
        """Write the weight files the decoder reads for this iteration into ``folder``."""
        ...

    @abc.abstractmethod
    def shard_run(self, folder: str, shard_input: str, tag: str, onebest: bool = False) -> ShardRun:
        """The process that decodes ``shard_input`` into ``folder`` (file names from ``tag``):
        the ``--nbest``-best list (and forests with ``--forests``), or with ``onebest`` a
        list of size 1 and no forests (the held-out test set's decode)."""
        ...

    def output_ids(self, lines: Sequence[str]) -> list[int]:
        """The sentence id the decoder writes for each line of one process's input
        (default: the line's position from 0)."""
        return list(range(len(lines)))

    @abc.abstractmethod
    def write_weights(self, path: str, weights: Weights, comment: str) -> list[str]:
        """Write ``weights`` in the decoder's own format; returns the files written."""
        ...


def decoder_command(spec: str) -> list[str]:
    """``--decoder-bin``: an executable path, or a command line split like a shell
    (``"python3 standin.py moses"``)."""
    if os.path.exists(spec):
        return [os.path.abspath(spec)]
    return shlex.split(spec)
