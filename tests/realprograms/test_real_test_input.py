"""``mtplug tune --test-input/--test-ref`` with the real Moses and cdec (MTPLUG_MOSES_DIR,
MTPLUG_CDEC_DIR) on the toy systems' held-out test set: every iteration's test.out is what the
decoder itself prints as its 1-best for the weights that iteration decoded the tuning set with."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from mtplug.corpus import NbestCorpus
from mtplug.formats.references import read_references


def bleu(hyp, ref) -> float:
    corpus = NbestCorpus.from_plain(str(hyp), read_references([str(ref)]))
    return 100 * corpus.bleu_of_rows(corpus.sent_offsets[:-1]).score    # the 0-100 of mtplug's outputs


def tune(decoder_args: list[str], toy, wd, *extra) -> dict:
    p = subprocess.run([sys.executable, "-m", "mtplug", "tune", *decoder_args, "--decoder-config", str(toy.config),
                        "--input", str(toy.dev_src), "--ref", str(toy.dev_ref), "--test-input", str(toy.test_src),
                        "--test-ref", str(toy.test_ref), "--iterations", "3", "--jobs", "2", "--workdir", str(wd),
                        "--seed", "1", *extra], capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout)


def check_history(summary: dict, wd, toy, onebest) -> None:
    """test.out of every iteration = ``onebest(iteration folder)``, the decoder's own 1-best
    (stdout) with that iteration's weight files; scores, improvement and DIR/final.test.out."""
    tests = []
    for h in summary["history"]:
        folder = wd / f"iter{h['iteration']:03d}"
        assert (folder / "test.out").read_text(encoding="utf-8") == onebest(folder)
        assert h["test_bleu"] == bleu(folder / "test.out", toy.test_ref)
        tests.append(h["test_bleu"])
    assert max(tests) > tests[0] + 5, tests
    final = wd / f"iter{summary['final_iteration']:03d}" / "test.out"
    assert (wd / "final.test.out").read_bytes() == final.read_bytes()


def test_moses_test_set(moses_dir, moses_toy, tmp_path):
    moses = str(moses_dir / "bin" / "moses")

    def onebest(folder):
        p = subprocess.run([moses, "-f", str(folder / "moses.ini"), "-input-file", str(moses_toy.test_src)],
                           capture_output=True, text=True, check=True, timeout=300)
        return "".join(line.strip() + "\n" for line in p.stdout.splitlines())

    wd = tmp_path / "wd"
    summary = tune(["--decoder", "moses", "--decoder-bin", moses], moses_toy, wd, "--optimizer", "mert",
                   "--restarts", "5", "--nbest-size", "50")
    check_history(summary, wd, moses_toy, onebest)


@pytest.mark.parametrize("extra", [["--optimizer", "kbmira"], ["--optimizer", "mert", "--forests", "--restarts", "1"]])
def test_cdec_test_set(cdec_dir, cdec_toy, tmp_path, extra):
    cdec = str(cdec_dir / "decoder" / "cdec")

    def onebest(folder):
        p = subprocess.run([cdec, "-c", str(cdec_toy.config), "-w", str(folder / "weights")],
                           stdin=open(cdec_toy.test_src, "rb"), capture_output=True, text=True, check=True,
                           timeout=300)
        return "".join(line.strip() + "\n" for line in p.stdout.splitlines())

    wd = tmp_path / "wd"
    summary = tune(["--decoder", "cdec", "--decoder-bin", cdec, "--weights", str(cdec_toy.weights)], cdec_toy, wd,
                   "--nbest-size", "50", *extra)
    check_history(summary, wd, cdec_toy, onebest)
    if "--forests" in extra:   # the test decode left the tuning set's forests alone
        n = summary["iterations"]
        assert len(list((wd / f"iter{n:03d}" / "forests").iterdir())) == 30
