#!/usr/bin/env python3
"""A paper's claims set against our committed results, with verdicts by one rule.

    python benchmarks/reproductions/claims.py PAPER        # the claims table, Markdown

``claims/PAPER.yaml`` lists every experiment the paper reports (each table, each figure):
where it is in the paper (``where``), what the paper says (``quote``, its own words, and
``paper``, its numbers), how our protocol differs (``protocol``), and either ``not_run``
(why it cannot run here) or ``compare``: what our side is. A comparison names results
files under ``results/`` (one per independent pool draw or system; ``draws``), the
``system`` in them, the ``method`` and the ``baseline`` (method names of those files), and
what the paper found of the method against the baseline (``expect``: better, worse or
comparable). ``measure: tune`` compares tuning BLEU instead of test BLEU (a paper's "finds
higher BLEU on the tuning data"); ``measure: spread`` compares how much test BLEU varies
over seeds (a paper's "shows larger variation across random seeds"); ``measure: fall``
compares how far a run's per-iteration curve falls back (a paper's "unstable, oscillating
up to 2 BLEU points between iterations", against "stable and smooth"): the curve is the
run's list ``curve`` (default ``one_best_bleu_per_epoch``, the tuning set's 1-best BLEU
after each epoch of a loop run).

The verdict rule (docs/reproductions/method.md):

* in each draw, d = mean test BLEU of the method − of the baseline over the runs the study
  paired them on, p = ``mtplug evaluate``'s approximate-randomization p-value there; with
  ``measure: tune``, d is the difference of mean tuning BLEU over all independent runs of
  each, and p Welch's two-sided t-test between those runs (the tuning sets' translations
  are not in the results files, so no randomization test of them; a side with one run
  gives no p and the claim stays inconclusive); with ``measure: spread``, each run counts
  as its absolute deviation from the median test BLEU of its start point's runs (what the
  seed alone moved), d is the difference of the mean deviations and p Welch's t-test
  between them (the Brown–Forsythe test of equal spread, without its equal-variance
  assumption); the noise below is then taken over those deviations; with ``measure:
  fall``, each run counts as the largest fall of its curve between two consecutive
  iterations (0 for a curve that never falls: a learner climbing from its start and
  levelling off is stable, one that climbs and drops back oscillates), d is the
  difference of the mean falls and p Welch's t-test between them, the noise taken over
  the falls;
* the noise is the largest run-to-run spread of identical settings measured: the standard
  deviation of either method's independent runs in any draw and, with two or more draws,
  how far either method's mean moved between draws;
* *reproduced*: in every draw p < 0.05 and |d| > noise, with d of the sign the paper found;
  *contradicted*: the same, with the other sign (for a claim of comparable results, any
  such difference); else *inconclusive*. A comparison whose results file does not exist
  yet reads *not run yet*.

A claim that a measurement stays above a threshold (``threshold``, e.g. Galley's "cosine
> 0.999 at D = 1,000") names a results file whose ``entries`` are independent replicas
(data seeds), the entries it is about (``select``: field -> value), the ``field`` and the
``above`` value (or ``below``, for a claim that it stays below: "fails to recover w*").
Its verdict: *reproduced* when every entry is on the claimed side, *contradicted* when
every entry is on the other (or at the value), each only with the one-sided sign test's
p = 0.5^n < 0.05 (at least 5 entries); else *inconclusive*.

The study scripts write the results files (pool_study.py's ``--results``): ``systems ->
SYSTEM -> methods -> NAME -> runs`` (each independent run's ``test`` BLEU) and
``compared`` (``p`` against the file's ``baseline``, on ``replicas`` paired runs).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
CLAIMS = HERE / "claims"
RESULTS = HERE / "results"
EXPECTATIONS = ("better", "worse", "comparable")
MEASURES = ("test", "tune", "spread", "fall")
#: the per-iteration curve ``measure: fall`` reads unless a claim names another
CURVE = "one_best_bleu_per_epoch"
ALPHA = 0.05


@dataclass
class Draw:
    """One results file's comparison: the method's and the baseline's independent runs."""

    name: str
    method: list[float]
    baseline: list[float]
    p: float
    paired: int

    @property
    def d(self) -> float:
        return float(np.mean(self.method) - np.mean(self.baseline))


