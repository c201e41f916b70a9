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


def transpose_reference(dense, indptr, ids, values, offsets, ref_rows, coef, n_features):
    """X^T coef as _rows.transpose_exact defines it, with Python floats: per sentence the
    dense sums in row order, then every term summed exactly (math.fsum)."""
    terms = [[] for _ in range(n_features)]
    for s in range(len(offsets) - 1):
        lo, hi = offsets[s], offsets[s + 1]
        if hi == lo:
            continue
        r = ref_rows[s]
        local = [0.0] * dense.shape[1]
        for h in range(lo, hi):
            c = float(coef[h])
            if c == 0.0:
                continue
            if h != r:
                for k in range(dense.shape[1]):
                    local[k] += c * (float(dense[h, k]) - float(dense[r, k]))
            for e in range(indptr[h], indptr[h + 1]):
                terms[ids[e]].append(c * float(values[e]))
        for k in range(dense.shape[1]):
            terms[k].append(local[k])
    return np.array([math.fsum(t) for t in terms])


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 4), st.sampled_from([9, 300]), st.booleans())
def test_transpose_exact_equals_its_reference_for_any_threads(seed, threads, nf, split):
    """Also when the threads split the sparse features (copy_bytes=0) instead of each
    adding into its own copy of the accumulators; 300 features make several 64-id blocks."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(0, 12, size=rng.integers(1, 15))
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    n, d = int(offsets[-1]), int(rng.integers(0, 4))
    dense = rng.normal(size=(n, d)) * 10.0 ** rng.integers(-3, 4)
    nnz_per_row = rng.integers(0, 3, size=n)
    indptr = np.concatenate([[0], np.cumsum(nnz_per_row)]).astype(np.int64)
    ids = rng.integers(max(d, 0), nf, size=indptr[-1]).astype(np.int32)
    values = rng.normal(size=indptr[-1])
    coef = rng.normal(size=n) * (rng.random(n) < 0.8)
    ref_rows = np.array([lo + rng.integers(0, hi - lo) if hi > lo else 0
                         for lo, hi in zip(offsets[:-1], offsets[1:])], dtype=np.int64)
    acc = accumulator(nf)
    _rows.transpose_exact(dense, indptr, ids, values, offsets, ref_rows, coef, acc, threads,
                          0 if split else _rows.TRANSPOSE_COPY_BYTES)
    want = transpose_reference(dense, indptr, ids, values, offsets, ref_rows, coef, nf)
    assert rounded(acc).tobytes() == want.tobytes()
    one = accumulator(nf)   # one thread, no split: the same canonical rows
    _rows.transpose_exact(dense, indptr, ids, values, offsets, ref_rows, coef, one, 1)
    assert one.tobytes() == acc.tobytes()


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
