#!/usr/bin/env python3
"""Issue 38: Moses's M2SCORER statistics, mtplug's ``extractor`` program against Moses's
``extractor`` on the same GEC n-best list and M2 reference, in one run.

    python benchmarks/bench_m2.py --moses-bin /work/moses/bin --work /tmp/m2bench \\
        [--sentences 1000] [--nbest 100] [--words 20] [--repeat 3] [--threads 2] [--json OUT]

The set is made here, seeded (:func:`make_set`): sentences of ``--words`` words over a
2,000-word vocabulary, 1 or 2 annotators with 0 to 4 gold edits each (substitutions,
insertions, deletions of 1 or 2 words, case changes), and ``--nbest`` hypotheses per
sentence, each the source with some of the gold edits and a few random ones. Both
programs run under /usr/bin/time (``extractor --sctype M2SCORER --scconfig beta:0.5
--reference X.m2 --nbest X.nbest --scfile --ffile``), Moses then mtplug, ``--repeat``
times (best of); the scores files are compared byte for byte. Then the statistics alone
in this process (``mtplug.metrics.m2.m2_stats`` on the hypothesis strings, reading
excluded) on 1 and ``--threads`` threads. Target: at least 10x Moses's extractor.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from _speed import SpeedRow, print_rows, run_measured, write_rows  # noqa: E402
from speed_extract import same_bytes  # noqa: E402

SPEEDUP = 10.0


def make_set(path_m2: str, path_nbest: str, sentences: int, nbest: int, words: int, seed: int = 38) -> int:
    """Write a seeded M2 reference and n-best list (module docstring); returns the number
    of hypotheses."""
    rnd = random.Random(seed)
    vocab = [f"w{i}" for i in range(2000)] + ["The", "the", "a", "an", "is", "are", "go", "goes"]
    n_hyp = 0
    with open(path_m2, "w", encoding="utf-8") as m2, open(path_nbest, "w", encoding="utf-8") as nb:
        for s in range(sentences):
            src = [rnd.choice(vocab) for _ in range(rnd.randint(words // 2, words + words // 2))]
            m2.write("S " + " ".join(src) + "\n")
            edits_of = []
            for annotator in range(rnd.randint(1, 2)):
                edits, taken = [], set()
                for _ in range(rnd.randint(0, 4)):
                    start = rnd.randrange(len(src) + 1)
                    end = min(len(src), start + rnd.choice([0, 1, 1, 2]))
                    if any(i in taken for i in range(start, max(end, start + 1))):
                        continue
                    taken.update(range(start, max(end, start + 1)))
                    kind = rnd.random()
                    if kind < 0.2 and end > start:
                        corr = ""
                    elif kind < 0.3 and end > start:
                        corr = " ".join(w.swapcase() for w in src[start:end])
                    else:
                        corr = " ".join(rnd.choice(vocab) for _ in range(rnd.choice([1, 1, 2])))
                    if end == start and not corr:
                        continue
                    edits.append((start, end, corr))
                edits.sort()
                for start, end, corr in edits:
                    m2.write(f"A {start} {end}|||X|||{corr}|||REQUIRED|||-NONE-|||{annotator}\n")
                if not edits:
                    m2.write(f"A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||{annotator}\n")
                edits_of.append(edits)
            m2.write("\n")
            for k in range(nbest):
                edits = [e for e in rnd.choice(edits_of) if rnd.random() < 0.6]
                for _ in range(rnd.randint(0, 2)):
                    i = rnd.randrange(len(src))
                    if all(not (e[0] <= i < max(e[1], e[0] + 1)) for e in edits):
                        edits.append((i, i + 1, rnd.choice(vocab)))
                hyp = list(src)
                for start, end, corr in sorted(edits, reverse=True):
                    hyp[start:end] = corr.split()
                nb.write(f"{s} ||| {' '.join(hyp)} ||| F0= {k} F1= {rnd.random():.4f} ||| {-k}\n")
                n_hyp += 1
    return n_hyp


def stats_alone(path_m2: str, path_nbest: str, threads: int) -> float:
    """Seconds of m2_stats over the n-best's hypothesis strings (read before timing)."""
    from mtplug.metrics.m2 import M2Options, m2_stats, read_m2

    hyps, sids = [], []
    with open(path_nbest, encoding="utf-8") as fh:
        for line in fh:
            sid, text, _ = line.split(" ||| ", 2)
            sids.append(int(sid))
            hyps.append(text)
    ref = read_m2(path_m2)
    t = time.perf_counter()
    m2_stats(hyps, sids, ref, M2Options(), threads=threads)
    return time.perf_counter() - t


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--moses-bin", help="Moses's bin/ folder; without it mtplug alone is measured")
    ap.add_argument("--work", required=True, help="a scratch folder (the set and the outputs)")
    ap.add_argument("--sentences", type=int, default=1000)
    ap.add_argument("--nbest", type=int, default=100)
    ap.add_argument("--words", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json", help="also write the rows here")
    args = ap.parse_args(argv)
    os.makedirs(args.work, exist_ok=True)
    m2, nbest = os.path.join(args.work, "set.m2"), os.path.join(args.work, "set.nbest")
    n_hyp = make_set(m2, nbest, args.sentences, args.nbest, args.words)
    print(f"set: {args.sentences} sentences, {n_hyp} hypotheses, {args.words} words on average", file=sys.stderr)
    common = ["--sctype", "M2SCORER", "--scconfig", "beta:0.5", "--reference", m2, "--nbest", nbest]
    out = {name: (os.path.join(args.work, f"{name}.features.dat"), os.path.join(args.work, f"{name}.scores.dat"))
           for name in ("moses", "mtplug")}
    commands = {"mtplug": [sys.executable, "-m", "mtplug.integrations.moses", "extractor", *common,
                           "--ffile", out["mtplug"][0], "--scfile", out["mtplug"][1]]}
    if args.moses_bin:
        commands["moses"] = [os.path.join(args.moses_bin, "extractor"), *common, "--ffile", out["moses"][0],
                             "--scfile", out["moses"][1]]
    best = {name: (float("inf"), 0.0) for name in commands}
    for _ in range(args.repeat):
        for name in ("moses", "mtplug"):
            if name in commands:
                seconds, mb, _ = run_measured(commands[name])
                if seconds < best[name][0]:
                    best[name] = (seconds, mb)
    alone = {t: min(stats_alone(m2, nbest, t) for _ in range(args.repeat)) for t in sorted({1, args.threads})}
    a_s, a_mb = best["moses"] if args.moses_bin else (None, None)
    o_s, o_mb = best["mtplug"]
    identical = same_bytes(out["mtplug"][1], out["moses"][1]) if args.moses_bin else None
    met = None if a_s is None else bool(identical and o_s * SPEEDUP <= a_s)
    rows = [SpeedRow(work="extractor --sctype M2SCORER", target=f">= {SPEEDUP:g}x Moses, byte-identical scores",
                     ours_seconds=o_s, ours_mb=o_mb, anchor="Moses extractor" if a_s is not None else "",
                     anchor_seconds=a_s, anchor_mb=a_mb, met=met, identical=identical,
                     where_time_goes="statistics alone (m2_stats, reading excluded): " +
                                     ", ".join(f"{s:.3f} s on {t} thread(s)" for t, s in alone.items()),
                     extra={"hypotheses": n_hyp, "stats_alone": alone})]
    print_rows(rows)
    if args.json:
        write_rows(rows, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
