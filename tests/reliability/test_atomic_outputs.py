"""Outputs are all-or-nothing: a writer killed mid-way leaves the old file intact.

Each command runs once normally (the "old" outputs), then again with different
settings under tests/reliability/kill_writer.py, which SIGKILLs the process at a
random write (seeded) of any output file; every output must still hold its old bytes.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def mtplug(args, kill_at=None):
    cmd = [sys.executable, str(HERE / "kill_writer.py"), str(kill_at or 0), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO)})


def commands(toy: Path, d: Path):
    """(name, first run args, second run args, outputs): the second run writes other content."""
    nbest, ref, init = toy / "run1.best100.out.gz", toy / "ref.0", toy / "run1.init.opt"
    extract = ["extract", "-q", "--nbest", str(nbest), "--ref", str(ref), "--ffile", str(d / "f.dat"),
               "--scfile", str(d / "s.dat"), "--store", str(d / "store.npz")]
    optimize = ["optimize", "kbmira", "-q", "--nbest", str(nbest), "--ref", str(ref), "--init", str(init),
                "--out", str(d / "w.opt"), "--passes", "2"]
    ini = ["optimize", "mert", "-q", "--nbest", str(nbest), "--ref", str(ref), "--init", str(d / "moses.ini"),
           "--out", str(d / "tuned.ini"), "--restarts", "1"]
    return [
        ("extract", extract, extract + ["--lowercase"], ["f.dat", "s.dat", "store.npz"]),
        ("weights", optimize + ["--seed", "1"], optimize + ["--seed", "2", "--c", "0.5"], ["w.opt"]),
        ("moses.ini", ini + ["--seed", "1"], ini + ["--seed", "2", "--directions", "random"], ["tuned.ini"]),
    ]


@pytest.mark.parametrize("case", ["extract", "weights", "moses.ini"])
def test_killed_writer_leaves_old_file(case, example_data, tmp_path):
    toy = example_data
    (tmp_path / "moses.ini").write_text("[weight]\nDistortion0= 0.3\nLM0= 0.5\nWordPenalty0= -1\n"
                                        "PhrasePenalty0= 0.2\nTranslationModel0= 0.2 0.2 0.2 0.2\n")
    name, first, second, outputs = next(c for c in commands(toy, tmp_path) if c[0] == case)
    p = mtplug(first)
    assert p.returncode == 0, p.stderr
    old = {o: (tmp_path / o).read_bytes() for o in outputs}
    rng = random.Random(case)
    killed = 0
    for k in [1] + sorted(rng.sample(range(2, 60), 4)):
        for o in outputs:  # a run with fewer than k writes completed and replaced them
            (tmp_path / o).write_bytes(old[o])
        p = mtplug(second, kill_at=k)
        if p.returncode == 0:
            continue
        assert p.returncode == -9, p.stderr
        killed += 1
        for o in outputs:
            assert (tmp_path / o).read_bytes() == old[o], (case, k, o)
    assert killed >= 1
    # the same run, not killed, replaces them all (and the outputs really differ)
    p = mtplug(second)
    assert p.returncode == 0, p.stderr
    assert any((tmp_path / o).read_bytes() != old[o] for o in outputs)
