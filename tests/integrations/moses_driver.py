"""Plays Moses's ``scripts/training/mert-moses.pl`` against a ``--mertdir`` of tuning programs.

:func:`run_mert_moses` runs the script's main loop with the stand-in decoder
(``standin_decoder.py``) and issues the same command lines, in the same order,
through the shell, with the same file names, and reads the results with the
same regular expressions (Perl regexes translated to Python ``re`` with ASCII
classes). Where mert-moses.pl would ``die`` the driver raises
:class:`MosesDriverError`; it also checks that every file the script reads exists
and is well-formed (the script itself is laxer: see the ``_check_*`` functions),
because a file the script mis-reads silently is as bad as a crash.

Per iteration N (working directory = ``workdir``)::

    run$N.moses.ini, run$N.dense
    DECODER [flags]  -config INI -inputtype 0 -weight-overwrite '...' [-weight-file run$N.sparse-weights]  -n-best-list run$N.best$K.out $K distinct  -input-file DEV > run$N.out
    gzip -f run$N.best$K.out
    extractor.sh  > extract.out 2> extract.err   (cd WD; extractor --sctype BLEU --scconfig case:true --scfile ... -n ...)
    init.opt; cp -f init.opt run$N.init.opt
    mert -d DIM ... > mert.out 2> mert.log                       (mode "mert")
    echo 'not used' > weights.txt; kbmira ... -o mert.out > run$N.mira.out 2> mert.log   ("batch-mira")
    pro ... -o run$N.pro.data ; echo 'not used' > weights.txt; megam_i686.opt -fvals -maxi 30 -nobias binary run$N.pro.data > mert.out 2> mert.log   ("pairwise-ranked")
    backup copies (run$N.mert.out, run$N.mert.log, run$N.weights.txt, ...), weights parsed
    run$(N+1).sparse-weights (if any)

and after the loop ``evaluator --reference REFS -s BLEU --candidate run$i.out 2> /dev/null 1> eval.out``
for every decoded iteration.
"""

from __future__ import annotations

import gzip
import math
import os
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
STANDIN_DECODER = HERE / "standin_decoder.py"
TOY = Path(os.environ.get("MTPLUG_SHARED_DIR") or Path(__file__).resolve().parents[3] / "shared") / "data" / "moses-toy"
TOY_REFERENCE = TOY / "ref.0"
TOY_DENSE = TOY / "run1.dense"

MODES = ("mert", "batch-mira", "pairwise-ranked")
PROGRAMS = ("extractor", "mert", "kbmira", "pro", "megam_i686.opt", "evaluator")
#: statistics per hypothesis of Moses's scorers (mert/*Scorer.cpp NumberOfScores)
SCORER_WIDTHS = {"BLEU": 9, "PER": 3, "WER": 2, "CDER": 2, "TER": 3}
MEGAM_DEFAULT_OPTIONS = "-fvals -maxi 30 -nobias binary"
MIN_CHANGE = 1e-5  # $minimum_required_change_in_weights

# --- mert-moses.pl's regexes, verbatim (Perl \d, \s on byte strings = ASCII classes)
RE_DENSE = re.compile(r"^F(\d+) ([\-\.\de]+)", re.ASCII)
RE_MIX = re.compile(r"^M(\d+_\d+) ([\-\.\de]+)", re.ASCII)
RE_SPARSE = re.compile(r"^(.+_.+) ([\-\.\de]+)", re.ASCII)
RE_BEST_BLEU = re.compile(r"Best BLEU = ([\-\d\.]+)", re.ASCII)
RE_BEST_POINT = re.compile(r"Best point:\s*([\s\d\.\-e]+?)\s*=> ([\-\d\.]+)", re.ASCII)
RE_FEATLIST = re.compile(r"^(\S+)= (.+)$", re.ASCII)
RE_FEATLIST_VALUE = re.compile(r"^[+-]?[0-9.\-e]+$", re.ASCII)
RE_UNTUNEABLE = re.compile(r"^(\S+) UNTUNEABLE$", re.ASCII)
RE_SCCONFIG = re.compile(r"\-\-scconfig(?:\s+|=)(.+?)(\s|$)", re.ASCII)
RE_SCTYPE = re.compile(r"(\-\-sctype(?:\s+|=).+?)(\s|$)", re.ASCII)
RE_SCTYPE_CUT = re.compile(r"(\-\-sctype(?:\s+|=)+.+?)(\s|$)", re.ASCII)
RE_BINARY = re.compile(r"\-+(binary|b)\b", re.ASCII)
# sanity_check_order_of_lambdas / get_order_of_scores_from_nbestlist
RE_NB_SPARSE = re.compile(r".+_.+=", re.ASCII)
RE_NB_LABEL = re.compile(r"^([a-z][0-9a-z]*)=", re.ASCII | re.IGNORECASE)
RE_NB_SCORE = re.compile(r"^-?[-0-9.\-e]+$", re.ASCII)

_PERL_NUM = re.compile(r"^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)", re.ASCII)
_STRICT_FLOAT = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$", re.ASCII)


class MosesDriverError(RuntimeError):
    """Where mert-moses.pl dies (or a file it reads is malformed)."""


