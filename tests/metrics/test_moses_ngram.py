"""Moses's CHRF and BLEUDOC statistics (mtplug.metrics.moses_ngram, kernel
pyx/_moses_ngram.pyx) against slow references written from mert/CHRFScorer.cpp and
mert/BleuDocScorer.cpp, and against the goldens of Moses 34452895 with its two one-line
fixes (tests/golden/moses-chrf, tests/golden/moses-bleudoc; provenance in their READMEs)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplug.errors import InputError
from mtplug.metrics import moses_ngram as mn

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


# ----------------------------------------------------------------------------- slow references
def _ref_length(lengths: list[int], hyp_len: int, reflen: str) -> int:
    """mert/Reference.h CalcClosest / CalcShortest / CalcAverage, line by line."""
    if reflen == "average":
        return int(np.float32(sum(lengths)) / np.float32(len(lengths)))
    if reflen == "shortest":
        return min(lengths)
    min_diff, closest = 2**31 - 1, 0
    for i, r in enumerate(lengths):
        diff = abs(r - hyp_len)
        if diff < abs(min_diff):
            min_diff, closest = r - hyp_len, i
        elif diff == abs(min_diff) and r < lengths[closest]:
            closest = i
    return lengths[closest]


def _counts(tokens: list, order: int) -> Counter:
    return Counter(tuple(tokens[i:i + k]) for k in range(1, order + 1) for i in range(len(tokens) - k + 1))


def _merged(refs: list[list], order: int) -> Counter:
    merged: Counter = Counter()
    for r in refs:
        for ng, c in _counts(r, order).items():
            merged[ng] = max(merged[ng], c)
    return merged


def reference_chrf(hyp: str, refs: list[str], lowercase: bool = False, reflen: str = "closest") -> list[int]:
    """CHRFScorer::CalcCHRFStats with the fix: every non-space byte a token."""
    def tokens(text: str) -> list[int]:
        out = []
        for b in text.encode("utf-8", "surrogateescape"):
            if b == 0x20:
                continue
            out.append(b + 32 if lowercase and 0x41 <= b <= 0x5A else b)
        return out

    r_tok = [tokens(r) for r in refs]
    h = tokens(hyp)
    merged = _merged(r_tok, 6)
    stats = [0] * 18
    for ng, guess in _counts(h, 6).items():
        v = merged.get(ng, 0)
        k = len(ng)
        stats[3 * k - 3] += min(v, guess)
        stats[3 * k - 2] += guess
        stats[3 * k - 1] += v
    return stats + [2 * len(h), _ref_length([len(t) for t in r_tok], len(h), reflen)]


def reference_split_doc(text: str) -> list[str]:
    out, index = [], 0
    while text.find(" \\n ", index) != -1:
        end = text.find(" \\n ", index)
        out.append(text[index:end])
        index = end + 4
    return out


def reference_bleudoc(doc: str, ref_doc: list[list[str]], lowercase: bool = False,
                      reflen: str = "closest") -> list[int]:
    """BleuDocScorer::prepareStats: BLEU's 9 statistics of each sentence, summed."""
    def words(text: str) -> list[str]:
        if lowercase:
            text = "".join(c.lower() if "A" <= c <= "Z" else c for c in text)
        return [w for w in text.split(" ") if w]

    total = [0] * 9
    for i, sent in enumerate(reference_split_doc(doc)):
        refs = [words(r) for r in ref_doc[i]]
        merged = _merged(refs, 4)
        h = words(sent)
        for ng, guess in _counts(h, 4).items():
            k = len(ng)
            total[2 * k - 2] += min(merged.get(ng, 0), guess)
            total[2 * k - 1] += guess
        total[8] += _ref_length([len(r) for r in refs], len(h), reflen)
    return total


# ----------------------------------------------------------------------------- kernel == reference
CHARS = st.text(alphabet=list("abAB é\tüx.") + ["\u00c4"], max_size=14)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.lists(CHARS, min_size=1, max_size=3), st.lists(CHARS, min_size=1, max_size=4)),
                min_size=1, max_size=4),
       st.booleans(), st.sampled_from(["closest", "shortest", "average"]))
def test_chrf_kernel_equals_reference(sentences, lowercase, reflen):
    refs = [r for r, _ in sentences]
    hyps, sids = [], []
    for s, (_, hs) in enumerate(sentences):
        hyps += hs
        sids += [s] * len(hs)
    got = mn.chrf_stats(hyps, sids, refs, mn.NgramOptions(reflen=reflen, lowercase=lowercase))
    want = [reference_chrf(h, refs[s], lowercase, reflen) for h, s in zip(hyps, sids)]
    assert got.tolist() == want


