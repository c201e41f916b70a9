"""``mert`` and ``pro``: the real Moses programs and mtplug's (the Moses-exact paths) on
random Moses-format inputs and flag sets (tests/realprograms/mert_pro_cases.py) and on the
toy set, byte for byte; and the real programs still write the goldens of
tests/golden/moses-mert-pro (README there). ``python -m tests.realprograms.mert_pro_cases
{mert,pro} --cases 500`` runs the long comparison."""

from __future__ import annotations

import shutil
import subprocess
import sys

import numpy as np
import pytest

from tests.integrations.test_moses_mert_pro_golden import CASES, GOLDEN, OUTPUTS

from .mert_pro_cases import PROGRAMS, SCTYPES, moses_threads_race, run_pair, write_case

N_CASES = 40


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_random_cases_byte_for_byte(moses_dir, tmp_path, program):
    make_args = PROGRAMS[program][0]
    differ = []
    for i in range(N_CASES):
        rng = np.random.default_rng([20261207, i])
        sctype = "BLEU" if program == "pro" or rng.random() < 0.7 else str(rng.choice(SCTYPES))
        folder = tmp_path / f"case{i}"
        shape = write_case(folder, rng, sctype)
        args = make_args(rng, shape)
        if moses_threads_race(args):
            args[args.index("--threads") + 1] = "1"      # Moses's result would depend on thread timing
        same, outs = run_pair(program, folder, args, moses_dir / "bin", sys.executable)
        if not same:
            differ.append((i, args, outs["moses"][2], outs["mtplug"][2]))
    assert not differ


TOY_MERT = [["-n", "3", "-r", "2", "-m", "10"], ["-n", "20", "-r", "1"], ["-n", "3", "-r", "4", "-t", "random"],
            ["-n", "2", "-r", "7", "-t", "random-direction", "-m", "5"], ["-n", "3", "-r", "2", "--threads", "2"],
            ["-n", "1", "-r", "3", "-o", "LM0_0,TranslationModel0_1"]]


@pytest.mark.parametrize("flags", TOY_MERT, ids=[" ".join(f) for f in TOY_MERT])
def test_toy_mert(moses_dir, shared_data, tmp_path, flags):
    toy = shared_data / "moses-toy"
    for f in ("run1.features.dat", "run1.scores.dat", "run1.init.opt"):
        shutil.copy(toy / f, tmp_path / f)
    args = ["-d", "8", "--ffile", "run1.features.dat", "--scfile", "run1.scores.dat", "--ifile", "run1.init.opt",
            *flags]
    same, outs = run_pair("mert", tmp_path, args, moses_dir / "bin", sys.executable, timeout=300)
    assert same, (outs["moses"][2], outs["mtplug"][2])
    assert outs["moses"][0] == 0 and outs["moses"][2]


@pytest.mark.parametrize("seed", ["1", "2"])
def test_toy_pro(moses_dir, shared_data, tmp_path, seed):
    toy = shared_data / "moses-toy"
    for f in ("run1.features.dat", "run1.scores.dat"):
        shutil.copy(toy / f, tmp_path / f)
    args = ["-r", seed, "--ffile", "run1.features.dat", "--scfile", "run1.scores.dat", "-o", "pro.data"]
    same, outs = run_pair("pro", tmp_path, args, moses_dir / "bin", sys.executable, timeout=300)
    assert same and outs["moses"][1]["pro.data"].count(b"\n") == 6000


@pytest.mark.parametrize("case", CASES)
def test_real_programs_still_write_the_goldens(moses_dir, tmp_path, case):
    src = GOLDEN / case
    for f in src.iterdir():
        if f.name not in OUTPUTS and f.name != "args":
            shutil.copy(f, tmp_path / f.name)
    program, *argv = (src / "args").read_text().split("\n")[:-1]
    p = subprocess.run([str(moses_dir / "bin" / program), *argv], cwd=tmp_path, capture_output=True, text=True,
                       check=False, timeout=300)
    assert p.returncode == 0, p.stderr
    if program == "pro":
        assert (tmp_path / "pro.data").read_bytes() == (src / "pro.data").read_bytes()
    else:
        assert (tmp_path / "weights.txt").read_bytes() == (src / "weights.txt").read_bytes()
        best = [ln for ln in p.stderr.splitlines() if ln.startswith("Best point:")]
        assert best == [(src / "best_point").read_text().rstrip("\n")]
