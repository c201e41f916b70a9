"""dtrain's decoder calls (one cdec process per sentence or mini-batch) against the stand-in."""

from __future__ import annotations

import numpy as np
import pytest

from mtplug._ext._nbest_scan import Vocabulary
from mtplug.corpus import FeatureSpace
from mtplug.dtrain.decoder import CdecCalls
from mtplug.errors import InputError

from .conftest import TOY_FEATURES


def test_standin_kbest_through_the_adapter(toy, standin_command, tmp_path):
    dec = CdecCalls(standin_command, toy["cdec_ini"], k=5, workdir=str(tmp_path))
    sources = toy["sources"]
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
    bad_ini = write("bad.ini", "formalism scfg\n")
    dec = CdecCalls(standin_command, bad_ini, k=3, workdir=str(tmp_path))
    with pytest.raises(InputError, match=r"the decoder failed with exit status 1 .*bad.ini:1: expected 'key=value'"):
        dec.decode(["x"], ["y"], [], np.zeros(0), Vocabulary(), FeatureSpace())
    missing = CdecCalls("/nonexistent/cdec", toy["cdec_ini"], k=3, workdir=str(tmp_path))
    with pytest.raises(InputError, match="cannot run the decoder"):
        missing.decode(["x"], ["y"], [], np.zeros(0), Vocabulary(), FeatureSpace())
