"""``mtplug mertdir --moses-root DIR``: DIR/bin holds mtplug's Moses programs under Moses's
names, for clients that take a Moses root (nbest-reranker's ``train.py --moses-dir DIR``
runs ``DIR/bin/extractor`` and ``DIR/bin/mert``); and mert's ``-n`` random start points
are Moses's own (glibc ``srand``/``rand``, single precision)."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mtplug.integrations.moses import PROGRAMS
from mtplug.integrations.moses.moses_random import GlibcRand, moses_start_points

REPO = Path(__file__).resolve().parents[2]


def mtplug(*argv, cwd=None):
    return subprocess.run([sys.executable, "-m", "mtplug", *map(str, argv)], check=False, capture_output=True,
                          text=True, cwd=cwd or REPO, timeout=120)


def test_moses_root_made_idempotent_and_runs_the_programs(tmp_path):
    root = tmp_path / "moses"
    p = mtplug("mertdir", "--moses-root", root)
    assert p.returncode == 0, p.stderr
    assert p.stdout == f"{root}\n"
    assert sorted(os.listdir(root / "bin")) == sorted(PROGRAMS)
    texts = {n: (root / "bin" / n).read_text() for n in PROGRAMS}
    assert all(os.access(root / "bin" / n, os.X_OK) for n in PROGRAMS)
    # again, and with one program missing: the same files, nothing else
    (root / "bin" / "kbmira").unlink()
    p = mtplug("mertdir", "--moses-root", root)
    assert p.returncode == 0, p.stderr
    assert {n: (root / "bin" / n).read_text() for n in os.listdir(root / "bin")} == texts
    # a program written by another mtplug install (another path) is brought up to date
    (root / "bin" / "pro").write_text("#!/bin/sh\n# mtplug mertdir --moses-root: Moses's pro, run by mtplug\n"
                                      "exec /old/place/pro \"$@\"\n")
    assert mtplug("mertdir", "--moses-root", root).returncode == 0
    assert (root / "bin" / "pro").read_text() == texts["pro"]
    # each runs mtplug's program of that name, from any working directory
    p = subprocess.run([str(root / "bin" / "mert"), "--help"], check=False, capture_output=True, text=True,
                       cwd=tmp_path, timeout=120)
    assert p.returncode == 0 and "mtplug's drop-in for Moses's mert" in " ".join(p.stdout.split())
    p = subprocess.run([str(root / "bin" / "extractor"), "--sctype", "M2SCORER", "-r", "none.m2", "-n", "none"],
                       check=False, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert p.returncode == 2 and p.stderr.startswith("extractor: error:") and p.stderr.count("\n") == 1
    # without --moses-root: the mertdir, as before
    p = mtplug("mertdir")
    assert p.returncode == 0 and os.path.isfile(os.path.join(p.stdout.strip(), "extractor"))


def test_moses_root_refuses_other_files_and_leaves_them(tmp_path):
    root = tmp_path / "moses"
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "mert").write_text("#!/bin/sh\necho Moses's own mert\n")
    p = mtplug("mertdir", "--moses-root", root)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr == (f"mtplug: error: {root / 'bin'}: holds 'mert', which mtplug mertdir --moses-root did not "
                        "write; refusing to put mtplug's programs beside other files (name a new or empty folder)\n")
    assert os.listdir(root / "bin") == ["mert"]
    assert (root / "bin" / "mert").read_text() == "#!/bin/sh\necho Moses's own mert\n"
    # a symlink named like a program is not one of mtplug's files either
    (root / "bin" / "mert").unlink()
    (root / "bin" / "extractor").symlink_to("/bin/true")
    assert mtplug("mertdir", "--moses-root", root).returncode == 2
    assert os.readlink(root / "bin" / "extractor") == "/bin/true"


@pytest.mark.parametrize("what", ["root", "bin"])
def test_moses_root_refuses_a_file(tmp_path, what):
    root = tmp_path / "moses"
    if what == "root":
        root.write_text("x")
        bad = root
    else:
        root.mkdir()
        (root / "bin").write_text("x")
        bad = root / "bin"
    p = mtplug("mertdir", "--moses-root", root)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr == (f"mtplug: error: {bad}: is not a folder; expected the Moses root to make (or one made "
                        "by mtplug mertdir --moses-root)\n")
    assert bad.read_text() == "x"


def test_glibc_rand_is_glibcs():
    # glibc's first values for srand(1) (the well-known sequence) and for the default seed
    for seed in (1, 0):
        gen = GlibcRand(seed)
        assert [gen.next() for _ in range(3)] == [1804289383, 846930886, 1681692777]
    name = ctypes.util.find_library("c")
    if not name or "libc.so.6" not in name:
        pytest.skip("no glibc here to compare with")
    libc = ctypes.CDLL(name)
    for seed in (2, 1000, 2**31 - 1, 2**31 + 5, 2**32 - 1):
        libc.srand(ctypes.c_uint(seed))
        gen = GlibcRand(seed)
        assert [gen.next() for _ in range(500)] == [libc.rand() for _ in range(500)]


def test_moses_start_points_are_single_precision_draws_in_the_ranges():
    start = np.array([0.5, -1.0, 2.0])
    points = moses_start_points(1, 2, start, np.array([0.0, -1.0, 3.0]), np.array([1.0, 1.0, 3.0]))
    gen = GlibcRand(1)
    expect = []
    for _ in range(2):
        row = []
        for lo, width in ((0.0, 1.0), (-1.0, 2.0), (3.0, 0.0)):
            r = np.float32(gen.next())
            row.append(float(np.float32(np.float32(lo) + np.float32(np.float32(width) * r) / np.float32(2**31 - 1))))
        expect.append(row)
    assert [p.tolist() for p in points] == expect
    assert points[0][2] == points[1][2] == 3.0


def test_mert_restarts_from_moses_points_to_moses_result(shared_data, tmp_path):
    # Moses HEAD 34452895 on this toy: mert -d 8 --ffile run1.features.dat --scfile run1.scores.dat
    # --ifile run1.init.opt -n 20 -r 1 prints (2026-11-28)
    moses = [0.0300807, 0.0501345, -0.100269, 0.0200538, 0.0200538, 0.0200538, 0.493702, 0.265652]
    toy = shared_data / "moses-toy"
    root = tmp_path / "moses"
    assert mtplug("mertdir", "--moses-root", root).returncode == 0
    p = subprocess.run([str(root / "bin" / "mert"), "-d", "8", "--ffile", str(toy / "run1.features.dat"),
                        "--scfile", str(toy / "run1.scores.dat"), "--ifile", str(toy / "run1.init.opt"),
                        "-n", "20", "-r", "1"], check=False, capture_output=True, text=True, cwd=tmp_path,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    best = [line for line in p.stderr.splitlines() if line.startswith("Best point:")]
    assert best and best[0].endswith("=> 0.481178")
    weights = [float(x) for x in (tmp_path / "weights.txt").read_text().split()]
    assert weights == pytest.approx(moses, abs=2e-6)
