"""Seeded generator of a realistic synthetic tuning set in Moses formats.

    python benchmarks/synth.py OUTDIR [--sentences 2000] [--nbest 1000] [--refs 1] [--seed 1]

writes OUTDIR/nbest.txt (Moses n-best, 15 dense features in today's labelled form),
OUTDIR/ref.0 .. ref.{R-1}, and OUTDIR/init.opt (a start point). The defaults give the
2,000 × 1,000 × 15 set of the project's benchmarks (about 800 MB).

How it is made: a Zipfian vocabulary of 30,000 words; each reference is 5–60 words
(mean ≈ 27); every hypothesis corrupts the first reference at a rate drawn per
hypothesis (substitutions, deletions and insertions), so sentence BLEU spreads from
near 0 to near 1. The 15 features are noisy linear functions of the corruption and of
the length, with hidden weights, so a good tuner can find weights that raise BLEU.
Values are printed with 6 significant digits, as Moses does.
"""

from __future__ import annotations

import argparse
import os

import numpy as np

LABELS = [("Distortion0", 1), ("LM0", 1), ("WordPenalty0", 1), ("PhrasePenalty0", 1),
          ("TranslationModel0", 4), ("LexicalReordering0", 6), ("UnknownWordPenalty0", 1)]
N_DENSE = sum(c for _, c in LABELS)
START_WEIGHTS = [0.3, 0.5, -1.0, 0.2, 0.2, 0.2, 0.2, 0.2, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 1.0]


def make_vocab(n: int, rng: np.random.Generator) -> np.ndarray:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    lengths = rng.integers(2, 10, size=n)
    words = {"".join(rng.choice(letters, size=k)) for k in lengths}
    return np.array(sorted(words))


def generate(outdir: str, sentences: int = 2000, nbest: int = 1000, refs: int = 1, seed: int = 1) -> dict:
    """Write the set into ``outdir``; returns the paths."""
    rng = np.random.default_rng(seed)
    os.makedirs(outdir, exist_ok=True)
    vocab = make_vocab(30000, rng)
    V = len(vocab)
    zipf = 1.0 / np.arange(1, V + 1) ** 1.05
    zipf /= zipf.sum()
    hidden = rng.normal(size=(N_DENSE, 3))  # features = hidden @ [quality, length, 1] + noise
    label_of_col = []
    for label, count in LABELS:
        label_of_col += [label] * count
    first_col = {label: label_of_col.index(label) for label, _ in LABELS}

    ref_paths = [os.path.join(outdir, f"ref.{r}") for r in range(refs)]
    nbest_path = os.path.join(outdir, "nbest.txt")
    ref_files = [open(p, "w", encoding="utf-8") for p in ref_paths]
    with open(nbest_path, "w", encoding="utf-8") as out:
        for s in range(sentences):
            L = int(np.clip(rng.normal(27, 10), 5, 60))
            ref_tokens = [rng.choice(V, size=max(3, L + int(rng.integers(-3, 4))), p=zipf) for _ in range(refs)]
            ref_tokens[0] = rng.choice(V, size=L, p=zipf)
            for r, f in enumerate(ref_files):
                f.write(" ".join(vocab[ref_tokens[r]]) + "\n")
            base = ref_tokens[0]
            rate = rng.uniform(0.05, 0.7, size=nbest)
            subst = rng.random((nbest, L)) < rate[:, None]
            keep = rng.random((nbest, L)) >= rate[:, None] * 0.3
            repl = rng.choice(V, size=(nbest, L), p=zipf)
            toks = np.where(subst, repl, base[None, :])
            lines = []
            lengths = np.empty(nbest)
            texts = []
            for h in range(nbest):
                t = toks[h][keep[h]]
                if rng.random() < rate[h] * 0.5:
                    pos = int(rng.integers(0, len(t) + 1))
                    t = np.insert(t, pos, rng.choice(V, size=int(rng.integers(1, 4)), p=zipf))
                lengths[h] = len(t)
                texts.append(" ".join(vocab[t]))
            quality = 1.0 - rate
            X = np.stack([quality, lengths / L, np.ones(nbest)], axis=1)
            feats = X @ hidden.T * 5.0 + rng.normal(scale=1.0, size=(nbest, N_DENSE))
            feats[:, first_col["WordPenalty0"]] = -lengths
            feats[:, first_col["UnknownWordPenalty0"]] = 0
            model = feats @ np.asarray(START_WEIGHTS)
            for h in range(nbest):
                parts = []
                prev = None
                for j in range(N_DENSE):
                    if label_of_col[j] != prev:
                        parts.append(label_of_col[j] + "=")
                        prev = label_of_col[j]
                    parts.append(f"{feats[h, j]:g}")
                lines.append(f"{s} ||| {texts[h]}  ||| {' '.join(parts)} ||| {model[h]:g}\n")
            out.write("".join(lines))
    for f in ref_files:
        f.close()
    init_path = os.path.join(outdir, "init.opt")
    with open(init_path, "w") as fh:
        fh.write(" ".join(f"{w:f}" for w in START_WEIGHTS) + "\n")
        fh.write(" ".join("0" for _ in START_WEIGHTS) + "\n")
        fh.write(" ".join("1" for _ in START_WEIGHTS) + "\n")
    return {"nbest": nbest_path, "refs": ref_paths, "init": init_path}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir")
    ap.add_argument("--sentences", type=int, default=2000)
    ap.add_argument("--nbest", type=int, default=1000)
    ap.add_argument("--refs", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    paths = generate(a.outdir, a.sentences, a.nbest, a.refs, a.seed)
    print(paths)


if __name__ == "__main__":
    main()
