# distutils: language = c++
# Moses's mert optimizers (mert/Optimizer.cpp, Point.cpp, mert.cpp of Moses 34452895), step
# for step and in Moses's number types, so that ``mert`` writes Moses's weights.txt bytes.
# mtplug's own MERT (_linesearch.pyx, float64, its own search) is a different design; this
# one exists for the drop-in program only.
#
# Number types, as Moses declares them: weights, features, statistics, scores, line
# positions and thresholds are float32 (parameter_t, FeatureStatsType, ScoreStatsType,
# statscore_t); a point's model score w . f sums float32 products w_i * f_i in a double,
# then is stored as float32; glibc's logf/expf give the BLEU logs (libm's float overloads).
#
# A point's score w . f also adds the fixed weights (features left out of -o) — for line
# directions too, which is Moses's behaviour (docs/mert-moses.md names it); with
# slopes_with_fixed False a direction's slope is taken over the optimised features only
# (the fix).
#
# Line search (Moses's LineOptimize): for each sentence, hypotheses sorted by slope
# (direction . f; ties in hypothesis order), the upper envelope walked from the lowest
# slope (among equal lowest slopes the highest origin score, first one on ties), each next
# line the leftmost intersection (ties: the later line); thresholds kept in an ordered map
# of float32 keys, with Moses's rule for thresholds closer than 1e-4 to the sentence's
# previous one. Scores of the intervals come from running sums of float32 statistics,
# updated by integer-truncated differences (StatisticsBasedScorer::score). The chosen
# point: the midpoint of the best interval, first threshold - 1000 for the leftmost,
# last + 0.1 for the rightmost; |x| < 0.00015 counts as 0.
#
# Optimizers: powell (SimpleOptimizer: each round searches the dim coordinate axes and
# then nrandom random directions, all from the round's start point, and moves to the best
# line optimum; rounds go on while they gain more than 1e-4), random-direction (random
# directions until nrandom in a row gain no more than 1e-4), random (one random point).
# Random numbers: glibc rand() after srand(seed) (_glibc_rand.pxi): first the -n random
# start points, then each task's draws in task order (Moses with one thread).
#
# tests/reference/moses_mert_reference.py is the slow pure-Python port this kernel is
# tested against.

from libc.math cimport expf, fabsf, floor, isfinite, logf
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t
from cython.operator cimport dereference as deref
from cython.operator cimport preincrement as inc
from libcpp.algorithm cimport sort
from libcpp.map cimport map as cmap
from libcpp.pair cimport pair
from libcpp.vector cimport vector

import numpy as np

include "_glibc_rand.pxi"

cdef extern from "<cfloat>":
    const float FLT_MAX

ctypedef pair[uint32_t, uint32_t] Diff
ctypedef vector[Diff] DiffList
ctypedef cmap[float, DiffList] ThresholdMap

cdef float MIN_FLOAT = -FLT_MAX
cdef float MAX_FLOAT = FLT_MAX
cdef float KEPS = 0.0001

# scorer kinds (Moses's StatisticsBasedScorer subclasses)
SCORER_BLEU = 0
SCORER_TER = 1
SCORER_PER = 2
SCORER_CDER = 3      # CDER and WER share the formula
# regularisation (--scconfig regtype:..., regwin:N)
REG_NONE = 0
REG_AVERAGE = 1
REG_MINIMUM = 2
# optimizer types (-t)
OPT_POWELL = 0
OPT_RANDOM_DIRECTION = 1
OPT_RANDOM = 2


cdef struct Ctx:
    const float* feats        # [n_rows, pdim]
    Py_ssize_t pdim
    const float* stats        # [n_rows, n_stats]
    Py_ssize_t n_stats
    const int64_t* offsets    # [S + 1]
    Py_ssize_t S
    Py_ssize_t dim
    bint optimize_all
    const int32_t* opt_idx    # [dim]
    const int32_t* fixed_idx  # [n_fixed], ascending
    const float* fixed_w
    Py_ssize_t n_fixed
    const uint8_t* positive   # [dim]
    const float* mins         # [dim]
    const float* maxs
    int n_sub                 # scorers: one, or the parts of an interpolation
    const int32_t* sub_kind   # [n_sub] SCORER_*
    const int32_t* sub_col0   # [n_sub] first statistic of each part
    const float* sub_weight   # [n_sub] (interpolation only)
    bint interpolated
    int reg_type
    Py_ssize_t reg_window
    bint slopes_with_fixed
    GlibcRand rng


