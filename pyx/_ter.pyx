# TER with shifts (Snover et al. 2006) as sacrebleu 2.6 computes it (metrics/lib_ter.py,
# a re-implementation of TERCOM), over word ids; sufficient statistics for mtplug.metrics.ter.
#
# Text arrives as word ids: every distinct word of a vocabulary is turned once (in Python)
# into the ids of the tokens sacrebleu would see in it (lowercased or not, split on any
# whitespace), so a sentence's tokens are the concatenation of its words' tokens.
#
# One hypothesis against one reference (ter_pair), the rules sacrebleu follows:
#   * edit distance over hypothesis rows i and reference columns j, restricted to a beam:
#     ratio = |ref| / |hyp|, beam = 25 (ceil(ratio / 2 + 25) when that exceeds 25), row i
#     keeps columns max(0, floor(i ratio) - beam) .. min(|ref|, floor(i ratio) + beam - 1),
#     the last row up to |ref|; row 0 is whole. Cells outside are unreachable. On ties a
#     cell takes the diagonal (match/substitution), then the one above (hypothesis word
#     dropped), then the one to the left (reference word inserted).
#   * the trace read back from the corner aligns every reference position r with a
#     hypothesis position align[r] (the previous hypothesis word for an inserted one) and
#     marks erroneous hypothesis and reference words.
#   * shift candidates, in this order: hypothesis start sh, reference start sr with
#     |sr - sh| <= 50, then the lengths 1..10 of the common run at (sh, sr). A run is
#     skipped when its hypothesis words or its reference words are all correct, or when
#     align[sr] lies inside it. Otherwise the run is tried at the targets
#     0 (for sr + off == -1) or align[sr + off] + 1, off = -1..len-1, a target equal to the
#     one before skipped; every try counts. The best try is the largest
#     (gain, length, -sh, -target); once 1000 tries were counted (over all rounds of this
#     pair) the search stops at the end of that run and the round's shift is dropped.
#   * a shift is applied while its gain is > 0; edits = shifts + final edit distance.
# A candidate's rows above min(sh, target) are those of the current words, so its edit
# distance is computed from there on, in two rolling rows.

from libc.math cimport ceil, floor
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdlib cimport free, malloc
from cython.parallel cimport prange, threadid
from _runs cimport check_runs
from _word_rows cimport gather

import numpy as np

MAX_SHIFT_SIZE = 10
MAX_SHIFT_DIST = 50
BEAM_WIDTH = 25
MAX_SHIFT_CANDIDATES = 1000

cdef enum:
    SHIFT_SIZE = 10
    SHIFT_DIST = 50
    BEAM = 25
    MAX_CANDIDATES = 1000
    INF = 1 << 30          # an unreachable cell; INF + 1 still fits in int32

cdef enum:
    OP_UNDEF = 0
    OP_MATCH = 1
    OP_SUB = 2
    OP_DEL = 3             # hypothesis word not in the reference (cell above)
    OP_INS = 4             # reference word missing from the hypothesis (cell to the left)


cdef struct Work:
    # one thread's buffers, for hypotheses of up to Hm and references of up to Rm tokens
    int32_t* cur           # [Hm] the hypothesis as shifted so far
    int32_t* cand          # [Hm] a candidate shift of it
    int32_t* ref           # [Rm]
    int32_t* lo            # [Hm + 1] beam of row i: columns lo[i] .. hi[i] - 1
    int32_t* hi            # [Hm + 1]
    int32_t* herr          # [Hm + 1] prefix sums of erroneous hypothesis words
    int32_t* rerr          # [Rm + 1] prefix sums of erroneous reference words
    int32_t* align         # [Rm]
    int32_t* row_a         # [Rm + 1] candidate rows
    int32_t* row_b         # [Rm + 1]
    int64_t* off           # [Hm + 2] row i of F/ops starts at off[i] (column lo[i])
    int32_t* F             # [cells] edit distances of the current words, beam only
    uint8_t* ops           # [cells] the step each cell was reached by


cdef inline int beam_width(int nh, int nr) noexcept nogil:
    cdef double ratio = (<double>nr) / nh if nh > 0 else 1.0
    if BEAM < ratio / 2:
        return <int>ceil(ratio / 2 + BEAM)
    return BEAM


