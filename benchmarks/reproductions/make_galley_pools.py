#!/usr/bin/env python3
"""Fixed sparse-feature k-best pools for a reproduction of Galley et al. (2013), Tables 2-3.

    python benchmarks/reproductions/make_galley_pools.py --cdec /path/to/cdec/build \\
        --system DIR --out OUT [--k 500] [--jobs 2] [--iterations 8] [--nbest 100] [--optimizer mert]

The reranking protocol of the paper: the dense features are tuned with the decoder in the
loop (the "dense-tuned weights" w0), then the tuning, dev and test sets are decoded once
with the sparse features switched on (sparse weights 0) and the k-best lists are kept
fixed; the optimizers then rerank these pools only. The steps run here:

1. ``mtplug tune --decoder cdec --config SYSTEM/cdec.ini --weights SYSTEM/weights.start
   --input SYSTEM/tune.de --ref SYSTEM/tune.en ... --workdir OUT/dense-tune``; its final
   weights (``OUT/dense-tune/final``) are w0, copied to ``OUT/weights.w0``. A workdir that
   already holds the run is continued with ``--resume`` (a finished run is not re-run);
2. ``cdec -c SYSTEM/cdec-sparse.ini -w OUT/weights.w0 -k K -r`` on tune, dev and test, in
   ``--jobs`` processes on contiguous shards, concatenated in order with the sentence ids
   renumbered 0-based per set: ``OUT/pools/{tune,dev,test}.kbest``, next to copies of the
   references (``OUT/pools/{tune,dev,test}.en``). Sparse decoding takes hours, so a call
   with the weights of the last one (``OUT/pools/w0.decoded``) keeps the sets that call
   finished and continues a killed shard of ``<seg id>`` lines after its finished
   sentences;
3. ``OUT/pools/provenance.json``: every command, its wall time, k, the dense features (the
   names of SYSTEM/weights.start, ``dense_feature_names``), and per pool the number
   of sentences, hypotheses and distinct (sparse) features.

A system folder holds ``tune.de tune.en dev.de dev.en test.de test.en``, ``cdec.ini``,
``cdec-sparse.ini`` (cdec.ini plus the sparse feature functions) and ``weights.start``
(docs/real-systems.md, "cdec de-en, sparse"). Nothing of cdec is built or fetched here:
the script runs the programs of the build it is given (as benchmarks/real_systems.py).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

from mtplug.decoders.cdec import expected_ids

#: an input line cdec numbers itself (per-sentence grammars), as mtplug's expected_ids reads it
_SEG = re.compile(r'^\s*<seg\b[^>]*?\bid\s*=\s*["\']?(\d+)')

MTPLUG = [sys.executable, "-m", "mtplug"]
SETS = ("tune", "dev", "test")


def run(cmd: list[str], log: Path) -> float:
    """Run ``cmd`` (stdout+stderr to ``log``); its wall time. Raises on failure."""
    t0 = time.perf_counter()
    with open(log, "ab") as fh:
        fh.write(("$ " + shlex.join(cmd) + "\n").encode())
        fh.flush()
        p = subprocess.run(cmd, check=False, stdout=fh, stderr=subprocess.STDOUT)
    if p.returncode != 0:
        raise RuntimeError(f"exit {p.returncode}: {shlex.join(cmd)} (see {log})")
    return time.perf_counter() - t0


def finished_prefix(part_out: Path, ids: list[int]) -> int:
    """How many of a shard's sentences (their cdec ids ``ids``, in input order) a killed
    decoder finished in ``part_out``: cdec writes each sentence's k-best before the next
    one's, so the finished ones are a prefix, all but the last sentence present (its list
    may be cut short). The file is truncated to that prefix; 0 when it does not start as
    the shard does (another input, or nothing written)."""
    if not part_out.exists():
        return 0
    data = part_out.read_bytes()
    starts, seen = [], []        # byte offset where each sentence's lines begin, its id
    offset = 0
    for line in data.splitlines(keepends=True):
        if not line.endswith(b"\n"):
            break
        sid = int(line.split(b" ||| ", 1)[0])
        if not seen or seen[-1] != sid:
            starts.append(offset)
            seen.append(sid)
        offset += len(line)
    n = max(len(seen) - 1, 0)
    if seen[:n] != ids[:n]:
        n = 0
    with open(part_out, "r+b") as fh:
        fh.truncate(starts[n] if n < len(starts) else 0)
    return n


def kbest(cdec: list[str], src: Path, out: Path, jobs: int, log: Path,
          resume: bool = True) -> tuple[list[str], float]:
    """Unique k-best of ``src`` (``jobs`` processes on contiguous shards) into ``out``, the
    sentence ids renumbered to the 0-based input line (plain lines or ``<seg id="N" ...>``
    lines with per-sentence grammars); the shard commands and wall time. ``out`` appears
    only when every shard has finished. A shard of ``<seg id>`` lines whose decoder was
    killed is continued after the sentences it finished (:func:`finished_prefix`) when
    ``resume`` (the caller knows it decodes with the same weights); plain lines, which cdec
    numbers from 0 in each process, start again."""
    t0 = time.perf_counter()
    lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
    jobs = max(1, min(jobs, len(lines)))
    cut = [len(lines) * j // jobs for j in range(jobs + 1)]
    procs, cmds = [], []
    with contextlib.ExitStack() as files:
        for j in range(jobs):
            shard, part_out = lines[cut[j]:cut[j + 1]], Path(f"{out}.part{j}")
            explicit = resume and all(_SEG.match(x) for x in shard)
            done = finished_prefix(part_out, expected_ids(shard)) if explicit else 0
            part = out.with_name(f"{out.name}.part{j}.in")
            part.write_text("".join(shard[done:]), encoding="utf-8")
            cmds.append(shlex.join(cdec) + f" < {part} >> {part_out}"
                        + (f"  # continued after {done} finished sentences" if done else ""))
            with open(log, "ab") as fh:
                fh.write(("$ " + cmds[-1] + "\n").encode())
            stdin = files.enter_context(open(part, "rb"))
            stdout = files.enter_context(open(part_out, "ab" if done else "wb"))
            procs.append(subprocess.Popen(cdec, stdin=stdin, stdout=stdout, stderr=files.enter_context(open(log, "ab"))))
        failed = [p.wait() for p in procs]
    if any(failed):
        raise RuntimeError(f"cdec failed on {src} (see {log})")
    partial = out.with_name(out.name + ".tmp")
    with open(partial, "w", encoding="utf-8") as fh:
        for j in range(jobs):
            part_out = Path(f"{out}.part{j}")
            # cdec counts each process's lines from 0, or from a <seg id="N"> line's N
            position = {sid: cut[j] + i for i, sid in enumerate(expected_ids(lines[cut[j]:cut[j + 1]]))}
            for line in part_out.read_text(encoding="utf-8").splitlines(keepends=True):
                sid, rest = line.split(" ||| ", 1)
                fh.write(f"{position[int(sid)]} ||| {rest}")
    partial.replace(out)
    for j in range(jobs):
        Path(f"{out}.part{j}").unlink()
        out.with_name(f"{out.name}.part{j}.in").unlink()
    return cmds, time.perf_counter() - t0


def dense_feature_names(weights: Path) -> list[str]:
    """The system's dense features: the names of its start weights file, in its order."""
    return [line.split()[0] for line in weights.read_text().splitlines()
            if line.strip() and not line.startswith("#")]


