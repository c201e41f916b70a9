"""cdec weights files (utils/weights.cc rules) and Moses sparse weight files."""

from __future__ import annotations

import gzip

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplug.formats.cdec_weights import parse_cdec_line, read_cdec_weights, write_cdec_weights
from mtplug.formats.sparse_weights import read_sparse_weights, write_sparse_weights
from mtplug.formats.weights_core import Weights

# ----------------------------------------------------------------------------- cdec reading


def test_read_separators_comments_and_blank_lines(write):
    path = write(
        "weights",
        "# Objective = 373.014  (eval count=107)\n"
        "WordPenalty -2.844814\n"
        "\n"
        "PhraseModel_2\t0.8365578543552836\n"  # dtrain writes a TAB
        "LanguageModel=1.5\n"
        "Glue= -4\n"
        "PassThrough =  -10  \n"
        "a=b=0.25\n"  # only the LAST '=' separates
        "#PhraseModel_0 7\n",
    )
    w = read_cdec_weights(path)
    assert list(w.items()) == [
        ("WordPenalty", -2.844814),
        ("PhraseModel_2", 0.8365578543552836),
        ("LanguageModel", 1.5),
        ("Glue", -4.0),
        ("PassThrough", -10.0),
        ("a=b", 0.25),
    ]


def test_read_gzip_and_crlf(tmp_path):
    path = tmp_path / "weights.gz"
    path.write_bytes(gzip.compress(b"# # MIRA tuned weights\r\nGlue 0.5\r\nWordPenalty -1\r\n"))
    assert list(read_cdec_weights(path).items()) == [("Glue", 0.5), ("WordPenalty", -1.0)]


def test_read_empty_file_is_no_weights(write):
    assert len(read_cdec_weights(write("weights", "# only a header\n"))) == 0


@pytest.mark.parametrize(
    "line, parsed",
    [
        ("Glue 1", ("Glue", "1")),
        ("Glue\t1", ("Glue", "1")),
        ("Glue=1", ("Glue", "1")),
        ("Glue\t 1 ", ("Glue", "1")),
        (" Glue 1", None),
        ("\tGlue 1", None),
        ("Glue", None),
        ("Glue=", None),
        ("Glue 1 2", None),
        ("=1", None),
    ],
)
def test_parse_cdec_line(line, parsed):
    assert parse_cdec_line(line) == parsed


@pytest.mark.parametrize(
    "text, line, fragments",
    [
        ("Glue 1\n WordPenalty -1\n", 2, ["starts with whitespace", "expected 'Name value'"]),
        ("\tGlue 1\n", 1, ["starts with whitespace"]),
        ("Glue 1\nWordPenalty\n", 2, ["expected 'Name value'", "got 'WordPenalty'"]),
        ("Glue 1 2\n", 1, ["expected 'Name value'", "got 'Glue 1 2'"]),
        ("Glue=\n", 1, ["expected 'Name value'"]),
        ("Glue abc\n", 1, ["expected a number for 'Glue'", "got 'abc'"]),
        ("Glue nan\n", 1, ["'Glue'", "'nan'", "expected a finite number"]),
        ("Glue NaN\n", 1, ["expected a finite number"]),
        ("Glue inf\n", 1, ["expected a finite number"]),
        ("Glue 1\nLM 2\nGlue 3\n", 3, ["'Glue' given twice", "first at line 1"]),
    ],
)
def test_read_bad_input(write, input_error, text, line, fragments):
    path = write("weights.cdec", text)
    with input_error(path, line, *fragments):
        read_cdec_weights(path)


# ----------------------------------------------------------------------------- cdec writing


def test_write_like_cdec(tmp_path):
    path = tmp_path / "weights"
    w = Weights([("Glue", 0.1), ("WordPenalty", 0.0), ("LanguageModel", -1.0), ("PassThrough", -0.0),
                 ("PhraseModel_0", 1e-300)])
    write_cdec_weights(path, w, comment="Objective = 373.014")
    assert path.read_text() == (
        "# Objective = 373.014\nGlue 0.10000000000000001\nLanguageModel -1\nPhraseModel_0 1e-300\n"
    )
    back = read_cdec_weights(path)
    assert list(back.items()) == [("Glue", 0.1), ("LanguageModel", -1.0), ("PhraseModel_0", 1e-300)]


