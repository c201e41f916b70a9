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
from the same n-best are byte-identical to Moses's. BLEU rows are mtplug's own layout
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

import os
from collections.abc import Sequence

import numpy as np

from .._ext import _mertdata_scan, _textio
from ..errors import InputError
from ..fileio import atomic_output, iter_chunks
from ..metrics.bleu import N_STATS, REF_LEN_COLUMN
from ..metrics.moses_scorers import metric_of_sctype, sctype_of
from ..metrics.moses_scores_format import format_header, format_stats_lines

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


def _g(values) -> list[str]:
    """Moses's number text: float32, six significant digits."""
    return [f"{v:g}" for v in np.asarray(values, dtype=np.float32).tolist()]


def write_features(path: str, corpus, binary: bool = False) -> None:
    """Write ``corpus``'s features as a Moses features.dat (atomically).

    With ``binary``, blocks are Moses's binary variant (extractor ``--binary``): dense
    values as native-endian float32, ``n_dense`` per hypothesis. That form has no
    sparse features, so a store with any raises ValueError instead of dropping them.
    """
    names = corpus.feature_names
    dense_names = " ".join(names[: corpus.n_dense])
    if binary:
        nnz = int(corpus.sparse_indptr[-1])
        if nnz:
            raise ValueError(
                f"this store has {nnz} sparse feature values and Moses's binary features.dat cannot hold "
                "sparse features (Moses drops them silently); write the text form instead")
    with atomic_output(path, "wb") as out:
        for s in range(corpus.n_sentences):
            lo, hi = int(corpus.sent_offsets[s]), int(corpus.sent_offsets[s + 1])
            if hi == lo:
                continue
            if binary:
                block = np.ascontiguousarray(corpus.dense[lo:hi], dtype=np.float32)
                if not np.all(np.isfinite(block)):
                    raise ValueError(f"a feature value of sentence {s} is beyond float32 range")
                out.write(f"{_FEAT_BIN_BEGIN} {s} {hi - lo} {corpus.n_dense} {dense_names} \n".encode())
                out.write(block.tobytes())
                out.write(_FEAT_BIN_END.encode() + b"\n")
                continue
            out.write(f"{_FEAT_BEGIN} {s} {hi - lo} {corpus.n_dense} {dense_names} \n".encode())
            lines = _textio.format_rows(corpus.dense[lo:hi], True)
            ip = corpus.sparse_indptr
            if ip[hi] > ip[lo]:
                for h in range(lo, hi):
                    a, b = ip[h], ip[h + 1]
                    if b > a:
                        vals = _g(corpus.sparse_values[a:b])
                        sparse = "".join(f"{names[i]}={v} " for i, v in zip(corpus.sparse_ids[a:b].tolist(), vals))
                        lines[h - lo] += sparse.encode("utf-8")
            lines.append(b"")
            out.write(b"\n".join(lines))
            out.write(_FEAT_END.encode() + b"\n")


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
        for s in range(corpus.n_sentences):
            lo, hi = int(corpus.sent_offsets[s]), int(corpus.sent_offsets[s + 1])
            if hi == lo:
                continue
            block = corpus.stats[lo:hi]
            if binary:
                if block.max(initial=0) > _FLOAT32_EXACT:
                    raise ValueError(f"a statistic of sentence {s} exceeds 2**24, which float32 cannot hold exactly")
                rows = block.astype(np.float32)
                if div != 1:
                    rows[:, REF_LEN_COLUMN] = block[:, REF_LEN_COLUMN] / div
                out.write(f"{_SCORE_BIN_BEGIN} {s} {hi - lo} {N_STATS} BLEU\n".encode())
                out.write(rows.tobytes())
                out.write(_SCORE_BIN_END.encode() + b"\n")
                continue
            out.write(f"{_SCORE_BEGIN} {s} {hi - lo} {N_STATS} BLEU\n".encode())
            if div == 1:
                lines = _textio.format_rows(block)
            else:
                counts = _textio.format_rows(np.ascontiguousarray(block[:, :REF_LEN_COLUMN]))
                reflen = _textio.format_rows((block[:, REF_LEN_COLUMN:] / div).astype(np.float64), True)
                lines = [c + r for c, r in zip(counts, reflen)]
            lines.append(b"")
            out.write(b"\n".join(lines))
            out.write(_SCORE_END.encode() + b"\n")


def _write_scorer_scores(path: str, corpus, binary: bool) -> None:
    """scores.dat of a Moses scorer other than BLEU alone (text only, as Moses's
    extractor writes every scorer's lines through ScoreStats)."""
    sctype = sctype_of(corpus.metric)
    if binary:
        raise ValueError(f"--binary scores files hold BLEU statistics only in mtplug; write {sctype} as text")
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
    14: "invalid UTF-8 in feature name {t!r}",
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


