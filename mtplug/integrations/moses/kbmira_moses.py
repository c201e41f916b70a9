"""``kbmira`` on BLEU n-best files, as Moses 34452895's ``mert/kbmira.cpp`` runs it, byte
for byte: the same weights file, the same stdout and the same stderr lines.

What makes Moses's output (each replayed here; docs/mert-moses.md lists them):

* its rows (mtplug.integrations.moses.moses_nbest): block-by-block pairing of the files,
  float values, SparseVector's numbering of names and its defective duplicate check
  (at most 16 rows per sentence survive);
* its arithmetic: float32 everywhere (weights, scores, gains, background, averages),
  BleuScorer's logf/expf, the background starting at 1s and moving only after an update
  candidate (hope != fear and hope's gain above fear's) -- pyx/_kbmira_m2.pyx;
* its random numbers: glibc ``rand()`` after ``srand(seed)`` drives libstdc++'s
  ``random_shuffle`` of the sentence order at every enumerator reset (before each pass
  and each evaluation); without ``-r`` Moses seeds with the clock (``time(NULL)``), and
  so does this;
* its output: the weights are written again each time a pass's average beats the best
  so far (to stdout: one more block each time; with ``-o`` the file is rewritten, and not
  created when no pass scores above 0); ``F<i> <w>`` for dense weights, ``<name> <w>`` for
  sparse ones with |w| > 1e-8, C++'s ``%g``; stderr's ``kbmira with c=...`` header, seed
  line, legacy-init warning, ``Found N initial sparse features``, one ``.`` per 100
  sentences read, ``Initial BLEU``, one line per pass, ``Best BLEU``;
* ``--streaming`` (file order, a ``.`` per 100 sentences on every pass over the files)
  and ``--streaming-out`` (the current weights after every sentence on stdout, no
  initial evaluation).

Not replayed: ``--verbose``'s per-update dump (the flag is accepted and changes nothing
else in Moses's output files).
"""

from __future__ import annotations

import sys
import time

import numpy as np

from ...fileio import atomic_output
from ...formats.sparse_weights import read_sparse_weights
from .moses_nbest import read_dense_init, read_moses_nbest, read_sparse_init

F32 = np.float32


def g(value) -> str:
    """C++ ostream's default for a float (``%g``, exponent with its sign, as Moses prints)."""
    return "%g" % float(value)


def _err(text: str) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()


def _weights_text(w: np.ndarray, n_init: int, names: list) -> str:
    """kbmira.cpp's weight lines for the averaged float32 weights ``w`` [F]: ``F<i>`` for
    the ``n_init`` dense-init weights, then SparseVector's name of id ``i - n_init`` for
    every other weight above 1e-8 in magnitude."""
    from ...errors import InputError

    lines = [f"F{i} {g(v)}\n" for i, v in enumerate(w[:n_init].tolist())]
    sparse = np.flatnonzero(np.abs(w[n_init:]) > 1e-8)
    if len(sparse) and sparse[-1] >= len(names):
        # Moses would read past its table of names here (undefined behaviour)
        raise InputError(f"weight {n_init + int(sparse[-1])} has no feature name: the --dense-init file has "
                         f"{n_init} values, fewer than the features files' dense features")
    lines += [f"{names[k]} {g(w[n_init + k])}\n" for k in sparse.tolist()]
    return "".join(lines)


def _stream_line(w: np.ndarray) -> str:
    """MiraWeightVector's operator<<: ``i:w`` for |w| > 1e-8, a space before every entry
    but index 0's (so a line may start with a space)."""
    return "".join(("" if i == 0 else " ") + f"{i}:{g(w[i])}" for i in np.flatnonzero(np.abs(w) > 1e-8).tolist())


