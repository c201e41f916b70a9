# Row operations on the n-best store: linear model scores, 1-best per sentence,
# duplicate detection and CSR row gathering. Inputs are clean contiguous arrays
# (validated in mtplug/corpus.py); nothing here raises inside the loops.

from libc.math cimport NAN
from libc.stdint cimport INT32_MAX, int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcmp, memcpy, memset

from cython.parallel cimport prange, threadid

from _exact cimport (EXACT_CHUNKS, EXACT_SAFE_ADDS, EXACT_WIDTH, exact_add_low, exact_merge, exact_normalize,
                    exact_round, exact_round_span)

import numpy as np

cdef extern from *:
    void __builtin_prefetch(const void* p) noexcept nogil

cdef enum:
    # entries (pairs) ahead whose features (sums) a scan (a feature's gather) fetches early
    _PREFETCH = 32


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


# X^T c where c sums to 0 within each sentence (the gradients of expectations and of
# pairwise losses, and their Hessian products). The old way added every term
# c_h x_hj to a 544-byte exact accumulator of feature j, hit at random: 1.6 M such adds
# (and 7 MB of accumulators to clear, merge and round) per gradient on a pool of 100
# sentences x 100 hypotheses x 13,590 features. Here the terms of one (sentence, feature)
# pair are summed in double first, in row order, within the sentence: a sentence is
# never split between threads or partitions, so that sum has the same bits everywhere,
# and only the sums of the pairs (29,000 on that pool) are added exactly across sentences.
# A feature with one value in every row of a sentence adds value x sum_h c_h = 0 there
# (exactly, in exact arithmetic): such pairs (39 % of the entries on that pool) are left
# out, so features that cannot move any sentence's choice get an exact 0.


cdef struct _Seen:
    # what a sentence's scan knows of one feature, in one place: the first touch of a
    # feature in a sentence is then one cache miss, not one per array (10^6 features)
    int64_t last_row        # the last row it was seen in; then the number of its pair
    double first            # its value in the first row
    int32_t rows            # rows of the sentence it is in (0: not seen yet)
    int32_t varies          # 1 when it is no constant of the sentence


