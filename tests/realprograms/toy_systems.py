"""Tiny real SMT systems made from data generated here, for the tests that run the real
Moses and cdec (MTPLUG_MOSES_DIR / MTPLUG_CDEC_DIR). Nothing of Moses's or cdec's own
example data is used.

The language pair is synthetic: source words ``s0 .. s{V-1}``, target words ``t0 ..``,
each source word translated by its own target word (the right one) and by two others
(wrong, but with good translation-model scores), adjacent pairs of some source words
swapped in the target (so distortion and the language model matter). The language model is
trained by the build's ``lmplz`` on correct target sentences other than the tuning and
test references, so tuning has something to find: the start weights favour the wrong
translations; good weights pick the right words in the right order.

* Moses: a phrase table (PhraseDictionaryMemory), an ARPA LM (KENLM), Distortion,
  WordPenalty, PhrasePenalty, UnknownWordPenalty in a moses.ini.
* cdec: an SCFG with the same word translations, glue and pass-through rules and the
  same LM (KLanguageModel), WordPenalty, in a cdec.ini; start weights in a weights file.
"""

from __future__ import annotations

import os
import random
import subprocess
from dataclasses import dataclass
from pathlib import Path

VOCAB = 40
#: source words whose translation swaps with the next word's
SWAP = frozenset(range(0, VOCAB, 5))


@dataclass
class Corpus:
    source: list[str]
    target: list[str]


def _sentence(rng: random.Random) -> tuple[str, str]:
    n = rng.randint(6, 12)
    src = [rng.randrange(VOCAB) for _ in range(n)]
    tgt = [f"t{w}" for w in src]
    for i in range(n - 1):
        if src[i] in SWAP:
            tgt[i], tgt[i + 1] = tgt[i + 1], tgt[i]
    return " ".join(f"s{w}" for w in src), " ".join(tgt)


def corpus(n: int, seed: int) -> Corpus:
    rng = random.Random(seed)
    pairs = [_sentence(rng) for _ in range(n)]
    return Corpus([p[0] for p in pairs], [p[1] for p in pairs])


def _wrong(w: int, k: int) -> int:
    return (w * 7 + 3 + 11 * k) % VOCAB


def phrase_entries() -> list[tuple[str, str, list[float]]]:
    """(source, target, 4 probabilities) per phrase pair: the right word with middling
    scores, two wrong words with better ones, and the swapped two-word phrases."""
    out = []
    for w in range(VOCAB):
        out.append((f"s{w}", f"t{w}", [0.5, 0.3, 0.5, 0.3]))
        # the first wrong one beats the right one on the direct scores only
        out.append((f"s{w}", f"t{_wrong(w, 0)}", [0.6, 0.2, 0.6, 0.2]))
        out.append((f"s{w}", f"t{_wrong(w, 1)}", [0.2, 0.2, 0.2, 0.2]))
    for a in sorted(SWAP):
        for b in range(0, VOCAB, 3):
            out.append((f"s{a} s{b}", f"t{b} t{a}", [0.3, 0.2, 0.3, 0.2]))
    return out


def write_lm(lmplz: str, text: list[str], path: Path, order: int = 3) -> Path:
    """An ARPA LM of ``text`` by KenLM's lmplz (``--discount_fallback``: tiny corpora)."""
    data = "".join(t + "\n" for t in text).encode()
    p = subprocess.run([lmplz, "-o", str(order), "-S", "100M", "--discount_fallback"], input=data,
                       capture_output=True, timeout=300)
    if p.returncode != 0:
        raise RuntimeError(f"lmplz failed: {p.stderr.decode()[-2000:]}")
    path.write_bytes(p.stdout)
    return path


@dataclass
class ToySystem:
    folder: Path
    config: Path          # moses.ini or cdec.ini
    weights: Path | None  # cdec start weights
    dev_src: Path
    dev_ref: Path
    test_src: Path
    test_ref: Path


