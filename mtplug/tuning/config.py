"""Options of ``mtplug tune``: one table, read from flags and/or a YAML file.

Precedence: built-in defaults < the YAML file (``--yaml FILE``) < flags. YAML keys are
the flag names with ``_`` (``decoder_bin``) or ``-``; the optimizer's own options go
under an ``optimizer_options:`` mapping, or are given as flags (``--restarts 5``), which
override the mapping key by key. ``mtplug tune --write-config`` prints a commented
template that parses back.
"""

from __future__ import annotations

import argparse
import math
import os
import re
from dataclasses import dataclass, field
from typing import Any

from ..aliases import add_alias, closest, did_you_mean, flags_in, suggest_choice, warn_old_name
from ..errors import InputError
from ..fileio import read_text_lines
from ..formats.number_text import looks_numeric
from ..metric_help import metric_help, one_metric_error
from ..validation import check_count, check_seed, check_threads

DECODERS = ("moses", "cdec")

#: name -> (default, argparse kwargs); None as default marks a required option
TUNE_OPTIONS: dict[str, tuple] = {
    "decoder": (None, dict(choices=DECODERS, help="the decoder: moses or cdec")),
    "decoder_bin": (None, dict(metavar="PATH", help="the decoder program, or a command line split like a shell "
                                                    "('python3 standin.py moses')")),
    "decoder_args": ("", dict(metavar="ARGS", help="more arguments for every decoder call (e.g. '-threads 4')")),
    "decoder_config": (None, dict(metavar="INI", help="the decoder's configuration, moses.ini or cdec.ini (Moses: "
                                                      "its [weight] section holds the start weights)")),
    "weights": (None, dict(metavar="FILE", help="cdec: the start weights file; Moses: optional sparse start "
                                                "weights ('name value' lines)")),
    "input": (None, dict(metavar="SRC", help="the tuning set's source, one sentence per line")),
    "ref": (None, dict(nargs="+", metavar="REF", help="reference files (line i = sentence i)")),
    "test_input": (None, dict(metavar="SRC", help="a held-out test set's source: every iteration decodes it "
                                                  "(1-best, after the optimizer step) with the weights it "
                                                  "decoded the tuning set with and scores it with --metric; "
                                                  "written to DIR/iterNNN/test.out and DIR/final.test.out")),
    "test_ref": (None, dict(nargs="+", metavar="REF", help="the test set's reference files (with --test-input)")),
    "optimizer": ("mert", dict(metavar="ALGO", help="mert, pro, apro, mira, kbmira or rampion (default mert)")),
    "iterations": (10, dict(type=int, metavar="N", help="at most N decoder runs (default 10)")),
    "nbest_size": (100, dict(type=int, metavar="K", help="n-best size per sentence (default 100)")),
    "jobs": (1, dict(type=int, metavar="J", help="decoder processes at once, each on one shard of the input "
                                                 "(default 1; the result does not depend on it)")),
    "decoder_timeout": (86400.0, dict(type=float, metavar="SECONDS",
                                      help="stop a decoder process that runs longer than SECONDS on one shard "
                                           "(with its whole process group) and end the run with an error naming "
                                           "the shard (default 86400: 24 hours; the result does not depend on it)")),
    "workdir": (None, dict(metavar="DIR", help="working directory: one folder per iteration, the store, the "
                                               "state and DIR/final")),
    "seed": (0, dict(type=int, help="base seed; iteration i's optimizer seed is derived from (seed, i) (default 0)")),
    "min_change": (1e-5, dict(type=float, metavar="EPS",
                              help="stop when no weight moves by EPS or more (default 1e-5, as mert-moses.pl)")),
    "patience": (0, dict(type=int, metavar="P", help="stop when the decoded BLEU has not beaten its best for P "
                                                     "iterations (default 0: never)")),
    "interpolate": (1.0, dict(type=float, metavar="L", help="historic interpolation as mert-moses.pl's: the "
                                                          "next weights are L*new + (1-L)*previous (default 1)")),
    "pool_reset": (0, dict(type=int, metavar="R",
                           help="start the n-best store afresh every R iterations (default 0: never, every "
                                "iteration tunes on the n-best lists of all so far; 1: on its own only, as "
                                "Gimpel & Smith ran RAMPION; 10: Dreyer & Dong's APRO reset)")),
    "final_weights": ("best", dict(choices=("best", "last"), help="DIR/final: the weights of the iteration with "
                                                                  "the best decoded BLEU (default), or the last "
                                                                  "optimizer's")),
    "scheduler": (None, dict(metavar="ADDRESS",
                             help="dask scheduler (tcp://host:port, a scheduler file, or local:N): decoding "
                                  "shards (--jobs of them, default one per worker) and the MIRA shards, APRO "
                                  "and expected-BLEU passes run on its workers; needs pip install "
                                  "mtplug[distributed] and the same paths on every worker (no effect on the result)")),
    "threads": (None, dict(type=int, metavar="N", help="optimizer threads (default: all cores; no effect on "
                                                       "the result)")),
    "forests": (False, dict(action="store_true",
                            help="cdec: write each iteration's forests (-O) and tune over the forests of all "
                                 "iterations instead of the k-best lists, as dpmert.pl does (optimizer mert or "
                                 "kbmira; mert then searches from the current point only, at most 5 rounds, "
                                 "unless --restarts / --max-iterations say otherwise)")),
    "reflen": ("closest", dict(choices=("closest", "shortest", "average"), help="BLEU reference length")),
    "lowercase": (False, dict(action="store_true", help="compare case-insensitively")),
    "metric": ("bleu", dict(metavar="M",
                            help=metric_help("what to tune to, one metric (the best iteration is chosen by it)"))),
}
REQUIRED = ("decoder", "decoder_bin", "decoder_config", "input", "ref", "workdir")
#: old option names (flags, YAML keys, mtplug.tune keywords) -> the name they stand for now;
#: they work, with one warning each (mtplug.aliases)
OLD_NAMES = {"nbest": "nbest_size", "config": "decoder_config"}
#: the short flags of options, as in the other commands
SHORT_FLAGS = {"weights": "-w", "ref": "-r"}
#: MERT's options under --forests unless given (see config_from_args)
FOREST_MERT_DEFAULTS = {"restarts": 0, "max_iterations": 5}


