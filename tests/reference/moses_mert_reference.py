"""Slow, obvious Python ports of the Moses-exact kernels (pyx/_moses_mert.pyx and
pyx/_moses_pro.pyx), written from Moses 34452895's mert/Optimizer.cpp, Point.cpp,
Data.cpp and pro.cpp: the references the compiled kernels are tested against.

Every quantity Moses keeps as float32 is a numpy float32 here, each operation rounded as
C++ rounds it; log/exp are libm's logf/expf (Moses calls the float overloads).
"""

from __future__ import annotations

import bisect
import ctypes
import ctypes.util

import numpy as np

from mtplug.integrations.moses.moses_random import GlibcRand

f32 = np.float32
FLT_MAX = f32(np.finfo(np.float32).max)
MIN_FLOAT, MAX_FLOAT = f32(-FLT_MAX), FLT_MAX

_libm = ctypes.CDLL(ctypes.util.find_library("m"))
_libm.logf.restype = _libm.expf.restype = ctypes.c_float
_libm.logf.argtypes = _libm.expf.argtypes = [ctypes.c_float]


def logf(x) -> np.float32:
    return f32(_libm.logf(float(x)))


def expf(x) -> np.float32:
    return f32(_libm.expf(float(x)))


def rand_incl(gen: GlibcRand, lo, hi) -> np.float32:
    """util::rand_incl<float>(lo, hi)."""
    r = f32(gen.next())
    return f32(lo + f32(f32(f32(hi - lo) * r) / f32(2147483647)))


# ------------------------------------------------------------------------------- scorers
def calc_score(scorer: int, t) -> np.float32:
    """calculateScore of float32 totals ``t`` (0 BLEU, 1 TER, 2 PER, 3 CDER/WER)."""
    if scorer == 0:
        logbleu = f32(0)
        for i in range(4):
            if t[2 * i] == 0:
                return f32(0)
            logbleu = f32(logbleu + f32(logf(t[2 * i]) - logf(t[2 * i + 1])))
        logbleu = f32(logbleu / f32(4))
        brevity = f32(1.0 - float(f32(t[8] / t[1])))
        if brevity < 0:
            logbleu = f32(logbleu + brevity)
        return expf(logbleu)
    if scorer == 1:
        denom, num = f32(t[1]), f32(-float(t[0]))
        return f32(1) if denom == 0 else f32(1.0 + float(f32(num / denom)))
    if scorer == 2:
        denom = t[2]
        num = f32(t[0] - max(f32(0), f32(t[1] - t[2])))
        return f32(0) if denom == 0 else f32(num / denom)
    return f32(1) if t[1] == 0 else f32(f32(1) - f32(t[0] / t[1]))


def _regularise(ctx, scores: list) -> list:
    reg, win = ctx["reg"], ctx["window"]
    if reg == 0 or win <= 0:
        return scores
    raw, out = list(scores), list(scores)
    for i in range(len(scores)):
        lo, hi = max(0, i - win), min(len(scores), i + win + 1)
        if reg == 1:
            total = f32(0)
            for j in range(lo, hi):
                total = f32(total + raw[j])
            out[i] = f32(total / f32(hi - lo))
        else:
            out[i] = min([MAX_FLOAT] + raw[lo:hi])
    return out


