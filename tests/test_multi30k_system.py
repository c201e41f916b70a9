"""benchmarks/reproductions/make_multi30k_system.py: its errors (no cdec needed) and, with the
real cdec (MTPLUG_CDEC_DIR, its build folder), a whole build on a tiny invented corpus
(``--data``: 200 training pairs, 5 tuning, 5 test; ``--dev-size 10``: the last 10 filtered
training pairs are the dev set) that the decoder then translates."""

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
    # the last 10 training pairs are the dev set (--dev-size 10): one earlier pair equal to a dev pair,
    # one with a dev pair's English only; both leave the training corpus
    sets["train"][1] = sets["train"][-1]
    sets["train"][2] = ("Ein ganz anderer Satz.", sets["train"][-2][1])
    folder.mkdir(parents=True, exist_ok=True)
    for name, pairs in sets.items():
        (folder / f"{name}.de").write_text("".join(de + "\n" for de, _ in pairs), encoding="utf-8")
        (folder / f"{name}.en").write_text("".join(en + "\n" for _, en in pairs), encoding="utf-8")


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _script(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, check=False, timeout=900
    )



def _decode(cdec, out: Path, source: str) -> list[str]:
    """The 1-best lines of the built system's cdec on OUT/SOURCE at the start weights."""
    with open(out / source, "rb") as fin:
        dec = subprocess.run(
            [str(Path(cdec) / "decoder" / "cdec"), "-c", str(out / "cdec.ini"), "-w", str(out / "weights.start")],
            stdin=fin,
            capture_output=True,
            check=False,
            timeout=300,
        )
    assert dec.returncode == 0, dec.stderr.decode(errors="replace")[-2000:]
    return dec.stdout.decode().splitlines()

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
    opts = ("--jobs", "1", "--lm-order", "3", "--dev-size", "10")
    p = _script("--cdec", cdec, "--data", tmp_path / "data", "--out", out, *opts)
    assert p.returncode == 0, p.stderr
    for name in (
        "tune.de",
        "tune.en",
        "tune.devset",
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
    assert not (out / "test.devset").exists()
    assert sorted(x.name for x in (out / "grammars" / "tune").iterdir()) == [f"grammar.{i}.gz" for i in range(5)]
    assert sorted(x.name for x in (out / "grammars" / "dev").iterdir()) == [f"grammar.{i}.gz" for i in range(10)]
    assert len(list((out / "grammars" / "test").iterdir())) == 5
    for name, n in (("tune", 5), ("dev", 10), ("test", 5)):
        segs = (out / f"{name}.de").read_text(encoding="utf-8").splitlines()
        assert len(segs) == n and len((out / f"{name}.en").read_text(encoding="utf-8").splitlines()) == n
        assert segs[0].startswith(f'<seg id="0" grammar="{out / "grammars" / name / "grammar.0.gz"}"> die ')
    assert "grammar=" not in (out / "cdec.ini").read_text(encoding="utf-8")
    weights = dict(line.split() for line in (out / "weights.start").read_text(encoding="utf-8").splitlines())
    assert weights["EgivenFCoherent"] == "-0.1" and weights["CountEF"] == "0.1" and weights["LanguageModel"] == "0.1"

    # the dev set: the last 10 training pairs left by the val/test overlap filter, in no training pair
    # and not in the LM text
    data = out / "data"
    held = {
        lang: set(_lines(data / f"val.tok.{lang}")) | set(_lines(data / f"test.tok.{lang}")) for lang in ("de", "en")
    }
    filtered = [
        (de, en)
        for de, en in zip(_lines(data / "train.tok.de"), _lines(data / "train.tok.en"))
        if de not in held["de"] and en not in held["en"]
    ]
    assert len(filtered) == 199
    dev_pairs = list(zip(_lines(data / "dev.tok.de"), _lines(data / "dev.tok.en")))
    assert dev_pairs == filtered[-10:]
    assert _lines(out / "dev.en") == [en for _, en in dev_pairs]
    dev_de, dev_en = {de for de, _ in dev_pairs}, {en for _, en in dev_pairs}
    bitext = [line.split(" ||| ") for line in _lines(data / "train.bitext")]
    assert bitext and not any(de in dev_de or en in dev_en for de, en in bitext)
    lm_text = _lines(out / "lm.txt")
    assert lm_text == [en for _, en in bitext] and not set(lm_text) & dev_en
    shared_de = sum(1 for de, _ in filtered[:-10] if de in dev_de)
    shared_en = sum(1 for de, en in filtered[:-10] if de not in dev_de and en in dev_en)
    assert shared_de >= 1 and shared_en >= 1  # the pairs copied in _write_corpus
    prov = json.loads((out / "provenance.json").read_text(encoding="utf-8"))
    filt = prov["steps"]["filter"]
    assert filt["dropped"]["overlap_de"] == 1
    assert filt["dev_size"] == 10 and filt["dev_pairs"] == 10 and prov["options"]["dev_size"] == 10
    assert filt["dropped"]["dev_overlap_de"] == shared_de and filt["dropped"]["dev_overlap_en_only"] == shared_en
    assert filt["train_kept"] == len(bitext) == 199 - 10 - shared_de - shared_en
    assert filt["train_in"] == filt["train_kept"] + filt["dev_pairs"] + filt["dropped_total"]
    assert set(prov["sets"]) == {"tune", "dev", "test", "train"}

    hyps = _decode(cdec, out, "tune.de")
    assert len(hyps) == 5 and all(hyps)
    # the invented corpus is word for word: the system should get most words right
    refs = (out / "tune.en").read_text(encoding="utf-8").split()
    assert len(set(" ".join(hyps).split()) & set(refs)) >= len(set(refs)) // 2
    assert len(_decode(cdec, out, "dev.de")) == 10

    again = _script("--cdec", cdec, "--data", tmp_path / "data", "--out", out, *opts)
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("skipped") == 10  # every step's output exists: a rerun does nothing

    # another dev size over the same folder would mix two layouts: refused, one line
    other = _script("--cdec", cdec, "--data", tmp_path / "data", "--out", out, "--jobs", "1", "--dev-size", "5")
    assert other.returncode == 2
    assert len(other.stderr.strip().splitlines()) == 1 and "fresh --out" in other.stderr, other.stderr
    # as would a folder of the old layout (no dev size recorded)
    steps = json.loads((out / "logs" / "steps.json").read_text(encoding="utf-8"))
    del steps["filter"]["dev_size"]
    (out / "logs" / "steps.json").write_text(json.dumps(steps), encoding="utf-8")
    old = _script("--cdec", cdec, "--data", tmp_path / "data", "--out", out, *opts)
    assert old.returncode == 2 and "old layout" in old.stderr and "fresh --out" in old.stderr, old.stderr
