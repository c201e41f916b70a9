"""The exact accumulators (pyx/_exact.pxd) against Python's exact rationals."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplug.exact_sum import accumulator, exact_sum, pack, rounded, rounded_sum
from mtplug._ext import _exact, _rows


def reference(values) -> float:
    """The exact sum, rounded once (Fraction -> float rounds to nearest even)."""
    total = sum((Fraction(float(v)) for v in values), Fraction(0))
    try:
        return float(total)
    except OverflowError:
        return math.inf if total > 0 else -math.inf


finite = st.floats(allow_nan=False, allow_infinity=False)
scaled = st.builds(lambda m, e: math.ldexp(m, e), st.integers(-2**53, 2**53), st.integers(-1100, 960))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(finite, scaled), max_size=40))
def test_sum_is_the_correctly_rounded_exact_sum(values):
    assert _same(exact_sum(np.array(values, dtype=np.float64)), reference(values))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(finite, scaled), min_size=1, max_size=40), st.randoms(use_true_random=False))
def test_any_split_and_order_merges_to_the_same_bits(values, rnd):
    whole = exact_sum(np.array(values))
    shuffled = list(values)
    rnd.shuffle(shuffled)
    cuts = sorted(rnd.sample(range(len(values) + 1), k=min(3, len(values) + 1)))
    parts = []
    for lo, hi in zip([0] + cuts, cuts + [len(values)]):
        acc = accumulator(1)
        _exact.add_values(acc[0], np.array(shuffled[lo:hi], dtype=np.float64))
        parts.append(acc)
    assert _same(float(rounded_sum(parts)[0]), whole)
    assert _same(float(rounded_sum([pack(p) for p in parts])[0]), whole)
    # the canonical form itself is the same, so merged rows can travel and merge again
    merged = parts[0].copy()
    for other in parts[1:]:
        _exact.merge(merged, other)
    single = accumulator(1)
    _exact.add_values(single[0], np.array(values, dtype=np.float64))
    np.testing.assert_array_equal(merged, single)


def test_cancellation_subnormals_and_overflow():
    assert exact_sum(np.array([1e308, 1e308, -1e308])) == 1e308       # no intermediate overflow
    assert exact_sum(np.array([1.0, 1e-300, -1.0])) == 1e-300
    assert exact_sum(np.array([5e-324, 5e-324])) == 1e-323
    assert exact_sum(np.array([1e308, 1e308])) == math.inf
    assert exact_sum(np.array([-1e308, -1e308])) == -math.inf
    assert exact_sum(np.array([0.1] * 10)) == math.fsum([0.1] * 10)
    assert exact_sum(np.array([])) == 0.0
    assert math.isnan(exact_sum(np.array([1.0, math.inf])))
    assert math.isnan(exact_sum(np.array([math.nan])))
    # ties to even at the last bit
    assert exact_sum(np.array([1.0, 2.0**-53])) == 1.0
    assert exact_sum(np.array([1.0 + 2.0**-52, 2.0**-53])) == 1.0 + 2.0**-51
    assert exact_sum(np.array([1.0, 2.0**-53, 2.0**-1074])) == 1.0 + 2.0**-52


def test_many_terms_keep_their_carries():
    rng = np.random.default_rng(5)
    x = rng.normal(size=200_000) * 1e20
    assert exact_sum(x) == math.fsum(x)


def test_shapes_are_checked():
    with pytest.raises(ValueError, match="entries"):
        _exact.add_values(np.zeros(3, np.int64), np.zeros(1))
    with pytest.raises(ValueError, match="shape"):
        _exact.merge(accumulator(2), accumulator(1))


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b)) or \
        (a == b == 0.0)


def pairs_reference(indptr, ids, values, offsets):
    """The (sentence, feature) pairs where a feature varies, as sentence_pairs defines
    them: {(s, j)}; a feature is constant in s when each row holds it once, all with one
    value (== ; NaN never equals)."""
    pairs = set()
    for s in range(len(offsets) - 1):
        rows = range(offsets[s], offsets[s + 1])
        seen: dict[int, list[float]] = {}
        twice = set()
        for h in rows:
            here = [int(j) for j in ids[indptr[h]:indptr[h + 1]]]
            twice |= {j for j in here if here.count(j) > 1}
            for e in range(indptr[h], indptr[h + 1]):
                seen.setdefault(int(ids[e]), []).append(float(values[e]))
        for j, vals in seen.items():
            if j in twice or len(vals) != len(rows) or any(not (v == vals[0]) for v in vals):
                pairs.add((s, j))
    return pairs


def transpose_reference(dense, indptr, ids, values, offsets, ref_rows, coef, n_features):
    """X^T coef as _rows.transpose_pairs defines it, with Python floats: per sentence the
    dense sums relative to its reference row and each varying pair's sum, in row order;
    then each feature's sentence sums exactly (math.fsum)."""
    pairs = pairs_reference(indptr, ids, values, offsets)
    terms = [[] for _ in range(n_features)]
    for s in range(len(offsets) - 1):
        lo, hi = offsets[s], offsets[s + 1]
        if hi == lo:
            continue
        r = ref_rows[s]
        local = [0.0] * dense.shape[1]
        sums: dict[int, float] = {}
        for h in range(lo, hi):
            c = float(coef[h])
            if c == 0.0:
                continue
            if h != r:
                for k in range(dense.shape[1]):
                    local[k] += c * (float(dense[h, k]) - float(dense[r, k]))
            for e in range(indptr[h], indptr[h + 1]):
                j = int(ids[e])
                if (s, j) in pairs:
                    sums[j] = sums.get(j, 0.0) + c * float(values[e])
        for k in range(dense.shape[1]):
            terms[k].append(local[k])
        for j, v in sums.items():
            terms[j].append(v)
    return np.array([math.fsum(t) for t in terms])


