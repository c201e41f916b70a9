"""Reading features.dat / scores.dat sentence by sentence (mert_data.iter_mert_batches)
equals reading them whole (read_mert_data): the same rows, ids and errors; and the
scanner's streaming hand-over, names-only pass and duplicate flags."""

from __future__ import annotations

import gzip
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplug.corpus import FeatureSpace, NbestCorpus
from mtplug.errors import InputError
from mtplug.formats import mert_data
from tests.reference.random_store import random_store


def blocks_of(data: bytes, end: bytes) -> list[bytes]:
    out, start = [], 0
    while start < len(data):
        stop = data.index(end, start) + len(end) + 1
        out.append(data[start:stop])
        start = stop
    return out


def write_pair(d: str, name: str, store: NbestCorpus) -> tuple[str, str]:
    f, s = os.path.join(d, f"{name}.features.dat"), os.path.join(d, f"{name}.scores.dat")
    mert_data.write_features(f, store)
    mert_data.write_scores(s, store)
    return f, s


def iteration_files(d: str, seed: int, n_files: int, gz: bool = False) -> tuple[list[str], list[str]]:
    """Files of several tuning iterations over the same sentences: later files repeat
    some rows of the first (duplicates across files), bring sparse names in other orders,
    and one holds each sentence twice in a row (an appended iteration)."""
    rng = np.random.default_rng(seed)
    S = int(rng.integers(2, 7))
    ffiles, sfiles = [], []
    for k in range(n_files):
        sizes = rng.integers(0 if k else 1, 6, size=S)
        sizes[0] = max(sizes[0], 1)
        store = random_store(seed * 10 + k, tuple(int(x) for x in sizes), n_dense=2, n_sparse=int(rng.integers(3, 8)))
        f, s = write_pair(d, f"run{k}", store)
        if k == 2:
            # sentence blocks of run0 merged in: each sentence twice in a row
            fb = blocks_of(Path(f).read_bytes(), b"FEATURES_TXT_END_0")
            sb = blocks_of(Path(s).read_bytes(), b"SCORES_TXT_END_0")
            fb0 = blocks_of(Path(ffiles[0]).read_bytes(), b"FEATURES_TXT_END_0")
            sb0 = blocks_of(Path(sfiles[0]).read_bytes(), b"SCORES_TXT_END_0")
            bid = [int(x.split()[1]) for x in fb]
            bid0 = [int(x.split()[1]) for x in fb0]
            fout, sout = b"", b""
            for sid in range(S):
                for blocks, sblocks, ids in ((fb, sb, bid), (fb0, sb0, bid0)):
                    if sid in ids:
                        fout += blocks[ids.index(sid)]
                        sout += sblocks[ids.index(sid)]
            Path(f).write_bytes(fout)
            Path(s).write_bytes(sout)
        ffiles.append(f)
        sfiles.append(s)
    if gz:
        for path in ffiles + sfiles:
            data = Path(path).read_bytes()
            Path(path).write_bytes(gzip.compress(data))
    return ffiles, sfiles


def streamed(ffiles, sfiles, chunk_bytes):
    """The batches of iter_mert_batches joined into store arrays, and the space."""
    space = FeatureSpace()
    seen = []
    batches = list(mert_data.iter_mert_batches(ffiles, sfiles, space, chunk_bytes=chunk_bytes,
                                               on_metric=seen.append))
    assert len(seen) == 1
    assert [b.first for b in batches] == list(np.cumsum([0] + [b.n_sentences for b in batches[:-1]]))
    offsets = [0]
    for b in batches:
        offsets += (b.sent_offsets[1:] + offsets[-1]).tolist()
    ptr, nnz = [np.zeros(1, np.int64)], 0
    for b in batches:
        ptr.append(b.sparse_indptr[1:] + nnz)
        nnz += int(b.sparse_indptr[-1])
    return {"sent_offsets": np.array(offsets), "dense": np.concatenate([b.dense for b in batches]),
            "stats": np.concatenate([b.stats for b in batches]), "sparse_indptr": np.concatenate(ptr),
            "sparse_ids": np.concatenate([b.sparse_ids for b in batches]),
            "sparse_values": np.concatenate([b.sparse_values for b in batches])}, space, seen[0]


