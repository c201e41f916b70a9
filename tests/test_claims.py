"""The reproduction pages' verdict rule (benchmarks/reproductions/claims.py) and the claims
files the pages are made from."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks" / "reproductions"))

import claims  # noqa: E402
from claims import Draw, noise, verdict  # noqa: E402

PAPERS = sorted(p.stem for p in claims.CLAIMS.glob("*.yaml"))


def draw(method, baseline, p, name="d"):
    return Draw(name, list(method), list(baseline), p, len(method))


def test_a_difference_beyond_the_noise_with_a_small_p_decides():
    d = draw([29.0, 29.1, 29.2], [28.0, 28.1, 28.2], 0.001)
    assert noise([d]) == pytest.approx(0.1)
    assert verdict("better", [d]) == "reproduced"
    assert verdict("worse", [d]) == "contradicted"
    assert verdict("comparable", [d]) == "contradicted"


def test_within_the_noise_or_with_a_large_p_is_inconclusive():
    spread = draw([29.0, 28.0, 30.0], [28.6, 28.5, 28.7], 0.001)      # d = 0.4 < sd 1.0
    assert verdict("better", [spread]) == "inconclusive"
    weak = draw([29.0, 29.1, 29.2], [28.0, 28.1, 28.2], 0.2)
    assert verdict("better", [weak]) == "inconclusive"
    assert verdict("comparable", [weak]) == "inconclusive"          # no claim of equality is "reproduced"


def test_every_draw_must_agree_and_a_redraw_counts_as_noise():
    first = draw([29.0, 29.1, 29.2], [28.0, 28.1, 28.2], 0.001)
    reversed_ = draw([27.0, 27.1, 27.2], [28.0, 28.1, 28.2], 0.001)
    assert verdict("better", [first, reversed_]) == "inconclusive"
    moved = draw([30.5, 30.6, 30.7], [28.0, 28.1, 28.2], 0.001)     # the method's mean moved 1.5 between draws
    assert noise([first, moved]) == pytest.approx(1.5)
    assert verdict("better", [first, moved]) == "inconclusive"       # d = 1.0 in the first draw, < 1.5


def test_a_claims_table_from_results_files(tmp_path, monkeypatch):
    monkeypatch.setattr(claims, "CLAIMS", tmp_path)
    monkeypatch.setattr(claims, "RESULTS", tmp_path)
    (tmp_path / "toy.yaml").write_text(
        "paper: Toy 2020\nfile: toy.txt\nclaims:\n"
        "  - {id: T1, where: Table 1, quote: 'A beats B', paper: '30.1 vs 29.0', protocol: 'fixed pools',\n"
        "     compare: {draws: [draw1, draw2], system: dense, method: a, baseline: b, expect: better}}\n"
        "  - {id: T2, where: Figure 2, quote: 'scales to 1M features', not_run: 'needs 1M features'}\n")
    runs = lambda xs: [{"test": x} for x in xs]  # noqa: E731
    (tmp_path / "draw1.json").write_text(json.dumps({"baseline": "b", "systems": {"dense": {"methods": {
        "a": {"runs": runs([29.0, 29.1, 29.2]), "compared": {"p": 0.001, "replicas": 3}},
        "b": {"runs": runs([28.0, 28.1, 28.2])}}}}}))
    table = claims.table("toy")
    assert "| T1 | Table 1 | “A beats B” (30.1 vs 29.0) | draw1: a 29.10 against b 28.10 (d = +1.00, p = 0.00, " \
           "3 paired runs); noise 0.10; 1 draw(s) not run yet | fixed pools | reproduced (so far) |" in table
    assert "| T2 | Figure 2 | “scales to 1M features” |  |  | not run here: needs 1M features |" in table


def test_a_tuning_bleu_claim_reads_the_runs_tuning_bleu_with_welchs_test(tmp_path, monkeypatch):
    from scipy import stats

    monkeypatch.setattr(claims, "RESULTS", tmp_path)
    a_tune, b_tune = [40.0, 40.4, 39.8, 40.2], [37.0, 37.3, 36.9]
    (tmp_path / "draw1.json").write_text(json.dumps({"baseline": "b", "systems": {"dense": {"methods": {
        "a": {"runs": [{"test": 20.0, "tune": t} for t in a_tune], "compared": {"p": 0.9, "replicas": 3}},
        "b": {"runs": [{"test": 21.0, "tune": t} for t in b_tune]}}}}}))
    d = claims.load_draw("draw1", "dense", "a", "b", "tune")
    assert d.method == a_tune and d.baseline == b_tune
    assert d.p == pytest.approx(stats.ttest_ind(a_tune, b_tune, equal_var=False).pvalue)
    assert d.p < 0.001 and verdict("better", [d]) == "reproduced"
    assert claims.load_draw("draw1", "dense", "a", "b").p == 0.9           # test BLEU: the study's own p
    one = claims.welch_p([40.0], b_tune)                                    # one run: no p, no verdict
    assert one == 1.0
    with pytest.raises(ValueError, match="measure"):
        claims.load_draw("draw1", "dense", "a", "b", "dev")
    assert claims.load_draw("draw1", "sparse", "a", "b") is None           # a system the study did not run
    assert claims.load_draw("draw1", "dense", "c", "b") is None            # a method it did not run


def test_a_spread_claim_compares_each_runs_deviation_from_its_start_points_median(tmp_path, monkeypatch):
    monkeypatch.setattr(claims, "RESULTS", tmp_path)
    wide = [{"point": p, "seed": s, "test": 28.0 + p + d} for p in range(4) for s, d in enumerate((-0.6, 0.0, 0.7))]
    narrow = [{"point": p, "seed": s, "test": 27.0 + p + d} for p in range(4) for s, d in enumerate((-0.05, 0.0, 0.04))]
    (tmp_path / "draw1.json").write_text(json.dumps({"baseline": "other", "systems": {"dense": {"methods": {
        "mert": {"runs": wide}, "pro": {"runs": narrow}}}}}))
    d = claims.load_draw("draw1", "dense", "mert", "pro", "spread")     # any two methods of the file
    assert d.method == pytest.approx([0.6, 0.0, 0.7] * 4) and d.baseline == pytest.approx([0.05, 0.0, 0.04] * 4)
    assert d.d == pytest.approx((1.3 - 0.09) / 3)                      # the start points' own levels drop out
    assert d.p == pytest.approx(claims.welch_p(d.method, d.baseline)) and d.p < 0.05
    with pytest.raises(ValueError, match="baseline"):                    # test BLEU: only against the file's own
        claims.load_draw("draw1", "dense", "mert", "pro")


def test_a_fall_claim_compares_each_runs_largest_drop_between_iterations(tmp_path, monkeypatch):
    monkeypatch.setattr(claims, "RESULTS", tmp_path)
    # both climb from their start; one drops back by up to 2 BLEU, the other levels off
    jumpy = [{"seed": s, "test": 27.0, "one_best_bleu_per_epoch": c}
             for s, c in enumerate(([20.0, 32.1, 30.2, 31.0], [19.0, 31.5, 29.0], [22.0, 30.0, 28.2, 30.0]))]
    smooth = [{"seed": s, "test": 27.5, "one_best_bleu_per_epoch": c, "other": [5.0, 0.0]}
              for s, c in enumerate(([15.0, 30.3, 30.4, 30.4], [18.9, 30.1, 29.9], [21.0, 29.8, 30.0]))]
    (tmp_path / "loop.json").write_text(json.dumps({"baseline": "other", "systems": {"dense": {"methods": {
        "lu-mc": {"runs": jumpy}, "hope-fear": {"runs": smooth}}}}}))
    d = claims.load_draw("loop", "dense", "lu-mc", "hope-fear", "fall")
    assert d.method == pytest.approx([1.9, 2.5, 1.8]) and d.baseline == pytest.approx([0.0, 0.2, 0.0])
    assert d.p == pytest.approx(claims.welch_p(d.method, d.baseline)) and d.p < 0.05
    assert noise([d]) == pytest.approx(float(__import__("numpy").std([1.9, 2.5, 1.8], ddof=1)))
    assert verdict("better", [d]) == "reproduced"                       # larger falls, as "unstable" reads
    assert claims.falls([{"c": [31.0]}], "c") == [0.0]                  # one iteration: nothing falls
    other = claims.load_draw("loop", "dense", "hope-fear", "hope-fear", "fall", curve="other")
    assert other.method == [5.0, 5.0, 5.0]                              # a claim may name another curve


def test_a_threshold_claim_needs_every_replica_on_one_side_and_five_of_them(tmp_path, monkeypatch):
    monkeypatch.setattr(claims, "RESULTS", tmp_path)
    rule = {"file": "syn", "select": {"dims": 1000, "gradient": "l1"}, "field": "cosine", "above": 0.999}

    def write(cosines, other=()):
        entries = [{"dims": 1000, "gradient": "l1", "seed": i, "cosine": c} for i, c in enumerate(cosines)]
        entries += [{"dims": 1000, "gradient": "literal", "seed": 0, "cosine": c} for c in other]
        (tmp_path / "syn.json").write_text(json.dumps({"kind": "trace", "entries": entries}))

    assert claims.threshold(rule) == ("", "not run yet")
    write([0.996, 0.995, 0.997, 0.996, 0.9985], other=[0.9999])          # the other reading is not selected
    text, found = claims.threshold(rule)
    assert found == "contradicted" and "5 independent entries; 0 above 0.999 (sign test p = 0.031)" in text
    write([0.9995] * 5)
    assert claims.threshold(rule)[1] == "reproduced"
    write([0.996, 0.9995, 0.997, 0.996, 0.995])                         # one seed above: no verdict
    assert claims.threshold(rule)[1] == "inconclusive"
    write([0.996] * 4)                                                   # 4 seeds: p = 0.0625
    assert claims.threshold(rule)[1] == "inconclusive"
    # a claim that it stays below ("standard MERT fails to recover w*")
    below = {**{k: v for k, v in rule.items() if k != "above"}, "below": 0.999}
    write([0.41, 0.42, 0.40, 0.43, 0.999])                               # at the value is not below
    text, found = claims.threshold(below)
    assert found == "inconclusive" and "4 below 0.999" in text
    write([0.41, 0.42, 0.40, 0.43, 0.44])
    assert claims.threshold(below)[1] == "reproduced"
    write([0.9995] * 5)
    assert claims.threshold(below)[1] == "contradicted"


@pytest.mark.parametrize("paper", PAPERS)
def test_each_claims_file_is_complete(paper):
    spec = claims.load_claims(paper)
    assert spec["paper"] and spec["file"]
    ids = [c["id"] for c in spec["claims"]]
    assert len(ids) == len(set(ids)), "claim ids repeat"
    for c in spec["claims"]:
        assert c["where"] and c["quote"], c["id"]
        assert sum(k in c for k in ("not_run", "compare", "threshold")) == 1, \
            f"{c['id']}: one of not_run, compare, threshold"
        if "compare" in c:
            cmp = c["compare"]
            assert cmp["expect"] in claims.EXPECTATIONS and cmp["draws"] and cmp["system"], c["id"]
            assert cmp["method"] != cmp["baseline"], c["id"]
            assert cmp.get("measure", "test") in claims.MEASURES, c["id"]
    claims.table(paper)      # every results file it names that exists reads


@pytest.mark.parametrize("paper", PAPERS)
def test_each_quote_is_the_papers_own_words(paper):
    # a claim is read from the paper (../shared/papers), not from a summary of it
    from tests.conftest import require_shared

    text = (require_shared().parent / "papers" / claims.load_claims(paper)["file"]).read_text(encoding="utf-8")
    flat = " ".join(text.split())
    for c in claims.load_claims(paper)["claims"]:
        for part in c["quote"].split(" … "):
            assert " ".join(part.split()) in flat, f"{c['id']}: not in the paper: {part!r}"
