"""The study file of ``mtplug compare``: one YAML file describing an optimizer study.

A study tunes the same system with several optimizers, each several times (seeds ×
start points: its *replicas*), and compares their test-set scores (MultEval's report,
:mod:`mtplug.experiments.evaluate`). :func:`load_study` reads and checks the whole file
before any work: unknown keys (with a did-you-mean), values of the wrong kind, missing
files, unknown optimizers and options, a pool-mode section in a decoder-mode study and
the other way round are :class:`~mtplug.errors.InputError` naming the file and line.
The keys and what they mean are in :data:`TEMPLATE` (``mtplug compare --write-config``).

Paths are taken relative to the current directory, as ``mtplug tune --yaml`` takes them,
and made absolute here (dask workers run in other directories).
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import os
import re
import shutil
from dataclasses import dataclass, field

import numpy as np

from ..aliases import warn_old_name
from ..errors import InputError
from ..formats.weights_core import split_dense_name
from ..optimizers.mert import restart_bounds
from ..tuning.config import OLD_NAMES as TUNE_OLD_NAMES
from ..tuning.config import TUNE_OPTIONS, convert_value, load_yaml, show_value
from ..validation import check_count, check_seed, check_threads

MODES = ("decoder", "pool")
#: tune keys the study sets itself, and where the user gives them instead
STUDY_OWNED = {
    "workdir": "each replica tunes in WORKDIR/runs/OPTIMIZER/REPLICA/tune (set workdir at the top level)",
    "optimizer": "give the optimizers under optimizers:",
    "optimizer_options": "give each optimizer's options under optimizers: NAME: options:",
    "seed": "replicas: seeds sets the seeds (1..N)",
    "test_input": "give the test set under test: input:",
    "test_ref": "give the test set under test: ref:",
    "scheduler": "give it to mtplug compare --scheduler (replicas then run on the dask workers)",
    "threads": "set threads at the top level of the study",
}
#: tune keys that do not change a replica's result (left out of its fingerprint)
TUNE_FREE = ("jobs", "decoder_timeout")

_STR: dict[str, object] = {}
_INT = {"type": int}
_LIST = {"nargs": "+"}
_BOOL = {"action": "store_true"}
#: key -> (default, kind as argparse keyword arguments), per section; None for a key that is a
#: section itself (a mapping read on its own)
_TOP = {"name": (None, _STR), "workdir": (None, _STR), "mode": (None, {"choices": MODES}),
        "tune": None, "test": None, "pool": None, "optimizers": None, "baseline": (None, _STR),
        "replicas": None, "evaluate": None, "threads": (None, _INT)}
_TEST = {"input": (None, _STR), "ref": (None, _LIST)}
_POOL = {"nbest": (None, _LIST), "ref": (None, _LIST), "weights": (None, _STR), "sparse_weights": (None, _STR),
         "test_nbest": (None, _LIST), "test_ref": (None, _LIST), "metric": ("bleu", _STR),
         "reflen": ("closest", {"choices": ("closest", "shortest", "average")}), "lowercase": (False, _BOOL)}
_POOL_REQUIRED = ("nbest", "ref", "weights", "test_nbest", "test_ref")
_POOL_FILES = ("nbest", "ref", "weights", "sparse_weights", "test_nbest", "test_ref")
#: old key names of a section -> the key they stand for now (they work, with one warning each)
_OLD_POOL_KEYS = {"init": "weights", "sparse_init": "sparse_weights"}
#: evaluate's metrics: metric (a list, as mtplug evaluate --metric bleu ter), formerly metrics
_OLD_EVALUATE_KEYS = {"metrics": "metric"}
#: the fingerprints keep the keys studies wrote before the keys were renamed, so that their
#: replicas count as done (compare.py compares fingerprint.json key by key)
_FINGERPRINT_KEYS = {"pool.weights": "pool.init", "pool.sparse_weights": "pool.sparse_init",
                     "tune.nbest_size": "tune.nbest", "tune.decoder_config": "tune.config"}
#: how random start points are drawn around the start weights w (:func:`random_start`)
START_DISTRIBUTIONS = ("uniform", "normal")
#: tune keys added after studies were run, with their defaults: at the default they stay
#: out of the fingerprints, so that the replicas run before them count as done
_TUNE_KEYS_SINCE = {"pool_reset": 0}
_REPLICAS = {"seeds": (1, _INT), "start_points": (1, _INT), "start_seed": (0, _INT), "fixed": (None, _LIST),
             "start_distribution": ("uniform", {"choices": START_DISTRIBUTIONS})}
_OPTIMIZER_KEYS = ("optimizer", "options")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_+-]*")


def _evaluate_keys() -> dict:
    from .evaluate import DEFAULT_AR_SHUFFLES, DEFAULT_BOOT_SAMPLES, DEFAULT_METRICS

    return {"metric": (list(DEFAULT_METRICS), _LIST), "boot_samples": (DEFAULT_BOOT_SAMPLES, _INT),
            "ar_shuffles": (DEFAULT_AR_SHUFFLES, _INT), "seed": (0, _INT)}


@dataclass(frozen=True)
class OptimizerSpec:
    """One optimizer of the study: ``name`` (the study's name for it, a system of the
    report and a folder), ``algorithm`` (a name of optimizers/registry.py), ``given``
    (the options the file gives) and ``options`` (every option of the algorithm, defaults
    filled in, as ``mtplug optimize`` passes them to the constructor)."""

    name: str
    algorithm: str
    given: dict
    options: dict


@dataclass(frozen=True)
class Replica:
    """One tuning run of an optimizer: seed (1..N) and start point (0: the given start
    weights, 1..: random); ``id`` such as ``s2-p0`` names its folder."""

    optimizer: OptimizerSpec
    seed: int
    point: int

    @property
    def id(self) -> str:
        """``s<seed>-p<point>``, the name of the replica's folder."""
        return f"s{self.seed}-p{self.point}"