def assert_same_store(got: dict, space, corpus: NbestCorpus) -> None:
    assert space.feature_names == corpus.feature_names
    for key in got:
        want = getattr(corpus, key)
        assert got[key].shape == want.shape, key
        assert got[key].tobytes() == np.ascontiguousarray(want, dtype=got[key].dtype).tobytes(), key


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), n_files=st.integers(1, 3), chunk=st.sampled_from([1, 7, 64, 4096]),
       gz=st.booleans())
def test_batches_equal_the_whole_store(seed, n_files, chunk, gz):
    with tempfile.TemporaryDirectory() as d:
        ffiles, sfiles = iteration_files(d, seed, n_files, gz)
        corpus = mert_data.read_mert_data(ffiles, sfiles)
        got, space, metric = streamed(ffiles, sfiles, chunk)
    assert_same_store(got, space, corpus)
    assert metric.name == corpus.metric.name


def test_sentences_without_rows_are_empty_batches(write):
    f = write("f", "FEATURES_TXT_BEGIN_0 2 1 1 A_0 \n1 \nFEATURES_TXT_END_0\n"
                   "FEATURES_TXT_BEGIN_0 5 1 1 A_0 \n2 \nFEATURES_TXT_END_0\n")
    s = write("s", "SCORES_TXT_BEGIN_0 2 1 9 BLEU\n1 1 1 1 1 1 1 1 1 \nSCORES_TXT_END_0\n"
                   "SCORES_TXT_BEGIN_0 5 1 9 BLEU\n1 1 1 1 1 1 1 1 2 \nSCORES_TXT_END_0\n")
    got, space, _ = streamed([f], [s], 8)
    assert got["sent_offsets"].tolist() == [0, 0, 0, 1, 1, 1, 2]
    assert_same_store(got, space, mert_data.read_mert_data([f], [s]))


def test_blocks_out_of_order_are_not_streamable(tmp_path):
    f, s = write_pair(str(tmp_path), "r", random_store(1, (2, 3, 1)))
    fb = blocks_of(Path(f).read_bytes(), b"FEATURES_TXT_END_0")
    sb = blocks_of(Path(s).read_bytes(), b"SCORES_TXT_END_0")
    Path(f).write_bytes(fb[1] + fb[0] + fb[2])
    Path(s).write_bytes(sb[1] + sb[0] + sb[2])
    with pytest.raises(mert_data.NotStreamable):
        list(mert_data.iter_mert_batches([f], [s], FeatureSpace()))
    mert_data.read_mert_data([f], [s])   # the whole read takes any order


def first_error(fn):
    try:
        fn()
    except InputError as err:
        return (err.message, err.path, err.line)
    return None


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 1000), data=st.data())
def test_errors_are_those_of_the_whole_read_in_its_order(seed, data):
    with tempfile.TemporaryDirectory() as d:
        ffiles, sfiles = iteration_files(d, seed, 2)
        for path in data.draw(st.lists(st.sampled_from(ffiles + sfiles), min_size=1, max_size=3)):
            raw = bytearray(Path(path).read_bytes())
            pos = data.draw(st.integers(0, len(raw)))
            op = data.draw(st.sampled_from(["set", "cut", "insert"]))
            if op == "set" and pos < len(raw):
                raw[pos] = data.draw(st.sampled_from([10, 32, 45, 46, 61, 120, 255]))
            elif op == "cut":
                del raw[pos:pos + data.draw(st.integers(1, 30))]
            else:
                raw[pos:pos] = data.draw(st.sampled_from([b"\n", b" ", b"=", b"x", b"-1", b"7", b"s=1 "]))
            Path(path).write_bytes(bytes(raw))
        whole = first_error(lambda: mert_data.read_mert_data(ffiles, sfiles))
        try:
            stream = first_error(lambda: streamed(ffiles, sfiles, data.draw(st.sampled_from([5, 100, 1 << 16]))))
        except mert_data.NotStreamable:
            return
        assert stream == whole


