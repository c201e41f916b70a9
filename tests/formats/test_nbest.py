"""Moses n-best / cdec k-best reading: layout, statistics, round trips, bad input."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplug._ext._nbest_scan import decode_hypotheses
from mtplug.corpus import NbestCorpus
from mtplug.errors import InputError
from mtplug.formats.nbest import write_nbest
from mtplug.formats.references import References, read_devset, read_references
from mtplug.metrics.bleu import BleuConfig
from tests.reference.ngram_stats import bleu_stats

MOSES_LINES = (
    "0 ||| the house is small  ||| LM0= -10.5 WordPenalty0= -4 TranslationModel0= -3.2 -4.1 WT_the~das= 1 ||| -5.1"
    " ||| 0-0 1-1 2-2 3-3\n"
    "0 ||| the home is small  ||| LM0= -11 WordPenalty0= -4 TranslationModel0= -3 -4 WT_home~haus= 1 ||| -5.3"
    " ||| 0-0 1-1 2-2 3-3\n"
    "1 ||| a dog ||| LM0= -3 WordPenalty0= -2 TranslationModel0= -1 -1.5 ||| -2 ||| 0-0 1-1\n"
)
REFS = ["the house is small", "a dog barks"]


def corpus_of(write, text, refs=REFS, name="nbest.txt", **kw):
    path = write(name, text)
    ref = write("ref.0", "".join(r + "\n" for r in refs))
    return NbestCorpus.from_nbest([path], read_references([ref]), **kw), path


def test_moses_labelled_dense_and_sparse(write):
    c, _ = corpus_of(write, MOSES_LINES)
    assert c.feature_names[: c.n_dense] == ["LM0_0", "WordPenalty0_0", "TranslationModel0_0", "TranslationModel0_1"]
    assert c.feature_names[c.n_dense:] == ["WT_the~das", "WT_home~haus"]
    np.testing.assert_array_equal(c.dense[2], [-3, -2, -1, -1.5])
    assert c.sparse_row(0) == [(4, 1.0)] and c.sparse_row(1) == [(5, 1.0)] and c.sparse_row(2) == []
    assert list(c.sent_offsets) == [0, 2, 3]
    assert c.hypotheses(0, 3) == ["the house is small", "the home is small", "a dog"]
    # hand-counted: 'the house is small' vs itself; 'a dog' vs 'a dog barks' (closest length 3)
    assert c.stats[0].tolist() == [4, 4, 3, 3, 2, 2, 1, 1, 4]
    assert c.stats[2].tolist() == [2, 2, 1, 1, 0, 0, 0, 0, 3]


def test_old_moses_colon_labels(write):
    text = "0||| a b ||| d: 0 -7.6 lm: -41.3 w: -9 ||| -14.6\n"
    c, _ = corpus_of(write, text, refs=["a b"])
    assert c.feature_names == ["d_0", "d_1", "lm_0", "w_0"]
    np.testing.assert_array_equal(c.dense[0], [0, -7.6, -41.3, -9])


def test_cdec_kbest_is_sparse(write):
    text = ("0 ||| ab ||| SourceWordPenalty=-0.434294 WordPenalty=-0.434294 Cost=0.1 LatticeCost_0=0.125 ||| -1.09359\n"
            "0 ||| a' b ||| Glue=1 SourceWordPenalty=-0.868589 WordPenalty=-0.868589 Cost=0.3 LatticeCost_0=2.5 ||| -4.53718\n")
    c, _ = corpus_of(write, text, refs=["a b"])
    assert c.n_dense == 0
    names = c.feature_names
    row1 = {names[i]: v for i, v in c.sparse_row(1)}
    assert row1 == {"Glue": 1.0, "SourceWordPenalty": -0.868589, "WordPenalty": -0.868589, "Cost": 0.3,
                    "LatticeCost_0": 2.5}


def test_scores_under_weights(write):
    c, _ = corpus_of(write, MOSES_LINES)
    w = np.arange(c.n_features, dtype=float)
    want = [c.dense[h] @ w[: c.n_dense] + sum(v * w[i] for i, v in c.sparse_row(h)) for h in range(3)]
    np.testing.assert_allclose(c.scores(w), want)
    assert c.one_best(np.eye(c.n_features)[0]).tolist() == [0, 2]


def test_duplicates_are_stored_once(write):
    first = MOSES_LINES.splitlines(keepends=True)[0]
    c, path = corpus_of(write, first + MOSES_LINES)
    assert c.n_hypotheses == 3  # the repeated line is the same (sentence, hypothesis, features)
    assert c.add_nbest([path]) == 0
    other = write("next.txt", "0 ||| the house is small  ||| LM0= -10.5 WordPenalty0= -4 TranslationModel0= -3.2 -4.1 "
                              "WT_the~das= 1 ||| 9\n"
                              "1 ||| a dog barks ||| LM0= -3 WordPenalty0= -3 TranslationModel0= -1 -1 ||| 0\n")
    assert c.add_nbest([other]) == 1
    assert list(c.sent_offsets) == [0, 2, 4]
    assert c.hypotheses(2, 4) == ["a dog", "a dog barks"]  # old rows first, then new ones


def test_same_hypothesis_other_features_is_kept(write):
    text = "0 ||| a ||| LM0= 1 ||| 0\n0 ||| a ||| LM0= 2 ||| 0\n"
    c, _ = corpus_of(write, text, refs=["a"])
    assert c.n_hypotheses == 2


def test_gzip_crlf_and_blank_lines(write, tmp_path):
    raw = MOSES_LINES.replace("\n", "\r\n") + "\r\n\n"
    gz = tmp_path / "nbest.gz.anyname"
    gz.write_bytes(gzip.compress(raw.encode()))
    ref = write("ref.0", "".join(r + "\n" for r in REFS))
    c = NbestCorpus.from_nbest([str(gz)], read_references([ref]))
    plain, _ = corpus_of(write, MOSES_LINES)
    np.testing.assert_array_equal(c.stats, plain.stats)
    assert c.hypotheses(0, 3) == plain.hypotheses(0, 3)


def test_write_read_round_trip(write, tmp_path):
    c, _ = corpus_of(write, MOSES_LINES)
    for style in ("moses", "cdec"):
        out = str(tmp_path / f"out.{style}")
        write_nbest(out, c, style=style)
        c2 = NbestCorpus.from_nbest([out], read_references([str(tmp_path / "ref.0")]))
        np.testing.assert_array_equal(c2.stats, c.stats)
        assert c2.hypotheses(0, 3) == c.hypotheses(0, 3)
        if style == "moses":
            np.testing.assert_array_equal(c2.dense, c.dense)
            assert c2.feature_names == c.feature_names
        out2 = str(tmp_path / f"again.{style}")
        write_nbest(out2, c2, style=style)
        assert open(out, "rb").read() == open(out2, "rb").read()


def test_store_save_load(write, tmp_path):
    c, _ = corpus_of(write, MOSES_LINES, bleu=BleuConfig(reflen="shortest", lowercase=True))
    p = str(tmp_path / "store.npz")
    c.save(p)
    d = NbestCorpus.load(p)
    for name in ("sent_offsets", "dense", "sparse_indptr", "sparse_ids", "sparse_values", "stats",
                 "hyp_indptr", "hyp_bytes"):
        np.testing.assert_array_equal(getattr(d, name), getattr(c, name))
    assert d.feature_names == c.feature_names and d.bleu == c.bleu
    assert d.hypotheses(0, 3) == c.hypotheses(0, 3)
    # a loaded store keeps growing with the same vocabularies and references
    more = write("more.txt", "1 ||| A DOG barks ||| LM0= 0 WordPenalty0= -3 TranslationModel0= 0 0 ||| 0\n")
    assert d.add_nbest([more]) == 1
    assert d.stats[-1].tolist() == bleu_stats("a dog barks".split(), ["a dog barks".split()], "shortest")


def test_devset_references(write):
    dev = write("dev", "src a ||| the house is small ||| a house is small\nsrc b ||| a dog barks\n")
    refs = read_devset(dev)
    assert refs.sentences == [["the house is small", "a house is small"], ["a dog barks"]]
    c = NbestCorpus.from_nbest([write("nb", MOSES_LINES)], refs)
    assert c.stats[1].tolist() == bleu_stats("the home is small".split(),
                                             [r.split() for r in refs.sentences[0]])


# ------------------------------------------------------------------ property test vs the oracle
WORDS = ["a", "b", "c", "d", "A", "é", "x-y"]
sentence = st.lists(st.sampled_from(WORDS), min_size=0, max_size=12)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), n_refs=st.integers(1, 3), reflen=st.sampled_from(["closest", "shortest", "average"]),
       lowercase=st.booleans())
def test_statistics_equal_reference_oracle(tmp_path_factory, data, n_refs, reflen, lowercase):
    n_sent = data.draw(st.integers(1, 4))
    refs = [[" ".join(data.draw(sentence)) for _ in range(n_refs)] for _ in range(n_sent)]
    hyps = [[data.draw(sentence) for _ in range(data.draw(st.integers(1, 4)))] for _ in range(n_sent)]
    d = tmp_path_factory.mktemp("p")
    lines = [f"{s} ||| {' '.join(h)} ||| F0= {k} ||| 0\n" for s, hs in enumerate(hyps) for k, h in enumerate(hs)]
    (d / "nb").write_text("".join(lines), encoding="utf-8")
    c = NbestCorpus.from_nbest([str(d / "nb")], References(refs, "refs"), BleuConfig(reflen, lowercase))
    low = (lambda t: [w.lower() for w in t]) if lowercase else (lambda t: t)
    want = [bleu_stats(low(h), [low(r.split()) for r in refs[s]], reflen) for s, hs in enumerate(hyps) for h in hs]
    assert c.stats.tolist() == want
    assert c.ref_len_divisor == (n_refs if reflen == "average" else 1)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_sent=st.integers(1, 120), reflen=st.sampled_from(["closest", "shortest",
                                                                                         "average"]),
       lowercase=st.booleans())
def test_statistics_do_not_depend_on_threads(tmp_path_factory, seed, n_sent, reflen, lowercase):
    """Sentences are scored in OpenMP threads after the file is read: any count, same rows,
    and the rows still equal the oracle's (a second file restarts the sentence ids)."""
    from mtplug.corpus import REFLEN_CODES
    from mtplug.formats.nbest import scan_nbest

    rng = np.random.default_rng(seed)
    words = np.array(WORDS)
    refs = [[" ".join(rng.choice(words, rng.integers(0, 10))) for _ in range(2)] for _ in range(n_sent)]
    hyps = [[list(rng.choice(words, rng.integers(0, 10))) for _ in range(rng.integers(1, 6))] for _ in range(n_sent)]
    d = tmp_path_factory.mktemp("t")
    (d / "nb").write_text("".join(f"{s} ||| {' '.join(h)} ||| F0= 1 ||| 0\n" for s, hs in enumerate(hyps)
                                  for h in hs), encoding="utf-8")
    store = NbestCorpus.from_nbest([], References(refs, "refs"), BleuConfig(reflen, lowercase))
    rows = [scan_nbest(str(d / "nb"), words=store.words, space=store.space, refs=store.references,
                       reflen_code=REFLEN_CODES[reflen], lowercase=lowercase, threads=t)["stats"]
            for t in (1, 2, 3, 8)]
    assert all(r.tobytes() == rows[0].tobytes() for r in rows[1:])
    low = (lambda t: [w.lower() for w in t]) if lowercase else (lambda t: t)
    want = [bleu_stats(low(h), [low(r.split()) for r in refs[s]], reflen) for s, hs in enumerate(hyps) for h in hs]
    assert rows[0].tolist() == want


