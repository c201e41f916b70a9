"""Running an optimizer study (``mtplug compare``): every replica of every optimizer of a
:class:`~mtplug.experiments.study_config.Study`, then MultEval's report of their test
translations with the study's own answers (do seeds change the weights, which optimizer's
test score varies least).

Working directory::

    WORKDIR/pool.npz, pool.json   pool mode: the tuning pool's store (read once) and the keys it was read with
    WORKDIR/runs/OPT/REPLICA/     one folder per replica, REPLICA = s<seed>-p<start point>:
        fingerprint.json          what the replica's result depends on (written before it starts)
        start.*                   a random start point's weights (decoder mode: a copy of the moses.ini
                                  with its [weight] replaced, or a cdec weights file)
        tune/                     decoder mode: the replica's mtplug tune working directory
        tuned.*                   pool mode: the tuned weights, in the start weights' format
        test.out                  the test set's 1-best under the replica's final weights
        result.json               written last, atomically: weights, seed, start point, dev and test
                                  scores, seconds; a replica that has one is never run again
    WORKDIR/report.txt, report.json, report.tex, replicas.tsv, replicas.png

A replica is a pure function of its fingerprint (its seed and start point included), so
replicas may run in any order, here or on dask workers, with the same results; an
interrupted decoder-mode replica resumes its tuning run (``mtplug tune --resume``).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable

import numpy as np

from ..errors import InputError
from ..fileio import atomic_output, check_outputs
from ..metrics.layer import SCALE, parse_metric
from ..tuning.loop import STATE_FILE, Hooks, read_state, run_tuning
from .study_config import Replica, Study, random_start, unknown_fixed
from .study_report import write_report

if TYPE_CHECKING:
    from ..tuning.config import TuneConfig

RESULT = "result.json"
FINGERPRINT = "fingerprint.json"
TEST_OUT = "test.out"
POOL_STORE = "pool.npz"
POOL_META = "pool.json"
#: the report's files in WORKDIR
OUTPUTS = ("report.txt", "report.json", "report.tex", "replicas.tsv", "replicas.png")
#: file names of weights by format (pool mode's start and tuned files)
_WEIGHTS_FILE = {"moses-ini": "moses.ini", "cdec": "weights", "init-opt": "init.opt", "weights-txt": "weights.txt"}


def replica_folder(study: Study, replica: Replica) -> str:
    """``WORKDIR/runs/OPT/REPLICA``: the folder of one replica's files (module docstring)."""
    return os.path.join(study.workdir, "runs", replica.optimizer.name, replica.id)


def _write_json(path: str, obj) -> None:
    with atomic_output(path) as fh:
        fh.write(json.dumps(obj, indent=1) + "\n")


def _read_json(path: str):
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError) as exc:
        raise InputError(f"unreadable ({exc}); delete its replica folder to run the replica again", path) from None


def score_file(path: str, ref_paths: list, reflen: str, lowercase: bool, metric: str) -> float:
    """The corpus score of a translation file (line i = sentence i), on the 0-100 scale of
    every mtplug score (TER as an error rate)."""
    from ..corpus import NbestCorpus
    from ..metrics.bleu import BleuConfig
    from ..metrics.references import metric_references

    corpus = NbestCorpus.from_plain(path, metric_references(ref_paths, metric),
                                    BleuConfig(reflen=reflen, lowercase=lowercase), metric=metric)
    return corpus.metric.value(corpus.metric.objective(corpus.corpus_stats(corpus.sent_offsets[:-1])))


# ------------------------------------------------------------------ replicas
@dataclass(frozen=True)
class _Job:
    """What every replica knows about itself (the dask task's argument; picklable)."""

    folder: str
    optimizer: str
    algorithm: str
    replica: str
    seed: int
    point: int
    test_ref: list
    reflen: str
    lowercase: bool
    metric: str

    def _finish(self, t0: float, start: list, weights: list, dev: float | None, extra: dict) -> dict:
        test = os.path.join(self.folder, TEST_OUT)
        result = {"optimizer": self.optimizer, "algorithm": self.algorithm, "replica": self.replica,
                  "seed": self.seed, "start_point": self.point, "metric": self.metric, "score_scale": SCALE,
                  "dev_score": dev,
                  "test_score": score_file(test, self.test_ref, self.reflen, self.lowercase, self.metric),
                  "seconds": round(time.perf_counter() - t0, 3), **extra,
                  "start_weights": start, "weights": weights}
        _write_json(os.path.join(self.folder, RESULT), result)   # the commit point of the replica
        return result


