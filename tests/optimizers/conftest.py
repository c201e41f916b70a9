"""The Moses toy set (shared/data/moses-toy) as every optimizer test uses it."""

from __future__ import annotations

import pytest

from mtplug.formats import mert_data
from mtplug.formats.mert_weights import read_init_opt


@pytest.fixture(scope="module")
def toy_corpus(shared_data):
    """The store read from Moses's run1.features.dat / run1.scores.dat (do not modify)."""
    d = shared_data / "moses-toy"
    return mert_data.read_mert_data([str(d / "run1.features.dat")], [str(d / "run1.scores.dat")])


@pytest.fixture(scope="module")
def toy_init(shared_data):
    """run1.init.opt: start weights and restart ranges."""
    return read_init_opt(str(shared_data / "moses-toy" / "run1.init.opt"))


@pytest.fixture(scope="module")
def toy(toy_corpus, toy_init):
    """(corpus, start weights)."""
    return toy_corpus, toy_init.start
