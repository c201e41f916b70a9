"""``python -m mtplug.names_doc`` prints docs/usage.md's table "One name per idea" from the
commands' parsers (:func:`mtplug.aliases.names_table`); tests/cli/test_names.py fails while
the page differs. A module of its own: ``mtplug.cli`` imports ``mtplug.aliases``."""

import sys

from .aliases import names_table
from .cli import build_parser

if __name__ == "__main__":
    sys.stdout.write(names_table(build_parser()))
