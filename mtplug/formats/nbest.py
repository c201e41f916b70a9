"""Moses n-best and cdec k-best lists: read (compiled scanner) and write.

Line format (both decoders)::

    sid ||| hypothesis ||| features [||| score [||| more fields ...]]

Features may be in Moses's labelled dense form (``LM0= -41.3 TM0= 1 2 3``), the old
Moses form with labels ending in ``:`` (``d: 0 -7.6 lm: -41.3``), Moses sparse labels
(a label with ``_`` in its name takes one value: ``WT_the~das= 1``), or ``name=value``
tokens (cdec). Dense label ``X`` with m values becomes the columns ``X_0 .. X_{m-1}``,
exactly the names Moses's extractor writes to features.dat. The score field and any
further fields are optional and ignored: a line needs its first three fields, as for
Moses's extractor (``mert/Data.cpp``). Every line of a file has as many fields as its first
(a decoder writes them all alike): a line with fewer was cut short, the last line of a file
whose writer stopped, and is an error naming it. A last line without its newline is read when
it has all its fields (a cut inside the last number of a file without score fields cannot be
told from a whole line). Blank lines are skipped (as Moses's extractor does).
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterable, Iterator
from typing import Callable

import numpy as np

from .._ext._nbest_scan import NbestScanner, bleu_stats
from ..errors import InputError
from ..fileio import CHUNK_BYTES, ICONV_HINT, open_binary

# Messages for the scanner's status codes (pyx/_nbest_scan.pyx). {t} is the text at fault.
_MESSAGES = {
    1: "expected at least 3 fields 'id ||| hypothesis ||| features' (a score and more fields may follow, as Moses's extractor reads them), found fewer",
    2: "expected a non-negative integer sentence id, got {t!r}",
    3: "sentence id {t} is smaller than the previous line's: n-best lists must be sorted by sentence",
    4: "sentence id {t} has no reference (the references have {nref} sentences)",
    5: "expected a number as feature value, got {t!r}",
    6: "feature value {t!r} is not finite (NaN or infinity)",
    7: "feature value {t!r} comes before any feature label",
    8: "feature {t!r} appears twice on one line (or a sparse name equals a dense column)",
    9: "dense feature label {t!r} is not in the layout of the first line ({layout})",
    10: "dense feature values do not match the layout of the first line ({layout})",
    11: "sparse feature {t!r} must be followed by exactly one value",
    12: "out of memory",
    13: "dense feature label {t!r} has no values",
    14: "invalid UTF-8 in '{t}'; " + ICONV_HINT,   # t: the word, invalid bytes as \\xNN (once)
    15: "expected {nf} '|||'-separated fields, as line {fl} has, found {found}",
}
#: what ends message 15, by whether the line has fewer fields than the first or more
_FIELD_COUNT_CAUSE = {True: ": a line cut short (did the program writing the file stop in the middle of it?)",
                      False: ": every line of a file has the same fields"}


def lower_utf8(word: bytes) -> bytes:
    """A word lowercased by Unicode rules (BleuConfig.lowercase)."""
    return word.decode("utf-8").lower().encode("utf-8")


def lower_ascii(word: bytes) -> bytes:
    """A word with ASCII letters lowercased (BleuConfig.ascii_case, Moses's case:false)."""
    return word.lower()     # bytes.lower folds ASCII letters only


def scan_nbest(
    path: str,
    *,
    words,
    space,
    refs=None,
    reflen_code: int = 0,
    lowercase: bool = False,
    ascii_case: bool = False,
    progress: Callable[[int], object] | None = None,
    chunk_bytes: int = CHUNK_BYTES,
    plain: bool = False,
    threads: int | None = None,
) -> dict:
    """Parse one n-best/k-best file into arrays.

    With ``plain``, the file is a plain hypothesis file instead (line i is the
    translation of sentence i, no features) and must have one line per reference.

    ``words``: the token Vocabulary (shared with the references and the store);
    ``space``: the store's FeatureSpace (its dense layout is fixed by the first line
    read if still empty, and checked otherwise); ``refs``: encoded references
    ``(sent_ptr, tok_ptr, tokens)`` or None (then no BLEU statistics are computed).
    ``lowercase``: compare lowercased words (Unicode rules; ASCII letters only with
    ``ascii_case``, as Moses). ``progress`` is called with the number of bytes read after each chunk. ``threads``:
    OpenMP threads of the BLEU statistics (sentences in parallel once the file is read;
    default all cores; the result does not depend on it).

    Returns a dict of arrays: ``sent_ids`` int32 [n], ``dense`` float64 [n, n_dense],
    ``sparse_indptr`` int64 [n + 1], ``sparse_ids`` int32, ``sparse_values`` float64,
    ``stats`` int32 [n, 9] (or [n, 0] without references), ``hyp_indptr`` int64
    [n + 1], ``hyp_bytes`` uint8 (LEB128 word ids).
    """
    path = os.fspath(path)
    scanner = _scanner(words, space, refs, reflen_code, lowercase, ascii_case)
    for chunk in _line_chunks(path, chunk_bytes):
        if scanner.scan(chunk, scanner.next_line, plain) != 0:
            _raise(scanner, path, space, refs, plain)
        if progress is not None:
            progress(len(chunk))
    if scanner.n_hypotheses == 0:
        raise InputError("empty file: no hypotheses", path)
    if plain and refs is not None and scanner.n_hypotheses != len(refs[0]) - 1:
        raise InputError(f"has {scanner.n_hypotheses} lines, the references have {len(refs[0]) - 1}", path)
    space.set_layout(scanner.n_dense, *scanner.layout())
    return scanner.finish(max(1, threads or os.cpu_count() or 1))


def scan_nbest_sentences(
    path: str,
    *,
    words,
    space,
    refs,
    reflen_code: int = 0,
    lowercase: bool = False,
    ascii_case: bool = False,
    progress: Callable[[int], object] | None = None,
    chunk_bytes: int = CHUNK_BYTES,
) -> Iterator[dict]:
    """:func:`scan_nbest` in pieces, for a file that need not fit in memory: yields the
    arrays of consecutive whole sentences as they are read (concatenated, scan_nbest's
    arrays), each without ``stats``: :func:`piece_stats` computes them from the piece's
    ``run_start``, ``run_sid`` and ``word_class`` (in another thread, say, while the next
    piece is read). ``refs`` is required; ``space`` has the file's dense layout from the
    first piece with rows on. InputError as scan_nbest, after the pieces before the bad line.
    """
    path = os.fspath(path)
    scanner = _scanner(words, space, refs, reflen_code, lowercase, ascii_case)
    for chunk in _line_chunks(path, chunk_bytes):
        if scanner.scan(chunk, scanner.next_line) != 0:
            _raise(scanner, path, space, refs, False)
        if progress is not None:
            progress(len(chunk))
        space.set_layout(scanner.n_dense, *scanner.layout())
        yield scanner.take_sentences(False)
    if scanner.n_hypotheses == 0:
        raise InputError("empty file: no hypotheses", path)
    yield scanner.take_sentences(True)


def piece_stats(piece: dict, refs, reflen_code: int = 0, threads: int = 1) -> np.ndarray:
    """BLEU statistics int32 [n, 9] of a piece from :func:`scan_nbest_sentences` against
    ``refs`` (the references it was read with), sentences in ``threads`` OpenMP threads
    (the same result for any number). Releases the GIL while it counts."""
    stats = np.empty((len(piece["sent_ids"]), 9), dtype=np.int32)
    if bleu_stats(piece["hyp_indptr"], piece["hyp_bytes"], piece["run_start"], piece["run_sid"],
                  piece["word_class"], refs[0], refs[1], refs[2], reflen_code, stats, threads) != 0:
        raise MemoryError("no memory for the BLEU statistics' n-gram tables")
    return stats


def _line_chunks(path: str, chunk_bytes: int) -> Iterator[memoryview]:
    """The file's bytes (gzip read transparently) in chunks of whole lines, the last one
    perhaps without its newline: views of one reused buffer, each valid until the next is
    taken. fileio.iter_chunks without its copies and its count of the lines (the scanner
    counts them), which took a tenth of the time of reading an n-best list."""
    buf = bytearray(max(chunk_bytes, 1))
    carry = 0
    with open_binary(path) as fh:
        while True:
            if carry == len(buf):
                buf.extend(bytes(len(buf)))         # a line longer than the buffer
            view = memoryview(buf)
            try:
                got = fh.readinto(view[carry:])
            except (EOFError, OSError, zlib.error) as exc:
                raise InputError(f"corrupt or truncated compressed data ({exc})", path) from None
            end = carry + got
            cut = buf.rfind(b"\n", carry, end) if got else end - 1
            if cut < 0:
                carry = end
            elif end:
                chunk = view[:cut + 1]
                yield chunk
                chunk.release()
                carry = end - cut - 1
                view[:carry] = view[cut + 1:end]
            view.release()
            if not got:
                return


def _scanner(words, space, refs, reflen_code: int, lowercase: bool, ascii_case: bool) -> NbestScanner:
    return NbestScanner(
        words, space.names, space.labels, space.label_base, space.label_count, space.n_dense,
        lowercase=lowercase, lower_fn=lower_ascii if ascii_case else lower_utf8, refs=refs, reflen_mode=reflen_code,
    )


def _raise(scanner, path: str, space, refs, plain: bool) -> None:
    text = scanner.err_text.decode("utf-8", "backslashreplace")
    names = space.names.words("backslashreplace")[: max(space.n_dense, scanner.n_dense)]
    layout = " ".join(names) if names else "no dense features"
    nref = 0 if refs is None else len(refs[0]) - 1
    if plain and scanner.err_code == 4:
        raise InputError(f"more lines than the references have ({nref})", path, int(scanner.err_line))
    message = _MESSAGES.get(scanner.err_code, "unreadable line").format(
        t=text, layout=layout, nref=nref, nf=scanner.n_fields, fl=scanner.fields_line, found=scanner.err_fields)
    if scanner.err_code == 15:
        message += _FIELD_COUNT_CAUSE[scanner.err_fields < scanner.n_fields]
    raise InputError(message, path, int(scanner.err_line))


def format_features(names: list[str], dense_row: np.ndarray, sparse: Iterable[tuple[str, float]],
                    n_dense: int) -> str:
    """Moses labelled feature field: ``LM0= -41.3 TM0= 1 2 ... WT_a~b= 1``."""
    parts: list[str] = []
    prev_label = None
    for j in range(n_dense):
        label = names[j].rsplit("_", 1)[0]
        if label != prev_label:
            parts.append(label + "=")
            prev_label = label
        parts.append(_num(dense_row[j]))
    for name, value in sparse:
        parts.append(f"{name}= {_num(value)}")
    return " ".join(parts)


def _num(x: float) -> str:
    # Moses prints features with C++'s default 6 significant digits
    return f"{x:g}"


def write_nbest(path: str, corpus, *, style: str = "moses", scores: np.ndarray | None = None) -> None:
    """Write the store as an n-best (``style='moses'``) or cdec k-best (``style='cdec'``) list.

    Hypotheses appear per sentence in store order; the last field is the model
    score under ``scores`` (float64 [n_hyp]) or 0. Written atomically.
    """
    from ..fileio import atomic_output

    if corpus.hyp_indptr is None:
        raise ValueError("this store holds no hypothesis strings (read from features.dat?)")
    names = corpus.feature_names
    with atomic_output(path) as out:
        for s in range(corpus.n_sentences):
            lo, hi = corpus.sent_offsets[s], corpus.sent_offsets[s + 1]
            hyps = corpus.hypotheses(lo, hi)
            for h, text in zip(range(lo, hi), hyps):
                sp = corpus.sparse_row(h)
                if style == "moses":
                    feats = format_features(names, corpus.dense[h], ((names[i], v) for i, v in sp), corpus.n_dense)
                elif style == "cdec":
                    dense = ((names[j], corpus.dense[h, j]) for j in range(corpus.n_dense))
                    feats = " ".join(f"{n}={_num(v)}" for n, v in (*dense, *((names[i], v) for i, v in sp)))
                else:
                    raise ValueError(f"unknown n-best style {style!r}")
                total = 0.0 if scores is None else scores[h]
                out.write(f"{s} ||| {text} ||| {feats} ||| {_num(total)}\n")
