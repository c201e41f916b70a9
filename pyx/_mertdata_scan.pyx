# Compiled reader for Moses extractor files: features.dat and scores.dat, text and binary.
#
# Each sentence is a block: a text header line, then one text line per hypothesis (TXT)
# or raw native-endian 32-bit values (BIN, extractor --binary), then an END line.
# mtplug.fileio.iter_chunks cuts chunks at newlines, and a newline byte may well sit
# inside binary payload, so the scanner is a state machine that carries its state
# (and a partly read payload) from one chunk to the next. Sparse feature names go into
# a table local to the scanner; the Python wrapper interns them into the store's
# FeatureSpace once per file, and finish() renumbers and sorts the rows. Output goes to
# growable buffers that become NumPy arrays without a copy. Errors are status codes
# with the line number and the offending text; mtplug/formats/mert_data.py words them.
#
# A scores.dat holds the statistics of whatever scorer wrote it (BLEU 9 per line, PER 3,
# TER 3, BLEU,TER 12, ...): the first header fixes the count and the scorer name, which
# Python checks (FIRST_HEADER, as for the features' dense names), and every later block
# must repeat both.

from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport strtod, malloc, free
from libc.string cimport memchr, memcmp, memcpy
from libc.math cimport isfinite, floor

import numpy as np

include "_growbuf.pxi"

from _intern cimport InternTable, hash_bytes, intern_add, intern_find, intern_free, intern_init
from _utf8 cimport valid_utf8

# Status codes (mirrored in mtplug/formats/mert_data.py, which words the messages).
cdef enum:
    OK = 0
    FIRST_HEADER = 1          # paused after the first header: Python fixes the dense names / checks the scorer
    ERR_HEADER = 2            # malformed header line
    ERR_NAME_COUNT = 3        # header announces err_a dense features but names err_b
    ERR_DENSE_NAMES = 4       # dense names differ from the first block's
    ERR_SHORT_BLOCK = 5       # END line or end of file before the announced lines
    ERR_NO_END = 6            # no END line after the announced hypotheses
    ERR_N_VALUES = 7          # fewer than err_a dense values (err_b tokens)
    ERR_NUMBER = 8            # a dense value that is not a number
    ERR_NONFINITE = 9         # NaN or infinite dense value
    ERR_SPARSE_TOKEN = 10     # sparse token without 'name='
    ERR_SPARSE_NUMBER = 11    # sparse value that is not a number
    ERR_SPARSE_NONFINITE = 12
    ERR_DUPLICATE = 13        # a feature twice on one line (or a sparse name equal to a dense one)
    ERR_UTF8 = 14             # feature name that is not UTF-8
    ERR_SCORE_TYPE = 15       # scores header's count or scorer differs from the first block's
    ERR_N_STATS = 16          # not n_dense statistics on a line (err_b found)
    ERR_NOT_INTEGER = 17      # statistic that is not an integer
    ERR_NEGATIVE = 18         # negative statistic
    ERR_TOO_LARGE = 19        # statistic beyond int32
    ERR_HEADER_RANGE = 20     # sentence id, count or dimension too large
    ERR_BIN_NONFINITE = 21    # binary feature value NaN/inf (hypothesis err_a of the block)
    ERR_BIN_NOT_INTEGER = 22  # binary statistic not an integer (err_text: the raw row)
    ERR_BIN_NEGATIVE = 23
    ERR_BIN_TRUNCATED = 24    # end of file inside a binary block (err_a complete hypotheses)
    ERR_MEMORY = 25

cdef enum:
    S_HEADER = 0    # between blocks
    S_ROWS = 1      # inside a TXT block
    S_PAYLOAD = 2   # inside a BIN block
    S_END = 3       # the END line is next

cdef enum:
    MAX_STATS = 64              # statistics per hypothesis (mtplug.metrics.layer's limit)
    MAX_DIM = 1048576           # dense features per block
    SMALL_SORT = 32             # rows up to this length are insertion-sorted

cdef const char* TAG_FEAT_TXT_BEGIN = b"FEATURES_TXT_BEGIN_0"
cdef const char* TAG_FEAT_TXT_END = b"FEATURES_TXT_END_0"
cdef const char* TAG_FEAT_BIN_BEGIN = b"FEATURES_BIN_BEGIN_0"
cdef const char* TAG_FEAT_BIN_END = b"FEATURES_BIN_END_0"
cdef const char* TAG_SCORE_TXT_BEGIN = b"SCORES_TXT_BEGIN_0"
cdef const char* TAG_SCORE_TXT_END = b"SCORES_TXT_END_0"
cdef const char* TAG_SCORE_BIN_BEGIN = b"SCORES_BIN_BEGIN_0"
cdef const char* TAG_SCORE_BIN_END = b"SCORES_BIN_END_0"

