#!/usr/bin/env python3
"""Build a cdec German-English Hiero system from the public Multi30k data.

    python benchmarks/reproductions/make_multi30k_system.py --cdec /path/to/cdec/build \\
        --data-git /path/to/OpenNMT-py.git --out SYSTEMS/multi30k [--jobs 2] [--dev-size 500]
    python benchmarks/reproductions/make_multi30k_system.py --cdec ... --data FOLDER --out ...

Data
----
Multi30k (Elliott, Frank, Sima'an & Specia 2016, "Multi30K: Multilingual English-German
Image Descriptions"), task 1, German-English, raw sentences one per line, as shipped in the
github repository OpenNMT/OpenNMT-py at commit dfd709347344498c472c8fcc594c2089aedaebc6
("first traning", 2017-04-23; not on that repository's default branch), paths

    data/multi30k/train.de  train.en    29,000 pairs   -> training corpus (grammar, LM), and
                                                          the dev set (OUT/dev.*; its last
                                                          --dev-size filtered pairs, step 3)
    data/multi30k/val.de    val.en       1,014 pairs   -> tuning set  (OUT/tune.*)
    data/multi30k/test.de   test.en      1,000 pairs   -> test set    (OUT/test.*; test2016)

The three held-out sets are those of the reproduction tooling (make_galley_pools.py): tune
for tuning the weights, dev for choosing hyper-parameters on sentences neither tuning nor
test, test for the reported scores. Multi30k ships no third held-out set, so dev is cut from
the end of the training corpus and taken out of the grammar's and the LM's data.

read with ``git --git-dir GIT_DIR show COMMIT:data/multi30k/FILE`` (``--data-git``,
``--commit``), or from a folder holding these six files (``--data``). Nothing of the data
is committed to mtplug: the corpus is Multi30k's (captions of Flickr30K images, distributed
for research use under the terms of the Multi30k and Flickr30K releases), so the script
reads it at build time and the built system lives outside the repository.

Steps (each is skipped when its output exists, so a rerun resumes; every output is
written under a temporary name and renamed when complete; the heavy programs run under
``nice -n NICE``):

1. ``data``: the six raw files -> OUT/data/raw/; the German and English line counts of
   each set must match.
2. ``tokenize``: cdec's ``corpus/tokenize-anything.sh | corpus/lowercase.pl`` (as the
   data of the first cdec system, docs/real-systems.md) -> OUT/data/{train,val,test}
   .tok.{de,en}; the line counts must not change.
3. ``filter``: the training pairs, minus every pair whose German line equals a tuning or
   test German line or whose English line equals a tuning or test English line (after
   tokenization), pairs with an empty side, pairs with a side longer than 80 tokens, and
   pairs holding the extractor's field separator ``|||`` -> OUT/data/train.{de,en} and
   the bitext OUT/data/train.bitext (``de ||| en``); the counts dropped are reported.
   Then, with ``--dev-size N`` (default 500; 0 = no dev set), the LAST N of the pairs
   kept become the dev set, OUT/data/dev.tok.{de,en}, and leave the training corpus; so
   does every other training pair whose German line equals a dev German line or whose
   English line equals a dev English line (counted as ``dev_overlap_de`` and
   ``dev_overlap_en_only``). No dev line is then a line of the bitext, and so none is in
   the grammars' data or the LM text (step 7; both checked). N is recorded in
   OUT/logs/steps.json (``filter.dev_size``): a rerun over a folder whose filter step was
   made with another N (or by the version of this script without a dev set, whose OUT/dev.*
   was the tuning set) stops with an error instead of mixing the two; use a fresh --out.
4. ``align``: ``fast_align -i train.bitext -d -o -v`` (forward) and ``... -r`` (reverse;
   the two run together when --jobs >= 2), ``atools -i fwd -j rev -c grow-diag-final-and``
   -> OUT/align/{fwd,rev,sym}.align.
5. ``sacompile``: ``extractor/sacompile -b train.bitext -a sym.align -o OUT/sa -c
   OUT/sa/extract.ini`` (the binary suffix array, alignment, precomputed collocations,
   vocabulary and lexical translation table, and the config naming them; the config is
   written last, under a temporary name).
6. ``extract``: ``extractor/extract -c OUT/sa/extract.ini -g DIR -t JOBS -z`` on the
   tokenized tuning, dev (when --dev-size > 0) and test German (the extractor's defaults:
   rule span 15, 5 symbols, 2 nonterminals, 300 samples) ->
   OUT/grammars/{tune,dev,test}/grammar.N.gz, one gzipped
   grammar per sentence, N from 0 (the name extract.cc's GetGrammarFilePath gives). Rules
   carry seven named dense features (EgivenFCoherent SampleCountF CountEF MaxLexFgivenE
   MaxLexEgivenF IsSingletonF IsSingletonFE). DIR is OUT/grammars/SET.tmp, renamed once every
   sentence has its grammar; extract's own seg lines (naming DIR) are kept as
   OUT/logs/extract-SET.sgm only.
7. ``lm``: the filtered training English only (no tuning, dev or test English; checked) ->
   OUT/lm.txt; ``lmplz -o ORDER -S 20% -T OUT/tmp --discount_fallback`` -> OUT/lm.arpa.gz,
   ``build_binary`` -> OUT/lm.klm.
8. ``system``: OUT/tune.de, OUT/dev.de, OUT/test.de as cdec input lines ``<seg id="N"
   grammar="ABS/grammars/SET/grammar.N.gz"> tokens </seg>`` (the form of
   training/dtrain/examples/parallelized's inputs; the decoder reads the attributes with
   utils/stringlib.cc's ProcessAndStripSGML; N from 0 in each set), OUT/tune.en,
   OUT/dev.en, OUT/test.en (tokenized lowercased references), OUT/tune.devset and
   OUT/dev.devset (``seg line ||| ref``), OUT/cdec.ini (scfg, pass-through
   rules, span limit 15 = the extractor's max_rule_span, cube pruning with pop limit 200,
   WordPenalty, KLanguageModel ABS/lm.klm; no ``grammar=`` line: the grammars are per
   sentence), OUT/cdec-sparse.ini (cdec.ini + RuleIdentityFeatures,
   RuleSourceBigramFeatures, RuleTargetBigramFeatures, RuleShape, LexicalFeatures 1 1 1,
   the sparse set of the first cdec system, docs/real-systems.md) and OUT/weights.start (see START_WEIGHTS).
9. OUT/provenance.json (data source, the sets, line counts, dropped pairs, tool paths,
   every command with its wall time, grammar and LM sizes) and a short summary on stdout.

The system folder (OUT):

    tune.de tune.en tune.devset    the tuning set (val): seg lines, references, both
    dev.de dev.en dev.devset       the dev set (the last --dev-size filtered training pairs)
    test.de test.en                the test set (test2016)
    cdec.ini cdec-sparse.ini weights.start
    lm.klm lm.arpa.gz lm.txt       the LM and its text
    grammars/{tune,dev,test}/      the per-sentence grammars the seg lines name (absolute
                                   paths: the folder cannot be moved without rewriting them)
    data/ align/ sa/ logs/         intermediate files; logs/steps.json, provenance.json

With --dev-size 0 there is no dev.*, nor grammars/dev/.

Progress lines and the summary go to stdout, the programs' own messages to OUT/logs/; an error
prints one line on stderr (``make_multi30k_system: error: ...``) and exits with status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NoReturn

PROG = "make_multi30k_system"
DEFAULT_COMMIT = "dfd709347344498c472c8fcc594c2089aedaebc6"
DATA_REPO = "github.com/OpenNMT/OpenNMT-py"
DATA_PREFIX = "data/multi30k"
SETS = ("train", "val", "test")
LANGS = ("de", "en")
MAX_TOKENS = 80

# Start weights of the extractor's dense features. The sign says whether a larger value
# should make a rule more (+) or less (-) attractive, as the signs of cdec's example weights
# for the same seven scores (the dtrain example grammar's PhraseModel_0..6, which
# the first cdec system starts from):
#   EgivenFCoherent  -log10 p(e|f) (a cost)                  -> -0.1
#   SampleCountF     log10(1 + sampled count of f)           -> +0.1
#   CountEF          log10(1 + count of (f, e))              -> +0.1
#   MaxLexFgivenE    sum of -log10 max lexical p(f|e) (cost) -> -0.1
#   MaxLexEgivenF    sum of -log10 max lexical p(e|f) (cost) -> -0.1
#   IsSingletonF     1 if f was seen once (unreliable)       -> -0.1
#   IsSingletonFE    1 if (f, e) was seen once (unreliable)  -> -0.1
GRAMMAR_FEATURE_SIGNS = {
    "EgivenFCoherent": -1,
    "SampleCountF": 1,
    "CountEF": 1,
    "MaxLexFgivenE": -1,
    "MaxLexEgivenF": -1,
    "IsSingletonF": -1,
    "IsSingletonFE": -1,
}
# the decoder's own dense features (as the first cdec system's weights.start)
START_WEIGHTS = {
    "LanguageModel": 0.1,
    "WordPenalty": 0.0,
    "Glue": 0.0,
    "PassThrough": -0.1,
    "LanguageModel_OOV": -0.1,
}
SPARSE_FFS = (
    "RuleIdentityFeatures",
    "RuleSourceBigramFeatures",
    "RuleTargetBigramFeatures",
    "RuleShape",
    "LexicalFeatures 1 1 1",
)
TOOLS = {
    "tokenize": "corpus/tokenize-anything.sh",
    "lowercase": "corpus/lowercase.pl",
    "fast_align": "word-aligner/fast_align",
    "atools": "utils/atools",
    "sacompile": "extractor/sacompile",
    "extract": "extractor/extract",
    "lmplz": "klm/lm/builder/lmplz",
    "build_binary": "klm/lm/build_binary",
    "cdec": "decoder/cdec",
}


class BuildError(Exception):
    """A failure reported as one line, exit status 2."""


def tmp_of(path: Path) -> Path:
    return path.with_name(path.name + ".tmp")


def count_lines(path: Path) -> int:
    with open(path, "rb") as fh:
        return sum(1 for _ in fh)


def read_lines(path: Path) -> list[str]:
    with open(path, encoding="utf-8", newline="\n") as fh:
        return [line.rstrip("\n") for line in fh]


def write_atomic(path: Path, text: str) -> None:
    tmp = tmp_of(path)
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_lines_atomic(path: Path, lines: list[str]) -> None:
    write_atomic(path, "".join(line + "\n" for line in lines))


class Builder:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.cdec = Path(args.cdec).resolve()
        self.out = Path(args.out).resolve()
        self.nice = ["nice", "-n", str(args.nice)] if args.nice else []
        self.tools = {name: self.cdec / rel for name, rel in TOOLS.items()}
        self.data = self.out / "data"
        self.align = self.out / "align"
        self.sa = self.out / "sa"
        self.grammars = self.out / "grammars"
        self.logs = self.out / "logs"
        self.state_path = self.out / "logs" / "steps.json"
        self.steps: dict[str, dict] = {}

    # -- bookkeeping -------------------------------------------------------------------
    def load_state(self) -> None:
        if self.state_path.exists():
            with contextlib.suppress(ValueError):
                self.steps = json.loads(self.state_path.read_text(encoding="utf-8"))

    def save_state(self) -> None:
        write_atomic(self.state_path, json.dumps(self.steps, indent=1, ensure_ascii=False) + "\n")

    def step(self, name: str, done: bool, func) -> None:
        if done and name in self.steps:
            self.steps[name]["skipped_last_run"] = True
            print(f"[{name}] done already, skipped", flush=True)
            return
        print(f"[{name}] ...", flush=True)
        record: dict = {"commands": []}
        self.current = record
        t0 = time.perf_counter()
        info = func() or {}
        record.update(info)
        record["seconds"] = round(time.perf_counter() - t0, 2)
        record["skipped_last_run"] = False
        self.steps[name] = record
        self.save_state()
        print(f"[{name}] {record['seconds']:.1f} s", flush=True)

    def _note(self, cmds: list[list[str]], stdin: Path | None, stdout: Path | None, seconds: float) -> None:
        parts = [shlex.join(c) for c in cmds]
        if stdin is not None:
            parts[0] += f" < {stdin}"
        text = " | ".join(parts)
        if stdout is not None:
            text += f" > {stdout}"
        self.current["commands"].append({"cmd": text, "seconds": round(seconds, 2)})

    # -- running programs --------------------------------------------------------------
    def pipeline(self, cmds: list[list[str]], stdin: Path | None, stdout: Path | None, log: str) -> float:
        """Run ``cmds`` as a pipeline (stdin/stdout files; stderr of all to logs/LOG); time."""
        logpath = self.logs / log
        t0 = time.perf_counter()
        procs: list[subprocess.Popen] = []
        with contextlib.ExitStack() as stack:
            err = stack.enter_context(open(logpath, "ab"))
            err.write(("$ " + " | ".join(shlex.join(c) for c in cmds) + "\n").encode())
            err.flush()
            fin = stack.enter_context(open(stdin, "rb")) if stdin is not None else subprocess.DEVNULL
            fout = stack.enter_context(open(stdout, "wb")) if stdout is not None else subprocess.DEVNULL
            prev = fin
            for i, cmd in enumerate(cmds):
                last = i == len(cmds) - 1
                try:
                    p = subprocess.Popen(cmd, stdin=prev, stdout=fout if last else subprocess.PIPE, stderr=err)
                except OSError as e:
                    for q in procs:
                        q.kill()
                    raise BuildError(f"cannot run {cmd[0]}: {e.strerror}") from None
                if i > 0 and procs[-1].stdout is not None:
                    procs[-1].stdout.close()  # the next process owns the pipe's read end
                procs.append(p)
                prev = p.stdout
            codes = [p.wait() for p in procs]
        for cmd, code in zip(cmds, codes):
            if code != 0:
                prog = Path(cmd[len(self.nice)] if cmd[: len(self.nice)] == self.nice else cmd[0]).name
                raise BuildError(f"{prog} failed (exit {code}); see {logpath}")
        seconds = time.perf_counter() - t0
        self._note(cmds, stdin, stdout, seconds)
        return seconds

    def run(self, cmd: list[str], log: str, stdin: Path | None = None, stdout: Path | None = None) -> float:
        return self.pipeline([cmd], stdin, stdout, log)

    def run_together(self, jobs: list[tuple[list[str], Path | None, Path | None]], log: str) -> None:
        """Run independent commands, up to --jobs at a time."""
        if self.args.jobs < 2 or len(jobs) < 2:
            for cmd, fin, fout in jobs:
                self.run(cmd, log, fin, fout)
            return
        with ThreadPoolExecutor(max_workers=min(self.args.jobs, len(jobs))) as ex:
            futures = [ex.submit(self.run, cmd, f"{log}.{i}", fin, fout) for i, (cmd, fin, fout) in enumerate(jobs)]
            for f in futures:
                f.result()

    # -- steps -------------------------------------------------------------------------
    def raw(self, s: str, lang: str) -> Path:
        return self.data / "raw" / f"{s}.{lang}"

    def tok(self, s: str, lang: str) -> Path:
        return self.data / f"{s}.tok.{lang}"

    def step_data(self) -> dict:
        (self.data / "raw").mkdir(parents=True, exist_ok=True)
        files: dict[str, dict] = {}
        for s in SETS:
            for lang in LANGS:
                name = f"{s}.{lang}"
                dest = self.raw(s, lang)
                if self.args.data:
                    src = Path(self.args.data) / name
                    try:
                        blob = src.read_bytes()
                    except OSError as e:
                        raise BuildError(f"cannot read {src}: {e.strerror}") from None
                    where = {"path": str(src.resolve())}
                else:
                    path = f"{DATA_PREFIX}/{name}"
                    spec = f"{self.args.commit}:{path}"
                    git = ["git", "--git-dir", str(self.args.data_git)]
                    p = subprocess.run(git + ["show", spec], capture_output=True, check=False)
                    if p.returncode != 0:
                        msg = p.stderr.decode(errors="replace").strip().splitlines()
                        raise BuildError(
                            f"cannot read {spec} from {self.args.data_git}: {msg[0] if msg else 'git failed'}"
                        )
                    blob = p.stdout
                    oid = subprocess.run(git + ["rev-parse", spec], capture_output=True, check=False, text=True)
                    where = {"path": path, "git_blob": oid.stdout.strip()}
                try:
                    blob.decode("utf-8")
                except UnicodeDecodeError:
                    raise BuildError(f"{name} is not UTF-8") from None
                if blob and not blob.endswith(b"\n"):
                    blob += b"\n"
                tmp = tmp_of(dest)
                tmp.write_bytes(blob)
                os.replace(tmp, dest)
                where.update(lines=blob.count(b"\n"), sha256=hashlib.sha256(blob).hexdigest())
                files[name] = where
        for s in SETS:
            n_de, n_en = files[f"{s}.de"]["lines"], files[f"{s}.en"]["lines"]
            if n_de != n_en:
                raise BuildError(f"{s}.de has {n_de} lines but {s}.en has {n_en}")
            if n_de == 0:
                raise BuildError(f"{s}.de is empty")
        return {"files": files}

    def step_tokenize(self) -> dict:
        counts = {}
        for s in SETS:
            for lang in LANGS:
                dest = self.tok(s, lang)
                tmp = tmp_of(dest)
                self.pipeline(
                    [self.nice + [str(self.tools["tokenize"])], self.nice + ["perl", str(self.tools["lowercase"])]],
                    self.raw(s, lang),
                    tmp,
                    "tokenize.log",
                )
                n_raw, n_tok = count_lines(self.raw(s, lang)), count_lines(tmp)
                if n_raw != n_tok:
                    raise BuildError(f"tokenizing {s}.{lang} changed its line count: {n_raw} -> {n_tok}")
                os.replace(tmp, dest)
                counts[f"{s}.{lang}"] = n_tok
        return {"lines": counts}

    def step_filter(self) -> dict:
        train = {lang: read_lines(self.tok("train", lang)) for lang in LANGS}
        held = {
            lang: set(read_lines(self.tok("val", lang))) | set(read_lines(self.tok("test", lang))) for lang in LANGS
        }
        for s in ("val", "test"):
            for i, line in enumerate(read_lines(self.tok(s, "de"))):
                if "|||" in line:
                    raise BuildError(f"{s}.de line {i + 1} holds '|||', which the grammar extractor splits on")
        kept_de: list[str] = []
        kept_en: list[str] = []
        dropped = {"overlap_de": 0, "overlap_en_only": 0, "empty": 0, "too_long": 0, "separator": 0}
        for de, en in zip(train["de"], train["en"]):
            de, en = " ".join(de.split()), " ".join(en.split())
            if de in held["de"]:
                dropped["overlap_de"] += 1
            elif en in held["en"]:
                dropped["overlap_en_only"] += 1
            elif not de or not en:
                dropped["empty"] += 1
            elif len(de.split()) > MAX_TOKENS or len(en.split()) > MAX_TOKENS:
                dropped["too_long"] += 1
            elif "|||" in de or "|||" in en:
                dropped["separator"] += 1
            else:
                kept_de.append(de)
                kept_en.append(en)
        n_dev = self.args.dev_size
        if len(kept_de) <= n_dev:
            raise BuildError(f"only {len(kept_de)} training pairs are left after filtering, --dev-size is {n_dev}")
        # the dev set: the last n_dev pairs kept; out of training, with every pair sharing a line with it
        cut = len(kept_de) - n_dev
        dev_de, dev_en = kept_de[cut:], kept_en[cut:]
        dev_set = {"de": set(dev_de), "en": set(dev_en)}
        dropped["dev_overlap_de"] = dropped["dev_overlap_en_only"] = 0
        train_de: list[str] = []
        train_en: list[str] = []
        for de, en in zip(kept_de[:cut], kept_en[:cut]):
            if de in dev_set["de"]:
                dropped["dev_overlap_de"] += 1
            elif en in dev_set["en"]:
                dropped["dev_overlap_en_only"] += 1
            else:
                train_de.append(de)
                train_en.append(en)
        if not train_de:
            raise BuildError("no training pair is left after filtering")
        if dev_set["de"] & set(train_de) or dev_set["en"] & set(train_en):
            raise BuildError("a dev line is still in the training corpus")  # cannot happen: checked all the same
        if n_dev:
            write_lines_atomic(self.tok("dev", "de"), dev_de)
            write_lines_atomic(self.tok("dev", "en"), dev_en)
        write_lines_atomic(self.data / "train.de", train_de)
        write_lines_atomic(self.data / "train.en", train_en)
        # last: its presence marks the step done
        write_lines_atomic(self.data / "train.bitext", [f"{d} ||| {e}" for d, e in zip(train_de, train_en)])
        return {
            "train_in": len(train["de"]),
            "dev_size": n_dev,
            "dev_pairs": len(dev_de),
            "dev_distinct": {"de": len(dev_set["de"]), "en": len(dev_set["en"])},
            "train_kept": len(train_de),
            "dropped": dropped,
            "dropped_total": sum(dropped.values()),
            "note": (
                f"overlap = equal (tokenized, lowercased) to a val or test line; too_long = over {MAX_TOKENS} "
                f"tokens; dev = the last {n_dev} pairs left by these filters; dev_overlap = a training pair whose "
                "German (or else English) line equals a dev line, dropped; train_in = train_kept + dev_pairs + "
                "dropped_total"
            ),
        }

    def step_align(self) -> dict:
        self.align.mkdir(parents=True, exist_ok=True)
        bitext = str(self.data / "train.bitext")
        fa = self.nice + [str(self.tools["fast_align"]), "-i", bitext, "-d", "-o", "-v"]
        fwd, rev, sym = (self.align / f"{n}.align" for n in ("fwd", "rev", "sym"))
        self.run_together([(fa, None, tmp_of(fwd)), (fa + ["-r"], None, tmp_of(rev))], "fast_align.log")
        n = count_lines(self.data / "train.bitext")
        for path in (tmp_of(fwd), tmp_of(rev)):
            if count_lines(path) != n:
                raise BuildError(f"{path.name} has {count_lines(path)} lines, the bitext {n}")
        os.replace(tmp_of(fwd), fwd)
        os.replace(tmp_of(rev), rev)
        at = self.nice + [str(self.tools["atools"]), "-i", str(fwd), "-j", str(rev), "-c", "grow-diag-final-and"]
        self.run(at, "atools.log", None, tmp_of(sym))
        if count_lines(tmp_of(sym)) != n:
            raise BuildError(f"sym.align has {count_lines(tmp_of(sym))} lines, the bitext {n}")
        os.replace(tmp_of(sym), sym)
        links = sum(len(line.split()) for line in read_lines(sym))
        return {"pairs": n, "links": links}

    def step_sacompile(self) -> dict:
        if self.sa.exists():
            shutil.rmtree(self.sa)  # an unfinished compile (its config was never renamed)
        self.sa.mkdir(parents=True)
        config = self.sa / "extract.ini"
        cmd = self.nice + [
            str(self.tools["sacompile"]),
            "-b",
            str(self.data / "train.bitext"),
            "-a",
            str(self.align / "sym.align"),
            "-o",
            str(self.sa),
            "-c",
            str(tmp_of(config)),
        ]
        self.run(cmd, "sacompile.log")
        os.replace(tmp_of(config), config)
        return {"bytes": sum(p.stat().st_size for p in self.sa.iterdir())}

    def out_sets(self) -> list[tuple[str, str]]:
        """(name in OUT, tokenized data set) of the held-out sets: tune = val, dev (if any), test."""
        sets = [("tune", "val")]
        if self.args.dev_size:
            sets.append(("dev", "dev"))
        return sets + [("test", "test")]

    def held_sets(self) -> list[str]:
        return [s for _, s in self.out_sets()]

    def grammar_file(self, name: str, i: int) -> Path:
        return self.grammars / name / f"grammar.{i}.gz"  # extract.cc: "grammar." + N + ".gz" with -z

    def step_extract(self, name: str, src: Path) -> dict:
        dest = self.grammars / name
        work = self.grammars / f"{name}.tmp"
        if work.exists():
            shutil.rmtree(work)
        self.grammars.mkdir(parents=True, exist_ok=True)
        # extract's own stdout (seg lines naming the temporary folder): kept as a log only
        sgm = self.logs / f"extract-{name}.sgm"
        cmd = self.nice + [
            str(self.tools["extract"]),
            "-c",
            str(self.sa / "extract.ini"),
            "-g",
            str(work),
            "-t",
            str(self.args.jobs),
            "-z",
        ]
        self.run(cmd, f"extract-{name}.log", src, tmp_of(sgm))
        n = count_lines(src)
        missing = [i for i in range(n) if not (work / f"grammar.{i}.gz").exists()]
        if missing:
            raise BuildError(f"extract wrote no grammar for {name} sentence {missing[0]} ({len(missing)} missing)")
        os.replace(tmp_of(sgm), sgm)
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(work, dest)
        return self.grammar_stats(name, n)

    def grammar_stats(self, name: str, n: int) -> dict:
        rules = []
        size = 0
        for i in range(n):
            path = self.grammar_file(name, i)
            size += path.stat().st_size
            with gzip.open(path, "rb") as fh:
                rules.append(sum(1 for _ in fh))
        return {
            "sentences": n,
            "rules_total": sum(rules),
            "rules_mean": round(sum(rules) / n, 1),
            "rules_min": min(rules),
            "rules_max": max(rules),
            "gz_bytes": size,
        }

    def step_lm(self) -> dict:
        lm_txt = self.out / "lm.txt"
        lines = read_lines(self.data / "train.en")
        held = set()
        for s in self.held_sets():
            held |= set(read_lines(self.tok(s, "en")))
        leaked = sum(1 for line in lines if line in held)
        if leaked:
            raise BuildError(f"{leaked} tuning/dev/test English lines are in the LM text")
        write_lines_atomic(lm_txt, lines)
        tmpdir = self.out / "tmp"
        tmpdir.mkdir(exist_ok=True)
        arpa = self.out / "lm.arpa"
        cmd = self.nice + [
            str(self.tools["lmplz"]),
            "-o",
            str(self.args.lm_order),
            "-S",
            "20%",
            "-T",
            str(tmpdir / "lm"),
            "--discount_fallback",
        ]
        self.run(cmd, "lmplz.log", lm_txt, tmp_of(arpa))
        os.replace(tmp_of(arpa), arpa)
        klm = self.out / "lm.klm"
        self.run(self.nice + [str(self.tools["build_binary"]), str(arpa), str(tmp_of(klm))], "build_binary.log")
        ngrams = {}
        with open(arpa, encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("ngram "):
                    order, count = line[6:].strip().split("=")
                    ngrams[order] = int(count)
                elif line.startswith("\\1-grams:"):
                    break
        gz = self.out / "lm.arpa.gz"
        with open(arpa, "rb") as fin, gzip.open(tmp_of(gz), "wb") as fout:
            shutil.copyfileobj(fin, fout)
        os.replace(tmp_of(gz), gz)
        os.replace(tmp_of(klm), klm)
        arpa.unlink()
        shutil.rmtree(tmpdir, ignore_errors=True)
        return {
            "order": self.args.lm_order,
            "text_lines": len(lines),
            "text_tokens": sum(len(line.split()) for line in lines),
            "ngrams": ngrams,
            "klm_bytes": klm.stat().st_size,
        }

    def grammar_feature_names(self) -> list[str]:
        names: set[str] = set()
        for name, s in self.out_sets():
            for i in range(min(5, count_lines(self.tok(s, "de")))):
                with gzip.open(self.grammar_file(name, i), "rt", encoding="utf-8") as fh:
                    for line in fh:
                        fields = line.split(" ||| ")
                        if len(fields) < 4:
                            raise BuildError(f"unexpected grammar line in {self.grammar_file(name, i)}: {line[:80]!r}")
                        for tok in fields[3].split():
                            if "=" not in tok:
                                raise BuildError(f"unnamed feature value in {self.grammar_file(name, i)}: {tok!r}")
                            names.add(tok.split("=", 1)[0])
        unknown = sorted(names - set(GRAMMAR_FEATURE_SIGNS))
        if unknown:
            raise BuildError(f"grammar feature(s) without a start-weight sign: {' '.join(unknown)}")
        if not names:
            raise BuildError("the grammars hold no rules")
        return [n for n in GRAMMAR_FEATURE_SIGNS if n in names]

    def step_system(self) -> dict:
        files = {}
        for name, s in self.out_sets():
            src = read_lines(self.tok(s, "de"))
            refs = read_lines(self.tok(s, "en"))
            segs = [
                f'<seg id="{i}" grammar="{self.grammar_file(name, i)}"> {line} </seg>' for i, line in enumerate(src)
            ]
            write_lines_atomic(self.out / f"{name}.de", segs)
            write_lines_atomic(self.out / f"{name}.en", refs)
            if name in ("tune", "dev"):
                write_lines_atomic(self.out / f"{name}.devset", [f"{g} ||| {r}" for g, r in zip(segs, refs)])
            files[name] = len(segs)
        ini = [
            "formalism=scfg",
            "add_pass_through_rules=true",
            "scfg_max_span_limit=15",
            "intersection_strategy=cube_pruning",
            "cubepruning_pop_limit=200",
            "feature_function=WordPenalty",
            f"feature_function=KLanguageModel {self.out / 'lm.klm'}",
        ]
        write_lines_atomic(self.out / "cdec-sparse.ini", ini + [f"feature_function={ff}" for ff in SPARSE_FFS])
        feats = self.grammar_feature_names()
        weights = dict(START_WEIGHTS)
        weights.update({n: 0.1 * GRAMMAR_FEATURE_SIGNS[n] for n in feats})
        write_lines_atomic(self.out / "weights.start", [f"{k} {v:g}" for k, v in weights.items()])
        write_lines_atomic(self.out / "cdec.ini", ini)  # last: its presence marks the step done
        return {"sentences": files, "grammar_features": feats, "weights_start": weights}

    # -- driver ------------------------------------------------------------------------
    def check_inputs(self) -> None:
        if self.args.data:
            for s in SETS:
                for lang in LANGS:
                    f = Path(self.args.data) / f"{s}.{lang}"
                    if not f.is_file():
                        raise BuildError(f"--data {self.args.data}: no file {s}.{lang}")
        elif not Path(self.args.data_git).is_dir():
            raise BuildError(f"--data-git {self.args.data_git}: not a directory")
        for name, path in self.tools.items():
            if not path.exists():
                raise BuildError(f"--cdec {self.cdec}: no {TOOLS[name]} there")
        if self.nice and shutil.which("nice") is None:
            raise BuildError("nice is not on PATH (use --nice 0)")

    def check_layout(self) -> None:
        """Refuse to resume a folder whose filter step was made with another dev size."""
        record = self.steps.get("filter")
        built = (self.data / "train.bitext").exists() or (self.out / "cdec.ini").exists()
        if record is None and not built:
            return
        want = self.args.dev_size
        if record is None:
            what = "no record of its filter step in logs/steps.json"
        elif "dev_size" not in record:
            what = "the old layout (dev.* = the tuning set, no dev set)"
        elif record["dev_size"] != want:
            what = f"--dev-size {record['dev_size']}"
        else:
            return
        raise BuildError(f"{self.out} was built with {what}, not --dev-size {want}; use a fresh --out")

    def build(self) -> dict:
        self.check_inputs()
        self.logs.mkdir(parents=True, exist_ok=True)
        self.load_state()
        self.check_layout()
        t0 = time.perf_counter()
        tok_done = all(self.tok(s, lang).exists() for s in SETS for lang in LANGS)
        raw_done = all(self.raw(s, lang).exists() for s in SETS for lang in LANGS)
        self.step("data", raw_done, self.step_data)
        self.step("tokenize", tok_done, self.step_tokenize)
        self.step("filter", (self.data / "train.bitext").exists(), self.step_filter)
        self.step("align", (self.align / "sym.align").exists(), self.step_align)
        self.step("sacompile", (self.sa / "extract.ini").exists(), self.step_sacompile)
        for name, s in self.out_sets():
            self.step(
                f"extract_{name}",
                (self.grammars / name).is_dir(),
                lambda name=name, s=s: self.step_extract(name, self.tok(s, "de")),
            )
        self.step("lm", (self.out / "lm.klm").exists(), self.step_lm)
        self.step("system", (self.out / "cdec.ini").exists(), self.step_system)
        prov = self.provenance(time.perf_counter() - t0)
        write_atomic(self.out / "provenance.json", json.dumps(prov, indent=1, ensure_ascii=False) + "\n")
        return prov

    def provenance(self, seconds: float) -> dict:
        if self.args.data:
            source = {"folder": str(Path(self.args.data).resolve())}
        else:
            source = {
                "repository": DATA_REPO,
                "git_dir": str(Path(self.args.data_git).resolve()),
                "commit": self.args.commit,
                "paths": [f"{DATA_PREFIX}/{s}.{lang}" for s in SETS for lang in LANGS],
            }
        return {
            "system": str(self.out),
            "data": {
                "source": source,
                "citation": "Elliott et al. 2016, Multi30K (task 1, test2016)",
                **self.steps.get("data", {}),
            },
            "sets": {
                "tune": "val",
                "dev": (
                    f"train: the last {self.args.dev_size} pairs left by the filter (not in the training "
                    "corpus nor the LM, nor any training pair sharing a German or English line with them)"
                    if self.args.dev_size
                    else "none (--dev-size 0)"
                ),
                "test": "test (test2016)",
                "train": "train, filtered, minus the dev pairs and the pairs sharing a line with them",
            },
            "options": {
                "dev_size": self.args.dev_size,
                "lm_order": self.args.lm_order,
                "jobs": self.args.jobs,
                "nice": self.args.nice,
                "max_tokens": MAX_TOKENS,
            },
            "tools": {name: str(path) for name, path in self.tools.items()},
            "steps": self.steps,
            "this_run_seconds": round(seconds, 2),
        }


def summary(prov: dict) -> str:
    st = prov["steps"]
    f = st.get("filter", {})
    lm = st.get("lm", {})
    lines = [f"system: {prov['system']}"]
    sentences = st.get("system", {}).get("sentences", {})
    lines.append(
        "lines: train {} -> {} kept, dev {} (dropped {}: {}), tune {}, dev {}, test {}".format(
            f.get("train_in"),
            f.get("train_kept"),
            f.get("dev_pairs"),
            f.get("dropped_total"),
            ", ".join(f"{k} {v}" for k, v in f.get("dropped", {}).items()),
            sentences.get("tune"),
            sentences.get("dev", 0),
            sentences.get("test"),
        )
    )
    for name in ("tune", "dev", "test"):
        if f"extract_{name}" not in st:
            continue
        g = st[f"extract_{name}"]
        lines.append(
            f"grammars {name}: {g.get('sentences')} files, {g.get('rules_total')} rules "
            f"(mean {g.get('rules_mean')}, max {g.get('rules_max')}), {g.get('gz_bytes')} bytes gz"
        )
    lines.append(
        f"LM: order {lm.get('order')}, {lm.get('text_lines')} lines, n-grams {lm.get('ngrams')}, "
        f"lm.klm {lm.get('klm_bytes')} bytes"
    )
    lines.append("seconds: " + ", ".join(f"{k} {v.get('seconds')}" for k, v in st.items()))
    return "\n".join(lines)


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (no usage block), exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = OneLineParser(
        prog=PROG,
        description="Build a cdec de-en Hiero system (per-sentence grammars) from Multi30k.",
    )
    ap.add_argument("--cdec", required=True, metavar="CDEC_BUILD", help="cdec's build folder (built in-tree)")
    ap.add_argument("--out", required=True, metavar="FOLDER", help="the system folder to make")
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--data-git", metavar="GIT_DIR", help="git directory of OpenNMT/OpenNMT-py (holds --commit)")
    src.add_argument("--data", metavar="FOLDER", help="folder with train/val/test .de/.en (raw, one sentence a line)")
    ap.add_argument("--commit", default=DEFAULT_COMMIT, help="commit holding data/multi30k/ (default: %(default)s)")
    ap.add_argument(
        "--dev-size",
        type=int,
        default=500,
        metavar="N",
        help="the last N filtered training pairs become the dev set, out of training and LM; 0 = none "
        "(default: %(default)s)",
    )
    ap.add_argument("--lm-order", type=int, default=4, help="n-gram order of the LM (default: %(default)s)")
    ap.add_argument("--jobs", type=int, default=2, help="extractor threads / parallel aligners (default: %(default)s)")
    ap.add_argument(
        "--nice", type=int, default=15, help="nice level of the heavy steps, 0 = none (default: %(default)s)"
    )
    args = ap.parse_args(argv)
    if args.jobs < 1:
        ap.error("--jobs must be at least 1")
    if args.lm_order < 1:
        ap.error("--lm-order must be at least 1")
    if args.dev_size < 0:
        ap.error("--dev-size must be 0 or more")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        prov = Builder(args).build()
    except BuildError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"{PROG}: error: {e.filename or ''}: {e.strerror}", file=sys.stderr)
        return 2
    print(summary(prov))
    return 0


if __name__ == "__main__":
    sys.exit(main())
