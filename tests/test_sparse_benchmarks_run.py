"""benchmarks/bench_sparse_mert.py and the Galley et al. synthetic study run end to end on
tiny made-up data (no timing asserted: the figures come from running them by hand,
docs/speed.md and docs/reproductions/galley-2013.md)."""

from __future__ import annotations

import json
import os
import sys

import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")


def _run(script: str, argv: list[str], monkeypatch) -> None:
    import runpy

    monkeypatch.setattr(sys, "argv", [script, *argv])
    runpy.run_path(os.path.join(BENCH, script), run_name="__main__")


def test_bench_sparse_mert_rows(tmp_path, monkeypatch, capsys):
    out = tmp_path / "rows.json"
    _run("bench_sparse_mert.py", ["--random", "6,8,120", "--full-round", "--threads", "2", "--repeat", "3",
                                  "--json", str(out)], monkeypatch)
    record = json.loads(out.read_text())
    rows = record["rows"]
    assert record["repeat"] == 3
    works = [r["work"] for r in rows]
    assert works[0] == "one coordinate round over 120 sparse features"
    assert rows[1]["identical"] is True          # the touched-sentence round makes the full round's move
    assert {"PRO (defaults)", "coordinate MERT, one start point"} <= set(works)
    assert all(r["seconds"] >= 0 for r in rows) and all(isinstance(r["met"], bool) for r in rows if "met" in r)
    assert "targets met" in capsys.readouterr().out
    # each timed row is the median of its three timings
    for r in rows[2:]:
        timings = [float(t) for t in r["note"].split("timings ")[1].split(" s")[0].split()]
        assert len(timings) == 3 and r["seconds"] == pytest.approx(sorted(timings)[1], abs=0.006)


def test_galley_synthetic_study(tmp_path, monkeypatch):
    _run(os.path.join("reproductions", "galley_synthetic.py"),
         ["--out", str(tmp_path), "--dims", "4", "--noise", "0", "--seeds", "0", "--sentences", "12", "--nbest", "6",
          "--optimizers", "mert-coordinate", "pro", "--threads", "1"], monkeypatch)
    rows = [json.loads(x) for x in (tmp_path / "synthetic.jsonl").read_text().splitlines()]
    assert [r["optimizer"] for r in rows] == ["mert-coordinate", "pro"]
    assert all(-1 <= r["cosine"] <= 1 and 0 <= r["pseudo_bleu"] <= 1 for r in rows)
    assert (tmp_path / "figure3.png").stat().st_size > 0 and "| 0 | 4 |" in (tmp_path / "table.md").read_text()
    # a second run finds every row done and runs nothing again
    _run(os.path.join("reproductions", "galley_synthetic.py"),
         ["--out", str(tmp_path), "--dims", "4", "--noise", "0", "--seeds", "0", "--sentences", "12", "--nbest", "6",
          "--optimizers", "mert-coordinate", "pro"], monkeypatch)
    assert len((tmp_path / "synthetic.jsonl").read_text().splitlines()) == 2


def test_galley_convergence_plot(tmp_path, monkeypatch):
    _run(os.path.join("reproductions", "galley_synthetic.py"),
         ["--out", str(tmp_path), "--convergence", "5", "--noise", "0", "--seeds", "0", "--sentences", "12",
          "--nbest", "6", "--coordinate-rounds", "3", "--threads", "1"], monkeypatch)
    record = json.loads((tmp_path / "convergence-5-seed0.json").read_text())
    coordinate, gradient = record["runs"]["coordinate"], record["runs"]["expected BLEU"]
    assert coordinate["iterations"] <= 3
    for run in (coordinate, gradient):
        objectives = [t[2] for t in run["trace"]]
        # the trace is the 1-best objective after each move: it never falls, and ends at the result
        assert objectives == sorted(objectives) and objectives[-1] == pytest.approx(run["pseudo_bleu"])
    assert (tmp_path / "convergence-5-seed0.png").stat().st_size > 0
    # Figure 3 as one number: the gradient finder's lead at the time the first run stopped
    from benchmarks.reproductions.galley_synthetic import convergence_table, lead_at_equal_time, objective_at

    trace = [(0.5, 1, 0.2), (1.0, 2, 0.5), (3.0, 5, 0.9)]
    assert objective_at(trace, 0.1) == 0.2 and objective_at(trace, 2.0) == 0.5 and objective_at(trace, 9) == 0.9
    runs = {"expected BLEU": {"trace": [(0.2, 1, 0.4), (1.5, 3, 0.95)]}, "coordinate": {"trace": trace}}
    assert lead_at_equal_time(runs) == pytest.approx(0.95 - 0.5)
    assert record["expbleu_lead"] == pytest.approx(lead_at_equal_time(record["runs"]))
    assert f"| {record['expbleu_lead']:+.6f} |" in convergence_table([record])


