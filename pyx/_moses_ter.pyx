# Moses's own TER statistics (extractor --sctype TER: mert/TerScorer.cpp and the TERCpp
# library in mert/TER/ at Moses 34452895), from word ids. Not sacrebleu's TER (_ter.pyx):
# TERCpp has its own beam, candidate limit and distance rules, and Moses calls it with the
# reference as the sentence to shift and the hypothesis as the fixed one.
#
# Word ids must be Moses's own vocabulary ids (numbered in the order an extractor run first
# sees the words; mtplug.metrics.moses_error_rates renumbers them so), because TERCpp gets
# the words as text, the ids in decimal, and looks runs of the hypothesis up by a 64-bit
# hash of that text (libstdc++'s collate<char>::hash: rotate left by 7, add the byte; runs
# joined by tabs). Texts of 10 bytes or more can collide: colliding runs share one list
# of start positions, and a run is "found" where a colliding one is. That changes which
# shifts are tried, so it is reproduced: the phrase index below is keyed by that hash.
# An empty sentence reaches TERCpp as one empty word (hash 0); here it is the id W, one
# past every real id, with empty text.
#
# One reference against one hypothesis (ter_pair), the rules TERCpp follows:
#   * edit distance over the reference's (shifted) positions j, one column each, and the
#     hypothesis's positions i (rows). A column is scanned from the first row kept in the
#     previous column up to the row after the last one kept there, extended while cells
#     are reached from above. Before the last column a cell costing more than 10 above the
#     cheapest diagonal step into its column is not expanded (a match counts even when it
#     did not improve its cell, a substitution only when it did). Equal costs keep the
#     diagonal step, then the step from the left, then the one from above. So the
#     distance can exceed the true edit distance: that is Moses's number.
#   * the path read back from the corner marks unmatched words and gives every hypothesis
#     word the reference position it faces (the next one for an unmatched hypothesis word);
#     one more entry past the hypothesis holds no error and faces -1.
#   * the phrase index: every run of 1..11 hypothesis words that the reference has, by
#     hash, each hash with the start positions in the order found.
#   * shift candidates, in this order: reference start, run end (1..10 words; the run's
#     hash must be in the index), the index's positions for it, then the destinations
#     faces[p + off] for off = -1 .. length - 1 (-1 = the front, for a position 0). The
#     first word alone must have a position facing another place, at most 25 words to its
#     right or 26 to its left (TERCpp's bound); a run with no unmatched word is extended,
#     not moved; a position facing into the run or more than 25 words away is skipped.
#     Only the first 10 candidates of a round
#     are kept; they are tried longest first, in the order found; a round stops early once
#     the gain so far exceeds what a run of the current length could bring (2 x length).
#     A position whose run would end past the extra entry (only a hash collision gives
#     one) makes TERCpp read outside its tables and Moses's extractor abort: refused here.
#   * a shift costs 1; a candidate is kept when it gains over the kept one or when it is the
#     first to break even. Rounds go on while one is kept: edits = shifts + distance.
# With several references TerScorer keeps the first result unless a later one has a
# strictly smaller edits / average reference length, which here means fewer edits (the
# average is the same for every reference). Then it prints edits x 100, average x 100
# and TER x 100 with %g and reads them back with atoi: done here with snprintf and atoi.
#
# Work buffers grow with the sentences: two step matrices of (reference + 1) x (hypothesis
# + 1) bytes per thread, the phrase index (at most 11 entries per hypothesis word); the
# cost columns roll.

from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdio cimport snprintf
from libc.stdlib cimport atoi, calloc, free, malloc, realloc
from cython.parallel cimport prange, threadid
from _runs cimport check_referenced_runs, longest_row, max_word

#: statistics per hypothesis: edits x 100, average reference length x 100, TER x 100
TER_STATS = 3
MAX_RUN_LENGTH = 10
MAX_SHIFT_DISTANCE = 25
CANDIDATES_PER_ROUND = 10
BEAM_WIDTH = 10

cdef enum:
    MAX_RUN = 10
    INDEXED_RUN = 11       # the phrase index holds runs one word longer than a shift moves
    MAX_DIST = 25
    MAX_TRIES = 10
    BEAM = 10
    FAR = 99999            # TERCpp's "infinite": the beam base of a column with no diagonal step
    MAX_WORDS = 1 << 27    # costs and the 11 index entries per hypothesis word stay in int32
    MAX_DIGITS = 10        # decimal digits of an int32 id
    TAB = 9                # the byte between two ids of a run's text

