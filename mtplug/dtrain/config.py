"""dtrain.ini: every key of cdec's dtrain (2014 version) with its default, read and validated.

File syntax (boost::program_options config files, as dtrain reads them)::

    # comment                      '#' starts a comment anywhere on a line
    k=100                          key=value; spaces around both are stripped
    print_weights=Glue WordPenalty a value may contain spaces
    keep                           a flag alone (or keep=true|1|yes|on, keep=false|0|no|off)

An unknown key, a key given twice, or a value of the wrong type is an
:class:`~mtplug.errors.InputError` naming the file and line. Command-line flags
(``--key VALUE``) override the file. Relative paths are taken from the current
directory, as dtrain does.

The keys, their order and defaults are those of cdec ``training/dtrain/dtrain.cc``
(2014, pks/cdec-dtrain) as listed in ``shared/docs/cdec.md``; the few mtplug keys are
marked ``mtplug:`` in their help: ``update`` and ``mira_*`` (Eidelman 2012's online MIRA
as the update rule instead of dtrain's pairs; the keys of the other rule are then errors
when set to a value other than their default), and ``shards`` ... ``seed``, which stand for
the options of cdec's ``parallelize.rb``. :class:`DtrainConfig` is the one list: the CLI flags (and so
the generated documentation page of ``mtplug dtrain``) and the parser all read it.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, NoReturn

from ..aliases import did_you_mean
from ..errors import InputError
from ..formats.number_text import looks_numeric
from ..validation import check_count, check_seed
from .pairs import PAIR_SAMPLINGS, XYX_METHODS

UINT_MAX = 4294967295  # dtrain's max_pairs default (std::numeric_limits<unsigned>::max())
LOSS_MARGIN_INFINITE = 9998.0  # dtrain: loss_margin > 9998 means "always update"

#: argparse groups, in order
GROUPS = ("data and weights", "sampling and pairs", "scorer", "update rule", "regularisation",
          "output", "parallel training (mtplug; parallelize.rb)", "decoder process (mtplug)")

#: dtrain's per-sentence scorers (score.cc) and mtplug's sentence-BLEU names for some of them
SCORERS = ("stupid_bleu", "bleu", "fixed_stupid_bleu", "smooth_bleu", "sum_bleu", "sumexp_bleu",
           "sumwhatever_bleu", "approx_bleu", "lc_bleu")
SCORER_ALIASES = {"stupid": "stupid_bleu", "fixed-stupid": "fixed_stupid_bleu"}
#: mtplug.metrics.bleu variants usable as scorer (N=4 only)
MTPLUG_SCORERS = ("bleu+1", "moses-sentence-bleu", "nakov")
#: mtplug's scorers with a context of their own (mtplug.dtrain.scorers)
CONTEXT_SCORERS = ("pseudo_doc",)

LPLP_NORMS = ("l0", "l1", "l2", "linfty", "mean", "median")

#: mtplug's update rules: dtrain's pairwise ranking, Eidelman (2012)'s online MIRA
UPDATES = ("pairs", "mira")
#: update=mira's hope and fear strategies, as mtplug optimize mira --hope/--fear (mtplug.optimizers.mira)
MIRA_HOPES = ("hope", "lu")
MIRA_FEARS = ("fear", "mc", "pb")
#: how the decoder runs: one process per shard and run, or one per decoder call
DECODER_PROCESSES = ("persistent", "per_call")
#: the keys of the pairwise update only: update=mira refuses them at a value other than the default
PAIRWISE_KEYS = ("pair_sampling", "hi_lo", "pair_threshold", "learning_rate", "gamma", "loss_margin",
                 "scale_bleu_diff", "max_pairs", "pclr", "batch", "repeat", "check")
#: the keys of update=mira only: update=pairs refuses them at a value other than the default
MIRA_KEYS = ("mira_hope", "mira_fear", "mira_c", "mira_average")


def _key(default, help: str, group: int, kind: str, choices: tuple | None = None):
    return field(default=default, metadata={"help": help, "group": GROUPS[group], "kind": kind,
                                            "choices": choices})


@dataclass(frozen=True)
class DtrainConfig:
    """All dtrain settings (defaults as cdec's dtrain). Build with :func:`load_config`."""

    # ---- data and weights
    input: str | None = _key(None, "source sentences, one per line ('-': stdin); needs refs", 0, "str")
    refs: str | None = _key(None, "references, line i = sentence i (one reference per sentence)", 0, "str")
    bitext: str | None = _key(None, "instead of input+refs: 'source ||| reference' lines", 0, "str")
    output: str = _key("-", "weights file ('-': stdout; '.gz' compresses)", 0, "str")
    input_weights: str | None = _key(None, "start weights (cdec weights file); default all 0", 0, "str")
    decoder_config: str | None = _key(None, "cdec.ini for the decoder (required)", 0, "str")
    print_weights: str = _key("", "space-separated feature names whose weights are logged per epoch", 0, "str")
    stop_after: int = _key(0, "use only the first N input sentences (0: all)", 0, "int")
    keep: bool = _key(False, "also write weights.<epoch>.gz after every epoch", 0, "bool")
    epochs: int = _key(10, "passes over the input (T)", 0, "int")
    # ---- sampling and pairs
    k: int = _key(100, "size of the k-best list asked from the decoder", 1, "int")
    sample_from: str = _key("kbest", "where hypotheses come from (only kbest: see docs/dtrain.md)", 1, "str",
                            ("kbest", "forest"))
    filter: str = _key("uniq", "uniq: unique strings (decoder -r); not: all derivations", 1, "str",
                       ("uniq", "not"))
    pair_sampling: str = _key("XYX", "XYX: top vs rest, the pairs cdec's dtrain samples; XYX-full: also middle "
                                     "vs bottom (mtplug); all: all pairs; PRO", 1, "str", PAIR_SAMPLINGS)
    hi_lo: float = _key(0.1, "XYX, XYX-full: fraction of the k-best that is top and that is bottom, "
                             "in [0.01, 0.5]", 1, "float")
    pair_threshold: float = _key(0.0, "skip pairs whose scores differ by less (0: skip only ties)", 1, "float")
    N: int = _key(4, "n-gram order of the scorer (1..4 in mtplug)", 1, "int")
    # ---- scorer
    scorer: str = _key("stupid_bleu", "per-sentence metric", 2, "str",
                       SCORERS + tuple(SCORER_ALIASES) + MTPLUG_SCORERS + CONTEXT_SCORERS)
    approx_bleu_d: float = _key(0.9, "approx_bleu: discount of the 1-best context", 2, "float")
    # ---- update rule
    learning_rate: float = _key(1.0, "eta", 3, "float")
    gamma: float = _key(0.0, "SVM l2 strength: w -= 2*gamma*eta/npairs * w after each update (0: perceptron)",
                        3, "float")
    loss_margin: float = _key(0.0, "update correctly ranked pairs closer than this in model score (>9998: always)",
                              3, "float")
    scale_bleu_diff: bool = _key(False, "learning rate of a pair = its score difference", 3, "bool")
    max_pairs: int = _key(UINT_MAX, "at most this many candidate pairs per sentence", 3, "int")
    pclr: str = _key("no", "per-coordinate learning rate", 3, "str", ("no", "simple", "adagrad"))
    batch: bool = _key(False, "one update per epoch from all sentences (decoded with the epoch's weights)",
                       3, "bool")
    repeat: int = _key(1, "repeat the update over each k-best list this many times", 3, "int")
    rescale: bool = _key(False, "scale the weights to unit l2 norm after each sentence", 3, "bool")
    update: str = _key("pairs", "mtplug: the update rule: pairs (dtrain's pairwise ranking) or mira (Eidelman "
                                "2012's online MIRA: one PA-I step per sentence from a fear toward a hope "
                                "hypothesis; docs/dtrain.md)", 3, "str", UPDATES)
    mira_hope: str = _key("hope", "mtplug: update=mira: the hope (oracle): hope = max model score + sentence "
                                  "score (M-C), lu = max sentence score", 3, "str", MIRA_HOPES)
    mira_fear: str = _key("fear", "mtplug: update=mira: the fear (prediction): fear = max model score - sentence "
                                  "score (M+C), mc = min sentence score, pb = the model 1-best", 3, "str",
                          MIRA_FEARS)
    mira_c: float = _key(0.01, "mtplug: update=mira: the PA-I step cap C (as mtplug optimize mira --c)", 3, "float")
    mira_average: bool = _key(True, "mtplug: update=mira: an epoch's weights are the average of the weights after "
                                    "every sentence so far (Eidelman 2012; mtplug optimize mira's default); "
                                    "decoding goes on with the current ones. false: the current weights", 3,
                              "bool")
    # ---- regularisation
    l1_reg: str = _key("none", "l1 regularisation (Tsuruoka et al. 2009)", 4, "str",
                       ("none", "naive", "clip", "cumul"))
    l1_reg_strength: float | None = _key(None, "l1 strength per sentence (required with l1_reg)", 4, "float")
    # ---- output
    select_weights: str = _key("last", "which weights to write: last epoch, average over epochs, best epoch "
                                       "(by 1-best average score), or VOID (none)", 5, "str",
                               ("last", "avg", "best", "VOID"))
    check: bool = _key(False, "log per-pair loss differentials (implies repeat=2)", 5, "bool")
    noup: bool = _key(False, "decode and score one epoch without updating or writing weights", 5, "bool")
    fselect: float = _key(-1.0, "accepted for compatibility; not implemented (as in dtrain)", 5, "float")
    # ---- mtplug: parallelize.rb
    shards: int = _key(1, "mtplug: split the input into this many shards trained in parallel, mixed after "
                          "every epoch (parallelize.rb -s)", 6, "int")
    randomize: bool = _key(False, "mtplug: shuffle the input (with seed) before sharding (parallelize.rb -z); "
                                  "with one shard, its visiting order",
                           6, "bool")
    reshard: bool = _key(False, "mtplug: reshuffle the shards (one shard: its order) after every epoch "
                                "(parallelize.rb -y); needs randomize", 6, "bool")
    lplp_args: str = _key("l2 select_k 100000", "mtplug: mixing after each epoch, as lplp.rb: 'NORM select_k K' "
                                                "or 'NORM cut THRESHOLD', NORM in l0 l1 l2 linfty mean median",
                          6, "str")
    minibatch: int = _key(1, "mtplug: sentences decoded per decoder call (the updates stay per sentence; "
                             "1 is dtrain)", 6, "int")
    seed: int = _key(0, "mtplug: seed of randomize/reshard; written to the output", 6, "int")
    # ---- mtplug: how the decoder runs
    decoder_process: str = _key("persistent", "mtplug: persistent: one cdec process per shard for the whole run, "
                                              "fed a sentence at a time with the weight changes as cdec's "
                                              "--mr_mira_compat input markup (docs/dtrain.md); per_call: a new "
                                              "process for every decoder call, the weights in a file (loads "
                                              "the grammar and language model every time)", 7, "str",
                                DECODER_PROCESSES)
    decoder_timeout: float = _key(86400.0, "mtplug: seconds the decoder may take to answer one sentence "
                                           "(persistent: the first answer includes its start-up; per_call: "
                                           "one call) before it is killed and the run ends", 7, "float")

    # ------------------------------------------------------------------ derived values
    @property
    def scorer_name(self) -> str:
        """The scorer with mtplug aliases resolved (``stupid`` -> ``stupid_bleu``)."""
        return SCORER_ALIASES.get(self.scorer, self.scorer)

    @property
    def margin(self) -> float:
        """loss_margin with dtrain's rule applied: above 9998 it is infinite."""
        return math.inf if self.loss_margin > LOSS_MARGIN_INFINITE else self.loss_margin

    @property
    def faster_perceptron(self) -> bool:
        """dtrain's 'faster perceptron': gamma = 0 and loss_margin = 0, only misranked pairs are sampled."""
        return self.gamma == 0 and self.loss_margin == 0

    @property
    def effective_repeat(self) -> int:
        """Updates per k-best list: ``repeat``, or 2 with ``check`` (its per-pair loss
        differentials compare the loss before and after the second update)."""
        return 2 if self.check else self.repeat

    @property
    def print_weight_names(self) -> list[str]:
        """The feature names of ``print_weights`` (space-separated) whose weights are logged per epoch."""
        return [n for n in self.print_weights.split(" ") if n]

    @property
    def mixer(self) -> tuple[str, str, float]:
        """(norm, 'select_k' | 'cut', k or threshold) from lplp_args (validated)."""
        norm, how, x = self.lplp_args.split()
        return norm, how, float(x)


KEYS = {f.name: f for f in fields(DtrainConfig)}
#: keys that dtrain itself has (those whose help does not start with "mtplug:")
DTRAIN_KEYS = tuple(name for name, f in KEYS.items() if not f.metadata["help"].startswith("mtplug:"))

_UINT = re.compile(r"[0-9]+")
_TRUE = {"", "1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def convert(key: str, text, where: tuple[str | None, int | None, str]):
    """``text`` (str, or bool for a flag given alone) as the type of ``key``; InputError otherwise.

    ``where`` is (path, line, label) for messages: label is ``key`` or ``--key``.
    """
    path, line, label = where
    kind = KEYS[key].metadata["kind"]
    if kind == "bool":
        if isinstance(text, bool):
            return text
        t = text.strip().lower()
        if t in _TRUE:
            return True
        if t in _FALSE:
            return False
        raise InputError(f"{label}: expected a flag (true/false), got {text!r}", path, line)
    if isinstance(text, bool):
        raise InputError(f"{label}: needs a value ({label}=VALUE)", path, line)
    text = text.strip()
    if kind == "str":
        choices = KEYS[key].metadata["choices"]
        if choices and text not in choices:
            raise InputError(f"{label}: {text!r} is not one of {', '.join(choices)}{did_you_mean(text, choices)}",
                             path, line)
        return text
    if key == "seed":   # mtplug's key: a seed as every command takes it
        return check_seed(text, label, path, line)
    if kind == "int":
        # ASCII digits only: str.isdigit() also takes '１０' and '²', which int() reads or refuses
        if not _UINT.fullmatch(text):
            raise InputError(f"{label}: expected a non-negative integer, got {text!r}", path, line)
        digits = text.lstrip("0") or "0"
        # length first: int() refuses strings of thousands of digits with a plain ValueError
        if len(digits) > len(str(UINT_MAX)) or int(digits) > UINT_MAX:
            shown = digits if len(digits) <= 24 else digits[:20] + "..."
            raise InputError(f"{label}: {shown} is too large; expected an integer from 0 to {UINT_MAX} "
                             "(dtrain's unsigned)", path, line)
        return int(digits)
    if not looks_numeric(text):   # float() alone would also take '1_0' and non-ASCII digits
        raise InputError(f"{label}: expected a number, got {text!r}", path, line)
    value = float(text)
    if not math.isfinite(value):
        raise InputError(f"{label}: expected a finite number, got {text!r}", path, line)
    return value


def _did_you_mean(key: str) -> str:
    return did_you_mean(key.replace("-", "_"), KEYS, quote=True)


def read_ini(path) -> dict[str, tuple[object, tuple]]:
    """The settings of a dtrain.ini: ``{key: (value, (path, line, key))}`` in file order."""
    from ..fileio import read_text_lines

    path = os.fspath(path)
    try:
        lines = read_text_lines(path)
    except OSError as err:
        raise InputError(f"cannot read the dtrain configuration: {err.strerror}", path) from None
    out: dict[str, tuple[object, tuple]] = {}
    for no, raw in enumerate(lines, 1):
        text = raw.split("#", 1)[0].strip()
        if not text:
            continue
        if text.startswith("["):
            raise InputError(f"sections are not dtrain keys: {text!r}", path, no)
        key, eq, value = text.partition("=")
        key = key.strip()
        if not key:
            raise InputError(f"no key before '='; expected key=value, got {text!r}", path, no)
        if key not in KEYS:
            raise InputError(f"unknown dtrain key {key!r}{_did_you_mean(key)}", path, no)
        if key in out:
            raise InputError(f"{key} is given twice (first on line {out[key][1][1]}); expected each key once",
                             path, no)
        where = (path, no, key)
        out[key] = (convert(key, value if eq else True, where), where)
    return out


#: dtrain keys whose flag says what other commands call the same idea (docs/usage.md, "One
#: name per idea"): start weights are --weights, an n-best size --nbest-size, references
#: --ref, the metric of one hypothesis (dtrain's per-sentence scorer) --sentence-metric
_FLAG_NAMES = {"input_weights": "weights", "k": "nbest-size", "refs": "ref", "scorer": "sentence-metric"}


def flag_of(key: str) -> str:
    """The ``mtplug dtrain`` flag of dtrain key ``key``: ``--learning-rate`` for
    ``learning_rate``, ``--weights`` for ``input_weights``, ``--nbest-size`` for ``k``,
    ``--ref`` for ``refs``, ``--sentence-metric`` for ``scorer``."""
    return "--" + _FLAG_NAMES.get(key, key.replace("_", "-"))


def old_flags_of(key: str) -> list[str]:
    """The earlier flags of ``key`` (dtrain's own spelling ``--learning_rate``, and
    ``--input-weights``), kept as aliases."""
    spellings = ["--" + key, "--" + key.replace("_", "-")]
    return [f for f in dict.fromkeys(spellings) if f != flag_of(key)]


def load_config(path=None, overrides: Mapping[str, object] | None = None) -> DtrainConfig:
    """DtrainConfig from a dtrain.ini (optional) with command-line ``overrides`` on top.

    ``overrides``: ``{key: text or bool}`` (e.g. ``{"epochs": "2"}``); None values are
    ignored. The result is validated (:func:`validate`).
    """
    settings: dict[str, Any] = {}
    origins: dict[str, tuple] = {}
    if path is not None:
        for key, (value, where) in read_ini(path).items():
            settings[key], origins[key] = value, where
    for key, text in (overrides or {}).items():
        if text is None:
            continue
        if key not in KEYS:
            raise InputError(f"unknown dtrain key {key!r}{_did_you_mean(key)}")
        where = (None, None, flag_of(key))
        settings[key], origins[key] = convert(key, text, where), where
    cfg = DtrainConfig(**settings)
    validate(cfg, origins, None if path is None else str(path))
    return cfg


def validate(cfg: DtrainConfig, origins: Mapping[str, tuple] | None = None, ini: str | None = None) -> None:
    """Raise InputError (naming where the value came from; a key set nowhere names the
    dtrain.ini ``ini``, or its flag when there is none) if the settings cannot run."""
    origins = origins or {}

    def fail(key: str, message: str) -> NoReturn:
        path, line, label = origins.get(key, (ini, None, key if ini else flag_of(key)))
        raise InputError(f"{label}: {message}", path, line)

    def name(key: str) -> str:
        """How a message names another key: as it was given (flag or key), else as the
        dtrain.ini would have it, or by its flag without one."""
        if key in origins:
            return origins[key][2]
        return key if ini else flag_of(key)

    if not cfg.decoder_config:
        path = ini if "decoder_config" not in origins else origins["decoder_config"][0]
        raise InputError(f"{name('decoder_config')} is required (the cdec.ini of the decoder"
                         + ("; or give --decoder-config)" if ini else ")"), path)
    def quoted(key: str) -> str:
        return name(key) if name(key).startswith("-") else f"'{name(key)}'"

    if cfg.bitext and (cfg.input or cfg.refs):
        fail("bitext", f"give {quoted('input')} and {quoted('refs')} or {quoted('bitext')}, not both")
    if not cfg.bitext and not (cfg.input and cfg.refs):
        fail("input" if not cfg.input else "refs",
             f"give {quoted('input')} and {quoted('refs')}, or {quoted('bitext')}")
    # an option that cannot take effect is an error: the pairwise keys with update=mira and back
    inapplicable = PAIRWISE_KEYS if cfg.update == "mira" else MIRA_KEYS
    for key in inapplicable:
        if getattr(cfg, key) != KEYS[key].default:
            fail(key, f"has no effect with update={cfg.update}; it belongs to "
                      f"{'the pairwise update (update=pairs)' if cfg.update == 'mira' else 'update=mira'}")
    if cfg.reshard and not cfg.randomize:
        fail("reshard", "has no effect without randomize (it reshuffles what randomize shuffled)")
    if not (0 < cfg.mira_c < math.inf):
        fail("mira_c", f"must be a finite number > 0, got {cfg.mira_c}")
    if cfg.sample_from == "forest":
        fail("sample_from", "'forest' needs the decoder's hypergraph, which dtrain gets by linking cdec as a "
                            "library; mtplug drives the cdec program and reads k-best lists: use 'kbest'")
    if not 0.01 <= cfg.hi_lo <= 0.5:
        fail("hi_lo", f"must lie in [0.01, 0.5], got {cfg.hi_lo}")
    if "max_pairs" in origins and cfg.pair_sampling == "PRO":
        fail("max_pairs", "has no effect with pair_sampling=PRO (it keeps the 50 best of at most 5000 "
                          "candidates, as dtrain)")
    if "hi_lo" in origins and cfg.pair_sampling not in XYX_METHODS:
        # dtrain only warns; a setting that cannot take effect is an error here
        fail("hi_lo", f"has no effect with pair_sampling={cfg.pair_sampling}; it applies to "
                      f"{' and '.join(XYX_METHODS)}")
    if cfg.pair_threshold < 0:
        fail("pair_threshold", "must be >= 0")
    if not 1 <= cfg.N <= 4:
        fail("N", f"mtplug's n-gram statistics go up to 4-grams; N must be 1..4, got {cfg.N}")
    if cfg.scorer in MTPLUG_SCORERS and cfg.N != 4:
        fail("scorer", f"{cfg.scorer} is a 4-gram metric; it needs N=4")
    for key in ("k", "epochs", "repeat", "shards", "minibatch", "max_pairs"):
        path, line, label = origins.get(key, (ini, None, key))
        check_count(getattr(cfg, key), label, 1, path, line)   # the words of every command
    if cfg.learning_rate <= 0 and not cfg.scale_bleu_diff:
        fail("learning_rate", "must be > 0")
    if cfg.gamma < 0:
        fail("gamma", "must be >= 0")
    if cfg.loss_margin < 0:
        fail("loss_margin", "must be >= 0")
    if not (0 < cfg.decoder_timeout < math.inf):
        fail("decoder_timeout", f"must be a finite number of seconds > 0, got {cfg.decoder_timeout}")
    if cfg.approx_bleu_d <= 0:
        fail("approx_bleu_d", "must be > 0")
    if cfg.l1_reg != "none":
        if cfg.l1_reg_strength is None:
            fail("l1_reg", f"{cfg.l1_reg} needs {name('l1_reg_strength')}")
        if cfg.l1_reg_strength < 0:
            fail("l1_reg_strength", "must be >= 0")
    parts = cfg.lplp_args.split()
    if len(parts) != 3 or parts[0] not in LPLP_NORMS or parts[1] not in ("select_k", "cut"):
        fail("lplp_args", f"expected 'NORM select_k K' or 'NORM cut THRESHOLD' with NORM in "
                          f"{', '.join(LPLP_NORMS)}, got {cfg.lplp_args!r}")
    try:
        x = float(parts[2])
    except ValueError:
        x = math.nan
    if not math.isfinite(x) or (parts[1] == "select_k" and (x < 1 or x != int(x))):
        fail("lplp_args", f"{parts[1]} needs a {'positive integer' if parts[1] == 'select_k' else 'number'}, "
                          f"got {parts[2]!r}")


def with_overrides(cfg: DtrainConfig, **changes) -> DtrainConfig:
    """A validated copy of ``cfg`` with some keys changed (for programmatic use and tests)."""
    new = replace(cfg, **changes)
    validate(new)
    return new
