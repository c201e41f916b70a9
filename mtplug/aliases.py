"""Old spellings of options and keys (issue 37, "one name per idea").

Every idea has one name in every command (docs/usage.md, "One name per idea"); the names
used before keep working as hidden aliases, each with one warning line per run naming
the new spelling, so that no script breaks. The table of a parser is filled by
:func:`add_alias` and applied by ``mtplug.cli``'s parser before parsing; YAML keys and
Python keywords call :func:`warn_old_name` themselves.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from collections.abc import Iterable, Mapping, Sequence

#: the old names already warned of in this run (see :func:`reset`)
_warned: set[str] = set()


def reset() -> None:
    """Start a new run: every old name is warned of again (``mtplug.cli.main`` calls it)."""
    _warned.clear()


def warn_old_name(old: str, new: str) -> None:
    """One line on stderr, the first time in this run ``old`` is used: ``mtplug: warning:
    OLD is the old name of NEW (it still works; use NEW)``."""
    if old in _warned:
        return
    _warned.add(old)
    print(f"mtplug: warning: {old} is the old name of {new} (it still works; use {new})", file=sys.stderr,
          flush=True)


def add_alias(parser: argparse.ArgumentParser, old: str, new: str) -> None:
    """``old`` (an option string, ``--init`` or ``-k``) as a hidden spelling of the option
    ``new`` of ``parser``: not in ``--help``, and warned of once when used."""
    if new not in parser._option_string_actions:
        raise ValueError(f"{parser.prog}: {old} would be an alias of {new}, which it does not have")
    if old in parser._option_string_actions:
        raise ValueError(f"{parser.prog}: {old} is an option of its own")
    table = parser.__dict__.setdefault("old_names", {})
    table[old] = new


def old_names(parser: argparse.ArgumentParser) -> dict[str, str]:
    """The aliases of ``parser``: old option string -> the option it stands for."""
    return parser.__dict__.get("old_names", {})


def respell(parser: argparse.ArgumentParser, args: Sequence[str]) -> list[str]:
    """``args`` with every old option string of ``parser`` replaced by its new one
    (``--init F``, ``--init=F``, ``-k10``), each warned of once; nothing after ``--``."""
    table = old_names(parser)
    if not table:
        return list(args)
    out: list[str] = []
    for i, token in enumerate(args):
        if token == "--":
            out += args[i:]
            break
        old, rest = token, None
        if token not in table:
            if token.startswith("--") and "=" in token:
                old, value = token.split("=", 1)
                rest = "=" + value
            elif not token.startswith("--") and len(token) > 2 and " " not in token:
                old, rest = token[:2], token[2:]    # a glued short option: -k10
        if old not in table:
            out.append(token)
            continue
        warn_old_name(old, table[old])
        if rest is None:
            out.append(table[old])
        elif rest.startswith("="):
            out.append(table[old] + rest)
        else:
            out += [table[old], rest]
    return out


# ---------------------------------------------------------------------------- did you mean
def _edit_distance(a: str, b: str) -> int:
    """Levenshtein distance with adjacent transpositions (``tre`` -> ``ter`` is 1)."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            d = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                d = min(d, prev2[j - 2] + 1)
            cur.append(d)
        prev2, prev = prev, cur
    return prev[-1]


def closest(word: str, names: Iterable[str]) -> str | None:
    """The name of ``names`` that ``word`` most likely misspells, or None when none is close.

    A name that ``word`` begins (``--rest`` -> ``--restarts``, ``powel`` -> ``powell``) wins
    over every other; among several, the closest. Otherwise a name close by difflib's ratio
    (at least 0.75) or one typing slip away (a letter added, dropped, changed or two
    swapped; words of three letters or more): ``mertt`` -> ``mert``, ``blue`` -> ``bleu``,
    ``tre`` -> ``ter``; ``--boot`` is not ``--plot``. Leading dashes and case are ignored."""
    def key(s: str) -> str:
        return s.lstrip("-").lower()

    w = key(word)
    candidates = list(dict.fromkeys(names))
    if not w or not candidates:
        return None

    def ratio(name: str) -> float:
        return difflib.SequenceMatcher(None, w, key(name)).ratio()

    pool = [n for n in candidates if key(n).startswith(w)]
    if not pool:
        pool = [n for n in candidates
                if ratio(n) >= 0.75 or (len(w) >= 3 and _edit_distance(w, key(n)) <= 1)]
    if not pool:
        return None
    return max(pool, key=ratio)    # the first of equals: names keep their order


