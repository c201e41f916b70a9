"""TER: the compiled statistics against the slow reference and against sacrebleu 2.6's
TER (per sentence and per corpus), over random hypotheses and references and over
cases built to cross the beam, the shift distance and the candidate limit."""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sacrebleu.metrics import TER

from mtplug._ext import _ter
from mtplug._ext._nbest_scan import Vocabulary
from mtplug.corpus import NbestCorpus
from mtplug.formats.references import References, encode_references, tokenize
from mtplug.metrics.ter import Ter
from tests.reference import ter_reference as ref

# few words, so that runs repeat and shifts pay; case pairs (merged unless
# case_sensitive); Greek capital sigma (lowercased by context); a no-break space inside
# a token (one word to mtplug's tokenizer, two tokens to sacrebleu's)
WORDS = ["a", "A", "b", "B", "c", "ΑΣ", "x\u00a0y"]
word = st.sampled_from(WORDS)
short = st.lists(word, min_size=0, max_size=14).map(" ".join)


def encode(hyps: list[str], refsets: list[list[str]]):
    """Word ids of hypotheses (hypothesis i translates sentence i) and references
    (refsets[s] = the references of sentence s)."""
    vocab = Vocabulary()
    ptr, ids = [0], []
    for h in hyps:
        ids += [vocab.add(t.encode()) for t in tokenize(h)]
        ptr.append(len(ids))
    enc = encode_references(References([list(r) for r in refsets], "refs"), vocab)
    return np.array(ptr), np.array(ids, np.int32), enc, vocab.words()


def stats_of(hyps: list[str], refsets: list[list[str]], metric: Ter, threads: int = 1):
    """(statistics [n, 2], scale) with hypothesis i scored against refsets[i]."""
    ptr, ids, enc, words = encode(hyps, refsets)
    n = len(hyps)
    return metric.stats(ptr, ids, np.arange(n + 1), np.arange(n), enc, words, threads=threads), metric.ref_scale(enc)


def check_against_everything(hyps: list[str], refsets: list[list[str]], case_sensitive: bool, oracle=True):
    """Kernel rows == reference == sacrebleu per sentence; corpus scores agree (equal
    reference counts: sacrebleu's corpus_score is given the reference streams)."""
    metric = Ter(case_sensitive=case_sensitive)
    got, scale = stats_of(hyps, refsets, metric)
    sacre = TER(case_sensitive=case_sensitive)
    for h, refs, row in zip(hyps, refsets, got):
        theirs = sacre.sentence_score(h, refs)
        assert (row[0], row[1] / scale) == (theirs.num_edits, theirs.ref_length), (h, refs)
        if oracle:
            edits, length = ref.sentence_stats(h, refs, case_sensitive)
            assert (row[0], Fraction(int(row[1]), scale)) == (edits, length), (h, refs)
        assert metric.sentence_score(row, scale) * 100 == pytest.approx(theirs.score, abs=1e-10)
    if len({len(r) for r in refsets}) == 1:
        theirs = sacre.corpus_score(hyps, [list(s) for s in zip(*refsets)])
        summed = got.sum(axis=0)
        assert summed[0] == theirs.num_edits
        assert summed[1] / scale == pytest.approx(theirs.ref_length, rel=1e-12)
        assert metric.corpus_score(summed, scale) == pytest.approx(theirs.score / 100, abs=1e-12)
    return got, scale


@settings(max_examples=150, deadline=None)
@given(data=st.data(), n_refs=st.integers(1, 3), case_sensitive=st.booleans())
def test_short_sentences_equal_reference_and_sacrebleu(data, n_refs, case_sensitive):
    n = data.draw(st.integers(1, 4))
    hyps = [data.draw(short) for _ in range(n)]
    refsets = [[data.draw(short) for _ in range(n_refs)] for _ in range(n)]
    check_against_everything(hyps, refsets, case_sensitive)


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), case_sensitive=st.booleans())
def test_longer_sentences_equal_sacrebleu(seed, case_sensitive):
    # up to 40 words of 3..5 kinds: the 1000-candidate limit is reached at times
    rng = random.Random(seed)
    vocab = WORDS[:rng.randint(3, 5)]
    sent = lambda n: " ".join(rng.choice(vocab) for _ in range(n))  # noqa: E731
    length = rng.randint(20, 40)
    hyps = [sent(length)]
    refsets = [[sent(rng.randint(length - 8, length + 8)) for _ in range(rng.randint(1, 2))]]
    check_against_everything(hyps, refsets, case_sensitive, oracle=False)


