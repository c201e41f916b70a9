# Compiled reader for Moses n-best and cdec k-best lines.
#
# One pass over the bytes of each line, without the GIL: sentence id, hypothesis tokens
# interned into a vocabulary (and kept LEB128-coded), and the feature vector (dense block +
# sparse entries). The BLEU sufficient statistics against each sentence's reference n-gram
# table (pyx/_ngram.pxd) are computed at finish(), runs of sentences in OpenMP threads, or
# by bleu_stats on the whole sentences take_sentences hands out while the file is read.
# Output goes to growable buffers that become NumPy arrays without a copy. Errors are
# status codes with the line number and the offending text; the Python wrapper turns
# them into InputError.

from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memchr, memmove, memset, memcpy
from libc.math cimport isfinite

import numpy as np

include "_growbuf.pxi"

from _intern cimport InternTable, intern_add, intern_find, intern_free, intern_init
from _numtext cimport parse_double, scan_decimal
from _ngram cimport NgramTable, ngram_hyp_stats, ngram_table_build, ngram_table_free, ngram_table_init
from _runs cimport check_runs

from cython.parallel cimport prange, threadid

# Status codes (mirrored in mtplug/formats/nbest.py, which words the messages).
cdef enum:
    OK = 0
    ERR_FIELDS = 1          # fewer than three '|||' fields
    ERR_SENT_ID = 2         # sentence id is not a non-negative integer
    ERR_SENT_ORDER = 3      # sentence id smaller than the previous line's
    ERR_SENT_NO_REF = 4     # sentence id beyond the references
    ERR_NUMBER = 5          # a feature value that is not a number
    ERR_NONFINITE = 6       # NaN or infinite feature value
    ERR_NO_LABEL = 7        # value before any feature label
    ERR_DUP_FEATURE = 8     # the same feature twice on one line
    ERR_UNKNOWN_DENSE = 9   # dense label not in the layout of the first line
    ERR_DENSE_COUNT = 10    # a dense label with another number of values than the layout
    ERR_SPARSE_VALUE = 11   # sparse label not followed by exactly one value
    ERR_MEMORY = 12
    ERR_EMPTY_LABEL = 13    # label with no values
    ERR_UTF8 = 14           # invalid UTF-8 (checked in Python when a new word appears)
    ERR_FIELD_COUNT = 15    # another number of '|||' fields than the file's first line has

# Tokens are separated by ASCII space and tab, as Moses does.
cdef inline bint is_space(char c) noexcept nogil:
    return c == b' ' or c == b'\t'


cdef extern from *:
    """
    /* eight bytes at a time where a little-endian load and a count of trailing zeros are
       cheap; a byte loop elsewhere (the two give the same hashes) */
    #if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    #define MTPLUG_SWAR 1
    #define mtplug_ctz64(x) __builtin_ctzll(x)
    #else
    #define MTPLUG_SWAR 0
    #define mtplug_ctz64(x) 0
    #endif
    """
    bint MTPLUG_SWAR
    int mtplug_ctz64(uint64_t x) noexcept nogil


# The vocabularies' hash of a word: its bytes in little-endian blocks of eight, a multiply
# and shift per block, then its length. Interning 50 million tokens, the byte-wise FNV
# hash's chain of multiplies and a separate pass to find each token's end cost most of the
# reading; token_end finds the end and hashes in one pass, eight bytes a step.
cdef inline uint64_t _hash_block(uint64_t h, uint64_t w) noexcept nogil:
    h = (h ^ w) * 0xBF58476D1CE4E5B9ULL
    return h ^ (h >> 29)


cdef inline uint64_t _hash_end(uint64_t h, uint64_t w, Py_ssize_t n) noexcept nogil:
    h = (h ^ w) * 0xBF58476D1CE4E5B9ULL
    h = (h ^ <uint64_t>n) * 0x94D049BB133111EBULL
    return h ^ (h >> 32)


cdef inline uint64_t word_hash(const char* s, Py_ssize_t n) noexcept nogil:
    cdef uint64_t h = 0x9E3779B97F4A7C15ULL, w
    cdef Py_ssize_t j = 0, k
    while j + 8 <= n:
        if MTPLUG_SWAR:
            memcpy(&w, s + j, 8)
        else:
            w = 0
            for k in range(8):
                w |= (<uint64_t>(<uint8_t>s[j + k])) << (8 * k)
        h = _hash_block(h, w)
        j += 8
    w = 0
    for k in range(n - j):
        w |= (<uint64_t>(<uint8_t>s[j + k])) << (8 * k)
    return _hash_end(h, w, n)


cdef inline Py_ssize_t token_end(const char* p, Py_ssize_t i, Py_ssize_t stop, uint64_t* hash) noexcept nogil:
    """End of the token that starts at ``p[i]`` (the first space or tab, or ``stop``); its
    word_hash goes to ``hash``."""
    cdef Py_ssize_t j = i, k
    cdef uint64_t h = 0x9E3779B97F4A7C15ULL, w, a, b, z
    if MTPLUG_SWAR:
        while j + 8 <= stop:
            memcpy(&w, p + j, 8)
            # a high bit in each byte that is a space or a tab (exact up to the first one)
            a = w ^ 0x2020202020202020ULL
            b = w ^ 0x0909090909090909ULL
            z = (((a - 0x0101010101010101ULL) & ~a) | ((b - 0x0101010101010101ULL) & ~b)) & 0x8080808080808080ULL
            if z:
                k = mtplug_ctz64(z) >> 3
                w = (w & ((<uint64_t>1 << (8 * k)) - 1)) if k else 0
                hash[0] = _hash_end(h, w, j + k - i)
                return j + k
            h = _hash_block(h, w)
            j += 8
    w = 0
    k = 0
    while j < stop and not is_space(p[j]):
        w |= (<uint64_t>(<uint8_t>p[j])) << (8 * k)
        j += 1
        k += 1
        if k == 8:
            h = _hash_block(h, w)
            w = 0
            k = 0
    hash[0] = _hash_end(h, w, j - i)
    return j