@dataclass(frozen=True)
class PoolJob(_Job):
    """A pool-mode replica: ``mtplug optimize ALGO --store STORE --weights INIT --seed SEED``,
    then ``mtplug rerank`` of the test n-best lists with the tuned weights."""

    options: dict
    store: str = ""
    init: str = ""
    sparse_init: str | None = None
    out_format: str = ""
    test_nbest: list = field(default_factory=list)
    threads: int | None = None

    def run(self, log: Callable[[str], None], corpus=None) -> dict:
        """Run the replica (``corpus``: the store, when the caller holds it already)."""
        from ..corpus import NbestCorpus
        from ..optimizers.registry import get_optimizer
        from ..start_weights import read_start, write_tuned
        from .rerank import rank

        t0 = time.perf_counter()
        corpus = corpus if corpus is not None else NbestCorpus.load(self.store)
        names, n_dense = corpus.feature_names, corpus.n_dense
        start = read_start(self.init, names, n_dense, sparse_init=self.sparse_init)
        optimizer = get_optimizer(self.algorithm)(**self.options)
        try:
            result = optimizer.optimize(corpus, start.vector, self.seed, threads=self.threads, ranges=start.ranges)
        except ValueError as err:   # an option the store cannot serve (e.g. expbleu directions on TER)
            if isinstance(err, InputError):
                raise
            raise InputError(f"{self.optimizer} {self.replica}: {self.algorithm}: {err}") from None
        result.warnings = list(start.warnings) + list(result.warnings)   # a partial match of the init's names
        for warning in result.warnings:
            log(f"{self.optimizer} {self.replica}: warning: {warning}")
        value = result.score
        out = os.path.join(self.folder, "tuned." + _WEIGHTS_FILE.get(self.out_format, "weights.txt"))
        written = write_tuned(out, self.out_format, start, names, result.weights, n_dense,
                              comment=f"mtplug compare {self.optimizer} {self.replica} {self.algorithm} "
                                      f"seed={self.seed} {corpus.metric.label}={value:.4f}")
        ranking = rank(self.test_nbest, written[0], sparse_weights=written[1] if len(written) > 1 else None,
                       sentences=_count_lines(self.test_ref[0]), threads=self.threads or 1)
        ranking.write_one_best(os.path.join(self.folder, TEST_OUT))
        return self._finish(t0, list(zip(names, start.vector.tolist())), list(zip(names, result.weights.tolist())),
                            value, {"files": [os.path.basename(p) for p in written], "warnings": result.warnings})


@dataclass(frozen=True)
class DecoderJob(_Job):
    """A decoder-mode replica: ``mtplug tune`` (resumed when it was interrupted) with the
    test set; its test translation is the tuning run's final.test.out."""

    tune: TuneConfig
    start: list              # the start weights [(name, value)], for the record

    def run(self, log: Callable[[str], None], corpus=None) -> dict:
        """Run (or resume) the replica's tuning run (``corpus`` is not used)."""
        t0 = time.perf_counter()
        summary = run_tuning(self.tune, Hooks(log=lambda m: log(f"{self.optimizer} {self.replica}: {m}")))
        with open(summary["test_out"], "rb") as fh, atomic_output(os.path.join(self.folder, TEST_OUT), "wb") as out:
            shutil.copyfileobj(fh, out)
        state = read_state(self.tune.workdir)
        if state is None:   # run_tuning writes it every iteration: only a folder removed meanwhile
            raise InputError("the tuning run left no state", os.path.join(self.tune.workdir, STATE_FILE))
        final = state["best"]["weights"] if self.tune.final_weights == "best" else state["weights"]
        n = summary["final_iteration"]
        entry = state["history"][n - 1] if n else None
        dev = None if entry is None else entry["score"]    # the tuned metric, as users read it
        return self._finish(t0, self.start, [[k, float(v)] for k, v in final], dev,
                            {"iterations": summary["iterations"], "stop": summary["stop"]})


def run_replica(job) -> dict:
    """Run one replica where this is called (a dask worker task); returns its result."""
    return job.run(lambda m: None)


def _count_lines(path: str) -> int:
    from ..fileio import read_text_lines

    return len(read_text_lines(path))


def _scores_0_100(result: dict) -> dict:
    """A replica's result.json with its scores on the 0-100 scale: one written before
    mtplug's scores were (no ``score_scale``) holds fractions, scaled here."""
    if result.get("score_scale") == SCALE:
        return result
    return {**result, "score_scale": SCALE,
            **{k: None if result.get(k) is None else SCALE * result[k] for k in ("dev_score", "test_score")}}


# ------------------------------------------------------------------ the study
def _holds_results(study: Study, replica: Replica) -> bool:
    """Whether the replica's folder holds work done with its fingerprint: its result, or a
    tuning run that has completed an iteration (a replica that failed before either is run
    again from scratch)."""
    folder = replica_folder(study, replica)
    return (os.path.exists(os.path.join(folder, RESULT))
            or (study.mode == "decoder" and os.path.exists(os.path.join(folder, "tune", STATE_FILE))))