def sentence_pairs(const int64_t[::1] sp_indptr, const int32_t[::1] sp_ids, const double[::1] sp_values,
                   const int64_t[::1] sent_offsets, Py_ssize_t n_features):
    """The (sentence, feature) pairs of the sparse block where the feature varies within
    the sentence, numbered sentence by sentence (a sentence's pairs are neighbours, so
    threads over sentences write apart), and listed feature by feature.

    sp_indptr int64 [n + 1] (from 0), sp_ids int32 [nnz], sp_values float64 [nnz]: CSR
    rows; sent_offsets int64 [S + 1] (0 .. n). Returns ``(bad, row_ptr, row_pair,
    row_value, feature_ptr, feature_pairs)``: bad -1, or the first entry whose id is
    outside [0, n_features) (the arrays are then None); the entries of varying pairs by
    row, in row order (row h's are row_pair/row_value[row_ptr[h]:row_ptr[h + 1]]: row_ptr
    int64 [n + 1], row_pair int32 [V], the entry's pair, row_value float64 [V], its
    value), leaving out the entries of features that take one value in every row of
    their sentence (present in each row once, values equal under ==; NaN never equals);
    feature_ptr int64 [n_features + 1] and feature_pairs int32 [P]: feature j's pairs,
    by sentence, are feature_pairs[feature_ptr[j]:feature_ptr[j + 1]].
    """
    cdef Py_ssize_t n = sp_indptr.shape[0] - 1, S = sent_offsets.shape[0] - 1, nf = n_features
    if n < 0 or nf < 0 or S < 0 or sent_offsets[S] != n or (n > 0 and sp_indptr[0] != 0) \
            or sp_ids.shape[0] < sp_indptr[n] or sp_values.shape[0] < sp_indptr[n]:
        raise ValueError("sp_indptr, sp_ids, sp_values and sent_offsets disagree in shape")
    cdef int64_t nnz = sp_indptr[n]
    if nnz > INT32_MAX:
        raise OverflowError("more than 2^31 - 1 sparse entries")
    # one pass, each sentence scanned and then its entries written while its features'
    # scratch entries are still in the cache (two passes over 10^8 entries, counting
    # first, spent most of APRO's set-up at 10^7 hypotheses); the outputs take the
    # room of every entry and are cut to size after
    cdef int64_t[::1] row_ptr = np.zeros(n + 1, dtype=np.int64)
    cdef int64_t[::1] feature_ptr = np.zeros(nf + 1, dtype=np.int64)
    cdef int32_t[::1] row_pair = np.empty(nnz, dtype=np.int32)
    cdef double[::1] row_value = np.empty(nnz, dtype=np.float64)
    cdef int32_t[::1] pair_feature = np.empty(nnz, dtype=np.int32)
    cdef int32_t[::1] feature_pairs
    cdef _Seen* seen = <_Seen*>calloc(nf + 1, sizeof(_Seen))
    cdef int32_t* touched = <int32_t*>malloc((nf + 1) * sizeof(int32_t))
    cdef int64_t* fill = <int64_t*>malloc((nf + 1) * sizeof(int64_t))
    if not (seen and touched and fill):
        free(seen); free(touched); free(fill)
        raise MemoryError()
    cdef Py_ssize_t s, t, j, nt
    cdef int64_t e, h, bad = -1, slot = 0, kept = 0
    try:
        with nogil:
            for s in range(S):
                nt = _scan_sentence(sp_indptr, sp_ids, sp_values, sent_offsets[s], sent_offsets[s + 1], nf,
                                    seen, touched, &bad)
                if bad >= 0:
                    break
                for t in range(nt):
                    j = touched[t]
                    seen[j].rows = 0
                    if seen[j].varies:
                        seen[j].last_row = slot           # the pair's number, while in this sentence
                        pair_feature[slot] = <int32_t>j
                        feature_ptr[j + 1] += 1
                        slot += 1
                for h in range(sent_offsets[s], sent_offsets[s + 1]):
                    for e in range(sp_indptr[h], sp_indptr[h + 1]):
                        j = sp_ids[e]
                        if seen[j].varies:
                            row_pair[kept] = <int32_t>seen[j].last_row
                            row_value[kept] = sp_values[e]
                            kept += 1
                    row_ptr[h + 1] = kept
        if bad >= 0:
            return bad, None, None, None, None, None
        feature_pairs = np.empty(slot, dtype=np.int32)
        with nogil:     # each feature's pairs, in the order of their numbers (by sentence)
            for j in range(nf):
                feature_ptr[j + 1] += feature_ptr[j]
                fill[j] = feature_ptr[j]
            for e in range(slot):
                j = pair_feature[e]
                feature_pairs[fill[j]] = <int32_t>e
                fill[j] += 1
    finally:
        free(seen); free(touched); free(fill)
    if kept < nnz:          # cut to size (a copy, so the room of the left-out entries goes)
        row_pair, row_value = np.array(row_pair[:kept]), np.array(row_value[:kept])
    return (-1, np.asarray(row_ptr), np.asarray(row_pair), np.asarray(row_value), np.asarray(feature_ptr),
            np.asarray(feature_pairs))


cdef Py_ssize_t _scan_sentence(const int64_t[::1] sp_indptr, const int32_t[::1] sp_ids,
                               const double[::1] sp_values, int64_t lo, int64_t hi, Py_ssize_t nf, _Seen* seen,
                               int32_t* touched, int64_t* bad) noexcept nogil:
    """The distinct features of rows lo .. hi-1 into touched (returns how many) and
    seen[j].varies for each: 0 where j is in every row once with one value. seen[j].rows
    must be 0 for every feature on entry (the caller clears the touched ones). bad: the
    first entry with an id outside [0, nf), then the scan stops."""
    cdef Py_ssize_t nt = 0
    cdef int64_t h, e
    cdef int32_t j
    cdef double v
    cdef _Seen* f
    cdef int64_t end = sp_indptr[hi], ahead
    cdef int32_t k
    for h in range(lo, hi):
        for e in range(sp_indptr[h], sp_indptr[h + 1]):
            # the features of the entries to come are far apart in seen: fetch them early
            ahead = e + _PREFETCH
            if ahead < end:
                k = sp_ids[ahead]
                if 0 <= k < nf:
                    __builtin_prefetch(&seen[k])
            j = sp_ids[e]
            if j < 0 or j >= nf:
                bad[0] = e
                return nt
            v = sp_values[e]
            f = &seen[j]
            if f.rows == 0:
                touched[nt] = j
                nt += 1
                f.rows = 1
                f.last_row = h
                f.first = v
                f.varies = 0
            elif f.last_row == h:
                f.varies = 1                  # twice in one row: not worth telling apart
            else:
                f.rows += 1
                f.last_row = h
                if not (v == f.first):
                    f.varies = 1
    for e in range(nt):
        f = &seen[touched[e]]
        if f.rows != hi - lo or f.first != f.first:
            f.varies = 1
    return nt


