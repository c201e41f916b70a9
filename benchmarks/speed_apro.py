"""Issue 23, APRO: (1) a full APRO run on Moses's features.dat/scores.dat against Moses's
``pro`` pair sampling alone on the same files; (2) the moonshot, APRO over up to 10^7
hypotheses with 10^6 sparse features, from a store on disk.

    python benchmarks/speed_apro.py --data /work/bench/synth-2000x1000 --work /work/bench/apro \\
        --moses-bin /work/moses/bin [--sentences N] [--moonshot 1e5 1e6 3e6 1e7] [--png FILE]

(1) runs ``pro -r 1 --ffile F --scfile S -o pro.data`` (Moses's sampling of 5,000
pairs per sentence, without its classifier) and ``mtplug optimize apro --ffile F
--scfile S --init init.opt`` (reading the files included), each under /usr/bin/time,
anchor then mtplug, best of ``--repeat``; then mtplug's run again on one thread under
cProfile timing CPU seconds (a busy machine stretches wall seconds), which says where
the time goes and must give the same weights (a thread count changes no bit). F and S are DATA/moses.features.dat and moses.scores.dat (Moses's
extractor wrote them); ``--sentences N`` uses their first N sentences (a subset written
under --work).

(2) makes seeded sparse stores under WORK/moonshot (:func:`make_sparse_store`; reused
when there) and, for each size, runs APRO (C = 0.01, APRO's default and the C of the recorded figures,
unless ``--c``;
tolerance 1e-6) from w = 0 in a fresh process that memory-maps the store
(:meth:`mtplug.distributed.pool.PartitionedPool.from_store` on a LocalEngine, 2 kernel
threads): seconds from start-up to the tuned weights, peak memory, Newton iterations,
kernel passes, one loss + gradient (scores, loss kernel, X^T g), and where the time
goes. The rows are the curve of time against hypotheses; ``--png`` also plots it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the repo root
sys.path.insert(0, HERE)

from _speed import SpeedContext, SpeedRow, mert_files, print_rows, run_measured, write_rows  # noqa: E402

SEED = 1
#: the moonshot's targets (at its largest size)
TARGET_SECONDS, TARGET_MB = 60.0, 8192.0
MOONSHOT_SIZES = (100_000, 1_000_000, 3_000_000, 10_000_000)
MOONSHOT_THREADS = 2
#: APRO's default C
MOONSHOT_C = 0.01
#: the moonshot's shape: hypotheses per sentence, sparse features, firing per hypothesis
NBEST = 1000
N_FEATURES = 1_000_000
FIRING = (5, 20)
#: per sentence, the feature ids most of its hypotheses draw from (sentences of a real
#: tuning set share phrase pairs and rules between their hypotheses), and that share
POOL, FROM_POOL = 256, 0.7


def make_sparse_store(path: str, n_hypotheses: int, *, seed: int = 23, nbest: int = NBEST,
                      n_features: int = N_FEATURES) -> None:
    """Write a seeded store (:meth:`mtplug.corpus.NbestCorpus.save`) of ``n_hypotheses``
    hypotheses in sentences of ``nbest``, with ``n_features`` sparse features and no
    dense ones, and BLEU statistics that a hidden weight vector explains.

    Every hypothesis draws 5-20 feature ids, each from its sentence's pool of 256 ids
    (probability 0.7) or from all ids; an id drawn twice counts twice (values are counts,
    1.0 mostly). A hidden w* ~ N(0, 1) gives each hypothesis the score z = x . w*; its
    quality q = 0.2 + 0.75 sigmoid(standardized z within the sentence + N(0, 0.5)), and
    its BLEU statistics follow q as in :func:`mtplug.synthetic.make_bleu_corpus`
    (lengths near a reference length, n-gram matches binomial with rate q^n). So
    APRO's sentence BLEU+1 ranks hypotheses mostly as w* does.
    """
    from mtplug._ext._nbest_scan import Vocabulary
    from mtplug.corpus import FeatureSpace, NbestCorpus

    S = max(1, n_hypotheses // nbest)
    n = S * nbest
    w_star = np.random.default_rng([seed, 0]).normal(size=n_features)
    block = max(1, 100_000 // nbest)          # sentences per block: small temporaries
    indptr = np.zeros(n + 1, dtype=np.int64)
    stats = np.empty((n, 9), dtype=np.int32)
    ids_parts, value_parts = [], []
    nnz = 0
    for b0 in range(0, S, block):
        b1 = min(S, b0 + block)
        rng = np.random.default_rng([seed, 1, b0])
        rows = (b1 - b0) * nbest
        draws = rng.integers(FIRING[0], FIRING[1] + 1, size=rows)
        row_of = np.repeat(np.arange(rows), draws)
        pools = rng.integers(0, n_features, size=(b1 - b0, POOL))
        from_pool = rng.random(row_of.size) < FROM_POOL
        ids = np.where(from_pool, pools[row_of // nbest, rng.integers(0, POOL, size=row_of.size)],
                       rng.integers(0, n_features, size=row_of.size))
        keys, counts = np.unique(row_of.astype(np.int64) * n_features + ids, return_counts=True)
        r, ids = np.divmod(keys, n_features)
        per_row = np.bincount(r, minlength=rows)
        lo = b0 * nbest
        indptr[lo + 1:lo + rows + 1] = nnz + np.cumsum(per_row)
        ids_parts.append(ids.astype(np.int32))
        value_parts.append(counts.astype(np.float64))
        nnz += keys.size
        z = np.bincount(r, weights=counts * w_star[ids], minlength=rows).reshape(b1 - b0, nbest)
        z = (z - z.mean(axis=1, keepdims=True)) / (z.std(axis=1, keepdims=True) + 1e-12)
        q = 0.2 + 0.75 / (1.0 + np.exp(-(z + rng.normal(scale=0.5, size=z.shape))))
        ref_len = np.repeat(np.clip(rng.normal(27, 10, size=b1 - b0), 5, 60).astype(np.int32), nbest)
        length = np.maximum(1, ref_len + rng.integers(-4, 5, size=rows)).astype(np.int32)
        st = stats[lo:lo + rows]
        for order in range(1, 5):
            total = np.maximum(0, length - order + 1)
            st[:, 2 * order - 1] = total
            st[:, 2 * order - 2] = rng.binomial(total, q.ravel() ** order)
        st[:, 8] = ref_len
    names = [f"S{j}".encode() for j in range(n_features)]
    offsets = np.zeros(n_features + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(x) for x in names])
    space = FeatureSpace(names=Vocabulary.from_arrays(np.frombuffer(b"".join(names), dtype=np.uint8), offsets))
    space.set_layout(0, np.zeros(0, np.int32), np.zeros(0, np.int32))
    corpus = NbestCorpus(n_sentences=S, has_strings=False, space=space)
    corpus.sent_offsets = np.arange(0, n + 1, nbest, dtype=np.int64)
    corpus.dense = np.zeros((n, 0), dtype=np.float64)
    corpus.sparse_indptr = indptr
    corpus.sparse_ids = np.concatenate(ids_parts)
    del ids_parts
    corpus.sparse_values = np.concatenate(value_parts)
    del value_parts
    corpus.stats = stats
    corpus.save(path)


# ---------------------------------------------------------------------------------- (1)
def _seconds(stats, file_end: str, name: str) -> tuple[float, int]:
    """(cumulative seconds, calls) of function ``name`` of a file ending in ``file_end``
    in a pstats.Stats."""
    total, calls = 0.0, 0
    for (path, _, fn), (_, ncalls, _, cumtime, _) in stats.stats.items():
        if fn == name and path.endswith(file_end):
            total += cumtime
            calls += ncalls
    return total, calls


def _where(stats, total: float, parts: list[tuple[str, str, str]]) -> dict:
    """{label: (seconds, calls)} of ``parts`` (label, file end, function), and "other"."""
    out = {label: _seconds(stats, end, fn) for label, end, fn in parts}
    out["other"] = (max(0.0, total - sum(s for s, _ in out.values())), 0)
    return out


def _describe(where: dict) -> str:
    return ", ".join(f"{label} {s:.2f} s" + (f" ({n}×)" if n > 1 else "") for label, (s, n) in where.items())


#: what an APRO run spends its time on (the optimizer's partition functions)
APRO_PARTS = [
    ("set-up (BLEU+1, ranks, columns)", "optimizers/apro.py", "_workspace"),
    ("loss passes", "optimizers/apro.py", "_loss"),
    ("Hessian products (X d, kernel, X^T)", "optimizers/apro.py", "_hessian"),
    ("gradients X^T g", "optimizers/apro.py", "_gradient"),
    ("scores X w, X d", "optimizers/apro.py", "_line"),
]


def profile_cli(argv: list[str]) -> dict:
    """Run ``mtplug`` with ``argv`` in this process under cProfile, in CPU seconds of the
    process: {"startup": to import the CLI, "total": the command, "where": {label: (s,
    calls)}}."""
    import cProfile
    import pstats

    t0 = time.process_time()
    from mtplug import cli

    startup = time.process_time() - t0
    prof = cProfile.Profile(time.process_time)
    t = time.process_time()
    prof.runcall(cli.main, argv)
    total = time.process_time() - t
    stats = pstats.Stats(prof)
    parts = [("reading features.dat/scores.dat", "formats/mert_data.py", "read_mert_data")] + APRO_PARTS
    return {"startup": startup, "total": total, "where": _where(stats, total, parts)}


def _timed(cmd: list[str]) -> tuple[float, float, float]:
    """(wall seconds, peak MB, CPU seconds user + system) of ``cmd`` (run_measured)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    seconds, mb, _ = run_measured(cmd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return seconds, mb, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure_full_run(ctx: SpeedContext, repeat: int = 3) -> SpeedRow:
    """Row (1): Moses's pro sampling against mtplug's APRO, best of ``repeat`` each."""
    ff, sf, init = mert_files(ctx)
    out = os.path.join(ctx.work, "apro.weights")
    ours_cmd = [sys.executable, "-m", "mtplug", "optimize", "apro", "--ffile", ff, "--scfile", sf, "--weights", init,
                "-o", out, "--seed", str(SEED), "-q"]
    anchor_cmd = None
    if ctx.moses_bin:
        anchor_cmd = [os.path.join(ctx.moses_bin, "pro"), "-r", str(SEED), "--ffile", ff, "--scfile", sf,
                      "-o", os.path.join(ctx.work, "pro.data")]
    anchor, ours = [], []
    for _ in range(repeat):
        if anchor_cmd:
            anchor.append(_timed(anchor_cmd))
        ours.append(_timed(ours_cmd))
    with open(out, "rb") as fh:
        weights = fh.read()
    one = os.path.join(ctx.work, "apro.1thread.weights")
    # the last line: mtplug's own JSON summary comes first
    prof = json.loads(subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--profile", "--", "optimize", "apro", "--ffile", ff,
         "--scfile", sf, "--weights", init, "-o", one, "--seed", str(SEED), "--threads", "1", "-q"],
        check=True, capture_output=True, text=True).stdout.splitlines()[-1])
    with open(one, "rb") as fh:
        same = fh.read() == weights
    best_ours = min(ours)
    best_anchor = min(anchor) if anchor else (None, None, None)
    where = {"start-up (imports)": (prof["startup"], 0), **prof["where"]}
    return SpeedRow(
        work="APRO full run (reading incl.) vs Moses pro sampling",
        target="faster than Moses's pro sampling alone",
        ours_seconds=best_ours[0], ours_mb=best_ours[1],
        anchor="Moses pro (sampling only)" if anchor else "",
        anchor_seconds=best_anchor[0], anchor_mb=best_anchor[1],
        met=None if not anchor else best_ours[0] < best_anchor[0],
        identical=None,
        where_time_goes=(f"(one thread, CPU s) {_describe(where)}; CPU s of the timed runs (best): "
                         + (f"Moses {best_anchor[2]:.2f}, " if anchor else "")
                         + f"mtplug {min(r[2] for r in ours):.2f} on all cores"),
        extra={"weights_same_on_1_and_all_threads": same, "repeat": repeat,
               "anchor_cpu_seconds": best_anchor[2], "ours_cpu_seconds": min(r[2] for r in ours),
               "anchor_runs": anchor, "ours_runs": ours, "profile_one_thread": prof})