# ------------------------------------------------------------------ Perl semantics
def perl_num(s) -> float:
    """Perl's numification of a string: the longest numeric prefix, else 0."""
    if isinstance(s, (int, float)):
        return float(s)
    m = _PERL_NUM.match(s)
    return float(m.group(1)) if m else 0.0


def perl_str(x: float) -> str:
    """Perl's stringification of a number (%.15g)."""
    if x == 0:
        return "0"
    if math.isinf(x):
        return "Inf" if x > 0 else "-Inf"
    if math.isnan(x):
        return "NaN"
    return "%.15g" % x


def perl_split_ws(s: str) -> list[str]:
    """``split /\\s+/, $s`` (leading empty field kept, trailing empty fields dropped)."""
    parts = re.split(r"\s+", s, flags=re.ASCII)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def strict_float(s: str) -> float:
    if not _STRICT_FLOAT.match(s):
        raise ValueError(s)
    return float(s)


# ------------------------------------------------------------------ records
@dataclass
class CommandRecord:
    label: str
    cmd: str
    seconds: float
    returncode: int
    stdout: str = ""   # what the shell itself printed (not the redirected files)
    stderr: str = ""


@dataclass
class IterationRecord:
    run: int
    start_weights: list          # dense weights the decoder used (featlist values before the run)
    weights: list                # new dense weights (as mert-moses.pl keeps them, floats)
    weight_strings: list         # the same, as the strings the script carries on
    sparse_weights: dict         # name -> weight (normalised like the script does)
    reported_bleu: float | None  # devbleu: mert's "=> x", kbmira's Best BLEU, None for PRO ("unknown")
    bleu: float | None = None    # evaluator's corpus BLEU of run$N.out
    n_hypotheses: int = 0        # lines of the n-best list
    n_sparse_features: int = 0   # distinct sparse names in run$N.features.dat
    seconds: dict = field(default_factory=dict)  # label -> wall time of this iteration's commands


@dataclass
class MosesRun:
    mode: str
    workdir: Path
    feature_names: list
    records: list
    commands: list
    stopped_early: bool
    best_iteration: int
    best_bleu: float


