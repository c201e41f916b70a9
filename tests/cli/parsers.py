"""Every parser of the ``mtplug`` command, for tests that check each one."""

from __future__ import annotations

import argparse
from collections.abc import Iterator


def all_parsers(parser: argparse.ArgumentParser, prog: str = "mtplug") -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """(command line prefix, parser) of ``parser`` and of each of its subcommands, depth first."""
    yield prog, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from all_parsers(sub, f"{prog} {name}")
