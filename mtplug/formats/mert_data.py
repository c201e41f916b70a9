"""Moses extractor files: features.dat and scores.dat, text and binary.

One block per sentence in each file; every data line ends with a space::

    FEATURES_TXT_BEGIN_0 <sid> <n hyps> <n dense> <dense names...> \\n
    <dense values> [<sparse name>=<value> ...] \\n
    FEATURES_TXT_END_0
    SCORES_TXT_BEGIN_0 <sid> <n hyps> 9 BLEU
    c1 t1 c2 t2 c3 t3 c4 t4 reflen \\n
    SCORES_TXT_END_0

Moses keeps features and statistics as 32-bit floats and prints them with C++'s
default six significant digits; the writer rounds the same way, so files written
from the same n-best are byte-identical to Moses's (pyx/_textio.pyx prints many
sentences' blocks at once; :func:`extract_files` streams one n-best list into both
files a few sentences at a time). BLEU rows are mtplug's own layout
(mtplug.metrics.bleu.STATS_LAYOUT), which is Moses's column order. A scores.dat of
another Moses scorer names it in the header (``3 PER``, ``3 TER``, ``12 BLEU,TER``) and
holds its statistics (mtplug.metrics.moses_scorers; lines formatted by
mtplug.metrics.moses_scores_format); every block of a file names the same scorer.

The binary variant (extractor ``--binary``) has the same header text with the tags
``FEATURES_BIN_BEGIN_0`` / ``SCORES_BIN_BEGIN_0``, then per hypothesis the raw
native-endian float32 values (``n dense`` resp. 9; no sparse features), then the line
``FEATURES_BIN_END_0`` / ``SCORES_BIN_END_0``. The readers take either form per block
(pyx/_mertdata_scan.pyx does the parsing); scores blocks of old Moses versions, which
kept statistics as int32, are recognised too.
"""

from __future__ import annotations

import collections
import contextlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .._ext import _mertdata_scan, _textio
from ..errors import InputError
from ..fileio import ICONV_HINT, atomic_output, invalid_utf8, open_binary
from ..metrics.bleu import N_STATS, REF_LEN_COLUMN
from ..metrics.moses_scorers import metric_of_sctype, sctype_of
from ..metrics.moses_scores_format import format_header, format_stats_lines, sctype_of_header

_FEAT_BEGIN = "FEATURES_TXT_BEGIN_0"
_FEAT_END = "FEATURES_TXT_END_0"
_SCORE_BEGIN = "SCORES_TXT_BEGIN_0"
_SCORE_END = "SCORES_TXT_END_0"
_FEAT_BIN_BEGIN = "FEATURES_BIN_BEGIN_0"
_FEAT_BIN_END = "FEATURES_BIN_END_0"
_SCORE_BIN_BEGIN = "SCORES_BIN_BEGIN_0"
_SCORE_BIN_END = "SCORES_BIN_END_0"
#: float32 holds every integer up to here exactly
_FLOAT32_EXACT = 1 << 24


#: rows formatted per call of the text kernels: their buffers stay near 16 MB
_BATCH_ROWS = 1 << 16


def _threads() -> int:
    return max(1, os.cpu_count() or 1)


def _features_text(dense_names: Sequence[str]) -> tuple[bytes, bytes, bytes]:
    """``(begin, tail, end)`` of features.dat blocks: the header's text before and after
    ``<sid> <count>``, and the closing line."""
    return (f"{_FEAT_BEGIN} ".encode(), f" {len(dense_names)} {' '.join(dense_names)} \n".encode(),
            f"{_FEAT_END}\n".encode())


_SCORES_TEXT = (f"{_SCORE_BEGIN} ".encode(), f" {N_STATS} BLEU\n".encode(), f"{_SCORE_END}\n".encode())


def _sentence_batches(sent_offsets: np.ndarray):
    """``(s0, s1)`` ranges of sentences of about _BATCH_ROWS rows each (at least one sentence)."""
    S = len(sent_offsets) - 1
    s0 = 0
    while s0 < S:
        s1 = int(np.searchsorted(sent_offsets, sent_offsets[s0] + _BATCH_ROWS, side="right")) - 1
        s1 = min(max(s1, s0 + 1), S)
        yield s0, s1
        s0 = s1


def write_features(path: str, corpus, binary: bool = False, drop_sparse: bool = False) -> None:
    """Write ``corpus``'s features as a Moses features.dat (atomically).

    With ``binary``, blocks are Moses's binary variant (extractor ``--binary``): dense
    values as native-endian float32, ``n_dense`` per hypothesis. That form has no
    sparse features, so a store with any raises ValueError instead of dropping them,
    unless ``drop_sparse`` (what Moses's extractor does, silently).
    """
    names = corpus.feature_names
    dense_names = " ".join(names[: corpus.n_dense])
    if binary and not drop_sparse:
        nnz = int(corpus.sparse_indptr[-1])
        if nnz:
            raise ValueError(
                f"this store has {nnz} sparse feature values and Moses's binary features.dat cannot hold "
                "sparse features (Moses drops them silently); write the text form instead")
    with atomic_output(path, "wb") as out:
        if not binary:
            arena, offsets = corpus.space.names.to_arrays()
            text = _features_text(names[: corpus.n_dense])
            off = np.ascontiguousarray(corpus.sent_offsets, dtype=np.int64)
            dense = np.ascontiguousarray(corpus.dense, dtype=np.float64).reshape(corpus.n_hypotheses, corpus.n_dense)
            for s0, s1 in _sentence_batches(off):
                out.write(_textio.format_features_blocks(
                    np.arange(off[s0], off[s1], dtype=np.int64), off[s0:s1 + 1] - off[s0],
                    np.arange(s0, s1, dtype=np.int64), dense, corpus.sparse_indptr, corpus.sparse_ids,
                    corpus.sparse_values, arena, offsets, *text, _threads()))
            return
        for s in range(corpus.n_sentences):
            lo, hi = int(corpus.sent_offsets[s]), int(corpus.sent_offsets[s + 1])
            if hi == lo:
                continue
            block = np.ascontiguousarray(corpus.dense[lo:hi], dtype=np.float32)
            if not np.all(np.isfinite(block)):
                raise ValueError(f"a feature value of sentence {s} is beyond float32 range")
            out.write(f"{_FEAT_BIN_BEGIN} {s} {hi - lo} {corpus.n_dense} {dense_names} \n".encode())
            out.write(block.tobytes())
            out.write(_FEAT_BIN_END.encode() + b"\n")


