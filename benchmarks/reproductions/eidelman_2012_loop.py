#!/usr/bin/env python3
"""Eidelman (2012) with the decoder in the loop: online MIRA that decodes every sentence
with the current weights (``mtplug dtrain --update mira``), each hope/fear selection
over seeds (docs/reproductions/eidelman-2012.md, "In the decoder loop").

    python benchmarks/reproductions/eidelman_2012_loop.py --system SYSTEM --cdec CDEC_BUILD \\
        --out RESULTS [--selections hope/fear lu/mc lu/fear lu/pb hope/mc hope/pb] [--seeds 1 2 3] \\
        [--shards 1 2] [--epochs 5] [--nbest 100] [--minibatch 1] [--jobs 2] [--results results/NAME.json]

SYSTEM is a cdec system folder as benchmarks/real_systems.py reads it (cdec.ini, dev.de,
dev.en, test.de, test.en, weights.start). Every selection runs once per seed and per
``--shards`` value (more than 1: iterative parameter mixing over that many shards, as
cdec's mira.py -j; the run's name ends in ``-mixN``): dtrain
shuffles the tuning sentences with the seed (``--randomize``), decodes them one
``--minibatch`` at a time with the current weights (1: Eidelman's per-sentence decoding),
scores the k-best lists with ``--scorer`` (default ``pseudo_doc``: the pseudo-document BLEU
scaled by source length of cdec's MIRA, Chiang et al. 2008), takes one PA-I step per
sentence (C = ``--mira-c``, default 0.01), averages the weights over the steps and keeps
the epoch whose 1-best lists scored best (``select_weights=best``). The chosen weights are decoded on dev and test
by the same cdec; BLEU is mtplug's. Each epoch's corpus BLEU of the 1-best lists is kept
(``prediction_bleu_per_epoch`` in runs.jsonl, a name kept from earlier runs: it is the model
best's BLEU on the tuning set per iteration, the line of the paper's Figures 1-6, not the
BLEU of the fear rows, which dtrain does not log). Rows go to ``RESULTS/runs.jsonl`` (a finished
run is not run again); ``RESULTS/evaluate.txt`` and ``.json`` (``--report``) are ``mtplug evaluate`` of
the test outputs against the first selection with the first ``--shards`` value, each
configuration's runs paired by seed. ``--results`` writes the committed results file the
claims of docs/reproductions/eidelman-2012.md name (claims.py's schema): the settings, the
commit, every run (its seed, test and dev BLEU, ``one_best_bleu_per_epoch``) and each
configuration's comparison with the baseline, under the method names of the fixed-pool
study (``mira-HOPE-FEAR``, ``-mixN``) and the system name ``--system-name``. A second call
on the same RESULTS with other ``--selections`` (e.g. LU/MC first) runs nothing again and
compares the same runs with another baseline.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_systems import Cdec, bleu

NAMES = {"hope": "M-C", "lu": "LU", "fear": "M+C", "mc": "MC", "pb": "PB"}
EPOCH_BLEU = re.compile(r"^epoch (\d+)/\d+: .*corpus BLEU of the 1-bests ([0-9.]+)", re.MULTILINE)
EPOCH_SECONDS = re.compile(r"^epoch \d+/\d+: .*; ([0-9.]+) s \(([0-9.]+) s decoding\)$", re.MULTILINE)


def decoder_share(log: Path) -> float | None:
    """The fraction of a dtrain run's epoch seconds spent in the decoder's calls, from its
    log (None for a log written before dtrain reported it)."""
    found = EPOCH_SECONDS.findall(log.read_text()) if log.exists() else []
    total = sum(float(t) for t, _ in found)
    return round(sum(float(d) for _, d in found) / total, 4) if found and total > 0 else None


def label(selection: str, shards: int = 1) -> str:
    hope, fear = selection.split("/")
    return f"{NAMES[hope]}/{NAMES[fear]}" + (f", {shards} shards mixed" if shards > 1 else "")


def config_name(selection: str, shards: int) -> str:
    """The run name's stem: hope-fear, with -mixN for N > 1 shards."""
    return selection.replace("/", "-") + (f"-mix{shards}" if shards > 1 else "")


