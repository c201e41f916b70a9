#!/usr/bin/env python3
"""The start's scale of MIRA, kbmira and RAMPION (``start_scale``, issue 53): the evidence
behind the default, on Hopkins & May's synthetic set and in the decoder loop.

    python benchmarks/start_scale.py synthetic [--dims 10 100] [--noise 0 200] [--seeds 0 1 2]
    python benchmarks/start_scale.py loop --system SYSTEM --cdec CDEC_BUILD --work WORK \\
        [--optimizers kbmira mira rampion] [--scales given best] [--replicas 3] [--iterations 8]
    python benchmarks/start_scale.py report --system SYSTEM --work WORK [--name NAME]
    python benchmarks/start_scale.py pool --store RUN/iterNNN/store.npz --start WEIGHTS --name NAME [--rounds 4]
    python benchmarks/start_scale.py table synthetic|loop-NAME|margins-NAME|pool-NAME

``synthetic`` runs each learner from uniform weights (all 1, as Galley et al.'s Figures 2
and 3) on sets of mtplug.synthetic.make_synthetic (--sentences x --nbest, D features) with
every ``start_scale``: pseudo-BLEU of the 1-best (0-100), cosine to the gold weights, which
start the default kept. ``loop`` runs ``mtplug tune`` with the real cdec on SYSTEM (a
folder of benchmarks/real_systems.py) through real_systems.py, one run per optimizer,
scale and replica: MIRA's and kbmira's replicas are seeds 1..R from SYSTEM/weights.start;
RAMPION is deterministic, so its replicas are start points (point 0 = weights.start,
points 1..R-1 drawn from N(w, (w/2)^2) as Gimpel & Smith's initializers, pool_study's
``start_points``). ``report`` reads those runs: every iteration's start margin and the
start each run kept (``iterNNN/weights.json``'s optimizer_info), each run's held-out test
BLEU (real_systems.py decodes the final weights), and ``mtplug evaluate`` of each
optimizer's scales against ``given`` (the code before issue 36) over the replicas.
``pool`` is the tuning loop without the decoder on a real store (one a loop run left,
e.g. its last ``store.npz``): each learner from START, then from its own result, for
--rounds rounds, under every scale: the start's margin and the store objective (tuning
BLEU of the 1-best) per round, seed 1.

Results go to ``benchmarks/results/start-scale.json`` (committed); ``table`` prints the
Markdown tables that docs/mira.md and docs/real-systems.md hold between
``<!-- generated: benchmarks/start_scale.py NAME -->`` markers
(benchmarks/generated_tables.py rewrites them; tests/test_generated_tables.py checks them).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _common import read_results, write_results  # noqa: E402

RESULTS = HERE / "results" / "start-scale.json"
LEARNERS = ("mira", "kbmira", "rampion")
SCALES = ("given", "unit", "best")
#: what each scale was in mtplug's history (the tables' wording)
SCALE_NAMES = {"given": "given (before issue 36)", "unit": "unit (issue 36)", "best": "best (the default)"}


def load() -> dict:
    return read_results(RESULTS)


def save(results: dict) -> None:
    write_results(RESULTS, results)


# ---------------------------------------------------------------------------------------- synthetic
def synthetic(a) -> None:
    from mtplug.optimizers.registry import get_optimizer
    from mtplug.synthetic import cosine, make_synthetic

    results = load()
    rows = results.setdefault("synthetic", {"sentences": a.sentences, "nbest": a.nbest, "rows": []})
    if (rows["sentences"], rows["nbest"]) != (a.sentences, a.nbest):
        raise SystemExit(f"{RESULTS} holds rows of {rows['sentences']} x {rows['nbest']}; keep the set size")
    done = {(r["dims"], r["noise"], r["seed"], r["learner"], r["scale"]) for r in rows["rows"]}
    for dims in a.dims:
        for noise in a.noise:
            for seed in a.seeds:
                corpus, w_star = make_synthetic(a.sentences, a.nbest, dims, noise=noise, seed=seed)
                for learner in LEARNERS:
                    for scale in SCALES:
                        if (dims, noise, seed, learner, scale) in done:
                            continue
                        t = time.perf_counter()
                        res = get_optimizer(learner)(start_scale=scale).optimize(corpus, np.ones(dims), seed,
                                                                                 threads=a.threads)
                        rows["rows"].append({
                            "dims": dims, "noise": noise, "seed": seed, "learner": learner, "scale": scale,
                            "pseudo_bleu": round(res.score, 4), "cosine": round(cosine(res.weights, w_star), 4),
                            "start_margin": round(res.info["start_margin"], 2), "start_used": res.info["start_used"],
                            "seconds": round(time.perf_counter() - t, 2)})
                        save(results)
                        print(json.dumps(rows["rows"][-1]), flush=True)


def synthetic_table(results: dict) -> str:
    rows = results["synthetic"]["rows"]
    keys = sorted({(r["noise"], r["dims"]) for r in rows})
    head = ["noise", "D"] + [f"{learner}: {scale}" for learner in LEARNERS for scale in SCALES]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for noise, dims in keys:
        cells = [f"{noise:g}", str(dims)]
        for learner in LEARNERS:
            for scale in SCALES:
                sel = [r for r in rows if (r["noise"], r["dims"], r["learner"], r["scale"]) == (noise, dims, learner,
                                                                                                scale)]
                cos, pb = np.mean([r["cosine"] for r in sel]), np.mean([r["pseudo_bleu"] for r in sel])
                kept = "" if scale != "best" else " (" + "/".join(r["start_used"][0] for r in sel) + ")"
                cells.append(f"{cos:.4f} / {pb:.2f}{kept}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------- pool
def pool(a) -> None:
    import mtplug
    from mtplug.corpus import NbestCorpus

    store = NbestCorpus.load(a.store)
    rows = []
    for learner in LEARNERS:
        for scale in SCALES:
            w = a.start
            for r in range(1, a.rounds + 1):
                res = mtplug.optimize(learner, store, w, 1, threads=a.threads, start_scale=scale)
                rows.append({"learner": learner, "scale": scale, "round": r,
                             "start_margin": round(res.info["start_margin"], 3), "start_used": res.info["start_used"],
                             "tuning_bleu": round(res.score, 4)})
                print(json.dumps(rows[-1]), flush=True)
                w = res
    results = load()
    results.setdefault("pool", {})[a.name] = {"store": a.store, "hypotheses": store.n_hypotheses,
                                              "sentences": store.n_sentences, "rounds": a.rounds, "rows": rows}
    save(results)
    print(pool_table(results, a.name))


def pool_table(results: dict, name: str) -> str:
    study = results["pool"][name]
    rounds = range(1, study["rounds"] + 1)
    lines = ["| optimizer | start_scale | " + " | ".join(f"round {r}: margin / tuning BLEU" for r in rounds) + " |",
             "|---|---|" + "---|" * len(rounds)]
    for learner in LEARNERS:
        for scale in SCALES:
            sel = {r["round"]: r for r in study["rows"] if (r["learner"], r["scale"]) == (learner, scale)}
            cells = [f"{sel[r]['start_margin']:.2f} / {sel[r]['tuning_bleu']:.2f}"
                     + (f" ({sel[r]['start_used']})" if scale == "best" else "")
                     for r in rounds]
            lines.append(f"| {learner} | {SCALE_NAMES[scale]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------- loop
def run_name(learner: str, scale: str, replica: int) -> str:
    """real_systems.py's run name: options after '+' become tune flags."""
    if learner == "rampion":    # deterministic: the replica is a start point
        return f"mtplug-rampion+start-scale={scale}" + (f"+weights=POINT{replica}" if replica else "")
    return f"mtplug-{learner}+start-scale={scale}+seed={replica + 1}"


