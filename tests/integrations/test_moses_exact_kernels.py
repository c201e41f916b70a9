"""The Moses-exact kernels of ``mert`` and ``pro`` (pyx/_moses_mert.pyx, pyx/_moses_pro.pyx,
pyx/_glibc_rand.pxi) against their slow Python ports (tests/reference/moses_mert_reference.py),
draw for draw and bit for bit, on random inputs."""

from __future__ import annotations

import ctypes
import ctypes.util

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from mtplug._ext import _moses_mert, _moses_pro
from mtplug.integrations.moses.moses_random import GlibcRand
from tests.reference import moses_mert_reference as ref

SEEDS = st.integers(min_value=-(2**31), max_value=2**32 - 1)


@given(seed=SEEDS)
@settings(max_examples=60, deadline=None)
def test_glibc_rand_kernel_is_the_python_reference(seed):
    want = GlibcRand(seed)
    got = _moses_pro.GlibcRandom(seed).draws(700)
    assert got.tolist() == [want.next() for _ in range(700)]


def test_glibc_rand_is_the_c_librarys_where_that_is_glibc():
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    if not hasattr(libc, "gnu_get_libc_version"):
        pytest.skip("the C library is not glibc")
    for seed in (0, 1, 2, 1000, 2**31 + 5):
        libc.srand(ctypes.c_uint(seed & 0xFFFFFFFF))
        want = [libc.rand() for _ in range(2000)]
        assert _moses_pro.GlibcRandom(seed).draws(2000).tolist() == want


def _bleu_stats(draw, n):
    rows = []
    for _ in range(n):
        length = draw(st.integers(0, 30))
        row, prev = [], length
        for k in range(4):
            total = max(0, length - k)
            m = draw(st.integers(0, min(total, prev)))
            prev = m
            row += [m, total]
        rows.append(row + [draw(st.integers(1, 30))])
    return np.array(rows, dtype=np.int32).reshape(n, 9)


@st.composite
def bleu_rows(draw, max_rows=40):
    return _bleu_stats(draw, draw(st.integers(1, max_rows)))


@given(stats=bleu_rows(), smooth_bp=st.booleans())
@settings(max_examples=60, deadline=None)
def test_sentence_bleu_kernel_is_the_reference(stats, smooth_bp):
    got = _moses_pro.smoothed_sentence_bleu(stats, 1.0, smooth_bp)
    want = ref.smoothed_sentence_bleu(stats, 1.0, smooth_bp)
    assert got.view(np.uint32).tolist() == want.view(np.uint32).tolist()


@st.composite
def pro_problem(draw):
    sizes = draw(st.lists(st.integers(1, 12), min_size=1, max_size=6))
    n = sum(sizes)
    stats = _bleu_stats(draw, n)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    rows = np.array(draw(st.permutations(list(range(n)))), dtype=np.int64)     # any order of rows
    return stats, rows, offsets


@given(problem=pro_problem(), seed=SEEDS, gamma=st.integers(0, 300), xi=st.integers(0, 30),
       beta=st.sampled_from([0.0, 0.05, 0.2]))
@settings(max_examples=60, deadline=None)
def test_pro_sampler_kernel_is_the_reference(problem, seed, gamma, xi, beta):
    stats, rows, offsets = problem
    bleu = ref.smoothed_sentence_bleu(stats)
    got = _moses_pro.sample_moses_pairs(_moses_pro.GlibcRandom(seed), bleu, rows, offsets, gamma, xi, beta)
    want = ref.sample_moses_pairs(GlibcRand(seed), bleu, rows, offsets, gamma, xi, beta)
    assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist()


def test_pro_sampler_refuses_an_empty_sentence():
    with pytest.raises(ValueError, match="sentence 1 has no hypotheses"):
        _moses_pro.sample_moses_pairs(_moses_pro.GlibcRandom(1), np.zeros(2, np.float32), np.arange(2),
                                      np.array([0, 2, 2]))