def transpose_pairs(const double[:, ::1] dense, const int64_t[::1] row_ptr, const int32_t[::1] row_pair,
                    const double[::1] row_value, const int64_t[::1] feature_ptr,
                    const int32_t[::1] feature_pairs, const int64_t[::1] sent_offsets,
                    const int64_t[::1] ref_rows, const double[::1] coef, double[::1] out, int64_t[:, ::1] acc,
                    int n_threads=1):
    """X^T coef for coef summing to 0 within each sentence, exactly across sentences.

    Sentence s (reference row r_s) gives, in row order in double, for each dense column k
    sum_h coef_h (dense_hk - dense_{r_s k}) and for each of its pairs (j, s) (from
    :func:`sentence_pairs`) sum_h coef_h x_hj; rows with coef 0 and r_s's own dense term
    are skipped. Feature j's value is the exact sum of its sentences' values. Equal to
    X^T coef in exact arithmetic when coef sums to 0 in each sentence.

    Shapes: dense float64 [n, n_dense]; row_ptr int64 [n + 1], row_pair int32 [V],
    row_value float64 [V], feature_ptr int64 [n_features + 1] (n_features >= n_dense) and
    feature_pairs int32 [P], as :func:`sentence_pairs` gives them;
    sent_offsets int64 [S + 1] (0 .. n); ref_rows int64 [S] (a row of each non-empty
    sentence); coef float64 [n]. Exactly one output has n_features rows: out float64
    [n_features] gets each sum correctly rounded (NaN if a term was not finite); or acc
    int64 [n_features, WIDTH], normalized, gets each sum added exactly (left normalized;
    partitions of the sentences merge into the same bits). n_threads: OpenMP threads over
    sentences, then over features; the result does not depend on it.
    """
    cdef Py_ssize_t n = coef.shape[0], d = dense.shape[1], S = sent_offsets.shape[0] - 1
    cdef Py_ssize_t nf = feature_ptr.shape[0] - 1, P = feature_pairs.shape[0]
    cdef bint rounded = out.shape[0] == nf
    if (dense.shape[0] != n or row_ptr.shape[0] != n + 1 or ref_rows.shape[0] != S or S < 0
            or sent_offsets[S] != n or nf < d or row_pair.shape[0] < row_ptr[n] or feature_ptr[nf] != P
            or row_value.shape[0] < row_ptr[n] or rounded == (acc.shape[0] == nf)
            or (not rounded and acc.shape[1] != EXACT_WIDTH)):
        raise ValueError("dense, the sparse block, the pairs, sent_offsets, ref_rows, coef and the output "
                         "disagree in shape")
    cdef int T = n_threads if n_threads > 1 else 1
    # per-pair and per-(sentence, dense column) sums; a pair belongs to one sentence, so
    # the threads of the first loop never write one slot twice
    cdef double[::1] pair_sum = np.zeros(P, dtype=np.float64)
    cdef double[:, ::1] dense_sum = np.zeros((d, S), dtype=np.float64)
    # a sentence's dense sums build up in its thread's row of local, at local[tid, 8:8 + d]
    # (64 bytes of gap on either side keep threads off each other's cache lines), and go
    # to dense_sum once: neighbouring sentences' slots there share cache lines
    cdef double[:, ::1] local = np.zeros((T, d + 16), dtype=np.float64)
    cdef int64_t* locals_ = <int64_t*>calloc(T * EXACT_WIDTH, sizeof(int64_t))
    if locals_ == NULL:
        raise MemoryError()
    cdef double* dsum = &dense_sum[0, 0] if d > 0 and S > 0 else NULL
    cdef double* psum = &pair_sum[0] if P > 0 else NULL
    cdef const int32_t* fpairs = &feature_pairs[0] if P > 0 else NULL
    cdef double* out_ptr = &out[0] if rounded and nf > 0 else NULL
    cdef int64_t* acc_ptr = &acc[0, 0] if not rounded and nf > 0 else NULL
    cdef Py_ssize_t s, k, j
    cdef int64_t lo, h, e, r
    cdef int32_t p
    cdef int tid
    cdef double c
    with nogil:
        for s in prange(S, num_threads=T, schedule="dynamic", chunksize=4):
            lo = sent_offsets[s]
            if sent_offsets[s + 1] == lo:
                continue
            r = ref_rows[s]
            tid = threadid()
            for k in range(d):
                local[tid, 8 + k] = 0.0
            for h in range(lo, sent_offsets[s + 1]):
                c = coef[h]
                if c == 0.0:
                    continue
                if h != r:
                    for k in range(d):
                        local[tid, 8 + k] = local[tid, 8 + k] + c * (dense[h, k] - dense[r, k])
                for e in range(row_ptr[h], row_ptr[h + 1]):
                    p = row_pair[e]
                    pair_sum[p] = pair_sum[p] + c * row_value[e]
            for k in range(d):
                dense_sum[k, s] = local[tid, 8 + k]
        for j in prange(nf, num_threads=T, schedule="dynamic", chunksize=64):
            _sum_feature(dsum + j * S if j < d else NULL, S if j < d else 0, psum,
                         fpairs + feature_ptr[j] if fpairs else NULL, feature_ptr[j + 1] - feature_ptr[j],
                         P - feature_ptr[j], locals_ + threadid() * EXACT_WIDTH, out_ptr + j if out_ptr else NULL,
                         acc_ptr + j * EXACT_WIDTH if acc_ptr else NULL)
    free(locals_)


