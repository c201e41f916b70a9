"""moses.ini [weight]: reading with expanded names, byte-exact in-place updates, bad input."""

from __future__ import annotations

import gzip

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplug.errors import InputError
from mtplug.formats.moses_ini import read_moses_ini, read_weight_file_entry, write_moses_ini
from mtplug.formats.weights_core import Weights

FIXTURE_WEIGHTS = [
    ("UnknownWordPenalty0_0", 1.0),
    ("WordPenalty0_0", -1.0),
    ("PhrasePenalty0_0", 0.2),
    ("TranslationModel0_0", 0.2),
    ("TranslationModel0_1", 0.2),
    ("TranslationModel0_2", 0.2),
    ("TranslationModel0_3", 0.2),
    ("Distortion0_0", 0.3),
    ("LM0_0", 0.5),
]


@pytest.fixture
def ini(tmp_path, weights_data):
    """A fresh copy of tests/data/weights/moses.ini."""
    path = tmp_path / "moses.ini"
    path.write_bytes((weights_data / "moses.ini").read_bytes())
    return path


def test_read_expands_dense_labels(ini):
    w = read_moses_ini(ini)
    assert list(w.items()) == FIXTURE_WEIGHTS
    assert w.source == str(ini)


def test_update_changes_only_the_numbers(ini):
    old = ini.read_bytes()
    new = Weights({"LM0_0": 0.0625, "TranslationModel0_1": -0.03125, "Distortion0_0": 1e-07, "WordPenalty0_0": 2e16})
    write_moses_ini(ini, new)
    expected = (
        old.replace(b"WordPenalty0= -1\n", b"WordPenalty0= 2e16\n")
        .replace(b"TranslationModel0= 0.2 0.2 0.2 0.2\n", b"TranslationModel0= 0.2 -0.03125 0.2 0.2\n")
        .replace(b"Distortion0=  0.3   # distortion\n", b"Distortion0=  1e-07   # distortion\n")
        .replace(b"LM0= 0.5\n", b"LM0= 0.0625\n")
    )
    assert expected != old
    assert ini.read_bytes() == expected
    got = read_moses_ini(ini)
    assert got["UnknownWordPenalty0_0"] == 1.0  # not tuned: untouched
    assert [got[k] for k in new] == list(new.values())


def test_rewriting_is_byte_identical(ini):
    old = ini.read_bytes()
    write_moses_ini(ini, read_moses_ini(ini))  # same values: nothing changes, spelling kept
    assert ini.read_bytes() == old
    write_moses_ini(ini, Weights({"LM0_0": 0.1, "TranslationModel0_3": 1 / 3}))
    once = ini.read_bytes()
    write_moses_ini(ini, read_moses_ini(ini))
    assert ini.read_bytes() == once
    write_moses_ini(ini, Weights({"LM0_0": 0.1, "TranslationModel0_3": 1 / 3}))
    assert ini.read_bytes() == once


def test_equal_value_keeps_its_spelling(write):
    path = write("moses.ini", "[weight]\nLM0= 0.500000\nTM0= 1e-1 2\n")
    write_moses_ini(path, Weights({"LM0_0": 0.5, "TM0_0": 0.1, "TM0_1": 3.0}))
    assert open(path, "rb").read() == b"[weight]\nLM0= 0.500000\nTM0= 1e-1 3.0\n"


def test_crlf_file_stays_crlf(ini):
    crlf = ini.read_bytes().replace(b"\n", b"\r\n")
    ini.write_bytes(crlf)
    assert list(read_moses_ini(ini).items()) == FIXTURE_WEIGHTS
    write_moses_ini(ini, Weights({"LM0_0": 0.25, "Distortion0_0": -0.5}))
    expected = crlf.replace(b"LM0= 0.5\r\n", b"LM0= 0.25\r\n").replace(
        b"Distortion0=  0.3   # distortion\r\n", b"Distortion0=  -0.5   # distortion\r\n"
    )
    assert ini.read_bytes() == expected
    assert ini.read_bytes().count(b"\n") == ini.read_bytes().count(b"\r\n")