TOKEN_CHARS = st.characters(blacklist_categories=("Cs", "Zs", "Zl", "Zp", "Cc"), blacklist_characters="|")


@settings(max_examples=60, deadline=None)
@given(lines=st.lists(st.lists(st.text(TOKEN_CHARS, min_size=1, max_size=26), max_size=8), min_size=1, max_size=6),
       seps=st.lists(st.sampled_from([" ", "\t", "  ", " \t "]), min_size=1, max_size=4))
def test_tokens_and_their_ids(tmp_path_factory, lines, seps):
    """Tokens are split at spaces and tabs and interned eight bytes at a time: each word comes
    back as written, and its id is the one the vocabulary gives the word alone (lengths
    around multiples of eight, multi-byte UTF-8)."""
    d = tmp_path_factory.mktemp("w")
    text = "".join(f"0 |||{seps[k % len(seps)]}{seps[(k + 1) % len(seps)].join(ws)} ||| F= {k} ||| 0\n"
                   for k, ws in enumerate(lines))
    (d / "nb").write_text(text, encoding="utf-8")
    c = NbestCorpus.from_nbest([str(d / "nb")])
    assert c.hypotheses(0, len(lines)) == [" ".join(ws) for ws in lines]
    ptr, toks = decode_hypotheses(c.hyp_bytes, c.hyp_indptr, 0, len(lines))
    assert toks.tolist() == [c.words.get(w.encode("utf-8")) for ws in lines for w in ws]


