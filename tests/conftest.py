"""Shared fixtures: the project's shared data (../shared next to the repo) and helpers.

A user's clone has no ../shared: tests that need it skip, saying so. CI sets
MTPLUG_REQUIRE_SHARED=1, under which a missing ../shared fails them instead.
MTPLUG_SHARED_DIR points the tests at another copy (or at none, to try a user's clone).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MTPLUG_SHARED_DIR") or REPO.parent / "shared")
#: the toy data bundled with the package (a copy of shared/data/moses-toy's n-best, reference, init.opt)
EXAMPLE = REPO / "mtplug" / "data" / "example"


def require_shared() -> Path:
    """The shared data folder; skips the calling test when it is absent (fails under
    MTPLUG_REQUIRE_SHARED=1, as in CI)."""
    path = SHARED / "data"
    if path.is_dir():
        return path
    why = f"needs the project's shared data, not found at {path} (a clone without ../shared beside it)"
    if os.environ.get("MTPLUG_REQUIRE_SHARED", "0") not in ("", "0"):
        pytest.fail(why + "; MTPLUG_REQUIRE_SHARED=1 makes that a failure")
    pytest.skip(why)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data (see :func:`require_shared`)."""
    return require_shared()


@pytest.fixture(scope="session")
def example_data() -> Path:
    """mtplug/data/example: the Moses toy n-best (60 x 100), ref.0, run1.init.opt; always present."""
    return EXAMPLE


@pytest.fixture(scope="session")
def golden_v18() -> Path:
    """tests/golden/cdec-forests-v18: forests cdec wrote with Boost 1.74 (see its PROVENANCE)."""
    path = REPO / "tests" / "golden" / "cdec-forests-v18"
    if not (path / "PROVENANCE").is_file():
        raise FileNotFoundError(f"golden case {path} is missing")
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


@pytest.fixture(scope="session")
def dask_cluster():
    """A dask LocalCluster of 2 worker processes (one thread each), shared by the session."""
    import logging

    from distributed import LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                           silence_logs=logging.ERROR)
    yield cluster
    cluster.close()


@pytest.fixture(scope="session")
def dask_engine(dask_cluster):
    """A :class:`mtplug.distributed.dask_engine.DaskEngine` on :func:`dask_cluster`."""
    from mtplug.distributed import connect

    engine = connect(dask_cluster.scheduler_address, quiet=True)
    yield engine
    engine.close()
