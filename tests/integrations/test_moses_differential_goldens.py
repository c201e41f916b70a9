"""The goldens of tests/golden/moses-differential (README there: the Moses commit and the
command that made them): each case's inputs, arguments and what the real Moses program
wrote, replayed against mtplug's program in this process, without Moses."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden" / "moses-differential"
sys.path.insert(0, str(REPO / "benchmarks"))

import moses_differential  # noqa: E402

CASES = sorted(p for p in GOLDEN.glob("*/") if (p / "case.json").exists())


def test_goldens_cover_every_program():
    programs = {p.name.rsplit("-", 2)[0] for p in CASES}
    assert programs == set(moses_differential.PROGRAMS)


@pytest.mark.parametrize("golden", CASES, ids=[p.name for p in CASES])
def test_mtplug_writes_what_moses_wrote(golden, tmp_path):
    expected, got = moses_differential.replay(golden, tmp_path)
    assert got == expected
