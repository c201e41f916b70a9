# Row operations on the n-best store: linear model scores, 1-best per sentence,
# duplicate detection and CSR row gathering. Inputs are clean contiguous arrays
# (validated in mtplug/corpus.py); nothing here raises inside the loops.

from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcmp, memcpy

from cython.parallel cimport prange, threadid

from _exact cimport EXACT_SAFE_ADDS, EXACT_WIDTH, exact_add, exact_merge, exact_normalize

import numpy as np


cdef inline double row_score(const double[:, ::1] dense, const int64_t[::1] sp_indptr,
                             const int32_t[::1] sp_ids, const double[::1] sp_values,
                             const double[::1] weights, Py_ssize_t h) noexcept nogil:
    """Hypothesis h's model score, summed in one fixed order (dense block, then the sparse
    entries of its row): hyp_scores and hyp_scores_rows give the same bits."""
    cdef Py_ssize_t k
    cdef int64_t j
    cdef double s = 0.0
    for k in range(dense.shape[1]):
        s = s + dense[h, k] * weights[k]
    for j in range(sp_indptr[h], sp_indptr[h + 1]):
        s = s + sp_values[j] * weights[sp_ids[j]]
    return s


def hyp_scores(const double[:, ::1] dense, const int64_t[::1] sp_indptr,
               const int32_t[::1] sp_ids, const double[::1] sp_values,
               const double[::1] weights, double[::1] out, int n_threads=1):
    """out[h] = dense[h] · weights[:n_dense] + Σ sparse[h] · weights[ids].

    Shapes: dense [n_hyp, n_dense], sp_indptr [n_hyp + 1], weights [n_features]
    (n_features > every sparse id), out [n_hyp]. n_threads: OpenMP threads over rows
    (each row is summed on its own, so the result does not depend on it).
    """
    cdef Py_ssize_t n = dense.shape[0], h
    cdef int T = n_threads if n_threads > 1 else 1
    with nogil:
        for h in prange(n, num_threads=T, schedule="static"):
            out[h] = row_score(dense, sp_indptr, sp_ids, sp_values, weights, h)


def hyp_scores_rows(const double[:, ::1] dense, const int64_t[::1] sp_indptr,
                    const int32_t[::1] sp_ids, const double[::1] sp_values,
                    const double[::1] weights, const int64_t[::1] rows, double[::1] out):
    """out[i] = hyp_scores' value of row rows[i] (the same bits), for rows int64 [m], each
    in 0 .. n_hyp - 1 (checked by the caller); out float64 [m]."""
    cdef Py_ssize_t i
    with nogil:
        for i in range(rows.shape[0]):
            out[i] = row_score(dense, sp_indptr, sp_ids, sp_values, weights, rows[i])


#: the most memory (bytes) transpose_exact spends on per-thread copies of the sparse
#: features' accumulators; beyond it the threads split those features instead
TRANSPOSE_COPY_BYTES = 64 << 20


