"""Issue 23, streaming PRO: mtplug's Moses ``pro`` program against Moses's ``pro`` on
Moses's own features.dat/scores.dat, the same flags and seed.

    python benchmarks/speed_pro.py --data /work/bench/synth-2000x1000 --work /work/bench/pro \\
        --moses-bin /work/moses/bin [--sentences N] [--repeat R] [--reference FILE]

Runs ``pro -r 1 --ffile F --scfile S -o pro.data`` (with ``--mtplug-sampler`` for mtplug; Moses: its pair sampling, written as
pro.data; mtplug: the same, streamed sentence block by block) under /usr/bin/time,
alternately R times (best of R). Target: peak memory <= 50 MB, faster than Moses's pro,
and the pro.data bytes of sampling the whole store (mtplug before streaming): the
benchmark writes those in process with the whole-store functions (load the store,
hypothesis_scores, sample_pairs, pro_data_from_pairs, write_pro_data) and compares, or
compares with ``--reference`` (a pro.data kept from before). Where the time goes comes
from a profile of the streamed run in process.
"""

from __future__ import annotations

import cProfile
import os
import pstats
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the repo root
sys.path.insert(0, HERE)

from _speed import SpeedContext, SpeedRow, context, mert_files, print_rows, run_measured, section_parser  # noqa: E402

FEATURES, SCORES = "moses.features.dat", "moses.scores.dat"
MEMORY_MB = 50
SEED = 1


def best_of(repeat: int, *commands) -> list[tuple[float, float]]:
    """(seconds, peak MB) of each command, run alternately ``repeat`` times: the fastest
    run of each, with its peak memory."""
    best = [(float("inf"), float("nan"))] * len(commands)
    for _ in range(repeat):
        for k, cmd in enumerate(commands):
            if cmd is None:
                continue
            seconds, mb, _ = run_measured(cmd)
            if seconds < best[k][0]:
                best[k] = (seconds, mb)
    return best


def whole_store_bytes(ff: str, sf: str, path: str) -> tuple[bytes, float]:
    """pro.data of sampling the whole store at once (mtplug before streaming), and the
    seconds it took."""
    from tests.reference.pro_data_writer import pro_data_from_pairs, write_pro_data
    from mtplug.integrations.moses.common import load_mert_data
    from mtplug.metrics.sentence import hypothesis_scores
    from mtplug.optimizers.pro import sample_pairs

    t = time.perf_counter()
    corpus = load_mert_data([ff], [sf])
    pairs = sample_pairs(hypothesis_scores(corpus, "moses-sentence-bleu"), corpus.sent_offsets, seed=SEED)
    write_pro_data(path, pro_data_from_pairs(corpus, pairs.better, pairs.worse))
    seconds = time.perf_counter() - t
    with open(path, "rb") as fh:
        return fh.read(), seconds


def profile_stages(fn, args, stages) -> tuple[float, dict]:
    """Run fn(*args) under cProfile: (seconds, {label: cumulative seconds}) for stages
    given as (label, a Python function, or the text in a built-in's profile name)."""
    prof = cProfile.Profile()
    t = time.perf_counter()
    prof.runcall(fn, *args)
    total = time.perf_counter() - t
    stats = pstats.Stats(prof).stats
    out = {}
    for label, what in stages:
        if isinstance(what, str):
            out[label] = sum(v[3] for k, v in stats.items() if what in k[2])
        else:
            code = what.__code__
            out[label] = sum(v[3] for k, v in stats.items()
                             if k == (code.co_filename, code.co_firstlineno, code.co_name))
    return total, out


def where_time_goes(ff: str, sf: str, out: str) -> str:
    """A profile of the streamed run, in process, by stage."""
    from mtplug.formats import mert_data
    from mtplug.integrations.moses.pro import _Writer, main
    from mtplug.metrics.layer import Metric
    from mtplug.optimizers.pro import sample_pairs

    total, t = profile_stages(main, (["--ffile", ff, "--scfile", sf, "-r", str(SEED), "-o", out],), [
        ("scan", mert_data._FileScan.step), ("read", mert_data._PairStream.step), ("merge", mert_data._batch),
        ("bleu", Metric.row_objectives), ("sample", sample_pairs), ("writer", _Writer.write),
        ("write", "'write' of '_io.BufferedWriter'")])
    # the compiled kernels do not show in a profile: the pro.data text is the writer's own time
    text = t["writer"] - t["sample"] - t["write"]
    return (f"{total:.2f} s in process: scan (compiled, both files) {t['scan']:.2f} s, block hand-over "
            f"{t['read'] - t['scan']:.2f} s, merging blocks {t['merge']:.2f} s, sentence BLEU {t['bleu']:.2f} s, "
            f"sampling {t['sample']:.2f} s, pro.data text {text:.2f} s, writing {t['write']:.2f} s")


def measure(ctx: SpeedContext, repeat: int = 1, reference: str | None = None) -> list[SpeedRow]:
    """Moses's pro and mtplug's streaming pro on the same files (module docstring)."""
    os.makedirs(ctx.work, exist_ok=True)
    ff, sf, _ = mert_files(ctx)
    ours_out = os.path.join(ctx.work, "mtplug.pro.data")
    moses_out = os.path.join(ctx.work, "moses.pro.data")
    # --mtplug-sampler: mtplug's streamed sampler (Moses's flags alone draw Moses's pairs from
    # the files read whole: docs/mert-moses.md)
    ours = [sys.executable, "-m", "mtplug.integrations.moses", "pro", "--ffile", ff, "--scfile", sf,
            "-r", str(SEED), "-o", ours_out, "--mtplug-sampler"]
    anchor = [os.path.join(ctx.moses_bin, "pro"), "--ffile", ff, "--scfile", sf, "-r", str(SEED),
              "-o", moses_out] if ctx.moses_bin else None
    (a_s, a_mb), (o_s, o_mb) = best_of(repeat, anchor, ours)
    with open(ours_out, "rb") as fh:
        got = fh.read()
    if reference:
        with open(reference, "rb") as fh:
            want, before_s = fh.read(), None
    else:
        want, before_s = whole_store_bytes(ff, sf, os.path.join(ctx.work, "whole-store.pro.data"))
    identical = got == want
    has_anchor = anchor is not None
    met = None if not has_anchor else bool(o_mb <= MEMORY_MB and identical and o_s < a_s)
    return [SpeedRow(
        work="pro (streaming) vs Moses pro", target=f"<= {MEMORY_MB} MB peak, same pro.data, faster than Moses pro",
        ours_seconds=o_s, ours_mb=o_mb, anchor="Moses pro" if has_anchor else "",
        anchor_seconds=a_s if has_anchor else None, anchor_mb=a_mb if has_anchor else None, met=met,
        identical=identical, where_time_goes=where_time_goes(ff, sf, os.path.join(ctx.work, "profiled.pro.data")),
        extra={"whole_store_seconds_in_process": before_s, "pro_data_bytes": len(got),
               "files": [ff, sf]})]


def main(argv=None) -> int:
    ap = section_parser(__doc__, "moses (pro)")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each program, alternately (best of R)")
    ap.add_argument("--reference", help="a pro.data of mtplug before streaming (-r 1) to compare with")
    args = ap.parse_args(argv)
    ctx = context(args)
    print_rows(measure(ctx, args.repeat, args.reference))
    return 0


if __name__ == "__main__":
    sys.exit(main())
