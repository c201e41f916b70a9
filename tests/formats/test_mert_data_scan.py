"""The compiled features.dat / scores.dat readers: equal to the reference readers
(tests/reference/mert_data.py) on random stores, Moses's binary variant, and every error
with its file and line."""

from __future__ import annotations

import contextlib
import gzip
import os
import tempfile
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplug.corpus import FeatureSpace, NbestCorpus
from mtplug.errors import InputError
from mtplug.formats import mert_data
from tests.reference import mert_data as reference

FEATURE_KEYS = ("sent_ids", "dense", "sparse_indptr", "sparse_ids", "sparse_values")
ONE_SCORE_BLOCK = "SCORES_TXT_BEGIN_0 0 1 9 BLEU\n1 1 1 1 1 1 1 1 1 \nSCORES_TXT_END_0\n"


@contextlib.contextmanager
def chunked(size):
    """Make the readers read ``size`` bytes at a time (None: the default size), so chunk
    boundaries fall inside lines, CRLF pairs and binary payloads."""
    if size is None:
        yield
        return
    with mock.patch.object(mert_data, "READ_BYTES", size):
        yield


def assert_same_arrays(got: dict, want: dict, keys=FEATURE_KEYS):
    for k in keys:
        assert got[k].dtype == want[k].dtype, k
        assert got[k].shape == want[k].shape, k
        np.testing.assert_array_equal(got[k], want[k], err_msg=k)
    # bit-identical floats, -0.0 included
    for k in keys:
        if got[k].dtype == np.float64:
            assert got[k].tobytes() == want[k].tobytes(), k


def read_both_features(path):
    s1, s2 = FeatureSpace(), FeatureSpace()
    got, want = mert_data.read_features(path, s1), reference.read_features(path, s2)
    assert s1.feature_names == s2.feature_names
    assert s1.n_dense == s2.n_dense
    return got, want


# ------------------------------------------------------------------ random stores
NAME_CHARS = st.sampled_from(list("abcXYZ019_=~.-+") + ["é", "字"])
sparse_name = st.text(NAME_CHARS, min_size=1, max_size=6)
f32 = st.floats(allow_nan=False, allow_infinity=False, width=32)
value = st.one_of(f32, st.sampled_from([0.0, -0.0, 1.0, -1.0, 1e-7, -123456789.0, 3.5e30, -2.5e-30]))


@st.composite
def stores(draw):
    n_dense = draw(st.integers(0, 4))
    sizes = draw(st.lists(st.integers(0, 4), min_size=1, max_size=6))
    sizes[0] = max(sizes[0], 1)  # NbestCorpus.from_arrays needs a hypothesis
    n = sum(sizes)
    names = draw(st.lists(sparse_name, max_size=6, unique=True))
    dense_names = [f"D{j}_0" for j in range(n_dense)]
    names = [x for x in names if x not in dense_names]
    dense = np.array(draw(st.lists(st.lists(value, min_size=n_dense, max_size=n_dense), min_size=n, max_size=n)),
                     dtype=np.float64).reshape(n, n_dense)
    indptr, ids, vals = [0], [], []
    for _ in range(n):
        cols = draw(st.lists(st.integers(0, len(names) - 1), unique=True, max_size=len(names))) if names else []
        ids += cols
        vals += [draw(value) for _ in cols]
        indptr.append(len(ids))
    stats = np.array(draw(st.lists(st.lists(st.integers(0, 10**6), min_size=9, max_size=9), min_size=n, max_size=n)),
                     dtype=np.int32).reshape(n, 9)
    sids = np.repeat(np.arange(len(sizes)), sizes)
    return NbestCorpus.from_arrays(sids, dense, dense_names, stats,
                                   sparse=(np.array(indptr, dtype=np.int64), np.array(ids, dtype=np.int32),
                                           np.array(vals, dtype=np.float64)),
                                   sparse_names=names)