def _check_fingerprints(study: Study, replicas: list) -> dict:
    """{(optimizer name, replica id): fingerprint}; InputError when a replica holds results
    of other settings than the study file's (naming the first changed key at its line)."""
    out, changed = {}, []
    for r in replicas:
        fp = json.loads(json.dumps(study.fingerprint(r)))
        path = os.path.join(replica_folder(study, r), FINGERPRINT)
        if os.path.exists(path) and _holds_results(study, r):
            old = _read_json(path)
            keys = sorted(k for k in {**old, **fp} if old.get(k) != fp.get(k))
            if keys:
                changed.append((r, keys, old, fp))
        out[r.optimizer.name, r.id] = fp
    if changed:
        r, keys, old, fp = changed[0]
        first = keys[0]
        folders = sorted({os.path.relpath(replica_folder(study, c[0]), study.workdir) for c in changed})
        shown = ", ".join(folders[:3]) + (f" and {len(folders) - 3} more" if len(folders) > 3 else "")
        what = "; ".join(f"{k} {json.dumps(old.get(k))} -> {json.dumps(fp.get(k))}" for k in keys[:3])
        more = " ..." if len(keys) > 3 else ""
        raise InputError(f"changed since replica {r.optimizer.name} {r.id} ran: {what}{more}; {len(changed)} "
                         f"replica(s) in {study.workdir} ran with the old settings: restore them, or delete {shown} "
                         "to run them again", study.path, study.line_of(first))
    return out


def _pool_store(study: Study, log):
    """The tuning pool's store, read from the n-best lists once (WORKDIR/pool.npz) and
    loaded back from disk, so that a first run and a later one see identical arrays."""
    from ..corpus import NbestCorpus
    from ..metrics.references import metric_references

    store = os.path.join(study.workdir, POOL_STORE)
    meta = os.path.join(study.workdir, POOL_META)
    keys = {k: study.pool[k] for k in ("nbest", "ref", "metric", "reflen", "lowercase")}
    if not (os.path.exists(store) and os.path.exists(meta) and _read_json(meta) == keys):
        t0 = time.perf_counter()
        pool = study.pool
        corpus = NbestCorpus.from_nbest(pool["nbest"], metric_references(pool["ref"], pool["metric"]),
                                        study.bleu_config, metric=pool["metric"])
        corpus.check_complete(", ".join(pool["nbest"]))
        corpus.save(store)
        _write_json(meta, keys)
        log(f"read the pool: {corpus.n_hypotheses} unique hypotheses of {corpus.n_sentences} sentences, "
            f"{corpus.n_features} features, in {time.perf_counter() - t0:.2f} s ({store})")
    return NbestCorpus.load(store)


def _pool_jobs(study: Study, pending: list, corpus) -> list:
    """The pool-mode jobs of ``pending`` replicas; writes the random start points' files."""
    from ..formats.weights import detect_weights_format
    from ..start_weights import read_start, write_tuned

    pool = study.pool
    names, n_dense = corpus.feature_names, corpus.n_dense
    in_fmt = detect_weights_format(pool["weights"])
    out_fmt = "sparse" if in_fmt == "names" else in_fmt
    start = read_start(pool["weights"], names, n_dense, sparse_init=pool["sparse_weights"], fmt=in_fmt)
    unknown = unknown_fixed(study.fixed, names)
    if unknown:
        raise InputError(f"replicas: fixed: {', '.join(unknown)} name(s) no feature of the pool",
                         study.path, study.line_of("replicas.fixed"))
    points: dict[int, list] = {}
    jobs = []
    for r in pending:
        folder = replica_folder(study, r)
        init, sparse = pool["weights"], pool["sparse_weights"]
        if r.point:
            path = os.path.join(folder, "start." + _WEIGHTS_FILE.get(out_fmt, "weights.txt"))
            if r.point not in points:
                points[r.point] = random_start(list(zip(names, start.vector.tolist())), r.point, study.start_seed,
                                               study.fixed, study.start_distribution)
            vector = np.array([v for _, v in points[r.point]], dtype=np.float64)
            written = write_tuned(path, out_fmt, start, names, vector, n_dense,
                                  comment=f"mtplug compare: random start point {r.point}")
            # a moses.ini names its sparse file itself; a dense-only file needs it beside
            init, sparse = written[0], written[1] if len(written) > 1 and out_fmt != "moses-ini" else None
        jobs.append(PoolJob(folder, r.optimizer.name, r.optimizer.algorithm, r.id, r.seed, r.point, pool["test_ref"],
                            pool["reflen"], pool["lowercase"], pool["metric"], options=r.optimizer.options,
                            store=os.path.join(study.workdir, POOL_STORE), init=init, sparse_init=sparse,
                            out_format=out_fmt, test_nbest=pool["test_nbest"], threads=study.threads))
    return jobs