def method_name(selection: str, shards: int = 1) -> str:
    """The configuration's name in the results file, as the fixed-pool study names it."""
    return "mira-" + config_name(selection, shards)


def run_one(a, system: Cdec, selection: str, shards: int, seed: int, out: Path) -> dict:
    hope, fear = selection.split("/")
    name = f"{config_name(selection, shards)}+seed={seed}"
    wd = out / name
    wd.mkdir(parents=True, exist_ok=True)
    log = wd / "dtrain.log"
    cmd = [sys.executable, "-m", "mtplug", "dtrain", "--update", "mira", "--mira-hope", hope, "--mira-fear", fear,
           "--decoder-bin", str(system.cdec), "--decoder-config", str(system.config),
           "--input", str(system.src), "--ref", str(system.ref), "--weights", str(system.start),
           "--epochs", str(a.epochs), "--nbest-size", str(a.nbest), "--sentence-metric", a.scorer, "--mira-c", str(a.mira_c),
           "--minibatch", str(a.minibatch), "--randomize", "--seed", str(seed), "--select-weights", "best",
           "--shards", str(shards), "--decoder-process", a.decoder_process,
           "--output", str(wd / "weights")]
    t0 = time.perf_counter()
    with open(log, "w") as fh:
        fh.write("$ " + " ".join(cmd) + "\n")
        fh.flush()
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=fh, check=False)
    seconds = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{name}: mtplug dtrain exit {p.returncode} (see {log})")
    row = {"run": name, "selection": label(selection, shards), "seed": seed, "seconds": round(seconds, 1),
           "scorer": a.scorer, "mira_c": a.mira_c, "shards": shards, "epochs": a.epochs,
           "minibatch": a.minibatch, "nbest": a.nbest,
           "prediction_bleu_per_epoch": [float(b) for _, b in EPOCH_BLEU.findall(log.read_text())]}
    for part, src, ref in (("dev", system.src, system.ref), ("test", system.test_src, system.test_ref)):
        hyp = wd / f"final.{part}.hyp"
        system.decode(wd / "weights", src, hyp, log)
        row[f"{part}_bleu"] = round(bleu(hyp, ref) * 100, 2)
    return row


def evaluate(a, out: Path, rows: list[dict], test_ref: Path) -> dict | None:
    """``mtplug evaluate`` of every configuration against the first (``--report``); the JSON
    report, or None while some configuration lacks a seed's run."""
    by: dict[str, list[Path]] = {}
    labels: dict[str, str] = {}
    for r in sorted(rows, key=lambda r: r["seed"]):
        stem = r["run"].split("+")[0]
        by.setdefault(stem, []).append(out / r["run"] / "final.test.hyp")
        labels[stem] = r["selection"]
    first = config_name(a.selections[0], a.shards[0])
    if len({len(v) for v in by.values()}) != 1:
        print("not every selection has the same replicas yet: no evaluate", flush=True)
        return None
    cmd = [sys.executable, "-m", "mtplug", "evaluate", "-q", "--ref", str(test_ref), "--metric", "bleu", "length",
           "--hyps-baseline", *map(str, by[first]), "--json", str(out / f"{a.report}.json")]
    for name, files in by.items():
        if name != first:
            cmd += [f"--hyps-{name}", *map(str, files)]
    text = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    names = ", ".join(f"{n} = {labels[n]}" for n in by)
    (out / f"{a.report}.txt").write_text(f"baseline: {first} ({names})\n{text}")
    print(f"baseline: {first} ({names})\n{text}", flush=True)
    return json.loads((out / f"{a.report}.json").read_text())