@dataclass
class Study:
    """A checked study file. Decoder mode: ``tune`` maps an optimizer's name to its
    TuneConfig (workdir, seed and start weights are set per replica); ``test`` the test
    set (source, [references]). Pool mode: ``pool`` the pool keys with absolute paths.
    ``lines``: the line of every key of the file by dotted path (for messages)."""

    path: str
    name: str
    workdir: str
    mode: str
    optimizers: list          # OptimizerSpec, the baseline first
    seeds: int
    start_points: int
    start_seed: int
    fixed: list
    metrics: list
    boot_samples: int
    ar_shuffles: int
    eval_seed: int
    threads: int | None
    tune: dict = field(default_factory=dict)
    test: tuple = ()                              # empty in pool mode
    pool: dict = field(default_factory=dict)      # empty in decoder mode
    lines: dict = field(default_factory=dict)
    start_distribution: str = "uniform"           # START_DISTRIBUTIONS

    @property
    def metric(self) -> str:
        """What the optimizers maximise (the tuning metric's text)."""
        if self.mode == "pool":
            return self.pool["metric"]
        return next(iter(self.tune.values())).metric

    @property
    def bleu_config(self):
        """BLEU's options (reflen, lowercase) of the study, for scoring the test set: the
        pool section's, or in decoder mode those of the first optimizer's TuneConfig."""
        from ..metrics.bleu import BleuConfig

        src = self.pool if self.mode == "pool" else vars(next(iter(self.tune.values())))
        return BleuConfig(reflen=src["reflen"], lowercase=src["lowercase"])

    @property
    def test_refs(self) -> list:
        """The test set's reference files."""
        return self.pool["test_ref"] if self.mode == "pool" else self.test[1]

    def replicas(self) -> list:
        """Every replica: optimizer by optimizer (baseline first), then seed, then start point."""
        return [Replica(o, s, p) for o in self.optimizers for s in range(1, self.seeds + 1)
                for p in range(self.start_points)]

    def replica_ids(self) -> list:
        """Replica ids ``s<seed>-p<point>`` of one optimizer, seed by seed, then start point."""
        return [f"s{s}-p{p}" for s in range(1, self.seeds + 1) for p in range(self.start_points)]

    def fingerprint(self, replica: Replica) -> dict:
        """What a replica's result depends on, by the dotted key of the study file (jobs and
        threads do not change it; the number of seeds, start points and optimizers does not
        either). JSON values."""
        o = replica.optimizer
        out: dict[str, object] = {"mode": self.mode, f"optimizers.{o.name}.optimizer": o.algorithm}
        out.update((f"optimizers.{o.name}.options.{k}", v) for k, v in o.options.items())
        if self.mode == "pool":
            out.update((f"pool.{k}", v) for k, v in self.pool.items())
        else:
            cfg = self.tune[o.name]
            out.update((f"tune.{k}", getattr(cfg, k)) for k in TUNE_OPTIONS
                       if k not in STUDY_OWNED and k not in TUNE_FREE
                       and not (k in _TUNE_KEYS_SINCE and getattr(cfg, k) == _TUNE_KEYS_SINCE[k]))
            out.update({"test.input": self.test[0], "test.ref": self.test[1]})
        if replica.point:
            out.update({"replicas.start_seed": self.start_seed, "replicas.fixed": self.fixed})
            if self.start_distribution != "uniform":   # studies written before the key count as done
                out["replicas.start_distribution"] = self.start_distribution
        return {_FINGERPRINT_KEYS.get(k, k): v for k, v in out.items()}

    def line_of(self, key: str) -> int | None:
        """The line of dotted ``key`` in the file, or of the nearest enclosing key given."""
        return line_of(self.lines, key)


