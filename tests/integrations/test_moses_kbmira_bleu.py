"""Moses's kbmira on BLEU files, replayed (issue 50): the kernels against slow Python
references, bit for bit -- the 16-bucket duplicate check (pyx/_moses_dedup.pyx), the
float32 BLEU pass and evaluation (pyx/_kbmira_m2.pyx), Moses's float BLEU numbers
(pyx/_moses_sbleu.pyx) and glibc's rand() (pyx/_glibc_rand.pyx) -- and the reader's
order of rows and feature names. The real program's outputs are the goldens of
tests/golden/moses-differential (test_moses_differential_goldens.py)."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplug._ext import _glibc_rand, _moses_dedup, _moses_sbleu
from mtplug.integrations.moses.moses_nbest import read_moses_nbest
from mtplug.integrations.moses.moses_random import GlibcRand, rand_mod_many
from mtplug.optimizers.kbmira_m2 import _bleu, _libm, moses_kbmira

F32 = np.float32
MASK = (1 << 64) - 1
M = 0xC6A4A7935BD1E995


# ------------------------------------------------------------------ the duplicate check
def _combine(h: int, k: int) -> int:
    k = (k * M) & MASK
    k ^= k >> 47
    k = (k * M) & MASK
    h ^= k
    h = (h * M) & MASK
    return (h + 0xE6546B64) & MASK


def _murmur(data: bytes, seed: int) -> int:
    h = (seed ^ (len(data) * M)) & MASK
    if len(data) >= 8:
        k = int.from_bytes(data[:8], "little")
        k = (k * M) & MASK
        k ^= k >> 47
        k = (k * M) & MASK
        h = ((h ^ k) * M) & MASK
        data = data[8:]
    if data:
        h ^= int.from_bytes(data, "little")
        h = (h * M) & MASK
    h ^= h >> 47
    h = (h * M) & MASK
    return h ^ (h >> 47)


def _mix64(key: int) -> int:
    key = ((~key) + (key << 21)) & MASK
    key ^= key >> 24
    key = (key + (key << 3) + (key << 8)) & MASK
    key ^= key >> 14
    key = (key + (key << 2) + (key << 4)) & MASK
    key ^= key >> 28
    return (key + (key << 31)) & MASK


def reference_bucket(dense, sparse) -> int:
    """boost's hash of a FeatureDataItem (dense float32 values; sparse (id, float32)
    ascending), mixed and masked to 16 buckets, in Python integers."""
    hd = 0
    for v in dense:
        bits = 0 if v == 0 else struct.unpack("<I", struct.pack("<f", v))[0]
        hd = _combine(hd, bits)
    hs = 0
    for fid, v in sparse:
        hs = _murmur(struct.pack("<Q", fid), hs)
        hs = _murmur(struct.pack("<f", v), hs)
    return _mix64(_combine(_combine(0, hd), hs)) & 15


values = st.floats(-1e6, 1e6, allow_nan=False, width=32) | st.sampled_from([0.0, -0.0, 1.0, -1.0])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.lists(values, min_size=3, max_size=3),
                          st.dictionaries(st.integers(0, 40), values.filter(bool), max_size=4)), min_size=1,
                max_size=30))
def test_row_buckets_are_boosts_hash(rows):
    dense = np.array([d for d, _ in rows], dtype=F32).reshape(len(rows), 3)
    sparse = [sorted(s.items()) for _, s in rows]
    indptr = np.concatenate([[0], np.cumsum([len(s) for s in sparse])]).astype(np.int64)
    ids = np.array([i for s in sparse for i, _ in s], dtype=np.int64)
    vals = np.array([v for s in sparse for _, v in s], dtype=F32)
    got = _moses_dedup.row_buckets(dense, indptr, ids, vals)
    want = [reference_bucket(dense[r].tolist(), [(i, F32(v)) for i, v in sparse[r]]) for r in range(len(rows))]
    assert got.tolist() == want


@given(st.lists(st.integers(0, 15), max_size=60), st.integers(1, 5))
def test_moses_keeps_a_row_when_its_bucket_is_free(buckets, n_blocks):
    cuts = sorted(np.random.default_rng(len(buckets)).integers(0, len(buckets) + 1, n_blocks - 1).tolist())
    offsets = np.array([0, *cuts, len(buckets)], dtype=np.int64)
    want = []
    for s in range(n_blocks):
        taken = set()
        for b in buckets[offsets[s]:offsets[s + 1]]:
            want.append(b not in taken)
            taken.add(b)
    assert _moses_dedup.moses_kept(np.array(buckets, dtype=np.int64), offsets).tolist() == want


# ------------------------------------------------------------------ the reader
def _write_pair(where, k, blocks):
    """features/scores files of ``blocks`` [S][rows] with rows (dense texts, sparse text)."""
    fl, sl = [], []
    for sid, rows in enumerate(blocks):
        fl.append(f"FEATURES_TXT_BEGIN_0 {sid} {len(rows)} 2 A_0 B_0 \n")
        sl.append(f"SCORES_TXT_BEGIN_0 {sid} {len(rows)} 9 BLEU\n")
        for dense, sparse in rows:
            fl.append(f"{dense} {sparse}\n")
            sl.append("1 2 0 1 0 0 0 0 2 \n")
        fl.append("FEATURES_TXT_END_0\n")
        sl.append("SCORES_TXT_END_0\n")
    ff, sf = where / f"f{k}.dat", where / f"s{k}.dat"
    ff.write_text("".join(fl))
    sf.write_text("".join(sl))
    return str(ff), str(sf)


def test_reader_pairs_blocks_and_numbers_names_as_moses(tmp_path):
    f0, s0 = _write_pair(tmp_path, 0, [[("1 2", "zz=1 aa=2")], [("3 4", "mm=1")]])
    f1, s1 = _write_pair(tmp_path, 1, [[("5 6", "qq=1 aa=3")], [("7 8", "")]])
    rows = read_moses_nbest([f0, f1], [s0, s1], encoded=["init_x"])
    # the sparse-init name first; then block 0 of file 0 (line order), block 0 of file 1, block 1
    assert rows.names == ["init_x", "zz", "aa", "qq", "mm"]
    assert rows.offsets.tolist() == [0, 2, 4]
    assert rows.dense.tolist() == [[1, 2], [5, 6], [3, 4], [7, 8]]
    # weight indices D + id, ascending within each row
    assert rows.ids.tolist() == [3, 4, 4, 5, 6]
    assert rows.vals.tolist() == [1, 2, 3, 1, 1]


def test_reader_keeps_at_most_16_rows_per_sentence(tmp_path):
    block = [(f"{i} {i * 0.5}", "") for i in range(40)] + [("0 0", "")] * 3
    f0, s0 = _write_pair(tmp_path, 0, [block])
    rows = read_moses_nbest([f0], [s0])
    dense = np.array([[float(x) for x in d.split()] for d, _ in block], dtype=F32)
    buckets = [reference_bucket(r.tolist(), []) for r in dense]
    assert rows.n_read == 43
    assert len(rows.dense) == len(set(buckets)) <= 16
    firsts = sorted({b: i for i, b in reversed(list(enumerate(buckets)))}.values())
    assert rows.dense.tolist() == dense[firsts].tolist()


# ------------------------------------------------------------------ the pass, float32
def _random_rows(rng, S, D, sparse_ids):
    counts = rng.integers(1, 7, S)
    n = int(counts.sum())
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    dense = rng.choice(np.array([-2, -1, 0, 0.5, 1, 3.25, 7], dtype=F32), (n, D)) + \
        rng.normal(0, 1, (n, D)).astype(F32) * (rng.random((n, D)) < 0.5)
    per_row = [sorted(rng.choice(sparse_ids, int(rng.integers(0, 3)), replace=False).tolist())
               if sparse_ids else [] for _ in range(n)]
    indptr = np.concatenate([[0], np.cumsum([len(r) for r in per_row])]).astype(np.int64)
    ids = np.array([i for r in per_row for i in r], dtype=np.int64)
    vals = rng.normal(0, 1, len(ids)).astype(F32)
    stats = np.zeros((n, 9), dtype=F32)
    for r in range(n):
        length = int(rng.integers(0, 9))
        for k in range(4):
            c = max(length - k, 0)
            stats[r, 2 * k + 1] = c
            stats[r, 2 * k] = rng.integers(0, c + 1) if c else 0
        stats[r, 8] = rng.integers(1, 9)
    return (dense.astype(F32), indptr, ids, vals, stats, offsets)


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 2**31 - 1), st.booleans(), st.booleans(), st.sampled_from(["shuffle", "fixed"]),
       st.sampled_from([0.999, 0.5, 0.0]), st.sampled_from([0.01, 1.0]))
def test_bleu_kernel_is_the_python_reference_bit_for_bit(seed, model_bg, safe_hope, order, decay, c):
    rng = np.random.default_rng(seed)
    D = 3
    rows = _random_rows(rng, int(rng.integers(1, 6)), D, [D, D + 2, D + 3])
    start = np.concatenate([rng.normal(0, 1, D), [0.5, 0, 0, 0]]).astype(F32).astype(np.float64)
    kw = dict(kind="bleu", passes=3, c=c, decay=decay, model_bg=model_bg, safe_hope=safe_hope, order=order)
    fast = moses_kbmira(rows, D, start, seed, **kw)
    slow = moses_kbmira(rows, D, start, seed, reference=True, **kw)
    assert fast.weights.tolist() == slow.weights.tolist()
    for key in ("bleu_per_pass", "steps_per_pass", "loss_per_pass", "initial"):
        assert fast.info[key] == slow.info[key], key
    assert fast.info["background"].tolist() == slow.info["background"].tolist()


def test_one_bleu_update_by_hand():
    """Two hypotheses, weights 0: hope = the better one, fear = the worse one (equal scores),
    loss = their gain difference, eta = min(C, loss / |diff|^2); the average after one step
    is (start + w) / 1 by Moses's lazy totals (the totals start at the start weights), and
    it is the result because its 1-best (hypothesis 0, all n-grams right) scores BLEU 1 > 0."""
    dense = np.array([[1.0], [0.0]], dtype=F32)
    stats = np.array([[4, 4, 3, 3, 2, 2, 1, 1, 4], [0, 4, 0, 3, 0, 2, 0, 1, 4]], dtype=F32)
    rows = (dense, np.zeros(3, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=F32), stats,
            np.array([0, 2], dtype=np.int64))
    out = moses_kbmira(rows, 1, np.zeros(1), 1, kind="bleu", passes=1, c=0.05, order="fixed")
    t_hope = (stats[0] + 1).astype(F32)
    t_fear = (stats[1] + 1).astype(F32)
    g = _bleu(np.stack([t_hope, t_fear])) * t_hope[8]     # the background starts at 1s
    loss = F32(g[0] - g[1])
    eta = min(F32(0.05), F32(loss / F32(1)))
    assert out.info["steps_per_pass"] == [1]
    assert out.info["loss_per_pass"] == [float(loss)]
    # totals = start (0) + (1 - 0) * 0 + eta; one step: the average is eta
    assert out.weights.tolist() == [float(eta)]
    assert out.info["bleu_per_pass"] == [1.0]


# ------------------------------------------------------------------ Moses's float BLEU numbers
def _ref_smoothed(row) -> np.float32:
    logf, expf = _libm()
    logbleu = F32(0)
    for j in range(4):
        a = F32(logf(F32(row[2 * j] + F32(1))))
        b = F32(logf(F32(row[2 * j + 1] + F32(1))))
        logbleu = F32(logbleu + F32(a - b))
    logbleu = F32(logbleu * F32(0.25))
    brevity = F32(F32(1) - F32(F32(row[8]) / F32(row[1])))
    if brevity < 0:
        logbleu = F32(logbleu + brevity)
    return F32(expf(logbleu))


bleu_rows = st.lists(st.lists(st.integers(0, 60), min_size=9, max_size=9), min_size=1, max_size=20)


@given(bleu_rows)
def test_smoothed_sentence_bleu_is_moses_float_arithmetic(rows):
    a = np.array(rows, dtype=F32)
    got = _moses_sbleu.smoothed_sentence_bleu(a)
    with np.errstate(divide="ignore", invalid="ignore"):
        want = np.array([_ref_smoothed(r) for r in a], dtype=F32)
    assert got.view(np.uint32).tolist() == want.view(np.uint32).tolist()


@given(bleu_rows)
def test_corpus_bleu_is_moses_float_arithmetic(rows):
    a = np.array(rows, dtype=F32)
    with np.errstate(divide="ignore", invalid="ignore"):
        want = _bleu(a)
    assert _moses_sbleu.corpus_bleu(a).view(np.uint32).tolist() == want.view(np.uint32).tolist()


# ------------------------------------------------------------------ glibc rand()
@given(st.integers(0, 2**32 - 1), st.integers(1, 500), st.integers(1, 10**6))
def test_rand_mod_is_glibc_rand(seed, count, modulus):
    a, b = GlibcRand(seed), GlibcRand(seed)
    want = [a.next() % modulus for _ in range(count)]
    assert rand_mod_many(b, count, modulus).tolist() == want
    assert a.next() == b.next()      # the state moved on alike


def test_rand_mod_rejects_a_short_state():
    with pytest.raises(ValueError):
        _glibc_rand.rand_mod(np.zeros(3, dtype=np.uint32), 1, 5)
