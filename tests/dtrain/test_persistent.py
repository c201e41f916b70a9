"""The persistent decoder (mtplug.dtrain.persistent): exact weight deltas, the line markup,
the base64 k-best reader with cdec's cut byte, and whole dtrain runs over the stand-in that
end with the per-call path's weights, bit for bit."""

from __future__ import annotations

import base64
import json
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplug._ext._mira_kbest import mira_block_text
from mtplug.cli import main
from mtplug.dtrain.persistent import PersistentCdec, encode_delta, exact_deltas, with_delta
from mtplug.tuning.standin import apply_delta

finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


def bits(x: float) -> int:
    return struct.unpack("<q", struct.pack("<d", x))[0]


# ------------------------------------------------------------------ weights
@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(finite, finite), min_size=1, max_size=30))
def test_cdec_ends_with_the_target_weights_bit_for_bit(pairs):
    """cdec adds each record's double to its weight (decoder.cc, ApplyWeightDelta); after the
    first (zeroing) line and the sentence's line it holds every target, ±0 as +0."""
    names = [f"F{i}" for i in range(len(pairs))]
    held = np.array([h if h != 0 else 0.0 for h, _ in pairs])
    target = np.array([t if t != 0 else 0.0 for _, t in pairs])
    if not (np.isfinite(target - held).all() and np.isfinite(-held).all()):
        return   # a step that overflows is no weight a learner makes
    dec = PersistentCdec(["unused"], "cdec.ini", 10)
    try:
        dec._held, dec._names_obj, dec._encoded = held.copy(), names, [n.encode() for n in names]
        first, second = dec._delta(names, target)
        cdec = dict(zip(names, held.tolist()))
        for delta in (first, second):
            if delta:
                apply_delta(cdec, delta)
        assert [bits(cdec[n]) for n in names] == [bits(x) for x in target.tolist()]
        assert [bits(x) for x in dec._held.tolist()] == [bits(x) for x in target.tolist()]
    finally:
        dec.close()


def test_exact_deltas_by_hand():
    held = np.array([0.0, 0.3, 1.0, 0.25])
    target = np.array([0.7, 0.3, 1e-20, -0.5])
    changed, d, impossible = exact_deltas(held, target)
    assert changed.tolist() == [0, 2, 3]
    assert d[0] == 0.7 and d[2] == -0.75          # from 0, and within a factor of 2: exact
    assert impossible.tolist() == [2]             # 1 + d is never 1e-20: the sum's steps are 2**-53 wide


def test_encode_delta_needs_no_padding_character():
    for n in range(1, 5):
        text = encode_delta([b"x" * n], np.array([1.5]))
        assert "=" not in text
        raw = base64.b64decode(text)
        assert raw.startswith(b"x" * n + b"\0" + struct.pack("<d", 1.5)) and set(raw[n + 9:]) <= {0}


def test_with_delta_keeps_dtrains_markup():
    assert with_delta("a b c", "QQ") == '<seg delta="QQ">a b c</seg>'
    assert with_delta("a b c", "") == "<seg>a b c</seg>"
    assert with_delta('<seg id="7" grammar="g.7.gz">a b</seg>', "QQ") == \
        '<seg delta="QQ" id="7" grammar="g.7.gz">a b</seg>'
    assert with_delta("<seg>a</seg>", "QQ") == '<seg delta="QQ">a</seg>'
    assert with_delta("<segment> a", "QQ") == '<seg delta="QQ"><segment> a</seg>'
    assert with_delta("", "QQ") == '<seg delta="QQ"></seg>'      # a weights-only line


# ------------------------------------------------------------------ the base64 k-best reader
def cdec_b64(data: bytes) -> str:
    """cdec's encoder (utils/b64tools.cc): a final group of two bytes is written ``xx==``,
    losing the low nibble of the last byte."""
    text = base64.b64encode(data).decode()
    if len(data) % 3 == 2:
        text = text[:-2] + "=="
    return text


def records(feats: list[tuple[str, float]]) -> bytes:
    return b"".join(n.encode() + b"\0" + struct.pack("<d", v) for n, v in feats)


def line(hyp: str, feats, score: str = "-1.5", sid: int = 9) -> str:
    return f"{sid} ||| {len(hyp.split())} ||| {hyp} ||| {cdec_b64(records(feats))} ||| {score}"


def test_block_as_ordinary_kbest_lines():
    block = "\n".join([line("a b", [("LanguageModel", -12.345678901), ("Glue", 2.0)]), line("a c", [("Glue", 3.0)]),
                       "", ""]).encode()
    text, texts, repaired, unresolved = mira_block_text(block, 4)
    assert text == (b"4 ||| a b ||| LanguageModel=-12.3457 Glue=2 ||| -1.5\n"
                    b"4 ||| a c ||| Glue=3 ||| -1.5\n")
    # the first line's records take 35 bytes (2 modulo 3): its Glue lost half a byte, and the
    # second line's intact Glue vouches for the repair
    assert texts == ["a b", "a c"] and (repaired, unresolved) == (1, [])