def points(system: Path, work: Path, n: int) -> dict[int, str]:
    """Start points 1..n-1 as cdec weights files WORK/pointP.weights (point 0 is
    weights.start); their names relative to WORK, where real_systems.py runs tune (a run
    name holds no '/')."""
    from pool_study import start_points  # noqa: E402  (benchmarks/reproductions)

    start = {}
    for line in (system / "weights.start").read_text().split("\n"):
        if line.strip() and not line.startswith("#"):
            name, value = line.split()
            start[name] = float(value)
    out = {}
    work.mkdir(parents=True, exist_ok=True)
    for p, w in enumerate(start_points(start, n - 1)):
        if p:
            out[p] = f"point{p}.weights"
            (work / out[p]).write_text("".join(f"{k} {v!r}\n" for k, v in w.items()))
    return out


def loop(a) -> None:
    sys.path.insert(0, str(HERE / "reproductions"))
    system, work = Path(a.system).resolve(), Path(a.work).resolve()
    starts = points(system, work, a.replicas)
    names = []
    for r in range(a.replicas):      # replica by replica, so that a partial study is balanced
        for learner in a.optimizers:
            for scale in a.scales:
                name = run_name(learner, scale, r)
                names.append(name.replace(f"POINT{r}", starts[r]) if r and learner == "rampion" else name)
    cmd = [sys.executable, str(HERE / "real_systems.py"), "cdec", "--system", str(system), "--cdec", a.cdec,
           "--out", str(work), "--iterations", str(a.iterations), "--nbest", str(a.nbest), "--jobs", str(a.jobs),
           "--runs", ",".join(names)]
    subprocess.run(cmd, check=True)