def _sd(x: list[float]) -> float:
    return float(np.std(x, ddof=1)) if len(x) > 1 else 0.0


def welch_p(a: list[float], b: list[float]) -> float:
    """Welch's two-sided t-test p between two sets of independent runs (1.0 when either has
    fewer than two runs or neither varies: no evidence either way)."""
    from scipy import stats

    if len(a) < 2 or len(b) < 2 or (np.ptp(a) == 0 and np.ptp(b) == 0):
        return 1.0
    return float(stats.ttest_ind(a, b, equal_var=False).pvalue)


def seed_deviations(runs: list[dict]) -> list[float]:
    """Each run's absolute deviation of test BLEU from the median of the runs of its start
    point (``point``; one group when the runs have none): the spread the seed alone makes."""
    groups: dict = {}
    for r in runs:
        groups.setdefault(r.get("point"), []).append(r["test"])
    return [abs(r["test"] - float(np.median(groups[r.get("point")]))) for r in runs]


def falls(runs: list[dict], curve: str = CURVE) -> list[float]:
    """Each run's largest fall of its ``curve`` from one iteration to the next (0 for a
    curve that never falls, or of one point)."""
    return [float(np.max(-np.diff(r[curve]), initial=0.0)) for r in runs]


def load_draw(file: str, system: str, method: str, baseline: str, measure: str = "test",
              curve: str = CURVE) -> Draw | None:
    """The comparison in results/FILE.json (None while the file does not exist, or holds no
    runs of ``system`` or of either method: a study may run part of a draw only);
    ``curve``: the runs' per-iteration list ``measure: fall`` reads."""
    if measure not in MEASURES:
        raise ValueError(f"measure must be one of {', '.join(MEASURES)}, got {measure!r}")
    path = RESULTS / f"{file}.json"
    if not path.exists():
        return None
    study = json.loads(path.read_text())
    if system not in study["systems"]:
        return None
    methods = study["systems"][system]["methods"]
    if method not in methods or baseline not in methods:
        return None
    if measure in ("spread", "fall"):
        mine, theirs = ((seed_deviations(methods[m]["runs"]) if measure == "spread" else
                         falls(methods[m]["runs"], curve)) for m in (method, baseline))
        return Draw(file, mine, theirs, welch_p(mine, theirs), min(len(mine), len(theirs)))
    mine = [r[measure] for r in methods[method]["runs"]]
    theirs = [r[measure] for r in methods[baseline]["runs"]]
    if measure == "tune":
        return Draw(file, mine, theirs, welch_p(mine, theirs), min(len(mine), len(theirs)))
    if study["baseline"] != baseline:     # the study's p is against its own baseline
        raise ValueError(f"{path.name}: its baseline is {study['baseline']}, the claim compares with {baseline}")
    compared = methods[method]["compared"]
    return Draw(file, mine, theirs, float(compared["p"]), int(compared["replicas"]))


def noise(draws: list[Draw]) -> float:
    """The largest run-to-run spread of identical settings in these draws (module docstring)."""
    spread = [max(_sd(dr.method), _sd(dr.baseline)) for dr in draws]
    for pick in (lambda dr: dr.method, lambda dr: dr.baseline):
        means = [float(np.mean(pick(dr))) for dr in draws]
        if len(means) > 1:
            spread.append(max(means) - min(means))
    return max(spread, default=0.0)


