"""Fixtures of the tune tests."""

from __future__ import annotations

import pytest

from tests.tune.test_tune import make_system


@pytest.fixture
def system(tmp_path):
    """Files of a toy tuning set: dev.src (unique lines), moses.ini, cdec.ini, weights."""
    return make_system(tmp_path)