def write_scores(path: str, corpus, binary: bool = False) -> None:
    """Write ``corpus``'s statistics as a Moses scores.dat (atomically), under the Moses
    scorer name of its metric (``BLEU``, ``TER``, ``BLEU,TER``; ValueError for a metric
    Moses has no scorer for).

    With ``binary``, blocks are Moses's binary variant: 9 native-endian float32 per
    hypothesis (Moses keeps statistics as float; an average reference length stays
    fractional, as in the text form); BLEU only.
    """
    if corpus.stats.shape[1] == 0:
        raise ValueError("this store has no metric statistics (no references were given)")
    if not corpus.metric.is_bleu:
        _write_scorer_scores(path, corpus, binary)
        return
    div = corpus.ref_len_divisor
    with atomic_output(path, "wb") as out:
        if not binary:
            off = np.ascontiguousarray(corpus.sent_offsets, dtype=np.int64)
            stats = np.ascontiguousarray(corpus.stats, dtype=np.int32)
            for s0, s1 in _sentence_batches(off):
                out.write(_textio.format_scores_blocks(
                    np.arange(off[s0], off[s1], dtype=np.int64), off[s0:s1 + 1] - off[s0],
                    np.arange(s0, s1, dtype=np.int64), stats, *_SCORES_TEXT, REF_LEN_COLUMN, div, _threads()))
            return
        for s in range(corpus.n_sentences):
            lo, hi = int(corpus.sent_offsets[s]), int(corpus.sent_offsets[s + 1])
            if hi == lo:
                continue
            block = corpus.stats[lo:hi]
            if block.max(initial=0) > _FLOAT32_EXACT:
                raise ValueError(f"a statistic of sentence {s} exceeds 2**24, which float32 cannot hold exactly")
            rows = block.astype(np.float32)
            if div != 1:
                rows[:, REF_LEN_COLUMN] = block[:, REF_LEN_COLUMN] / div
            out.write(f"{_SCORE_BIN_BEGIN} {s} {hi - lo} {N_STATS} BLEU\n".encode())
            out.write(rows.tobytes())
            out.write(_SCORE_BIN_END.encode() + b"\n")


def _write_scorer_scores(path: str, corpus, binary: bool) -> None:
    """scores.dat of a Moses scorer other than BLEU alone (text only, as Moses's
    extractor writes every scorer's lines through ScoreStats)."""
    sctype = sctype_of(corpus.metric)
    if binary:
        # Moses's binary blocks: the text header with BIN tags, the float32 values Moses stores
        from ..metrics.moses_scores_format import HEADER_NAMES, n_stats, stored_values

        with atomic_output(path, "wb") as out:
            for s in range(corpus.n_sentences):
                lo, hi = int(corpus.sent_offsets[s]), int(corpus.sent_offsets[s + 1])
                if hi == lo:
                    continue
                values = np.array([stored_values(r, sctype) for r in corpus.stats[lo:hi].tolist()], dtype=np.float32)
                out.write(f"{_SCORE_BIN_BEGIN} {s} {hi - lo} {n_stats(sctype)} {HEADER_NAMES.get(sctype, sctype)}\n"
                          .encode())
                out.write(values.tobytes())
                out.write(_SCORE_BIN_END.encode() + b"\n")
        return
    with atomic_output(path, "wb") as out:
        for s in range(corpus.n_sentences):
            lo, hi = int(corpus.sent_offsets[s]), int(corpus.sent_offsets[s + 1])
            if hi == lo:
                continue
            lines = [format_header(s, hi - lo, sctype), *format_stats_lines(corpus.stats[lo:hi], sctype), _SCORE_END]
            out.write(("\n".join(lines) + "\n").encode())


# Messages for the scanner's status codes (pyx/_mertdata_scan.pyx). Fields: t = the
# text at fault, a/b = numbers it reports, sid/count = the block's header, begin/end =
# the block's tags, hyp = "binary block of sentence S, hypothesis k of N".
_MESSAGES = {
    2: "expected '{begin_txt} <sentence> <count> <dim> ...' (or {begin_bin}), got {t60!r}",
    3: "header announces {a} dense features but names {b}",
    4: "dense feature names differ from the first block's: expected {first!r}, got {names!r}",
    5: "block of sentence {sid} ends before its {count} lines",
    6: "expected {end} after {count} {what} of sentence {sid}{got}{hint}",
    7: "expected {a} dense values, got {b}",
    8: "expected {dim} numbers, got {t80!r}",
    9: "feature value is NaN or infinite",
    10: "expected 'name=value' after the dense values, got {t!r}",
    11: "expected a number in {t!r}",
    12: "feature value in {t!r} is NaN or infinite",
    13: "feature {t!r} twice on one line",
    14: "invalid UTF-8 in feature name '{t}'; " + ICONV_HINT,
    15: "expected {first_type} after the sentence id and count; got {score_type!r}",
    16: "expected {a} statistics, got {b}",
    17: "expected {dim} non-negative integers, got {t!r} (reflen:average files cannot be read back)",
    18: "negative statistic in {t!r}",
    19: "statistic too large for a 32-bit integer in {t!r}",
    20: "sentence id, hypothesis count or dimension out of range in {t60!r}",
    21: "{hyp}: feature value is NaN or infinite",
    22: "{hyp}: expected {dim} non-negative integers, got {stats} (reflen:average files cannot be read back)",
    23: "{hyp}: negative statistic in {stats}",
    24: "binary block of sentence {sid} ends after {a} of its {count} hypotheses (truncated file?)",
}