# ------------------------------------------------------------------ bad input
BAD = [
    ("0 ||| a b\n", 1, "expected at least 3 fields 'id ||| hypothesis ||| features'"),
    ("x ||| a ||| F= 1 ||| 0\n", 1, "non-negative integer sentence id"),
    ("-1 ||| a ||| F= 1 ||| 0\n", 1, "non-negative integer sentence id"),
    ("1 ||| a ||| F= 1 ||| 0\n0 ||| a ||| F= 1 ||| 0\n", 2, "smaller than the previous line's"),
    ("0 ||| a ||| F= 1 ||| 0\n7 ||| a ||| F= 1 ||| 0\n", 2, "sentence id 7 has no reference"),
    ("0 ||| a ||| F= one ||| 0\n", 1, "expected a number as feature value, got 'one'"),
    ("0 ||| a ||| F= nan ||| 0\n", 1, "not finite"),
    ("0 ||| a ||| F= 1 ||| 0\n0 ||| a ||| F= -inf ||| 0\n", 2, "not finite"),
    ("0 ||| a ||| 1 F= 2 ||| 0\n", 1, "comes before any feature label"),
    ("0 ||| a ||| F= 1 F= 2 ||| 0\n", 1, "appears twice"),
    ("0 ||| a ||| F= 1 s_x= 1 s_x= 2 ||| 0\n", 1, "appears twice"),
    ("0 ||| a ||| f=1 f=2 ||| 0\n", 1, "appears twice"),
    ("0 ||| a ||| F= 1 ||| 0\n0 ||| b ||| G= 1 ||| 0\n", 2, "not in the layout of the first line (F_0)"),
    ("0 ||| a ||| F= 1 2 ||| 0\n0 ||| b ||| F= 1 ||| 0\n", 2, "do not match the layout"),
    ("0 ||| a ||| F= 1 ||| 0\n0 ||| b ||| F= 1 2 ||| 0\n", 2, "do not match the layout"),
    ("0 ||| a ||| F= 1 s_x= ||| 0\n", 1, "must be followed by exactly one value"),
    ("0 ||| a ||| F= G= 1 ||| 0\n", 1, "has no values"),
    (b"0 ||| a \xff ||| F= 1 ||| 0\n", 1, "invalid UTF-8"),
    ("", None, "empty file"),
    ("\n\n", None, "empty file"),
    # a line cut short: its score (and perhaps a digit of its last value) lost
    ("0 ||| a ||| F= 1 ||| 0\n0 ||| a ||| F= 2\n1 ||| b ||| F= 3 ||| 0\n", 2,
     ("expected 4 '|||'-separated fields, as line 1 has, found 3: a line cut short (did the program writing the file "
      "stop in the middle of it?)")),
    ("0 ||| a ||| F= 1 ||| 0\n1 ||| b ||| F= 2.2", 2, "expected 4 '|||'-separated fields, as line 1 has, found 3"),
    ("\n0 ||| a ||| F= 1 ||| 0\n\n0 ||| b ||| F= 2 ||| 0 ||| 0-0\n", 4,
     "expected 4 '|||'-separated fields, as line 2 has, found 5: every line of a file has the same fields"),
]