cdef class Vocabulary:
    """Interns byte strings to consecutive int32 ids (0, 1, ...); exact, hash + compare.

    Words are kept in one byte arena with int64 offsets, so the whole vocabulary is two
    arrays (see :meth:`to_arrays`).
    """
    cdef InternTable tab        # arena (word bytes back to back), offsets (int64, n + 1)

    def __cinit__(self):
        if intern_init(&self.tab, 1024) != 0:
            raise MemoryError()

    def __dealloc__(self):
        intern_free(&self.tab)

    @property
    def n(self):
        return self.tab.n

    cdef inline int32_t find(self, const char* s, Py_ssize_t n, uint64_t h) noexcept nogil:
        """Id of ``s[:n]`` (``h = word_hash(s, n)``), or -1."""
        return intern_find(&self.tab, s, n, h)

    cdef inline int32_t intern(self, const char* s, Py_ssize_t n) except -2 nogil:
        """Id of the word ``s[:n]``, adding it if new."""
        return self.intern_hashed(s, n, word_hash(s, n))

    cdef inline int32_t intern_hashed(self, const char* s, Py_ssize_t n, uint64_t h) except -2 nogil:
        """:meth:`intern` with ``h = word_hash(s, n)`` given."""
        cdef int32_t wid = self.find(s, n, h)
        if wid >= 0:
            return wid
        wid = intern_add(&self.tab, s, n, h)
        if wid < 0:
            with gil:
                raise MemoryError()
        return wid

    def add(self, bytes word):
        """Id of ``word`` (UTF-8 bytes), adding it if new."""
        return self.intern(word, len(word))

    def get(self, bytes word):
        """Id of ``word``, or -1 if it is not in the vocabulary."""
        return self.find(word, len(word), word_hash(word, len(word)))

    def __len__(self):
        return self.tab.n

    def word(self, Py_ssize_t i):
        """The word with id ``i`` as ``str``."""
        cdef int64_t* offs = <int64_t*>self.tab.offsets.data
        if i < 0 or i >= self.tab.n:
            raise IndexError(i)
        return self.tab.arena.data[offs[i]:offs[i + 1]].decode("utf-8")

    def words(self, errors="strict"):
        """All words in id order, as a list of ``str`` (``errors``: as for bytes.decode;
        error messages use "backslashreplace", the scan may stop before checking UTF-8)."""
        cdef int64_t* offs = <int64_t*>self.tab.offsets.data
        cdef Py_ssize_t i
        data = self.tab.arena.data[:self.tab.arena.size]
        return [data[offs[i]:offs[i + 1]].decode("utf-8", errors) for i in range(self.tab.n)]

    def to_arrays(self):
        """``(arena uint8 [bytes], offsets int64 [n + 1])``: the whole vocabulary."""
        arena = np.frombuffer(self.tab.arena.data[:self.tab.arena.size], dtype=np.uint8).copy()
        offs = np.frombuffer(self.tab.offsets.data[:self.tab.offsets.size], dtype=np.int64).copy()
        return arena, offs

    @staticmethod
    def from_arrays(const uint8_t[::1] arena, const int64_t[::1] offsets):
        """Rebuild a vocabulary saved with :meth:`to_arrays`."""
        cdef Vocabulary v = Vocabulary()
        cdef Py_ssize_t i
        cdef const char* base = b""
        if arena.shape[0]:
            base = <const char*>&arena[0]
        for i in range(offsets.shape[0] - 1):
            v.intern(base + offsets[i], offsets[i + 1] - offsets[i])
        return v

    @staticmethod
    def from_words(words):
        """A vocabulary holding ``words`` (iterable of ``str``) with ids in that order."""
        cdef Vocabulary v = Vocabulary()
        for w in words:
            b = w.encode("utf-8")
            if v.intern(b, len(b)) != v.tab.n - 1:
                raise ValueError(f"duplicate word {w!r}")
        return v


