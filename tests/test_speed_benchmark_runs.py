"""benchmarks/bench_speed.py's sections run end to end on a tiny synthetic set (no anchor
programs, no timing asserted): each returns its rows, and the outputs it compares are the
same. The figures themselves come from running the benchmark by hand (docs/speed.md)."""

from __future__ import annotations

import json
import os
import shutil
import sys

import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")

pytestmark = pytest.mark.skipif(not os.path.exists("/usr/bin/time"),
                                reason="the benchmark measures peak memory with /usr/bin/time (Debian package time)")


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    sys.path.insert(0, BENCH)
    try:
        import synth

        data = str(tmp_path_factory.mktemp("synth"))
        synth.generate(data, sentences=6, nbest=30, seed=3)
        yield data
    finally:
        sys.path.remove(BENCH)


def _ctx(data, work, **kw):
    from _speed import SpeedContext

    os.makedirs(work, exist_ok=True)
    return SpeedContext(data=data, work=str(work), **kw)


def test_extract_pro_and_kbmira_sections(bench, tmp_path):
    import speed_extract
    import speed_kbmira
    import speed_pro

    rows = speed_extract.measure(_ctx(bench, tmp_path / "extract"))
    assert [r.work for r in rows] == ["mtplug extract --ffile --scfile vs Moses extractor",
                                      "extractor program vs Moses extractor"]
    files = [r.extra["files"] for r in rows]
    for a, b in zip(*files):   # the command and the Moses program wrote the same bytes
        assert open(a, "rb").read() == open(b, "rb").read()
    assert all(r.ours_seconds > 0 and r.met is None and r.ratio is None for r in rows)

    pro, = speed_pro.measure(_ctx(bench, tmp_path / "pro"))
    assert pro.identical is True and pro.extra["pro_data_bytes"] > 0
    assert pro.met is None          # "faster than Moses's" cannot be judged without it
    kb, read = speed_kbmira.measure(_ctx(bench, tmp_path / "kbmira"))
    assert kb.identical is True and kb.met is None and read.ours_seconds > 0


def test_mert_and_apro_sections(bench, tmp_path):
    import speed_apro
    import speed_mert

    ctx = _ctx(bench, tmp_path / "mert")
    mert, forest = speed_mert.measure(ctx, restarts=2)
    assert mert.extra["threads_change_no_bit"] is True and mert.extra["line_searches"] > 0
    assert mert.met is None        # a subset or fewer restarts: the 60 s target does not apply
    assert "not measured" in forest.where_time_goes

    row = speed_apro.measure_full_run(_ctx(bench, tmp_path / "apro"), repeat=1)
    assert row.extra["weights_same_on_1_and_all_threads"] is True and row.met is None


def test_bench_speed_prints_every_row_and_writes_json(bench, tmp_path, capsys):
    import bench_speed

    out = tmp_path / "rows.json"
    shutil.copytree(bench, tmp_path / "data")
    bench_speed.main(["--data", str(tmp_path / "data"), "--work", str(tmp_path / "work"),
                      "--sections", "pro", "kbmira", "--json", str(out)])
    printed = capsys.readouterr().out
    rows = json.loads(out.read_text())
    assert [r["work"] for r in rows] == ["pro (streaming) vs Moses pro", "kbmira (all hypotheses) vs Moses kbmira",
                                         "read features.dat + scores.dat"]
    assert all(r["work"][:44] in printed for r in rows)
    assert "targets met" in printed


def test_m2_benchmark_runs_on_a_tiny_set(bench, tmp_path, capsys):
    """bench_m2.py without Moses: the set it makes is valid M2 and n-best input (mtplug's
    extractor program reads it) and every hypothesis gets statistics."""
    import bench_m2

    out = tmp_path / "rows.json"
    assert bench_m2.main(["--work", str(tmp_path), "--sentences", "5", "--nbest", "4", "--repeat", "1",
                          "--json", str(out)]) == 0
    row, = json.loads(out.read_text())
    assert row["extra"]["hypotheses"] == 20 and row["identical"] is None and row["ours_seconds"] > 0
    scores = (tmp_path / "mtplug.scores.dat").read_text().splitlines()
    assert sum(line.startswith("SCORES_TXT_BEGIN_0") for line in scores) == 5
    assert all(len(line.split()) == 4 for line in scores if not line.startswith("SCORES_TXT"))