def split_blocks(data: bytes, end: bytes) -> list[bytes]:
    """The sentence blocks of a text file (each ends with its END line)."""
    blocks, start = [], 0
    while start < len(data):
        stop = data.index(end, start) + len(end) + 1
        blocks.append(data[start:stop])
        start = stop
    return blocks


@settings(max_examples=70, deadline=None)
@given(store=stores(), data=st.data())
def test_compiled_readers_equal_the_reference_on_random_stores(store, data):
    with tempfile.TemporaryDirectory() as tmp:
        f, s = os.path.join(tmp, "f.dat"), os.path.join(tmp, "s.dat")
        mert_data.write_features(f, store)
        mert_data.write_scores(s, store)
        fblocks = split_blocks(open(f, "rb").read(), b"FEATURES_TXT_END_0")
        sblocks = split_blocks(open(s, "rb").read(), b"SCORES_TXT_END_0")
        if not fblocks:
            return
        # out of order, some sentences twice (a later iteration appended), CRLF, blank lines
        order = data.draw(st.lists(st.integers(0, len(fblocks) - 1), min_size=1, max_size=2 * len(fblocks)))
        crlf = data.draw(st.booleans())
        blank = b"\n" if data.draw(st.booleans()) else b""
        fdata = blank.join(fblocks[i] for i in order)
        sdata = blank.join(sblocks[i] for i in order)
        if crlf:
            fdata, sdata = fdata.replace(b"\n", b"\r\n"), sdata.replace(b"\n", b"\r\n")
        if data.draw(st.booleans()):
            fdata, sdata = gzip.compress(fdata), gzip.compress(sdata)
        open(f, "wb").write(fdata)
        open(s, "wb").write(sdata)
        with chunked(data.draw(st.sampled_from([None, 1, 5, 64]))):
            got, want = read_both_features(f)
            assert_same_arrays(got, want)
            sids, stats, _ = mert_data.read_scores(s)
        want_sids, want_stats = reference.read_scores(s)
        assert_same_arrays({"sent_ids": sids, "stats": stats}, {"sent_ids": want_sids, "stats": want_stats},
                           ("sent_ids", "stats"))


@settings(max_examples=30, deadline=None)
@given(store=stores(), chunk=st.sampled_from([None, 1, 9]))
def test_binary_round_trip_on_random_stores(store, chunk):
    with tempfile.TemporaryDirectory() as tmp:
        f, s = os.path.join(tmp, "f.bin"), os.path.join(tmp, "s.bin")
        if store.sparse_indptr[-1] > 0:
            with pytest.raises(ValueError, match="sparse"):
                mert_data.write_features(f, store, binary=True)
            return
        mert_data.write_features(f, store, binary=True)
        mert_data.write_scores(s, store, binary=True)
        with chunked(chunk):
            got = mert_data.read_features(f, FeatureSpace())
            sids, stats, _ = mert_data.read_scores(s)
    np.testing.assert_array_equal(got["dense"], store.dense.astype(np.float32))
    assert got["sent_ids"].tolist() == np.repeat(np.arange(store.n_sentences), np.diff(store.sent_offsets)).tolist()
    np.testing.assert_array_equal(sids, got["sent_ids"])
    np.testing.assert_array_equal(stats, store.stats)


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_damaged_files_raise_input_error_only(data):
    c = dense_store(sizes=(2, 1), n_dense=2)
    with tempfile.TemporaryDirectory() as tmp:
        f, s = os.path.join(tmp, "f"), os.path.join(tmp, "s")
        binary = data.draw(st.booleans())
        mert_data.write_features(f, c, binary=binary)
        mert_data.write_scores(s, c, binary=binary)
        for path in (f, s):
            raw = bytearray(open(path, "rb").read())
            for _ in range(data.draw(st.integers(1, 4))):
                pos = data.draw(st.integers(0, len(raw)))
                op = data.draw(st.sampled_from(["set", "cut", "insert"]))
                if op == "set" and pos < len(raw):
                    raw[pos] = data.draw(st.sampled_from([0, 10, 13, 32, 45, 46, 61, 255, 0x7F, 0xC3]))
                elif op == "cut":
                    del raw[pos:pos + data.draw(st.integers(1, 20))]
                else:
                    raw[pos:pos] = data.draw(st.sampled_from([b"\n", b" ", b"=", b"x", b"-1", b"nan", b"\xff"]))
            open(path, "wb").write(bytes(raw))
        with chunked(data.draw(st.sampled_from([None, 3]))):
            try:
                mert_data.read_features(f, FeatureSpace())
            except InputError as err:
                assert err.path == f
            try:
                mert_data.read_scores(s)
            except InputError as err:
                assert err.path == s