cdef inline int64_t band_cells(int nh, int nr) noexcept nogil:
    """At least the cells the beam keeps for nh x nr (rows 0 and nh whole, others <= 2 beam)."""
    cdef int64_t width = 2 * <int64_t>beam_width(nh, nr)
    if width > nr + 1:
        width = nr + 1
    return 2 * (<int64_t>nr + 1) + (<int64_t>nh - 1 if nh > 1 else 0) * width


cdef void set_band(Work* w, int nh, int nr) noexcept nogil:
    cdef double ratio = (<double>nr) / nh if nh > 0 else 1.0
    cdef int bw = beam_width(nh, nr), i
    cdef int64_t pd
    w.lo[0] = 0
    w.hi[0] = nr + 1
    w.off[0] = 0
    w.off[1] = nr + 1
    for i in range(1, nh + 1):
        pd = <int64_t>floor(i * ratio)
        w.lo[i] = <int32_t>(pd - bw if pd - bw > 0 else 0)
        w.hi[i] = <int32_t>(pd + bw if pd + bw < nr + 1 else nr + 1)
        if i == nh:
            w.hi[i] = nr + 1
        w.off[i + 1] = w.off[i] + (w.hi[i] - w.lo[i])


cdef inline void dp_row(const int32_t* prev, int plo, int phi, int32_t* row, uint8_t* ops, int lo, int hi,
                        int32_t word, const int32_t* ref) noexcept nogil:
    """Row i (columns lo..hi-1, stored from row[0]) from row i-1 (columns plo..phi-1) and
    hypothesis word i-1; the steps into ops unless it is NULL."""
    cdef int j
    cdef int32_t best, c, left = INF
    cdef uint8_t op
    for j in range(lo, hi):
        if j == 0:
            best = prev[0] + 1       # lo only grows after row 0: (i-1, 0) is in the beam
            op = OP_DEL
        else:
            best = INF
            op = OP_UNDEF
            if plo <= j - 1 < phi:
                if ref[j - 1] == word:
                    c = prev[j - 1 - plo]
                    if c < best:
                        best = c
                        op = OP_MATCH
                else:
                    c = prev[j - 1 - plo] + 1
                    if c < best:
                        best = c
                        op = OP_SUB
            if plo <= j < phi:
                c = prev[j - plo] + 1
                if c < best:
                    best = c
                    op = OP_DEL
            if j > lo:
                c = left + 1
                if c < best:
                    best = c
                    op = OP_INS
        row[j - lo] = best
        left = best
        if ops != NULL:
            ops[j - lo] = op


cdef int32_t full_dp(Work* w, int nh, int nr) noexcept nogil:
    """Edit distance of w.cur against w.ref, every beam cell and step kept."""
    cdef int i, j
    for j in range(nr + 1):
        w.F[j] = j
        w.ops[j] = OP_INS
    for i in range(1, nh + 1):
        dp_row(w.F + w.off[i - 1], w.lo[i - 1], w.hi[i - 1], w.F + w.off[i], w.ops + w.off[i], w.lo[i], w.hi[i],
               w.cur[i - 1], w.ref)
    return w.F[w.off[nh] + nr - w.lo[nh]]


cdef int trace(Work* w, int nh, int nr) noexcept nogil:
    """align, herr and rerr (prefix sums) from the steps of full_dp; -1 on a broken path."""
    cdef int i = nh, j = nr, k
    cdef uint8_t op
    for k in range(nh + 1):
        w.herr[k] = 0
    for k in range(nr + 1):
        w.rerr[k] = 0
    # flags first (at k + 1), prefix sums after
    while i > 0 or j > 0:
        op = w.ops[w.off[i] + j - w.lo[i]]
        if op == OP_MATCH or op == OP_SUB:
            w.align[j - 1] = i - 1
            if op == OP_SUB:
                w.herr[i] = 1
                w.rerr[j] = 1
            i -= 1
            j -= 1
        elif op == OP_DEL:
            w.herr[i] = 1
            i -= 1
        elif op == OP_INS:
            w.align[j - 1] = i - 1
            w.rerr[j] = 1
            j -= 1
        else:
            return -1
    for k in range(nh):
        w.herr[k + 1] += w.herr[k]
    for k in range(nr):
        w.rerr[k + 1] += w.rerr[k]
    return 0


