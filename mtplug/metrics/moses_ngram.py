"""Moses's CHRF and BLEUDOC scorers (``--sctype CHRF``, ``--sctype BLEUDOC``), as the
code of Moses 34452895 computes them once its two bugs are fixed (docs/metrics.md).

**CHRF** (``mert/CHRFScorer.cpp``): the text with every space byte removed is a sequence
of *bytes* (not characters: ``é`` is two tokens); ``--scconfig case:false`` lowercases
ASCII letters. 20 statistics per hypothesis: for each order k = 1..6, ``correct`` (byte
k-grams clipped by the largest count in one reference), ``guess`` (the hypothesis's
k-grams) and ``refhits`` (the references' count of the hypothesis's distinct k-grams
— not the references' k-gram total); then twice the hypothesis's byte count (the length
of Moses's ``"c h a r s "`` string) and the reference length (``reflen:closest``,
``shortest``, ``average`` of the references' byte counts). The score
(``calculateScore``): P = mean over k of (correct + smooth) / (guess + smooth), R = the
same with refhits, F = (1 + β²) P R / (β² P + R), β (``beta``, default 3) and ``smooth``
(default 0) from ``--scconfig``, in Moses's float/double mix (:func:`chrf_score`).

**BLEUDOC** (``mert/BleuDocScorer.cpp``): an n-best entry is a document, its sentences
separated by `` \\n `` (space, backslash, n, space); only the text before each separator
counts (a document's last sentence needs a separator after it too). References are
XML: a line holding ``<doc docid`` starts a document, a line holding ``<seg`` is its next
sentence (the text between the line's first ``>`` and last ``<``); several reference
files merge document by document. Statistics: BLEU's 9 (n-gram matches and totals up
to 4, reference length) of every sentence against the reference sentence of the same
position, summed over the document. Its score is BLEU's (BleuScorer::calculateScore:
BleuDocScorer's own calculateScore takes ``vector<int>`` and overrides nothing).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .scconfig import case_folds, scconfig_pairs

#: CHRF's byte n-gram orders and statistics per hypothesis
CHRF_ORDER = 6
CHRF_N_STATS = 3 * CHRF_ORDER + 2
#: BLEUDOC's word n-gram orders and statistics per hypothesis (BLEU's)
BLEUDOC_ORDER = 4
BLEUDOC_N_STATS = 2 * BLEUDOC_ORDER + 1
#: Moses's document sentence separator (BleuDocScorer::splitDoc)
DOC_SEPARATOR = " \\n "
REFLEN_CODES = {"closest": 0, "shortest": 1, "average": 2}


@dataclass(frozen=True)
class NgramOptions:
    """--scconfig of CHRF and BLEUDOC: reflen (closest, shortest, average), lowercase
    (``case:false``), beta and smooth (CHRF's score only)."""

    reflen: str = "closest"
    lowercase: bool = False
    beta: float = 3.0
    smooth: float = 0.0


def parse_scconfig(sctype: str, text: str) -> NgramOptions:
    """NgramOptions of ``--scconfig`` for CHRF or BLEUDOC; ValueError for a value Moses
    refuses or a key that cannot take effect. CHRF reads beta and smooth with atof."""
    reflen, lowercase, beta, smooth = "closest", False, 3.0, 0.0
    for key, value in scconfig_pairs(text):
        if key == "case":
            lowercase = case_folds(value)
        elif key == "reflen":
            if value not in REFLEN_CODES:
                raise ValueError(f"--scconfig reflen:{value}: expected closest, shortest or average")
            reflen = value
        elif key in ("beta", "smooth") and sctype == "CHRF":
            try:
                number = float(np.float32(float(value)))
            except ValueError:
                raise ValueError(f"--scconfig {key}:{value}: expected a number") from None
            if key == "beta":
                if not number > 0:
                    raise ValueError(f"--scconfig beta:{value}: mtplug's CHRF takes beta > 0")
                beta = number
            else:
                if number != 0:
                    raise ValueError(f"--scconfig smooth:{value}: mtplug's CHRF scores with smooth:0 only "
                                     "(the statistics do not depend on it)")
                smooth = number
        else:
            known = "case, reflen, beta, smooth" if sctype == "CHRF" else "case, reflen"
            raise ValueError(f"--scconfig: unknown key {key!r} for {sctype}; mtplug's {sctype} knows {known}")
    return NgramOptions(reflen, lowercase, beta, smooth)


# ----------------------------------------------------------------------------- CHRF
def _chrf_bytes(text: str, lowercase: bool) -> bytes:
    data = text.encode("utf-8", "surrogateescape").replace(b" ", b"")
    return data.lower() if lowercase else data   # bytes.lower: ASCII letters only, as C tolower


def _byte_keys(tokens: np.ndarray, order: int) -> np.ndarray:
    """keys [order, n]: byte k-grams packed 8 bits a byte (exact up to order 7)."""
    n = len(tokens)
    keys = np.zeros((order, n), dtype=np.int64)
    t = tokens.astype(np.int64)
    keys[0] = t
    for k in range(1, min(order, n)):
        keys[k, : n - k] = keys[k - 1, : n - k] | (t[k:] << (8 * k))
    return keys


def chrf_stats(hypotheses: Sequence[str], sentence_ids, references: Sequence[Sequence[str]],
               options: NgramOptions = NgramOptions()) -> np.ndarray:
    """int32 [n, 20]: Moses's CHRF statistics (module docstring) of each hypothesis text
    against the references of its sentence id (``references[s]``: the texts)."""
    from .._ext._moses_ngram import ngram_stats

    sids = np.asarray(sentence_ids, dtype=np.int64)
    if len(sids) != len(hypotheses):
        raise ValueError("one sentence id per hypothesis")
    if len(sids) and (sids.min() < 0 or sids.max() >= len(references)):
        bad = int(sids.max() if sids.max() >= len(references) else sids.min())
        raise InputError(f"Sentence id ({bad}) not found in reference set")
    seqs: list[bytes] = []
    ref_first: dict[int, tuple[int, int]] = {}
    for s in sorted(set(sids.tolist())):
        a = len(seqs)
        seqs.extend(_chrf_bytes(r, options.lowercase) for r in references[s])
        ref_first[s] = (a, len(seqs))
    n_ref_seqs = len(seqs)
    seqs.extend(_chrf_bytes(h, options.lowercase) for h in hypotheses)
    lengths = np.array([len(b) for b in seqs], dtype=np.int64)
    seq_ptr = np.zeros(len(seqs) + 1, dtype=np.int64)
    np.cumsum(lengths, out=seq_ptr[1:])
    tokens = np.frombuffer(b"".join(seqs), dtype=np.uint8)
    keys = np.ascontiguousarray(_byte_keys(tokens, CHRF_ORDER))
    ref_seq = np.arange(n_ref_seqs, dtype=np.int64)
    ref_ptr = np.empty(len(sids) + 1, dtype=np.int64)
    ranges = [ref_first[int(s)] for s in sids]
    # ref_ptr must be monotone ranges into ref_seq: give each hypothesis its own copy of the range
    ref_seq_parts, pos = [], 0
    ref_ptr[0] = 0
    for h, (a, b) in enumerate(ranges):
        ref_seq_parts.append(ref_seq[a:b])
        pos += b - a
        ref_ptr[h + 1] = pos
    flat = np.concatenate(ref_seq_parts) if ref_seq_parts else np.zeros(0, dtype=np.int64)
    hyp_seq = np.arange(n_ref_seqs, len(seqs), dtype=np.int64)
    out = np.zeros((len(sids), 3 * CHRF_ORDER + 2), dtype=np.int64)
    if len(sids) and ngram_stats(keys, seq_ptr, hyp_seq, ref_ptr, flat, REFLEN_CODES[options.reflen], out) != 0:
        raise MemoryError()
    out[:, 3 * CHRF_ORDER] *= 2          # Moses pushes the size of "c h a r s " (a space after every byte)
    return out.astype(np.int32)


def chrf_score(summed, beta: float = 3.0, smooth: float = 0.0) -> float:
    """CHRFScorer::calculateScore of statistics summed over a corpus [20], in Moses's
    arithmetic: the sums as float, each quotient in double added to a float, the means
    in float, (1 + β²) P R / (β² P + R) in double (pow promotes), returned as float
    (NaN when an order has no n-gram and smooth is 0, as Moses)."""
    st = np.asarray(summed, dtype=np.float64).reshape(-1)
    if len(st) != CHRF_N_STATS:
        raise ValueError(f"expected {CHRF_N_STATS} statistics, got {len(st)}")
    sm = np.float32(smooth)
    p = np.float32(0.0)
    r = np.float32(0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        for k in range(CHRF_ORDER):
            c, g, v = (np.float32(st[3 * k + j]) for j in range(3))
            p = np.float32(np.float64(p) + np.float64(np.float32(c + sm)) / np.float64(np.float32(g + sm)))
            r = np.float32(np.float64(r) + np.float64(np.float32(c + sm)) / np.float64(np.float32(v + sm)))
        p = np.float32(p / np.float32(CHRF_ORDER))
        r = np.float32(r / np.float32(CHRF_ORDER))
        bb = np.float64(np.float32(beta)) ** 2
        f = ((1.0 + bb) * np.float64(np.float32(p * r))) / (bb * np.float64(p) + np.float64(r))
    return float(np.float32(f))


# ----------------------------------------------------------------------------- BLEUDOC
def split_doc(text: str) -> list[str]:
    """BleuDocScorer::splitDoc: the pieces of ``text`` before each `` \\n `` (searched
    from after the previous one); what follows the last separator is dropped."""
    out: list[str] = []
    index = 0
    while True:
        end = text.find(DOC_SEPARATOR, index)
        if end < 0:
            return out
        out.append(text[index:end])
        index = end + len(DOC_SEPARATOR)


def read_xml_references(paths: str | os.PathLike | Sequence[str | os.PathLike]) -> list[list[list[str]]]:
    """BLEUDOC's references, as BleuDocScorer::OpenReferenceStream reads them:
    ``docs[d][i]`` = the reference texts of sentence i of document d (one per file that
    has it). InputError for a ``<seg`` line before any document, a file with more
    documents or sentences in a document than the first, or no document."""
    from ..formats.references import read_text_lines

    names = [os.fspath(paths)] if isinstance(paths, (str, os.PathLike)) else [os.fspath(p) for p in paths]
    docs: list[list[list[str]]] = []
    for file_id, path in enumerate(names):
        doc = -1
        sid = 0
        for lineno, line in enumerate(read_text_lines(path), 1):
            if "<doc docid" in line:
                doc += 1
                sid = 0
                if file_id == 0:
                    docs.append([])
                elif doc >= len(docs):
                    raise InputError(f"reference has more documents than {names[0]}", path, lineno)
            elif "<seg" in line:
                if doc < 0:
                    raise InputError("a <seg line before any <doc docid line (Moses crashes on it)", path, lineno)
                start = line.find(">") + 1
                end = line.rfind("<")
                text = line[start:end] if end >= start else line[start:]   # C++ substr: a negative length is npos
                if file_id == 0:
                    docs[doc].append([])
                if sid >= len(docs[doc]):
                    raise InputError(f"document {doc} has more sentences than in {names[0]} (Moses: Cannot open)",
                                     path, lineno)
                docs[doc][sid].append(text)
                sid += 1
    if not docs:
        raise InputError("no document (no line holding '<doc docid') in the BLEUDOC reference", names[0])
    return docs


def _word_keys(tokens: np.ndarray, order: int) -> np.ndarray:
    """keys [order, n] of word-id k-grams: order k's key is the rank of (key of k-1, next
    word), exact for any vocabulary."""
    n = len(tokens)
    keys = np.zeros((order, n), dtype=np.int64)
    keys[0] = tokens
    for k in range(1, min(order, n)):
        pair = np.full(n, -1, dtype=np.int64)
        pair[: n - k] = (keys[k - 1, : n - k] << 32) | tokens[k:]
        _, inverse = np.unique(pair, return_inverse=True)
        keys[k] = inverse.reshape(-1)
    return keys


def bleudoc_stats(documents: Sequence[str], sentence_ids, references: Sequence[Sequence[Sequence[str]]],
                  options: NgramOptions = NgramOptions()) -> np.ndarray:
    """int32 [n, 9]: Moses's BLEUDOC statistics of each document text (the n-best
    field as Moses reads it, separators included) against document ``sentence_ids[h]``
    of ``references`` (:func:`read_xml_references`). InputError for an unknown document
    or a hypothesis with more sentences than its reference document (Moses: an
    out_of_range exception)."""
    from .._ext._moses_ngram import ngram_stats

    sids = np.asarray(sentence_ids, dtype=np.int64)
    if len(sids) != len(documents):
        raise ValueError("one document id per hypothesis")
    vocab: dict[str, int] = {}
    seqs: list[list[int]] = []
    ref_range: dict[tuple[int, int], tuple[int, int]] = {}

    def encode(text: str) -> list[int]:
        if options.lowercase:
            text = "".join(ch.lower() if "A" <= ch <= "Z" else ch for ch in text)
        return [vocab.setdefault(w, len(vocab)) for w in text.split(" ") if w]

    hyp_seq: list[int] = []
    hyp_doc: list[int] = []
    ref_ptr_list: list[int] = [0]
    ref_seq: list[int] = []
    for h, (doc, s) in enumerate(zip(documents, sids.tolist())):
        if s < 0 or s >= len(references):
            raise InputError(f"Sentence id ({s}) not found in reference set")
        sentences = split_doc(doc)
        if len(sentences) > len(references[s]):
            raise InputError(f"document {s}: hypothesis {h} has {len(sentences)} sentences, its reference "
                             f"{len(references[s])} (Moses: std::out_of_range)")
        for i, sent in enumerate(sentences):
            key = (s, i)
            if key not in ref_range:
                a = len(seqs)
                seqs.extend(encode(r) for r in references[s][i])
                ref_range[key] = (a, len(seqs))
            a, b = ref_range[key]
            ref_seq.extend(range(a, b))
            ref_ptr_list.append(len(ref_seq))
            hyp_seq.append(len(seqs))
            seqs.append(encode(sent))
            hyp_doc.append(h)
    out = np.zeros((len(documents), BLEUDOC_N_STATS), dtype=np.int64)
    if not hyp_seq:
        return out.astype(np.int32)
    lengths = np.array([len(q) for q in seqs], dtype=np.int64)
    seq_ptr = np.zeros(len(seqs) + 1, dtype=np.int64)
    np.cumsum(lengths, out=seq_ptr[1:])
    tokens = np.fromiter((w for q in seqs for w in q), dtype=np.int64, count=int(seq_ptr[-1]))
    keys = np.ascontiguousarray(_word_keys(tokens, BLEUDOC_ORDER))
    rows = np.zeros((len(hyp_seq), 3 * BLEUDOC_ORDER + 2), dtype=np.int64)
    if ngram_stats(keys, seq_ptr, np.array(hyp_seq, dtype=np.int64), np.array(ref_ptr_list, dtype=np.int64),
                   np.array(ref_seq, dtype=np.int64), REFLEN_CODES[options.reflen], rows) != 0:
        raise MemoryError()
    sentence_rows = np.zeros((len(hyp_seq), BLEUDOC_N_STATS), dtype=np.int64)
    for k in range(BLEUDOC_ORDER):
        sentence_rows[:, 2 * k] = rows[:, 3 * k]
        sentence_rows[:, 2 * k + 1] = rows[:, 3 * k + 1]
    sentence_rows[:, 2 * BLEUDOC_ORDER] = rows[:, 3 * BLEUDOC_ORDER + 1]
    np.add.at(out, np.array(hyp_doc, dtype=np.int64), sentence_rows)
    return out.astype(np.int32)


def bleudoc_references(paths: Sequence[str], options: NgramOptions | None = None):
    """The XML references as the store's references: per document, each reference file's
    sentences joined by spaces (what BLEU and the store's checks see); the
    BLEUDOC statistics read ``bleudoc`` (the documents) and ``ngram_options`` (None: not
    set; the store's case and reflen hold)."""
    from ..formats.references import References

    docs = read_xml_references(paths)
    joined = [[" ".join(s[j] for s in doc) for j in range(min((len(s) for s in doc), default=1))] for doc in docs]
    refs = References(joined, ", ".join(os.fspath(p) for p in paths))
    refs.bleudoc = docs             # type: ignore[attr-defined]
    if options is not None:
        refs.ngram_options = options    # type: ignore[attr-defined]
    return refs


class NgramScorer:
    """The statistics collector of a ``moses-chrf`` or ``bleudoc`` metric part in a store
    (mtplug.metrics.store_stats): rows of hypothesis texts.

    sctype: ``CHRF`` or ``BLEUDOC``; references: the reference texts per sentence (CHRF)
    or the documents of :func:`read_xml_references` (BLEUDOC); options: --scconfig's.
    """

    def __init__(self, sctype: str, references, options: NgramOptions = NgramOptions()):
        if sctype not in ("CHRF", "BLEUDOC"):
            raise ValueError(f"no n-gram scorer {sctype!r}")
        self.sctype = sctype
        self.references = references
        self.options = options
        self.n_stats = CHRF_N_STATS if sctype == "CHRF" else BLEUDOC_N_STATS

    def text_stats(self, hypotheses: Sequence[str], sentence_ids, plain: bool = False) -> np.ndarray:
        """int32 [n, n_stats] of hypothesis texts (words joined by one space). BLEUDOC:
        an n-best line's text field is what Moses splits, the words with the space of
        `` ||| `` on each side; a plain candidate line (``plain``) is the words alone."""
        if self.sctype == "CHRF":
            return chrf_stats(hypotheses, sentence_ids, self.references, self.options)
        docs = hypotheses if plain else [f" {h} " for h in hypotheses]
        return bleudoc_stats(docs, sentence_ids, self.references, self.options)


def ngram_scorer(part: str, references, default: NgramOptions = NgramOptions()) -> NgramScorer:
    """The collector of part ``moses-chrf`` or ``bleudoc`` from the store's References
    (BLEUDOC: from :func:`bleudoc_references`); options: the references' ``ngram_options``
    (the Moses programs' --scconfig), else ``default`` (``--metric``: the store's case and
    reflen)."""
    options = getattr(references, "ngram_options", None) or default
    if part == "bleudoc":
        docs = getattr(references, "bleudoc", None)
        if docs is None:
            raise InputError("the BLEUDOC scorer reads XML references (<doc docid> and <seg> lines)",
                             getattr(references, "source", None))
        return NgramScorer("BLEUDOC", docs, options)
    return NgramScorer("CHRF", references.sentences, options)