def test_galley_cone(tmp_path, monkeypatch):
    from benchmarks.reproductions import galley_synthetic

    results = tmp_path / "results" / "cone.json"
    _run(os.path.join("reproductions", "galley_synthetic.py"),
         ["--out", str(tmp_path), "--cone", "3", "--seeds", "0", "--sentences", "20", "--nbest", "8",
          "--cone-directions", "2", "--results", str(results)], monkeypatch)
    record = json.loads((tmp_path / "cone-3-seed0.json").read_text())
    first = record["first_direction"]
    assert first["expected"] == pytest.approx(1 - 3 / (2 * 20 * 8)) and 0 <= first["sentences_right"] <= 20
    assert len(record["directions"]) == 2
    for walk in record["directions"]:
        assert 0 < walk["ray_cosine"] <= 1
        # the linear programme's point keeps every sentence's best hypothesis (pseudo-BLEU 1), and
        # it turns at least as far from w* as the ray's boundary, which it may pass through
        assert walk["lp_status"] == 0 and walk["lp_sentences_right"] == 20 and walk["lp_pseudo_bleu"] == 1.0
        assert walk["lp_cosine"] <= walk["ray_cosine"] + 1e-9
    # the results file: merged by set, a generated table
    _run(os.path.join("reproductions", "galley_synthetic.py"),
         ["--out", str(tmp_path), "--cone", "3", "--seeds", "0", "--sentences", "20", "--nbest", "8",
          "--cone-directions", "1", "--results", str(results)], monkeypatch)
    held = json.loads(results.read_text())
    assert held["kind"] == "cone" and len(held["entries"]) == 1 and len(held["entries"][0]["directions"]) == 1
    monkeypatch.setattr(galley_synthetic, "RESULTS", results.parent)
    assert "| 20 × 8 | 3 | 0 |" in galley_synthetic.table("cone")
    # every --seeds value is a set of its own, each merged into the results file
    _run(os.path.join("reproductions", "galley_synthetic.py"),
         ["--out", str(tmp_path), "--cone", "3", "--seeds", "1", "2", "--sentences", "20", "--nbest", "8",
          "--cone-directions", "1", "--results", str(results)], monkeypatch)
    assert sorted(e["seed"] for e in json.loads(results.read_text())["entries"]) == [0, 1, 2]
    assert all((tmp_path / f"cone-3-seed{s}.json").exists() for s in (1, 2))


@pytest.mark.parametrize("gradient, start_l1", [("l1", None), ("literal", 1.0), ("chain", None)])
def test_galley_trace(tmp_path, monkeypatch, gradient, start_l1):
    from benchmarks.reproductions import galley_synthetic
    from mtplug.optimizers.mert import _Search

    move = _Search.move
    results = tmp_path / "trace.json"
    _run(os.path.join("reproductions", "galley_synthetic.py"),
         ["--out", str(tmp_path), "--trace", "4", "--seeds", "0", "--noise", "0", "--sentences", "12", "--nbest", "6",
          "--threads", "1", "--gradient", gradient, "--results", str(results),
          *(["--start-l1", str(start_l1)] if start_l1 else [])], monkeypatch)
    assert _Search.move is move                   # the trace's hooks are gone
    record = json.loads((tmp_path / "trace-4-seed0.json").read_text())
    assert record["gradient"] == gradient and record["start_l1"] == pytest.approx(start_l1 or 4.0)
    moves = record["moves"]
    assert moves and all(m["by"] in ("gradient", "coordinate") for m in moves)
    assert all((m["mu"] is None) == (m["by"] == "coordinate") for m in moves)
    # the 1-best objective never falls; the last move's point is the result
    objectives = [m["objective"] for m in moves]
    assert objectives == sorted(objectives) and objectives[-1] == pytest.approx(record["pseudo_bleu"])
    assert moves[-1]["cosine"] == pytest.approx(record["cosine"])
    monkeypatch.setattr(galley_synthetic, "RESULTS", tmp_path)
    assert f"| 12 × 6 | 4 | 0 | {gradient} |" in galley_synthetic.table("trace")


def _tiny_pools(root, rng, dense=None):
    """make_galley_pools.py's layout on made-up cdec k-best lists: {tune,dev,test}.kbest and
    .en, the dense features (default the first system's 12) and a few sparse ones per
    hypothesis."""
    from benchmarks.reproductions.galley_rerank import DENSE

    DENSE = dense or DENSE

    words = ["the", "a", "house", "is", "small", "big", "green", "old"]
    root.mkdir()
    for name, n_sent in (("tune", 6), ("dev", 4), ("test", 5)):
        refs, lines = [], []
        for s in range(n_sent):
            ref = " ".join(rng.choice(words, size=4))
            refs.append(ref + "\n")
            for _ in range(5):
                hyp = " ".join(rng.choice(words, size=int(rng.integers(3, 6))))
                feats = " ".join(f"{f}={rng.normal():.3f}" for f in DENSE)
                sparse = " ".join(f"RT:{w}=1" for w in set(hyp.split()[:2]))
                lines.append(f"{s} ||| {hyp} ||| {feats} {sparse} ||| 0\n")
        (root / f"{name}.en").write_text("".join(refs))
        (root / f"{name}.kbest").write_text("".join(lines))


