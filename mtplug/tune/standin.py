"""A stand-in decoder: re-ranks a fixed pool of hypotheses with the weights it is given.

``mtplug example`` tunes against it, so the whole decoder-in-the-loop runs on a
machine without Moses or cdec. The pool is a Moses n-best list (default: the bundled
``mtplug/data/example/run1.best100.out.gz``, 60 sentences × 100 hypotheses). For each
input line the stand-in finds the pool sentence (its line number in ``-standin-source
FILE`` when given, else the line's position in the input), scores that sentence's
pooled hypotheses with the weights, and writes the best ones, as the real decoder would.
Ties in the model score keep pool order; everything is deterministic.

Two front ends, spelled like the real programs::

    python -m mtplug.tune.standin moses -config moses.ini [-weight-overwrite 'LM0= 0.5 ...']
        [-weight-file sparse.w] -n-best-list FILE N [distinct] -input-file SRC   (1-best to stdout)
    python -m mtplug.tune.standin cdec -c cdec.ini -w weights -k N [-r]      (input on stdin,
        k-best to stdout as 'id ||| hyp ||| f=v ... ||| score', cdec feature names)

Both take ``-standin-pool FILE`` and ``-standin-source FILE``. Sentence ids in the
output count input lines from 0, as the real decoders do (the tuning loop renumbers
shards). Exit status 1 with one message on stderr on bad input.
"""

from __future__ import annotations

import gzip
import math
import os
import sys
from pathlib import Path

DEFAULT_POOL = Path(__file__).resolve().parents[1] / "data" / "example" / "run1.best100.out.gz"

#: Moses feature labels of the pool -> the names a cdec system would use
CDEC_NAMES = {"Distortion0": "Distortion", "LM0": "LanguageModel", "WordPenalty0": "WordPenalty",
              "PhrasePenalty0": "PhrasePenalty", "TranslationModel0": "PhraseModel"}


class StandinError(Exception):
    pass


# ------------------------------------------------------------------ the pool
def parse_moses_features(field: str) -> list[tuple[str, float]]:
    """'LM0= -17 TM0= 1 2 WT_a~b= 1' -> [('LM0_0', -17), ('TM0_0', 1), ('TM0_1', 2), ('WT_a~b', 1)]."""
    out: list[tuple[str, float]] = []
    label, k = None, 0
    for tok in field.split():
        if tok.endswith("="):
            label, k = tok[:-1], 0
            continue
        if label is None:
            raise StandinError(f"value {tok!r} before any label in {field!r}")
        out.append((label if "_" in label else f"{label}_{k}", float(tok)))
        k += 1
    return out


def load_pool(path) -> dict[int, list[tuple[str, list[tuple[str, float]]]]]:
    """{sentence id: [(hypothesis text, [(feature, value)])]} in file order."""
    pool: dict[int, list] = {}
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            fields = line.rstrip("\n").split(" ||| ")
            if len(fields) < 4:
                raise StandinError(f"{path}:{n}: expected 'id ||| hyp ||| features ||| score'")
            pool.setdefault(int(fields[0]), []).append((fields[1], parse_moses_features(fields[2])))
    if not pool:
        raise StandinError(f"{path}: empty pool")
    return pool


def pool_ids(lines: list[str], source: str | None) -> list[int]:
    """The pool sentence of every input line."""
    if source is None:
        return list(range(len(lines)))
    with open(source, encoding="utf-8") as fh:
        index: dict[str, int] = {}
        for i, text in enumerate(fh.read().splitlines()):
            index.setdefault(text.strip(), i)
    try:
        return [index[text.strip()] for text in lines]
    except KeyError as exc:
        raise StandinError(f"input line {exc.args[0]!r} is not in {source}") from None


def rank(hyps, weights: dict[str, float], size: int, distinct: bool):
    """The ``size`` best (text, features, score) of one sentence, best first."""
    scored = []
    for k, (text, feats) in enumerate(hyps):
        scored.append((-sum(weights.get(name, 0.0) * v for name, v in feats), k))
    scored.sort()
    out, seen = [], set()
    for neg, k in scored:
        if len(out) >= size:
            break
        text, feats = hyps[k]
        if distinct:
            if text.strip() in seen:
                continue
            seen.add(text.strip())
        out.append((text, feats, -neg))
    return out


def _hyps_for(pool, sid):
    if sid not in pool:
        raise StandinError(f"sentence {sid} has no hypotheses in the pool")
    return pool[sid]


# ------------------------------------------------------------------ Moses front end
def _moses_weight_string(s: str) -> dict[str, float]:
    out: dict[str, float] = {}
    label, k = None, 0
    for tok in s.split():
        if tok.endswith("="):
            label, k = tok[:-1], 0
            continue
        if label is None:
            raise StandinError(f"weight value {tok!r} before any 'Name='")
        v = float(tok)
        if not math.isfinite(v):
            raise StandinError(f"weight of {label} is not finite")
        out[label if "_" in label else f"{label}_{k}"] = v
        k += 1
    return out


def _ini_weights(path: str) -> dict[str, float]:
    out: dict[str, float] = {}
    section = None
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.split("#", 1)[0].strip()
            if line.startswith("[") and line.endswith("]"):
                section = line[1:-1]
            elif line and section == "weight":
                out.update(_moses_weight_string(line))
    return out