# ------------------------------------------------------------------ the driver
class _Driver:
    def __init__(self, mertdir, workdir, mode, *, iterations, references, decoder, decoder_flags,
                 start_weights, nbest_size, random_restarts, predictable_seeds, threads, mertargs,
                 mertmertargs, extractorargs, batch_mira_args, proargs, nocase, sparse, timeout, log):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        self.mertdir = Path(mertdir)
        self.wd = Path(workdir).resolve()
        self.mode = mode
        self.iterations = iterations
        self.references = [str(Path(r).resolve()) for r in references]
        self.decoder = decoder
        self.decoder_flags = decoder_flags + (" -standin-sparse" if sparse else "")
        self.start_weights = start_weights
        self.nbest_size = nbest_size
        self.random_restarts = random_restarts
        self.predictable_seeds = predictable_seeds
        self.threads = threads
        self.mertargs = mertargs
        self.mertmertargs = mertmertargs
        self.extractorargs = extractorargs
        self.batch_mira_args = batch_mira_args
        self.proargs = proargs
        self.nocase = nocase
        self.timeout = timeout
        self.log = log
        self.commands: list[CommandRecord] = []
        self._iter_seconds: dict | None = None

    # -------------------------------------------------------------- shell
    def safesystem(self, cmd: str, label: str, outputs=()) -> CommandRecord:
        """Run ``cmd`` through /bin/sh in the working directory; raise on non-zero exit."""
        t0 = time.perf_counter()
        try:
            p = subprocess.run(cmd, shell=True, cwd=self.wd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=self.timeout, text=True, errors="replace")
        except subprocess.TimeoutExpired as exc:
            raise MosesDriverError(f"timed out after {self.timeout} s: {cmd}") from exc
        dt = time.perf_counter() - t0
        rec = CommandRecord(label, cmd, dt, p.returncode, p.stdout, p.stderr)
        self.commands.append(rec)
        if self._iter_seconds is not None:
            self._iter_seconds[label] = self._iter_seconds.get(label, 0.0) + dt
        if self.log:
            self.log(f"[{dt:7.3f} s] {label}: {cmd}")
        with open(self.wd / "driver.log", "a", encoding="utf-8") as fh:
            fh.write(f"Executing: {cmd}\n{p.stdout}{p.stderr}")
            if p.returncode:
                fh.write(f"Exit code: {p.returncode}\n")
        if p.returncode != 0:
            msg = [f"command failed with exit status {p.returncode}: {cmd}"]
            if p.stderr.strip():
                msg.append("stderr:\n" + _tail(p.stderr))
            if p.stdout.strip():
                msg.append("stdout:\n" + _tail(p.stdout))
            for name in outputs:
                path = self.wd / name
                if path.exists():
                    msg.append(f"{name}:\n" + _tail(path.read_text(encoding="utf-8", errors="replace")))
            raise MosesDriverError("\n".join(msg))
        return rec

    def submit_or_exec(self, cmd: str, stdout: str, stderr: str, label: str) -> CommandRecord:
        return self.safesystem(f"{cmd} > {stdout} 2> {stderr}", label, outputs=(stderr, stdout))

    def prog(self, name: str) -> str:
        return str(self.mertdir / name)

    # -------------------------------------------------------------- set-up
    def setup(self):
        for name in PROGRAMS:
            path = self.mertdir / name
            if not (path.is_file() and os.access(path, os.X_OK)):
                raise MosesDriverError(f"Not executable: {path}")
        self.wd.mkdir(parents=True, exist_ok=True)
        inputs = self.wd / "inputs"
        inputs.mkdir(exist_ok=True)
        n_sent = len(Path(self.references[0]).read_text(encoding="utf-8").splitlines())
        self.n_sentences = n_sent
        self.dev_f = inputs / "dev.src"
        self.dev_f.write_text("".join(f"source sentence {i}\n" for i in range(n_sent)), encoding="utf-8")
        self.config = inputs / "moses.ini"
        lines = ["[input-factors]", "0", "", "[weight]"]
        lines += [f"{name}= {' '.join(vals)}" for name, vals in self.start_weights]
        lines += ["UnknownWordPenalty0= 1", ""]
        self.config.write_text("\n".join(lines), encoding="utf-8")

        # scconfig and sctype out of mertargs, then the argument strings, exactly as
        # mert-moses.pl builds them (HEAD 34452895, lines 420-460): "$mertargs $mertmertargs"
        # is followed by "$sctype $scconfig" WITHOUT a space, so a --mertmertargs value that
        # does not end with a space is glued to --sctype (mert must cope: issue 19, defect 6)
        # mert-moses.pl: an undefined --mertargs takes --batch-mira-args
        mertargs = self.mertargs if self.mertargs is not None else (self.batch_mira_args or "")
        scconfig = ""
        m = RE_SCCONFIG.search(mertargs)
        if m:
            scconfig = m.group(1).replace(",", " ")
            mertargs = RE_SCCONFIG.sub("", mertargs, count=1)
        sctype = "--sctype BLEU"
        m = RE_SCTYPE.search(mertargs)
        if m:
            sctype = m.group(1)
            mertargs = RE_SCTYPE_CUT.sub("", mertargs, count=1)
        scconfig += " case:false" if self.nocase else " case:true"
        scconfig = re.sub(r"\s+", ",", scconfig.strip())
        scconfig = f"--scconfig {scconfig}" if scconfig else ""
        self.mert_extract_args = f"{sctype} {scconfig} {self.extractorargs}"
        self.sctype = re.split(r"[\s=]+", sctype.strip(), maxsplit=1)[1]
        mert_mert_args = f"{mertargs} {self.mertmertargs}"
        mert_mert_args = RE_BINARY.sub("", mert_mert_args, count=1)
        self.mert_mert_args = mert_mert_args + f"{sctype} {scconfig}"

        # get_featlist_from_moses
        self.safesystem(f"{self.decoder} {self.decoder_flags} -config {self.config}  -inputtype 0 "
                        f"-show-weights > ./features.list", "decoder -show-weights")
        names, values, errs = [], [], []
        with open(self.wd / "features.list", encoding="utf-8") as fh:
            for nr, line in enumerate(fh, 1):
                line = line.rstrip("\n")
                m = RE_FEATLIST.match(line)
                if m:
                    for v in m.group(2).split(" "):
                        if not RE_FEATLIST_VALUE.match(v):
                            errs.append(f"features.list:{nr}: bad initial value of {m.group(1)}: {v}")
                        names.append(m.group(1))
                        values.append(v)
                elif RE_UNTUNEABLE.match(line):
                    pass
        if errs:
            raise MosesDriverError("\n".join(errs))
        if not names:
            raise MosesDriverError("features.list lists no dense features")
        self.names = names
        self.values = values
        self.mins = ["0"] * len(names)   # insert_ranges_to_featlist: 0.0 / 1.0 print as 0 / 1
        self.maxs = ["1"] * len(names)
        self.column_names = _column_names(names)

    # -------------------------------------------------------------- loop
    def run(self) -> MosesRun:
        self.setup()
        records: list[IterationRecord] = []
        prev_ffiles: list[str] = []
        prev_scfiles: list[str] = []
        sparse_weights_file = None
        need_to_normalize = True
        devbleu = None
        stopped = False
        run = 0
        while True:
            run += 1
            if self.iterations and run > self.iterations:
                break
            self._iter_seconds = {}
            start_values = list(self.values)
            self.create_config(self.wd / f"run{run}.moses.ini", devbleu, sparse_weights_file)
            with open(self.wd / f"run{run}.dense", "w", encoding="utf-8") as fh:
                for name, val in zip(self.names, self.values):
                    fh.write(f"{name}= {val}\n")

            # decode
            nbest_file = self.run_decoder(run, need_to_normalize)
            need_to_normalize = False
            n_hyps = self._check_decoder_output(run, nbest_file)
            self.safesystem(f"gzip -f {nbest_file}", "gzip")
            nbest_file += ".gz"

            # extract
            feature_file, score_file = f"run{run}.features.dat", f"run{run}.scores.dat"
            cmd = (f"{self.prog('extractor')} {self.mert_extract_args} --scfile {score_file} "
                   f"--ffile {feature_file} -r {','.join(self.references)} -n {nbest_file}")
            script = self.create_extractor_script(cmd)
            self.submit_or_exec(script, "extract.out", "extract.err", "extractor")
            n_sparse = self._check_extractor_output(run, feature_file, score_file, n_hyps)

            # init.opt
            with open(self.wd / "init.opt", "w", encoding="utf-8") as fh:
                fh.write(" ".join(self.values) + "\n")
                fh.write(" ".join(self.mins) + "\n")
                fh.write(" ".join(self.maxs) + "\n")
            self.safesystem(f"\\cp -f init.opt run{run}.init.opt", "cp")
            dim = len(self.values)

            cmd = f"{self.prog('mert')} -d {dim} {self.mert_mert_args}"
            mert_settings = f" -n {self.random_restarts}"
            seed_settings = f" -r {run * 1000}" if self.predictable_seeds else ""
            mert_settings += seed_settings
            if self.threads:
                mert_settings += f" --threads {self.threads}"
            ffiles = ",".join(prev_ffiles + [feature_file])
            scfiles = ",".join(prev_scfiles + [score_file])
            mira_settings = f"{self.batch_mira_args} " if self.mode == "batch-mira" and self.batch_mira_args else ""
            mira_settings += f" --dense-init run{run}.dense"
            if (self.wd / f"run{run}.sparse-weights").exists():
                mira_settings += f" --sparse-init run{run}.sparse-weights"
            file_settings = f" --ffile {ffiles} --scfile {scfiles}"
            pro_file_settings = ("--ffile " + " --ffile ".join(ffiles.split(",")) +
                                 " --scfile " + " --scfile ".join(scfiles.split(",")))
            file_settings += f" --ifile run{run}.init.opt"
            cmd += file_settings

            megam_cmd = f"{self.prog('megam_i686.opt')} {MEGAM_DEFAULT_OPTIONS} run{run}.pro.data"
            if self.mode == "pairwise-ranked":
                cmd = (f"{self.prog('pro')} {self.proargs} {seed_settings} {pro_file_settings} "
                       f"-o run{run}.pro.data ; echo 'not used' > weights.txt; {megam_cmd}")
                self.submit_or_exec(cmd, "mert.out", "mert.log", "pro ; megam")
                _check_pro_data(self.wd / f"run{run}.pro.data")
            elif self.mode == "batch-mira":
                self.safesystem("echo 'not used' > weights.txt", "echo")
                cmd = f"{self.prog('kbmira')} {mira_settings} {seed_settings} {pro_file_settings} -o mert.out"
                self.submit_or_exec(cmd, f"run{run}.mira.out", "mert.log", "kbmira")
            else:
                self.submit_or_exec(cmd + mert_settings, "mert.out", "mert.log", "mert")

            wpath = self.wd / "weights.txt"
            if not wpath.exists() or wpath.stat().st_size == 0:
                raise MosesDriverError("Optimization failed, file weights.txt does not exist or is empty")

            for src in ("extract.err", "extract.out", "mert.out", "mert.log"):
                self.safesystem(f"\\cp -f {src} run{run}.{src}", "cp")
            self.safesystem(f"touch mert.log run{run}.mert.log", "touch")
            self.safesystem(f"\\cp -f weights.txt run{run}.weights.txt", "cp")

            sparse_weights: dict[str, float] = {}
            bestpoint, devbleu = self.get_weights_from_mert(f"run{run}.mert.out", f"run{run}.mert.log",
                                                            dim, sparse_weights)
            if bestpoint is None or devbleu is None:
                raise MosesDriverError("Failed to parse mert.log, missed Best point there.")
            newweights = perl_split_ws(bestpoint)
            self._check_weights(run, newweights, dim)

            self.values = newweights
            if sparse_weights:
                sparse_weights_file = f"run{run + 1}.sparse-weights"
                with open(self.wd / sparse_weights_file, "w", encoding="utf-8") as fh:
                    for name, w in sparse_weights.items():
                        fh.write(f"{name} {perl_str(w)}\n")

            shouldstop = True
            for i in range(dim):
                if i >= len(newweights):
                    raise MosesDriverError(f"Lost weight! mert reported fewer weights ({' '.join(newweights)}) "
                                           f"than we gave it ({' '.join(start_values)})")
                if abs(perl_num(start_values[i]) - perl_num(newweights[i])) >= MIN_CHANGE:
                    shouldstop = False
                    break
            (self.wd / "finished_step.txt").write_text(f"{run}\n", encoding="utf-8")

            records.append(IterationRecord(
                run=run, start_weights=[perl_num(v) for v in start_values],
                weights=[perl_num(v) for v in newweights], weight_strings=list(newweights),
                sparse_weights=dict(sparse_weights),
                reported_bleu=None if devbleu == "unknown" else perl_num(devbleu),
                n_hypotheses=n_hyps, n_sparse_features=n_sparse, seconds=self._iter_seconds))
            self._iter_seconds = None
            if shouldstop:
                stopped = True
                break
            prev_ffiles.append(feature_file)
            prev_scfiles.append(score_file)

        self.safesystem(f"\\cp -f init.opt run{run}.init.opt", "cp")
        self.safesystem(f"\\cp -f mert.log run{run}.mert.log", "cp")

        # --return-best-dev: evaluator on every decoded iteration's 1-best
        best_it, best_bleu = 1, 0.0
        for rec in records:
            rec.bleu = self.evaluate(rec.run)
            if rec.bleu > best_bleu:
                best_it, best_bleu = rec.run, rec.bleu
        (self.wd / "moses.ini").write_text(
            (self.wd / f"run{best_it}.moses.ini").read_text(encoding="utf-8"), encoding="utf-8")
        (self.wd / "finished_step.txt").write_text(f"{run}\n", encoding="utf-8")
        return MosesRun(self.mode, self.wd, list(self.column_names), records, self.commands,
                        stopped, best_it, best_bleu)

    # -------------------------------------------------------------- pieces
    def create_config(self, path: Path, bleu, sparse_weights_file):
        """run$N.moses.ini: the input config with the current [weight] section."""
        out = ["# MERT optimized configuration", f"# decoder {self.decoder}",
               f"# BLEU {bleu if bleu is not None else '--not-estimated--'} on dev {self.dev_f}"]
        section = None
        keep = []
        for line in self.config.read_text(encoding="utf-8").splitlines():
            m = re.match(r"^\[(.+)\]\s*$", line)
            if m:
                section = m.group(1)
                if section != "weight":
                    out.append(line)
                continue
            if section == "weight":
                if line.startswith("UnknownWordPenalty0"):
                    keep.append(line)
            elif section is not None:
                out.append(line)
        if sparse_weights_file:
            out += ["", "[weight-file]", str(self.wd / sparse_weights_file)]
        out.append("[weight]")
        prev, cur = None, ""
        for name, val in zip(self.names, self.values):
            if name == prev:
                cur += f" {val}"
            else:
                if cur:
                    out.append(cur)
                cur, prev = f"{name}= {val}", name
        out.append(cur)
        out += keep
        path.write_text("\n".join(out) + "\n", encoding="utf-8")

    def run_decoder(self, run: int, need_to_normalize: bool) -> str:
        filename = f"run{run}.best{self.nbest_size}.out"
        vals = [perl_num(v) for v in self.values]
        if need_to_normalize:
            tot = sum(abs(v) for v in vals)
            vals = [v / tot for v in vals]
        model_weights: dict[str, str] = {}
        for name, v in zip(self.names, vals):
            model_weights.setdefault(name, f"{name}=")
            model_weights[name] += " %.6f" % v
        decoder_config = "-weight-overwrite '" + " ".join(model_weights.values()) + "'"
        if (self.wd / f"run{run}.sparse-weights").exists():
            decoder_config += f" -weight-file run{run}.sparse-weights"
        nbest_list_cmd = f"-n-best-list {filename} {self.nbest_size} distinct"
        cmd = (f"{self.decoder} {self.decoder_flags}  -config {self.config} -inputtype 0 {decoder_config}  "
               f"{nbest_list_cmd}  -input-file {self.dev_f} > run{run}.out")
        self.safesystem(cmd, "decoder")
        self.sanity_check_order_of_lambdas(filename)
        return filename

    def sanity_check_order_of_lambdas(self, filename: str):
        with open(self.wd / filename, encoding="utf-8") as fh:
            line = fh.readline()
        if not line:
            raise MosesDriverError(f"Line empty in nbestlist '{filename}'")
        parts = line.split("|||")
        scores = parts[2].strip() if len(parts) > 2 else ""
        if not scores:
            raise MosesDriverError(f"No scores in line: {line}")
        order, label, sparse = [], None, False
        for tok in scores.split():
            if RE_NB_SPARSE.match(tok):
                sparse = True
            elif RE_NB_LABEL.match(tok):
                label = RE_NB_LABEL.match(tok).group(1)
            elif RE_NB_SCORE.match(tok):
                if not sparse:
                    if label is None:
                        raise MosesDriverError(f"Found a score but no label before it! Bad nbestlist '{filename}'!")
                    order.append(label)
                sparse = False
            else:
                raise MosesDriverError(f"Not a label, not a score '{tok}'. Failed to parse the scores "
                                       f"string: '{scores}' of nbestlist '{filename}'")
        if order != self.names:
            raise MosesDriverError(f"Mismatched lambdas. Decoder returned {' '.join(order)}, "
                                   f"we expected {' '.join(self.names)}")

    def create_extractor_script(self, cmd: str) -> str:
        path = self.wd / "extractor.sh"
        path.write_text(f"#!/bin/bash\ncd {self.wd}\n{cmd}\n", encoding="utf-8")
        os.chmod(path, 0o755)
        return str(path)

    def get_weights_from_mert(self, outfile: str, logfile: str, weight_count: int, sparse_weights: dict):
        bestpoint = devbleu = None
        if self.mode in ("pairwise-ranked", "batch-mira"):
            self._check_weight_lines(outfile, weight_count)
            weight = [0.0] * weight_count
            total = 0.0
            with open(self.wd / outfile, encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    m = RE_DENSE.match(line)
                    if m:
                        i = int(m.group(1))
                        while len(weight) <= i:
                            weight.append(0.0)
                        weight[i] = perl_num(m.group(2))
                        total += abs(perl_num(m.group(2)))
                    elif RE_MIX.match(line):
                        pass
                    else:
                        m = RE_SPARSE.match(line)
                        if m:
                            sparse_weights[m.group(1)] = perl_num(m.group(2))
            if total < 1e-09:
                raise MosesDriverError(f"It seems feature values are invalid or unable to read {outfile}.")
            devbleu = "unknown"
            weight = [w / total for w in weight]
            for k in sparse_weights:
                sparse_weights[k] /= total
            bestpoint = " ".join(perl_str(w) for w in weight)
            if self.mode == "batch-mira":
                with open(self.wd / logfile, encoding="utf-8", errors="replace") as fh:
                    for line in fh:
                        m = RE_BEST_BLEU.search(line)
                        if m:
                            devbleu = m.group(1)
                if devbleu == "unknown":  # the script would carry on with "unknown": we do not
                    raise MosesDriverError(f"{logfile} has no 'Best BLEU = x' line:\n" + _tail_file(self.wd / logfile))
                _check_bleu_value(devbleu, f"{logfile}: Best BLEU")
        else:
            with open(self.wd / logfile, encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    m = RE_BEST_POINT.search(line)
                    if m:
                        bestpoint, devbleu = m.group(1), m.group(2)
                        break
            if bestpoint is None:
                raise MosesDriverError(f"Failed to parse mert.log, missed Best point there ({logfile}):\n"
                                       + _tail_file(self.wd / logfile))
            _check_bleu_value(devbleu, f"{logfile}: Best point ... => x")
            self._check_weights_txt(bestpoint, weight_count)
        return bestpoint, devbleu

    def evaluate(self, i: int) -> float:
        cmd = (f"{self.prog('evaluator')} --reference {','.join(self.references)} -s BLEU "
               f"--candidate run{i}.out")
        try:
            self.safesystem(f"{cmd} 2> /dev/null 1> eval.out", "evaluator")
        except MosesDriverError:
            # the script sends stderr to /dev/null: run once more to show it
            p = subprocess.run(cmd, shell=True, cwd=self.wd, capture_output=True, text=True, errors="replace")
            raise MosesDriverError(f"command failed with exit status {p.returncode}: {cmd}\nstderr:\n"
                                   + _tail(p.stderr)) from None
        text = (self.wd / "eval.out").read_text(encoding="utf-8", errors="replace")
        first = text.split("\n", 1)[0]
        try:
            bleu = strict_float(first.strip())
        except ValueError:
            raise MosesDriverError(f"evaluator printed {text[:200]!r}, expected one number "
                                   f"({cmd})") from None
        if not 0.0 <= bleu <= 1.0:
            raise MosesDriverError(f"evaluator printed BLEU {bleu} outside [0, 1] ({cmd})")
        return bleu

    # -------------------------------------------------------------- well-formedness
    def _check_decoder_output(self, run: int, nbest_file: str) -> int:
        out_lines = (self.wd / f"run{run}.out").read_text(encoding="utf-8").splitlines()
        if len(out_lines) != self.n_sentences:
            raise MosesDriverError(f"run{run}.out has {len(out_lines)} lines, expected {self.n_sentences}")
        counts: dict[int, int] = {}
        with open(self.wd / nbest_file, encoding="utf-8") as fh:
            for nr, line in enumerate(fh, 1):
                f = line.rstrip("\n").split(" ||| ")
                if len(f) < 4:
                    raise MosesDriverError(f"{nbest_file}:{nr}: not an n-best line")
                counts[int(f[0])] = counts.get(int(f[0]), 0) + 1
        if sorted(counts) != list(range(self.n_sentences)):
            raise MosesDriverError(f"{nbest_file}: sentences {sorted(counts)[:5]}... do not cover 0..{self.n_sentences - 1}")
        if max(counts.values()) > self.nbest_size:
            raise MosesDriverError(f"{nbest_file}: more than {self.nbest_size} hypotheses for a sentence")
        return sum(counts.values())

    def _check_extractor_output(self, run: int, feature_file: str, score_file: str, n_hyps: int) -> int:
        """features.dat / scores.dat in the text format (docs/moses.md); returns #sparse names."""
        sparse_names = set()
        feat_counts = _read_blocks(self.wd / feature_file, "FEATURES", self.n_sentences)
        score_counts = _read_blocks(self.wd / score_file, "SCORES", self.n_sentences)
        for sent, (n, ncols, names, rows) in feat_counts.items():
            if names != self.column_names:
                raise MosesDriverError(f"{feature_file}: sentence {sent}: dense columns {' '.join(names)}, "
                                       f"expected {' '.join(self.column_names)}")
            if ncols != len(self.column_names):
                raise MosesDriverError(f"{feature_file}: sentence {sent}: header says {ncols} dense features")
            for row in rows:
                toks = row.split()
                if len(toks) < ncols:
                    raise MosesDriverError(f"{feature_file}: sentence {sent}: short row {row!r}")
                for t in toks[:ncols]:
                    _finite(t, f"{feature_file}: sentence {sent}")
                for t in toks[ncols:]:
                    name, eq, val = t.rpartition("=")
                    if not eq or not name:
                        raise MosesDriverError(f"{feature_file}: sentence {sent}: bad sparse entry {t!r}")
                    _finite(val, f"{feature_file}: sentence {sent}")
                    sparse_names.add(name)
        width = sum(SCORER_WIDTHS[p] for p in self.sctype.split(","))
        for sent, (n, ncols, names, rows) in score_counts.items():
            if ncols != width or names != [self.sctype]:
                raise MosesDriverError(f"{score_file}: sentence {sent}: header expects '{width} {self.sctype}', "
                                       f"got {ncols} {names}")
            for row in rows:
                toks = row.split()
                if len(toks) != width or not all(re.fullmatch(r"\d+", t, re.ASCII) for t in toks):
                    raise MosesDriverError(f"{score_file}: sentence {sent}: bad {self.sctype} statistics {row!r}")
            if n != feat_counts[sent][0]:
                raise MosesDriverError(f"sentence {sent}: {n} score rows but {feat_counts[sent][0]} feature rows")
        total = sum(v[0] for v in feat_counts.values())
        if not 0 < total <= n_hyps:
            raise MosesDriverError(f"{feature_file}: {total} hypotheses, the n-best list has {n_hyps}")
        return len(sparse_names)

    def _check_weight_lines(self, outfile: str, dim: int):
        """mert.out (PRO/MIRA): one F<i> line per dense feature, every line parseable, finite."""
        path = self.wd / outfile
        if not path.exists() or path.stat().st_size == 0:
            raise MosesDriverError(f"{outfile} does not exist or is empty")
        seen: dict[int, int] = {}
        with open(path, encoding="utf-8", errors="replace") as fh:
            for nr, line in enumerate(fh, 1):
                line = line.rstrip("\n")
                if not line.strip():
                    continue
                m = RE_DENSE.match(line)
                ms = RE_SPARSE.match(line) if not m else None
                mm = m or ms
                if mm is None:
                    raise MosesDriverError(f"{outfile}:{nr}: line mert-moses.pl ignores: {line!r}")
                if mm.end() != len(line.rstrip()):
                    raise MosesDriverError(f"{outfile}:{nr}: the weight regex reads only {mm.group(0)!r} "
                                           f"of {line!r}")
                _finite(mm.group(2), f"{outfile}:{nr}")
                if m:
                    seen[int(m.group(1))] = seen.get(int(m.group(1)), 0) + 1
        want = {i: 1 for i in range(dim)}
        if seen != want:
            raise MosesDriverError(f"{outfile}: dense lines F<i> seen {dict(sorted(seen.items()))}, "
                                   f"expected exactly one for each of F0..F{dim - 1}")

    def _check_weights_txt(self, bestpoint: str, dim: int):
        """MERT: weights.txt must hold the best point (DIM finite numbers)."""
        text = (self.wd / "weights.txt").read_text(encoding="utf-8", errors="replace")
        toks = text.split()
        if len(toks) != dim:
            raise MosesDriverError(f"weights.txt has {len(toks)} values, expected {dim}: {text[:300]!r}")
        w = [_finite(t, "weights.txt") for t in toks]
        bp = [_finite(t, "mert.log Best point") for t in bestpoint.split()]
        if len(bp) == dim and any(abs(a - b) > 1e-4 * max(1.0, abs(b)) for a, b in zip(w, bp)):
            raise MosesDriverError(f"weights.txt {toks} differs from mert.log's best point {bestpoint}")

    def _check_weights(self, run: int, newweights: list, dim: int):
        if len(newweights) != dim:
            raise MosesDriverError(f"run {run}: {len(newweights)} weights ({' '.join(newweights)}), DIM is {dim}")
        for w in newweights:
            _finite(w, f"run {run}: weight")


# ------------------------------------------------------------------ helpers
def _column_names(names: list) -> list:
    counts: dict[str, int] = {}
    out = []
    for n in names:
        k = counts.get(n, 0)
        out.append(f"{n}_{k}")
        counts[n] = k + 1
    return out


def _finite(tok: str, where: str) -> float:
    try:
        v = strict_float(tok)
    except ValueError:
        raise MosesDriverError(f"{where}: {tok!r} is not a number") from None
    if not math.isfinite(v):
        raise MosesDriverError(f"{where}: {tok!r} is not finite")
    return v


def _check_bleu_value(s: str, where: str):
    try:
        v = strict_float(s)
    except ValueError:
        raise MosesDriverError(f"{where}: {s!r} is not a number") from None
    if not 0.0 <= v <= 1.0:
        raise MosesDriverError(f"{where}: BLEU {v} outside [0, 1]")


def _check_pro_data(path: Path):
    if not path.exists() or path.stat().st_size == 0:
        raise MosesDriverError(f"{path.name} does not exist or is empty")
    with open(path, encoding="utf-8", errors="replace") as fh:
        for nr, line in enumerate(fh, 1):
            toks = line.split()
            if not toks or toks[0] not in ("0", "1") or len(toks) % 2 != 1:
                raise MosesDriverError(f"{path.name}:{nr}: expected '0|1 name value ...', got {line[:200]!r}")
            for t in toks[2::2]:
                _finite(t, f"{path.name}:{nr}")


def _read_blocks(path: Path, kind: str, n_sentences: int) -> dict:
    """{sentence: (n rows, n columns, names, rows)} of a features.dat / scores.dat text file."""
    if not path.exists() or path.stat().st_size == 0:
        raise MosesDriverError(f"{path.name} does not exist or is empty")
    blocks: dict[int, tuple] = {}
    with open(path, encoding="utf-8", errors="replace") as fh:
        lines = fh.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    i = 0
    while i < len(lines):
        head = lines[i].split()
        if not head or head[0] != f"{kind}_TXT_BEGIN_0" or len(head) < 4:
            raise MosesDriverError(f"{path.name}:{i + 1}: expected {kind}_TXT_BEGIN_0, got {lines[i][:100]!r}")
        try:
            sent, n, ncols = int(head[1]), int(head[2]), int(head[3])
        except ValueError:
            raise MosesDriverError(f"{path.name}:{i + 1}: bad header {lines[i][:200]!r}") from None
        rows = lines[i + 1:i + 1 + n]
        end = i + 1 + n
        if len(rows) != n or end >= len(lines) or lines[end].strip() != f"{kind}_TXT_END_0":
            raise MosesDriverError(f"{path.name}:{i + 1}: block of sentence {sent} does not hold {n} rows "
                                   f"followed by {kind}_TXT_END_0")
        if sent in blocks:
            raise MosesDriverError(f"{path.name}: sentence {sent} twice")
        if n < 1:
            raise MosesDriverError(f"{path.name}: sentence {sent} has no rows")
        blocks[sent] = (n, ncols, head[4:], rows)
        i = end + 1
    if sorted(blocks) != list(range(n_sentences)):
        raise MosesDriverError(f"{path.name}: sentences {sorted(blocks)[:5]}... do not cover 0..{n_sentences - 1}")
    return blocks


def _tail(text: str, n: int = 30) -> str:
    lines = text.rstrip("\n").split("\n")
    return "\n".join(lines[-n:])


def _tail_file(path: Path) -> str:
    try:
        return _tail(path.read_text(encoding="utf-8", errors="replace"))
    except OSError as exc:
        return f"({exc})"


def read_dense_file(path) -> list:
    """A run$N.dense file -> [(name, [value strings])] with repeated names merged."""
    out: list = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            m = re.match(r"^(\S+)= (\S+)\s*$", line)
            if not m:
                continue
            if out and out[-1][0] == m.group(1):
                out[-1][1].append(m.group(2))
            else:
                out.append((m.group(1), [m.group(2)]))
    return out


def default_decoder() -> str:
    # mert-moses.pl decodes the whole tuning set in one process: input line i is sentence i
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(STANDIN_DECODER))} -standin-by-position"


