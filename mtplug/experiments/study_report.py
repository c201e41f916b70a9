"""The report of an optimizer study (``mtplug compare``): MultEval's table of the replicas'
test translations (:mod:`mtplug.experiments.evaluate`) followed by the study's answers, and
the per-replica table.

The answers, from the replicas' ``result.json`` files and the report:

- determinism: per optimizer, whether its seeds gave bit-identical weights from each start
  point (else the largest |Δw| of one feature between two seeds of one start point), and,
  with several start points, whether the start point changes the weights (the largest |Δw|
  between two start points of one seed);
- spread: the optimizers ranked by s_dev, the standard deviation of the test score across
  their replicas (steadiest first), for the report's first metric that has a direction.

report.json holds no clock readings and names the replicas' files relative to WORKDIR,
so one study run in two working directories gives byte-identical files.
"""

from __future__ import annotations

import json
import os

import numpy as np

from ..fileio import atomic_output
from .study_config import Study


def _max_spread(vectors: list[dict]) -> float:
    """The largest max - min of one weight over ``vectors`` (name -> value; missing = 0)."""
    names = sorted({n for v in vectors for n in v})
    values = np.array([[v.get(n, 0.0) for n in names] for v in vectors], dtype=np.float64)
    return float((values.max(axis=0) - values.min(axis=0)).max(initial=0.0))


def determinism(study: Study, results: dict) -> list[dict]:
    """Per optimizer: ``seeds_identical`` (None with one seed), ``seed_diff`` (largest |Δw|
    across seeds from one start point), ``points_identical`` / ``point_diff`` (across start
    points with one seed; None with one start point) and the report's ``text`` line.
    ``results``: (optimizer name, replica id) -> result.json."""
    out = []
    for o in study.optimizers:
        weights = {(s, p): dict(results[o.name, f"s{s}-p{p}"]["weights"])
                   for s in range(1, study.seeds + 1) for p in range(study.start_points)}
        entry = {"optimizer": o.name, "seeds_identical": None, "seed_diff": None, "points_identical": None,
                 "point_diff": None}
        parts = []
        if study.seeds > 1:
            diff = max(_max_spread([weights[s, p] for s in range(1, study.seeds + 1)])
                       for p in range(study.start_points))
            same = all(weights[s, p] == weights[1, p] for s in range(1, study.seeds + 1)
                       for p in range(study.start_points))
            entry.update(seeds_identical=same, seed_diff=diff)
            per_point = f" from each of the {study.start_points} start points" if study.start_points > 1 else ""
            parts.append(f"the {study.seeds} seeds gave identical weights{per_point}" if same
                         else f"weights differ across seeds (max |Δw| = {diff:.3g})")
        else:
            parts.append("one seed (replicas: seeds >= 2 tests determinism)")
        if study.start_points > 1:
            diff = max(_max_spread([weights[s, p] for p in range(study.start_points)])
                       for s in range(1, study.seeds + 1))
            same = all(weights[s, p] == weights[s, 0] for s in range(1, study.seeds + 1)
                       for p in range(study.start_points))
            entry.update(points_identical=same, point_diff=diff)
            parts.append(f"the {study.start_points} start points gave identical weights" if same
                         else f"the start point changes the weights (max |Δw| = {diff:.3g})")
        entry["text"] = f"{o.name}: " + "; ".join(parts)
        out.append(entry)
    return out


def spread(report) -> dict:
    """The optimizers ranked by s_dev of the test score (steadiest first; ties keep the
    study's order) on the report's first metric with a direction (its first otherwise);
    ``metric`` is its ``--metric`` text (``bleu``), ``text`` the report's line."""
    metric = next((m for m in report.metrics if m.higher_is_better is not None), report.metrics[0])
    if report.n_replicas < 2:
        return {"metric": metric.text, "ranking": [],
                "text": "one replica per optimizer: no spread (s_dev) to rank"}
    ranking = sorted(([s.name, s.metrics[metric.text].s_dev] for s in report.systems), key=lambda e: e[1])
    return {"metric": metric.text, "ranking": [{"optimizer": n, "s_dev": v} for n, v in ranking],
            "text": f"test {metric.label} spread across the {report.n_replicas} replicas of each optimizer "
                    f"(s_dev, the table's s_opt; steadiest first): " + ", ".join(f"{n} {v:.2f}" for n, v in ranking)}