cdef inline float model_score(Ctx* c, const float* p, const float* f, bint with_fixed=True) noexcept nogil:
    """Point::operator*(FeatureStats): float products summed in a double, kept as float
    (``with_fixed`` False: without the fixed weights' part)."""
    cdef double prod = 0.0
    cdef Py_ssize_t i
    if c.optimize_all:
        for i in range(c.dim):
            prod += <double>(p[i] * f[i])
    else:
        for i in range(c.dim):
            prod += <double>(p[i] * f[c.opt_idx[i]])
        if with_fixed:
            for i in range(c.n_fixed):
                prod += <double>(c.fixed_w[i] * f[c.fixed_idx[i]])
    return <float>prod


cdef float calc_score(int kind, const float* t) noexcept nogil:
    """calculateScore of the statistics totals t (float32), as scorer ``kind`` computes it."""
    cdef float logbleu, brevity, num, denom
    cdef int i
    if kind == 0:
        logbleu = 0.0
        for i in range(4):
            if t[2 * i] == 0:
                return 0.0
            logbleu += logf(t[2 * i]) - logf(t[2 * i + 1])
        logbleu /= <float>4
        brevity = <float>(1.0 - <double>(t[8] / t[1]))
        if brevity < 0.0:
            logbleu += brevity
        return expf(logbleu)
    if kind == 1:
        denom = <float>(1.0 * <double>t[1])
        num = <float>(-1.0 * <double>t[0])
        if denom == 0:
            return 1.0
        return <float>(1.0 + <double>(num / denom))
    if kind == 2:
        denom = t[2]
        num = t[0] - (t[1] - t[2] if t[1] - t[2] > 0.0 else <float>0.0)
        if denom == 0:
            return 0.0
        return num / denom
    if t[1] == 0:
        return 1.0
    return <float>1.0 - (t[0] / t[1])


cdef void regularise(Ctx* c, vector[float]& scores) noexcept nogil:
    """The --scconfig regtype/regwin window (average or minimum of the neighbours)."""
    cdef vector[float] raw
    cdef Py_ssize_t i, j, start, end
    cdef float total, mn
    if c.reg_type == 0 or c.reg_window <= 0:
        return
    raw = scores
    for i in range(<Py_ssize_t>scores.size()):
        start = i - c.reg_window if i >= c.reg_window else 0
        end = i + c.reg_window + 1
        if end > <Py_ssize_t>scores.size():
            end = scores.size()
        if c.reg_type == 1:
            total = 0
            for j in range(start, end):
                total += raw[j]
            scores[i] = total / <float>(end - start)
        else:
            mn = MAX_FLOAT
            for j in range(start, end):
                if raw[j] < mn:
                    mn = raw[j]
            scores[i] = mn


cdef void score_candidates(Ctx* c, vector[uint32_t]& first, vector[DiffList]& diffs,
                           vector[float]& scores) noexcept nogil:
    """StatisticsBasedScorer::score: the score of the 1-bests ``first`` then of each list of
    changes in ``diffs`` applied in turn, each part of an interpolation regularised over
    its own window, then weighted and summed in order (InterpolatedScorer::score)."""
    cdef vector[float] totals = vector[float](c.n_stats, 0.0)
    cdef vector[uint32_t] last = first
    cdef vector[vector[float]] part = vector[vector[float]](c.n_sub)
    cdef Py_ssize_t i, j, k, sid, nid, q
    cdef const float* a
    cdef const float* b
    cdef int d
    scores.clear()
    for i in range(c.S):
        a = c.stats + (c.offsets[i] + first[i]) * c.n_stats
        for k in range(c.n_stats):
            totals[k] += a[k]
    for q in range(c.n_sub):
        part[q].push_back(calc_score(c.sub_kind[q], totals.data() + c.sub_col0[q]))
    for i in range(<Py_ssize_t>diffs.size()):
        for j in range(<Py_ssize_t>diffs[i].size()):
            sid = diffs[i][j].first
            nid = diffs[i][j].second
            a = c.stats + (c.offsets[sid] + nid) * c.n_stats
            b = c.stats + (c.offsets[sid] + last[sid]) * c.n_stats
            for k in range(c.n_stats):
                d = <int>(a[k] - b[k])         # Moses keeps the difference as an int
                totals[k] += <float>d
            last[sid] = nid
        for q in range(c.n_sub):
            part[q].push_back(calc_score(c.sub_kind[q], totals.data() + c.sub_col0[q]))
    for q in range(c.n_sub):
        regularise(c, part[q])
    if not c.interpolated:
        scores.swap(part[0])
        return
    for i in range(<Py_ssize_t>part[0].size()):
        scores.push_back(c.sub_weight[0] * part[0][i])
    for q in range(1, c.n_sub):
        for i in range(<Py_ssize_t>part[q].size()):
            scores[i] += c.sub_weight[q] * part[q][i]


