"""``kbmira --sctype M2SCORER``: the real Moses kbmira and mtplug's (``mtplug mertdir``)
on the GEC set of tests/golden/moses-kbmira-m2 write the same weights file and the same
log lines, and the real one still writes the golden (README there: the rows its
de-duplication would drop are left out of that set)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.integrations.test_kbmira_m2 import CONFIGS, GOLDEN


def _run(program: Path, flags, out: Path):
    run = subprocess.run([str(program), "--sctype", "M2SCORER", "--dense-init", str(GOLDEN / "dense"), "--ffile",
                          str(GOLDEN / "features.dat"), "--scfile", str(GOLDEN / "scores.dat"), *flags, "-o",
                          str(out)], check=False, capture_output=True, text=True, cwd=out.parent, timeout=300)
    assert run.returncode == 0, run.stderr
    lines = [line.lstrip(".") for line in run.stderr.splitlines()]
    return out.read_text(), [x for x in lines if x.startswith(("Initial BLEU = ", "Best BLEU = "))
                             or " updates, avg loss = " in x]


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_real_kbmira_m2_same_weights_and_log(moses_dir, mertdir, tmp_path, name):
    moses = _run(moses_dir / "bin" / "kbmira", CONFIGS[name], tmp_path / "moses.weights")
    mtplug = _run(mertdir / "kbmira", CONFIGS[name], tmp_path / "mtplug.weights")
    assert mtplug == moses
    assert moses == ((GOLDEN / f"{name}.weights").read_text(), (GOLDEN / f"{name}.log").read_text().splitlines())
