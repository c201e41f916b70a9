"""Moses's ``kbmira --sctype M2SCORER``, step for step: batch k-best MIRA whose hope and
fear come from M2 F_beta against a decaying background, as mosesdecoder's
``mert/kbmira.cpp`` and ``mert/HopeFearDecoder.cpp`` (commit 34452895) do it.

Moses's kbmira is scorer-generic: a hypothesis with statistics x is worth
``Scorer::calculateSentenceLevelBackgroundScore(x, bg)`` = ``calculateScore(x + bg) *
getReferenceLength(x + bg)``; for M2SCORER that is the corpus F_beta of x + bg (P, R as
``M2Scorer::calculateScore``) times its 4th column, the source length (a pseudo-document
of source words, as BLEU's is of reference words). The background ``bg`` starts at
(1, 1, 1, 1) (kbmira.cpp: ``vector<ValType> bg(NumberOfScores(), 1)``) and, after a
sentence whose hope and fear differ and whose hope is worth more than its fear, becomes
``decay * bg + x_hope`` (``x_model`` with ``model_bg``); other sentences leave it.

Per sentence, with s = w.f: hope = first argmax of ``hs*s + g`` (hs = 1; with
``safe_hope``, when 5|g_hope| / |s_hope| < 1 and |s_hope| > 1e-8, chosen again with hs =
5|g_hope| / |s_hope|), fear = first argmax of ``s - g``. When hope != fear and g_hope >
g_fear: diff = f_hope - f_fear, loss = (g_hope - g_fear) - w.diff; if loss > 0, a PA-I
step eta = min(C, loss / |diff|^2) (a step counts even when diff is 0). Averaging as
``MiraWeightVector``: the totals start at the start weights and are brought up to date
lazily, per weight, when it changes and when the average is taken; the average is
totals / steps (the start weights while there is no step). After each pass the average's
1-best is scored (corpus F_beta); the best pass's average is the result, as Moses writes
it (only a pass better than 0 counts: Moses writes no weights if none is).

Everything is single precision where Moses's is (``ValType``, ``ScoreStatsType`` and
the weights are ``float``): scores summed feature by feature in feature order, gains,
background, steps and totals rounded to float32 after each operation, F_beta's P and R
divided in double as M2Scorer does. The pass order is Moses's too: with ``order``
"shuffle" the sentence indexes are shuffled in place by libstdc++'s ``random_shuffle``
(``rand() % (i + 1)``) on glibc's ``rand()`` seeded with ``seed``, once before the
initial evaluation and twice per pass (training, then evaluation), as
``RandomAccessHypPackEnumerator::reset`` does each time. So on the same hypotheses the
weights match Moses's to its 6 printed digits. What differs: Moses's enumerator drops
hypotheses through a defective de-duplication (``operator==`` of ``FeatureDataItem``
compares an item with itself, so items whose hash falls in an occupied bucket are
dropped), mtplug keeps every unique hypothesis; sparse features are summed in mtplug's
feature-id order (Moses's: the order names were first seen), which can change the last
bit of a score.

The pass, the average and the evaluation run in pyx/_kbmira_m2.pyx; :class:`_Reference`
is the same in Python (``kbmira_m2(..., reference=True)``), which the tests compare it
with bit for bit.
"""

from __future__ import annotations

import time

import numpy as np

from .base import Result, unchanged_warnings

F32 = np.float32
BLEU_RATIO = F32(5)


def is_m2(metric) -> bool:
    """Whether ``metric`` is M2SCORER alone (a store of its 4 statistics)."""
    parts = getattr(metric, "parts", None)
    return parts is not None and len(parts) == 1 and parts[0].name == "m2"


def _f_beta(t: np.ndarray, bb: np.float32) -> np.ndarray:
    """float32 [n]: ``M2Scorer::calculateScore`` of each float32 row of ``t`` [n, >=3]."""
    c, pr, g = t[:, 0].astype(np.float64), t[:, 1].astype(np.float64), t[:, 2].astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(pr != 0, c / np.where(pr != 0, pr, 1.0), 1.0).astype(F32)
        r = np.where(g != 0, c / np.where(g != 0, g, 1.0), 1.0).astype(F32)
        denom = (bb * p + r).astype(F32)
        num = (1.0 + float(bb)) * p.astype(np.float64) * r.astype(np.float64)
        f = np.where(denom != 0, num / np.where(denom != 0, denom, F32(1)).astype(np.float64), 0.0)
    return f.astype(F32)


def _libm():
    """glibc's logf and expf (Moses's BleuScorer calls them; NumPy's float32 log may differ
    in the last bit)."""
    import ctypes
    import ctypes.util

    lib = ctypes.CDLL(ctypes.util.find_library("m"))
    for name in ("logf", "expf"):
        getattr(lib, name).restype = ctypes.c_float
        getattr(lib, name).argtypes = [ctypes.c_float]
    return lib.logf, lib.expf