def number_texts():
    """Number spellings the fast path and strtod must both get right."""
    finite = st.floats(allow_nan=False, allow_infinity=False)
    return st.one_of(
        finite.map(repr), finite.map(lambda v: f"{v:.17g}"), finite.map(lambda v: f"{v:.3e}"),
        finite.map(lambda v: f"{v:E}"), finite.map(lambda v: f"{v:+g}"), finite.map(lambda v: f"{v:.25f}"),
        st.integers(-10**20, 10**20).map(str),
        st.sampled_from(["0", "-0", "+0", ".5", "5.", "-.5e-3", "007.250", "1e22", "1e23", "9007199254740993",
                         "123456789012345678901234567890", "4.9e-324", "2.2250738585072014e-308", "1e-400",
                         "0.000000000000000000000000000001", "1.7976931348623157e308", "1E+5", "1e0"]))


@settings(max_examples=60, deadline=None)
@given(lines=st.lists(st.tuples(st.lists(number_texts(), min_size=2, max_size=2),
                                st.lists(st.tuples(st.sampled_from(["s_a", "s=b", "c_"]), number_texts()),
                                         max_size=3, unique_by=lambda t: t[0])),
                      min_size=1, max_size=5))
def test_number_parsing_equals_the_reference(lines):
    text = f"FEATURES_TXT_BEGIN_0 3 {len(lines)} 2 A_0 B_0 \n"
    for dense, sparse in lines:
        text += " ".join(dense) + " " + "".join(f"{n}={v} " for n, v in sparse) + "\n"
    text += "FEATURES_TXT_END_0\n"
    with tempfile.TemporaryDirectory() as tmp:
        f = os.path.join(tmp, "f.dat")
        open(f, "w").write(text)
        try:
            want = reference.read_features(f, FeatureSpace())
        except InputError as err:
            # numbers beyond double range are infinite: both readers must refuse them
            assert "NaN or infinite" in str(err)
            with pytest.raises(InputError, match="NaN or infinite"):
                mert_data.read_features(f, FeatureSpace())
            return
        assert_same_arrays(mert_data.read_features(f, FeatureSpace()), want)


def test_moses_toy_files_read_as_the_reference_reads_them(shared_data):
    d = shared_data / "moses-toy"
    got, want = read_both_features(str(d / "run1.features.dat"))
    assert_same_arrays(got, want)
    assert got["dense"].shape == (6000, 8)
    sids, stats, _ = mert_data.read_scores(str(d / "run1.scores.dat"))
    want_sids, want_stats = reference.read_scores(str(d / "run1.scores.dat"))
    np.testing.assert_array_equal(sids, want_sids)
    np.testing.assert_array_equal(stats, want_stats)
    assert stats.dtype == np.int32 and stats.shape == (6000, 9)


def test_sparse_names_with_equals_signs_and_sorting(write):
    f = write("f.dat", "FEATURES_TXT_BEGIN_0 0 2 1 D_0 \n"
                       "1 z_z=2 a=b=c=-3e-2 \n"
                       "2 a=b=c=1 q_=1e+3 z_z=0 \n"
                       "FEATURES_TXT_END_0\n")
    space = FeatureSpace()
    got = mert_data.read_features(f, space)
    assert space.feature_names == ["D_0", "z_z", "a=b=c", "q_"]
    assert got["sparse_indptr"].tolist() == [0, 2, 5]
    assert got["sparse_ids"].tolist() == [1, 2, 1, 2, 3]
    assert got["sparse_values"].tolist() == [2.0, -0.03, 0.0, 1.0, 1000.0]


