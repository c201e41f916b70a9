# Moses's kbmira/pro "de-duplication" of n-best rows, replayed (mosesdecoder commit 34452895,
# mert/HypPackEnumerator.cpp StreamingHypPackEnumerator::prime).
#
# Moses puts each sentence's rows (file 0's block, then file 1's, ...) into a
# boost::unordered_set<FeatureDataItem> and keeps a row only when `find` misses. Its
# operator== (mert/FeatureDataIterator.cpp) compares the *first* item with itself, so it is
# always true and `find` hits whenever the row's bucket holds any row: a row is kept iff its
# bucket is still empty. Boost 1.74 (the Boost Moses is built with here) gives a
# default-constructed set 16 buckets (11 rounded up to a power of two by mix64_policy) and
# rehashes only beyond 16 rows, which a set that admits one row per bucket never reaches:
# so at most 16 rows per sentence survive, those whose bucket
#     mix64(hash_value(row)) & 15
# is not taken by an earlier kept row of the sentence. hash_value(row) is
#     seed = 0; hash_combine(seed, boost::hash(vector<float> dense)); hash_combine(seed, sparse)
# with boost's 64-bit hash_combine (a MurmurHash2-64 step), boost::hash<float> = the float's
# bits (0 for +-0), boost::hash_range over the dense values, and SparseVector's hash
# (mert/FeatureStats.cpp) = MurmurHash64A over each (feature id: 8 bytes, value: 4-byte
# float) of the row, ids ascending. The slow reference: tests/integrations/moses_dedup_reference.py.
#
# Inputs: dense float32 [n, D]; CSR indptr int64 [n + 1], ids int64 (Moses's SparseVector
# ids, ascending per row), vals float32; block_offsets int64 [S + 1] (rows of block s:
# block_offsets[s] .. block_offsets[s + 1] - 1, in Moses's reading order).

from libc.stdint cimport int64_t, uint32_t, uint64_t
from libc.string cimport memcpy

import numpy as np

cdef uint64_t M = 0xc6a4a7935bd1e995ULL


cdef inline uint64_t _combine(uint64_t h, uint64_t k) noexcept nogil:
    """boost::hash_detail::hash_combine_impl (64-bit)."""
    k *= M
    k ^= k >> 47
    k *= M
    h ^= k
    h *= M
    return h + 0xe6546b64ULL


cdef inline uint64_t _murmur64a(const unsigned char* data, int length, uint64_t seed) noexcept nogil:
    """util::MurmurHash64A of ``length`` (4 or 8) bytes (little-endian, as on x86-64)."""
    cdef uint64_t h = seed ^ (<uint64_t>length * M)
    cdef uint64_t k = 0
    cdef int i
    if length >= 8:
        memcpy(&k, data, 8)
        k *= M
        k ^= k >> 47
        k *= M
        h ^= k
        h *= M
        data += 8
        length -= 8
    if length > 0:
        for i in range(length - 1, -1, -1):
            h ^= (<uint64_t>data[i]) << (8 * i)
        h *= M
    h ^= h >> 47
    h *= M
    h ^= h >> 47
    return h


cdef inline uint64_t _mix64(uint64_t key) noexcept nogil:
    """boost::unordered::detail::mix64_policy::apply_hash."""
    key = (~key) + (key << 21)
    key = key ^ (key >> 24)
    key = (key + (key << 3)) + (key << 8)
    key = key ^ (key >> 14)
    key = (key + (key << 2)) + (key << 4)
    key = key ^ (key >> 28)
    key = key + (key << 31)
    return key


cdef inline uint64_t _float_hash(float v) noexcept nogil:
    cdef uint32_t bits
    if v == 0:
        return 0
    memcpy(&bits, &v, 4)
    return bits


def row_buckets(const float[:, ::1] dense, const int64_t[::1] indptr, const int64_t[::1] ids,
                const float[::1] vals):
    """int64 [n]: each row's bucket in Moses's 16-bucket set, ``mix64(hash_value(row)) & 15``."""
    cdef Py_ssize_t n = dense.shape[0], D = dense.shape[1], r, j
    cdef int64_t k, fid
    cdef uint64_t hd, hs, h
    cdef float v
    out = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] o = out
    with nogil:
        for r in range(n):
            hd = 0
            for j in range(D):
                hd = _combine(hd, _float_hash(dense[r, j]))
            hs = 0
            for k in range(indptr[r], indptr[r + 1]):
                fid = ids[k]
                v = vals[k]
                hs = _murmur64a(<const unsigned char*>&fid, 8, hs)
                hs = _murmur64a(<const unsigned char*>&v, 4, hs)
            h = _combine(0, hd)
            h = _combine(h, hs)
            o[r] = <int64_t>(_mix64(h) & 15)
    return out


def moses_kept(const int64_t[::1] buckets, const int64_t[::1] block_offsets):
    """bool [n]: the rows Moses keeps, each block's rows whose bucket no earlier kept row of
    the block took (module comment)."""
    cdef Py_ssize_t S = block_offsets.shape[0] - 1, s
    cdef int64_t r
    cdef unsigned int taken
    keep = np.zeros(buckets.shape[0], dtype=np.bool_)
    cdef unsigned char[::1] kv = keep.view(np.uint8)
    with nogil:
        for s in range(S):
            taken = 0
            for r in range(block_offsets[s], block_offsets[s + 1]):
                if not (taken >> buckets[r]) & 1:
                    taken |= (<unsigned int>1) << buckets[r]
                    kv[r] = 1
    return keep
