#!/usr/bin/env python3
"""Tuning on real systems, mtplug against the decoders' own tuning tools (issue 19, section 3).

    python benchmarks/real_systems.py cdec --system DIR --cdec /path/to/cdec/build --out OUT \\
        [--runs mtplug-mert,cdec-mira,...] [--iterations 10] [--nbest 100] [--jobs 2] [--start weights]
    python benchmarks/real_systems.py moses --system DIR --moses /path/to/mosesdecoder --out OUT [...]
    python benchmarks/real_systems.py table OUT [OUT ...]        # the markdown table of finished runs

A run name may carry options for mtplug's tune and dtrain runs: ``mtplug-pro+psi=0.5`` is
``mtplug-pro`` with ``--psi 0.5``, ``mtplug-dtrain+pair_sampling=XYX-full`` overrides that
dtrain.ini key (its results are kept under that name).

A system folder holds dev/test source and reference files and the decoder's config:

* cdec: ``dev.de dev.en test.de test.en dev.devset`` ('src ||| ref' lines, for cdec's own
  drivers; ``--tune-set tune`` tunes on ``tune.de tune.en tune.devset`` instead, and the
  results' "dev" BLEU is then that set's), ``cdec.ini`` (``--config`` picks another, e.g.
  cdec-sparse.ini) and start weights;
* Moses: ``dev.fr dev.en test.fr test.en`` and ``train/model/moses.ini``.

Every run starts from the same weights, runs ``--iterations`` decoder iterations with
``--nbest``-best lists (what each tool calls them; dtrain: epochs), and its final weights
are decoded on dev and test by the same decoder; BLEU is mtplug's (equal to cdec's
fast_score and Moses's multi-bleu on tokenized text). Results go to ``OUT/results.jsonl``
(one line per run, with the command line); a finished run is not run again. Nothing of
Moses or cdec is built here: the script runs the programs of the builds it is given.
``pro.pl`` cannot be told how many iterations to run (its GetOptions lacks the flag it
advertises); the script runs a copy of it in OUT whose default is changed to --iterations.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

MTPLUG = [sys.executable, "-m", "mtplug"]
MTPLUG_OPTIMIZERS = ("mert", "pro", "apro", "mira", "kbmira", "rampion")


def bleu(hyp: Path, ref: Path) -> float:
    from mtplug.corpus import NbestCorpus
    from mtplug.formats.references import read_references

    corpus = NbestCorpus.from_plain(str(hyp), read_references([str(ref)]))
    return corpus.bleu_of_rows(corpus.sent_offsets[:-1]).score


def run(cmd: list[str], log: Path, cwd: Path | None = None, env: dict | None = None) -> float:
    """Run ``cmd`` (stdout+stderr to ``log``); its wall time. Raises on failure."""
    t0 = time.perf_counter()
    with open(log, "ab") as fh:
        fh.write(("$ " + shlex.join(cmd) + "\n").encode())
        fh.flush()
        p = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, cwd=cwd, env={**os.environ, **(env or {})})
    if p.returncode != 0:
        raise RuntimeError(f"exit {p.returncode}: {shlex.join(cmd)} (see {log})")
    return time.perf_counter() - t0


# ---------------------------------------------------------------------------------------- cdec
class Cdec:
    def __init__(self, args):
        self.a = args
        self.sys = Path(args.system).resolve()
        self.build = Path(args.cdec).resolve()
        self.cdec = self.build / "decoder" / "cdec"
        self.config = (self.sys / args.config).resolve()
        self.start = Path(args.start).resolve() if args.start else self.sys / "weights.start"
        stem = getattr(args, "tune_set", "dev")
        self.src, self.ref, self.devset = (self.sys / f"{stem}.{ext}" for ext in ("de", "en", "devset"))
        self.test_src, self.test_ref = self.sys / "test.de", self.sys / "test.en"

    def decode(self, weights: Path, src: Path, out: Path, log: Path) -> None:
        """1-best translation of ``src`` (--jobs processes on contiguous parts)."""
        lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
        jobs = max(1, min(self.a.jobs, len(lines)))
        cut = [len(lines) * k // jobs for k in range(jobs + 1)]
        procs = []
        for k in range(jobs):
            part = out.with_suffix(f".part{k}.in")
            part.write_text("".join(lines[cut[k]:cut[k + 1]]), encoding="utf-8")
            procs.append((subprocess.Popen([str(self.cdec), "-c", str(self.config), "-w", str(weights)],
                                           stdin=open(part, "rb"), stdout=open(out.with_suffix(f".part{k}"), "wb"),
                                           stderr=open(log, "ab")), k))
        for p, k in procs:
            if p.wait() != 0:
                raise RuntimeError(f"cdec failed decoding {src} with {weights} (see {log})")
        with open(out, "wb") as fh:
            for k in range(jobs):
                fh.write(out.with_suffix(f".part{k}").read_bytes())
                out.with_suffix(f".part{k}").unlink()
                out.with_suffix(f".part{k}.in").unlink()

    def runs(self) -> dict:
        a = self.a
        n, k, j = str(a.iterations), str(a.nbest), str(a.jobs)
        tune = MTPLUG + ["tune", "--decoder", "cdec", "--decoder-bin", str(self.cdec), "--decoder-config", str(self.config),
                         "--weights", str(self.start), "--input", str(self.src), "--ref", str(self.ref),
                         "--iterations", n, "--nbest-size", k, "--jobs", j, "--seed", "1", "--quiet"]
        out = {f"mtplug-{o}": ("mtplug", lambda wd, o=o: tune + ["--optimizer", o, "--workdir", str(wd)])
               for o in MTPLUG_OPTIMIZERS}
        out["mtplug-forest-mert"] = ("mtplug", lambda wd: tune + ["--optimizer", "mert", "--forests", "--workdir",
                                                                   str(wd)])
        t = self.build / "training"
        out["cdec-dpmert"] = ("cdec", lambda wd: [str(t / "dpmert" / "dpmert.pl"), "--config", str(self.config),
                                                  "--weights", str(self.start), "--devset", str(self.devset),
                                                  "--iterations", n, "--jobs", j, "--output-dir", str(wd)])
        out["cdec-pro"] = ("cdec", lambda wd: [str(self.pro_copy(wd)), "--config", str(self.config), "--weights",
                                               str(self.start), "--devset", str(self.devset), "--jobs", j,
                                               "--output-dir", str(wd)])
        out["cdec-mira"] = ("cdec", lambda wd: [self.a.python2, str(t / "mira" / "mira.py"), "-d",
                                                str(self.devset), "-c", str(self.config), "-w",
                                                str(self.start), "-j", j, "-o", str(wd), "--max-iterations", n,
                                                "-k", k])
        out["cdec-rampion"] = ("cdec", lambda wd: [str(t / "rampion" / "rampion.pl"), "--source-file", str(self.src),
                                                   "--ref-files", str(self.ref), "--weights", str(self.start),
                                                   "--jobs", j, "--max-iterations", n, "--workdir", str(wd),
                                                   str(self.config)])
        out["cdec-dtrain"] = ("cdec", lambda wd: [str(t / "dtrain" / "dtrain"), "-c", str(self.dtrain_ini(wd))])
        out["mtplug-dtrain"] = ("mtplug", lambda wd: MTPLUG + ["dtrain", "-c", str(self.dtrain_ini(wd)),
                                                                "--decoder-bin", str(self.cdec), "--quiet"])
        return out

    def pro_copy(self, wd: Path) -> Path:
        """pro.pl with its (unchangeable) iteration limit set to --iterations; next to the
        original so that its relative paths (LocalEnvironment, utils) still resolve."""
        src = self.build / "training" / "pro" / "pro.pl"
        copy = src.with_name(f"pro-{self.a.iterations}it.pl")
        text = src.read_text()
        patched = re.sub(r"my \$default_max_iter = \d+;", f"my $default_max_iter = {self.a.iterations};", text)
        if patched == text:
            raise RuntimeError("cannot find pro.pl's default_max_iter")
        copy.write_text(patched)
        copy.chmod(0o755)
        return copy

    def dtrain_ini(self, wd: Path) -> Path:
        wd.mkdir(parents=True, exist_ok=True)
        ini = wd / "dtrain.ini"
        ini.write_text(f"input={self.src}\nrefs={self.ref}\ndecoder_config={self.config}\n"
                       f"input_weights={self.start}\noutput={wd / 'weights.final.gz'}\nepochs={self.a.iterations}\n"
                       f"k={self.a.nbest}\nN=4\nscorer=fixed_stupid_bleu\nlearning_rate=0.0001\nfilter=uniq\n"
                       "pair_sampling=XYX\nhi_lo=0.1\nselect_weights=best\n")
        return ini

    def final_weights(self, name: str, wd: Path) -> Path:
        if name.endswith("-dtrain"):
            # '.gz': cdec's dtrain copies its best epoch's gzipped weights to whatever name
            # `output` gives, and cdec reads gzip only from names that end in .gz
            return wd / "weights.final.gz"
        if name.startswith("mtplug-"):
            return wd / "final"
        if name == "cdec-rampion":
            return max(wd.glob("weights.[0-9]*"), key=lambda p: int(p.name.split(".")[1]))
        return wd / "weights.final"


# ---------------------------------------------------------------------------------------- Moses
class Moses:
    def __init__(self, args):
        self.a = args
        self.sys = Path(args.system).resolve()
        self.root = Path(args.moses).resolve()
        self.moses = self.root / "bin" / "moses"
        self.config = (self.sys / args.config).resolve()
        self.src, self.ref = self.sys / "dev.fr", self.sys / "dev.en"
        self.test_src, self.test_ref = self.sys / "test.fr", self.sys / "test.en"

    def decode(self, ini: Path, src: Path, out: Path, log: Path) -> None:
        with open(out, "wb") as fh, open(log, "ab") as err:
            p = subprocess.run([str(self.moses), "-f", str(ini), "-input-file", str(src), "-threads",
                                str(self.a.jobs)], stdout=fh, stderr=err)
        if p.returncode != 0:
            raise RuntimeError(f"moses failed decoding {src} (see {log})")

    def runs(self) -> dict:
        from mtplug.integrations.moses.mertdir import mertdir

        a = self.a
        mm = [str(self.root / "scripts" / "training" / "mert-moses.pl"), str(self.src), str(self.ref),
              str(self.moses), str(self.config), "--no-filter-phrase-table", f"--maximum-iterations={a.iterations}",
              f"--nbest={a.nbest}", f"--decoder-flags=-threads {a.jobs}", "--predictable-seeds"]
        ours, theirs = mertdir(), str(self.root / "bin")
        modes = {"mert": [], "kbmira": ["--batch-mira"], "pro": ["--pairwise-ranked"],
                 "mert-expbleu": ["--mertmertargs=--directions expbleu"],
                 "apro": ["--mertmertargs=--algorithm apro"]}
        out = {}
        for mode, flags in modes.items():
            out[f"mtplug-{mode}"] = ("mtplug", lambda wd, f=flags: mm + [f"--mertdir={ours}",
                                                                        f"--working-dir={wd}"] + f)
            if mode in ("mert", "kbmira"):      # pro needs megam, which is not here
                out[f"moses-{mode}"] = ("moses", lambda wd, f=flags: mm + [f"--mertdir={theirs}",
                                                                           f"--working-dir={wd}"] + f)
        tune = MTPLUG + ["tune", "--decoder", "moses", "--decoder-bin", str(self.moses), "--decoder-args",
                         f"-threads {a.jobs}", "--decoder-config", str(self.config), "--input", str(self.src), "--ref",
                         str(self.ref), "--iterations", str(a.iterations), "--nbest-size", str(a.nbest), "--seed", "1",
                         "--quiet"]
        for o in MTPLUG_OPTIMIZERS:
            out[f"tune-{o}"] = ("mtplug", lambda wd, o=o: tune + ["--optimizer", o, "--workdir", str(wd)])
        return out

    def final_weights(self, name: str, wd: Path) -> Path:
        return wd / "final" if name.startswith("tune-") else wd / "moses.ini"


# ---------------------------------------------------------------------------------------- driver
def evaluate(system, name: str, wd: Path, log: Path) -> dict:
    weights = system.final_weights(name, wd)
    out = {}
    for part, src, ref in (("dev", system.src, system.ref), ("test", system.test_src, system.test_ref)):
        hyp = wd / f"final.{part}.hyp"
        system.decode(weights, src, hyp, log)
        out[f"{part}_bleu"] = bleu(hyp, ref)
    out["final_weights"] = str(weights)
    return out


def history(name: str, wd: Path) -> list | None:
    """Each iteration's tuning BLEU of an ``mtplug tune`` run, as a fraction as results.jsonl
    keeps every BLEU (state.json version 1 holds fractions, version 2 sacrebleu's 0-100)."""
    state = wd / "state.json"
    if state.exists():
        record = json.loads(state.read_text())
        scale = 1.0 if record.get("version") == 1 else 100.0
        return [h["bleu"] / scale for h in record["history"]]
    return None


def timing(wd: Path) -> dict:
    """Where an ``mtplug tune`` run's time went: the seconds of its iterations' decoding and
    optimizing, summed from state.json (empty for another tool's run)."""
    state = wd / "state.json"
    if not state.exists():
        return {}
    entries = json.loads(state.read_text())["history"]
    return {k: round(sum(h.get(k, 0.0) for h in entries), 1) for k in ("decode_seconds", "optimize_seconds")}


def main_run(args, system) -> None:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = out / "results.jsonl"
    done = {json.loads(x)["run"] for x in results.read_text().splitlines()} if results.exists() else set()
    runs = system.runs()
    wanted = args.runs.split(",") if args.runs else list(runs)
    unknown = [r for r in wanted if r.split("+")[0] not in runs]
    if unknown:
        sys.exit(f"unknown run(s) {unknown}; known: {', '.join(runs)}")
    for name in wanted:
        if name in done:
            print(f"{name}: done before", flush=True)
            continue
        wd = out / name
        if wd.exists():
            shutil.rmtree(wd)
        log = out / f"{name}.log"
        log.unlink(missing_ok=True)
        base, *variant = name.split("+")
        options = dict(v.partition("=")[::2] for v in variant)   # 'mtplug-pro+psi=0.5': --psi 0.5
        tool, make = runs[base]
        cmd = make(wd)           # the tools make their folder (dpmert.pl and pro.pl refuse one that exists)
        if options and "tune" not in cmd and "dtrain" not in cmd:
            sys.exit(f"{name}: option variants ('+option=value') are for mtplug tune and dtrain runs only")
        for option, value in options.items():
            cmd += [f"--{option}"] + ([value] if value else [])
        try:
            seconds = run(cmd, log, cwd=wd if wd.exists() else out)
            record = {"run": name, "tool": tool, "command": shlex.join(cmd), "seconds": round(seconds, 1),
                      "iterations": int(options.get("iterations", args.iterations)), "nbest": args.nbest,
                      "jobs": args.jobs,
                      "history": history(name, wd), **timing(wd), **evaluate(system, name, wd, log)}
        except Exception as exc:   # noqa: BLE001 - a failed run is a result too
            record = {"run": name, "tool": tool, "command": shlex.join(cmd), "error": str(exc)}
        with open(results, "a") as fh:
            fh.write(json.dumps(record) + "\n")
        print(json.dumps({k: v for k, v in record.items() if k != "command"}), flush=True)


def table(paths: list[str]) -> str:
    rows = ["| run | dev BLEU | test BLEU | iterations | s / iteration | decoded dev BLEU per iteration |",
            "|---|---|---|---|---|---|"]
    for p in paths:
        for line in (Path(p) / "results.jsonl").read_text().splitlines():
            r = json.loads(line)
            if "error" in r:
                rows.append(f"| {r['run']} | {r['error']} | | | | |")
                continue
            hist = " ".join(f"{b * 100:.1f}" for b in r["history"]) if r.get("history") else ""
            # mtplug tune may stop early (no weight moved): its history has the decoder runs made;
            # mert-moses.pl too (converged): its working folder has one n-best list per run
            moses_runs = len(list((Path(p) / r["run"]).glob("run*.best*.out*")))
            its = len(r["history"]) if r.get("history") else (moses_runs or r["iterations"])
            rows.append(f"| {r['run']} | {r['dev_bleu'] * 100:.2f} | {r['test_bleu'] * 100:.2f} | {its} | "
                        f"{r['seconds'] / its:.1f} | {hist} |")
    return "\n".join(rows)


def _python2() -> str:
    """A Python 2.7 interpreter (pyenv's shims answer only with a pyenv version set)."""
    for candidate in sorted(Path.home().glob(".pyenv/versions/2.7*/bin/python")):
        return str(candidate)
    return shutil.which("python2.7") or "python2"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="what", required=True)
    for name in ("cdec", "moses"):
        s = sub.add_parser(name)
        s.add_argument("--system", required=True)
        s.add_argument("--" + name, required=True, help="the build folder")
        s.add_argument("--out", required=True)
        s.add_argument("--runs", help="comma list (default: all)")
        s.add_argument("--iterations", type=int, default=10)
        s.add_argument("--nbest", type=int, default=100)
        s.add_argument("--jobs", type=int, default=2)
        s.add_argument("--config", default="cdec.ini" if name == "cdec" else "train/model/moses.ini")
        if name == "cdec":
            s.add_argument("--start", help="start weights (default: SYSTEM/weights.start)")
            s.add_argument("--tune-set", default="dev", metavar="STEM",
                           help="the tuning set's files in SYSTEM: STEM.de, STEM.en, STEM.devset (default dev)")
            s.add_argument("--python2", default=_python2(), help="the Python 2 that runs cdec's mira.py")
    t = sub.add_parser("table")
    t.add_argument("out", nargs="+")
    args = p.parse_args()
    if args.what == "table":
        print(table(args.out))
    else:
        main_run(args, Cdec(args) if args.what == "cdec" else Moses(args))


if __name__ == "__main__":
    main()