def score_candidates(ctx, first, diffs) -> list:
    """StatisticsBasedScorer::score (with the regularisation window); an interpolation
    (ctx["parts"]: kinds, first statistics, weights) scores each part on its columns,
    regularises each, then sums weight x score in order."""
    stats, offsets = ctx["stats"], ctx["offsets"]
    parts = ctx["parts"]
    kinds, col0 = ([ctx["scorer"]], [0]) if parts is None else (list(parts[0]), list(parts[1]))
    totals = np.zeros(stats.shape[1], dtype=np.float32)
    for s, j in enumerate(first):
        totals = (totals + stats[offsets[s] + j]).astype(np.float32)
    per = [[calc_score(k, totals[c0:])] for k, c0 in zip(kinds, col0)]
    last = list(first)
    for changes in diffs:
        for sid, nid in changes:
            d = stats[offsets[sid] + nid].astype(np.float32) - stats[offsets[sid] + last[sid]].astype(np.float32)
            totals = (totals + np.trunc(d).astype(np.int64).astype(np.float32)).astype(np.float32)
            last[sid] = nid
        for q, (k, c0) in enumerate(zip(kinds, col0)):
            per[q].append(calc_score(k, totals[c0:]))
    per = [_regularise(ctx, p) for p in per]
    if parts is None:
        return per[0]
    weights = list(parts[2])
    scores = [f32(weights[0] * v) for v in per[0]]
    for q in range(1, len(per)):
        scores = [f32(a + f32(weights[q] * v)) for a, v in zip(scores, per[q])]
    return scores


# ------------------------------------------------------------------------------ optimizer
def model_score(ctx, p, f, with_fixed=True) -> np.float32:
    """Point * FeatureStats: float32 products summed in float64 (``with_fixed`` False:
    without the fixed weights' part)."""
    prod = 0.0
    if not len(ctx["fixed_idx"]):
        for i in range(ctx["dim"]):
            prod += float(f32(p[i] * f[i]))
    else:
        for i in range(ctx["dim"]):
            prod += float(f32(p[i] * f[ctx["opt_idx"][i]]))
        for i, w in zip(ctx["fixed_idx"], ctx["fixed_w"]) if with_fixed else ():
            prod += float(f32(w * f[i]))
    return f32(prod)


def stat_score(ctx, p) -> np.float32:
    bests = []
    for s in range(len(ctx["offsets"]) - 1):
        best, idx = MIN_FLOAT, 0
        for j in range(ctx["offsets"][s + 1] - ctx["offsets"][s]):
            cur = model_score(ctx, p, ctx["feats"][ctx["offsets"][s] + j])
            if cur > best:
                best, idx = cur, j
        bests.append(idx)
    return score_candidates(ctx, bests, [])[0]


def _intersect(m1, b1, m2, b2) -> np.float32:
    with np.errstate(all="ignore"):
        x = f32(f32(b2 - b1) / f32(m1 - m2))
    return x if np.isfinite(x) else MAX_FLOAT


class _SortedMap:
    """std::map<float, list> with the operations LineOptimize uses."""

    def __init__(self):
        self.keys: list = []
        self.vals: dict = {}

    def set(self, k, v):
        if k not in self.vals:
            bisect.insort(self.keys, k)
        self.vals[k] = v

    def erase(self, k):
        self.keys.remove(k)
        del self.vals[k]