cdef const uint32_t UNSET = 0xFFFFFFFF   # a cell not reached

cdef enum:
    STEP_MATCH = 1
    STEP_SUB = 2
    STEP_REF = 3           # a reference word facing no hypothesis word (from the left)
    STEP_HYP = 4           # a hypothesis word facing no reference word (from above)

cdef enum:
    OK = 0
    OUT_OF_MEMORY = -1
    TERCPP_FAILS = 1       # TERCpp reads outside its tables there (Moses's extractor aborts)


cdef struct Shift:
    int start              # the run cur[start..end] of the reference as shifted so far
    int end
    int dest               # -1: to the front; else TERCpp's new location (see move_run)


cdef struct Work:
    # one thread's buffers; the *_cap fields say how far they reach
    int64_t ref_cap
    int64_t hyp_cap
    int64_t cell_cap
    int64_t node_cap
    int64_t slot_cap
    int32_t* cur           # [ref_cap] the reference as shifted so far: positions into it
    int32_t* cand          # [ref_cap] a candidate shift of cur
    int32_t* best          # [ref_cap] the best candidate of the round
    uint8_t* ref_err       # [ref_cap] cur's word j is unmatched
    uint8_t* hyp_err       # [hyp_cap + 1] hypothesis word i is unmatched
    int32_t* faces         # [hyp_cap + 1] the reference position hypothesis word i faces
    uint32_t* col_a        # [hyp_cap + 1] rolling cost columns
    uint32_t* col_b
    uint8_t* steps_a       # [cell_cap] steps of the current (then best) arrangement
    uint8_t* steps_b       # [cell_cap] steps of a candidate
    # the phrase index: open addressing on the hash, each slot a list of positions
    uint64_t* slot_key     # [slot_cap]
    int32_t* slot_head     # [slot_cap] first node, -1 for a free slot
    int32_t* slot_tail     # [slot_cap]
    int32_t* node_pos      # [node_cap] a start position ...
    int32_t* node_next     # [node_cap] ... and the next node of its list, or -1
    int64_t slot_mask
    int64_t* in_ref        # [W + 1] == ref_tag: the word is in the current reference
    int64_t ref_tag
    const uint8_t* digits  # [(W + 1) * MAX_DIGITS] every id's decimal text (shared)
    const uint8_t* n_digits  # [W + 1] (shared; 0 for W, the empty word)
    int32_t blank          # the empty sentence's one word (id W)
    int out_of_memory
    int64_t refused        # the first hypothesis TERCpp fails on, or -1


cdef int grow(void** p, size_t bytes) noexcept nogil:
    cdef void* q = realloc(p[0], bytes if bytes > 0 else 1)
    if q == NULL:
        return -1
    p[0] = q
    return 0


cdef int reserve(Work* w, int64_t n_ref, int64_t n_hyp) noexcept nogil:
    """Buffers for a reference of n_ref and a hypothesis of n_hyp words (the phrase index
    apart); 0, -1 out of memory."""
    cdef int64_t cells = (n_ref + 1) * (n_hyp + 1)
    if n_ref > w.ref_cap:
        if (grow(<void**>&w.cur, n_ref * sizeof(int32_t)) or grow(<void**>&w.cand, n_ref * sizeof(int32_t))
                or grow(<void**>&w.best, n_ref * sizeof(int32_t))
                or grow(<void**>&w.ref_err, n_ref * sizeof(uint8_t))):
            return -1
        w.ref_cap = n_ref
    if n_hyp > w.hyp_cap:
        if (grow(<void**>&w.hyp_err, (n_hyp + 1) * sizeof(uint8_t))
                or grow(<void**>&w.faces, (n_hyp + 1) * sizeof(int32_t))
                or grow(<void**>&w.col_a, (n_hyp + 1) * sizeof(uint32_t))
                or grow(<void**>&w.col_b, (n_hyp + 1) * sizeof(uint32_t))):
            return -1
        w.hyp_cap = n_hyp
    if cells > w.cell_cap:
        if grow(<void**>&w.steps_a, cells) or grow(<void**>&w.steps_b, cells):
            return -1
        w.cell_cap = cells
    return 0


