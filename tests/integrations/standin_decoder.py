#!/usr/bin/env python3
"""A stand-in for the Moses decoder, for end-to-end tests of mert-moses.pl's loop.

It "decodes" by re-ranking a FIXED pool of hypotheses: a real Moses n-best list
(by default ``shared/data/moses-toy/run1.best100.out.gz``, 60 sentences × 100
hypotheses). For every input sentence i it scores all pooled hypotheses of
sentence i with the current weights, writes the best one to stdout and the top N
to the n-best file in today's Moses format::

    0 ||| every quiet woman likes every small house .  ||| Distortion0= 0 LM0= -17.3853 ... ||| -4.33319

Flags (Moses spelling; unknown flags are an error, as in Moses)::

    -config FILE              moses.ini; only its [weight] section is read, and only for
                              -show-weights or without -weight-overwrite
    -inputtype N              ignored
    -weight-overwrite STR     'Name= v [v ...] Name2= v ...' (overrides the config's weights)
    -weight-file FILE         sparse weights, one 'name value' per line
    -n-best-list FILE N [distinct]
    -input-file FILE          one line per sentence (only the line count is used)
    -show-weights             print 'Name= v v ...' per dense feature of the pool (weights from
                              -config) and 'Name UNTUNEABLE' for other [weight] entries, and exit
    -standin-pool FILE        the hypothesis pool (env STANDIN_POOL)
    -standin-sparse           add synthetic sparse features (env STANDIN_SPARSE=1):
                              WT_<first word>~x= 1 and WT_<second word>~y= 1 per hypothesis
    -standin-source FILE      input line text -> pool sentence = its line number in FILE
                              (env STANDIN_SOURCE; default: the input line's position), so
                              shards of the input decode the right sentences; n-best ids
                              still count the input's lines from 0, as Moses does

Test hook: env STANDIN_KILL_PARENT=COUNTFILE:K counts calls (COUNTFILE.1, .2, ...) and, on the
K-th call, SIGKILLs the parent process (kill -9 of a tuning loop mid-decoding).

Everything is deterministic: ties in the model score keep pool order. With
``distinct`` a hypothesis string already written for the sentence is skipped.
Exit status 1 with a message on stderr on bad input (missing weights etc.).
"""

from __future__ import annotations

import gzip
import math
import os
import sys
from pathlib import Path

DEFAULT_POOL = Path(__file__).resolve().parents[3] / "shared" / "data" / "moses-toy" / "run1.best100.out.gz"
if not DEFAULT_POOL.exists():  # layout /work/main/tests/integrations -> /work/shared
    DEFAULT_POOL = Path("/work/shared/data/moses-toy/run1.best100.out.gz")


class DecoderError(Exception):
    pass


# ---------------------------------------------------------------- pool
class Hyp:
    __slots__ = ("text", "feat_str", "dense", "sparse")

    def __init__(self, text, feat_str, dense, sparse):
        self.text = text          # hypothesis field as Moses wrote it (trailing space kept)
        self.feat_str = feat_str  # dense feature field, verbatim
        self.dense = dense        # list of (label, [values])
        self.sparse = sparse      # list of (name, value)


def parse_features(field: str):
    """'Label= v v Label2= v ...' -> (dense [(label, [floats])], sparse [(name, float)])."""
    dense, sparse = [], []
    label, values, is_sparse = None, None, False
    for tok in field.split():
        if tok.endswith("="):
            label, values = tok[:-1], []
            is_sparse = "_" in label
            if is_sparse:
                sparse.append([label, None])
            else:
                dense.append((label, values))
        else:
            if label is None:
                raise DecoderError(f"value {tok!r} before any label in {field!r}")
            v = float(tok)
            if is_sparse:
                if sparse[-1][1] is not None:
                    raise DecoderError(f"sparse feature {label} has several values")
                sparse[-1][1] = v
            else:
                values.append(v)
    return dense, [(n, v) for n, v in sparse]


def synthetic_sparse(text: str):
    words = text.split()
    out = [(f"WT_{w}~{tag}", 1.0) for w, tag in zip(words[:2], "xy")]
    return out


