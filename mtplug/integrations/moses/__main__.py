"""``python -m mtplug.integrations.moses PROGRAM [ARGS]``: run one of the Moses programs."""

from __future__ import annotations

import importlib
import sys

from . import PROGRAMS
from .common import unglue_sctype


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in PROGRAMS:
        print(f"usage: python -m mtplug.integrations.moses {{{','.join(PROGRAMS)}}} [ARGS]", file=sys.stderr)
        return 2
    module = importlib.import_module(f"{__package__}.{PROGRAMS[argv[0]]}")
    return module.main(unglue_sctype(argv[1:]))


if __name__ == "__main__":
    sys.exit(main())