cdef int reserve_index(Work* w, int64_t n_nodes) noexcept nogil:
    """The phrase index for n_nodes positions, its slots free; 0, -1 out of memory."""
    cdef int64_t slots = 16, k
    while slots < 2 * n_nodes:
        slots *= 2
    if n_nodes > w.node_cap:
        if (grow(<void**>&w.node_pos, n_nodes * sizeof(int32_t))
                or grow(<void**>&w.node_next, n_nodes * sizeof(int32_t))):
            return -1
        w.node_cap = n_nodes
    if slots > w.slot_cap:
        if (grow(<void**>&w.slot_key, slots * sizeof(uint64_t)) or grow(<void**>&w.slot_head, slots * sizeof(int32_t))
                or grow(<void**>&w.slot_tail, slots * sizeof(int32_t))):
            return -1
        w.slot_cap = slots
    w.slot_mask = slots - 1
    for k in range(slots):
        w.slot_head[k] = -1
    return 0


cdef void release(Work* w) noexcept nogil:
    free(w.cur)
    free(w.cand)
    free(w.best)
    free(w.ref_err)
    free(w.hyp_err)
    free(w.faces)
    free(w.col_a)
    free(w.col_b)
    free(w.steps_a)
    free(w.steps_b)
    free(w.slot_key)
    free(w.slot_head)
    free(w.slot_tail)
    free(w.node_pos)
    free(w.node_next)
    free(w.in_ref)


cdef inline uint64_t add_word(const Work* w, uint64_t h, int32_t word, bint first) noexcept nogil:
    """The hash of a run's text with ``word`` appended (after a tab unless it is the first)."""
    cdef const uint8_t* d = w.digits + <int64_t>word * MAX_DIGITS
    cdef int k
    if not first:
        h = TAB + ((h << 7) | (h >> 57))
    for k in range(w.n_digits[word]):
        h = d[k] + ((h << 7) | (h >> 57))
    return h


cdef inline int64_t find_slot(const Work* w, uint64_t key) noexcept nogil:
    """The slot of ``key``, or the free slot where it would go."""
    cdef int64_t k = <int64_t>((key * <uint64_t>0x9E3779B97F4A7C15) >> 32) & w.slot_mask
    while w.slot_head[k] >= 0 and w.slot_key[k] != key:
        k = (k + 1) & w.slot_mask
    return k


cdef inline int32_t positions(const Work* w, uint64_t key) noexcept nogil:
    """The first node of the positions listed under ``key``, or -1 when none are."""
    return w.slot_head[find_slot(w, key)]


cdef int build_index(Work* w, const int32_t* ref, int nc, const int32_t* hyp, int nr) noexcept nogil:
    """The phrase index of hyp's runs of reference words (by hash, positions in order of
    start); 0, -1 out of memory."""
    cdef int start, end, k
    cdef int64_t n_nodes = 0, slot
    cdef uint64_t h
    cdef int32_t node = 0
    # TERCpp asks its hashed word set; one id's text has at most 9 bytes below 10^9, where
    # the hash is one-to-one, so asking by id is the same
    w.ref_tag += 1
    for k in range(nc):
        w.in_ref[ref[k]] = w.ref_tag
    for start in range(nr):
        end = start
        while end < nr and end - start < INDEXED_RUN and w.in_ref[hyp[end]] == w.ref_tag:
            n_nodes += 1
            end += 1
    if reserve_index(w, n_nodes) != 0:
        return -1
    for start in range(nr):
        h = 0
        end = start
        while end < nr and end - start < INDEXED_RUN and w.in_ref[hyp[end]] == w.ref_tag:
            h = add_word(w, h, hyp[end], end == start)
            slot = find_slot(w, h)
            w.node_pos[node] = start
            w.node_next[node] = -1
            if w.slot_head[slot] < 0:
                w.slot_key[slot] = h
                w.slot_head[slot] = node
            else:
                w.node_next[w.slot_tail[slot]] = node
            w.slot_tail[slot] = node
            node += 1
            end += 1
    return 0