@pytest.mark.parametrize("seg", [False, True])
def test_pool_decoding_numbers_sentences_by_input_line(tmp_path, seg):
    # cdec numbers each process's lines from 0, or from a <seg id="N"> line's N (the
    # Multi30k system's per-sentence grammars); the pools number them by input line
    from benchmarks.reproductions.make_galley_pools import kbest

    fake = tmp_path / "cdec"
    fake.write_text("import re, sys\n"
                    "n = -1\n"
                    "for line in sys.stdin:\n"
                    "    n += 1\n"
                    "    m = re.match(r'<seg id=\"(\\d+)\"', line)\n"
                    "    n = int(m.group(1)) if m else n\n"
                    "    words = re.sub(r'<[^>]*>', '', line).split()\n"
                    "    for k in range(2):\n"
                    "        print(f'{n} ||| {words[0]} {k} ||| F={k} ||| 0')\n")
    lines = [f"w{i} x" for i in range(7)]
    if seg:
        lines = [f'<seg id="{i}" grammar="/g/grammar.{i}.gz"> {text} </seg>' for i, text in enumerate(lines)]
    src = tmp_path / "src"
    src.write_text("".join(x + "\n" for x in lines))
    out = tmp_path / "out.kbest"
    kbest([sys.executable, str(fake)], src, out, 3, tmp_path / "log")
    got = [line.split(" ||| ")[:2] for line in out.read_text().splitlines()]
    assert got == [[str(i), f"w{i} {k}"] for i in range(7) for k in range(2)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cdec", "log", "out.kbest", "src"]


def test_pool_decoding_continues_a_killed_shard(tmp_path):
    # a decoder killed mid-set left its shard's output with finished sentences and a last one
    # cut short: with <seg id> inputs the next call decodes only the rest (the cut sentence
    # again), and the pool equals one decoded in one go; plain lines start again
    from pathlib import Path

    from benchmarks.reproductions.make_galley_pools import finished_prefix, kbest

    fake = tmp_path / "cdec"
    fake.write_text("import re, sys\n"
                    "for line in sys.stdin:\n"
                    "    n = int(re.match(r'<seg id=\"(\\d+)\"', line).group(1))\n"
                    "    print(f'DECODED {n}', file=sys.stderr)\n"
                    "    for k in range(3):\n"
                    "        print(f'{n} ||| w{n} {k} ||| F={k} ||| 0')\n")
    lines = [f'<seg id="{i}"> w{i} x </seg>' for i in range(6)]
    src = tmp_path / "src"
    src.write_text("".join(x + "\n" for x in lines))
    whole = tmp_path / "whole.kbest"
    kbest([sys.executable, str(fake)], src, whole, 2, tmp_path / "log0")
    out = tmp_path / "out.kbest"
    # shard 0 (sentences 0-2): 0 finished, 1 cut after one line and a half; shard 1: nothing
    Path(f"{out}.part0").write_text("0 ||| w0 0 ||| F=0 ||| 0\n0 ||| w0 1 ||| F=1 ||| 0\n"
                                    "0 ||| w0 2 ||| F=2 ||| 0\n1 ||| w1 0 ||| F=0 ||| 0\n1 ||| w1")
    kbest([sys.executable, str(fake)], src, out, 2, tmp_path / "log")
    assert out.read_bytes() == whole.read_bytes()
    decoded = [line for line in (tmp_path / "log").read_text().splitlines() if line.startswith("DECODED")]
    # the two shards' decoders run at once: their lines interleave in the log
    assert sorted(decoded) == [f"DECODED {i}" for i in (1, 2, 3, 4, 5)]
    assert "continued after 1 finished sentences" in (tmp_path / "log").read_text()
    # output of another input is not continued
    other = tmp_path / "other"
    other.write_text("5 ||| w5 0 ||| F=0 ||| 0\n6 ||| w6 0 ||| F=0 ||| 0\n")
    assert finished_prefix(other, [0, 1, 2]) == 0 and other.read_bytes() == b""
    assert finished_prefix(tmp_path / "missing", [0]) == 0


def test_pools_of_another_system_name_their_dense_features(tmp_path):
    # a second system's extractor features (Multi30k's) are its dense set, read from the
    # pools' provenance; pools without one are the first system's
    import numpy as np

    from benchmarks.reproductions import galley_rerank
    from benchmarks.reproductions.defaults_evidence import dense_pools
    from benchmarks.reproductions.make_galley_pools import dense_feature_names, pool_stats

    names = ["EgivenFCoherent", "CountEF", "LanguageModel", "WordPenalty"]
    (tmp_path / "weights.start").write_text("".join(f"{n} 0.1\n" for n in names) + "# a comment\n\n")
    assert dense_feature_names(tmp_path / "weights.start") == names
    pools = tmp_path / "pools"
    _tiny_pools(pools, np.random.default_rng(3), dense=names)
    assert galley_rerank.dense_names(pools) == galley_rerank.DENSE
    (pools / "provenance.json").write_text(json.dumps({"dense_feature_names": names}))
    assert galley_rerank.dense_names(pools) == names
    stats = pool_stats(pools / "tune.kbest", 6, names)
    assert stats["dense_features"] == 4 and stats["sparse_features"] == stats["features"] - 4 > 0
    assert not set(galley_rerank.frequent_sparse(pools / "tune.kbest", 3, names)) & set(names)
    kept = (dense_pools(pools) / "dev.kbest").read_text().splitlines()
    assert {t.split("=")[0] for line in kept for t in line.split(" ||| ")[2].split()} == set(names)
    assert galley_rerank.methods(0, names)["mert-dense-uniform"][2]["activate_features"] == ",".join(names)


def _pool_study(script, tmp_path, monkeypatch, seed, *flags):
    """Run a fixed-pool study script on tiny made-up pools; its runs.jsonl rows and argv."""
    import numpy as np

    from benchmarks.reproductions.galley_rerank import DENSE

    _tiny_pools(tmp_path / "pools", np.random.default_rng(seed))
    (tmp_path / "start").write_text("".join(f"{f} {-0.1 if i % 2 else 0.1}\n" for i, f in enumerate(DENSE)))
    argv = ["--pools", str(tmp_path / "pools"), "--start", str(tmp_path / "start"), "--out", str(tmp_path / "out"),
            "--seeds", "1", "2", "--threads", "1", "--boot-samples", "50", "--ar-shuffles", "50", *flags]
    _run(os.path.join("reproductions", script), argv, monkeypatch)
    return [json.loads(x) for x in (tmp_path / "out" / "runs.jsonl").read_text().splitlines()], argv


def test_galley_rerank_study(tmp_path, monkeypatch):
    # Galley et al.'s own harness: every method of the claims file, the dev search of PRO's C
    # and the regularisers' λ, a summary per baseline in claims.py's schema
    import numpy as np

    from benchmarks.reproductions import claims, galley_rerank
    from benchmarks.reproductions.galley_rerank import DENSE

    _tiny_pools(tmp_path / "pools", np.random.default_rng(8))
    (tmp_path / "w0").write_text("".join(f"{f} {-0.1 if i % 2 else 0.1}\n" for i, f in enumerate(DENSE)))
    results = tmp_path / "results" / "galley-toy.json"
    argv = ["--pools", str(tmp_path / "pools"), "--w0", str(tmp_path / "w0"), "--out", str(tmp_path / "out"),
            "--seeds", "1", "2", "--random-walks", "1", "--lambdas", "1e-3", "1e-2", "--pro-c", "1", "10",
            "--sparse-features", "3", "--threads", "1", "--boot-samples", "50", "--ar-shuffles", "50",
            "--results", str(results), "--more-baselines", "w0", "mert-dense-uniform"]
    _run(os.path.join("reproductions", "galley_rerank.py"), argv, monkeypatch)
    rows = [json.loads(x) for x in (tmp_path / "out" / "runs.jsonl").read_text().splitlines()]
    searched = ["pro-w0", *galley_rerank.REG_METHODS]
    # the dev search: each grid value once with seed 1; then seed 2 at the chosen value
    assert len(rows) == len(searched) * 3 + 1 + 4 * 2
    assert {r["param"] for r in rows if r["method"] == "pro-w0"} == {1.0, 10.0}
    pro = next(r for r in rows if r["method"] == "pro-w0")
    assert pro["options"] == {**galley_rerank.PRO_PAPER, "c": 1.0}
    assert all(0 <= r[k] <= 100 for r in rows for k in ("tune", "dev", "test"))
    # --sparse-features 3: the 12 dense features and the 3 sparse ones that fire most often
    features = (tmp_path / "out" / "stores-f3" / "features.txt").read_text().split()
    assert features[:12] == DENSE and len(features) == 15
    study = json.loads(results.read_text())
    assert study["baseline"] == "pro-w0" and study["features"] <= 15 and study["sparse_features"] == 3
    methods = study["systems"]["sparse"]["methods"]
    assert set(methods) == set(galley_rerank.methods(1))
    assert not methods["w0"]["seeded"] and len(methods["w0"]["runs"]) == 1
    assert [r["seed"] for r in methods["l2v1-w0"]["runs"]] == [1, 2]
    assert methods["l2v1-w0"]["options"]["reg_strength"] == study["search"]["l2v1-w0"]["chosen"]
    assert methods["l2v1-w0"]["compared"]["replicas"] == 2 and methods["w0"]["compared"]["replicas"] == 1
    assert "compared" not in methods["pro-w0"]
    # the same runs against another baseline; claims.py reads each file
    monkeypatch.setattr(claims, "RESULTS", results.parent)
    against_w0 = claims.load_draw("galley-toy-vs-w0", "sparse", "l2v1-w0", "w0")
    assert against_w0.paired == 1 and len(against_w0.method) == 2 and len(against_w0.baseline) == 1
    assert claims.load_draw("galley-toy-vs-mert-dense-uniform", "sparse", "mert-uniform",
                            "mert-dense-uniform").paired == 2
    monkeypatch.setattr(galley_rerank, "RESULTS", results.parent)
    table = galley_rerank.table("galley-toy")
    assert "| l2v1-w0 | 2 |" in table and "| p vs pro-w0 (paired runs) | p vs w0 |" in table
    assert all(line.count("|") == 12 for line in table.splitlines() if line.startswith("|"))
    assert "| pro-w0 | c | 1: " in galley_rerank.table("galley-toy:sweep")
    assert "Not run yet" in galley_rerank.table("galley-none")
    # a second run finds every run done
    _run(os.path.join("reproductions", "galley_rerank.py"), argv, monkeypatch)
    assert len((tmp_path / "out" / "runs.jsonl").read_text().splitlines()) == len(rows)


def test_gimpel_smith_study(tmp_path, monkeypatch, capsys):
    results = tmp_path / "results" / "gimpel-smith-2012-test.json"
    rows, argv = _pool_study("gimpel_smith_2012.py", tmp_path, monkeypatch, 5, "--start-points", "1", "--restarts", "1",
                             "--tune-nbest", "4", "--pro-steps", "3", "--results", str(results))
    from benchmarks.reproductions.gimpel_smith_2012 import FOOTNOTE_12
    from mtplug.optimizers.rampion import LOSSES

    dense = [r for r in rows if r["system"] == "dense"]
    sparse = [r for r in rows if r["system"] == "sparse"]
    rampions = [f"rampion-{x}" for x in LOSSES] + [f"rampion-ramp3-{x}" for x in FOOTNOTE_12]
    # dense: MERT and PRO by start point and seed, RAMPION (deterministic) once per start point
    assert len(dense) == 2 * 2 * 2 + 2 * len(rampions)
    assert {r["method"] for r in dense} == {"mert", "pro", *rampions}
    # sparse: Table 2's PRO and RAMPION only
    assert len(sparse) == 2 * 2 + 2 and {r["method"] for r in sparse} == {"pro", "rampion-ramp3"}
    point1 = next(r for r in dense if r["method"] == "pro" and r["point"] == 1)
    assert all(0 <= r["test"] <= 100 for r in rows) and point1["test_hyps"].endswith("pro.p1.s1")
    # PRO as the paper ran it: Ψ = 0.1, no pull, no length filter, iterated on the pool
    assert point1["options"] == {"psi": 0.1, "c": 1.0, "c_start": float("inf"), "length_z": 0.0}
    assert all(r["steps"] == 3 for r in rows if r["method"] == "pro")
    assert all(r["steps"] == 1 for r in rows if r["method"] != "pro")     # one optimizer run each
    ramp = next(r for r in dense if r["method"] == "rampion-ramp3-alpha1")
    assert ramp["options"] == {"cccp_iterations": 10, "epochs": 5, "eta": 1e-4, "c": 1.0, "alpha": 1.0,
                               "start_scale": "given", "loss": "ramp3"}
    table = (tmp_path / "out" / "table.md").read_text()
    # RAMPION's runs are its start points, never copies of one run for every seed; the
    # seeded methods are compared with it on one run per start point
    assert "**dense**" in table and "**sparse**" in table and "| rampion-ramp3 | 2 |" in table and "| pro | 4 |" in table
    assert json.loads((tmp_path / "out" / "dense" / "evaluate-pro.json").read_text())["n_replicas"] == 2
    # the results file the claims read (claims.py's load_draw)
    summary = json.loads(results.read_text())
    assert summary["baseline"] == "rampion-ramp3" and summary["tune_nbest"] == 4
    for system, names in (("dense", {"mert", "pro", *rampions}), ("sparse", {"pro", "rampion-ramp3"})):
        methods = summary["systems"][system]["methods"]
        assert set(methods) == names
        assert all(m["compared"]["replicas"] == 2 for n, m in methods.items() if n != "rampion-ramp3")
    pro = summary["systems"]["dense"]["methods"]["pro"]
    assert pro["seeded"] and len(pro["runs"]) == 4 and pro["compared"]["per_point"]
    assert pro["options"]["steps"] == 3 and pro["options"]["psi"] == 0.1
    assert not summary["systems"]["dense"]["methods"]["rampion-ramp3"]["seeded"]
    from benchmarks.reproductions import claims

    monkeypatch.setattr(claims, "RESULTS", results.parent)
    draw = claims.load_draw(results.stem, "sparse", "pro", "rampion-ramp3")
    assert len(draw.method) == 4 and len(draw.baseline) == 2 and draw.paired == 2
    # a second run finds every run done
    _run(os.path.join("reproductions", "gimpel_smith_2012.py"), argv, monkeypatch)
    assert len((tmp_path / "out" / "runs.jsonl").read_text().splitlines()) == len(rows)
    # PRO's steps: each from the last one's weights, with tune's seed of that iteration
    import numpy as np

    import mtplug
    from benchmarks.reproductions.galley_rerank import DENSE, stores
    from benchmarks.reproductions.pool_study import iterate
    from mtplug.tuning.loop import iteration_seed

    tune = stores(tmp_path / "pools" / "dense", tmp_path / "stores", 4)["tune"]
    start, opts = dict.fromkeys(DENSE, 0.1), {k: v for k, v in point1["options"].items() if k != "steps"}
    chained = iterate("pro", tune, start, 5, {**opts, "steps": 3}, 1)
    assert chained.info["steps"] == 3
    w = start
    for t in (1, 2, 3):
        w = mtplug.optimize("pro", tune, w, iteration_seed(5, t), threads=1, **opts).weights
    np.testing.assert_array_equal(chained.weights, w)


def test_eidelman_study(tmp_path, monkeypatch):
    rows, argv = _pool_study("eidelman_2012.py", tmp_path, monkeypatch, 6, "--start-points", "0", "--restarts", "1",
                             "--tune-nbest", "3", "--mb-nbest", "5")
    # Eidelman's six selections, the two MB oracles on the longer list and MERT (dense);
    # every one with both seeds
    selections = {f"mira-{h}-{f}" for h in ("hope", "lu") for f in ("fear", "mc", "pb")}
    names = selections | {"mira-mb-lu-mc", "mira-mb-hope-fear"}
    assert {r["method"] for r in rows if r["system"] == "sparse"} == names
    assert {r["method"] for r in rows if r["system"] == "dense"} == names | {"mert"}
    assert len(rows) == (2 * len(names) + 1) * 2 and {r["seed"] for r in rows} == {1, 2}
    mira = [r for r in rows if r["optimizer"] == "mira"]
    assert all(min(r["oracle_per_pass"]) >= 0 and max(r["prediction_per_pass"]) <= 100 for r in mira)
    assert all(len(r["oracle_per_pass"]) == len(r["prediction_per_pass"]) == 10 for r in mira)
    assert all(r["options"]["c"] == 0.01 for r in mira)
    assert all("oracle_per_pass" not in r for r in rows if r["optimizer"] == "mert")
    # MB: the oracle among the tune pool's 5 hypotheses, the prediction among the model's 3 best of them
    mb = next(r for r in rows if r["method"] == "mira-mb-lu-mc")
    assert mb["options"] == {"c": 0.01, "hope": "lu", "fear": "mc", "fear_list": 3}
    assert {p.name for p in (tmp_path / "out" / "sparse" / "stores").iterdir()} >= {"tune3.store", "tune5.store"}
    table = (tmp_path / "out" / "table.md").read_text()
    assert "| mira-lu-mc | 2 |" in table and "oracle BLEU, last pass" in table
    # the results file the claims name: every method against M±C on paired runs, the
    # per-pass numbers and the settings
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["baseline"] == "mira-hope-fear" and summary["mira"]["mb_nbest"] == 5
    dense = summary["systems"]["dense"]["methods"]
    assert set(dense) == names | {"mert"} and "compared" not in dense["mira-hope-fear"]
    assert dense["mira-lu-mc"]["compared"]["replicas"] == 2 and dense["mira-mb-lu-mc"]["tune_nbest"] == 5
    assert len(dense["mira-lu-pb"]["runs"][0]["prediction_per_pass"]) == 10
    # the page's table is made from the results file alone, and equals the study's own
    from benchmarks.reproductions import eidelman_2012

    monkeypatch.setattr(eidelman_2012.pool_study, "HERE", tmp_path)
    (tmp_path / "results").mkdir(exist_ok=True)
    (tmp_path / "results" / "toy.json").write_text(json.dumps(summary))
    page = eidelman_2012.table("toy")
    assert page.startswith(f"*toy: commit {summary['commit']}, {summary['date']}; tune pool's first 3 hypotheses")
    assert page.endswith(table) and "| mira-lu-mc | 2 |" in page
    mira_last = [r["oracle_per_pass"][-1] for r in dense["mira-lu-mc"]["runs"]]
    assert f"| {sum(mira_last) / len(mira_last):.2f} |" in page.split("| mira-lu-mc |")[1].split("\n")[0]
    # the same runs against LU/MC, in another results file; nothing is run again
    results = tmp_path / "results" / "lumc.json"
    _run(os.path.join("reproductions", "eidelman_2012.py"),
         [*argv, "--baseline", "mira-lu-mc", "--results", str(results)], monkeypatch)
    assert len((tmp_path / "out" / "runs.jsonl").read_text().splitlines()) == len(rows)
    lumc = json.loads(results.read_text())
    assert lumc["baseline"] == "mira-lu-mc" and "compared" in lumc["systems"]["sparse"]["methods"]["mira-hope-fear"]
    # the paper's settings: its sentence BLEU and parameter mixing, on the whole list (no MB)
    out2 = tmp_path / "paper"
    _run(os.path.join("reproductions", "eidelman_2012.py"),
         [*argv, "--out", str(out2), "--systems", "dense", "--tune-nbest", "5", "--sentence-metric", "doc-1best",
          "--shards", "2"], monkeypatch)
    paper = json.loads((out2 / "summary.json").read_text())
    assert set(paper["systems"]["dense"]["methods"]) == selections | {"mert"}
    assert paper["systems"]["dense"]["methods"]["mira-lu-mc"]["options"] == {
        "c": 0.01, "sentence_metric": "doc-1best", "shards": 2, "hope": "lu", "fear": "mc"}
    with pytest.raises(SystemExit):
        _run(os.path.join("reproductions", "eidelman_2012.py"), [*argv, "--baseline", "pro"], monkeypatch)


def test_dreyer_dong_study(tmp_path, monkeypatch):
    import argparse

    import numpy as np

    import mtplug
    from benchmarks.reproductions import claims, pool_study
    from benchmarks.reproductions import dreyer_dong_2015 as study
    from benchmarks.reproductions.galley_rerank import DENSE, stores
    from mtplug.tuning.loop import iteration_seed

    results = tmp_path / "results"
    rows, argv = _pool_study("dreyer_dong_2015.py", tmp_path, monkeypatch, 7, "--start-points", "1", "--tune-nbest", "3",
                             "--systems", "dense", "--iterations", "2", "3", "--results", str(results / "dd-k3.json"))
    # Table 2: PRO by start point and seed; APRO with Ψ = 0.1 (deterministic, keeps its start)
    # once per start point; APRO with Ψ = 1 forgets its start and the seed: one run in all
    assert sorted((r["method"], r["point"], r["seed"]) for r in rows) == sorted(
        [(m, p, s) for m in ("pro-2", "pro-3") for p in (0, 1) for s in (1, 2)]
        + [("apro-psi0.1-2", p, 1) for p in (0, 1)] + [("apro", 0, 1)])
    # PRO as the paper ran it, iterated on the pool; APRO with Ψ = 1 runs once
    pro = next(r for r in rows if r["method"] == "pro-2")
    assert pro["options"] == {"gamma": 5000, "xi": 50, "beta": 0.05, "psi": 0.1, "c": 1.0, "c_start": float("inf"),
                              "length_z": 0.0}
    assert {(r["method"], r["steps"]) for r in rows} == {("pro-2", 2), ("pro-3", 3), ("apro", 1), ("apro-psi0.1-2", 2)}
    assert next(r for r in rows if r["method"] == "apro")["options"] == {"c": 0.01, "psi": 1.0}
    assert all(0 < r["length_ratio"] < 3 for r in rows)
    table = (tmp_path / "out" / "table.md").read_text()
    assert "| apro | 1 |" in table and "test length ratio" in table
    summary = json.loads((results / "dd-k3.json").read_text())
    assert summary["baseline"] == "pro-2" and summary["tune_nbest"] == 3 and summary["iterations"] == [2, 3]
    methods = summary["systems"]["dense"]["methods"]
    assert methods["pro-3"]["options"]["steps"] == 3 and "length_ratio" in methods["apro"]["runs"][0]
    assert [(r["point"], r["seed"]) for r in methods["apro"]["runs"]] == [(0, 1)]
    assert [(r["point"], r["seed"]) for r in methods["apro-psi0.1-2"]["runs"]] == [(0, 1), (1, 1)]
    # APRO (one run) against PRO's run of point 0 and seed 1; APRO with Ψ = 0.1 against PRO on
    # one run per start point: PRO's point 0 with seed 1, point 1 with seed 2
    assert methods["apro"]["compared"] == {**methods["apro"]["compared"], "replicas": 1, "level": "none"}
    assert methods["apro-psi0.1-2"]["compared"] == {**methods["apro-psi0.1-2"]["compared"], "replicas": 2,
                                                    "level": "point"}
    assert methods["pro-3"]["compared"]["replicas"] == 4
    # the same runs against PRO at convergence: nothing runs again, another results file
    _run(os.path.join("reproductions", "dreyer_dong_2015.py"),
         [*argv, "--baseline", "pro-3", "--results", str(results / "dd-k3-conv.json")], monkeypatch)
    assert len((tmp_path / "out" / "runs.jsonl").read_text().splitlines()) == len(rows)
    monkeypatch.setattr(claims, "RESULTS", results)
    assert claims.load_draw("dd-k3-conv", "dense", "apro", "pro-3").paired == 1
    assert claims.load_draw("dd-k3", "dense", "pro-3", "pro-2").paired == 4
    # --methods: Figure 1's study cut to two of its methods runs those and its baseline only
    _run(os.path.join("reproductions", "dreyer_dong_2015.py"),
         [*argv[:-1], str(results / "dd-fig1-cut.json"), "--study", "figure1", "--methods", "pro-3-psi1-g5000-xi50-b0.05",
          "apro-psi0.5-3"], monkeypatch)
    cut = json.loads((results / "dd-fig1-cut.json").read_text())["systems"]["dense"]["methods"]
    assert set(cut) == {"pro-3", "pro-3-psi1-g5000-xi50-b0.05", "apro-psi0.5-3"}
    # PRO with Ψ = 1 forgets its start: from point 1 it draws seed s + 1000, so its four runs
    # are independent, not the two of point 0 again
    psi1 = cut["pro-3-psi1-g5000-xi50-b0.05"]
    assert [(r["point"], r["seed"]) for r in psi1["runs"]] == [(0, 1), (0, 2), (1, 1001), (1, 1002)]
    assert psi1["compared"]["replicas"] == 4 and psi1["compared"]["level"] == "seed"
    with pytest.raises(SystemExit) as bad:
        _run(os.path.join("reproductions", "dreyer_dong_2015.py"), [*argv, "--methods", "pro-99"], monkeypatch)
    assert bad.value.code == 2
    # Figure 1: the 8 sampling settings for each Ψ, APRO for each Ψ; Hopkins & May's with
    # Ψ = 0.1 and APRO with Ψ = 1 are Table 2's runs
    grid = study.methods("sparse", argparse.Namespace(study="figure1", iterations=[10, 30]))
    assert len(grid) == 3 * 8 + 3 and grid["pro-30"][1] == {**study.PRO_PAPER, "steps": 30}
    assert grid["pro-30-psi0.5-g8000-xi100-b0.03"][1] == {**study.PRO_PAPER, "psi": 0.5, "gamma": 8000, "xi": 100,
                                                         "beta": 0.03, "steps": 30}
    assert grid["apro"] == ("apro", study.APRO_PAPER, False) and grid["apro-psi0.5-30"][1]["psi"] == 0.5
    # the iterations: each from the last one's weights with tune's seed of that iteration
    data = stores(tmp_path / "pools" / "dense", tmp_path / "stores", 3)
    tune, start, opts = data["tune"], dict.fromkeys(DENSE, 0.1), dict(study.PRO_PAPER)
    chained = pool_study.iterate("pro", tune, start, 5, {**opts, "steps": 3}, 1)
    assert chained.info["steps"] == 3
    w = start
    for t in (1, 2, 3):
        w = mtplug.optimize("pro", tune, w, iteration_seed(5, t), threads=1, **opts).weights
    np.testing.assert_array_equal(chained.weights, w)
    # Ψ = 1 without a pull: an iteration does not depend on its start, so only the last runs
    free = {**opts, "psi": 1.0}
    last = pool_study.iterate("pro", tune, start, 5, {**free, "steps": 3}, 1)
    assert last.info["steps"] == 1
    np.testing.assert_array_equal(last.weights,
                                  mtplug.optimize("pro", tune, start, iteration_seed(5, 3), threads=1, **free).weights)
    # the page's tables from the results files; a file not written yet reads "not run yet"
    fig1 = {"iterations": [2, 3], "systems": {"dense": {"methods": {
        "pro-3": {"runs": [{"test": 20.0}, {"test": 21.0}]}, "apro-psi0.5-3": {"runs": [{"test": 22.0}]}}}}}
    (results / "dd-fig1.json").write_text(json.dumps(fig1))
    monkeypatch.setattr(study, "RESULTS", results)
    monkeypatch.setattr(study, "TABLE2", ["dd-k3", "dd-none"])
    monkeypatch.setattr(study, "LOOPS", [])
    monkeypatch.setattr(study, "FIGURE1", ["dd-fig1", "dd-none"])
    lengths = study.table("lengths")
    assert "| dd-k3 | dense | apro | 1 |" in lengths and "| dd-k3 | dense | pro-3 | 4 |" in lengths
    assert "| dd-none | | | | | not run yet |" in lengths
    assert "| dd-k3 | dense | 3 |" in study.table("runtime")
    figure = study.table("figure1")
    assert "| dd-fig1 | dense | 5000 | 50 | 0.05 | 20.50 ± 0.71 | not run | not run |" in figure
    assert "| dd-fig1 | dense | APRO | | | not run | 22.00 ± 0.00 | not run |" in figure
    assert "| dd-fig1 | dense | 8000 |" not in figure     # no Ψ of that setting ran
    assert all(line.count("|") == 9 for line in figure.splitlines())


def test_defaults_evidence_results(tmp_path, monkeypatch):
    # the defaults beside the ones they replaced: every row of defaults.jsonl in a results
    # file, the page's table with each variant's tuning-store BLEU against its default
    import numpy as np

    from benchmarks.reproductions import defaults_evidence
    from benchmarks.reproductions.galley_rerank import DENSE

    _tiny_pools(tmp_path / "pools", np.random.default_rng(11))
    (tmp_path / "w0").write_text("".join(f"{f} {-0.1 if i % 2 else 0.1}\n" for i, f in enumerate(DENSE)))
    results = tmp_path / "results" / "defaults-toy.json"
    argv = ["--pools", str(tmp_path / "pools"), "--w0", str(tmp_path / "w0"), "--out", str(tmp_path / "out"),
            "--seeds", "1", "2", "--tune-nbest", "3", "--threads", "1", "--optimizers", "pro", "apro",
            "--results", str(results)]
    _run(os.path.join("reproductions", "defaults_evidence.py"), argv, monkeypatch)
    _run(os.path.join("reproductions", "defaults_evidence.py"),
         [*argv, "--set", "pro.c_start=inf", "pro.length_z=0", "apro.c=1"], monkeypatch)
    rows = [json.loads(x) for x in (tmp_path / "out" / "defaults.jsonl").read_text().splitlines()]
    # PRO by seed; APRO (deterministic) once per system and setting
    assert sorted((r["system"], r["name"], r["seed"]) for r in rows) == sorted(
        [(s, n, seed) for s in ("sparse", "dense") for n in ("pro", "pro+c_start=inf+length_z=0") for seed in (1, 2)]
        + [(s, n, 1) for s in ("sparse", "dense") for n in ("apro", "apro+c=1")])
    study = json.loads(results.read_text())
    methods = study["systems"]["dense"]["methods"]
    assert methods["pro+c_start=inf+length_z=0"]["changed"] == ["c_start=inf", "length_z=0"]
    assert methods["pro"]["changed"] == [] and methods["apro+c=1"]["optimizer"] == "apro"
    assert [r["seed"] for r in methods["pro"]["runs"]] == [1, 2]
    assert all(0 <= r[k] <= 100 for m in methods.values() for r in m["runs"] for k in ("tune", "dev", "test"))
    # the page's table from the results file alone
    monkeypatch.setattr(defaults_evidence, "HERE", tmp_path)
    (tmp_path / "results").mkdir(exist_ok=True)
    page = defaults_evidence.table("defaults-toy")
    gap = np.mean([r["tune"] for r in methods["pro"]["runs"]]) - np.mean(
        [r["tune"] for r in methods["pro+c_start=inf+length_z=0"]["runs"]])
    assert "| dense | pro+c_start=inf+length_z=0 | 2 |" in page and f"| {gap:+.2f} |" in page
    assert "| dense | pro | 2 |" in page and page.count("| – |") == 4
    assert page.endswith((tmp_path / "out" / "defaults.md").read_text())
    assert "Not run yet" in defaults_evidence.table("defaults-none")


def test_defaults_evidence_row_names():
    # a row name's changes, a value holding "+" kept whole; MERT as run there draws nothing
    from benchmarks.reproductions.defaults_evidence import OPTIMIZERS, deterministic, row_options

    assert row_options("mira+sentence_metric=bleu+1") == ("mira", {"sentence_metric": "bleu+1"})
    assert row_options("pro+psi=0.5+c_start=inf") == ("pro", {"psi": 0.5, "c_start": float("inf")})
    assert deterministic(*row_options("mert")) and deterministic("apro", {}) and deterministic("rampion", {})
    assert not deterministic(*row_options("mert+restarts=5")) and not deterministic("pro", {})
    assert OPTIMIZERS["mert"] == {"restarts": 0, "directions": "expbleu"}
