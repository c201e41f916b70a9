"""mtplug's ``mert`` and ``pro`` write what Moses 34452895's wrote on the cases of
tests/golden/moses-mert-pro (README there: provenance), byte for byte: weights.txt and the
``Best point:`` line of mert, pro.data of pro. No Moses needed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mtplug.integrations.moses.__main__ import main as run_program

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "moses-mert-pro"
CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "args").exists())
OUTPUTS = ("weights.txt", "best_point", "pro.data")


def test_every_program_and_flag_kind_has_a_golden():
    programs = {(GOLDEN / c / "args").read_text().split()[0] for c in CASES}
    assert programs == {"mert", "pro"} and len(CASES) >= 10


@pytest.mark.parametrize("case", CASES)
def test_golden(case, tmp_path, monkeypatch, capfd):
    src = GOLDEN / case
    for f in src.iterdir():
        if f.name not in OUTPUTS and f.name != "args":
            shutil.copy(f, tmp_path / f.name)
    program, *argv = (src / "args").read_text().split("\n")[:-1]
    monkeypatch.chdir(tmp_path)
    assert run_program([program, *argv]) == 0
    err = capfd.readouterr().err
    compared = 0
    for name in OUTPUTS:
        want = src / name
        if not want.exists():
            continue
        if name == "best_point":
            got = [ln for ln in err.splitlines() if ln.startswith("Best point:")]
            assert got == [want.read_text().rstrip("\n")]
        else:
            assert (tmp_path / name).read_bytes() == want.read_bytes(), name
        compared += 1
    assert compared == (2 if program == "mert" else 1)
