"""``mtplug tune`` end to end with the stand-in decoder (mtplug/tuning/standin.py; for Moses through
tests/integrations/standin_decoder.py, which adds a kill hook) re-ranking the moses-toy pool (60 × 100)."""

from __future__ import annotations

import json
import os
import random
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mtplug.cli import main
from mtplug.tuning.loop import read_state

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
MOSES_STANDIN = REPO / "tests" / "integrations" / "standin_decoder.py"
TOY = REPO / "mtplug" / "data" / "example"
START_BLEU = 26.5757  # Moses's BLEU of the pool's 1-best at the start weights (0.265757 on its 0-1 scale)
N_SENT = 60

INI = """\
# toy moses.ini
[input-factors]
0

[weight]
Distortion0= 0.3
LM0= 0.5   # language model
WordPenalty0= -1
PhrasePenalty0= 0.2
TranslationModel0= 0.2 0.2 0.2 0.2
UnknownWordPenalty0= 1
"""
CDEC_WEIGHTS = ("Distortion 0.3\nLanguageModel 0.5\nWordPenalty -1\nPhrasePenalty 0.2\n"
                "PhraseModel_0 0.2\nPhraseModel_1 0.2\nPhraseModel_2 0.2\nPhraseModel_3 0.2\n")
FAST = {"mert": ["--restarts", "2"], "pro": [], "apro": [], "mira": ["--passes", "3"],
        "kbmira": ["--passes", "10"], "rampion": []}


def make_system(tmp_path: Path) -> Path:
    """Files of a toy tuning set in ``tmp_path``: dev.src (unique lines), moses.ini, cdec.ini,
    weights (the ``system`` fixture of tests/tune/conftest.py)."""
    (tmp_path / "dev.src").write_text("".join(f"s{i}\n" for i in range(N_SENT)))
    (tmp_path / "moses.ini").write_text(INI)
    (tmp_path / "cdec.ini").write_text("formalism=scfg\n")
    (tmp_path / "weights").write_text(CDEC_WEIGHTS)
    return tmp_path


def moses_args(sysdir, workdir, *extra, optimizer="mert", iterations=3, nbest=10):
    src = sysdir / "dev.src"
    return ["tune", "-q", "--decoder", "moses",
            "--decoder-bin", shlex.join([sys.executable, str(MOSES_STANDIN), "-standin-source", str(src)]),
            "--decoder-config", str(sysdir / "moses.ini"), "--input", str(src), "--ref", str(TOY / "ref.0"),
            "--optimizer", optimizer, "--iterations", str(iterations), "--nbest-size", str(nbest),
            "--workdir", str(workdir), "--seed", "3", *FAST[optimizer], *extra]


def run(args, capsys):
    rc = main(args)
    out, err = capsys.readouterr()
    assert rc == 0, err
    return json.loads(out.strip().splitlines()[-1])