def transpose_exact(const double[:, ::1] dense, const int64_t[::1] sp_indptr, const int32_t[::1] sp_ids,
                    const double[::1] sp_values, const int64_t[::1] sent_offsets, const int64_t[::1] ref_rows,
                    const double[::1] coef, int64_t[:, ::1] acc, int n_threads=1,
                    int64_t copy_bytes=TRANSPOSE_COPY_BYTES):
    """acc += X^T coef, exactly, with the dense block taken relative to one row per sentence.

    For sentence s with reference row r_s: sum_h coef_h (dense_h - dense_{r_s}) (in row
    order, rows with coef 0 and r_s itself skipped) is added to the dense rows of acc, and
    every coef_h * sparse value to its feature's row. This is X^T coef whenever coef sums
    to 0 within each sentence (gradients of pairwise losses and of expectations), with
    fewer rounding errors. Terms are added exactly (mtplug.exact_sum), so partitions of
    the sentences accumulated anywhere merge to the same bits.

    Shapes: dense float64 [n, n_dense]; sp_indptr int64 [n + 1], sp_ids int32 [nnz]
    (< n_features), sp_values float64 [nnz]; sent_offsets int64 [S + 1] (0 .. n); ref_rows
    int64 [S] (a row of each non-empty sentence); coef float64 [n]; acc int64
    [n_features, WIDTH], normalized (left normalized). n_threads: OpenMP threads over
    sentences, each adding into its own copy of acc (thread 0 into acc itself). When the
    copies would take more than ``copy_bytes`` ((n_threads - 1) x n_features x 544), the
    threads copy the dense rows only and then split the sparse features: thread t adds
    the terms of the blocks of 64 feature ids numbered t mod n_threads, reading every row,
    so memory stays one accumulator per feature. Every way gives the same bits.
    """
    cdef Py_ssize_t n = coef.shape[0], d = dense.shape[1], S = sent_offsets.shape[0] - 1
    cdef Py_ssize_t nf = acc.shape[0]
    if (dense.shape[0] != n or sp_indptr.shape[0] != n + 1 or ref_rows.shape[0] != S or sent_offsets[S] != n
            or acc.shape[1] != EXACT_WIDTH or nf < d or sp_indptr[n] > sp_ids.shape[0]
            or sp_ids.shape[0] != sp_values.shape[0]):
        raise ValueError("dense, sp_indptr, sent_offsets, ref_rows, coef and acc disagree in shape")
    cdef int T = n_threads if n_threads > 1 else 1
    cdef int T_rows = T if T <= S else (S if S > 0 else 1)
    cdef bint split = T > 1 and sp_indptr[n] > 0 and (T - 1) * nf * EXACT_WIDTH * 8 > copy_bytes
    cdef Py_ssize_t n_copied = d if split else nf
    # thread t > 0 adds into its own zeroed rows; thread 0 into acc itself
    cdef int64_t[:, :, ::1] extra = np.zeros((T_rows - 1, n_copied if T_rows > 1 else 0, EXACT_WIDTH),
                                             dtype=np.int64)
    # per-thread dense sums at local[tid, 8:8 + d]: 64 bytes of gap on either side keep
    # the threads off each other's cache lines whatever the array's alignment
    cdef double[:, ::1] local = np.zeros((T_rows, d + 16), dtype=np.float64)
    cdef int64_t[::1] adds = np.zeros(T_rows * 8, dtype=np.int64)    # per thread, padded apart
    cdef int8_t[::1] owner = (np.arange((nf >> 6) + 1) % T).astype(np.int8)   # thread of each 64 ids
    cdef Py_ssize_t s, k, f
    cdef int64_t lo, h, e, r, count
    cdef int tid, t
    cdef int32_t fid
    cdef double c
    cdef int64_t* rows
    with nogil:
        if n_copied > 0:     # else no row to add to here (and no row to point at)
            for s in prange(S, num_threads=T_rows, schedule="dynamic", chunksize=16):
                tid = threadid()
                rows = &acc[0, 0] if tid == 0 else &extra[tid - 1, 0, 0]
                lo = sent_offsets[s]
                if sent_offsets[s + 1] == lo:
                    continue
                r = ref_rows[s]
                for k in range(d):
                    local[tid, 8 + k] = 0.0
                for h in range(lo, sent_offsets[s + 1]):
                    c = coef[h]
                    if c == 0.0:
                        continue
                    if h != r:
                        for k in range(d):
                            local[tid, 8 + k] = local[tid, 8 + k] + c * (dense[h, k] - dense[r, k])
                    if not split:
                        for e in range(sp_indptr[h], sp_indptr[h + 1]):
                            exact_add(rows + <Py_ssize_t>sp_ids[e] * EXACT_WIDTH, c * sp_values[e])
                        adds[tid * 8] = adds[tid * 8] + sp_indptr[h + 1] - sp_indptr[h]
                for k in range(d):
                    exact_add(rows + k * EXACT_WIDTH, local[tid, 8 + k])
                adds[tid * 8] = adds[tid * 8] + d
                if adds[tid * 8] >= EXACT_SAFE_ADDS:
                    for f in range(n_copied):
                        exact_normalize(rows + f * EXACT_WIDTH)
                    adds[tid * 8] = 0
        for f in range(n_copied):
            exact_normalize(&acc[f, 0])
        for tid in range(T_rows - 1):
            for f in range(n_copied):
                exact_normalize(&extra[tid, f, 0])
                exact_merge(&acc[f, 0], &extra[tid, f, 0])
        if split:
            for t in prange(T, num_threads=T, schedule="static", chunksize=1):
                count = 0
                for h in range(n):
                    c = coef[h]
                    if c == 0.0:
                        continue
                    for e in range(sp_indptr[h], sp_indptr[h + 1]):
                        fid = sp_ids[e]
                        if owner[fid >> 6] != t:
                            continue
                        exact_add(&acc[fid, 0], c * sp_values[e])
                        count = count + 1
                        if count >= EXACT_SAFE_ADDS:
                            for f in range(nf):
                                if owner[f >> 6] == t:
                                    exact_normalize(&acc[f, 0])
                            count = 0
                for f in range(nf):
                    if owner[f >> 6] == t:
                        exact_normalize(&acc[f, 0])


