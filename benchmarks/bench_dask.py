"""dask.distributed against one machine: decoding shards and the APRO / expected-BLEU passes.

    python benchmarks/bench_dask.py [--repeats 10] [--ms-per-line 20] [--workers 2]
        [--sentences 2000] [--nbest 300] [--repeat 3] [--pool-nbest 1000] [--pool-iterations 10]

1. Decoding: the tuning loop's ``decode`` (mtplug/tuning/loop.py) of the bundled 60-sentence
   tuning set repeated ``--repeats`` times (the stand-in decoder, slowed to
   ``--ms-per-line`` ms of CPU per sentence by benchmarks/slow_standin.py) in ``--workers``
   shards, run (a) as local processes (``--jobs``) and (b) on a dask LocalCluster of that
   many worker processes (``--scheduler``). Prints both wall times; the n-best files must
   be byte-identical.
2. Kernels: one APRO loss+gradient evaluation and one expected-BLEU gradient over
   S × k synthetic hypotheses (15 dense features), in one process with ``--workers``
   threads and on the cluster (one partition per worker, one thread each). Prints the
   best of ``--repeat`` timings; the results must be bit-identical. Then APRO on S × 100
   hypotheses with 5 of 10^6 sparse features each: the time, and the bytes the driver
   fetches per loss+gradient (each worker's exact sums of 10^6 features, packed: without
   packing 544 bytes per feature).
3. A store that stays on the workers: APRO (``--pool-iterations`` Newton iterations) on
   an S × ``--pool-nbest`` store saved to a file, run in a fresh process that (a) loads the store
   and trains on ``--workers`` threads, (b) opens it as a PartitionedPool whose workers
   read their own sentences (``mtplug optimize apro --store F --scheduler A``). Prints
   the wall time and peak memory of that process; the weights must be bit-identical.
Also prints the peak memory of this process (the workers' is their own).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from _common import best_time, peak_rss_mb, synthetic_store  # noqa: E402

TOY = HERE.parent / "mtplug" / "data" / "example"
INI = "[weight]\nDistortion0= 0.3\nLM0= 0.5\nWordPenalty0= -1\nPhrasePenalty0= 0.2\n" \
      "TranslationModel0= 0.2 0.2 0.2 0.2\nUnknownWordPenalty0= 1\n"


def decoding(a, engine) -> None:
    from mtplug.decoders import get_decoder
    from mtplug.tuning.config import TuneConfig
    from mtplug.tuning.loop import decode

    tmp = Path(tempfile.mkdtemp(prefix="bench-dask-"))
    sources = [f"s{i}" for i in range(60)]
    (tmp / "sources.txt").write_text("".join(s + "\n" for s in sources))
    lines = sources * a.repeats
    (tmp / "dev.src").write_text("".join(s + "\n" for s in lines))
    (tmp / "moses.ini").write_text(INI)
    os.environ["STANDIN_MS_PER_LINE"] = str(a.ms_per_line)
    cmd = shlex.join([sys.executable, str(HERE / "slow_standin.py"), "moses", "-standin-source",
                      str(tmp / "sources.txt")])
    times, outputs = {}, {}
    for how in ("local processes", "dask workers"):
        cfg = TuneConfig(decoder="moses", decoder_bin=cmd, config=str(tmp / "moses.ini"), input=str(tmp / "dev.src"),
                         ref=[str(TOY / "ref.0")], workdir=str(tmp), nbest=100, jobs=a.workers)
        decoder = get_decoder(cfg)
        folder = tmp / how.replace(" ", "-")
        folder.mkdir()
        decoder.prepare(str(folder), decoder.start_weights())
        t = time.perf_counter()
        nbest, _ = decode(decoder, cfg, str(folder), lines, None, engine if how == "dask workers" else None)
        times[how] = time.perf_counter() - t
        outputs[how] = Path(nbest).read_bytes()
    assert outputs["local processes"] == outputs["dask workers"], "n-best lists differ"
    n = len(lines)
    for how, t in times.items():
        print(f"decode {n} sentences ({a.ms_per_line} ms CPU each) in {a.workers} shards, {how:15s}: "
              f"{t:7.2f} s ({n / t:6.1f} sentences/s)")
    print(f"    dask / local wall time: {times['dask workers'] / times['local processes']:.2f}")


def kernels(a, engine) -> None:
    from mtplug.metrics.expected_bleu import ExpectedBleu
    from mtplug.optimizers.apro import Apro
    corpus = synthetic_store(a.sentences, a.nbest)
    n = corpus.n_hypotheses
    w = np.random.default_rng(3).normal(size=corpus.n_features) * 0.1
    results = {}
    for how, eng, threads in (("1 process", None, a.workers), ("dask", engine, 1)):
        obj = Apro(c=1.0).objective(corpus, threads=threads, engine=eng)
        t_apro = best_time(lambda: obj.at(w), a.repeat)
        exp = ExpectedBleu(corpus, threads=threads, engine=eng)
        t_exp = best_time(lambda: exp.gradient(w, 1.0), a.repeat)
        results[how] = (obj.at(w).grad, exp.gradient(w, 1.0)[1])
        print(f"{how:9s} ({a.workers} {'threads' if eng is None else 'workers'}): APRO loss+gradient "
              f"{t_apro * 1e3:8.1f} ms ({n / t_apro / 1e6:.2f} M hyp/s), expected-BLEU gradient "
              f"{t_exp * 1e3:8.1f} ms ({n / t_exp / 1e6:.2f} M hyp/s) over {n:,} hypotheses")
    same = all(x.tobytes() == y.tobytes() for x, y in zip(results["1 process"], results["dask"]))
    print(f"    bit-identical: {same}")
    assert same
    sparse_features(a, engine)


def _nbytes(x) -> int:
    if isinstance(x, np.ndarray):
        return x.nbytes
    if isinstance(x, (tuple, list)):
        return sum(_nbytes(y) for y in x)
    return 0


def sparse_features(a, engine) -> None:
    from mtplug.corpus import NbestCorpus
    from mtplug.optimizers.apro import Apro

    n_sparse, k = 1_000_000, 100
    base = synthetic_store(a.sentences, k)
    n = base.n_hypotheses
    rng = np.random.default_rng(7)
    sparse = (np.arange(n + 1, dtype=np.int64) * 5, rng.integers(0, n_sparse, 5 * n).astype(np.int32),
              rng.normal(size=5 * n))
    corpus = NbestCorpus.from_arrays(np.repeat(np.arange(a.sentences), k), base.dense, base.space.feature_names[:15], base.stats,
                                     sparse=sparse, sparse_names=[f"S{j}" for j in range(n_sparse)])
    w = np.random.default_rng(3).normal(size=corpus.n_features) * 0.1
    grads = {}
    for how, eng, threads in (("1 process", None, a.workers), ("dask", engine, 1)):
        obj = Apro(c=1.0).objective(corpus, threads=threads, engine=eng)
        fetched = []
        if eng is not None:
            fetch = eng.fetch
            eng.fetch = lambda handles: fetched.append(_nbytes(result := fetch(handles))) or result
        try:
            t = best_time(lambda: obj.at(w), a.repeat)
            fetched.clear()
            grads[how] = obj.at(w).grad
        finally:
            if eng is not None:
                del eng.fetch
        extra = (f", {sum(fetched) / 2**20:.1f} MB fetched per evaluation (plain accumulators: "
                 f"{a.workers * corpus.n_features * 544 / 2**20:.0f} MB)") if eng is not None else ""
        print(f"{how:9s}: APRO loss+gradient with 15 dense + 5 of {n_sparse:,} sparse features per hypothesis, "
              f"{n:,} hypotheses: {t * 1e3:8.1f} ms{extra}")
    same = grads["1 process"].tobytes() == grads["dask"].tobytes()
    print(f"    bit-identical: {same}")
    assert same


_POOL_RUN = """
import json, sys, time
import numpy as np
from mtplug.optimizers.apro import Apro
path, mode, address, threads, iterations = sys.argv[1:6]
t = time.perf_counter()
engine = None
if mode == "here":
    from mtplug.corpus import NbestCorpus
    corpus = NbestCorpus.load(path)