#: bytes read from a file at a time, into one buffer reused for the whole file
READ_BYTES = 4 << 20


def _raise(scanner, path: str, scores: bool, first_names) -> None:
    """Turn the scanner's error status into an InputError naming the file and line."""
    code = scanner.err_code
    if code == _mertdata_scan.STATUS_MEMORY:
        raise MemoryError(f"out of memory reading {path}")
    t = scanner.err_text.decode("utf-8", "backslashreplace")
    kind = "SCORES" if scores else "FEATURES"
    form = "BIN" if scanner.err_bin else "TXT"
    fields = t.split()
    raw = np.frombuffer(scanner.err_text, dtype=np.int32 if scanner.err_b else np.float32) \
        if code in (22, 23) else np.zeros(0)
    message = _MESSAGES.get(code, "unreadable line (status {code})").format(
        code=code, t=t, t60=t[:60], t80=" ".join(fields)[:80], a=scanner.err_a, b=scanner.err_b,
        sid=scanner.err_sid, count=scanner.err_count, dim=scanner.n_dense, got=f", got {t[:60]!r}" if t else "",
        begin_txt=f"{kind}_TXT_BEGIN_0", begin_bin=f"{kind}_BIN_BEGIN_0", end=f"{kind}_{form}_END_0",
        what="binary hypotheses" if scanner.err_bin else "lines",
        hint=" (are the header's count and dimension right?)" if scanner.err_bin else "",
        first=" ".join(first_names or ())[:200], names=" ".join(fields[4:])[:200],
        score_type=" ".join(fields[3:]), first_type=f"'{' '.join(first_names)}', as in the first block," if first_names
        else "'<number of statistics> <scorer>' (e.g. '9 BLEU', '3 TER')",
        hyp=f"binary block of sentence {scanner.err_sid}, hypothesis {scanner.err_a + 1} of {scanner.err_count}",
        stats=" ".join(f"{v:g}" for v in raw.tolist()))
    raise InputError(message, path, int(scanner.err_line))


def _byte_chunks(path: str, size: int):
    """The bytes of a (possibly gzipped) file, ``size`` at most at a time, as views of one
    reused buffer (each valid until the next is taken)."""
    import zlib

    view = memoryview(bytearray(size))
    with open_binary(path) as fh:
        while True:
            try:
                n = fh.readinto(view)
            except (EOFError, OSError, zlib.error) as exc:
                raise InputError(f"corrupt or truncated compressed data ({exc})", path) from None
            if not n:
                return
            yield view[:n]


class _FileScan:
    """One features.dat or scores.dat going through the compiled scanner chunk by chunk.

    ``space``: the FeatureSpace whose dense names the first header fixes (features);
    ``names_only``: collect sparse names only (no checks: errors end the scan quietly).
    After the file's first header, ``first_names`` holds its dense names (features) or
    ``[width, sctype]`` (scores)."""

    def __init__(self, path, scores: bool, space=None, names_only: bool = False, chunk_bytes: int | None = None):
        self.path = os.fspath(path)
        self.scores = scores
        self.space = space
        self.names_only = names_only
        self.scanner = _mertdata_scan.MertDataScanner(scores, names_only)
        self.first_names: list[str] | None = None
        self._chunks = _byte_chunks(self.path, chunk_bytes or READ_BYTES)
        self.done = False

    def step(self) -> bool:
        """Scan the next chunk (after the last one: check the end); False once done."""
        if self.done:
            return False
        chunk = next(self._chunks, None)
        scanner = self.scanner
        if chunk is None:
            self.done = True
            rc = scanner.at_eof()
            while rc != _mertdata_scan.STATUS_OK:
                self._status(rc)
                rc = scanner.at_eof()
            return False
        scanner.feed(chunk)
        rc = scanner.run()
        while rc != _mertdata_scan.STATUS_OK:
            self._status(rc)
            rc = scanner.run()
        return True

    def run_to_end(self) -> None:
        while self.step():
            pass

    @property
    def sctype(self) -> str:
        """The scorer named in a scores file's headers ("" before the first header)."""
        return self.first_names[1] if self.scores and self.first_names else ""

    def _status(self, rc: int) -> None:
        scanner = self.scanner
        if rc != _mertdata_scan.STATUS_FIRST_HEADER:
            if self.names_only:
                self.done = True
                raise _Stop
            _raise(scanner, self.path, self.scores, self.first_names)
        fields = scanner.err_text.decode("utf-8", "backslashreplace").split()[4:]
        line = int(scanner.err_line)
        if self.scores:
            self.first_names = [str(scanner.n_dense), sctype_of_header(fields[0])]
            try:
                metric_of_sctype(self.first_names[1], scanner.n_dense)
            except ValueError as exc:
                raise InputError(str(exc), self.path, line) from None
            return
        self.first_names = fields
        if self.space is None:
            return
        try:
            scanner.err_text.decode("utf-8")
            self.space.define_dense(fields, self.path)
        except UnicodeDecodeError as exc:
            raise InputError(invalid_utf8(scanner.err_text, exc.start, " in the header"), self.path, line) from None
        except InputError as exc:
            raise InputError(exc.message, self.path, line) from None

    def check_not_empty(self) -> None:
        if self.scanner.rows_read == 0:
            raise InputError(f"empty {'scores' if self.scores else 'features'} file", self.path)


class _Stop(Exception):
    """A names-only scan met bad input (the full scan will report it)."""


def _scan(path: str, scores: bool, space=None) -> _FileScan:
    """Run the compiled scanner over one (possibly gzipped) file, to its end."""
    f = _FileScan(path, scores, space)
    f.run_to_end()
    f.check_not_empty()
    return f