@st.composite
def mert_problem(draw, scorer=None):
    """A small de-duplicable store: rows on a coarse grid (ties and repeats), statistics
    of the chosen scorer, start point and ranges."""
    scorer = draw(st.sampled_from([0, 1, 2, 3, 4])) if scorer is None else scorer      # 4: BLEU,TER
    dim = draw(st.integers(1, 3))
    sizes = draw(st.lists(st.integers(1, 6), min_size=1, max_size=5))
    n = sum(sizes)
    grid = st.sampled_from([-2.0, -1.0, -0.5, 0.0, 0.25, 1.0, 1.5, 3.0])
    feats = np.array([[draw(grid) for _ in range(dim)] for _ in range(n)], dtype=np.float32).reshape(n, dim)
    if scorer == 0:
        stats = _bleu_stats(draw, n).astype(np.float32)
    elif scorer == 4:
        ter = np.array([[draw(st.integers(0, 20)) for _ in range(3)] for _ in range(n)], dtype=np.float32)
        stats = np.ascontiguousarray(np.column_stack([_bleu_stats(draw, n).astype(np.float32), ter.reshape(n, 3)]))
    else:
        width = {1: 3, 2: 3, 3: 2}[scorer]
        stats = np.array([[draw(st.integers(0, 20)) for _ in range(width)] for _ in range(n)],
                         dtype=np.float32).reshape(n, width)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    start = np.array([draw(st.sampled_from([-1.0, 0.3, 0.5, 1.0])) for _ in range(dim)], dtype=np.float32)
    return scorer, feats, stats, offsets, start


@given(problem=mert_problem())
@settings(max_examples=40, deadline=None)
def test_dedup_kernel_is_the_reference(problem):
    _, feats, stats, offsets, _ = problem
    got = _moses_mert.moses_dedup(feats, stats, offsets)
    want = ref.moses_dedup(feats, stats, offsets)
    assert got[0].tolist() == want[0].tolist() and got[1].tolist() == want[1].tolist()


@given(problem=mert_problem(), seed=SEEDS, opt_type=st.sampled_from([0, 1, 2]), nrandom=st.integers(0, 3),
       ntry=st.integers(0, 2), fix=st.booleans(), positive=st.booleans(), reg=st.sampled_from([(0, 0), (1, 1), (2, 2)]),
       moses_slopes=st.booleans())
@settings(max_examples=60, deadline=None)
def test_mert_kernel_is_the_reference(problem, seed, opt_type, nrandom, ntry, fix, positive, reg, moses_slopes):
    scorer, feats, stats, offsets, start = problem
    if fix and opt_type == 1:
        moses_slopes = False      # Moses's slopes can make random-direction search go on for ever
    rows, offs = _moses_mert.moses_dedup(feats, stats, offsets)
    feats, stats = np.ascontiguousarray(feats[rows]), np.ascontiguousarray(stats[rows])
    pdim = feats.shape[1]
    if fix and pdim > 1:
        opt_idx = np.arange(1, pdim, dtype=np.int32)         # feature 0 stays at its start value
        fixed_idx = np.array([0], dtype=np.int32)
    else:
        opt_idx = np.arange(pdim, dtype=np.int32)
        fixed_idx = np.zeros(0, dtype=np.int32)
    fixed_w = start[fixed_idx].astype(np.float32)
    dim = len(opt_idx)
    starts = np.ascontiguousarray(start[opt_idx].reshape(1, dim))
    mins, maxs = np.full(dim, -1, np.float32), np.full(dim, 1, np.float32)
    pos = np.array([1] + [0] * (dim - 1), dtype=np.uint8) if positive else None
    parts = None
    if scorer == 4:
        parts = (np.array([0, 1], np.int32), np.array([0, 9], np.int32), np.array([0.6, 0.4], np.float32))
        scorer = 0
    args = (feats, stats, offs, starts, ntry, mins, maxs, opt_idx, fixed_idx, fixed_w, pos, opt_type, nrandom, seed,
            scorer, *reg, moses_slopes, parts)
    got = _moses_mert.moses_mert(*args)
    want = ref.moses_mert(*args)
    assert got[0].shape[0] == 1         # one shard
    assert got[0][0].view(np.uint32).tolist() == want[0].view(np.uint32).tolist()
    assert got[1][0].view(np.uint32).tolist() == want[1].view(np.uint32).tolist()


@given(data=st.data())
@settings(max_examples=40, deadline=None)
def test_merge_sparse_kernel_sums_in_the_weights_order(data):
    n_ids = 6
    n = data.draw(st.integers(1, 8))
    rows = [sorted(data.draw(st.sets(st.integers(0, n_ids - 1), max_size=4))) for _ in range(n)]
    indptr = np.concatenate([[0], np.cumsum([len(r) for r in rows])]).astype(np.int64)
    ids = np.array([i for r in rows for i in r], dtype=np.int32)
    values = np.array([data.draw(st.floats(-5, 5, width=32)) for _ in ids], dtype=np.float32)
    order = data.draw(st.permutations(list(range(n_ids))))[: data.draw(st.integers(0, n_ids))]
    place = np.full(n_ids, -1, dtype=np.int64)
    for k, i in enumerate(order):
        place[i] = k
    weights = np.array([data.draw(st.floats(-3, 3, width=32)) for _ in order], dtype=np.float32)
    got = _moses_mert.merge_sparse(indptr, ids, values, place, weights)
    for r in range(n):
        entries = sorted((place[ids[a]], values[a]) for a in range(indptr[r], indptr[r + 1]) if place[ids[a]] >= 0)
        total = np.float32(0)
        for k, v in entries:
            total = np.float32(total + np.float32(weights[k] * v))
        assert got[r].view(np.uint32) == total.view(np.uint32)