def verdict(expect: str, draws: list[Draw]) -> str:
    """reproduced, contradicted or inconclusive (module docstring)."""
    if expect not in EXPECTATIONS:
        raise ValueError(f"expect must be one of {', '.join(EXPECTATIONS)}, got {expect!r}")
    if not draws:
        raise ValueError("a verdict needs at least one draw")
    n = noise(draws)
    beyond = [dr.p < ALPHA and abs(dr.d) > n for dr in draws]
    signs = {np.sign(dr.d) for dr in draws}
    if not all(beyond) or len(signs) != 1:
        return "inconclusive"
    sign = signs.pop()
    if expect == "comparable":
        return "contradicted"
    return "reproduced" if (sign > 0) == (expect == "better") else "contradicted"


def load_claims(paper: str) -> dict:
    import yaml

    return yaml.safe_load((CLAIMS / f"{paper}.yaml").read_text(encoding="utf-8"))


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def ours(claim: dict) -> tuple[str, str]:
    """(our numbers, the verdict) of one claim."""
    if "not_run" in claim:
        return "", f"not run here: {claim['not_run']}"
    if "threshold" in claim:
        return threshold(claim["threshold"])
    c = claim["compare"]
    measure = c.get("measure", "test")
    draws = [load_draw(f, c["system"], c["method"], c["baseline"], measure, c.get("curve", CURVE))
             for f in c["draws"]]
    found = [dr for dr in draws if dr is not None]
    if not found:
        return "", "not run yet"
    what = {"test": "", "tune": "tuning BLEU ", "spread": "mean deviation over seeds ",
            "fall": "mean largest fall between iterations "}[measure]
    def runs(n: int) -> str:
        if measure != "test":
            return f"{n} runs each side at least, Welch's t-test"
        return "1 paired run" if n == 1 else f"{n} paired runs"

    parts = [f"{dr.name}: {what}{c['method']} {np.mean(dr.method):.2f} against {c['baseline']} "
             f"{np.mean(dr.baseline):.2f} (d = {dr.d:+.2f}, p = {dr.p:.2f}, {runs(dr.paired)})" for dr in found]
    parts.append(f"noise {noise(found):.2f}")
    missing = len(draws) - len(found)
    text = "; ".join(parts) + (f"; {missing} draw(s) not run yet" if missing else "")
    return text, verdict(c["expect"], found) + (" (so far)" if missing else "")


def threshold(t: dict) -> tuple[str, str]:
    """(our numbers, the verdict) of a threshold claim (module docstring): ``above`` or
    ``below`` its value."""
    path = RESULTS / f"{t['file']}.json"
    if not path.exists():
        return "", "not run yet"
    entries = [e for e in json.loads(path.read_text())["entries"]
               if all(e.get(k) == v for k, v in t["select"].items())]
    if not entries:
        return "", "not run yet"
    side = "above" if "above" in t else "below"
    limit = float(t[side])
    values = sorted(float(e[t["field"]]) for e in entries)
    hits = sum((v > limit) if side == "above" else (v < limit) for v in values)
    p = 0.5 ** len(values)
    text = (f"{t['file']}: {t['field']} {', '.join(f'{v:.4f}' for v in values)} over {len(values)} "
            f"independent entries; {hits} {side} {limit:g} (sign test p = {p:.3f})")
    if p < ALPHA and hits in (0, len(values)):
        return text, "reproduced" if hits else "contradicted"
    return text, "inconclusive"


def table(paper: str) -> str:
    """The claims table of ``paper`` (benchmarks/generated_tables.py)."""
    spec = load_claims(paper)
    lines = ["| # | where | the paper | ours | protocol difference | verdict |", "|---|---|---|---|---|---|"]
    for claim in spec["claims"]:
        said = f"“{claim['quote']}”" + (f" ({claim['paper']})" if claim.get("paper") else "")
        numbers, found = ours(claim)
        lines.append(f"| {claim['id']} | {_cell(claim['where'])} | {_cell(said)} | {_cell(numbers)} | "
                     f"{_cell(claim.get('protocol', ''))} | {found} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table(sys.argv[1]))