def test_a_later_scorer_is_an_error_after_the_earlier_files(tmp_path, write):
    f0, s0 = write_pair(str(tmp_path), "a", random_store(2, (2, 2)))
    f1 = write("f1", "FEATURES_TXT_BEGIN_0 0 1 3 D0 D1 D2 \n1 2 3 \nFEATURES_TXT_END_0\n")
    s1 = write("s1", "SCORES_TXT_BEGIN_0 0 1 3 TER\n1 2 3 \nSCORES_TXT_END_0\n")
    want = first_error(lambda: mert_data.read_mert_data([f0, f1], [s0, s1]))
    assert want and "holds TER statistics" in want[0]
    assert first_error(lambda: streamed([f0, f1], [s0, s1], 64)) == want


def test_on_metric_errors_come_after_every_file_error(tmp_path, write):
    f0, s0 = write_pair(str(tmp_path), "a", random_store(3, (2, 2)))
    bad = write("bad", Path(f0).read_text() + "junk\n")

    def refuse(metric):
        raise InputError("refused", "x")

    with pytest.raises(InputError, match="expected 'FEATURES_TXT_BEGIN_0"):
        list(mert_data.iter_mert_batches([bad], [s0], FeatureSpace(), on_metric=refuse))
    with pytest.raises(InputError, match="refused"):
        list(mert_data.iter_mert_batches([f0], [s0], FeatureSpace(), on_metric=refuse))


# ------------------------------------------------------------------ the scanner's parts
def scan_chunks(path: str, scanner, chunk: int, space=None):
    data = Path(path).read_bytes()
    for i in range(0, len(data), chunk):
        scanner.feed(data[i:i + chunk])
        rc = scanner.run()
        while rc != 0:
            assert rc == 1   # first header
            if space is not None:
                space.define_dense(scanner.err_text.decode().split()[4:])
            rc = scanner.run()
    assert scanner.at_eof() == 0


@pytest.mark.parametrize("chunk", [1, 13, 1 << 20])
def test_take_hands_over_what_finish_would(tmp_path, chunk):
    from mtplug._ext import _mertdata_scan

    f, _ = write_pair(str(tmp_path), "r", random_store(4, (3, 1, 4, 2), n_sparse=5))
    whole = mert_data.read_features(f, FeatureSpace())
    space = FeatureSpace()
    scanner = _mertdata_scan.MertDataScanner(False)
    parts = []
    data = Path(f).read_bytes()
    for i in range(0, len(data), chunk):
        scanner.feed(data[i:i + chunk])
        rc = scanner.run()
        while rc != 0:
            space.define_dense(scanner.err_text.decode().split()[4:])
            rc = scanner.run()
        ids = np.array([space.names.add(n) for n in scanner.sparse_names()], dtype=np.int32)
        part = scanner.take(ids)
        if len(part["blocks"]):
            parts.append(part)
    assert scanner.at_eof() == 0
    blocks = np.concatenate([p["blocks"] for p in parts])
    assert blocks[:, :2].tolist() == [[0, 3], [1, 1], [2, 4], [3, 2]]
    np.testing.assert_array_equal(np.concatenate([p["dense"] for p in parts]), whole["dense"])
    np.testing.assert_array_equal(np.concatenate([p["sparse_ids"] for p in parts]), whole["sparse_ids"])
    np.testing.assert_array_equal(np.concatenate([p["sparse_values"] for p in parts]), whole["sparse_values"])
    counts = np.concatenate([np.diff(p["sparse_indptr"]) for p in parts])
    np.testing.assert_array_equal(counts, np.diff(whole["sparse_indptr"]))


