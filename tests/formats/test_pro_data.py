"""Moses pro.data: exact bytes (mert/pro.cpp outputSample + SparseVector::write), round trips."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from mtplug.corpus import NbestCorpus
from mtplug.errors import InputError
from mtplug.formats import mert_data
from mtplug.formats.pro_data import ProData, read_pro_data
from tests.reference.pro_data_writer import pro_data_from_pairs, write_pro_data
from mtplug.metrics.sentence import hypothesis_scores
from mtplug.optimizers import classifiers
from mtplug.optimizers.pro import pair_differences, sample_pairs

STATS = np.array([[3, 3, 2, 2, 1, 2, 0, 1, 3]], dtype=np.int32)


def store(dense, sparse_rows, sparse_names=("WT_house~haus", "WT_home~haus")) -> NbestCorpus:
    """One sentence; sparse_rows: per hypothesis a dict name -> value."""
    n = len(dense)
    names = list(sparse_names)
    indptr, ids, vals = [0], [], []
    for row in sparse_rows:
        for name, v in row.items():
            ids.append(names.index(name))
            vals.append(v)
        indptr.append(len(ids))
    stats = np.repeat(STATS, n, axis=0)
    stats[:, 8] += np.arange(n, dtype=np.int32)    # distinct rows: the store drops duplicates
    return NbestCorpus.from_arrays([0] * n, np.array(dense, dtype=float), [f"X{j}_0" for j in range(len(dense[0]))],
                                   stats, sparse=(np.array(indptr), np.array(ids, dtype=np.int64), np.array(vals)),
                                   sparse_names=names)


def written(tmp_path, corpus, better, worse) -> str:
    path = tmp_path / "pro.data"
    write_pro_data(path, pro_data_from_pairs(corpus, better, worse))
    return path.read_bytes().decode()


def test_the_documented_example_byte_for_byte(tmp_path):
    # docs/moses.md: "1 F0 1.75 F2 -0.3 F3 0.3 WT_house~haus 1 WT_home~haus -1 " and its mirror
    corpus = store([[2.75, 1.0, 0.7, 1.3], [1.0, 1.0, 1.0, 1.0]], [{"WT_house~haus": 1.0}, {"WT_home~haus": 1.0}])
    assert written(tmp_path, corpus, [0], [1]) == (
        "1 F0 1.75 F2 -0.3 F3 0.3 WT_house~haus 1 WT_home~haus -1 \n"
        "0 F0 -1.75 F2 0.3 F3 -0.3 WT_house~haus -1 WT_home~haus 1 \n")


@pytest.mark.parametrize("dense,sparse,lines", [
    # no sparse feature on either side: no trailing space
    ([[2.75, 0.7], [1.0, 1.0]], [{}, {}], "1 F0 1.75 F1 -0.3\n0 F0 -1.75 F1 0.3\n"),
    # sparse features that cancel: Moses still writes the space that opens the sparse part
    ([[2.75, 1.0], [1.0, 1.0]], [{"WT_house~haus": 2.0}, {"WT_house~haus": 2.0}], "1 F0 1.75 \n0 F0 -1.75 \n"),
    # identical hypotheses: the label alone
    ([[1.0, 2.0], [1.0, 2.0]], [{}, {}], "1\n0\n"),
    # only sparse differences: one space after the label
    ([[1.0, 2.0], [1.0, 2.0]], [{"WT_home~haus": 0.5}, {}], "1 WT_home~haus 0.5 \n0 WT_home~haus -0.5 \n"),
    # |d| <= 1e-5 is left out (dense), |d| < 1e-5 (sparse); six significant digits
    ([[1.000004, 1234567.0, 1e-3], [1.0, 0.0, 0.0]], [{"WT_house~haus": 2e-5}, {"WT_home~haus": 5e-6}],
     "1 F1 1.23457e+06 F2 0.001 WT_house~haus 2e-05 \n0 F1 -1.23457e+06 F2 -0.001 WT_house~haus -2e-05 \n"),
])
def test_line_layout(tmp_path, dense, sparse, lines):
    assert written(tmp_path, store(dense, sparse), [0], [1]) == lines


def test_differences_are_taken_in_float32_as_moses():
    # 0.7f - 1.0f is -0.30000001192..., not the double -0.30000000000000004
    data = pro_data_from_pairs(store([[0.7], [1.0]], [{}, {}]), [0], [1])
    assert data.dense[0, 0] == float(np.float32(0.7) - np.float32(1.0))
    assert data.dense[1, 0] == -data.dense[0, 0]


def test_round_trip_and_byte_identity(tmp_path):
    corpus = store([[2.75, 1.0, 0.7], [1.0, 1.0, 1.0], [0.0, 3.0, -2.0]],
                   [{"WT_house~haus": 1.0}, {"WT_home~haus": 1.0, "WT_house~haus": 1.0}, {}])
    data = pro_data_from_pairs(corpus, [0, 2, 1], [1, 0, 2])
    first = tmp_path / "a.data"
    write_pro_data(first, data)
    back = read_pro_data(first, n_dense=3, sparse_names=data.sparse_names)
    for f in ("labels", "sparse_indptr", "sparse_ids", "sparse_marker"):
        np.testing.assert_array_equal(getattr(back, f), getattr(data, f))
    assert back.sparse_names == data.sparse_names
    # six significant digits of the float32 differences
    np.testing.assert_allclose(back.dense, data.dense, rtol=1e-6)
    np.testing.assert_allclose(back.sparse_values, data.sparse_values, rtol=1e-6)
    # read -> write -> read gives equal objects; a file we wrote comes back byte-identical
    second = tmp_path / "b.data"
    write_pro_data(second, back)
    assert second.read_bytes() == first.read_bytes()
    assert read_pro_data(second, n_dense=3, sparse_names=data.sparse_names).equals(back)
    gz = tmp_path / "c.data.gz"
    gz.write_bytes(gzip.compress(first.read_bytes()))
    assert read_pro_data(gz, n_dense=3, sparse_names=data.sparse_names).equals(back)
    # without given names, the numbering is by first appearance (here WT_home~haus: the
    # shared WT_house~haus of the first pair cancels)
    assert read_pro_data(first).sparse_names == ["WT_home~haus", "WT_house~haus"]


def test_round_trip_of_a_sampled_toy_run(shared_data, tmp_path):
    d = shared_data / "moses-toy"
    corpus = mert_data.read_mert_data([str(d / "run1.features.dat")], [str(d / "run1.scores.dat")])
    sample = sample_pairs(hypothesis_scores(corpus, "moses-sentence-bleu"), corpus.sent_offsets, seed=1)
    data = pro_data_from_pairs(corpus, sample.better, sample.worse)
    path = tmp_path / "pro.data"
    write_pro_data(path, data)
    text = path.read_bytes()
    # Moses's pro writes 6,000 lines on this set (shared/data/moses-toy/README.md)
    assert text.count(b"\n") == 6000
    back = read_pro_data(path)
    write_pro_data(tmp_path / "again.data", back)
    assert (tmp_path / "again.data").read_bytes() == text
    # a value read back is the float32 difference Moses prints, within six digits
    np.testing.assert_allclose(back.dense[0::2, : back.n_dense],
                               pair_differences(corpus, sample.better, sample.worse).dense[:, : back.n_dense],
                               rtol=1e-5, atol=1e-5)


def test_design_matrix_trains_like_the_pairs():
    corpus = store([[2.75, 1.0, 0.5], [1.0, 1.0, 1.0], [0.0, 3.0, -2.0], [0.25, 0.5, 0.5]],
                   [{"WT_house~haus": 1.0}, {"WT_home~haus": 1.0}, {}, {"WT_home~haus": 2.0}])
    better, worse = np.array([0, 2, 3, 0]), np.array([1, 1, 1, 3])
    X, y = pro_data_from_pairs(corpus, better, worse).design()
    assert X.dense.shape == (8, 3) and X.sparse.shape == (8, 2)
    np.testing.assert_array_equal(y, np.tile([1.0, -1.0], 4))
    both = classifiers.fit_logistic(X, y, 1.0, tolerance=1e-10)
    one = classifiers.fit_logistic(pair_differences(corpus, better, worse), np.ones(4), 1.0, loss_weight=2.0,
                                   tolerance=1e-10)
    np.testing.assert_allclose(both.weights, one.weights, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("text,msg", [
    ("2 F0 1\n", "label must be 0 or 1"),
    ("1 F0\n", "has no value"),
    ("1 F0 x\n", "expected a number for .F0., got .x."),
    ("1 F0 1 F0 2\n", "twice"),
    ("1 F0 1\n\n", "empty line"),
    ("1 F7 1\n", "only 3 dense"),
])
def test_reader_errors_name_file_and_line(write, text, msg):
    path = write("bad.data", text)
    with pytest.raises(InputError, match=msg) as err:
        read_pro_data(path, n_dense=3)
    assert err.value.path == path and err.value.line is not None


def test_reader_names_and_defaults(write):
    path = write("p.data", "1 F2 0.5 a_b 1 \n0 F2 -0.5 c_d -1 a_b -1 \n1\n")
    data = read_pro_data(path)
    assert data.n_dense == 3 and data.sparse_names == ["a_b", "c_d"]
    np.testing.assert_array_equal(data.labels, [1, 0, 1])
    np.testing.assert_array_equal(data.sparse_marker, [1, 1, 0])
    np.testing.assert_array_equal(data.dense[:, 2], [0.5, -0.5, 0.0])
    # the sparse order of a line is kept (Moses's own feature numbering may differ from ours)
    np.testing.assert_array_equal(data.sparse_ids, [0, 1, 0])
    assert isinstance(data, ProData)