cdef float stat_score(Ctx* c, const float* p) noexcept nogil:
    """Optimizer::GetStatScore: the score of the 1-bests under p (first maximum wins)."""
    cdef vector[uint32_t] bests
    cdef vector[DiffList] none
    cdef vector[float] scores
    cdef Py_ssize_t s, j, n
    cdef float best, cur
    cdef uint32_t idx
    for s in range(c.S):
        best = MIN_FLOAT
        idx = 0
        n = c.offsets[s + 1] - c.offsets[s]
        for j in range(n):
            cur = model_score(c, p, c.feats + (c.offsets[s] + j) * c.pdim)
            if cur > best:
                best = cur
                idx = j
        bests.push_back(idx)
    score_candidates(c, bests, none, scores)
    return scores[0]


cdef inline float intersect(float m1, float b1, float m2, float b2) noexcept nogil:
    cdef float x = (b2 - b1) / (m1 - m2)
    if not isfinite(x):
        x = MAX_FLOAT
    return x


cdef ThresholdMap.iterator add_threshold(ThresholdMap& tm, float x, Diff d) noexcept nogil:
    """AddThreshold: a new threshold, or one more change at an existing one (replacing the
    sentence's last change there)."""
    cdef ThresholdMap.iterator it = tm.find(x)
    cdef DiffList one
    if it != tm.end():
        if deref_back(it).first == d.first:
            set_back(it, d)
        else:
            push(it, d)
        return it
    one.push_back(d)
    return tm.insert(pair[float, DiffList](x, one)).first


# small helpers that write through it->second
cdef inline Diff deref_back(ThresholdMap.iterator it) noexcept nogil:
    return deref(it).second.back()


cdef inline void set_back(ThresholdMap.iterator it, Diff d) noexcept nogil:
    # Moses assigns it->second.back(); an empty list (never seen) gets the change appended
    cdef DiffList* v = &deref(it).second
    if v.size() == 0:
        v.push_back(d)
    else:
        v[0][v.size() - 1] = d


cdef inline void push(ThresholdMap.iterator it, Diff d) noexcept nogil:
    deref(it).second.push_back(d)


cdef inline void append_all(ThresholdMap.iterator to, ThresholdMap.iterator frm) noexcept nogil:
    cdef DiffList* v = &deref(to).second
    cdef DiffList* w = &deref(frm).second
    cdef size_t i
    for i in range(w.size()):
        v.push_back(w[0][i])