def test_names_already_in_the_space_keep_their_ids(write):
    space = FeatureSpace()
    space.define_dense(["D_0"])
    for name in (b"late_b", b"late_a"):
        space.names.add(name)
    f = write("f.dat", "FEATURES_TXT_BEGIN_0 0 1 1 D_0 \n1 new_c=3 late_a=1 late_b=2 \nFEATURES_TXT_END_0\n")
    got = mert_data.read_features(f, space)
    assert space.feature_names == ["D_0", "late_b", "late_a", "new_c"]
    assert got["sparse_ids"].tolist() == [1, 2, 3]
    assert got["sparse_values"].tolist() == [2.0, 1.0, 3.0]


def test_long_sparse_rows_are_sorted(write):
    names = [f"f_{i}" for i in range(300)]
    order = np.random.default_rng(0).permutation(300)
    row = " ".join(f"{names[i]}={i} " for i in order)
    space = FeatureSpace()
    space.define_dense([])
    for i in range(300):
        space.names.add(names[i].encode())
    f = write("f.dat", f"FEATURES_TXT_BEGIN_0 0 1 0  \n{row}\nFEATURES_TXT_END_0\n")
    got = mert_data.read_features(f, space)
    assert got["sparse_ids"].tolist() == list(range(300))
    assert got["sparse_values"].tolist() == [float(i) for i in range(300)]
    assert got["dense"].shape == (1, 0)


# ------------------------------------------------------------------ binary variant
def dense_store(seed=0, sizes=(3, 0, 2, 4), n_dense=3, div=1):
    rng = np.random.default_rng(seed)
    n = sum(sizes)
    dense = rng.normal(size=(n, n_dense)) * 10.0 ** rng.integers(-5, 6, size=(n, n_dense))
    stats = rng.integers(0, 60, size=(n, 9)).astype(np.int32)
    c = NbestCorpus.from_arrays(np.repeat(np.arange(len(sizes)), sizes), dense,
                                [f"F{j}_0" for j in range(n_dense)], stats)
    c.ref_len_divisor = div
    return c


def test_binary_bytes_are_moses_layout(tmp_path):
    c = dense_store(sizes=(2,), n_dense=2)
    f, s = tmp_path / "f", tmp_path / "s"
    mert_data.write_features(str(f), c, binary=True)
    mert_data.write_scores(str(s), c, binary=True)
    assert f.read_bytes() == (b"FEATURES_BIN_BEGIN_0 0 2 2 F0_0 F1_0 \n" + c.dense.astype(np.float32).tobytes()
                              + b"FEATURES_BIN_END_0\n")
    assert s.read_bytes() == (b"SCORES_BIN_BEGIN_0 0 2 9 BLEU\n" + c.stats.astype(np.float32).tobytes()
                              + b"SCORES_BIN_END_0\n")


@pytest.mark.parametrize("chunk", [None, 1, 7, 100])
def test_binary_round_trip(tmp_path, chunk):
    c = dense_store()
    f, s = str(tmp_path / "f.txt"), str(tmp_path / "s.txt")
    mert_data.write_features(f, c)
    mert_data.write_scores(s, c)
    text = mert_data.read_mert_data([f], [s])
    fb, sb = str(tmp_path / "f.bin"), str(tmp_path / "s.bin")
    mert_data.write_features(fb, text, binary=True)
    mert_data.write_scores(sb, text, binary=True)
    with chunked(chunk):
        back = mert_data.read_mert_data([fb], [sb])
    np.testing.assert_array_equal(back.stats, text.stats)
    np.testing.assert_array_equal(back.sent_offsets, text.sent_offsets)
    assert back.feature_names == text.feature_names
    np.testing.assert_array_equal(back.dense, text.dense.astype(np.float32))
    np.testing.assert_allclose(back.dense, text.dense, rtol=1e-6)
    # and binary -> store -> binary is a fixed point
    mert_data.write_features(str(tmp_path / "f2.bin"), back, binary=True)
    assert open(fb, "rb").read() == (tmp_path / "f2.bin").read_bytes()


