#!/usr/bin/env python3
"""Write the reranking example of docs/reranking.md (mtplug/data/reranking), seeded.

    python tests/data/make_reranking_data.py [OUTDIR]      # default: mtplug/data/reranking

Made up here, no system involved: a small NMT set (30 sentences, references drawn from
a toy vocabulary, 6 hypotheses each made by substituting, deleting, swapping and
repeating words) written as fairseq-generate output, with an LM score file (one value
per hypothesis) and a QE file ('id rank value', shuffled); and a small GEC set (30
sentences with one or two grammatical errors, an M2 file of their gold edits, 4-7
correction hypotheses each) written as JSON lines with an NMT score, an LM score and
the number of edits. The scores are noisy functions of what was done to each
hypothesis, such that the NMT score alone is a mediocre reranker (it likes repeated
words and over-correction) and the LM and QE scores help. tests/test_reranking_data.py
checks that this script makes the bundled files byte for byte.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import sys

SEED = 38
N_SENTENCES = 30
NBEST = 6
WORDS = ["the", "a", "old", "new", "small", "big", "green", "red", "house", "dog", "cat", "man", "woman", "child",
         "river", "garden", "city", "car", "book", "letter", "sees", "finds", "reads", "writes", "likes", "opens",
         "near", "behind", "under", "with", "today", "again", "slowly", "quickly"]


def _bpe(word: str) -> str:
    """A fairseq-looking token sequence of a word (long words split once)."""
    return f"{word[:3]}@@ {word[3:]}" if len(word) > 6 else word


def nmt(rng: random.Random, outdir: str) -> None:
    refs, blocks, lm_lines, qe_rows = [], [], [], []
    for sid in range(N_SENTENCES):
        ref = [rng.choice(WORDS) for _ in range(rng.randint(6, 11))]
        refs.append(" ".join(ref))
        hyps = []
        seen = set()
        while len(hyps) < NBEST:
            words, counts = list(ref), {"sub": 0, "del": 0, "swap": 0, "dup": 0}
            for _ in range(rng.choice((0, 1, 1, 2, 2, 3))):
                op = rng.choice(("sub", "sub", "del", "swap", "dup"))
                i = rng.randrange(len(words))
                if op == "sub":
                    words[i] = rng.choice(WORDS)
                elif op == "del" and len(words) > 3:
                    del words[i]
                elif op == "swap" and i + 1 < len(words):
                    words[i], words[i + 1] = words[i + 1], words[i]
                elif op == "dup":
                    words.insert(i, words[i])
                else:
                    continue
                counts[op] += 1
            text = " ".join(words)
            if text in seen:
                continue
            seen.add(text)
            # the NMT model likes repeated words and does not mind swaps; the LM minds both
            score = (-0.12 * counts["sub"] - 0.1 * counts["del"] + 0.05 * counts["dup"] - 0.02 * counts["swap"]
                     + rng.gauss(0, 0.12) - 0.3)
            lm = -(1.1 * len(words) + 0.8 * counts["sub"] + 2.0 * counts["swap"] + 2.2 * counts["dup"]
                   + rng.gauss(0, 1.6))
            qe = 0.9 - 0.12 * counts["sub"] - 0.1 * counts["del"] - 0.04 * counts["swap"] + rng.gauss(0, 0.15)
            hyps.append((round(score, 6), text, round(lm, 4), round(qe, 4)))
        hyps.sort(key=lambda h: -h[0])          # fairseq's n-best, best first
        lines = [f"S-{sid}\t<source of sentence {sid}>\n", f"T-{sid}\t{refs[-1]}\n"]
        for rank, (score, text, lm, qe) in enumerate(hyps):
            n_tok = len(text.split()) + 1
            pos = [score + rng.gauss(0, 0.1) for _ in range(n_tok)]
            lines += [f"H-{sid}\t{score}\t{' '.join(_bpe(w) for w in text.split())}\n",
                      f"D-{sid}\t{score}\t{text}\n",
                      f"P-{sid}\t{' '.join(f'{p:.4f}' for p in pos)}\n"]
            lm_lines.append(f"{lm}\n")
            qe_rows.append(f"{sid}\t{rank}\t{qe}\n")
        blocks.append("".join(lines))
    rng.shuffle(blocks)                         # fairseq prints sentences as their batches finish
    rng.shuffle(qe_rows)
    log = "2026-11-28 09:00:00 | INFO | fairseq_cli.generate | loading model(s) from checkpoint_best.pt\n"
    tail = ("2026-11-28 09:00:02 | INFO | fairseq_cli.generate | Translated 30 sentences (301 tokens) in 1.2s\n"
            "Generate test with beam=6: BLEU4 = 52.10, 80.2/60.1/45.3/35.0 (BP=0.975, ratio=0.975)\n")
    _write(outdir, "nmt.generate.out", log + "".join(blocks) + tail)
    _write(outdir, "nmt.ref", "".join(r + "\n" for r in refs))
    _write(outdir, "nmt.lm.scores", "".join(lm_lines))
    _write(outdir, "nmt.qe.tsv", "".join(qe_rows))


#: (correct word, the error a learner makes, M2 error type)
CONFUSIONS = [("goes", "go", "SVA"), ("has", "have", "SVA"), ("is", "are", "SVA"), ("was", "were", "SVA"),
              ("books", "book", "Nn"), ("children", "childs", "Nn"), ("in", "on", "Prep"), ("at", "in", "Prep"),
              ("to", "for", "Prep"), ("went", "goed", "Vform"), ("bought", "buyed", "Vform")]
TEMPLATES = ["she goes to the market every morning .", "he has two books in his bag .",
             "the weather is nice today .", "we went to the city at night .", "my sister bought the red car .",
             "the children was happy in the garden .", "he goes to school with the children .",
             "this book is about the history of the city .", "they went to the river at noon .",
             "the man has a dog and two cats ."]


def gec(rng: random.Random, outdir: str) -> None:
    m2_blocks, blocks = [], []
    for sid in range(N_SENTENCES):
        correct = rng.choice(TEMPLATES).split()
        # gold edits: (source token index, source word, corrected word, type); 'the' dropped or a confusion
        source, gold = [], []
        slots = [i for i, w in enumerate(correct) if w == "the" or any(w == c for c, _, _ in CONFUSIONS)]
        errs = set(rng.sample(slots, min(len(slots), rng.choice((1, 2, 2)))))
        for i, w in enumerate(correct):
            if i in errs and w == "the":
                gold.append((len(source), len(source), "the", "ArtOrDet"))
                continue
            if i in errs:
                wrong, kind = next((x, k) for c, x, k in CONFUSIONS if c == w)
                gold.append((len(source), len(source) + 1, w, kind))
                source.append(wrong)
                continue
            source.append(w)
        m2 = [f"S {' '.join(source)}"] + [f"A {s} {e}|||{k}|||{c}|||REQUIRED|||-NONE-|||0" for s, e, c, k in gold]
        m2_blocks.append("\n".join(m2) + "\n")
        hyps, seen = [], set()
        subsets = [c for r in range(len(gold) + 1) for c in itertools.combinations(gold, r)]
        for subset in subsets:
            for spurious in (0, 1):
                words = list(source)
                for s, e, c, _ in sorted(subset, reverse=True):
                    words[s:e] = [c]
                wrong = 0
                if spurious:                    # an over-correction: 'a' -> 'the' or an extra 'the'
                    j = rng.randrange(len(words))
                    words.insert(j, "the")
                    wrong = 1
                text = " ".join(words)
                if text in seen:
                    continue
                seen.add(text)
                right, edits = len(subset), len(subset) + wrong
                # the model over-corrects: it likes any edit; the LM tells right from wrong ones
                nmt_score = 0.35 * right + 0.3 * wrong + rng.gauss(0, 0.35) - 1.0
                lm = -(1.0 * len(words) - 1.5 * right + 1.8 * wrong + rng.gauss(0, 1.8))
                hyps.append({"id": sid, "hyp": text,
                             "features": {"nmt": round(nmt_score, 4), "LM": round(lm, 4), "edits": edits}})
        hyps.sort(key=lambda h: -h["features"]["nmt"])
        blocks.append("".join(json.dumps(h) + "\n" for h in hyps))
    rng.shuffle(blocks)
    _write(outdir, "gec.m2", "\n".join(m2_blocks))
    _write(outdir, "gec.nbest.jsonl", "".join(blocks))


def _write(outdir: str, name: str, text: str) -> None:
    with open(os.path.join(outdir, name), "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)


def main(outdir: str) -> None:
    os.makedirs(outdir, exist_ok=True)
    nmt(random.Random(SEED), outdir)
    gec(random.Random(SEED + 1), outdir)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..", "mtplug", "data",
                                                             "reranking"))