def test_a_cut_last_value_is_repaired_from_the_other_lines():
    # "AB" + NUL + 8 bytes: 11 bytes, 2 modulo 3: cdec cuts the last byte's low nibble
    cut = [("AB", 1234.5)]
    assert len(records(cut)) % 3 == 2
    block = "\n".join([line("x", cut), line("y", [("AB", 1000.25), ("Glue", 1.0)])]).encode()
    text, _, repaired, unresolved = mira_block_text(block, 0)
    assert (repaired, unresolved) == (1, [])
    assert text.splitlines()[0] == b"0 ||| x ||| AB=1234.5 ||| -1.5"


def test_a_cut_value_without_a_witness_is_unresolved():
    """Nothing else on the list has the feature intact: left to the caller."""
    block = line("x", [("AB", 1234.5)]).encode()
    _, texts, repaired, unresolved = mira_block_text(block, 0)
    assert (repaired, [u[0] for u in unresolved], texts) == (0, [0], ["x"])


def test_witnesses_that_fit_no_candidate():
    """Intact values 2**16 apart leave no candidate within 2**7 of both: unresolved, not guessed."""
    block = "\n".join([line("x", [("AB", 3.0)]), line("y", [("AB", 1.0), ("Glue", 1.0)]),
                       line("z", [("AB", 2.0 ** 17), ("Glue", 1.0)])]).encode()
    repaired, unresolved = mira_block_text(block, 0)[2:]
    assert repaired == 0 and [u[0] for u in unresolved] == [0] and unresolved[0][2] == "AB"


@pytest.mark.parametrize("bad", [b"0 ||| 1 ||| x ||| -1", b"0 ||| 1 ||| x ||| QQ!! ||| -1",
                                 b"0 ||| 1 ||| x ||| " + base64.b64encode(b"AB\0\1\2") + b" ||| -1"])
def test_malformed_lines(bad):
    with pytest.raises(ValueError):
        mira_block_text(bad, 0)


# ------------------------------------------------------------------ whole runs over the stand-in
def run(dtrain_ini, standin_command, tmp_path, mode: str, **keys) -> tuple[str, dict]:
    out = tmp_path / f"w.{mode}"
    ini = dtrain_ini(**keys)
    assert main(["dtrain", "-q", "-c", ini, "--decoder-bin", standin_command, "--decoder-process", mode,
                 "-o", str(out)]) == 0
    return out.read_text(), {}


@pytest.mark.parametrize("keys", [
    dict(epochs=2, learning_rate=0.0001, loss_margin=1, randomize=True, reshard=True, seed=3),
    dict(epochs=2, shards=3, minibatch=2, gamma=0.001, learning_rate=0.0001, l1_reg="cumul",
         l1_reg_strength=0.00001),
    dict(epochs=2, update="mira", scorer="approx_bleu", select_weights="avg"),
], ids=["one-shard", "three-shards-minibatch", "mira"])
def test_persistent_weights_equal_per_call_weights(dtrain_ini, standin_command, tmp_path, capsys, keys):
    per_call, _ = run(dtrain_ini, standin_command, tmp_path, "per_call", **keys)
    calls = json.loads(capsys.readouterr().out)
    persistent, _ = run(dtrain_ini, standin_command, tmp_path, "persistent", **keys)
    summary = json.loads(capsys.readouterr().out)
    assert persistent == per_call
    assert summary["decoder_calls"] == calls["decoder_calls"] == calls["decoder_starts"]
    assert summary["decoder_starts"] == keys.get("shards", 1)     # one process per shard for the run
    assert summary["epochs"][-1]["avg_score"] == calls["epochs"][-1]["avg_score"]


def test_a_cut_value_is_told_apart_by_the_score():
    """Every line cut, no witness: the score (w·f, 6 digits) singles out the candidate."""
    from mtplug.dtrain.persistent import fix_by_score

    feats = [("AB", 1234.5)]
    score = f"{0.5 * 1234.5:g}"
    block = line("x", feats, score=score).encode()
    unresolved = mira_block_text(block, 0)[3]
    fixes = fix_by_score(unresolved, {"AB": 0.5})
    assert fixes == {0: 1234.5}
    text, _, _, left = mira_block_text(block, 0, fixes)
    assert left == [] and text == b"0 ||| x ||| AB=1234.5 ||| 617.25\n"
    assert fix_by_score(unresolved, {}) == {}          # a weight of 0 tells nothing
