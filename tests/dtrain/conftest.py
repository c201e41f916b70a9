"""Fixtures for mtplug dtrain: the stand-in cdec decoder and the Moses toy set as its pool."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from .standin_cdec import build_pool

STANDIN = Path(__file__).resolve().parent / "standin_cdec.py"

#: the dense features of the toy n-best in cdec names, and run1.init.opt's first line (its start weights)
TOY_FEATURES = ["Distortion0_0", "LM0_0", "WordPenalty0_0", "PhrasePenalty0_0", "TranslationModel0_0",
                "TranslationModel0_1", "TranslationModel0_2", "TranslationModel0_3"]
TOY_START_BLEU = 0.265757  # shared/data/moses-toy/README.md: BLEU of the start weights over the 6,000 hypotheses


@pytest.fixture(scope="session")
def standin_command() -> str:
    """The stand-in decoder as a command line (python -S: stdlib only, fast start-up)."""
    return shlex.join([sys.executable, "-S", str(STANDIN)])


@pytest.fixture(scope="session")
def toy(tmp_path_factory, shared_data):
    """A dtrain set-up over the Moses toy set: pool, cdec.ini, input (<seg id> lines), refs, start weights."""
    d = tmp_path_factory.mktemp("dtrain-toy")
    toy_dir = shared_data / "moses-toy"
    n = build_pool(str(toy_dir / "run1.best100.out.gz"), str(d / "pool"))
    sources = (d / "pool" / "index.txt").read_text(encoding="utf-8").splitlines()
    (d / "input.txt").write_text("".join(f'<seg id="{i}">{s}</seg>\n' for i, s in enumerate(sources)),
                                 encoding="utf-8")
    (d / "refs.txt").write_bytes((toy_dir / "ref.0").read_bytes())
    (d / "cdec.ini").write_text(f"# stand-in decoder: the pool plays the grammar\ngrammar={d / 'pool'}\n",
                                encoding="utf-8")
    start = [float(x) for x in (toy_dir / "run1.init.opt").read_text().split("\n")[0].split()]
    (d / "weights.start").write_text("".join(f"{n_} {v}\n" for n_, v in zip(TOY_FEATURES, start)),
                                     encoding="utf-8")
    return {"dir": d, "sentences": n, "input": str(d / "input.txt"), "refs": str(d / "refs.txt"),
            "cdec_ini": str(d / "cdec.ini"), "weights": str(d / "weights.start"),
            "nbest": str(toy_dir / "run1.best100.out.gz"), "ref0": str(toy_dir / "ref.0")}


@pytest.fixture
def dtrain_ini(toy, tmp_path):
    """dtrain_ini(**keys) -> path of a dtrain.ini over the toy set with those keys added."""

    def _make(**keys) -> str:
        lines = [f"input={toy['input']}", f"refs={toy['refs']}", f"decoder_config={toy['cdec_ini']}",
                 f"input_weights={toy['weights']}"]
        lines += [f"{k}={v}" for k, v in keys.items()]
        path = tmp_path / "dtrain.ini"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return str(path)

    return _make
