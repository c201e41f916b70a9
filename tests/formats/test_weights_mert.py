"""Moses optimizer files: init.opt, weights.txt, kbmira --dense-init, kbmira/megam output."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplug.formats.mert_weights import (
    InitOpt,
    read_dense_init,
    read_init_opt,
    read_mira_weights,
    read_weights_txt,
    write_dense_init,
    write_init_opt,
    write_mira_weights,
    write_weights_txt,
)
from mtplug.formats.weights_core import Weights

TOY_NAMES = [
    "Distortion0_0", "LM0_0", "WordPenalty0_0", "PhrasePenalty0_0",
    "TranslationModel0_0", "TranslationModel0_1", "TranslationModel0_2", "TranslationModel0_3",
]
TOY_START = [0.3, 0.5, -1.0, 0.2, 0.2, 0.2, 0.2, 0.2]
# mert's log for the toy set (shared/data/moses-toy/README.md): its weights.txt holds the same
BEST_POINT = "0.0300807 0.0501345 -0.100269 0.0200538 0.0200538 0.0200538 0.493702 0.265652 "

finite = st.floats(allow_nan=False, allow_infinity=False)
# numbers as the Moses tools print them: %.6f and %g
fixed6 = st.floats(-1e6, 1e6).map(lambda x: float("%.6f" % x))
g6 = finite.map(lambda x: float("%g" % x))


# ----------------------------------------------------------------------------- init.opt


def test_read_real_init_opt(shared_data):
    init = read_init_opt(shared_data / "moses-toy" / "run1.init.opt")
    assert init.start.tolist() == TOY_START
    assert init.mins.tolist() == [0.0] * 8 and init.maxs.tolist() == [1.0] * 8
    assert init.start.dtype == np.float64 and not init.start.flags.writeable
    example = read_init_opt(shared_data / "moses-example" / "init.opt")
    assert len(example) == 15 and example.start[8] == 0.3


def test_write_reproduces_mert_moses_pl_bytes(shared_data, tmp_path):
    src = shared_data / "moses-toy" / "run1.init.opt"
    out = tmp_path / "run1.init.opt"
    write_init_opt(out, read_init_opt(src))
    assert out.read_bytes() == src.read_bytes()


def test_init_opt_from_weights_and_exact(tmp_path):
    w = Weights.from_array(TOY_NAMES, TOY_START)
    init = InitOpt.from_weights(w, TOY_NAMES[::-1], mins=-1.0, maxs=[2.0] * 8)
    assert init.start.tolist() == TOY_START[::-1] and init.mins.tolist() == [-1.0] * 8
    assert init.start_weights(TOY_NAMES[::-1]) == Weights.from_array(TOY_NAMES[::-1], TOY_START[::-1])
    path = tmp_path / "init.opt"
    precise = InitOpt([1 / 3, 2e-9], [0, -0.5], [1, 1e20])
    write_init_opt(path, precise)
    assert path.read_text() == "0.333333 0.000000\n0 -0.5\n1 1e20\n"
    write_init_opt(path, precise, exact=True)
    assert path.read_text() == "0.3333333333333333 2e-09\n0.0 -0.5\n1.0 1e20\n"
    assert read_init_opt(path) == precise


def test_init_opt_rejects_bad_arrays():
    with pytest.raises(ValueError, match="same non-zero length"):
        InitOpt([1.0, 2.0], [0.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="same non-zero length"):
        InitOpt([], [], [])
    with pytest.raises(ValueError, match="non-finite"):
        InitOpt([np.nan], [0.0], [1.0])


@settings(max_examples=100)
@given(st.integers(1, 20).flatmap(lambda n: st.tuples(*[st.lists(fixed6, min_size=n, max_size=n)] * 3)))
def test_init_opt_round_trip_property(tmp_path_factory, rows):
    path = tmp_path_factory.mktemp("opt") / "init.opt"
    init = InitOpt(rows[0], np.minimum(rows[1], rows[2]), np.maximum(rows[1], rows[2]))
    write_init_opt(path, init)
    first = path.read_bytes()
    assert read_init_opt(path) == init
    write_init_opt(path, read_init_opt(path))
    assert path.read_bytes() == first


@settings(max_examples=100)
@given(st.integers(1, 20).flatmap(lambda n: st.tuples(*[st.lists(finite, min_size=n, max_size=n)] * 3)))
def test_init_opt_exact_round_trip_property(tmp_path_factory, rows):
    path = tmp_path_factory.mktemp("opt") / "init.opt"
    init = InitOpt(rows[0], np.minimum(rows[1], rows[2]), np.maximum(rows[1], rows[2]))
    write_init_opt(path, init, exact=True)
    assert read_init_opt(path) == init


@pytest.mark.parametrize(
    "text, line, fragments",
    [
        ("", None, ["empty file", "expected 3 lines"]),
        ("0.3 0.5\n0 0\n", 2, ["file ends after line 2", "expected 3 lines"]),
        ("0.3 0.5\n0 0\n1 1\n1 1\n", 4, ["expected 3 lines", "got 4"]),
        ("0.3 0.5\n0 0\n1 1\n\n", 4, ["expected 3 lines", "got 4"]),
        ("0.3 0.5\n0 0 0\n1 1\n", 2, ["line has 3 minimums", "line 1 has 2", "one per feature"]),
        ("0.3 0.5\n0 0\n1\n", 3, ["line has 1 maximums", "line 1 has 2"]),
        ("0.3 0.5\n\n1 1\n", 2, ["empty line", "expected the minimums"]),
        ("0.3 x\n0 0\n1 1\n", 1, ["expected a number", "got 'x'"]),
        ("0.3 nan\n0 0\n1 1\n", 1, ["'nan'", "expected a finite number"]),
        ("0.3 0.5\n0 -inf\n1 1\n", 2, ["expected a finite number"]),
    ],
)
def test_init_opt_bad_input(write, input_error, text, line, fragments):
    path = write("run1.init.opt", text)
    with input_error(path, line, *fragments):
        read_init_opt(path)


# ----------------------------------------------------------------------------- weights.txt


def test_weights_txt_like_mert(tmp_path):
    path = tmp_path / "weights.txt"
    values = [float(v) for v in BEST_POINT.split()]
    write_weights_txt(path, values)
    assert path.read_text() == BEST_POINT + "\n"  # '%g ' per weight, then a newline
    assert read_weights_txt(path).tolist() == values
    write_weights_txt(path, [123456789.0, -1e-5, 0.0])
    assert path.read_text() == "1.23457e08 -1e-05 0 \n"  # no '+': mert-moses.pl's regex stops at it


def test_weights_txt_rejects_bad_values(tmp_path):
    for bad in ([], [[1.0]], [np.inf]):
        with pytest.raises(ValueError, match="finite"):
            write_weights_txt(tmp_path / "w", bad)


@settings(max_examples=100)
@given(st.lists(g6, min_size=1, max_size=30))
def test_weights_txt_round_trip_property(tmp_path_factory, values):
    path = tmp_path_factory.mktemp("wt") / "weights.txt"
    write_weights_txt(path, values)
    first = path.read_bytes()
    assert read_weights_txt(path).tolist() == values
    write_weights_txt(path, read_weights_txt(path))
    assert path.read_bytes() == first


@settings(max_examples=100)
@given(st.lists(finite, min_size=1, max_size=30))
def test_weights_txt_exact_round_trip_property(tmp_path_factory, values):
    path = tmp_path_factory.mktemp("wt") / "weights.txt"
    write_weights_txt(path, values, exact=True)
    assert read_weights_txt(path).tolist() == values


@pytest.mark.parametrize(
    "text, line, fragments",
    [
        ("", None, ["empty file", "expected one line of numbers"]),
        ("\n", 1, ["empty line", "expected the weights"]),
        ("0.1 0.2\n0.3\n", 2, ["expected one line of numbers", "second line"]),
        ("0.1 abc\n", 1, ["expected a number", "got 'abc'"]),
        ("0.1 -nan\n", 1, ["expected a finite number"]),
    ],
)
def test_weights_txt_bad_input(write, input_error, text, line, fragments):
    path = write("weights.txt", text)
    with input_error(path, line, *fragments):
        read_weights_txt(path)


# ----------------------------------------------------------------------------- dense init


def test_read_real_dense_and_write_it_back(shared_data, tmp_path):
    src = shared_data / "moses-toy" / "run1.dense"
    w = read_dense_init(src)
    assert list(w.items()) == list(zip(TOY_NAMES, TOY_START))
    out = tmp_path / "run1.dense"
    write_dense_init(out, w)
    assert out.read_bytes() == src.read_bytes()


def test_dense_several_values_per_line(write):
    w = read_dense_init(write("features.list", "LM0= 0.5\nTranslationModel0= 0.2 0.3\nTranslationModel0= 0.4\n"))
    assert list(w.items()) == [
        ("LM0_0", 0.5), ("TranslationModel0_0", 0.2), ("TranslationModel0_1", 0.3), ("TranslationModel0_2", 0.4),
    ]


def test_dense_writer_checks_names(tmp_path):
    for names in (["WT_a~b"], ["LM0_1"], ["TM0_0", "LM0_0", "TM0_1"], ["LM0_0", "LM0_0x"]):
        with pytest.raises(ValueError, match="dense|order"):
            write_dense_init(tmp_path / "d", Weights.from_array(names, [0.0] * len(names)))
    assert not (tmp_path / "d").exists()


@pytest.mark.parametrize(
    "text, line, fragments",
    [
        ("", None, ["empty file", "expected 'Label= value'"]),
        ("LM0= 0.5\nfoo\n", 2, ["expected 'Label= value'", "got 'foo'"]),
        ("LM0 0.5\n", 1, ["expected 'Label= value'", "got 'LM0 0.5'"]),
        ("LM0=\n", 1, ["expected 'Label= value'"]),
        ("= 0.5\n", 1, ["expected 'Label= value'"]),
        ("LM0= 0.5\n\n", 2, ["expected 'Label= value'", "got ''"]),
        ("UnknownWordPenalty0 UNTUNEABLE\n", 1, ["expected 'Label= value'"]),
        ("LM0= x\n", 1, ["expected a number for 'LM0'", "got 'x'"]),
        ("LM0= nan\n", 1, ["expected a finite number"]),
        ("LM0= 0.5\nTM0= 1\nLM0= 0.5\n", 3, ["'LM0' continues here", "last at line 1"]),
        ("TM0= 0.2 0.2\nLM0= 0.5\nTM0= 0.2\n", 3, ["'TM0' continues here", "last at line 1"]),
    ],
)
def test_dense_bad_input(write, input_error, text, line, fragments):
    path = write("run1.dense", text)
    with input_error(path, line, *fragments):
        read_dense_init(path)


dense_labels = st.from_regex(r"[A-Z][a-zA-Z]{0,6}[0-9]", fullmatch=True)


@settings(max_examples=100)
@given(st.dictionaries(dense_labels, st.lists(fixed6, min_size=1, max_size=4), min_size=1, max_size=6))
def test_dense_round_trip_property(tmp_path_factory, feats):
    path = tmp_path_factory.mktemp("dense") / "run.dense"
    w = Weights((f"{label}_{k}", v) for label, vals in feats.items() for k, v in enumerate(vals))
    write_dense_init(path, w)
    first = path.read_bytes()
    assert read_dense_init(path) == w
    write_dense_init(path, read_dense_init(path))
    assert path.read_bytes() == first
    write_dense_init(path, w, exact=True)
    assert read_dense_init(path) == w


# ----------------------------------------------------------------------------- kbmira/megam output


def test_mira_output_with_and_without_dense_names(write, tmp_path):
    text = "F0 0.1\nF1 -0.2\nF3 0.05\nWT_das~the 0.01\nWT_haus~house -0.003\n"
    path = write("mert.out", text)
    raw = read_mira_weights(path)
    assert raw.names == ["F0", "F1", "F3", "WT_das~the", "WT_haus~house"]
    named = read_mira_weights(path, dense_names=["Distortion0_0", "LM0_0", "WordPenalty0_0", "PhrasePenalty0_0"])
    assert list(named.items()) == [
        ("Distortion0_0", 0.1), ("LM0_0", -0.2), ("WordPenalty0_0", 0.0),  # F2 missing: 0
        ("PhrasePenalty0_0", 0.05), ("WT_das~the", 0.01), ("WT_haus~house", -0.003),
    ]
    out = tmp_path / "out"
    write_mira_weights(out, raw)
    assert out.read_text() == text
    write_mira_weights(out, named, dense_names=["Distortion0_0", "LM0_0", "WordPenalty0_0", "PhrasePenalty0_0"])
    assert out.read_text() == "F0 0.1\nF1 -0.2\nF2 0\nF3 0.05\nWT_das~the 0.01\nWT_haus~house -0.003\n"


def test_mira_writer_refuses_ambiguous_names(tmp_path):
    with pytest.raises(ValueError, match="dense column"):
        write_mira_weights(tmp_path / "o", Weights({"LM0_0": 1.0, "F7": 2.0}), dense_names=["LM0_0"])


@pytest.mark.parametrize(
    "text, dense, line, fragments",
    [
        ("", None, None, ["empty file", "expected 'F<index> weight'"]),
        ("F0 0.1\nF1\n", None, 2, ["expected 'F<index> weight' or 'name weight'", "got 'F1'"]),
        ("F0 0.1 0.2\n", None, 1, ["expected 'F<index> weight'"]),
        ("F0 abc\n", None, 1, ["expected a number for 'F0'", "got 'abc'"]),
        ("F0 nan\n", None, 1, ["expected a finite number"]),
        ("F0 0.1\nF0 0.2\n", None, 2, ["'F0' given twice", "first at line 1"]),
        ("F0 0.1\nF0 0.2\n", ["a", "b"], 2, ["F0 given twice", "first at line 1"]),
        ("F0 0.1\nF2 0.2\n", ["a", "b"], 2, ["F2 out of range", "expected F0..F1"]),
        ("F0 0.1\nb 0.2\n", ["a", "b"], 2, ["'b' is dense feature F1"]),
        ("WT_a 1\nWT_a 2\n", ["a"], 2, ["'WT_a' given twice"]),
    ],
)
def test_mira_bad_input(write, input_error, text, dense, line, fragments):
    path = write("mert.out", text)
    with input_error(path, line, *fragments):
        read_mira_weights(path, dense_names=dense)


sparse_names = st.from_regex(r"[a-z]{1,4}_[a-z~]{1,6}", fullmatch=True)


@settings(max_examples=100)
@given(st.lists(g6, min_size=1, max_size=10), st.dictionaries(sparse_names, g6, max_size=10))
def test_mira_round_trip_property(tmp_path_factory, dense_values, sparse):
    path = tmp_path_factory.mktemp("mira") / "mert.out"
    dense_names = [f"D{k}_0" for k in range(len(dense_values))]
    w = Weights(list(zip(dense_names, dense_values)) + list(sparse.items()))
    write_mira_weights(path, w, dense_names=dense_names)
    first = path.read_bytes()
    assert read_mira_weights(path, dense_names=dense_names) == w
    write_mira_weights(path, read_mira_weights(path))  # names as written: F0, F1, ...
    assert path.read_bytes() == first
    write_mira_weights(path, w, dense_names=dense_names, exact=True)
    assert read_mira_weights(path, dense_names=dense_names) == w