def run_mert_moses(mertdir, workdir, mode, iterations=3, *, references=(TOY_REFERENCE,), decoder=None,
                   decoder_flags="", start_weights=None, nbest_size=20, random_restarts=20,
                   predictable_seeds=True, threads=None, mertargs=None, mertmertargs="",
                   extractorargs="", batch_mira_args="", proargs="", nocase=False, sparse=False,
                   timeout=600, log=None) -> MosesRun:
    """Run mert-moses.pl's loop for ``iterations`` iterations (fewer if no weight moves).

    mode: "mert", "batch-mira" (``--batch-mira``) or "pairwise-ranked" (``--pairwise-ranked``).
    mertargs / mertmertargs / extractorargs / batch_mira_args / proargs: as mert-moses.pl's
    ``--mertargs`` (None: not given, so ``--batch-mira-args``, as the script), ``--mertmertargs``, ``--extractorargs``,
    ``--batch-mira-args``, ``--proargs``. random_restarts: ``--random-restarts`` (mert ``-n``).
    predictable_seeds: ``--predictable-seeds`` (seed = 1000 × iteration). sparse: the stand-in
    decoder adds synthetic sparse features. start_weights: [(name, [values])]; default the
    toy system's run1.dense. Returns a :class:`MosesRun`; raises :class:`MosesDriverError`.
    """
    if start_weights is None:
        start_weights = read_dense_file(TOY_DENSE)
    drv = _Driver(mertdir, workdir, mode, iterations=iterations, references=list(references),
                  decoder=decoder or default_decoder(), decoder_flags=decoder_flags,
                  start_weights=start_weights, nbest_size=nbest_size, random_restarts=random_restarts,
                  predictable_seeds=predictable_seeds, threads=threads, mertargs=mertargs,
                  mertmertargs=mertmertargs, extractorargs=extractorargs, batch_mira_args=batch_mira_args,
                  proargs=proargs, nocase=nocase, sparse=sparse, timeout=timeout, log=log)
    return drv.run()