def report(a) -> None:
    system, work = Path(a.system).resolve(), Path(a.work).resolve()
    records = {}
    for line in (work / "results.jsonl").read_text().splitlines():
        r = json.loads(line)
        records[r["run"]] = r
    study: dict = {"system": str(system.name), "runs": {}, "evaluate": {}}
    groups: dict[tuple[str, str], list[str]] = {}
    for name, r in records.items():
        base, *opts = name.split("+")
        learner = base.removeprefix("mtplug-")
        options = dict(o.partition("=")[::2] for o in opts)
        if "error" in r or learner not in LEARNERS or "start-scale" not in options:
            continue
        scale = options["start-scale"]
        replica = (int(options["seed"]) - 1 if "seed" in options else
                   int(Path(options["weights"]).stem.removeprefix("point")) if "weights" in options else 0)
        its = sorted((work / name).glob("iter*/weights.json"))
        info = [json.loads(p.read_text()).get("optimizer_info", {}) for p in its]
        study["runs"][name] = {
            "learner": learner, "scale": scale, "replica": replica, "test_bleu": round(100 * r["test_bleu"], 2),
            "dev_bleu": round(100 * r["dev_bleu"], 2), "decoded_bleu": [round(100 * b, 2) for b in r["history"]],
            "start_margin": [round(i["start_margin"], 3) if "start_margin" in i else None for i in info],
            "start_used": [i.get("start_used") for i in info],
            "score_from_given": [i.get("score_from_given") for i in info],
            "score_from_shrunk": [i.get("score_from_shrunk") for i in info]}
        groups.setdefault((learner, scale), []).append(name)
    for learner in LEARNERS:
        base = sorted(groups.get((learner, "given"), []), key=lambda n: study["runs"][n]["replica"])
        others = {s: sorted(groups.get((learner, s), []), key=lambda n: study["runs"][n]["replica"])
                  for s in SCALES if s != "given" and groups.get((learner, s))}
        if not base or not others:
            continue
        js = work / f"evaluate-{learner}.json"
        cmd = [sys.executable, "-m", "mtplug", "evaluate", "-q", "--ref", str(system / "test.en"), "--metric", "bleu",
               "--seed", "0", "--json", str(js), "--hyps-baseline", *[str(work / n / "final.test.hyp") for n in base]]
        for scale, names in others.items():
            if len(names) != len(base):
                raise SystemExit(f"{learner}: {len(names)} {scale} runs against {len(base)} given runs")
            cmd += [f"--hyps-{scale}", *[str(work / n / "final.test.hyp") for n in names]]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        rep = json.loads(js.read_text())
        study["evaluate"][learner] = {s["name"]: {"mean": round(s["scores"]["bleu"]["mean"], 2),
                                                  "s_sel": round(s["scores"]["bleu"].get("s_sel", 0.0), 2),
                                                  "p": s["scores"]["bleu"].get("p")} for s in rep["systems"]}
    results = load()
    results.setdefault("loop", {})[a.name or system.name] = study
    save(results)
    print(loop_table(results, a.name or system.name))