# Python-visible codes the wrapper needs by name.
STATUS_OK = OK
STATUS_FIRST_HEADER = FIRST_HEADER
STATUS_MEMORY = ERR_MEMORY

# 10**k for k <= 22 are exact doubles: one multiplication or division by them is
# correctly rounded, which is what makes the fast path equal to strtod.
cdef double POW10[23]
cdef int _k
POW10[0] = 1.0
for _k in range(1, 23):
    POW10[_k] = POW10[_k - 1] * 10.0


# The ASCII characters Python's str.split() splits on (the reference reader's rule),
# as a table: the tokenizer tests every byte.
cdef uint8_t WS[256]
for _k in range(256):
    WS[_k] = _k == 32 or 9 <= _k <= 13 or 28 <= _k <= 31


cdef inline bint is_ws(char c) noexcept nogil:
    return WS[<uint8_t>c]


cdef inline bint tag_is(const char* s, Py_ssize_t n, const char* tag) noexcept nogil:
    cdef Py_ssize_t i = 0
    while i < n:
        if tag[i] == 0 or tag[i] != s[i]:
            return False
        i += 1
    return tag[n] == 0


cdef inline bint starts_with(const char* s, Py_ssize_t n, const char* tag) noexcept nogil:
    cdef Py_ssize_t i = 0
    while tag[i] != 0:
        if i >= n or tag[i] != s[i]:
            return False
        i += 1
    return True


cdef bint strtod_token(const char* s, Py_ssize_t n, double* out) noexcept nogil:
    """C strtod on a NUL-terminated copy; the whole token must be consumed.

    Hexadecimal floats are refused: Python's float() (the reference reader) and Moses's
    own output never have them, so one is a damaged file rather than a number.
    """
    cdef char buf[128]
    cdef char* p = buf
    cdef char* end = NULL
    cdef bint ok
    cdef Py_ssize_t i
    if n <= 0:
        return False
    for i in range(n):
        if s[i] == b'x' or s[i] == b'X':
            return False
    if n >= 128:
        p = <char*>malloc(n + 1)
        if p == NULL:
            return False
    memcpy(p, s, n)
    p[n] = 0
    out[0] = strtod(p, &end)
    ok = end == p + n
    if p != buf:
        free(p)
    return ok


cdef inline bint scan_double(const char* p, Py_ssize_t i, Py_ssize_t n, double* out,
                             Py_ssize_t* tok_end) noexcept nogil:
    """Parse the token starting at ``p[i]`` (it ends at whitespace or ``n``) with strtod's
    result; ``tok_end`` receives its end. The token is read once on the fast path.

    Fast path (Clinger): at most 17 digits and a decimal exponent within ±22 give an
    exact mantissa and an exact power of ten, so one IEEE operation rounds correctly.
    Everything else (long mantissas, large exponents, inf/nan) goes to strtod.
    """
    cdef Py_ssize_t start = i
    cdef bint neg = False, any_digit = False, eneg = False, fast = True
    cdef uint64_t mant = 0
    cdef int64_t frac = 0, e = 0, e10
    cdef double v
    cdef char c
    if i < n and (p[i] == b'-' or p[i] == b'+'):
        neg = p[i] == b'-'
        i += 1
    while i < n:
        c = p[i]
        if c < b'0' or c > b'9':
            break
        if mant >= 100000000000000000ULL:
            fast = False
            break
        mant = mant * 10 + <uint64_t>(c - 48)
        any_digit = True
        i += 1
    if fast and i < n and p[i] == b'.':
        i += 1
        while i < n:
            c = p[i]
            if c < b'0' or c > b'9':
                break
            if mant >= 100000000000000000ULL:
                fast = False
                break
            mant = mant * 10 + <uint64_t>(c - 48)
            frac += 1
            any_digit = True
            i += 1
    if fast and any_digit and i < n and (p[i] == b'e' or p[i] == b'E'):
        i += 1
        if i < n and (p[i] == b'-' or p[i] == b'+'):
            eneg = p[i] == b'-'
            i += 1
        if i >= n or p[i] < b'0' or p[i] > b'9':
            fast = False
        while fast and i < n and b'0' <= p[i] <= b'9':
            if e > 100000:
                fast = False
                break
            e = e * 10 + (p[i] - 48)
            i += 1
        if eneg:
            e = -e
    if fast and any_digit and (i == n or is_ws(p[i])):
        if mant == 0:
            tok_end[0] = i
            out[0] = -0.0 if neg else 0.0
            return True
        e10 = e - frac
        if mant <= 9007199254740992ULL and -22 <= e10 <= 22:
            v = <double>mant
            if e10 > 0:
                v = v * POW10[e10]
            elif e10 < 0:
                v = v / POW10[-e10]
            tok_end[0] = i
            out[0] = -v if neg else v
            return True
    while i < n and not is_ws(p[i]):
        i += 1
    tok_end[0] = i
    return strtod_token(p + start, i - start, out)


