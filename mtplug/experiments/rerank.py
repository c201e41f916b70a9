"""Reranking n-best lists under given weights: the 1-best of each sentence, or its top k
re-sorted, for every n-best format mtplug reads (Moses n-best with dense and sparse
features, cdec k-best; gzip detected by content).

The files are scanned once into flat arrays (:func:`mtplug.formats.nbest.scan_nbest`,
without references and without de-duplication, so row i of a file is its i-th
non-blank line); the model score Σ w·f over dense and sparse features comes from the
kernel the optimizers use (``_rows.hyp_scores``), and the ranking is a stable NumPy
sort. Ties go to the hypothesis read first (an earlier file, then an earlier line), as
in the order Moses writes its n-best lists. A re-sorted n-best streams the files a
second time and copies the chosen lines, so no hypothesis is ever a Python object
unless it is written.

Sentences are numbered by their n-best ids, 0 .. S-1 with S = the largest id + 1 (or
the ``sentences`` asked for); a sentence without hypotheses is an error, because a
1-best file with a line missing no longer lines up with its references.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Callable

import numpy as np

from .._ext import _rows
from .._ext._nbest_scan import Vocabulary, decode_hypotheses
from ..corpus import FeatureSpace, concat_arrays
from ..errors import InputError
from ..fileio import CHUNK_BYTES, atomic_output, iter_chunks
from ..formats.nbest import scan_nbest
from ..formats.number_text import format_shortest
from ..formats.weights import detect_weights_format
from ..formats.weights_core import Weights, list_names
from ..validation import check_count

_SEP = b"|||"
#: the prefix of a note that is a warning (shown even with -q, issued by :func:`rerank`)
WARNING = "warning: "
#: output lines joined per write call
_WRITE_BATCH = 4096


def weight_vector(weights, names: Sequence[str], n_dense: int, *,
                  sparse_weights: str | None = None) -> tuple[np.ndarray, list[str]]:
    """Weights lined up with n-best features: ``(vector float64 [len(names)], notes)``.

    ``weights``: a weights file in any format mtplug reads (told apart by content; lined
    up by :func:`mtplug.start_weights.read_start`'s rules, so a positional init.opt or
    weights.txt must hold one value per dense column and a moses.ini every dense label's
    values), or a mapping name -> value. kbmira output (``F<i> w``) is matched to the
    dense columns by position. ``sparse_weights``: a Moses sparse weights file read as
    well (for dense-only files). ``names``: the features, ``n_dense`` dense columns first.

    A feature without a weight counts 0 and a weight for a feature no hypothesis has is
    ignored (``notes`` say how many). InputError naming the file when the weights cannot
    be lined up, or when none of them names a feature of the n-best lists (every model
    score would be 0).
    """
    from ..start_weights import check_match, read_start

    names = list(names)
    path = None
    if isinstance(weights, (str, os.PathLike)):
        path = os.fspath(weights)
        fmt = detect_weights_format(path)
        if fmt == "mira-out" and sparse_weights:
            raise InputError("is kbmira output, which holds its sparse weights itself: give no sparse "
                             "weights file with it", path)
        named = read_start(path, names, n_dense, sparse_init=sparse_weights, fmt=fmt).weights
    elif isinstance(weights, Mapping):
        try:
            named = Weights(weights)
        except ValueError as err:
            raise InputError(f"weights: {err}") from None
    else:
        raise TypeError(f"weights must be a file path or a mapping name -> value, got {type(weights).__name__}")
    vector = named.to_array(names, allow_unknown=True)
    known = set(names)
    unknown = [name for name, _ in named.items() if name not in known]
    # the rule every command shares; a partial match's warning goes with the notes
    notes = [f"{WARNING}{w}" for w in check_match(list(named), names, n_dense, path or "weights")]
    missing = [name for name in names if name not in named]
    if missing:
        notes.append(f"{len(missing)} feature(s) of the n-best lists have no weight and count 0 "
                     f"({list_names(missing)})")
    if unknown:
        notes.append(f"{len(unknown)} weight(s) name features no hypothesis has ({list_names(unknown)}): ignored")
    return vector, notes


class Ranking:
    """The hypotheses of n-best files ranked per sentence by model score under weights.

    Rows are the hypotheses in reading order (file after file, line after line):
    ``file_rows`` int64 [F + 1] (rows of ``paths[f]``: ``file_rows[f]:file_rows[f+1]``),
    ``sent_ids`` int32 [n], ``scores`` float64 [n] (model scores), ``grouped`` int64 [n]
    (rows of sentence 0, then 1, ..., reading order within a sentence) with
    ``sent_offsets`` int64 [S + 1] into it; ``weights`` float64 [n_features] lined up
    with ``feature_names`` (``n_dense`` dense columns first); ``notes``: lines for a log;
    ``words``, ``hyp_indptr``, ``hyp_bytes``: the vocabulary and LEB128-coded word ids the
    hypothesis strings are decoded from. Build it with :func:`rank`.
    """

    def __init__(self, paths, file_rows, sent_ids, scores, grouped, sent_offsets, feature_names, n_dense,
                 weights, notes, words, hyp_indptr, hyp_bytes):
        self.paths = list(paths)
        self.file_rows = file_rows
        self.sent_ids = sent_ids
        self.scores = scores
        self.grouped = grouped
        self.sent_offsets = sent_offsets
        self.feature_names = feature_names
        self.n_dense = n_dense
        self.weights = weights
        self.notes = notes
        self._words = words
        self._hyp_indptr = hyp_indptr
        self._hyp_bytes = hyp_bytes
        self._order: np.ndarray | None = None

    @property
    def n_sentences(self) -> int:
        """Sentences S (the highest sentence id read + 1)."""
        return len(self.sent_offsets) - 1

    @property
    def n_hypotheses(self) -> int:
        """Hypotheses n read, over all files."""
        return len(self.scores)

    def best_rows(self) -> np.ndarray:
        """Row of the highest model score per sentence, int64 [S] (ties: the row read first)."""
        out = np.empty(self.n_sentences, dtype=np.int64)
        _rows.argmax_per_sentence(np.ascontiguousarray(self.scores[self.grouped]), self.sent_offsets, out)
        return self.grouped[out]

    def n_changed(self) -> int:
        """Sentences whose 1-best is not their first hypothesis (the decoder's 1-best)."""
        return int(np.count_nonzero(self.best_rows() != self.grouped[self.sent_offsets[:-1]]))

    def order(self) -> np.ndarray:
        """All rows, sentence by sentence, each sentence's best first, int64 [n]; ties keep
        reading order (stable), so ``order()[sent_offsets[s]] == best_rows()[s]``."""
        if self._order is None:
            by_score = np.argsort(-self.scores, kind="stable")
            self._order = by_score[np.argsort(self.sent_ids[by_score], kind="stable")]
        return self._order

    def top_rows(self, k: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The best ``k`` rows of every sentence (all of them for None), best first:
        ``(rows int64 [m], offsets int64 [S + 1])``, sentence s = rows[offsets[s]:offsets[s+1]]."""
        if k is not None:
            k = check_count(k, "k")
        counts = np.diff(self.sent_offsets)
        if k is None or k >= counts.max(initial=0):
            return self.order(), self.sent_offsets
        rank = np.arange(self.n_hypotheses, dtype=np.int64) - np.repeat(self.sent_offsets[:-1], counts)
        keep = rank < k
        offsets = np.zeros_like(self.sent_offsets)
        np.cumsum(np.minimum(counts, k), out=offsets[1:])
        return self.order()[keep], offsets

    def texts(self, rows: np.ndarray) -> list[str]:
        """Hypothesis strings of ``rows`` (int64): tokens joined by one space, as the
        metrics see them."""
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        ptr, data = _rows.gather_csr(self._hyp_indptr, self._hyp_bytes, 1, rows)
        tptr, toks = decode_hypotheses(data, ptr, 0, len(rows))
        words = self._words.words()
        return [" ".join([words[t] for t in toks[tptr[i]:tptr[i + 1]]]) for i in range(len(rows))]

    def one_best(self) -> list[str]:
        """The 1-best string of every sentence, in sentence-id order."""
        return self.texts(self.best_rows())

    def write_one_best(self, path: str) -> None:
        """Write one line per sentence, its 1-best (``-``: stdout); atomically."""
        with atomic_output(path) as fh:
            fh.write("".join(text + "\n" for text in self.one_best()))

    def write_nbest(self, path: str, k: int | None = None) -> int:
        """Write the top ``k`` (all for None) of every sentence, best first, as the input's
        own lines: ``id ||| hypothesis ||| features`` byte for byte, then ``||| score``
        with the new model score (shortest round-trip text) in place of the input's fourth
        field (added when the line had none); later fields are kept. Returns the number of
        lines written. Atomic; the inputs are read a second time."""
        rows, _ = self.top_rows(k)
        wanted = np.sort(rows)
        position = np.searchsorted(wanted, rows)
        buf = bytearray()
        ends = [np.zeros(1, np.int64)]
        for f, path_f in enumerate(self.paths):
            lo, hi = np.searchsorted(wanted, self.file_rows[f:f + 2])
            ends.append(_read_lines(path_f, wanted[lo:hi] - self.file_rows[f],
                                    int(self.file_rows[f + 1] - self.file_rows[f]), buf)[1])
        ptr = np.concatenate(ends).tolist()
        with atomic_output(path, "wb") as fh:
            batch: list[bytes | bytearray] = []
            for score, i in zip(self.scores[rows].tolist(), position.tolist()):
                batch.append(_with_score(buf[ptr[i]:ptr[i + 1]], format_shortest(score).encode()))
                if len(batch) >= _WRITE_BATCH:
                    fh.write(b"".join(batch))
                    batch.clear()
            fh.write(b"".join(batch))
        return len(rows)


def _with_score(line: bytes | bytearray, score: bytes) -> bytes | bytearray:
    """``line`` (no line end) with its fourth field replaced by ``score`` (fields found as
    the n-best scanner finds them: the leftmost ``|||`` separators)."""
    s1 = line.find(_SEP)
    s2 = line.find(_SEP, s1 + 3)
    s3 = line.find(_SEP, s2 + 3)
    if s3 < 0:
        return line + (b"" if line.endswith((b" ", b"\t")) else b" ") + b"||| " + score + b"\n"
    s4 = line.find(_SEP, s3 + 3)
    return line[:s3] + b"||| " + score + (b" " + line[s4:] if s4 >= 0 else b"") + b"\n"


def _read_lines(path: str, rows: np.ndarray, n_rows: int, out: bytearray | None = None,
                chunk_bytes: int = CHUNK_BYTES) -> tuple[np.ndarray, np.ndarray]:
    """Find the non-blank lines ``rows`` (sorted int64, 0-based among the non-blank lines,
    as the n-best scanner counts hypotheses) of ``path``: ``(line numbers int64 [m], ends
    int64 [m])``; with ``out``, the lines (line ends dropped) are appended to it, line i
    ending at ``ends[i]``. ``n_rows``: how many non-blank lines the file had when it was
    scanned (InputError if it changed since)."""
    found_lines, found_ends = [], []
    base = 0
    for chunk, first_line in iter_chunks(path, chunk_bytes):
        arr = np.frombuffer(chunk, dtype=np.uint8)
        breaks = np.flatnonzero(arr == 10)
        starts = np.concatenate(([0], breaks + 1))
        ends = np.concatenate((breaks, [len(arr)]))
        if starts[-1] == len(arr):       # the chunk ends with its last line's '\n'
            starts, ends = starts[:-1], ends[:-1]
        # as the scanner: one trailing CR dropped; blank = only spaces and tabs. A line that
        # starts with another byte is not blank, which settles nearly all of them at once.
        ends = ends - ((ends > starts) & (arr[np.maximum(ends - 1, 0)] == 13))
        head = arr[np.minimum(starts, len(arr) - 1)]
        filled = (ends > starts) & (head != 32) & (head != 9)
        for j in np.flatnonzero((ends > starts) & ~filled).tolist():
            filled[j] = bool(chunk[starts[j]:ends[j]].strip(b" \t"))
        lines = np.flatnonzero(filled)
        lo, hi = np.searchsorted(rows, [base, base + len(lines)])
        pick = lines[rows[lo:hi] - base]
        if len(pick):
            found_lines.append(first_line + pick)
            if out is not None:
                size = len(out)
                out += b"".join([chunk[a:b] for a, b in zip(starts[pick].tolist(), ends[pick].tolist())])
                found_ends.append(size + np.cumsum(ends[pick] - starts[pick]))
        base += len(lines)
    if base != n_rows:
        raise InputError(f"changed while being read: {base} hypotheses now, {n_rows} at first", path)
    empty = np.zeros(0, np.int64)
    return (np.concatenate(found_lines) if found_lines else empty,
            np.concatenate(found_ends) if found_ends else empty)


def _where(paths: Sequence[str], file_rows: np.ndarray, row: int) -> tuple[str, int]:
    """``(file, line number)`` of global row ``row``."""
    f = int(np.searchsorted(file_rows, row, side="right")) - 1
    local = row - int(file_rows[f])
    lines, _ = _read_lines(paths[f], np.array([local], np.int64), int(file_rows[f + 1] - file_rows[f]))
    return paths[f], int(lines[0])


def rank(nbest_paths: Sequence[str], weights, *, sparse_weights: str | None = None,
         sentences: int | None = None, threads: int = 1,
         progress: Callable[[int], None] | None = None) -> Ranking:
    """Read n-best files (merged by sentence id, in the order given) and rank their
    hypotheses by the model score under ``weights`` (a weights file or a mapping, see
    :func:`weight_vector`; ``sparse_weights``: a Moses sparse weights file as well).

    ``sentences``: how many sentences there are (ids 0 .. sentences-1); default the
    largest id + 1. InputError (naming the files) when a sentence has no hypothesis, an
    id is out of range, or a model score is not finite. ``threads``: OpenMP threads of
    the scoring kernel (the result does not depend on them; one thread scores 2M
    hypotheses of 15 features in 15 ms, next to 6 s of reading them). ``progress``:
    called with the bytes read after each chunk.
    """
    paths = [os.fspath(p) for p in nbest_paths]
    if not paths:
        raise InputError("no n-best files given")
    if sentences is not None:
        sentences = check_count(sentences, "sentences=")
    if isinstance(weights, (str, os.PathLike)):
        detect_weights_format(weights)    # a missing or unreadable weights file fails before the long scan
    words, space = Vocabulary(), FeatureSpace()
    parts = [scan_nbest(p, words=words, space=space, progress=progress, threads=1) for p in paths]
    file_rows = np.zeros(len(paths) + 1, dtype=np.int64)
    np.cumsum([len(a["sent_ids"]) for a in parts], out=file_rows[1:])
    arrays = parts[0] if len(parts) == 1 else concat_arrays(parts)
    del parts
    names = space.feature_names
    vector, notes = weight_vector(weights, names, space.n_dense, sparse_weights=sparse_weights)
    sent_ids = arrays["sent_ids"]
    n_sent = int(sent_ids.max()) + 1 if sentences is None else sentences
    if sentences is not None and int(sent_ids.max()) >= sentences:
        row = int(np.argmax(sent_ids >= sentences))
        path, line = _where(paths, file_rows, row)
        raise InputError(f"sentence id {int(sent_ids[row])} is out of range: expected {sentences} sentences "
                         f"(ids 0 .. {sentences - 1})", path, line)
    counts = np.bincount(sent_ids, minlength=n_sent)
    empty = np.flatnonzero(counts == 0)
    if len(empty):
        raise InputError(f"sentence {int(empty[0])} has no hypotheses ({len(empty)} of {n_sent} sentences are "
                         f"empty); every id from 0 to {n_sent - 1} needs at least one, or its 1-best line would "
                         "be missing", ", ".join(paths))
    scores = np.empty(len(sent_ids), dtype=np.float64)
    dense = np.ascontiguousarray(arrays["dense"], dtype=np.float64).reshape(len(sent_ids), space.n_dense)
    _rows.hyp_scores(dense, arrays["sparse_indptr"], arrays["sparse_ids"], arrays["sparse_values"], vector,
                     scores, max(1, threads))
    bad = np.flatnonzero(~np.isfinite(scores))
    if len(bad):
        path, line = _where(paths, file_rows, int(bad[0]))
        raise InputError(f"the model score of this hypothesis is {scores[bad[0]]} (features times weights "
                         "overflow a double); expected finite scores", path, line)
    offsets = np.zeros(n_sent + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    grouped = np.argsort(sent_ids, kind="stable").astype(np.int64)
    return Ranking(paths, file_rows, sent_ids, scores, grouped, offsets, names, space.n_dense, vector, notes,
                   words, arrays["hyp_indptr"], arrays["hyp_bytes"])


def rerank(nbest_paths: Sequence[str], weights, **options) -> list[str]:
    """The 1-best string of every sentence of the n-best files under ``weights`` (a
    weights file or a mapping name -> value), in sentence-id order; ``options`` as
    :func:`rank`."""
    import warnings

    ranking = rank(nbest_paths, weights, **options)
    for note in ranking.notes:
        if note.startswith(WARNING):
            warnings.warn(note[len(WARNING):], stacklevel=2)
    return ranking.one_best()
