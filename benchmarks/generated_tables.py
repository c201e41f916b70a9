#!/usr/bin/env python3
"""The documentation's tables of measured numbers, made from committed results files.

A page holds such a table between two markers:

    <!-- generated: benchmarks/SCRIPT.py NAME -->
    | ... the table ... |
    <!-- end generated -->

and ``SCRIPT.py``'s ``table(NAME)`` returns it from the script's committed results file (a
number on a page is one a committed script wrote). ``python benchmarks/generated_tables.py``
rewrites every such table under docs/ (after a study wrote new results);
``--check`` only lists the stale ones and exits 1 if there are any.
tests/test_generated_tables.py runs the check.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"(<!-- generated: (\S+) (\S+) -->\n)(.*?)(<!-- end generated -->)", re.S)


@cache
def _script(path: str):
    spec = importlib.util.spec_from_file_location(f"_generated_{Path(path).stem}", ROOT / path)
    if spec is None or spec.loader is None:
        raise FileNotFoundError(path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module      # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def render(script: str, name: str) -> str:
    """Table ``name`` of ``script`` (a path from the repository root), ending in a newline."""
    return _script(script).table(name).rstrip("\n") + "\n"


def blocks(text: str) -> list[tuple[str, str, str]]:
    """(script, name, the table as the page has it) of every generated table in ``text``."""
    return [(m.group(2), m.group(3), m.group(4)) for m in BLOCK.finditer(text)]


def pages() -> list[Path]:
    return sorted(p for p in (ROOT / "docs").rglob("*.md") if BLOCK.search(p.read_text(encoding="utf-8")))


def regenerate(text: str) -> str:
    return BLOCK.sub(lambda m: m.group(1) + render(m.group(2), m.group(3)) + m.group(5), text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="list stale tables, change nothing (exit 1 if any)")
    a = ap.parse_args()
    stale = []
    for page in pages():
        text = page.read_text(encoding="utf-8")
        new = regenerate(text)
        if new != text:
            stale.append(str(page.relative_to(ROOT)))
            if not a.check:
                page.write_text(new, encoding="utf-8")
    print("\n".join(f"{'stale' if a.check else 'rewritten'}: {p}" for p in stale) or "every table is current")
    sys.exit(1 if a.check and stale else 0)


if __name__ == "__main__":
    main()
