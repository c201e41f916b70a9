"""Every score ``mtplug tune`` prints or writes is named by the metric it measures (issue 47,
item 3): the tuned metric's scores under neutral keys beside ``metric`` (``score``,
``tuned_score``, ``last_score``, ``test_score``, as ``mtplug optimize``'s ``metric`` and
``score``), the decoded BLEU under BLEU's keys, the log and the stop line by the metric's
label, ``mtplug plot`` one figure per metric with the metric's name on its axis. TER (and
ter-bleu) are error rates: the best iteration is the lowest. A BLEU run keeps its BLEU keys
(``tuned_bleu`` beside ``tuned_score``)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import numpy as np
import pytest

import mtplug
from mtplug.cli import main
from mtplug.corpus import NbestCorpus
from mtplug.formats.weights_core import Weights
from mtplug.metrics.layer import parse_metric
from mtplug.tuning.loop import read_state
from mtplug.tuning.plot import bleu_curves, metric_curves, plot_workdir, score_figures

from .test_state_scale import OLD_STATES, pro_args
from .test_test_input import split  # noqa: F401  (a fixture)
from .test_tune import INI, MOSES_STANDIN

#: the keys of a summary history row (a BLEU run adds tuned_bleu)
ROW = ("iteration", "score", "tuned_score", "bleu", "hypotheses", "new", "test_score", "test_bleu")


def scored(capsys, hyp: Path, ref: Path, metric: str) -> float:
    """``mtplug score --json``'s score of ``hyp``."""
    assert main(["score", "--json", "--hyp", str(hyp), "--ref", str(ref), "--metric", metric]) == 0
    return json.loads(capsys.readouterr().out)["score"]


