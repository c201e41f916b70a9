"""Moses's M2SCORER: the real extractor and mtplug's (``mtplug mertdir``) on a small GEC
set made here write the same files byte for byte and warn about the same hypotheses;
the real evaluator and mtplug's print the same F_beta."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

VOCAB = ["the", "The", "cat", "Cat", "sat", "on", "mat", "a", "dog", "runs", "quickly", ".", "and", "is"]


def _gec_set(folder: Path, seed: int = 38) -> tuple[Path, Path]:
    """An M2 file (20 sentences, 1-2 annotators, substitutions, deletions, insertions,
    noop lines) and an n-best list (6 hypotheses each, two dense features) made with a
    seeded generator."""
    rng = random.Random(seed)
    m2, nbest = [], []
    for s in range(20):
        src = [rng.choice(VOCAB) for _ in range(rng.randint(2, 9))]
        m2.append("S " + " ".join(src))
        for annotator in range(rng.randint(1, 2)):
            edits = 0
            for _ in range(rng.randint(0, 3)):
                start = rng.randint(0, len(src))
                end = min(len(src), start + rng.randint(0, 2))
                corr = " ".join(rng.choice(VOCAB) for _ in range(rng.randint(0, 2)))
                m2.append(f"A {start} {end}|||R:OTHER|||{corr}|||REQUIRED|||-NONE-|||{annotator}")
                edits += 1
            if not edits:
                m2.append(f"A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||{annotator}")
        m2.append("")
        for k in range(6):
            hyp = list(src)
            for _ in range(rng.randint(0, 5 if k == 5 else 3)):
                op = rng.random()
                i = rng.randrange(len(hyp) + 1)
                if op < 0.4 and hyp:
                    hyp[min(i, len(hyp) - 1)] = rng.choice(VOCAB)
                elif op < 0.7 and len(hyp) > 1:
                    del hyp[min(i, len(hyp) - 1)]
                else:
                    hyp.insert(i, rng.choice(VOCAB))
            pad = "  " if k == 4 else ""
            nbest.append(f"{s} ||| {pad}{' '.join(hyp)}{pad} ||| F0= {-(s * 6 + k) * 0.5:g} "
                         f"F1= {rng.randint(-9, 9)} ||| {-k}")
    (folder / "dev.m2").write_text("\n".join(m2) + "\n")
    (folder / "dev.nbest").write_text("\n".join(nbest) + "\n")
    return folder / "dev.m2", folder / "dev.nbest"


@pytest.mark.parametrize("scconfig", ["beta:0.5", "beta:1.0,max_unchanged_words:0,truecase:1",
                                      "ignore_whitespace_casing:true"])
def test_real_extractor_m2_files_are_byte_identical(moses_dir, mertdir, tmp_path, scconfig):
    m2, nbest = _gec_set(tmp_path)
    outs = {}
    for tool, name in ((moses_dir / "bin" / "extractor", "moses"), (mertdir / "extractor", "mtplug")):
        run = subprocess.run([str(tool), "--sctype", "M2SCORER", "--scconfig", scconfig, "-r", str(m2), "-n",
                              str(nbest), "--scfile", f"{name}.scores.dat", "--ffile", f"{name}.features.dat"],
                             check=False, cwd=tmp_path, capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        outs[name] = run.stderr.count("Levenshtein distance is greater than source size.\n")
    for suffix in ("scores.dat", "features.dat"):
        assert (tmp_path / f"mtplug.{suffix}").read_bytes() == (tmp_path / f"moses.{suffix}").read_bytes(), suffix
    assert "M2Scorer" in (tmp_path / "moses.scores.dat").read_text()
    assert outs["mtplug"] == outs["moses"]


def test_real_evaluator_m2_scores_agree(moses_dir, mertdir, tmp_path):
    m2, nbest = _gec_set(tmp_path)
    best: dict[int, str] = {}
    for line in nbest.read_text().splitlines():
        fields = line.split(" ||| ")
        best.setdefault(int(fields[0]), fields[1])
    cand = tmp_path / "cand.txt"
    cand.write_text("".join(best[s] + "\n" for s in sorted(best)))
    printed = []
    for tool in (moses_dir / "bin" / "evaluator", mertdir / "evaluator"):
        run = subprocess.run([str(tool), "--sctype", "M2SCORER", "--scconfig", "beta:0.5", "--reference", str(m2),
                              "--candidate", str(cand)], check=False, cwd=tmp_path, capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        printed.append(run.stdout)
    assert printed[0] == printed[1]
