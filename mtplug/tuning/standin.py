"""A stand-in decoder: re-ranks a fixed pool of hypotheses with the weights it is given.

``mtplug example`` and the tests tune against it, so the whole decoder-in-the-loop runs
on a machine without Moses or cdec. The pool is a Moses n-best list, gzip or plain
(``-standin-pool FILE`` or env STANDIN_POOL; default the bundled
``mtplug/data/example/run1.best100.out.gz``, 60 sentences × 100 hypotheses, the same file
as shared/data/moses-toy's). For each input
line the stand-in finds the pool sentence (its line number in ``-standin-source FILE`` /
env STANDIN_SOURCE when given, else the line's position in the input; cdec front end:
``<seg id="N">`` names sentence N), scores that sentence's hypotheses with the weights
(features without a weight weigh 0 for cdec; Moses needs a weight for every dense
feature) and writes the best ones, as the real decoder would. Ties in the model score
keep pool order; everything is deterministic.

Two front ends, spelled like the real programs::

    standin.py moses -config moses.ini [-weight-overwrite 'LM0= 0.5 ...'] [-weight-file sparse.w]
        [-n-best-list FILE N [distinct]] -input-file SRC [-inputtype N] [-threads N]
        [-show-weights] [-standin-sparse]
    standin.py cdec -c cdec.ini [-w weights] [-k N] [-r] [--mr_mira_compat]  (input on stdin)

Moses: the 1-best to stdout, the n-best in today's Moses format with the pool's
hypothesis text and dense feature field verbatim (``house .  |||``); ids count the
input's lines from 0. The config is read only for ``-show-weights`` or without
``-weight-overwrite`` (as mert-moses.pl overwrites every dense weight). ``-show-weights``
prints ``Label= v ...`` per dense feature of the pool (``%f``) and ``Name UNTUNEABLE``
for the config's other weights, as Moses does. ``-standin-sparse`` (env STANDIN_SPARSE=1)
adds two synthetic sparse features per hypothesis, ``WT_<first word>~x= 1`` and
``WT_<second word>~y= 1``, weighted by ``-weight-file``.

cdec: ``-c`` must be a readable ``key=value`` file (``#`` comments); ``-w``: ``Name value``
lines (TAB or ``=`` also separate; ``#`` lines skipped). ``-k 0`` or no ``-k`` prints the
plain 1-best per line as cdec does, else the ``-k`` best per sentence as ``id ||| hyp |||
f=v ... ||| score`` with cdec's names (LanguageModel, PhraseModel_0..3, WordPenalty, ...),
zero values left out, the others as the pool writes them, score w·f (``%.6g``), ids as
cdec numbers them (a counter from 0 per process that ``<seg id>`` sets); ``-r``
(``--unique_k_best``): each hypothesis string once. ``--mr_mira_compat``: cdec's mode that
``mtplug dtrain``'s persistent decoder uses: lines are read and answered one at a time,
a ``<seg delta="...">`` weight change applied first (:func:`_cdec_stream`).

Standard library only (``python -S path/to/standin.py`` starts fast: dtrain runs one
process per sentence). Exit status 1 with one message on stderr on bad input.
"""

from __future__ import annotations

import math
import os
import sys
import zlib
from itertools import compress, repeat
from operator import itemgetter, mul

DEFAULT_POOL = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "example",
                            "run1.best100.out.gz")

#: Moses feature labels of the pool -> the names a cdec system would use: a one-valued
#: feature by its name, the phrase table's values as PhraseModel_0, PhraseModel_1, ...
#: (any other feature: Label_0, Label_1, ..., mtplug's column names for Moses features)
CDEC_NAMES = {"Distortion0": "Distortion", "LM0": "LanguageModel", "WordPenalty0": "WordPenalty",
              "PhrasePenalty0": "PhrasePenalty"}
CDEC_PREFIXES = {"TranslationModel0": "PhraseModel"}


class StandinError(Exception):
    """Bad input to the stand-in (arguments, config, weights, pool): :func:`main` prints it
    as one ``standin: error:`` line and exits 1."""


