"""Fixtures of the forest tests: cdec's real forests in a directory of their own."""

from __future__ import annotations

import shutil

import pytest

#: cdec's dpmert origin (../shared/data/cdec-forests/README.md; every other feature 0)
ORIGIN = {"WordPenalty": 4.25, "LanguageModel": -1.1165, "PhraseModel_0": -0.96, "PhraseModel_1": -0.65,
          "PhraseModel_2": -0.77, "PassThrough": -10.0}


@pytest.fixture()
def cdec_setup(shared_data, tmp_path):
    """``(forest directory, start-weights file, reference paths)`` for cdec's two test forests."""
    src = shared_data / "cdec-forests"
    hg = tmp_path / "hgs"
    hg.mkdir()
    for s in range(2):
        shutil.copy(src / f"{s}.bin.gz", hg / f"{s}.bin.gz")
    init = tmp_path / "origin.weights"
    init.write_text("".join(f"{k} {v}\n" for k, v in ORIGIN.items()))
    return hg, init, [str(src / f"c2e.txt.{i}") for i in range(4)]
