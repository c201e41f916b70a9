"""mtplug evaluate: MultEval's report, its numbers against sacrebleu and slow
references, its three forms, and its errors."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import sacrebleu

from mtplug.cli import main
from mtplug.experiments import significance as sig
from mtplug.experiments.evaluate import evaluate
from mtplug.experiments.evaluate_command import named_hyps_argv
from mtplug.experiments.report_format import latex_table, text_table
from mtplug.formats.references import read_references
from mtplug.metrics import get_metric
from mtplug.metrics.bleu import BleuConfig


def _write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """A reference and two systems of three replicas each (seeded noise over the reference)."""
    d = tmp_path_factory.mktemp("evaluate")
    rng = np.random.default_rng(7)
    vocab = [f"w{i}" for i in range(60)]
    refs = [" ".join(rng.choice(vocab, size=rng.integers(3, 16))) for _ in range(70)]

    def noisy(p_sub, p_del):
        out = []
        for r in refs:
            words = [str(rng.choice(vocab)) if rng.random() < p_sub else w for w in r.split()
                     if rng.random() >= p_del]
            out.append(" ".join(words))
        return out

    files = {"ref": _write(d / "ref", refs)}
    hyps = {}
    for name, p in (("base", 0.35), ("sys", 0.28)):
        for k in range(3):
            lines = noisy(p + 0.03 * k, 0.05)
            hyps[name, k] = lines
            files[name, k] = _write(d / f"{name}.{k}", lines)
    return d, refs, hyps, files


def _report(files, replicas=3, **kw):
    systems = [("baseline", [files["base", k] for k in range(replicas)]),
               ("sys1", [files["sys", k] for k in range(replicas)])]
    options = dict(metrics=("bleu", "ter", "length"), boot_samples=400, ar_shuffles=400, seed=3)
    options.update(kw)
    return evaluate(systems, read_references([files["ref"]]), BleuConfig(), **options)


def test_means_and_replica_spread_equal_sacrebleu(study):
    _, refs, hyps, files = study
    report = _report(files)
    for sys_name, key in (("baseline", "base"), ("sys1", "sys")):
        r = next(s for s in report.systems if s.name == sys_name)
        bleu = [sacrebleu.corpus_bleu(hyps[key, k], [refs], tokenize="none").score for k in range(3)]
        ter = [sacrebleu.corpus_ter(hyps[key, k], [refs]).score for k in range(3)]
        np.testing.assert_allclose(r.metrics["bleu"].replicas, bleu, atol=1e-9)
        np.testing.assert_allclose(r.metrics["ter"].replicas, ter, atol=1e-9)
        assert r.metrics["bleu"].mean == pytest.approx(np.mean(bleu), abs=1e-9)
        assert r.metrics["bleu"].s_dev == pytest.approx(np.std(bleu, ddof=1), abs=1e-9)
        assert r.metrics["ter"].median == pytest.approx(sorted(ter)[1], abs=1e-9)
        assert (r.metrics["ter"].min, r.metrics["ter"].max) == (pytest.approx(min(ter)), pytest.approx(max(ter)))
        lengths = [100 * sum(len(h.split()) for h in hyps[key, k]) / sum(len(x.split()) for x in refs)
                   for k in range(3)]
        np.testing.assert_allclose(r.metrics["length"].replicas, lengths, atol=1e-9)


def test_s_sel_and_p_follow_their_definitions(study):
    _, refs, hyps, files = study
    report = _report(files)
    bleu = get_metric("bleu")
    rows = {key: [bleu.statistics(hyps[key, k], [refs])[0] for k in range(3)] for key in ("base", "sys")}
    metric = bleu.statistics(hyps["base", 0], [refs])[1]
    score = lambda t: 100 * metric.objectives(t)  # noqa: E731
    # s_sel: each replica's bootstrap standard deviation (one seeded draw of resamples), averaged
    rng = np.random.default_rng(3)
    idx = rng.integers(0, len(refs), size=(400, len(refs)))
    stds = [np.std(score(r[idx].sum(axis=1)), ddof=1) for r in rows["sys"]]
    assert report.systems[1].metrics["bleu"].s_sel == pytest.approx(np.mean(stds), rel=1e-12)
    # p: approximate randomization over the replicas' sentences, replica k paired with replica k
    want, = sig.approximate_randomization(np.concatenate(rows["base"]), np.concatenate(rows["sys"]), [score], 400,
                                         3)
    assert report.systems[1].metrics["bleu"].p == want
    assert report.systems[0].metrics["bleu"].p is None and report.systems[1].metrics["bleu"].p_bootstrap is None


def test_one_replica_adds_the_paired_bootstrap(study):
    _, refs, hyps, files = study
    report = _report(files, replicas=1)
    m = report.systems[1].metrics["bleu"]
    assert report.systems[0].metrics["bleu"].s_dev is None
    bleu = get_metric("bleu")
    a, metric = bleu.statistics(hyps["base", 0], [refs])
    b, _ = bleu.statistics(hyps["sys", 0], [refs])
    pb = sig.paired_bootstrap(a, b, lambda t: 100 * metric.objectives(t), True, 400, 3)
    assert (m.p_bootstrap, m.bootstrap_wins) == (pb.p, pb.wins)
    assert report.systems[1].metrics["length"].bootstrap_wins is None   # Length has no better direction
    assert "paired bootstrap resampling (400 samples)" in text_table(report)


def test_text_and_latex_tables(study):
    report = _report(study[3])
    text = text_table(report)
    head, base, sys1 = text.splitlines()[:3]
    assert head.startswith("n=3" + " " * 12 + "BLEU (s_sel/s_opt/p)")
    r = report.systems[1].metrics["bleu"]
    assert sys1[:15] == "sys1" + " " * 11
    assert sys1[15:38].rstrip() == f"{r.mean:.1f} ({r.s_sel:.1f}/{r.s_dev:.1f}/{r.p:.2f})"
    assert base[15:38].rstrip().endswith("/-)")
    tex = latex_table(report)
    assert tex.startswith("\\begin{table}[htb]") and "\\multirow{2}{*}{BLEU $\\uparrow$}" in tex
    assert f"& sys1 & {r.mean:.1f} & {r.s_sel:.1f} & {r.s_dev:.1f} & {r.p:.2f} \\\\" in tex


def test_rounding_is_half_up_as_multeval_prints():
    from mtplug.experiments.report_format import _num

    assert [_num(x, 1) for x in (0.25, 0.35, 2.05, 40.15)] == ["0.3", "0.4", "2.1", "40.2"]
    assert _num(float("nan"), 1, "*") == "*" and _num(None, 2) == "-"


def test_cli_end_to_end(study, tmp_path, capsys):
    d, _, _, files = study
    argv = ["evaluate", "--ref", files["ref"], "--hyps-baseline", *[files["base", k] for k in range(3)],
            "--hyps-sys1", *[files["sys", k] for k in range(3)], "--boot-samples", "300", "--ar-shuffles", "300",
            "--seed", "5", "--json", str(tmp_path / "r.json"), "--latex", str(tmp_path / "t.tex"),
            "--plot", str(tmp_path / "p.png"), "--quiet"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["seed"] == 5 and data["n_replicas"] == 3 and [s["name"] for s in data["systems"]] == ["baseline",
                                                                                                       "sys1"]
    # JSON keys are the --metric texts (the table's labels are BLEU, TER, Length); scores on 0-100
    assert [m["metric"] for m in data["metrics"]] == ["bleu", "ter", "length"]
    assert [m["name"] for m in data["metrics"]] == ["BLEU", "TER", "Length"]
    assert data["systems"][0]["scores"]["bleu"]["p"] is None
    assert all(1 < s["scores"][k]["mean"] < 100 for s in data["systems"] for k in ("bleu", "ter", "length"))
    assert out.splitlines()[0].startswith("n=3") and "seed 5" in out
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "t.tex").read_text().startswith("\\begin{table}")
    # the same seed prints the same numbers; JSON to stdout replaces the table
    assert main(argv[:-7] + ["--json", "-", "--quiet"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again == data | {"references": again["references"]} and again["systems"] == data["systems"]


def test_named_systems_are_rewritten():
    assert named_hyps_argv(["evaluate", "--hyps-baseline", "a", "--hyps-new", "b", "--hyps-x=c"]) == [
        "evaluate", "--hyps-baseline", "a", "--hyps-system", "new", "b", "--hyps-system", "x", "c"]


@pytest.mark.parametrize("extra,message", [
    (["--hyps-sys1", "SYS0"], "same number of optimizer replicas"),
    (["--hyps-sys1", "SYS0", "SYS1", "--hyps-sys1", "SYS0", "SYS1"], "system sys1 is given twice"),
    (["--hyps-sys1", "SYS0", "SYS1", "--boot-samples", "0"], "--boot-samples must be an integer >= 1, got 0"),
    (["--hyps-sys1", "SYS0", "SYS1", "--ar-shuffles", "-3"], "--ar-shuffles must be an integer >= 1, got -3"),
    (["--hyps-sys1", "SYS0", "SYS1", "--metric", "bleu", "nope"], "--metric nope"),
    (["--hyps-sys1", "SYS0", "SYS1", "--plot", "-"], "--plot needs a file name"),
    (["--hyps-sys1", "SYS0", "MISSING"], "MISSING: no such file"),
    (["--hyps-sys1", "SYS0", "SHORT"], "SHORT: has 69 lines, expected 70"),
    (["--hyps-sys1", "SYS0", "SYS1", "--metric", "bleu", "BLEU"], "a metric is named twice"),
    (["--hyps-sys1", "SYS0", "SYS1", "--metric", "ter", "--reflen", "shortest"], "--reflen is BLEU's option"),
])
def test_errors_are_one_line(study, tmp_path, capsys, extra, message):
    d, refs, hyps, files = study
    short = _write(tmp_path / "short", hyps["sys", 1][:-1])
    subst = {"SYS0": files["sys", 0], "SYS1": files["sys", 1], "MISSING": str(tmp_path / "missing"), "SHORT": short}
    argv = ["evaluate", "--ref", files["ref"], "--hyps-baseline", files["base", 0], files["base", 1]]
    argv += [subst.get(x, x) for x in extra]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    expected = message.replace("MISSING", str(tmp_path / "missing")).replace("SHORT", short)
    assert len(err) == 1 and expected in err[0], err


def test_a_system_against_itself(study):
    files = study[3]
    systems = [("baseline", [files["base", 0]]), ("same", [files["base", 0]])]
    report = evaluate(systems, read_references([files["ref"]]), BleuConfig(), ("bleu",), 200, 200, 0)
    m = report.systems[1].metrics["bleu"]
    assert m.p == 1.0 and m.p_bootstrap == 1.0 and m.bootstrap_wins == 0.0
    assert math.isclose(m.mean, report.systems[0].metrics["bleu"].mean)


def test_text_table_widens_the_system_column_for_long_names():
    from types import SimpleNamespace

    from mtplug.experiments.report_format import text_table

    metric = SimpleNamespace(label="BLEU", text="bleu")
    cell = SimpleNamespace(mean=27.11, s_sel=1.0, s_dev=1.7, p=0.08, bootstrap_wins=None)
    report = SimpleNamespace(n_replicas=3, metrics=[metric], ar_shuffles=10, boot_samples=10, seed=0, signature="",
                             systems=[SimpleNamespace(name="baseline", metrics={"bleu": cell}),
                                      SimpleNamespace(name="mert-dense-uniform", metrics={"bleu": cell})])
    lines = text_table(report).splitlines()
    assert lines[2].startswith("mert-dense-uniform 27.1 (1.0/1.7/0.08)")
    assert lines[1].startswith("baseline           27.1")