# ------------------------------------------------------------------ the pool
class Hyp:
    """One pool hypothesis: ``text``, the hypothesis field as Moses wrote it (trailing
    space kept); ``field``, the dense feature field verbatim; ``dense``, ``[(label,
    [values])]``; ``sparse``, ``[(name, value)]``."""

    __slots__ = ("dense", "field", "sparse", "text")

    def __init__(self, text, field, dense, sparse):
        self.text = text      # the hypothesis field as Moses wrote it (trailing space kept)
        self.field = field    # the dense feature field, verbatim
        self.dense = dense    # [(label, [values])]
        self.sparse = sparse  # [(name, value)]


def parse_feature_field(field: str):
    """'Label= v v Label2= v WT_a~b= 1' -> (dense [(label, [floats])], sparse [(name, float)]).

    A label containing '_' is sparse (one value), as Moses's tools read it."""
    dense: list[tuple[str, list[float]]] = []
    sparse: list[list] = []  # [label, value or None]
    label: str | None = None
    values: list[float] = []
    for tok in field.split():
        if tok.endswith("="):
            label, values = tok[:-1], []
            (sparse.append([label, None]) if "_" in label else dense.append((label, values)))
            continue
        if label is None:
            raise StandinError(f"value {tok!r} before any label in {field!r}")
        v = float(tok)
        if "_" in label:
            if sparse[-1][1] is not None:
                raise StandinError(f"sparse feature {label} has several values")
            sparse[-1][1] = v
        else:
            values.append(v)
    return dense, [(n, v) for n, v in sparse]


def synthetic_sparse(text: str) -> list[tuple[str, float]]:
    """``-standin-sparse``'s two features of a hypothesis: ``WT_<first word>~x`` and
    ``WT_<second word>~y``, each 1 (fewer for a shorter hypothesis)."""
    return [(f"WT_{w}~{tag}", 1.0) for w, tag in zip(text.split()[:2], "xy")]


def read_pool_bytes(path) -> bytes:
    """The pool file's bytes; gzip (one or several members) or plain, by its magic bytes.

    zlib rather than the gzip module: cheaper to import and to read with (start-up matters)."""
    with open(path, "rb") as fh:
        data = fh.read()
    if data[:2] != b"\x1f\x8b":
        return data
    parts = []
    try:
        while data:
            unzip = zlib.decompressobj(31)
            parts.append(unzip.decompress(data))
            if not unzip.eof:
                raise StandinError(f"{path}: truncated gzip data")
            data = unzip.unused_data.lstrip(b"\0")
    except zlib.error as exc:
        raise StandinError(f"{path}: bad gzip data ({exc})") from None
    return b"".join(parts)


#: up to this many wanted sentences, their lines are found with bytes.find rather than by
#: splitting the whole pool (about 3 times faster for one sentence: dtrain decodes one
#: sentence per process; a split pays off from a few sentences on)
FEW_SENTENCES = 3


def _lines_of(data: bytes, sid: int, path):
    """(line number, line) of sentence ``sid``'s lines in ``data``, in file order."""
    key = b"\n%d ||| " % sid
    first = data.startswith(key[1:])
    at = -1 if first else data.find(key)  # the newline before the line (-1: the file's start)
    if at < 0 and not first:
        return
    end, n = 0, 1
    while True:
        n += data.count(b"\n", end, at + 1)
        end = data.find(b"\n", at + 1)
        end = len(data) if end < 0 else end
        try:
            yield n, data[at + 1:end].decode("utf-8")
        except UnicodeDecodeError:
            raise StandinError(f"{path}:{n}: not UTF-8") from None
        at = data.find(key, end)
        if at < 0:
            return