def test_binary_payload_with_newline_bytes_and_line_numbers_after_it(write):
    # float32 values whose bytes are newlines: the line count after the block counts them
    # (as an editor does)
    nl = np.frombuffer(b"\n\n\n\x3f" * 2, dtype=np.float32)
    payload = np.concatenate([nl, nl[:1]]).astype(np.float32).tobytes()  # 3 hyps x 1 dense
    head = b"FEATURES_BIN_BEGIN_0 0 3 1 F_0 \n"
    bad = b"FEATURES_TXT_BEGIN_0 1 1 1 F_0 \nx \nFEATURES_TXT_END_0\n"
    data = head + payload + b"FEATURES_BIN_END_0\n" + bad
    f = write("f.dat", data)
    line = data[: data.index(b"x \n")].count(b"\n") + 1
    for chunk in (None, 1, 3, 5):
        with chunked(chunk), pytest.raises(InputError) as err:
            mert_data.read_features(f, FeatureSpace())
        assert err.value.line == line and "expected 1 numbers, got 'x'" in str(err.value)
    good = write("g.dat", head + payload + b"FEATURES_BIN_END_0\n")
    for chunk in (None, 1, 2, 4):
        with chunked(chunk):
            got = mert_data.read_features(good, FeatureSpace())
        np.testing.assert_array_equal(got["dense"][:, 0], np.frombuffer(payload, dtype=np.float32))


def test_mixed_text_and_binary_blocks_in_one_file(tmp_path):
    c = dense_store(sizes=(2, 3, 1))
    parts = {}
    for binary in (False, True):
        f, s = tmp_path / f"f{binary}", tmp_path / f"s{binary}"
        mert_data.write_features(str(f), c, binary=binary)
        mert_data.write_scores(str(s), c, binary=binary)
        parts[binary] = (f.read_bytes(), s.read_bytes())
    # sentence 0 and 2 from the binary file, sentence 1 as text; blocks out of order
    def block(data, tag, k):
        starts = [i for i in range(len(data)) if data.startswith(tag, i)]
        starts.append(len(data))
        return data[starts[k]:starts[k + 1]]

    fmix = block(parts[True][0], b"FEATURES_BIN_BEGIN_0", 2) + block(parts[False][0], b"FEATURES_TXT_BEGIN_0", 1) \
        + block(parts[True][0], b"FEATURES_BIN_BEGIN_0", 0)
    smix = block(parts[True][1], b"SCORES_BIN_BEGIN_0", 2) + block(parts[False][1], b"SCORES_TXT_BEGIN_0", 1) \
        + block(parts[True][1], b"SCORES_BIN_BEGIN_0", 0)
    (tmp_path / "fmix").write_bytes(gzip.compress(fmix))
    (tmp_path / "smix").write_bytes(smix)
    got = mert_data.read_features(str(tmp_path / "fmix"), FeatureSpace())
    assert got["sent_ids"].tolist() == [2, 1, 1, 1, 0, 0]
    text_dense = reference.read_features(str(tmp_path / "fFalse"), FeatureSpace())["dense"]
    want = np.concatenate([c.dense[5:6].astype(np.float32), text_dense[2:5], c.dense[0:2].astype(np.float32)])
    np.testing.assert_array_equal(got["dense"], want)
    sids, stats, _ = mert_data.read_scores(str(tmp_path / "smix"))
    assert sids.tolist() == [2, 1, 1, 1, 0, 0]
    np.testing.assert_array_equal(stats, c.stats[[5, 2, 3, 4, 0, 1]])
    corpus = mert_data.read_mert_data([str(tmp_path / "fmix")], [str(tmp_path / "smix")])
    np.testing.assert_array_equal(corpus.stats, c.stats)