def load_pool(path, with_sparse: bool):
    """{sentence id: [Hyp, ...]} in file order."""
    pool: dict[int, list[Hyp]] = {}
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            line = line.rstrip("\n")
            if not line:
                continue
            fields = line.split(" ||| ")
            if len(fields) < 4:
                raise DecoderError(f"{path}:{n}: expected 'id ||| hyp ||| features ||| score'")
            sid = int(fields[0])
            dense, sparse = parse_features(fields[2])
            if sparse:  # keep the dense part only; sparse entries are re-written after it
                feat_str = " ".join(f"{lab}= " + " ".join(_fmt_raw(v) for v in vals) for lab, vals in dense)
            else:
                feat_str = fields[2].strip()
            if with_sparse:
                sparse = sparse + synthetic_sparse(fields[1])
            pool.setdefault(sid, []).append(Hyp(fields[1], feat_str, dense, sparse))
    if not pool:
        raise DecoderError(f"{path}: empty pool")
    return pool


def _fmt_raw(v: float) -> str:
    return f"{v:.6g}"


# ---------------------------------------------------------------- weights
def parse_weight_string(s: str) -> dict[str, list[float]]:
    weights: dict[str, list[float]] = {}
    label = None
    for tok in s.split():
        if tok.endswith("="):
            label = tok[:-1]
            weights[label] = []
        else:
            if label is None:
                raise DecoderError(f"weight value {tok!r} before any 'Name='")
            try:
                weights[label].append(float(tok))
            except ValueError:
                raise DecoderError(f"bad weight value {tok!r} of {label}") from None
    for label, vals in weights.items():
        if not vals:
            raise DecoderError(f"feature {label} has no weight values")
    return weights


def read_config_weights(path: str) -> dict[str, list[float]]:
    """The [weight] section of a moses.ini ('Name= v v ...' lines)."""
    weights: dict[str, list[float]] = {}
    section = None
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("[") and line.endswith("]"):
                section = line[1:-1]
                continue
            if section == "weight" and "=" in line:
                weights.update(parse_weight_string(line))
    return weights


def read_sparse_weights(path: str) -> dict[str, float]:
    out: dict[str, float] = {}
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 2:
                raise DecoderError(f"{path}:{n}: expected 'name value'")
            out[parts[0]] = float(parts[1])
    return out


# ---------------------------------------------------------------- arguments
def parse_args(argv):
    opts = {"config": None, "weight_overwrite": None, "weight_file": None, "nbest": None,
            "nbest_size": 0, "distinct": False, "input": None, "show_weights": False,
            "pool": os.environ.get("STANDIN_POOL") or str(DEFAULT_POOL),
            "sparse": os.environ.get("STANDIN_SPARSE", "") not in ("", "0"),
            "source": os.environ.get("STANDIN_SOURCE") or None}
    i = 0

    def value():
        nonlocal i
        if i + 1 >= len(argv):
            raise DecoderError(f"{argv[i]} needs a value")
        i += 1
        return argv[i]

    while i < len(argv):
        a = argv[i]
        if a in ("-config", "-f"):
            opts["config"] = value()
        elif a == "-inputtype":
            value()
        elif a == "-weight-overwrite":
            opts["weight_overwrite"] = value()
        elif a == "-weight-file":
            opts["weight_file"] = value()
        elif a == "-n-best-list":
            opts["nbest"] = value()
            size = value()
            try:
                opts["nbest_size"] = int(size)
            except ValueError:
                raise DecoderError(f"-n-best-list: bad size {size!r}") from None
            if i + 1 < len(argv) and argv[i + 1] == "distinct":
                opts["distinct"] = True
                i += 1
        elif a in ("-input-file", "-i"):
            opts["input"] = value()
        elif a == "-show-weights":
            opts["show_weights"] = True
        elif a == "-standin-pool":
            opts["pool"] = value()
        elif a == "-standin-sparse":
            opts["sparse"] = True
        elif a == "-standin-source":
            opts["source"] = value()
        else:
            raise DecoderError(f"unknown argument {a!r}")
        i += 1
    return opts


def dense_layout(pool):
    """[(label, n values)] of the pool's first hypothesis."""
    first = pool[min(pool)][0]
    return [(lab, len(vals)) for lab, vals in first.dense]


def fmt_weight(v: float) -> str:
    return f"{v:f}"  # Moses -show-weights prints e.g. 0.300000


