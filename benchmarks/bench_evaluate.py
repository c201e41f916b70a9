"""mtplug evaluate against MultEval's eval, same files, same invocation.

    python benchmarks/bench_evaluate.py --multeval /path/to/multeval [--sentences 2000] [--replicas 3]
                                        [--systems 2] [--samples 10000] [--seed 1] [--out DIR]

MultEval is not built here: give the folder of a build whose ``multeval.sh eval`` runs
(METEOR is not needed; both programs score bleu, ter and length). The test set is made
here, seeded: references of 5-40 words from a Zipfian vocabulary and per replica a
corrupted copy (substitutions, deletions) at a system- and replica-specific rate. Both
programs run as subprocesses with the default 10,000 bootstrap samples and shuffles; the
script checks that the per-replica BLEU and Length agree to 6 decimals before it reports.

Prints one JSON line: seconds and peak memory of each (GNU time), and the ratio
MultEval / mtplug.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np


def make_set(folder: Path, sentences: int, systems: int, replicas: int, seed: int):
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(20000)])
    p = 1.0 / np.arange(1, len(vocab) + 1) ** 1.05
    p /= p.sum()
    refs = [" ".join(rng.choice(vocab, size=int(rng.integers(5, 41)), p=p)) for _ in range(sentences)]
    (folder / "ref").write_text("".join(r + "\n" for r in refs))
    out = []
    for s in range(systems):
        files = []
        for k in range(replicas):
            rate = 0.4 - 0.03 * s + 0.02 * k
            lines = []
            for r in refs:
                words = [str(rng.choice(vocab, p=p)) if rng.random() < rate else w for w in r.split()
                         if rng.random() > 0.05]
                lines.append(" ".join(words) or "x")
            path = folder / f"sys{s}.{k}"
            path.write_text("".join(line + "\n" for line in lines))
            files.append(str(path))
        out.append(files)
    return str(folder / "ref"), out


def timed(argv, cwd=None):
    """(seconds, peak MB, stdout, stderr) of argv under GNU time."""
    done = subprocess.run(["/usr/bin/time", "-f", "@@ %e %M", *argv], capture_output=True, text=True, cwd=cwd)
    if done.returncode:
        sys.exit(f"{argv[0]} failed: {done.stderr[-1500:]}")
    seconds, kb = re.findall(r"^@@ (\S+) (\S+)$", done.stderr, flags=re.M)[-1]
    return float(seconds), int(kb) / 1024, done.stdout, done.stderr


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--multeval", required=True, help="MultEval build folder (with multeval.sh)")
    ap.add_argument("--sentences", type=int, default=2000)
    ap.add_argument("--systems", type=int, default=2)
    ap.add_argument("--replicas", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", help="keep the test set here (default: a temporary folder)")
    args = ap.parse_args()
    folder = Path(args.out or tempfile.mkdtemp(prefix="bench-evaluate-"))
    folder.mkdir(parents=True, exist_ok=True)
    ref, systems = make_set(folder, args.sentences, args.systems, args.replicas, args.seed)

    multeval = [os.path.join(args.multeval, "multeval.sh"), "eval", "--refs", ref, "--metrics", "bleu", "ter",
                "length", "--verbosity", "1"]
    ours = [sys.executable, "-m", "mtplug", "evaluate", "-q", "--ref", ref, "--metric", "bleu", "ter", "length",
            "--json", "-"]
    for s, files in enumerate(systems):
        multeval += ["--hyps-baseline" if s == 0 else f"--hyps-sys{s}", *files]
        ours += ["--hyps-baseline" if s == 0 else f"--hyps-sys{s}", *files]
    m_sec, m_mb, _, m_err = timed(multeval)
    o_sec, o_mb, o_out, _ = timed(ours)

    report = json.loads(o_out)
    theirs = {(0 if sys_ == "baseline" else int(sys_.split()[1]), metric, int(k)): float(v) for sys_, metric, k, v in
              re.findall(r"^RESULT: (baseline|system \d+): (\w+): OptRun (\d+): (\S+)$", m_err, flags=re.M)}
    for s, system in enumerate(report["systems"]):
        for metric in ("BLEU", "Length"):
            for k, value in enumerate(system["scores"][metric]["replicas"]):
                if round(value, 6) != theirs[s, metric, k]:
                    sys.exit(f"{metric} of system {s} replica {k}: mtplug {value:.6f}, MultEval {theirs[s, metric, k]}")
    print(json.dumps({"sentences": args.sentences, "systems": args.systems, "replicas": args.replicas,
                      "multeval_s": m_sec, "multeval_mb": round(m_mb), "mtplug_s": o_sec, "mtplug_mb": round(o_mb),
                      "ratio": round(m_sec / o_sec, 2)}))


if __name__ == "__main__":
    main()
