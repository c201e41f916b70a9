# Compiled reader for Moses extractor files: features.dat and scores.dat, text and binary.
#
# Each sentence is a block: a text header line, then one text line per hypothesis (TXT)
# or raw native-endian 32-bit values (BIN, extractor --binary), then an END line.
# The file comes in chunks of any size, and a newline byte may well sit inside binary
# payload, so the scanner is a state machine that carries its state (a line cut by the
# chunk's end, a partly read payload) from one chunk to the next and counts lines
# itself. Sparse feature names go into a table local to the scanner; the Python wrapper
# interns them into the store's FeatureSpace, and finish() / take() renumber and sort
# the rows. Output goes to growable buffers that become NumPy arrays without a copy
# (finish: the whole file) or are copied out block by block (take: streaming). Errors
# are status codes with the line number and the offending text;
# mtplug/formats/mert_data.py words them.
#
# A scores.dat holds the statistics of whatever scorer wrote it (BLEU 9 per line, PER 3,
# TER 3, BLEU,TER 12, ...): the first header fixes the count and the scorer name, which
# Python checks (FIRST_HEADER, as for the features' dense names), and every later block
# must repeat both.
#
# Rows of one block with equal features are rare; the scanner hashes every row (a sum
# of the dense values' bits times random odd multipliers, plus a hash per sparse entry,
# so that the order of the sparse entries does not matter) and flags a block where two
# hashes meet, so that the callers' exact duplicate removal can be skipped where no
# block is flagged.

from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport strtod, malloc, free
from libc.string cimport memchr, memcmp, memcpy, memmove, memset
from libc.math cimport isfinite, floor

import numpy as np

include "_growbuf.pxi"

from _intern cimport InternTable, hash_bytes, intern_add, intern_find, intern_free, intern_init
from _utf8 cimport valid_utf8
from _numtext cimport scan_decimal

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

cdef int _k

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


cdef inline bint scan_number(const char* p, Py_ssize_t i, Py_ssize_t n, double* out,
                             Py_ssize_t* tok_end) noexcept nogil:
    """Parse the token starting at ``p[i]`` (it ends at whitespace or ``n``) with strtod's
    result; ``tok_end`` receives its end. Moses's ``%g`` text takes _numtext's exact fast
    path and is read once; the rest (long mantissas, large exponents, inf/nan) goes to
    strtod."""
    cdef Py_ssize_t k = scan_decimal(p + i, n - i, out)
    if k > 0 and (i + k == n or is_ws(p[i + k])):
        tok_end[0] = i + k
        return True
    k = i
    while k < n and not is_ws(p[k]):
        k += 1
    tok_end[0] = k
    return strtod_token(p + i, k - i, out)


cdef inline bint parse_double(const char* s, Py_ssize_t n, double* out) noexcept nogil:
    """Parse the whole of ``s[:n]`` (no whitespace in it) as :func:`scan_number` does."""
    cdef Py_ssize_t end
    return n > 0 and scan_number(s, 0, n, out, &end) and end == n


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


cdef inline uint64_t mix64(uint64_t z) noexcept nogil:
    """splitmix64's finaliser: a bijection that spreads every input bit."""
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline uint64_t sparse_entry_hash(int32_t nid, double v) noexcept nogil:
    cdef uint64_t bits
    memcpy(&bits, &v, 8)
    return mix64(bits ^ (<uint64_t>nid * 0x9E3779B97F4A7C15ULL))


