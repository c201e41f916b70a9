"""benchmarks/reproductions/make_multi30k_system.py: its errors (no cdec needed) and, with the
real cdec (MTPLUG_CDEC_DIR, its build folder), a whole build on a tiny invented corpus
(``--data``: 200 training pairs, 5 tuning, 5 test) that the decoder then translates."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "benchmarks" / "reproductions" / "make_multi30k_system.py"

# an invented word-for-word "German-English" vocabulary (the sentences mean nothing)
ADJ = {"alte": "old", "junge": "young", "kleine": "small", "rote": "red", "blaue": "blue", "frohe": "happy"}
NOUN = {"frau": "woman", "katze": "cat", "lehrerin": "teacher", "tante": "aunt", "nachbarin": "neighbour"}
VERB = {"schläft": "sleeps", "läuft": "runs", "singt": "sings", "liest": "reads", "lacht": "laughs"}
PLACE = {"im park": "in the park", "am see": "at the lake", "im haus": "in the house", "am strand": "on the beach"}


def _pair(rng: random.Random, places: int) -> tuple[str, str]:
    a, n, v = rng.choice(list(ADJ)), rng.choice(list(NOUN)), rng.choice(list(VERB))
    de, en = f"Die {a} {n} {v}", f"The {ADJ[a]} {NOUN[n]} {VERB[v]}"
    for _ in range(places):
        p = rng.choice(list(PLACE))
        de, en = f"{de} {p}", f"{en} {PLACE[p]}"
    return de + ".", en + "."


def _write_corpus(folder: Path) -> None:
    rng = random.Random(7)
    # training sentences name at most one place, tuning and test sentences two: no held-out
    # sentence is a training sentence but the one copied in
    sets = {
        "train": [_pair(rng, int(rng.random() < 0.6)) for _ in range(200)],
        "val": [_pair(rng, 2) for _ in range(5)],
        "test": [_pair(rng, 2) for _ in range(5)],
    }
    sets["train"][0] = sets["val"][0]  # one training pair equal to a tuning pair: filtered out
    folder.mkdir(parents=True, exist_ok=True)
    for name, pairs in sets.items():
        (folder / f"{name}.de").write_text("".join(de + "\n" for de, _ in pairs), encoding="utf-8")
        (folder / f"{name}.en").write_text("".join(en + "\n" for _, en in pairs), encoding="utf-8")


def _script(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, check=False, timeout=900
    )


def test_missing_data_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    _write_corpus(tmp_path / "data")
    (tmp_path / "data" / "val.en").unlink()
    p = _script("--cdec", tmp_path / "no-cdec", "--data", tmp_path / "data", "--out", tmp_path / "sys")
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert "val.en" in lines[0] and "Traceback" not in p.stderr


def test_unequal_line_counts_is_one_line_and_exit_2(tmp_path: Path) -> None:
    cdec = os.environ.get("MTPLUG_CDEC_DIR")
    if not cdec:
        pytest.skip("set MTPLUG_CDEC_DIR to cdec's build folder to run this test (the script checks its tools first)")
    _write_corpus(tmp_path / "data")
    with open(tmp_path / "data" / "test.en", "a", encoding="utf-8") as fh:
        fh.write("one line too many\n")
    p = _script("--cdec", cdec, "--data", tmp_path / "data", "--out", tmp_path / "sys")
    assert p.returncode == 2
    assert len(p.stderr.strip().splitlines()) == 1 and "test.en" in p.stderr


def test_builds_a_system_that_cdec_decodes(tmp_path: Path) -> None:
    cdec = os.environ.get("MTPLUG_CDEC_DIR")
    if not cdec:
        pytest.skip(
            "set MTPLUG_CDEC_DIR to cdec's build folder (with decoder/cdec, extractor/, word-aligner/, "
            "klm/) to build a system with the real programs"
        )
    _write_corpus(tmp_path / "data")
    out = tmp_path / "sys"
    p = _script("--cdec", cdec, "--data", tmp_path / "data", "--out", out, "--jobs", "1", "--lm-order", "3")
    assert p.returncode == 0, p.stderr
    for name in (
        "dev.de",
        "dev.en",
        "dev.devset",
        "test.de",
        "test.en",
        "cdec.ini",
        "cdec-sparse.ini",
        "weights.start",
        "lm.klm",
        "provenance.json",
    ):
        assert (out / name).is_file(), name
    assert sorted(x.name for x in (out / "grammars" / "tune").iterdir()) == [f"grammar.{i}.gz" for i in range(5)]
    assert len(list((out / "grammars" / "test").iterdir())) == 5
    dev = (out / "dev.de").read_text(encoding="utf-8").splitlines()
    assert dev[0].startswith(f'<seg id="0" grammar="{out / "grammars" / "tune" / "grammar.0.gz"}"> die ')
    assert "grammar=" not in (out / "cdec.ini").read_text(encoding="utf-8")
    weights = dict(line.split() for line in (out / "weights.start").read_text(encoding="utf-8").splitlines())
    assert weights["EgivenFCoherent"] == "-0.1" and weights["CountEF"] == "0.1" and weights["LanguageModel"] == "0.1"
    prov = json.loads((out / "provenance.json").read_text(encoding="utf-8"))
    assert prov["steps"]["filter"]["dropped"]["overlap_de"] == 1
    assert prov["steps"]["filter"]["train_kept"] == 199

    with open(out / "dev.de", "rb") as fin:
        dec = subprocess.run(
            [str(Path(cdec) / "decoder" / "cdec"), "-c", str(out / "cdec.ini"), "-w", str(out / "weights.start")],
            stdin=fin,
            capture_output=True,
            check=False,
            timeout=300,
        )
    assert dec.returncode == 0, dec.stderr.decode(errors="replace")[-2000:]
    hyps = dec.stdout.decode().splitlines()
    assert len(hyps) == 5 and all(hyps)
    # the invented corpus is word for word: the system should get most words right
    refs = (out / "dev.en").read_text(encoding="utf-8").split()
    assert len(set(" ".join(hyps).split()) & set(refs)) >= len(set(refs)) // 2

    again = _script("--cdec", cdec, "--data", tmp_path / "data", "--out", out, "--jobs", "1", "--lm-order", "3")
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("skipped") == 9  # every step's output exists: a rerun does nothing