@st.composite
def sentence_blocks(draw):
    """Sentences of rows with a dense block and sparse entries drawn from a few features
    per sentence, some of them constant within their sentence (one value in every row),
    some twice in a row, values over wide exponent ranges, coefficients summing to about
    0 per sentence (and some exactly 0), sometimes a NaN value."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    sizes = rng.integers(0, 9, size=rng.integers(1, 12))
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    n, d = int(offsets[-1]), int(rng.integers(0, 4))
    nf = d + int(rng.choice([5, 300]))
    scale = 10.0 ** rng.integers(-3, 4)
    dense = rng.normal(size=(n, d)) * scale
    rows = []
    for s in range(len(sizes)):
        vocab = rng.choice(np.arange(d, nf), size=min(6, nf - d), replace=False)
        constant = {int(j): float(rng.integers(1, 3)) for j in vocab[:2]}
        for _ in range(sizes[s]):
            row = {j: v for j, v in constant.items()}
            for j in rng.choice(vocab[2:], size=int(rng.integers(0, 3))) if len(vocab) > 2 else []:
                row[int(j)] = float(rng.normal() * 10.0 ** rng.integers(-20, 20))
            items = sorted(row.items())
            if items and rng.random() < 0.05:
                items.append(items[0])               # the same feature twice in one row
            rows.append(items)
    indptr = np.concatenate([[0], np.cumsum([len(r) for r in rows])]).astype(np.int64)
    ids = np.array([j for r in rows for j, _ in r], dtype=np.int32)
    values = np.array([v for r in rows for _, v in r], dtype=np.float64)
    if len(values) and rng.random() < 0.1:
        values[rng.integers(len(values))] = np.nan
    coef = rng.normal(size=n) * (rng.random(n) < 0.85)
    for lo, hi in zip(offsets[:-1], offsets[1:]):
        coef[lo:hi] -= coef[lo:hi].mean() if hi > lo else 0.0
    ref_rows = np.array([lo + rng.integers(0, hi - lo) if hi > lo else 0
                         for lo, hi in zip(offsets[:-1], offsets[1:])], dtype=np.int64)
    return dense, indptr, ids, values, offsets, ref_rows, coef, nf


@settings(max_examples=120, deadline=None)
@given(sentence_blocks())
def test_sentence_pairs_are_the_varying_pairs(block):
    dense, indptr, ids, values, offsets, ref_rows, coef, nf = block
    bad, row_ptr, row_pair, row_value, feature_ptr, feature_pairs = _rows.sentence_pairs(indptr, ids, values,
                                                                                          offsets, nf)
    assert bad == -1
    want = pairs_reference(indptr, ids, values, offsets)
    sentence_of_row = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    number = {}
    for h, s in enumerate(sentence_of_row):
        # row h keeps its entries of varying pairs, in row order, with their values
        kept = [(int(j), float(v)) for j, v in zip(ids[indptr[h]:indptr[h + 1]], values[indptr[h]:indptr[h + 1]])
                if (int(s), int(j)) in want]
        got_pairs = row_pair[row_ptr[h]:row_ptr[h + 1]].tolist()
        assert len(got_pairs) == len(kept)
        assert row_value[row_ptr[h]:row_ptr[h + 1]].tobytes() == np.array([v for _, v in kept]).tobytes()
        for (j, _), p in zip(kept, got_pairs):
            assert number.setdefault((int(s), j), p) == p   # one number per pair
    assert set(number) == want and sorted(number.values()) == list(range(len(want)))
    for j in range(nf):
        listed = feature_pairs[feature_ptr[j]:feature_ptr[j + 1]].tolist()
        assert listed == [number[(s, jj)] for s, jj in sorted(want) if jj == j]


@settings(max_examples=120, deadline=None)
@given(sentence_blocks(), st.integers(1, 4), st.integers(0, 12))
def test_transpose_pairs_equals_its_reference_for_any_threads_and_split(block, threads, cut):
    """Rounded on the spot, or as exact accumulators of two runs of sentences merged:
    the same bits as the reference, and the same for any thread count."""
    dense, indptr, ids, values, offsets, ref_rows, coef, nf = block
    want = transpose_reference(dense, indptr, ids, values, offsets, ref_rows, coef, nf)
    pairs = _rows.sentence_pairs(indptr, ids, values, offsets, nf)[1:]
    out = np.full(nf, 7.0)
    _rows.transpose_pairs(dense, *pairs, offsets, ref_rows, coef, out,
                          np.empty((0, _exact.WIDTH), np.int64), threads)
    assert out.tobytes() == want.tobytes()
    # the sentences cut in two runs, each summed into an exact accumulator where it is
    S = len(offsets) - 1
    k = min(cut, S)
    parts = []
    for s_lo, s_hi in ((0, k), (k, S)):
        lo, hi = int(offsets[s_lo]), int(offsets[s_hi])
        sub_indptr = indptr[lo:hi + 1] - indptr[lo]
        e = slice(int(indptr[lo]), int(indptr[hi]))
        sub = (np.ascontiguousarray(dense[lo:hi]), sub_indptr, np.ascontiguousarray(ids[e]),
               np.ascontiguousarray(values[e]), offsets[s_lo:s_hi + 1] - lo)
        acc = accumulator(nf)
        sub_pairs = _rows.sentence_pairs(sub[1], sub[2], sub[3], sub[4], nf)[1:]
        _rows.transpose_pairs(sub[0], *sub_pairs, sub[4], ref_rows[s_lo:s_hi] - lo,
                              coef[lo:hi].copy(), np.empty(0), acc, threads)
        parts.append(acc)
    assert rounded_sum(parts).tobytes() == want.tobytes()


def test_sentence_pairs_report_an_id_out_of_range():
    indptr = np.array([0, 2, 3], np.int64)
    ids = np.array([0, 1, 4], np.int32)
    bad, *arrays = _rows.sentence_pairs(indptr, ids, np.ones(3), np.array([0, 2], np.int64), 4)
    assert bad == 2 and arrays == [None] * 5


def test_a_feature_constant_in_its_sentence_gets_an_exact_zero():
    """Its terms sum to value x sum(coef) = 0 in exact arithmetic, however the
    coefficients round; a feature that varies keeps its sum."""
    coef = np.array([0.1, 0.2, -0.3])          # sums to 5.6e-17 in floating point
    indptr = np.array([0, 2, 4, 5], np.int64)
    ids = np.array([3, 4, 3, 4, 3], np.int32)
    values = np.array([2.0, 1.0, 2.0, 5.0, 2.0])
    offsets = np.array([0, 3], np.int64)
    pairs = _rows.sentence_pairs(indptr, ids, values, offsets, 5)[1:]
    out = np.empty(5)
    _rows.transpose_pairs(np.zeros((3, 0)), *pairs, offsets, np.zeros(1, np.int64), coef, out,
                          np.empty((0, _exact.WIDTH), np.int64))
    assert out[3] == 0.0 and out[4] == 0.1 * 1.0 + 0.2 * 5.0


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 5))
def test_packed_accumulators_round_trip_and_sum_block_by_block(seed, n_parts):
    """pack/unpack give back every row (zero rows, wide rows, non-finite counts), and
    rounded_sum over packed parts equals the plain merge, whatever the block size."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 40))
    parts = []
    for _ in range(n_parts):
        acc = accumulator(k)
        for r in range(k):
            if rng.random() < 0.3:
                continue   # an untouched row
            scale = 10.0 ** rng.integers(-300, 300, size=int(rng.integers(1, 6)))
            terms = rng.normal(size=scale.shape[0]) * scale
            if rng.random() < 0.05:
                terms[0] = math.inf
            _exact.add_values(acc[r], terms)
        parts.append(acc)
    for acc in parts:
        out = np.empty_like(acc)
        _exact.unpack(*pack(acc), 0, out)
        np.testing.assert_array_equal(out, acc)
    merged = parts[0].copy()
    for other in parts[1:]:
        _exact.merge(merged, other)
    want = rounded(merged)
    for block in (1, 7, 1 << 14):
        got = rounded_sum([pack(p) if i % 2 else p for i, p in enumerate(parts)], block_rows=block)
        assert got.tobytes() == want.tobytes()


def test_corrupt_packed_rows_are_refused():
    offsets, first, chunks = pack(np.eye(1, 68, 3, dtype=np.int64))
    first[0] = 67
    offsets[1] = 2
    with pytest.raises(ValueError, match="spans more than"):
        _exact.unpack(offsets, first, np.zeros(2, dtype=np.int64), 0, accumulator(1))


@pytest.mark.parametrize("value", [0.0, 1.0, -1.0, -2.0**-1074, 2.0**-1074, -2.0**-1042, -(2.0**1000), 1e308,
                                   -1e308, -0.5, -(2.0**32) * 2.0**-1074])
def test_packed_rows_of_single_values_round_trip(value):
    """Negative values are stored without their sign chunks (2^32 - 1 up to the top),
    including values whose own chunks are all implied (a power of two on a chunk edge)."""
    acc = accumulator(1)
    _exact.add_values(acc[0], np.array([value]))
    packed = pack(acc)
    assert packed[2].shape[0] <= 3
    out = accumulator(1)
    _exact.unpack(*packed, 0, out)
    np.testing.assert_array_equal(out, acc)
    assert _same(float(rounded_sum([packed])[0]), value)