cdef float line_optimize(Ctx* c, const float* origin, const float* direction, float* bestpoint,
                         vector[pair[float, uint32_t]]& grad, vector[float]& f0) noexcept nogil:
    """LineOptimize (header comment): the best score on origin + x * direction; writes the
    point into bestpoint (which may be origin)."""
    cdef ThresholdMap tm
    cdef ThresholdMap.iterator prev, tit, thrit
    cdef vector[uint32_t] first
    cdef vector[DiffList] diffs
    cdef vector[float] scores, keys
    cdef Py_ssize_t S, n, j, p, q, lm, sc, k, nk
    cdef float smallest, m, b, leftmostx, cur, bestscore, bestx, leftx, rightx
    cdef float min_int = <float>0.0001
    cdef const float* row
    cdef Diff newd
    cdef DiffList kept
    cdef bint valid
    cdef float rp
    tm[MIN_FLOAT] = DiffList()
    for S in range(c.S):
        prev = tm.begin()
        n = c.offsets[S + 1] - c.offsets[S]
        grad.clear()
        f0.resize(n)
        for j in range(n):
            row = c.feats + (c.offsets[S] + j) * c.pdim
            grad.push_back(pair[float, uint32_t](model_score(c, direction, row, c.slopes_with_fixed), j))
            f0[j] = model_score(c, origin, row)
        # a multimap keeps equal slopes in insertion (hypothesis) order: sort by (slope, j)
        sort(grad.begin(), grad.end())
        smallest = grad[0].first
        p = 0
        q = 1
        while q < n and grad[q].first == smallest:
            if f0[grad[q].second] > f0[grad[p].second]:
                p = q
            q += 1
        first.push_back(grad[p].second)
        while p < n:
            lm = p
            m = grad[p].first
            b = f0[grad[p].second]
            leftmostx = MAX_FLOAT
            for q in range(p + 1, n):
                if m != grad[q].first:
                    cur = intersect(m, b, grad[q].first, f0[grad[q].second])
                    if cur <= leftmostx:
                        leftmostx = cur
                        lm = q
            if lm == p:
                break
            newd = Diff(S, grad[lm].second)
            if leftmostx - deref(prev).first < min_int:
                tit = tm.find(leftmostx)
                if tit == prev:
                    set_back(prev, newd)
                elif tit == tm.end():
                    kept = deref(prev).second
                    tm[leftmostx] = kept
                    tm.erase(prev)
                    prev = tm.find(leftmostx)
                    set_back(prev, newd)
                else:
                    append_all(tit, prev)
                    set_back(tit, newd)
                    tm.erase(prev)
                    prev = tit
            else:
                prev = add_threshold(tm, leftmostx, newd)
            p = lm
    thrit = tm.begin()
    nk = tm.size()
    # the first threshold stands for x = -inf and the first 1-bests; the others' changes
    while thrit != tm.end():
        keys.push_back(deref(thrit).first)
        if thrit != tm.begin():
            diffs.push_back(deref(thrit).second)
        inc(thrit)
    score_candidates(c, first, diffs, scores)
    bestscore = MIN_FLOAT
    bestx = MIN_FLOAT
    for sc in range(nk):
        valid = True
        if c.positive != NULL:
            for k in range(c.dim):
                rp = origin[k] + direction[k] * keys[sc]
                if c.positive[k] and rp <= 0.0:
                    valid = False
        if valid and scores[sc] > bestscore:
            bestscore = scores[sc]
            leftx = keys[sc]
            if sc == 0:
                leftx = MIN_FLOAT
            rightx = keys[sc + 1] if sc + 1 < nk else MAX_FLOAT
            if leftx == MIN_FLOAT:
                bestx = rightx - <float>1000
            elif rightx == MAX_FLOAT:
                bestx = <float>(<double>leftx + 0.1)
            else:
                bestx = <float>(0.5 * <double>(rightx + leftx))
    if fabsf(bestx) < 0.00015:
        bestx = 0.0
    for k in range(c.dim):
        bestpoint[k] = direction[k] * bestx + origin[k]
    return bestscore


cdef void randomize(Ctx* c, float* p) noexcept nogil:
    """Point::Randomize: each coordinate uniform in [min, max] (float32, Moses's draws)."""
    cdef Py_ssize_t i
    for i in range(c.dim):
        p[i] = glibc_rand_incl_float(&c.rng, c.mins[i], c.maxs[i])


cdef float run_task(Ctx* c, float* P, int opt_type, Py_ssize_t nrandom) noexcept nogil:
    """Optimizer::Run on the point P (updated in place); returns the task's score."""
    cdef vector[float] direction = vector[float](c.dim, 0.0)
    cdef vector[float] linebest = vector[float](c.dim, 0.0)
    cdef vector[float] best = vector[float](c.dim, 0.0)
    cdef vector[pair[float, uint32_t]] grad
    cdef vector[float] f0
    cdef float pscore, prevscore, bestscore, curscore, score
    cdef Py_ssize_t d, i, nrun_no_change
    pscore = stat_score(c, P)
    if opt_type == 2:
        randomize(c, P)
        return stat_score(c, P)
    if opt_type == 1:
        prevscore = pscore
        nrun_no_change = 0
        while nrun_no_change < nrandom:
            randomize(c, direction.data())
            score = line_optimize(c, P, direction.data(), P, grad, f0)
            if score - prevscore > KEPS:
                nrun_no_change = 0
            prevscore = score
            nrun_no_change += 1        # Moses's for-loop increment, after a reset too
        return prevscore
    prevscore = 0
    bestscore = MIN_FLOAT
    if pscore > bestscore:
        bestscore = pscore
        for i in range(c.dim):
            best[i] = P[i]
    while True:
        prevscore = bestscore
        for d in range(c.dim + nrandom):
            if d < c.dim:
                for i in range(c.dim):
                    direction[i] = 0.0
                direction[d] = 1.0
            else:
                randomize(c, direction.data())
            curscore = line_optimize(c, P, direction.data(), linebest.data(), grad, f0)
            if curscore > bestscore:
                bestscore = curscore
                best = linebest
        for i in range(c.dim):
            P[i] = best[i]
        if not (bestscore - prevscore > KEPS):
            break
    return bestscore