# ---------------------------------------------------------------------------------- (2)
def moonshot_run(store: str, threads: int, c: float) -> dict:
    """Run in a fresh process (the caller times it): APRO with C = ``c`` (else its
    defaults) from w = 0 on the memory-mapped store; the seconds of its steps and the
    profile's split."""
    import cProfile
    import pstats

    from mtplug.distributed.local import LocalEngine
    from mtplug.distributed.pool import PartitionedPool
    from mtplug.optimizers.apro import Apro

    t = time.perf_counter()
    pool = PartitionedPool.from_store(store, LocalEngine(), threads=threads)
    opened = time.perf_counter() - t
    start = np.zeros(pool.n_features)
    t = time.perf_counter()
    bleu_start = pool.metric_of(start)
    bleu_seconds = time.perf_counter() - t
    prof = cProfile.Profile()
    t = time.perf_counter()
    res = prof.runcall(Apro(c=c).optimize, pool, start, SEED, threads=threads, engine=pool.engine)
    train = time.perf_counter() - t
    stats = pstats.Stats(prof)
    at, n_at = _seconds(stats, "optimizers/apro.py", "at")
    info = {k: v for k, v in res.info.items() if isinstance(v, (int, float, str, bool))}
    return {"hypotheses": pool.n_hypotheses, "features": pool.n_features, "open_seconds": opened,
            "bleu_seconds": bleu_seconds, "train_seconds": train, "loss_gradient_seconds": at / max(1, n_at),
            # bleu as a fraction beside bleu_start (Result.score is 0-100), as the recorded rows have it
            "info": info, "bleu_start": bleu_start, "bleu": res.score / 100, "where": _where(stats, train, APRO_PARTS)}


