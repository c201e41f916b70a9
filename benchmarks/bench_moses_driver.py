"""mert-moses.pl's loop end to end (tests/integrations/moses_driver.py + the stand-in decoder).

    python benchmarks/bench_moses_driver.py [--mertdir DIR] [--iterations 3] [--restarts 20]
                                            [--modes mert mert:apro batch-mira pairwise-ranked]
                                            [--keep DIR]

For every mode: wall time of the whole run, BLEU of the decoder's 1-best per iteration
(evaluator), and the wall time of every program invocation (each subprocess the driver
issues, summed per program and listed per iteration). PRO's ``pro ... ; megam ...`` is one
shell command in mert-moses.pl; it is timed as such and then, for a breakdown, ``pro`` and
``megam_i686.opt`` are re-run alone on the last iteration's files. Finally the start-up
time of every program: ``DIR/prog --help``, best of 5. The mertdir defaults to
``python -m mtplug mertdir``. Data: shared/data/moses-toy (60 sentences, pool of 100
hypotheses per sentence, n-best size 20).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from tests.integrations.moses_driver import (PROGRAMS, check_mertdir, find_mertdir,  # noqa: E402
                                             run_mert_moses)

MODES = {
    "mert": dict(mode="mert"),
    "mert:apro": dict(mode="mert", mertmertargs="--algorithm apro"),
    "batch-mira": dict(mode="batch-mira", sparse=True),
    "pairwise-ranked": dict(mode="pairwise-ranked", sparse=True),
}


def startup_time(prog: Path, repeat: int = 5):
    """Best wall time of ``prog --help`` over ``repeat`` runs, and its last exit status."""
    best, rc = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        p = subprocess.run([str(prog), "--help"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        best = min(best, time.perf_counter() - t)
        rc = p.returncode
    return best, rc


def timed_shell(cmd: str, cwd: Path) -> float:
    t = time.perf_counter()
    p = subprocess.run(cmd, shell=True, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    dt = time.perf_counter() - t
    if p.returncode:
        print(f"    (re-run failed, exit {p.returncode}: {cmd}\n     {p.stderr.strip()[-500:]})")
    return dt


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mertdir", help="default: python -m mtplug mertdir")
    ap.add_argument("--iterations", type=int, default=3)
    ap.add_argument("--restarts", type=int, default=20, help="mert -n (mert-moses.pl's default 20)")
    ap.add_argument("--modes", nargs="+", default=list(MODES), choices=list(MODES))
    ap.add_argument("--keep", help="keep the working directories under this directory")
    args = ap.parse_args(argv)

    mertdir = Path(args.mertdir) if args.mertdir else find_mertdir(REPO)
    check_mertdir(mertdir)
    print(f"mertdir: {mertdir}")
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench_moses_driver."))
    base.mkdir(parents=True, exist_ok=True)

    summary = []
    for name in args.modes:
        kw = dict(MODES[name])
        mode = kw.pop("mode")
        wd = base / name.replace(":", "-")
        t0 = time.perf_counter()
        run = run_mert_moses(mertdir, wd, mode, args.iterations, random_restarts=args.restarts, **kw)
        wall = time.perf_counter() - t0
        summary.append((name, wall, run))
        print(f"\n== {name}: {len(run.records)} iterations in {wall:.2f} s"
              f"{' (stopped: no weight moved)' if run.stopped_early else ''}")
        for r in run.records:
            rep = "unknown" if r.reported_bleu is None else f"{r.reported_bleu:.6f}"
            print(f"  run{r.run}: BLEU of 1-best {r.bleu:.6f}  reported by the optimizer {rep}  "
                  f"hyps {r.n_hypotheses}  sparse features {r.n_sparse_features}")
            print("         " + "  ".join(f"{k} {v:.3f}s" for k, v in sorted(r.seconds.items(), key=lambda kv: -kv[1])))
        per_label: dict = {}
        for c in run.commands:
            n, t, mx = per_label.get(c.label, (0, 0.0, 0.0))
            per_label[c.label] = (n + 1, t + c.seconds, max(mx, c.seconds))
        print("  per program (calls, total, mean, max):")
        for label, (n, t, mx) in sorted(per_label.items(), key=lambda kv: -kv[1][1]):
            print(f"    {label:22s} {n:3d}  {t:7.3f} s  {t / n:7.3f} s  {mx:7.3f} s")
        if mode == "pairwise-ranked":
            k = run.records[-1].run
            last = [c.cmd for c in run.commands if c.label == "pro ; megam"][-1]
            pro_cmd = last.split(" ; ")[0]
            megam_cmd = last.split("; ")[-1].split(" > mert.out")[0]
            t_pro = timed_shell(pro_cmd + " > /dev/null 2>&1", wd)
            t_megam = timed_shell(megam_cmd + " > /dev/null 2> /dev/null", wd)
            print(f"  breakdown of run{k}'s 'pro ; megam' (re-run alone): pro {t_pro:.3f} s, "
                  f"megam_i686.opt {t_megam:.3f} s")

    print("\n== start-up (prog --help, best of 5)")
    for prog in PROGRAMS:
        t, rc = startup_time(mertdir / prog)
        print(f"  {prog:16s} {t * 1000:7.1f} ms{'' if rc == 0 else f'  (exit status {rc})'}")

    print("\n== summary")
    for name, wall, run in summary:
        bleus = " -> ".join(f"{r.bleu:.4f}" for r in run.records)
        print(f"  {name:16s} {wall:6.2f} s   BLEU {bleus}")
    if not args.keep:
        print(f"(working directories in {base})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
