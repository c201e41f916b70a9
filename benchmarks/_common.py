"""Small helpers shared by the benchmark scripts (not part of the package)."""

from __future__ import annotations

import json
import os
import resource
import time
from pathlib import Path

import numpy as np


def peak_rss_mb() -> float:
    """Peak resident memory of this process in MB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def start_weights(store_path: str, n_features: int) -> np.ndarray:
    """The start point of a benchmark store: init.opt next to its work/ directory (as
    benchmarks/synth.py and bench_mert.py lay it out), else all ones."""
    init_opt = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(store_path))), "init.opt")
    if os.path.exists(store_path) and os.path.exists(init_opt):
        from mtplug.formats.mert_weights import read_init_opt

        return read_init_opt(init_opt).start
    return np.ones(n_features)


def best_time(fn, repeat: int) -> float:
    """The fastest of ``repeat`` timed calls of fn(), in seconds."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def load_store(path: str, fallback):
    """``(corpus without hypothesis strings, description)``: the store at ``path`` if it
    exists, else ``fallback()`` (the optimizers read features and statistics only)."""
    if os.path.exists(path):
        from mtplug.corpus import NbestCorpus

        corpus, source = NbestCorpus.load(path), path
    else:
        corpus, source = fallback(), "in-memory synthetic store (seed 0)"
    corpus.hyp_indptr = corpus.hyp_bytes = None
    return corpus, source


def synthetic_store(S: int, k: int, n_dense: int = 15, seed: int = 2):
    """An NbestCorpus of S sentences × k hypotheses with ``n_dense`` normal features and
    random valid BLEU statistics (matches <= totals, decreasing with the order)."""
    from mtplug.corpus import NbestCorpus

    rng = np.random.default_rng(seed)
    n = S * k
    stats = np.zeros((n, 9), dtype=np.int32)
    stats[:, 1] = rng.integers(10, 40, n)
    for j in (3, 5, 7):
        stats[:, j] = np.maximum(stats[:, j - 2] - 1, 0)
    for j in (0, 2, 4, 6):
        stats[:, j] = rng.integers(1, 10, n) * (stats[:, j + 1] > 0)
        stats[:, j] = np.minimum(stats[:, j], stats[:, j + 1])
    stats[:, 8] = rng.integers(10, 40, n)
    return NbestCorpus.from_arrays(np.repeat(np.arange(S), k), rng.normal(size=(n, n_dense)),
                                   [f"F{j}" for j in range(n_dense)], stats)


def read_results(path: Path) -> dict:
    """A benchmark's results file (JSON), {} while it does not exist."""
    return json.loads(path.read_text()) if path.exists() else {}


def write_results(path: Path, results: dict) -> None:
    """``results`` to ``path`` (sorted keys), whole or not at all: a killed run leaves the
    last complete file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    tmp.replace(path)