def line_optimize(ctx, origin, direction):
    """LineOptimize: (best score, best point)."""
    feats, offsets = ctx["feats"], ctx["offsets"]
    tm = _SortedMap()
    tm.set(MIN_FLOAT, [])
    first = []
    for S in range(len(offsets) - 1):
        prev = tm.keys[0]
        rows = [feats[offsets[S] + j] for j in range(offsets[S + 1] - offsets[S])]
        grad = sorted(((model_score(ctx, direction, r, ctx["slopes_with_fixed"]), j) for j, r in enumerate(rows)), key=lambda t: (t[0], t[1]))
        f0 = [model_score(ctx, origin, r) for r in rows]
        p, q = 0, 1
        while q < len(grad) and grad[q][0] == grad[0][0]:
            if f0[grad[q][1]] > f0[grad[p][1]]:
                p = q
            q += 1
        first.append(grad[p][1])
        while p < len(grad):
            lm, m, b, leftmostx = p, grad[p][0], f0[grad[p][1]], MAX_FLOAT
            for q in range(p + 1, len(grad)):
                if m != grad[q][0]:
                    cur = _intersect(m, b, grad[q][0], f0[grad[q][1]])
                    if cur <= leftmostx:
                        leftmostx, lm = cur, q
            if lm == p:
                break
            newd = (S, grad[lm][1])
            with np.errstate(over="ignore"):
                close = f32(leftmostx - prev) < f32(0.0001)
            if close:
                if leftmostx == prev:
                    tm.vals[prev][-1] = newd
                elif leftmostx not in tm.vals:
                    kept = list(tm.vals[prev])
                    tm.erase(prev)
                    tm.set(leftmostx, kept)
                    prev = leftmostx
                    tm.vals[prev][-1] = newd
                else:
                    tm.vals[leftmostx].extend(tm.vals[prev])
                    tm.vals[leftmostx][-1] = newd
                    tm.erase(prev)
                    prev = leftmostx
            else:
                if leftmostx in tm.vals:
                    lst = tm.vals[leftmostx]
                    if lst[-1][0] == newd[0]:
                        lst[-1] = newd
                    else:
                        lst.append(newd)
                else:
                    tm.set(leftmostx, [newd])
                prev = leftmostx
            p = lm
    keys = list(tm.keys)
    scores = score_candidates(ctx, first, [tm.vals[k] for k in keys[1:]])
    bestscore, bestx = MIN_FLOAT, MIN_FLOAT
    for sc, key in enumerate(keys):
        valid = True
        if ctx["positive"] is not None:
            for k in range(ctx["dim"]):
                if ctx["positive"][k] and f32(origin[k] + f32(direction[k] * key)) <= 0:
                    valid = False
        if valid and scores[sc] > bestscore:
            bestscore = scores[sc]
            leftx = MIN_FLOAT if sc == 0 else key
            rightx = keys[sc + 1] if sc + 1 < len(keys) else MAX_FLOAT
            with np.errstate(over="ignore"):
                if leftx == MIN_FLOAT:
                    bestx = f32(rightx - f32(1000))
                elif rightx == MAX_FLOAT:
                    bestx = f32(float(leftx) + 0.1)
                else:
                    bestx = f32(0.5 * float(f32(rightx + leftx)))
    if abs(float(bestx)) < 0.00015:
        bestx = f32(0)
    with np.errstate(all="ignore"):
        point = np.array([f32(f32(direction[k] * bestx) + origin[k]) for k in range(ctx["dim"])], dtype=np.float32)
    return bestscore, point


def run_task(ctx, gen, P, opt_type: int, nrandom: int):
    """Optimizer::Run: (score, final point)."""
    P = P.copy()
    pscore = stat_score(ctx, P)
    kEPS = f32(0.0001)

    def randomized():
        return np.array([rand_incl(gen, lo, hi) for lo, hi in zip(ctx["mins"], ctx["maxs"])], dtype=np.float32)

    if opt_type == 2:
        P = randomized()
        return stat_score(ctx, P), P
    if opt_type == 1:
        prev, no_change = pscore, 0
        while no_change < nrandom:
            score, P = line_optimize(ctx, P, randomized())
            no_change = 0 if f32(score - prev) > kEPS else no_change
            prev = score
            no_change += 1
        return prev, P
    bestscore, best = MIN_FLOAT, np.zeros(ctx["dim"], dtype=np.float32)
    if pscore > bestscore:
        bestscore, best = pscore, P.copy()
    while True:
        prev = bestscore
        for d in range(ctx["dim"] + nrandom):
            if d < ctx["dim"]:
                direction = np.zeros(ctx["dim"], dtype=np.float32)
                direction[d] = 1
            else:
                direction = randomized()
            cur, linebest = line_optimize(ctx, P, direction)
            if cur > bestscore:
                bestscore, best = cur, linebest
        P = best.copy()
        if not f32(bestscore - prev) > kEPS:
            return bestscore, P