def did_you_mean(word: str, names: Iterable[str], quote: bool = False) -> str:
    """`` (did you mean NAME?)`` for :func:`closest`'s NAME (``'NAME'`` with ``quote``), or ''."""
    name = closest(word, names)
    if name is None:
        return ""
    return f" (did you mean {name!r}?)" if quote else f" (did you mean {name}?)"


_UNKNOWN_NAME = re.compile(r"(unknown [a-z][a-z ]*? '?([^\s';]+)'?)(; choose from (.+))$")


def suggest_choice(message: str) -> str:
    """A message ``... unknown THING NAME; choose from A, B, C`` (parse_metric's ``unknown
    metric blue; choose from bleu, ...``) with the closest choice after NAME (``unknown
    metric blue (did you mean bleu?); choose from ...``); other messages as they are."""
    match = _UNKNOWN_NAME.search(message)
    if not match or "(did you mean" in message:
        return message
    hint = did_you_mean(match.group(2), match.group(4).split(", "))
    return message[:match.end(1)] + hint + message[match.end(1):]


# ---------------------------------------------------------------------------- Python names in messages
#: the words after an option's Python name that make it the option (not an English word):
#: ``tolerance must be``, ``decay applies only``, ``passes and shards must``, ``c > 0``
_NAME_USES = ("must", "applies", "needs", "and", "one of", "in [", "in (", "out", ">", "<", "=")


def flags_in(message: str, labels: Mapping[str, str], choices: Mapping[str, Sequence[str]] | None = None) -> str:
    """``message`` (an optimizer's ValueError, which names options as Python does:
    ``reg_strength applies only with a regulariser (reg)``) with the option names of
    ``labels`` replaced by their labels (``--reg-strength``, ``--reg``).

    A name with ``_`` is replaced wherever it stands alone; a name that is also an English
    word (``reg``, ``hope``, ``average``) only where it is used as the option: followed by
    one of :data:`_NAME_USES` or by one of its ``choices`` (``reg l2``, ``directions
    random``), inside parentheses alone, or at the start of the message."""
    choices = choices or {}

    def replace(match: re.Match) -> str:
        name = match.group(0)
        before, after = message[:match.start()], message[match.end():]
        if "_" in name or not before:
            return labels[name]
        if before.endswith("(") and after.startswith(")"):
            return labels[name]
        rest = after[1:] if after.startswith(" ") else None
        if rest is not None:
            if any(rest.startswith(use) for use in _NAME_USES):
                return labels[name]
            word = re.match(r"[\w+.-]+", rest)
            if word and word.group(0) in choices.get(name, ()):
                return labels[name]
        return name

    if not labels:
        return message
    pattern = r"(?<![\w'\"-])(" + "|".join(re.escape(n) for n in sorted(labels, key=len, reverse=True)) \
        + r")(?![\w'\"-])"
    return re.sub(pattern, replace, message)


# ---------------------------------------------------------------------------- the table of names
class Idea:
    """One row of docs/usage.md's "One name per idea": what the ``flags`` stand for in
    every command that has them (found in the parsers), ``where`` its other spellings
    (YAML keys, notes; Markdown) and ``old`` its old names outside the parsers (YAML keys,
    Python keywords). The commands and the option strings' old names come from the parsers
    (:func:`names_table`), so that the table cannot drift from what the commands accept."""

    def __init__(self, idea: str, flags: tuple[str, ...], where: str = "", old: str = ""):
        self.idea, self.flags, self.where, self.old = idea, flags, where, old


