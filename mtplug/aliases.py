"""Old spellings of options and keys (issue 37, "one name per idea").

Every idea has one name in every command (docs/usage.md, "One name per idea"); the names
used before keep working as hidden aliases, each with one warning line per run naming
the new spelling, so that no script breaks. The table of a parser is filled by
:func:`add_alias` and applied by ``mtplug.cli``'s parser before parsing; YAML keys and
Python keywords call :func:`warn_old_name` themselves.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

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
