"""Fixtures for mtplug dtrain: the stand-in decoder's cdec front end over the Moses toy set."""

from __future__ import annotations

import gzip
import shlex
import sys
from pathlib import Path

import pytest

STANDIN = Path(__file__).resolve().parents[2] / "mtplug" / "tuning" / "standin.py"

#: the toy n-best's dense features as the stand-in's cdec front end names them, in the
#: pool's order, and the Moses features.dat column each one is
TOY_FEATURES = ["Distortion", "LanguageModel", "WordPenalty", "PhrasePenalty", "PhraseModel_0",
                "PhraseModel_1", "PhraseModel_2", "PhraseModel_3"]
MOSES_COLUMNS = dict(zip(TOY_FEATURES, ["Distortion0_0", "LM0_0", "WordPenalty0_0", "PhrasePenalty0_0",
                                        "TranslationModel0_0", "TranslationModel0_1", "TranslationModel0_2",
                                        "TranslationModel0_3"]))
TOY_START_BLEU = 0.265757  # shared/data/moses-toy/README.md: BLEU of the start weights over the 6,000 hypotheses


@pytest.fixture(scope="session")
def toy(tmp_path_factory, example_data):
    """A dtrain set-up over the Moses toy set: the stand-in's pool (the toy n-best, unzipped: dtrain
    starts one stand-in per sentence, each would gunzip it), sources, cdec.ini, input (<seg id>
    lines), refs, start weights."""
    d = tmp_path_factory.mktemp("dtrain-toy")
    toy_dir = example_data
    (d / "pool.best100.out").write_bytes(gzip.decompress((toy_dir / "run1.best100.out.gz").read_bytes()))
    sources = [f"src{i}: source sentence {i}" for i in range(60)]
    (d / "sources.txt").write_text("".join(s + "\n" for s in sources), encoding="utf-8")
    (d / "input.txt").write_text("".join(f'<seg id="{i}">{s}</seg>\n' for i, s in enumerate(sources)),
                                 encoding="utf-8")
    (d / "refs.txt").write_bytes((toy_dir / "ref.0").read_bytes())
    (d / "cdec.ini").write_text("# stand-in decoder: the pool plays the grammar\nformalism=scfg\n",
                                encoding="utf-8")
    start = [float(x) for x in (toy_dir / "run1.init.opt").read_text().split("\n")[0].split()]
    (d / "weights.start").write_text("".join(f"{n_} {v}\n" for n_, v in zip(TOY_FEATURES, start)),
                                     encoding="utf-8")
    return {"dir": d, "sentences": len(sources), "sources": sources, "source_file": str(d / "sources.txt"),
            "input": str(d / "input.txt"), "refs": str(d / "refs.txt"), "cdec_ini": str(d / "cdec.ini"),
            "weights": str(d / "weights.start"), "nbest": str(toy_dir / "run1.best100.out.gz"),
            "pool": str(d / "pool.best100.out"), "ref0": str(toy_dir / "ref.0")}


@pytest.fixture(scope="session")
def standin_command(toy) -> str:
    """The stand-in's cdec front end as a command line (python -S: stdlib only, fast start-up),
    re-ranking the toy n-best; plain input lines are found in the sources file."""
    return shlex.join([sys.executable, "-S", str(STANDIN), "cdec", "-standin-pool", toy["pool"],
                       "-standin-source", toy["source_file"]])


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


def standin_system(toy, tmp_path) -> tuple[Path, Path]:
    """(a cdec build folder whose decoder/cdec is the stand-in, a system folder of the toy set
    as benchmarks/real_systems.py reads one) for the decoder-loop studies' tests."""
    build = tmp_path / "build" / "decoder"
    build.mkdir(parents=True)
    cdec = build / "cdec"
    cdec.write_text("#!/bin/sh\nexec " + shlex.join([sys.executable, "-S", str(STANDIN), "cdec", "-standin-pool",
                                                       toy["pool"], "-standin-source", toy["source_file"]])
                    + ' "$@"\n')
    cdec.chmod(0o755)
    system = tmp_path / "system"
    system.mkdir()
    for part in ("dev", "test"):
        (system / f"{part}.de").write_bytes(Path(toy["source_file"]).read_bytes())
        (system / f"{part}.en").write_bytes(Path(toy["refs"]).read_bytes())
    (system / "cdec.ini").write_bytes(Path(toy["cdec_ini"]).read_bytes())
    (system / "weights.start").write_bytes(Path(toy["weights"]).read_bytes())
    return build.parent, system