def line_of(lines: dict, key: str) -> int | None:
    """The line of dotted ``key`` in ``lines`` (:func:`mtplug.tuning.config.load_yaml`'s), or
    of the nearest enclosing key the file gives; None when there is none."""
    key = key.replace("-", "_")
    while key:
        if key in lines:
            return lines[key]
        key = key.rpartition(".")[0]
    return None


def is_fixed(name: str, fixed) -> bool:
    """Whether weight ``name`` is one of ``fixed``: by its name, or by its Moses label
    (``UnknownWordPenalty0`` fixes ``UnknownWordPenalty0_0``)."""
    split = split_dense_name(name)
    return name in fixed or (split is not None and split[0] in fixed)


def random_start(weights: list, point: int, start_seed: int, fixed=(), distribution: str = "uniform") -> list:
    """Start point ``point`` (>= 1) of a study: ``weights`` [(name, value)] with every weight
    not :func:`is_fixed` drawn around its value w. ``distribution`` "uniform": in MERT's
    restart bounds (:func:`mtplug.optimizers.mert.restart_bounds`: [0, 2w], each weight's
    sign kept); "normal": from N(w, (w/2)²), Gimpel & Smith's (2012, §6) initializers
    (a weight of 0 stays 0). One call of numpy's ``default_rng(SeedSequence([start_seed,
    point]))`` over the drawn weights, in the given order: the same points for every
    optimizer, whatever the seeds."""
    if distribution not in START_DISTRIBUTIONS:
        raise ValueError(f"distribution must be one of {', '.join(START_DISTRIBUTIONS)}, got {distribution!r}")
    names = [n for n, _ in weights]
    values = np.array([v for _, v in weights], dtype=np.float64)
    keep = set(fixed)
    drawn = np.array([not is_fixed(n, keep) for n in names], dtype=bool)
    rng = np.random.default_rng(np.random.SeedSequence([int(start_seed), int(point)]))
    out = values.copy()
    if distribution == "normal":
        out[drawn] = rng.normal(values[drawn], np.abs(values[drawn]) / 2.0)
    else:
        lo, hi = restart_bounds(values, drawn)
        out[drawn] = rng.uniform(lo[drawn], hi[drawn])
    return list(zip(names, out.tolist()))