def moses_mert(const float[:, ::1] feats, const float[:, ::1] stats, const int64_t[::1] offsets,
               const float[:, ::1] starts, Py_ssize_t ntry, const float[::1] mins, const float[::1] maxs,
               const int32_t[::1] opt_idx, const int32_t[::1] fixed_idx, const float[::1] fixed_w,
               positive, int opt_type, Py_ssize_t nrandom, seed, int scorer=0, int reg_type=0,
               Py_ssize_t reg_window=0, bint slopes_with_fixed=True, parts=None, Py_ssize_t shard_count=0,
               float shard_size=0):
    """Moses's mert tasks (header comment), one per start point, run in order.

    feats float32 [n, pdim] and stats float32 [n, k]: the de-duplicated hypotheses, sentence
    s = rows offsets[s] .. offsets[s + 1] - 1 (int64 [S + 1], every sentence non-empty);
    starts float32 [m, dim]: the given start points (projected on the optimised features);
    ntry more start points are drawn within mins/maxs (float32 [dim]) before any task runs.
    opt_idx int32 [dim]: the optimised features (all features in order when dim == pdim);
    fixed_idx int32 / fixed_w float32: the other features, ascending, with their weights.
    positive: None or uint8 [dim] (1: the weight must stay > 0). opt_type: OPT_*; nrandom:
    -m; seed: srand's (mod 2**32); scorer: SCORER_*; reg_type/reg_window: REG_* and the
    window of --scconfig regtype/regwin; slopes_with_fixed: Moses's slopes (True) or the
    fixed ones (header comment); parts: None, or an interpolation (InterpolatedScorer) as
    (kinds int32 [m], first statistic of each int32 [m], weights float32 [m]), whose
    statistics must be those Moses's parts hold (mert.cpp hands them over before it
    removes duplicates); shard_count > 0: the tasks run on each of that many shards of the
    sentences (--shard-count, --shard-size; drawn after the start points). Returns
    (scores float32 [shards, m + ntry], points float32 [shards, m + ntry, dim]) in task
    order (one shard without sharding).
    """
    cdef Ctx c
    cdef Py_ssize_t m = starts.shape[0], t, i, S = offsets.shape[0] - 1
    cdef Py_ssize_t dim = opt_idx.shape[0], n_tasks = m + ntry
    cdef const uint8_t[::1] pos
    if S < 1:
        raise ValueError("no sentences")
    for t in range(S):
        if offsets[t + 1] <= offsets[t]:
            raise ValueError(f"sentence {t} has no hypotheses")
    if starts.shape[1] != dim or mins.shape[0] != dim or maxs.shape[0] != dim:
        raise ValueError("start points, mins and maxs must have dim values")
    if fixed_idx.shape[0] != fixed_w.shape[0]:
        raise ValueError("fixed_idx and fixed_w differ in length")
    if stats.shape[0] != feats.shape[0] or offsets[S] != feats.shape[0]:
        raise ValueError("feats, stats and offsets disagree")
    c.feats = &feats[0, 0]
    c.pdim = feats.shape[1]
    c.stats = &stats[0, 0]
    c.n_stats = stats.shape[1]
    c.offsets = &offsets[0]
    c.S = S
    c.dim = dim
    c.optimize_all = fixed_idx.shape[0] == 0
    c.opt_idx = &opt_idx[0] if dim else NULL
    c.fixed_idx = &fixed_idx[0] if fixed_idx.shape[0] else NULL
    c.fixed_w = &fixed_w[0] if fixed_idx.shape[0] else NULL
    c.n_fixed = fixed_idx.shape[0]
    c.positive = NULL
    if positive is not None:
        pos = positive
        if pos.shape[0] != dim:
            raise ValueError("positive must have dim values")
        c.positive = &pos[0] if dim else NULL
    c.mins = &mins[0] if dim else NULL
    c.maxs = &maxs[0] if dim else NULL
    cdef int32_t one_kind = scorer, one_col0 = 0
    cdef float one_weight = 1
    cdef const int32_t[::1] kinds, col0
    cdef const float[::1] pw
    if parts is None:
        c.n_sub, c.sub_kind, c.sub_col0, c.sub_weight, c.interpolated = 1, &one_kind, &one_col0, &one_weight, False
    else:
        kinds, col0, pw = parts
        if kinds.shape[0] < 1 or col0.shape[0] != kinds.shape[0] or pw.shape[0] != kinds.shape[0]:
            raise ValueError("parts: kinds, first statistics and weights of one length >= 1")
        c.n_sub, c.sub_kind, c.sub_col0, c.sub_weight, c.interpolated = kinds.shape[0], &kinds[0], &col0[0], &pw[0], True
    c.reg_type = reg_type
    c.reg_window = reg_window
    c.slopes_with_fixed = slopes_with_fixed
    if parts is None and scorer == 0 and c.n_stats != 9:
        raise ValueError("BLEU statistics have 9 columns")
    glibc_srand(&c.rng, <uint32_t>(int(seed) & 0xFFFFFFFF))
    starts_all = np.empty((n_tasks, dim), dtype=np.float32)
    cdef float[:, ::1] P0 = starts_all
    with nogil:
        for t in range(m):
            for i in range(dim):
                P0[t, i] = starts[t, i]
        for t in range(m, n_tasks):
            for i in range(dim):
                P0[t, i] = starts[0, i]
            randomize(&c, &P0[t, 0])
    shard_rows = _shards(&c, offsets, shard_count, shard_size) if shard_count > 0 else [None]
    points = np.empty((len(shard_rows), n_tasks, dim), dtype=np.float32)
    scores = np.empty((len(shard_rows), n_tasks), dtype=np.float32)
    cdef float[:, :, ::1] P = points
    cdef float[:, ::1] sc = scores
    cdef const float[:, ::1] sh_feats
    cdef const float[:, ::1] sh_stats
    cdef const int64_t[::1] sh_off
    cdef Py_ssize_t h
    for h, picked in enumerate(shard_rows):
        if picked is not None:
            # this shard's sentences (Data::createShards): its own rows and sentence offsets
            rows, sh_offsets = picked
            sh_feats = np.ascontiguousarray(np.asarray(feats)[rows])
            sh_stats = np.ascontiguousarray(np.asarray(stats)[rows])
            sh_off = sh_offsets
            c.feats, c.stats, c.offsets, c.S = &sh_feats[0, 0], &sh_stats[0, 0], &sh_off[0], sh_off.shape[0] - 1
        with nogil:
            for t in range(n_tasks):
                for i in range(dim):
                    P[h, t, i] = P0[t, i]       # every shard's tasks start from the same points
                sc[h, t] = run_task(&c, &P[h, t, 0], opt_type, nrandom)
    return scores, points