def test_missing_final_newline_and_other_bytes_kept(write):
    text = "# réglages ✓\n[feature]\nKENLM name=LM0 path=/x # with # hashes\n\n[weight]\n\tLM0= 0.5 \t# lm\nTM0= 1 2"
    path = write("moses.ini", text)
    write_moses_ini(path, Weights({"LM0_0": 0.75, "TM0_1": 4.5}))
    assert open(path, encoding="utf-8", newline="").read() == text.replace("0.5 \t#", "0.75 \t#").replace(
        "1 2", "1 4.5"
    )


def test_template_to_other_output(ini, tmp_path):
    old = ini.read_bytes()
    out = tmp_path / "run2.moses.ini"
    write_moses_ini(out, Weights({"LM0_0": 0.25}), template=ini)
    assert ini.read_bytes() == old
    assert out.read_bytes() == old.replace(b"LM0= 0.5\n", b"LM0= 0.25\n")


@pytest.mark.parametrize("text, expected", [
    ("[weight]\nLM0= 1\n", "[weight]\nLM0= 2.0\n\n[weight-file]\n/new/sparse\n"),          # appended
    ("[weight]\nLM0= 1", "[weight]\nLM0= 2.0\n\n[weight-file]\n/new/sparse\n"),            # no final newline
    ("[weight-file]\n/old/w  # start\n[weight]\nLM0= 1\n",
     "[weight-file]\n/new/sparse\n[weight]\nLM0= 2.0\n"),                                  # entry replaced
    ("[weight]\r\nLM0= 1\r\n[weight-file]\r\n", "[weight]\r\nLM0= 2.0\r\n[weight-file]\r\n/new/sparse\r\n"),
])
def test_weight_file_section(write, tmp_path, text, expected):
    """mert-moses.pl's final config names the sparse weights in [weight-file]; everything else stays."""
    src = write("t.ini", text)
    out = tmp_path / "out.ini"
    write_moses_ini(str(out), Weights([("LM0_0", 2.0)]), template=src, weight_file="/new/sparse")
    assert out.read_bytes().decode() == expected
    assert read_weight_file_entry(str(out)) == "/new/sparse"
    assert read_weight_file_entry(src) == ("/old/w" if "/old/w" in text else None)
    assert read_moses_ini(str(out))["LM0_0"] == 2.0


def test_sparse_label_keeps_its_name(write):
    path = write("moses.ini", "[weight]\nLM0= 0.5\nWT_das~the= 0.01\n")
    w = read_moses_ini(path)
    assert list(w.items()) == [("LM0_0", 0.5), ("WT_das~the", 0.01)]
    write_moses_ini(path, Weights({"WT_das~the": 0.02}))
    assert open(path).read() == "[weight]\nLM0= 0.5\nWT_das~the= 0.02\n"


def test_unknown_weights_are_an_error_unless_allowed(ini, input_error):
    old = ini.read_bytes()
    new = Weights({"LM0_0": 0.25, "WT_a~b": 0.1, "Foo0_0": 1.0})
    with input_error(ini, None, "2 weight(s) have no line in the [weight] section", "WT_a~b", "Foo0_0"):
        write_moses_ini(ini, new)
    assert ini.read_bytes() == old
    write_moses_ini(ini, new, allow_unknown=True)
    assert read_moses_ini(ini)["LM0_0"] == 0.25


def test_gzipped_ini_reads_but_is_not_updated(tmp_path, weights_data, input_error):
    path = tmp_path / "moses.ini.gz"
    path.write_bytes(gzip.compress((weights_data / "moses.ini").read_bytes()))
    assert list(read_moses_ini(path).items()) == FIXTURE_WEIGHTS
    with input_error(path, None, "decompress it first"):
        write_moses_ini(path, Weights({"LM0_0": 0.25}))