def _pool_lines(path, wanted):
    """(line number, line) of the pool's lines, or (``wanted``: a set of sentence ids) of
    those that begin ``<id> ||| `` for a wanted id; only those are decoded then."""
    data = read_pool_bytes(path)
    if wanted is not None and len(wanted) <= FEW_SENTENCES:
        for sid in sorted(wanted):
            yield from _lines_of(data, sid, path)
    elif wanted is not None:
        prefixes = tuple(b"%d ||| " % sid for sid in wanted)
        for n, line in enumerate(data.split(b"\n"), 1):
            if line.startswith(prefixes):
                try:
                    yield n, line.decode("utf-8")
                except UnicodeDecodeError:
                    raise StandinError(f"{path}:{n}: not UTF-8") from None
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            n = data.count(b"\n", 0, exc.start) + 1
            raise StandinError(f"{path}:{n}: not UTF-8") from None
        yield from ((n, line) for n, line in enumerate(text.split("\n"), 1) if line)


def pool_rows(path, wanted=None):
    """(line number, sentence id, hypothesis field, feature field) per pool line, in file order;
    only the sentences in ``wanted`` (a set of ids) when given: a process that decodes one
    sentence parses one sentence's lines."""
    for n, line in _pool_lines(path, wanted):
        fields = line.split(" ||| ")
        if len(fields) < 4:
            raise StandinError(f"{path}:{n}: expected 'id ||| hyp ||| features ||| score'")
        try:
            sid = int(fields[0])
        except ValueError:
            raise StandinError(f"{path}:{n}: bad sentence id {fields[0]!r}") from None
        yield n, sid, fields[1], fields[2]


def load_pool(path, with_sparse: bool = False) -> dict[int, list[Hyp]]:
    """{sentence id: [Hyp]} in file order."""
    pool: dict[int, list[Hyp]] = {}
    for n, sid, text, field in pool_rows(path):
        try:
            dense, sparse = parse_feature_field(field)
        except (StandinError, ValueError) as exc:
            raise StandinError(f"{path}:{n}: {exc}") from None
        if sparse:  # the dense part verbatim; sparse entries are written after it
            field = " ".join(f"{lab}= " + " ".join(f"{v:.6g}" for v in vals) for lab, vals in dense)
        if with_sparse:
            sparse = sparse + synthetic_sparse(text)
        pool.setdefault(sid, []).append(Hyp(text, field.strip(), dense, sparse))
    if not pool:
        raise StandinError(f"{path}: empty pool")
    return pool


def source_index(source: str) -> dict[str, int]:
    """Source text -> its first line number in ``source``."""
    index: dict[str, int] = {}
    with open(source, encoding="utf-8") as fh:
        for i, text in enumerate(fh.read().splitlines()):
            index.setdefault(text.strip(), i)
    return index


def pool_sentence(text: str, position: int, index: dict | None, source: str | None) -> int:
    """The pool sentence of an input line: its ``position`` in the input, or with an
    ``index`` (source line -> sentence, from ``-standin-source``) the line's sentence;
    StandinError when the line is not in ``source``."""
    if index is None:
        return position
    try:
        return index[text.strip()]
    except KeyError:
        raise StandinError(f"input line {text.strip()!r} is not in {source}") from None


def take(ranked: list, size: int, key=None) -> list:
    """The first ``size`` of ``ranked``; with ``key``, skipping those whose key was taken."""
    if key is None:
        return ranked[:size]
    out: list = []
    seen: set = set()
    for r in ranked:
        if len(out) == size:
            break
        if key(r) not in seen:
            seen.add(key(r))
            out.append(r)
    return out


def rank(hyps: list[Hyp], score, size: int, distinct: bool) -> list[tuple[Hyp, float]]:
    """The ``size`` best (hypothesis, model score) of one sentence, best first, ties in pool order;
    ``distinct``: the first of equal hypothesis strings only."""
    scored = sorted((-score(h), k) for k, h in enumerate(hyps))
    best = take(scored, size, (lambda r: hyps[r[1]].text.strip()) if distinct else None)
    return [(hyps[k], -neg) for neg, k in best]


def _hyps_of(pool: dict[int, list], sid: int, position: int) -> list:
    if sid not in pool:
        raise StandinError(f"sentence {position} (pool sentence {sid}) has no hypotheses in the pool")
    return pool[sid]