cdef class MertDataScanner:
    """Streams one features.dat or scores.dat (text, binary or mixed blocks) into arrays.

    Feed the file's bytes in chunks of any size with :meth:`feed` and call :meth:`run`
    until it returns 0 (a line cut by a chunk's end is carried to the next chunk); it
    returns :data:`STATUS_FIRST_HEADER` once per file after the first header (its line is
    in :attr:`err_text`) so that the caller can fix the dense names or check the scorer,
    and an error code (with :attr:`err_line`, :attr:`err_text`, :attr:`err_a`,
    :attr:`err_b`, :attr:`err_sid`, :attr:`err_count`) on bad input. At the end call
    :meth:`at_eof`, then :meth:`sparse_names` and :meth:`finish` (the whole file), or
    take the completed blocks as they come with :meth:`take` (streaming).

    ``names_only`` (features): only collect the sparse names, in order of first
    appearance (a quick pass that parses no number and keeps no row).

    While reading, every block's rows are hashed on their features (dense values and the
    set of sparse entries): :attr:`dup_candidates` turns True when two rows of one block
    hash alike, i.e. may be equal; with it False, no two rows of a block have equal
    features. :attr:`increasing` / :attr:`nondecreasing` tell whether the blocks'
    sentence ids so far rise strictly / never fall.
    """
    cdef bint is_scores
    cdef bint names_only
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
    cdef GrowBuf carry          # the start of a line cut by the end of the last chunk
    cdef bint eof_done
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
    cdef uint64_t* dense_keys   # per dense column: a random odd multiplier of the row hash
    # sparse names seen in this file
    cdef InternTable names
    cdef GrowBuf name_dense     # uint8 per name: equals a dense name
    cdef GrowBuf stamp          # int64 per name: last line that used it
    cdef int64_t line_stamp
    # the rows' hashes of the current block (open addressing, 0 = empty)
    cdef uint64_t* htab
    cdef Py_ssize_t hcap, halloc
    cdef bint block_dup
    cdef readonly bint dup_candidates
    cdef readonly bint increasing, nondecreasing
    cdef int64_t last_sid
    # outputs
    cdef GrowBuf out_dense, out_ptr, out_sp_id, out_sp_val, out_stats
    cdef GrowBuf out_blocks     # int64 (sid, rows, dup flag) per completed block
    cdef int64_t block_row0     # rows before the current block
    cdef readonly int64_t n_rows      # rows held (finish: all; take hands them over)
    cdef readonly int64_t rows_read   # rows of the file so far
    # error report
    cdef readonly int err_code
    cdef readonly int64_t err_line, err_a, err_b, err_sid, err_count
    cdef readonly bint err_bin
    cdef readonly bytes err_text
    cdef const char* err_ptr
    cdef Py_ssize_t err_len

    def __cinit__(self):
        self.dense_keys = NULL
        self.htab = NULL
        self.names.slots = NULL

    def __init__(self, bint scores, bint names_only=False):
        """``scores``: read a scores.dat (else a features.dat); ``names_only``: see the class."""
        cdef int64_t zero = 0
        self.is_scores = scores
        self.names_only = names_only and not scores
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
        self.increasing = True
        self.nondecreasing = True
        self.last_sid = -1
        if intern_init(&self.names, 256) != 0 or growbuf_append(&self.out_ptr, &zero, sizeof(int64_t)) != 0 or \
                growbuf_append(&self.first_offs, &zero, sizeof(int64_t)) != 0:
            raise MemoryError()

    def __dealloc__(self):
        free(self.dense_keys)
        free(self.htab)
        intern_free(&self.names)
        growbuf_free(&self.carry)
        growbuf_free(&self.payload)
        growbuf_free(&self.first_names)
        growbuf_free(&self.first_offs)
        growbuf_free(&self.name_dense)
        growbuf_free(&self.stamp)
        growbuf_free(&self.out_dense)
        growbuf_free(&self.out_ptr)
        growbuf_free(&self.out_sp_id)
        growbuf_free(&self.out_sp_val)
        growbuf_free(&self.out_stats)
        growbuf_free(&self.out_blocks)

    # ---------------------------------------------------------------- Python API
    def feed(self, const uint8_t[::1] chunk):
        """Hand over the file's next bytes (any amount; the scanner keeps a reference to
        them until the next feed)."""
        if self.names.slots == NULL:
            raise RuntimeError("MertDataScanner.__init__ was not called")
        self.chunk = chunk
        self.n = chunk.shape[0]
        self.buf = <const char*>&chunk[0] if self.n > 0 else NULL
        self.pos = 0

    def run(self):
        """Scan the fed bytes from where the last call stopped; returns a status code."""
        cdef int rc
        with nogil:
            rc = self._run()
        self._take_error_text()
        return rc

    def at_eof(self):
        """Scan a last line without a newline, then the status at the end of the input: an
        error code if a block is unfinished (call once, after the last :meth:`run`)."""
        cdef int rc
        cdef int64_t eof_line
        if not self.eof_done:
            self.eof_done = True
            if self.carry.size > 0:
                # the file's last line has no newline: it ends at the end of the file
                self.at_line_start = False
                rc = self._carried_line(False)
                self._take_error_text()
                if rc != OK:
                    return rc
        eof_line = self.line_no if self.at_line_start else self.line_no + 1
        if self.state == S_ROWS:
            return self._fail_eof(ERR_SHORT_BLOCK, eof_line)
        if self.state == S_END:
            return self._fail_eof(ERR_NO_END, eof_line)
        if self.state == S_PAYLOAD:
            self.err_a = self.payload.size // self._row_bytes() if self._row_bytes() else 0
            return self._fail_eof(ERR_BIN_TRUNCATED, self.header_line)
        return OK

    @property
    def n_names(self):
        """Sparse names seen so far."""
        return self.names.n

    def sparse_names(self, Py_ssize_t start=0):
        """The sparse feature names of this file (``bytes``) in local id order, from local
        id ``start`` on."""
        cdef int64_t* offs = <int64_t*>self.names.offsets.data
        cdef Py_ssize_t i
        if start >= self.names.n:
            return []
        data = self.names.arena.data[offs[start]:self.names.arena.size]
        return [data[offs[i] - offs[start]:offs[i + 1] - offs[start]] for i in range(start, self.names.n)]

    def finish(self, name_ids=None):
        """The arrays read (the buffers are handed over, not copied).

        Features: ``name_ids`` int32 [len(sparse_names())] maps local sparse ids to the
        store's; returns ``sent_ids`` int32 [n], ``dense`` float64 [n, n_dense],
        ``sparse_indptr`` int64 [n + 1], ``sparse_ids`` int32 (sorted per row),
        ``sparse_values`` float64. Scores: ``sent_ids`` and ``stats`` int32 [n, n_dense].
        Both: ``blocks`` int64 [k, 3], per block its sentence id, rows and whether two of
        its rows may be equal in features (1) or are not (0).
        """
        cdef int64_t n = self.n_rows
        blocks = growbuf_to_array(&self.out_blocks, cnp.NPY_INT64, 8, 3)
        if blocks.shape[0] == 0:
            blocks = np.zeros((0, 3), dtype=np.int64)
        sids = np.repeat(blocks[:, 0].astype(np.int32), blocks[:, 1])
        if self.is_scores:
            stats = growbuf_to_array(&self.out_stats, cnp.NPY_INT32, 4, self.n_dense)
            return {"sent_ids": sids, "stats": stats, "blocks": blocks}
        self._map_ids(name_ids, 0, n)
        out = {
            "sent_ids": sids,
            "sparse_indptr": growbuf_to_array(&self.out_ptr, cnp.NPY_INT64, 8, 0),
            "sparse_ids": growbuf_to_array(&self.out_sp_id, cnp.NPY_INT32, 4, 0),
            "sparse_values": growbuf_to_array(&self.out_sp_val, cnp.NPY_FLOAT64, 8, 0),
            "blocks": blocks,
        }
        if self.n_dense > 0 and n > 0:
            out["dense"] = growbuf_to_array(&self.out_dense, cnp.NPY_FLOAT64, 8, self.n_dense)
        else:
            growbuf_free(&self.out_dense)
            out["dense"] = np.zeros((n, self.n_dense), dtype=np.float64)
        return out

    def take(self, name_ids=None):
        """The rows of the blocks completed since the last call (copies; the rows of the
        block being read stay), as :meth:`finish` returns them but without ``sent_ids``;
        ``name_ids`` int32 [>= n_names] maps local sparse ids to the store's."""
        cdef int64_t done = self.block_row0, rest = self.n_rows - self.block_row0
        cdef int64_t nb = self.out_blocks.size // (3 * sizeof(int64_t))
        cdef int64_t* ptr
        cdef int64_t nnz, k
        cdef Py_ssize_t width
        blocks = np.empty((nb, 3), dtype=np.int64)
        if nb:
            memcpy(cnp.PyArray_DATA(blocks), self.out_blocks.data, self.out_blocks.size)
        self.out_blocks.size = 0
        if self.is_scores:
            width = self.n_dense * sizeof(int32_t)
            stats = np.empty((done, self.n_dense), dtype=np.int32)
            _move_out(&self.out_stats, stats, done * width)
            self.n_rows = rest
            self.block_row0 = 0
            return {"stats": stats, "blocks": blocks}
        self._map_ids(name_ids, 0, done)
        ptr = <int64_t*>self.out_ptr.data
        nnz = ptr[done]
        indptr = np.empty(done + 1, dtype=np.int64)
        memcpy(cnp.PyArray_DATA(indptr), ptr, (done + 1) * sizeof(int64_t))
        for k in range(rest + 1):
            ptr[k] = ptr[done + k] - nnz
        self.out_ptr.size = (rest + 1) * sizeof(int64_t)
        ids = np.empty(nnz, dtype=np.int32)
        _move_out(&self.out_sp_id, ids, nnz * sizeof(int32_t))
        values = np.empty(nnz, dtype=np.float64)
        _move_out(&self.out_sp_val, values, nnz * sizeof(double))
        dense = np.empty((done, self.n_dense), dtype=np.float64)
        _move_out(&self.out_dense, dense, done * self.n_dense * sizeof(double))
        self.n_rows = rest
        self.block_row0 = 0
        return {"dense": dense, "sparse_indptr": indptr, "sparse_ids": ids, "sparse_values": values,
                "blocks": blocks}

    # ---------------------------------------------------------------- helpers
    cdef void _map_ids(self, name_ids, int64_t r0, int64_t r1) except *:
        """Renumber the sparse ids of rows r0 .. r1 - 1 with ``name_ids`` and sort each row."""
        cdef int32_t* ids = <int32_t*>self.out_sp_id.data
        cdef double* vals = <double*>self.out_sp_val.data
        cdef int64_t* ptr = <int64_t*>self.out_ptr.data
        cdef const int32_t[::1] m
        cdef int64_t i
        cdef int64_t lo = ptr[r0], hi = ptr[r1]
        if hi == lo:
            return
        mapping = np.ascontiguousarray(name_ids if name_ids is not None else np.zeros(0), dtype=np.int32)
        if mapping.shape[0] < self.names.n:
            raise ValueError(f"expected {self.names.n} sparse name ids, got {mapping.shape[0]}")
        m = mapping
        with nogil:
            for i in range(lo, hi):
                ids[i] = m[ids[i]]
            for i in range(r0, r1):
                if ptr[i + 1] - ptr[i] > 1:
                    sort_row(ids + ptr[i], vals + ptr[i], ptr[i + 1] - ptr[i])

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

    cdef int _fail_trimmed(self, int code, int64_t line, const char* p, Py_ssize_t n) noexcept nogil:
        """_fail with the line's text without its leading and trailing blanks."""
        cdef Py_ssize_t a = 0
        while a < n and is_ws(p[a]):
            a += 1
        while n > a and is_ws(p[n - 1]):
            n -= 1
        return self._fail(code, line, p + a, n - a)

    cdef inline Py_ssize_t _row_bytes(self) noexcept nogil:
        return self.dim * 4

    cdef int _carried_line(self, bint newline) noexcept nogil:
        """Scan the line held in ``carry`` (complete now: ``newline`` ended it, or the end of
        the file); its number is line_no."""
        cdef Py_ssize_t end = self.carry.size
        cdef int64_t ln = self.line_no
        if end > 0 and self.carry.data[end - 1] == b'\r':
            end -= 1
        if newline:
            self.line_no += 1
        self.carry.size = 0    # the bytes stay valid for an error report until the next append
        return self._line(self.carry.data, end, ln)

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
                if not self.names_only and growbuf_append(&self.payload, b + self.pos, take) != 0:
                    return self._fail(ERR_MEMORY, self.header_line, NULL, 0)
                if self.names_only:
                    self.payload_need -= take
                self.line_no += count_newlines(b + self.pos, take)
                self.pos += take
                self.at_line_start = b[self.pos - 1] == b'\n'
                if self.payload.size == self.payload_need:
                    if not self.names_only:
                        rc = self._decode_payload()
                        if rc != OK:
                            return rc
                    self.state = S_END
                continue
            start = self.pos
            nl = <const char*>memchr(b + start, b'\n', n - start)
            if self.carry.size > 0 or nl == NULL:
                # a line across chunks: gather it in carry
                stop = n if nl == NULL else nl - b
                if growbuf_append(&self.carry, b + start, stop - start) != 0:
                    return self._fail(ERR_MEMORY, self.line_no, NULL, 0)
                if nl == NULL:
                    self.pos = n
                    return OK
                self.pos = stop + 1
                self.at_line_start = True
                rc = self._carried_line(True)
                if rc != OK:
                    return rc
                continue
            stop = nl - b
            end = stop
            if end > start and b[end - 1] == b'\r':
                end -= 1
            ln = self.line_no
            self.pos = stop + 1
            self.line_no += 1
            self.at_line_start = True
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
            if n >= 4 and p[0] == self.tag_txt_end[0] and starts_with(p, n, self.tag_txt_end):
                return self._fail(ERR_SHORT_BLOCK, ln, NULL, 0)
            if self.is_scores:
                return self._scores_row(p, n, ln)
            if self.names_only:
                return self._names_row(p, n, ln)
            return self._features_row(p, n, ln)
        # S_END
        while i < j and is_ws(p[i]):
            i += 1
        while j > i and is_ws(p[j - 1]):
            j -= 1
        if not tag_is(p + i, j - i, self.tag_bin_end if self.block_bin else self.tag_txt_end):
            return self._fail(ERR_NO_END, ln, p, n)
        self.state = S_HEADER
        return self._end_block(ln)

    cdef int _end_block(self, int64_t ln) noexcept nogil:
        """Record the block just ended (sentence id, rows, may it hold equal rows)."""
        cdef int64_t rec[3]
        rec[0] = self.sid
        rec[1] = self.n_rows - self.block_row0
        rec[2] = self.block_dup
        if growbuf_append(&self.out_blocks, rec, sizeof(rec)) != 0:
            return self._fail(ERR_MEMORY, ln, NULL, 0)
        self.block_row0 = self.n_rows
        return OK

    cdef int _start_hashes(self) noexcept nogil:
        """An empty row-hash table for the block (at least twice its count of slots)."""
        cdef Py_ssize_t want = 16
        self.block_dup = False
        if self.is_scores or self.names_only:
            return 0
        while want < 2 * self.count:
            want *= 2
        if want > self.halloc:
            free(self.htab)
            self.htab = <uint64_t*>malloc(want * sizeof(uint64_t))
            self.halloc = want if self.htab != NULL else 0
            if self.htab == NULL:
                return -1
        self.hcap = want
        memset(self.htab, 0, want * sizeof(uint64_t))
        return 0

    cdef inline void _note_row(self, uint64_t h) noexcept nogil:
        """Add a row's features hash to the block's table; a repeat marks the block."""
        cdef Py_ssize_t slot
        h = mix64(h) | 1
        slot = <Py_ssize_t>(h & <uint64_t>(self.hcap - 1))
        while self.htab[slot] != 0:
            if self.htab[slot] == h:
                self.block_dup = True
                self.dup_candidates = True
                return
            slot = (slot + 1) & (self.hcap - 1)
        self.htab[slot] = h

    cdef inline uint64_t _dense_hash(self, const double* row) noexcept nogil:
        cdef uint64_t h = 0, bits
        cdef int64_t j
        for j in range(self.dim):
            memcpy(&bits, &row[j], 8)
            h += bits * self.dense_keys[j]
        return h

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
        if self.sid <= self.last_sid:
            self.increasing = False
            if self.sid < self.last_sid:
                self.nondecreasing = False
        self.last_sid = self.sid
        if self._start_hashes() != 0:
            return self._fail(ERR_MEMORY, ln, NULL, 0)
        if bin_:
            self.payload.size = 0
            self.payload_need = self.count * self._row_bytes()
            if self.payload_need == 0:
                if not self.names_only and self._decode_payload() != OK:
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
        cdef int64_t end, j
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
        self.dense_keys = <uint64_t*>malloc((self.n_dense + 1) * sizeof(uint64_t))
        if self.dense_keys == NULL:
            return -1
        for j in range(self.n_dense):
            self.dense_keys[j] = mix64(<uint64_t>j + 0x243F6A8885A308D3ULL) | 1
        return 0

    cdef bint _is_dense_name(self, const char* s, Py_ssize_t n) noexcept nogil:
        cdef int64_t* offs = <int64_t*>self.first_offs.data
        cdef int64_t f
        for f in range(self.n_dense):
            if offs[f + 1] - offs[f] == n and memcmp(self.first_names.data + offs[f], s, n) == 0:
                return True
        return False

    cdef inline int _row_done(self) noexcept nogil:
        """Count the hypothesis just parsed (and end its sparse row)."""
        cdef int64_t end
        if not self.is_scores and not self.names_only:
            end = self.out_sp_id.size // sizeof(int32_t)
            if growbuf_append(&self.out_ptr, &end, sizeof(int64_t)) != 0:
                return -1
        self.n_rows += 1
        self.rows_read += 1
        self.done += 1
        if self.done == self.count:
            self.state = S_END
        return 0

    cdef int _features_row(self, const char* p, Py_ssize_t n, int64_t ln) noexcept nogil:
        cdef Py_ssize_t i = 0, s, e, q, first_s = 0, last_e = 0
        cdef int64_t nd = 0, dim = self.dim
        cdef bint bad = False, nonfinite = False
        cdef double v
        cdef uint64_t h, hrow
        cdef int32_t nid
        cdef int64_t* stamp
        cdef uint8_t flag
        cdef int64_t never = -1
        cdef double* row
        if growbuf_reserve(&self.out_dense, dim * sizeof(double)) != 0:
            return self._fail(ERR_MEMORY, ln, NULL, 0)
        # parse straight into the output; the row counts only once it is complete
        row = <double*>(self.out_dense.data + self.out_dense.size)
        while nd < dim:
            while i < n and is_ws(p[i]):
                i += 1
            if i >= n:
                break
            s = i
            if not scan_number(p, s, n, &v, &i):
                bad = True
            elif not isfinite(v):
                nonfinite = True
            else:
                row[nd] = v
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
        hrow = 0 if self.block_dup else self._dense_hash(row)
        while i < n and is_ws(p[i]):
            i += 1
        if i < n:
            self.line_stamp += 1
        while i < n:
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
            hrow += sparse_entry_hash(nid, v)
            while i < n and is_ws(p[i]):
                i += 1
        self.out_dense.size += dim * sizeof(double)
        if not self.block_dup:
            self._note_row(hrow)
        if self._row_done() != 0:
            return self._fail(ERR_MEMORY, ln, NULL, 0)
        return OK

    cdef int _names_row(self, const char* p, Py_ssize_t n, int64_t ln) noexcept nogil:
        """names_only: intern the row's sparse names (nothing is checked or kept)."""
        cdef Py_ssize_t i = 0, s, e, q
        cdef int64_t nd = 0
        cdef uint64_t h
        cdef int32_t nid
        if memchr(p, b'=', n) != NULL:
            while nd < self.dim:
                while i < n and is_ws(p[i]):
                    i += 1
                while i < n and not is_ws(p[i]):
                    i += 1
                nd += 1
            while True:
                while i < n and is_ws(p[i]):
                    i += 1
                if i >= n:
                    break
                s = i
                while i < n and not is_ws(p[i]):
                    i += 1
                e = i
                q = e - 1
                while q >= s and p[q] != b'=':
                    q -= 1
                if q > s:
                    h = hash_bytes(p + s, q - s)
                    if intern_find(&self.names, p + s, q - s, h) < 0 and \
                            intern_add(&self.names, p + s, q - s, h) < 0:
                        return self._fail(ERR_MEMORY, ln, NULL, 0)
        if self._row_done() != 0:
            return self._fail(ERR_MEMORY, ln, NULL, 0)
        return OK

    cdef int _scores_row(self, const char* p, Py_ssize_t n, int64_t ln) noexcept nogil:
        cdef Py_ssize_t i = 0, s
        cdef int64_t ntok = 0
        cdef int64_t vals[MAX_STATS]
        cdef int64_t v
        cdef uint32_t c
        cdef int32_t* row
        cdef int64_t n_stats = self.n_dense
        cdef bint bad = False
        cdef int k
        while True:
            while i < n and is_ws(p[i]):
                i += 1
            if i >= n:
                break
            s = i
            # plain digits inline (what Moses writes); signs and the rest through parse_stat
            v = 0
            while i < n:
                c = <uint32_t>(<uint8_t>p[i]) - 48
                if c > 9:
                    break
                v = v * 10 + c
                i += 1
            if i == s or i - s > 12 or (i < n and not is_ws(p[i])):
                while i < n and not is_ws(p[i]):
                    i += 1
                if ntok < n_stats and not parse_stat(p + s, i - s, &vals[ntok]):
                    bad = True
            elif ntok < n_stats:
                vals[ntok] = v
            ntok += 1
        if ntok != n_stats:
            self.err_a = n_stats
            self.err_b = ntok
            return self._fail(ERR_N_STATS, ln, NULL, 0)
        if bad:
            return self._fail_trimmed(ERR_NOT_INTEGER, ln, p, n)
        for k in range(n_stats):
            if vals[k] < 0:
                return self._fail_trimmed(ERR_NEGATIVE, ln, p, n)
        if growbuf_reserve(&self.out_stats, n_stats * sizeof(int32_t)) != 0:
            return self._fail(ERR_MEMORY, ln, NULL, 0)
        row = <int32_t*>(self.out_stats.data + self.out_stats.size)
        for k in range(n_stats):
            if vals[k] > 2147483647:
                return self._fail_trimmed(ERR_TOO_LARGE, ln, p, n)
            row[k] = <int32_t>vals[k]
        self.out_stats.size += n_stats * sizeof(int32_t)
        if self._row_done() != 0:
            return self._fail(ERR_MEMORY, ln, NULL, 0)
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
                        self._row_done() != 0:
                    return self._fail(ERR_MEMORY, self.header_line, NULL, 0)
                q += 4 * n_stats
            self.state = S_END
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
            if not self.block_dup:
                self._note_row(self._dense_hash(dst))
            if self._row_done() != 0:
                return self._fail(ERR_MEMORY, self.header_line, NULL, 0)
            q += 4 * dim
        self.state = S_END
        return OK


cdef void _move_out(GrowBuf* b, object arr, Py_ssize_t nbytes) noexcept:
    """Copy the first ``nbytes`` of ``b`` into ``arr`` (C-contiguous, that size) and move
    the rest of ``b`` to its front."""
    if nbytes > 0:
        memcpy(cnp.PyArray_DATA(arr), b.data, nbytes)
        memmove(b.data, b.data + nbytes, b.size - nbytes)
    b.size -= nbytes