def run(args) -> int:
    """Moses's kbmira on ``args`` (the parsed flags of mtplug.integrations.moses.kbmira;
    n-best mode, BLEU scores files): writes what Moses writes. Returns 0."""
    from ...errors import InputError
    from ...optimizers.kbmira_m2 import moses_kbmira
    from .common import split_list

    c = F32(0.01 if args.cparam is None else args.cparam)
    decay = F32(0.999 if args.decay is None else args.decay)
    iters = 60 if args.iters is None else int(args.iters)
    no_shuffle = bool(args.no_shuffle)
    streaming = bool(args.streaming)
    _err(f"kbmira with c={g(c)} decay={g(decay)} no_shuffle={int(no_shuffle)}\n")
    if args.random_seed is not None:
        seed = int(args.random_seed) & 0xFFFFFFFF
        _err(f"Initialising random seed to {args.random_seed}\n")
    else:
        seed = int(time.time()) & 0xFFFFFFFF
        _err("Initialising random seed from system clock\n")
    encoded: list = []
    init = np.zeros(0, dtype=F32)
    if args.dense_init:
        init, dense_names, legacy = read_dense_init(args.dense_init)
        if legacy:
            _err("WARN: dense features in deprecated Moses mert format. Prefer 'name= value' format.\n")
        encoded += dense_names
    sparse_init = []
    if args.sparse_init:
        if len(init) == 0:
            raise InputError("sparse initialization requires dense initialization")
        # Moses stops reading at the first pair it cannot parse; a malformed file is bad
        # input here (one line naming file and line), and a well-formed one reads alike
        read_sparse_weights(args.sparse_init)
        sparse_init = read_sparse_init(args.sparse_init)
        encoded += [name for name, _ in sparse_init]
        _err(f"Found {len(sparse_init)} initial sparse features\n")
    rows = read_moses_nbest(split_list(args.ffile), split_list(args.scfile), encoded)
    if rows.sctype != "BLEU":
        raise InputError(f"the scores files hold {rows.sctype}; this path is Moses's BLEU kbmira")
    # Moses's weight vector: the dense-init values, then one weight per SparseVector id
    # after them (the sparse-init ones); the data's sparse features sit at D + id, D the
    # data's dense count. With as many init values as dense features these agree; Moses
    # runs on when they differ (and names weights by the shifted ids), and so does this.
    n_init = len(init)
    start = np.zeros(max(n_init, rows.n_dense) + len(rows.names), dtype=np.float64)
    start[:n_init] = init
    index = {name: k for k, name in enumerate(rows.names)}
    for name, value in sparse_init:
        start[n_init + index[name]] = F32(value)
    dots = rows.n_sentences // 100    # the enumerator prints one per 100 sentences it steps over
    if not streaming:
        _err("." * dots)
    out_stream = sys.stdout
    each = None
    if args.streaming_out:
        def each(w):
            out_stream.write(_stream_line(w) + "\n")
    flow = _Log(streaming, dots, args.streaming_out)

    def improved(w):
        text = _weights_text(w.astype(F32), n_init, rows.names)
        if args.output_file:
            # Moses rewrites the file after every improving pass; here each version
            # replaces the last whole, so a full disk leaves what stood there
            with atomic_output(args.output_file) as fh:
                fh.write(text)
        else:
            out_stream.write(text)

    result = moses_kbmira(
        (rows.dense, rows.indptr, rows.ids, rows.vals, rows.stats, rows.offsets), rows.n_dense, start, seed,
        kind="bleu", passes=iters, c=float(c), decay=float(decay), model_bg=bool(args.model_bg),
        safe_hope=bool(args.safe_hope), order="fixed" if (no_shuffle or streaming) else "shuffle",
        initial=not args.streaming_out, each_sentence=each, on_improved=improved)
    flow.finish(result.info, rows.n_sentences)
    out_stream.flush()
    return 0


class _Log:
    """Moses's stderr lines around the passes (kbmira.cpp's training loop), written once
    the numbers are known: they depend only on the per-pass results."""

    def __init__(self, streaming: bool, dots: int, streaming_out: bool):
        self.streaming, self.dots, self.streaming_out = streaming, dots, streaming_out

    def finish(self, info: dict, n_sentences: int) -> None:
        d = "." * self.dots if self.streaming else ""
        if not self.streaming_out:
            _err(f"Initial BLEU = {d}{g(F32(info['initial']))}\n")
        best = F32(0)
        for bleu, steps, loss in zip(info["bleu_per_pass"], info["steps_per_pass"], info["loss_per_pass"]):
            avg = F32(F32(loss) / F32(n_sentences))
            _err(f"{d}{steps}/{n_sentences} updates, avg loss = {g(avg)}{d}, BLEU = {g(F32(bleu))}\n")
            best = max(best, F32(bleu))
        _err(f"Best BLEU = {g(best)}\n")
