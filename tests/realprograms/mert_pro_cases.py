"""Random Moses-format inputs and flag sets for comparing mtplug's ``mert`` and ``pro``
with Moses's, byte for byte (tests/realprograms/test_real_mert_pro_exact.py and
``python -m tests.realprograms.mert_pro_cases``).

A case is a folder with ``runK.features.dat`` / ``runK.scores.dat`` (K = 1.., BLEU
statistics as Moses's extractor writes them), ``init.opt`` (start, min and max lines) and
the argument list of one program. The data vary what the programs are sensitive to:
number of sentences and hypotheses, dense feature count, sparse features, rows repeated
within and across files (ties and duplicates), values on a coarse grid (ties between
lines), empty hypotheses, and several runs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

SPARSE_POOL = ["WT_a~x", "WT_b~y", "PP_c", "DIST_3", "lex_q", "OOV_z"]


def _num(rng: np.random.Generator, coarse: bool) -> str:
    """A feature value as Moses writes them (C++'s default 6 significant digits)."""
    if coarse:
        return f"{int(rng.integers(-6, 7))}"
    return f"{float(rng.normal(0, 5)):.6g}"


def _bleu_stats(rng: np.random.Generator, length: int, reflen: int) -> list[int]:
    """BLEU statistics of a hypothesis of ``length`` words: matches/totals for orders 1..4
    (matches never exceed totals and shrink with the order), then the reference length."""
    out = []
    prev = length
    for n in range(1, 5):
        total = max(0, length - n + 1)
        m = int(rng.integers(0, min(total, prev) + 1)) if total else 0
        prev = m
        out += [m, total]
    return out + [reflen]


def _other_stats(rng: np.random.Generator, sctype: str, length: int, reflen: int) -> list[int]:
    """Integer statistics of a TER, PER, WER or CDER scores file (as Moses's extractor
    writes them: TER's hundredths, counts for the others)."""
    if sctype == "TER":
        edits = int(rng.integers(0, length + reflen + 1))
        return [edits * 100, reflen * 100, int(100 * edits / max(reflen, 1))]
    if sctype == "PER":
        return [int(rng.integers(0, min(length, reflen) + 1)), length, reflen]
    return [int(rng.integers(0, length + reflen + 1)), reflen]


def write_case(folder: Path, rng: np.random.Generator, sctype: str = "BLEU") -> dict:
    """Write the files of one random case into ``folder`` (``sctype``: the scorer of the
    scores files); returns its shape (runs, dense, sparse, names)."""
    folder.mkdir(parents=True, exist_ok=True)
    n_sent = int(rng.integers(1, 25))
    dense = int(rng.integers(1, 9))
    runs = int(rng.choice([1, 1, 2, 3]))
    sparse = bool(rng.random() < 0.3)
    coarse = bool(rng.random() < 0.3)
    names = " ".join(f"F{j}_0" if j else "LM0_0" for j in range(dense))
    reflens = rng.integers(3, 30, size=n_sent)
    pool: list[list] = [[] for _ in range(n_sent)]        # rows seen so far per sentence
    for k in range(1, runs + 1):
        ftext, stext = [], []
        for s in range(n_sent):
            size = int(rng.integers(1, 31))
            rows = []
            for _ in range(size):
                if pool[s] and rng.random() < 0.2:
                    rows.append(pool[s][int(rng.integers(len(pool[s])))])      # a repeated row
                    continue
                feats = [_num(rng, coarse) for _ in range(dense)]
                if sparse:
                    for name in rng.choice(SPARSE_POOL, size=int(rng.integers(0, 4)), replace=False):
                        feats.append(f"{name}={_num(rng, coarse)}")
                length = 0 if rng.random() < 0.03 else int(rng.integers(1, 35))
                stats = []
                for part in sctype.split(","):
                    stats += (_bleu_stats(rng, length, int(reflens[s])) if part == "BLEU"
                              else _other_stats(rng, part, length, int(reflens[s])))
                row = (" ".join(feats), " ".join(map(str, stats)))
                rows.append(row)
                pool[s].append(row)
            ftext.append(f"FEATURES_TXT_BEGIN_0 {s} {len(rows)} {dense} {names}\n")
            ftext += [f + "\n" for f, _ in rows]
            ftext.append("FEATURES_TXT_END_0\n")
            width = sum({"BLEU": 9, "TER": 3, "PER": 3}.get(part, 2) for part in sctype.split(","))
            stext.append(f"SCORES_TXT_BEGIN_0 {s} {len(rows)} {width} {sctype}\n")
            stext += [sc + "\n" for _, sc in rows]
            stext.append("SCORES_TXT_END_0\n")
        (folder / f"run{k}.features.dat").write_text("".join(ftext))
        (folder / f"run{k}.scores.dat").write_text("".join(stext))
    start = [f"{float(v):.6f}" for v in rng.uniform(-1, 1, size=dense)]
    lo = [f"{float(v):g}" for v in rng.choice([-1.0, -0.5, 0.0], size=dense)]
    hi = [f"{float(v):g}" for v in rng.choice([0.5, 1.0, 2.0], size=dense)]
    (folder / "init.opt").write_text(" ".join(start) + "\n" + " ".join(lo) + "\n" + " ".join(hi) + "\n")
    # a later start point (mert-moses.pl --historic-bests) and the init of -p (one more value)
    (folder / "init2.opt").write_text(" ".join(f"{float(v):.6f}" for v in rng.uniform(-1, 1, size=dense)) + "\n")
    (folder / "initp.opt").write_text(" ".join(start + ["0.5"]) + "\n" + " ".join(lo + ["-1"]) + "\n"
                                      + " ".join(hi + ["1"]) + "\n")
    if sparse:
        chosen = rng.choice(SPARSE_POOL + ["unseen_x"], size=int(rng.integers(1, 5)), replace=False)
        (folder / "sparse.weights").write_text("".join(f"{n} {float(rng.normal()):.4g}\n" for n in chosen))
    return {"runs": runs, "dense": dense, "sparse": sparse, "sentences": n_sent, "sctype": sctype,
            "names": names.split()}


def pro_args(rng: np.random.Generator, shape: dict) -> list[str]:
    """A random flag set of Moses's pro for a case of ``shape``."""
    runs = list(range(1, shape["runs"] + 1))
    if rng.random() < 0.5:
        runs = runs[-int(rng.integers(1, len(runs) + 1)):]
    args = ["-r", str(int(rng.integers(0, 2**31)))] if rng.random() < 0.9 else ["-r", str(int(rng.integers(0, 5)))]
    for k in runs:
        args += ["--ffile" if rng.random() < 0.5 else "-F", f"run{k}.features.dat"]
    for k in runs:
        args += ["--scfile" if rng.random() < 0.5 else "-S", f"run{k}.scores.dat"]
    if rng.random() < 0.3:
        args.append("-b")
    args += ["-o", "pro.data"]
    return args


def mert_args(rng: np.random.Generator, shape: dict) -> list[str]:
    """A random flag set of Moses's mert for a case of ``shape`` (long --ifile/--threads/
    --scconfig: Moses's getopt string has no -i, -T or -c)."""
    runs = list(range(1, shape["runs"] + 1))
    if rng.random() < 0.5:
        runs = runs[-int(rng.integers(1, len(runs) + 1)):]
    sparse_w = shape["sparse"] and rng.random() < 0.5
    init = "initp.opt" if sparse_w else ("init.opt,init2.opt" if rng.random() < 0.2 else "init.opt")
    args = ["-d", str(shape["dense"]),
            "--ffile", ",".join(f"run{k}.features.dat" for k in runs),
            "--scfile", ",".join(f"run{k}.scores.dat" for k in runs),
            "--ifile", init, "-r", str(int(rng.integers(0, 100000)))]
    if sparse_w:
        args += ["-p", "sparse.weights"]
    if shape["sctype"] != "BLEU" or rng.random() < 0.1:
        args += ["--sctype", shape["sctype"]]
    config = []
    if rng.random() < 0.15:
        config += [f"regtype:{rng.choice(['average', 'min'])}", f"regwin:{int(rng.integers(1, 4))}"]
    if "," in shape["sctype"] and rng.random() < 0.6:
        k = len(shape["sctype"].split(","))
        config.append("weights:" + "+".join(f"{float(w):.3g}" for w in rng.uniform(0.1, 2, size=k)))
    if config:
        args += ["--scconfig", ",".join(config)]
    names = shape["names"]
    if rng.random() < 0.1 and shape["dense"] > 1:
        # a -d below the files' feature count: Moses optimises the first -d values of a row
        args[1] = str(int(rng.integers(1, shape["dense"])))
        names = []
    if names and rng.random() < 0.2 and not sparse_w:
        chosen = rng.choice(names, size=int(rng.integers(1, len(names) + 1)), replace=False)
        args += ["-o", ",".join(chosen)]
    if names and rng.random() < 0.15:
        args += ["-P", ",".join(rng.choice(names, size=int(rng.integers(1, len(names) + 1)), replace=False))]
    args += ["-n", str(int(rng.choice([0, 0, 1, 2, 5])))]
    kind = rng.choice(["powell", "powell", "random-direction", "random"])
    if kind != "powell" or rng.random() < 0.3:
        args += ["-t", str(kind)]
    if (kind != "random" and rng.random() < 0.4) or kind == "random-direction":
        args += ["-m", str(int(rng.integers(0, 12)))]
    if rng.random() < 0.2:
        args += ["--threads", str(int(rng.integers(1, 3)))]
    if rng.random() < 0.15 and "," not in shape["sctype"]:
        # shards that hold at least one sentence (Moses stops on an empty one)
        count = int(rng.integers(1, min(4, shape["sentences"]) + 1))
        args += ["--shard-count", str(count)]
        if rng.random() < 0.5:
            args += ["--shard-size", f"{max(float(rng.uniform(0.1, 1)), 1.0 / shape['sentences']):.3g}"]
    return args


def moses_threads_race(args: list[str]) -> bool:
    """Whether Moses's mert result depends on thread timing for these flags: more than one
    thread and random numbers drawn inside the tasks (-t random, random-direction, or
    powell with -m > 0); docs/mert-moses.md."""
    def value(flag, default):
        return args[args.index(flag) + 1] if flag in args else default
    return (int(value("--threads", "1")) > 1
            and (value("-t", "powell") != "powell" or int(value("-m", "0")) > 0))


#: scorers of mert's cases besides BLEU (interpolations too)
SCTYPES = ["TER", "PER", "CDER", "WER", "BLEU,TER", "BLEU,PER", "TER,BLEU,WER"]

PROGRAMS = {"pro": (pro_args, ["pro.data"]), "mert": (mert_args, ["weights.txt"])}


def run_pair(program: str, folder: Path, args: list[str], moses_bin: Path, python: str, timeout: float = 120):
    """Run Moses's ``program`` and mtplug's on the case in ``folder`` (each in a copy);
    returns (same, details): same when the outputs, the exit statuses and (mert) the
    ``Best point:`` line are equal, or when both run longer than ``timeout`` seconds
    (Moses's random-direction search with -o can go on for ever: docs/mert-moses.md)."""
    outs = {}
    for who in ("moses", "mtplug"):
        work = folder / who
        if work.exists():
            shutil.rmtree(work)
        work.mkdir()
        for f in folder.iterdir():
            if f.is_file():
                shutil.copy(f, work / f.name)
        if who == "moses":
            cmd = [str(moses_bin / program), *args]
            env = os.environ
        else:
            cmd = [python, "-m", "mtplug.integrations.moses", program, *args]
            env = dict(os.environ, OMP_NUM_THREADS="1")
        try:
            p = subprocess.run(cmd, check=False, cwd=work, capture_output=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            outs[who] = ("timeout", {}, [])
            continue
        files = {}
        for name in PROGRAMS[program][1]:
            path = work / name
            files[name] = path.read_bytes() if path.exists() else None
        best = [line for line in p.stderr.decode("utf-8", "replace").splitlines() if line.startswith("Best point:")]
        outs[who] = (p.returncode, files, best)
    return outs["moses"] == outs["mtplug"], outs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("program", choices=sorted(PROGRAMS))
    ap.add_argument("--cases", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--moses-bin", default=os.path.join(os.environ.get("MTPLUG_MOSES_DIR", "/work/moses/src"), "bin"))
    ap.add_argument("--work", default="/tmp/mert_pro_cases")
    ap.add_argument("--keep", action="store_true", help="keep the folders of matching cases too")
    ap.add_argument("--timeout", type=float, default=120, help="seconds each program may run (default 120)")
    ap.add_argument("--only", type=int, nargs="*", help="run only these case numbers")
    a = ap.parse_args(argv)
    make_args = PROGRAMS[a.program][0]
    bad = races = hangs = n_run = 0
    for i in range(a.cases):
        if a.only is not None and i not in a.only:
            continue
        n_run += 1
        rng = np.random.default_rng([a.seed, i])
        folder = Path(a.work) / f"{a.program}-{a.seed}-{i}"
        if folder.exists():
            shutil.rmtree(folder)
        sctype = "BLEU" if a.program == "pro" or rng.random() < 0.7 else str(rng.choice(SCTYPES))
        shape = write_case(folder, rng, sctype)
        args = make_args(rng, shape)
        same, outs = run_pair(a.program, folder, args, Path(a.moses_bin), sys.executable, a.timeout)
        if not same and a.program == "mert" and moses_threads_race(args):
            # Moses's tasks share one rand() stream across threads: compare with its one-thread run
            one = [("1" if i and args[i - 1] == "--threads" else x) for i, x in enumerate(args)]
            same, outs = run_pair(a.program, folder, one, Path(a.moses_bin), sys.executable, a.timeout)
            races += 1
        if outs["moses"][0] == "timeout" and outs["mtplug"][0] == "timeout":
            hangs += 1          # not compared: neither program ended within the timeout
            continue
        if not same:
            bad += 1
            print(f"MISMATCH case {i}: {a.program} {' '.join(args)} in {folder}", flush=True)
            print(f"  moses rc={outs['moses'][0]} best={outs['moses'][2]}", flush=True)
            print(f"  mtplug rc={outs['mtplug'][0]} best={outs['mtplug'][2]}", flush=True)
        elif not a.keep:
            shutil.rmtree(folder)
    print(f"{a.program}: {n_run - bad - hangs} of {n_run} cases byte-identical, {bad} differ, {hangs} not "
          f"compared (neither program ended within {a.timeout:g} s) (seed {a.seed}; {races} with Moses's "
          f"thread race compared with its one-thread run)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
