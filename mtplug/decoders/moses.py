"""Moses: ``moses -config INI -weight-overwrite 'Name= v ...' [-weight-file SPARSE]
-n-best-list FILE N distinct -input-file SHARD`` (as mert-moses.pl calls it).

Dense weights (the ``[weight]`` lines of moses.ini) go in ``-weight-overwrite``, sparse
ones (names with ``_`` that have no ``[weight]`` line) in a ``name value`` file given to
``-weight-file``. Start weights: the ``[weight]`` section, then the sparse weights of
the config's ``[weight-file]`` (if any), then ``--weights`` (if given). The decoder
reads the user's moses.ini (relative paths in it keep working); the iteration folder
gets a copy with the weights updated, for the record. A config written by the loop
(``DIR/final``, the copies) names its sparse weights file in ``[weight-file]``, as
mert-moses.pl's final moses.ini does.
"""

from __future__ import annotations

import os

from ..formats.moses_ini import read_moses_ini, read_weight_file_entry, write_moses_config
from ..formats.number_text import format_shortest
from ..formats.sparse_weights import read_sparse_weights
from ..formats.weights_core import Weights, split_dense_name
from .base import Decoder, ShardRun


class MosesDecoder(Decoder):
    """``mtplug tune``'s Moses: one process per shard, dense weights in
    ``-weight-overwrite`` and sparse ones in a ``-weight-file`` (see the module
    docstring). Made from ``cfg`` (a :class:`mtplug.tuning.config.TuneConfig`); reads the
    ``[weight]`` section and ``[weight-file]`` entry of its moses.ini at once
    (InputError when they are malformed)."""

    name = "moses"

    def __init__(self, cfg):
        super().__init__(cfg)
        self.ini_weights = read_moses_ini(cfg.config)
        self.ini_weight_file = read_weight_file_entry(cfg.config)

    def start_weights(self) -> Weights:
        """moses.ini's ``[weight]`` values, overridden by its ``[weight-file]`` sparse
        weights, then by the ``--weights`` file (both optional)."""
        w = dict(self.ini_weights.items())
        if self.ini_weight_file:
            w.update(read_sparse_weights(self.ini_weight_file).items())
        if self.cfg.weights:  # optional start values for sparse features
            w.update(read_sparse_weights(self.cfg.weights).items())
        return Weights(w.items(), source=self.cfg.config)

    def split(self, weights: Weights) -> tuple[Weights, Weights]:
        """(dense, sparse): the weights moses.ini has ``[weight]`` lines for, in ini order,
        and the others (zeros left out), which go to the sparse weights file."""
        dense = Weights((n, weights[n]) for n in self.ini_weights if n in weights)
        sparse = Weights((n, v) for n, v in weights.items() if n not in self.ini_weights and v != 0.0)
        return dense, sparse

    def overwrite_string(self, dense: Weights) -> str:
        """'Label= v0 v1 Label2= v' for the dense weights (ini order)."""
        parts, last = [], None
        for name, value in dense.items():
            split = split_dense_name(name)
            label = split[0] if split else name
            if label != last:
                parts.append(f"{label}=")
                last = label
            parts.append(format_shortest(value))
        return " ".join(parts)

    def prepare(self, folder: str, weights: Weights) -> None:
        written = write_moses_config(os.path.join(folder, "moses.ini"), weights, self.cfg.config,
                                     os.path.join(folder, "sparse-weights"))
        self._overwrite = self.overwrite_string(self.split(weights)[0])
        self._sparse = written[1] if len(written) > 1 else None

    def shard_run(self, folder: str, shard_input: str, tag: str, onebest: bool = False) -> ShardRun:
        nbest = os.path.join(folder, f"{tag}.nbest")
        argv = [*self.bin, "-config", self.cfg.config, "-weight-overwrite", self._overwrite]
        if self._sparse:
            argv += ["-weight-file", self._sparse]
        size = 1 if onebest else self.cfg.nbest_size
        argv += ["-n-best-list", nbest, str(size), "distinct", "-input-file", shard_input, *self.extra]
        return ShardRun(argv, None, os.path.join(folder, f"{tag}.out"), nbest)

    def write_weights(self, path: str, weights: Weights, comment: str) -> list[str]:
        # Moses reads neither file with comments: the comment goes to the log only
        return write_moses_config(path, weights, self.cfg.config, path + ".sparse-weights")