def _features_of(f: _FileScan, space) -> dict:
    scanner = f.scanner
    ids = np.fromiter((space.names.add(name) for name in scanner.sparse_names()), dtype=np.int32)
    return scanner.finish(ids)


def read_features(path: str, space) -> dict:
    """Read a features.dat into arrays, interning names into ``space`` (FeatureSpace).

    Returns ``sent_ids`` int32 [n], ``dense`` float64 [n, n_dense], and the sparse CSR
    (``sparse_indptr`` int64 [n + 1], ``sparse_ids`` int32 sorted per row,
    ``sparse_values`` float64). Blocks may be text or binary (Moses ``--binary``), mixed
    in one file; sentence blocks may come in any order; a later file may repeat
    sentences (it is a later iteration). gzip is read transparently.
    """
    out = _features_of(_scan(path, False, space), space)
    del out["blocks"]
    return out


def read_blocks(path: str, scores: bool, space=None) -> dict:
    """One features.dat (``scores`` False; names interned into ``space``) or scores.dat in
    file order, blocks kept: the arrays of :func:`read_features` or ``stats`` int32
    [n, k], plus ``blocks`` int64 [b, 3] (per block in file order: its sentence id, its
    rows, a duplicate flag) and, for scores, ``sctype``. Moses's pro reads files so."""
    f = _scan(path, scores, space)
    if scores:
        out: dict = dict(f.scanner.finish())
        out["sctype"] = f.sctype
        return out
    return _features_of(f, space)


def read_scores(path: str) -> tuple[np.ndarray, np.ndarray, str]:
    """Read a scores.dat (text or binary blocks): ``(sent_ids int32 [n], stats int32 [n, k],
    sctype)``, where sctype is the Moses scorer named in the headers (``BLEU``: k = 9;
    ``TER``, ``BLEU,TER``, ...: mtplug.metrics.moses_scorers)."""
    f = _scan(path, True)
    out = f.scanner.finish()
    return out["sent_ids"], out["stats"], f.sctype