# ------------------------------------------------------------------ reading
class _File:
    """Messages about one study file: ``fail(key, message)`` is an InputError at the key's line."""

    def __init__(self, path: str, lines: dict):
        self.path = path
        self.lines = lines

    def line(self, key: str) -> int | None:
        return line_of(self.lines, key)

    def fail(self, key: str, message: str) -> InputError:
        return InputError(message, self.path, self.line(key))

    def mapping(self, value, key: str, allowed, what: str, owner: str | None = None,
                old_names: dict | None = None) -> dict:
        """``value`` (the section ``key``) as {name with '_': value}; unknown keys are errors
        with a did-you-mean among ``allowed`` (``owner``: whose options they are);
        ``old_names`` (old key -> new key) are read as the new key, with a warning."""
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.fail(key, f"{_label(key)} must be a mapping ({what}), got {show_value(value)}")
        out = {}
        for k, v in value.items():
            name = str(k).replace("-", "_")
            if old_names and name in old_names:
                new = old_names[name]
                warn_old_name(f"{_label(key + '.' + name)}:", f"{_label(key + '.' + new)}:")
                if any(str(other).replace("-", "_") == new for other in value):
                    raise self.fail(f"{key}.{name}", f"{_label(key)}: {name} and {new} are one key (its old "
                                                     "and new name); give it once")
                self.lines[f"{key}.{new}"] = self.lines.get(f"{key}.{name}")
                name = new
            if name not in allowed:
                close = difflib.get_close_matches(name, list(allowed), n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                where = f"{_label(key)}: " if key else ""
                unknown = f"{k!r} is not an option of {owner}" if owner else f"unknown key {k!r}"
                raise self.fail(f"{key}.{name}" if key else name,
                                f"{where}{unknown}{hint}; known: {', '.join(allowed) or 'none'}")
            out[name] = v
        return out

    def values(self, data: dict, key: str, table: dict) -> dict:
        """The keys of ``table`` (default, kind) converted from ``data`` (defaults filled in)."""
        out = {}
        for name, (default, kind) in table.items():
            full = f"{key}.{name}" if key else name
            if name in data:
                out[name] = convert_value(data[name], kind, (self.path, self.line(full), _label(full)), default)
            else:
                out[name] = default
        return out

    def existing(self, key: str, paths):
        """``paths`` (one or a list) made absolute; InputError at ``key`` for a missing one."""
        single = isinstance(paths, str)
        out = []
        for p in [paths] if single else paths:
            if not os.path.exists(p):
                raise self.fail(key, f"{_label(key)}: no such file {p}")
            if os.path.isdir(p):
                raise self.fail(key, f"{_label(key)}: {p} is a directory, expected a file")
            out.append(os.path.abspath(p))
        return out[0] if single else out


def _label(key: str) -> str:
    """``tune.iterations`` -> ``tune: iterations``, as the key is spelled in the file."""
    return ": ".join(key.split("."))


def load_study(path: str, workdir: str | None = None, threads: int | None = None) -> Study:
    """Read and check the study file ``path``; ``workdir`` and ``threads`` (the command's
    flags) override the file's. InputError (file:line) for anything the study cannot run
    with, before any work."""
    data, lines = load_yaml(path)
    f = _File(path, lines)
    top = f.mapping(data, "", list(_TOP), "a study")
    plain = {k: v for k, v in _TOP.items() if v is not None}
    values = f.values(top, "", plain)
    name = values["name"] or os.path.splitext(os.path.basename(path))[0]
    workdir = workdir or values["workdir"]
    if not workdir:
        raise f.fail("", "missing workdir: where the study's runs and report go (or give --workdir)")
    if os.path.exists(workdir) and not os.path.isdir(workdir):
        raise f.fail("workdir", f"workdir must be a directory (it is created if missing), but {workdir} is a file")
    mode = values["mode"]
    if mode is None:
        raise f.fail("", "missing mode: decoder (tune with the decoder in the loop: tune and test sections) or "
                         "pool (optimize over fixed n-best lists: a pool section)")
    own, other = (("tune", "test"), ("pool",)) if mode == "decoder" else (("pool",), ("tune", "test"))
    for section in other:
        if section in top:
            raise f.fail(section, f"{section}: belongs to a {'pool' if mode == 'decoder' else 'decoder'}-mode "
                                  f"study, but mode is {mode} (pool and decoder keys mixed); remove it or change "
                                  "mode")
    for section in own:
        if top.get(section) is None:
            raise f.fail("mode", f"mode {mode} needs a {section}: section")
    check_threads(values["threads"], "threads", f.path, f.line("threads"))     # the words of every command
    threads = threads if threads is not None else values["threads"]

    optimizers = _optimizers(f, top.get("optimizers"), mode)
    baseline = values["baseline"]
    if baseline is not None:
        names = [o.name for o in optimizers]
        if baseline not in names:
            raise f.fail("baseline", f"baseline must name one of the optimizers ({', '.join(names)}), "
                                     f"got {show_value(baseline)}")
        optimizers.sort(key=lambda o: o.name != baseline)     # stable: the others keep their order

    rep = f.values(f.mapping(top.get("replicas"), "replicas", list(_REPLICAS), "seeds, start_points, ..."),
                   "replicas", _REPLICAS)
    for key in ("seeds", "start_points"):
        check_count(rep[key], f"replicas: {key}", 1, f.path, f.line(f"replicas.{key}"))
    check_seed(rep["start_seed"], "replicas: start_seed", f.path, f.line("replicas.start_seed"))
    fixed = rep["fixed"] or []

    ev = f.values(f.mapping(top.get("evaluate"), "evaluate", list(_evaluate_keys()), "metric, boot_samples, ...",
                            old_names=_OLD_EVALUATE_KEYS), "evaluate", _evaluate_keys())
    _check_evaluate(f, ev)

    study = Study(path, str(name), os.path.abspath(workdir), mode, optimizers, rep["seeds"],
                  rep["start_points"], rep["start_seed"], list(fixed), list(ev["metric"]), ev["boot_samples"],
                  ev["ar_shuffles"], ev["seed"], threads, lines=lines,
                  start_distribution=rep["start_distribution"])
    if mode == "pool":
        study.pool = _pool(f, top["pool"])
    else:
        study.test = _test(f, top["test"])
        study.tune = _tune(f, top["tune"], optimizers, study)
        _check_fixed(f, fixed, _decoder_start(next(iter(study.tune.values()))))
    return study


def _optimizers(f: _File, value, mode: str) -> list:
    from ..optimizers.registry import OPTIMIZER_NAMES, get_optimizer

    if not isinstance(value, dict) or not value:
        raise f.fail("optimizers", "optimizers must be a mapping of name: {optimizer: ALGO, options: {...}} "
                                   "with at least one entry")
    known = [n for n in OPTIMIZER_NAMES if mode == "pool" or n != "none"]
    out = []
    for raw_name, entry in value.items():
        name = str(raw_name)
        key = f"optimizers.{name.replace('-', '_')}"
        if not _NAME.fullmatch(name):
            raise f.fail(key, f"optimizers: {name!r} cannot name a folder and a system of the report; expected "
                              "letters, digits, _, + and -")
        entry = f.mapping(entry, key, list(_OPTIMIZER_KEYS), "optimizer: ALGO, options: {...}")
        algorithm = entry.get("optimizer", name)
        if algorithm not in known:
            close = difflib.get_close_matches(str(algorithm), known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise f.fail(f"{key}.optimizer", f"{_label(key)}: unknown optimizer {show_value(algorithm)}{hint}; known: "
                                             f"{', '.join(known)}")
        cls = get_optimizer(algorithm)
        given = {}
        for opt, v in f.mapping(entry.get("options"), f"{key}.options", list(cls.options),
                                f"the options of {algorithm}", owner=algorithm).items():
            given[opt] = convert_value(v, cls.options[opt], (f.path, f.line(f"{key}.options.{opt}"),
                                                        f"{_label(key)}: options: {opt}"),
                                  cls.options[opt].get("default"))
        options = {opt: given.get(opt, False if kw.get("action") == "store_true" else kw.get("default"))
                   for opt, kw in cls.options.items()}
        try:
            cls(**options)
        except (TypeError, ValueError) as err:
            raise f.fail(f"{key}.options", f"{_label(key)}: {algorithm}: {err}") from None
        out.append(OptimizerSpec(name, algorithm, given, options))
    return out


def _check_evaluate(f: _File, ev: dict) -> None:
    from .evaluate import report_metric

    for key in ("boot_samples", "ar_shuffles"):
        check_count(ev[key], f"evaluate: {key}", 1, f.path, f.line(f"evaluate.{key}"))
    check_seed(ev["seed"], "evaluate: seed", f.path, f.line("evaluate.seed"))
    labels = []
    for m in ev["metric"]:
        try:
            labels.append(report_metric(m).label)
        except ValueError as err:
            raise f.fail("evaluate.metric", f"evaluate: metric: {m}: {err}") from None
    if len(set(labels)) != len(labels):
        raise f.fail("evaluate.metric", f"evaluate: metric names a metric twice: {' '.join(ev['metric'])}")


def _pool(f: _File, value) -> dict:
    from ..metrics.layer import parse_metric

    pool = f.values(f.mapping(value, "pool", list(_POOL), "the pool's files", old_names=_OLD_POOL_KEYS), "pool",
                    _POOL)
    missing = [k for k in _POOL_REQUIRED if pool[k] in (None, [])]
    if missing:
        raise f.fail("pool", f"pool: missing key(s) {', '.join(missing)}")
    for key in _POOL_FILES:
        if pool[key] is not None:
            pool[key] = f.existing(f"pool.{key}", pool[key])
    try:
        metric = parse_metric(pool["metric"])
    except ValueError as err:
        raise f.fail("pool.metric", f"pool: metric: {err}") from None
    if any(p.name == "ext" for p in metric.parts):
        raise f.fail("pool.metric", "pool: metric: ext: scores belong to the tuning n-best lines; the test "
                                    "translations cannot be scored with them")
    pool["metric"] = metric.name
    return pool


def _test(f: _File, value) -> tuple:
    test = f.values(f.mapping(value, "test", list(_TEST), "input: SRC, ref: [REF...]"), "test", _TEST)
    for key in _TEST:
        if test[key] in (None, []):
            raise f.fail("test", f"test: missing {key} (the held-out test set: input: SRC, ref: [REF...])")
    return f.existing("test.input", test["input"]), f.existing("test.ref", test["ref"])


def _tune(f: _File, value, optimizers: list, study: Study) -> dict:
    """The TuneConfig of every optimizer (mtplug tune's own checks, errors moved to the file's lines)."""
    from ..tuning.config import REQUIRED, config_from_args

    allowed = [k for k in TUNE_OPTIONS if k not in STUDY_OWNED]
    if isinstance(value, dict):
        for k in value:
            name = str(k).replace("-", "_")
            if name in STUDY_OWNED:
                raise f.fail(f"tune.{name}", f"tune: {name} is set by the study: {STUDY_OWNED[name]}")
    given = f.mapping(value, "tune", allowed, "mtplug tune keys", old_names=TUNE_OLD_NAMES)
    values = {}
    for name, v in given.items():
        default, kind = TUNE_OPTIONS[name]
        values[name] = convert_value(v, kind, (f.path, f.line(f"tune.{name}"), f"tune: {name}"), default)
    missing = [k for k in REQUIRED if k != "workdir" and values.get(k) in (None, [], "")]
    if values.get("decoder") == "cdec" and values.get("weights") is None:
        missing.append("weights")      # cdec's start weights (Moses reads them from its config)
    if missing:
        raise f.fail("tune", f"tune: missing key(s) {', '.join(missing)}")
    for key in ("decoder_config", "input", "weights", "ref"):
        if values.get(key) is not None:
            values[key] = f.existing(f"tune.{key}", values[key])
    program = values["decoder_bin"]
    if os.path.exists(program):
        values["decoder_bin"] = os.path.abspath(program)
    else:
        from ..decoders.base import decoder_command

        argv = decoder_command(program)
        if not argv or shutil.which(argv[0]) is None:
            raise f.fail("tune.decoder_bin", f"tune: decoder_bin: cannot find the program "
                                             f"{argv[0] if argv else program!r}")
    out = {}
    for o in optimizers:
        args = argparse.Namespace(**values, workdir=os.path.join(study.workdir, "runs", o.name),
                                  optimizer=o.algorithm, test_input=study.test[0], test_ref=study.test[1],
                                  threads=study.threads, **{f"opt__{k}": v for k, v in o.given.items()})
        try:
            out[o.name] = dataclasses.replace(config_from_args(args), resume=True)
        except InputError as err:
            flag = re.match(r"--([a-z-]+) ", err.message)
            name = flag.group(1).replace("-", "_") if flag else ""
            if flag and name in values:
                raise f.fail(f"tune.{name}", f"tune: {name}" + err.message[flag.end() - 1:]) from None
            raise f.fail(f"optimizers.{o.name}", f"optimizers: {o.name}: {err.message}") from None
    return out


def _decoder_start(cfg) -> list:
    """The decoder's start weights [(name, value)] of a TuneConfig (its config / weights file)."""
    from ..decoders import get_decoder

    return list(get_decoder(cfg).start_weights().items())


def unknown_fixed(fixed: list, names) -> list:
    """The entries of ``fixed`` that name none of ``names`` (by name or Moses label)."""
    return [x for x in fixed if not any(is_fixed(n, {x}) for n in names)]


def _check_fixed(f: _File, fixed: list, weights: list) -> None:
    names = {n for n, _ in weights}
    unknown = unknown_fixed(fixed, names)
    if unknown:
        raise f.fail("replicas.fixed", f"replicas: fixed: {', '.join(unknown)} name(s) no start weight "
                                       f"(the start weights name {', '.join(sorted(names))})")


TEMPLATE = """\
# mtplug compare: an optimizer study (YAML). Run: mtplug compare study.yaml [--scheduler ADDRESS]
# Every optimizer below tunes the system several times (its replicas: seeds x start points); each
# result decodes (or reranks) the test set, and the report compares the optimizers' test scores.
# Paths are relative to the directory mtplug compare runs in (as in mtplug tune --yaml).

name: my-study                 # the study's title in the report and the plot (default: this file's name)
workdir: study                 # runs/OPTIMIZER/REPLICA/, report.txt/.json/.tex, replicas.tsv/.png
mode: decoder                  # decoder: mtplug tune with the decoder in the loop (tune: and test:)
                               # pool: mtplug optimize over fixed n-best lists, no decoder (pool:)

tune:                          # decoder mode: mtplug tune's keys (mtplug tune --write-config), except
                               # workdir, optimizer, optimizer_options, seed, test_input, test_ref,
                               # scheduler and threads, which the study sets
  decoder: moses               # moses or cdec
  decoder_bin: /path/to/moses  # the decoder program, or a command line ('python3 standin.py moses')
  decoder_config: moses.ini    # moses.ini (start weights from its [weight] section) or cdec.ini
  weights: null                # cdec: start weights file (required); Moses: optional sparse start weights
  input: dev.src               # the tuning set's source
  ref: [dev.ref.0]
  iterations: 10
  nbest_size: 100
  jobs: 2                      # decoder processes per replica (no effect on the results)
test:                          # decoder mode: the held-out test set the final weights of every replica
  input: test.src              # decode (1-best)
  ref: [test.ref.0]

# pool mode (mode: pool) instead of tune: and test: the optimizers run over fixed n-best lists
# pool:
#   nbest: [dev.best100.out.gz]        # the tuning set's n-best lists (read once into WORKDIR/pool.npz)
#   ref: [dev.ref.0]
#   weights: moses.ini                 # start weights, any format mtplug optimize --weights reads
#   sparse_weights: null               # Moses sparse start weights beside dense-only weights
#   test_nbest: [test.best100.out.gz]  # the test set's n-best lists, reranked with every replica's weights
#   test_ref: [test.ref.0]
#   metric: bleu                       # what the optimizers maximise (mtplug optimize --metric)
#   reflen: closest                    # BLEU reference length: closest, shortest or average
#   lowercase: false

optimizers:                    # a name of your choice -> the optimizer and its options
  mert:                        # (mtplug optimize ALGO --help); the first one is the baseline of the
    optimizer: mert            # report's p-values unless baseline: names another
    options: {restarts: 20}
  pro: {optimizer: pro}
  apro: {optimizer: apro}
  rampion: {optimizer: rampion}
baseline: mert

replicas:                      # every optimizer runs seeds x start_points times
  seeds: 3                     # seeds 1..N
  start_points: 1              # point 0: the start weights above; points 1..: random, the same for every
                               # optimizer (Gimpel & Smith's sensitivity to initialization)
  start_seed: 0                # point p: numpy default_rng(SeedSequence([start_seed, p])) draws every weight
                               # w uniformly in [0, 2w] ([2w, 0] if w < 0; [-s, s] if w = 0, s = mean |w|)
  start_distribution: uniform  # or normal: w drawn from N(w, (w/2)^2), a w of 0 kept (Gimpel & Smith 2012)
  fixed: [UnknownWordPenalty0] # weights that random points leave at their start value (Moses features
                               # that are not tuned; moses -show-weights calls them UNTUNEABLE)

evaluate:                      # the report on the test set (mtplug evaluate, MultEval's statistics)
  metric: [bleu, ter, length]  # a list, a column each (a comma joins the parts of one interpolation)
  boot_samples: 10000          # bootstrap resamples for s_sel
  ar_shuffles: 10000           # approximate randomization shuffles for the p-values
  seed: 0
threads: null                  # optimizer threads (null: all cores; no effect on the results)
"""
