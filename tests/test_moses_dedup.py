"""The compiled Moses duplicate removal (``_rows.moses_duplicates`` through
``NbestCorpus.merge_arrays(dedup="moses")``) against the plain reference."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplug.corpus import NbestCorpus

from .reference.moses_dedup import moses_remove_duplicates, row_key

# few distinct values so that duplicates are common; 0.1 and 0.1 + 1e-9 are equal as floats
VALUES = [0.0, 1.0, -2.5, 0.1, 0.1 + 1e-9, 3.0]


@st.composite
def sentences(draw):
    n_sent = draw(st.integers(1, 4))
    rows = []
    for s in range(n_sent):
        for _ in range(draw(st.integers(0, 12))):
            dense = draw(st.lists(st.sampled_from(VALUES), min_size=2, max_size=2))
            n_sp = draw(st.integers(0, 2))
            ids = sorted(draw(st.lists(st.integers(0, 2), min_size=n_sp, max_size=n_sp, unique=True)))
            vals = draw(st.lists(st.sampled_from(VALUES), min_size=n_sp, max_size=n_sp))
            stats = draw(st.sampled_from([[1] * 9, [2] * 9]))
            rows.append((s, dense, ids, vals, stats))
    return rows


@settings(max_examples=300, deadline=None)
@given(sentences())
def test_kernel_equals_the_reference(rows):
    sids = np.array([r[0] for r in rows], dtype=np.int32)
    dense = np.array([r[1] for r in rows], dtype=np.float64).reshape(len(rows), 2)
    indptr = np.cumsum([0] + [len(r[2]) for r in rows]).astype(np.int64)
    ids = np.array([i + 2 for r in rows for i in r[2]], dtype=np.int32)   # after the 2 dense columns
    vals = np.array([v for r in rows for v in r[3]], dtype=np.float64)
    stats = np.array([r[4] for r in rows], dtype=np.int32).reshape(len(rows), 9)
    corpus = NbestCorpus(n_sentences=0, has_strings=False)
    corpus.stats = np.zeros((0, 9), np.int32)
    corpus.space.define_dense(["A_0", "B_0"])
    for name in ("s0", "s1", "s2"):
        corpus.space.names.add(name.encode())
    corpus.merge_arrays({"sent_ids": sids, "dense": dense, "sparse_indptr": indptr, "sparse_ids": ids,
                         "sparse_values": vals, "stats": stats}, dedup="moses")
    got = []
    for s in range(corpus.n_sentences):
        for h in range(corpus.sent_offsets[s], corpus.sent_offsets[s + 1]):
            sp = corpus.sparse_row(h)
            got.append((s, row_key(corpus.dense[h], [i for i, _ in sp], [v for _, v in sp], corpus.stats[h])))
    want = []
    for s in sorted(set(sids.tolist())):
        mine = [k for k in range(len(rows)) if rows[k][0] == s]
        keys = [row_key(dense[k], ids[indptr[k]:indptr[k + 1]], vals[indptr[k]:indptr[k + 1]], stats[k]) for k in mine]
        want += [(s, keys[p]) for p in moses_remove_duplicates(keys)]
    assert got == want
