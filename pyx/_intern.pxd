# Interning byte strings to consecutive int32 ids (0, 1, ...): exact, hash + compare.
#
#     from _intern cimport InternTable, hash_bytes, intern_init, intern_free, intern_find, intern_add
#
# Strings are kept in one byte arena with int64 offsets (n + 1 entries, offsets[0] = 0),
# so the table's contents are two arrays; an open-addressing table of ids (-1 = empty,
# linear probing, at most half full) finds them. Used by the n-best reader's Vocabulary
# and the features.dat reader's sparse-name table.
# Only `cdef inline` here (no module of this name exists at run time; see _bleu.pxd).

from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy

from _growbuf cimport GrowBuf, growbuf_append, growbuf_free


cdef inline uint64_t hash_bytes(const char* s, Py_ssize_t n) noexcept nogil:
    # FNV-1a: words and feature names are short, so a per-byte hash is cheap and good enough
    cdef uint64_t h = 1469598103934665603ULL
    cdef Py_ssize_t i
    for i in range(n):
        h ^= <uint8_t>s[i]
        h *= 1099511628211ULL
    return h


cdef struct InternTable:
    GrowBuf arena       # string bytes back to back
    GrowBuf offsets     # int64 start of string i; n + 1 entries
    GrowBuf hashes      # uint64 hash of string i
    int32_t* slots      # open addressing: string id or -1
    Py_ssize_t mask     # number of slots - 1 (a power of two - 1)
    Py_ssize_t n        # number of strings


cdef inline void intern_fill(InternTable* t, int32_t* slots, Py_ssize_t size) noexcept nogil:
    """Make ``slots`` (``size`` entries, a power of two) the table's slots, holding its ids."""
    cdef const uint64_t* hs = <const uint64_t*>t.hashes.data
    cdef Py_ssize_t i, slot
    for i in range(size):
        slots[i] = -1
    for i in range(t.n):
        slot = <Py_ssize_t>(hs[i] & <uint64_t>(size - 1))
        while slots[slot] >= 0:
            slot = (slot + 1) & (size - 1)
        slots[slot] = <int32_t>i
    t.slots = slots
    t.mask = size - 1


cdef inline int intern_rehash(InternTable* t, Py_ssize_t size) noexcept nogil:
    """Rebuild the slots with ``size`` (a power of two) entries; 0, or -1 when out of memory
    (the table then keeps its old size, or has no slots if even that cannot be had).

    The old slots are freed before the new ones are allocated, so the two are never held
    at once. This is also the order the n-best reader's peak memory was measured with:
    under glibc, malloc + free instead (or realloc) moved benchmarks/bench_foundation.py's
    read peak RSS from 495 to 513 MB.
    """
    cdef Py_ssize_t old = t.mask + 1
    cdef int32_t* slots
    free(t.slots)
    t.slots = NULL
    slots = <int32_t*>malloc(size * sizeof(int32_t))
    if slots != NULL:
        intern_fill(t, slots, size)
        return 0
    if old > 0:
        slots = <int32_t*>malloc(old * sizeof(int32_t))
        if slots != NULL:
            intern_fill(t, slots, old)
    return -1


cdef inline int intern_init(InternTable* t, Py_ssize_t size) noexcept nogil:
    """Start an empty table (its GrowBufs zeroed) with ``size`` slots (a power of two);
    0, or -1 when out of memory."""
    cdef int64_t zero = 0
    t.n = 0
    t.slots = NULL
    t.mask = -1
    if growbuf_append(&t.offsets, &zero, sizeof(int64_t)) != 0:
        return -1
    return intern_rehash(t, size)


cdef inline void intern_free(InternTable* t) noexcept nogil:
    growbuf_free(&t.arena)
    growbuf_free(&t.offsets)
    growbuf_free(&t.hashes)
    free(t.slots)
    t.slots = NULL


cdef inline bint same_bytes(const char* a, const char* b, Py_ssize_t n) noexcept nogil:
    """Whether a[:n] == b[:n]: compared inline, as a call to memcmp per token cost more
    than the comparing (words are short)."""
    cdef uint64_t x, y
    while n >= 8:
        memcpy(&x, a, 8)
        memcpy(&y, b, 8)
        if x != y:
            return False
        a += 8
        b += 8
        n -= 8
    while n > 0:
        if a[0] != b[0]:
            return False
        a += 1
        b += 1
        n -= 1
    return True


cdef inline int32_t intern_find(const InternTable* t, const char* s, Py_ssize_t n,
                                uint64_t h) noexcept nogil:
    """Id of ``s[:n]`` (``h = hash_bytes(s, n)``), or -1 if it is not in the table."""
    cdef Py_ssize_t slot = <Py_ssize_t>(h & <uint64_t>t.mask)
    cdef int32_t sid
    cdef const int64_t* offs = <const int64_t*>t.offsets.data
    cdef const uint64_t* hs = <const uint64_t*>t.hashes.data
    while True:
        sid = t.slots[slot]
        if sid < 0:
            return -1
        if hs[sid] == h and offs[sid + 1] - offs[sid] == n and same_bytes(t.arena.data + offs[sid], s, n):
            return sid
        slot = (slot + 1) & t.mask


cdef inline int32_t intern_add(InternTable* t, const char* s, Py_ssize_t n,
                               uint64_t h) noexcept nogil:
    """Append ``s[:n]``, known not to be in the table; its id, or -1 when out of memory."""
    cdef int32_t sid = <int32_t>t.n
    cdef int64_t end
    cdef Py_ssize_t slot
    if (t.n + 1) * 2 > t.mask + 1:
        if intern_rehash(t, (t.mask + 1) * 2) != 0:
            return -1
    if growbuf_append(&t.arena, s, n) != 0 or \
            growbuf_append(&t.hashes, &h, sizeof(uint64_t)) != 0:
        return -1
    end = t.arena.size
    if growbuf_append(&t.offsets, &end, sizeof(int64_t)) != 0:
        return -1
    slot = <Py_ssize_t>(h & <uint64_t>t.mask)
    while t.slots[slot] >= 0:
        slot = (slot + 1) & t.mask
    t.slots[slot] = sid
    t.n += 1
    return sid