def moonshot_store(ctx: SpeedContext, n: int) -> str:
    """The store of ``n`` hypotheses under WORK/moonshot (made when missing)."""
    folder = os.path.join(ctx.work, "moonshot")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"store-{n}.npz")
    if not os.path.exists(path):
        print(f"making {path}", file=sys.stderr, flush=True)
        make_sparse_store(path, n)
    return path


def measure_moonshot(ctx: SpeedContext, sizes=MOONSHOT_SIZES, c: float = MOONSHOT_C) -> list[SpeedRow]:
    """Rows (2): one per store size, the largest against the 60 s / 8 GB target; APRO's C
    is ``c`` (its default, 0.01: the objective is then nearly quadratic and Newton needs
    2-3 iterations; a larger C costs more of them)."""
    rows = []
    for n in sizes:
        store = moonshot_store(ctx, n)
        seconds, mb, proc = run_measured([sys.executable, os.path.abspath(__file__), "--moonshot-run", store,
                                          "--threads", str(MOONSHOT_THREADS), "--c", repr(c)])
        r = json.loads(proc.stdout)
        info = r["info"]
        last = n == max(sizes)
        steps = r["open_seconds"] + r["bleu_seconds"] + r["train_seconds"]
        where = {"start-up (imports)": (max(0.0, seconds - steps), 0), "opening the store": (r["open_seconds"], 0),
                 "BLEU of w = 0": (r["bleu_seconds"], 0), **r["where"]}
        rows.append(SpeedRow(
            work=f"APRO moonshot {n:.0e} hyps x 10^6 sparse" + (f", C={c:g}" if c != MOONSHOT_C else ""),
            target=f"<= {TARGET_SECONDS:.0f} s and <= {TARGET_MB / 1024:.0f} GB at 10^7" if last else "curve",
            ours_seconds=seconds, ours_mb=mb,
            met=(seconds <= TARGET_SECONDS and mb <= TARGET_MB) if last and n >= 10**7 else None,
            where_time_goes=_describe(where),
            extra={"hypotheses": r["hypotheses"], "loss_gradient_seconds": r["loss_gradient_seconds"],
                   "iterations": info.get("iterations"), "loss_passes": info.get("function_evaluations"),
                   "gradients": info.get("gradient_evaluations"), "hessian_products": info.get("hessian_products"),
                   "converged": info.get("converged"), "bleu_start": r["bleu_start"], "bleu": r["bleu"]}))
    return rows