def _bleu(t: np.ndarray) -> np.ndarray:
    """float32 [n]: ``BleuScorer::calculateScore`` of each float32 row of ``t`` [n, 9], one
    float operation at a time (pyx/_kbmira_m2.pyx ``_bleu``)."""
    logf, expf = _libm()
    out = np.zeros(len(t), dtype=F32)
    for r, row in enumerate(t.astype(F32)):
        if (row[0:8:2] == 0).any():
            continue
        logbleu = F32(0)
        for i in range(4):
            logbleu = F32(logbleu + F32(F32(logf(row[2 * i])) - F32(logf(row[2 * i + 1]))))
        logbleu = F32(logbleu * F32(0.25))
        brevity = F32(F32(1) - F32(row[8] / row[1]))
        if brevity < 0:
            logbleu = F32(logbleu + brevity)
        out[r] = F32(expf(logbleu))
    return out


def _gains(stats: np.ndarray, bg: np.ndarray, bb: np.float32, kind: str = "m2") -> np.ndarray:
    """float32 [n]: calculateSentenceLevelBackgroundScore of each row against ``bg``: the
    score of (row + bg) times its reference length (M2: column 3; BLEU: column 8)."""
    t = (stats + bg).astype(F32)
    if kind == "bleu":
        return (_bleu(t) * t[:, 8]).astype(F32)
    return (_f_beta(t, bb) * t[:, 3]).astype(F32)


def _scores(block: np.ndarray, w: np.ndarray) -> np.ndarray:
    """float32 [n]: each row's w.f summed feature by feature in float32 (Moses's
    ``MiraWeightVector::score``)."""
    acc = np.zeros(block.shape[0], dtype=F32)
    for j in range(block.shape[1]):
        acc = (acc + (w[j] * block[:, j]).astype(F32)).astype(F32)
    return acc


def _dot(a: np.ndarray, b: np.ndarray) -> np.float32:
    acc = F32(0)
    for x, y in zip(a.tolist(), b.tolist()):
        acc = F32(acc + F32(F32(x) * F32(y)))
    return acc


def moses_shuffles(seed: int, n: int):
    """Moses's sentence orders: a generator of the index list after each successive
    ``random_shuffle`` (in place, glibc ``rand()`` after ``srand(seed)``)."""
    from ..integrations.moses.moses_random import GlibcRand

    gen = GlibcRand(seed)
    idx = list(range(n))
    while True:
        for i in range(1, n):
            j = gen.next() % (i + 1)
            if i != j:
                idx[i], idx[j] = idx[j], idx[i]
        yield idx


class _Weights:
    """Moses's MiraWeightVector over float32: weights, lazily kept totals, steps."""

    def __init__(self, start: np.ndarray):
        self.w = start.astype(F32)
        self.totals = self.w.copy()
        self.last = np.zeros(len(start), dtype=np.int64)
        self.steps = 0

    def _update(self, i: int, delta: np.float32) -> None:
        self.totals[i] = F32(self.totals[i] + F32(F32(F32(self.steps - self.last[i]) * self.w[i]) + delta))
        self.w[i] = F32(self.w[i] + delta)
        self.last[i] = self.steps

    def step(self, ids: np.ndarray, values: np.ndarray, eta: np.float32) -> None:
        self.steps += 1
        for i, v in zip(ids.tolist(), values.tolist()):
            self._update(i, F32(F32(v) * eta))

    def average(self) -> np.ndarray:
        for i in range(len(self.w)):
            self._update(i, F32(0))
        if self.steps == 0:
            return self.w.copy()
        return (self.totals / F32(self.steps)).astype(F32)


