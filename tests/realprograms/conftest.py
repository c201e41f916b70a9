"""The real Moses and cdec: MTPLUG_MOSES_DIR / MTPLUG_CDEC_DIR name their build folders
(Moses: the source tree with bin/ and scripts/ after bjam; cdec: the CMake build folder,
with decoder/cdec, training/..., mteval/...). Without them these tests skip, saying so;
CI has neither."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .toy_systems import cdec_system, moses_system

REPO = Path(__file__).resolve().parents[2]


def _build(var: str, needed: list[str]) -> Path:
    value = os.environ.get(var)
    if not value:
        pytest.skip(f"set {var} to a build folder of the real program to run this test")
    path = Path(value)
    missing = [n for n in needed if not (path / n).exists()]
    if missing:
        pytest.fail(f"{var}={value} lacks {', '.join(missing)}")
    return path


@pytest.fixture(scope="session")
def moses_dir() -> Path:
    return _build("MTPLUG_MOSES_DIR", ["bin/moses", "bin/extractor", "bin/mert", "bin/kbmira", "bin/lmplz",
                                       "scripts/training/mert-moses.pl"])


@pytest.fixture(scope="session")
def cdec_dir() -> Path:
    return _build("MTPLUG_CDEC_DIR", ["decoder/cdec", "training/dtrain/dtrain", "training/dpmert/mr_dpmert_map",
                                      "training/dpmert/mr_dpmert_reduce",
                                      "training/dpmert/mr_dpmert_generate_mapper_input", "klm/lm/builder/lmplz",
                                      "mteval/fast_score"])


@pytest.fixture(scope="session")
def moses_toy(moses_dir, tmp_path_factory):
    return moses_system(moses_dir, tmp_path_factory.mktemp("moses-toy"))


@pytest.fixture(scope="session")
def cdec_toy(cdec_dir, tmp_path_factory):
    return cdec_system(cdec_dir, tmp_path_factory.mktemp("cdec-toy"))


@pytest.fixture(scope="session")
def mertdir() -> Path:
    """mtplug's mertdir (``mtplug mertdir``), recorded for this Python."""
    from mtplug.integrations.moses.mertdir import mertdir as find

    return Path(find())
