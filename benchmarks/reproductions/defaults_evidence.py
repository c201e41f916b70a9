#!/usr/bin/env python3
"""Every optimizer at its defaults on the real cdec pools, dense and sparse, beside the
defaults they replaced: the evidence behind mtplug's defaults (docs/reproductions/
galley-2013.md, "Defaults"). A default must not end lower on the tuning store than the one
it replaces.

    python benchmarks/reproductions/defaults_evidence.py --pools OUT/pools --w0 OUT/weights.w0 \\
        --out RESULTS [--seeds 1 2 3] [--tune-nbest 100] [--optimizers pro apro ...] \\
        [--set OPTIMIZER.OPTION=VALUE ...] [--results results/NAME.json]

The sparse pools are those of make_galley_pools.py; the dense ones are the same lists with
only the dense features kept (``POOLS/dense/``, written here when missing). Every
optimizer tunes from w0 on the tune pool (its first ``--tune-nbest`` hypotheses per
sentence) with its defaults and reranks the dev and test pools; each seed is an
independent run (a deterministic optimizer's seeds would be one run, so it runs with the first seed
only: APRO, RAMPION, and MERT as run here, with expected-BLEU directions and no random
restarts, which draws nothing). ``--set pro.c_start=inf`` runs a changed option
instead of the default, the row named with it (``pro+c_start=inf``); a value that is not a
number or True/False is a word (``mira.start_scale=given``). Rows go to
``RESULTS/defaults.jsonl`` (a finished row is not run again); ``--results`` writes every
row of that file as a results file (BLEU on 0-100), which ``table(NAME)`` shows on the
page with each variant's tuning-store BLEU against its optimizer's default.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
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
    """``OPTIMIZER.OPTION=VALUE`` items as {optimizer: {option: value}}: a number as a float,
    True/False as a bool, anything else as the word."""
    out: dict[str, dict] = {}
    for item in items:
        key, _, text = item.partition("=")
        opt, _, name = key.partition(".")
        value: object = text == "True" if text in ("True", "False") else text
        try:
            value = float(text)
        except ValueError:
            pass
        out.setdefault(opt, {})[name] = value
    return out


def deterministic(optimizer: str, options: dict) -> bool:
    """Whether the optimizer's result does not depend on the seed with these options (one
    run per system and setting): APRO and RAMPION always; MERT when it draws nothing (no
    random restarts, no random walks, expected-BLEU directions)."""
    if optimizer in ("apro", "rampion"):
        return True
    return optimizer == "mert" and options.get("restarts") == 0 and not options.get("random_walks") \
        and options.get("directions") == "expbleu"


#: the "+" before each OPTION=VALUE of a row name (a value may hold "+": bleu+1)
_PARTS = re.compile(r"\+(?=\w+=)")


def row_options(name: str) -> tuple[str, dict]:
    """(optimizer, options) of a row name: OPTIMIZER or OPTIMIZER+OPTION=VALUE+..."""
    optimizer, *changes = _PARTS.split(name)
    return optimizer, {**OPTIMIZERS[optimizer], **parse_set([f"{optimizer}.{c}" for c in changes]).get(optimizer, {})}


def results(rows: list[dict], a, pools: Path) -> dict:
    """The rows of defaults.jsonl as a results file: per system and row name (an optimizer
    at its defaults, or with ``+OPTION=VALUE`` changes) its independent runs, BLEU on 0-100."""
    commit = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"], check=False,
                            capture_output=True, text=True).stdout.strip()
    provenance = pools / "provenance.json"
    systems: dict = {}
    for r in rows:
        optimizer, options = row_options(r["name"])
        if deterministic(optimizer, options) and r["seed"] != a.seeds[0]:
            continue     # a copy of the first seed's run, from a call before it was known as one
        entry = systems.setdefault(r["system"], {"methods": {}})["methods"].setdefault(
            r["name"], {"optimizer": optimizer, "changed": _PARTS.split(r["name"])[1:], "runs": []})
        entry["runs"].append({"seed": r["seed"], "seconds": r["seconds"],
                              **{k: round(100 * r[k], 4) for k in ("tune", "dev", "test")}})
    return {"script": Path(sys.argv[0]).name, "commit": commit, "date": time.strftime("%Y-%m-%d"),
            "tune_nbest": a.tune_nbest, "seeds": a.seeds,
            "pools": json.loads(provenance.read_text()) if provenance.exists() else None, "systems": systems}


def table(name: str) -> str:
    """results/NAME.json as the page shows it (benchmarks/generated_tables.py): per system,
    each optimizer's default and the variants run beside it, with their tuning-store BLEU,
    the variant's difference from the default there (the rule: a default must not end
    lower than the one it replaces), and dev and test BLEU."""
    from galley_rerank import not_run_yet

    path = HERE / "results" / f"{name}.json"
    if not path.exists():
        return not_run_yet(name)
    study = json.loads(path.read_text())
    return (f"*{name}: commit {study['commit']}, {study['date']}; tune pool's first {study['tune_nbest']} "
            f"hypotheses; seeds {', '.join(map(str, study['seeds']))} (a deterministic optimizer once).*\n\n"
            + render(study))


def render(study: dict) -> str:
    """The table of a results file's rows (:func:`table`; RESULTS/defaults.md)."""
    from galley_rerank import mean_sd

    lines = [("| system | optimizer | runs | tuning-store BLEU | default − this on the tuning store | dev BLEU "
             "| test BLEU (mean ± sd) | seconds |"), "|---|---|---|---|---|---|---|---|"]
    for system, entry in sorted(study["systems"].items()):
        methods = entry["methods"]
        for row_name, m in sorted(methods.items(), key=lambda kv: (kv[1]["optimizer"], kv[0])):
            runs = m["runs"]
            tune = float(np.mean([r["tune"] for r in runs]))
            default = methods.get(m["optimizer"])
            gap = "–" if not m["changed"] or default is None else \
                f"{np.mean([r['tune'] for r in default['runs']]) - tune:+.2f}"
            lines.append(f"| {system} | {row_name} | {len(runs)} | {tune:.2f} | {gap} | "
                         f"{np.mean([r['dev'] for r in runs]):.2f} | {mean_sd([r['test'] for r in runs])} | "
                         f"{np.mean([r['seconds'] for r in runs]):.1f} |")
    return "\n".join(lines) + "\n"


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
    ap.add_argument("--results", help="write every row of RESULTS/defaults.jsonl as a results file, e.g. "
                                      "benchmarks/reproductions/results/defaults-k100-draw1.json")
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
            for seed in a.seeds[:1] if deterministic(opt, options) else a.seeds:
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
    study = results(list(done.values()), a, pools)
    (out / "defaults.md").write_text(render(study))
    print(render(study))
    if a.results:
        path = Path(a.results)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(study, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
