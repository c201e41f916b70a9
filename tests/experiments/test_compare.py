"""``mtplug compare`` (issue 21): an optimizer study from one YAML file. The bundled example pool
(60 sentences x 100 hypotheses) is split into a tuning set (its first 30 sentences) and a test set
(the other 30): as n-best lists for pool-mode studies, and as the stand-in decoder's sources for
decoder-mode ones (as tests/tune/test_test_input.py does)."""

from __future__ import annotations

import gzip
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from mtplug.cli import main
from mtplug.experiments.study_config import TEMPLATE, load_study, random_start
from mtplug.formats.mert_weights import read_init_opt
from mtplug.optimizers.mert import Mert
from mtplug.tuning.loop import read_state
from tests.tune.test_tune import INI, MOSES_STANDIN, TOY

HALF = 30
FAST_EVAL = {"boot_samples": 200, "ar_shuffles": 200}


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    """dev.nbest/test.nbest (the pool's sentences 0-29 and 30-59, renumbered from 0), dev.ref,
    test.ref, init.opt; all.src, dev.src, test.src and moses.ini for the stand-in decoder."""
    d = tmp_path_factory.mktemp("compare-data")
    parts: dict[str, list[str]] = {"dev.nbest": [], "test.nbest": []}
    with gzip.open(TOY / "run1.best100.out.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            sid, rest = line.split(" ||| ", 1)
            name = "dev.nbest" if int(sid) < HALF else "test.nbest"
            parts[name].append(f"{int(sid) % HALF} ||| {rest}")
    refs = (TOY / "ref.0").read_text(encoding="utf-8").splitlines()
    sources = [f"s{i}" for i in range(2 * HALF)]
    for name, lines in (("all.src", sources), ("dev.src", sources[:HALF]), ("test.src", sources[HALF:]),
                        ("dev.ref", refs[:HALF]), ("test.ref", refs[HALF:])):
        (d / name).write_text("".join(t + "\n" for t in lines), encoding="utf-8")
    for name, lines in parts.items():
        (d / name).write_text("".join(lines), encoding="utf-8")
    (d / "init.opt").write_bytes((TOY / "run1.init.opt").read_bytes())
    (d / "moses.ini").write_text(INI)
    return d


def pool_study(d: Path, workdir: str, **changes) -> dict:
    study = {"workdir": str(d / workdir), "mode": "pool",
             "pool": {"nbest": [str(d / "dev.nbest")], "ref": [str(d / "dev.ref")], "weights": str(d / "init.opt"),
                      "test_nbest": [str(d / "test.nbest")], "test_ref": [str(d / "test.ref")]},
             "optimizers": {"mert": {"optimizer": "mert", "options": {"restarts": 2}}, "apro": {"optimizer": "apro"},
                            "rampion": None},
             "replicas": {"seeds": 2, "start_points": 2}, "evaluate": dict(FAST_EVAL)}
    study.update(changes)
    return study


def decoder_study(d: Path, workdir: str, **changes) -> dict:
    study = {"name": "toy", "workdir": str(d / workdir), "mode": "decoder",
             "tune": {"decoder": "moses",
                      "decoder_bin": shlex.join([sys.executable, str(MOSES_STANDIN), "-standin-source",
                                                 str(d / "all.src")]),
                      "decoder_config": str(d / "moses.ini"), "input": str(d / "dev.src"), "ref": [str(d / "dev.ref")],
                      "iterations": 2, "nbest_size": 10},
             "test": {"input": str(d / "test.src"), "ref": str(d / "test.ref")},
             "optimizers": {"mert": {"options": {"restarts": 2}}, "apro": {}},
             "replicas": {"seeds": 2}, "evaluate": dict(FAST_EVAL)}
    study.update(changes)
    return study


def write_yaml(path: Path, study: dict) -> Path:
    path.write_text(yaml.safe_dump(study, sort_keys=False), encoding="utf-8")
    return path


def compare(path: Path, capsys, *flags) -> str:
    """Run mtplug compare quietly; its stdout (the report)."""
    rc = main(["compare", "-q", str(path), *flags])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return out


@pytest.fixture
def optimize_calls(monkeypatch):
    """The number of optimizer runs so far (MERT's, PRO's, APRO's and RAMPION's), in this process."""
    from mtplug.optimizers.apro import Apro
    from mtplug.optimizers.pro import Pro
    from mtplug.optimizers.rampion import Rampion

    count = [0]
    for cls in (Mert, Pro, Apro, Rampion):
        original = cls.optimize

        def counted(self, *args, _original=original, **kwargs):
            count[0] += 1
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(cls, "optimize", counted)
    return lambda: count[0]


@pytest.fixture
def decoder_calls(tmp_path, monkeypatch):
    """The number of stand-in decoder processes started so far (tests/integrations/standin_decoder.py's
    STANDIN_KILL_PARENT hook with a call number never reached)."""
    monkeypatch.setenv("STANDIN_KILL_PARENT", f"{tmp_path}/call:{10**9}")
    return lambda: len(list(tmp_path.glob("call.*")))


@pytest.fixture(scope="module")
def pool_run(data):
    """The pool study of :func:`pool_study` run once: (study file, its report on stdout)."""
    import contextlib
    import io

    path = write_yaml(data / "pool.yaml", pool_study(data, "pool-a"))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["compare", "-q", str(path)]) == 0
    return path, out.getvalue()