cdef int32_t edit_distance(Work* w, const int32_t* ref, const int32_t* order, int nc, const int32_t* hyp, int nr,
                           uint8_t* steps) noexcept nogil:
    """TERCpp's beam edit distance of the reference words ref[order[0..nc-1]] (columns)
    against hyp[0..nr-1] (rows), or -1 where TERCpp fails; steps [(nc + 1) x (nr + 1)],
    column-major, gets the step each cell was last improved by."""
    # Costs are unsigned with UNSET the largest value: "unset or dearer" is one comparison.
    cdef uint32_t* col = w.col_a
    cdef uint32_t* nxt = w.col_b
    cdef uint32_t* tmp
    cdef uint8_t* here
    cdef uint8_t* ahead
    cdef int i, j, lo, hi, first_kept = 0, after_kept = 0, stride = nr + 1
    cdef int32_t word
    cdef uint32_t c, c1, limit, best_in = FAR
    for i in range(nr + 1):
        col[i] = UNSET
        nxt[i] = UNSET
    col[0] = 0
    for j in range(nc):
        limit = best_in + BEAM            # cells dearer than this are not expanded
        best_in = FAR
        lo = first_kept
        hi = after_kept if after_kept < nr else nr
        first_kept = -1
        here = steps + <int64_t>j * stride
        ahead = here + stride
        word = ref[order[j]]
        i = lo
        while i <= hi and col[i] > limit:     # unset, or outside the beam
            i += 1
        if i > hi:
            # TERCpp would next read row -1 (std::vector::at throws, the extractor aborts);
            # only a path over 99999 edits long gets every cell of a column pruned
            return -1
        first_kept = i
        while i < nr and i <= hi:
            c = col[i]
            if c <= limit:
                after_kept = i + 1
                c1 = c + 1
                if hyp[i] == word:
                    if c < nxt[i + 1]:
                        nxt[i + 1] = c
                        ahead[i + 1] = STEP_MATCH
                    # a match lowers the column's best even when its cell was cheaper already
                    if c < best_in:
                        best_in = c
                elif c1 < nxt[i + 1]:
                    nxt[i + 1] = c1
                    ahead[i + 1] = STEP_SUB
                    if c1 < best_in:
                        best_in = c1
                if c1 < nxt[i]:
                    nxt[i] = c1
                    ahead[i] = STEP_REF
                if c1 < col[i + 1]:
                    col[i + 1] = c1
                    here[i + 1] = STEP_HYP
                    if i >= hi:
                        hi = i + 1
            i += 1
        if i == nr and i <= hi and col[nr] <= limit:     # the last row: only the step to the right
            after_kept = nr + 1
            if col[nr] + 1 < nxt[nr]:
                nxt[nr] = col[nr] + 1
                ahead[nr] = STEP_REF
        # every cell of this column lies in rows lo..hi: clean them for column j + 2
        for i in range(lo, hi + 1):
            col[i] = UNSET
        tmp = col
        col = nxt
        nxt = tmp
    # the last column: no beam, only steps from above
    here = steps + <int64_t>nc * stride
    i = first_kept
    hi = after_kept if after_kept < nr else nr
    while i <= hi:
        c = col[i]
        if c != UNSET and i < nr and c + 1 < col[i + 1]:
            col[i + 1] = c + 1
            here[i + 1] = STEP_HYP
            if i >= hi:
                hi = i + 1
        i += 1
    return <int32_t>col[nr]


cdef void read_path(Work* w, int nc, int nr, const uint8_t* steps) noexcept nogil:
    """Unmatched words (w.ref_err over cur, w.hyp_err) and w.faces from the path into the
    corner; the entry past the hypothesis holds no error and faces -1, like TERCpp's spare one."""
    cdef int i = nr, j = nc, stride = nr + 1
    cdef uint8_t s
    w.hyp_err[nr] = 0
    w.faces[nr] = -1
    while i > 0 or j > 0:
        s = steps[<int64_t>j * stride + i]
        if s == STEP_MATCH or s == STEP_SUB:
            w.ref_err[j - 1] = s == STEP_SUB
            w.hyp_err[i - 1] = s == STEP_SUB
            w.faces[i - 1] = j - 1
            i -= 1
            j -= 1
        elif s == STEP_HYP:
            w.hyp_err[i - 1] = 1
            w.faces[i - 1] = j
            i -= 1
        else:
            w.ref_err[j - 1] = 1
            j -= 1


