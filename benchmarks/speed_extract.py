"""Issue 23, extraction: ``mtplug extract --ffile --scfile`` and mtplug's Moses
``extractor`` program against Moses's ``extractor`` on the same n-best list: time, peak
memory, and the two files compared byte for byte with the ones Moses wrote in this run.

    python benchmarks/speed_extract.py --data /work/bench/synth-2000x1000 --work /work/bench/extract \\
        --moses-bin /work/moses/bin [--sentences N] [--repeat R]

Every program runs under /usr/bin/time, anchor then mtplug, R times (best of R). Target:
at least 5× faster than Moses's extractor, byte-identical features.dat and scores.dat, and
no more peak memory. Where the time goes comes from one more run in process with each
stage timed in the thread that runs it (the reader thread parses; the writer thread
computes BLEU statistics, removes duplicates, prints and writes both files; the two overlap).
"""

from __future__ import annotations

import contextlib
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the repo root
sys.path.insert(0, HERE)

from _speed import SpeedContext, SpeedRow, context, print_rows, run_measured, section_parser  # noqa: E402

SPEEDUP = 5.0


def inputs(ctx: SpeedContext) -> tuple[str, str]:
    """The n-best list and reference of the set, or of its first ``ctx.sentences``
    sentences (written under ctx.work once)."""
    nbest, ref = os.path.join(ctx.data, "nbest.txt"), os.path.join(ctx.data, "ref.0")
    if not ctx.sentences:
        return nbest, ref
    sub_nbest = os.path.join(ctx.work, f"first{ctx.sentences}.nbest.txt")
    sub_ref = os.path.join(ctx.work, f"first{ctx.sentences}.ref.0")
    if not os.path.exists(sub_nbest):
        with open(nbest, "rb") as src, open(sub_nbest + ".tmp", "wb") as dst:
            for line in src:
                if int(line.split(b"|||", 1)[0]) >= ctx.sentences:
                    break
                dst.write(line)
        with open(ref, "rb") as src, open(sub_ref, "wb") as dst:
            dst.writelines(line for _, line in zip(range(ctx.sentences), src))
        os.replace(sub_nbest + ".tmp", sub_nbest)
    return sub_nbest, sub_ref


def same_bytes(a: str, b: str) -> bool:
    """Whether two files hold the same bytes (cmp), a megabyte at a time."""
    if os.path.getsize(a) != os.path.getsize(b):
        return False
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            x, y = fa.read(1 << 20), fb.read(1 << 20)
            if x != y:
                return False
            if not x:
                return True


@contextlib.contextmanager
def timed(stages: dict, patches):
    """Replace each ``(owner, attribute, label)`` function by a wrapper that adds the CPU
    seconds of the calling thread it takes to ``stages[label]`` (generators: each step)."""
    import inspect

    saved = []

    def wrap(fn, label):
        if inspect.isgeneratorfunction(fn):
            def gen(*a, **kw):
                it = fn(*a, **kw)
                while True:
                    t = time.thread_time()
                    try:
                        item = next(it)
                    except StopIteration:
                        stages[label] = stages.get(label, 0.0) + time.thread_time() - t
                        return
                    stages[label] = stages.get(label, 0.0) + time.thread_time() - t
                    yield item
            return gen

        def call(*a, **kw):
            t = time.thread_time()
            try:
                return fn(*a, **kw)
            finally:
                stages[label] = stages.get(label, 0.0) + time.thread_time() - t
        return call

    try:
        for owner, name, label in patches:
            saved.append((owner, name, getattr(owner, name)))
            setattr(owner, name, wrap(getattr(owner, name), label))
        yield stages
    finally:
        for owner, name, fn in reversed(saved):
            setattr(owner, name, fn)