WORD = st.sampled_from(["a", "b", "A", "c", "Über", "\\n", "x.y"])
SENT = st.lists(WORD, max_size=7).map(" ".join)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.lists(SENT, min_size=1, max_size=3), min_size=1, max_size=4), min_size=1, max_size=3),
       st.data(), st.booleans(), st.sampled_from(["closest", "shortest", "average"]))
def test_bleudoc_kernel_equals_reference(docs, data, lowercase, reflen):
    # docs[d][i] = the references of sentence i of document d, as many for every sentence
    n_refs = len(docs[0][0])
    docs = [[(refs * n_refs)[:n_refs] for refs in doc] for doc in docs]
    texts, sids = [], []
    for d, doc in enumerate(docs):
        for _ in range(data.draw(st.integers(1, 3))):
            n = data.draw(st.integers(0, len(doc)))
            sents = [data.draw(SENT) for _ in range(n)]
            sep = data.draw(st.sampled_from([" \\n ", " \\n  ", "  \\n "]))
            text = " " + "".join(s + sep for s in sents) + data.draw(st.sampled_from(["", "tail", " "]))
            if len(reference_split_doc(text)) > len(doc):
                continue
            texts.append(text)
            sids.append(d)
    got = mn.bleudoc_stats(texts, sids, docs, mn.NgramOptions(reflen=reflen, lowercase=lowercase))
    want = [reference_bleudoc(t, docs[s], lowercase, reflen) for t, s in zip(texts, sids)]
    assert got.reshape(len(texts), 9).tolist() == want


@given(st.text(alphabet=list("ab \\n"), max_size=30))
def test_split_doc_equals_reference(text):
    assert mn.split_doc(text) == reference_split_doc(text)


def test_chrf_counts_bytes_and_refhits_of_matched_ngrams():
    # 'é' is two bytes; ref count of the hypothesis's distinct n-grams only ('b' is not in the hypothesis)
    row = mn.chrf_stats(["é a"], [0], [["a é b"]])[0].tolist()
    assert row[0:3] == [3, 3, 3]                     # unigrams: 0xC3, 0xA9, 'a' all in the reference
    assert row[18:] == [6, 4]                        # "\xc3 \xa9 a " is 6 bytes; the reference has 4 bytes


def test_bleudoc_drops_text_after_the_last_separator_and_refuses_extra_sentences():
    docs = [[["a b"], ["c d"]]]
    assert reference_split_doc(" a b \\n c d ") == [" a b"]
    assert mn.bleudoc_stats([" a b \\n c d "], [0], docs)[0].tolist() == [2, 2, 1, 1, 0, 0, 0, 0, 2]
    with pytest.raises(InputError, match="3 sentences"):
        mn.bleudoc_stats([" a \\n b \\n c \\n "], [0], docs)
    with pytest.raises(InputError, match=r"Sentence id \(1\)"):
        mn.bleudoc_stats([" a \\n "], [1], docs)


def test_xml_references_read_as_moses(tmp_path):
    f = tmp_path / "r.xml"
    f.write_text('<refset>\n<doc docid="x">\n<seg id="1"> a  b </seg>\n<seg id=2>c<x/>d</seg>\n</doc>\n'
                 '<doc docid="y">\n<seg id="1">e</seg>\n</doc>\n</refset>\n')
    g = tmp_path / "s.xml"
    g.write_text('<doc docid="x">\n<seg>A</seg>\n</doc>\n')
    docs = mn.read_xml_references([f, g])
    assert docs == [[[" a  b ", "A"], ["c<x/>d"]], [["e"]]]
    bad = tmp_path / "bad.xml"
    bad.write_text('<seg id="1">a</seg>\n')
    with pytest.raises(InputError, match="before any"):
        mn.read_xml_references([bad])


def test_scconfig():
    assert mn.parse_scconfig("CHRF", "beta:1,case:false,reflen:average") == mn.NgramOptions("average", True, 1.0)
    assert mn.parse_scconfig("BLEUDOC", "") == mn.NgramOptions()
    for bad in ("smooth:1", "beta:0", "order:4", "reflen:longest", "case:yes"):
        with pytest.raises(ValueError):
            mn.parse_scconfig("CHRF", bad)
    with pytest.raises(ValueError, match="unknown key 'beta'"):
        mn.parse_scconfig("BLEUDOC", "beta:1")