@pytest.mark.parametrize("content,line,message", BAD)
def test_bad_nbest_input(write, content, line, message):
    with pytest.raises(InputError) as err:
        corpus_of(write, content, refs=["a", "b"])
    text = str(err.value)
    where = "nbest.txt" + (f":{line}:" if line else ":")
    assert where in text and message in text, text


@pytest.mark.parametrize("chunk_bytes", [1, 7, 1 << 20])
def test_a_cut_last_line_is_refused_and_a_whole_one_read_without_its_newline(write, chunk_bytes):
    """The compiled scanner sees the last line without its newline in the last chunk, however
    the file is cut into chunks: read when it has every field, refused when it lost one."""
    from mtplug.formats.nbest import scan_nbest
    from mtplug.formats.references import encode_references

    refs = read_references([write("ref.0", "".join(r + "\n" for r in REFS))])
    text = MOSES_LINES.replace(" ||| 0-0 1-1 2-2 3-3", "").replace(" ||| 0-0 1-1", "")

    def scan(content):
        c = NbestCorpus.from_nbest([], refs, finish=False)
        return scan_nbest(write("nb", content), words=c.words, space=c.space,
                          refs=encode_references(refs, c.words), chunk_bytes=chunk_bytes)

    whole = scan(text)
    assert len(whole["sent_ids"]) == 3
    np.testing.assert_array_equal(scan(text[:-1])["dense"], whole["dense"])
    np.testing.assert_array_equal(scan(text[:-1])["stats"], whole["stats"])
    with pytest.raises(InputError) as err:
        scan(text[:-len(" ||| -2\n")])
    assert str(err.value).endswith("nb:3: expected 4 '|||'-separated fields, as line 1 has, found 3: a line cut short "
                                   "(did the program writing the file stop in the middle of it?)")