def plotted(monkeypatch, workdir: Path, out: Path) -> dict:
    """{file name: (y label, title, {legend: (iterations, values)})} of the figures
    ``mtplug plot`` writes for ``workdir`` (read from each figure as it is saved)."""
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    seen = {}
    save = Figure.savefig

    def spy(fig, path, *args, **kwargs):
        ax = fig.axes[0]
        seen[Path(path).name] = (ax.get_ylabel(), ax.get_title(),
                                 {ln.get_label(): (list(ln.get_xdata()), list(ln.get_ydata())) for ln in ax.lines
                                  if not ln.get_label().startswith("_")})
        return save(fig, path, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", spy)
    written = plot_workdir(str(workdir), str(out))
    assert sorted(Path(p).name for p in written) == sorted(seen)
    return seen


@pytest.mark.parametrize("metric", ["chrf", "ter", "ter-bleu", "bleu:0.5,chrf:0.5"])
def test_every_score_is_named_by_its_metric(split, metric, capsys, monkeypatch):  # noqa: F811
    wd = split / "wd"
    rc = main(pro_args(split, "wd", "--metric", metric, "--patience", "1", iterations=6, quiet=False))
    out, err = capsys.readouterr()
    assert rc == 0, err
    summary = json.loads(out)
    state = read_state(str(wd))
    hist = state["history"]
    parsed = parse_metric(metric)
    label = parsed.label
    assert summary["metric"] == metric and all(h["metric"] == metric for h in hist)
    # tuned_bleu held this metric's score on the store: gone, from the JSON line and the state
    assert "tuned_bleu" not in summary and not any("tuned_bleu" in h for h in hist + summary["history"])
    for h in hist:
        n, folder = h["iteration"], wd / f"iter{h['iteration']:03d}"
        # the decoded 1-best's score (TER as an error rate, on 0-100) as mtplug score gives it; BLEU beside it
        assert h["score"] == pytest.approx(scored(capsys, folder / "onebest.txt", split / "dev.ref", metric), abs=1e-9)
        assert h["bleu"] == pytest.approx(scored(capsys, folder / "onebest.txt", split / "dev.ref", "bleu"), abs=1e-9)
        assert h["test_score"] == pytest.approx(scored(capsys, folder / "test.out", split / "test.ref", metric),
                                                abs=1e-9)
        assert h["test_bleu"] == pytest.approx(scored(capsys, folder / "test.out", split / "test.ref", "bleu"),
                                               abs=1e-9)
        assert (f"iteration {n}: BLEU = {h['bleu']:.4f}, {label} = {h['score']:.4f} (decoded 1-best), {label} "
                f"{h['tuned_score']:.4f} on the store (pro, seed {h['seed']}), ") in err
        assert (f"iteration {n}: test BLEU = {h['test_bleu']:.4f}, {label} = {h['test_score']:.4f} (decoded 1-best "
                f"of {split / 'test.src'} with the weights this iteration decoded the tuning set with)") in err
    # the score on the store is the metric's too: TER, not 100 - TER
    last = hist[-1]
    store = NbestCorpus.load(str(wd / f"iter{last['iteration']:03d}" / "store.npz"))
    end = json.loads((wd / f"iter{last['iteration']:03d}" / "weights.json").read_text())["end"]
    tuned = Weights(end).to_array(store.feature_names, allow_unknown=True)
    assert last["tuned_score"] == pytest.approx(store.metric.value(store.metric_of(tuned)), abs=1e-9)
    # the best iteration is the one of the best score: the lowest for an error rate
    scores = [h["score"] for h in hist]
    best = int(np.argmax(scores) if parsed.higher_is_better else np.argmin(scores)) + 1
    assert state["best"]["iteration"] == summary["final_iteration"] == best
    assert summary["score"] == state["best"]["score"] == hist[best - 1]["score"]
    assert summary["bleu"] == hist[best - 1]["bleu"] and summary["test_score"] == hist[best - 1]["test_score"]
    assert (summary["last_score"], summary["tuned_score"], summary["last_bleu"]) == \
        (last["score"], last["tuned_score"], last["bleu"])
    assert summary["history"] == [{k: h[k] for k in ROW} for h in hist]
    if summary["stop"] != "iteration limit":
        assert summary["stop"] == f"no better {label} for 1 iterations"
    assert (f"stopped after iteration {summary['iterations']}: {summary['stop']}; final weights (the weights decoded in "
            f"iteration {best} ({label} {summary['score']:.4f}, BLEU {summary['bleu']:.4f})): {wd / 'final'}\n") in err
    assert f"final weights: test BLEU = {summary['test_bleu']:.4f}, {label} = {summary['test_score']:.4f} (" in err

    # mtplug plot: BLEU on its axis, the metric on its own, each labelled by its name
    figures = plotted(monkeypatch, wd, split / "plots")
    name = {"chrf": "chrf.png", "ter": "ter.png", "ter-bleu": "ter-bleu.png",
            "bleu:0.5,chrf:0.5": "bleu_0.5_chrf_0.5.png"}[metric]
    assert sorted(figures) == sorted(["bleu.png", name])
    its = [h["iteration"] for h in hist]
    ylabel, title, lines = figures[name]
    assert ylabel == (label if parsed.higher_is_better else f"{label} (lower is better)")
    assert title == f"{label} per iteration"
    stored = [(h["iteration"], h["tuned_score"]) for h in hist if h["tuned_score"] is not None]
    assert lines == {"tuning set, decoded 1-best": (its, scores),
                     "pro on the store": ([i for i, _ in stored], [v for _, v in stored]),
                     "test set, decoded 1-best": (its, [h["test_score"] for h in hist])}
    ylabel, title, lines = figures["bleu.png"]
    assert (ylabel, title) == ("BLEU", "BLEU per iteration")
    # the store holds this metric's statistics, no BLEU's: no BLEU curve of the store
    assert lines == {"tuning set, decoded 1-best": (its, [h["bleu"] for h in hist]),
                     "test set, decoded 1-best": (its, [h["test_bleu"] for h in hist])}


def test_a_bleu_run_keeps_its_bleu_keys(split, capsys, monkeypatch):  # noqa: F811
    """A BLEU run's JSON line and state keep the keys users read (bleu, last_bleu, tuned_bleu,
    test_bleu), equal to the new ones; bleu.png is its one score figure."""
    rc = main(pro_args(split, "wd", iterations=2, quiet=False))
    out, err = capsys.readouterr()
    assert rc == 0, err
    summary = json.loads(out)
    assert summary["metric"] == "bleu"
    assert (summary["score"], summary["last_score"], summary["tuned_score"], summary["test_score"]) == \
        (summary["bleu"], summary["last_bleu"], summary["tuned_bleu"], summary["test_bleu"])
    for h in summary["history"]:
        assert (h["score"], h["tuned_score"], h["test_score"]) == (h["bleu"], h["tuned_bleu"], h["test_bleu"])
    state = read_state(str(split / "wd"))
    for h in state["history"]:
        assert h["metric"] == "bleu" and h["tuned_score"] == h["tuned_bleu"] and h["score"] == h["bleu"]
        assert not {"metric_value", "tuned_metric_value", "test_metric_value", "objective"} & set(h)
        assert (f"iteration {h['iteration']}: BLEU = {h['bleu']:.4f} (decoded 1-best), BLEU {h['tuned_score']:.4f} "
                f"on the store (pro, ") in err
    assert f"(the weights decoded in iteration {summary['final_iteration']} (BLEU {summary['bleu']:.4f}))" in err
    figures = plotted(monkeypatch, split / "wd", split / "plots")
    assert list(figures) == ["bleu.png"]
    ylabel, title, lines = figures["bleu.png"]
    assert (ylabel, title) == ("BLEU", "BLEU per iteration") and set(lines) == \
        {"tuning set, decoded 1-best", "pro on the store", "test set, decoded 1-best"}
    assert lines["pro on the store"][1] == [h["tuned_bleu"] for h in state["history"]]
    assert bleu_curves(state) == metric_curves(state)


def test_the_python_api_names_the_metric_and_undecoded_weights_name_theirs(tmp_path):
    """mtplug.tune returns the JSON line's summary; --final-weights last (never decoded) names
    the store's score by the metric in the stop line."""
    (tmp_path / "moses.ini").write_text(INI)
    (tmp_path / "dev.src").write_text("".join(f"s{i}\n" for i in range(60)))
    toy = Path(mtplug.__file__).resolve().parent / "data" / "example"
    lines: list[str] = []
    summary = mtplug.tune(decoder="moses", decoder_bin=shlex.join([sys.executable, str(MOSES_STANDIN),
                                                                   "-standin-source", str(tmp_path / "dev.src")]),
                          decoder_config=str(tmp_path / "moses.ini"), input=str(tmp_path / "dev.src"),
                          ref=[str(toy / "ref.0")], workdir=str(tmp_path / "wd"), optimizer="pro", iterations=1,
                          nbest_size=10, seed=3, metric="ter", final_weights="last", log=lines.append)
    h = read_state(str(tmp_path / "wd"))["history"][0]
    assert summary["metric"] == "ter" and summary["score"] is None and summary["bleu"] is None
    assert (summary["last_score"], summary["tuned_score"], summary["last_bleu"]) == (h["score"], h["tuned_score"],
                                                                                     h["bleu"])
    assert 0 < h["tuned_score"] < h["score"] < 100      # TER: lower on the store than decoded at the start
    assert lines[-1] == (f"stopped after iteration 1: iteration limit; final weights (the weights after iteration 1 "
                         f"(not decoded: their TER on the store was {h['tuned_score']:.4f})): {tmp_path / 'wd' / 'final'}")


@pytest.mark.parametrize("old", ["ter-test.json", "chrf-patience.json", "bleu-test.json"])
def test_plot_of_a_state_an_old_run_wrote(tmp_path, monkeypatch, old):
    """A version 2 state (where tuned_bleu held the other metric's score) plots each metric on
    its own axis too."""
    (tmp_path / "wd").mkdir()
    (tmp_path / "wd" / "state.json").write_bytes((OLD_STATES / old).read_bytes())
    real = json.loads((OLD_STATES / old).read_text())
    metric = real["fingerprint"].get("metric", "bleu")
    figures = plotted(monkeypatch, tmp_path / "wd", tmp_path / "plots")
    state = read_state(str(tmp_path / "wd"))
    assert [f[0] for f in score_figures(state)] == (["bleu.png"] if metric == "bleu" else ["bleu.png", f"{metric}.png"])
    assert sorted(figures) == sorted(f[0] for f in score_figures(state))
    _, _, lines = figures["bleu.png"]
    assert lines["tuning set, decoded 1-best"][1] == [h["bleu"] for h in real["history"]]
    assert ("pro on the store" in lines) == (metric == "bleu")
    if metric != "bleu":
        ylabel, _, lines = figures[f"{metric}.png"]
        assert ylabel == {"ter": "TER (lower is better)", "chrf": "chrF"}[metric]
        assert lines["tuning set, decoded 1-best"][1] == [h["metric_value"] for h in real["history"]]
        assert lines["pro on the store"][1] == [h["tuned_metric_value"] for h in real["history"]]
