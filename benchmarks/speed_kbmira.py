"""Issue 23, kbmira: mtplug's Moses ``kbmira`` program (every hypothesis) against Moses's
``kbmira`` (16 hypotheses per sentence after its de-duplication) on Moses's own
features.dat/scores.dat, with mert-moses.pl's defaults; and how long reading the two
files takes.

    python benchmarks/speed_kbmira.py --data /work/bench/synth-2000x1000 --work /work/bench/pro \\
        --moses-bin /work/moses/bin [--sentences N] [--repeat R] [--reference FILE]

Both programs run as mert-moses.pl --batch-mira calls them: ``kbmira --dense-init init.opt
-r 1 --ffile F --scfile S -o weights`` (60 passes, C 0.01, decay 0.999, shuffled), under
/usr/bin/time, alternately R times (best of R). Target: faster than Moses's kbmira, with
the weights mtplug wrote before its passes were fused and pruned: the benchmark runs that
plain loop in process (one kernel pass without pruning, then the averaged weights scored,
per pass) and compares the weights file byte for byte, or compares with ``--reference``
(a weights file kept from before). A second row times reading the files alone
(read_mert_data in a subprocess), which every optimizer run over them starts with.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the repo root
sys.path.insert(0, HERE)

from _speed import SpeedContext, SpeedRow, context, mert_files, print_rows, section_parser  # noqa: E402
from speed_pro import best_of, profile_stages  # noqa: E402

SEED = 1
PASSES = 60


def plain_kbmira_lines(ff: str, sf: str, init: str) -> bytes:
    """The weights file of kbmira's plain loop (mtplug before this issue): each pass the
    compiled kbmira pass without bounds, then its averaged weights scored on their own."""
    from mtplug._ext import _mira
    from mtplug.formats.number_text import format_g6
    from mtplug.integrations.moses.common import load_mert_data
    from mtplug.integrations.moses.kbmira import _dense_start
    from mtplug.optimizers.mira import KBMIRA_BG0

    corpus = load_mert_data([ff], [sf])
    start = _dense_start(init, corpus)
    S, F = corpus.n_sentences, corpus.n_features
    rng = np.random.default_rng(SEED)
    w, u, state, bg = start.copy(), np.zeros(F), np.zeros(2, np.int64), KBMIRA_BG0.copy()
    feats = (corpus.dense, corpus.sparse_indptr, corpus.sparse_ids, corpus.sparse_values)
    scratch = np.empty(2 * int(np.diff(corpus.sent_offsets).max()))
    best, best_w = -1.0, start.copy()
    for _ in range(PASSES):
        order = rng.permutation(S).astype(np.int64)
        _mira.kbmira_pass(*feats, corpus.stats, float(corpus.ref_len_divisor), corpus.sent_offsets, order, 0.01,
                          0.999, False, False, bg, w, u, scratch, state)
        k = int(state[0])
        avg = (w - u / k) if k else w.copy()
        bleu = corpus.metric_of(avg)
        if bleu > best:
            best, best_w = bleu, avg
    return "".join(f"F{i} {format_g6(v)}\n" for i, v in enumerate(best_w.tolist())).encode()


def where_time_goes(ff: str, sf: str, init: str, out: str) -> str:
    """A profile of the kbmira program in process, by stage."""
    from mtplug.integrations.moses import common
    from mtplug.integrations.moses.kbmira import main
    from mtplug.optimizers import base
    from mtplug.optimizers.mira import KbMira

    total, t = profile_stages(main, (["--keep-all-hypotheses", "--dense-init", init, "-r", str(SEED), "--ffile", ff,
                                      "--scfile", sf,
                                      "-o", out],), [
        ("read", common.load_mert_data), ("optimize", KbMira.optimize), ("checks", base.Optimizer.checked_start),
        ("score", "objective"), ("final", "metric_of")])
    passes = t["optimize"] - t["checks"] - t["score"] - t["final"]
    return (f"{total:.2f} s in process: reading the files {t['read']:.2f} s, start checks {t['checks']:.2f} s, "
            f"{PASSES} passes (model scores, pruned gains, hope/fear, the last pass's 1-best) {passes:.2f} s, "
            f"per-pass BLEU {t['score'] + t['final']:.2f} s")


def measure(ctx: SpeedContext, repeat: int = 1, reference: str | None = None) -> list[SpeedRow]:
    """Moses's kbmira and mtplug's on the same files, and reading the files alone."""
    os.makedirs(ctx.work, exist_ok=True)
    ff, sf, _ = mert_files(ctx)
    init = os.path.join(ctx.data, "init.opt")
    ours_out, moses_out = os.path.join(ctx.work, "mtplug.kbmira.out"), os.path.join(ctx.work, "moses.kbmira.out")
    flags = ["--dense-init", init, "-r", str(SEED), "--ffile", ff, "--scfile", sf]
    # --keep-all-hypotheses: mtplug's own kbmira over every hypothesis (the default is Moses's, 16 per sentence)
    ours = [sys.executable, "-m", "mtplug.integrations.moses", "kbmira", "--keep-all-hypotheses", *flags, "-o", ours_out]
    anchor = [os.path.join(ctx.moses_bin, "kbmira"), *flags, "-o", moses_out] if ctx.moses_bin else None
    (a_s, a_mb), (o_s, o_mb) = best_of(repeat, anchor, ours)
    with open(ours_out, "rb") as fh:
        got = fh.read()
    t = time.perf_counter()
    if reference:
        with open(reference, "rb") as fh:
            want = fh.read()
    else:
        want = plain_kbmira_lines(ff, sf, init)
    plain_s = None if reference else time.perf_counter() - t
    identical = got == want
    has_anchor = anchor is not None
    read = [sys.executable, "-c", ("import sys; from mtplug.formats.mert_data import read_mert_data; "
                                   "read_mert_data([sys.argv[1]], [sys.argv[2]])"), ff, sf]
    (r_s, r_mb), = best_of(repeat, read)
    return [
        SpeedRow(work="kbmira (all hypotheses) vs Moses kbmira", target="faster than Moses kbmira, same weights",
                 ours_seconds=o_s, ours_mb=o_mb, anchor="Moses kbmira (16 hyps/sentence)" if has_anchor else "",
                 anchor_seconds=a_s if has_anchor else None, anchor_mb=a_mb if has_anchor else None,
                 met=None if not has_anchor else bool(identical and o_s < a_s), identical=identical,
                 where_time_goes=where_time_goes(ff, sf, init, os.path.join(ctx.work, "profiled.kbmira.out")),
                 extra={"plain_loop_seconds_in_process": plain_s, "files": [ff, sf]}),
        SpeedRow(work="read features.dat + scores.dat", target="(what APRO and kbmira start with)",
                 ours_seconds=r_s, ours_mb=r_mb,
                 where_time_goes="features and scores scanned side by side (two threads); no duplicate "
                                 "search when the scanner saw no two rows of a sentence alike"),
    ]


def main(argv=None) -> int:
    ap = section_parser(__doc__, "moses (kbmira)")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each program, alternately (best of R)")
    ap.add_argument("--reference", help="a weights file of mtplug's kbmira before this issue (-r 1)")
    args = ap.parse_args(argv)
    ctx = context(args)
    print_rows(measure(ctx, args.repeat, args.reference))
    return 0


if __name__ == "__main__":
    sys.exit(main())
