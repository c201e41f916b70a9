"""Extraction streamed sentence by sentence (mert_data.extract_files on one n-best list)
writes what the store writes (extractor_store, then the writers), which is what the plain
Python writers of tests/reference/mert_text.py print; the pieces of
nbest.scan_nbest_sentences are scan_nbest's arrays cut between sentences, whatever the
chunk size; the files do not depend on the thread count; a bad line leaves the outputs as
they were."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplug.corpus import REFLEN_CODES, NbestCorpus
from mtplug.errors import InputError
from mtplug.formats import mert_data
from mtplug.formats.nbest import piece_stats, scan_nbest, scan_nbest_sentences
from mtplug.formats.references import References
from mtplug.metrics.bleu import BleuConfig
from tests.reference.mert_text import features_text, scores_text

WORDS = ["a", "b", "c", "A", "é", "x-y", "longer-than-eight", "sixteen-bytes-ab"]
VALUES = [0.0, -0.0, 1.0, -2.5, 0.1, 1e-7, 123456.5, -3.4e38, 1e300, 2.2e-308, 1234567.0]


def nbest_text(seed: int, n_sent: int, sparse: bool) -> tuple[str, list[list[str]]]:
    """A Moses n-best list with repeated hypotheses and feature vectors (so Moses's
    duplicate removal has work), blank lines and CRLF endings, and its references."""
    rng = np.random.default_rng(seed)
    refs = [[" ".join(rng.choice(WORDS, rng.integers(0, 9))) for _ in range(2)] for _ in range(n_sent)]
    lines = []
    for s in sorted(rng.choice(n_sent, size=rng.integers(1, n_sent + 1), replace=False).tolist()):
        pool = []
        for _ in range(rng.integers(1, 9)):
            if pool and rng.random() < 0.3:
                lines.append(pool[rng.integers(len(pool))])
                continue
            hyp = " ".join(rng.choice(WORDS, rng.integers(0, 7)))
            lm, tm = rng.choice(VALUES), rng.choice(VALUES, 2)
            feats = f"LM0= {float(lm)!r} TM0= {float(tm[0])!r} {float(tm[1])!r}"
            if sparse and rng.random() < 0.6:
                feats += "".join(f" WT_{w}~x= {float(rng.choice(VALUES))!r}"
                                 for w in rng.choice(WORDS[:4], rng.integers(1, 3), replace=False))
            pool.append(f"{s} ||| {hyp} ||| {feats} ||| 0{chr(13) if rng.random() < 0.2 else ''}\n")
            lines.append(pool[-1])
        if rng.random() < 0.2:
            lines.append("\n")
    return "".join(lines), refs


def store_of(refs, bleu):
    return NbestCorpus.from_nbest([], References(refs, "refs"), bleu, finish=False)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_sent=st.integers(1, 30), sparse=st.booleans(),
       chunk=st.integers(1, 400), reflen=st.sampled_from(["closest", "average"]), lowercase=st.booleans())
def test_pieces_are_scan_nbest_cut_between_sentences(tmp_path_factory, seed, n_sent, sparse, chunk, reflen,
                                                    lowercase):
    text, refs = nbest_text(seed, n_sent, sparse)
    path = str(tmp_path_factory.mktemp("p") / "nbest")
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
    bleu = BleuConfig(reflen, lowercase)
    whole_store, piece_store = store_of(refs, bleu), store_of(refs, bleu)
    kw = dict(reflen_code=REFLEN_CODES[reflen], lowercase=lowercase)
    whole = scan_nbest(path, words=whole_store.words, space=whole_store.space, refs=whole_store.references, **kw)
    pieces = list(scan_nbest_sentences(path, words=piece_store.words, space=piece_store.space,
                                       refs=piece_store.references, chunk_bytes=chunk, **kw))
    for p in pieces:
        p["stats"] = piece_stats(p, piece_store.references, REFLEN_CODES[reflen])
    last = [int(p["sent_ids"][-1]) for p in pieces if len(p["sent_ids"])]
    first = [int(p["sent_ids"][0]) for p in pieces if len(p["sent_ids"])]
    assert all(a < b for a, b in zip(last, first[1:])), "a sentence is split between pieces"
    for key in ("sent_ids", "dense", "sparse_ids", "sparse_values", "stats", "hyp_bytes"):
        assert np.concatenate([p[key] for p in pieces]).tobytes() == whole[key].tobytes(), key
    for key in ("sparse_indptr", "hyp_indptr"):
        starts = np.cumsum([0] + [int(p[key][-1]) for p in pieces[:-1]])
        joined = np.concatenate([[0]] + [p[key][1:] + s0 for p, s0 in zip(pieces, starts)])
        assert joined.tolist() == whole[key].tolist(), key
    assert piece_store.words.words() == whole_store.words.words()
    assert piece_store.feature_names == whole_store.feature_names


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_sent=st.integers(1, 30), sparse=st.booleans(),
       reflen=st.sampled_from(["closest", "shortest", "average"]), lowercase=st.booleans(),
       threads=st.integers(1, 4))
def test_streamed_files_are_the_stores(tmp_path_factory, seed, n_sent, sparse, reflen, lowercase, threads):
    text, refs = nbest_text(seed, n_sent, sparse)
    d = tmp_path_factory.mktemp("x")
    path = str(d / "nbest")
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
    bleu = BleuConfig(reflen, lowercase)
    done = mert_data.extract_files([path], References(refs, "refs"), bleu, str(d / "f"), str(d / "s"),
                                   threads=threads)
    store = mert_data.extractor_store([path], References(refs, "refs"), bleu)
    assert done.streamed and done.n_hypotheses == store.n_hypotheses
    assert (done.n_sentences, done.n_dense, done.n_sparse) == (store.n_sentences, store.n_dense,
                                                                store.n_features - store.n_dense)
    assert (d / "f").read_bytes() == features_text(store)
    assert (d / "s").read_bytes() == scores_text(store)
    mert_data.write_features(str(d / "f2"), store)
    mert_data.write_scores(str(d / "s2"), store)
    assert (d / "f2").read_bytes() == features_text(store)
    assert (d / "s2").read_bytes() == scores_text(store)


def test_store_writers_equal_the_reference_across_batches(tmp_path, monkeypatch):
    """The store's writers format sentence batches of _BATCH_ROWS rows: a batch edge inside
    the store changes nothing."""
    from tests.reference.random_store import random_store

    monkeypatch.setattr(mert_data, "_BATCH_ROWS", 7)
    store = random_store(3, (5, 0, 9, 1, 12, 3), n_dense=3, n_sparse=5, gaussian=True)
    mert_data.write_features(str(tmp_path / "f"), store)
    mert_data.write_scores(str(tmp_path / "s"), store)
    assert (tmp_path / "f").read_bytes() == features_text(store)
    assert (tmp_path / "s").read_bytes() == scores_text(store)


@pytest.mark.parametrize("only", ["ffile", "scfile"])
def test_one_output_only(tmp_path, only):
    text, refs = nbest_text(5, 4, True)
    (tmp_path / "nbest").write_text(text, encoding="utf-8", newline="")
    out = {"ffile": None, "scfile": None, only: str(tmp_path / "out")}
    mert_data.extract_files([str(tmp_path / "nbest")], References(refs, "refs"), BleuConfig(), out["ffile"],
                            out["scfile"])
    store = mert_data.extractor_store([str(tmp_path / "nbest")], References(refs, "refs"), BleuConfig())
    want = features_text(store) if only == "ffile" else scores_text(store)
    assert (tmp_path / "out").read_bytes() == want
    assert sorted(os.listdir(tmp_path)) == ["nbest", "out"]


def test_a_bad_line_leaves_the_outputs_as_they_were(tmp_path, monkeypatch):
    """The error comes many chunks and written pieces into the file: the files keep their
    old text and no temporary file stays behind."""
    from mtplug.formats import nbest

    text, refs = nbest_text(9, 40, True)
    refs.append(["z"])
    bad = text + f"{len(refs) - 1} ||| z ||| LM0= 1 TM0= x 2 ||| 0\n"
    (tmp_path / "nbest").write_text(bad, encoding="utf-8", newline="")
    (tmp_path / "f").write_text("old f")
    (tmp_path / "s").write_text("old s")
    real = nbest.scan_nbest_sentences
    monkeypatch.setattr(nbest, "scan_nbest_sentences", lambda *a, **kw: real(*a, **{**kw, "chunk_bytes": 64}))
    with pytest.raises(InputError, match=r"nbest:\d+: expected a number as feature value, got 'x'"):
        mert_data.extract_files([str(tmp_path / "nbest")], References(refs, "refs"), BleuConfig(),
                                str(tmp_path / "f"), str(tmp_path / "s"))
    assert (tmp_path / "f").read_text() == "old f" and (tmp_path / "s").read_text() == "old s"
    assert sorted(os.listdir(tmp_path)) == ["f", "nbest", "s"]