def _sets(folder: Path, n_dev: int, n_test: int) -> tuple[Path, Path, Path, Path, list[str]]:
    dev, test, lm = corpus(n_dev, 1), corpus(n_test, 2), corpus(600, 3)
    paths = []
    for name, lines in (("dev.src", dev.source), ("dev.ref", dev.target), ("test.src", test.source),
                        ("test.ref", test.target)):
        (folder / name).write_text("".join(t + "\n" for t in lines), encoding="utf-8")
        paths.append(folder / name)
    return (*paths, lm.target)


def moses_system(moses_dir: str | os.PathLike, folder: Path, n_dev: int = 30, n_test: int = 30) -> ToySystem:
    """The Moses toy system in ``folder`` (made once per folder)."""
    folder.mkdir(parents=True, exist_ok=True)
    dev_src, dev_ref, test_src, test_ref, lm_text = _sets(folder, n_dev, n_test)
    lm = write_lm(os.path.join(moses_dir, "bin", "lmplz"), lm_text, folder / "lm.arpa")
    table = folder / "phrase-table"
    table.write_text("".join(f"{s} ||| {t} ||| {' '.join(map(str, p))} ||| {_alignment(s, t)} ||| 1 1 1\n"
                             for s, t, p in sorted(phrase_entries())), encoding="utf-8")
    ini = folder / "moses.ini"
    ini.write_text(f"""\
# a toy phrase-based system made by tests/realprograms/toy_systems.py
[input-factors]
0

[mapping]
0 T 0

[distortion-limit]
4

[feature]
UnknownWordPenalty
WordPenalty
PhrasePenalty
PhraseDictionaryMemory name=TranslationModel0 num-features=4 path={table} input-factor=0 output-factor=0 table-limit=20
Distortion
KENLM name=LM0 factor=0 path={lm} order=3

[weight]
UnknownWordPenalty0= 1
WordPenalty0= -0.5
PhrasePenalty0= 0.2
TranslationModel0= 0.3 0.2 0.3 0.2
Distortion0= 0.3
LM0= 0.1
""", encoding="utf-8")
    return ToySystem(folder, ini, None, dev_src, dev_ref, test_src, test_ref)


def _alignment(src: str, tgt: str) -> str:
    n = len(src.split())
    return "0-0" if n == 1 else "0-1 1-0"


def cdec_system(cdec_dir: str | os.PathLike, folder: Path, n_dev: int = 30, n_test: int = 30) -> ToySystem:
    """The cdec toy system in ``folder``: the same translations as an SCFG."""
    folder.mkdir(parents=True, exist_ok=True)
    dev_src, dev_ref, test_src, test_ref, lm_text = _sets(folder, n_dev, n_test)
    lm = write_lm(os.path.join(cdec_dir, "klm", "lm", "builder", "lmplz"), lm_text, folder / "lm.arpa")
    grammar = folder / "grammar.scfg"
    rules = []
    for s, t, p in sorted(phrase_entries()):
        feats = " ".join(f"PhraseModel_{k}={-_log(v):.6g}" for k, v in enumerate(p))
        rules.append(f"[X] ||| {s} ||| {t} ||| {feats}\n")
    grammar.write_text("".join(rules), encoding="utf-8")
    ini = folder / "cdec.ini"
    ini.write_text(f"""\
formalism=scfg
add_pass_through_rules=true
grammar={grammar}
feature_function=WordPenalty
feature_function=KLanguageModel {lm}
""", encoding="utf-8")
    weights = folder / "weights.start"
    weights.write_text("Glue 0.1\nWordPenalty -0.5\nLanguageModel 0.1\nLanguageModel_OOV -1\nPassThrough -2\n"
                       "PhraseModel_0 -0.3\nPhraseModel_1 -0.2\nPhraseModel_2 -0.3\nPhraseModel_3 -0.2\n",
                       encoding="utf-8")
    return ToySystem(folder, ini, weights, dev_src, dev_ref, test_src, test_ref)


def _log(p: float) -> float:
    import math

    return math.log(p)
