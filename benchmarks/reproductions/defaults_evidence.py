#!/usr/bin/env python3
"""Every optimizer at its defaults on the real cdec pools, dense and sparse, with the
evidence of the synthetic set beside them (docs/reproductions/galley-2013.md, "Defaults").

    python benchmarks/reproductions/defaults_evidence.py --pools OUT/pools --w0 OUT/weights.w0 \\
        --out RESULTS [--seeds 1 2 3] [--tune-nbest 100] [--optimizers pro apro ...] [--set OPTION=VALUE ...]

The sparse pools are those of make_galley_pools.py; the dense ones are the same lists with
only the 12 dense features kept (``POOLS/{tune,dev,test}.dense.kbest``, written here when
missing). Every optimizer tunes from w0 on the tune pool (its first ``--tune-nbest``
hypotheses per sentence) with its defaults (MERT: one start point, so ``--seeds`` only
vary the others' sampling), and reranks the dev and test pools. ``--set pro.c_start=inf``
runs a changed option (the row is named with it). Rows go to ``RESULTS/defaults.jsonl``
(a finished row is not run again) and ``RESULTS/defaults.md`` (mean test BLEU ± sd).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent))

from galley_rerank import dense_names, read_weights, stores, vector  # noqa: E402

OPTIMIZERS = {"pro": {}, "apro": {}, "kbmira": {}, "mira": {}, "rampion": {},
              "mert": dict(restarts=0, directions="expbleu")}


def dense_pools(pools: Path) -> Path:
    """POOLS/dense/ with the k-best lists cut to the dense features (galley_rerank's
    dense_names; written once)."""
    out = pools / "dense"
    out.mkdir(exist_ok=True)
    keep = set(dense_names(pools))
    for name in ("tune", "dev", "test"):
        (out / f"{name}.en").write_bytes((pools / f"{name}.en").read_bytes())
        target = out / f"{name}.kbest"
        if target.exists():
            continue
        with open(pools / f"{name}.kbest") as f, open(target, "w") as o:
            for line in f:
                parts = line.rstrip("\n").split(" ||| ")
                parts[2] = " ".join(t for t in parts[2].split() if t.split("=", 1)[0] in keep)
                o.write(" ||| ".join(parts) + "\n")
    return out


def parse_set(items: list[str]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for item in items:
        key, _, value = item.partition("=")
        opt, _, name = key.partition(".")
        out.setdefault(opt, {})[name] = float(value) if value not in ("True", "False") else value == "True"
    return out


def main() -> None:
    import mtplug

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pools", required=True)
    ap.add_argument("--w0", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--tune-nbest", type=int, default=100)
    ap.add_argument("--optimizers", nargs="+", default=list(OPTIMIZERS), choices=list(OPTIMIZERS))
    ap.add_argument("--set", nargs="*", default=[], help="OPTIMIZER.option=value: a changed default")
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    rows_file = out / "defaults.jsonl"
    done = {}
    if rows_file.exists():
        for line in rows_file.read_text().splitlines():
            r = json.loads(line)
            done[(r["system"], r["name"], r["seed"])] = r
    changed = parse_set(a.set)
    w0 = read_weights(Path(a.w0))
    pools = Path(a.pools)
    for system, folder in (("sparse", pools), ("dense", dense_pools(pools))):
        data = stores(folder, out / "stores" / system, a.tune_nbest)
        tune = data["tune"]
        for opt in a.optimizers:
            options = {**OPTIMIZERS[opt], **changed.get(opt, {})}
            name = opt + "".join(f"+{k}={v:g}" if isinstance(v, float) else f"+{k}={v}"
                                 for k, v in changed.get(opt, {}).items())
            for seed in a.seeds:
                if (system, name, seed) in done:
                    continue
                t = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    res = mtplug.optimize(opt, tune, vector(tune, w0), seed, threads=a.threads, **options)
                tuned = dict(zip(res.feature_names, res.weights.tolist()))
                row = {"system": system, "name": name, "seed": seed, "seconds": round(time.perf_counter() - t, 2),
                       "tune": res.score / 100}    # a fraction beside dev and test (Result.score is 0-100)
                for part in ("dev", "test"):
                    corpus = data[part]
                    row[part] = corpus.bleu_of_rows(corpus.one_best(vector(corpus, tuned))).score
                with open(rows_file, "a") as fh:
                    fh.write(json.dumps(row) + "\n")
                done[(system, name, seed)] = row
                print(json.dumps(row), flush=True)
    lines = ["| system | optimizer | tune | dev | test (mean ± sd) | seconds |", "|---|---|---|---|---|---|"]
    for system in ("sparse", "dense"):
        for name in sorted({k[1] for k in done if k[0] == system}):
            rows = [r for k, r in done.items() if k[0] == system and k[1] == name]
            col = {f: np.array([r[f] for r in rows]) for f in ("tune", "dev", "test", "seconds")}
            sd = col["test"].std(ddof=1) * 100 if len(rows) > 1 else 0.0
            lines.append(f"| {system} | {name} | {col['tune'].mean() * 100:.2f} | {col['dev'].mean() * 100:.2f} | "
                         f"{col['test'].mean() * 100:.2f} ± {sd:.2f} ({len(rows)}) | {col['seconds'].mean():.1f} |")
    (out / "defaults.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