def moses_mert(feats, stats, offsets, starts, ntry, mins, maxs, opt_idx, fixed_idx, fixed_w, positive, opt_type,
               nrandom, seed, scorer=0, reg_type=0, reg_window=0, slopes_with_fixed=True, parts=None):
    """The reference of _moses_mert.moses_mert (same arguments and results)."""
    ctx = {"feats": feats, "stats": stats, "offsets": [int(x) for x in offsets], "dim": len(opt_idx),
           "opt_idx": list(opt_idx), "fixed_idx": list(fixed_idx), "fixed_w": list(fixed_w), "positive": positive,
           "mins": mins, "maxs": maxs, "scorer": scorer, "reg": reg_type, "window": reg_window,
           "slopes_with_fixed": slopes_with_fixed, "parts": parts}
    gen = GlibcRand(seed)
    points = [np.array(s, dtype=np.float32) for s in starts]
    for _ in range(ntry):
        points.append(np.array([rand_incl(gen, lo, hi) for lo, hi in zip(mins, maxs)], dtype=np.float32))
    scores, out = [], []
    for P in points:
        s, p = run_task(ctx, gen, P, opt_type, nrandom)
        scores.append(s)
        out.append(p)
    return np.array(scores, dtype=np.float32), np.array(out, dtype=np.float32).reshape(len(points), len(opt_idx))


def moses_dedup(feats, stats, offsets):
    """Data::removeDuplicates (reference of _moses_mert.moses_dedup)."""
    rows, out_off = [], [0]
    for s in range(len(offsets) - 1):
        pos = list(range(int(offsets[s]), int(offsets[s + 1])))
        lookup: dict = {}
        end, k = len(pos) - 1, 0
        while k <= end:
            total = 0.0
            for v in feats[pos[k]]:
                total += float(v)
            if total in lookup:
                lst = lookup[total]
                for jj in lst:
                    if np.array_equal(feats[pos[k]], feats[pos[jj]]) and np.array_equal(stats[pos[k]], stats[pos[jj]]):
                        if k < end:
                            pos[k], pos[end] = pos[end], pos[k]
                            k -= 1
                        end -= 1
                        break
                else:
                    lst.append(k)
            else:
                lookup[total] = [k]
            k += 1
        rows += pos[: end + 1]
        out_off.append(len(rows))
    return np.array(rows, dtype=np.int64), np.array(out_off, dtype=np.int64)


# ------------------------------------------------------------------------------------ pro
def smoothed_sentence_bleu(stats, smoothing=1.0, smooth_bp=False):
    """smoothedSentenceBleu of each row, float32."""
    out = []
    sm = f32(smoothing)
    for row in stats:
        st = [f32(v) for v in row]
        logbleu = f32(0)
        for j in range(4):
            logbleu = f32(logbleu + f32(logf(f32(st[2 * j] + sm)) - logf(f32(st[2 * j + 1] + sm))))
        logbleu = f32(logbleu / f32(4))
        reflength = f32(st[8] + (sm if smooth_bp else f32(0)))
        with np.errstate(all="ignore"):
            brevity = f32(1.0 - float(f32(reflength / st[1])))
        if brevity < 0:
            logbleu = f32(logbleu + brevity)
        out.append(expf(logbleu))
    return np.array(out, dtype=np.float32)


def sample_moses_pairs(gen: GlibcRand, bleu, rows, offsets, gamma=5000, xi=50, beta=0.05):
    """pro.cpp's sampling loop (reference of _moses_pro.sample_moses_pairs)."""
    better, worse = [], []
    beta = f32(beta)
    for s in range(len(offsets) - 1):
        hyps = rows[offsets[s]: offsets[s + 1]]
        samples, keys = [], []
        for _ in range(gamma):
            a = hyps[gen.next() % len(hyps)]
            b = hyps[gen.next() % len(hyps)]
            diff = f32(bleu[a] - bleu[b])
            if abs(diff) < beta:
                continue
            samples.append((a, b, diff) if diff > 0 else (b, a, f32(-diff)))
            keys.append(f32(1.0 - float(abs(diff))))
        threshold = f32(-1)
        if len(samples) > xi and xi > 0:
            threshold = f32(0.99999 - float(sorted(keys)[xi - 1]))
        kept = 0
        for a, b, d in samples:
            if kept >= xi:
                break
            if d >= threshold:
                better.append(a)
                worse.append(b)
                kept += 1
    return np.array(better, dtype=np.int64), np.array(worse, dtype=np.int64)