def test_binary_refuses_sparse_features(tmp_path):
    c = NbestCorpus.from_arrays(np.zeros(1), np.ones((1, 1)), ["F_0"], np.ones((1, 9)),
                                sparse=(np.array([0, 1]), np.array([0]), np.array([2.0])), sparse_names=["s_x"])
    with pytest.raises(ValueError, match="cannot hold sparse features.*Moses drops them"):
        mert_data.write_features(str(tmp_path / "f"), c, binary=True)
    assert not (tmp_path / "f").exists()


def test_binary_average_reference_length_is_refused_like_the_text_form(tmp_path, input_error):
    c = dense_store(sizes=(1,), div=2)
    c.stats[0, 8] = 7  # 3.5 after division
    s = tmp_path / "s.bin"
    mert_data.write_scores(str(s), c, binary=True)
    with input_error(s, 1, "sentence 0, hypothesis 1 of 1", "3.5", "reflen:average files cannot be read back"):
        mert_data.read_scores(str(s))


def test_binary_scores_of_old_moses_int32_are_read(write):
    stats = np.array([[5, 8, 3, 7, 1, 6, 0, 5, 8], [0, 0, 0, 0, 0, 0, 0, 0, 9]], dtype=np.int32)
    s = write("s.dat", b"SCORES_BIN_BEGIN_0 4 2 9 BLEU\n" + stats.tobytes() + b"SCORES_BIN_END_0\n")
    sids, got, _ = mert_data.read_scores(s)
    assert sids.tolist() == [4, 4]
    np.testing.assert_array_equal(got, stats)