def weight_lines_removed(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    start = lines.index("[weight]\n")
    return lines[:start + 1] + [ln for ln in lines[start + 1:] if ln.startswith("UnknownWordPenalty0")]


@pytest.mark.parametrize("optimizer", ["mert", "pro", "apro", "mira", "kbmira", "rampion"])
def test_moses_loop_improves_and_converges(system, optimizer, capsys):
    wd = system / "wd"
    # 20: MIRA with pseudo-document BLEU keeps climbing until iteration 13 (0.2658 -> 0.4548)
    summary = run(moses_args(system, wd, "--patience", "2", optimizer=optimizer, iterations=20), capsys)
    hist = summary["history"]
    bleus = [h["bleu"] for h in hist]
    assert bleus[0] == pytest.approx(START_BLEU, abs=5e-5)    # the state's scores are on 0-100
    assert max(bleus) > START_BLEU + 10, bleus
    # converged: stopped by a rule, not by the iteration limit
    assert summary["stop"] in ("no new hypotheses", "no weight changed by 1e-05 or more",
                               "no better BLEU for 2 iterations"), (summary["stop"], bleus)
    # the store grows and keeps every hypothesis
    assert [h["hypotheses"] for h in hist] == sorted(h["hypotheses"] for h in hist)
    assert hist[0]["hypotheses"] == N_SENT * 10
    # DIR/final holds the weights that decoded the best BLEU (the first of equals)
    best = bleus.index(max(bleus)) + 1
    decoded = json.loads((wd / f"iter{best:03d}" / "weights.json").read_text())["start"]
    state = read_state(str(wd))
    assert state["best"]["iteration"] == best and state["best"]["weights"] == decoded
    final = (wd / "final").read_text()
    assert weight_lines_removed(final) == weight_lines_removed(INI)  # only tuned values differ
    dense = {}
    for line in final.splitlines()[final.splitlines().index("[weight]") + 1:]:
        label, *values = line.split("#")[0].split()
        dense.update({f"{label[:-1]}_{k}": float(v) for k, v in enumerate(values)})
    assert {n: v for n, v in decoded if n in dense} == dense
    for n in range(1, summary["iterations"] + 1):
        assert (wd / f"iter{n:03d}" / "nbest.out").exists()
        assert (wd / f"iter{n:03d}" / "moses.ini").exists()
    assert state["completed"] == summary["iterations"] and state["stop"] == summary["stop"]


def test_final_weights_best_when_the_last_iteration_decodes_best(system, capsys):
    """Issue 19, defect 5: DIR/final gets the weights the last iteration decoded, not the
    optimizer's next weights (never decoded), and the JSON reports DIR/final's BLEU."""
    wd = system / "wd"
    summary = run(moses_args(system, wd, optimizer="mert", iterations=2), capsys)
    bleus = [h["bleu"] for h in summary["history"]]
    assert summary["stop"] == "iteration limit" and bleus[1] > bleus[0]
    decoded = json.loads((wd / "iter002" / "weights.json").read_text())["start"]
    state = read_state(str(wd))
    assert state["weights"] != decoded          # the optimizer moved on after iteration 2
    final = (wd / "final").read_text()
    tm = " ".join(repr(v) for n, v in decoded if n.startswith("TranslationModel0_"))
    assert f"TranslationModel0= {tm}\n" in final
    assert summary["final_iteration"] == 2 and summary["bleu"] == bleus[1] == summary["last_bleu"]


def test_final_weights_last(system, capsys):
    summary = run(moses_args(system, system / "wd", "--final-weights", "last", optimizer="pro", iterations=3), capsys)
    state = read_state(str(system / "wd"))
    assert summary["stop"] == "iteration limit"
    final = (system / "wd" / "final").read_text()
    tm = " ".join(repr(v) for n, v in state["weights"] if n.startswith("TranslationModel0_"))
    assert f"TranslationModel0= {tm}\n" in final
    # never decoded: no decoded BLEU to report for them
    assert summary["bleu"] is None and summary["final_iteration"] is None and summary["last_bleu"] > 0


def test_sparse_weights_go_to_weight_file(system, capsys):
    """Sparse features (the stand-in's -standin-sparse): decoded with -weight-file, and the final
    moses.ini names DIR/final.sparse-weights in [weight-file], as mert-moses.pl's does."""
    args = moses_args(system, system / "wd", optimizer="kbmira", iterations=2)
    args[args.index("--decoder-bin") + 1] += " -standin-sparse"
    summary = run(args, capsys)
    assert summary["files"] == [str(system / "wd" / "final"), str(system / "wd" / "final.sparse-weights")]
    final = (system / "wd" / "final").read_text()
    assert final.endswith(f"\n[weight-file]\n{system / 'wd' / 'final.sparse-weights'}\n")
    sparse = dict(line.split() for line in (system / "wd" / "final.sparse-weights").read_text().splitlines())
    assert sparse and all(n.startswith("WT_") for n in sparse)
    # the loop's own copy of iteration 2's config points at that iteration's sparse file
    it2 = (system / "wd" / "iter002" / "moses.ini").read_text()
    assert f"[weight-file]\n{system / 'wd' / 'iter002' / 'sparse-weights'}\n" in it2
    # a config with [weight-file] supplies sparse start weights
    (system / "start.sparse").write_text("WT_every~x 0.5\n")
    (system / "moses.ini").write_text(INI + f"\n[weight-file]\n{system / 'start.sparse'}\n")
    args = moses_args(system, system / "wd2", optimizer="kbmira", iterations=1)
    args[args.index("--decoder-bin") + 1] += " -standin-sparse"
    run(args, capsys)
    start = dict(json.loads((system / "wd2" / "iter001" / "weights.json").read_text())["start"])
    assert start["WT_every~x"] == 0.5
    assert (system / "wd2" / "iter001" / "sparse-weights").read_text() == "WT_every~x 0.5\n"


@pytest.mark.parametrize("optimizer", ["mert", "kbmira"])
def test_cdec_loop(system, optimizer, capsys):
    wd = system / "wd"
    src = system / "dev.src"
    summary = run(["tune", "-q", "--decoder", "cdec",
                   "--decoder-bin", shlex.join([sys.executable, "-m", "mtplug.tuning.standin", "cdec",
                                                "-standin-source", str(src)]),
                   "--decoder-config", str(system / "cdec.ini"), "--weights", str(system / "weights"),
                   "--input", str(src), "--ref", str(TOY / "ref.0"), "--optimizer", optimizer,
                   "--iterations", "3", "--nbest-size", "10", "--jobs", "2", "--workdir", str(wd), *FAST[optimizer]],
                  capsys)
    assert summary["history"][0]["bleu"] == pytest.approx(START_BLEU, abs=5e-5)
    assert max(h["bleu"] for h in summary["history"]) > START_BLEU + 3
    lines = (wd / "final").read_text().splitlines()
    assert lines[0].startswith("# mtplug tune ")
    names = {ln.split()[0] for ln in lines[1:]}
    assert names <= {"Distortion", "LanguageModel", "WordPenalty", "PhrasePenalty",
                     "PhraseModel_0", "PhraseModel_1", "PhraseModel_2", "PhraseModel_3"}
    assert "LanguageModel" in names or "PhraseModel_2" in names
    first = (wd / "iter001" / "nbest.out").read_text().splitlines()[0]
    assert first.startswith("0 ||| ") and "LanguageModel=" in first


def test_cdec_seg_ids(system, capsys):
    """Input lines '<seg id="N">...</seg>': cdec numbers their k-best by N, the loop maps them back."""
    src = system / "dev.src"
    segs = system / "dev.seg"
    segs.write_text("".join(f'<seg id="{i}">s{i}</seg>\n' for i in range(N_SENT)))

    def tune(inp, wd):
        return run(["tune", "-q", "--decoder", "cdec", "--decoder-bin",
                    shlex.join([sys.executable, "-m", "mtplug.tuning.standin", "cdec", "-standin-source", str(src)]),
                    "--decoder-config", str(system / "cdec.ini"), "--weights", str(system / "weights"), "--input", str(inp),
                    "--ref", str(TOY / "ref.0"), "--optimizer", "mert", "--restarts", "2", "--iterations", "2",
                    "--nbest-size", "10", "--jobs", "3", "--workdir", str(wd)], capsys)

    plain, tagged = tune(src, system / "plain"), tune(segs, system / "tagged")
    assert plain["history"] == tagged["history"]
    assert (system / "plain" / "final").read_bytes() == (system / "tagged" / "final").read_bytes()
    assert (system / "plain" / "iter002" / "nbest.out").read_bytes() == \
        (system / "tagged" / "iter002" / "nbest.out").read_bytes()


def test_jobs_do_not_change_the_result(system, capsys):
    run(moses_args(system, system / "j1", "--jobs", "1"), capsys)
    run(moses_args(system, system / "j3", "--jobs", "3"), capsys)
    assert (system / "j1" / "final").read_bytes() == (system / "j3" / "final").read_bytes()
    assert (system / "j1" / "iter002" / "nbest.out").read_bytes() == \
        (system / "j3" / "iter002" / "nbest.out").read_bytes()


def test_yaml_and_flags(system, capsys):
    p = subprocess.run([sys.executable, "-m", "mtplug", "tune", "--write-config"], capture_output=True, text=True,
                       check=True)
    template = yaml.safe_load(p.stdout)
    assert template["decoder"] == "moses" and template["optimizer_options"] == {"restarts": 20}
    # the template's keys are all accepted; values come from the file unless a flag overrides
    src = system / "dev.src"
    template.update(decoder_bin=shlex.join([sys.executable, str(MOSES_STANDIN), "-standin-source", str(src)]),
                    decoder_config=str(system / "moses.ini"), input=str(src), ref=[str(TOY / "ref.0")],
                    workdir=str(system / "from-yaml"), iterations=5, nbest_size=7, seed=3,
                    optimizer_options={"restarts": 2, "directions": "random"})
    (system / "tune.yaml").write_text(yaml.safe_dump(template))
    summary = run(["tune", "-q", "--yaml", str(system / "tune.yaml"), "--iterations", "2",
                   "--directions", "coordinate"], capsys)
    assert summary["iterations"] <= 2  # flag beat the file's 5
    state = read_state(str(system / "from-yaml"))
    assert state["fingerprint"]["nbest"] == 7  # from the file
    assert state["fingerprint"]["optimizer_options"] == {"restarts": 2, "directions": "coordinate"}
    # same as giving everything by flags
    run(moses_args(system, system / "flags", "--directions", "coordinate", iterations=2, nbest=7), capsys)
    assert (system / "from-yaml" / "final").read_bytes() == (system / "flags" / "final").read_bytes()


def test_input_errors(system, capsys):
    assert main(moses_args(system, system / "wd", "--passes", "3")) == 2  # not a mert option
    assert "--passes is not an option of mert" in capsys.readouterr().err
    (system / "bad.yaml").write_text("decoder: moses\nnbset: 3\n")
    assert main(["tune", "--yaml", str(system / "bad.yaml")]) == 2
    assert "unknown option 'nbset'" in capsys.readouterr().err
    run(moses_args(system, system / "wd", iterations=1), capsys)
    assert main(moses_args(system, system / "wd", iterations=1)) == 2  # would overwrite a run
    assert "--resume" in capsys.readouterr().err
    assert main(moses_args(system, system / "wd", "--resume", iterations=1, nbest=5)) == 2
    assert "nbest" in capsys.readouterr().err


def test_an_infinite_option_value_as_optimize_takes_it(system, capsys):
    # PRO's --c-start inf (no pull toward the start), as mtplug optimize takes it; the state
    # stays strict JSON, and NaN or a number beyond a double is one error line
    run(moses_args(system, system / "inf", "--c-start", "inf", optimizer="pro", iterations=1), capsys)
    text = (system / "inf" / "state.json").read_text()
    state = json.loads(text, parse_constant=lambda c: pytest.fail(f"state.json holds {c}"))
    assert state["fingerprint"]["optimizer_options"]["c_start"] == "inf"
    assert main(moses_args(system, system / "nan", "--c-start", "nan", optimizer="pro", iterations=1)) == 2
    assert "--c-start must be a number, got" in capsys.readouterr().err
    (system / "big.yaml").write_text("optimizer_options: {c_start: 1" + "0" * 400 + "}\n")
    assert main(moses_args(system, system / "big", "--yaml", str(system / "big.yaml"), optimizer="pro",
                           iterations=1)) == 2
    assert "a number that fits a double" in capsys.readouterr().err


def test_resume_after_kill_9(system, tmp_path, capsys):
    """kill -9 during decoding (random call), and at random moments; --resume ends identically."""
    run(moses_args(system, system / "ref", "--jobs", "2", iterations=4), capsys)
    ref_state = read_state(str(system / "ref"))
    calls = 2 * ref_state["completed"]  # decoder processes of an uninterrupted run
    rng = random.Random(7)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, "-m", "mtplug", *moses_args(system, system / "wd", "--jobs", "2", iterations=4)]
    # 1. the stand-in SIGKILLs the loop at a random decoder call of iteration >= 2
    k = rng.randrange(3, calls + 1)
    p = subprocess.run(cmd, env={**env, "STANDIN_KILL_PARENT": f"{tmp_path}/calls:{k}"}, capture_output=True,
                       timeout=120)
    assert p.returncode == -9, p.stderr.decode()
    killed_at = read_state(str(system / "wd"))["completed"]
    assert killed_at == (k - 1) // 2  # every iteration before the killed one is committed
    # 2. resume, killed again after random delays until it finishes
    for attempt in range(20):
        proc = subprocess.Popen(cmd + ["--resume"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            proc.wait(timeout=rng.uniform(0.2, 1.5) if attempt < 3 else 120)
        except subprocess.TimeoutExpired:
            proc.kill()
        proc.communicate()
        if proc.returncode == 0:
            break
    assert proc.returncode == 0
    assert (system / "wd" / "final").read_bytes() == (system / "ref" / "final").read_bytes()
    state = read_state(str(system / "wd"))
    assert state["weights"] == ref_state["weights"]
    # no n-best lost: the same store, iteration by iteration
    strip = ("decode_seconds", "optimize_seconds", "seconds")
    assert [{k: v for k, v in h.items() if k not in strip} for h in state["history"]] == \
        [{k: v for k, v in h.items() if k not in strip} for h in ref_state["history"]]
    for n in range(1, state["completed"] + 1):
        a, b = (d / f"iter{n:03d}" / "nbest.out" for d in (system / "wd", system / "ref"))
        assert a.read_bytes() == b.read_bytes()


def test_plot_writes_pngs(system, capsys):
    pytest.importorskip("matplotlib")
    run(moses_args(system, system / "wd"), capsys)
    summary = run(["plot", "-q", str(system / "wd")], capsys)
    names = sorted(os.path.basename(p) for p in summary["files"])
    assert names == ["bleu.png", "error-surface.png"]
    for p in summary["files"]:
        assert Path(p).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_example_runs_a_tuning(tmp_path, capsys):
    assert main(["example", "-q", "--keep", str(tmp_path)]) == 0
    state = read_state(str(tmp_path / "tune"))
    assert state["history"][0]["bleu"] == pytest.approx(START_BLEU, abs=5e-5)
    assert state["history"][-1]["bleu"] > 40
    assert (tmp_path / "tune" / "final").exists()


@pytest.mark.parametrize("metric", ["ter", "bleu:0.5,chrf:0.5"])
def test_tune_to_another_metric_chooses_the_best_iteration_by_it(system, metric, capsys):
    wd = system / "wd"
    args = moses_args(system, wd, "--metric", metric, "--patience", "2", iterations=6)
    assert main([a for a in args if a != "-q"]) == 0
    log = capsys.readouterr().err
    state = read_state(str(wd))
    hist = state["history"]
    assert all(h["metric"] == metric for h in hist)
    objectives = [h["objective"] for h in hist]
    # the best iteration is the one whose decoded 1-best has the best objective, not BLEU
    assert state["best"]["iteration"] == objectives.index(max(objectives)) + 1
    assert max(objectives) > objectives[0] + 1
    if metric == "ter":   # reported as TER on 0-100: the objective is 100 - TER
        assert all(h["score"] == h["metric_value"] == pytest.approx(100 - h["objective"]) for h in hist)
    # tuned_score is the metric's score on the store (the old name tuned_metric_value kept beside it);
    # no tuned_bleu: the store holds no BLEU statistics
    assert all(h["tuned_score"] == h["tuned_metric_value"] and "tuned_bleu" not in h for h in hist)
    # the log names the metric as every output does (TER, not ter) and gives it on 0-100
    label = "TER" if metric == "ter" else metric
    assert f"iteration 1: BLEU = {hist[0]['bleu']:.4f}, {label} = {hist[0]['score']:.4f} (decoded" in log
    assert main(moses_args(system, system / "wd2", "--metric", "ext:scores.txt")) == 2
    assert "ext: scores cannot follow the decoder's new hypotheses" in capsys.readouterr().err


def test_start_weights_that_name_no_feature_stop_the_run(system, capsys):
    """Issue 37, defect 1: cdec start weights with Moses names (the stand-in's k-best lists name
    cdec features) are refused after the first decoding, in one line, exit 2."""
    (system / "moses-named").write_text("LM0_0 0.5\nWordPenalty0_0 -1\n")
    src = system / "dev.src"
    rc = main(["tune", "-q", "--decoder", "cdec",
               "--decoder-bin", shlex.join([sys.executable, "-m", "mtplug.tuning.standin", "cdec",
                                            "-standin-source", str(src)]),
               "--decoder-config", str(system / "cdec.ini"), "--weights", str(system / "moses-named"),
               "--input", str(src), "--ref", str(TOY / "ref.0"), "--iterations", "2", "--nbest-size", "10",
               "--restarts", "2", "--workdir", str(system / "wd")])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert err.startswith(f"mtplug: error: {system / 'moses-named'}: none of its 2 weight(s) names a feature of "
                          "the decoder's n-best lists (it gives LM0_0, WordPenalty0_0; expected names such as "), err
    assert err.count("\n") == 1
    assert read_state(str(system / "wd")) is None or read_state(str(system / "wd"))["completed"] == 0


def test_start_weights_with_unseen_sparse_names_run_without_a_warning(system, capsys):
    """Issue 37, defect 1: the partial-match rule warns only of dense features without a weight
    (Moses itself refuses a moses.ini that misses one: the stand-in does too). Sparse start
    weights no hypothesis has yet (--weights) and moses.ini's UnknownWordPenalty0, which
    Moses leaves out of its n-best lists, are normal: no warning."""
    (system / "sparse").write_text("WT_never~seen 0.5\n")
    rc = main(moses_args(system, system / "wd", "--weights", str(system / "sparse"), iterations=1))
    out, err = capsys.readouterr()
    assert rc == 0 and err == "", err
    (system / "moses.ini").write_text(INI.replace("LM0= 0.5", "LM= 0.5"))
    assert main(moses_args(system, system / "wd2", iterations=1)) == 2
    assert "no weight for feature LM0" in capsys.readouterr().err


def _store_size(path: Path) -> int:
    from mtplug.corpus import NbestCorpus

    return NbestCorpus.load(str(path)).n_hypotheses


def _unique_hypotheses(*nbest_files: Path) -> int:
    """Distinct (sentence, hypothesis text, features) lines of Moses n-best files, as the store counts them."""
    seen = set()
    for path in nbest_files:
        for line in path.read_text(encoding="utf-8").splitlines():
            sid, text, feats, *_ = line.split(" ||| ")
            seen.add((int(sid), text.strip(), feats.strip()))
    return len(seen)


@pytest.mark.parametrize("reset", [1, 2])
def test_pool_reset_starts_the_store_afresh(system, capsys, reset):
    """--pool-reset R: iteration n tunes on the n-best lists of iterations pool_start(n)..n only
    (R = 1: Gimpel & Smith's RAMPION without merging; R = 10: Dreyer & Dong's APRO reset)."""
    wd = system / "wd"
    summary = run(moses_args(system, wd, "--pool-reset", str(reset), "--min-change", "0", optimizer="rampion",
                             iterations=4), capsys)
    hist = summary["history"]
    assert summary["iterations"] == 4, summary["stop"]
    for h in hist:
        n = h["iteration"]
        first = 1 + ((n - 1) // reset) * reset
        lists = [wd / f"iter{i:03d}" / "nbest.out" for i in range(first, n + 1)]
        assert h["hypotheses"] == _unique_hypotheses(*lists), (n, first)
    assert _store_size(wd / "iter004" / "store.npz") == hist[-1]["hypotheses"]
    # without the reset the store of iteration 4 holds every list: more than iteration 4's own
    assert hist[-1]["hypotheses"] < _unique_hypotheses(*(wd / f"iter{i:03d}" / "nbest.out" for i in range(1, 5)))
    assert read_state(str(wd))["fingerprint"]["pool_reset"] == reset


def test_pool_reset_resumes_and_rebuilds_its_store(system, capsys):
    ref = run(moses_args(system, system / "ref", "--pool-reset", "2", "--min-change", "0", iterations=3), capsys)
    wd = system / "wd"
    run(moses_args(system, wd, "--pool-reset", "2", "--min-change", "0", iterations=2), capsys)
    (wd / "iter002" / "store.npz").unlink()
    main(moses_args(system, wd, "--pool-reset", "2", "--min-change", "0", "--resume", iterations=3))
    err = capsys.readouterr().err
    assert "rebuilding it from the n-best lists of iterations 1-2" in err
    assert (wd / "final").read_bytes() == (system / "ref" / "final").read_bytes()
    assert read_state(str(wd))["weights"] == read_state(str(system / "ref"))["weights"]
    assert [h["hypotheses"] for h in read_state(str(wd))["history"]] == [h["hypotheses"] for h in ref["history"]]
    # a resume with another reset is another run
    assert main(moses_args(system, wd, "--pool-reset", "1", "--resume", iterations=4)) == 2
    assert "pool_reset" in capsys.readouterr().err


def test_resume_takes_a_pool_reset_no_reset_has_passed(system, capsys):
    """A run of R iterations without a reset goes on with --pool-reset R as the run that had
    it from the start (Dreyer & Dong: 10 iterations, then the store afresh); once a reset
    point is behind the run, another R is another run."""
    ref = run(moses_args(system, system / "ref", "--pool-reset", "2", "--min-change", "0", iterations=4), capsys)
    wd = system / "wd"
    run(moses_args(system, wd, "--min-change", "0", iterations=2), capsys)
    main(moses_args(system, wd, "--pool-reset", "2", "--min-change", "0", "--resume", iterations=4))
    capsys.readouterr()
    assert (wd / "final").read_bytes() == (system / "ref" / "final").read_bytes()
    state = read_state(str(wd))
    assert state["fingerprint"] == read_state(str(system / "ref"))["fingerprint"]
    assert [h["hypotheses"] for h in state["history"]] == [h["hypotheses"] for h in ref["history"]]
    other = system / "other"
    run(moses_args(system, other, "--min-change", "0", iterations=3), capsys)
    assert main(moses_args(system, other, "--pool-reset", "2", "--min-change", "0", "--resume", iterations=4)) == 2
    assert "other settings than the run in this directory: pool_reset" in capsys.readouterr().err


@pytest.mark.parametrize("value, message", [("-1", "--pool-reset must be an integer >= 0, got -1"),
                                            ("x", "--pool-reset: invalid int value: 'x'")])
def test_pool_reset_bad_values(system, capsys, value, message):
    assert main(moses_args(system, system / "wd", "--pool-reset", value)) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err
    assert not (system / "wd").exists()


def test_pool_reset_cannot_take_effect_over_forests(system, capsys):
    assert main(moses_args(system, system / "wd", "--pool-reset", "2", "--forests")) == 2
    err = capsys.readouterr().err
    assert "--pool-reset cannot take effect with --forests" in err and err.count("\n") == 1, err
    assert not (system / "wd").exists()


def test_tune_to_m2_reads_an_m2_reference(tmp_path, capsys):
    """--metric m2 --ref X.m2: the decoder loop of a GEC system tuned to Moses's M2 F0.5;
    every decoded score equals mtplug score's on that iteration's 1-best."""
    gold = REPO / "tests" / "golden" / "moses-m2"
    n_sent = sum(1 for line in (gold / "gec.m2").read_text(encoding="utf-8").splitlines() if line.startswith("S "))
    (tmp_path / "dev.src").write_text("".join(f"g{i}\n" for i in range(n_sent)))
    (tmp_path / "moses.ini").write_text("[weight]\nF0= 1\n")
    wd = tmp_path / "wd"
    args = ["tune", "-q", "--decoder", "moses",
            "--decoder-bin", shlex.join([sys.executable, str(MOSES_STANDIN), "-standin-source",
                                         str(tmp_path / "dev.src"), "-standin-pool", str(gold / "gec.nbest")]),
            "--decoder-config", str(tmp_path / "moses.ini"), "--input", str(tmp_path / "dev.src"),
            "--ref", str(gold / "gec.m2"), "--metric", "m2", "--optimizer", "mert", "--iterations", "2",
            "--nbest-size", "10", "--workdir", str(wd), "--seed", "1"]
    run(args, capsys)
    hist = read_state(str(wd))["history"]
    assert [h["metric"] for h in hist] == ["m2"] * len(hist)
    assert hist[-1]["metric_value"] > hist[0]["metric_value"] + 10     # tuned to F0.5
    for h in hist:
        onebest = wd / f"iter{h['iteration']:03d}" / "onebest.txt"
        assert main(["score", "--json", "--hyp", str(onebest), "--ref", str(gold / "gec.m2"), "--metric", "m2"]) == 0
        scored = json.loads(capsys.readouterr().out)
        assert h["metric_value"] == pytest.approx(scored["score"], abs=1e-9), (h, scored)
    # a second reference file is refused: M2 holds every annotator in one file
    assert main(args[:args.index("--ref") + 2] + [str(gold / "gec.m2")] + args[args.index("--ref") + 2:]) == 2
    assert "the m2 metric reads one M2 file" in capsys.readouterr().err


def test_moses_text_metrics_are_refused_before_any_work(system, capsys):
    """moses-chrf and bleudoc read the references' text, which a store loaded for the next
    iteration does not have: refused at once, not at iteration 2."""
    for metric in ("moses-chrf", "bleudoc", "bleu:0.5,moses-chrf:0.5"):
        assert main(moses_args(system, system / "wd", "--metric", metric)) == 2
        err = capsys.readouterr().err
        assert "read the references' text, which the store does not keep" in err and err.count("\n") == 1, err
        assert not (system / "wd").exists()


def test_an_optimizer_error_in_the_loop_is_one_line(system, capsys, monkeypatch):
    from mtplug.optimizers.pro import Pro

    def fail(self, *args, **kwargs):
        raise ValueError("sentence metric of hypothesis 3 is not finite (nan)")

    monkeypatch.setattr(Pro, "_optimize", fail)
    assert main(moses_args(system, system / "wd", optimizer="pro", iterations=2)) == 2
    err = capsys.readouterr().err
    assert err == "mtplug: error: iteration 1: pro: sentence metric of hypothesis 3 is not finite (nan)\n", err
