# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""cdec's ``--mr_mira_compat`` k-best lines as the text lines of its ordinary k-best list.

With ``--mr_mira_compat`` cdec writes, per sentence, a line holding k and then k lines
(hypotheses, then blank lines up to k)::

    sent_id ||| source length ||| hypothesis ||| BASE64 ||| score

BASE64 encodes the hypothesis's features as ``name NUL value`` records, the value the
8 bytes of a little-endian double, zero values left out (utils/b64featvector.cc). This
module turns such a block into ``pos ||| hypothesis ||| name=value ... ||| score`` lines,
each value written as cdec's ordinary k-best writes it (C++ ``ostream <<`` a double:
``%g``, 6 significant digits), so that mtplug's n-best reader reads the same numbers from
either form.

cdec's base64 encoder (utils/b64tools.cc, ``encodeblock``) writes ``xx==`` for a final
group of two bytes, so the low four bits of the last byte are lost whenever the record
bytes number 2 modulo 3. That byte is the top byte of the last record's double: its sign
and the top three of the exponent's 11 bits survive, exponent bits 4-7 do not, so the
value is known up to a factor 2**(16 m). :func:`mira_block_text` repairs such a value
from the other hypotheses of the same list that carry the same feature intact: the one
candidate within a factor 2**7 of every intact value of that feature is taken. When no
intact value exists, or they do not single out one candidate, the line is reported as
unresolved and the caller decodes the sentence another way.
"""

from libc.stdint cimport uint8_t, uint64_t
from libc.stdio cimport snprintf
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy, memcmp

from _growbuf cimport GrowBuf, growbuf_append, growbuf_free

cdef extern from "math.h":
    double frexp(double x, int* exp) nogil

# base64 alphabet -> 6-bit value; 64 marks '=', 255 anything else
cdef uint8_t _B64[256]


cdef int _init_b64():
    cdef int i
    for i in range(256):
        _B64[i] = 255
    alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    for i in range(64):
        _B64[<uint8_t>alphabet[i]] = i
    _B64[<uint8_t>b'='] = 64
    return 0


_init_b64()


cdef Py_ssize_t _b64decode(const uint8_t* s, Py_ssize_t n, uint8_t* out, int* tail_nibble) noexcept nogil:
    """Decode ``n`` base64 characters into ``out`` (room for 3 n / 4 bytes); returns the
    byte count, -1 on a malformed text. ``tail_nibble``: the high nibble of the byte cdec's
    encoder half-dropped when the text ends in ``xx==`` (else -1)."""
    cdef Py_ssize_t i = 0, o = 0
    cdef uint8_t a, b, c, d
    tail_nibble[0] = -1
    if n % 4:
        return -1
    while i < n:
        a = _B64[s[i]]
        b = _B64[s[i + 1]]
        c = _B64[s[i + 2]]
        d = _B64[s[i + 3]]
        if a >= 64 or b >= 64 or c == 255 or d == 255:
            return -1
        out[o] = <uint8_t>((a << 2) | (b >> 4))
        o += 1
        if c == 64:
            if d != 64 or i + 4 != n:
                return -1
            tail_nibble[0] = b & 0x0F
            return o
        out[o] = <uint8_t>(((b & 0x0F) << 4) | (c >> 2))
        o += 1
        if d == 64:
            return o if i + 4 == n else -1
        out[o] = <uint8_t>(((c & 0x03) << 6) | d)
        o += 1
        i += 4
    return o


cdef inline int _exponent(double v) noexcept nogil:
    cdef int e
    frexp(v, &e)
    return e


cdef inline bint _sep_at(const uint8_t* p, Py_ssize_t i) noexcept nogil:
    return p[i] == b' ' and p[i + 1] == b'|' and p[i + 2] == b'|' and p[i + 3] == b'|' and p[i + 4] == b' '


cdef Py_ssize_t _find(const uint8_t* p, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    """First index of `` ||| `` in p[a:b], or -1."""
    cdef Py_ssize_t i
    for i in range(a, b - 4):
        if _sep_at(p, i):
            return i
    return -1


cdef Py_ssize_t _rfind(const uint8_t* p, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    """Last index of `` ||| `` in p[a:b], or -1."""
    cdef Py_ssize_t i = b - 5
    while i >= a:
        if _sep_at(p, i):
            return i
        i -= 1
    return -1


cdef struct Line:
    Py_ssize_t hyp_a, hyp_b          # the hypothesis in the block
    Py_ssize_t score_a, score_b      # the score field in the block
    Py_ssize_t rec_a, rec_b          # its intact records
    Py_ssize_t cut_name, cut_len     # the cut record's name in the decoded bytes (cut_len -1: none)
    Py_ssize_t cut_bytes             # where its 7 known value bytes start
    int cut_nibble                   # the top nibble of its 8th byte
    double cut_value                 # the repaired value


cdef struct Rec:
    Py_ssize_t name, name_len        # in the decoded bytes
    double value


cdef double _candidate(const uint8_t* known, int nibble, int low) noexcept nogil:
    cdef uint64_t bits = (<uint64_t>((nibble << 4) | low)) << 56
    cdef int j
    cdef double v
    for j in range(7):
        bits |= (<uint64_t>known[j]) << (8 * j)
    memcpy(&v, &bits, 8)
    return v


cdef int _repair(Line* ln, Line* lines, Py_ssize_t n_lines, Rec* recs, const uint8_t* raw) noexcept nogil:
    """Restore ``ln``'s cut value (module docstring); 1 when one candidate fits, else 0."""
    cdef int lo = 100000, hi = -100000, e, low, fits = 0
    cdef Py_ssize_t i, r
    cdef double v, choice = 0.0
    for i in range(n_lines):
        for r in range(lines[i].rec_a, lines[i].rec_b):
            if recs[r].name_len == ln.cut_len and recs[r].value != 0.0 and \
                    memcmp(raw + recs[r].name, raw + ln.cut_name, ln.cut_len) == 0:
                e = _exponent(recs[r].value)
                lo = e if e < lo else lo
                hi = e if e > hi else hi
    if lo > hi:
        return 0
    for low in range(16):
        v = _candidate(raw + ln.cut_bytes, ln.cut_nibble, low)
        if v != v or v == 0.0 or v - v != 0.0:     # NaN, zero (never written), infinite
            continue
        e = _exponent(v)
        if e - lo <= 7 and hi - e <= 7:
            fits += 1
            choice = v
    if fits != 1:
        return 0
    ln.cut_value = choice
    return 1