# ------------------------------------------------------------------ errors
F_HEAD = "FEATURES_TXT_BEGIN_0 0 1 2 A_0 B_0 \n"
BAD_FEATURES = [
    (F_HEAD + "1 2 \n", 3, "expected FEATURES_TXT_END_0 after 1 lines of sentence 0"),
    (F_HEAD + "1 2 ", 3, "expected FEATURES_TXT_END_0 after 1 lines of sentence 0"),
    (F_HEAD + "1 2 \nFEATURES_TXT_END \n", 3, "expected FEATURES_TXT_END_0 after 1 lines", "got 'FEATURES_TXT_END '"),
    ("FEATURES_TXT_BEGIN_0 0 2 2 A_0 B_0 \n1 2 \nFEATURES_TXT_END_0\n", 3, "block of sentence 0 ends before its 2"),
    ("FEATURES_TXT_BEGIN_0 0 2 2 A_0 B_0 \n1 2 \n", 3, "block of sentence 0 ends before its 2 lines"),
    ("\n\nFEATURES_TXT_BEGIN_0 0 x 2 A_0 B_0\n", 3, "expected 'FEATURES_TXT_BEGIN_0 <sentence>", "FEATURES_BIN_BEGIN_0"),
    ("FEATURES_TXT_BEGIN_0 0 1\n", 1, "expected 'FEATURES_TXT_BEGIN_0 <sentence>"),
    ("SCORES_TXT_BEGIN_0 0 1 9 BLEU\n", 1, "expected 'FEATURES_TXT_BEGIN_0 <sentence>"),
    ("FEATURES_TXT_BEGIN_0 99999999999 1 2 A_0 B_0\n", 1, "out of range"),
    ("FEATURES_TXT_BEGIN_0 0 1 3 A_0 B_0\n", 1, "announces 3 dense features but names 2"),
    (F_HEAD + "1 \nFEATURES_TXT_END_0\n", 2, "expected 2 dense values, got 1"),
    (F_HEAD + "1 abc s=1 \nFEATURES_TXT_END_0\n", 2, "expected 2 numbers, got '1 abc'"),
    (F_HEAD + "1 0x1p3 \nFEATURES_TXT_END_0\n", 2, "expected 2 numbers, got '1 0x1p3'"),
    (F_HEAD + "1 1_000 \nFEATURES_TXT_END_0\n", 2, "expected 2 numbers"),
    (F_HEAD + "nan 1 \nFEATURES_TXT_END_0\n", 2, "feature value is NaN or infinite"),
    (F_HEAD + "1 -1e999 \nFEATURES_TXT_END_0\n", 2, "feature value is NaN or infinite"),
    (F_HEAD + "1 2 s_x \nFEATURES_TXT_END_0\n", 2, "expected 'name=value' after the dense values, got 's_x'"),
    (F_HEAD + "1 2 =4 \nFEATURES_TXT_END_0\n", 2, "expected 'name=value'", "'=4'"),
    (F_HEAD + "1 2 s=x \nFEATURES_TXT_END_0\n", 2, "expected a number in 's=x'"),
    (F_HEAD + "1 2 s= \nFEATURES_TXT_END_0\n", 2, "expected a number in 's='"),
    (F_HEAD + "1 2 s=inf \nFEATURES_TXT_END_0\n", 2, "feature value in 's=inf' is NaN or infinite"),
    (F_HEAD + "1 2 s=1 t=2 s=3 \nFEATURES_TXT_END_0\n", 2, "feature 's' twice on one line"),
    (F_HEAD + "1 2 B_0=3 \nFEATURES_TXT_END_0\n", 2, "feature 'B_0' twice on one line"),
    (F_HEAD + "1 2 \nFEATURES_TXT_END_0\nFEATURES_TXT_BEGIN_0 1 1 2 A_0 C_0 \n", 4,
     "dense feature names differ from the first block's", "'A_0 B_0'", "'A_0 C_0'"),
    (F_HEAD + "1 2 \nFEATURES_TXT_END_0\nFEATURES_TXT_BEGIN_0 1 1 1 A_0 \n", 4,
     "dense feature names differ from the first block's"),
    (b"FEATURES_TXT_BEGIN_0 0 1 1 A_0 \n1 s\xff=1 \nFEATURES_TXT_END_0\n", 2, "invalid UTF-8 in feature name"),
    (b"FEATURES_TXT_BEGIN_0 0 1 1 A\xc3_0 \n1 \nFEATURES_TXT_END_0\n", 1, "invalid UTF-8"),
    ("FEATURES_BIN_BEGIN_0 0 2 2 A_0 B_0 \n" + "\0" * 12, 1,
     "binary block of sentence 0 ends after 1 of its 2 hypotheses"),
    ("FEATURES_BIN_BEGIN_0 0 1 1 A_0 B_0 \n", 1, "announces 1 dense features but names 2"),
    ("FEATURES_BIN_BEGIN_0 0 1 2 A_0 B_0 \n" + "\0" * 8 + "FEATURES_TXT_END_0\n", 2,
     "expected FEATURES_BIN_END_0 after 1 binary hypotheses of sentence 0", "dimension"),
    ("", None, "empty features file"),
    ("\n \n", None, "empty features file"),
    ("FEATURES_TXT_BEGIN_0 0 0 1 A_0 \nFEATURES_TXT_END_0\n", None, "empty features file"),
]


@pytest.mark.parametrize("case", BAD_FEATURES, ids=range(len(BAD_FEATURES)))
def test_bad_features(write, input_error, case):
    text, line, *fragments = case
    f = write("f.dat", text)
    with input_error(f, line, *fragments):
        mert_data.read_features(f, FeatureSpace())


def test_binary_nan_is_reported_at_the_block_header(write, input_error):
    values = np.array([[1, 2], [3, np.nan]], dtype=np.float32).tobytes()
    f = write("f.dat", b"\nFEATURES_BIN_BEGIN_0 7 2 2 A_0 B_0 \n" + values + b"FEATURES_BIN_END_0\n")
    with input_error(f, 2, "binary block of sentence 7, hypothesis 2 of 2", "feature value is NaN or infinite"):
        mert_data.read_features(f, FeatureSpace())


