"""chrF / chrF++ statistics of n-best lists: mtplug's kernel against sacrebleu's CHRF,
same hypotheses, same invocation.

    python benchmarks/bench_chrf.py [--sentences 500] [--nbest 100] [--refs 1] [--threads 1 2]
                                    [--word-order 0 2] [--seed 1]

The n-best lists are made here, seeded: a Zipfian vocabulary of 30,000 letter strings
(a tenth of them with a trailing comma or full stop, so chrF++ splits punctuation),
references of 5-60 words, and hypotheses that corrupt the first reference at a rate
drawn per hypothesis. sacrebleu scores them as a sacrebleu user scores an n-best list:
``CHRF(references=...)`` caches the references' n-grams once, then ``corpus_score`` is
called for each n-best rank (all sentences' j-th hypotheses). mtplug computes every
hypothesis's statistics in one kernel call (the per-word tables of the vocabulary
included in the time). Before timing, every rank's corpus score from mtplug's summed
statistics is checked equal to sacrebleu's (|difference| < 1e-9).

Prints one JSON line per (word order, threads): seconds for both, hypotheses per second,
and the ratio sacrebleu / mtplug. Target (issue 20): ratio >= 10.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))


def make_set(S: int, k: int, R: int, seed: int):
    """(hyps[j][s] strings, refs[r][s] strings, hyp word-id CSR, references CSR, words)."""
    from mtplug._ext._nbest_scan import Vocabulary
    from mtplug.formats.references import References, encode_references

    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words = sorted({"".join(rng.choice(letters, size=n)) for n in rng.integers(2, 10, 30000)})
    words = np.array([w + rng.choice([",", "."]) if rng.random() < 0.1 else w for w in words])
    p = 1.0 / np.arange(1, len(words) + 1) ** 1.05
    p /= p.sum()
    refs = [[None] * S for _ in range(R)]
    hyps = [[None] * S for _ in range(k)]
    for s in range(S):
        L = int(np.clip(rng.normal(27, 10), 5, 60))
        first = rng.choice(len(words), size=L, p=p)
        refs[0][s] = " ".join(words[first])
        for r in range(1, R):
            refs[r][s] = " ".join(words[rng.choice(len(words), size=max(3, L + int(rng.integers(-3, 4))), p=p)])
        for j in range(k):
            rate = rng.uniform(0.0, 0.8)
            toks = [words[rng.choice(len(words), p=p)] if rng.random() < rate else words[t] for t in first
                    if rng.random() > rate / 3]
            hyps[j][s] = " ".join(toks)
    vocab = Vocabulary()
    ptr, ids = [0], []
    for s in range(S):           # the store's order: sentence by sentence
        for j in range(k):
            ids += [vocab.add(t.encode()) for t in hyps[j][s].split()]
            ptr.append(len(ids))
    enc = encode_references(References([list(x) for x in zip(*refs)], "refs"), vocab)
    return hyps, refs, (np.array(ptr, np.int64), np.array(ids, np.int32)), enc, vocab.words()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sentences", type=int, default=500)
    ap.add_argument("--nbest", type=int, default=100)
    ap.add_argument("--refs", type=int, default=1)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--word-order", type=int, nargs="+", default=[0, 2])
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    import sacrebleu

    from mtplug.metrics.chrf import Chrf

    S, k = a.sentences, a.nbest
    hyps, refs, (ptr, ids), enc, words = make_set(S, k, a.refs, a.seed)
    run_start = np.arange(S + 1, dtype=np.int64) * k
    run_sid = np.arange(S, dtype=np.int64)
    for wo in a.word_order:
        metric = Chrf(word_order=wo)
        t0 = time.perf_counter()
        theirs = sacrebleu.CHRF(word_order=wo, references=refs)
        scores = [theirs.corpus_score(hyps[j], None).score for j in range(k)]
        t_sb = time.perf_counter() - t0
        for threads in a.threads:
            t0 = time.perf_counter()
            st = metric.stats(ptr, ids, run_start, run_sid, enc, words, threads=threads)
            t_ours = time.perf_counter() - t0
            by_rank = st.reshape(S, k, -1).sum(axis=0)
            worst = max(abs(100 * metric.corpus_score(by_rank[j]) - scores[j]) for j in range(k))
            if worst >= 1e-9:
                sys.exit(f"{metric.name}: mtplug and sacrebleu differ by {worst} on some rank")
            print(json.dumps({"metric": metric.name, "sentences": S, "nbest": k, "refs": a.refs,
                              "hypotheses": S * k, "threads": threads, "seconds_mtplug": round(t_ours, 4),
                              "seconds_sacrebleu": round(t_sb, 3), "ratio": round(t_sb / t_ours, 1),
                              "hyps_per_second_mtplug": round(S * k / t_ours)}), flush=True)


if __name__ == "__main__":
    main()