def find_mertdir(repo=None) -> Path:
    """The directory printed by ``python -m mtplug mertdir`` (run in the repository)."""
    repo = Path(repo) if repo else HERE.parents[1]
    p = subprocess.run([sys.executable, "-m", "mtplug", "mertdir"], cwd=repo, capture_output=True, text=True,
                       timeout=120)
    if p.returncode != 0:
        raise MosesDriverError(f"`{sys.executable} -m mtplug mertdir` failed with exit status {p.returncode}:\n"
                               + _tail(p.stderr or p.stdout))
    lines = [ln for ln in p.stdout.splitlines() if ln.strip()]
    if len(lines) != 1:
        raise MosesDriverError(f"`python -m mtplug mertdir` printed {p.stdout!r}, expected one line")
    path = Path(lines[0].strip())
    if not path.is_absolute():
        raise MosesDriverError(f"`python -m mtplug mertdir` printed a relative path {lines[0]!r}")
    return path


def check_mertdir(mertdir) -> None:
    """Raise unless every program mert-moses.pl runs is an executable file in ``mertdir``."""
    missing = [n for n in PROGRAMS
               if not ((Path(mertdir) / n).is_file() and os.access(Path(mertdir) / n, os.X_OK))]
    if missing:
        raise MosesDriverError(f"{mertdir}: missing or not executable: {', '.join(missing)}")


def read_nbest_gz(path) -> list:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return fh.read().splitlines()
