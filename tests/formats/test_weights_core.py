"""Weights (the in-memory form), number text, format detection, dispatch, atomic writes."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mtplug.errors import InputError
from mtplug.formats import cdec_weights, mert_weights, moses_ini, sparse_weights
from mtplug.formats.mert_weights import InitOpt
from mtplug.formats.number_text import (
    format_fixed6,
    format_g17,
    format_g6,
    format_perl,
    format_shortest,
    parse_number,
)
from mtplug.formats.weights import detect_weights_format, read_weights, weights_formats, write_weights
from mtplug.formats.weights_core import Weights, split_dense_name

TOY_NAMES = [
    "Distortion0_0", "LM0_0", "WordPenalty0_0", "PhrasePenalty0_0",
    "TranslationModel0_0", "TranslationModel0_1", "TranslationModel0_2", "TranslationModel0_3",
]
TOY_START = [0.3, 0.5, -1.0, 0.2, 0.2, 0.2, 0.2, 0.2]

finite = st.floats(allow_nan=False, allow_infinity=False)


# ----------------------------------------------------------------------------- Weights


def test_weights_keep_order_and_compare_by_order():
    w = Weights([("b", 1), ("a", 2.5)])
    assert w.names == ["b", "a"]
    assert list(w.items()) == [("b", 1.0), ("a", 2.5)]
    assert isinstance(w["b"], float)
    assert w == Weights({"b": 1.0, "a": 2.5})
    assert w != Weights({"a": 2.5, "b": 1.0})  # same content, other order
    assert "a" in w and "c" not in w and len(w) == 2


@pytest.mark.parametrize(
    "items, message",
    [
        ([("a", 1), ("a", 2)], "given twice"),
        ([("a", float("nan"))], "finite"),
        ([("a", float("inf"))], "finite"),
        ([("", 1)], "empty"),
        ([("a b", 1)], "whitespace"),
        ([("a\tb", 1)], "whitespace"),
        ([(3, 1)], "strings"),
    ],
)
def test_weights_reject_bad_items(items, message):
    with pytest.raises(ValueError, match=message):
        Weights(items)


def test_to_array_places_by_name_and_fills_zero():
    w = Weights({"LM0_0": 0.5, "WordPenalty0_0": -1.0})
    arr = w.to_array(["WordPenalty0_0", "Distortion0_0", "LM0_0"])
    assert arr.dtype == np.float64
    assert arr.tolist() == [-1.0, 0.0, 0.5]


def test_to_array_unknown_names_are_an_error_listing_them(tmp_path):
    w = Weights({"LM0_0": 0.5, "WT_a~b": 1.0, "WT_c~d": 2.0}, source=tmp_path / "w.txt")
    with pytest.raises(InputError) as info:
        w.to_array(["LM0_0"])
    text = str(info.value)
    assert "w.txt" in text and "WT_a~b" in text and "WT_c~d" in text and "2 weight(s)" in text
    assert w.to_array(["LM0_0"], allow_unknown=True).tolist() == [0.5]


def test_to_array_rejects_duplicate_feature_names():
    with pytest.raises(ValueError, match="twice"):
        Weights({"a": 1}).to_array(["a", "a"])


def test_from_array_round_trip():
    w = Weights.from_array(TOY_NAMES, np.array(TOY_START))
    assert w.names == TOY_NAMES
    assert w.to_array(TOY_NAMES).tolist() == TOY_START
    with pytest.raises(ValueError, match="one per name"):
        Weights.from_array(["a", "b"], [1.0])


@given(st.dictionaries(st.text(st.characters(blacklist_categories=("Zs", "Cc")), min_size=1), finite, max_size=20))
def test_to_array_from_array_property(d):
    d.pop("absent", None)
    w = Weights(d)
    names = list(reversed(w.names)) + ["absent"]  # other order, plus a feature without weight
    back = Weights.from_array(names, w.to_array(names))
    assert dict(back.items()) == {**d, "absent": 0.0}


# ----------------------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    "value, shortest, g6, fixed6, g17",
    [
        (0.3, "0.3", "0.3", "0.300000", "0.29999999999999999"),
        (-1.0, "-1.0", "-1", "-1.000000", "-1"),
        (1e16, "1e16", "1e16", "10000000000000000.000000", "10000000000000000"),
        (1.5e-7, "1.5e-07", "1.5e-07", "0.000000", "1.4999999999999999e-07"),
        (123456789.0, "123456789.0", "1.23457e08", "123456789.000000", "123456789"),
    ],
)
def test_number_formats(value, shortest, g6, fixed6, g17):
    assert format_shortest(value) == shortest
    assert format_g6(value) == g6
    assert format_fixed6(value) == fixed6
    assert format_g17(value) == g17
    assert "+" not in format_perl(value)


@given(finite)
def test_shortest_and_g17_round_trip(x):
    assert float(format_shortest(x)) == x
    assert float(format_g17(x)) == x


@pytest.mark.parametrize("token, value", [("1", 1.0), ("-0.5", -0.5), ("+.5", 0.5), ("1.", 1.0), ("2E-3", 0.002)])
def test_parse_number_accepts_c_spellings(token, value):
    assert parse_number(token, "f", 1) == value


@pytest.mark.parametrize(
    "token, fragment",
    [("abc", "expected a number"), ("1_000", "expected a number"), ("٣", "expected a number"),
     ("0x10", "expected a number"), ("nan", "finite"), ("-inf", "finite"), ("Infinity", "finite"),
     ("1e999", "finite")],
)
def test_parse_number_rejects(token, fragment):
    with pytest.raises(InputError) as info:
        parse_number(token, "w.txt", 7, "LM0")
    assert str(info.value).startswith("w.txt:7: ") and fragment in str(info.value) and "LM0" in str(info.value)


def test_split_dense_name():
    assert split_dense_name("TranslationModel0_3") == ("TranslationModel0", 3)
    assert split_dense_name("my_lm_0") == ("my_lm", 0)
    assert split_dense_name("WT_the~das") is None
    assert split_dense_name("LM0_01") is None


# ----------------------------------------------------------------------------- detection


@pytest.mark.parametrize(
    "text, fmt",
    [
        ("[weight]\nLM0= 0.5\n", "moses-ini"),
        ("# comment\n[input-factors]\n0\n[weight]\nLM0= 0.5\n", "moses-ini"),
        ("0.1 0.2 -0.3 \n", "weights-txt"),
        ("0.5\n", "weights-txt"),
        ("0.3 0.5\n0 0\n1 1\n", "init-opt"),
        ("LM0= 0.5\nTM0= 0.2\nTM0= 0.2\n", "dense-init"),
        ("TranslationModel0= 0.2 0.2 0.2 0.2\n", "dense-init"),
        ("F0 0.1\nF1 -0.2\nWT_a~b 0.01\n", "mira-out"),
        ("WT_a~b 0.5\nWT_c~d -1\n", "names"),
        ("# Objective = 373.014\nGlue 0.5\nWordPenalty\t-2.8\nLanguageModel=1\n", "names"),
    ],
)
def test_detect_each_kind(write, text, fmt):
    assert detect_weights_format(write("weights", text)) == fmt


def test_detect_ignores_the_file_name(write):
    assert detect_weights_format(write("moses.ini", "0.1 0.2\n")) == "weights-txt"
    assert detect_weights_format(write("init.opt", "[weight]\nLM0= 1\n")) == "moses-ini"


def test_detect_real_files(shared_data, weights_data):
    data = shared_data
    assert detect_weights_format(data / "moses-toy" / "run1.init.opt") == "init-opt"
    assert detect_weights_format(data / "moses-example" / "init.opt") == "init-opt"
    assert detect_weights_format(data / "moses-toy" / "run1.dense") == "dense-init"
    assert detect_weights_format(weights_data / "moses.ini") == "moses-ini"


@pytest.mark.parametrize(
    "text, line, fragment",
    [
        ("", None, "no weights"),
        ("# only a comment\n\n", None, "no weights"),
        ("1 2\n3 4\n", 2, "expected 1 (weights.txt) or 3 of equal length (init.opt)"),
        ("1 2\n3 4\n5 6\n7 8\n", 4, "expected 1 (weights.txt) or 3 of equal length (init.opt)"),
        ("1 2\n0 0 0\n1 1\n", 2, "three lines of equal length"),
        ("Glue 1\nthis is not a weight\n", 2, "cannot tell the weights format"),
    ],
)
def test_detect_failures_name_file_line_and_expectation(write, input_error, text, line, fragment):
    path = write("mystery.w", text)
    with input_error(path, line, fragment):
        detect_weights_format(path)


# ----------------------------------------------------------------------------- dispatch


def test_formats_listed():
    assert set(weights_formats()) == {
        "moses-ini", "init-opt", "weights-txt", "dense-init", "mira-out", "names", "sparse", "cdec",
    }


def test_read_weights_detects_and_dispatches(shared_data):
    data = shared_data / "moses-toy"
    dense = read_weights(data / "run1.dense")
    assert dense.names == TOY_NAMES
    start = read_weights(data / "run1.init.opt", feature_names=TOY_NAMES)
    assert start == dense
    assert start.to_array(TOY_NAMES).tolist() == TOY_START


def test_positional_formats_need_feature_names(shared_data, write):
    with pytest.raises(ValueError, match="whose values name no feature .they go by position.: pass feature_names"):
        read_weights(shared_data / "moses-toy" / "run1.init.opt")
    with pytest.raises(ValueError, match="by position"):
        read_weights(write("weights.txt", "0.1 0.2 \n"))


def test_positional_count_mismatch(write, input_error):
    path = write("weights.txt", "0.1 0.2 \n")
    with input_error(path, 1, "has 2 values, expected 3"):
        read_weights(path, feature_names=["a", "b", "c"])


def test_write_weights_rejects_bad_requests(tmp_path):
    w = Weights({"a": 1.0})
    with pytest.raises(ValueError, match="unknown weights format"):
        write_weights(tmp_path / "x", w, "yaml")
    with pytest.raises(ValueError, match="read-only"):
        write_weights(tmp_path / "x", w, "names")
    with pytest.raises(ValueError, match="template"):
        write_weights(tmp_path / "x", w, "cdec", template=tmp_path / "y")
    with pytest.raises(ValueError, match="unknown weights format"):
        read_weights(tmp_path / "x", "yaml")


@pytest.mark.parametrize(
    "fmt, kwargs",
    [
        ("init-opt", {"feature_names": TOY_NAMES}),
        ("weights-txt", {"feature_names": TOY_NAMES}),
        ("dense-init", {}),
        ("mira-out", {"feature_names": TOY_NAMES}),
        ("sparse", {}),
        ("cdec", {}),
    ],
)
def test_write_then_read_every_format(tmp_path, fmt, kwargs):
    w = Weights.from_array(TOY_NAMES, TOY_START)
    path = tmp_path / f"w.{fmt}"
    write_weights(path, w, fmt, **kwargs)
    assert read_weights(path, fmt, **kwargs) == w
    if fmt not in ("sparse", "cdec"):  # those two detect as the shared name-value format
        assert detect_weights_format(path) == fmt
    else:
        assert detect_weights_format(path) == "names"
        assert read_weights(path) == w


def test_write_weights_moses_ini_in_place(tmp_path, weights_data):
    ini = tmp_path / "moses.ini"
    ini.write_bytes((weights_data / "moses.ini").read_bytes())
    write_weights(ini, Weights({"LM0_0": 0.25}), "moses-ini")
    assert read_weights(ini)["LM0_0"] == 0.25
    out = tmp_path / "out.ini"
    write_weights(out, Weights({"LM0_0": 0.125}), "moses-ini", template=ini)
    assert read_weights(out)["LM0_0"] == 0.125 and read_weights(ini)["LM0_0"] == 0.25


def test_write_weights_orders_by_feature_names(tmp_path):
    w = Weights({"LM0_0": 0.5, "Distortion0_0": 0.3})
    path = tmp_path / "w.txt"
    write_weights(path, w, "weights-txt", feature_names=["Distortion0_0", "WordPenalty0_0", "LM0_0"])
    assert path.read_text() == "0.3 0 0.5 \n"
    write_weights(path, w, "dense-init", feature_names=["Distortion0_0", "LM0_0"])
    assert path.read_text() == "Distortion0= 0.300000\nLM0= 0.500000\n"


def test_write_weights_exact(tmp_path):
    w = Weights({"LM0_0": 0.1234567891})
    path = tmp_path / "w.txt"
    write_weights(path, w, "weights-txt")
    assert path.read_text() == "0.123457 \n"
    write_weights(path, w, "weights-txt", exact=True)
    assert read_weights(path, feature_names=["LM0_0"]) == w


# ----------------------------------------------------------------------------- atomic writes

SAMPLE = Weights.from_array(TOY_NAMES, TOY_START)


def _write_ini(path):
    moses_ini.write_moses_ini(path, Weights({"LM0_0": 0.75, "Distortion0_0": 0.125, "TranslationModel0_2": 0.5}))


WRITERS = {
    "cdec": (cdec_weights, "format_g17", lambda p: cdec_weights.write_cdec_weights(p, SAMPLE, comment="c")),
    "sparse": (sparse_weights, "format_shortest", lambda p: sparse_weights.write_sparse_weights(p, SAMPLE)),
    "init-opt": (mert_weights, "format_perl",
                 lambda p: mert_weights.write_init_opt(p, InitOpt.from_weights(SAMPLE))),
    "weights-txt": (mert_weights, "format_g6", lambda p: mert_weights.write_weights_txt(p, TOY_START)),
    "dense-init": (mert_weights, "format_fixed6", lambda p: mert_weights.write_dense_init(p, SAMPLE)),
    "mira-out": (mert_weights, "format_g6",
                 lambda p: mert_weights.write_mira_weights(p, SAMPLE, dense_names=TOY_NAMES[:4])),
    "moses-ini": (moses_ini, "format_shortest", _write_ini),
}


@pytest.mark.parametrize("fmt", sorted(WRITERS))
def test_a_writer_failing_midway_leaves_the_old_file(tmp_path, weights_data, monkeypatch, fmt):
    module, formatter, write = WRITERS[fmt]
    path = tmp_path / "target"
    old = (weights_data / "moses.ini").read_bytes()
    path.write_bytes(old)
    os.chmod(path, 0o640)
    real = getattr(module, formatter)
    calls = []

    def failing(value):
        calls.append(value)
        if len(calls) == 2:  # after something was already written
            raise OSError("disk full")
        return real(value)

    monkeypatch.setattr(module, formatter, failing)
    with pytest.raises(OSError, match="disk full"):
        write(path)
    assert len(calls) == 2
    assert path.read_bytes() == old
    assert os.listdir(tmp_path) == ["target"]  # no temporary file left behind
    # and without the fault the same writer replaces the file, keeping its mode
    monkeypatch.setattr(module, formatter, real)
    write(path)
    assert path.read_bytes() != old
    assert os.stat(path).st_mode & 0o777 == 0o640
