"""cdec's command line and sentence numbering (mtplug.decoders.cdec)."""

from __future__ import annotations

import pytest

from mtplug.decoders.cdec import cdec_argv, expected_ids, renumber_kbest
from mtplug.errors import InputError


def test_command_line():
    assert cdec_argv(["cdec"], "c.ini", "w", 5, True) == ["cdec", "-c", "c.ini", "-w", "w", "-k", "5", "-r"]
    assert cdec_argv(["py", "s.py"], "c.ini", "w", 1, False, ["-x"]) == \
        ["py", "s.py", "-c", "c.ini", "-w", "w", "-k", "1", "-x"]


def test_expected_ids_follow_cdec_counting():
    lines = ["a b", "c", '<seg id="7" grammar="g.gz">d e</seg>', "f", "<seg id=2>g</seg>"]
    assert expected_ids(lines) == [0, 1, 7, 8, 2]


def test_renumber_maps_ids_to_input_positions():
    out = (b"5 ||| a ||| x=1 ||| 0\n5 ||| b ||| x=2 ||| 0\n5 ||| c ||| x=3 ||| 0\n"
           b"9 ||| d ||| y=1 ||| 0\n")
    lines, texts = renumber_kbest(out, [5, 6, 9], 2, "cdec.ini")
    assert lines == [b"0 ||| a ||| x=1 ||| 0\n", b"0 ||| b ||| x=2 ||| 0\n", b"2 ||| d ||| y=1 ||| 0\n"]
    assert texts == ["a", "b", "d"]
    # a repeated seg id: the next occurrence once k lines are in
    lines, _ = renumber_kbest(b"3 ||| a ||| ||| 0\n3 ||| b ||| ||| 0\n", [3, 3], 1, "cdec.ini")
    assert [ln[:1] for ln in lines] == [b"0", b"1"]
    with pytest.raises(InputError, match="sentence id 4 does not belong to the input"):
        renumber_kbest(b"4 ||| a ||| x=1 ||| 0\n", [5], 2, "cdec.ini")
    with pytest.raises(InputError, match="expected 'id ||| hyp"):
        renumber_kbest(b"garbage\n", [0], 2, "cdec.ini")