class _Reference:
    """The slow Python version of pyx/_kbmira_m2.pyx (its m2_pass, m2_average and
    m2_evaluate), what the tests compare the kernel with bit for bit."""

    def __init__(self, dense, indptr, sp_ids, sp_vals, stats, offsets, n_dense):
        # per sentence: its feature ids (dense, then the sparse ids its rows use, ascending)
        # and its rows over them (an absent sparse feature adds exactly 0 to a float sum)
        self.n_dense, self.stats, self.blocks = n_dense, stats, []
        for s in range(len(offsets) - 1):
            lo, hi = int(offsets[s]), int(offsets[s + 1])
            used = np.unique(sp_ids[indptr[lo]:indptr[hi]])
            ids = np.concatenate([np.arange(n_dense, dtype=np.int64), used])
            block = np.zeros((hi - lo, len(ids)), dtype=F32)
            present = np.zeros((hi - lo, len(ids)), dtype=bool)
            block[:, :n_dense] = dense[lo:hi]
            col = {int(f): n_dense + k for k, f in enumerate(used.tolist())}
            for r in range(lo, hi):
                for k in range(int(indptr[r]), int(indptr[r + 1])):
                    block[r - lo, col[int(sp_ids[k])]] = sp_vals[k]
                    present[r - lo, col[int(sp_ids[k])]] = True
            self.blocks.append((ids, block, present, stats[lo:hi]))

    def train(self, order, beta, c, decay, model_bg, safe_hope, bg, wv: _Weights, kind: str = "m2") -> float:
        bb, n_dense, total_loss = F32(beta * beta), self.n_dense, F32(0)
        for s in order:
            ids, block, present, st = self.blocks[s]
            sc = _scores(block, wv.w[ids])
            g = _gains(st, bg, bb, kind)
            hs = F32(1)
            fear = int(np.argmax((sc - g).astype(F32)))
            for safe_loop in range(2):
                hope = int(np.argmax(((hs * sc).astype(F32) + g).astype(F32)))
                hope_bleu, hope_model = F32(g[hope] * BLEU_RATIO), sc[hope]
                if safe_hope and safe_loop == 0 and abs(hope_model) > 1e-8 \
                        and F32(abs(hope_bleu) / abs(hope_model)) < hs:
                    hs = F32(abs(hope_bleu) / abs(hope_model))
                else:
                    break
            if hope == fear or not g[hope] > g[fear]:
                continue
            diff = (block[hope] - block[fear]).astype(F32)
            # MiraFeatureVector's operator-: every dense entry; a sparse one where either row
            # has the feature, but not a difference of |d| <= 1e-6 where both have it
            both = present[hope] & present[fear]
            keep = (present[hope] | present[fear]) & (~both | (np.abs(diff) > 1e-6))
            keep[:n_dense] = True
            d_ids, diff = ids[keep], diff[keep]
            loss = F32(F32(g[hope] - g[fear]) - _dot(wv.w[d_ids], diff))
            if loss > 0:
                with np.errstate(divide="ignore"):
                    eta = min(F32(c), F32(loss / _dot(diff, diff)))
                wv.step(d_ids, diff, eta)
                total_loss = F32(total_loss + loss)
            back = int(np.argmax(sc)) if model_bg else hope
            bg[:] = ((bg * F32(decay)).astype(F32) + st[back]).astype(F32)
        return float(total_loss)

    def evaluate(self, w, beta, kind: str = "m2") -> float:
        total = np.zeros(self.stats.shape[1], dtype=F32)
        for ids, block, _, st in self.blocks:
            total = (total + st[int(np.argmax(_scores(block, w[ids])))]).astype(F32)
        if kind == "bleu":
            return float(_bleu(total[None, :])[0])
        return float(_f_beta(total[None, :], F32(F32(beta) * F32(beta)))[0])


def kbmira_m2(corpus, start: np.ndarray, seed: int, *, passes: int = 60, c: float = 0.01, decay: float = 0.999,
              model_bg: bool = False, safe_hope: bool = False, order: str = "shuffle", progress=None,
              reference: bool = False) -> Result:
    """Moses's kbmira on an M2SCORER store (module docstring) from ``start`` (float64
    [n_features]); the result's weights are the best pass's averaged weights (float32
    values as float64), ``score`` and ``info["best_bleu"]`` its F_beta (a fraction, as
    Moses prints it), ``info["bleu_per_pass"]``, ``steps_per_pass``, ``loss_per_pass``
    per pass (the start is evaluated too, as Moses's "Initial BLEU", for its shuffle).
    ``reference``: run the slow Python version instead of the kernel (for the tests)."""
    rows = (corpus.dense, corpus.sparse_indptr, corpus.sparse_ids, corpus.sparse_values, corpus.stats,
            corpus.sent_offsets)
    return moses_kbmira(rows, corpus.n_dense, start, seed, kind="m2", beta=corpus.metric.parts[0].param,
                        passes=passes, c=c, decay=decay, model_bg=model_bg, safe_hope=safe_hope, order=order,
                        progress=progress, reference=reference)