cdef inline bint parse_double(const char* s, Py_ssize_t n, double* out) noexcept nogil:
    """Parse the whole of ``s[:n]`` (no whitespace in it) as :func:`scan_double` does."""
    cdef Py_ssize_t end
    return n > 0 and scan_double(s, 0, n, out, &end) and end == n


cdef inline bint parse_stat(const char* s, Py_ssize_t n, int64_t* out) noexcept nogil:
    """A decimal integer with optional sign; magnitudes beyond 2**40 saturate (the caller
    rejects them as too large)."""
    cdef Py_ssize_t i = 0
    cdef bint neg = False
    cdef int64_t v = 0
    if n <= 0:
        return False
    if s[0] == b'-' or s[0] == b'+':
        neg = s[0] == b'-'
        i = 1
    if i >= n:
        return False
    while i < n:
        if not (b'0' <= s[i] <= b'9'):
            return False
        if v < 1099511627776LL:
            v = v * 10 + (s[i] - 48)
        i += 1
    out[0] = -v if neg else v
    return True


cdef inline Py_ssize_t count_newlines(const char* s, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t c = 0
    cdef const char* p = s
    cdef const char* end = s + n
    while p < end:
        p = <const char*>memchr(p, b'\n', end - p)
        if p == NULL:
            break
        c += 1
        p += 1
    return c


cdef inline void sift_down(int32_t* ids, double* vals, Py_ssize_t root, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t child
    cdef int32_t k
    cdef double v
    while True:
        child = 2 * root + 1
        if child >= n:
            return
        if child + 1 < n and ids[child + 1] > ids[child]:
            child += 1
        if ids[root] >= ids[child]:
            return
        k = ids[root]
        ids[root] = ids[child]
        ids[child] = k
        v = vals[root]
        vals[root] = vals[child]
        vals[child] = v
        root = child


cdef void sort_row(int32_t* ids, double* vals, Py_ssize_t n) noexcept nogil:
    """Sort one sparse row by id (ids are distinct)."""
    cdef Py_ssize_t i, j, end
    cdef int32_t k
    cdef double v
    if n <= SMALL_SORT:
        # rows are short and mostly in order already
        for i in range(1, n):
            k = ids[i]
            v = vals[i]
            j = i
            while j > 0 and ids[j - 1] > k:
                ids[j] = ids[j - 1]
                vals[j] = vals[j - 1]
                j -= 1
            ids[j] = k
            vals[j] = v
        return
    # heapsort: long rows (thousands of sparse features) stay O(n log n)
    i = n // 2
    while i > 0:
        i -= 1
        sift_down(ids, vals, i, n)
    end = n
    while end > 1:
        end -= 1
        k = ids[0]
        ids[0] = ids[end]
        ids[end] = k
        v = vals[0]
        vals[0] = vals[end]
        vals[end] = v
        sift_down(ids, vals, 0, end)


cdef class MertDataScanner:
    """Streams one features.dat or scores.dat (text, binary or mixed blocks) into arrays.

    Feed chunks of whole lines with :meth:`feed` and call :meth:`run` until it returns
    0; it returns :data:`STATUS_FIRST_HEADER` once per features file after the first
    header (its line is in :attr:`err_text`) so that the caller can fix the dense
    names, and an error code (with :attr:`err_line`, :attr:`err_text`, :attr:`err_a`,
    :attr:`err_b`, :attr:`err_sid`, :attr:`err_count`) on bad input. Then call
    :meth:`at_eof`, :meth:`sparse_names` and :meth:`finish`.
    """
    cdef bint is_scores
    cdef const char* tag_txt_begin
    cdef const char* tag_txt_end
    cdef const char* tag_bin_begin
    cdef const char* tag_bin_end
    # the current chunk
    cdef const uint8_t[::1] chunk
    cdef const char* buf
    cdef Py_ssize_t n, pos
    cdef int64_t line_no
    cdef bint at_line_start
    # the current block
    cdef int state
    cdef bint block_bin
    cdef int64_t sid, count, done, dim, header_line
    cdef Py_ssize_t payload_need
    cdef GrowBuf payload        # raw bytes of a binary block, staged across chunks
    # dense names of the first block (features), or its scorer name (scores; n_dense is
    # then the number of statistics per hypothesis)
    cdef bint have_names
    cdef readonly int64_t n_dense
    cdef GrowBuf first_names    # name bytes back to back
    cdef GrowBuf first_offs     # int64, n_dense + 1
    cdef double* row
    # sparse names seen in this file
    cdef InternTable names
    cdef GrowBuf name_dense     # uint8 per name: equals a dense name
    cdef GrowBuf stamp          # int64 per name: last line that used it
    cdef int64_t line_stamp
    # outputs
    cdef GrowBuf out_sid, out_dense, out_ptr, out_sp_id, out_sp_val, out_stats
    cdef readonly int64_t n_rows
    # error report
    cdef readonly int err_code
    cdef readonly int64_t err_line, err_a, err_b, err_sid, err_count
    cdef readonly bint err_bin
    cdef readonly bytes err_text
    cdef const char* err_ptr
    cdef Py_ssize_t err_len

    def __cinit__(self):
        self.row = NULL
        self.names.slots = NULL

    def __init__(self, bint scores):
        """``scores``: read a scores.dat (else a features.dat)."""
        cdef int64_t zero = 0
        self.is_scores = scores
        if scores:
            self.tag_txt_begin = TAG_SCORE_TXT_BEGIN
            self.tag_txt_end = TAG_SCORE_TXT_END
            self.tag_bin_begin = TAG_SCORE_BIN_BEGIN
            self.tag_bin_end = TAG_SCORE_BIN_END
        else:
            self.tag_txt_begin = TAG_FEAT_TXT_BEGIN
            self.tag_txt_end = TAG_FEAT_TXT_END
            self.tag_bin_begin = TAG_FEAT_BIN_BEGIN
            self.tag_bin_end = TAG_FEAT_BIN_END
        self.state = S_HEADER
        self.line_no = 1
        self.at_line_start = True
        self.buf = NULL
        self.n = 0
        self.pos = 0
        self.err_code = OK
        self.err_text = b""
        if intern_init(&self.names, 256) != 0 or growbuf_append(&self.out_ptr, &zero, sizeof(int64_t)) != 0 or \
                growbuf_append(&self.first_offs, &zero, sizeof(int64_t)) != 0:
            raise MemoryError()

    def __dealloc__(self):
        free(self.row)
        intern_free(&self.names)
        growbuf_free(&self.payload)
        growbuf_free(&self.first_names)
        growbuf_free(&self.first_offs)
        growbuf_free(&self.name_dense)
        growbuf_free(&self.stamp)
        growbuf_free(&self.out_sid)
        growbuf_free(&self.out_dense)
        growbuf_free(&self.out_ptr)
        growbuf_free(&self.out_sp_id)
        growbuf_free(&self.out_sp_val)
        growbuf_free(&self.out_stats)

    # ---------------------------------------------------------------- Python API
    def feed(self, const uint8_t[::1] chunk, int64_t first_line):
        """Hand over the next chunk (whole lines, or the file's last bytes), whose first
        line has number ``first_line`` (the scanner keeps a reference to it)."""
        if self.names.slots == NULL:
            raise RuntimeError("MertDataScanner.__init__ was not called")
        self.chunk = chunk
        self.n = chunk.shape[0]
        self.buf = <const char*>&chunk[0] if self.n > 0 else NULL
        self.pos = 0
        self.line_no = first_line

    def run(self):
        """Scan the fed chunk from where the last call stopped; returns a status code."""
        cdef int rc
        with nogil:
            rc = self._run()
        self._take_error_text()
        return rc

    def at_eof(self):
        """Status at end of input: an error code if a block is unfinished."""
        cdef int64_t eof_line = self.line_no if self.at_line_start else self.line_no + 1
        if self.state == S_ROWS:
            return self._fail_eof(ERR_SHORT_BLOCK, eof_line)
        if self.state == S_END:
            return self._fail_eof(ERR_NO_END, eof_line)
        if self.state == S_PAYLOAD:
            self.err_a = self.payload.size // self._row_bytes() if self._row_bytes() else 0
            return self._fail_eof(ERR_BIN_TRUNCATED, self.header_line)
        return OK

    def sparse_names(self):
        """The sparse feature names of this file (``bytes``) in local id order."""
        cdef int64_t* offs = <int64_t*>self.names.offsets.data
        cdef Py_ssize_t i
        data = self.names.arena.data[:self.names.arena.size] if self.names.arena.size else b""
        return [data[offs[i]:offs[i + 1]] for i in range(self.names.n)]

    def finish(self, name_ids=None):
        """The arrays read (the buffers are handed over, not copied).

        Features: ``name_ids`` int32 [len(sparse_names())] maps local sparse ids to the
        store's; returns ``sent_ids`` int32 [n], ``dense`` float64 [n, n_dense],
        ``sparse_indptr`` int64 [n + 1], ``sparse_ids`` int32 (sorted per row),
        ``sparse_values`` float64. Scores: ``sent_ids`` and ``stats`` int32 [n, n_dense].
        """
        cdef Py_ssize_t nnz = self.out_sp_id.size // sizeof(int32_t)
        cdef Py_ssize_t i, n_names = self.names.n
        cdef int64_t n = self.n_rows
        cdef int32_t* ids
        cdef double* vals
        cdef int64_t* ptr
        cdef const int32_t[::1] m
        if self.is_scores:
            return {"sent_ids": growbuf_to_array(&self.out_sid, cnp.NPY_INT32, 4, 0),
                    "stats": growbuf_to_array(&self.out_stats, cnp.NPY_INT32, 4, self.n_dense)}
        mapping = np.ascontiguousarray(name_ids if name_ids is not None else np.zeros(0), dtype=np.int32)
        if mapping.shape[0] != n_names:
            raise ValueError(f"expected {n_names} sparse name ids, got {mapping.shape[0]}")
        m = mapping
        ids = <int32_t*>self.out_sp_id.data
        vals = <double*>self.out_sp_val.data
        ptr = <int64_t*>self.out_ptr.data
        if nnz > 0:
            with nogil:
                for i in range(nnz):
                    ids[i] = m[ids[i]]
                for i in range(n):
                    if ptr[i + 1] - ptr[i] > 1:
                        sort_row(ids + ptr[i], vals + ptr[i], ptr[i + 1] - ptr[i])
        out = {
            "sent_ids": growbuf_to_array(&self.out_sid, cnp.NPY_INT32, 4, 0),
            "sparse_indptr": growbuf_to_array(&self.out_ptr, cnp.NPY_INT64, 8, 0),
            "sparse_ids": growbuf_to_array(&self.out_sp_id, cnp.NPY_INT32, 4, 0),
            "sparse_values": growbuf_to_array(&self.out_sp_val, cnp.NPY_FLOAT64, 8, 0),
        }
        if self.n_dense > 0:
            out["dense"] = growbuf_to_array(&self.out_dense, cnp.NPY_FLOAT64, 8, self.n_dense)
        else:
            growbuf_free(&self.out_dense)
            out["dense"] = np.zeros((n, 0), dtype=np.float64)
        return out

    # ---------------------------------------------------------------- helpers
    cdef void _take_error_text(self):
        if self.err_len > 0 and self.err_ptr != NULL:
            self.err_text = self.err_ptr[:self.err_len]
        else:
            self.err_text = b""
        self.err_ptr = NULL
        self.err_len = 0

    cdef int _fail_eof(self, int code, int64_t line):
        self.err_code = code
        self.err_line = line
        self.err_sid = self.sid
        self.err_count = self.count
        self.err_bin = self.block_bin
        self.err_text = b""
        return code

    cdef inline int _fail(self, int code, int64_t line, const char* s, Py_ssize_t n) noexcept nogil:
        self.err_code = code
        self.err_line = line
        self.err_sid = self.sid
        self.err_count = self.count
        self.err_bin = self.block_bin
        self.err_ptr = s
        self.err_len = n if s != NULL else 0
        return code

    cdef inline Py_ssize_t _row_bytes(self) noexcept nogil:
        return self.dim * 4

    cdef int _run(self) noexcept nogil:
        cdef const char* b = self.buf
        cdef const char* nl
        cdef Py_ssize_t n = self.n, start, stop, end, take
        cdef int64_t ln
        cdef int rc
        while self.pos < n:
            if self.state == S_PAYLOAD:
                take = self.payload_need - self.payload.size
                if take > n - self.pos:
                    take = n - self.pos
                if growbuf_append(&self.payload, b + self.pos, take) != 0:
                    return self._fail(ERR_MEMORY, self.header_line, NULL, 0)
                self.line_no += count_newlines(b + self.pos, take)
                self.pos += take
                self.at_line_start = b[self.pos - 1] == b'\n'
                if self.payload.size == self.payload_need:
                    rc = self._decode_payload()
                    if rc != OK:
                        return rc
                    self.state = S_END
                continue
            start = self.pos
            nl = <const char*>memchr(b + start, b'\n', n - start)
            stop = n if nl == NULL else nl - b
            end = stop
            if end > start and b[end - 1] == b'\r':
                end -= 1
            ln = self.line_no
            if nl != NULL:
                self.pos = stop + 1
                self.line_no += 1
                self.at_line_start = True
            else:
                self.pos = n
                self.at_line_start = False
            rc = self._line(b + start, end - start, ln)
            if rc != OK:
                return rc
        return OK

    cdef int _line(self, const char* p, Py_ssize_t n, int64_t ln) noexcept nogil:
        cdef Py_ssize_t i = 0, j = n
        if self.state == S_HEADER:
            while i < n and is_ws(p[i]):
                i += 1
            if i == n:
                return OK  # blank lines between blocks, as the extractor writes none but tolerates
            return self._header(p, n, ln)
        if self.state == S_ROWS:
            if starts_with(p, n, self.tag_txt_end):
                return self._fail(ERR_SHORT_BLOCK, ln, NULL, 0)
            if self.is_scores:
                return self._scores_row(p, n, ln)
            return self._features_row(p, n, ln)
        # S_END
        while i < j and is_ws(p[i]):
            i += 1
        while j > i and is_ws(p[j - 1]):
            j -= 1
        if not tag_is(p + i, j - i, self.tag_bin_end if self.block_bin else self.tag_txt_end):
            return self._fail(ERR_NO_END, ln, p, n)
        self.state = S_HEADER
        return OK

    cdef int _header(self, const char* p, Py_ssize_t n, int64_t ln) noexcept nogil:
        cdef Py_ssize_t i = 0, s, k, n_names = 0
        cdef int64_t vals[3]
        cdef int64_t v
        cdef int f
        cdef bint bin_, digits_ok, first = False
        cdef int64_t* offs
        self.header_line = ln
        while i < n and is_ws(p[i]):
            i += 1
        s = i
        while i < n and not is_ws(p[i]):
            i += 1
        if tag_is(p + s, i - s, self.tag_txt_begin):
            bin_ = False
        elif tag_is(p + s, i - s, self.tag_bin_begin):
            bin_ = True
        else:
            return self._fail(ERR_HEADER, ln, p, n)
        for f in range(3):
            while i < n and is_ws(p[i]):
                i += 1
            if i == n:
                return self._fail(ERR_HEADER, ln, p, n)
            s = i
            v = 0
            digits_ok = True
            while i < n and not is_ws(p[i]):
                if not (b'0' <= p[i] <= b'9'):
                    digits_ok = False
                elif v < 1099511627776LL:
                    v = v * 10 + (p[i] - 48)
                i += 1
            if not digits_ok:
                return self._fail(ERR_HEADER, ln, p, n)
            vals[f] = v
        if vals[0] > 2147483647 or vals[1] > 2147483647 or vals[2] > MAX_DIM:
            return self._fail(ERR_HEADER_RANGE, ln, p, n)
        self.sid = vals[0]
        self.count = vals[1]
        self.dim = vals[2]
        self.block_bin = bin_
        self.done = 0
        if self.is_scores:
            while i < n and is_ws(p[i]):
                i += 1
            s = i
            while i < n and not is_ws(p[i]):
                i += 1
            if self.have_names:
                if self.dim != self.n_dense or i - s != self.first_names.size or \
                        memcmp(p + s, self.first_names.data, i - s) != 0:
                    return self._fail(ERR_SCORE_TYPE, ln, p, n)
            else:
                if i == s or self.dim < 1 or self.dim > MAX_STATS:
                    return self._fail(ERR_SCORE_TYPE, ln, p, n)
                if growbuf_append(&self.first_names, p + s, i - s) != 0:
                    return self._fail(ERR_MEMORY, ln, NULL, 0)
                self.n_dense = self.dim
                self.have_names = True
                first = True
        else:
            # the dense names: count them, then check them against (or record them as) the first block's
            k = i
            while True:
                while k < n and is_ws(p[k]):
                    k += 1
                if k == n:
                    break
                while k < n and not is_ws(p[k]):
                    k += 1
                n_names += 1
            if n_names != self.dim:
                self.err_a = self.dim
                self.err_b = n_names
                return self._fail(ERR_NAME_COUNT, ln, p, n)
            if self.have_names:
                if self.dim != self.n_dense:
                    return self._fail(ERR_DENSE_NAMES, ln, p, n)
                offs = <int64_t*>self.first_offs.data
                for f in range(self.n_dense):
                    while i < n and is_ws(p[i]):
                        i += 1
                    s = i
                    while i < n and not is_ws(p[i]):
                        i += 1
                    if i - s != offs[f + 1] - offs[f] or memcmp(p + s, self.first_names.data + offs[f], i - s) != 0:
                        return self._fail(ERR_DENSE_NAMES, ln, p, n)
            else:
                if self._record_names(p + i, n - i) != 0:
                    return self._fail(ERR_MEMORY, ln, NULL, 0)
                first = True
        if bin_:
            self.payload.size = 0
            self.payload_need = self.count * self._row_bytes()
            if self.payload_need == 0:
                if self._decode_payload() != OK:
                    return self.err_code
                self.state = S_END
            else:
                self.state = S_PAYLOAD
        else:
            self.state = S_ROWS if self.count > 0 else S_END
        if first:
            # hand the line to Python, which fixes (or checks) the store's dense names
            return self._fail(FIRST_HEADER, ln, p, n)
        return OK

    cdef int _record_names(self, const char* p, Py_ssize_t n) noexcept nogil:
        cdef Py_ssize_t i = 0, s
        cdef int64_t end
        while True:
            while i < n and is_ws(p[i]):
                i += 1
            if i == n:
                break
            s = i
            while i < n and not is_ws(p[i]):
                i += 1
            end = self.first_names.size + (i - s)
            if growbuf_append(&self.first_names, p + s, i - s) != 0 or \
                    growbuf_append(&self.first_offs, &end, sizeof(int64_t)) != 0:
                return -1
        self.n_dense = self.dim
        self.have_names = True
        self.row = <double*>malloc((self.n_dense + 1) * sizeof(double))
        return 0 if self.row != NULL else -1

    cdef bint _is_dense_name(self, const char* s, Py_ssize_t n) noexcept nogil:
        cdef int64_t* offs = <int64_t*>self.first_offs.data
        cdef int64_t f
        for f in range(self.n_dense):
            if offs[f + 1] - offs[f] == n and memcmp(self.first_names.data + offs[f], s, n) == 0:
                return True
        return False

    cdef int _append_row_tail(self) noexcept nogil:
        """Sentence id and sparse row end of the hypothesis just parsed."""
        cdef int32_t sid32 = <int32_t>self.sid
        cdef int64_t end = self.out_sp_id.size // sizeof(int32_t)
        if growbuf_append(&self.out_sid, &sid32, sizeof(int32_t)) != 0:
            return -1
        if not self.is_scores and growbuf_append(&self.out_ptr, &end, sizeof(int64_t)) != 0:
            return -1
        self.n_rows += 1
        return 0

    cdef int _features_row(self, const char* p, Py_ssize_t n, int64_t ln) noexcept nogil:
        cdef Py_ssize_t i = 0, s, e, q, first_s = 0, last_e = 0
        cdef int64_t nd = 0, dim = self.dim
        cdef bint bad = False, nonfinite = False, is_new
        cdef double v
        cdef uint64_t h
        cdef int32_t nid
        cdef int64_t* stamp
        cdef uint8_t flag
        cdef int64_t never = -1
        while nd < dim:
            while i < n and is_ws(p[i]):
                i += 1
            if i >= n:
                break
            s = i
            if not scan_double(p, s, n, &v, &i):
                bad = True
            elif not isfinite(v):
                nonfinite = True
            else:
                self.row[nd] = v
            if nd == 0:
                first_s = s
            last_e = i
            nd += 1
        if nd < dim:
            self.err_a = dim
            self.err_b = nd
            return self._fail(ERR_N_VALUES, ln, NULL, 0)
        if bad:
            return self._fail(ERR_NUMBER, ln, p + first_s, last_e - first_s)
        if nonfinite:
            return self._fail(ERR_NONFINITE, ln, NULL, 0)
        self.line_stamp += 1
        while True:
            while i < n and is_ws(p[i]):
                i += 1
            if i >= n:
                break
            s = i
            while i < n and not is_ws(p[i]):
                i += 1
            e = i
            # the name may itself contain '=': the value follows the last one
            q = e - 1
            while q >= s and p[q] != b'=':
                q -= 1
            if q <= s:
                return self._fail(ERR_SPARSE_TOKEN, ln, p + s, e - s)
            if not parse_double(p + q + 1, e - q - 1, &v):
                return self._fail(ERR_SPARSE_NUMBER, ln, p + s, e - s)
            if not isfinite(v):
                return self._fail(ERR_SPARSE_NONFINITE, ln, p + s, e - s)
            h = hash_bytes(p + s, q - s)
            nid = intern_find(&self.names, p + s, q - s, h)
            if nid < 0:
                if not valid_utf8(<const uint8_t*>(p + s), q - s):
                    return self._fail(ERR_UTF8, ln, p + s, q - s)
                nid = intern_add(&self.names, p + s, q - s, h)
                flag = self._is_dense_name(p + s, q - s)
                if nid < 0 or growbuf_append(&self.name_dense, &flag, 1) != 0 or \
                        growbuf_append(&self.stamp, &never, sizeof(int64_t)) != 0:
                    return self._fail(ERR_MEMORY, ln, NULL, 0)
            stamp = <int64_t*>self.stamp.data
            if (<uint8_t*>self.name_dense.data)[nid] or stamp[nid] == self.line_stamp:
                return self._fail(ERR_DUPLICATE, ln, p + s, q - s)
            stamp[nid] = self.line_stamp
            if growbuf_append(&self.out_sp_id, &nid, sizeof(int32_t)) != 0 or \
                    growbuf_append(&self.out_sp_val, &v, sizeof(double)) != 0:
                return self._fail(ERR_MEMORY, ln, NULL, 0)
        if growbuf_append(&self.out_dense, self.row, dim * sizeof(double)) != 0 or self._append_row_tail() != 0:
            return self._fail(ERR_MEMORY, ln, NULL, 0)
        self.done += 1
        if self.done == self.count:
            self.state = S_END
        return OK

    cdef int _scores_row(self, const char* p, Py_ssize_t n, int64_t ln) noexcept nogil:
        cdef Py_ssize_t i = 0, s, j = n, a
        cdef int64_t ntok = 0
        cdef int64_t vals[MAX_STATS]
        cdef int32_t row[MAX_STATS]
        cdef int64_t n_stats = self.n_dense
        cdef bint bad = False
        cdef int k
        while True:
            while i < n and is_ws(p[i]):
                i += 1
            if i >= n:
                break
            s = i
            while i < n and not is_ws(p[i]):
                i += 1
            if ntok < n_stats and not parse_stat(p + s, i - s, &vals[ntok]):
                bad = True
            ntok += 1
        if ntok != n_stats:
            self.err_a = n_stats
            self.err_b = ntok
            return self._fail(ERR_N_STATS, ln, NULL, 0)
        a = 0
        while a < j and is_ws(p[a]):
            a += 1
        while j > a and is_ws(p[j - 1]):
            j -= 1
        if bad:
            return self._fail(ERR_NOT_INTEGER, ln, p + a, j - a)
        for k in range(n_stats):
            if vals[k] < 0:
                return self._fail(ERR_NEGATIVE, ln, p + a, j - a)
        for k in range(n_stats):
            if vals[k] > 2147483647:
                return self._fail(ERR_TOO_LARGE, ln, p + a, j - a)
            row[k] = <int32_t>vals[k]
        if growbuf_append(&self.out_stats, row, n_stats * sizeof(int32_t)) != 0 or \
                self._append_row_tail() != 0:
            return self._fail(ERR_MEMORY, ln, NULL, 0)
        self.done += 1
        if self.done == self.count:
            self.state = S_END
        return OK

    cdef int _decode_payload(self) noexcept nogil:
        """Append the hypotheses of a complete binary block."""
        cdef const char* q = self.payload.data
        cdef int64_t h, j, dim = self.dim, total
        cdef float f
        cdef uint32_t u
        cdef int32_t iv
        cdef int32_t srow[MAX_STATS]
        cdef int64_t n_stats = self.n_dense
        cdef bint as_int = False
        cdef double* dst
        if self.is_scores:
            # Moses's ScoreStatsType is float today but was int before: int32 rows of
            # small counts are float32 denormals, which never occur in float32 rows.
            total = self.count * n_stats
            for j in range(total):
                memcpy(&u, q + 4 * j, 4)
                if 0 < u < 0x00800000U:
                    as_int = True
                    break
            for h in range(self.count):
                for j in range(n_stats):
                    if as_int:
                        memcpy(&iv, q + 4 * j, 4)
                        srow[j] = iv
                    else:
                        memcpy(&f, q + 4 * j, 4)
                        if not isfinite(f) or f != floor(f):
                            self.err_a = h
                            self.err_b = 0
                            return self._fail(ERR_BIN_NOT_INTEGER, self.header_line, q, 4 * n_stats)
                for j in range(n_stats):
                    if not as_int:
                        memcpy(&f, q + 4 * j, 4)
                        if f < 0:
                            self.err_a = h
                            self.err_b = 0
                            return self._fail(ERR_BIN_NEGATIVE, self.header_line, q, 4 * n_stats)
                        if f >= 2147483648.0:
                            self.err_a = h
                            return self._fail(ERR_TOO_LARGE, self.header_line, NULL, 0)
                        srow[j] = <int32_t>f
                    elif srow[j] < 0:
                        self.err_a = h
                        self.err_b = 1
                        return self._fail(ERR_BIN_NEGATIVE, self.header_line, q, 4 * n_stats)
                if growbuf_append(&self.out_stats, srow, n_stats * sizeof(int32_t)) != 0 or \
                        self._append_row_tail() != 0:
                    return self._fail(ERR_MEMORY, self.header_line, NULL, 0)
                q += 4 * n_stats
            return OK
        if growbuf_reserve(&self.out_dense, self.count * dim * <int64_t>sizeof(double)) != 0:
            return self._fail(ERR_MEMORY, self.header_line, NULL, 0)
        for h in range(self.count):
            dst = <double*>(self.out_dense.data + self.out_dense.size)
            for j in range(dim):
                memcpy(&f, q + 4 * j, 4)
                if not isfinite(f):
                    self.err_a = h
                    return self._fail(ERR_BIN_NONFINITE, self.header_line, NULL, 0)
                dst[j] = f
            self.out_dense.size += dim * sizeof(double)
            if self._append_row_tail() != 0:
                return self._fail(ERR_MEMORY, self.header_line, NULL, 0)
            q += 4 * dim
        return OK

