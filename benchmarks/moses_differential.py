"""Differential test of mtplug's Moses programs against the real ones (issue 50).

For each of Moses's ``extractor``, ``mert``, ``kbmira``, ``pro``, ``evaluator`` and
``sentence-bleu`` it draws random inputs -- features/scores files as the extractor writes
them (sizes, dense and sparse features, ties, repeated rows, several files, empty
hypotheses' zero statistics) or n-best lists, candidates and several references (empty
hypotheses, repeated hypotheses, sparse features) -- and a random set of the program's
flags, runs the real program (``--moses-dir`` or ``$MTPLUG_MOSES_DIR``, its ``bin/``) and
mtplug's on the same files and compares what scripts read, byte for byte:

* extractor: the scores and features files it writes;
* mert: ``weights.txt`` and the ``Best point: ... => ...`` line;
* kbmira: the weights file (or stdout) and all of stderr;
* pro: ``pro.data``;
* evaluator, sentence-bleu: stdout;
* every program: the exit status (0 or not).

A mismatch is shrunk (fewer sentences, hypotheses, sparse features, flags, while it still
mismatches) and kept in ``--out/mismatches/<program>-<case>/`` (the inputs, ``case.json``
with the command line, and both programs' outputs), ready to become a golden test
(tests/golden/moses-differential/README.md says how). A JSON summary (cases and mismatches
per program) goes to ``--out/summary.json``.

    python benchmarks/moses_differential.py --moses-dir /work/moses/src --cases 500 --seed 1
    python benchmarks/moses_differential.py --programs kbmira extractor --cases 50

mtplug's programs run in this process by default (``--subprocess``: through
``python -m mtplug.integrations.moses`` instead), from the mtplug this Python imports.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

PROGRAMS = ("extractor", "mert", "kbmira", "pro", "evaluator", "sentence-bleu")
VOCAB = ("the", "a", "cat", "dog", "sat", "on", "mat", ".", "big", "red")
TIMEOUT = 120
GOLDEN_BYTES = 12_000    # inputs of a golden case at most (the repository keeps them)


# ------------------------------------------------------------------ random inputs
def _number(rng) -> str:
    """A feature value as text: small integers (ties), %g values, or long decimals."""
    kind = rng.integers(4)
    if kind == 0:
        return str(int(rng.integers(-3, 4)))
    if kind == 1:
        return "%g" % float(rng.normal(0, 5))
    if kind == 2:
        return "%.9f" % float(rng.normal(0, 1))
    return "%g" % float(rng.choice([0.5, -0.25, 1.5, 0.1]))


def _bleu_stats(rng) -> list:
    """One hypothesis' 9 BLEU statistics: n-gram matches and counts, reference length
    (an empty hypothesis has zero counts)."""
    length = 0 if rng.random() < 0.1 else int(rng.integers(1, 15))
    out = []
    for n in range(1, 5):
        count = max(length - n + 1, 0)
        out += [int(rng.integers(0, count + 1)) if count else 0, count]
    return out + [int(rng.integers(1, 15))]


def gen_mertdata(rng) -> dict:
    """A model of features/scores files: ``files`` [F][S][rows] with rows (dense texts,
    [(sparse name, text)], stats); ``dense_names``."""
    n_dense = int(rng.integers(1, 6))
    labels = ["Distortion0", "LM0", "WordPenalty0", "PhrasePenalty0", "TranslationModel0"]
    names = []
    for i in range(n_dense):
        label = labels[min(i, len(labels) - 1)]
        names.append(f"{label}_{sum(1 for x in names if x.startswith(label + '_'))}")
    S = int(rng.integers(1, 9)) if rng.random() < 0.9 else int(rng.integers(95, 130))
    F = 1 if rng.random() < 0.7 else int(rng.integers(2, 4))
    sparse_pool = [f"sp_{c}" for c in "abcdef"] if rng.random() < 0.4 else []
    files = []
    for _ in range(F):
        sents = []
        for _ in range(S):
            rows = []
            for _ in range(int(rng.integers(1, 25))):
                if rows and rng.random() < 0.15:      # a repeated row (the n-best repeats it)
                    rows.append(rows[int(rng.integers(len(rows)))])
                    continue
                dense = [_number(rng) for _ in range(n_dense)]
                sparse = [(nm, _number(rng)) for nm in sparse_pool if rng.random() < 0.3]
                sparse = [(nm, v) for nm, v in sparse if float(v) != 0]
                rows.append((dense, sparse, _bleu_stats(rng)))
            sents.append(rows)
        files.append(sents)
    return {"dense_names": names, "files": files}


def render_mertdata(model: dict, where: Path) -> tuple[list, list]:
    """Write the model's features/scores files (extractor's text format); their paths."""
    ffiles, sfiles = [], []
    names = " ".join(model["dense_names"])
    for k, sents in enumerate(model["files"]):
        fl, sl = [], []
        for sid, rows in enumerate(sents):
            fl.append(f"FEATURES_TXT_BEGIN_0 {sid} {len(rows)} {len(model['dense_names'])} {names} \n")
            sl.append(f"SCORES_TXT_BEGIN_0 {sid} {len(rows)} 9 BLEU\n")
            for dense, sparse, stats in rows:
                fl.append("".join(v + " " for v in dense) + "".join(f"{n}={v} " for n, v in sparse) + "\n")
                sl.append("".join(f"{x} " for x in stats) + "\n")
            fl.append("FEATURES_TXT_END_0\n")
            sl.append("SCORES_TXT_END_0\n")
        ff, sf = where / f"run{k + 1}.features.dat", where / f"run{k + 1}.scores.dat"
        ff.write_text("".join(fl))
        sf.write_text("".join(sl))
        ffiles.append(ff.name)
        sfiles.append(sf.name)
    return ffiles, sfiles


def gen_text(rng) -> dict:
    """A model of an n-best list with references: ``refs`` [R][S] token lists, ``nbest``
    [S][rows] of (tokens, dense {label: [values]}, [(sparse name, value)])."""
    S = int(rng.integers(1, 7))
    R = int(rng.integers(1, 4))

    def sentence(lo):
        return [str(rng.choice(VOCAB)) for _ in range(int(rng.integers(lo, 12)))]

    refs = [[sentence(1) for _ in range(S)] for _ in range(R)]
    labels = {"LM0": 1, "TM0": int(rng.integers(1, 4)), "WordPenalty0": 1}
    sparse_pool = ["tm_x", "tm_y", "lex_z"] if rng.random() < 0.3 else []
    nbest = []
    for s in range(S):
        rows = []
        for _ in range(int(rng.integers(1, 8))):
            if rows and rng.random() < 0.2:
                rows.append(rows[int(rng.integers(len(rows)))])
                continue
            toks = [] if rng.random() < 0.1 else (list(refs[0][s]) if rng.random() < 0.2 else sentence(0))
            dense = {lab: [_number(rng) for _ in range(k)] for lab, k in labels.items()}
            sparse = [(nm, _number(rng)) for nm in sparse_pool if rng.random() < 0.4]
            rows.append((toks, dense, [(n, v) for n, v in sparse if float(v) != 0]))
        nbest.append(rows)
    return {"refs": refs, "nbest": nbest}


def gen_prev(rng, text: dict) -> dict:
    """Earlier features/scores files for ``text``'s n-best list (its dense layout and
    sentences), some rows copied from the list so that the merge finds duplicates."""
    rows0 = text["nbest"][0][0][1]
    names = [f"{lab}_{k}" for lab, values in rows0.items() for k in range(len(values))]
    sents = []
    for rows in text["nbest"]:
        out = []
        for _ in range(int(rng.integers(1, 6))):
            if rng.random() < 0.3:
                _, dense, sparse = rows[int(rng.integers(len(rows)))]
                out.append(([v for vals in dense.values() for v in vals], list(sparse), _bleu_stats(rng)))
            else:
                out.append(([_number(rng) for _ in names], [], _bleu_stats(rng)))
        sents.append(out)
    return {"dense_names": names, "files": [sents]}


def render_text(model: dict, where: Path) -> dict:
    """Write refs (ref.0, ref.1, ...), the n-best list (nbest.txt) and the candidates (each
    sentence's first hypothesis: cand.txt); their names."""
    refs = []
    for k, ref in enumerate(model["refs"]):
        (where / f"ref.{k}").write_text("".join(" ".join(t) + "\n" for t in ref))
        refs.append(f"ref.{k}")
    lines = []
    for sid, rows in enumerate(model["nbest"]):
        for toks, dense, sparse in rows:
            feats = " ".join(f"{lab}= {' '.join(v)}" for lab, v in dense.items())
            feats += "".join(f" {n}= {v}" for n, v in sparse)
            lines.append(f"{sid} ||| {' '.join(toks)} ||| {feats} ||| 0\n")
    (where / "nbest.txt").write_text("".join(lines))
    (where / "cand.txt").write_text("".join(" ".join(rows[0][0]) + "\n" for rows in model["nbest"]))
    return {"refs": refs, "nbest": "nbest.txt", "cand": "cand.txt"}


# ------------------------------------------------------------------ random flags
def gen_flags(program: str, rng) -> list:
    """A random flag set for ``program``: a list of (flag, value or None) items, each
    droppable when shrinking (the inputs are added by :func:`command`)."""
    f = []
    if program == "extractor":
        sctype = str(rng.choice(["BLEU", "BLEU", "TER", "PER", "WER", "CDER"]))
        f.append(("--sctype", sctype))
        conf = (["case:false"] if rng.random() < 0.3 else []) + \
            ([f"reflen:{rng.choice(['closest', 'shortest', 'average'])}"] if sctype == "BLEU" and rng.random() < 0.4
             else [])
        if conf:
            f.append(("--scconfig", ",".join(conf)))
        if rng.random() < 0.2:
            f.append(("--binary", None))
    elif program == "evaluator":
        f.append(("--sctype", str(rng.choice(["BLEU", "BLEU", "TER", "PER", "WER", "CDER"]))))
        if rng.random() < 0.3:
            f.append(("--bootstrap", str(int(rng.integers(2, 20)))))
            f.append(("--rseed", str(int(rng.integers(1, 100)))))
    elif program == "mert":
        f += [("-n", str(int(rng.integers(1, 4)))), ("-r", str(int(rng.integers(1, 100))))]
        if rng.random() < 0.3:
            f.append(("-m", str(int(rng.integers(1, 4)))))
        if rng.random() < 0.2:
            f.append(("--type", str(rng.choice(["powell", "random", "random-direction"]))))
    elif program == "pro":
        f.append(("-r", str(int(rng.integers(1, 100)))))
        if rng.random() < 0.3:
            f.append(("-b", None))
    elif program == "kbmira":
        if rng.random() < 0.8:
            f.append(("-r", str(int(rng.integers(0, 100)))))
        else:
            f.append(("--no-shuffle", None))
        f.append(("-J", str(int(rng.integers(1, 12)))))
        if rng.random() < 0.4:
            f.append(("-C", str(rng.choice(["0.001", "0.01", "0.05", "1"]))))
        if rng.random() < 0.4:
            f.append(("-D", str(rng.choice(["0.9", "0.5", "0.999", "1", "0"]))))
        for flag, p in (("--model-bg", 0.2), ("--safe-hope", 0.2), ("--streaming", 0.1), ("--streaming-out", 0.05)):
            if rng.random() < p:
                f.append((flag, None))
        if rng.random() < 0.7:
            f.append(("-o", "weights.out"))
    return f


# ------------------------------------------------------------------ one case
def gen_case(program: str, seed: int, index: int) -> dict:
    rng = np.random.default_rng([seed, index, PROGRAMS.index(program)])
    case = {"program": program, "seed": seed, "index": index, "flags": gen_flags(program, rng)}
    if program in ("extractor", "evaluator", "sentence-bleu"):
        case["text"] = gen_text(rng)
        flags = dict(case["flags"])
        if program == "extractor" and flags.get("--sctype") == "BLEU" and "--binary" not in flags \
                and "--scconfig" not in flags and rng.random() < 0.3:
            case["prev"] = gen_prev(rng, case["text"])      # an earlier iteration's files to merge
    else:
        case["data"] = gen_mertdata(rng)
        if program == "kbmira":
            n_init = len(case["data"]["dense_names"])
            if rng.random() < 0.05:
                # Moses runs on with more start weights than dense features (and with fewer,
                # but then it reads past its table of names: undefined behaviour, not drawn)
                n_init += 1
            case["init"] = {"legacy": bool(rng.random() < 0.5), "values": [_number(rng) for _ in range(n_init)],
                            "sparse": [(f"sp_{c}", _number(rng)) for c in "ax" if rng.random() < 0.2]}
        if program == "mert":
            case["init"] = {"values": [_number(rng) for _ in case["data"]["dense_names"]]}
    return case


def command(case: dict, where: Path) -> tuple[list, str | None, list]:
    """Write the case's files into ``where``; ``(arguments, stdin file or None, output
    files to compare)``."""
    program, flags = case["program"], case["flags"]
    args = []
    for flag, value in flags:
        args += [flag] if value is None else [flag, value]
    if program in ("extractor", "evaluator", "sentence-bleu"):
        t = render_text(case["text"], where)
        if program == "extractor":
            if case.get("prev"):
                ff, sf = render_mertdata(case["prev"], where)
                args += ["--prev-ffile", ff[0], "--prev-scfile", sf[0]]
            return args + ["--scfile", "out.scores.dat", "--ffile", "out.features.dat", "-r", ",".join(t["refs"]),
                           "-n", t["nbest"]], None, ["out.scores.dat", "out.features.dat"]
        if program == "evaluator":
            return args + ["--reference", ",".join(t["refs"]), "--candidate", t["cand"]], None, []
        return t["refs"], t["cand"], []
    ffiles, sfiles = render_mertdata(case["data"], where)
    names = case["data"]["dense_names"]
    if program == "kbmira":
        init = case["init"]
        if init["legacy"]:
            (where / "init.dense").write_text(" ".join(init["values"]) + "\n")
        else:
            labels = [n.rsplit("_", 1)[0] for n in names] + ["Extra0"] * len(init["values"])
            (where / "init.dense").write_text("".join(f"{n}= {v}\n" for n, v in zip(labels, init["values"])))
        args += ["--dense-init", "init.dense"]
        if init["sparse"]:
            (where / "init.sparse").write_text("".join(f"{n} {v}\n" for n, v in init["sparse"]))
            args += ["--sparse-init", "init.sparse"]
        for ff, sf in zip(ffiles, sfiles):
            args += ["--ffile", ff, "--scfile", sf]
        return args, None, ["weights.out"]
    if program == "mert":
        d = len(names)
        (where / "init.opt").write_text(" ".join(case["init"]["values"]) + "\n" + " ".join(["-1"] * d) + "\n"
                                        + " ".join(["1"] * d) + "\n")
        return args + ["-d", str(d), "--ifile", "init.opt", "--sctype", "BLEU", "--ffile", ",".join(ffiles),
                       "--scfile", ",".join(sfiles)], None, ["weights.txt"]
    for ff, sf in zip(ffiles, sfiles):
        args += ["--ffile", ff, "--scfile", sf]
    return args + ["-o", "pro.data"], None, ["pro.data"]


def _read_outputs(where: Path, rc: int, out: bytes, err: bytes, files: list) -> dict:
    return {"ok": rc == 0, "stdout": out.decode("utf-8", "replace"), "stderr": err.decode("utf-8", "replace"),
            "files": {f: (where / f).read_bytes().decode("utf-8", "replace") if (where / f).exists() else None
                      for f in files}}


def run_moses(moses_dir: Path, case: dict, where: Path) -> dict:
    return run_moses_args(moses_dir, case["program"], *command(case, where), where)


def run_mtplug(case: dict, where: Path, in_process: bool = True) -> dict:
    return run_mtplug_args(case["program"], *command(case, where), where, in_process)


def run_moses_args(moses_dir: Path, program: str, args: list, stdin, files: list, where: Path) -> dict:
    """Run Moses's ``program`` in ``where`` (its inputs there); its outputs (module docstring)."""
    exe = moses_dir / "bin" / program
    with open(where / stdin, "rb") if stdin else contextlib.nullcontext(subprocess.DEVNULL) as fin:
        p = subprocess.run([str(exe), *args], cwd=where, stdin=fin, capture_output=True, timeout=TIMEOUT, check=False)
    return _read_outputs(where, p.returncode, p.stdout, p.stderr, files)


def run_mtplug_args(program: str, args: list, stdin, files: list, where: Path, in_process: bool = True) -> dict:
    """Run mtplug's ``program`` in ``where``: in this process (stdin, stdout, stderr and the
    working directory swapped in) or as ``python -m mtplug.integrations.moses``."""
    if not in_process:
        with open(where / stdin, "rb") if stdin else contextlib.nullcontext(subprocess.DEVNULL) as fin:
            p = subprocess.run([sys.executable, "-m", "mtplug.integrations.moses", program, *args],
                               cwd=where, stdin=fin, capture_output=True, timeout=TIMEOUT, check=False)
        return _read_outputs(where, p.returncode, p.stdout, p.stderr, files)
    from mtplug.integrations.moses.__main__ import main

    out, err = io.BytesIO(), io.BytesIO()
    sin = io.BytesIO((where / stdin).read_bytes() if stdin else b"")
    streams = [io.TextIOWrapper(b, encoding="utf-8", write_through=True) for b in (sin, out, err)]
    saved, cwd = (sys.stdin, sys.stdout, sys.stderr), os.getcwd()
    sys.stdin, sys.stdout, sys.stderr = streams
    os.chdir(where)
    try:
        rc = main([program, *args])
    except SystemExit as exc:
        rc = exc.code if isinstance(exc.code, int) else 1
    except Exception as exc:  # noqa: BLE001 -- a crash is a mismatch to keep, not the end of the run
        print(f"mtplug crashed: {exc!r}", file=sys.stderr)
        rc = 99
    finally:
        for stream in streams[1:]:
            stream.flush()
        sys.stdin, sys.stdout, sys.stderr = saved
        os.chdir(cwd)
    return _read_outputs(where, rc or 0, out.getvalue(), err.getvalue(), files)


def compared(program: str, result: dict) -> dict:
    """What is compared byte for byte (module docstring)."""
    view = {"ok": result["ok"], "files": result["files"]}
    if program == "mert":
        view["best"] = [x for x in result["stderr"].splitlines() if x.startswith("Best point:")]
    elif program == "kbmira":
        view["stdout"], view["stderr"] = result["stdout"], result["stderr"]
    elif program in ("evaluator", "sentence-bleu"):
        view["stdout"] = result["stdout"]
    if not result["ok"]:
        view = {"ok": False}     # both failed: the messages are each program's own
    return view


def check(moses_dir: Path, case: dict, in_process: bool) -> tuple[bool, dict, dict]:
    """Run both programs on ``case``; ``(same, Moses's result, mtplug's result)``."""
    with tempfile.TemporaryDirectory(prefix="mdiff-") as tmp:
        a, b = Path(tmp) / "moses", Path(tmp) / "mtplug"
        a.mkdir()
        b.mkdir()
        try:
            ours_m = run_moses(moses_dir, case, a)
        except subprocess.TimeoutExpired:
            ours_m = {"ok": False, "stdout": "", "stderr": "timeout", "files": {}}
        ours_t = run_mtplug(case, b, in_process)
    return compared(case["program"], ours_m) == compared(case["program"], ours_t), ours_m, ours_t


# ------------------------------------------------------------------ shrinking
#: flags that seed Moses's random numbers (kbmira, mert and pro: -r; evaluator: --rseed)
SEED_FLAGS = ("-r", "--rseed")


def _smaller(case: dict):
    """Candidate cases one step smaller than ``case``: a flag, a sentence, a file, a
    hypothesis, a sparse feature or a reference fewer. A seed flag stays: without it
    Moses seeds from the clock, and its output is no longer one to compare with."""
    import copy

    for i in range(len(case["flags"])):
        if case["flags"][i][0] in SEED_FLAGS:
            continue
        c = copy.deepcopy(case)
        del c["flags"][i]
        yield c
    if case.get("prev"):
        c = copy.deepcopy(case)
        del c["prev"]
        yield c
    if "data" in case:
        files = case["data"]["files"]
        if len(files) > 1:
            for k in range(len(files)):
                c = copy.deepcopy(case)
                del c["data"]["files"][k]
                yield c
        for s in range(len(files[0])):
            if len(files[0]) > 1:
                c = copy.deepcopy(case)
                for f in c["data"]["files"]:
                    del f[s]
                yield c
        for k, f in enumerate(files):
            for s, rows in enumerate(f):
                for r in range(len(rows)):
                    if len(rows) > 1:
                        c = copy.deepcopy(case)
                        del c["data"]["files"][k][s][r]
                        yield c
                    if rows[r][1]:
                        c = copy.deepcopy(case)
                        row = c["data"]["files"][k][s][r]
                        c["data"]["files"][k][s][r] = (row[0], row[1][1:], row[2])
                        yield c
        if case.get("init", {}).get("sparse"):
            c = copy.deepcopy(case)
            c["init"]["sparse"] = c["init"]["sparse"][1:]
            yield c
    else:
        text = case["text"]
        S = len(text["nbest"])
        if S > 1:
            for s in range(S):
                c = copy.deepcopy(case)
                del c["text"]["nbest"][s]
                for ref in c["text"]["refs"]:
                    del ref[s]
                if c.get("prev"):
                    del c["prev"]["files"][0][s]
                yield c
        if len(text["refs"]) > 1:
            for k in range(len(text["refs"])):
                c = copy.deepcopy(case)
                del c["text"]["refs"][k]
                yield c
        for s, rows in enumerate(text["nbest"]):
            for r in range(len(rows)):
                if len(rows) > 1:
                    c = copy.deepcopy(case)
                    del c["text"]["nbest"][s][r]
                    yield c


def shrink(moses_dir: Path, case: dict, in_process: bool, budget: int = 300) -> dict:
    """The smallest case reached by one-step reductions that still mismatch (greedy,
    at most ``budget`` runs)."""
    runs = 0
    improved = True
    while improved and runs < budget:
        improved = False
        for smaller in _smaller(case):
            runs += 1
            if not check(moses_dir, smaller, in_process)[0]:
                case, improved = smaller, True
                break
            if runs >= budget:
                break
    return case


def keep(out: Path, case: dict, moses: dict, ours: dict) -> Path:
    """Write a (shrunk) mismatch to ``out/mismatches/<program>-<seed>-<index>/`` in the
    golden form (:func:`write_golden`), plus the case model and mtplug's outputs."""
    where = write_golden(out / "mismatches", case, moses)
    (where / "model.json").write_text(json.dumps(case, indent=1) + "\n")
    (where / "mtplug.json").write_text(json.dumps(ours, indent=1) + "\n")
    return where


def write_golden(folder: Path, case: dict, moses: dict) -> Path:
    """``folder/<program>-<seed>-<index>/``: ``inputs/`` (the files), ``case.json``
    (program, arguments, stdin file, output files) and ``expected.json`` (what
    :func:`compared` takes from Moses's outputs): what tests/integrations/
    test_moses_differential_goldens.py replays against mtplug."""
    where = folder / f"{case['program']}-{case['seed']}-{case['index']}"
    if where.exists():
        shutil.rmtree(where)
    (where / "inputs").mkdir(parents=True)
    args, stdin, files = command(case, where / "inputs")
    (where / "case.json").write_text(json.dumps({"program": case["program"], "args": args, "stdin": stdin,
                                                 "files": files}, indent=1) + "\n")
    (where / "expected.json").write_text(json.dumps(compared(case["program"], moses), indent=1) + "\n")
    return where


def replay(golden: Path, where: Path) -> tuple[dict, dict]:
    """Run mtplug on a golden case (copied into ``where``); ``(expected, got)`` views."""
    spec = json.loads((golden / "case.json").read_text())
    shutil.copytree(golden / "inputs", where, dirs_exist_ok=True)
    got = run_mtplug_args(spec["program"], spec["args"], spec["stdin"], spec["files"], where)
    return json.loads((golden / "expected.json").read_text()), compared(spec["program"], got)


# ------------------------------------------------------------------ main
def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--moses-dir", default=os.environ.get("MTPLUG_MOSES_DIR"),
                   help="Moses build folder with bin/ (default $MTPLUG_MOSES_DIR)")
    p.add_argument("--cases", type=int, default=500, help="cases per program (default 500)")
    p.add_argument("--seed", type=int, default=1, help="seed of the random cases (default 1)")
    p.add_argument("--programs", nargs="+", default=list(PROGRAMS), choices=PROGRAMS)
    p.add_argument("--out", default="moses-differential-out", help="folder for summary.json and mismatches/")
    p.add_argument("--subprocess", action="store_true", help="run mtplug's programs as processes")
    p.add_argument("--no-shrink", action="store_true", help="keep mismatches as drawn")
    p.add_argument("--max-kept", type=int, default=20, help="mismatches shrunk and kept per program (default 20)")
    p.add_argument("--goldens", default=None, metavar="DIR",
                   help="also write the first --golden-cases matching cases per program there (golden form)")
    p.add_argument("--golden-cases", type=int, default=8, metavar="N")
    args = p.parse_args(argv)
    if not args.moses_dir:
        p.error("give --moses-dir or set MTPLUG_MOSES_DIR")
    moses_dir, out = Path(args.moses_dir), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    summary = {"seed": args.seed, "cases_per_program": args.cases, "moses_dir": str(moses_dir), "programs": {}}
    for program in args.programs:
        t0, bad, kept, n_golden = time.perf_counter(), [], [], 0
        for i in range(args.cases):
            case = gen_case(program, args.seed, i)
            same, moses, ours = check(moses_dir, case, not args.subprocess)
            if same:
                if args.goldens and n_golden < args.golden_cases:
                    where = write_golden(Path(args.goldens), case, moses)
                    if sum(f.stat().st_size for f in (where / "inputs").iterdir()) > GOLDEN_BYTES:
                        shutil.rmtree(where)     # goldens stay small
                    else:
                        n_golden += 1
                continue
            bad.append(i)
            if len(kept) < args.max_kept:
                if not args.no_shrink:
                    case = shrink(moses_dir, case, not args.subprocess)
                    _, moses, ours = check(moses_dir, case, not args.subprocess)
                kept.append(str(keep(out, case, moses, ours)))
        summary["programs"][program] = {"cases": args.cases, "mismatches": len(bad), "mismatching_cases": bad,
                                        "kept": kept, "seconds": round(time.perf_counter() - t0, 1)}
        print(f"{program}: {args.cases} cases, {len(bad)} mismatches ({time.perf_counter() - t0:.0f} s)",
              file=sys.stderr, flush=True)
        (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
