"""The dtrain loop: epochs over the input, decoding with the current weights, updating.

One shard (``shards=1``, dtrain itself)::

    for each epoch t:
        for each sentence (or mini-batch; the whole input with ``batch``):
            k-best list ← decoder(sentence, current weights)
            scores ← scorer(k-best)          (k-best order; position 0 is the 1-best)
            update (mtplug.dtrain.update)    (unless noup)
        batch update, scorer reset; record the epoch's weights for select_weights

Several shards (``shards=N``, cdec's parallelize.rb): every epoch each shard runs one
such epoch from the mixed weights with fresh state (a new dtrain process in cdec),
the shards run in a thread pool, and their weights are mixed in shard order
(:mod:`mtplug.dtrain.mixing`). ``select_weights`` then picks among the mixed weights
of the epochs. The result does not depend on the number of workers.

``select_weights``: ``last``; ``avg`` (the mean of the weights at the end of each
epoch, as dtrain); ``best`` (the epoch whose 1-best average score — measured while
decoding that epoch — is highest, first one on ties); ``VOID`` (none).
"""

from __future__ import annotations

import os
import shlex
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .._ext._nbest_scan import Vocabulary
from ..corpus import FeatureSpace
from ..decoders.cdec import source_words
from ..errors import InputError
from ..fileio import read_text_lines
from ..metrics.bleu import N_STATS, corpus_bleu_from_stats
from ..metrics.layer import SCALE
from ..start_weights import check_match
from .decoder import CdecCalls
from .mixing import make_shards, mix
from .persistent import PersistentCdec
from .scorers import Scorer
from .update import Learner, SentenceStats
from .weights_io import read_start_weights, write_weights

Log = Callable[[str], None]


# ---------------------------------------------------------------------------- data
def load_data(cfg, stdin=None) -> tuple[list[str], list[str]]:
    """(source lines, reference lines) from ``bitext`` or ``input`` + ``refs``."""
    if cfg.bitext:
        src, ref = [], []
        for no, line in enumerate(read_text_lines(cfg.bitext), 1):
            parts = line.split(" ||| ")
            if len(parts) < 2:
                raise InputError("expected 'source ||| reference'", cfg.bitext, no)
            src.append(parts[0])
            ref.append(parts[1])
    else:
        if cfg.input == "-":
            src = [line.rstrip("\r\n") for line in (stdin or sys.stdin)]
        else:
            src = read_text_lines(cfg.input)
        ref = read_text_lines(cfg.refs)
        if len(ref) != len(src):
            raise InputError(f"has {len(ref)} lines, the input has {len(src)}", cfg.refs)
    if not src:
        raise InputError("no input sentences", cfg.bitext or cfg.input)
    return src, ref