@dataclass
class TuneConfig:
    """The checked options of one ``mtplug tune`` run: the keys of :data:`TUNE_OPTIONS`
    (flags and YAML keys, with their meaning in its help texts) plus ``optimizer_options``,
    the chosen optimizer's options by name, and ``resume``. Made by
    :func:`config_from_args`. ``config`` is the decoder's configuration (``--decoder-config``,
    ``decoder_config:``; also :attr:`decoder_config`), by the name runs record it with."""

    decoder: str
    decoder_bin: str
    config: str
    input: str
    ref: list
    workdir: str
    decoder_args: str = ""
    test_input: str | None = None
    test_ref: list | None = None
    weights: str | None = None
    optimizer: str = "mert"
    iterations: int = 10
    nbest_size: int = 100
    jobs: int = 1
    decoder_timeout: float = 86400.0
    seed: int = 0
    min_change: float = 1e-5
    patience: int = 0
    interpolate: float = 1.0
    pool_reset: int = 0
    final_weights: str = "best"
    threads: int | None = None
    forests: bool = False
    scheduler: str | None = None
    reflen: str = "closest"
    lowercase: bool = False
    metric: str = "bleu"
    optimizer_options: dict = field(default_factory=dict)
    resume: bool = False

    @property
    def decoder_config(self) -> str:
        """The decoder's configuration (moses.ini, cdec.ini): :attr:`config` by its option's name."""
        return self.config

    def fingerprint(self) -> dict:
        """What must not change between a run and its ``--resume`` (jobs, threads, the
        scheduler, the decoder timeout and the iteration limit may; a test set's scores are
        part of the history)."""
        return {"decoder": self.decoder, "config": os.path.abspath(self.config), "input": os.path.abspath(self.input),
                "ref": [os.path.abspath(r) for r in self.ref], "optimizer": self.optimizer,
                # strict JSON: an infinite value (PRO's --c-start inf) as the text the flag takes
                "optimizer_options": {k: (repr(v) if isinstance(v, float) and math.isinf(v) else v)
                                      for k, v in self.optimizer_options.items()},
                "nbest": self.nbest_size, "seed": self.seed,
                "min_change": self.min_change, "interpolate": self.interpolate, "reflen": self.reflen, "lowercase": self.lowercase,
                **({"metric": self.metric} if self.metric != "bleu" else {}),
                "weights": None if self.weights is None else os.path.abspath(self.weights),
                **({"forests": True} if self.forests else {}),
                **({"pool_reset": self.pool_reset} if self.pool_reset else {}),
                **({"test_input": os.path.abspath(self.test_input),
                    "test_ref": [os.path.abspath(r) for r in self.test_ref or ()]}
                   if self.test_input is not None else {})}