# ------------------------------------------------------------------ pool mode
def test_pool_study_matches_evaluate_rerank_and_optimize(data, pool_run, tmp_path, capsys):
    path, printed = pool_run
    wd = data / "pool-a"
    ids = ["s1-p0", "s1-p1", "s2-p0", "s2-p1"]
    assert printed == (wd / "report.txt").read_text(encoding="utf-8")
    doc = json.loads((wd / "report.json").read_text(encoding="utf-8"))
    assert [s["name"] for s in doc["report"]["systems"]] == ["mert", "apro", "rampion"]

    # the report's numbers are mtplug evaluate's on the replicas' test translations
    runs = [[str(wd / "runs" / o / i / "test.out") for i in ids] for o in ("mert", "apro", "rampion")]
    assert main(["evaluate", "--ref", str(data / "test.ref"), "--hyps-baseline", *runs[0], "--hyps-apro", *runs[1],
                 "--hyps-rampion", *runs[2], "--boot-samples", "200", "--ar-shuffles", "200", "--json", "-"]) == 0
    evaluated = json.loads(capsys.readouterr().out)
    for ours, theirs in zip(doc["report"]["systems"], evaluated["systems"]):
        assert ours["scores"] == theirs["scores"]
    assert doc["report"]["signature"] == evaluated["signature"]

    for optimizer, i in [("mert", i) for i in ids] + [("apro", "s2-p1"), ("rampion", "s1-p1")]:
        folder = wd / "runs" / optimizer / i
        result = json.loads((folder / "result.json").read_text(encoding="utf-8"))
        assert (result["optimizer"], result["replica"]) == (optimizer, i)
        # the dev score is the one optimize reports for these weights, on 0-100 as every score
        assert result["score_scale"] == 100 and 1 < result["dev_score"] < 100 and 1 < result["test_score"] < 100
        # the test translations are mtplug rerank's with the replica's weights
        rerank = tmp_path / f"{optimizer}-{i}.1best"
        assert main(["rerank", "-q", "--nbest", str(data / "test.nbest"), "--weights",
                     str(folder / "tuned.init.opt"), "--output", str(rerank)]) == 0
        assert rerank.read_bytes() == (folder / "test.out").read_bytes()
        # the weights are mtplug optimize's with the replica's seed and start weights
        start = folder / "start.init.opt" if result["start_point"] else data / "init.opt"
        out = tmp_path / f"{optimizer}-{i}.opt"
        options = ["--restarts", "2"] if optimizer == "mert" else []
        assert main(["optimize", optimizer, "-q", "--nbest", str(data / "dev.nbest"), "--ref",
                     str(data / "dev.ref"), "--weights", str(start), "--seed", str(result["seed"]), *options,
                     "--output", str(out)]) == 0
        assert out.read_bytes() == (folder / "tuned.init.opt").read_bytes()
        assert read_init_opt(str(out)).start.tolist() == [v for _, v in result["weights"]]
    # start point 1 is the same for every optimizer; point 0 is init.opt
    assert (wd / "runs/mert/s1-p1/start.init.opt").read_bytes() == (wd / "runs/apro/s2-p1/start.init.opt").read_bytes()
    assert not (wd / "runs/mert/s1-p0/start.init.opt").exists()

    # the study's answers: APRO and RAMPION ignore their seed; the per-replica table
    det = {d["optimizer"]: d for d in doc["determinism"]}
    assert det["apro"]["seeds_identical"] and det["rampion"]["seeds_identical"]
    assert "apro: the 2 seeds gave identical weights from each of the 2 start points" in printed
    assert det["rampion"]["points_identical"] is False and det["rampion"]["point_diff"] > 0
    spread = doc["spread"]
    assert spread["metric"] == "bleu" and [e["optimizer"] for e in spread["ranking"]] == sorted(
        ("mert", "apro", "rampion"), key=lambda o: next(s for s in doc["report"]["systems"] if s["name"] == o)
        ["scores"]["bleu"]["s_dev"])
    assert spread["text"] in printed
    tsv = (wd / "replicas.tsv").read_text(encoding="utf-8").splitlines()
    assert tsv[0] == "optimizer\talgorithm\treplica\tseed\tstart_point\tdev_bleu\ttest_bleu\tseconds"
    assert [row.split("\t")[:5] for row in tsv[1:5]] == [["mert", "mert", i, i[1], i[-1]] for i in ids]
    assert (wd / "replicas.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert r"\begin{tabular}" in (wd / "report.tex").read_text(encoding="utf-8")


def test_results_written_with_fractions_are_read_on_0_100(data, pool_run, capsys):
    """A replica's result.json from before mtplug's scores were 0-100 (no score_scale, the
    scores as fractions) counts as done and enters the report scaled: the same report."""
    import shutil

    path, printed = pool_run
    old = data / "pool-old"
    shutil.copytree(data / "pool-a", old)
    for result_path in sorted(old.glob("runs/*/*/result.json")):
        result = json.loads(result_path.read_text(encoding="utf-8"))
        assert result.pop("score_scale") == 100
        result["dev_score"] /= 100
        result["test_score"] /= 100
        result_path.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    for name in ("report.json", "report.txt", "replicas.tsv"):
        (old / name).unlink()
    assert compare(path, capsys, "--workdir", str(old)) == printed
    for name in ("report.json", "replicas.tsv"):
        assert (old / name).read_bytes() == (data / "pool-a" / name).read_bytes()


def test_same_study_in_another_workdir_and_on_dask_gives_identical_reports(data, pool_run, capsys):
    path, printed = pool_run
    compare(path, capsys, "--workdir", str(data / "pool-b"))
    compare(path, capsys, "--workdir", str(data / "pool-dask"), "--scheduler", "local:2")
    report = (data / "pool-a" / "report.json").read_bytes()
    assert (data / "pool-b" / "report.json").read_bytes() == report
    assert (data / "pool-dask" / "report.json").read_bytes() == report
    for folder in sorted((data / "pool-a" / "runs").glob("*/*")):
        other = data / "pool-dask" / "runs" / folder.parent.name / folder.name
        assert (other / "tuned.init.opt").read_bytes() == (folder / "tuned.init.opt").read_bytes()
        assert (other / "test.out").read_bytes() == (folder / "test.out").read_bytes()


def test_resume_runs_only_missing_replicas(data, tmp_path, optimize_calls, capsys):
    study = pool_study(data, str(tmp_path / "wd"), replicas={"seeds": 1})
    path = write_yaml(tmp_path / "study.yaml", study)
    compare(path, capsys)
    assert optimize_calls() == 3
    first = (tmp_path / "wd" / "report.json").read_bytes()
    compare(path, capsys)                      # everything finished: nothing runs again
    assert optimize_calls() == 3
    assert (tmp_path / "wd" / "report.json").read_bytes() == first
    study["replicas"] = {"seeds": 2}           # one more seed: one more replica per optimizer
    study["optimizers"]["pro"] = {}            # and a new optimizer: two replicas
    compare(write_yaml(path, study), capsys)
    assert optimize_calls() == 3 + 3 + 2
    doc = json.loads((tmp_path / "wd" / "report.json").read_text(encoding="utf-8"))
    assert [s["name"] for s in doc["report"]["systems"]] == ["mert", "apro", "rampion", "pro"]
    assert doc["report"]["n_replicas"] == 2
    # the evaluate settings change the report only
    study["evaluate"] = {"boot_samples": 100, "ar_shuffles": 100, "metric": ["bleu"]}
    compare(write_yaml(path, study), capsys)
    assert optimize_calls() == 8


def test_changed_study_is_an_error_naming_the_key(data, tmp_path, optimize_calls, capsys):
    study = pool_study(data, str(tmp_path / "wd"), replicas={"seeds": 1, "start_points": 2})
    path = write_yaml(tmp_path / "study.yaml", study)
    compare(path, capsys)
    results = {p: p.read_bytes() for p in (tmp_path / "wd").glob("runs/*/*/result.json")}
    calls = optimize_calls()
    study["optimizers"]["mert"]["options"]["restarts"] = 3
    write_yaml(path, study)
    line = path.read_text(encoding="utf-8").splitlines().index("      restarts: 3") + 1
    assert main(["compare", "-q", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mtplug: error: {path}:{line}: changed since replica mert s1-p0 ran: "
                          "optimizers.mert.options.restarts 2 -> 3; 2 replica(s)")
    assert err.count("\n") == 1
    # a different start_seed concerns the random start points only
    study["optimizers"]["mert"]["options"]["restarts"] = 2
    study["replicas"]["start_seed"] = 5
    assert main(["compare", "-q", str(write_yaml(path, study))]) == 2
    assert "changed since replica mert s1-p1 ran: replicas.start_seed 0 -> 5; 3 replica(s)" in capsys.readouterr().err
    assert optimize_calls() == calls
    assert {p: p.read_bytes() for p in (tmp_path / "wd").glob("runs/*/*/result.json")} == results
    # replicas without results (failed, or their results deleted) run again with the new settings
    study["optimizers"]["mert"]["options"]["restarts"] = 3
    study["replicas"]["start_seed"] = 0
    for result in (tmp_path / "wd" / "runs" / "mert").glob("*/result.json"):
        result.unlink()
    compare(write_yaml(path, study), capsys)
    assert optimize_calls() == calls + 2
    assert json.loads((tmp_path / "wd/runs/mert/s1-p1/fingerprint.json").read_text())[
        "optimizers.mert.options.restarts"] == 3


def test_random_start_points_keep_signs_and_fixed_weights():
    weights = [("LM0_0", 0.5), ("WordPenalty0_0", -1.0), ("Distortion0_0", 0.0), ("UnknownWordPenalty0_0", 1.0)]
    points = [random_start(weights, p, 7, fixed=["UnknownWordPenalty0"]) for p in (1, 2)]
    assert points[0] == random_start(weights, 1, 7, fixed=["UnknownWordPenalty0"])   # a function of (seed, p)
    assert points[0] != points[1] and points[0] != random_start(weights, 1, 8, fixed=["UnknownWordPenalty0"])
    for point in points:
        values = dict(point)
        assert 0 <= values["LM0_0"] <= 1.0 and -2.0 <= values["WordPenalty0_0"] <= 0
        assert -0.75 <= values["Distortion0_0"] <= 0.75    # [-s, s], s = the mean |w| of the drawn 0.5 and -1
        assert values["UnknownWordPenalty0_0"] == 1.0
    rng = np.random.default_rng(np.random.SeedSequence([7, 1]))
    assert [v for _, v in points[0][:3]] == rng.uniform([0, -2, -0.75], [1, 0, 0.75]).tolist()



def test_normal_start_points_are_gimpel_and_smiths():
    weights = [("LM0_0", 0.5), ("WordPenalty0_0", -1.0), ("Distortion0_0", 0.0), ("UnknownWordPenalty0_0", 1.0)]
    point = random_start(weights, 1, 7, fixed=["UnknownWordPenalty0"], distribution="normal")
    assert point == random_start(weights, 1, 7, fixed=["UnknownWordPenalty0"], distribution="normal")
    assert point != random_start(weights, 1, 7, fixed=["UnknownWordPenalty0"])
    rng = np.random.default_rng(np.random.SeedSequence([7, 1]))
    # N(w, (w/2)^2) for every drawn weight: a w of 0 stays 0, a fixed one is not drawn
    assert [v for _, v in point] == rng.normal([0.5, -1.0, 0.0], [0.25, 0.5, 0.0]).tolist() + [1.0]
    assert dict(point)["Distortion0_0"] == 0.0
    with pytest.raises(ValueError, match="distribution must be one of uniform, normal"):
        random_start(weights, 1, 7, distribution="gauss")


def test_start_distribution_reaches_the_replicas_and_their_fingerprints(data, tmp_path, capsys):
    study = pool_study(data, str(tmp_path / "wd"), optimizers={"mert": {"optimizer": "mert"}})
    study["replicas"].update(seeds=1, start_distribution="normal")
    compare(write_yaml(tmp_path / "study.yaml", study), capsys)
    runs = tmp_path / "wd" / "runs" / "mert"
    assert "replicas.start_distribution" not in json.loads((runs / "s1-p0" / "fingerprint.json").read_text())
    assert json.loads((runs / "s1-p1" / "fingerprint.json").read_text())["replicas.start_distribution"] == "normal"
    # point 1 drawn from N(w, (w/2)^2) around init.opt's weights, with start_seed 0
    w = [float(v) for v in (data / "init.opt").read_text().split("\n")[0].split()]
    drawn = [float(v) for v in (runs / "s1-p1" / "start.init.opt").read_text().split("\n")[0].split()]
    expected = [v for _, v in random_start([(f"F{i}", v) for i, v in enumerate(w)], 1, 0, distribution="normal")]
    assert drawn == pytest.approx(expected, rel=1e-12, abs=0)


# ------------------------------------------------------------------ decoder mode
def test_decoder_study_end_to_end_and_resume(data, tmp_path, decoder_calls, capsys):
    path = write_yaml(tmp_path / "study.yaml", decoder_study(data, str(tmp_path / "wd")))
    compare(path, capsys)
    calls = decoder_calls()
    # 4 replicas x 2 iterations x (tuning set + test set)
    assert calls == 4 * 2 * 2
    wd = tmp_path / "wd"
    doc = json.loads((wd / "report.json").read_text(encoding="utf-8"))
    assert doc["study"] == "toy" and doc["mode"] == "decoder"
    for entry in doc["replicas"]:
        folder = wd / "runs" / entry["optimizer"] / entry["replica"]
        tuned = folder / "tune"
        state = read_state(str(tuned))
        assert state["fingerprint"]["seed"] == entry["seed"]
        assert (folder / "test.out").read_bytes() == (tuned / "final.test.out").read_bytes()
        best = state["best"]
        assert entry["dev_score"] == best["bleu"]
        assert entry["test_score"] == state["history"][best["iteration"] - 1]["test_bleu"]
        result = json.loads((folder / "result.json").read_text(encoding="utf-8"))
        assert result["weights"] == best["weights"]
    report = {s["name"]: s for s in doc["report"]["systems"]}
    assert report["mert"]["files"] == [f"runs/mert/s{s}-p0/test.out" for s in (1, 2)]
    assert next(d for d in doc["determinism"] if d["optimizer"] == "apro")["seeds_identical"]
    assert report["apro"]["scores"]["bleu"]["s_dev"] == 0.0
    # a second run decodes nothing; a random start point decodes from a copy of moses.ini
    compare(path, capsys)
    assert decoder_calls() == calls
    study = decoder_study(data, str(wd), optimizers={"apro": {}},
                          replicas={"seeds": 1, "start_points": 2, "fixed": ["UnknownWordPenalty0"]})
    compare(write_yaml(path, study), capsys)
    assert decoder_calls() == calls + 2 * 2
    ini = (wd / "runs/apro/s1-p1/start.moses.ini").read_text(encoding="utf-8")
    point = dict(random_start([(n, v) for n, v in read_ini_weights(data / "moses.ini")], 1, 0,
                              ["UnknownWordPenalty0"]))
    assert f"LM0= {point['LM0_0']!r}   # language model" in ini and "UnknownWordPenalty0= 1\n" in ini
    assert read_state(str(wd / "runs/apro/s1-p1/tune"))["fingerprint"]["config"] == str(
        wd / "runs/apro/s1-p1/start.moses.ini")


def read_ini_weights(path: Path) -> list:
    from mtplug.formats.moses_ini import read_moses_ini

    return list(read_moses_ini(str(path)).items())


def test_interrupted_decoder_replica_resumes_its_tuning_run(data, tmp_path, capsys):
    path = write_yaml(tmp_path / "study.yaml", decoder_study(data, str(tmp_path / "wd"), optimizers={"mert": {}},
                                                             replicas={"seeds": 1}))
    env = {**os.environ, "STANDIN_KILL_PARENT": f"{tmp_path}/call:4"}   # killed in the 2nd iteration
    p = subprocess.run([sys.executable, "-m", "mtplug", "compare", "-q", str(path)], env=env, capture_output=True)
    assert p.returncode == -9
    folder = tmp_path / "wd" / "runs" / "mert" / "s1-p0"
    assert read_state(str(folder / "tune"))["completed"] == 1 and not (folder / "result.json").exists()
    rc = main(["compare", str(path)])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "mert s1-p0: resuming after iteration 1" in err
    assert read_state(str(folder / "tune"))["completed"] == 2 and (folder / "result.json").exists()


# ------------------------------------------------------------------ the file
def test_write_config_template_round_trip(data, tmp_path, capsys):
    assert main(["compare", "--write-config"]) == 0
    text = capsys.readouterr().out
    assert text == TEMPLATE
    template = yaml.safe_load(text)
    assert template["mode"] == "decoder" and template["replicas"]["seeds"] == 3
    assert list(template["optimizers"]) == ["mert", "pro", "apro", "rampion"]
    ours = decoder_study(data, str(tmp_path / "wd"))
    template["tune"].update(ours["tune"])
    template["test"] = ours["test"]
    template.update(workdir=ours["workdir"], replicas={**template["replicas"], "seeds": 1})
    study = load_study(str(write_yaml(tmp_path / "study.yaml", template)))
    assert [o.name for o in study.optimizers] == ["mert", "pro", "apro", "rampion"]
    assert study.tune["mert"].optimizer_options == {"restarts": 20} and study.tune["mert"].jobs == 2
    assert study.fixed == ["UnknownWordPenalty0"] and study.metrics == ["bleu", "ter", "length"]
    # what does not change a replica's result stays out of its fingerprint: a study made
    # before --decoder-timeout existed resumes, and changing it or jobs reruns nothing
    keys = study.fingerprint(study.replicas()[0])
    assert "tune.decoder_timeout" not in keys and "tune.jobs" not in keys and "tune.nbest" in keys
    # the commented pool section, uncommented, is a pool-mode study
    lines = [ln[2:] for ln in text.splitlines() if ln.startswith(("# pool:", "#   "))]
    pool = yaml.safe_load("\n".join(lines))["pool"]
    pool.update(pool_study(data, "x")["pool"])
    for key in ("tune", "test"):
        del template[key]
    template.update(mode="pool", pool=pool)
    assert load_study(str(write_yaml(tmp_path / "pool.yaml", template))).pool["metric"] == "bleu"


ERRORS = [
    # (change to the pool study, the line's key, what the message says)
    (lambda s: s.update(optimzers=s.pop("optimizers")), "optimzers", "unknown key 'optimzers' (did you mean "
                                                                     "'optimizers'?)"),
    (lambda s: s["optimizers"].update(mrt={}), "mrt", "optimizers: mrt: unknown optimizer 'mrt' (did you mean "
                                                      "'mert'?)"),
    (lambda s: s["optimizers"]["mert"]["options"].update(passes=3), "passes",
     "optimizers: mert: options: 'passes' is not an option of mert"),
    (lambda s: s["optimizers"]["mert"]["options"].update(restarts="many"), "restarts",
     "optimizers: mert: options: restarts must be an integer, got 'many'"),
    (lambda s: s["optimizers"]["mert"]["options"].update(restarts=-1), "options", "optimizers: mert: mert: "),
    (lambda s: s["replicas"].update(seeds=0), "seeds", "replicas: seeds must be an integer >= 1, got 0"),
    (lambda s: s.update(tune={"iterations": 3}), "tune", "tune: belongs to a decoder-mode study, but mode is pool "
                                                         "(pool and decoder keys mixed)"),
    (lambda s: s["pool"].update(test_nbest=["missing.nbest"]), "test_nbest",
     "pool: test_nbest: no such file missing.nbest"),
    (lambda s: s.update(baseline="pro"), "baseline", "baseline must name one of the optimizers"),
    (lambda s: s["evaluate"].update(metric=["bleu", "blue"]), "metric", "evaluate: metric: blue: "),
    (lambda s: s["pool"].update(metric="ext:x.scores"), "metric", "pool: metric: ext: scores belong"),
    (lambda s: s["replicas"].update(start_distribution="gauss"), "start_distribution",
     "replicas: start_distribution must be one of uniform, normal"),
]


DECODER_ERRORS = [
    (lambda s: s["tune"].update(seed=3), "seed", "tune: seed is set by the study: replicas: seeds"),
    (lambda s: s["tune"].update(iterations=0), "iterations", "tune: iterations must be an integer >= 1, got 0"),
    (lambda s: s["tune"].update(itrations=3), "itrations", "tune: unknown key 'itrations' (did you mean "
                                                           "'iterations'?)"),
    (lambda s: s["tune"].update(decoder_bin="no-such-decoder -x"), "decoder_bin",
     "tune: decoder_bin: cannot find the program 'no-such-decoder'"),
    (lambda s: s["optimizers"].update(none={}), "none", "optimizers: none: unknown optimizer 'none'"),
    (lambda s: s["replicas"].update(fixed=["LM9"]), "fixed", "replicas: fixed: LM9 name(s) no start weight"),
    (lambda s: s.update(pool={"nbest": []}), "pool", "pool: belongs to a pool-mode study, but mode is decoder"),
    (lambda s: s["tune"].update(decoder="cdec"), "tune", "tune: missing key(s) weights"),
]


STUDIES = {"pool": pool_study, "decoder": decoder_study}


@pytest.mark.parametrize("mode, change, key, message", [("pool", *e) for e in ERRORS]
                         + [("decoder", *e) for e in DECODER_ERRORS])
def test_study_errors_name_the_file_and_line(data, tmp_path, mode, change, key, message, capsys):
    study = STUDIES[mode](data, str(tmp_path / "wd"))
    change(study)
    path = write_yaml(tmp_path / "study.yaml", study)
    line = next(i for i, t in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                if t.strip().startswith(key + ":"))
    assert main(["compare", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mtplug: error: {path}:{line}: {message}"), err
    assert err.count("\n") == 1
    assert not (tmp_path / "wd").exists()


def test_output_places_and_flags(data, tmp_path, capsys):
    path = write_yaml(tmp_path / "study.yaml", pool_study(data, str(tmp_path / "wd")))
    (tmp_path / "file").write_text("x")
    assert main(["compare", str(path), "--workdir", str(tmp_path / "file")]) == 2
    assert "workdir must be a directory" in capsys.readouterr().err
    (tmp_path / "wd" / "report.txt").mkdir(parents=True)
    assert main(["compare", str(path)]) == 2
    assert "report.txt: is a directory" in capsys.readouterr().err
    assert not (tmp_path / "wd" / "pool.npz").exists()
    assert main(["compare"]) == 2
    assert "no study file" in capsys.readouterr().err
    assert main(["compare", str(path), "--write-config"]) == 2
    capsys.readouterr()


def test_pool_init_that_names_no_feature_is_an_error(data, tmp_path, capsys):
    """Issue 37, defect 1: compare's init follows optimize --init's rule: cdec names on the Moses
    pool are one line naming the init file, exit 2, before any replica runs."""
    init = tmp_path / "cdec.weights"
    init.write_text("LanguageModel 0.5\nWordPenalty -1\n")
    study = pool_study(data, str(tmp_path / "wd"))
    study["pool"]["weights"] = str(init)
    assert main(["compare", "-q", str(write_yaml(tmp_path / "study.yaml", study))]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mtplug: error: {init}: none of its 2 weight(s) names a feature of the n-best lists "
                          "(it gives LanguageModel, WordPenalty; expected names such as "), err
    assert err.count("\n") == 1
