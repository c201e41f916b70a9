#!/usr/bin/env python3
"""A stand-in for the cdec decoder, for end-to-end tests of ``mtplug dtrain``.

It takes cdec's command line and "decodes" by re-ranking a FIXED pool of hypotheses
per sentence with the weights it is given::

    standin_cdec.py -c cdec.ini -w weights.txt [-k N] [-r] < input

* ``-c cdec.ini``: cdec's ``key=value`` file; only ``grammar=POOLDIR`` is read (the pool
  plays the grammar's part); ``#`` comments, other keys ignored.
* ``-w weights``: cdec weights, ``Name value`` (TAB or ``=`` also separate; ``#`` lines
  skipped); features without a weight weigh 0.
* ``-k N`` (``--k_best``): write the N best per sentence (default 1); ``-r``
  (``--unique_k_best``): unique strings — the pool's strings are unique already.
* stdin: one sentence per line, plain text (looked up in ``POOLDIR/index.txt``) or
  ``<seg id="N" ...>text</seg>`` (sentence N of the pool).

Output, as cdec writes k-best lists (cdec.md §k-best)::

    sent_id ||| hyp ||| f1=v1 f2=v2 ... ||| w·f

``sent_id`` is cdec's: a counter from 0 per process, set by ``<seg id>``. Hypotheses
are sorted by w·f, ties in pool order, so the output is deterministic.

The pool (``build_pool``, or ``standin_cdec.py --make-pool NBEST.gz POOLDIR``) comes
from a Moses n-best list, here ``shared/data/moses-toy/run1.best100.out.gz`` (60
sentences × 100 distinct hypotheses): dense ``Label= v1 v2`` becomes cdec's
``Label_0=v1 Label_1=v2`` (mtplug's column names for Moses features), zero values
are left out as cdec leaves them out. ``POOLDIR/index.txt`` line i is the "source" of
sentence i, and ``POOLDIR/<i>.kbest`` holds ``hyp ||| f=v ...`` lines. Like cdec the
stand-in reads its weights once per process: the trainer starts one process per call.

Only the standard library is used, so ``python -S`` starts it quickly. Exit status 1
with a message on stderr on bad input.
"""

from __future__ import annotations

import gzip
import os
import re
import sys

_SEG = re.compile(r'^\s*<seg\b([^>]*)>(.*?)(?:</seg>)?\s*$')
_SEG_ID = re.compile(r'\bid\s*=\s*["\']?(\d+)')


class StandinError(Exception):
    pass


# ---------------------------------------------------------------- pool
def moses_to_cdec(field: str) -> list[tuple[str, float]]:
    """Moses labelled features ('LM0= -17.4 TM0= 1 2') as cdec name=value pairs, zeros left out."""
    out, label, k = [], None, 0
    for tok in field.split():
        if tok.endswith("="):
            label, k = tok[:-1], 0
            continue
        if label is None:
            raise StandinError(f"feature value {tok!r} before any label")
        value = float(tok)
        if value != 0:
            out.append((f"{label}_{k}", value))
        k += 1
    return out


def build_pool(nbest_path: str, outdir: str, sentences: int | None = None) -> int:
    """Write the pool of a Moses n-best file to ``outdir``; returns the number of sentences.

    The "source" of sentence i (index.txt) is its last pooled hypothesis, prefixed by
    ``src<i>:`` so that sources are unique.
    """
    pools: dict[int, list[str]] = {}
    opener = gzip.open if nbest_path.endswith(".gz") else open
    with opener(nbest_path, "rt", encoding="utf-8") as fh:
        for line in fh:
            parts = line.rstrip("\n").split(" ||| ")
            if len(parts) < 3:
                continue
            sid = int(parts[0])
            if sentences is not None and sid >= sentences:
                continue
            feats = " ".join(f"{n}={v:g}" for n, v in moses_to_cdec(parts[2]))
            pools.setdefault(sid, []).append(f"{parts[1].strip()} ||| {feats}")
    os.makedirs(outdir, exist_ok=True)
    n = max(pools) + 1 if pools else 0
    with open(os.path.join(outdir, "index.txt"), "w", encoding="utf-8") as idx:
        for i in range(n):
            hyps = pools.get(i, [])
            src = hyps[-1].split(" ||| ")[0] if hyps else ""
            idx.write(f"src{i}: {src}\n")
            with open(os.path.join(outdir, f"{i}.kbest"), "w", encoding="utf-8") as fh:
                fh.write("".join(h + "\n" for h in hyps))
    return n