def _read_pair(ff: str, sf: str, space) -> tuple[dict, str]:
    """The rows of one features.dat/scores.dat pair as arrays (the keys of ``scan_nbest``
    without strings, plus ``unique``: True when the rows are known to be grouped by
    sentence with no two of a sentence equal in features), grouped by sentence in file
    order, and the scores' sctype. The two files are read side by side (two threads);
    the features file's errors are reported first."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        scores = pool.submit(_scan, sf, True)
        try:
            feats = _scan(ff, False, space)
        except BaseException:
            scores.cancel()
            raise
        sfile = scores.result()
    arrays = _features_of(feats, space)
    blocks = arrays.pop("blocks")
    out = sfile.scanner.finish()
    sids, stats = out["sent_ids"], out["stats"]
    if len(sids) != len(arrays["sent_ids"]) or not np.array_equal(sids, arrays["sent_ids"]):
        raise InputError(f"sentence blocks do not match those of {ff}", sf)
    arrays["stats"] = stats
    arrays["unique"] = feats.scanner.increasing and not feats.scanner.dup_candidates
    if not feats.scanner.nondecreasing:
        # keep each file's blocks grouped by sentence before merging
        from .._ext import _rows

        order = np.argsort(arrays["sent_ids"], kind="stable")
        arrays["sent_ids"] = arrays["sent_ids"][order]
        arrays["dense"] = arrays["dense"][order]
        arrays["stats"] = arrays["stats"][order]
        ip, ids = _rows.gather_csr(arrays["sparse_indptr"], arrays["sparse_ids"].view(np.uint8), 4, order)
        _, vals = _rows.gather_csr(arrays["sparse_indptr"], arrays["sparse_values"].view(np.uint8), 8, order)
        arrays.update(sparse_indptr=ip, sparse_ids=ids.view(np.int32), sparse_values=vals.view(np.float64))
    del blocks
    return arrays, sfile.sctype


def _same_sctype(sctype: str, first: str, path: str) -> None:
    if sctype != first:
        raise InputError(f"holds {sctype} statistics, the first scores file {first}'s; every scores file of one "
                         "run must come from the same --sctype", path)


def _adopt(corpus, arrays: dict) -> None:
    """Make the rows of one pair the store's: what ``merge_arrays`` does to an empty store
    when the rows are grouped by sentence and no two of a sentence are equal (nothing to
    remove or reorder), without its duplicate search."""
    sids = arrays["sent_ids"]
    n_sent = int(sids[-1]) + 1 if len(sids) else 0
    offsets = np.zeros(n_sent + 1, dtype=np.int64)
    np.cumsum(np.bincount(sids, minlength=n_sent), out=offsets[1:])
    corpus.dense = np.ascontiguousarray(arrays["dense"], dtype=np.float64)
    corpus.stats = np.ascontiguousarray(arrays["stats"])
    corpus.sparse_indptr = arrays["sparse_indptr"]
    corpus.sparse_ids = arrays["sparse_ids"]
    corpus.sparse_values = arrays["sparse_values"]
    corpus.sent_offsets = offsets


def read_mert_data(ffiles: Sequence[str], scfiles: Sequence[str]):
    """Build an NbestCorpus from pairs of features.dat/scores.dat files, merged (rows equal
    in sentence, features and statistics kept once, the first in file order). Its metric
    is the scores files' Moses scorer (mtplug.metrics.moses_scorers.metric_of_sctype:
    an interpolation with equal weights until a program rebinds them)."""
    from ..corpus import NbestCorpus

    if len(ffiles) != len(scfiles):
        raise InputError(f"{len(ffiles)} features files but {len(scfiles)} scores files")
    if not ffiles:
        raise InputError("no features/scores files given")
    corpus = NbestCorpus(n_sentences=0, has_strings=False)
    first = None
    for ff, sf in zip(ffiles, scfiles):
        arrays, sctype = _read_pair(ff, sf, corpus.space)
        if first is None:
            first = sctype
            corpus.metric = metric_of_sctype(sctype, arrays["stats"].shape[1])
            corpus.stats = np.zeros((0, corpus.metric.n_stats), dtype=np.int32)
            if arrays.pop("unique"):
                _adopt(corpus, arrays)
                continue
        _same_sctype(sctype, first, sf)
        arrays.pop("unique", None)
        corpus.merge_arrays(arrays)
    return corpus


# ------------------------------------------------------------------ streaming by sentence
class NotStreamable(Exception):
    """The files cannot be read sentence by sentence (a file's blocks are not in
    non-decreasing sentence order); read them whole with :func:`read_mert_data`."""


@dataclass
class SentenceBatch:
    """The store rows of consecutive sentences ``first .. first + S_b - 1``, as
    :func:`read_mert_data` would hold them (merged over the files, duplicates removed).

    sent_offsets int64 [S_b + 1] (from 0; a sentence without rows is empty); dense
    float64 [n, n_dense]; sparse_indptr int64 [n + 1], sparse_ids int32 (store feature
    ids, sorted per row), sparse_values float64; stats int32 [n, n_stats]."""

    first: int
    sent_offsets: np.ndarray
    dense: np.ndarray
    sparse_indptr: np.ndarray
    sparse_ids: np.ndarray
    sparse_values: np.ndarray
    stats: np.ndarray

    @property
    def n_sentences(self) -> int:
        """Sentences S_b of the batch (some may have no rows)."""
        return len(self.sent_offsets) - 1

    @property
    def n_hypotheses(self) -> int:
        """Rows n of the batch, over its sentences."""
        return int(self.sent_offsets[-1])


class _Rows:
    """Completed rows of one file not yet handed on: a list of parts, each a dict of
    arrays plus ``sids`` int32 (one per row)."""

    def __init__(self):
        self.parts: list[dict] = []
        self.n = 0

    def add(self, part: dict) -> None:
        blocks = part.pop("blocks")
        part["sids"] = np.repeat(blocks[:, 0], blocks[:, 1]).astype(np.int32)
        part["dup"] = bool(blocks[:, 2].any()) if len(blocks) else False
        if len(part["sids"]):
            self.parts.append(part)
            self.n += len(part["sids"])

    def sids(self) -> np.ndarray:
        return np.concatenate([p["sids"] for p in self.parts]) if self.parts else np.zeros(0, np.int32)

    def pop(self, n: int) -> list[dict]:
        """The first ``n`` rows, as parts."""
        out = []
        while n > 0:
            p = self.parts[0]
            k = len(p["sids"])
            if k <= n:
                out.append(self.parts.pop(0))
                n -= k
                self.n -= k
                continue
            out.append(_cut(p, 0, n))
            self.parts[0] = _cut(p, n, k)
            self.n -= n
            n = 0
        return out


def _cut(part: dict, lo: int, hi: int) -> dict:
    """Rows lo .. hi - 1 of a part."""
    out = {"sids": part["sids"][lo:hi], "dup": part["dup"]}
    if "stats" in part:
        out["stats"] = part["stats"][lo:hi]
        return out
    ip = part["sparse_indptr"]
    a, b = int(ip[lo]), int(ip[hi])
    out.update(dense=part["dense"][lo:hi], sparse_indptr=ip[lo:hi + 1] - a, sparse_ids=part["sparse_ids"][a:b],
               sparse_values=part["sparse_values"][a:b])
    return out


class _PairStream:
    """A features.dat/scores.dat pair read block by block; rows pass on once both files
    have them (and their sentence ids agree)."""

    def __init__(self, ff: str, sf: str, space, chunk_bytes: int, preset: Sequence[bytes] = ()):
        self.ff, self.sf = ff, sf
        self.space = space
        self.feats = _FileScan(ff, False, space, chunk_bytes=chunk_bytes)
        self.scores = _FileScan(sf, True, chunk_bytes=chunk_bytes)
        self.f_rows, self.s_rows = _Rows(), _Rows()
        self.name_ids = np.zeros(0, dtype=np.int32)
        self.preset = list(preset)   # sparse names to intern right after the dense ones
        self.matched = 0             # leading rows of f_rows / s_rows known to agree
        self.last_sid = -1           # sentence id of the last matched row

    @property
    def done(self) -> bool:
        return self.feats.done and self.scores.done

    def step(self) -> None:
        """Read a chunk of the file that is behind (in rows)."""
        behind = self.f_rows.n <= self.s_rows.n
        f = self.feats if (behind and not self.feats.done) or self.scores.done else self.scores
        f.step()
        if not f.scanner.nondecreasing:
            raise NotStreamable(f"{f.path}: sentence blocks out of order")
        if f is self.feats:
            self.f_rows.add(f.scanner.take(self._name_ids()))
        else:
            self.s_rows.add(f.scanner.take())
        self._match()

    def _name_ids(self) -> np.ndarray:
        """Store ids of the features file's sparse names so far (interned on first sight)."""
        scanner = self.feats.scanner
        if self.preset and self.feats.first_names is not None:
            for name in self.preset:
                self.space.names.add(name)
            self.preset = []
        if scanner.n_names > len(self.name_ids):
            ids = [self.space.names.add(n) for n in scanner.sparse_names(len(self.name_ids))]
            self.name_ids = np.concatenate([self.name_ids, np.array(ids, dtype=np.int32)])
        return self.name_ids

    def _match(self) -> None:
        n = min(self.f_rows.n, self.s_rows.n)
        if n > self.matched:
            a, b = self.f_rows.sids()[self.matched:n], self.s_rows.sids()[self.matched:n]
            if not np.array_equal(a, b):
                raise _Mismatch
            self.matched = n
            self.last_sid = int(a[-1])
        if self.done:
            if self.f_rows.n != self.s_rows.n:
                raise _Mismatch
            self.feats.check_not_empty()
            self.scores.check_not_empty()

    def ready_below(self) -> float:
        """Sentences below this id have all their rows matched (inf once both files are done)."""
        return np.inf if self.done else self.last_sid

    def pop_below(self, bound: int) -> tuple[list[dict], list[dict]]:
        """The matched rows of sentences below ``bound``: (features parts, scores parts)."""
        sids = self.f_rows.sids()[: self.matched]
        n = int(np.searchsorted(sids, bound, side="left"))
        self.matched -= n
        return self.f_rows.pop(n), self.s_rows.pop(n)

    def finish(self, upto: str, first_sctype: str) -> None:
        """Read on to the end of the features file (``upto`` "F"), then the scores file
        ("S"), then check that they agree ("M"), keeping sentence ids only: the errors a
        whole read of the pair meets, in its order (an error interrupted the stream)."""
        def rest(f: _FileScan, rows: _Rows, take) -> np.ndarray:
            sids = [rows.sids()]
            while not f.done:
                f.step()
                blocks = take()["blocks"]
                sids.append(np.repeat(blocks[:, 0], blocks[:, 1]).astype(np.int32))
            f.check_not_empty()
            return np.concatenate(sids)

        fs = rest(self.feats, self.f_rows, lambda: self.feats.scanner.take(self._name_ids()))
        if upto == "F":
            return
        ss = rest(self.scores, self.s_rows, self.scores.scanner.take)
        if upto == "S":
            return
        if not np.array_equal(fs, ss):
            raise InputError(f"sentence blocks do not match those of {self.ff}", self.sf)
        if first_sctype and self.scores.sctype:
            _same_sctype(self.scores.sctype, first_sctype, self.sf)