# ----------------------------------------------------------------------------- goldens
def _scores(path: Path) -> np.ndarray:
    return np.array([[int(x) for x in line.split()] for line in path.read_text().splitlines()
                     if not line.startswith("SCORES_TXT")])


def _nbest(path: Path) -> tuple[list[str], list[int]]:
    hyps, sids = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        fields = line.split("|||")
        sids.append(int(fields[0]))
        hyps.append(fields[1])
    return hyps, sids


CHRF_CASES = [("default", ""), ("case-false", "case:false"), ("reflen-shortest", "reflen:shortest"),
              ("reflen-average.case-false", "reflen:average,case:false")]
BLEUDOC_CASES = [("default", ""), ("case-false", "case:false"), ("reflen-shortest", "reflen:shortest"),
                 ("reflen-average", "reflen:average")]


@pytest.mark.parametrize("name,scconfig", CHRF_CASES)
def test_chrf_stats_equal_fixed_moses(name, scconfig):
    g = GOLDEN / "moses-chrf"
    refs = [list(p) for p in zip((g / "ref.0").read_text().splitlines(), (g / "ref.1").read_text().splitlines())]
    hyps, sids = _nbest(g / "dev.nbest")
    got = mn.chrf_stats(hyps, sids, refs, mn.parse_scconfig("CHRF", scconfig))
    assert got.tolist() == _scores(g / f"{name}.scores.dat").tolist()


def test_unpatched_moses_chrf_golden_is_all_zeros():
    """What Moses 34452895 itself writes (its README: `line[i]+" "` is pointer arithmetic)."""
    assert not _scores(GOLDEN / "moses-chrf" / "unpatched.default.scores.dat").any()


@pytest.mark.parametrize("name,scconfig", BLEUDOC_CASES)
def test_bleudoc_stats_equal_fixed_moses(name, scconfig):
    g = GOLDEN / "moses-bleudoc"
    docs = mn.read_xml_references([g / "ref.0.xml", g / "ref.1.xml"])
    hyps, sids = _nbest(g / "dev.nbest")
    got = mn.bleudoc_stats(hyps, sids, docs, mn.parse_scconfig("BLEUDOC", scconfig))
    assert got.tolist() == _scores(g / f"{name}.scores.dat").tolist()


def test_chrf_score_and_metric_layer_agree_with_the_reference_arithmetic():
    from mtplug.metrics.moses_scorers import parse_moses_scorer

    g = GOLDEN / "moses-chrf"
    totals = _scores(g / "default.scores.dat").sum(axis=0)
    for beta in (3.0, 1.0, 0.5):
        metric = parse_moses_scorer("CHRF", f"beta:{beta:g}").metric()
        from mtplug.metrics.layer import Metric, Part

        bound = Metric(metric.name, (Part("moses-chrf", 1.0, 20, beta),))
        assert bound.objective(totals.astype(np.int64)) == pytest.approx(mn.chrf_score(totals, beta), abs=0)
    # an order without n-grams: 0/0, NaN as Moses
    assert np.isnan(mn.chrf_score(np.zeros(20)))


def test_kernel_refuses_indices_outside_its_arrays():
    from mtplug._ext._moses_ngram import ngram_stats

    keys = np.zeros((2, 4), dtype=np.int64)
    seq_ptr = np.array([0, 2, 4], dtype=np.int64)
    out = np.zeros((1, 8), dtype=np.int64)
    ok = (np.array([1], np.int64), np.array([0, 1], np.int64), np.array([0], np.int64))
    assert ngram_stats(keys, seq_ptr, *ok, 0, out) == 0
    assert out[0].tolist() == [2, 2, 2, 1, 1, 1, 2, 2]
    bad = [(keys, seq_ptr, np.array([2], np.int64), ok[1], ok[2]),
           (keys, seq_ptr, ok[0], ok[1], np.array([5], np.int64)),
           (keys, seq_ptr, ok[0], np.array([0, 2], np.int64), ok[2]),
           (keys, np.array([0, 3, 9], np.int64), *ok),
           (keys, np.array([0, 3, 2], np.int64), *ok)]
    for args in bad:
        with pytest.raises(ValueError):
            ngram_stats(*args, 0, out)