def _decoder_jobs(study: Study, pending: list) -> list:
    """The decoder-mode jobs of ``pending`` replicas; writes the random start points' files."""
    from ..decoders import get_decoder
    from ..formats.cdec_weights import write_cdec_weights
    from ..formats.moses_ini import write_moses_config
    from ..formats.weights_core import Weights

    jobs = []
    start_weights = None
    for r in pending:
        folder = replica_folder(study, r)
        cfg = replace(study.tune[r.optimizer.name], workdir=os.path.join(folder, "tune"), seed=r.seed)
        if start_weights is None:
            start_weights = list(get_decoder(cfg).start_weights().items())
        start = start_weights
        if r.point:
            start = random_start(start_weights, r.point, study.start_seed, study.fixed, study.start_distribution)
            if cfg.decoder == "moses":
                ini = os.path.join(folder, "start.moses.ini")
                write_moses_config(ini, Weights(start), cfg.config, os.path.join(folder, "start.sparse-weights"))
                cfg = replace(cfg, config=ini, weights=None)
            else:
                path = os.path.join(folder, "start.weights")
                write_cdec_weights(path, Weights(start), comment=f"mtplug compare: random start point {r.point}")
                cfg = replace(cfg, weights=path)
        jobs.append(DecoderJob(folder, r.optimizer.name, r.optimizer.algorithm, r.id, r.seed, r.point,
                               study.test[1], cfg.reflen, cfg.lowercase, cfg.metric, tune=cfg,
                               start=[[k, float(v)] for k, v in start]))
    return jobs


def _on_cluster(engine, jobs: list):
    """(job, result) of every job run as a task on the dask workers, in order."""
    futures = engine.client.map(run_replica, jobs, pure=False)
    for job, future in zip(jobs, futures):
        yield job, future.result()


def run_study(study: Study, log: Callable[[str], None], counter, scheduler: str | None = None,
              quiet: bool = False) -> dict:
    """Run the replicas of ``study`` that have no result yet (here, one after another, or
    as tasks on the dask scheduler at ``scheduler``), then write the report. ``log(line)``
    and ``counter(total, desc) -> (update or None, close)`` talk to the user. Returns
    {"text": the report table, "files": the report's files}."""
    try:
        os.makedirs(os.path.join(study.workdir, "runs"), exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create the working directory ({exc.strerror})", study.workdir) from None
    outputs = {name: os.path.join(study.workdir, name) for name in OUTPUTS}
    check_outputs(outputs)
    replicas = study.replicas()
    fingerprints = _check_fingerprints(study, replicas)
    pending = [r for r in replicas if not os.path.exists(os.path.join(replica_folder(study, r), RESULT))]
    log(f"study {study.name}: {len(study.optimizers)} optimizer(s) x {study.seeds} seed(s) x {study.start_points} "
        f"start point(s) = {len(replicas)} replicas ({len(replicas) - len(pending)} finished before)")
    corpus = _pool_store(study, log) if study.mode == "pool" else None
    for r in pending:
        os.makedirs(replica_folder(study, r), exist_ok=True)
    jobs = _pool_jobs(study, pending, corpus) if study.mode == "pool" else _decoder_jobs(study, pending)
    for r in pending:     # after the jobs' checks: a replica counts as started from here on
        _write_json(os.path.join(replica_folder(study, r), FINGERPRINT), fingerprints[r.optimizer.name, r.id])

    label = parse_metric(study.metric).label
    update, close = counter(len(jobs), "replicas")
    done = 0

    def finished(job, result) -> None:
        nonlocal done
        done += 1
        dev = "-" if result["dev_score"] is None else f"{result['dev_score']:.4f}"
        log(f"{job.optimizer} {job.replica} ({done}/{len(jobs)}): dev {label} = {dev}, test {label} = "
            f"{result['test_score']:.4f}, {result['seconds']:.2f} s")
        if update:
            update(1)

    try:
        if jobs and scheduler:
            from ..distributed import connect

            with connect(scheduler, quiet=quiet) as engine:
                log(engine.describe())
                for job, result in _on_cluster(engine, jobs):
                    finished(job, result)
        else:
            for job in jobs:
                finished(job, job.run(log, corpus))
    finally:
        close()
    results = {(r.optimizer.name, r.id): _scores_0_100(_read_json(os.path.join(replica_folder(study, r), RESULT)))
               for r in replicas}
    systems = [(o.name, [os.path.join(study.workdir, "runs", o.name, i, TEST_OUT) for i in study.replica_ids()])
               for o in study.optimizers]
    return write_report(study, results, systems, outputs, log, counter)
