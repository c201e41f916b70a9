"""A user's clone has no ../shared: tests that need it skip with the reason; under
MTPLUG_REQUIRE_SHARED=1 (CI) they fail instead (issue 19, defect 13)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# one test that needs shared/data (Moses's features.dat) and one that needs only the bundled example
TARGETS = ["tests/test_golden_moses.py::test_extract_is_byte_identical_to_moses",
           "tests/test_every_optimizer.py::test_optimizer_runs_and_repeats_bit_for_bit[none]"]


def run_pytest(tmp_path, **env) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "MTPLUG_SHARED_DIR": str(tmp_path / "no-shared-here"), **env}
    if "MTPLUG_REQUIRE_SHARED" not in env:
        full_env.pop("MTPLUG_REQUIRE_SHARED", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", *TARGETS],
                          cwd=REPO, env=full_env, capture_output=True, text=True, timeout=300)


def test_without_shared_data_tests_skip_with_the_reason(tmp_path):
    p = run_pytest(tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "1 passed, 1 skipped" in p.stdout
    assert "needs the project's shared data, not found at" in p.stdout


def test_ci_makes_missing_shared_data_a_failure(tmp_path):
    p = run_pytest(tmp_path, MTPLUG_REQUIRE_SHARED="1")
    assert p.returncode == 1, p.stdout + p.stderr
    assert "1 passed, 1 error" in p.stdout    # the fixture fails: an error, not a skip
    assert "MTPLUG_REQUIRE_SHARED=1 makes that a failure" in p.stdout


@pytest.mark.skipif(not (REPO / ".ci" / "run").exists(), reason="no .ci/run in this tree")
def test_ci_script_requires_shared_data():
    assert "MTPLUG_REQUIRE_SHARED=1" in (REPO / ".ci" / "run").read_text()