S_HEAD = "SCORES_TXT_BEGIN_0 0 1 9 BLEU\n"
BAD_SCORES = [
    ("SCORES_TXT_BEGIN_0 0 1 9 TER\n", 1, "scorer TER has 3 statistics per hypothesis, the header says 9"),
    ("SCORES_TXT_BEGIN_0 0 1 9\n", 1, "expected '<number of statistics> <scorer>' (e.g. '9 BLEU', '3 TER') after "
                                     "the sentence id and count; got '9'"),
    ("SCORES_TXT_BEGIN_0 0 1 65 X\n", 1, "expected '<number of statistics> <scorer>'"),
    (S_HEAD + "1 1 1 1 1 1 1 1 1 \nSCORES_TXT_END_0\nSCORES_TXT_BEGIN_0 1 1 9 BLEU,TER\n", 4,
     "expected '9 BLEU', as in the first block, after the sentence id and count; got '9 BLEU,TER'"),
    ("FEATURES_TXT_BEGIN_0 0 1 9 BLEU\n", 1, "expected 'SCORES_TXT_BEGIN_0 <sentence>", "SCORES_BIN_BEGIN_0"),
    (S_HEAD + "1 1 1 1 1 1 1 1 \nSCORES_TXT_END_0\n", 2, "expected 9 statistics, got 8"),
    (S_HEAD + "1 1 1 1 1 1 1 1 1 1 \nSCORES_TXT_END_0\n", 2, "expected 9 statistics, got 10"),
    (S_HEAD + "1 1 1 1 1 1 1 1 8.5 \nSCORES_TXT_END_0\n", 2, "'1 1 1 1 1 1 1 1 8.5'", "reflen:average"),
    (S_HEAD + "1 1 1 1 1 1 1 1 -1 \nSCORES_TXT_END_0\n", 2, "negative statistic in '1 1 1 1 1 1 1 1 -1'"),
    (S_HEAD + "1 1 1 1 1 1 1 1 3000000000 \nSCORES_TXT_END_0\n", 2, "too large"),
    (S_HEAD + "1 1 1 1 1 1 1 1 1 \n", 3, "expected SCORES_TXT_END_0 after 1 lines of sentence 0"),
    ("SCORES_TXT_BEGIN_0 0 2 9 BLEU\n1 1 1 1 1 1 1 1 1 \nSCORES_TXT_END_0\n", 3, "ends before its 2 lines"),
    (b"SCORES_BIN_BEGIN_0 3 1 9 BLEU\n" + np.array([1, 1, 1, 1, -1, 1, 1, 1, 1], np.float32).tobytes()
     + b"SCORES_BIN_END_0\n", 1, "sentence 3, hypothesis 1 of 1", "negative statistic in 1 1 1 1 -1"),
    (b"SCORES_BIN_BEGIN_0 3 1 9 BLEU\n" + b"\0" * 35, 1, "ends after 0 of its 1 hypotheses"),
    ("", None, "empty scores file"),
]


@pytest.mark.parametrize("case", BAD_SCORES, ids=range(len(BAD_SCORES)))
def test_bad_scores(write, input_error, case):
    text, line, *fragments = case
    s = write("s.dat", text)
    with input_error(s, line, *fragments):
        mert_data.read_scores(s)


def test_errors_in_a_later_file_name_that_file(write, input_error):
    f1 = write("f1.dat", "FEATURES_TXT_BEGIN_0 0 1 1 A_0 \n1 \nFEATURES_TXT_END_0\n")
    f2 = write("f2.dat", "FEATURES_TXT_BEGIN_0 0 1 1 A_0 \n1 s=1 s=2 \nFEATURES_TXT_END_0\n")
    s = write("s.dat", ONE_SCORE_BLOCK)
    with input_error(f2, 2, "feature 's' twice on one line"):
        mert_data.read_mert_data([f1, f2], [s, s])
