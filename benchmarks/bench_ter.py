"""TER benchmarks (issue 20's speed targets): mtplug against the program it replaces,
run in the same invocation on the same files.

    python benchmarks/bench_ter.py sacrebleu [--sentences 200] [--nbest 100] [--threads 1 2] [--repeat 3]
    python benchmarks/bench_ter.py moses-extractor [--sentences 200] [--nbest 1000] [--moses DIR]
    python benchmarks/bench_ter.py moses-mert [--sentences 200] [--nbest 1000] [--ntry 1 20] [--rseed 1 2]
                                              [--threads 1 2] [--moses DIR]

Common options: ``--seed 1`` (of the synthetic set), ``--out benchmarks/out/ter``. DIR is
the Moses build folder holding bin/extractor and bin/mert (default $MTPLUG_MOSES_DIR).

Data: benchmarks/synth.py's seeded n-best set, generated once per size into
OUT/synth-SxK-seedN/ (nbest.txt, ref.0, init.opt). For one n-best size K the set of S
sentences is the first S sentences of the 2,000 × K set (synth.py draws sentence by
sentence), so a subset run is a prefix of the full benchmark set.

``sacrebleu``: TER statistics of every hypothesis. sacrebleu's ``TER`` caches the
references, then scores each n-best rank (the j-th hypotheses of all sentences) with
``corpus_score``, as a sacrebleu user scores an n-best list. mtplug's ``ter`` kernel
(``Ter().stats``) computes all hypotheses' statistics in one call from word ids; the time
includes its per-word tables, not reading the file or interning words. Before mtplug is
timed, every rank's summed edits and reference length must equal sacrebleu's and the
corpus scores must agree within 1e-9. Target: ratio >= 10.

``moses-extractor``: Moses's ``extractor --sctype TER --scconfig case:true`` and mtplug's
drop-in with the same flags, as separate processes on the same n-best file (page cache
warmed first): wall and CPU seconds, peak RSS, and whether the two scores.dat (and
features.dat) files are byte-identical (else the first differing line). mtplug's
extractor uses every core, Moses's one; the CPU seconds show what that buys. Moses's time
scaled linearly to the 2,000 × 1,000 set is printed as an extrapolation, never measured.
Target: mtplug faster.

``moses-mert``: Moses's ``mert -d D --sctype TER --scconfig case:true -n N -r SEED -T T``
and mtplug's drop-in with the same flags (every combination of the values given), both
on Moses's extractor output (made first if OUT/.../extract/ lacks it) and the set's
init.opt, each in its own directory. Reports wall and CPU time, peak RSS, each program's
"Best point ... => x" (x = 1 - TER), and the 1 - TER of each program's weights.txt
recomputed by mtplug on the same files. The two programs draw different random start
points for the same -r, so with few restarts either may end higher. Target: mtplug >= 5x
faster with at least Moses's score.

Every subcommand prints one JSON line per comparison on stdout and a short summary on
stderr.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

FULL_HYPOTHESES = 2000 * 1000          # the project's benchmark set (synth.py's defaults)
SCORER_FLAGS = ["--sctype", "TER", "--scconfig", "case:true"]
BEST_POINT = re.compile(r"^Best point:.*=>\s*(\S+)\s*$", re.M)


# ------------------------------------------------------------------ data
def synth_set(out: Path, sentences: int, nbest: int, seed: int) -> Path:
    """The folder of the seeded synthetic set of that size, generated if missing (into a
    temporary folder renamed at the end, so an interrupted run leaves no half set)."""
    from synth import generate

    folder = out / f"synth-{sentences}x{nbest}-seed{seed}"
    if not (folder / "nbest.txt").exists():
        print(f"generating {folder} ...", file=sys.stderr, flush=True)
        tmp = folder.with_name(folder.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        generate(str(tmp), sentences, nbest, 1, seed)
        shutil.rmtree(folder, ignore_errors=True)
        tmp.rename(folder)
    return folder


def read_ranks(nbest_path: Path, sentences: int, nbest: int) -> list[list[str]]:
    """hyps[j][s]: the j-th hypothesis of sentence s (synth.py writes exactly ``nbest``
    hypotheses per sentence, in order)."""
    hyps = [[""] * sentences for _ in range(nbest)]
    seen = [0] * sentences
    with open(nbest_path, encoding="utf-8") as fh:
        for line in fh:
            sid, text, _ = line.split(" ||| ", 2)
            s = int(sid)
            hyps[seen[s]][s] = text.strip()
            seen[s] += 1
    if any(n != nbest for n in seen):
        sys.exit(f"{nbest_path}: expected {nbest} hypotheses for each of {sentences} sentences")
    return hyps


def warm_cache(*paths: Path) -> None:
    """Read the files once, so that neither timed program pays for the first disk read."""
    for p in paths:
        with open(p, "rb") as fh:
            while fh.read(1 << 24):
                pass


# ------------------------------------------------------------------ processes
GNU_TIME = "/usr/bin/time"


@dataclass
class Run:
    seconds: float             # wall
    cpu_seconds: float | None  # user + system of the program (None without GNU time)
    peak_mb: float | None      # peak RSS of the program (None without GNU time)
    stderr: str


def run_timed(cmd: list[str], cwd: Path, log: Path) -> Run:
    """Run ``cmd`` in ``cwd`` with stderr to ``log``: wall time, and CPU time and peak RSS
    from GNU time. (Not from os.wait4 of our own child: Linux carries the RSS high-water
    mark across exec, so a child forked from this process, which holds a whole corpus,
    would report at least this process's RSS.) Exits with the log's tail on failure."""
    cwd.mkdir(parents=True, exist_ok=True)
    usage = log.with_suffix(".usage")
    prefix = [GNU_TIME, "-f", "%U %S %M", "-o", str(usage)] if os.path.exists(GNU_TIME) else []
    with open(log, "w") as err:
        t = time.perf_counter()
        p = subprocess.run(prefix + cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err)
        wall = time.perf_counter() - t
    text = log.read_text(errors="replace")
    if p.returncode:
        sys.exit(f"exit status {p.returncode}: {' '.join(cmd)} (in {cwd})\n{text[-2000:]}")
    cpu = peak = None
    if prefix:
        user, system, kb = usage.read_text().split()[-3:]
        cpu, peak = float(user) + float(system), int(kb) / 1024
    return Run(wall, cpu, peak, text)


def moses_cmd(moses_dir: Path, prog: str) -> list[str]:
    return [str(moses_dir / "bin" / prog)]


def mtplug_cmd(prog: str) -> list[str]:
    return [sys.executable, "-m", "mtplug.integrations.moses", prog]


def first_difference(a: Path, b: Path):
    """None if the files are byte-identical, else (line number, line of a, line of b),
    with "(end of file)" for the side that ends first."""
    if a.read_bytes() == b.read_bytes():
        return None
    with open(a, "rb") as fa, open(b, "rb") as fb:
        no = 0
        while True:
            no += 1
            la, lb = fa.readline(), fb.readline()
            if la != lb:
                return no, _shown(la), _shown(lb)


def _shown(line: bytes) -> str:
    return line.decode(errors="replace").rstrip("\n") if line else "(end of file)"


def emit(record: dict, summary: str) -> None:
    # the machine may be shared: the load says how far the timings can be trusted
    record["load_average_1min"] = round(os.getloadavg()[0], 2)
    print(json.dumps(record), flush=True)
    print(summary, file=sys.stderr, flush=True)


def _usage(moses: Run, ours: Run) -> dict:
    """The JSON fields of both programs' CPU time and peak memory."""
    def r(x, nd):
        return None if x is None else round(x, nd)

    return {"cpu_seconds_moses": r(moses.cpu_seconds, 2), "cpu_seconds_mtplug": r(ours.cpu_seconds, 2),
            "peak_mb_moses": r(moses.peak_mb, 1), "peak_mb_mtplug": r(ours.peak_mb, 1)}


# ------------------------------------------------------------------ sacrebleu
def encode(hyps: list[list[str]], refs: list[str]):
    """Word-id CSR of all hypotheses (sentence by sentence, rank by rank, the store's
    order), the encoded references, and the vocabulary's words."""
    from mtplug._ext._nbest_scan import Vocabulary
    from mtplug.formats.references import References, encode_references

    vocab = Vocabulary()
    ptr, ids = [0], []
    for s in range(len(refs)):
        for j in range(len(hyps)):
            ids += [vocab.add(t.encode()) for t in hyps[j][s].split()]
            ptr.append(len(ids))
    enc = encode_references(References([[r] for r in refs], "ref.0"), vocab)
    return np.array(ptr, np.int64), np.array(ids, np.int32), enc, vocab.words()


def bench_sacrebleu(a) -> None:
    import sacrebleu

    from mtplug.metrics.ter import Ter

    from _common import best_time

    S, k = a.sentences, a.nbest
    folder = synth_set(a.out, S, k, a.seed)
    hyps = read_ranks(folder / "nbest.txt", S, k)
    refs = (folder / "ref.0").read_text(encoding="utf-8").splitlines()
    ptr, ids, enc, words = encode(hyps, refs)
    run_start = np.arange(S + 1, dtype=np.int64) * k
    run_sid = np.arange(S, dtype=np.int64)
    metric = Ter()     # sacrebleu's defaults: lowercased, tercom tokens

    t = time.perf_counter()
    theirs = sacrebleu.TER(references=[refs])
    scores = [theirs.corpus_score(hyps[j], None) for j in range(k)]
    t_sb = time.perf_counter() - t

    def ours(threads):
        return metric.stats(ptr, ids, run_start, run_sid, enc, words, threads=threads)

    reference = ours(1)
    check_ter(metric, reference, metric.ref_scale(enc), scores, S, k)
    for threads in a.threads:
        if not np.array_equal(ours(threads), reference):
            sys.exit(f"mtplug's TER statistics depend on the thread count ({threads})")
        t_ours = best_time(lambda: ours(threads), a.repeat)
        emit({"bench": "ter-sacrebleu", "sentences": S, "nbest": k, "hypotheses": S * k, "threads": threads,
              "seconds_mtplug": round(t_ours, 4), "seconds_sacrebleu": round(t_sb, 3),
              "ratio": round(t_sb / t_ours, 1), "hyps_per_second_mtplug": round(S * k / t_ours),
              "hyps_per_second_sacrebleu": round(S * k / t_sb), "corpus_scores_equal": True},
             f"TER statistics of {S}x{k}: sacrebleu {t_sb:.2f} s, mtplug {t_ours:.4f} s "
             f"({threads} thread(s), best of {a.repeat}): {t_sb / t_ours:.1f}x (target >= 10)")


def check_ter(metric, stats: np.ndarray, scale: int, scores, S: int, k: int) -> None:
    """Every rank's summed mtplug statistics against sacrebleu's TERScore: the same edits
    and average reference length, and the same score within 1e-9; exits otherwise."""
    by_rank = stats.reshape(S, k, 2).sum(axis=0, dtype=np.int64)
    for j, sc in enumerate(scores):
        edits, ref_len = int(by_rank[j, 0]), by_rank[j, 1] / scale
        ours = 100 * metric.corpus_score(by_rank[j], scale)
        if edits != sc.num_edits or abs(ref_len - sc.ref_length) > 1e-9 or abs(ours - sc.score) >= 1e-9:
            sys.exit(f"rank {j}: mtplug edits {edits}, ref length {ref_len}, TER {ours}; "
                     f"sacrebleu {sc.num_edits}, {sc.ref_length}, {sc.score}")


# ------------------------------------------------------------------ moses-extractor
def extractor_args(folder: Path, scfile: Path, ffile: Path) -> list[str]:
    return SCORER_FLAGS + ["-r", str(folder / "ref.0"), "-n", str(folder / "nbest.txt"),
                           "--scfile", str(scfile), "--ffile", str(ffile)]


def run_extractor(cmd: list[str], folder: Path, name: str) -> tuple[Run, Path, Path]:
    """Run one extractor into folder/extract/NAME.{scores,features}.dat (written under
    temporary names first: moses-mert reuses Moses's files and must not find half ones)."""
    wd = folder / "extract"
    wd.mkdir(exist_ok=True)
    sc, ff = wd / f"{name}.scores.dat", wd / f"{name}.features.dat"
    sc_tmp, ff_tmp = sc.with_suffix(".tmp"), ff.with_suffix(".tmp")
    run = run_timed(cmd + extractor_args(folder, sc_tmp, ff_tmp), wd, wd / f"{name}.log")
    os.replace(sc_tmp, sc)
    os.replace(ff_tmp, ff)
    return run, sc, ff


def bench_extractor(a) -> None:
    S, k = a.sentences, a.nbest
    folder = synth_set(a.out, S, k, a.seed)
    warm_cache(folder / "nbest.txt", folder / "ref.0")
    moses, m_sc, m_ff = run_extractor(moses_cmd(a.moses, "extractor"), folder, "moses")
    ours, p_sc, p_ff = run_extractor(mtplug_cmd("extractor"), folder, "mtplug")
    diff_sc, diff_ff = first_difference(m_sc, p_sc), first_difference(m_ff, p_ff)
    n = S * k
    record = {"bench": "ter-moses-extractor", "sentences": S, "nbest": k, "hypotheses": n,
              "seconds_moses": round(moses.seconds, 2), "seconds_mtplug": round(ours.seconds, 2),
              "ratio": round(moses.seconds / ours.seconds, 1), **_usage(moses, ours),
              "scores_identical": diff_sc is None, "features_identical": diff_ff is None}
    if diff_sc:
        record["scores_first_difference"] = dict(zip(("line", "moses", "mtplug"), diff_sc))
    if diff_ff:
        record["features_first_difference"] = dict(zip(("line", "moses", "mtplug"), diff_ff))
    if n < FULL_HYPOTHESES:
        # linear in the number of hypotheses: an estimate, not a measurement
        record["moses_seconds_extrapolated_to_2000x1000"] = round(moses.seconds * FULL_HYPOTHESES / n)
    same = "byte-identical" if diff_sc is None else f"DIFFER from line {diff_sc[0]}"
    emit(record, f"extractor TER on {S}x{k}: Moses {moses.seconds:.2f} s, mtplug {ours.seconds:.2f} s "
                 f"({moses.seconds / ours.seconds:.1f}x); scores.dat {same}, features.dat "
                 f"{'byte-identical' if diff_ff is None else 'differ'}")


# ------------------------------------------------------------------ moses-mert
def moses_data(a, folder: Path) -> tuple[Path, Path]:
    """Moses's extractor output for the set (written by moses-extractor, else made now)."""
    sc, ff = folder / "extract" / "moses.scores.dat", folder / "extract" / "moses.features.dat"
    if not (sc.exists() and ff.exists()):
        print("running Moses's extractor first (not part of the comparison) ...", file=sys.stderr, flush=True)
        run, sc, ff = run_extractor(moses_cmd(a.moses, "extractor"), folder, "moses")
        print(f"  done in {run.seconds:.1f} s", file=sys.stderr, flush=True)
    return sc, ff


def best_point(run: Run) -> float:
    found = BEST_POINT.findall(run.stderr)
    if not found:
        sys.exit("no 'Best point: ... => score' line in the program's log")
    return float(found[-1])


def one_minus_ter(corpus, weights: np.ndarray) -> float:
    """1 - TER (Moses's TER scorer, float32 as Moses computes it) of the 1-best under weights."""
    from mtplug.metrics.moses_error_rates import MosesTer

    return MosesTer().corpus_score(corpus.corpus_stats(corpus.one_best(weights)))


def run_mert(cmd: list[str], wd: Path, data_args: list[str], corpus) -> tuple[Run, float, float]:
    """(the run, its Best point score, 1 - TER of its weights.txt recomputed by mtplug)."""
    from mtplug.formats.mert_weights import read_weights_txt

    shutil.rmtree(wd, ignore_errors=True)    # a stale weights.txt must not be read
    run = run_timed(cmd + data_args, wd, wd / "mert.log")
    return run, best_point(run), one_minus_ter(corpus, read_weights_txt(wd / "weights.txt"))


def bench_mert(a) -> None:
    from mtplug.formats.mert_weights import read_init_opt
    from mtplug.integrations.moses.common import load_mert_data

    S, k = a.sentences, a.nbest
    folder = synth_set(a.out, S, k, a.seed)
    sc, ff = moses_data(a, folder)
    init = read_init_opt(folder / "init.opt")
    corpus = load_mert_data([str(ff)], [str(sc)], "TER")
    corpus.hyp_indptr = corpus.hyp_bytes = None
    start = one_minus_ter(corpus, init.start)
    warm_cache(sc, ff)
    for ntry, rseed, threads in itertools.product(a.ntry, a.rseed, a.threads):
        args = ["-d", str(len(init.start))] + SCORER_FLAGS + [
            "--ffile", str(ff), "--scfile", str(sc), "--ifile", str(folder / "init.opt"),
            "-n", str(ntry), "-r", str(rseed), "--threads", str(threads)]
        tag = f"n{ntry}-r{rseed}-T{threads}"
        moses, m_best, m_re = run_mert(moses_cmd(a.moses, "mert"), folder / f"mert-moses-{tag}", args, corpus)
        ours, p_best, p_re = run_mert(mtplug_cmd("mert"), folder / f"mert-mtplug-{tag}", args, corpus)
        ratio = moses.seconds / ours.seconds
        emit({"bench": "ter-moses-mert", "sentences": S, "nbest": k, "hypotheses": corpus.n_hypotheses,
              "ntry": ntry, "rseed": rseed, "threads": threads,
              "seconds_moses": round(moses.seconds, 2), "seconds_mtplug": round(ours.seconds, 2),
              "ratio": round(ratio, 1), **_usage(moses, ours), "start_one_minus_ter": round(start, 6),
              "best_point_moses": m_best, "best_point_mtplug": p_best,
              "recomputed_moses": round(m_re, 6), "recomputed_mtplug": round(p_re, 6),
              "ter_moses": round(1 - m_re, 6), "ter_mtplug": round(1 - p_re, 6),
              "mtplug_at_least_moses": p_re >= m_re},
             f"mert TER on {S}x{k}, -n {ntry} -r {rseed} -T {threads}: Moses {moses.seconds:.2f} s => {m_best} "
             f"(recomputed {m_re:.6f}), mtplug {ours.seconds:.2f} s => {p_best} (recomputed {p_re:.6f}); "
             f"{ratio:.1f}x (target >= 5, score >= Moses's)")


# ------------------------------------------------------------------ command line
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--sentences", type=int, default=200)
    common.add_argument("--seed", type=int, default=1, help="seed of the synthetic set")
    common.add_argument("--out", type=Path, default=HERE / "out" / "ter", help="where the sets and runs go")
    moses = argparse.ArgumentParser(add_help=False)
    moses.add_argument("--moses", type=Path, default=os.environ.get("MTPLUG_MOSES_DIR"),
                       help="Moses build folder with bin/extractor, bin/mert (default $MTPLUG_MOSES_DIR)")

    s = sub.add_parser("sacrebleu", parents=[common], help="mtplug's ter kernel vs sacrebleu's TER")
    s.add_argument("--nbest", type=int, default=100)
    s.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    s.add_argument("--repeat", type=int, default=3, help="mtplug's time is the best of this many calls")
    e = sub.add_parser("moses-extractor", parents=[common, moses], help="extractor --sctype TER, Moses vs mtplug")
    e.add_argument("--nbest", type=int, default=1000)
    m = sub.add_parser("moses-mert", parents=[common, moses], help="mert --sctype TER, Moses vs mtplug")
    m.add_argument("--nbest", type=int, default=1000)
    m.add_argument("--ntry", type=int, nargs="+", default=[1], help="mert -n values (random restarts)")
    m.add_argument("--threads", type=int, nargs="+", default=[1], help="mert --threads values, given to both")
    m.add_argument("--rseed", type=int, nargs="+", default=[1], help="mert -r values (random seeds)")
    a = ap.parse_args()
    if a.what != "sacrebleu":
        if a.moses is None:
            ap.error("give --moses DIR or set MTPLUG_MOSES_DIR")
        missing = [p for p in ("extractor", "mert") if not (a.moses / "bin" / p).exists()]
        if missing:
            ap.error(f"{a.moses}/bin lacks {', '.join(missing)}")
    a.out.mkdir(parents=True, exist_ok=True)
    {"sacrebleu": bench_sacrebleu, "moses-extractor": bench_extractor, "moses-mert": bench_mert}[a.what](a)


if __name__ == "__main__":
    main()