def near_copy(rng: random.Random, n: int) -> tuple[str, str]:
    """A reference of n distinct-ish words and a hypothesis with runs moved and words changed."""
    r = [f"w{rng.randrange(3 * n)}" for _ in range(n)]
    h = list(r)
    for _ in range(rng.randint(1, 5)):
        a = rng.randrange(n)
        run = h[a:a + rng.randint(1, 8)]
        del h[a:a + len(run)]
        at = rng.randrange(len(h) + 1)
        h[at:at] = run
    for _ in range(rng.randint(0, 4)):
        h[rng.randrange(len(h))] = f"W{rng.randrange(n)}"
    return " ".join(h), " ".join(r)


def test_long_sentences_equal_reference_and_sacrebleu():
    rng = random.Random(7)
    pairs = [near_copy(rng, n) for n in (61, 75, 90, 120)]
    pairs.append(("x " * 70, "x y " * 40))   # ratio of lengths > 1, many equal runs
    got, _ = check_against_everything([h for h, _ in pairs], [[r] for _, r in pairs], True)
    assert got[:4, 0].min() > 0


STRUCTURED = [
    # Snover et al. 2006, fig. 1 (lowercased): shift "this week", 2 substitutions, 1 insertion
    ("THIS WEEK THE SAUDIS denied information published in the new york times",
     "SAUDI ARABIA denied THIS WEEK information published in the AMERICAN new york times", 4, "paper"),
    # one shift of three words instead of six edits
    ("d e f a b c", "a b c d e f", 1, "shift"),
    # the path with 52 edits leaves the beam of 25 around the diagonal: 56 within it
    (" ".join([f"j{k}" for k in range(26)] + [f"w{k}" for k in range(30)]),
     " ".join([f"w{k}" for k in range(30)] + [f"z{k}" for k in range(26)]), 56, "beam"),
    # "a b c" would have to move 52 positions (> 50): 6 edits instead of 1 shift
    (" ".join(["a", "b", "c"] + [f"m{k}" for k in range(52)]),
     " ".join([f"m{k}" for k in range(52)] + ["a", "b", "c"]), 6, "distance"),
    # within 50 positions the shift is made
    (" ".join(["a", "b", "c"] + [f"m{k}" for k in range(45)]),
     " ".join([f"m{k}" for k in range(45)] + ["a", "b", "c"]), 1, "distance"),
    # the first round reaches 1000 candidates, so its best shift is dropped: 12, not 9
    (" ".join("babbbbaababbabbaabaaaababaabbabaabb"), " ".join("baababbabbbbababbabbabaabbbab"), 12, "limit"),
    ("", "a b c", 3, "empty hypothesis"),
    ("a b c", "", 3, "empty reference"),
    ("", "", 0, "both empty"),
]


@pytest.mark.parametrize("hyp,reference,edits,what", STRUCTURED, ids=[c[3] for c in STRUCTURED])
def test_structured_cases(hyp, reference, edits, what):
    got, scale = check_against_everything([hyp], [[reference]], False)
    assert got[0, 0] == edits
    assert got[0, 1] == len(reference.split()) * scale


def test_the_limits_change_the_result():
    # the cases above cross the limits: without them the reference finds fewer edits
    limit = STRUCTURED[5]
    log: dict = {}
    assert ref.pair_edits(limit[0].split(), limit[1].split(), log) == 12
    assert log == {"shifts": 0, "tried": 1000}
    for case, name, value in [(STRUCTURED[2], "BEAM", 10**6), (STRUCTURED[3], "MAX_SHIFT_DIST", 10**6),
                              (limit, "MAX_CANDIDATES", 10**9)]:
        old = getattr(ref, name)
        setattr(ref, name, value)
        try:
            assert ref.pair_edits(case[0].split(), case[1].split()) < case[2]
        finally:
            setattr(ref, name, old)


def test_kernel_pair_hook():
    ids = {w: i for i, w in enumerate("abcdef")}
    enc = lambda s: np.array([ids[w] for w in s.split()], np.int32)  # noqa: E731
    assert _ter.pair_edits(enc("d e f a b c"), enc("a b c d e f")) == 1
    assert _ter.pair_edits(enc(""), enc("a b")) == 2
    assert _ter.pair_edits(enc("a b"), enc("")) == 2
    with pytest.raises(ValueError, match="Buffer dtype mismatch"):
        _ter.pair_edits(np.zeros(2, np.int64), enc("a"))


def test_uneven_reference_counts_use_a_common_scale():
    # 1, 2 and 3 references: scale 6, and the rows sum to sacrebleu's summed statistics
    hyps = ["a b c", "b a", "c c a b"]
    refsets = [["a b c d"], ["a b", "b a c"], ["a", "c a b", "b b c a a"]]
    metric = Ter()
    got, scale = stats_of(hyps, refsets, metric)
    assert scale == 6
    sacre = [TER().sentence_score(h, r) for h, r in zip(hyps, refsets)]
    assert got[:, 0].tolist() == [s.num_edits for s in sacre]
    assert (got[:, 1] / scale).tolist() == [s.ref_length for s in sacre]
    edits = sum(s.num_edits for s in sacre)
    length = sum(s.ref_length for s in sacre)
    assert metric.corpus_score(got.sum(axis=0), scale) == pytest.approx(edits / length, abs=1e-12)