cdef int find_shifts(Work* w, const int32_t* ref, int nc, int nr, Shift* out, int* n_out) noexcept nogil:
    """The round's candidate shifts of cur in TERCpp's order, the first MAX_TRIES into out
    (how many: n_out). TERCpp generates all the others too, and one of them may read
    outside its tables: returns TERCPP_FAILS then, else OK."""
    cdef int n = 0, start, end, length, p, k, f, g, off, dest
    cdef int32_t node
    cdef bint usable, extend, run_err, any_err
    cdef uint64_t key
    for start in range(nc):
        key = add_word(w, 0, ref[w.cur[start]], True)
        # the run's first word must face some other place, not too far
        usable = False
        node = positions(w, key)
        while node >= 0:
            f = w.faces[w.node_pos[node]]
            if f != start and f - start <= MAX_DIST and start - f - 1 <= MAX_DIST:
                usable = True
                break
            node = w.node_next[node]
        if not usable:
            continue
        run_err = False
        extend = True
        end = start
        while extend and end < nc and end < start + MAX_RUN:
            extend = False
            length = end - start + 1
            if end > start:
                key = add_word(w, key, ref[w.cur[end]], False)
            node = positions(w, key)
            if node < 0:
                end += 1
                continue
            run_err = run_err or w.ref_err[end]
            if not run_err:
                # nothing to repair in the run itself: try a longer one
                extend = True
                end += 1
                continue
            while node >= 0:
                p = w.node_pos[node]
                node = w.node_next[node]
                f = w.faces[p]
                if (start <= f <= end) or f - start > MAX_DIST or start - f > MAX_DIST:
                    continue
                extend = True
                if p + length - 1 > nr:
                    return TERCPP_FAILS
                any_err = False
                for k in range(p, p + length):
                    if w.hyp_err[k]:
                        any_err = True
                        break
                if not any_err:
                    continue
                for off in range(-1, length):
                    if off == -1 and p == 0:
                        dest = -1
                    else:
                        g = w.faces[p + off]
                        if g == start or (off != 0 and g == f):
                            continue
                        dest = g
                    if n < MAX_TRIES:
                        out[n].start = start
                        out[n].end = end
                        out[n].dest = dest
                        n += 1
            end += 1
    n_out[0] = n
    return OK


cdef void move_run(const int32_t* src, int32_t* dst, int n, Shift sh) noexcept nogil:
    """dst = src with src[start..end] moved: to the front (dest -1), before dest (dest <
    start), after dest (dest > end; dest past the end counts as the last position), or
    dest - start places to the right (dest inside the run: TERCpp's own case)."""
    cdef int k = 0, i, dest = sh.dest, stop
    if dest > n - 1:
        dest = n - 1
    if dest == -1:
        for i in range(sh.start, sh.end + 1):
            dst[k] = src[i]; k += 1
        for i in range(sh.start):
            dst[k] = src[i]; k += 1
        for i in range(sh.end + 1, n):
            dst[k] = src[i]; k += 1
    elif dest < sh.start:
        for i in range(dest):
            dst[k] = src[i]; k += 1
        for i in range(sh.start, sh.end + 1):
            dst[k] = src[i]; k += 1
        for i in range(dest, sh.start):
            dst[k] = src[i]; k += 1
        for i in range(sh.end + 1, n):
            dst[k] = src[i]; k += 1
    else:
        stop = dest if dest > sh.end else sh.end + dest - sh.start
        for i in range(sh.start):
            dst[k] = src[i]; k += 1
        for i in range(sh.end + 1, (stop if stop < n - 1 else n - 1) + 1):
            dst[k] = src[i]; k += 1
        for i in range(sh.start, sh.end + 1):
            dst[k] = src[i]; k += 1
        for i in range(stop + 1, n):
            dst[k] = src[i]; k += 1