def _all_optimizer_options() -> dict[str, dict]:
    """Every optimizer option once (name -> argparse kwargs of the first optimizer having it)."""
    from ..optimizers.registry import OPTIMIZER_NAMES, get_optimizer

    out: dict[str, dict] = {}
    for name in OPTIMIZER_NAMES:
        for opt, kwargs in get_optimizer(name).options.items():
            out.setdefault(opt, kwargs)
    return out


def add_tune_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of ``mtplug tune``; all default to 'not given' so the YAML file can fill them."""
    p.add_argument("--yaml", metavar="FILE", help="read options from a YAML file (flags override it)")
    p.add_argument("--write-config", action="store_true", help="print a commented YAML template and exit")
    p.add_argument("--resume", action="store_true",
                   help="continue the run in --workdir from its last completed iteration")
    add_alias(p, "--continue", "--resume")
    g = p.add_argument_group("tuning")
    for name, (_default, kwargs) in TUNE_OPTIONS.items():
        flags = ["--" + name.replace("_", "-")] + ([SHORT_FLAGS[name]] if name in SHORT_FLAGS else [])
        g.add_argument(*flags, dest=name, default=argparse.SUPPRESS, **kwargs)
    for old, new in OLD_NAMES.items():
        add_alias(p, "--" + old.replace("_", "-"), "--" + new.replace("_", "-"))

    g = p.add_argument_group("optimizer options (those of the chosen --optimizer, as 'mtplug optimize ALGO "
                             "--help' shows them; in YAML under optimizer_options:)")
    for opt, kwargs in _all_optimizer_options().items():
        extra: dict[str, Any] = {"action": "store_true"} if kwargs.get("action") == "store_true" else \
            {"metavar": kwargs.get("metavar") or "V"}
        g.add_argument("--" + opt.replace("_", "-"), dest=f"opt__{opt}", default=argparse.SUPPRESS,
                       help=optimizer_option_help(opt).replace("%", "%%"), **extra)


def optimizer_option_help(opt: str) -> str:
    """The tune --help text of optimizer option ``opt``: its meaning and default for each
    optimizer that has it (the help of ``mtplug optimize ALGO``), those with the same text
    together: ``mira, kbmira: ...; rampion: ...``."""
    from ..optimizers.registry import OPTIMIZER_NAMES, get_optimizer

    texts: dict[str, list[str]] = {}
    for name in OPTIMIZER_NAMES:
        kwargs = get_optimizer(name).options.get(opt)
        if kwargs is not None:
            text = kwargs.get("help") or ""
            if kwargs.get("choices") and not all(str(c) in text for c in kwargs["choices"]):
                text += f" (one of {', '.join(map(str, kwargs['choices']))})"
            texts.setdefault(text, []).append(name)
    return "; ".join(f"{', '.join(owners)}: {text}" for text, owners in texts.items())


#: where a value came from, for messages: (file or None, 1-based line or None, label); the
#: label is the subject of the message: ``iterations`` (YAML), ``--iterations`` (flag)
Origin = tuple
_INT = re.compile(r"[+-]?[0-9]+")
_MERGE_TAG = "tag:yaml.org,2002:merge"
_KIND_NAMES: dict[object, str] = {int: "an integer", float: "a number"}


def read_yaml(path: str) -> dict:
    """The options of a tune YAML file: ``{name: value}`` with ``_`` in names, values as
    YAML typed them (:func:`config_from_args` checks them); ``optimizer_options`` a mapping.

    An unknown option, an option given twice, a file that is not one YAML mapping, or
    invalid UTF-8 raise InputError naming the file (and the line, where there is one).
    """
    return _read_yaml(path)[0]


def load_yaml(path: str) -> tuple[dict | None, dict[str, int]]:
    """(data, lines) of a YAML file: ``data`` as YAML typed it (None for an empty file),
    ``lines`` the 1-based line of every mapping key, by dotted path (``optimizer_options.restarts``).

    A key given twice in one mapping, a file that is not valid YAML, a character YAML does
    not allow, or invalid UTF-8 raise InputError naming the file (and the line).
    """
    import yaml

    text = "\n".join(read_text_lines(path))    # UTF-8 checked line by line; CRLF taken
    loader = None
    try:
        loader = yaml.SafeLoader(text)       # refuses control characters right away
        node = loader.get_single_node()
        lines = _key_lines(node, path)
        data = None if node is None else loader.construct_document(node)
    except InputError:
        raise
    except yaml.reader.ReaderError as exc:
        raise InputError(f"character U+{exc.character:04X} is not allowed in YAML", path,
                         text.count("\n", 0, exc.position) + 1) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError(f"not valid YAML ({getattr(exc, 'problem', None) or exc})", path,
                         None if mark is None else mark.line + 1) from None
    except ValueError as exc:  # a tagged or timestamp-like scalar that does not convert ('2001-02-30')
        raise InputError(f"not valid YAML ({exc})", path) from None
    finally:
        if loader is not None:
            loader.dispose()
    if data is not None and not isinstance(data, dict):
        raise InputError("expected a mapping of option: value", path,
                         None if node is None else node.start_mark.line + 1)
    return data, lines


def _read_yaml(path: str) -> tuple[dict, dict[str, int]]:
    """(options, lines): ``lines`` maps an option name, or ``optimizer_options.NAME``, to
    the line of its key."""
    data, lines = load_yaml(path)
    if data is None:
        return {}, lines
    out = {}
    for key, value in data.items():
        name = str(key).replace("-", "_")
        if name in OLD_NAMES:
            warn_old_name(f"{key}:", f"{OLD_NAMES[name]}:")
            if OLD_NAMES[name] in data or OLD_NAMES[name].replace("_", "-") in data:
                raise InputError(f"{key} and {OLD_NAMES[name]} are one option (its old and new name); give it "
                                 "once", path, lines.get(name))
            lines[OLD_NAMES[name]] = lines[name]
            name = OLD_NAMES[name]
        if name not in TUNE_OPTIONS and name != "optimizer_options":
            names = {**{n: n for n in [*TUNE_OPTIONS, "optimizer_options"]}, **OLD_NAMES}
            close = closest(name, names)
            hint = f" (did you mean {names[close]!r}?)" if close else ""
            raise InputError(f"unknown option {key!r}{hint}; known: {', '.join(sorted(TUNE_OPTIONS))}, "
                             "optimizer_options", path, lines.get(name))
        out[name] = value
    if not isinstance(out.get("optimizer_options", {}) or {}, dict):
        raise InputError("optimizer_options must be a mapping (name: value lines indented under it)", path,
                         lines.get("optimizer_options"))
    return out, lines


def _key_lines(node, path: str) -> dict[str, int]:
    """Lines of the keys of every mapping (``-`` in keys read as ``_``), by dotted path; a
    key given twice is an InputError (YAML loaders silently keep the last)."""
    import yaml

    lines: dict[str, int] = {}

    def scan(mapping, prefix: str) -> None:
        for key_node, value_node in mapping.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == _MERGE_TAG:
                continue
            key = key_node.value.replace("-", "_")
            line = key_node.start_mark.line + 1
            if prefix + key in lines:
                label = "".join(f"{part}: " for part in prefix.split(".")[:-1])
                raise InputError(f"{label}{key} is given twice (first on line {lines[prefix + key]}); "
                                 "expected each option once", path, line)
            lines[prefix + key] = line
            if isinstance(value_node, yaml.MappingNode):
                scan(value_node, prefix + key + ".")

    if isinstance(node, yaml.MappingNode):
        scan(node, "")
    return lines


def show_value(value) -> str:
    """A value in a message, spelled as in YAML for null and booleans."""
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    text = repr(value)
    return text if len(text) <= 60 else text[:56] + " ..."


def convert_value(value, kwargs: dict, where: Origin, default=None, infinite: bool = False):
    """``value`` (YAML-typed, or a flag's text) as the option of argparse ``kwargs`` wants
    it; InputError naming ``where`` otherwise. null is taken only by options whose
    ``default`` is None (not set). ``infinite``: a number may be ±inf (an optimizer's
    option, as ``mtplug optimize`` takes it; the optimizer checks where it applies)."""
    path, line, label = where

    def bad(expected: str) -> InputError:
        return InputError(f"{label} must be {expected}, got {show_value(value)}", path, line)

    if kwargs.get("action") == "store_true":
        if isinstance(value, bool):
            return value
        raise bad("true or false")
    if value is None:
        if default is None:
            return None
        raise bad(_KIND_NAMES.get(kwargs.get("type"), "a string"))
    if kwargs.get("nargs") == "+":
        items = value if isinstance(value, list) else [value]
        if not all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in items):
            raise bad("a file name or a list of file names")
        return [str(v) for v in items]
    typ = kwargs.get("type")
    if isinstance(value, (bool, list, dict)) or not isinstance(value, (str, int, float)):
        raise bad(_KIND_NAMES.get(typ, "a string"))
    if typ is int:
        if isinstance(value, float) or (isinstance(value, str) and not _INT.fullmatch(value.strip())):
            raise bad("an integer")
        try:
            value = int(value)
        except ValueError:   # thousands of digits
            raise bad("an integer") from None
    elif typ is float:
        if isinstance(value, str) and not looks_numeric(value.strip()):
            raise bad("a number")
        try:
            number = float(value)
        except OverflowError:   # a YAML integer beyond any double
            raise bad("a number that fits a double") from None
        if math.isnan(number) or (math.isinf(number) and not infinite):
            raise bad("a number" if infinite else "a finite number")
        value = number
    else:
        value = str(value)
    if "choices" in kwargs and value not in kwargs["choices"]:
        choices = [str(c) for c in kwargs["choices"]]
        raise InputError(f"{label} must be one of {', '.join(choices)}, got {show_value(value)}"
                         f"{did_you_mean(str(value), choices)}", path, line)
    return value


def config_from_args(args) -> TuneConfig:
    """Defaults, then the YAML file, then the flags; the optimizer's options checked
    against the chosen optimizer. Errors name where the value came from (the YAML file
    and line, or the flag)."""
    from ..optimizers.registry import OPTIMIZER_NAMES, get_optimizer

    given = vars(args)
    yaml_path = given.get("yaml")
    values = {name: default for name, (default, _) in TUNE_OPTIONS.items()}
    origins: dict[str, Origin] = {}
    opt_values: dict = {}
    opt_origins: dict[str, Origin] = {}
    if yaml_path:
        data, lines = _read_yaml(yaml_path)
        for key, value in (data.pop("optimizer_options", None) or {}).items():
            name = str(key).replace("-", "_")
            opt_values[name] = value
            opt_origins[name] = (yaml_path, lines.get("optimizer_options." + name), f"optimizer_options: {name}")
        for name, value in data.items():
            origins[name] = (yaml_path, lines.get(name), name)
            if name == "metric" and isinstance(value, list):   # the one-metric words of the flag
                raise InputError(one_metric_error(name, [str(v) for v in value]), yaml_path, lines.get(name))
            values[name] = convert_value(value, TUNE_OPTIONS[name][1], origins[name], TUNE_OPTIONS[name][0])
    for name in TUNE_OPTIONS:
        if name in given:
            values[name] = given[name]
            origins[name] = (None, None, "--" + name.replace("_", "-"))
    for key, value in given.items():
        if key.startswith("opt__"):
            opt_values[key[5:]] = value
            opt_origins[key[5:]] = (None, None, "--" + key[5:].replace("_", "-"))

    def origin(name: str) -> Origin:
        return origins.get(name, (None, None, "--" + name.replace("_", "-")))

    def fail(name: str, message: str) -> InputError:
        path, line, label = origin(name)
        return InputError(f"{label} {message}", path, line)

    missing = [n for n in REQUIRED if values.get(n) in (None, [], "")]
    if missing:
        raise InputError("missing option(s): " + ", ".join("--" + n.replace("_", "-") for n in missing)
                         + " (as flags or in --yaml)", yaml_path or None)
    for name, other in (("test_input", "test_ref"), ("test_ref", "test_input")):
        if values[name] is not None and values[other] is None:
            spelled = other if origins[name][0] else "--" + other.replace("_", "-")
            raise fail(name, f"needs {spelled} too (a test set is its source and its references)")
    if values["optimizer"] not in OPTIMIZER_NAMES or values["optimizer"] == "none":
        known = [n for n in OPTIMIZER_NAMES if n != "none"]
        raise fail("optimizer", f"must be one of {', '.join(known)}, got {values['optimizer']!r}"
                                f"{did_you_mean(str(values['optimizer']), known)}")
    cls = get_optimizer(values["optimizer"])
    options = {}
    for key, value in opt_values.items():
        name = str(key).replace("-", "_")
        where = opt_origins.get(key, (None, None, "--" + name.replace("_", "-")))
        if name not in cls.options:
            from_flag = where[2].startswith("--")
            names = {("--" + o.replace("_", "-")) if from_flag else o: o for o in cls.options}
            close = closest(where[2].rsplit(" ", 1)[-1], names)
            hint = f" (did you mean {close}?)" if close and close.lstrip("-").replace("-", "_") != name else ""
            listed = ", ".join(sorted(cls.options)) or "none"
            raise InputError(f"{where[2]} is not an option of {values['optimizer']}"
                             + (f"{hint}; its options: {listed}" if hint else f" (its options: {listed})"),
                             where[0], where[1])
        options[name] = convert_value(value, cls.options[name], where, cls.options[name].get("default"),
                                      infinite=True)
    for name in ("iterations", "nbest_size", "jobs"):   # the words of every command (mtplug.validation)
        path, line, label = origin(name)
        check_count(values[name], label, 1, path, line)
    if not 0.0 < values["decoder_timeout"] < math.inf:
        raise fail("decoder_timeout", f"must be a number of seconds > 0, got {show_value(values['decoder_timeout'])}")
    for name in ("patience", "pool_reset"):
        path, line, label = origin(name)
        check_count(values[name], label, 0, path, line)
    if not 0.0 < values["interpolate"] <= 1.0:
        raise fail("interpolate", f"must be in (0, 1], got {values['interpolate']}")
    if not 0.0 <= values["min_change"] < math.inf:
        raise fail("min_change", f"must be a finite number >= 0, got {values['min_change']}")
    from ..metrics.layer import parse_metric

    try:
        metric = parse_metric(str(values["metric"]))
    except ValueError as err:
        path, line, label = origin("metric")
        raise InputError(f"{label}: {suggest_choice(str(err))}", path, line) from None
    if any(p.name == "ext" for p in metric.parts):
        raise fail("metric", "ext: scores cannot follow the decoder's new hypotheses; use mtplug optimize on fixed "
                             "n-best lists")
    text_parts = sorted({p.name for p in metric.parts} & {"moses-chrf", "bleudoc"})
    if text_parts:
        raise fail("metric", f"{', '.join(text_parts)} read the references' text, which the store does not keep "
                             "from one iteration to the next; tune to chrf (sacrebleu's chrF) or bleu, or run "
                             "Moses's CHRF and BLEUDOC through the Moses programs (mtplug mertdir)")
    values["metric"] = metric.name
    if values["forests"] and not metric.is_bleu:
        raise fail("forests", f"carry BLEU statistics only, not {metric.name}")
    if values["forests"] and values["pool_reset"]:
        raise fail("pool_reset", "cannot take effect with --forests (forest tuning pools the forests of every "
                                 "iteration, as dpmert.pl)")
    if values["forests"]:
        from ..optimizers.registry import FOREST_OPTIMIZERS

        if values["decoder"] != "cdec":
            raise fail("forests", "needs --decoder cdec (its -O forests)")
        if values["optimizer"] not in FOREST_OPTIMIZERS:
            raise fail("forests", f"needs an optimizer that runs over forests ({', '.join(FOREST_OPTIMIZERS)}), "
                                  f"not {values['optimizer']}")
        if values["scheduler"]:
            raise fail("forests", "with --scheduler is not provided (the forests are read in this process)")
    path, line, label = origin("seed")
    check_seed(values["seed"], label, path, line)
    path, line, label = origin("threads")
    check_threads(values["threads"], label, path, line)
    if os.path.exists(values["workdir"]) and not os.path.isdir(values["workdir"]):
        raise fail("workdir", f"must be a directory (it is created if missing), but {values['workdir']} is a file")
    if values["forests"] and values["optimizer"] == "mert":
        # a forest line search costs seconds (every edge of every pooled forest), so forest
        # MERT searches as dpmert.pl does: from the current point only, at most 5 rounds
        for name, value in FOREST_MERT_DEFAULTS.items():
            options.setdefault(name, value)
    values["config"] = values.pop("decoder_config")    # TuneConfig's (and the runs' records') name
    cfg = TuneConfig(**values, optimizer_options=options, resume=bool(given.get("resume")))
    try:
        cls(**options)
    except (TypeError, ValueError) as err:
        # the file is at fault only when every optimizer option came from it; the options are
        # named as they were given (--reg-strength as a flag, reg_strength in the file)
        files = {where[0] for where in opt_origins.values()}
        in_file = yaml_path is not None and files == {yaml_path}
        labels = {name: "--" + name.replace("_", "-") for name in cls.options
                  if (opt_origins[name][0] is None if name in opt_origins else not in_file)}
        choices = {name: tuple(kw.get("choices") or ()) for name, kw in cls.options.items()}
        raise InputError(f"{cfg.optimizer}: {flags_in(str(err), labels, choices)}",
                         yaml_path if in_file else None) from None
    return cfg


TEMPLATE = """\
# mtplug tune configuration (YAML). Flags given on the command line override these values.
# Run: mtplug tune --yaml tune.yaml [--resume]

decoder: moses                 # moses or cdec
decoder_bin: /path/to/moses    # the decoder program, or a command line ('python3 standin.py moses')
decoder_args: ""               # more arguments for every decoder call, e.g. "-threads 4"
decoder_config: moses.ini      # moses.ini (start weights from its [weight] section) or cdec.ini
weights: null                  # cdec: start weights file (required); Moses: optional sparse start weights
input: dev.src                 # tuning set source, one sentence per line
ref: [dev.ref.0]               # one or more reference files
test_input: null               # optional held-out test set: every iteration decodes it (1-best) with the
                               # weights of its tuning BLEU; iterNNN/test.out, final.test.out
test_ref: null                 # the test set's reference files, e.g. [test.ref.0] (with test_input)
workdir: tuning                # one folder per iteration, the n-best store, state.json, final weights

optimizer: mert                # mert, pro, apro, mira, kbmira or rampion
optimizer_options:             # the optimizer's own options (see: mtplug optimize ALGO --help)
  restarts: 20
iterations: 10                 # decoder runs at most
nbest_size: 100                # n-best size per sentence
jobs: 1                        # decoder processes at once (input split into this many shards)
decoder_timeout: 86400         # seconds one decoder process (one shard) may run before the run stops with an error
seed: 0                        # base seed; iteration i uses a seed derived from (seed, i)
min_change: 1.0e-5             # converged when no weight moves this much
patience: 0                    # stop after this many iterations without a better decoded BLEU (0: never)
interpolate: 1.0               # next weights = interpolate*new + (1-interpolate)*previous (mert-moses.pl's
                               # --historic-interpolation); below 1 damps PRO/MIRA oscillation
pool_reset: 0                  # start the n-best store afresh every R iterations (0: never; 1: each iteration
                               # tunes on its own n-best only)
final_weights: best            # final: weights of the best decoded BLEU (best) or of the last iteration (last)
threads: null                  # optimizer threads (null: all cores)
forests: false                 # cdec: tune over the forests of all iterations (mert, kbmira), as dpmert.pl
scheduler: null                # dask scheduler address (tcp://host:8786, scheduler file, local:N): decode
                               # shards and optimizer partitions on its workers (shared file system)
reflen: closest                # BLEU reference length: closest, shortest or average
lowercase: false               # case-insensitive BLEU
metric: bleu                   # what to tune to, one metric: bleu, chrf, ter, ...; a comma joins the parts
                               # of an interpolation: bleu:0.6,ter:0.4 (mtplug tune --help)
"""