cdef int _put(GrowBuf* out, const void* src, Py_ssize_t n) except -1:
    if growbuf_append(out, src, n) != 0:
        raise MemoryError()
    return 0


def mira_block_text(bytes block, int pos, dict fixes=None):
    """The hypotheses of one sentence's ``--mr_mira_compat`` block (the k lines after the
    count line; blank lines are skipped) as ordinary k-best lines with sentence id ``pos``.

    ``fixes``: ``{hypothesis index: value}`` for cut values the caller restored (from the
    score, :func:`mtplug.dtrain.persistent.fix_by_score`). Returns ``(text, texts,
    repaired, unresolved)``: ``text`` the lines (bytes, each ``pos ||| hyp ||| name=%g ...
    ||| score\n``), ``texts`` the hypothesis strings (str, one per hypothesis),
    ``repaired`` the cut values restored from other lines, ``unresolved`` one tuple per
    line whose cut value could not be restored, ``(hypothesis index, [(name, value), ...]
    of its intact records, cut name, [16 candidate values], score bytes)`` (``text`` then
    lacks those lines). ValueError on a line that is not ``id ||| length ||| hyp |||
    base64 ||| score`` or whose records do not parse.
    """
    cdef const uint8_t* p = block
    cdef Py_ssize_t n = len(block), a = 0, b, s1, s2, s3, s4, m, q, r, i, nl = 0, nr = 0
    cdef Py_ssize_t raw_size = 0
    cdef int tail, repaired = 0, numlen, low
    cdef char num[48]
    cdef Line* lines = NULL
    cdef Rec* recs = NULL
    cdef uint8_t* raw = NULL
    cdef GrowBuf out
    cdef bytes head = b"%d ||| " % pos
    texts = []
    unresolved = []
    out.data = NULL
    out.size = 0
    out.cap = 0
    try:
        lines = <Line*>malloc((n // 2 + 1) * sizeof(Line))
        raw = <uint8_t*>malloc(n + 8)
        recs = <Rec*>malloc((n // 12 + 2) * sizeof(Rec))     # a record takes >= 10 bytes, 13+ characters
        if lines == NULL or raw == NULL or recs == NULL:
            raise MemoryError()
        while a < n:
            b = a
            while b < n and p[b] != b'\n':
                b += 1
            if b > a and not (b - a == 1 and p[a] == b'\r'):
                s1 = _find(p, a, b)
                s2 = _find(p, s1 + 5, b) if s1 >= 0 else -1
                s4 = _rfind(p, a, b)
                s3 = _rfind(p, a, s4) if s4 >= 0 else -1
                if s1 < 0 or s2 < 0 or s3 <= s2 or s4 <= s3:
                    raise ValueError(f"expected 'id ||| length ||| hypothesis ||| base64 ||| score', got "
                                     f"{block[a:min(b, a + 80)]!r}")
                lines[nl].hyp_a, lines[nl].hyp_b = s2 + 5, s3
                lines[nl].score_a, lines[nl].score_b = s4 + 5, (b - 1 if p[b - 1] == b'\r' else b)
                m = _b64decode(p + s3 + 5, s4 - s3 - 5, raw + raw_size, &tail)
                if m < 0:
                    raise ValueError(f"bad base64 feature field {block[s3 + 5:min(s4, s3 + 45)]!r}")
                lines[nl].rec_a = nr
                lines[nl].cut_len = -1
                q = raw_size
                while q < raw_size + m:
                    r = q
                    while r < raw_size + m and raw[r] != 0:
                        r += 1
                    if r == q or r == raw_size + m:
                        break              # the NUL bytes that pad the last group
                    if r + 9 <= raw_size + m:
                        recs[nr].name, recs[nr].name_len = q, r - q
                        memcpy(&recs[nr].value, raw + r + 1, 8)
                        nr += 1
                        q = r + 9
                    elif r + 8 == raw_size + m and tail >= 0:
                        lines[nl].cut_name, lines[nl].cut_len = q, r - q
                        lines[nl].cut_bytes, lines[nl].cut_nibble = r + 1, tail
                        break
                    else:
                        raise ValueError(f"the feature record of {bytes(raw[q:r])!r} is cut short")
                lines[nl].rec_b = nr
                raw_size += m
                nl += 1
            a = b + 1
        for i in range(nl):
            texts.append(block[lines[i].hyp_a:lines[i].hyp_b].decode("utf-8", "replace").strip())
            if lines[i].cut_len >= 0:
                if fixes is not None and i in fixes:
                    lines[i].cut_value = fixes[i]
                elif _repair(&lines[i], lines, nl, recs, raw):
                    repaired += 1
                else:
                    unresolved.append((
                        i, [(bytes(raw[recs[r].name:recs[r].name + recs[r].name_len]).decode("utf-8", "replace"),
                             recs[r].value) for r in range(lines[i].rec_a, lines[i].rec_b)],
                        bytes(raw[lines[i].cut_name:lines[i].cut_name + lines[i].cut_len]).decode("utf-8", "replace"),
                        [_candidate(raw + lines[i].cut_bytes, lines[i].cut_nibble, low) for low in range(16)],
                        block[lines[i].score_a:lines[i].score_b]))
                    continue
            _put(&out, <const char*>head, len(head))
            _put(&out, p + lines[i].hyp_a, lines[i].hyp_b - lines[i].hyp_a)
            _put(&out, b" |||", 4)
            for r in range(lines[i].rec_a, lines[i].rec_b + (1 if lines[i].cut_len >= 0 else 0)):
                if r < lines[i].rec_b:
                    _put(&out, b" ", 1)
                    _put(&out, raw + recs[r].name, recs[r].name_len)
                    numlen = snprintf(num, 48, b"=%g", recs[r].value)
                else:
                    _put(&out, b" ", 1)
                    _put(&out, raw + lines[i].cut_name, lines[i].cut_len)
                    numlen = snprintf(num, 48, b"=%g", lines[i].cut_value)
                _put(&out, num, numlen)
            _put(&out, b" ||| ", 5)
            _put(&out, p + lines[i].score_a, lines[i].score_b - lines[i].score_a)
            _put(&out, b"\n", 1)
        text = out.data[:out.size] if out.size else b""
        return text, texts, repaired, unresolved
    finally:
        free(lines)
        free(recs)
        free(raw)
        growbuf_free(&out)