def _scan(path: str, scores: bool, space=None):
    """Run the compiled scanner over one (possibly gzipped) file; ``(scanner, sctype)``
    when done (sctype: a scores file's scorer name, else None)."""
    scanner = _mertdata_scan.MertDataScanner(scores)
    first_names = None
    for chunk, first_line in iter_chunks(path):
        scanner.feed(chunk, first_line)
        while True:
            rc = scanner.run()
            if rc == _mertdata_scan.STATUS_OK:
                break
            if rc != _mertdata_scan.STATUS_FIRST_HEADER:
                _raise(scanner, path, scores, first_names)
            first_names = scanner.err_text.decode("utf-8", "backslashreplace").split()[4:]
            if scores:
                first_names = [str(scanner.n_dense), first_names[0]]
                try:
                    metric_of_sctype(first_names[1], scanner.n_dense)
                except ValueError as exc:
                    raise InputError(str(exc), path, int(scanner.err_line)) from None
                continue
            try:
                scanner.err_text.decode("utf-8")
                space.define_dense(first_names, path)
            except UnicodeDecodeError as exc:
                raise InputError(f"invalid UTF-8 in the header at byte {exc.start}", path,
                                 int(scanner.err_line)) from None
            except InputError as exc:
                raise InputError(exc.message, path, int(scanner.err_line)) from None
    if scanner.at_eof() != _mertdata_scan.STATUS_OK:
        _raise(scanner, path, scores, first_names)
    if scanner.n_rows == 0:
        raise InputError(f"empty {'scores' if scores else 'features'} file", path)
    return scanner, (first_names[1] if scores and first_names else None)


def read_features(path: str, space) -> dict:
    """Read a features.dat into arrays, interning names into ``space`` (FeatureSpace).

    Returns ``sent_ids`` int32 [n], ``dense`` float64 [n, n_dense], and the sparse CSR
    (``sparse_indptr`` int64 [n + 1], ``sparse_ids`` int32 sorted per row,
    ``sparse_values`` float64). Blocks may be text or binary (Moses ``--binary``), mixed
    in one file; sentence blocks may come in any order; a later file may repeat
    sentences (it is a later iteration). gzip is read transparently.
    """
    path = os.fspath(path)
    scanner, _ = _scan(path, False, space)
    ids = np.fromiter((space.names.add(name) for name in scanner.sparse_names()), dtype=np.int32)
    return scanner.finish(ids)


def read_scores(path: str) -> tuple[np.ndarray, np.ndarray, str]:
    """Read a scores.dat (text or binary blocks): ``(sent_ids int32 [n], stats int32 [n, k],
    sctype)``, where sctype is the Moses scorer named in the headers (``BLEU``: k = 9;
    ``TER``, ``BLEU,TER``, ...: mtplug.metrics.moses_scorers)."""
    path = os.fspath(path)
    scanner, sctype = _scan(path, True)
    out = scanner.finish()
    return out["sent_ids"], out["stats"], sctype


def _read_pair(ff: str, sf: str, space) -> tuple[dict, str]:
    """The rows of one features.dat/scores.dat pair as arrays (the keys of ``scan_nbest``
    without strings), grouped by sentence in file order, and the scores' sctype."""
    arrays = read_features(ff, space)
    sids, stats, sctype = read_scores(sf)
    if len(sids) != len(arrays["sent_ids"]) or not np.array_equal(sids, arrays["sent_ids"]):
        raise InputError(f"sentence blocks do not match those of {ff}", sf)
    arrays["stats"] = stats
    # keep each file's blocks grouped by sentence before merging
    order = np.argsort(arrays["sent_ids"], kind="stable")
    if np.any(np.diff(order) != 1):
        from .._ext import _rows

        arrays["sent_ids"] = arrays["sent_ids"][order]
        arrays["dense"] = arrays["dense"][order]
        arrays["stats"] = arrays["stats"][order]
        ip, ids = _rows.gather_csr(arrays["sparse_indptr"], arrays["sparse_ids"].view(np.uint8), 4, order)
        _, vals = _rows.gather_csr(arrays["sparse_indptr"], arrays["sparse_values"].view(np.uint8), 8, order)
        arrays.update(sparse_indptr=ip, sparse_ids=ids.view(np.int32), sparse_values=vals.view(np.float64))
    return arrays, sctype


def _same_sctype(sctype: str, first: str, path: str) -> None:
    if sctype != first:
        raise InputError(f"holds {sctype} statistics, the first scores file {first}'s; every scores file of one "
                         "run must come from the same --sctype", path)


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
        _same_sctype(sctype, first, sf)
        corpus.merge_arrays(arrays)
    return corpus


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