IDEAS = (
    Idea("start weights", ("--weights",), "`weights:` in tune's YAML and compare's `pool:`; dtrain.ini "
                                          "`input_weights=`", "compare `init:`"),
    Idea("sparse start weights beside dense ones", ("--sparse-weights",), "compare `sparse_weights:`",
         "compare `sparse_init:`"),
    Idea("the result file", ("--output",), "`plot`: a folder"),
    Idea("its format", ("--output-format",)),
    Idea("the re-sorted n-best", ("--output-nbest",)),
    Idea("n-best files", ("--nbest",), "several after one flag"),
    Idea("Moses features.dat / scores.dat files", ("--ffile", "--scfile", "--prev-ffile", "--prev-scfile"),
         "several after one flag, as `--nbest` (`extract --ffile`, `--scfile`: the one file it writes)",
         "comma lists `--ffile F1,F2`"),
    Idea("the n-best size", ("--nbest-size",), "`nbest_size:` in tune's and compare's YAML; dtrain.ini `k=`",
         "YAML `nbest:`; `mtplug.tune(nbest=)`"),
    Idea("distinct strings only in a k-best list", ("--unique",), "as cdec's `-r`, which is `--ref` in mtplug"),
    Idea("forests or lattices", ("--forests",), "`tune --forests`: a switch, tune over the decoder's forests"),
    Idea("references", ("--ref",), "`ref:` in tune's YAML; dtrain.ini `refs=`"),
    Idea("the tuning set's source", ("--input",), "`input:` in tune's YAML; dtrain.ini `input=`"),
    Idea("the decoder program", ("--decoder-bin",), "`decoder_bin:` in tune's YAML"),
    Idea("the decoder's configuration (moses.ini, cdec.ini)", ("--decoder-config",),
         "`decoder_config:` in tune's YAML; dtrain.ini `decoder_config=`",
         "tune's YAML `config:`; `mtplug.tune(config=)`"),
    Idea("decoder processes (input shards) at once", ("--jobs",), "no effect on the result"),
    Idea("threads of mtplug's own computation", ("--threads",), "no effect on the result"),
    Idea("random seed", ("--seed",), "written to the output"),
    Idea("continuing a run", ("--resume",)),
    Idea("the metric(s) of the corpus", ("--metric",),
         "one in `extract`, `optimize`, `tune`; several in `score`, `evaluate` (`--metric bleu ter`); a comma "
         "joins the parts of one interpolation everywhere (`bleu:0.6,ter:0.4`, [Metrics](metrics.md#metric-names)); "
         "`metric:` in tune's YAML, compare's `pool:` and `evaluate:` (a list there)",
         "compare `evaluate: metrics:`"),
    Idea("the metric of one hypothesis (ranks or scores a sentence's hypotheses; not the corpus metric)",
         ("--sentence-metric",), "dtrain.ini `scorer=`"),
)
#: the row of dtrain's flags with ``-`` for the ``_`` of its keys (their old spellings are
#: the keys: ``--learning_rate``), for every alias of dtrain no row of :data:`IDEAS` holds
DTRAIN_KEYS_IDEA = "dtrain's keys as flags"


