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