def argmax_per_sentence(const double[::1] scores, const int64_t[::1] sent_offsets,
                        int64_t[::1] out):
    """out[s] = index of the highest score in rows sent_offsets[s]:sent_offsets[s+1].

    Ties go to the first (lowest) row. An empty sentence gets -1.
    """
    cdef Py_ssize_t S = sent_offsets.shape[0] - 1, s
    cdef int64_t h, best
    cdef double v
    with nogil:
        for s in range(S):
            best = -1
            for h in range(sent_offsets[s], sent_offsets[s + 1]):
                if best < 0 or scores[h] > v:
                    best = h
                    v = scores[h]
            out[s] = best


cdef inline uint64_t mix_bytes(uint64_t h, const uint8_t* p, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        h ^= p[i]
        h *= 1099511628211ULL
    return h


cdef struct _RowTable:
    # an open-addressing table of row numbers (-1: empty) and their hashes, reused across groups
    int64_t* rows
    uint64_t* hashes
    Py_ssize_t size
    Py_ssize_t cap


cdef bint _table_reset(_RowTable* t, Py_ssize_t n) noexcept nogil:
    """Empty ``t`` with room for ``n`` rows (a power of two >= 2n, at least 16 slots), growing
    it when needed; False when out of memory."""
    cdef Py_ssize_t size = 16, slot
    while size < 2 * n:
        size *= 2
    if size > t.cap:
        free(t.rows)
        free(t.hashes)
        t.rows = <int64_t*>malloc(size * sizeof(int64_t))
        t.hashes = <uint64_t*>malloc(size * sizeof(uint64_t))
        t.cap = size
        if t.rows == NULL or t.hashes == NULL:
            return False
    t.size = size
    for slot in range(size):
        t.rows[slot] = -1
    return True


def duplicate_mask(const int64_t[::1] order, const int64_t[::1] group_offsets,
                   const uint8_t[:, ::1] dense_bytes, const int64_t[::1] sp_indptr,
                   const int32_t[::1] sp_ids, const double[::1] sp_values,
                   const uint8_t[:, ::1] stats_bytes, const int64_t[::1] hyp_indptr,
                   const uint8_t[::1] hyp_bytes, uint8_t[::1] keep):
    """keep[i] = 1 unless row order[i] equals an earlier row of the same group.

    Rows are compared on everything that defines them: dense values, sparse entries
    (sorted by id), statistics and hypothesis bytes (pass an empty hyp_indptr when
    the store has no strings). Groups are order[group_offsets[g]:group_offsets[g+1]].
    Returns the number of rows kept.
    """
    cdef Py_ssize_t G = group_offsets.shape[0] - 1, g, i, j, size, slot, kept = 0
    cdef Py_ssize_t db = dense_bytes.shape[1], sb = stats_bytes.shape[1]
    cdef bint has_hyp = hyp_indptr.shape[0] > 0
    cdef int64_t r, q, a0, a1, b0, b1
    cdef uint64_t h
    cdef _RowTable t = _RowTable(rows=NULL, hashes=NULL, size=0, cap=0)
    cdef int64_t* table
    cdef uint64_t* hashes
    cdef bint same, oom = False
    with nogil:
        for g in range(G):
            if not _table_reset(&t, group_offsets[g + 1] - group_offsets[g]):
                oom = True
                break
            table, hashes, size = t.rows, t.hashes, t.size
            for i in range(group_offsets[g], group_offsets[g + 1]):
                r = order[i]
                h = 1469598103934665603ULL
                if db:
                    h = mix_bytes(h, &dense_bytes[r, 0], db)
                if sb:
                    h = mix_bytes(h, &stats_bytes[r, 0], sb)
                a0 = sp_indptr[r]
                a1 = sp_indptr[r + 1]
                if a1 > a0:
                    h = mix_bytes(h, <const uint8_t*>&sp_ids[a0], (a1 - a0) * 4)
                    h = mix_bytes(h, <const uint8_t*>&sp_values[a0], (a1 - a0) * 8)
                if has_hyp:
                    a0 = hyp_indptr[r]
                    a1 = hyp_indptr[r + 1]
                    if a1 > a0:
                        h = mix_bytes(h, &hyp_bytes[a0], a1 - a0)
                    h ^= <uint64_t>(a1 - a0) * 0x9E3779B97F4A7C15ULL
                slot = h & (size - 1)
                same = False
                while table[slot] >= 0:
                    if hashes[slot] == h:
                        q = table[slot]
                        same = True
                        if db and memcmp(&dense_bytes[r, 0], &dense_bytes[q, 0], db) != 0:
                            same = False
                        if same and sb and memcmp(&stats_bytes[r, 0], &stats_bytes[q, 0], sb) != 0:
                            same = False
                        if same:
                            a0 = sp_indptr[r]
                            a1 = sp_indptr[r + 1]
                            b0 = sp_indptr[q]
                            b1 = sp_indptr[q + 1]
                            if a1 - a0 != b1 - b0 or (a1 > a0 and (
                                    memcmp(&sp_ids[a0], &sp_ids[b0], (a1 - a0) * 4) != 0 or
                                    memcmp(&sp_values[a0], &sp_values[b0], (a1 - a0) * 8) != 0)):
                                same = False
                        if same and has_hyp:
                            a0 = hyp_indptr[r]
                            a1 = hyp_indptr[r + 1]
                            b0 = hyp_indptr[q]
                            b1 = hyp_indptr[q + 1]
                            if a1 - a0 != b1 - b0 or (a1 > a0 and
                                    memcmp(&hyp_bytes[a0], &hyp_bytes[b0], a1 - a0) != 0):
                                same = False
                        if same:
                            break
                    slot = (slot + 1) & (size - 1)
                if same:
                    keep[i] = 0
                else:
                    keep[i] = 1
                    kept += 1
                    table[slot] = r
                    hashes[slot] = h
        free(t.rows)
        free(t.hashes)
    if oom:
        raise MemoryError("duplicate_mask: no memory for a sentence's hash table")
    return kept


cdef inline uint64_t _mix_float32(uint64_t h, float v) noexcept nogil:
    return mix_bytes(h, <const uint8_t*>&v, 4)


cdef bint _moses_equal(const double[:, ::1] dense, const int64_t[::1] sp_indptr, const int32_t[::1] sp_ids,
                       const double[::1] sp_values, const uint8_t[:, ::1] stats_bytes, int64_t r,
                       int64_t q) noexcept nogil:
    """Moses's FeatureStats/ScoreStats operator==: float (32-bit) features, equal statistics."""
    cdef Py_ssize_t d = dense.shape[1], k, sb = stats_bytes.shape[1]
    cdef int64_t a0 = sp_indptr[r], a1 = sp_indptr[r + 1], b0 = sp_indptr[q], b1 = sp_indptr[q + 1], j
    for k in range(d):
        if <float>dense[r, k] != <float>dense[q, k]:
            return False
    if a1 - a0 != b1 - b0:
        return False
    for j in range(a1 - a0):
        if sp_ids[a0 + j] != sp_ids[b0 + j] or <float>sp_values[a0 + j] != <float>sp_values[b0 + j]:
            return False
    return sb == 0 or memcmp(&stats_bytes[r, 0], &stats_bytes[q, 0], sb) == 0


def moses_duplicates(const int64_t[::1] order, const int64_t[::1] group_offsets, const double[:, ::1] dense,
                     const int64_t[::1] sp_indptr, const int32_t[::1] sp_ids, const double[::1] sp_values,
                     const uint8_t[:, ::1] stats_bytes, int64_t[::1] rows_out, int64_t[::1] counts_out):
    """Moses's ``Data::removeDuplicates`` (mert/Data.cpp), order included, for the byte-identical
    features.dat/scores.dat of ``extractor``: within each group (a sentence's rows in load
    order, ``order[group_offsets[g]:group_offsets[g+1]]``), a row equal to a kept one (features
    compared as 32-bit floats, statistics exactly; the hypothesis string plays no part) is
    swapped with the group's last unexamined row and dropped, and the row that took its place
    is examined next. The kept rows, in their final order, go to ``rows_out`` group after group
    (``counts_out[g]`` of them). Returns the number kept.
    """
    cdef Py_ssize_t G = group_offsets.shape[0] - 1, g, m, k, end, slot, size, d = dense.shape[1]
    cdef Py_ssize_t sb = stats_bytes.shape[1]
    cdef int64_t r, out_at = 0, j, c
    cdef uint64_t h
    cdef _RowTable t = _RowTable(rows=NULL, hashes=NULL, size=0, cap=0)
    cdef int64_t* table
    cdef uint64_t* hashes
    cdef bint dup, oom = False
    with nogil:
        for g in range(G):
            m = group_offsets[g + 1] - group_offsets[g]
            if not _table_reset(&t, m):
                oom = True
                break
            table, hashes, size = t.rows, t.hashes, t.size
            # the group's rows in rows_out: the swaps happen in place there
            for k in range(m):
                rows_out[out_at + k] = order[group_offsets[g] + k]
            k = 0
            end = m - 1
            while k <= end:
                r = rows_out[out_at + k]
                h = 1469598103934665603ULL
                for c in range(d):
                    h = _mix_float32(h, <float>dense[r, c])
                if sb:
                    h = mix_bytes(h, &stats_bytes[r, 0], sb)
                for j in range(sp_indptr[r], sp_indptr[r + 1]):
                    h = mix_bytes(h, <const uint8_t*>&sp_ids[j], 4)
                    h = _mix_float32(h, <float>sp_values[j])
                slot = h & (size - 1)
                dup = False
                while table[slot] >= 0:
                    if hashes[slot] == h and _moses_equal(dense, sp_indptr, sp_ids, sp_values, stats_bytes, r,
                                                          table[slot]):
                        dup = True
                        break
                    slot = (slot + 1) & (size - 1)
                if dup:
                    rows_out[out_at + k] = rows_out[out_at + end]
                    rows_out[out_at + end] = r
                    end -= 1
                else:
                    table[slot] = r
                    hashes[slot] = h
                    k += 1
            counts_out[g] = end + 1
            out_at += end + 1
        free(t.rows)
        free(t.hashes)
    if oom:
        raise MemoryError("moses_duplicates: no memory for a sentence's hash table")
    return out_at


def gather_csr(const int64_t[::1] indptr, const uint8_t[::1] data, Py_ssize_t itemsize,
               const int64_t[::1] rows):
    """Rows ``rows`` of a CSR array whose values are ``itemsize``-byte items (viewed as bytes).

    Returns ``(new_indptr int64 [len(rows) + 1], new_data uint8)``.
    """
    cdef Py_ssize_t m = rows.shape[0], i
    cdef int64_t total = 0, r, n
    new_indptr = np.empty(m + 1, dtype=np.int64)
    cdef int64_t[::1] ip = new_indptr
    ip[0] = 0
    for i in range(m):
        r = rows[i]
        total += indptr[r + 1] - indptr[r]
        ip[i + 1] = total
    new_data = np.empty(total * itemsize, dtype=np.uint8)
    cdef uint8_t[::1] out = new_data
    with nogil:
        for i in range(m):
            r = rows[i]
            n = (indptr[r + 1] - indptr[r]) * itemsize
            if n:
                memcpy(&out[ip[i] * itemsize], &data[indptr[r] * itemsize], n)
    return new_indptr, new_data


def sort_csr_rows(const int64_t[::1] indptr, int32_t[::1] ids, double[::1] values):
    """Sort every CSR row by feature id in place (after ids were remapped)."""
    cdef Py_ssize_t n = indptr.shape[0] - 1, r, i, j
    cdef int32_t k
    cdef double v
    with nogil:
        for r in range(n):
            for i in range(indptr[r] + 1, indptr[r + 1]):
                k = ids[i]
                v = values[i]
                j = i - 1
                while j >= indptr[r] and ids[j] > k:
                    ids[j + 1] = ids[j]
                    values[j + 1] = values[j]
                    j -= 1
                ids[j + 1] = k
                values[j + 1] = v