def read_pool_sentence(pooldir: str, i: int) -> list[tuple[str, str, list[tuple[str, float]]]]:
    path = os.path.join(pooldir, f"{i}.kbest")
    if not os.path.exists(path):
        raise StandinError(f"sentence {i} is not in the pool {pooldir}")
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            hyp, _, feats = line.rstrip("\n").partition(" ||| ")
            pairs = []
            for tok in feats.split():
                name, _, value = tok.rpartition("=")
                pairs.append((name, float(value)))
            out.append((hyp, feats, pairs))
    return out


# ---------------------------------------------------------------- cdec's inputs
def read_ini(path: str) -> dict[str, str]:
    out = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.split("#", 1)[0].strip()
            if line:
                key, _, value = line.partition("=")
                out[key.strip()] = value.strip()
    return out


def read_weights(path: str) -> dict[str, float]:
    out = {}
    with open(path, encoding="utf-8") as fh:
        for no, line in enumerate(fh, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            cut = max(line.rfind("="), line.rfind("\t"))
            if cut > 0:
                line = line[:cut] + " " + line[cut + 1:]
            parts = line.split()
            if len(parts) != 2:
                raise StandinError(f"{path}:{no}: expected 'Name value'")
            out[parts[0]] = float(parts[1])
    return out


def parse_args(argv: list[str]) -> dict:
    opts = {"k": 1, "unique": False, "config": None, "weights": None}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-c", "--config"):
            opts["config"] = argv[i + 1]
            i += 2
        elif a in ("-w", "--weights"):
            opts["weights"] = argv[i + 1]
            i += 2
        elif a in ("-k", "--k_best"):
            opts["k"] = int(argv[i + 1])
            i += 2
        elif a in ("-r", "--unique_k_best"):
            opts["unique"] = True
            i += 1
        else:
            raise StandinError(f"unknown option {a!r}")
    if not opts["config"]:
        raise StandinError("-c cdec.ini is required")
    return opts


def decode(argv: list[str], stdin, stdout) -> None:
    opts = parse_args(argv)
    ini = read_ini(opts["config"])
    pooldir = ini.get("grammar")
    if not pooldir:
        raise StandinError(f"{opts['config']}: no grammar=POOLDIR")
    weights = read_weights(opts["weights"]) if opts["weights"] else {}
    index = None
    sent_id = -1
    for line in stdin:
        line = line.rstrip("\n")
        sent_id += 1
        m = _SEG.match(line)
        pool_id = None
        if m:
            mid = _SEG_ID.search(m.group(1))
            if mid:
                sent_id = pool_id = int(mid.group(1))
            line = m.group(2)
        if pool_id is None:
            if index is None:
                with open(os.path.join(pooldir, "index.txt"), encoding="utf-8") as fh:
                    index = {src.rstrip("\n"): i for i, src in enumerate(fh)}
            if line not in index:
                raise StandinError(f"input {line!r} is not a source sentence of the pool")
            pool_id = index[line]
        hyps = read_pool_sentence(pooldir, pool_id)
        scored = [(sum(weights.get(n, 0.0) * v for n, v in pairs), pos) for pos, (_, _, pairs) in enumerate(hyps)]
        scored.sort(key=lambda t: (-t[0], t[1]))
        seen = set()
        written = 0
        for score, pos in scored:
            if written == opts["k"]:
                break
            hyp, feats, _ = hyps[pos]
            if opts["unique"] and hyp in seen:
                continue
            seen.add(hyp)
            stdout.write(f"{sent_id} ||| {hyp} ||| {feats} ||| {score:g}\n")
            written += 1


def main(argv: list[str]) -> int:
    try:
        if argv[:1] == ["--make-pool"]:
            n = build_pool(argv[1], argv[2])
            print(f"{n} sentences", file=sys.stderr)
            return 0
        decode(argv, sys.stdin, sys.stdout)
        return 0
    except (StandinError, OSError, ValueError, IndexError) as err:
        print(f"standin_cdec: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