def print_curve(rows: list[SpeedRow], out=sys.stdout) -> None:
    """The moonshot rows as the curve: time and one loss + gradient against hypotheses."""
    print(f"{'hypotheses':>12} {'run s':>8} {'peak MB':>8} {'loss+grad s':>12} {'Newton':>7} {'passes':>7} "
          f"{'Hv':>4}  BLEU start -> end", file=out)
    for r in rows:
        e = r.extra
        print(f"{e['hypotheses']:>12,} {r.ours_seconds:8.1f} {r.ours_mb:8.0f} {e['loss_gradient_seconds']:12.3f} "
              f"{e['iterations']:>7} {e['loss_passes']:>7} {e['hessian_products']:>4}  "
              f"{e['bleu_start']:.4f} -> {e['bleu']:.4f}", file=out)


def plot_curve(rows: list[SpeedRow], path: str) -> None:
    """The curve as a PNG (log-log): run seconds and one loss + gradient against hypotheses."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = [r.extra["hypotheses"] for r in rows]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.loglog(n, [r.ours_seconds for r in rows], "o-", label="APRO to tolerance (s)")
    ax.loglog(n, [r.extra["loss_gradient_seconds"] for r in rows], "s-", label="one loss + gradient (s)")
    ax.axhline(TARGET_SECONDS, color="grey", ls="--", lw=0.8, label=f"target {TARGET_SECONDS:.0f} s at 10^7")
    ax.set_ylim(top=2 * TARGET_SECONDS)
    ax.set_xlabel("hypotheses (10^6 sparse features, 5-20 firing each)")
    ax.set_ylabel("seconds")
    ax.legend()
    ax.grid(True, which="both", lw=0.3)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=120)


def measure(ctx: SpeedContext) -> list[SpeedRow]:
    """The APRO section of benchmarks/bench_speed.py: row (1), then the moonshot rows."""
    os.makedirs(ctx.work, exist_ok=True)
    return [measure_full_run(ctx)] + measure_moonshot(ctx)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="/work/bench/synth-2000x1000")
    ap.add_argument("--work", default="/work/bench/apro")
    ap.add_argument("--moses-bin", help="Moses's bin/ folder (pro)")
    ap.add_argument("--cdec-dir", help="not used by this section")
    ap.add_argument("--sentences", type=int, help="the first N sentences only (row 1)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each program in row 1 (best taken)")
    ap.add_argument("--moonshot", nargs="*", type=float, default=[float(n) for n in MOONSHOT_SIZES],
                    help="store sizes in hypotheses (none: skip the moonshot)")
    ap.add_argument("--c", type=float, default=MOONSHOT_C, help="APRO's C in the moonshot (default 0.01, that of the recorded figures)")
    ap.add_argument("--png", help="also plot the moonshot curve here (e.g. benchmarks/out/apro_moonshot.png)")
    ap.add_argument("--json", help="also write the rows to this JSON file")
    ap.add_argument("--profile", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--moonshot-run", help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, default=MOONSHOT_THREADS, help=argparse.SUPPRESS)
    args, rest = ap.parse_known_args(argv)
    if args.profile:
        print(json.dumps(profile_cli([a for a in rest if a != "--"])))
        return 0
    if args.moonshot_run:
        print(json.dumps(moonshot_run(args.moonshot_run, args.threads, args.c)))
        return 0

    ctx = SpeedContext(data=args.data, work=args.work, moses_bin=args.moses_bin, cdec_dir=args.cdec_dir,
                       sentences=args.sentences)
    os.makedirs(ctx.work, exist_ok=True)
    rows = [measure_full_run(ctx, args.repeat)]
    moon = measure_moonshot(ctx, [int(n) for n in args.moonshot], args.c) if args.moonshot else []
    print_rows(rows + moon)
    if moon:
        print()
        print_curve(moon)
        if args.png:
            plot_curve(moon, args.png)
    if args.json:
        write_rows(rows + moon, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