def test_each_file_has_its_own_number_of_fields(write):
    """Every line of one file has as many fields as its first; files read together may differ
    (one written with alignments, one without)."""
    ref = write("ref.0", "".join(r + "\n" for r in REFS))
    one = write("one", "0 ||| the house ||| F= 1 ||| -1 ||| 0-0 1-1\n1 ||| a dog ||| F= 2 ||| -2 ||| 0-0 1-1\n")
    two = write("two", "0 ||| a house ||| F= 3\n1 ||| the dog ||| F= 4\n")
    c = NbestCorpus.from_nbest([one, two], read_references([ref]))
    assert c.n_hypotheses == 4


def test_truncated_gzip(write):
    blob = gzip.compress(MOSES_LINES.encode() * 50)
    with pytest.raises(InputError, match="nbest.gz: corrupt or truncated"):
        corpus_of(write, blob[: len(blob) // 2], name="nbest.gz")


def test_missing_file_and_short_references(write, tmp_path):
    ref = write("ref.0", "a\nb\n")
    with pytest.raises(InputError, match="nope.txt: no such file"):
        NbestCorpus.from_nbest([str(tmp_path / "nope.txt")], read_references([ref]))
    short = write("ref.1", "a\n")
    with pytest.raises(InputError, match=r"ref.1: has 1 lines, expected 2"):
        read_references([ref, short])


def test_empty_sentence_is_an_error_for_optimizers(write):
    c, _ = corpus_of(write, "1 ||| a ||| F= 1 ||| 0\n", refs=["a", "a"])
    with pytest.raises(InputError, match="sentence 0 has no hypotheses"):
        c.check_complete()