cdef void _sum_feature(const double* a, Py_ssize_t na, const double* b, const int32_t* idx, Py_ssize_t nb,
                       Py_ssize_t idx_left, int64_t* local, double* out, int64_t* acc) noexcept nogil:
    """The exact sum of a[:na] and b[idx[:nb]] (pointers may be NULL when their count is
    0) into *out, rounded, or (out NULL) added to the normalized accumulator acc; local:
    EXACT_WIDTH zeros, left zero. idx[:idx_left] may be read ahead: b's entries of the
    pairs to come (the next features') are fetched early, as a feature's pairs lie in
    as many sentences' parts of b, far apart."""
    cdef int lo = EXACT_CHUNKS, hi = 0, i, part
    cdef Py_ssize_t k, m, count = 0
    for part in range(2):
        m = na if part == 0 else nb
        for k in range(m):
            if part == 1 and k + _PREFETCH < idx_left:
                __builtin_prefetch(&b[idx[k + _PREFETCH]])
            i = exact_add_low(local, a[k] if part == 0 else b[idx[k]])
            if i >= 0:
                lo = i if i < lo else lo
                hi = i + 3 if i + 3 > hi else hi
            count += 1
            if count == EXACT_SAFE_ADDS:
                exact_normalize(local)       # carries may now reach every chunk
                lo = 0
                hi = EXACT_CHUNKS
                count = 0
    if out != NULL:
        if hi == 0:
            out[0] = NAN if local[EXACT_CHUNKS] else 0.0
        elif hi + 2 < EXACT_CHUNKS:
            out[0] = exact_round_span(local, lo, hi)
        else:
            out[0] = exact_round(local)
    elif hi > 0 or local[EXACT_CHUNKS]:
        exact_normalize(local)
        exact_merge(acc, local)
        lo = 0
        hi = EXACT_CHUNKS
    if hi > lo:
        memset(local + lo, 0, (hi - lo) * sizeof(int64_t))
    local[EXACT_CHUNKS] = 0


def sparse_columns(const int64_t[::1] sp_indptr, const int32_t[::1] sp_ids, const double[::1] sp_values,
                   int64_t[::1] col_ptr, int64_t[::1] col_rows, double[::1] col_values):
    """The sparse block by columns, by a counting sort (O(nnz); a comparison sort of 1.6 M
    ids took a sixth of a sparse MERT run): feature j's entries are col_rows/col_values
    [col_ptr[j]:col_ptr[j + 1]], rows ascending (a row's repeated id in row order).

    sp_indptr int64 [n + 1] (from 0), sp_ids int32 [nnz] (0 <= id < n_features, checked by
    the caller), sp_values float64 [nnz]. Outputs, overwritten: col_ptr int64
    [n_features + 1], col_rows int64 [nnz], col_values float64 [nnz].
    """
    cdef Py_ssize_t n = sp_indptr.shape[0] - 1, nf = col_ptr.shape[0] - 1, j
    cdef int64_t nnz = sp_indptr[n] if n >= 0 else 0, h, e, at
    if n < 0 or nf < 0 or sp_ids.shape[0] < nnz or sp_values.shape[0] < nnz or col_rows.shape[0] != nnz \
            or col_values.shape[0] != nnz:
        raise ValueError("sp_indptr, sp_ids, sp_values and the columns disagree in shape")
    cdef int64_t* fill = <int64_t*>malloc((nf + 1) * sizeof(int64_t))
    if fill == NULL:
        raise MemoryError()
    with nogil:
        for j in range(nf + 1):
            col_ptr[j] = 0
        for e in range(nnz):
            col_ptr[sp_ids[e] + 1] += 1
        for j in range(nf):
            col_ptr[j + 1] += col_ptr[j]
            fill[j] = col_ptr[j]
        for h in range(n):
            for e in range(sp_indptr[h], sp_indptr[h + 1]):
                at = fill[sp_ids[e]]
                fill[sp_ids[e]] = at + 1
                col_rows[at] = h
                col_values[at] = sp_values[e]
    free(fill)


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
