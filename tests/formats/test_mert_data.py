"""features.dat / scores.dat: writing, reading back, merging, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from mtplug.corpus import NbestCorpus
from mtplug.errors import InputError
from mtplug.formats import mert_data
from mtplug.formats.references import References
from mtplug.metrics.bleu import BleuConfig

NBEST = ("0 ||| a b c ||| LM0= -1.5 TM0= 1 2 s_x= 0.1 ||| 0\n"
         "0 ||| a b d ||| LM0= -2 TM0= 1e-07 123456789 ||| 0\n"
         "1 ||| x y ||| LM0= -1 TM0= 0 1 t_y= 3 s_x= -2 ||| 0\n")


def corpus(write, bleu=BleuConfig(), refs=(["a b c"], ["x y z"])):
    return NbestCorpus.from_nbest([write("nb", NBEST)], References([list(r) for r in refs], "refs"), bleu)


def test_write_text_exactly(write, tmp_path):
    c = corpus(write)
    f, s = str(tmp_path / "f"), str(tmp_path / "s")
    mert_data.write_features(f, c)
    mert_data.write_scores(s, c)
    assert open(f).read() == (
        "FEATURES_TXT_BEGIN_0 0 2 3 LM0_0 TM0_0 TM0_1 \n"
        "-1.5 1 2 s_x=0.1 \n"
        "-2 1e-07 1.23457e+08 \n"
        "FEATURES_TXT_END_0\n"
        "FEATURES_TXT_BEGIN_0 1 1 3 LM0_0 TM0_0 TM0_1 \n"
        "-1 0 1 s_x=-2 t_y=3 \n"
        "FEATURES_TXT_END_0\n")
    assert open(s).read() == (
        "SCORES_TXT_BEGIN_0 0 2 9 BLEU\n"
        "3 3 2 2 1 1 0 0 3 \n"
        "2 3 1 2 0 1 0 0 3 \n"
        "SCORES_TXT_END_0\n"
        "SCORES_TXT_BEGIN_0 1 1 9 BLEU\n"
        "2 2 1 1 0 0 0 0 3 \n"
        "SCORES_TXT_END_0\n")
    back = mert_data.read_mert_data([f], [s])
    np.testing.assert_array_equal(back.stats, c.stats)
    assert back.feature_names[:3] == c.feature_names[:3]
    assert {back.feature_names[i]: v for i, v in back.sparse_row(2)} == {"s_x": -2.0, "t_y": 3.0}
    mert_data.write_features(str(tmp_path / "f2"), back)
    assert open(f).read() == open(tmp_path / "f2").read()


def test_average_reference_length_is_written_as_moses_does(write, tmp_path):
    c = corpus(write, BleuConfig(reflen="average"), refs=(["a b c", "a b c d"], ["x", "x y", "x y z"])[:1] +
               (["x y", "x y z"],))
    assert c.ref_len_divisor == 2
    s = str(tmp_path / "s")
    mert_data.write_scores(s, c)
    assert open(s).read().splitlines()[1] == "3 3 2 2 1 1 0 0 3.5 "


BAD_FEATURES = [
    ("FEATURES_TXT_BEGIN_0 0 1 1 F_0\n1 \n", 3, "expected FEATURES_TXT_END_0"),
    ("FEATURES_TXT_BEGIN_0 0 2 1 F_0\n1 \nFEATURES_TXT_END_0\n", 3, "ends before its 2 lines"),
    ("FEATURES_TXT_BEGIN_0 x 1 1 F_0\n", 1, "expected 'FEATURES_TXT_BEGIN_0 <sentence>"),
    ("FEATURES_TXT_BEGIN_0 0 1 2 F_0\n", 1, "announces 2 dense features but names 1"),
    ("FEATURES_TXT_BEGIN_0 0 1 1 F_0\nabc \nFEATURES_TXT_END_0\n", 2, "expected 1 numbers"),
    ("FEATURES_TXT_BEGIN_0 0 1 1 F_0\nnan \nFEATURES_TXT_END_0\n", 2, "NaN or infinite"),
    ("FEATURES_TXT_BEGIN_0 0 1 1 F_0\n1 s_x \nFEATURES_TXT_END_0\n", 2, "expected 'name=value'"),
    ("FEATURES_TXT_BEGIN_0 0 1 1 F_0\n1 s=1 s=2 \nFEATURES_TXT_END_0\n", 2, "twice on one line"),
    ("", None, "empty features file"),
]


@pytest.mark.parametrize("text,line,message", BAD_FEATURES)
def test_bad_features_file(write, text, line, message):
    f = write("f.dat", text)
    s = write("s.dat", "SCORES_TXT_BEGIN_0 0 1 9 BLEU\n1 1 1 1 1 1 1 1 1 \nSCORES_TXT_END_0\n")
    with pytest.raises(InputError) as err:
        mert_data.read_mert_data([f], [s])
    assert ("f.dat" + (f":{line}:" if line else ":")) in str(err.value) and message in str(err.value)


BAD_SCORES = [
    ("SCORES_TXT_BEGIN_0 0 1 9 TER\n1 2 3 \nSCORES_TXT_END_0\n", 1, "scorer TER has 3 statistics per hypothesis, "
                                                                "the header says 9"),
    ("SCORES_TXT_BEGIN_0 0 1 3 METEOR\n1 2 3 \nSCORES_TXT_END_0\n", 1, "METEOR scorer is not provided"),
    ("SCORES_TXT_BEGIN_0 0 1 3 FOO\n1 2 3 \nSCORES_TXT_END_0\n", 1, "unknown scorer 'FOO'"),
    ("SCORES_TXT_BEGIN_0 0 1 3 PER\n1 2 \nSCORES_TXT_END_0\n", 2, "expected 3 statistics, got 2"),
    ("SCORES_TXT_BEGIN_0 0 1 3 PER\n1 2 3 \nSCORES_TXT_END_0\nSCORES_TXT_BEGIN_0 1 1 2 WER\n1 2 \n"
     "SCORES_TXT_END_0\n", 4, "expected '3 PER', as in the first block, after the sentence id and count; got '2 WER'"),
    ("SCORES_TXT_BEGIN_0 0 1 9 BLEU\n1 1 1 1 1 1 1 1 \nSCORES_TXT_END_0\n", 2, "expected 9 statistics, got 8"),
    ("SCORES_TXT_BEGIN_0 0 1 9 BLEU\n1 1 1 1 1 1 1 1 8.5 \nSCORES_TXT_END_0\n", 2, "reflen:average"),
    ("SCORES_TXT_BEGIN_0 0 1 9 BLEU\n1 1 1 1 1 1 1 1 -1 \nSCORES_TXT_END_0\n", 2, "negative statistic"),
    ("SCORES_TXT_BEGIN_0 1 1 9 BLEU\n1 1 1 1 1 1 1 1 1 \nSCORES_TXT_END_0\n", None, "do not match those of"),
]


@pytest.mark.parametrize("text,line,message", BAD_SCORES)
def test_bad_scores_file(write, text, line, message):
    f = write("f.dat", "FEATURES_TXT_BEGIN_0 0 1 1 F_0\n1 \nFEATURES_TXT_END_0\n")
    s = write("s.dat", text)
    with pytest.raises(InputError) as err:
        mert_data.read_mert_data([f], [s])
    assert ("s.dat" + (f":{line}:" if line else ":")) in str(err.value) and message in str(err.value)


def test_file_lists_must_pair_up(write):
    f = write("f.dat", "FEATURES_TXT_BEGIN_0 0 1 1 F_0\n1 \nFEATURES_TXT_END_0\n")
    with pytest.raises(InputError, match="1 features files but 0 scores files"):
        mert_data.read_mert_data([f], [])


def test_other_dense_features_in_a_later_file(write):
    f1 = write("f1", "FEATURES_TXT_BEGIN_0 0 1 1 F_0\n1 \nFEATURES_TXT_END_0\n")
    f2 = write("f2", "FEATURES_TXT_BEGIN_0 0 1 1 G_0\n1 \nFEATURES_TXT_END_0\n")
    s = write("s", "SCORES_TXT_BEGIN_0 0 1 9 BLEU\n1 1 1 1 1 1 1 1 1 \nSCORES_TXT_END_0\n")
    with pytest.raises(InputError, match="f2:1: dense features G_0 differ from the earlier F_0"):
        mert_data.read_mert_data([f1, f2], [s, s])