cdef inline int shifted(const int32_t* src, int32_t* dst, int n, int sh, int length, int target) noexcept nogil:
    """dst[p:n] = src with src[sh:sh+length] moved to target, as sacrebleu moves it:
    before position target if target < sh, to end at target if target > sh + length,
    else right by min(target - sh, n - sh - length). Returns p = min(sh, target), where
    dst starts to differ (dst[:p] is left unset)."""
    cdef int k, d, p
    if target < sh:
        p = target
        for k in range(length):
            dst[target + k] = src[sh + k]
        for k in range(target, sh):
            dst[k + length] = src[k]
        for k in range(sh + length, n):
            dst[k] = src[k]
    elif target > sh + length:
        p = sh
        for k in range(sh + length, target):
            dst[k - length] = src[k]
        for k in range(length):
            dst[target - length + k] = src[sh + k]
        for k in range(target, n):
            dst[k] = src[k]
    else:
        p = sh
        d = target - sh
        if d > n - sh - length:
            d = n - sh - length
        for k in range(d):
            dst[sh + k] = src[sh + length + k]
        for k in range(length):
            dst[sh + d + k] = src[sh + k]
        for k in range(sh + d + length, n):
            dst[k] = src[k]
    return p


cdef int32_t candidate_distance(Work* w, int nh, int nr, int sh, int length, int target) noexcept nogil:
    """Edit distance of the current words with one shift applied (in w.cand)."""
    cdef int p = shifted(w.cur, w.cand, nh, sh, length, target), i
    cdef const int32_t* prev = w.F + w.off[p]
    cdef int32_t* row = w.row_a
    cdef int32_t* spare = w.row_b
    cdef int32_t* t
    cdef int plo = w.lo[p], phi = w.hi[p]
    for i in range(p + 1, nh + 1):
        dp_row(prev, plo, phi, row, NULL, w.lo[i], w.hi[i], w.cand[i - 1], w.ref)
        prev = row
        plo = w.lo[i]
        phi = w.hi[i]
        t = row
        row = spare
        spare = t
    return prev[nr - plo]


cdef int64_t ter_pair(Work* w, const int32_t* hyp, int nh, int nr) noexcept nogil:
    """Edits (shifts + edit distance) of hypothesis hyp[:nh] against w.ref[:nr]; -1 when
    the beam left the corner unreachable (sacrebleu raises there)."""
    cdef int k, sh, sr, sr_end, length, off, idx, prev_idx, a
    cdef int found, best_len = 0, best_sh = 0, best_idx = 0
    cdef int32_t pre, best_gain = 0, gain
    cdef int64_t shifts = 0
    cdef int checked = 0
    cdef int32_t* t
    if nr == 0:
        return nh
    if nh == 0:
        return nr
    set_band(w, nh, nr)
    for k in range(nh):
        w.cur[k] = hyp[k]
    while True:
        pre = full_dp(w, nh, nr)
        if trace(w, nh, nr) != 0:
            return -1
        found = 0
        for sh in range(nh):
            sr_end = sh + SHIFT_DIST + 1 if sh + SHIFT_DIST < nr else nr
            for sr in range(sh - SHIFT_DIST if sh > SHIFT_DIST else 0, sr_end):
                length = 0
                while (length < SHIFT_SIZE and sh + length < nh and sr + length < nr
                       and w.cur[sh + length] == w.ref[sr + length]):
                    length += 1
                    if w.herr[sh + length] == w.herr[sh] or w.rerr[sr + length] == w.rerr[sr]:
                        continue
                    a = w.align[sr]
                    if sh <= a < sh + length:
                        continue
                    prev_idx = -1
                    for off in range(-1, length):
                        idx = 0 if sr + off == -1 else w.align[sr + off] + 1
                        if idx == prev_idx:
                            continue
                        prev_idx = idx
                        gain = pre - candidate_distance(w, nh, nr, sh, length, idx)
                        checked += 1
                        if (not found or gain > best_gain or (gain == best_gain and (
                                length > best_len or (length == best_len and (
                                    sh < best_sh or (sh == best_sh and idx < best_idx)))))):
                            found = 1
                            best_gain = gain
                            best_len = length
                            best_sh = sh
                            best_idx = idx
                    if checked >= MAX_CANDIDATES:
                        break
                if checked >= MAX_CANDIDATES:
                    break
            if checked >= MAX_CANDIDATES:
                break
        if checked >= MAX_CANDIDATES or not found or best_gain <= 0:
            return shifts + pre
        shifted(w.cur, w.cand, nh, best_sh, best_len, best_idx)
        for k in range(best_sh if best_sh < best_idx else best_idx, nh):
            w.cur[k] = w.cand[k]
        shifts += 1