else:
    from mtplug.distributed import connect
    from mtplug.distributed.pool import PartitionedPool
    engine = connect(address, quiet=True)
    corpus = PartitionedPool.from_store(path, engine)
res = Apro(c=1.0, max_iterations=int(iterations)).optimize(corpus, np.zeros(corpus.n_features), 0,
                                                         threads=int(threads), engine=engine)
# VmHWM: the peak of this process image (ru_maxrss would carry the forking parent's over exec)
hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
# bleu as a fraction, as the report below prints it (Result.score is 0-100)
print(json.dumps(dict(seconds=time.perf_counter() - t, weights=res.weights.tolist(), bleu=res.score / 100,
                      rss=hwm / 1024)))
"""


def pool_on_workers(a, engine) -> None:
    import json
    import subprocess

    corpus = synthetic_store(a.sentences, a.pool_nbest)
    with tempfile.TemporaryDirectory(prefix="bench-pool-") as tmp:
        path = os.path.join(tmp, "store.npz")
        corpus.save(path)
        size = os.path.getsize(path) / 2**20
        del corpus
        runs = {}
        for how, mode, threads in (("store loaded here", "here", a.workers), ("store on the workers", "pool", 1)):
            out = subprocess.run([sys.executable, "-c", _POOL_RUN, path, mode, engine.client.scheduler.address,
                                  str(threads), str(a.pool_iterations)], check=True, capture_output=True, text=True,
                                 cwd=str(HERE.parent)).stdout
            runs[how] = json.loads(out.strip().splitlines()[-1])
            print(f"APRO, {a.pool_iterations} Newton iterations on a {size:.0f} MB store, {how:20s}: "
                  f"{runs[how]['seconds']:6.2f} s, peak memory of the driver {runs[how]['rss']:6.0f} MB "
                  f"(BLEU {runs[how]['bleu']:.6f})")
    same = runs["store loaded here"]["weights"] == runs["store on the workers"]["weights"]
    print(f"    bit-identical weights: {same}")
    assert same


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=10, help="copies of the 60-sentence set to decode (default 10)")
    p.add_argument("--ms-per-line", type=float, default=20.0, help="decoder CPU per sentence (default 20 ms)")
    p.add_argument("--workers", type=int, default=2, help="local jobs / dask workers / threads (default 2)")
    p.add_argument("--sentences", type=int, default=2000)
    p.add_argument("--nbest", type=int, default=300)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--pool-iterations", type=int, default=10, help="APRO Newton iterations of part 3 (default 10)")
    p.add_argument("--pool-nbest", type=int, default=1000, help="hypotheses per sentence of part 3 (default 1000)")
    a = p.parse_args()
    from mtplug.distributed import connect

    t = time.perf_counter()
    with connect(f"local:{a.workers}", quiet=True) as engine:
        print(f"LocalCluster of {a.workers} worker processes up in {time.perf_counter() - t:.1f} s")
        decoding(a, engine)
        kernels(a, engine)
        pool_on_workers(a, engine)
    print(f"peak memory of this process: {peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
