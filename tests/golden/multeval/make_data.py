"""Write the synthetic test set under ``data/`` that MultEval scored for the goldens here.

Run ``python tests/golden/multeval/make_data.py`` from anywhere; the output depends only on
``SEED`` and numpy's PCG64 generator, so running it again rewrites identical bytes. The
files are the input of the goldens (see README.md), so the script must not be changed
without scoring the new files with MultEval again.

Layout of ``data/`` (one sentence per line, ASCII, single spaces, no empty lines):

- ``ref.0``, ``ref.1``: two references for ``N_SENTENCES`` sentences. ``ref.1`` paraphrases
  ``ref.0`` with a different length on many lines, so the closest-reference choice, its
  tie rule and TER's averaged reference length all matter.
- ``baseline.opt{0,1,2}``, ``sys1.opt{0,1,2}``: three "optimizer replicas" per system; each
  is a reference corrupted at its own error rate, ``sys1`` slightly less than the baseline.
- ``baseline.single``, ``sys1.single``: the one-replica pair.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

SEED = 20261125
N_SENTENCES = 120
OUT_DIR = Path(__file__).resolve().parent / "data"

# Frequent function words make n-gram matches beyond unigrams likely; the capitalised words
# let a test see that MultEval's BLEU is case-sensitive while its TER folds case.
FUNCTION_WORDS = ["the", "of", "and", "to", "a", "in", "is", "that", ",", "."]
CONTENT_WORDS = [
    "house", "river", "green", "old", "city", "road", "light", "stone", "water", "bread",
    "window", "market", "winter", "paper", "garden", "train", "letter", "friend", "song",
    "bridge", "Anna", "Berlin", "Monday", "Rhine", "walks", "sees", "builds", "opens",
]
VOCAB = FUNCTION_WORDS + CONTENT_WORDS
# Roughly Zipfian: function words carry about half of the probability mass.
WEIGHTS = np.concatenate([np.full(len(FUNCTION_WORDS), 5.0), np.full(len(CONTENT_WORDS), 1.0)])
WEIGHTS /= WEIGHTS.sum()

# (substitute, delete, insert, swap-with-next) probability per word. Replicas draw their
# own rate around the system's so that the spread across replicas (s_dev) is not zero.
SYSTEM_RATES = {"baseline": (0.20, 0.06, 0.05, 0.04), "sys1": (0.19, 0.06, 0.05, 0.04)}
REPLICA_JITTER = 0.01


def _words(rng: np.random.Generator, n: int) -> list[str]:
    return [VOCAB[i] for i in rng.choice(len(VOCAB), size=n, p=WEIGHTS)]


def _sentence(rng: np.random.Generator) -> list[str]:
    return _words(rng, int(rng.integers(3, 26)))


def _corrupt(rng: np.random.Generator, words: list[str], rates: tuple[float, ...]) -> list[str]:
    """Apply per-word substitutions, deletions, insertions and adjacent swaps.

    Adjacent swaps give TER something to shift. The result is never empty because MultEval
    counts an empty line as one empty token (sacrebleu counts zero), and these goldens are
    meant to compare the arithmetic, not that quirk.
    """
    p_sub, p_del, p_ins, p_swap = rates
    out: list[str] = []
    for word in words:
        u = rng.random()
        if u < p_del:
            continue
        if u < p_del + p_sub:
            word = _words(rng, 1)[0]
        out.append(word)
        if rng.random() < p_ins:
            out.extend(_words(rng, 1))
    for i in range(len(out) - 1):
        if rng.random() < p_swap:
            out[i], out[i + 1] = out[i + 1], out[i]
    return out or _words(rng, 1)


def _capitalise_first(words: list[str]) -> list[str]:
    return [words[0][:1].upper() + words[0][1:]] + words[1:]


def _hypotheses(
    rng: np.random.Generator, refs: list[list[list[str]]], rates: tuple[float, ...]
) -> list[list[str]]:
    jittered = tuple(max(0.0, r + rng.normal(0.0, REPLICA_JITTER)) for r in rates)
    hyps = []
    for sid in range(N_SENTENCES):
        # Translate "towards" either reference so that both get n-gram credit.
        source = refs[int(rng.integers(2))][sid]
        hyp = _corrupt(rng, source, jittered)
        # A decoder often lowercases the sentence start: BLEU sees a miss, TER does not.
        if rng.random() < 0.3:
            hyp = [hyp[0].lower()] + hyp[1:]
        hyps.append(hyp)
    return hyps


def _write(name: str, sentences: list[list[str]]) -> None:
    text = "".join(" ".join(words) + "\n" for words in sentences)
    (OUT_DIR / name).write_text(text, encoding="ascii", newline="\n")


def main() -> None:
    """Write every file of ``data/`` (see the module docstring)."""
    root = np.random.SeedSequence(SEED)
    ref_seq, *hyp_seqs = root.spawn(1 + 2 * 4)
    ref_rng = np.random.default_rng(ref_seq)

    ref0 = [_capitalise_first(_sentence(ref_rng)) for _ in range(N_SENTENCES)]
    ref1 = [_corrupt(ref_rng, words, (0.25, 0.08, 0.10, 0.05)) for words in ref0]
    refs = [ref0, ref1]

    OUT_DIR.mkdir(exist_ok=True)
    _write("ref.0", ref0)
    _write("ref.1", ref1)
    names = [f"opt{i}" for i in range(3)] + ["single"]
    seqs = iter(hyp_seqs)
    for system, rates in SYSTEM_RATES.items():
        for name in names:
            rng = np.random.default_rng(next(seqs))
            _write(f"{system}.{name}", _hypotheses(rng, refs, rates))


if __name__ == "__main__":
    main()
