"""Moses's CHRF and BLEUDOC scorers against the real programs (issue 38).

Moses 34452895 itself cannot give them (tests/golden/moses-chrf/README.md,
tests/golden/moses-bleudoc/README.md): its extractor writes all-zero CHRF statistics and
stops on BLEUDOC's references. The first two tests check exactly that on sets made here
(they fail the day Moses is fixed: then compare mtplug with it directly). mtplug writes
what the one-line-fixed code writes: with ``MTPLUG_MOSES_FIXED_MERT_DIR`` naming a folder
that holds the ``extractor`` and ``evaluator`` of such a build (the fixes in those READMEs;
mtplug ships neither code nor patch), the other tests compare mtplug's files and scores
with it byte for byte on seeded random sets. Skips without ``MTPLUG_MOSES_DIR``."""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import pytest

WORDS = ["the", "The", "cat", "sat", "on", "mat", "a", "dog", "runs", "Über", "café", ".", ",", "and", "is", "x"]


@pytest.fixture(scope="session")
def fixed_dir() -> Path:
    value = os.environ.get("MTPLUG_MOSES_FIXED_MERT_DIR")
    if not value:
        pytest.skip("set MTPLUG_MOSES_FIXED_MERT_DIR to the mert/ folder of a Moses build with the CHRF and "
                    "BLEUDOC fixes (tests/golden/moses-chrf/README.md) to run this test")
    path = Path(value)
    for name in ("extractor", "evaluator"):
        if not (path / name).exists():
            pytest.fail(f"MTPLUG_MOSES_FIXED_MERT_DIR={value} lacks {name}")
    return path


def _mutate(rng: random.Random, words: list[str]) -> list[str]:
    h = list(words)
    for _ in range(rng.randint(0, 4)):
        op, i = rng.random(), rng.randrange(len(h) + 1)
        if op < 0.4 and h:
            h[min(i, len(h) - 1)] = rng.choice(WORDS)
        elif op < 0.7 and len(h) > 1:
            del h[min(i, len(h) - 1)]
        else:
            h.insert(i, rng.choice(WORDS))
    return h


def _chrf_set(folder: Path, seed: int) -> tuple[str, Path]:
    """Two reference files (60 sentences) and an n-best list (6 hypotheses each, a distinct
    F0 per line so that no line is a duplicate)."""
    rng = random.Random(seed)
    refs0, refs1, nbest = [], [], []
    for s in range(60):
        ref = [rng.choice(WORDS) for _ in range(rng.randint(1, 10))]
        refs0.append(" ".join(ref))
        refs1.append(" ".join(_mutate(rng, ref)))
        for k in range(6):
            nbest.append(f"{s} ||| {' '.join(_mutate(rng, ref))} ||| F0= {-len(nbest) * 0.5:g} "
                         f"F1= {rng.randint(-9, 9)} ||| {-k}")
    (folder / "ref.0").write_text("\n".join(refs0) + "\n", encoding="utf-8")
    (folder / "ref.1").write_text("\n".join(refs1) + "\n", encoding="utf-8")
    (folder / "dev.nbest").write_text("\n".join(nbest) + "\n", encoding="utf-8")
    return f"{folder / 'ref.0'},{folder / 'ref.1'}", folder / "dev.nbest"


def _bleudoc_set(folder: Path, seed: int) -> tuple[str, Path]:
    """Two XML reference files (15 documents of 1 to 5 sentences) and an n-best list (5
    documents each: edits of the reference sentences, some a sentence short, some without
    the separator after the last sentence)."""
    rng = random.Random(seed)
    docs = [[[rng.choice(WORDS) for _ in range(rng.randint(1, 10))] for _ in range(rng.randint(1, 5))]
            for _ in range(15)]
    for f, edit in (("ref.0.xml", False), ("ref.1.xml", True)):
        lines = ['<refset setid="s" srclang="any" trglang="en">']
        for d, doc in enumerate(docs):
            lines.append(f'<doc docid="d{d}" genre="x">')
            lines += [f'<seg id="{i + 1}">{" ".join(_mutate(rng, s) if edit else s)}</seg>' for i, s in enumerate(doc)]
            lines.append("</doc>")
        (folder / f).write_text("\n".join(lines + ["</refset>"]) + "\n", encoding="utf-8")
    nbest = []
    for d, doc in enumerate(docs):
        for k in range(5):
            sents = [" ".join(_mutate(rng, s)) for s in doc][: len(doc) - (k == 3)]
            text = " \\n ".join(sents) if k == 4 else "".join(s + " \\n " for s in sents).rstrip(" ")
            nbest.append(f"{d} ||| {text} ||| F0= {-len(nbest) * 0.25:g} F1= {rng.randint(-9, 9)} ||| {-k}")
    (folder / "dev.nbest").write_text("\n".join(nbest) + "\n", encoding="utf-8")
    return f"{folder / 'ref.0.xml'},{folder / 'ref.1.xml'}", folder / "dev.nbest"


