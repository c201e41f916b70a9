"""Shared fixtures: the project's shared data (../shared next to the repo) and helpers."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data; a missing directory fails the test (it is never skipped)."""
    path = SHARED / "data"
    if not path.is_dir():
        raise FileNotFoundError(f"shared data not found at {path}: tests need ../shared next to the repo")
    return path


@pytest.fixture
def write(tmp_path):
    """write(name, text_or_bytes) -> path of a new file in tmp_path."""

    def _write(name: str, content) -> str:
        p = tmp_path / name
        if isinstance(content, str):
            p.write_text(content, encoding="utf-8", newline="")
        else:
            p.write_bytes(content)
        return str(p)

    return _write