cdef class NbestScanner:
    """Streams n-best lines into arrays; see mtplug/formats/nbest.py for the contract.

    Construct with the shared vocabularies and (optionally) the references as CSR
    arrays of token class ids. Call :meth:`scan` on chunks of whole lines, then
    :meth:`finish` for the arrays.
    """
    cdef Vocabulary words       # hypothesis/reference tokens
    cdef Vocabulary names       # feature column names (dense first)
    cdef Vocabulary labels      # dense labels (e.g. LM0), for Moses's labelled form
    cdef GrowBuf label_base     # int32 first dense column of label i
    cdef GrowBuf label_count    # int32 number of columns of label i
    cdef readonly Py_ssize_t n_dense
    cdef readonly bint layout_fixed
    # lowercasing: class id of each word (grown as the vocabulary grows)
    cdef bint lowercase
    cdef GrowBuf word_class     # int32 per word id
    cdef object lower_fn        # Python callable bytes -> bytes, used for new words only
    # references
    cdef bint has_refs
    cdef int reflen_mode
    cdef const int64_t[::1] ref_sent_ptr
    cdef const int64_t[::1] ref_tok_ptr
    cdef const int32_t[::1] ref_tokens
    cdef Py_ssize_t n_ref_sents
    # runs of hypotheses of one sentence (their statistics are computed in finish())
    cdef GrowBuf run_start      # int64 first hypothesis of each run
    cdef GrowBuf run_sid        # int64 its sentence
    # n-gram table of sentence table_sid, for hypothesis_stats
    cdef NgramTable ngrams
    cdef int64_t table_sid
    cdef int64_t cur_sid
    cdef Py_ssize_t checked_words
    cdef Py_ssize_t checked_names
    # per-line scratch
    cdef int32_t* toks
    cdef Py_ssize_t toks_cap
    cdef double* dense_row
    cdef int64_t* col_stamp      # line stamp per feature id (duplicate detection)
    cdef Py_ssize_t col_stamp_cap
    cdef int64_t* label_stamp
    cdef Py_ssize_t label_stamp_cap
    cdef int64_t line_stamp
    # outputs
    cdef GrowBuf out_sid, out_dense, out_sp_ptr, out_sp_id, out_sp_val
    cdef GrowBuf out_hyp_ptr, out_hyp_bytes
    cdef int64_t n_hyp
    cdef int64_t n_taken         # rows handed out by take_sentences
    # the number of the line after the last chunk scanned
    cdef readonly int64_t next_line
    # the '|||'-separated fields of the file's first line (0 before it) and its number: every
    # line of a file has as many (a line with fewer was cut short, its score or more lost)
    cdef readonly Py_ssize_t n_fields
    cdef readonly int64_t fields_line
    cdef readonly Py_ssize_t err_fields     # the fields of the line of ERR_FIELD_COUNT
    # error report
    cdef readonly int err_code
    cdef readonly int64_t err_line
    cdef readonly bytes err_text

    def __cinit__(self):
        ngram_table_init(&self.ngrams)
        self.table_sid = -1
        self.toks = NULL
        self.dense_row = NULL
        self.col_stamp = NULL
        self.label_stamp = NULL

    def __init__(self, Vocabulary words, Vocabulary names, Vocabulary labels,
                 label_base, label_count, Py_ssize_t n_dense,
                 lowercase=False, lower_fn=None, refs=None, int reflen_mode=0):
        """``refs``: ``(sent_ptr int64 [S+1], tok_ptr int64 [R+1], tokens int32)`` or None;
        reference tokens are class ids (lowercased words when ``lowercase``).
        ``label_base``/``label_count``: int32 arrays describing a fixed dense layout
        (empty and ``n_dense == 0`` lets the first line define it)."""
        cdef int64_t zero = 0
        cdef Py_ssize_t i
        self.words = words
        self.names = names
        self.labels = labels
        lb = np.ascontiguousarray(label_base, dtype=np.int32)
        lc = np.ascontiguousarray(label_count, dtype=np.int32)
        if lb.shape[0] != len(labels) or lc.shape[0] != len(labels):
            raise ValueError("label arrays do not match the label vocabulary")
        growbuf_append(&self.label_base, <char*>cnp.PyArray_DATA(lb), lb.nbytes)
        growbuf_append(&self.label_count, <char*>cnp.PyArray_DATA(lc), lc.nbytes)
        self.n_dense = n_dense
        self.layout_fixed = n_dense > 0 or len(names) > 0
        self.lowercase = bool(lowercase)
        self.lower_fn = lower_fn
        self.checked_words = 0
        self.checked_names = 0
        self._check_new_words(0)
        self.has_refs = refs is not None
        self.reflen_mode = reflen_mode
        if self.has_refs:
            self.ref_sent_ptr = refs[0]
            self.ref_tok_ptr = refs[1]
            self.ref_tokens = refs[2]
            self.n_ref_sents = self.ref_sent_ptr.shape[0] - 1
        self.cur_sid = -1
        self.toks_cap = 1024
        self.toks = <int32_t*>malloc(self.toks_cap * sizeof(int32_t))
        self.dense_row = <double*>malloc((self.n_dense + 1) * sizeof(double))
        self.col_stamp_cap = 0
        self.label_stamp_cap = 0
        self.line_stamp = 0
        self.n_hyp = 0
        self.n_taken = 0
        self.next_line = 1
        self.n_fields = 0
        self.fields_line = 0
        self.err_fields = 0
        if self.toks == NULL or self.dense_row == NULL:
            raise MemoryError()
        growbuf_append(&self.out_sp_ptr, &zero, sizeof(int64_t))
        growbuf_append(&self.out_hyp_ptr, &zero, sizeof(int64_t))
        self.err_code = OK

    def __dealloc__(self):
        ngram_table_free(&self.ngrams)
        free(self.toks)
        free(self.dense_row)
        free(self.col_stamp)
        free(self.label_stamp)
        growbuf_free(&self.run_start)
        growbuf_free(&self.run_sid)
        growbuf_free(&self.label_base)
        growbuf_free(&self.label_count)
        growbuf_free(&self.word_class)
        growbuf_free(&self.out_sid)
        growbuf_free(&self.out_dense)
        growbuf_free(&self.out_sp_ptr)
        growbuf_free(&self.out_sp_id)
        growbuf_free(&self.out_sp_val)
        growbuf_free(&self.out_hyp_ptr)
        growbuf_free(&self.out_hyp_bytes)

    # ---------------------------------------------------------------- helpers
    cdef int _fail(self, int code, int64_t line_no, const char* s, Py_ssize_t n) except -1 nogil:
        self.err_code = code
        self.err_line = line_no
        with gil:
            self.err_text = s[:n] if n > 0 else b""
        return code

    cdef inline int _check_new(self, int64_t line_no) except -1 nogil:
        """:meth:`_check_new_words`, when words or names came since the last check."""
        if self.checked_words < self.words.tab.n or self.checked_names < self.names.tab.n:
            with gil:
                return self._check_new_words(line_no)
        return 0

    cdef int _check_new_words(self, int64_t line_no) except -1:
        """Validate UTF-8 of words and feature names first seen on this line, and give
        each new word its class (the id of its lowercased form when lowercasing)."""
        cdef int32_t cls
        cdef int64_t* offs
        while self.checked_words < self.words.tab.n:
            offs = <int64_t*>self.words.tab.offsets.data
            w = self.words.tab.arena.data[offs[self.checked_words]:offs[self.checked_words + 1]]
            try:
                low = self.lower_fn(w) if self.lowercase else w.decode("utf-8")
            except UnicodeDecodeError:
                return self._fail(ERR_UTF8, line_no, w, len(w))
            if self.lowercase:
                cls = <int32_t>self.checked_words if low == w else self.words.intern(low, len(low))
                if growbuf_append(&self.word_class, &cls, sizeof(int32_t)) != 0:
                    raise MemoryError()
            self.checked_words += 1
        while self.checked_names < self.names.tab.n:
            offs = <int64_t*>self.names.tab.offsets.data
            w = self.names.tab.arena.data[offs[self.checked_names]:offs[self.checked_names + 1]]
            try:
                w.decode("utf-8")
            except UnicodeDecodeError:
                return self._fail(ERR_UTF8, line_no, w, len(w))
            self.checked_names += 1
        return 0

    cdef int _stamp_capacity(self) except -1 nogil:
        cdef Py_ssize_t need = self.names.tab.n + 1, cap, i
        cdef int64_t* p
        if need > self.col_stamp_cap:
            cap = need * 2
            p = <int64_t*>realloc(self.col_stamp, cap * sizeof(int64_t))
            if p == NULL:
                with gil:
                    raise MemoryError()
            for i in range(self.col_stamp_cap, cap):
                p[i] = -1
            self.col_stamp = p
            self.col_stamp_cap = cap
        need = self.labels.tab.n + 1
        if need > self.label_stamp_cap:
            cap = need * 2
            p = <int64_t*>realloc(self.label_stamp, cap * sizeof(int64_t))
            if p == NULL:
                with gil:
                    raise MemoryError()
            for i in range(self.label_stamp_cap, cap):
                p[i] = -1
            self.label_stamp = p
            self.label_stamp_cap = cap
        return 0

    cdef int _build_ref_table(self, int64_t sid) except -1:
        """The n-gram table and reference lengths of ``sid`` (for hypothesis_stats)."""
        cdef const int32_t* toks = &self.ref_tokens[0] if self.ref_tokens.shape[0] else NULL
        if ngram_table_build(&self.ngrams, &self.ref_tok_ptr[0], self.ref_sent_ptr[sid],
                             self.ref_sent_ptr[sid + 1], toks) != 0:
            raise MemoryError()
        self.table_sid = sid
        return 0

    cdef int _start_run(self, int64_t sid) except -1 nogil:
        """Hypotheses from the next one on belong to sentence ``sid``."""
        if growbuf_append(&self.run_start, &self.n_hyp, sizeof(int64_t)) != 0 or \
                growbuf_append(&self.run_sid, &sid, sizeof(int64_t)) != 0:
            with gil:
                raise MemoryError()
        return 0

    # ---------------------------------------------------------------- layout
    cdef int _discover_layout(self, const char* p, Py_ssize_t n, int64_t line_no) except -1:
        """Fix the dense layout from the first line's labels (Moses labelled form)."""
        cdef Py_ssize_t i = 0, j, base = 0
        cdef int32_t lab = -1, cnt = 0, count
        cdef bint expect_sparse_value = False
        cdef list order = []
        cdef dict counts = {}
        cdef Py_ssize_t m
        last = None
        # (no negative indices here: the module is compiled with wraparound off)
        while i < n:
            while i < n and is_space(p[i]):
                i += 1
            if i >= n:
                break
            j = i
            while j < n and not is_space(p[j]):
                j += 1
            m = j - i
            if expect_sparse_value:
                expect_sparse_value = False
            elif m > 1 and (p[j - 1] == b'=' or p[j - 1] == b':'):
                name = p[i:j - 1]
                if p[j - 1] == b'=' and b"_" in name:
                    expect_sparse_value = True
                else:
                    if name in counts:
                        return self._fail(ERR_DUP_FEATURE, line_no, p + i, m - 1)
                    order.append(name)
                    counts[name] = 0
                    last = name
            elif memchr_(p + i + 1, b'=', m - 1):
                pass
            elif last is not None:
                counts[last] += 1
            i = j
        for name in order:
            count = counts[name]
            if count == 0:
                return self._fail(ERR_EMPTY_LABEL, line_no, name, len(name))
            lab = self.labels.intern(name, len(name))
            growbuf_append(&self.label_base, &base, sizeof(int32_t))
            growbuf_append(&self.label_count, &count, sizeof(int32_t))
            for k in range(count):
                col = name + b"_" + str(k).encode()
                self.names.intern(col, len(col))
            base += count
        self.n_dense = base
        self.layout_fixed = True
        free(self.dense_row)
        self.dense_row = <double*>malloc((self.n_dense + 1) * sizeof(double))
        if self.dense_row == NULL:
            raise MemoryError()
        return 0

    # ---------------------------------------------------------------- lines
    cdef int _parse_features(self, const char* p, Py_ssize_t n, int64_t line_no) except -1 nogil:
        cdef Py_ssize_t i = 0, j, e, k
        cdef int32_t lab = -1, fid, base = 0, cnt = 0, filled = 0, got = 0
        cdef int32_t* lbase = <int32_t*>self.label_base.data
        cdef int32_t* lcount = <int32_t*>self.label_count.data
        cdef int32_t pending_sparse = -1
        cdef double v
        cdef int64_t sp_start = self.out_sp_id.size // sizeof(int32_t)
        cdef int64_t sp_end
        self.line_stamp += 1
        while i < n:
            while i < n and is_space(p[i]):
                i += 1
            if i >= n:
                break
            # most tokens are plain numbers: read as they are scanned
            k = scan_decimal(p + i, n - i, &v)
            if k > 0 and (i + k == n or is_space(p[i + k])):
                j = i + k
                e = -1
            else:
                j = i
                while j < n and not is_space(p[j]):
                    j += 1
                k = -1
            # token p[i:j]
            if k < 0 and pending_sparse < 0 and j - i > 1 and (p[j - 1] == b'=' or p[j - 1] == b':'):
                if p[j - 1] == b'=' and memchr_(p + i, b'_', j - i - 1):
                    fid = self.names.intern(p + i, j - i - 1)
                    if fid >= self.col_stamp_cap:
                        self._stamp_capacity()
                    if self.col_stamp[fid] == self.line_stamp:
                        return self._fail(ERR_DUP_FEATURE, line_no, p + i, j - i - 1)
                    self.col_stamp[fid] = self.line_stamp
                    pending_sparse = fid
                else:
                    if lab >= 0 and got != cnt:
                        return self._fail(ERR_DENSE_COUNT, line_no, p + i, j - i)
                    lab = self.labels.find(p + i, j - i - 1, word_hash(p + i, j - i - 1))
                    if lab < 0 or lab >= self.label_base.size // <Py_ssize_t>sizeof(int32_t):
                        return self._fail(ERR_UNKNOWN_DENSE, line_no, p + i, j - i - 1)
                    if lab >= self.label_stamp_cap:
                        self._stamp_capacity()
                    if self.label_stamp[lab] == self.line_stamp:
                        return self._fail(ERR_DUP_FEATURE, line_no, p + i, j - i - 1)
                    self.label_stamp[lab] = self.line_stamp
                    lbase = <int32_t*>self.label_base.data
                    lcount = <int32_t*>self.label_count.data
                    base = lbase[lab]
                    cnt = lcount[lab]
                    got = 0
                i = j
                continue
            e = -1
            # the token as a number first: a number's text holds no '='
            if k < 0 and (j - i >= 63 or parse_double(p + i, j - i, &v) != 0):
                if pending_sparse < 0:
                    # name=value (cdec k-best and old Moses sparse form): split at the last '='
                    for k in range(j - 1, i, -1):
                        if p[k] == b'=':
                            e = k
                            break
                if e < 0 or j - e - 1 <= 0 or j - e - 1 >= 63 or parse_double(p + e + 1, j - e - 1, &v) != 0:
                    return self._fail(ERR_NUMBER, line_no, p + i, j - i)
            if not isfinite(v):
                return self._fail(ERR_NONFINITE, line_no, p + i, j - i)
            if e >= 0:
                fid = self.names.intern(p + i, e - i)
                if fid >= self.col_stamp_cap:
                    self._stamp_capacity()
                if self.col_stamp[fid] == self.line_stamp or fid < self.n_dense:
                    return self._fail(ERR_DUP_FEATURE, line_no, p + i, e - i)
                self.col_stamp[fid] = self.line_stamp
                if growbuf_append(&self.out_sp_id, &fid, sizeof(int32_t)) != 0 or \
                        growbuf_append(&self.out_sp_val, &v, sizeof(double)) != 0:
                    with gil:
                        raise MemoryError()
            elif pending_sparse >= 0:
                if growbuf_append(&self.out_sp_id, &pending_sparse, sizeof(int32_t)) != 0 or \
                        growbuf_append(&self.out_sp_val, &v, sizeof(double)) != 0:
                    with gil:
                        raise MemoryError()
                pending_sparse = -1
                lab = -1
            else:
                if lab < 0:
                    return self._fail(ERR_NO_LABEL, line_no, p + i, j - i)
                if got >= cnt:
                    return self._fail(ERR_DENSE_COUNT, line_no, p + i, j - i)
                self.dense_row[base + got] = v
                got += 1
                filled += 1
            i = j
        if pending_sparse >= 0:
            return self._fail(ERR_SPARSE_VALUE, line_no, p, n)
        if filled != self.n_dense or (lab >= 0 and got != cnt):
            return self._fail(ERR_DENSE_COUNT, line_no, p, n)
        if growbuf_append(&self.out_dense, self.dense_row, self.n_dense * sizeof(double)) != 0:
            with gil:
                raise MemoryError()
        # sparse entries sorted by id: one canonical form for dedup and dot products
        sp_end = self.out_sp_id.size // sizeof(int32_t)
        sort_sparse(<int32_t*>self.out_sp_id.data + sp_start,
                    <double*>self.out_sp_val.data + sp_start, sp_end - sp_start)
        if growbuf_append(&self.out_sp_ptr, &sp_end, sizeof(int64_t)) != 0:
            with gil:
                raise MemoryError()
        return 0

    cdef int _scan_line(self, const char* p, Py_ssize_t n, int64_t line_no) except -1 nogil:
        cdef Py_ssize_t s1 = -1, s2 = -1, s3 = -1, i, a, b, fields = 3
        cdef const char* q
        cdef int rc
        cdef int64_t sid = 0
        # the first three '|||' separators; the fields after the features (score,
        # alignments ...) are only counted
        s1 = next_separator(p, 0, n)
        if s1 >= 0:
            s2 = next_separator(p, s1 + 3, n)
        if s2 < 0:
            return self._fail(ERR_FIELDS, line_no, p, n)
        s3 = next_separator(p, s2 + 3, n)
        if s3 < 0:
            s3 = n
        else:
            fields = 4
            i = next_separator(p, s3 + 3, n)
            while i >= 0:
                fields += 1
                i = next_separator(p, i + 3, n)
        if self.n_fields == 0:
            self.n_fields = fields
            self.fields_line = line_no
        elif fields != self.n_fields:
            self.err_fields = fields
            return self._fail(ERR_FIELD_COUNT, line_no, p, n)
        # sentence id
        a = 0
        b = s1
        while a < b and is_space(p[a]):
            a += 1
        while b > a and is_space(p[b - 1]):
            b -= 1
        if a == b or b - a > 18:
            return self._fail(ERR_SENT_ID, line_no, p, s1)
        for i in range(a, b):
            if p[i] < b'0' or p[i] > b'9':
                return self._fail(ERR_SENT_ID, line_no, p, s1)
            sid = sid * 10 + (p[i] - 48)
        if sid < self.cur_sid:
            return self._fail(ERR_SENT_ORDER, line_no, p + a, b - a)
        if self.has_refs:
            if sid >= self.n_ref_sents:
                return self._fail(ERR_SENT_NO_REF, line_no, p + a, b - a)
            if sid != self.cur_sid:
                self._start_run(sid)
        self.cur_sid = sid
        # features first: the dense layout may come from this line
        if not self.layout_fixed:
            with gil:
                rc = self._discover_layout(p + s2 + 3, s3 - s2 - 3, line_no)
            if rc != 0:
                return self.err_code
        if self._parse_features(p + s2 + 3, s3 - s2 - 3, line_no) != 0:
            return self.err_code
        return self._add_hypothesis(p, s1 + 3, s2, sid, line_no)

    cdef int _add_hypothesis(self, const char* p, Py_ssize_t i, Py_ssize_t stop, int64_t sid,
                             int64_t line_no) except -1 nogil:
        """Tokens of ``p[i:stop]``: interned and LEB128-coded (their statistics come later)."""
        cdef Py_ssize_t j
        cdef uint64_t h
        cdef int32_t wid
        cdef uint8_t* out
        cdef uint32_t u
        cdef int64_t end
        cdef int32_t sid32
        # a token and its separator take two bytes at least, its code five at most
        if growbuf_reserve(&self.out_hyp_bytes, 5 * ((stop - i) // 2 + 1)) != 0:
            with gil:
                raise MemoryError()
        out = <uint8_t*>self.out_hyp_bytes.data + self.out_hyp_bytes.size
        while True:
            while i < stop and is_space(p[i]):
                i += 1
            if i >= stop:
                break
            j = token_end(p, i, stop, &h)
            wid = self.words.intern_hashed(p + i, j - i, h)
            # LEB128 varint: most words take one or two bytes
            u = <uint32_t>wid
            while u >= 0x80:
                out[0] = <uint8_t>((u & 0x7F) | 0x80)
                u >>= 7
                out += 1
            out[0] = <uint8_t>u
            out += 1
            i = j
        self.out_hyp_bytes.size = <char*>out - self.out_hyp_bytes.data
        end = self.out_hyp_bytes.size
        if growbuf_append(&self.out_hyp_ptr, &end, sizeof(int64_t)) != 0:
            with gil:
                raise MemoryError()
        if self._check_new(line_no) != 0:
            return self.err_code
        sid32 = <int32_t>sid
        if growbuf_append(&self.out_sid, &sid32, sizeof(int32_t)) != 0:
            with gil:
                raise MemoryError()
        self.n_hyp += 1
        return 0

    cdef int _plain_line(self, const char* p, Py_ssize_t n, int64_t line_no) except -1 nogil:
        """A line of a plain hypothesis file: sentence id = line index, no features."""
        cdef int64_t sid = self.cur_sid + 1
        cdef int64_t end
        if self.has_refs:
            if sid >= self.n_ref_sents:
                return self._fail(ERR_SENT_NO_REF, line_no, b"", 0)
            self._start_run(sid)
        self.cur_sid = sid
        end = self.out_sp_id.size // sizeof(int32_t)
        if growbuf_append(&self.out_sp_ptr, &end, sizeof(int64_t)) != 0:
            with gil:
                raise MemoryError()
        return self._add_hypothesis(p, 0, n, sid, line_no)

    def hypothesis_stats(self, int64_t sid, const int32_t[::1] words, const int64_t[::1] ptr,
                         int32_t[:, ::1] out):
        """BLEU statistics of hypotheses given as word ids of this scanner's vocabulary
        (hypothesis i = words[ptr[i]:ptr[i+1]]) against the references of sentence ``sid``;
        out int32 [n, 9]. For strings that come from elsewhere than n-best text (forests)."""
        cdef Py_ssize_t i, j, n = ptr.shape[0] - 1, L
        cdef int32_t* cls
        if not self.has_refs or sid < 0 or sid >= self.n_ref_sents:
            raise ValueError(f"sentence {sid} has no references")
        if out.shape[0] != n or out.shape[1] != 9:
            raise ValueError("out must have shape [n, 9]")
        if self._check_new_words(0) != 0:
            raise ValueError("invalid UTF-8 in a word")
        if sid != self.table_sid:
            self._build_ref_table(sid)
        for i in range(n):
            L = ptr[i + 1] - ptr[i]
            if L > self.toks_cap:
                self.toks_cap = 2 * L
                self.toks = <int32_t*>realloc(self.toks, self.toks_cap * sizeof(int32_t))
                if self.toks == NULL:
                    raise MemoryError()
            cls = <int32_t*>self.word_class.data
            for j in range(L):
                self.toks[j] = cls[words[ptr[i] + j]] if self.lowercase else words[ptr[i] + j]
            ngram_hyp_stats(&self.ngrams, self.toks, L, self.reflen_mode, &out[i, 0])

    def new_file(self):
        """Start a new input file: sentence ids may begin again at 0, lines at 1, and its
        first line sets the number of fields again."""
        self.cur_sid = -1
        self.next_line = 1
        self.n_fields = 0
        self.fields_line = 0

    def scan(self, const uint8_t[::1] chunk, int64_t first_line, bint plain=False):
        """Parse the whole lines in ``chunk`` (line numbers from ``first_line``; the next
        chunk's first line is :attr:`next_line` then).

        Returns 0, or an error code with :attr:`err_line` and :attr:`err_text` set.
        Blank lines are skipped, as Moses's extractor does; a trailing CR is dropped.
        With ``plain``, every line (blank ones too) is the one hypothesis of the next
        sentence and has no features. The GIL is released while lines are parsed (taken
        back only for new words and errors), so other threads run meanwhile.
        """
        cdef int rc = 0
        self.next_line = first_line
        if chunk.shape[0] == 0:
            return 0
        with nogil:
            rc = self._scan_chunk(<const char*>&chunk[0], chunk.shape[0], first_line, plain)
        return rc

    cdef int _scan_chunk(self, const char* base, Py_ssize_t n, int64_t line_no, bint plain) except -1 nogil:
        cdef const char* nl
        cdef Py_ssize_t start = 0, stop, end, i
        cdef int rc
        while start < n:
            nl = <const char*>memchr(base + start, b'\n', n - start)
            stop = n if nl == NULL else nl - base
            end = stop
            if end > start and base[end - 1] == b'\r':
                end -= 1
            if plain:
                rc = self._plain_line(base + start, end - start, line_no)
                if rc != 0:
                    return rc
            else:
                i = start
                while i < end and (is_space(base[i])):
                    i += 1
                if i < end:
                    rc = self._scan_line(base + start, end - start, line_no)
                    if rc != 0:
                        return rc
            start = stop + 1
            line_no += 1
        self.next_line = line_no
        return 0

    @property
    def n_hypotheses(self):
        """Hypotheses read so far (those handed out by :meth:`take_sentences` included)."""
        return self.n_hyp + self.n_taken

    def layout(self):
        """``(label_base int32, label_count int32)`` of the dense layout."""
        lb = np.frombuffer(self.label_base.data[:self.label_base.size], dtype=np.int32).copy()
        lc = np.frombuffer(self.label_count.data[:self.label_count.size], dtype=np.int32).copy()
        return lb, lc

    def finish(self, int n_threads=1):
        """The arrays read so far (the scanner's buffers are handed over, not copied);
        the BLEU statistics are computed here, sentences in ``n_threads`` OpenMP threads
        (integers per hypothesis: the same for any number)."""
        out = {
            "sent_ids": growbuf_to_array(&self.out_sid, cnp.NPY_INT32, 4, 0),
            "dense": growbuf_to_array(&self.out_dense, cnp.NPY_FLOAT64, 8, max(self.n_dense, 1)),
            "sparse_indptr": growbuf_to_array(&self.out_sp_ptr, cnp.NPY_INT64, 8, 0),
            "sparse_ids": growbuf_to_array(&self.out_sp_id, cnp.NPY_INT32, 4, 0),
            "sparse_values": growbuf_to_array(&self.out_sp_val, cnp.NPY_FLOAT64, 8, 0),
            "hyp_indptr": growbuf_to_array(&self.out_hyp_ptr, cnp.NPY_INT64, 8, 0),
            "hyp_bytes": growbuf_to_array(&self.out_hyp_bytes, cnp.NPY_UINT8, 1, 0),
        }
        if self.n_dense == 0:
            out["dense"] = np.zeros((self.n_hyp, 0), dtype=np.float64)
        if not self.has_refs:
            out["stats"] = np.zeros((self.n_hyp, 0), dtype=np.int32)
            return out
        n_runs = self.run_sid.size // sizeof(int64_t)
        starts = np.empty(n_runs + 1, dtype=np.int64)
        starts[:n_runs] = np.frombuffer(self.run_start.data[:self.run_start.size], dtype=np.int64)
        starts[n_runs] = self.n_hyp
        sids = np.frombuffer(self.run_sid.data[:self.run_sid.size], dtype=np.int64).copy()
        classes = (np.frombuffer(self.word_class.data[:self.word_class.size], dtype=np.int32).copy()
                   if self.lowercase else np.zeros(0, dtype=np.int32))
        stats = np.empty((self.n_hyp, 9), dtype=np.int32)
        if bleu_stats(out["hyp_indptr"], out["hyp_bytes"], starts, sids, classes, self.ref_sent_ptr,
                      self.ref_tok_ptr, self.ref_tokens, self.reflen_mode, stats, n_threads) != 0:
            raise MemoryError()
        out["stats"] = stats
        growbuf_free(&self.run_start)
        growbuf_free(&self.run_sid)
        return out

    def take_sentences(self, bint final=False):
        """The rows of the sentences read to their end (all rows with ``final``), as
        :meth:`finish` returns them but without statistics: instead ``run_start`` int64
        [R + 1], ``run_sid`` int64 [R] and ``word_class`` int32 (the arguments of
        :func:`bleu_stats`, to compute them elsewhere, in another thread say). The rows
        leave the scanner, which keeps those of the sentence still being read. Needs
        references. A sentence ends where the next begins, so a file taken in pieces gives
        finish()'s arrays cut between sentences."""
        cdef Py_ssize_t n_runs = self.run_sid.size // sizeof(int64_t), keep_runs, i
        cdef int64_t* rs = <int64_t*>self.run_start.data
        cdef int64_t cut, sp_cut, hyp_cut
        cdef int64_t* ptr
        cdef Py_ssize_t d = self.n_dense
        if not self.has_refs:
            raise ValueError("take_sentences needs references")
        keep_runs = 0 if final or n_runs == 0 else 1
        cut = self.n_hyp if keep_runs == 0 else rs[n_runs - 1]
        sp_cut = (<int64_t*>self.out_sp_ptr.data)[cut]
        hyp_cut = (<int64_t*>self.out_hyp_ptr.data)[cut]
        starts = np.empty(n_runs - keep_runs + 1, dtype=np.int64)
        starts[:n_runs - keep_runs] = _copied(&self.run_start, 0, n_runs - keep_runs, np.int64)
        starts[n_runs - keep_runs] = cut
        out = {
            "sent_ids": _copied(&self.out_sid, 0, cut, np.int32),
            "dense": _copied(&self.out_dense, 0, cut * d, np.float64).reshape(cut, d),
            "sparse_indptr": _copied(&self.out_sp_ptr, 0, cut + 1, np.int64),
            "sparse_ids": _copied(&self.out_sp_id, 0, sp_cut, np.int32),
            "sparse_values": _copied(&self.out_sp_val, 0, sp_cut, np.float64),
            "hyp_indptr": _copied(&self.out_hyp_ptr, 0, cut + 1, np.int64),
            "hyp_bytes": _copied(&self.out_hyp_bytes, 0, hyp_cut, np.uint8),
            "run_start": starts,
            "run_sid": _copied(&self.run_sid, 0, n_runs - keep_runs, np.int64),
            "word_class": (_copied(&self.word_class, 0, self.word_class.size // sizeof(int32_t), np.int32)
                           if self.lowercase else np.zeros(0, dtype=np.int32)),
        }
        # the open sentence's rows move to the front, their offsets rebased
        _drop_front(&self.out_sid, cut * sizeof(int32_t))
        _drop_front(&self.out_dense, cut * d * sizeof(double))
        _drop_front(&self.out_sp_ptr, cut * sizeof(int64_t))
        _drop_front(&self.out_sp_id, sp_cut * sizeof(int32_t))
        _drop_front(&self.out_sp_val, sp_cut * sizeof(double))
        _drop_front(&self.out_hyp_ptr, cut * sizeof(int64_t))
        _drop_front(&self.out_hyp_bytes, hyp_cut)
        _drop_front(&self.run_start, (n_runs - keep_runs) * sizeof(int64_t))
        _drop_front(&self.run_sid, (n_runs - keep_runs) * sizeof(int64_t))
        ptr = <int64_t*>self.out_sp_ptr.data
        for i in range(self.n_hyp - cut + 1):
            ptr[i] -= sp_cut
        ptr = <int64_t*>self.out_hyp_ptr.data
        for i in range(self.n_hyp - cut + 1):
            ptr[i] -= hyp_cut
        ptr = <int64_t*>self.run_start.data
        for i in range(keep_runs):
            ptr[i] -= cut
        self.n_hyp -= cut
        self.n_taken += cut
        return out


cdef object _copied(GrowBuf* b, Py_ssize_t start, Py_ssize_t stop, dtype):
    """Items ``start .. stop-1`` of ``b`` (items of ``dtype``) as a new array."""
    a = np.empty(stop - start, dtype=dtype)
    cdef Py_ssize_t size = a.itemsize
    if stop > start:
        memcpy(cnp.PyArray_DATA(a), b.data + start * size, (stop - start) * size)
    return a


cdef void _drop_front(GrowBuf* b, Py_ssize_t nbytes) noexcept:
    if nbytes == 0:
        return
    memmove(b.data, b.data + nbytes, b.size - nbytes)
    b.size -= nbytes


def bleu_stats(const int64_t[::1] hyp_indptr, const uint8_t[::1] hyp_bytes, const int64_t[::1] run_start,
               const int64_t[::1] run_sid, const int32_t[::1] word_class, const int64_t[::1] ref_sent_ptr,
               const int64_t[::1] ref_tok_ptr, const int32_t[::1] ref_tokens, int reflen_mode,
               int32_t[:, ::1] out, int n_threads=1):
    """BLEU statistics of LEB128-coded hypotheses, runs of sentences in OpenMP threads.

    hyp_indptr int64 [n + 1] and hyp_bytes uint8: hypothesis h's word ids (as the
    scanner codes them); run_start int64 [R + 1] (0 .. n, non-decreasing) and run_sid
    int64 [R]: hypotheses run_start[r]..run_start[r+1]-1 are scored against the
    references of sentence run_sid[r] (< the number of reference sentences);
    word_class int32 [n_words] maps word ids to classes (lowercasing) or is empty;
    references as CSR (sentence → references → class ids); reflen_mode as row[8] wants
    it; out int32 [n, 9]. Returns 0, or -1 when memory runs out.
    """
    cdef Py_ssize_t n = hyp_indptr.shape[0] - 1, R = run_sid.shape[0], r, h, max_len = 0
    if out.shape[0] != n or out.shape[1] != 9:
        raise ValueError("out must be [n, 9]")
    check_runs(run_start, run_sid, n, ref_sent_ptr.shape[0] - 1)
    for h in range(n):
        if hyp_indptr[h + 1] - hyp_indptr[h] > max_len:
            max_len = hyp_indptr[h + 1] - hyp_indptr[h]  # a token takes at least one byte
    cdef int T = n_threads if n_threads > 1 else 1
    # each thread's table 128 bytes from the next: its stamps change at every hypothesis,
    # and tables sharing a cache line would make the threads fight over it
    cdef Py_ssize_t stride = (128 + sizeof(NgramTable) - 1) // sizeof(NgramTable) + 1
    cdef NgramTable* tables = <NgramTable*>malloc(T * stride * sizeof(NgramTable))
    cdef int32_t* toks_all = <int32_t*>malloc(T * (max_len + 1) * sizeof(int32_t))
    cdef char* failed = <char*>calloc(T, 1)   # per thread: a plain flag would be lastprivate
    if tables == NULL or toks_all == NULL or failed == NULL:
        free(tables)
        free(toks_all)
        free(failed)
        return -1
    cdef Py_ssize_t t
    for t in range(T):
        ngram_table_init(&tables[t * stride])
    cdef const int64_t* tok_ptr = &ref_tok_ptr[0]
    cdef const int32_t* ref_toks = &ref_tokens[0] if ref_tokens.shape[0] else NULL
    cdef const int32_t* cls = &word_class[0] if word_class.shape[0] else NULL
    cdef const uint8_t* data = &hyp_bytes[0] if hyp_bytes.shape[0] else NULL
    cdef int status = 0
    cdef NgramTable* tab
    cdef int32_t* toks
    cdef Py_ssize_t ntok
    cdef int64_t pos, sid
    cdef uint32_t u
    cdef int shift
    with nogil:
        for r in prange(R, num_threads=T, schedule="dynamic", chunksize=4):
            tab = &tables[threadid() * stride]
            toks = toks_all + threadid() * (max_len + 1)
            sid = run_sid[r]
            if ngram_table_build(tab, tok_ptr, ref_sent_ptr[sid], ref_sent_ptr[sid + 1], ref_toks) != 0:
                failed[threadid()] = 1
                continue
            for h in range(run_start[r], run_start[r + 1]):
                ntok = 0
                pos = hyp_indptr[h]
                while pos < hyp_indptr[h + 1]:
                    u = 0
                    shift = 0
                    while data[pos] & 0x80:
                        u = u | ((data[pos] & 0x7F) << shift)
                        shift = shift + 7
                        pos = pos + 1
                    u = u | (data[pos] << shift)
                    pos = pos + 1
                    toks[ntok] = cls[u] if cls != NULL else <int32_t>u
                    ntok = ntok + 1
                ngram_hyp_stats(tab, toks, ntok, reflen_mode, &out[h, 0])
    for t in range(T):
        ngram_table_free(&tables[t * stride])
        if failed[t]:
            status = -1
    free(tables)
    free(toks_all)
    free(failed)
    return status


cdef inline Py_ssize_t next_separator(const char* p, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    """Offset of the first '|||' in p[i:n], or -1 (memchr: a line is mostly words)."""
    cdef const char* q
    while i + 2 < n:
        q = <const char*>memchr(p + i, b'|', n - 2 - i)
        if q == NULL:
            return -1
        i = q - p
        if p[i + 1] == b'|' and p[i + 2] == b'|':
            return i
        i += 1
    return -1


cdef inline bint memchr_(const char* s, char c, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        if s[i] == c:
            return True
    return False


cdef void sort_sparse(int32_t* ids, double* vals, Py_ssize_t n) noexcept nogil:
    # insertion sort: sparse rows are short and usually already in order
    cdef Py_ssize_t i, j
    cdef int32_t k
    cdef double v
    for i in range(1, n):
        k = ids[i]
        v = vals[i]
        j = i - 1
        while j >= 0 and ids[j] > k:
            ids[j + 1] = ids[j]
            vals[j + 1] = vals[j]
            j -= 1
        ids[j + 1] = k
        vals[j + 1] = v


def decode_hypotheses(const uint8_t[::1] data, const int64_t[::1] indptr, Py_ssize_t start,
                      Py_ssize_t stop):
    """Token ids of hypotheses ``start..stop-1``: ``(tok_indptr int64, tokens int32)``."""
    cdef Py_ssize_t h, pos, n = 0, m = stop - start
    cdef uint32_t u
    cdef int shift
    cdef int64_t nbytes = indptr[stop] - indptr[start] if m > 0 else 0
    toks = np.empty(nbytes, dtype=np.int32)
    ptr = np.empty(m + 1, dtype=np.int64)
    cdef int32_t[::1] t = toks
    cdef int64_t[::1] q = ptr
    q[0] = 0
    for h in range(start, stop):
        pos = indptr[h]
        while pos < indptr[h + 1]:
            u = 0
            shift = 0
            while data[pos] & 0x80:
                u |= (data[pos] & 0x7F) << shift
                shift += 7
                pos += 1
            u |= data[pos] << shift
            pos += 1
            t[n] = <int32_t>u
            n += 1
        q[h - start + 1] = n
    return ptr, toks[:n]