class _Mismatch(Exception):
    """The features and scores files of a pair disagree on sentence blocks."""


def _prepass_names(ffiles: Sequence[str], chunk_bytes: int) -> list[bytes]:
    """The sparse names of these features files in the store's order (file by file, each
    in order of first appearance); a damaged file contributes what precedes the damage
    (the full read reports it)."""
    names: list[bytes] = []
    seen: set[bytes] = set()
    for ff in ffiles:
        f = _FileScan(ff, False, names_only=True, chunk_bytes=chunk_bytes)
        try:
            f.run_to_end()
        except (_Stop, InputError):
            pass
        for name in f.scanner.sparse_names():
            if name not in seen:
                seen.add(name)
                names.append(name)
    return names


def _raise_in_order(pairs: list[_PairStream], k: int, where: str, err: Exception) -> None:
    """Raise the error a whole read would meet first: ``err`` met in pair ``k`` at
    ``where`` ("F": its features file, "S": its scores file, "M": their agreement, "end":
    after every file), unless an earlier file or check fails first."""
    first = pairs[0].scores.sctype
    for j in range(k):
        pairs[j].finish("M", first)
    if where in ("S", "M"):
        pairs[k].finish("F", first)
    if where == "M":
        pairs[k].finish("S", first)
    raise err


def iter_mert_batches(ffiles: Sequence[str], scfiles: Sequence[str], space, *,
                      chunk_bytes: int = 256 << 10, on_metric=None):
    """The store of :func:`read_mert_data` sentence by sentence, without holding it:
    yields :class:`SentenceBatch` es for sentences 0, 1, ... up to the largest sentence id
    of the files (sentences without rows included), reading ``chunk_bytes`` at a time.

    Sparse names are interned into ``space`` (an empty FeatureSpace) with the ids
    read_mert_data gives them (files before the last are first scanned for their names).
    ``on_metric(metric)`` is called once, before the first batch, with the bound Metric
    of the scores files (metric_of_sctype); an InputError it raises is reported after
    the files' own errors. Errors are those read_mert_data raises for the same files, in
    its order. Raises :class:`NotStreamable` when a file's blocks are not in
    non-decreasing sentence order (Moses's extractor writes them in order; read such
    files whole)."""
    if len(ffiles) != len(scfiles):
        raise InputError(f"{len(ffiles)} features files but {len(scfiles)} scores files")
    if not ffiles:
        raise InputError("no features/scores files given")
    preset = _prepass_names(ffiles[:-1], chunk_bytes) if len(ffiles) > 1 else []
    pairs = [_PairStream(ff, sf, space, chunk_bytes, preset if k == 0 else ())
             for k, (ff, sf) in enumerate(zip(ffiles, scfiles))]
    metric = None
    next_s = 0
    while True:
        for k, pair in enumerate(pairs):
            try:
                while not pair.done and pair.ready_below() <= next_s:
                    pair.step()
            except _Mismatch:
                _raise_in_order(pairs, k, "M", InputError(f"sentence blocks do not match those of {pair.ff}",
                                                          pair.sf))
            except InputError as err:
                _raise_in_order(pairs, k, "F" if err.path == pair.ff else "S", err)
            sctype, first = pair.scores.sctype, pairs[0].scores.sctype
            if sctype and first and sctype != first:
                try:
                    _same_sctype(sctype, first, pair.sf)
                except InputError as err:
                    _raise_in_order(pairs, k, "M", err)
        if metric is None and pairs[0].scores.sctype:
            metric = metric_of_sctype(pairs[0].scores.sctype, pairs[0].scores.scanner.n_dense)
            if on_metric is not None:
                try:
                    on_metric(metric)
                except InputError as err:
                    _raise_in_order(pairs, len(pairs), "end", err)
        bound = min(p.ready_below() for p in pairs)
        if bound == np.inf:
            bound = max(p.last_sid for p in pairs) + 1
            if bound > next_s:
                yield _batch(pairs, next_s, int(bound))
            return
        if bound > next_s:
            yield _batch(pairs, next_s, int(bound))
            next_s = int(bound)


def _byte_rows(a: np.ndarray) -> np.ndarray:
    """A C-contiguous 2-D array as rows of bytes (rows compared exactly, -0.0 apart from 0.0)."""
    a = np.ascontiguousarray(a)
    return a.view(np.uint8).reshape(a.shape[0], a.shape[1] * a.itemsize)