def _cell(value: float | None, digits: int = 4) -> str:
    return "NA" if value is None else f"{value:.{digits}f}"


def replicas_tsv(study: Study, results: dict) -> str:
    """One line per replica: optimizer, replica, seed, start point, dev and test score
    (the tuning metric, 0-100 as every score), seconds."""
    metric = study.metric.replace("\t", " ")
    lines = [f"optimizer\talgorithm\treplica\tseed\tstart_point\tdev_{metric}\ttest_{metric}\tseconds"]
    for r in study.replicas():
        res = results[r.optimizer.name, r.id]
        lines.append(f"{r.optimizer.name}\t{r.optimizer.algorithm}\t{r.id}\t{r.seed}\t{r.point}\t"
                     f"{_cell(res['dev_score'])}\t{_cell(res['test_score'])}\t{res['seconds']:.2f}")
    return "\n".join(lines) + "\n"


def write_report(study: Study, results: dict, systems: list, outputs: dict, log, counter) -> dict:
    """Evaluate every replica's test translations and write ``outputs`` (report.txt,
    report.json, report.tex, replicas.tsv, replicas.png by name -> path). ``results``:
    (optimizer name, replica id) -> its result.json; ``systems``: (optimizer name, test
    translation files in :meth:`Study.replica_ids` order), the baseline first. Returns
    {"text": report.txt's text, "files": the paths written}."""
    from ..metrics.layer import default_threads
    from ..metrics.references import metric_references
    from .evaluate import evaluate, progress_total
    from .report_format import latex_table, plot_replicas, text_table

    ids = study.replica_ids()
    update, close = counter(progress_total(systems, study.metrics), "evaluate")
    try:
        report = evaluate(systems, metric_references(study.test_refs, study.metrics), study.bleu_config,
                          study.metrics,
                          study.boot_samples, study.ar_shuffles, study.eval_seed, default_threads(study.threads),
                          progress=update, reference_names=study.test_refs)
    finally:
        close()
    det = determinism(study, results)
    ranked = spread(report)
    text = (text_table(report) + f"\nstudy {study.name}: {study.mode} mode, {len(ids)} replicas per optimizer "
            f"({study.seeds} seed(s) x {study.start_points} start point(s)), baseline {study.optimizers[0].name}\n"
            + "".join(d["text"] + "\n" for d in det) + ranked["text"] + "\n")
    evaluated = report.to_json()
    for s in evaluated["systems"]:
        s["files"] = [os.path.relpath(p, study.workdir) for p in s["files"]]
    doc = {"study": study.name, "mode": study.mode, "metric": study.metric, "seeds": study.seeds,
           "start_points": study.start_points, "start_seed": study.start_seed,
           "baseline": study.optimizers[0].name,
           "replicas": [{k: results[r.optimizer.name, r.id][k] for k in
                         ("optimizer", "algorithm", "replica", "seed", "start_point", "dev_score", "test_score")}
                        for r in study.replicas()],
           "determinism": det, "spread": ranked, "report": evaluated}
    with atomic_output(outputs["report.txt"]) as fh:
        fh.write(text)
    with atomic_output(outputs["report.json"]) as fh:
        fh.write(json.dumps(doc, indent=1) + "\n")
    with atomic_output(outputs["report.tex"]) as fh:
        fh.write(latex_table(report))
    with atomic_output(outputs["replicas.tsv"]) as fh:
        fh.write(replicas_tsv(study, results))
    plot_replicas(report, outputs["replicas.png"],
                  title=f"{study.name}: test scores of {len(ids)} replica(s) per optimizer "
                        f"({study.seeds} seed(s) x {study.start_points} start point(s); bar: mean)")
    for name in ("report.txt", "report.json", "report.tex", "replicas.tsv", "replicas.png"):
        log(f"wrote {outputs[name]}")
    return {"text": text, "files": [outputs[n] for n in outputs]}