def where_time_goes(nbest: str, ref: str, work: str) -> tuple[str, dict]:
    """One streamed extraction in process, each stage's CPU seconds in its thread."""
    from concurrent.futures import ThreadPoolExecutor

    from mtplug._ext import _rows, _textio
    from mtplug.formats import mert_data
    from mtplug.formats import nbest as nbest_mod
    from mtplug.formats.references import read_references
    from mtplug.metrics.bleu import BleuConfig

    stages: dict = {}
    writer_cpu = []
    submit = ThreadPoolExecutor.submit

    def submit_timed(pool, fn, *a, **kw):
        def run():
            t = time.thread_time()
            try:
                return fn(*a, **kw)
            finally:
                writer_cpu.append(time.thread_time() - t)
        return submit(pool, run)

    patches = [(nbest_mod, "scan_nbest_sentences", "parse"), (nbest_mod, "piece_stats", "bleu"),
               (_rows, "moses_duplicates", "dedup"), (_textio, "format_features_blocks", "features text"),
               (_textio, "format_scores_blocks", "scores text")]
    t0, c0 = time.perf_counter(), time.thread_time()
    ThreadPoolExecutor.submit = submit_timed       # the writer thread's own CPU seconds
    try:
        with timed(stages, patches):
            refs = read_references([ref])
            done = mert_data.extract_files([nbest], refs, BleuConfig(), os.path.join(work, "profiled.features.dat"),
                                           os.path.join(work, "profiled.scores.dat"))
    finally:
        ThreadPoolExecutor.submit = submit
    wall, reader = time.perf_counter() - t0, time.thread_time() - c0
    writer = sum(writer_cpu)
    text = stages.get("features text", 0) + stages.get("scores text", 0)
    write = writer - stages.get("bleu", 0) - stages.get("dedup", 0) - text
    summary = (f"{wall:.2f} s in process, two threads overlapping: reader thread {reader:.2f} s CPU (read and parse: "
               f"split, numbers, interning {stages.get('parse', 0):.2f} s); writer thread {writer:.2f} s CPU (BLEU "
               f"statistics {stages.get('bleu', 0):.2f} s, duplicate removal {stages.get('dedup', 0):.2f} s, "
               f"features.dat text {stages.get('features text', 0):.2f} s, scores.dat text "
               f"{stages.get('scores text', 0):.2f} s, writing and hand-over {write:.2f} s)")
    return summary, {"wall": wall, "reader_cpu": reader, "writer_cpu": writer, **stages,
                     "hypotheses": done.n_hypotheses}


def measure(ctx: SpeedContext, repeat: int = 1) -> list[SpeedRow]:
    """Moses's extractor, ``mtplug extract`` and mtplug's extractor program, same files."""
    os.makedirs(ctx.work, exist_ok=True)
    nbest, ref = inputs(ctx)
    out = {name: (os.path.join(ctx.work, f"{name}.features.dat"), os.path.join(ctx.work, f"{name}.scores.dat"))
           for name in ("moses", "extract", "extractor")}
    commands = {
        "moses": [os.path.join(ctx.moses_bin, "extractor"), "--sctype", "BLEU", "--nbest", nbest, "--reference",
                  ref, "--ffile", out["moses"][0], "--scfile", out["moses"][1]] if ctx.moses_bin else None,
        "extract": [sys.executable, "-m", "mtplug", "extract", "--quiet", "--nbest", nbest, "--ref", ref,
                    "--ffile", out["extract"][0], "--scfile", out["extract"][1]],
        "extractor": [sys.executable, "-m", "mtplug.integrations.moses", "extractor", "--sctype", "BLEU",
                      "--nbest", nbest, "--reference", ref, "--ffile", out["extractor"][0],
                      "--scfile", out["extractor"][1]],
    }
    best = {name: (float("inf"), float("nan")) for name in commands}
    for _ in range(repeat):
        for name, cmd in commands.items():
            if cmd is not None:
                seconds, mb, _ = run_measured(cmd)
                if seconds < best[name][0]:
                    best[name] = (seconds, mb)
    profile, stages = where_time_goes(nbest, ref, ctx.work)
    a_s, a_mb = best["moses"] if ctx.moses_bin else (None, None)
    rows = []
    for name, work in (("extract", "mtplug extract --ffile --scfile"), ("extractor", "extractor program")):
        o_s, o_mb = best[name]
        identical = None
        if ctx.moses_bin:
            identical = all(same_bytes(mine, theirs) for mine, theirs in zip(out[name], out["moses"]))
        met = None if a_s is None else bool(identical and o_s * SPEEDUP <= a_s and o_mb <= a_mb)
        rows.append(SpeedRow(work=f"{work} vs Moses extractor", target=f">= {SPEEDUP:g}x Moses, byte-identical "
                             "files, <= its peak memory", ours_seconds=o_s, ours_mb=o_mb,
                             anchor="Moses extractor" if a_s is not None else "", anchor_seconds=a_s,
                             anchor_mb=a_mb, met=met, identical=identical, where_time_goes=profile,
                             extra={"files": list(out[name]), "stages": stages}))
    return rows


def main(argv=None) -> int:
    ap = section_parser(__doc__, "moses (extractor)")
    ap.add_argument("--repeat", type=int, default=1, help="best of R runs of each program")
    args = ap.parse_args(argv)
    ctx = context(args)
    print_rows(measure(ctx, repeat=args.repeat))
    return 0


if __name__ == "__main__":
    sys.exit(main())