cdef void token_lengths(const int64_t[::1] ptr, const int32_t[::1] words, const int64_t[::1] tok_ptr,
                        int64_t* out) noexcept:
    """Tokens of every row of a word-id CSR."""
    cdef Py_ssize_t i, k
    cdef int64_t n
    for i in range(ptr.shape[0] - 1):
        n = 0
        for k in range(ptr[i], ptr[i + 1]):
            n += tok_ptr[words[k] + 1] - tok_ptr[words[k]]
        out[i] = n


cdef Work thread_work(char* block, int64_t Hm, int64_t Rm, int64_t cells) noexcept nogil:
    """Carve one thread's buffers out of its block (work_bytes(Hm, Rm, cells) bytes)."""
    cdef Work w
    w.off = <int64_t*>block
    w.F = <int32_t*>(w.off + Hm + 2)
    w.cur = w.F + cells
    w.cand = w.cur + Hm
    w.lo = w.cand + Hm
    w.hi = w.lo + Hm + 1
    w.herr = w.hi + Hm + 1
    w.ref = w.herr + Hm + 1
    w.rerr = w.ref + Rm
    w.align = w.rerr + Rm + 1
    w.row_a = w.align + Rm
    w.row_b = w.row_a + Rm + 1
    w.ops = <uint8_t*>(w.row_b + Rm + 1)
    return w


cdef inline int64_t work_bytes(int64_t Hm, int64_t Rm, int64_t cells) noexcept nogil:
    cdef int64_t b = 8 * (Hm + 2) + 4 * (cells + 5 * Hm + 3 + 5 * Rm + 3) + cells
    return (b + 63) // 64 * 64


def pair_edits(const int32_t[::1] hyp, const int32_t[::1] ref):
    """Edits of one hypothesis against one reference (token ids), the kernel's ter_pair;
    for tests. -1 when the beam left no path (sacrebleu raises there)."""
    cdef int64_t Hm = max(hyp.shape[0], 1), Rm = max(ref.shape[0], 1)
    cdef int64_t cells = band_cells(<int>hyp.shape[0], <int>ref.shape[0])
    cdef char* block = <char*>malloc(work_bytes(Hm, Rm, cells))
    if block == NULL:
        raise MemoryError()
    cdef Work w = thread_work(block, Hm, Rm, cells)
    cdef Py_ssize_t k
    for k in range(ref.shape[0]):
        w.ref[k] = ref[k]
    cdef int64_t e = ter_pair(&w, &hyp[0] if hyp.shape[0] else NULL, <int>hyp.shape[0], <int>ref.shape[0])
    free(block)
    return e