class _Args:
    """A tiny flag reader: ``value()`` takes the next argument, with a clear error."""

    def __init__(self, argv):
        self.argv, self.i = argv, 0

    def __iter__(self):
        while self.i < len(self.argv):
            a = self.argv[self.i]
            self.i += 1
            yield a

    def value(self, flag: str) -> str:
        if self.i >= len(self.argv):
            raise StandinError(f"{flag} needs a value")
        self.i += 1
        return self.argv[self.i - 1]

    def peek(self):
        return self.argv[self.i] if self.i < len(self.argv) else None


def _pool_options():
    return {"pool": os.environ.get("STANDIN_POOL") or str(DEFAULT_POOL),
            "source": os.environ.get("STANDIN_SOURCE") or None,
            "by_position": os.environ.get("STANDIN_BY_POSITION", "") not in ("", "0")}


NO_LOOKUP = ("cannot tell which pool sentence an input line is: give -standin-source FILE (the tuning set's "
             "source; each line is looked up there, so a shard of any size decodes the right sentences), or "
             "-standin-by-position when this one process decodes the whole set from its first sentence")


def sentence_index(o: dict):
    """The source index of ``-standin-source`` (None: by position, which must be asked for:
    a shard of a tuning set starts at its own line 0, not at the set's)."""
    if o["source"]:
        return source_index(o["source"])
    if not o["by_position"]:
        raise StandinError(NO_LOOKUP)
    return None


# ------------------------------------------------------------------ Moses front end
def parse_weight_string(s: str) -> dict[str, list[float]]:
    """'Name= v [v ...] Name2= v' -> {label: [values]}."""
    weights: dict[str, list[float]] = {}
    label = None
    for tok in s.split():
        if tok.endswith("="):
            label = tok[:-1]
            weights[label] = []
            continue
        if label is None:
            raise StandinError(f"weight value {tok!r} before any 'Name='")
        try:
            weights[label].append(float(tok))
        except ValueError:
            raise StandinError(f"bad weight value {tok!r} of {label}") from None
    for label, vals in weights.items():
        if not vals:
            raise StandinError(f"feature {label} has no weight values")
    return weights


def read_config_weights(path: str) -> dict[str, list[float]]:
    """The [weight] section of a moses.ini ('Name= v v ...' lines)."""
    weights: dict[str, list[float]] = {}
    section = None
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.split("#", 1)[0].strip()
            if line.startswith("[") and line.endswith("]"):
                section = line[1:-1]
            elif line and section == "weight" and "=" in line:
                weights.update(parse_weight_string(line))
    return weights


def read_name_values(path: str) -> dict[str, float]:
    """'name value' lines (also TAB or '=' between); '#' lines and blank lines skipped."""
    out: dict[str, float] = {}
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            cut = max(line.rfind("="), line.rfind("\t"))
            if cut > 0:
                line = line[:cut] + " " + line[cut + 1:]
            parts = line.split()
            if len(parts) != 2:
                raise StandinError(f"{path}:{n}: expected 'name value'")
            try:
                out[parts[0]] = float(parts[1])
            except ValueError:
                raise StandinError(f"{path}:{n}: bad value {parts[1]!r}") from None
    return out


def parse_moses_args(argv: list[str]) -> dict:
    """The Moses front end's options from ``argv`` (the arguments after ``moses``) as a
    dict; flags Moses has that do not change the output (``-threads``, ``-inputtype``,
    ``-v``) are read and dropped; StandinError for an unknown flag or a bad n-best size."""
    o = {"config": None, "overwrite": None, "wfile": None, "nbest": None, "size": 0, "distinct": False,
         "input": None, "show": False, "sparse": os.environ.get("STANDIN_SPARSE", "") not in ("", "0"),
         **_pool_options()}
    args = _Args(argv)
    keys = {"-config": "config", "-f": "config", "-weight-overwrite": "overwrite", "-weight-file": "wfile",
            "-input-file": "input", "-i": "input", "-standin-pool": "pool", "-standin-source": "source"}
    for a in args:
        if a in keys:
            o[keys[a]] = args.value(a)
        elif a == "-standin-by-position":
            o["by_position"] = True
        elif a in ("-inputtype", "-threads", "-v", "-verbose"):
            args.value(a)
        elif a == "-n-best-list":
            o["nbest"] = args.value(a)
            size = args.value(a)
            try:
                o["size"] = int(size)
            except ValueError:
                raise StandinError(f"-n-best-list: bad size {size!r}") from None
            if args.peek() == "distinct":
                o["distinct"] = True
                args.value(a)
        elif a == "-show-weights":
            o["show"] = True
        elif a == "-standin-sparse":
            o["sparse"] = True
        else:
            raise StandinError(f"unknown argument {a!r}")
    return o