cdef int64_t ter_pair(Work* w, const int32_t* ref, int nc, const int32_t* hyp, int nr) noexcept nogil:
    """TERCpp's edits turning ref[0..nc-1] into hyp[0..nr-1] (both non-empty; buffers
    reserved), or -1 out of memory, or -2 where TERCpp fails."""
    cdef Shift tries[MAX_TRIES]
    cdef int k, t, n_tries = 0, length, taken
    cdef int32_t* swap_order
    cdef uint8_t* swap_steps
    cdef int32_t edits, e, best_edits = 0, best_total, fixed
    cdef int64_t shifts = 0
    if build_index(w, ref, nc, hyp, nr) != 0:
        return -1
    for k in range(nc):
        w.cur[k] = k
    edits = edit_distance(w, ref, w.cur, nc, hyp, nr, w.steps_a)
    if edits < 0:
        return -2
    while True:
        read_path(w, nc, nr, w.steps_a)
        if find_shifts(w, ref, nc, nr, tries, &n_tries) != OK:
            return -2
        taken = 0
        best_total = edits
        # TERCpp starts at runs of 11 words, of which it never has candidates
        for length in range(MAX_RUN, 0, -1):
            fixed = edits - best_total
            if fixed > 2 * length or (taken and fixed == 2 * length):
                break
            for t in range(n_tries):
                if tries[t].end - tries[t].start + 1 != length:
                    continue
                fixed = edits - best_total
                if fixed > 2 * length or (taken and fixed == 2 * length):
                    break
                move_run(w.cur, w.cand, nc, tries[t])
                e = edit_distance(w, ref, w.cand, nc, hyp, nr, w.steps_b)
                if e < 0:
                    return -2
                if best_total - (e + 1) > 0 or (not taken and best_total == e + 1):
                    taken = 1
                    best_total = e + 1
                    best_edits = e
                    # the current steps were read already: their buffer takes the candidates
                    swap_order = w.best; w.best = w.cand; w.cand = swap_order
                    swap_steps = w.steps_a; w.steps_a = w.steps_b; w.steps_b = swap_steps
        if not taken:
            return edits + shifts
        swap_order = w.cur; w.cur = w.best; w.best = swap_order
        edits = best_edits
        shifts += 1


cdef inline int32_t printed(double x) noexcept nogil:
    """What Moses stores for a double it printed: atoi of C++ ostream's %g (6 digits)."""
    cdef char buf[64]
    snprintf(buf, 64, "%g", x)
    return atoi(buf)


cdef inline double score_av(double edits, double average) noexcept nogil:
    if average <= 0.0:
        return 1.0 if edits > 0.0 else 0.0
    return edits / average


cdef int score_hypothesis(Work* w, const int32_t* hyp, int nr, const int64_t* ref_word_ptr, int64_t q0, int64_t q1,
                          const int32_t* rw, int32_t* row) noexcept nogil:
    """row[0..2] of one hypothesis against references q0..q1-1: OK, OUT_OF_MEMORY or
    TERCPP_FAILS."""
    cdef int64_t q, n_ref, longest = 1, pair
    cdef int nc
    cdef const int32_t* ref
    cdef double average = 0.0, edits, kept_edits = 0.0, kept_average = 0.0
    for q in range(q0, q1):
        n_ref = ref_word_ptr[q + 1] - ref_word_ptr[q]
        average = average + <double>n_ref
        if n_ref > longest:
            longest = n_ref
    average = average / <double>(q1 - q0)
    if nr == 0:
        hyp = &w.blank
        nr = 1
    if reserve(w, longest, nr) != 0:
        return OUT_OF_MEMORY
    for q in range(q0, q1):
        nc = <int>(ref_word_ptr[q + 1] - ref_word_ptr[q])
        ref = rw + ref_word_ptr[q]
        if nc == 0:
            ref = &w.blank
            nc = 1
        pair = ter_pair(w, ref, nc, hyp, nr)
        if pair == -1:
            return OUT_OF_MEMORY
        if pair < 0:
            return TERCPP_FAILS
        edits = <double>pair
        if (kept_edits == 0.0 and kept_average == 0.0) or score_av(kept_edits, kept_average) > score_av(edits, average):
            kept_edits = edits
            kept_average = average
    row[0] = printed(kept_edits * 100.0)
    row[1] = printed(kept_average * 100.0)
    row[2] = printed(score_av(kept_edits, kept_average) * 100.0)
    return OK