def _true_score(folder, weights):
    """The BLEU of ``weights`` (float32 [D]) on a golden case's run1 files: 1-bests as
    Moses's Get1bests picks them on the de-duplicated rows (the reference's stat_score)."""
    from mtplug.integrations.moses.moses_mert import read_moses_data

    feats, stats, offsets, _, _ = read_moses_data([str(folder / "run1.features.dat")],
                                                  [str(folder / "run1.scores.dat")], None)
    rows, offs = _moses_mert.moses_dedup(feats, stats, offsets)
    ctx = {"feats": feats[rows], "stats": stats[rows], "offsets": [int(x) for x in offs], "dim": len(weights),
           "opt_idx": list(range(len(weights))), "fixed_idx": [], "fixed_w": [], "scorer": 0, "reg": 0, "window": 0,
           "parts": None}
    return ref.stat_score(ctx, np.asarray(weights, dtype=np.float32))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_fix_slopes_reports_the_score_of_the_weights_it_writes(seed):
    """Moses's -o line search (slopes with the fixed weights' part) reports scores its
    weights do not have; with fix_slopes the reported score is the written weights'."""
    from pathlib import Path

    from mtplug.integrations.moses.moses_mert import moses_mert

    folder = Path(__file__).resolve().parents[1] / "golden" / "moses-mert-pro" / "mert-o-subset"
    files = dict(ffiles=[str(folder / "run1.features.dat")], scfiles=[str(folder / "run1.scores.dat")],
                 init_files=[str(folder / "init.opt")], pdim=5)
    flags = dict(seed=seed, ntry=1, nrandom=0, opt_type="powell", sctype=None, scconfig="", optimize=["LM0_0", "F2_0"],
                 positive=[], sparse_weights=None)
    moses_w, moses_s = moses_mert(**files, **flags)
    fixed_w, fixed_s = moses_mert(**files, **flags, fix_slopes=True)
    assert fixed_s == _true_score(folder, fixed_w)
    assert moses_s > _true_score(folder, moses_w)          # the defect, on this case
    start = np.loadtxt(folder / "init.opt", max_rows=1, dtype=np.float32)
    for w in (moses_w, fixed_w):                           # features left out of -o keep their start
        assert w[[1, 3, 4]].tolist() == start[[1, 3, 4]].tolist()


@given(problem=mert_problem(scorer=0), count=st.integers(1, 3))
@settings(max_examples=30, deadline=None)
def test_contiguous_shards_are_the_runs_on_their_sentences(problem, count):
    """--shard-count without --shard-size: shard h holds sentences floor(0.5 + h * S / k)
    onwards; with no random draws in the tasks (powell, -m 0) each shard's tasks are the
    tasks run on those sentences alone."""
    _, feats, stats, offsets, start = problem
    S = len(offsets) - 1
    assume(count <= S)
    dim = feats.shape[1]
    common = (np.ascontiguousarray(start.reshape(1, dim)), 0, np.full(dim, -1, np.float32), np.full(dim, 1, np.float32),
              np.arange(dim, dtype=np.int32), np.zeros(0, np.int32), np.zeros(0, np.float32), None, 0, 0, 1)
    scores, points = _moses_mert.moses_mert(feats, stats, offsets, *common, shard_count=count)
    assert scores.shape == (count, 1)
    coeff = np.float32(S) / np.float32(count)
    for h in range(count):
        lo = int(np.floor(0.5 + float(np.float32(h) * coeff)))
        hi = int(np.floor(0.5 + float(np.float32(h + 1) * coeff)))
        sub = slice(int(offsets[lo]), int(offsets[hi]))
        one = _moses_mert.moses_mert(np.ascontiguousarray(feats[sub]), np.ascontiguousarray(stats[sub]),
                                     (offsets[lo: hi + 1] - offsets[lo]).astype(np.int64), *common)
        assert scores[h].view(np.uint32).tolist() == one[0][0].view(np.uint32).tolist()
        assert points[h].view(np.uint32).tolist() == one[1][0].view(np.uint32).tolist()
