"""Fixtures for the format tests: fixture files and error checks (shared data: tests/conftest.py)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

from mtplug.errors import InputError

_REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def weights_data() -> Path:
    """tests/data/weights (fixture files of the weights-format tests)."""
    path = _REPO / "tests" / "data" / "weights"
    if not path.is_dir():
        pytest.fail(f"fixture directory {path} is missing")
    return path


@pytest.fixture
def input_error():
    """``with input_error(path, line, *fragments):`` expects an InputError naming them all.

    The message must contain the file's name, ``:line:`` (unless line is None, when it
    must carry no line) and every fragment (what was expected / what was found).
    """

    @contextlib.contextmanager
    def check(path, line, *fragments):
        with pytest.raises(InputError) as info:
            yield info
        err = info.value
        text = str(err)
        assert os.path.basename(str(path)) in text, text
        assert err.line == line, text
        if line is not None:
            assert f":{line}: " in text, text
        for fragment in fragments:
            assert fragment in text, text

    return check