def _name_value_file(path: str) -> dict[str, float]:
    out: dict[str, float] = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip() and not line.startswith("#"):
                name, value = line.replace("=", " ").replace("\t", " ").split()
                out[name] = float(value)
    return out


def _take(argv, i):
    if i + 1 >= len(argv):
        raise StandinError(f"{argv[i]} needs a value")
    return argv[i + 1]


def main_moses(argv: list[str]) -> int:
    o = {"config": None, "overwrite": None, "wfile": None, "nbest": None, "size": 0, "distinct": False,
         "input": None, "pool": os.environ.get("STANDIN_POOL") or str(DEFAULT_POOL), "source": None}
    i = 0
    while i < len(argv):
        a = argv[i]
        key = {"-config": "config", "-f": "config", "-weight-overwrite": "overwrite", "-weight-file": "wfile",
               "-input-file": "input", "-i": "input", "-standin-pool": "pool",
               "-standin-source": "source"}.get(a)
        if key:
            o[key] = _take(argv, i)
            i += 2
        elif a in ("-inputtype", "-threads", "-v", "-verbose"):
            i += 2
        elif a == "-n-best-list":
            o["nbest"], o["size"] = _take(argv, i), int(_take(argv, i + 1))
            i += 3
            if i < len(argv) and argv[i] == "distinct":
                o["distinct"] = True
                i += 1
        else:
            raise StandinError(f"unknown argument {a!r}")
    weights: dict[str, float] = {}
    if o["overwrite"] is None:
        if not o["config"]:
            raise StandinError("no weights: give -config or -weight-overwrite")
        weights.update(_ini_weights(o["config"]))
    else:
        weights.update(_moses_weight_string(o["overwrite"]))
    if o["wfile"]:
        weights.update(_name_value_file(o["wfile"]))
    if o["input"] is None:
        raise StandinError("no -input-file given")
    with open(o["input"], encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    pool = load_pool(o["pool"])
    ids = pool_ids(lines, o["source"])
    nb = open(o["nbest"], "w", encoding="utf-8") if o["nbest"] else None
    try:
        for local, sid in enumerate(ids):
            best = rank(_hyps_for(pool, sid), weights, max(o["size"], 1), o["distinct"])
            sys.stdout.write(best[0][0].rstrip(" ") + "\n")
            if nb is None:
                continue
            for text, feats, score in best[: o["size"]]:
                nb.write(f"{local} ||| {text} ||| {_moses_feature_field(feats)} ||| {score:.6g}\n")
    finally:
        if nb is not None:
            nb.close()
    return 0


def _moses_feature_field(feats) -> str:
    parts, last = [], None
    for name, v in feats:
        label = name if "_" in name and not name.rsplit("_", 1)[1].isdigit() else name.rsplit("_", 1)[0]
        if label != last:
            parts.append(f"{label}=")
            last = label
        parts.append(f"{v:.6g}")
    return " ".join(parts)


# ------------------------------------------------------------------ cdec front end
def cdec_name(name: str) -> str:
    """'LM0_0' -> 'LanguageModel', 'TranslationModel0_2' -> 'PhraseModel_2', others unchanged."""
    label, _, k = name.rpartition("_")
    if label == "TranslationModel0":
        return f"PhraseModel_{k}"
    return CDEC_NAMES.get(label, name) if k == "0" else name


def main_cdec(argv: list[str]) -> int:
    o = {"ini": None, "weights": None, "k": 0, "unique": False,
         "pool": os.environ.get("STANDIN_POOL") or str(DEFAULT_POOL), "source": None}
    i = 0
    while i < len(argv):
        a = argv[i]
        key = {"-c": "ini", "--config": "ini", "-w": "weights", "--weights": "weights", "-k": "k",
               "--k_best": "k", "-standin-pool": "pool", "-standin-source": "source"}.get(a)
        if key:
            o[key] = _take(argv, i)
            i += 2
        elif a in ("-r", "--unique_k_best"):
            o["unique"] = True
            i += 1
        else:
            raise StandinError(f"unknown argument {a!r}")
    if not o["ini"]:
        raise StandinError("no -c cdec.ini given")
    if not os.path.exists(o["ini"]):
        raise StandinError(f"{o['ini']}: no such file")
    weights = _name_value_file(o["weights"]) if o["weights"] else {}
    k = int(o["k"])
    lines = sys.stdin.read().splitlines()
    pool = {sid: [(text.strip(), [(cdec_name(n), v) for n, v in feats]) for text, feats in hyps]
            for sid, hyps in load_pool(o["pool"]).items()}
    for local, sid in enumerate(pool_ids(lines, o["source"])):
        best = rank(_hyps_for(pool, sid), weights, max(k, 1), o["unique"])
        if k == 0:
            sys.stdout.write(best[0][0] + "\n")
            continue
        for text, feats, score in best:
            fv = " ".join(f"{n}={v:.6g}" for n, v in feats if v != 0.0)
            sys.stdout.write(f"{local} ||| {text} ||| {fv} ||| {score:.6g}\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        if not argv or argv[0] not in ("moses", "cdec"):
            raise StandinError("first argument: moses or cdec")
        return (main_moses if argv[0] == "moses" else main_cdec)(argv[1:])
    except (StandinError, OSError, ValueError) as exc:
        sys.stderr.write(f"standin: error: {exc}\n")
        return 1


if __name__ == "__main__":
    sys.exit(main())