# ---------------------------------------------------------------- decoding
def decode(opts, out=sys.stdout):
    pool = load_pool(opts["pool"], opts["sparse"])
    layout = dense_layout(pool)
    weights: dict[str, list[float]] = {}
    # the config matters only for -show-weights or when no -weight-overwrite is given
    # (mert-moses.pl overwrites every dense weight); otherwise it is not even opened
    if opts["config"] and (opts["show_weights"] or opts["weight_overwrite"] is None):
        weights.update(read_config_weights(opts["config"]))
    if opts["show_weights"]:  # as Moses: tuneable features with values, then the others
        for lab, n in layout:
            if lab not in weights:
                raise DecoderError(f"no weight for feature {lab} in {opts['config']}")
            if len(weights[lab]) != n:
                raise DecoderError(f"feature {lab} has {n} values but {len(weights[lab])} weights")
            out.write(f"{lab}= " + " ".join(fmt_weight(v) for v in weights[lab]) + "\n")
        labels = {lab for lab, _ in layout}
        for lab in weights:
            if lab not in labels:
                out.write(f"{lab} UNTUNEABLE\n")
        return
    if opts["weight_overwrite"] is not None:
        weights.update(parse_weight_string(opts["weight_overwrite"]))
    for lab, n in layout:
        if lab not in weights:
            raise DecoderError(f"no weight for feature {lab}")
        if len(weights[lab]) != n:
            raise DecoderError(f"feature {lab} has {n} values but {len(weights[lab])} weights")
    for lab, vals in weights.items():
        if not all(math.isfinite(v) for v in vals):
            raise DecoderError(f"weight of {lab} is not finite")
    sparse_w = read_sparse_weights(opts["weight_file"]) if opts["weight_file"] else {}

    if opts["input"] is None:
        raise DecoderError("no -input-file given (the stand-in does not read stdin)")
    with open(opts["input"], encoding="utf-8") as fh:
        input_lines = fh.read().splitlines()
    n_sent = len(input_lines)
    pool_ids = list(range(n_sent))
    if opts["source"]:
        with open(opts["source"], encoding="utf-8") as fh:
            index = {}
            for k, text in enumerate(fh.read().splitlines()):
                index.setdefault(text.strip(), k)
        try:
            pool_ids = [index[t.strip()] for t in input_lines]
        except KeyError as exc:
            raise DecoderError(f"input line {exc.args[0]!r} is not in {opts['source']}") from None
    _kill_parent_hook()
    if n_sent > len(pool):
        raise DecoderError(f"{opts['input']} has {n_sent} sentences, the pool only {len(pool)}")

    nbest_fh = open(opts["nbest"], "w", encoding="utf-8") if opts["nbest"] else None
    try:
        for s in range(n_sent):
            hyps = pool.get(pool_ids[s])
            if not hyps:
                raise DecoderError(f"sentence {s} has no hypotheses in the pool")
            scored = []
            for k, h in enumerate(hyps):
                total = 0.0
                for lab, vals in h.dense:
                    total += sum(w * v for w, v in zip(weights[lab], vals))
                for name, v in h.sparse:
                    total += sparse_w.get(name, 0.0) * v
                scored.append((-total, k))
            scored.sort()
            out.write(hyps[scored[0][1]].text.rstrip(" ") + "\n")
            if nbest_fh is None:
                continue
            seen = set()
            written = 0
            for neg, k in scored:
                if written >= opts["nbest_size"]:
                    break
                h = hyps[k]
                if opts["distinct"]:
                    key = h.text.strip()
                    if key in seen:
                        continue
                    seen.add(key)
                feats = h.feat_str
                if h.sparse:
                    feats += " " + " ".join(f"{n}= {_fmt_raw(v)}" for n, v in h.sparse)
                nbest_fh.write(f"{s} ||| {h.text} ||| {feats} ||| {-neg:.6g}\n")
                written += 1
    finally:
        if nbest_fh is not None:
            nbest_fh.close()


def _kill_parent_hook() -> None:
    spec = os.environ.get("STANDIN_KILL_PARENT")
    if not spec:
        return
    path, _, k = spec.rpartition(":")
    count = 1
    while True:  # COUNTFILE.1, .2, ...: exclusive creation counts concurrent calls exactly
        try:
            os.close(os.open(f"{path}.{count}", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            break
        except FileExistsError:
            count += 1
    if count == int(k):
        import signal

        os.kill(os.getppid(), signal.SIGKILL)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        opts = parse_args(argv)
        decode(opts)
    except (DecoderError, OSError, ValueError) as exc:
        sys.stderr.write(f"standin_decoder: error: {exc}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
