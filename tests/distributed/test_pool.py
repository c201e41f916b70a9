"""Pools that stay where their work runs (mtplug.distributed.pool): the same bits for
any split of the sentences, whether the partitions come from memory or each worker
reads its own from a store file; the store's memory-mapped reader."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mtplug.cli import main
from mtplug.corpus import NbestCorpus, map_store
from mtplug.distributed import LocalEngine
from mtplug.distributed.pool import PartitionedPool, load_part
from mtplug.errors import InputError
from mtplug.metrics.expected_bleu import ExpectedBleu
from mtplug.optimizers.apro import Apro
from tests.reference.random_store import random_store


def same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.fixture(scope="module")
def corpus():
    sizes = tuple(int(x) for x in np.random.default_rng(8).integers(1, 40, 60))
    return random_store(4, sizes=sizes, gaussian=True)


@pytest.fixture(scope="module")
def store_path(corpus, tmp_path_factory):
    path = tmp_path_factory.mktemp("pool") / "store.npz"
    corpus.save(str(path))
    return str(path)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 7), st.sampled_from([0.5, 8.0]))
def test_expected_bleu_does_not_depend_on_the_partitions(seed, parts, mu):
    rng = np.random.default_rng(seed)
    corpus = random_store(seed, sizes=tuple(int(x) for x in rng.integers(1, 25, rng.integers(1, 30))),
                          gaussian=bool(seed % 2))
    w = rng.normal(size=corpus.n_features)
    v1, g1 = ExpectedBleu(corpus).gradient(w, mu)
    v2, g2 = ExpectedBleu(corpus, engine=LocalEngine(partitions=parts)).gradient(w, mu)
    v3, g3 = ExpectedBleu(corpus, threads=3).gradient(w, mu)
    assert v1 == v2 == v3 and same(g1, g2) and same(g1, g3)


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 7))
def test_apro_does_not_depend_on_the_partitions(seed, parts):
    rng = np.random.default_rng(seed)
    corpus = random_store(seed, sizes=tuple(int(x) for x in rng.integers(1, 25, rng.integers(1, 30))),
                          gaussian=bool(seed % 2))
    start = rng.normal(size=corpus.n_features)
    one = Apro(c=0.5).optimize(corpus, start, seed=0, threads=1)
    many = Apro(c=0.5).optimize(corpus, start, seed=0, threads=2, engine=LocalEngine(partitions=parts))
    assert same(one.weights, many.weights)
    assert one.info["objective"] == many.info["objective"] and one.score == many.score


def test_kept_scores_are_the_scores_of_the_last_weights_asked(corpus):
    part = load_part_of(corpus)
    rng = np.random.default_rng(0)
    w1, w2 = rng.normal(size=(2, corpus.n_features))
    first = part.kept_scores(w1, 1)
    assert same(first, part.scores(w1, 1)) and not first.flags.writeable
    assert part.kept_scores(w1.copy(), 2) is first        # the same weights: not computed again
    assert same(part.kept_scores(w2, 1), part.scores(w2, 1))
    w2[0] += 1.0                                          # the caller's array changed: other weights
    assert same(part.kept_scores(w2, 1), part.scores(w2, 1))


def load_part_of(corpus):
    """The whole corpus as one PoolPart."""
    pool = PartitionedPool.from_corpus(corpus, LocalEngine(partitions=1))
    return pool.engine.fetch(pool.parts)[0]


def test_pool_from_a_store_equals_the_store_in_memory(corpus, store_path):
    engine = LocalEngine(partitions=3)
    pool = PartitionedPool.from_store(store_path, engine)
    assert (pool.n_sentences, pool.n_hypotheses, pool.n_features) == \
        (corpus.n_sentences, corpus.n_hypotheses, corpus.n_features)
    assert pool.feature_names == corpus.feature_names and len(pool.parts) == 3
    w = np.linspace(-1, 1, corpus.n_features)
    assert pool.metric_of(w) == corpus.metric_of(w)
    assert same(pool.one_best_stats(w), corpus.corpus_stats(corpus.one_best(w)))
    start = np.linspace(1, -1, corpus.n_features)
    a = Apro().optimize(corpus, start, seed=0, threads=1)
    b = Apro().optimize(pool, start, seed=0, threads=1)
    assert same(a.weights, b.weights) and a.score == b.score
    assert ExpectedBleu(pool).gradient(w, 2.0)[1].tobytes() == ExpectedBleu(corpus).gradient(w, 2.0)[1].tobytes()


def test_pool_on_dask_workers_that_read_the_store(corpus, store_path, dask_engine):
    pool = PartitionedPool.from_store(store_path, dask_engine)
    assert {h.worker for h in pool.parts} == set(dask_engine.workers)
    start = np.linspace(-1, 1, corpus.n_features)
    local = Apro().optimize(corpus, start, seed=0, threads=1)
    remote = Apro().optimize(pool, start, seed=0, engine=dask_engine)
    assert same(local.weights, remote.weights) and local.score == remote.score
    w = np.linspace(1, -1, corpus.n_features)
    v1, g1 = ExpectedBleu(corpus).gradient(w, 3.0)
    v2, g2 = ExpectedBleu(pool).gradient(w, 3.0)
    assert v1 == v2 and same(g1, g2)


def test_optimize_apro_with_the_store_on_the_workers(corpus, store_path, dask_cluster, tmp_path, capsys):
    init = tmp_path / "init.txt"
    init.write_text("".join(f"{name} {float(x)!r}\n" for name, x in
                            zip(corpus.feature_names, np.linspace(-1, 1, corpus.n_features))))
    outs = []
    for extra in ([], ["--scheduler", dask_cluster.scheduler_address]):
        out = tmp_path / f"w{len(outs)}.txt"
        assert main(["optimize", "apro", "--store", store_path, "--init", str(init), "--out", str(out), "-q",
                     "--threads", "1", *extra]) == 0
        outs.append(out.read_bytes())
        json.loads(capsys.readouterr().out)
    assert outs[0] == outs[1]


def test_a_worker_that_sees_another_store_is_an_input_error(store_path, tmp_path):
    arrays = map_store(store_path)
    n = int(arrays["sent_offsets"][-1])
    meta = dict(metric="bleu", ref_len_divisor=1, linear_scale=1.0)
    with pytest.raises(InputError, match="another store"):
        load_part((store_path, 0, 1, n + 1, os.path.getsize(store_path), meta))
    with pytest.raises(InputError, match="shared file system"):
        load_part((str(tmp_path / "missing.npz"), 0, 1, n, 10, meta))


def test_map_store_maps_the_large_arrays_and_reads_what_load_reads(corpus, tmp_path):
    big = random_store(2, sizes=(400,) * 30, gaussian=True)
    path = str(tmp_path / "big.npz")
    big.save(path)
    arrays = map_store(path)
    assert isinstance(arrays["dense"], np.memmap) and not isinstance(arrays["sent_offsets"], np.memmap)
    loaded = NbestCorpus.load(path)
    for name in ("dense", "stats", "sparse_ids", "sparse_values", "sent_offsets"):
        assert same(np.asarray(arrays[name]), getattr(loaded, name)) and same(getattr(loaded, name),
                                                                            getattr(big, name))
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(InputError, match="not an mtplug store"):
        map_store(str(tmp_path / "junk.npz"))


class RecordingEngine(LocalEngine):
    """A LocalEngine of 3 partitions that records how many bytes each fetch would carry
    back over the network."""

    def __init__(self):
        super().__init__(partitions=3)
        self.fetched: list[int] = []

    def fetch(self, handles):
        import pickle

        values = super().fetch(handles)
        self.fetched.append(len(pickle.dumps(values)))
        return values


def test_nothing_of_the_size_of_the_pool_travels_back(tmp_path):
    big = random_store(6, sizes=(300,) * 40, gaussian=True)      # 12,000 hypotheses
    path = str(tmp_path / "big.npz")
    big.save(path)
    engine = RecordingEngine()
    pool = PartitionedPool.from_store(path, engine)
    start = np.zeros(pool.n_features)
    Apro(max_iterations=3).optimize(pool, start, seed=0, threads=1, engine=engine)
    ExpectedBleu(pool).gradient(start + 0.1, 1.0)
    store_bytes = big.dense.nbytes + big.stats.nbytes
    # exact sums are n_features x 544 bytes, per-partition totals and statuses smaller still
    assert engine.fetched and max(engine.fetched) < 3 * pool.n_features * 600 + 10_000 < store_bytes / 20
