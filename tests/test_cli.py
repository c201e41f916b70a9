"""The mtplug command: subcommands end to end, errors, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest

from mtplug import __version__
from mtplug._ext._build_info import OPENMP
from mtplug.cli import EXIT_INPUT_ERROR, main
from mtplug.formats.weights import read_weights
from mtplug.tuning.loop import read_state

MOSES_LINES = (
    "0 ||| a b c ||| LM0= -1 TM0= 1 2 ||| 0\n"
    "0 ||| a b d ||| LM0= -2 TM0= 1 1 ||| 0\n"
    "1 ||| x y ||| LM0= -1 TM0= 0 1 ||| 0\n"
)


def run(*argv, stdin=None):
    """Run ``python -m mtplug`` in a subprocess: (exit code, stdout, stderr)."""
    p = subprocess.run([sys.executable, "-m", "mtplug", *argv], capture_output=True, text=True, input=stdin)
    return p.returncode, p.stdout, p.stderr


def test_version_and_help():
    rc, out, _ = run("--version")
    assert rc == 0 and out.strip() == f"mtplug {__version__} (OpenMP: {'yes' if OPENMP else 'no'})"
    rc, out, _ = run("--help")
    assert rc == 0 and "examples:" in out and "optimize" in out
    for cmd in (["score"], ["extract"], ["optimize", "none"], ["example"]):
        rc, out, _ = run(*cmd, "--help")
        assert rc == 0 and "usage:" in out


def test_score_text_and_json(write, capsys):
    hyp = write("hyp", "a b c d e\nx y z w\n")
    ref = write("ref", "a b c d e\nx y z w v\n")
    assert main(["score", "--hyp", hyp, "--ref", ref]) == 0
    line = capsys.readouterr().out
    assert line.startswith("BLEU = ") and "hyp_len = 9 ref_len = 10" in line and "nrefs:1|case:mixed" in line
    assert main(["score", "--hyp", hyp, "--ref", ref, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["sys_len"] == 9 and d["ref_len"] == 10 and d["metric"] == "bleu"
    # sacrebleu's scale: the score and the precisions in percent, as the text line shows them
    assert f"BLEU = {d['score']:.2f} " in line and 1 < d["score"] < 100
    assert "/".join(f"{p:.1f}" for p in d["precisions"]) in line and d["brevity_penalty"] <= 1


def test_score_prints_each_metric_asked_with_its_signature(write, capsys):
    import sacrebleu

    hyps, refs = ["the small house .", "a big, big House", ""], ["the small house .", "a big house !", "nothing"]
    hyp, ref = write("hyp", "".join(h + "\n" for h in hyps)), write("ref", "".join(r + "\n" for r in refs))
    assert main(["score", "--hyp", hyp, "--ref", ref, "--metric", "chrf", "BLEU", "chrf++", "--lowercase"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [x.split(" = ")[0] for x in lines] == ["chrF", "BLEU", "chrF++"]
    assert "nrefs:1|case:lc|eff:yes|nc:6|nw:2|space:no|version:mtplug-" in lines[2]
    assert main(["score", "--hyp", hyp, "--ref", ref, "--metric", "chrf++", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["name"] == "chrF++" and d["metric"] == "chrf++"
    assert d["score"] == pytest.approx(sacrebleu.CHRF(word_order=2).corpus_score(hyps, [refs]).score, abs=1e-9)
    # sacrebleu's TER and Moses's are told apart by name and signature
    assert main(["score", "--hyp", hyp, "--ref", ref, "--metric", "ter", "moses-ter", "wer"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [x.split(" = ")[0] for x in lines] == ["TER", "MosesTER", "WER"]
    assert "|moses-sctype:TER|case:true|" in lines[1]


def test_metric_help_names_every_metric():
    # the CLI keeps its help literal (no numpy at start-up); it must not drift from the layer's names
    from mtplug.metric_help import METRIC_HELP
    from mtplug.metrics.layer import METRIC_NAMES

    for name in METRIC_NAMES:
        assert name in METRIC_HELP


def test_score_refuses_options_and_metrics_that_cannot_apply(write, capsys):
    hyp, ref = write("hyp", "a b\n"), write("ref", "a b\n")
    assert main(["score", "--hyp", hyp, "--ref", ref, "--metric", "chrf", "--reflen", "average"]) == EXIT_INPUT_ERROR
    assert "--reflen is a BLEU option" in capsys.readouterr().err
    assert main(["score", "--hyp", hyp, "--ref", ref, "--metric", "meteor"]) == EXIT_INPUT_ERROR
    assert "unknown metric meteor" in capsys.readouterr().err


def test_score_counts_blank_hypothesis_lines(write, capsys):
    ref = write("ref", "a b\nc d\n")
    assert main(["score", "--hyp", write("hyp", "a b\n\n"), "--ref", ref, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["sys_len"] == 2
    assert main(["score", "--hyp", write("short", "a b\n"), "--ref", ref]) == EXIT_INPUT_ERROR
    assert "short:" in capsys.readouterr().err


def test_extract_then_optimize_none(write, tmp_path, capsys):
    nb = write("nb", MOSES_LINES)
    ref = write("ref", "a b c\nx y\n")
    f, s, st = (str(tmp_path / n) for n in ("f.dat", "s.dat", "store.npz"))
    assert main(["extract", "-q", "--nbest", nb, "--ref", ref, "--ffile", f, "--scfile", s, "--store", st]) == 0
    assert open(f).read().startswith("FEATURES_TXT_BEGIN_0 0 2 3 LM0_0 TM0_0 TM0_1 \n")
    init = write("init.opt", "1 0.5 0.5\n0 0 0\n1 1 1\n")
    for inp in (["--store", st], ["--ffile", f, "--scfile", s], ["--nbest", nb, "--ref", ref]):
        out = str(tmp_path / "w.opt")
        assert main(["optimize", "none", *inp, "--weights", init, "--output", out, "--seed", "7"]) == 0
        res = json.loads(capsys.readouterr().out)
        assert res["seed"] == 7 and res["algorithm"] == "none"
        np.testing.assert_allclose(read_weights(out, feature_names=["LM0_0", "TM0_0", "TM0_1"]).to_array(
            ["LM0_0", "TM0_0", "TM0_1"]), [1, 0.5, 0.5])
    rc, _, err = run("optimize", "none", "--store", st, "--weights", init, "--output", str(tmp_path / "w2"))
    assert rc == 0 and "start: BLEU = " in err and "end: BLEU = " in err


def test_extract_merges_previous_files(write, tmp_path):
    ref = write("ref", "a b c\nx y\n")
    f1, s1, f2, s2 = (str(tmp_path / n) for n in ("f1", "s1", "f2", "s2"))
    assert main(["extract", "-q", "--nbest", write("nb1", MOSES_LINES), "--ref", ref, "--ffile", f1, "--scfile", s1]) == 0
    nb2 = write("nb2", "0 ||| a b c ||| LM0= -1 TM0= 1 2 ||| 0\n1 ||| x z ||| LM0= -3 TM0= 0 0 s_x= 1 ||| 0\n")
    assert main(["extract", "-q", "--nbest", nb2, "--ref", ref, "--ffile", f2, "--scfile", s2,
                 "--prev-ffile", f1, "--prev-scfile", s1]) == 0
    text = open(f2).read()
    assert "FEATURES_TXT_BEGIN_0 0 2 3" in text and "FEATURES_TXT_BEGIN_0 1 2 3" in text
    assert "-3 0 0 s_x=1 \n" in text


def test_bad_input_is_one_line_and_exit_2(write, tmp_path):
    nb = write("nb", "0 ||| a ||| LM0= x ||| 0\n")
    ref = write("ref", "a\n")
    rc, out, err = run("extract", "--nbest", nb, "--ref", ref, "--ffile", str(tmp_path / "f"))
    assert rc == EXIT_INPUT_ERROR and out == ""
    assert err.strip().splitlines()[-1] == f"mtplug: error: {nb}:1: expected a number as feature value, got 'x'"
    assert "Traceback" not in err
    assert not os.path.exists(tmp_path / "f")


def test_failed_write_leaves_old_output(write, tmp_path, monkeypatch):
    from mtplug import fileio

    nb = write("nb", MOSES_LINES)
    ref = write("ref", "a b c\nx y\n")
    f = tmp_path / "f.dat"
    f.write_text("old\n")

    def boom(*a, **k):
        raise RuntimeError("disk full")

    monkeypatch.setattr(fileio.os, "fsync", boom)  # fails after the content was written
    with pytest.raises(RuntimeError):
        main(["extract", "-q", "--nbest", nb, "--ref", ref, "--ffile", str(f)])
    assert f.read_text() == "old\n"
    assert sorted(os.listdir(tmp_path)) == sorted(["f.dat", "nb", "ref"])


def test_example_runs(tmp_path):
    rc, out, err = run("example", "--keep", str(tmp_path))
    assert rc == 0, err
    # the steps and their logs go to stderr; stdout is the result, as with -q
    lines = out.splitlines()
    assert lines[0] == "iteration 1: BLEU = 26.5757" and all(ln.startswith("iteration ") for ln in lines)
    assert "$ mtplug extract " in err and "end: BLEU = 26.5757" in err
    for name in ("features.dat", "scores.dat", "store.npz", "weights.opt", "moses.ini", "tune/final"):
        assert (tmp_path / name).stat().st_size > 0


def test_example_quiet_prints_only_its_result_and_leaves_no_folder(tmp_path, monkeypatch, capfd):
    keep = tmp_path / "keep"
    assert main(["example", "-q", "--keep", str(keep)]) == 0
    kept = capfd.readouterr()
    history = read_state(str(keep / "tune"))["history"]
    expected = [f"iteration {it['iteration']}: BLEU = {it['bleu']:.4f}" for it in history]
    assert kept.out.splitlines() == expected and kept.err == ""
    assert expected[0] == "iteration 1: BLEU = 26.5757" and len(expected) >= 2   # the state's scale, 0-100
    assert (keep / "tune" / "final").stat().st_size > 0

    # without --keep: the same lines, and the temporary folder is gone afterwards
    private = tmp_path / "tmp"
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    made = []
    mkdtemp = tempfile.mkdtemp
    monkeypatch.setattr(tempfile, "mkdtemp", lambda *a, **k: made.append(mkdtemp(*a, **k)) or made[-1])
    assert main(["example", "-q"]) == 0
    quiet = capfd.readouterr()
    assert quiet.out.splitlines() == expected and quiet.err == ""
    used = [p for p in made if os.path.basename(p).startswith("mtplug-example-")]
    assert len(used) == 1 and os.path.dirname(used[0]) == tempfile.gettempdir() == str(private)
    assert not [n for n in os.listdir(tempfile.gettempdir()) if n.startswith("mtplug-example-")]


def test_example_keep_must_be_a_folder(tmp_path, capsys):
    path = tmp_path / "file"
    path.write_text("mine\n")
    assert main(["example", "-q", "--keep", str(path)]) == EXIT_INPUT_ERROR
    assert capsys.readouterr().err == (f"mtplug: error: {path}: --keep names a file; expected a folder for the "
                                       "example's outputs (created if missing)\n")
    assert path.read_text() == "mine\n"


def test_optimize_with_name_value_weights(write, tmp_path, capsys):
    nb = write("nb", MOSES_LINES.replace(" ||| 0\n1 |||", " s_x= 2 ||| 0\n1 |||", 1))
    ref = write("ref", "a b c\nx y\n")
    init = write("w.cdec", "# start\nLM0_0 1\nTM0_0 0.5\ns_x 0.25\n")
    out = str(tmp_path / "out.cdec")
    assert main(["optimize", "none", "-q", "--nbest", nb, "--ref", ref, "--weights", init, "--output", out,
                 "--output-format", "cdec", "--seed", "3"]) == 0
    lines = open(out).read().splitlines()
    assert lines[0].startswith("# mtplug optimize none seed=3 BLEU=")
    assert lines[1:] == ["LM0_0 1", "TM0_0 0.5", "s_x 0.25"]
    # issue 19, defect 3: a weight for a feature no hypothesis has (cdec's PassThrough, a sparse
    # feature not seen yet) is kept and written back unchanged, in the start file's order
    unseen = write("unseen.cdec", "LM0_0 1\nPassThrough 2\nTM0_0 0.5\n")
    capsys.readouterr()
    assert main(["optimize", "none", "--nbest", nb, "--ref", ref, "--weights", unseen, "--output", out,
                 "--output-format", "cdec"]) == 0
    assert open(out).read().splitlines()[1:] == ["LM0_0 1", "PassThrough 2", "TM0_0 0.5"]
    err = capsys.readouterr().err
    assert "1 start weight(s) name features no hypothesis has (PassThrough): kept unchanged" in err
    assert "2 feature(s) of the n-best lists have no start weight and start at 0 (TM0_1, s_x)" in err


def test_score_reads_stdin_and_names_it_in_errors(tmp_path):
    ref = tmp_path / "ref"
    ref.write_text("a b c d e\nv w x y z\n")
    run = lambda text: subprocess.run([sys.executable, "-m", "mtplug", "score", "--hyp", "-", "--ref", str(ref)],  # noqa: E731
                                      input=text, capture_output=True, text=True)
    good = run("a b c d e\nv w x y z\n")
    assert good.returncode == 0 and good.stdout.startswith("BLEU = 100.0"), good.stdout
    bad = run("a b c d e\n")
    assert bad.returncode == 2 and bad.stderr.startswith("mtplug: error: <stdin>: ") and "Traceback" not in bad.stderr


def test_a_reader_that_stops_early_ends_the_program_quietly(tmp_path):
    from importlib import resources

    data = resources.files("mtplug") / "data" / "example"
    proc = subprocess.Popen([sys.executable, "-m", "mtplug", "rerank", "-q", "--nbest",
                             str(data / "run1.best100.out.gz"), "--weights", str(data / "run1.init.opt"),
                             "--output-nbest", "-"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.readline()
    proc.stdout.close()       # as `| head -1` does
    err = proc.stderr.read().decode()
    assert proc.wait() == 141 and err == ""
