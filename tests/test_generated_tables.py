"""Every table of measured numbers in docs/ is what its study script makes from its
committed results file (benchmarks/generated_tables.py): no hand-typed number."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import generated_tables  # noqa: E402

PAGES = generated_tables.pages()


def test_the_docs_have_generated_tables():
    assert PAGES, "no page holds a generated table"


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_each_generated_table_equals_its_results(page):
    found = generated_tables.blocks(page.read_text(encoding="utf-8"))
    assert found
    for script, name, table in found:
        assert table == generated_tables.render(script, name), (
            f"{page.name}: the table {script} {name} differs from its results; "
            "run python benchmarks/generated_tables.py")


def test_a_changed_number_is_caught():
    text = "a\n<!-- generated: benchmarks/start_scale.py synthetic -->\n| x |\n<!-- end generated -->\nb\n"
    new = generated_tables.regenerate(text)
    assert new != text and new.startswith("a\n<!-- generated:") and new.endswith("<!-- end generated -->\nb\n")
    assert generated_tables.regenerate(new) == new
