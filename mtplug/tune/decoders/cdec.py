"""cdec: ``cdec -c cdec.ini -w WEIGHTS -k N -r`` with the shard on stdin and the unique
k-best list (``id ||| hyp ||| f=v ... ||| score``) on stdout, as cdec's tuning scripts call it.
"""

from __future__ import annotations

import os

from ...errors import InputError
from ...formats.cdec_weights import read_cdec_weights, write_cdec_weights
from ...formats.weights import Weights
from . import Decoder, ShardRun


class CdecDecoder(Decoder):
    name = "cdec"

    def start_weights(self) -> Weights:
        if not self.cfg.weights:
            raise InputError("cdec needs --weights FILE (the start weights)")
        return read_cdec_weights(self.cfg.weights)

    def prepare(self, folder: str, weights: Weights) -> None:
        self._weights = os.path.join(folder, "weights")
        write_cdec_weights(self._weights, weights)

    def shard_run(self, folder: str, shard_input: str, tag: str) -> ShardRun:
        kbest = os.path.join(folder, f"{tag}.kbest")
        argv = [*self.bin, "-c", self.cfg.config, "-w", self._weights, "-k", str(self.cfg.nbest), "-r",
                *self.extra]
        return ShardRun(argv, shard_input, kbest, kbest)

    def write_weights(self, path: str, weights: Weights, comment: str) -> list[str]:
        write_cdec_weights(path, weights, comment=comment)
        return [path]