# ---------------------------------------------------------------------------- statistics
@dataclass
class EpochStats:
    """Sums over the sentences of one epoch (all shards); averages via :meth:`summary`."""

    sentences: int = 0
    score_sum: float = 0.0       # per-sentence score of the 1-best (dtrain's "1best avg score")
    model_sum: float = 0.0
    pairs: int = 0
    updates: int = 0
    rank_errors: int = 0
    margin_violations: int = 0
    loss_improved: int = 0       # sentences whose pair loss did not grow through the update
    list_size: int = 0
    feature_count: int = 0
    batch_loss: float = 0.0
    onebest_stats: np.ndarray = field(default_factory=lambda: np.zeros(N_STATS, np.int64))
    seconds: float = 0.0
    decode_seconds: float = 0.0  # in the decoder's calls, summed over shards

    def add_sentence(self, st: SentenceStats) -> None:
        """Add one sentence's update counts (pairs, updates, errors, whether its loss did not grow)."""
        self.pairs += st.pairs
        self.updates += st.updates
        self.rank_errors += st.rank_errors
        self.margin_violations += st.margin_violations
        self.loss_improved += int(st.loss_before - st.loss_after >= 0)

    def merge(self, other: EpochStats) -> None:
        """Add the sums of ``other`` (another shard's, same epoch) to these, in place."""
        for name in ("sentences", "score_sum", "model_sum", "pairs", "updates", "rank_errors",
                     "margin_violations", "loss_improved", "list_size", "feature_count", "batch_loss",
                     "decode_seconds"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.onebest_stats = self.onebest_stats + other.onebest_stats

    @property
    def avg_score(self) -> float:
        """Mean per-sentence score of the 1-best (dtrain's "1best avg score"; 0 with no sentences)."""
        return self.score_sum / self.sentences if self.sentences else 0.0

    def summary(self, epoch: int, nonzero: int) -> dict:
        """The epoch's JSON record: averages per sentence, ``avg_score`` (the scorer's
        per-sentence score of the 1-best) and ``bleu`` (corpus BLEU of the 1-bests) on the
        0-100 scale of every mtplug score, ``nonzero`` (weights that are not 0), the
        epoch's seconds and the seconds spent in the decoder (summed over shards, so
        above the epoch's wall time when shards decode at once), for epoch number ``epoch``."""
        n = max(self.sentences, 1)
        return {
            "epoch": epoch,
            "avg_score": SCALE * self.avg_score,
            "avg_model_score": self.model_sum / n,
            "bleu": SCALE * corpus_bleu_from_stats(self.onebest_stats).score if self.sentences else 0.0,
            "avg_pairs": self.pairs / n,
            "avg_updates": self.updates / n,
            "avg_rank_errors": self.rank_errors / n,
            "avg_margin_violations": self.margin_violations / n,
            "kbest_loss_improved": self.loss_improved / n,
            "batch_loss": self.batch_loss,
            "avg_list_size": self.list_size / n,
            "avg_feature_count": self.feature_count / max(self.list_size, 1),
            "nonzero_weights": nonzero,
            "sentences": self.sentences,
            "seconds": self.seconds,
            "decode_seconds": self.decode_seconds,
        }


# ---------------------------------------------------------------------------- one shard
class ShardTrainer:
    """dtrain on one list of sentences: its own feature/word vocabularies, learner, scorer.

    ``cfg``: the :class:`mtplug.dtrain.config.DtrainConfig`; ``decoder``: what gives k-best
    lists (:func:`make_decoder`); ``inputs``/``refs``: all source
    sentences and references; ``positions``: the indices of this shard's sentences, in
    visiting order (cut to ``stop_after``); ``start``: start weights by name; ``progress``:
    called with 1 per sentence; ``verbose``: a log function for per-sentence messages.
    """

    def __init__(self, cfg, decoder, inputs: Sequence[str], refs: Sequence[str], positions: Iterable[int],
                 start: dict[str, float], *, progress: Callable[[int], None] | None = None,
                 verbose: Log | None = None):
        self.cfg, self.decoder = cfg, decoder
        self.inputs, self.refs = inputs, refs
        self.visit(positions)
        self.words = Vocabulary()
        self.space = FeatureSpace()
        for name in start:
            self.space.names.add(name.encode("utf-8"))
        self._names = list(start)
        self._unchecked = list(start)   # start weights still to check against the first k-best lists
        self.learner = Learner(cfg, weights=list(start.values()))
        self.scorer = Scorer(cfg.scorer_name, cfg.N, cfg.approx_bleu_d)
        self.progress = progress
        self.verbose = verbose

    def visit(self, positions: Iterable[int]) -> None:
        """Visit these sentence indices from the next epoch on, in this order (cut to ``stop_after``)."""
        order = list(positions)
        self.positions = order[: self.cfg.stop_after] if self.cfg.stop_after else order

    def names(self) -> list[str]:
        """Feature names by id (cached; the scanner adds names as it meets them)."""
        vocab = self.space.names
        if len(self._names) < len(vocab):
            self._names.extend(vocab.word(i) for i in range(len(self._names), len(vocab)))
        return self._names

    def weights(self) -> dict[str, float]:
        """The epoch's non-zero weights, ``{name: value}`` in feature-id order: the current
        ones, or with ``update=mira`` and ``mira_average`` their average (:meth:`Learner.averaged`)."""
        names, w = self.names(), self.learner.averaged()
        return {names[i]: float(w[i]) for i in np.flatnonzero(w)}

    def run_epoch(self) -> EpochStats:
        """One pass over the shard's sentences: decode each batch (all of them with
        ``batch``, else ``minibatch`` at a time) with the current weights, score and update
        per sentence; returns the epoch's sums. Resets the scorer's context at the end."""
        cfg, learner = self.cfg, self.learner
        es = EpochStats()
        t0 = time.perf_counter()
        n = len(self.positions)
        chunk = n if cfg.batch else cfg.minibatch
        for a in range(0, n, chunk):
            pos = self.positions[a:a + chunk]
            learner.grow(len(self.space.names))
            w_dec = learner.w.copy()
            t_dec = time.perf_counter()
            kbs = self.decoder.decode([self.inputs[i] for i in pos], [self.refs[i] for i in pos],
                                      self.names(), w_dec, self.words, self.space)
            es.decode_seconds += time.perf_counter() - t_dec
            learner.grow(len(self.space.names))
            w_dec = np.concatenate([w_dec, np.zeros(len(learner.w) - len(w_dec))])
            if self._unchecked:
                self._check_start(kbs)
            for i, kb in zip(pos, kbs):
                self._sentence(i, kb, w_dec, es)
                if self.progress is not None:
                    self.progress(1)
        es.batch_loss = learner.end_epoch()
        self.scorer.reset()
        es.seconds = time.perf_counter() - t0
        return es

    def _check_start(self, kbs) -> None:
        """The start weights against the features of the first decoded k-best lists, by the
        rule of ``mtplug optimize --weights`` (:func:`mtplug.start_weights.check_match`):
        InputError when none names a feature. cdec's k-best lists have no dense block, so
        a partial match is normal (sparse features start at 0) and not reported."""
        ids = np.unique(np.concatenate([kb.ids for kb in kbs] or [np.zeros(0, np.int64)]))
        names = self.names()
        seen = [names[i] for i in ids.tolist()]
        if seen:
            check_match(self._unchecked, seen, 0, self.cfg.input_weights, where="the decoder's k-best lists")
            self._unchecked = []

    def _sentence(self, i: int, kb, w_dec: np.ndarray, es: EpochStats) -> None:
        cfg, learner = self.cfg, self.learner
        es.sentences += 1
        if kb.k == 0:
            if self.verbose:
                self.verbose(f"sentence {i}: the decoder gave no k-best list")
            return
        scores = self.scorer.score(kb.stats, source_words(self.inputs[i]))
        model = kb.model(w_dec)
        es.list_size += kb.k
        es.feature_count += len(kb.ids)
        best, best_model = 0, float(model[0])
        st = None
        if not cfg.noup:
            st = learner.step(kb, scores, model)
            es.add_sentence(st)
            if cfg.effective_repeat > 1:  # dtrain reports the best list entry under the new weights
                new_model = kb.model(learner.w)
                best = int(np.argmax(new_model))
                best_model = float(new_model[best])
        es.score_sum += float(scores[best])
        es.model_sum += best_model
        es.onebest_stats += kb.stats[best]
        if self.verbose:
            text = kb.texts[best] if kb.texts else ""
            extra = f", {st.pairs} pairs, {st.updates} updates" if st is not None else ""
            self.verbose(f"sentence {i}: {kb.k} hypotheses, 1-best score {scores[best]:.4f}{extra}: {text}")


def make_decoder(cfg, command, label: str = "shard 0") -> CdecCalls | PersistentCdec:
    """What decodes for one shard: a :class:`PersistentCdec` (``decoder_process=persistent``:
    one process for the shard's whole run) or :class:`CdecCalls` (``per_call``)."""
    if cfg.decoder_process == "persistent":
        return PersistentCdec(command, cfg.decoder_config, cfg.k, unique=cfg.filter == "uniq",
                              timeout=cfg.decoder_timeout, label=label)
    return CdecCalls(command, cfg.decoder_config, cfg.k, unique=cfg.filter == "uniq", timeout=cfg.decoder_timeout)


def decoder_counts(decoder) -> dict[str, int]:
    """A persistent decoder's counts (``weight_lines``, ``repaired``, ``fallbacks``:
    :class:`PersistentCdec`); empty for a per-call one."""
    if not isinstance(decoder, PersistentCdec):
        return {}
    return {"weight_lines": decoder.weight_lines, "repaired": decoder.repaired, "fallbacks": decoder.fallbacks}


def _shard_epoch(cfg, decoder, inputs, refs, positions, start, progress, verbose):
    trainer = ShardTrainer(cfg, decoder, inputs, refs, positions, start, progress=progress, verbose=verbose)
    stats = trainer.run_epoch()
    return trainer.weights(), stats, trainer.learner.check_lines


def _sentences_per_epoch(cfg, shards) -> int:
    """Sentences an epoch visits: every shard's, or its first ``stop_after``."""
    return sum(min(len(s), cfg.stop_after) if cfg.stop_after else len(s) for s in shards)


def _remote_shard_epoch(job) -> tuple:
    """One shard's epoch on a dask worker: its own decoder calls in a temporary folder
    there (with ``decoder_process=persistent`` one process for the shard's epoch). job: (cfg,
    decoder argv, inputs, refs, positions, weights, verbose: bool[, shard]). Returns (weights,
    EpochStats, check lines, decoder calls, per-sentence lines: empty unless verbose,
    decoder processes started, :func:`decoder_counts`)."""
    cfg, argv, inputs, refs, positions, weights, verbose, *rest = job
    decoder = make_decoder(cfg, argv, f"shard {rest[0] if rest else 0}")
    lines: list[str] = []
    try:
        out = _shard_epoch(cfg, decoder, inputs, refs, positions, weights, None, lines.append if verbose else None)
        return (*out, decoder.calls, lines, getattr(decoder, "starts", decoder.calls), decoder_counts(decoder))
    finally:
        decoder.close()


# ---------------------------------------------------------------------------- the run
@dataclass
class DtrainResult:
    """What a dtrain run returns: the weights to write (by name), one summary per epoch,
    the chosen epoch, the seed and shard count, the decoder calls made, the run time in
    seconds and the last epoch's weights (what ``select_weights last`` writes)."""

    weights: dict | None          # the selected weights (None for noup / VOID)
    epochs: list                     # EpochStats.summary() per epoch
    best_epoch: int                  # 1-based
    seed: int
    shards: int
    decoder_calls: int
    seconds: float
    last_weights: dict = field(default_factory=dict)
    decoder_starts: int = 0          # decoder processes started (per_call: one per call)
    decoder_stats: dict = field(default_factory=dict)   # persistent decoders' counts, summed over shards


class _Selector:
    """select_weights over the epochs' weights."""

    def __init__(self, how: str):
        self.how = how
        self.sum: dict[str, float] = {}
        self.count = 0
        self.best: dict | None = None
        self.best_score = 0.0
        self.best_epoch = 0

    def add(self, epoch: int, weights: dict, score: float) -> None:
        self.count += 1
        if self.how == "avg":
            for name, value in weights.items():
                self.sum[name] = self.sum.get(name, 0.0) + value
        # dtrain: best_it starts at the first epoch, max_score at 0; a strictly higher score wins
        if self.best_epoch == 0 or score > self.best_score:
            self.best_epoch = epoch
            self.best_score = max(score, self.best_score)
            if self.how == "best":
                self.best = dict(weights)

    def result(self, last: dict, epochs: int) -> dict | None:
        if self.how == "last":
            return last
        if self.how == "avg":
            return {name: value / epochs for name, value in self.sum.items()}
        if self.how == "best":
            return self.best
        return None


def run_dtrain(cfg, decoder_command, *, log: Log | None = None, verbose: Log | None = None,
               progress_factory: Callable[[int], tuple] | None = None, workers: int = 1,
               keep_dir: str | None = None, stdin=None, engine=None) -> DtrainResult:
    """Train as cdec's dtrain (and parallelize.rb for ``shards > 1``) with the decoder in the loop.

    ``decoder_command``: the cdec program (or command line). ``log``: per-epoch lines;
    ``verbose``: per-sentence lines; ``progress_factory(total)``: returns ``(update, close)``,
    update called with 1 per sentence (e.g. a tqdm bar);
    ``workers``: threads for shards (the result does not depend on it); ``engine``: a dask
    engine (:func:`mtplug.distributed.connect`) runs the shards (``shards > 1``) on its
    workers instead, each with its own decoder calls there (same result; progress and the
    ``verbose`` lines come per shard, when it ends); ``keep_dir``: where ``keep`` writes
    ``weights.<epoch>.gz`` (default: the current directory).
    """
    log = log or (lambda m: None)
    t_run = time.perf_counter()
    inputs, refs = load_data(cfg, stdin)
    start = read_start_weights(cfg.input_weights)
    # one decoder per shard slot, kept across epochs (a persistent one keeps its process)
    decoders: dict[int, CdecCalls | PersistentCdec] = {}

    def decoder_of(index: int):
        if index not in decoders:
            decoders[index] = make_decoder(cfg, decoder_command, f"shard {index}")
        return decoders[index]

    remote_calls = remote_starts = 0
    remote_stats: dict[str, int] = {}
    pool: ThreadPoolExecutor | None = None
    selector = _Selector(cfg.select_weights)
    summaries = []
    prev_score = 0.0
    lock = threading.Lock()
    per_epoch = _sentences_per_epoch(cfg, make_shards(len(inputs), cfg.shards) if cfg.shards > 1 else [inputs])
    progress, close_progress = (progress_factory(per_epoch * (1 if cfg.noup else cfg.epochs))
                                if progress_factory else (None, lambda: None))

    def tick(n: int) -> None:
        if progress is not None:
            with lock:
                progress(n)

    def check(lines):
        if lines:
            log("check: loss differentials per pair\n" + "\n".join(lines) + "\n---")

    try:
        weights = dict(start)
        rng = np.random.default_rng(cfg.seed) if cfg.randomize else None
        # one shard too: randomize shuffles its visiting order, reshard reshuffles it each epoch
        shards = make_shards(len(inputs), cfg.shards, rng)
        single = None
        if cfg.shards == 1:
            single = ShardTrainer(cfg, decoder_of(0), inputs, refs, shards[0], start, progress=tick, verbose=verbose)
        for t in range(cfg.epochs):
            t_epoch = time.perf_counter()
            if single is not None:
                stats = single.run_epoch()
                weights = single.weights()
                check(single.learner.check_lines)
                single.learner.check_lines = []
                if cfg.randomize and cfg.reshard and t + 1 < cfg.epochs:
                    single.visit(make_shards(len(inputs), 1, rng)[0])
            else:
                if engine is not None:
                    argv = shlex.split(decoder_command) if isinstance(decoder_command, str) else list(decoder_command)
                    remote = engine.map(_remote_shard_epoch,
                                        [(cfg, argv, inputs, refs, s, weights, verbose is not None, i)
                                         for i, s in enumerate(shards)])
                    remote_calls += sum(r[3] for r in remote)
                    remote_starts += sum(r[5] for r in remote)
                    for r in remote:
                        remote_stats = {k: remote_stats.get(k, 0) + v for k, v in r[6].items()}
                    if verbose is not None:
                        for r in remote:
                            for line in r[4]:
                                verbose(line)
                    results = [r[:3] for r in remote]
                    tick(_sentences_per_epoch(cfg, shards))
                elif workers > 1:
                    jobs = [(cfg, decoder_of(i), inputs, refs, s, weights, tick, verbose)
                            for i, s in enumerate(shards)]
                    if pool is None:
                        # one pool for the run: a persistent decoder dies with the thread that
                        # started it (PR_SET_PDEATHSIG), so its threads must outlive the decoders
                        pool = ThreadPoolExecutor(max_workers=workers)
                    results = list(pool.map(lambda job: _shard_epoch(*job), jobs))
                else:
                    results = [_shard_epoch(cfg, decoder_of(i), inputs, refs, s, weights, tick, verbose)
                               for i, s in enumerate(shards)]
                stats = EpochStats()
                for _, shard_stats, lines in results:  # shard order, whatever finished first
                    stats.merge(shard_stats)
                    check(lines)
                norm, how, x = cfg.mixer
                weights = mix([r[0] for r in results], norm, how, x)
                if cfg.randomize and cfg.reshard and t + 1 < cfg.epochs:
                    shards = make_shards(len(inputs), cfg.shards, rng)
            stats.seconds = time.perf_counter() - t_epoch
            summary = stats.summary(t + 1, len(weights))
            summaries.append(summary)
            _log_epoch(log, cfg, summary, prev_score, weights)
            prev_score = summary["avg_score"]
            if cfg.noup:
                break
            selector.add(t + 1, weights, summary["avg_score"])
            if cfg.keep:
                path = os.path.join(keep_dir or ".", f"weights.{t}.gz")
                write_weights(path, weights.items(), sep=" ")
        chosen = None if cfg.noup else selector.result(weights, cfg.epochs)
        calls = remote_calls + sum(d.calls for d in decoders.values())
        starts = remote_starts + sum(getattr(d, "starts", d.calls) for d in decoders.values())
        counts = dict(remote_stats)
        for d in decoders.values():
            counts = {k: counts.get(k, 0) + v for k, v in decoder_counts(d).items()}
        return DtrainResult(chosen, summaries, selector.best_epoch or 1, cfg.seed, len(shards), calls,
                            time.perf_counter() - t_run, weights, decoder_starts=starts, decoder_stats=counts)
    finally:
        close_progress()
        for d in decoders.values():
            d.close()
        if pool is not None:
            pool.shutdown()


def _log_epoch(log: Log, cfg, s: dict, prev: float, weights: dict) -> None:
    log(f"epoch {s['epoch']}/{cfg.epochs}: 1-best avg score {s['avg_score']:.3f} ({s['avg_score'] - prev:+.3f}), "
        f"corpus BLEU of the 1-bests {s['bleu']:.3f}, avg model score {s['avg_model_score']:.4f}; "
        f"per sentence: {s['avg_pairs']:.1f} pairs, {s['avg_updates']:.1f} updates, "
        f"{s['avg_rank_errors']:.1f} rank errors, {s['avg_margin_violations']:.1f} margin violations; "
        f"k-best loss not worse for {100 * s['kbest_loss_improved']:.0f}%; "
        f"{s['nonzero_weights']} non-zero weights; {s['seconds']:.2f} s ({s['decode_seconds']:.2f} s decoding)")
    for name in cfg.print_weight_names:
        log(f"  {name} = {weights.get(name, 0.0):.17g}")