def pool_stats(path: Path, n: int, dense_features: list[str]) -> dict:
    """Sentences, hypotheses and distinct features of a k-best file (checks the ids 0..n-1);
    ``dense_features``: the names counted as dense."""
    per, feats = {}, set()
    for line in path.read_text(encoding="utf-8").splitlines():
        sid, _, fv, _ = line.split(" ||| ")
        per[int(sid)] = per.get(int(sid), 0) + 1
        feats.update(x.rsplit("=", 1)[0] for x in fv.split())
    missing = sorted(set(range(n)) - set(per))
    if missing:
        raise RuntimeError(f"{path}: no k-best entries for sentence(s) {missing[:10]}")
    dense = feats & set(dense_features)
    return {"sentences": len(per), "hypotheses": sum(per.values()), "min_per_sentence": min(per.values()),
            "features": len(feats), "dense_features": len(dense), "sparse_features": len(feats - dense)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cdec", required=True, help="the cdec build folder (holding decoder/cdec)")
    p.add_argument("--system", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--k", type=int, default=500, help="k-best size of the pools (unique, -r)")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--iterations", type=int, default=8)
    p.add_argument("--nbest", type=int, default=100)
    p.add_argument("--optimizer", default="mert")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--nice", type=int, default=0, help="run the programs under nice -n N")
    p.add_argument("--mtplug", default=shlex.join(MTPLUG), help="the mtplug command")
    a = p.parse_args()

    system, out = Path(a.system).resolve(), Path(a.out).resolve()
    cdec = str(Path(a.cdec).resolve() / "decoder" / "cdec")
    nice = ["nice", "-n", str(a.nice)] if a.nice else []
    pools = out / "pools"
    pools.mkdir(parents=True, exist_ok=True)
    log = out / "make_galley_pools.log"
    record: dict = {"cdec": cdec, "system": str(system), "k": a.k, "unique": True, "jobs": a.jobs, "steps": [],
                    "dense_feature_names": dense_feature_names(system / "weights.start")}

    # 1. dense tuning: w0
    workdir = out / "dense-tune"
    tune = nice + shlex.split(a.mtplug) + [
        "tune", "--decoder", "cdec", "--decoder-bin", cdec, "--decoder-config", str(system / "cdec.ini"),
        "--weights", str(system / "weights.start"), "--input", str(system / "tune.de"),
        "--ref", str(system / "tune.en"), "--iterations", str(a.iterations), "--nbest-size", str(a.nbest),
        "--jobs", str(a.jobs), "--seed", str(a.seed), "--optimizer", a.optimizer, "--workdir", str(workdir)]
    resumed = (workdir / "state.json").exists()
    seconds = run(tune + (["--resume"] if resumed else []), log)
    w0 = out / "weights.w0"
    shutil.copyfile(workdir / "final", w0)
    state = json.loads((workdir / "state.json").read_text())
    record["steps"].append({"step": "dense tune", "command": shlex.join(tune), "resumed": resumed,
                            "seconds": round(seconds, 1), "w0": str(w0),
                            "tune_bleu_per_iteration": [h["bleu"] for h in state["history"]],
                            "stop": state.get("stop")})
    print(json.dumps(record["steps"][-1]), flush=True)

    # 2. the pools
    decoder = nice + [cdec, "-c", str(system / "cdec-sparse.ini"), "-w", str(w0), "-k", str(a.k), "-r"]
    # a set decoded by an earlier call with these weights is kept (provenance.json is
    # written after every set); a set whose decoder was killed is continued (kbest)
    provenance = pools / "provenance.json"
    earlier = json.loads(provenance.read_text()) if provenance.exists() else {}
    same = (pools / "w0.decoded").exists() and (pools / "w0.decoded").read_bytes() == w0.read_bytes()
    shutil.copyfile(w0, pools / "w0.decoded")     # the weights the pools' decoders run with
    record["pools"] = {}
    for name in SETS:
        src, ref = system / f"{name}.de", system / f"{name}.en"
        shutil.copyfile(ref, pools / f"{name}.en")
        if same and name in earlier.get("pools", {}) and (pools / f"{name}.kbest").exists():
            record["pools"][name] = earlier["pools"][name]
            continue
        cmds, seconds = kbest(decoder, src, pools / f"{name}.kbest", a.jobs, log, resume=same)
        n = len(src.read_text(encoding="utf-8").splitlines())
        stats = pool_stats(pools / f"{name}.kbest", n, record["dense_feature_names"])
        record["pools"][name] = {"kbest": str(pools / f"{name}.kbest"), "ref": str(pools / f"{name}.en"),
                                 "commands": cmds, "seconds": round(seconds, 1),
                                 "seconds_per_sentence": round(seconds / n, 3), **stats}
        print(json.dumps({name: {k: v for k, v in record["pools"][name].items() if k != "commands"}}), flush=True)
        provenance.write_text(json.dumps(record, indent=1) + "\n")
    provenance.write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
