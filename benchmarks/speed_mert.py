"""Issue 23, MERT: (1) 20 restarts with coordinate directions over the 2,000 × 1,000 × 15
set against Moses's ``mert`` with the same options; (2) the forest line search against
cdec's ``mr_dpmert_map``, per direction, on the same forests and directions.

    python benchmarks/speed_mert.py --data /work/bench/synth-2000x1000 --work /work/bench/mert \\
        --moses-bin /work/moses/bin --cdec-dir /work/cdec/build --cdec-system /work/systems/cdec-de-en \\
        [--sentences N] [--moses-mert-restarts 20] [--restarts 20]

(1) runs Moses's ``mert -d D --ffile F --scfile S --ifile init.opt -n R -r 1 --threads 2``
and mtplug's drop-in ``mert`` program (``mtplug mertdir``) with the same flags, reading
the files included, each under /usr/bin/time. With ``-n 20`` Moses's takes about 15
minutes on 2 cores; ``--moses-mert-restarts`` gives it fewer (the row then names both
counts, and the ratio compares unequal work). The target is mtplug's program with 20
restarts in at most 60 s. mtplug's search then runs again in this process on one thread:
it must reach the same point (the thread count changes no bit), and its timers say where
the time goes. F and S are DATA/moses.features.dat and moses.scores.dat (Moses's
extractor wrote them), made with ``mtplug extract`` under --work when missing;
``--sentences N`` uses their first N sentences (a subset written under --work).

(2) decodes the cdec system's dev source with cdec's ``-O`` (forests under
--work/forests, reused when there), lets ``mr_dpmert_generate_mapper_input -d 0`` write
dpmert's agenda (every feature of the start weights as a coordinate direction, for every
sentence) and times ``mr_dpmert_map`` on it and on its first direction alone (CPU
seconds): the difference per further direction is what one line search costs cdec once
the forests are read. mtplug reads the same forests once, in its own process (for its
peak memory), and times :func:`line_search` along the same directions from the same
origin (one thread, CPU seconds). Its best point is compared with what
``mr_dpmert_reduce`` makes of cdec's maps. The cdec system (cdec.ini, weights.start,
dev.de, dev.en; docs/real-systems.md) comes from ``--cdec-system`` or
$MTPLUG_CDEC_SYSTEM; without it, or without --cdec-dir, row (2) measures nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import json
import os
import pstats
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the repo root
sys.path.insert(0, HERE)

from _speed import SpeedContext, SpeedRow, mert_files, print_rows, run_measured, write_rows  # noqa: E402

#: the issue's target: 20 restarts with coordinate directions within this many seconds
TARGET_SECONDS = 60.0
TARGET_RESTARTS = 20
#: forest line search: at least this many times faster per direction than mr_dpmert_map
TARGET_FOREST_RATIO = 3.0
SEED = 1


# ---------------------------------------------------------------------------------- (1)
def _best_point(stderr: bytes) -> tuple[list[float], float]:
    """Weights and score of the ``Best point: w1 ... wD => SCORE`` line of a mert log."""
    line = [x for x in stderr.decode("utf-8", "replace").splitlines() if x.startswith("Best point:")][-1]
    point, score = line[len("Best point:"):].split("=>")
    return [float(v) for v in point.split()], float(score)


def _dims(ff: str) -> int:
    with open(ff, "rb") as fh:
        return int(fh.readline().split()[3])


def measure_mert(ctx: SpeedContext, moses_mert_restarts: int = TARGET_RESTARTS,
                 restarts: int = TARGET_RESTARTS) -> SpeedRow:
    """Row (1): MERT over features/scores files, Moses's ``mert`` beside mtplug's."""
    from mtplug.formats.mert_data import read_mert_data
    from mtplug.formats.mert_weights import read_init_opt
    from mtplug.optimizers.mert import Mert

    ff, sf, init = mert_files(ctx)
    dims = _dims(ff)
    flags = ["-d", str(dims), "--ffile", ff, "--scfile", sf, "--ifile", init, "-r", str(SEED), "--threads", "2"]
    extra: dict = {"restarts": restarts, "moses_restarts": moses_mert_restarts, "seed": SEED}
    anchor_s = anchor_mb = None
    if ctx.moses_bin:
        wd = os.path.join(ctx.work, "moses-mert")
        os.makedirs(wd, exist_ok=True)
        anchor_s, anchor_mb, p = run_measured([os.path.join(ctx.moses_bin, "mert"), *flags,
                                               "-n", str(moses_mert_restarts)], cwd=wd)
        extra["moses_weights"], extra["moses_bleu"] = _best_point(p.stderr)
    wd = os.path.join(ctx.work, "mtplug-mert")
    os.makedirs(wd, exist_ok=True)
    # --mtplug-mert: mtplug's own MERT (Moses's flags alone run Moses's optimizer step for step:
    # docs/mert-moses.md)
    ours_s, ours_mb, p = run_measured([sys.executable, "-m", "mtplug.integrations.moses", "mert", *flags,
                                       "-n", str(restarts), "--mtplug-mert"], cwd=wd)
    extra["mtplug_weights"], extra["mtplug_bleu"] = _best_point(p.stderr)

    # the same search in process, one thread: the same point, and where the time goes
    t = time.perf_counter()
    corpus = read_mert_data([ff], [sf]).dense_only()
    read_s = time.perf_counter() - t
    start = read_init_opt(init)
    t = time.perf_counter()
    res = Mert(directions="coordinate", restarts=restarts).optimize(
        corpus, start.start[:dims], SEED, threads=1, ranges=(start.mins[:dims], start.maxs[:dims]))
    opt_s = time.perf_counter() - t
    info = res.info
    w = res.weights / np.abs(res.weights).sum()
    same = bool(np.allclose(w, extra["mtplug_weights"], rtol=1e-5, atol=1e-6))
    extra.update(line_searches=info["line_searches"], rounds=info["iterations"],
                 # a fraction beside mtplug_bleu (mert's output; Result.score is 0-100)
                 one_thread_seconds=read_s + opt_s, one_thread_bleu=res.score / 100)
    ls, scores = info["seconds_in_line_searches"], info["seconds_in_scores"]
    where = (f"one thread, {read_s + opt_s:.1f} s: read features/scores {read_s:.1f} s, per-feature hypothesis "
             f"orders {info['seconds_slope_orders']:.1f} s, {info['line_searches']} line searches "
             f"{ls - scores:.1f} s ({1e3 * (ls - scores) / max(1, info['line_searches']):.2f} ms each: envelopes "
             f"from the orders, breakpoint sort, BLEU sweep), w·f at {info['iterations']} new points "
             f"{scores:.1f} s, rest {opt_s - ls - info['seconds_slope_orders']:.1f} s")
    met = ours_s <= TARGET_SECONDS if restarts == TARGET_RESTARTS and not ctx.sentences else None
    anchor = f"Moses mert -n {moses_mert_restarts} --threads 2" if ctx.moses_bin else ""
    work = f"mert -n {restarts} (coordinate), {corpus.n_sentences} sentences x {corpus.n_hypotheses // max(1, corpus.n_sentences)}"
    return SpeedRow(work=work, target=f"20 restarts <= {TARGET_SECONDS:.0f} s", ours_seconds=ours_s, ours_mb=ours_mb,
                    anchor=anchor, anchor_seconds=anchor_s, anchor_mb=anchor_mb, met=met,
                    identical=None, where_time_goes=where,
                    extra={**extra, "threads_change_no_bit": same})


# ---------------------------------------------------------------------------------- (2)
def _read_weights(path: str) -> dict[str, float]:
    out = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) == 2 and not line.startswith("#"):
                out[parts[0]] = float(parts[1])
    return out


def make_forests(cdec_dir: str, system: str, out: str) -> str:
    """cdec's forests (``-O``) of the system's dev source at weights.start, under ``out``
    (made once: reused when every sentence's forest is there). Two cdec processes, each
    on half of the sentences, numbered by <seg id> so that both write into one folder."""
    hgs = os.path.join(out, "hgs")
    src = os.path.join(system, "dev.de")
    with open(src, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    if all(os.path.exists(os.path.join(hgs, f"{i}.bin.gz")) for i in range(len(lines))):
        return hgs
    os.makedirs(hgs, exist_ok=True)
    half = len(lines) // 2
    cmd = [os.path.join(cdec_dir, "decoder", "cdec"), "-c", os.path.join(system, "cdec.ini"),
           "-w", os.path.join(system, "weights.start"), "-O", hgs]
    with contextlib.ExitStack() as files:
        procs = []
        for k, (lo, hi) in enumerate(((0, half), (half, len(lines)))):
            part = os.path.join(out, f"dev.{k}.sgm")
            with open(part, "w", encoding="utf-8") as fh:
                fh.writelines(f'<seg id="{i}"> {lines[i]} </seg>\n' for i in range(lo, hi))
            procs.append(subprocess.Popen(cmd, stdin=files.enter_context(open(part, "rb")), stdout=subprocess.DEVNULL,
                                          stderr=files.enter_context(open(os.path.join(out, f"cdec.{k}.log"), "wb"))))
        if any(p.wait() for p in procs):
            raise RuntimeError(f"cdec failed: see {out}/cdec.*.log")
    return hgs


def _run_cpu(cmd: list[str], stdin: str) -> tuple[float, float, subprocess.CompletedProcess]:
    """Run ``cmd`` with ``stdin`` under /usr/bin/time: (user + system CPU seconds, peak MB,
    the process). CPU seconds, not wall: on a shared machine the difference of two wall
    times of minutes is mostly noise."""
    with open(stdin, "rb") as fh:
        p = subprocess.run(["/usr/bin/time", "-f", "CPU=%U %S %M", *cmd], stdin=fh, capture_output=True, check=True)
    user, system, kb = p.stderr.decode().splitlines()[-1][len("CPU="):].split()
    return float(user) + float(system), int(kb) / 1024, p


def measure_forest(ctx: SpeedContext, system: str | None) -> SpeedRow:
    """Row (2): the forest line search per direction, cdec's mapper beside mtplug's."""
    target = f"forest line search >= {TARGET_FOREST_RATIO:.0f}x faster per direction than mr_dpmert_map"
    if not (ctx.cdec_dir and system):
        return SpeedRow(work="forest MERT line search", target=target, ours_seconds=float("nan"),
                        ours_mb=float("nan"), where_time_goes="not measured: needs --cdec-dir and --cdec-system")
    out = os.path.join(ctx.work, "forests")
    os.makedirs(out, exist_ok=True)
    hgs = make_forests(ctx.cdec_dir, system, out)
    refs_path = os.path.join(system, "dev.en")
    weights_path = os.path.join(system, "weights.start")
    with open(refs_path, encoding="utf-8") as fh:
        n = sum(1 for _ in fh)
    dpmert = os.path.join(ctx.cdec_dir, "training", "dpmert")
    agenda = subprocess.run([os.path.join(dpmert, "mr_dpmert_generate_mapper_input"), "-w", weights_path,
                             "-r", hgs, "-s", str(n), "-d", "0"], check=True, capture_output=True).stdout
    lines = agenda.decode().splitlines()
    directions = list(dict.fromkeys(line.split()[3] for line in lines))
    K = len(directions)
    first = "\n".join(line for line in lines if line.split()[3] == directions[0]) + "\n"
    paths = {"all": os.path.join(out, "agenda.all"), "first": os.path.join(out, "agenda.first")}
    with open(paths["all"], "wb") as fh:
        fh.write(agenda)
    with open(paths["first"], "w") as fh:
        fh.write(first)
    mapper = [os.path.join(dpmert, "mr_dpmert_map"), "-r", refs_path]
    t1, _, _ = _run_cpu(mapper, paths["first"])
    tk, anchor_mb, p = _run_cpu(mapper, paths["all"])
    reduced = subprocess.run([os.path.join(dpmert, "mr_dpmert_reduce"), "-m", "ibm_bleu"], check=True,
                             input=b"".join(sorted(p.stdout.splitlines(keepends=True), key=lambda x: x.split(b"\t")[0])),
                             capture_output=True).stdout.decode().splitlines()
    cdec_best = {}
    for line in reduced:
        key, x, score = line.rsplit("|", 2)
        cdec_best[key.split()[-1]] = (float(x), float(score))
    per_direction_cdec = (tk - t1) / (K - 1) if K > 1 else tk

    with open(os.path.join(out, "directions.json"), "w") as fh:
        json.dump(directions, fh)
    _, ours_mb, p = run_measured([sys.executable, os.path.abspath(__file__), "--forest-line-searches", hgs,
                                  refs_path, weights_path, os.path.join(out, "directions.json")])
    found = json.loads(p.stdout)
    seconds, read_s, n_edges = found["seconds"], found["read_seconds"], found["edges"]
    compare = {}
    for spec, (gamma, score) in zip(directions, found["best"]):
        cx, cs = cdec_best.get(spec, (None, None))
        compare[spec] = {"cdec_x": cx, "cdec_bleu": cs, "mtplug_x": gamma, "mtplug_bleu": score}
    ours = float(np.mean(seconds))
    same_interval = sum(1 for c in compare.values() if c["cdec_x"] is not None
                        and abs(c["cdec_x"] - c["mtplug_x"]) <= 1e-3 * max(1.0, abs(c["cdec_x"])))
    where = (f"{ours:.2f} CPU s per direction over {n_edges:,} edges of {n} forests: "
             + ", ".join(f"{k} {100 * v:.0f} %" for k, v in found["profile"].items())
             + f" (reading the forests once: {read_s:.1f} s, and holding them: the peak MB; cdec's mapper "
             f"reads one at a time, every run: {t1 - per_direction_cdec:.1f} CPU s)")
    ratio = per_direction_cdec / ours if ours > 0 else None
    return SpeedRow(work=f"forest line search, {K} directions, {n} cdec forests", target=target,
                    ours_seconds=ours, ours_mb=ours_mb,
                    anchor="mr_dpmert_map, CPU s per further direction", anchor_seconds=per_direction_cdec,
                    anchor_mb=anchor_mb, met=ratio is not None and ratio >= TARGET_FOREST_RATIO, identical=None,
                    where_time_goes=where,
                    extra={"directions": compare, "same_step_as_cdec": f"{same_interval} of {K}",
                           "mapper_cpu_seconds_first_direction": t1, "mapper_cpu_seconds_all": tk,
                           "mtplug_seconds": dict(zip(directions, seconds)), "mtplug_read_seconds": read_s})


def forest_line_searches(hgs: str, refs_path: str, weights_path: str, directions: list[str]) -> dict:
    """mtplug's side of row (2), run in its own process (for its peak memory): read every
    forest of ``hgs`` once and w·f of its edges at the weights (as MERT keeps them per
    point), then one line search (one thread) from there along each direction (cdec's
    ``name=value;...`` form). Seconds per direction, the best (step, BLEU) of each, the
    reading time, the number of edges and the shares of the last search's time."""
    from mtplug.forests.corpus import ForestCorpus
    from mtplug.formats.cdec_forest import read_cdec_forest
    from mtplug.formats.references import read_references
    from mtplug.optimizers.line_search import line_search

    origin = _read_weights(weights_path)
    t = time.perf_counter()
    refs = read_references([refs_path])
    corpus = ForestCorpus(refs, feature_names=list(origin))
    for s in range(len(refs)):
        corpus.add(s, read_cdec_forest(os.path.join(hgs, f"{s}.bin.gz")))
    w = np.array([origin.get(name, 0.0) for name in corpus.feature_names])
    a = corpus.scores(w)    # w·f of every edge, once per point (as MERT keeps it)
    read_s = time.perf_counter() - t
    seconds, best = [], []
    for spec in directions:
        d = np.zeros(corpus.n_features)
        for pair in spec.split(";"):
            name, value = pair.split("=")
            d[corpus.feature_names.index(name)] = float(value)
        t = time.process_time()    # CPU seconds, as cdec's are measured
        res = line_search(corpus, w, d, intercepts=a)
        seconds.append(time.process_time() - t)
        best.append((res.gamma, res.score))
    # where the time goes: the last direction once more under cProfile (compiled kernels
    # count in the Python function of mtplug.forests.corpus that calls them)
    prof = cProfile.Profile()
    prof.runcall(line_search, corpus, w, d, intercepts=a)
    parts = {"envelope semiring": 0.0, "BLEU statistics of the envelopes' strings": 0.0, "sweep": 0.0,
             "d·f": 0.0}
    names = {"envelope": "envelope semiring", "envelope_lines": "BLEU statistics of the envelopes' strings",
             "line_sweep": "sweep", "scores": "d·f"}
    stats = pstats.Stats(prof).stats   # type: ignore[attr-defined]
    for (path, _, func), (_, _, tottime, _, _) in stats.items():
        if path.endswith(os.path.join("forests", "corpus.py")) and func in names:
            parts[names[func]] += tottime
    total = sum(v[2] for v in stats.values())
    return {"seconds": seconds, "best": best, "read_seconds": read_s, "edges": corpus.n_hypotheses,
            "profile": {**{k: v / total for k, v in parts.items()}, "the rest": 1 - sum(parts.values()) / total}}


def measure(ctx: SpeedContext, *, moses_mert_restarts: int = TARGET_RESTARTS, restarts: int = TARGET_RESTARTS,
            cdec_system: str | None = None, rows: tuple[str, ...] = ("mert", "forest")) -> list[SpeedRow]:
    """Rows (1) ``mert`` and (2) ``forest`` (module docstring)."""
    os.makedirs(ctx.work, exist_ok=True)
    out = []
    if "mert" in rows:
        out.append(measure_mert(ctx, moses_mert_restarts, restarts))
    if "forest" in rows:
        out.append(measure_forest(ctx, cdec_system or os.environ.get("MTPLUG_CDEC_SYSTEM")))
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", help="the synthetic set (moses.features.dat, moses.scores.dat, init.opt)")
    ap.add_argument("--work", help="scratch folder of this section")
    ap.add_argument("--moses-bin", help="Moses's bin/ folder (mert)")
    ap.add_argument("--cdec-dir", help="cdec's build folder (decoder/cdec, training/dpmert/)")
    ap.add_argument("--cdec-system", help="a cdec system (cdec.ini, weights.start, dev.de, dev.en)")
    ap.add_argument("--sentences", type=int, help="the first N sentences of the MERT set only")
    ap.add_argument("--moses-mert-restarts", type=int, default=TARGET_RESTARTS,
                    help="Moses's mert -n (default 20: about 15 minutes on 2 cores)")
    ap.add_argument("--restarts", type=int, default=TARGET_RESTARTS, help="mtplug's mert -n (default 20)")
    ap.add_argument("--rows", nargs="+", choices=("mert", "forest"), default=["mert", "forest"])
    ap.add_argument("--json", help="also write the rows to this JSON file")
    ap.add_argument("--forest-line-searches", nargs=4, metavar=("HGS", "REFS", "WEIGHTS", "DIRECTIONS_JSON"),
                    help=argparse.SUPPRESS)   # row (2)'s own process
    args = ap.parse_args(argv)
    if args.forest_line_searches:
        hgs, refs, weights, directions = args.forest_line_searches
        with open(directions) as fh:
            print(json.dumps(forest_line_searches(hgs, refs, weights, json.load(fh))))
        return
    if not (args.data and args.work):
        ap.error("--data and --work are required")
    ctx = SpeedContext(data=args.data, work=args.work, moses_bin=args.moses_bin, cdec_dir=args.cdec_dir,
                       sentences=args.sentences)
    rows = measure(ctx, moses_mert_restarts=args.moses_mert_restarts, restarts=args.restarts,
                   cdec_system=args.cdec_system, rows=tuple(args.rows))
    print_rows(rows)
    for r in rows:
        print(json.dumps({"work": r.work, **r.extra}, default=float))
    if args.json:
        write_rows(rows, args.json)


if __name__ == "__main__":
    main()