def ter_stats(const int64_t[::1] hyp_ptr, const int32_t[::1] hyp_words, const int64_t[::1] run_start,
              const int64_t[::1] run_sid, const int64_t[::1] ref_sent_ptr, const int64_t[::1] ref_word_ptr,
              const int32_t[::1] ref_words, int32_t[:, ::1] out, int n_threads=1):
    """Moses TER statistics of hypotheses in Moses's word ids, runs of sentences in OpenMP threads.

    hyp_ptr int64 [n + 1], hyp_words int32: hypothesis h's word ids; run_start int64
    [R + 1] and run_sid int64 [R]: hypotheses run_start[r]..run_start[r+1]-1 translate
    sentence run_sid[r]; references as CSR (sentence -> references -> word ids), at least
    one for every sentence a run names. Ids are Moses's vocabulary ids (see the module
    header: the numbering changes results). out int32 [n, 3]: what Moses's ScoreStats
    holds, atoi("%g") of edits x 100, average reference length x 100 and TER x 100.
    Returns 0, -1 when memory runs out, or h + 1 for the first hypothesis h on which
    TERCpp fails (reads outside its tables, where Moses's extractor aborts).
    """
    cdef Py_ssize_t n = hyp_ptr.shape[0] - 1, R = run_sid.shape[0], r, h, k
    if out.shape[0] != n or out.shape[1] != TER_STATS:
        raise ValueError(f"out must be [n, {TER_STATS}]")
    check_referenced_runs(run_start, run_sid, n, ref_sent_ptr)
    if longest_row(hyp_ptr) > MAX_WORDS or longest_row(ref_word_ptr) > MAX_WORDS:
        raise ValueError(f"a sentence has more than {MAX_WORDS} words")
    cdef int32_t W = max(max_word(hyp_words), max_word(ref_words)) + 1
    cdef int T = n_threads if n_threads > 1 else 1
    # every id's decimal text, the empty word's (W) empty
    cdef uint8_t* digits = <uint8_t*>malloc((<int64_t>W + 1) * MAX_DIGITS)
    cdef uint8_t* n_digits = <uint8_t*>malloc(<int64_t>W + 1)
    cdef Work* works = <Work*>calloc(T, sizeof(Work))
    cdef char text[16]
    cdef int t, m
    cdef int64_t status = 0, refused = -1
    if digits == NULL or n_digits == NULL or works == NULL:
        free(digits)
        free(n_digits)
        free(works)
        return -1
    for k in range(W):
        m = snprintf(text, 16, "%d", <int>k)
        n_digits[k] = m
        for t in range(m):
            digits[k * MAX_DIGITS + t] = text[t]
    n_digits[W] = 0
    for t in range(T):
        works[t].blank = W
        works[t].refused = -1
        works[t].digits = digits
        works[t].n_digits = n_digits
        works[t].in_ref = <int64_t*>malloc((W + 1) * sizeof(int64_t))
        if works[t].in_ref == NULL:
            status = -1
        else:
            for k in range(W + 1):
                works[t].in_ref[k] = 0
    cdef const int32_t* hw = &hyp_words[0] if hyp_words.shape[0] else NULL
    cdef const int32_t* rw = &ref_words[0] if ref_words.shape[0] else NULL
    cdef Work* w
    cdef int e
    if status == 0:
        with nogil:
            for r in prange(R, num_threads=T, schedule="dynamic", chunksize=1):
                w = &works[threadid()]
                for h in range(run_start[r], run_start[r + 1]):
                    if w.out_of_memory:
                        break
                    e = score_hypothesis(w, hw + hyp_ptr[h], <int>(hyp_ptr[h + 1] - hyp_ptr[h]), &ref_word_ptr[0],
                                         ref_sent_ptr[run_sid[r]], ref_sent_ptr[run_sid[r] + 1], rw, &out[h, 0])
                    if e == OUT_OF_MEMORY:
                        w.out_of_memory = 1
                    elif e == TERCPP_FAILS and (w.refused < 0 or h < w.refused):
                        w.refused = h
    for t in range(T):
        if works[t].out_of_memory:
            status = -1
        if works[t].refused >= 0 and (refused < 0 or works[t].refused < refused):
            refused = works[t].refused
        release(&works[t])
    free(works)
    free(digits)
    free(n_digits)
    if status == 0 and refused >= 0:
        status = refused + 1
    return status