def ter_stats(const int64_t[::1] hyp_ptr, const int32_t[::1] hyp_words, const int64_t[::1] run_start,
              const int64_t[::1] run_sid, const int64_t[::1] ref_sent_ptr, const int64_t[::1] ref_word_ptr,
              const int32_t[::1] ref_words, const int64_t[::1] tok_ptr, const int32_t[::1] toks, int64_t scale,
              int32_t[:, ::1] out, int n_threads=1):
    """TER statistics of word-id hypotheses, runs of sentences in OpenMP threads.

    hyp_ptr int64 [n + 1], hyp_words int32: hypothesis h's word ids; run_start int64
    [R + 1] and run_sid int64 [R]: hypotheses run_start[r]..run_start[r+1]-1 are scored
    against the references of sentence run_sid[r] (at least one each); references as CSR
    (sentence → references → word ids). Per word id w its tokens toks[tok_ptr[w]:tok_ptr[w+1]]
    (what is compared). scale: a multiple of every sentence's reference count.
    out int32 [n, 2]: the fewest edits over the sentence's references, and the summed
    token count of its references times scale / (its reference count).
    Returns 0; -1 when memory runs out; 2 when some hypothesis found no path through the
    beam (its edits are then -1).
    """
    cdef Py_ssize_t n = hyp_ptr.shape[0] - 1, R = run_sid.shape[0], r, h, q, i, s
    if out.shape[0] != n or out.shape[1] != 2:
        raise ValueError("out must be [n, 2]")
    if scale < 1:
        raise ValueError("scale must be >= 1")
    check_runs(run_start, run_sid, n, ref_sent_ptr.shape[0] - 1)
    for r in range(R):
        s = run_sid[r]
        if run_start[r + 1] > run_start[r] and (ref_sent_ptr[s + 1] == ref_sent_ptr[s]
                                                or scale % (ref_sent_ptr[s + 1] - ref_sent_ptr[s])):
            raise ValueError(f"sentence {s} has no references or a count that does not divide scale")
    # token counts, and the largest buffers any (hypothesis, reference) pair needs
    cdef int64_t[::1] hlen = np.zeros(max(n, 1), dtype=np.int64)
    cdef int64_t[::1] rlen = np.zeros(max(ref_word_ptr.shape[0] - 1, 1), dtype=np.int64)
    token_lengths(hyp_ptr, hyp_words, tok_ptr, &hlen[0])
    token_lengths(ref_word_ptr, ref_words, tok_ptr, &rlen[0])
    cdef int64_t Hm = 1, Rm = 1, cells = 1
    for r in range(R):
        for h in range(run_start[r], run_start[r + 1]):
            Hm = max(Hm, hlen[h])
            for q in range(ref_sent_ptr[run_sid[r]], ref_sent_ptr[run_sid[r] + 1]):
                cells = max(cells, band_cells(<int>hlen[h], <int>rlen[q]))
    for q in range(ref_word_ptr.shape[0] - 1):
        Rm = max(Rm, rlen[q])
    if Hm >= INF // 4 or Rm >= INF // 4:
        raise ValueError("sentences too long for TER")
    cdef int T = n_threads if n_threads > 1 else 1
    cdef int64_t per_thread = work_bytes(Hm, Rm, cells)
    cdef char* blocks = <char*>malloc(T * per_thread)
    if blocks == NULL:
        return -1
    cdef const int64_t* tptr = &tok_ptr[0]
    cdef const int32_t* tdata = &toks[0] if toks.shape[0] else NULL
    cdef const int32_t* hw = &hyp_words[0] if hyp_words.shape[0] else NULL
    cdef const int32_t* rw = &ref_words[0] if ref_words.shape[0] else NULL
    cdef int32_t* hyp_tokens
    cdef Work w
    cdef Py_ssize_t q0, q1, nh, nr
    cdef int64_t e, best, total_len
    cdef int status = 0
    # hypothesis tokens go to a separate per-thread buffer: ter_pair copies them to w.cur
    cdef int32_t* hyp_all = <int32_t*>malloc(T * Hm * sizeof(int32_t))
    if hyp_all == NULL:
        free(blocks)
        return -1
    with nogil:
        for r in prange(R, num_threads=T, schedule="dynamic", chunksize=1):
            w = thread_work(blocks + threadid() * per_thread, Hm, Rm, cells)
            hyp_tokens = hyp_all + threadid() * Hm
            q0 = ref_sent_ptr[run_sid[r]]
            q1 = ref_sent_ptr[run_sid[r] + 1]
            total_len = 0
            for q in range(q0, q1):
                total_len = total_len + rlen[q]
            for h in range(run_start[r], run_start[r + 1]):
                nh = gather(tptr, tdata, hw + hyp_ptr[h], hyp_ptr[h + 1] - hyp_ptr[h], hyp_tokens)
                best = -1
                for q in range(q0, q1):
                    nr = gather(tptr, tdata, rw + ref_word_ptr[q], ref_word_ptr[q + 1] - ref_word_ptr[q], w.ref)
                    e = ter_pair(&w, hyp_tokens, <int>nh, <int>nr)
                    if e < 0:
                        best = -1
                        break
                    if best < 0 or e < best:
                        best = e
                out[h, 0] = <int32_t>best
                out[h, 1] = <int32_t>(total_len * (scale // (q1 - q0)))
    free(blocks)
    free(hyp_all)
    for i in range(n):
        if out[i, 0] < 0:
            status = 2
    return status