def summary(a, rows: list[dict], report: dict, system: Cdec) -> dict:
    """The results file (``--results``): what ran, every run, each comparison with the baseline."""
    commit = subprocess.run(["git", "-C", str(Path(__file__).resolve().parent), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True, check=False).stdout.strip()
    scores = {s["name"]: s["scores"]["bleu"] for s in report["systems"]}
    first = config_name(a.selections[0], a.shards[0])
    methods: dict[str, dict] = {}
    for selection in a.selections:
        for shards in a.shards:
            stem = config_name(selection, shards)
            runs = sorted((r for r in rows if r["run"].split("+")[0] == stem), key=lambda r: r["seed"])
            hope, fear = selection.split("/")
            entry = {"optimizer": "mtplug dtrain --update mira", "seeded": True, "selection": label(selection, shards),
                     "options": {"hope": hope, "fear": fear, "shards": shards},
                     "runs": [{"seed": r["seed"], "test": r["test_bleu"], "dev": r["dev_bleu"],
                               "seconds": r["seconds"], "one_best_bleu_per_epoch": r["prediction_bleu_per_epoch"],
                               "decoder_share": decoder_share(Path(a.out) / r["run"] / "dtrain.log")}
                              for r in runs]}
            if stem != first:
                c = scores[stem]
                entry["compared"] = {"p": c["p"], "replicas": len(runs), "per_point": False,
                                     "baseline_mean": scores["baseline"]["mean"], "mean": c["mean"],
                                     "s_sel": c["s_sel"]}
            methods[method_name(selection, shards)] = entry
    return {"script": Path(__file__).name, "commit": commit, "date": time.strftime("%Y-%m-%d"),
            "system": str(system.sys), "cdec": str(system.cdec), "seeds": a.seeds,
            "settings": {"epochs": a.epochs, "nbest": a.nbest, "minibatch": a.minibatch, "scorer": a.scorer,
                         "mira_c": a.mira_c, "select_weights": "best", "randomize": True},
            "baseline": method_name(a.selections[0], a.shards[0]),
            "systems": {a.system_name: {"methods": methods}}}


RESULTS = Path(__file__).resolve().parent / "results"


def _share(runs: list[dict]) -> str:
    shares = [r.get("decoder_share") for r in runs]
    known = [x for x in shares if x is not None]
    return f"{100 * sum(known) / len(known):.1f}% ({len(known)} of {len(runs)} runs)" if known else "–"


def table(name: str) -> str:
    """results/NAME.json (a loop results file) as the page shows it
    (benchmarks/generated_tables.py): per configuration its runs' test and tuning-set BLEU,
    p against the file's baseline, the mean 1-best BLEU of the tuning set after each
    epoch (the line of the paper's figures), the largest fall of a run's curve
    between two consecutive epochs (claims.py's fall), and where the time went (the
    decoder's share of the epochs' seconds, for runs whose dtrain logged it)."""
    import numpy as np
    from claims import falls
    from galley_rerank import mean_sd, not_run_yet

    path = RESULTS / f"{name}.json"
    if not path.exists():
        return not_run_yet(name)
    study = json.loads(path.read_text())
    settings = study["settings"]
    head = (f"*{name}: commit {study['commit']}, {study['date']}; seeds {', '.join(map(str, study['seeds']))}; "
            f"{settings['epochs']} epochs, {settings['nbest']}-best, C = {settings['mira_c']}, {settings['scorer']}.*")
    columns = ["configuration", "runs", "test BLEU (mean ± sd)", "tuning-set BLEU", f"p vs {study['baseline']}",
               "tuning-set 1-best BLEU after each epoch (mean)", "largest fall between epochs (mean ± sd)",
               "seconds a run", "decoder's share of the epochs"]
    lines = [head, "", "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for system in study["systems"].values():
        for method, m in sorted(system["methods"].items()):
            runs = m["runs"]
            curve = np.mean([r["one_best_bleu_per_epoch"] for r in runs], axis=0)
            c = m.get("compared")
            cells = [f"{method} ({m['selection']})", str(len(runs)), mean_sd([r["test"] for r in runs]),
                     f"{np.mean([r['dev'] for r in runs]):.2f}",
                     "–" if c is None else f"{c['p']:.2f} ({c['replicas']} paired)",
                     ", ".join(f"{x:.2f}" for x in curve), mean_sd(falls(runs)),
                     f"{np.mean([r['seconds'] for r in runs]):.0f}", _share(runs)]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--system", required=True)
    ap.add_argument("--cdec", required=True, help="the cdec build folder")
    ap.add_argument("--out", required=True)
    ap.add_argument("--selections", nargs="+",
                    default=["hope/fear", "lu/mc", "lu/fear", "lu/pb", "hope/mc", "hope/pb"], help="hope/fear pairs: hope|lu / fear|mc|pb (the first is evaluate's baseline)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--nbest", type=int, default=100)
    ap.add_argument("--minibatch", type=int, default=1)
    ap.add_argument("--scorer", default="pseudo_doc", help="dtrain's sentence scorer (default pseudo_doc)")
    ap.add_argument("--mira-c", type=float, default=0.01, help="the PA-I step cap C (default 0.01)")
    ap.add_argument("--shards", type=int, nargs="+", default=[1],
                    help="parameter mixing over this many shards, one run set per value (default 1; "
                         "cdec's mira.py -j 2 runs 2)")
    ap.add_argument("--jobs", type=int, default=2, help="decoder processes for the dev and test decoding")
    ap.add_argument("--decoder-process", choices=("per_call", "persistent"), default="per_call",
                    help="dtrain's decoder: a cdec process per sentence (per_call, the default: the runs of "
                         "the committed results were made so, and a persistent cdec can order tied "
                         "hypotheses otherwise) or one per shard (persistent)")
    ap.add_argument("--tune-set", default="dev", metavar="STEM",
                    help="the tuning set's files in SYSTEM: STEM.de, STEM.en (default dev)")
    ap.add_argument("--report", default="evaluate",
                    help="file stem of the evaluate report in RESULTS (default evaluate: evaluate.txt, .json)")
    ap.add_argument("--results", help="the results file to write (claims.py's schema), e.g. "
                                      "benchmarks/reproductions/results/eidelman-2012-loop-draw1.json")
    ap.add_argument("--system-name", default="dense",
                    help="the system's name in the results file (default dense: System B's 12 features)")
    a = ap.parse_args()
    for s in a.selections:
        hope, _, fear = s.partition("/")
        if hope not in ("hope", "lu") or fear not in ("fear", "mc", "pb"):
            ap.error(f"--selections: {s!r} is not hope|lu/fear|mc|pb")
    system = Cdec(argparse.Namespace(system=a.system, cdec=a.cdec, config="cdec.ini", start=None, jobs=a.jobs,
                                     tune_set=a.tune_set))
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    rows_file = out / "runs.jsonl"
    rows = [json.loads(x) for x in rows_file.read_text().splitlines()] if rows_file.exists() else []
    done = {r["run"] for r in rows}
    if any(n < 1 for n in a.shards):
        ap.error("--shards: every value must be >= 1")
    for seed in a.seeds:
        for shards in a.shards:
            for selection in a.selections:
                if f"{config_name(selection, shards)}+seed={seed}" in done:
                    continue
                row = run_one(a, system, selection, shards, seed, out)
                rows.append(row)
                with open(rows_file, "a") as fh:
                    fh.write(json.dumps(row) + "\n")
                print(json.dumps(row), flush=True)
    wanted = {config_name(s, n) for s in a.selections for n in a.shards}
    chosen = [r for r in rows if r["run"].split("+")[0] in wanted and r["seed"] in a.seeds]
    report = evaluate(a, out, chosen, system.test_ref)
    if a.results and report is not None:
        results = Path(a.results)
        results.parent.mkdir(parents=True, exist_ok=True)
        results.write_text(json.dumps(summary(a, chosen, report, system), indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
