"""The real client: nusnlp/nbest-reranker's ``train.py`` (the GEC reranker of the
mlconvgec2018 system), unchanged, with ``--moses-dir $(mtplug mertdir --moses-root DIR)``:
it runs ``DIR/bin/extractor`` (``--sctype M2SCORER --scconfig
ignore_whitespace_casing:true`` for ``--tuning-metric m2``) and ``DIR/bin/mert -d D ...
--ifile init.opt --threads 14 -r 1``, then takes ``weights.txt`` from its working
directory. On a seeded GEC set made here, mtplug's programs must run it to the end and
reach at least the F0.5 (BLEU) of Moses's from the same start.

MTPLUG_NBEST_RERANKER_DIR: a clone of https://github.com/nusnlp/nbest-reranker (not
stored here). ``train.py`` needs a Python with the ``imp`` module (2.7 or 3 up to 3.11):
MTPLUG_NBEST_RERANKER_PYTHON, else this Python. MTPLUG_MOSES_DIR (the Moses build) for
the comparison with Moses's programs.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
VOCAB = ["the", "The", "a", "an", "cat", "cats", "dog", "dogs", "sat", "sit", "sits", "on", "in", "at",
         "mat", "house", "is", "are", "go", "goes", "went", "to", "school", "he", "she", "they", "."]
BEST_POINT = re.compile(r"^Best point: (.*?)\s*=> (\S+)$", re.MULTILINE)


@pytest.fixture(scope="module")
def reranker() -> tuple[str, Path]:
    """(the Python to run it with, the folder of train.py)."""
    value = os.environ.get("MTPLUG_NBEST_RERANKER_DIR")
    if not value:
        pytest.skip("set MTPLUG_NBEST_RERANKER_DIR to a clone of nusnlp/nbest-reranker to run this test")
    folder = Path(value)
    if not (folder / "train.py").is_file():
        pytest.fail(f"MTPLUG_NBEST_RERANKER_DIR={value} has no train.py")
    python = os.environ.get("MTPLUG_NBEST_RERANKER_PYTHON")
    if not python:
        if sys.version_info >= (3, 12):
            pytest.skip("train.py imports imp (gone in Python 3.12): set MTPLUG_NBEST_RERANKER_PYTHON to a "
                        "Python 2.7 or 3.11")
        python = sys.executable
    return python, folder


def gec_set(folder: Path, sentences: int = 100, nbest: int = 12, seed: int = 38) -> None:
    """Write dev.m2 (1-2 annotators, 0-3 gold edits each: substitutions, insertions,
    deletions, noop lines), ref.txt (annotator 0's correction, the BLEU reference),
    dev.nbest (``nbest`` hypotheses per sentence: each the source with some gold edits of
    one annotator and 0-3 spurious substitutions; features Model0, EditOps0 (deletions,
    insertions, substitutions), WordPenalty0 and LM0, the augmented feature, as
    nbest-reranker's augmenter.py appends it: noisy but informative) and config.ini (the
    [weight] section train.py reads: all features but LM0, whose start is --init-value)."""
    rng = random.Random(seed)
    m2, nb, refs = [], [], []
    for s in range(sentences):
        src = [rng.choice(VOCAB) for _ in range(rng.randint(5, 12))]
        m2.append("S " + " ".join(src))
        golds = []
        for annotator in range(rng.randint(1, 2)):
            edits: list[tuple[int, int, str]] = []
            taken: set[int] = set()
            for _ in range(rng.randint(0, 3)):
                start = rng.randrange(len(src) + 1)
                end = min(len(src), start + rng.choice([0, 1, 1, 2]))
                span = set(range(start, max(end, start + 1)))
                if span & taken:
                    continue
                corr = "" if (end > start and rng.random() < 0.25) else " ".join(
                    rng.choice(VOCAB) for _ in range(rng.choice([1, 1, 2])))
                if end == start and not corr:
                    continue
                taken |= span
                edits.append((start, end, corr))
            edits.sort()
            m2.extend(f"A {a} {b}|||R:OTHER|||{c}|||REQUIRED|||-NONE-|||{annotator}" for a, b, c in edits)
            if not edits:
                m2.append(f"A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||{annotator}")
            golds.append(edits)
            if annotator == 0:
                corrected = list(src)
                for a, b, c in sorted(edits, reverse=True):
                    corrected[a:b] = c.split()
                refs.append(" ".join(corrected))
        m2.append("")
        for _ in range(nbest):
            chosen = [e for e in rng.choice(golds) if rng.random() < 0.4]
            spurious = 0
            for _ in range(rng.choice([0, 1, 1, 2, 2, 3])):
                i = rng.randrange(len(src))
                if all(not (e[0] <= i < max(e[1], e[0] + 1)) for e in chosen):
                    chosen.append((i, i + 1, rng.choice(VOCAB)))
                    spurious += 1
            hyp = list(src)
            dels = ins = subs = 0
            for a, b, c in sorted(chosen, reverse=True):
                words = c.split()
                dels += max(0, (b - a) - len(words))
                ins += max(0, len(words) - (b - a))
                subs += min(len(words), b - a)
                hyp[a:b] = words
            good = len(chosen) - spurious
            model = -0.3 * len(chosen) + 0.4 * good - 0.6 * spurious + rng.gauss(0, 0.8)
            lm = -2.0 * len(hyp) - 1.5 * spurious + 0.5 * good + rng.gauss(0, 1.5)
            nb.append(f"{s} ||| {' '.join(hyp)} ||| Model0= {model:.4f} EditOps0= {dels} {ins} {subs} "
                      f"WordPenalty0= {-len(hyp)} LM0= {lm:.4f} ||| {model:.4f}")
    (folder / "dev.m2").write_text("\n".join(m2) + "\n")
    (folder / "ref.txt").write_text("\n".join(refs) + "\n")
    (folder / "dev.nbest").write_text("\n".join(nb) + "\n")
    (folder / "config.ini").write_text("[weight]\nModel0= 1.0\nEditOps0= 0.2 0.2 0.2\nWordPenalty0= 0.1\n")


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("gec")
    gec_set(folder)
    return folder


@pytest.fixture(scope="module")
def mtplug_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("roots") / "mtplug-moses"
    run = subprocess.run([sys.executable, "-m", "mtplug", "mertdir", "--moses-root", str(root)], check=False, cwd=REPO,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == str(root)
    return root


def train(reranker, data: Path, root: Path, metric: str, work: Path, seeded: bool = True):
    """Run train.py in ``work``: (its out folder, the weights, mert's printed score)."""
    python, folder = reranker
    work.mkdir()
    ref = data / ("dev.m2" if metric == "m2" else "ref.txt")
    argv = [python, str(folder / "train.py"), "-i", str(data / "dev.nbest"), "-r", str(ref), "-c",
            str(data / "config.ini"), "-o", str(work / "out"), "--tuning-metric", metric, "--moses-dir", str(root)]
    run = subprocess.run(argv + (["-s"] if seeded else []), check=False, cwd=work, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    found = BEST_POINT.findall(run.stderr)
    assert len(found) == 1, run.stderr[-3000:]
    weights = [float(x) for x in (work / "out" / "weights.txt").read_text().split()]
    assert weights == pytest.approx([float(x) for x in found[0][0].split()])
    return work / "out", weights, float(found[0][1])


def rescored(out: Path, metric: str, weights) -> tuple[float, float]:
    """mtplug's corpus score of the start point (init.opt) and of ``weights`` on the files
    train.py made."""
    from mtplug.integrations.moses.common import load_mert_data

    corpus = load_mert_data([str(out / "features.data")], [str(out / "statscore.data")],
                            "M2SCORER" if metric == "m2" else "BLEU").dense_only()
    start = np.array([float(x) for x in (out / "init.opt").read_text().splitlines()[0].split()])
    return corpus.metric_of(start), corpus.metric_of(np.array(weights))


@pytest.mark.parametrize("metric,seeded", [("m2", True), ("bleu", True), ("m2", False)])
def test_train_py_runs_with_mtplug_moses_root(reranker, data, mtplug_root, tmp_path, metric, seeded):
    out, weights, score = train(reranker, data, mtplug_root, metric, tmp_path / "mtplug", seeded)
    assert len(weights) == 6                          # 5 from config.ini, LM0 at --init-value
    assert sum(abs(w) for w in weights) == pytest.approx(1.0, abs=1e-5)
    assert ("M2Scorer" if metric == "m2" else "BLEU") in (out / "statscore.data").read_text()
    start, tuned = rescored(out, metric, weights)
    assert tuned == pytest.approx(score, abs=2e-6)
    assert tuned > start + 0.05


@pytest.mark.parametrize("metric", ["m2", "bleu"])
def test_train_py_mtplug_reaches_moses(reranker, moses_dir, data, mtplug_root, tmp_path, metric):
    out, weights, score = train(reranker, data, mtplug_root, metric, tmp_path / "mtplug")
    moses_out, moses_weights, moses_score = train(reranker, data, moses_dir, metric, tmp_path / "moses")
    for name in ("statscore.data", "features.data", "init.opt"):
        assert (out / name).read_bytes() == (moses_out / name).read_bytes(), name
    assert score >= moses_score
    # both rescored by mtplug on the same files: the same order
    assert rescored(out, metric, weights)[1] >= rescored(out, metric, moses_weights)[1]