def _batch(pairs: list[_PairStream], first: int, bound: int) -> SentenceBatch:
    """Sentences first .. bound - 1 of every pair, merged as read_mert_data merges them."""
    from .._ext import _rows

    fparts: list[dict] = []
    sparts: list[dict] = []
    for pair in pairs:
        f, s = pair.pop_below(bound)
        fparts += f
        sparts += s
    n_stats = pairs[0].scores.scanner.n_dense
    if not fparts:
        sizes = np.zeros(bound - first + 1, dtype=np.int64)
        return SentenceBatch(first, sizes, np.zeros((0, pairs[0].space.n_dense)), np.zeros(1, np.int64),
                             np.zeros(0, np.int32), np.zeros(0), np.zeros((0, n_stats), np.int32))
    sids = np.concatenate([p["sids"] for p in fparts])
    dense = np.concatenate([p["dense"] for p in fparts])
    stats = np.concatenate([p["stats"] for p in sparts])
    ids = np.concatenate([p["sparse_ids"] for p in fparts])
    values = np.concatenate([p["sparse_values"] for p in fparts])
    indptr = np.zeros(len(sids) + 1, dtype=np.int64)
    np.cumsum(np.concatenate([np.diff(p["sparse_indptr"]) for p in fparts]), out=indptr[1:])
    offsets = np.zeros(bound - first + 1, dtype=np.int64)
    np.cumsum(np.bincount(sids - first, minlength=bound - first), out=offsets[1:])
    if len(pairs) > 1 or any(p["dup"] for p in fparts):
        # as merge_arrays: per sentence the files' rows in file order, each kept once
        order = np.argsort(sids, kind="stable").astype(np.int64)
        keep = np.empty(len(sids), dtype=np.uint8)
        kept = _rows.duplicate_mask(order, offsets, _byte_rows(dense), indptr, ids, values, _byte_rows(stats),
                                    np.zeros(0, np.int64), np.zeros(0, np.uint8), keep)
        if kept != len(sids) or np.any(np.diff(order) != 1):
            rows = order[keep.view(bool)]
            dense, stats = dense[rows], stats[rows]
            new_ptr, ids_b = _rows.gather_csr(indptr, ids.view(np.uint8), 4, rows)
            _, vals_b = _rows.gather_csr(indptr, values.view(np.uint8), 8, rows)
            indptr, ids, values = new_ptr, ids_b.view(np.int32), vals_b.view(np.float64)
            np.cumsum(np.bincount(sids[rows] - first, minlength=bound - first), out=offsets[1:])
    return SentenceBatch(first, offsets, np.ascontiguousarray(dense), indptr, ids, values,
                         np.ascontiguousarray(stats))


def extractor_store(nbests: Sequence[str], references, bleu, prev_ffiles: Sequence[str] = (),
                    prev_scfiles: Sequence[str] = (), progress=None, metric="bleu"):
    """The rows Moses's ``extractor`` writes to features.dat/scores.dat, in its order: the
    earlier files' rows (``--prev-ffile``/``--prev-scfile``) and then every line of the
    n-best lists, all loaded, then Moses's duplicate removal (``mert/Data.cpp``: equal
    features and statistics, whatever the strings; see NbestCorpus.merge_arrays). Returns an
    NbestCorpus, ready for :func:`write_features` / :func:`write_scores`; it keeps the
    hypothesis strings (those of the rows kept) when no earlier files are merged.
    metric: ``--metric`` text or an unbound Metric (mtplug.metrics.layer); earlier scores
    files must hold its Moses scorer's statistics."""
    from ..corpus import NbestCorpus, concat_arrays
    from ..metrics.bleu import REFLEN_CODES
    from .nbest import scan_nbest

    if len(prev_ffiles) != len(prev_scfiles):
        raise InputError(f"{len(prev_ffiles)} earlier features files but {len(prev_scfiles)} scores files")
    base = NbestCorpus.from_nbest([], references, bleu, metric=metric, finish=False)
    store = NbestCorpus(n_sentences=base.n_sentences, bleu=bleu, references=base.references,
                        ref_len_divisor=base.ref_len_divisor, words=base.words, space=base.space,
                        has_strings=not prev_ffiles, metric=base.metric)
    parts = []
    for ff, sf in zip(prev_ffiles, prev_scfiles):
        arrays, sctype = _read_pair(ff, sf, store.space)
        try:
            _same_sctype(sctype, sctype_of(store.metric), sf)
        except ValueError as exc:
            raise InputError(f"earlier scores files cannot hold them: {exc}", sf) from None
        if len(arrays["sent_ids"]) and int(arrays["sent_ids"].max()) >= store.n_sentences:
            raise InputError(f"has sentence {int(arrays['sent_ids'].max())}, the references only "
                             f"{store.n_sentences} sentences", ff)
        parts.append(arrays)
    for path in nbests:
        arrays = scan_nbest(path, words=store.words, space=store.space, refs=store.references,
                            reflen_code=REFLEN_CODES[bleu.reflen], lowercase=bleu.lowercase, ascii_case=bleu.ascii_case,
                            progress=progress)
        arrays["stats"] = base.stats_rows(arrays, path)
        parts.append(arrays)
    base.finish_stats()
    store.merge_arrays(concat_arrays(parts), dedup="moses")
    return store


class Extracted(NamedTuple):
    """What :func:`extract_files` wrote: unique hypotheses, sentences (of the references),
    dense and sparse features, and whether the n-best list was streamed."""

    n_hypotheses: int
    n_sentences: int
    n_dense: int
    n_sparse: int
    streamed: bool