def _extract(program: Path, sctype: str, scconfig: str, refs: str, nbest: Path, out: Path, name: str):
    return subprocess.run([str(program), "--sctype", sctype, "--scconfig", scconfig, "-r", refs, "-n", str(nbest),
                           "--scfile", f"{name}.scores.dat", "--ffile", f"{name}.features.dat"],
                          check=False, cwd=out, capture_output=True, text=True)


def test_real_moses_writes_all_zero_chrf_statistics(moses_dir, mertdir, tmp_path):
    refs, nbest = _chrf_set(tmp_path, 1)
    run = _extract(moses_dir / "bin" / "extractor", "CHRF", "", refs, nbest, tmp_path, "moses")
    assert run.returncode == 0, run.stderr
    rows = [line for line in (tmp_path / "moses.scores.dat").read_text().splitlines()
            if not line.startswith("SCORES_TXT")]
    assert len(rows) == 360
    assert all(set(r.split()) == {"0"} for r in rows), "Moses's CHRF statistics are not all zero any more"
    run = _extract(mertdir / "extractor", "CHRF", "", refs, nbest, tmp_path, "mtplug")
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "mtplug.features.dat").read_bytes() == (tmp_path / "moses.features.dat").read_bytes()


def test_real_moses_cannot_read_bleudoc_references(moses_dir, tmp_path):
    refs, nbest = _bleudoc_set(tmp_path, 1)
    run = _extract(moses_dir / "bin" / "extractor", "BLEUDOC", "", refs, nbest, tmp_path, "moses")
    assert run.returncode != 0
    assert "Sentence id (0) not found in reference set" in run.stderr


@pytest.mark.parametrize("sctype,scconfig", [("CHRF", ""), ("CHRF", "case:false,reflen:average"),
                                             ("CHRF", "reflen:shortest"), ("BLEUDOC", ""),
                                             ("BLEUDOC", "case:false,reflen:shortest")])
@pytest.mark.parametrize("seed", [2, 3])
def test_fixed_moses_extractor_files_are_byte_identical(fixed_dir, mertdir, tmp_path, sctype, scconfig, seed):
    refs, nbest = (_chrf_set if sctype == "CHRF" else _bleudoc_set)(tmp_path, seed)
    for program, name in ((fixed_dir / "extractor", "moses"), (mertdir / "extractor", "mtplug")):
        run = _extract(program, sctype, scconfig, refs, nbest, tmp_path, name)
        assert run.returncode == 0, run.stderr
    for suffix in ("scores.dat", "features.dat"):
        assert (tmp_path / f"mtplug.{suffix}").read_bytes() == (tmp_path / f"moses.{suffix}").read_bytes(), suffix


@pytest.mark.parametrize("sctype,scconfig", [("CHRF", ""), ("CHRF", "beta:1,case:false"), ("BLEUDOC", "")])
def test_fixed_moses_evaluator_scores_agree(fixed_dir, mertdir, tmp_path, sctype, scconfig):
    refs, nbest = (_chrf_set if sctype == "CHRF" else _bleudoc_set)(tmp_path, 4)
    best: dict[int, str] = {}
    for line in nbest.read_text(encoding="utf-8").splitlines():
        fields = line.split("|||")
        best.setdefault(int(fields[0]), fields[1][1:-1])
    cand = tmp_path / "cand.txt"
    cand.write_text("".join(best[s] + "\n" for s in sorted(best)), encoding="utf-8")
    printed = []
    for program in (fixed_dir / "evaluator", mertdir / "evaluator"):
        run = subprocess.run([str(program), "--sctype", sctype, "--scconfig", scconfig, "--reference", refs,
                              "--candidate", str(cand)], check=False, cwd=tmp_path, capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        printed.append(run.stdout)
    assert printed[0] == printed[1]
