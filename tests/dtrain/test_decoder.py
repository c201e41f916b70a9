"""The decoder adapter (cdec's command line, k-best parsing) and the stand-in decoder."""

from __future__ import annotations

import shlex
import subprocess
import sys

import numpy as np
import pytest

from mtplug._ext._nbest_scan import Vocabulary
from mtplug.corpus import FeatureSpace
from mtplug.dtrain.decoder import CdecDecoder, expected_ids
from mtplug.errors import InputError

from .conftest import STANDIN, TOY_FEATURES


def test_expected_ids_follow_cdec_counting():
    lines = ["a b", "c", '<seg id="7" grammar="g.gz">d e</seg>', "f", "<seg id=2>g</seg>"]
    assert expected_ids(lines) == [0, 1, 7, 8, 2]


def test_renumber_maps_ids_to_input_positions(tmp_path):
    dec = CdecDecoder("unused", "cdec.ini", k=2, workdir=str(tmp_path))
    out = (b"5 ||| a ||| x=1 ||| 0\n5 ||| b ||| x=2 ||| 0\n5 ||| c ||| x=3 ||| 0\n"
           b"9 ||| d ||| y=1 ||| 0\n")
    lines, texts = dec._renumber(out, [5, 6, 9])
    assert lines == [b"0 ||| a ||| x=1 ||| 0\n", b"0 ||| b ||| x=2 ||| 0\n", b"2 ||| d ||| y=1 ||| 0\n"]
    assert texts == ["a", "b", "d"]
    with pytest.raises(InputError, match="sentence id 4 does not belong to the input"):
        dec._renumber(b"4 ||| a ||| x=1 ||| 0\n", [5])
    with pytest.raises(InputError, match="expected 'id ||| hyp"):
        dec._renumber(b"garbage\n", [0])


def test_standin_kbest_through_the_adapter(toy, standin_command, tmp_path):
    dec = CdecDecoder(standin_command, toy["cdec_ini"], k=5, workdir=str(tmp_path))
    sources = (toy["dir"] / "pool" / "index.txt").read_text(encoding="utf-8").splitlines()
    refs = (toy["dir"] / "refs.txt").read_text(encoding="utf-8").splitlines()
    words, space = Vocabulary(), FeatureSpace()
    names = list(TOY_FEATURES)
    for n in names:
        space.names.add(n.encode())
    w = np.array([0.3, 0.5, -1, 0.2, 0.2, 0.2, 0.2, 0.2])
    inputs = [sources[3], f'<seg id="10">{sources[10]}</seg>', sources[4]]
    kbs = dec.decode(inputs, [refs[3], refs[10], refs[4]], names, w, words, space)
    assert [kb.k for kb in kbs] == [5, 5, 5]
    assert space.names.words()[: len(names)] == names
    for kb in kbs:
        model = kb.model(w)
        assert (np.diff(model) <= 1e-9).all()          # the stand-in sorted by w·f
        assert kb.stats.shape == (5, 9) and (kb.stats[:, 8] > 0).all()
    # the same sentence decoded alone gives the same list
    alone = dec.decode([sources[4]], [refs[4]], names, w, words, space)[0]
    assert alone.texts == kbs[2].texts and np.array_equal(alone.stats, kbs[2].stats)
    assert dec.calls == 2


def test_decoder_failures(toy, standin_command, tmp_path, write):
    bad_ini = write("bad.ini", "formalism=scfg\n")
    dec = CdecDecoder(standin_command, bad_ini, k=3, workdir=str(tmp_path))
    with pytest.raises(InputError, match=r"the decoder failed with exit status 1 .*no grammar=POOLDIR"):
        dec.decode(["x"], ["y"], [], np.zeros(0), Vocabulary(), FeatureSpace())
    missing = CdecDecoder("/nonexistent/cdec", toy["cdec_ini"], k=3, workdir=str(tmp_path))
    with pytest.raises(InputError, match="cannot run the decoder"):
        missing.decode(["x"], ["y"], [], np.zeros(0), Vocabulary(), FeatureSpace())


def test_standin_command_line(toy):
    """The stand-in speaks cdec's k-best format: id ||| hyp ||| f=v ... ||| score, ids as cdec counts them."""
    src = (toy["dir"] / "pool" / "index.txt").read_text(encoding="utf-8").splitlines()
    p = subprocess.run([sys.executable, "-S", str(STANDIN), "-c", toy["cdec_ini"], "-w", toy["weights"],
                        "-k", "2", "-r"], input=f"{src[0]}\n<seg id=\"5\">{src[5]}</seg>\n{src[6]}\n",
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert [ln.split(" ||| ")[0] for ln in lines] == ["0", "0", "5", "5", "6", "6"]
    fields = lines[0].split(" ||| ")
    assert len(fields) == 4 and all("=" in tok for tok in fields[2].split())
    assert "Distortion0_0=0" not in fields[2]      # zero features are left out, as cdec does
    p = subprocess.run(shlex.split(f"{sys.executable} -S {STANDIN} -c {toy['cdec_ini']} --bogus"),
                       input="", capture_output=True, text=True)
    assert p.returncode == 1 and "unknown option" in p.stderr
