"""The reranking example's data (mtplug/data/reranking) is what its script writes."""

from __future__ import annotations

import filecmp
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "mtplug" / "data" / "reranking"
FILES = ["nmt.generate.out", "nmt.ref", "nmt.lm.scores", "nmt.qe.tsv", "gec.m2", "gec.nbest.jsonl"]


def test_script_writes_the_bundled_files(tmp_path):
    subprocess.run([sys.executable, str(REPO / "tests" / "data" / "make_reranking_data.py"), str(tmp_path)],
                   check=True, timeout=120)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(FILES)
    for name in FILES:
        assert filecmp.cmp(tmp_path / name, DATA / name, shallow=False), name


def test_bundled_data_stays_small():
    assert sum((DATA / name).stat().st_size for name in FILES) < 100_000