def moses_kbmira(rows, n_dense: int, start: np.ndarray, seed: int, *, kind: str, beta: float = 0.0,
                 passes: int = 60, c: float = 0.01, decay: float = 0.999, model_bg: bool = False,
                 safe_hope: bool = False, order: str = "shuffle", progress=None, reference: bool = False,
                 initial: bool = True, each_sentence=None, on_improved=None) -> Result:
    """Moses's kbmira (module docstring) with ``kind`` "m2" (F_beta, ``beta``) or "bleu" on
    ``rows`` = (dense [n, D], sparse indptr [n + 1], sparse ids (>= D, ascending per row),
    sparse values, statistics [n, k], sentence offsets [S + 1]) from ``start`` (float64
    [F], F above every id). The result as :func:`kbmira_m2`'s. ``on_improved(w)``: called
    with each pass's average (float64 [F]) that beats every earlier pass (Moses writes
    the weights then).
    ``initial``: evaluate the start (Moses's "Initial BLEU"; its shuffle counts);
    ``each_sentence(w)``: called with the current (not averaged) float32 weights after each
    sentence of a pass (Moses's --streaming-out); ``reference``: the slow Python version."""
    from .._ext import _kbmira_m2

    t0 = time.perf_counter()
    beta = F32(beta)
    dense_a, indptr_a, ids_a, vals_a, stats_a, offsets_a = rows
    offsets = np.ascontiguousarray(offsets_a, dtype=np.int64)
    S = len(offsets) - 1
    stats = np.ascontiguousarray(stats_a, dtype=F32)
    dense = np.ascontiguousarray(dense_a, dtype=F32)
    indptr = np.ascontiguousarray(indptr_a, dtype=np.int64)
    sp_ids = np.ascontiguousarray(ids_a, dtype=np.int64)
    sp_vals = np.ascontiguousarray(vals_a, dtype=F32)
    n_features = len(start)
    wv = _Weights(np.asarray(start, dtype=np.float64))
    bg = np.ones(stats.shape[1], dtype=F32)
    orders = moses_shuffles(seed, S) if order == "shuffle" else None
    if reference:
        ref = _Reference(dense, indptr, sp_ids, sp_vals, stats, offsets, n_dense)

        def train(sentences):
            return ref.train(sentences, beta, c, decay, model_bg, safe_hope, bg, wv, kind)

        def evaluate(w):
            return ref.evaluate(w, beta, kind)

        def average():
            return wv.average()
    else:
        state = np.zeros(1, dtype=np.int64)

        def train(sentences):
            state[0] = wv.steps
            sentences = np.asarray(sentences, dtype=np.int64)
            if kind == "bleu":
                loss = _kbmira_m2.bleu_pass(dense, indptr, sp_ids, sp_vals, stats, offsets, sentences, F32(c),
                                            F32(decay), model_bg, safe_hope, bg, wv.w, wv.totals, wv.last, state)
            else:
                loss = _kbmira_m2.m2_pass(dense, indptr, sp_ids, sp_vals, stats, offsets, sentences, beta, F32(c),
                                          F32(decay), model_bg, safe_hope, bg, wv.w, wv.totals, wv.last, state)
            wv.steps = int(state[0])
            return loss

        def evaluate(w):
            if kind == "bleu":
                return _kbmira_m2.bleu_evaluate(dense, indptr, sp_ids, sp_vals, stats, offsets, w)
            return _kbmira_m2.m2_evaluate(dense, indptr, sp_ids, sp_vals, stats, offsets, beta, w)

        def average():
            out = np.empty_like(wv.w)
            _kbmira_m2.m2_average(wv.w, wv.totals, wv.last, wv.steps, out)
            return out

    def next_order():
        return list(next(orders)) if orders is not None else list(range(S))

    def evaluated(w) -> float:
        next_order()       # Moses's Evaluate resets (and so shuffles) the enumerator too
        return evaluate(w)

    def one_pass(sentences) -> float:
        if each_sentence is None:
            return train(sentences)
        total = F32(0)    # the kernel's float sum, one sentence at a time
        for s in sentences:
            total = F32(total + F32(train([s])))
            each_sentence(wv.w)
        return float(total)

    initial_score = evaluated(average()) if initial else None    # its shuffle comes before the first pass
    best_f, best_w, per_pass, steps_per_pass, losses = 0.0, None, [], [], []
    for _ in range(passes):
        before = wv.steps
        losses.append(one_pass(next_order()))
        avg = average()
        f = evaluated(avg)
        per_pass.append(f)
        steps_per_pass.append(wv.steps - before)
        if f > best_f:
            best_f, best_w = f, avg.astype(np.float64)
            if on_improved is not None:
                on_improved(best_w)
        if progress is not None:
            progress(1)
    weights = np.asarray(start, dtype=np.float64).copy() if best_w is None else best_w
    if len(weights) < n_features:
        weights = np.concatenate([weights, np.zeros(n_features - len(weights))])
    info = {"passes": passes, "best_bleu": best_f, "best_pass": int(np.argmax(per_pass)) if per_pass else 0,
            "bleu_per_pass": per_pass, "steps_per_pass": steps_per_pass, "loss_per_pass": losses,
            "background": bg.astype(np.float64), "last_weights": wv.w.astype(np.float64),
            "initial": initial_score, "seconds": time.perf_counter() - t0}
    return Result(weights=weights, score=best_f, seed=seed, info=info,
                  warnings=unchanged_warnings("kbmira", np.asarray(start, dtype=np.float64), weights))