def _leaves(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()):
    """(command words, parser) of every command that parses options itself (no subcommands)."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield words, parser
    for action in subs:
        for name, sub in action.choices.items():
            yield from _leaves(sub, (*words, name))


def _visible(parser: argparse.ArgumentParser, flag: str) -> argparse.Action | None:
    action = parser._option_string_actions.get(flag)
    return None if action is None or action.help is argparse.SUPPRESS else action


def _commands_text(words_list: list[tuple[str, ...]], leaves: list) -> list[str]:
    """Command names for a table cell: ``optimize`` when every algorithm has it, else each
    ``optimize ALGO``."""
    out: list[str] = []
    for words in words_list:
        group = [w for w, _ in leaves if w[:-1] == words[:-1]] if len(words) > 1 else [words]
        if len(words) > 1 and all(w in words_list for w in group):
            name = " ".join(words[:-1])
        else:
            name = " ".join(words)
        if name not in out:
            out.append(name)
    return out


def _spelled(action: argparse.Action, flag: str) -> str:
    if action.nargs == 0:
        return flag
    metavar = action.metavar or (("{" + ",".join(map(str, action.choices)) + "}") if action.choices
                                 else action.dest.upper())
    return f"{flag} {metavar}" + ("..." if action.nargs in ("+", "*") else "")


def table_rows(parser: argparse.ArgumentParser) -> list[dict]:
    """The rows of the table of names, from ``parser`` (``mtplug.cli.build_parser()``):
    ``{"idea", "flags": [(flag, [command words...], {command words: [short options]},
    spelled)], "old": [(old, new, [command words...])], "where", "old_text"}``; every alias of every command is in one
    row (ValueError otherwise: add a row to :data:`IDEAS`)."""
    leaves = list(_leaves(parser))
    rows: list[dict] = []
    covered: set[tuple[tuple[str, ...], str]] = set()
    for idea in [*IDEAS, Idea(DTRAIN_KEYS_IDEA, ())]:
        if idea.idea == DTRAIN_KEYS_IDEA:
            words = ("dtrain",)
            dtrain = dict(leaves)[words]
            olds = [(old, new, [words]) for old, new in old_names(dtrain).items() if (words, old) not in covered]
            wrong = [old for old, new, _ in olds if old.replace("_", "-") != new]
            if wrong:
                raise ValueError(f"dtrain's old names {', '.join(wrong)} are in no row of the table of names: "
                                 "add their idea to mtplug.aliases.IDEAS")
            covered.update((words, old) for old, _, _ in olds)
            rows.append({"idea": idea.idea, "flags": [(new, [words], {words: []}, new) for _, new, _ in olds],
                         "old": olds, "where": "", "old_text": ""})
            continue
        flags: list[tuple] = []
        by_old: dict[tuple[str, str], list[tuple[str, ...]]] = {}
        for flag in idea.flags:
            having = [(w, p, a) for w, p in leaves for a in [_visible(p, flag)] if a is not None]
            if not having:
                raise ValueError(f"{flag} ({idea.idea}) is an option of no command")
            shorts = {w: [s for s in a.option_strings if not s.startswith("--")] for w, _, a in having}
            spelled = {_spelled(a, flag) for _, _, a in having}
            flags.append((flag, [w for w, _, _ in having], shorts, spelled.pop() if len(spelled) == 1 else flag))
            for w, p, _ in having:
                for old, new in old_names(p).items():
                    if new == flag:
                        by_old.setdefault((old, new), []).append(w)
                        covered.add((w, old))
        rows.append({"idea": idea.idea, "flags": flags, "old": [(o, n, ws) for (o, n), ws in by_old.items()],
                     "where": idea.where, "old_text": idea.old})
    missing = [(" ".join(w), old) for w, p in leaves for old in old_names(p) if (w, old) not in covered]
    if missing:
        raise ValueError("old names in no row of the table of names: "
                         + ", ".join(f"{c} {o}" for c, o in missing) + " (add their idea to mtplug.aliases.IDEAS)")
    return rows


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def names_table(parser: argparse.ArgumentParser) -> str:
    """The Markdown table of docs/usage.md's "One name per idea", made from ``parser``'s
    commands (``python -m mtplug.aliases`` prints it)."""
    leaves = list(_leaves(parser))
    lines = ["| Idea | Name | Old names (aliases that warn) |", "|---|---|---|"]
    for row in table_rows(parser):
        if row["idea"] == DTRAIN_KEYS_IDEA:
            names = ("every dtrain.ini key with `_` is a flag with `-` in `dtrain`: "
                     + ", ".join(f"`{new}`" for _, new, _ in row["old"]))
            old = "dtrain's spellings with `_`: " + ", ".join(f"`{o}`" for o, _, _ in row["old"])
            lines.append(f"| {_cell(row['idea'])} | {_cell(names)} | {_cell(old)} |")
            continue
        parts = []
        for _flag, words, shorts, spelled in row["flags"]:
            short_parts = []
            for s in dict.fromkeys(s for w in words for s in shorts[w]):
                having = [w for w in words if s in shorts[w]]
                short_parts.append(f"`{s}`" if having == words else f"`{s}` in "
                                   + ", ".join(f"`{c}`" for c in _commands_text(having, leaves)))
            short = f" ({'; '.join(short_parts)})" if short_parts else ""
            commands = ", ".join(f"`{c}`" for c in _commands_text(words, leaves))
            parts.append(f"`{spelled}`{short} in {commands}")
        names = "; ".join(parts) + (f"; {row['where']}" if row["where"] else "")
        olds = []
        for old, _new, words in row["old"]:
            where = _commands_text(words, leaves)
            olds.append(f"`{where[0]} {old}`" if len(where) == 1
                        else f"`{old}` ({', '.join(f'`{c}`' for c in where)})")
        if row["old_text"]:
            olds.append(row["old_text"])
        lines.append(f"| {_cell(row['idea'])} | {_cell(names)} | {_cell('; '.join(olds) or '(none)')} |")
    return "\n".join(lines) + "\n"