def test_write_refuses_what_cdec_reads_differently(tmp_path):
    with pytest.raises(ValueError, match="cdec"):
        write_cdec_weights(tmp_path / "w", Weights({"a=b": 1.0}))
    with pytest.raises(ValueError, match="cdec"):
        write_cdec_weights(tmp_path / "w", Weights({"#x": 1.0}))
    with pytest.raises(ValueError, match="single line"):
        write_cdec_weights(tmp_path / "w", Weights({"x": 1.0}), comment="a\nb")
    assert not (tmp_path / "w").exists()


# characters of feature names both formats can carry (no whitespace, no '=', no leading '#')
name_chars = st.characters(blacklist_categories=("Zs", "Cc", "Cs"), blacklist_characters="=#")
names = st.text(name_chars, min_size=1, max_size=12)
finite = st.floats(allow_nan=False, allow_infinity=False)


@settings(max_examples=150)
@given(st.dictionaries(names, finite, max_size=25), st.none() | st.text(name_chars, max_size=20))
def test_cdec_round_trip_property(tmp_path_factory, d, comment):
    path = tmp_path_factory.mktemp("cdec") / "weights"
    w = Weights(d)
    write_cdec_weights(path, w, comment=comment)
    first = path.read_bytes()
    back = read_cdec_weights(path)
    assert back == Weights((k, v) for k, v in d.items() if v != 0.0)  # zeros are left out, order kept
    write_cdec_weights(path, back, comment=comment)
    assert path.read_bytes() == first
    assert read_cdec_weights(path) == back


# ----------------------------------------------------------------------------- Moses sparse


def test_sparse_read_write(write, tmp_path):
    path = write("run2.sparse-weights", "WT_das~the 0.0123\nWT_haus~house -0.5\nPP_a 0\n")
    w = read_sparse_weights(path)
    assert list(w.items()) == [("WT_das~the", 0.0123), ("WT_haus~house", -0.5), ("PP_a", 0.0)]
    out = tmp_path / "out"
    write_sparse_weights(out, w)
    assert out.read_text() == "WT_das~the 0.0123\nWT_haus~house -0.5\nPP_a 0.0\n"  # zeros stay explicit
    assert read_sparse_weights(out) == w


def test_sparse_empty_file_means_no_weights(write):
    assert len(read_sparse_weights(write("run1.sparse-weights", ""))) == 0


@pytest.mark.parametrize(
    "text, line, fragments",
    [
        ("WT_a 1\n\nWT_b 2\n", 2, ["blank line", "expected 'name value'"]),
        ("WT_a 1\n# comment\n", 2, ["no comments", "expected 'name value'", "got '# comment'"]),
        ("WT_a\n", 1, ["expected 'name value'", "got 'WT_a'"]),
        ("WT_a 1 2\n", 1, ["expected 'name value'"]),
        ("WT_a= 1\nWT_b x\n", 2, ["expected a number for 'WT_b'", "got 'x'"]),
        ("WT_a nan\n", 1, ["expected a finite number"]),
        ("WT_a inf\n", 1, ["expected a finite number"]),
        ("WT_a 1\nWT_a 2\n", 2, ["'WT_a' given twice", "first at line 1"]),
    ],
)
def test_sparse_bad_input(write, input_error, text, line, fragments):
    path = write("run3.sparse-weights", text)
    with input_error(path, line, *fragments):
        read_sparse_weights(path)


@settings(max_examples=150)
@given(st.dictionaries(st.text(st.characters(blacklist_categories=("Zs", "Cc", "Cs")), min_size=1, max_size=12),
                       finite, max_size=25))
def test_sparse_round_trip_property(tmp_path_factory, d):
    path = tmp_path_factory.mktemp("sparse") / "sparse-weights"
    w = Weights(d)
    write_sparse_weights(path, w)
    first = path.read_bytes()
    assert read_sparse_weights(path) == w
    write_sparse_weights(path, read_sparse_weights(path))
    assert path.read_bytes() == first


def test_short_weights_files_get_a_comment_cdec_can_read_past(tmp_path):
    """cdec reads a weights file's first 5 bytes; a cdec built with assertions aborts on a
    shorter file (all weights zero, or one short line), so such files start with a comment."""
    from mtplug.formats.cdec_weights import format_cdec_weights

    for items in ([], [("a", 0.0)], [("a", 1.0)]):
        text = format_cdec_weights(items)
        assert len(text) >= 5 and text.startswith("# ")
        path = tmp_path / "w"
        path.write_text(text)
        assert dict(read_cdec_weights(str(path)).items()) == {n: v for n, v in items if v}
    assert format_cdec_weights([("LM", 1.0)]) == "LM 1\n"