@pytest.mark.parametrize(
    "text, line, fragments",
    [
        ("[feature]\nKENLM\n", None, ["no [weight] section", "expected a '[weight]' line"]),
        ("[weight-l]\n0.5\n[weight-t]\n0.2\n", None, ["no [weight] section", "[weight-l]", "not supported"]),
        ("[weight]\nLM0= 0.5\n\n[weight]\nTM0= 1\n", 4, ["second [weight] section", "line 1", "expected one"]),
        ("[weight]\n# nothing\n[threads]\n1\n", 1, ["[weight] section is empty", "'Label= value"]),
        ("[weight]\nLM0=\n", 2, ["'LM0' has no value", "expected 'Label= value"]),
        ("[weight]\nLM0= # tuned\n", 2, ["'LM0' has no value"]),
        ("[weight]\nLM0 0.5\n", 2, ["expected 'Label= value [value ...]'", "got 'LM0 0.5'"]),
        ("[weight]\nLM0=0.5\n", 2, ["expected 'Label= value [value ...]'", "got 'LM0=0.5'"]),
        ("[weight]\n= 0.5\n", 2, ["expected 'Label= value"]),
        ("[weight]\nTM0= 0.2 abc 0.2\n", 2, ["expected a number for 'TM0'", "got 'abc'"]),
        ("[weight]\nLM0= nan\n", 2, ["'LM0'", "'nan'", "expected a finite number"]),
        ("[weight]\nLM0= -inf\n", 2, ["'LM0'", "expected a finite number"]),
        ("[weight]\nLM0= 1e400\n", 2, ["overflows", "expected a finite number"]),
        ("[weight]\nLM0= 0.5\nTM0= 1\nLM0= 0.2\n", 4, ["'LM0' given twice", "first at line 2"]),
        ("[weight]\nWT_a~b= 0.1 0.2\n", 2, ["sparse feature", "one value; got 2"]),
        ("[weight]\nLM0= 0.5\nLM0_0= 0.2\n", 3, ["'LM0_0' given twice", "first at line 2"]),
        ("[weight\nLM0= 0.5\n", 1, ["expected '[section]'", "got '[weight'"]),
    ],
)
def test_bad_input(write, input_error, text, line, fragments):
    path = write("bad.moses.ini", text)
    with input_error(path, line, *fragments):
        read_moses_ini(path)
    with input_error(path, line, *fragments):  # the writer parses its template the same way
        write_moses_ini(path, Weights({"LM0_0": 1.0}))
    assert open(path, encoding="utf-8", newline="").read() == text


def test_invalid_utf8_names_the_line(write, input_error):
    path = write("bad.moses.ini", b"[weight]\nLM0= 0.5\n# caf\xe9\n")
    with input_error(path, 3, "invalid UTF-8"):
        read_moses_ini(path)


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_moses_ini(tmp_path / "nope.ini")


# ----------------------------------------------------------------------------- properties

labels = st.from_regex(r"[A-Z][A-Za-z]{0,8}[0-9]", fullmatch=True)
finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
spacing = st.sampled_from([" ", "  ", "\t", " \t "])


@st.composite
def ini_files(draw):
    feats = draw(st.dictionaries(labels, st.lists(finite, min_size=1, max_size=5), min_size=1, max_size=6))
    sep = draw(spacing)
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    body = [f"{label}={sep}{sep.join(repr(v) for v in vals)}" for label, vals in feats.items()]
    lines = ["# generated", "[input-factors]", "0", "", "[weight]"] + body + ["", "[threads]", "4"]
    return eol.join(lines) + eol, feats


@settings(max_examples=60, deadline=None)
@given(ini_files(), st.data())
def test_update_round_trip_property(tmp_path_factory, case, data):
    text, feats = case
    path = tmp_path_factory.mktemp("ini") / "moses.ini"
    path.write_bytes(text.encode())
    expected = [(f"{label}_{k}", v) for label, vals in feats.items() for k, v in enumerate(vals)]
    w = read_moses_ini(path)
    assert list(w.items()) == expected
    # tune a random subset
    chosen = data.draw(st.lists(st.sampled_from([n for n, _ in expected]), unique=True))
    new = Weights({name: data.draw(finite) for name in chosen})
    write_moses_ini(path, new)
    written = path.read_bytes()
    got = read_moses_ini(path)
    assert list(got.items()) == [(n, new.get(n, v)) for n, v in expected]
    # every line outside [weight] is byte-identical, line ends included
    old_lines, new_lines = text.encode().splitlines(True), written.splitlines(True)
    assert len(old_lines) == len(new_lines)
    for a, b in zip(old_lines, new_lines):
        if not a.startswith(tuple(label.encode() + b"=" for label in feats)):
            assert a == b
        assert a.endswith(b"\r\n") == b.endswith(b"\r\n")
    write_moses_ini(path, got)
    assert path.read_bytes() == written