cdef list _shards(Ctx* c, const int64_t[::1] offsets, Py_ssize_t shard_count, float shard_size):
    """Data::createShards: per shard, the sentences it holds — contiguous ranges
    (shard_size 0) or floor(shard_size * S + 0.5) draws of rand() % S (float32 sizes, as
    Moses) — as (rows int64, offsets int64): a sentence drawn again gets its rows appended
    to its first place (FeatureData::add merges arrays of one sentence)."""
    cdef Py_ssize_t S = offsets.shape[0] - 1, h, i, n_draw
    cdef float size = shard_size * <float>S
    cdef float coeff = <float>S / <float>shard_count
    cdef size_t first, last
    out = []
    starts = np.asarray(offsets)
    for h in range(shard_count):
        if size == 0:
            first = <size_t>floor(0.5 + <double>(<float>h * coeff))
            last = <size_t>floor(0.5 + <double>(<float>(h + 1) * coeff))
            picked = list(range(first, last))
        else:
            n_draw = <Py_ssize_t>floor(<double>size + 0.5)
            picked = [int(glibc_rand(&c.rng) % <uint32_t>S) for i in range(n_draw)]
        order: dict = {}
        for sid in picked:
            order.setdefault(sid, []).append(sid)      # repeats merge into the first place
        pieces = [np.arange(starts[sid], starts[sid + 1]) for group in order.values() for sid in group]
        sizes = [sum(int(starts[sid + 1] - starts[sid]) for sid in group) for group in order.values()]
        rows = np.concatenate(pieces).astype(np.int64) if pieces else np.zeros(0, np.int64)
        sh_off = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        if len(sh_off) < 2:
            raise ValueError(f"shard {h} holds no sentence")
        out.append((rows, sh_off))
    return out


