"""The bad-input contract (docs/bad-input.md): each case prints exactly its message, exits 2, writes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from mtplug.cli import EXIT_INPUT_ERROR, main

from .bad_input_cases import ACCEPTED, CASES, command_line, page, write_case

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("case", CASES, ids=[f"{c.kind}: {c.what}" for c in CASES])
def test_case(case, tmp_path, capsys):
    write_case(case, str(tmp_path))
    rc = main(command_line(case, str(tmp_path)))
    out, err = capsys.readouterr()
    if case.message.startswith(ACCEPTED):
        assert rc == 0 and err == "", err
        return
    assert rc == EXIT_INPUT_ERROR
    assert err.replace(f"{tmp_path}/", "DIR/") == f"{case.message}\n"
    assert out == "" and not (tmp_path / "out").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary file left


def test_the_page_is_current():
    assert (REPO / "docs" / "bad-input.md").read_text(encoding="utf-8") == page(), \
        "regenerate: python -m tests.reliability.bad_input_cases > docs/bad-input.md"