def _check_dense(weights: dict[str, list[float]], layout, where: str) -> None:
    for lab, n in layout:
        if lab not in weights:
            raise StandinError(f"no weight for feature {lab}{where}")
        if len(weights[lab]) != n:
            raise StandinError(f"feature {lab} has {n} values but {len(weights[lab])} weights")


def main_moses(argv: list[str], out=None) -> int:
    """The Moses front end (module docstring): the 1-best to ``out`` (default stdout), the
    n-best to ``-n-best-list``; returns 0, raises StandinError for bad input."""
    out = out or sys.stdout
    o = parse_moses_args(argv)
    pool = load_pool(o["pool"], o["sparse"])
    first = pool[min(pool)][0]
    layout = [(lab, len(vals)) for lab, vals in first.dense]
    weights: dict[str, list[float]] = {}
    if o["config"] and (o["show"] or o["overwrite"] is None):
        weights.update(read_config_weights(o["config"]))
    if o["show"]:  # as Moses: the tuneable features with their values, then the others
        _check_dense(weights, layout, f" in {o['config']}")
        for lab, _ in layout:
            out.write(f"{lab}= " + " ".join(f"{v:f}" for v in weights[lab]) + "\n")
        labels = {lab for lab, _ in layout}
        out.write("".join(f"{lab} UNTUNEABLE\n" for lab in weights if lab not in labels))
        return 0
    if o["overwrite"] is not None:
        weights.update(parse_weight_string(o["overwrite"]))
    elif not o["config"]:
        raise StandinError("no weights: give -config or -weight-overwrite")
    _check_dense(weights, layout, "")
    for lab, vals in weights.items():
        if not all(math.isfinite(v) for v in vals):
            raise StandinError(f"weight of {lab} is not finite")
    sparse_w = read_name_values(o["wfile"]) if o["wfile"] else {}
    if o["input"] is None:
        raise StandinError("no -input-file given (the stand-in does not read stdin)")
    with open(o["input"], encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    index = sentence_index(o)
    if len(lines) > len(pool) and index is None:
        raise StandinError(f"{o['input']} has {len(lines)} sentences, the pool only {len(pool)}")

    def score(h: Hyp) -> float:
        total = 0.0
        for lab, vals in h.dense:
            total += sum(w * v for w, v in zip(weights[lab], vals))
        return total + sum(sparse_w.get(n, 0.0) * v for n, v in h.sparse)

    nb = open(o["nbest"], "w", encoding="utf-8") if o["nbest"] else None  # noqa: SIM115 - closed in the finally
    try:
        for s, text in enumerate(lines):
            hyps = _hyps_of(pool, pool_sentence(text, s, index, o["source"]), s)
            best = rank(hyps, score, max(o["size"], 1), o["distinct"])
            out.write(best[0][0].text.rstrip(" ") + "\n")
            if nb is None:
                continue
            for h, total in best[: o["size"]]:
                feats = h.field + "".join(f" {n}= {v:.6g}" for n, v in h.sparse)
                nb.write(f"{s} ||| {h.text} ||| {feats} ||| {total:.6g}\n")
    finally:
        if nb is not None:
            nb.close()
    return 0


# ------------------------------------------------------------------ cdec front end
def cdec_names(label: str, n: int) -> tuple[str, ...]:
    """cdec's names of a pool feature with ``n`` values (a sparse one keeps its name)."""
    if "_" in label:
        if n != 1:
            raise StandinError(f"sparse feature {label} has {n} values")
        return (label,)
    if label in CDEC_NAMES and n == 1:
        return (CDEC_NAMES[label],)
    return tuple(f"{CDEC_PREFIXES.get(label, label)}_{k}" for k in range(n))


def _getter(positions):
    """toks -> the tuple of toks at ``positions`` (itemgetter returns a bare item for one)."""
    if len(positions) > 1:
        return itemgetter(*positions)
    return lambda toks: tuple(toks[i] for i in positions)


def _cdec_layout(field: str, toks: list[str]):
    """Parse a feature field in full: (labels getter, its labels, values getter, cdec names)."""
    label_at: list[int] = []
    value_at: list[int] = []
    names: list[str] = []
    label: str | None = None
    count = 0
    for i, tok in enumerate(toks + ["="]):
        if tok[-1] != "=":
            if label is None:
                raise StandinError(f"value {tok!r} before any label in {field!r}")
            float(tok)
            value_at.append(i)
            count += 1
            continue
        if label is not None:
            names += cdec_names(label, count)
        label_at.append(i)
        label, count = tok[:-1], 0
    get_labels = _getter(label_at[:-1])
    return get_labels, get_labels(toks), _getter(value_at), names


def cdec_features(field: str, layouts: dict) -> tuple[list[str], list[str], list[float]]:
    """A pool feature field's nonzero features in cdec's names: (names, values as the pool
    writes them, values).

    ``layouts`` caches per token count the label positions and names of the last field
    parsed in full: the hypotheses of a pool share their labels, so most fields only need
    their values converted, in C (dtrain runs one process per sentence or mini-batch).
    A field matches a layout when it has the layout's labels at its positions and floats
    everywhere else (a label ends in '=', a float never does): then it parses the same."""
    toks = field.split()
    layout = layouts.get(len(toks))
    values = None
    if layout is not None and layout[0](toks) == layout[1]:
        try:
            values = list(map(float, layout[2](toks)))
        except ValueError:
            pass  # another layout with the same labels in part: parsed in full below
    if layout is None or values is None:
        layout = layouts[len(toks)] = _cdec_layout(field, toks)
        values = list(map(float, layout[2](toks)))
    texts = layout[2](toks)
    return list(compress(layout[3], values)), list(compress(texts, values)), list(compress(values, values))


def split_seg(line: str) -> tuple[str, int | None]:
    """'<seg id="7" grammar=g>text</seg>' -> ('text', 7); a plain line -> (line, None).
    (String operations, not ``re``: importing it costs a per-call decoder start-up.)"""
    head = line.lstrip()
    if not (head.startswith("<seg") and head[4:5] in (" ", "\t", ">")):
        return line, None
    close = head.find(">")
    if close < 0:
        return line, None
    attrs, text = head[4:close], head[close + 1:].rstrip()
    text = text.removesuffix("</seg>")
    for attr in attrs.split():
        key, _, value = attr.partition("=")
        value = value.strip("\"'")
        if key == "id" and value.isdigit():
            return text, int(value)
    return text, None


def read_cdec_ini(path: str) -> dict[str, str]:
    """cdec's config: 'key=value' lines, '#' comments, blank lines."""
    out = {}
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            key, sep, value = line.partition("=")
            if not sep or not key.strip():
                raise StandinError(f"{path}:{n}: expected 'key=value', got {line!r}")
            out[key.strip()] = value.strip()
    return out


def main_cdec(argv: list[str], stdin=None, out=None) -> int:
    """The cdec front end (module docstring): input lines from ``stdin``, the 1-best or
    k-best lists to ``out`` (defaults: the process's); returns 0, raises StandinError for
    bad input."""
    stdin, out = stdin or sys.stdin, out or sys.stdout
    o = {"ini": None, "weights": None, "k": "0", "unique": False, **_pool_options()}
    args = _Args(argv)
    keys = {"-c": "ini", "--config": "ini", "-w": "weights", "--weights": "weights", "-k": "k",
            "--k_best": "k", "-standin-pool": "pool", "-standin-source": "source"}
    for a in args:
        if a in keys:
            o[keys[a]] = args.value(a)
        elif a in ("-r", "--unique_k_best"):
            o["unique"] = True
        elif a == "--mr_mira_compat":
            o["mira"] = True
        elif a == "-standin-by-position":
            o["by_position"] = True
        else:
            raise StandinError(f"unknown argument {a!r}")
    if not o["ini"]:
        raise StandinError("no -c cdec.ini given")
    read_cdec_ini(o["ini"])
    try:
        k = int(o["k"])
    except ValueError:
        k = -1
    if k < 0:
        raise StandinError(f"-k: bad size {o['k']!r}")
    weights = read_name_values(o["weights"]) if o["weights"] else {}
    if o.get("mira"):
        if k == 0:
            raise StandinError("--mr_mira_compat needs -k N")
        return _cdec_stream(o, k, weights, stdin, out)
    calls = []  # (output id, pool sentence) per input line
    counter = -1
    index: dict | None = None
    for position, line in enumerate(stdin.read().splitlines()):
        counter += 1
        text, sid = split_seg(line)
        if sid is not None:
            counter = sid
        elif index is None and (o["source"] or not o["by_position"]):
            index = sentence_index(o)      # a <seg id> names its sentence; a plain line needs a lookup
        calls.append((counter, pool_sentence(text, position, index, o["source"]) if sid is None else sid))
    # {sentence: [(-model score, pool order, text, 'f=v ...')]}, best first, ties in pool order
    pool: dict[int, list] = {}
    layouts: dict = {}
    for n, sid, text, field in pool_rows(o["pool"], {sid for _, sid in calls}):
        try:
            names, texts, values = cdec_features(field, layouts)
        except (StandinError, ValueError) as exc:
            raise StandinError(f"{o['pool']}:{n}: {exc}") from None
        score = sum(map(mul, map(weights.get, names, repeat(0.0)), values))
        hyps = pool.setdefault(sid, [])
        hyps.append((-score, len(hyps), text.strip(), " ".join(map("=".join, zip(names, texts)))))
    for hyps in pool.values():
        hyps.sort()
    for position, (counter, sid) in enumerate(calls):
        hyps = _hyps_of(pool, sid, position)
        if k == 0:
            out.write(hyps[0][2] + "\n")
            continue
        for neg, _, text, fv in take(hyps, k, itemgetter(2) if o["unique"] else None):
            out.write(f"{counter} ||| {text} ||| {fv} ||| {-neg:.6g}\n")
    return 0


def seg_delta(line: str) -> str:
    """The ``delta="..."`` attribute of a ``<seg>`` line (cdec --mr_mira_compat), or ''."""
    if not line.startswith("<seg"):
        return ""
    close = line.find(">")
    for attr in line[4:close].split():
        key, _, value = attr.partition("=")
        if key == "delta":
            return value.strip("\"'")
    return ""


def apply_delta(weights: dict, delta: str) -> None:
    """Add cdec's base64 weight records (``name NUL little-endian double``) to ``weights``."""
    import base64
    import struct

    data = base64.b64decode(delta)
    i = 0
    while i < len(data):
        j = data.index(b"\0", i)
        if j == i:
            break          # NUL padding
        name = data[i:j].decode("utf-8")
        weights[name] = weights.get(name, 0.0) + struct.unpack("<d", data[j + 1:j + 9])[0]
        i = j + 9


def _b64_features(names: list, values: list) -> str:
    import base64
    import struct

    return base64.b64encode(b"".join(n.encode("utf-8") + b"\0" + struct.pack("<d", v)
                                     for n, v in zip(names, values))).decode("ascii")


def _cdec_stream(o: dict, k: int, weights: dict, stdin, out) -> int:
    """cdec's ``--mr_mira_compat``, one input line at a time: a ``delta`` in the line's
    ``<seg>`` markup is added to the weights first; the answer is a line holding k, then
    the k best (``id ||| source length ||| hyp ||| base64 features ||| score``; blank
    lines up to k), flushed before the next line is read; a line without text gets one
    empty line (cdec: no parse). The features' base64 is correct here (cdec's drops half
    a byte at times: mtplug._ext._mira_kbest)."""
    rows: dict[int, list] = {}
    layouts: dict = {}
    for n, sid, text, field in pool_rows(o["pool"]):
        try:
            names, _, values = cdec_features(field, layouts)
        except (StandinError, ValueError) as exc:
            raise StandinError(f"{o['pool']}:{n}: {exc}") from None
        rows.setdefault(sid, []).append((text.strip(), names, values))
    index: dict | None = None
    counter = -1
    position = -1
    for line in iter(stdin.readline, ""):
        line = line.rstrip("\n")
        if not line:
            continue
        position += 1
        counter += 1
        delta = seg_delta(line)
        if delta:
            apply_delta(weights, delta)
        text, sid = split_seg(line)
        if sid is not None:
            counter = sid
        if not text.strip():
            out.write("\n")
            out.flush()
            continue
        if sid is None and index is None and (o["source"] or not o["by_position"]):
            index = sentence_index(o)
        pool_sid = pool_sentence(text, position, index, o["source"]) if sid is None else sid
        hyps = []
        for order, (hyp, names, values) in enumerate(rows.get(pool_sid, [])):
            score = sum(map(mul, map(weights.get, names, repeat(0.0)), values))
            hyps.append((-score, order, hyp, names, values))
        hyps.sort()
        best = take(hyps, k, itemgetter(2) if o["unique"] else None)
        if not best:
            raise StandinError(f"no pool sentence {pool_sid}")
        words = len(text.split())
        out.write(f"{k}\n")
        for neg, _, hyp, names, values in best:
            out.write(f"{counter} ||| {words} ||| {hyp} ||| {_b64_features(names, values)} ||| {-neg:.6g}\n")
        out.write("\n" * (k - len(best)))
        out.flush()
    return 0


USAGE = """\
usage: python -m mtplug.tuning.standin {moses,cdec} [ARGS]

A stand-in decoder: re-ranks a fixed pool of hypotheses (a Moses n-best list) with the
weights it is given, spelled like the real programs, so decoder-in-the-loop tuning runs
without Moses or cdec.

  moses -config moses.ini [-weight-overwrite 'LM0= 0.5 ...'] [-weight-file sparse.w]
        [-n-best-list FILE N [distinct]] -input-file SRC [-show-weights] [-standin-sparse]
  cdec  -c cdec.ini [-w weights] [-k N] [-r] [--mr_mira_compat]  (input lines on stdin)

stand-in options (both front ends):
  -standin-pool FILE      the pool (default: mtplug's bundled example n-best; env STANDIN_POOL)
  -standin-source FILE    the tuning set's source: an input line is looked up there to find its
                          pool sentence, so shards (mtplug tune --jobs J) decode the right
                          sentences (env STANDIN_SOURCE); cdec lines with <seg id="N"> need none
  -standin-by-position    take input line i as pool sentence i instead (one process over the
                          whole set only; env STANDIN_BY_POSITION=1)
  -standin-sparse         moses: add two synthetic sparse features per hypothesis

examples:
  python -m mtplug.tuning.standin moses -config moses.ini -input-file dev.src -standin-source dev.src
  mtplug tune --decoder moses --decoder-bin "python -m mtplug.tuning.standin moses -standin-source dev.src" ...
"""


def main(argv: list[str] | None = None) -> int:
    """``standin.py moses|cdec ARGS`` (``argv`` default: ``sys.argv[1:]``): run a front end;
    returns 0, or 1 after one ``standin: error:`` line on stderr for bad input."""
    argv = sys.argv[1:] if argv is None else argv
    if any(a in ("-h", "--help", "-help") for a in argv):
        sys.stdout.write(USAGE)
        return 0
    try:
        if not argv or argv[0] not in ("moses", "cdec"):
            raise StandinError("first argument: moses or cdec (see --help)")
        return (main_moses if argv[0] == "moses" else main_cdec)(argv[1:])
    except (StandinError, OSError, ValueError) as exc:
        sys.stderr.write(f"standin: error: {exc}\n")
        return 1


if __name__ == "__main__":
    sys.exit(main())