def test_threads_do_not_change_the_statistics():
    rng = random.Random(0)
    sent = lambda: " ".join(rng.choice("abcdA") for _ in range(rng.randint(0, 16)))  # noqa: E731
    hyps = [sent() for _ in range(400)]
    refsets = [[sent(), sent()] for _ in range(400)]
    metric = Ter()
    want = [ref.sentence_stats(h, r) for h, r in zip(hyps, refsets)]
    one, scale = stats_of(hyps, refsets, metric, threads=1)
    assert [(int(e), Fraction(int(n), scale)) for e, n in one] == want
    for _ in range(3):
        np.testing.assert_array_equal(stats_of(hyps, refsets, metric, threads=2)[0], one)


def test_runs_of_hypotheses_share_a_sentence():
    # several hypotheses per sentence in runs, sentences out of order
    hyps = ["a b c", "c b a", "a a", "b", ""]
    refsets = [["a b c"], ["b c a", "c a"]]
    ptr, ids, enc, words = encode(hyps, refsets)
    metric = Ter()
    got = metric.stats(ptr, ids, np.array([0, 2, 5]), np.array([1, 0]), enc, words)
    want = [ref.sentence_stats(h, refsets[s]) for h, s in zip(hyps, [1, 1, 0, 0, 0])]
    scale = metric.ref_scale(enc)
    assert [(int(e), Fraction(int(n), scale)) for e, n in got] == want


def test_store_statistics_score_every_hypothesis(tmp_path):
    hyps = ["the small house .", "a big, big house", "", "House Small The"]
    refs = [["the small house ."], ["a big house !"], ["nothing here"], ["the small house"]]
    (tmp_path / "hyp").write_text("".join(h + "\n" for h in hyps), encoding="utf-8")
    corpus = NbestCorpus.from_plain(str(tmp_path / "hyp"), References(refs, "refs"))
    for case_sensitive in (False, True):
        metric = Ter(case_sensitive=case_sensitive)
        got = metric.store_stats(corpus)
        scale = metric.ref_scale(corpus.references)
        want = [ref.sentence_stats(h, r, case_sensitive) for h, r in zip(hyps, refs)]
        assert [(int(e), Fraction(int(n), scale)) for e, n in got] == want
        theirs = TER(case_sensitive=case_sensitive).corpus_score(hyps, [[r[0] for r in refs]])
        assert metric.corpus_score(got.sum(axis=0), scale) == pytest.approx(theirs.score / 100, abs=1e-12)


def test_lowercased_store_refuses_case_sensitive_ter(tmp_path):
    from mtplug.metrics.bleu import BleuConfig

    (tmp_path / "hyp").write_text("A b\n", encoding="utf-8")
    corpus = NbestCorpus.from_plain(str(tmp_path / "hyp"), References([["a B"]], "refs"),
                                    BleuConfig(lowercase=True))
    assert Ter().store_stats(corpus).tolist() == [[0, 2]]
    with pytest.raises(ValueError, match="lowercased"):
        Ter(case_sensitive=True).store_stats(corpus)


def test_scores_of_degenerate_statistics():
    metric = Ter()
    assert metric.corpus_score([0, 0], 1) == 0.0            # empty hypotheses and references
    assert metric.corpus_score([3, 0], 6) == 1.0            # words against empty references
    assert metric.corpus_score([3, 12], 6) == 1.5           # 3 edits over an average length of 2
    assert metric.sentence_score(np.array([1, 4], np.int32), 1) == 0.25


def test_names_and_signature_are_sacrebleus():
    for case_sensitive in (False, True):
        metric, theirs = Ter(case_sensitive=case_sensitive), TER(case_sensitive=case_sensitive)
        assert metric.name == theirs.corpus_score(["a"], [["a"]]).name
        assert metric.n_stats == 2
        # sacrebleu's signature is "nrefs:1|<ours>|version:..."
        assert "|" + metric.signature + "|" in str(theirs.get_signature())


def test_option_validation():
    for option in ("normalized", "no_punct", "asian_support"):
        with pytest.raises(ValueError, match=f"{option}.*not supported"):
            Ter(**{option: True})
    with pytest.raises(ValueError, match="expected 2 statistics"):
        Ter().corpus_score(np.zeros(3), 1)
    ptr, ids, enc, words = encode(["a"], [[]])
    with pytest.raises(ValueError, match="no references"):
        Ter().stats(ptr, ids, np.arange(2), np.arange(1), enc, words)
