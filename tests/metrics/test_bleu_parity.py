"""End to end: statistics from the compiled scanner + corpus BLEU = sacrebleu (tokenize none)."""

from __future__ import annotations

import sacrebleu
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplug.corpus import NbestCorpus
from mtplug.formats.references import References

EPSILON = 1e-9
WORDS = ["the", "a", "house", "is", "small", "big", ".", ",", "Haus", "ß"]
sentence = st.lists(st.sampled_from(WORDS), min_size=0, max_size=15).map(" ".join)


@settings(max_examples=80, deadline=None)
@given(data=st.data(), n_refs=st.integers(1, 3))
def test_corpus_bleu_equals_sacrebleu(tmp_path_factory, data, n_refs):
    n = data.draw(st.integers(1, 6))
    hyps = [data.draw(sentence) for _ in range(n)]
    refs = [[data.draw(sentence) for _ in range(n)] for _ in range(n_refs)]
    d = tmp_path_factory.mktemp("parity")
    (d / "hyp").write_text("".join(h + "\n" for h in hyps), encoding="utf-8")
    corpus = NbestCorpus.from_plain(str(d / "hyp"), References([list(r) for r in zip(*refs)], "refs"))
    ours = corpus.bleu_of_rows(corpus.sent_offsets[:-1])
    theirs = sacrebleu.metrics.BLEU(tokenize="none", smooth_method="none").corpus_score(hyps, refs)
    assert abs(ours.score * 100 - theirs.score) < EPSILON
    assert ours.sys_len == theirs.sys_len and ours.ref_len == theirs.ref_len
    for p, q in zip(ours.precisions, theirs.precisions):
        assert abs(p * 100 - q) < EPSILON
