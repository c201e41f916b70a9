"""Make tests/golden/moses-mert-pro: small Moses-format cases (mert_pro_cases.write_case with
fixed seeds) and what Moses's own ``mert`` and ``pro`` write on them.

    MTPLUG_MOSES_DIR=/path/to/moses python -m tests.realprograms.mert_pro_goldens

Each case folder holds the inputs, ``args`` (the program and its arguments, one per line)
and the outputs Moses wrote: ``pro.data``, or ``weights.txt`` and ``best_point`` (the
``Best point:`` line of its stderr). tests/integrations/test_moses_mert_pro_golden.py
replays them without Moses.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np

from .mert_pro_cases import write_case

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "moses-mert-pro"
INIT = ["--ifile", "init.opt"]
FILES1 = ["--ffile", "run1.features.dat", "--scfile", "run1.scores.dat"]
FILES = ["--ffile", "run1.features.dat,run2.features.dat", "--scfile", "run1.scores.dat,run2.scores.dat"]

#: name -> (program, data seed, scorer, arguments); {D} is the case's dense feature count
CASES = {
    "pro-r1": ("pro", 11, "BLEU", ["-r", "1", "-F", "run1.features.dat", "-S", "run1.scores.dat", "-o", "pro.data"]),
    "pro-r2-two-runs": ("pro", 12, "BLEU", ["-r", "2", "-F", "run1.features.dat", "-F", "run2.features.dat",
                                             "-S", "run1.scores.dat", "-S", "run2.scores.dat", "-o", "pro.data"]),
    "pro-b-r7": ("pro", 13, "BLEU", ["-r", "7", "-b", "-F", "run1.features.dat", "-S", "run1.scores.dat",
                                     "-o", "pro.data"]),
    "mert-powell": ("mert", 21, "BLEU", ["-d", "{D}", *FILES1, *INIT, "-r", "3", "-n", "0"]),
    "mert-powell-n3-m4": ("mert", 22, "BLEU", ["-d", "{D}", *FILES, *INIT, "-r", "2", "-n", "3", "-m", "4"]),
    "mert-random-direction": ("mert", 23, "BLEU", ["-d", "{D}", *FILES1, *INIT, "-r", "5", "-n", "2",
                                                   "-t", "random-direction", "-m", "6"]),
    "mert-random": ("mert", 24, "BLEU", ["-d", "{D}", *FILES1, *INIT, "-r", "9", "-n", "4", "-t", "random"]),
    "mert-o-subset": ("mert", 25, "BLEU", ["-d", "{D}", *FILES1, *INIT, "-r", "4", "-n", "1", "-o", "LM0_0,F2_0"]),
    "mert-positive": ("mert", 26, "BLEU", ["-d", "{D}", *FILES1, *INIT, "-r", "6", "-n", "2", "-P", "LM0_0,F1_0"]),
    "mert-sparse-weights": ("mert", 27, "BLEU", ["-d", "{D}", *FILES1, "--ifile", "initp.opt", "-r", "8", "-n", "1",
                                                 "-p", "sparse.weights"]),
    "mert-ter": ("mert", 28, "TER", ["-d", "{D}", *FILES1, *INIT, "-r", "1", "-n", "2", "--sctype", "TER"]),
    "mert-per-reg-average": ("mert", 29, "PER", ["-d", "{D}", *FILES1, *INIT, "-r", "1", "-n", "1", "--sctype",
                                                 "PER", "--scconfig", "regtype:average,regwin:2"]),
    "mert-wer-reg-min": ("mert", 30, "WER", ["-d", "{D}", *FILES1, *INIT, "-r", "1", "-n", "1", "--sctype", "WER",
                                             "--scconfig", "regtype:min,regwin:1"]),
    "mert-bleu-ter-weights": ("mert", 32, "BLEU,TER", ["-d", "{D}", *FILES1, *INIT, "-r", "3", "-n", "2",
                                                       "--sctype", "BLEU,TER", "--scconfig", "weights:0.7+0.5"]),
    "mert-shards": ("mert", 33, "BLEU", ["-d", "{D}", *FILES1, *INIT, "-r", "5", "-n", "2", "--shard-count", "3",
                                         "--shard-size", "0.6", "-t", "random-direction", "-m", "3"]),
    "mert-historic-bests": ("mert", 31, "BLEU", ["-d", "{D}", *FILES, "--ifile", "init.opt,init2.opt", "-r", "12",
                                                 "-n", "2"]),
}


def make(moses_bin: Path) -> None:
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for old in GOLDEN.iterdir():          # the case folders; README.md stays
        if old.is_dir():
            shutil.rmtree(old)
    for name, (program, seed, sctype, args) in CASES.items():
        folder = GOLDEN / name
        for k in range(1000):
            # the first data draw whose case has what the flags need (runs, dense count, sparse)
            rng = np.random.default_rng([seed, k])
            if folder.exists():
                shutil.rmtree(folder)
            shape = write_case(folder, rng, sctype)
            needs_two = any("run2" in a for a in args)
            if (needs_two and shape["runs"] < 2) or ("-p" in args and not shape["sparse"]) \
                    or (("-o" in args or "-P" in args) and shape["dense"] < 3) or shape["sentences"] > 12 \
                    or ("--shard-count" in args and (shape["sentences"] < 4 or shape["dense"] < 3)):
                continue
            break
        named = " ".join(args)
        for run in range(1, 4):       # files no flag names
            for suffix in ("features.dat", "scores.dat"):
                if f"run{run}.{suffix}" not in named:
                    (folder / f"run{run}.{suffix}").unlink(missing_ok=True)
        if "-p" not in args:
            for f in ("initp.opt", "sparse.weights"):
                (folder / f).unlink(missing_ok=True)
        if "init2.opt" not in " ".join(args):
            (folder / "init2.opt").unlink(missing_ok=True)
        argv = [a.replace("{D}", str(shape["dense"])) for a in args]
        p = subprocess.run([str(moses_bin / program), *argv], cwd=folder, capture_output=True, check=True)
        (folder / "args").write_text("\n".join([program, *argv]) + "\n")
        if program == "mert":
            best = [ln for ln in p.stderr.decode().splitlines() if ln.startswith("Best point:")]
            (folder / "best_point").write_text(best[0] + "\n")
        print(name, shape)


if __name__ == "__main__":
    make(Path(os.environ.get("MTPLUG_MOSES_DIR", "/work/moses/src")) / "bin")