def loop_table(results: dict, name: str) -> str:
    study = results["loop"][name]
    runs = study["runs"]
    lines = ["| optimizer | start_scale | test BLEU per replica | mean | p against given | best dev BLEU per replica |",
             "|---|---|---|---|---|---|"]
    for learner in LEARNERS:
        for scale in SCALES:
            sel = sorted((r for r in runs.values() if (r["learner"], r["scale"]) == (learner, scale)),
                         key=lambda r: r["replica"])
            if not sel:
                continue
            ev = study["evaluate"].get(learner, {})
            p = ev.get(scale, {}).get("p")
            tests = ", ".join(f"{r['test_bleu']:.2f}" for r in sel)
            devs = ", ".join(f"{max(r['decoded_bleu']):.2f}" for r in sel)
            p_text = "–" if scale == "given" else ("" if p is None else f"{p:.2f}")
            lines.append(f"| {learner} | {SCALE_NAMES[scale]} | {tests} | "
                         f"{np.mean([r['test_bleu'] for r in sel]):.2f} | {p_text} | {devs} |")
    return "\n".join(lines)


def margins_table(results: dict, name: str) -> str:
    """Per iteration: the start's pair margin (mean over replicas) of each optimizer under
    ``given`` and how many runs of ``best`` kept the shrunk start."""
    runs = results["loop"][name]["runs"]
    lines = ["| optimizer | runs | start margin per iteration (mean over the given runs) | "
             "iterations where the default tried both starts | of these, shrunk kept |", "|---|---|---|---|---|"]
    for learner in LEARNERS:
        given = [r for r in runs.values() if (r["learner"], r["scale"]) == (learner, "given")]
        best = [r for r in runs.values() if (r["learner"], r["scale"]) == (learner, "best")]
        if not given:
            continue
        n = max(len(r["start_margin"]) for r in given)
        means = [np.mean([r["start_margin"][i] for r in given if i < len(r["start_margin"])
                          and r["start_margin"][i] is not None]) for i in range(n)]
        both = sum(u is not None and s is not None for r in best
                   for u, s in zip(r["score_from_given"], r["score_from_shrunk"]))
        shrunk = sum(u == "shrunk" and g is not None for r in best
                     for u, g in zip(r["start_used"], r["score_from_given"]))
        total = sum(len(r["start_used"]) for r in best)
        lines.append(f"| {learner} | {len(given)} given, {len(best)} best | {' '.join(f'{m:.2f}' for m in means)} | "
                     f"{both} of {total} | {shrunk} |")
    return "\n".join(lines)


def table(name: str) -> str:
    """The Markdown table ``name`` from the committed results (benchmarks/generated_tables.py)."""
    results = load()
    if name == "synthetic":
        return synthetic_table(results)
    kind, _, system = name.partition("-")
    return {"loop": loop_table, "margins": margins_table, "pool": pool_table}[kind](results, system)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    s = sub.add_parser("synthetic")
    s.add_argument("--dims", type=int, nargs="+", default=[10, 100])
    s.add_argument("--noise", type=float, nargs="+", default=[0.0, 200.0])
    s.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    s.add_argument("--sentences", type=int, default=1000)
    s.add_argument("--nbest", type=int, default=500)
    s.add_argument("--threads", type=int, default=2)
    lo = sub.add_parser("loop")
    lo.add_argument("--system", required=True)
    lo.add_argument("--cdec", required=True)
    lo.add_argument("--work", required=True)
    lo.add_argument("--optimizers", nargs="+", choices=LEARNERS, default=list(LEARNERS))
    lo.add_argument("--scales", nargs="+", choices=SCALES, default=["given", "best"])
    lo.add_argument("--replicas", type=int, default=3)
    lo.add_argument("--iterations", type=int, default=8)
    lo.add_argument("--nbest", type=int, default=100)
    lo.add_argument("--jobs", type=int, default=2)
    r = sub.add_parser("report")
    r.add_argument("--system", required=True)
    r.add_argument("--work", required=True)
    r.add_argument("--name", help="the study's name in the results (default: the system folder's name)")
    po = sub.add_parser("pool")
    po.add_argument("--store", required=True)
    po.add_argument("--start", required=True, help="the start weights (a cdec weights file)")
    po.add_argument("--name", required=True)
    po.add_argument("--rounds", type=int, default=4)
    po.add_argument("--threads", type=int, default=2)
    t = sub.add_parser("table")
    t.add_argument("name")
    a = ap.parse_args()
    if a.command == "table":
        print(table(a.name))
    else:
        {"synthetic": synthetic, "loop": loop, "report": report, "pool": pool}[a.command](a)


if __name__ == "__main__":
    main()