def test_names_only_pass_finds_the_names_in_the_full_order(tmp_path):
    from mtplug._ext import _mertdata_scan

    for seed in range(5):
        f, _ = write_pair(str(tmp_path), f"r{seed}", random_store(seed, (4, 2, 3), n_sparse=6))
        full = _mertdata_scan.MertDataScanner(False)
        scan_chunks(f, full, 11, FeatureSpace())
        quick = _mertdata_scan.MertDataScanner(False, True)
        scan_chunks(f, quick, 11)
        assert quick.sparse_names() == full.sparse_names()
        assert quick.rows_read == full.rows_read > 0


def test_duplicate_flags_and_block_order(write):
    from mtplug._ext import _mertdata_scan

    head = "FEATURES_TXT_BEGIN_0 {} {} 2 A_0 B_0 \n"
    end = "FEATURES_TXT_END_0\n"
    cases = [
        # (blocks: (sid, rows), dup, increasing, nondecreasing)
        ([(0, ["1 2 s=1 t=2 ", "1 2 t=2 s=1 "])], True, True, True),     # equal: sparse order does not matter
        ([(0, ["1 2 s=1 ", "1 2 s=2 "]), (1, ["1 2 s=1 "])], False, True, True),
        ([(0, ["1 2 ", "-0 2 ", "0 2 "])], False, True, True),           # -0 and 0 differ, as their bytes
        ([(0, ["1 2 "]), (0, ["1 2 "])], False, False, True),           # equal rows, but in two blocks
        ([(1, ["1 2 "]), (0, ["1 3 "])], False, False, False),
    ]
    for k, (blocks, dup, inc, nondec) in enumerate(cases):
        text = "".join(head.format(sid, len(rows)) + "".join(r + "\n" for r in rows) + end for sid, rows in blocks)
        f = write(f"f{k}", text)
        scanner = _mertdata_scan.MertDataScanner(False)
        scan_chunks(f, scanner, 5, FeatureSpace())
        assert (scanner.dup_candidates, scanner.increasing, scanner.nondecreasing) == (dup, inc, nondec), k
        out = scanner.finish(np.arange(scanner.n_names, dtype=np.int32) + 2)
        assert out["blocks"][:, 2].astype(bool).tolist() == [dup and i == 0 for i in range(len(blocks))]


@pytest.mark.parametrize("dup_rows", [False, True])
def test_read_mert_data_equals_merging_the_arrays(tmp_path, dup_rows):
    store = random_store(7, (4, 5, 3), n_sparse=4)
    if dup_rows:
        # a row repeated within its sentence (features and statistics): removed once read
        store.dense[1], store.stats[1] = store.dense[0], store.stats[0]
        a, b = store.sparse_indptr[0], store.sparse_indptr[1]
        rows = [(store.sparse_ids[a:b], store.sparse_values[a:b])] + [
            (store.sparse_ids[store.sparse_indptr[h]:store.sparse_indptr[h + 1]],
             store.sparse_values[store.sparse_indptr[h]:store.sparse_indptr[h + 1]]) for h in range(1, store.n_hypotheses)]
        rows[1] = rows[0]
        store.sparse_indptr = np.cumsum([0] + [len(r[0]) for r in rows]).astype(np.int64)
        store.sparse_ids = np.concatenate([r[0] for r in rows]).astype(np.int32)
        store.sparse_values = np.concatenate([r[1] for r in rows])
    f, s = write_pair(str(tmp_path), "r", store)
    got = mert_data.read_mert_data([f], [s])
    want = NbestCorpus(n_sentences=0, has_strings=False)
    arrays = mert_data.read_features(f, want.space)
    arrays["stats"] = mert_data.read_scores(s)[1]
    want.metric = got.metric
    want.stats = np.zeros((0, 9), np.int32)
    want.merge_arrays(arrays)
    assert got.n_hypotheses == want.n_hypotheses == store.n_hypotheses - dup_rows
    for key in ("sent_offsets", "dense", "stats", "sparse_indptr", "sparse_ids", "sparse_values"):
        a, b = getattr(got, key), getattr(want, key)
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), key