def moses_dedup(const float[:, ::1] feats, const float[:, ::1] stats, const int64_t[::1] offsets):
    """Data::removeDuplicates: per sentence, a row equal to an earlier kept one in dense
    features and statistics is swapped with the sentence's last live row and dropped (so
    the kept rows are reordered as Moses reorders them). Rows are looked up by the double
    sum of their features. Returns (rows int64 [n_kept] in Moses's order, offsets int64
    [S + 1])."""
    cdef Py_ssize_t S = offsets.shape[0] - 1, s, n, kk, l, jj, D = feats.shape[1], K = stats.shape[1], x
    cdef int64_t k, end_pos
    cdef double total
    cdef cmap[double, vector[int64_t]] lookup
    cdef vector[int64_t] pos
    cdef vector[int64_t]* lst
    cdef bint same
    cdef int64_t tmp
    out_rows = np.empty(offsets[S] if S >= 0 else 0, dtype=np.int64)
    out_off = np.zeros(S + 1, dtype=np.int64)
    cdef int64_t[::1] orow = out_rows, ooff = out_off
    cdef Py_ssize_t w = 0
    with nogil:
        for s in range(S):
            n = offsets[s + 1] - offsets[s]
            pos.resize(n)
            for x in range(n):
                pos[x] = offsets[s] + x
            lookup.clear()
            end_pos = n - 1
            k = 0
            while k <= end_pos:
                total = 0.0
                for x in range(D):
                    total += feats[pos[k], x]
                if lookup.count(total):
                    lst = &lookup[total]
                    l = 0
                    while l < <Py_ssize_t>lst.size():
                        jj = lst[0][l]
                        same = True
                        for x in range(D):
                            if feats[pos[k], x] != feats[pos[jj], x]:
                                same = False
                                break
                        if same:
                            for x in range(K):
                                if stats[pos[k], x] != stats[pos[jj], x]:
                                    same = False
                                    break
                        if same:
                            if k < end_pos:
                                tmp = pos[k]
                                pos[k] = pos[end_pos]
                                pos[end_pos] = tmp
                                k -= 1
                            end_pos -= 1
                            break
                        l += 1
                    if l == <Py_ssize_t>lst.size():
                        lst.push_back(k)
                else:
                    lookup[total].push_back(k)
                k += 1
            for x in range(end_pos + 1):
                orow[w] = pos[x]
                w += 1
            ooff[s + 1] = w
    return out_rows[:w].copy(), out_off


def merge_sparse(const int64_t[::1] indptr, const int32_t[::1] ids, const float[::1] values,
                 const int64_t[::1] place, const float[::1] weights):
    """Moses's merged sparse feature (mert -p): per row, the float32 sum of weight x value
    over the row's sparse features that have a weight, taken in the weights file's order
    (``place[id]``: that order, -1 for no weight; ``weights`` float32 in file order).
    indptr int64 [n + 1], ids int32, values float32: the rows' sparse CSR. float32 [n]."""
    cdef Py_ssize_t n = indptr.shape[0] - 1, r, a, b, i, j, m
    cdef vector[pair[int64_t, float]] items
    cdef float total
    out = np.zeros(max(n, 0), dtype=np.float32)
    cdef float[::1] o = out
    with nogil:
        for r in range(n):
            items.clear()
            for a in range(indptr[r], indptr[r + 1]):
                if place[ids[a]] >= 0:
                    items.push_back(pair[int64_t, float](place[ids[a]], values[a]))
            sort(items.begin(), items.end())
            total = 0.0
            for i in range(<Py_ssize_t>items.size()):
                total += weights[items[i].first] * items[i].second
            o[r] = total
    return out