def extract_files(nbests: Sequence[str], references, bleu, ffile: str | None, scfile: str | None,
                  prev_ffiles: Sequence[str] = (), prev_scfiles: Sequence[str] = (), *, binary: bool = False,
                  progress=None, metric="bleu", threads: int | None = None, moses_binary: bool = False,
                  integer_average: bool = False) -> Extracted:
    """Write the features.dat (``ffile``) and scores.dat (``scfile``; either may be None) that
    Moses's ``extractor`` writes for these n-best lists, references and earlier files, as
    :func:`extractor_store` then :func:`write_features` / :func:`write_scores` would.

    One n-best list with BLEU statistics, no earlier files, as text: streamed, a few
    sentences at a time (Moses's duplicate removal works within a sentence, and an n-best
    list is sorted by sentence), so memory stays at a few chunks of the file whatever its
    size. Otherwise through the store. ``threads``: OpenMP threads of the statistics and
    the text (default all cores; the files do not depend on it). ``moses_binary``: with
    ``binary``, drop sparse features as Moses does (else ValueError); ``integer_average``:
    an averaged reference length (reflen:average) is written as Moses's
    ``Reference::CalcAverage`` computes it, ``int(float(sum) / n_refs)``, not as the
    fraction.
    """
    from ..corpus import NbestCorpus

    base = NbestCorpus.from_nbest([], references, bleu, metric=metric, finish=False)
    truncate = integer_average and base.metric.is_bleu and base.ref_len_divisor != 1
    if len(nbests) != 1 or prev_ffiles or prev_scfiles or binary or not base.metric.is_bleu or truncate:
        store = extractor_store(nbests, references, bleu, prev_ffiles, prev_scfiles, progress=progress,
                                metric=metric)
        if truncate:
            ref = store.stats[:, REF_LEN_COLUMN].astype(np.float32) / np.float32(store.ref_len_divisor)
            store.stats[:, REF_LEN_COLUMN] = np.trunc(ref).astype(store.stats.dtype)
            store.ref_len_divisor = 1
        if ffile:
            write_features(ffile, store, binary=binary, drop_sparse=moses_binary)
        if scfile:
            write_scores(scfile, store, binary=binary)
        return Extracted(store.n_hypotheses, store.n_sentences, store.n_dense, store.n_features - store.n_dense,
                         False)
    n_kept = _stream_extract(nbests[0], base, bleu, ffile, scfile, progress, max(1, threads or _threads()))
    space = base.space
    return Extracted(n_kept, base.n_sentences, space.n_dense, len(space.names) - space.n_dense, True)


def _stream_extract(nbest: str, base, bleu, ffile: str | None, scfile: str | None, progress, threads: int) -> int:
    """Stream one n-best list into the two files (see extract_files); the number of rows kept.

    This thread reads and parses; one writer thread takes each piece of whole sentences:
    BLEU statistics, Moses's duplicate removal, the text of both files, and writes it, in
    file order. The scanner and the writer's kernels release the GIL, so the two halves
    overlap on two cores; the kernels get the cores the reader leaves free.
    """
    from concurrent.futures import ThreadPoolExecutor

    from .._ext import _rows
    from ..metrics.bleu import REFLEN_CODES
    from .nbest import piece_stats, scan_nbest_sentences

    space, refs, reflen = base.space, base.references, REFLEN_CODES[bleu.reflen]
    kernel_threads = max(1, threads - 1)
    kept_total = 0
    text: tuple[bytes, bytes, bytes] | None = None
    names: tuple[np.ndarray, np.ndarray] | None = None

    def write_piece(a: dict, names: tuple[np.ndarray, np.ndarray], text: tuple[bytes, bytes, bytes]) -> None:
        nonlocal kept_total
        n = len(a["sent_ids"])
        stats = piece_stats(a, refs, reflen, kernel_threads)
        sent_ids = a["sent_ids"]
        groups = np.concatenate(([0], np.flatnonzero(sent_ids[1:] != sent_ids[:-1]) + 1, [n])).astype(np.int64)
        sids = sent_ids[groups[:-1]].astype(np.int64)
        rows = np.empty(n, dtype=np.int64)
        counts = np.empty(len(sids), dtype=np.int64)
        kept = _rows.moses_duplicates(np.arange(n, dtype=np.int64), groups, a["dense"], a["sparse_indptr"],
                                      a["sparse_ids"], a["sparse_values"],
                                      stats.view(np.uint8).reshape(n, stats.shape[1] * 4), rows, counts)
        kept_total += kept
        rows = rows[:kept]
        offsets = np.zeros(len(sids) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        if fout is not None:
            fout.write(_textio.format_features_blocks(rows, offsets, sids, a["dense"], a["sparse_indptr"],
                                                      a["sparse_ids"], a["sparse_values"], *names, *text,
                                                      kernel_threads))
        if sout is not None:
            sout.write(_textio.format_scores_blocks(rows, offsets, sids, stats, *_SCORES_TEXT, REF_LEN_COLUMN,
                                                    base.ref_len_divisor, kernel_threads))

    with contextlib.ExitStack() as stack:
        fout = stack.enter_context(atomic_output(ffile, "wb")) if ffile else None
        sout = stack.enter_context(atomic_output(scfile, "wb")) if scfile else None
        # entered last, so left first: the writer finishes before the files are closed
        pool = stack.enter_context(ThreadPoolExecutor(1, thread_name_prefix="mtplug-extract"))
        pending: collections.deque = collections.deque()
        for a in scan_nbest_sentences(nbest, words=base.words, space=space, refs=refs, reflen_code=reflen,
                                      lowercase=bleu.lowercase, ascii_case=bleu.ascii_case, progress=progress):
            if len(a["sent_ids"]) == 0:
                continue
            if text is None:
                text = _features_text(space.feature_names[: space.n_dense])
            if names is None or len(names[1]) != len(space.names) + 1:
                names = space.names.to_arrays()
            pending.append(pool.submit(write_piece, a, names, text))
            # at most two pieces wait: memory stays at a few chunks
            while len(pending) > 2 or (pending and pending[0].done()):
                pending.popleft().result()
        while pending:
            pending.popleft().result()
    return kept_total
