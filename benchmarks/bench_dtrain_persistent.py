#!/usr/bin/env python3
"""mtplug dtrain with its persistent decoder beside cdec's own dtrain, in one run (issue 52).

On cdec's dtrain example (``training/dtrain/examples/standard``: its dtrain.ini, cdec.ini
and bitext, with ``stop_after`` = ``--sentences`` and ``epochs`` = ``--epochs``; the
example's language model is not in cdec's repository, so ``--lm`` names a KenLM model
that takes its place in cdec.ini) this runs, one after the other in one invocation:

1. cdec's ``dtrain -c dtrain.ini`` (the decoder linked in: it loads once);
2. ``mtplug dtrain -c dtrain.ini`` with ``decoder_process=persistent`` (one cdec process);
3. the same with ``decoder_process=per_call`` (one cdec process per sentence), unless
   ``--no-per-call``;

and records each one's wall seconds (``time.perf_counter`` around the process) and CPU
seconds (user + system of the process and its children, the decoders included:
``RUSAGE_CHILDREN``; what a loaded machine changes least), mtplug's decoder calls, starts
and counts (``decoder``), and how the persistent run's weights compare with the per-call
run's (bit-identical, or how many differ and by how much). Results go to
``benchmarks/results/dtrain-persistent.json`` (one entry per ``--name``); ``table(name)``
makes the table docs/speed.md shows (benchmarks/generated_tables.py).

    python benchmarks/bench_dtrain_persistent.py --cdec-dir ~/cdec/build --lm ~/lm.3.klm \\
        --sentences 100 --epochs 1 --name example-100
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "dtrain-persistent.json"
sys.path.insert(0, str(HERE))

from _common import read_results, write_results  # noqa: E402


def load() -> dict:
    return read_results(RESULTS)


def save(results: dict) -> None:
    write_results(RESULTS, results)


def read_weights(path: Path) -> dict[str, float]:
    out = {}
    for line in path.read_text().splitlines():
        if line and not line.startswith("#"):
            name, value = re.split(r"[\t ]", line.strip(), maxsplit=1)
            out[name] = float(value)
    return out


def compare(a: dict[str, float], b: dict[str, float]) -> dict:
    """How weights ``a`` differ from ``b``: features whose values differ (a missing one is 0),
    the largest absolute difference, and whether they are bit-identical."""
    names = set(a) | set(b)
    diff = [abs(a.get(n, 0.0) - b.get(n, 0.0)) for n in names if a.get(n, 0.0) != b.get(n, 0.0)]
    return {"features": len(names), "differing": len(diff), "max_abs_diff": max(diff, default=0.0),
            "bit_identical": not diff}


def prepare(example: Path, lm: Path, work: Path, sentences: int, epochs: int, k: int) -> Path:
    """dtrain.ini and cdec.ini of the example in ``work``: the LM replaced by ``lm``, the
    grammar and bitext by absolute paths, stop_after/epochs/k set, output to a file."""
    work.mkdir(parents=True, exist_ok=True)
    ini = (example / "cdec.ini").read_text()
    ini = re.sub(r"(feature_function=KLanguageModel )\S+", lambda m: m.group(1) + str(lm), ini)
    ini = re.sub(r"^grammar=(\S+)", lambda m: f"grammar={(example / m.group(1)).resolve()}", ini, flags=re.MULTILINE)
    (work / "cdec.ini").write_text(ini)
    keep = []
    for line in (example / "dtrain.ini").read_text().splitlines():
        key = line.split("=", 1)[0].strip()
        if key in ("stop_after", "epochs", "k", "output", "decoder_config", "bitext"):
            continue
        keep.append(line)
    keep += [f"bitext={(example / 'nc-wmt11.gz').resolve()}", f"decoder_config={work / 'cdec.ini'}",
             f"stop_after={sentences}", f"epochs={epochs}", f"k={k}", "output=-"]
    (work / "dtrain.ini").write_text("\n".join(keep) + "\n")
    return work / "dtrain.ini"


def timed(cmd: list[str], out: Path, cwd: Path, env: dict | None = None) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system of the process and every child it waited
    for, the decoder processes included) of running ``cmd``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with open(out, "wb") as fh, open(out.with_suffix(".err"), "wb") as err:
        p = subprocess.run(cmd, stdout=fh, stderr=err, cwd=cwd, env=env, check=False)
    seconds = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {shlex.join(cmd)}; see {out.with_suffix('.err')}")
    return seconds, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def run(a) -> dict:
    cdec_dir = Path(a.cdec_dir)
    example = cdec_dir / "training" / "dtrain" / "examples" / "standard"
    work = Path(a.workdir or tempfile.mkdtemp(prefix="bench-dtrain-"))
    ini = prepare(example, Path(a.lm).resolve(), work, a.sentences, a.epochs, a.k)
    load_avg = os.getloadavg()[0]
    entry: dict = {"sentences": a.sentences, "epochs": a.epochs, "k": a.k, "lm": Path(a.lm).name,
                   "load_at_start": round(load_avg, 2), "date": time.strftime("%Y-%m-%d"),
                   "mtplug_commit": subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"],
                                                   capture_output=True, text=True, check=False).stdout.strip()}
    entry["cdec_dtrain_s"], entry["cdec_dtrain_cpu_s"] = timed(
        [str(cdec_dir / "training" / "dtrain" / "dtrain"), "-c", str(ini)], work / "w.cdec", work)
    modes = ["persistent"] + ([] if a.no_per_call else ["per_call"])
    for mode in modes:
        out = work / f"w.{mode}"
        seconds, cpu = timed([sys.executable, "-m", "mtplug", "dtrain", "-c", str(ini), "--decoder-bin",
                         str(cdec_dir / "decoder" / "cdec"), "--decoder-process", mode, "-o", str(out)],
                        work / f"{mode}.json", work)
        summary = json.loads((work / f"{mode}.json").read_text())
        entry[mode] = {"seconds": seconds, "cpu_seconds": cpu, "decoder_calls": summary["decoder_calls"],
                       "decoder_starts": summary["decoder_starts"], "decoder": summary.get("decoder", {}),
                       "decode_seconds": sum(e["decode_seconds"] for e in summary["epochs"]),
                       "bleu": summary["bleu"]}
    if "per_call" in entry:
        entry["persistent_vs_per_call"] = compare(read_weights(work / "w.persistent"),
                                                  read_weights(work / "w.per_call"))
    entry["persistent_vs_cdec"] = compare(read_weights(work / "w.persistent"), read_weights(work / "w.cdec"))
    return entry


def table(name: str) -> str:
    """The page's table of entry ``name`` of the results file."""
    e = load()[name]
    base = e["cdec_dtrain_s"]
    cpu = e.get("cdec_dtrain_cpu_s")
    rows = [("| program | wall s | × cdec dtrain | CPU s | × cdec dtrain | of the wall s, in decoder calls | "
             "decoder processes | decoder calls |"),
            "|---|---|---|---|---|---|---|---|",
            f"| cdec `dtrain` | {base:.1f} | 1.00 | {cpu:.1f} | 1.00 | – | 1 (linked in) | – |"]
    for mode, label in (("persistent", "`mtplug dtrain`, decoder_process=persistent"),
                        ("per_call", "`mtplug dtrain`, decoder_process=per_call")):
        if mode in e:
            m = e[mode]
            rows.append(f"| {label} | {m['seconds']:.1f} | {m['seconds'] / base:.2f} | {m['cpu_seconds']:.1f} | "
                        f"{m['cpu_seconds'] / cpu:.2f} | {m['decode_seconds']:.1f} | {m['decoder_starts']} | "
                        f"{m['decoder_calls']} |")
    cmp = e.get("persistent_vs_per_call")
    if cmp is not None:
        same = ("bit-identical" if cmp["bit_identical"] else
                f"{cmp['differing']} of {cmp['features']} differ, by at most {cmp['max_abs_diff']:.3g}")
        rows.append("")
        p = e["persistent"].get("decoder", {})
        rows.append(f"Weights of the persistent run against the per-call run's: {same}. "
                    f"Cut base64 values restored: {p.get('repaired', '–')}, calls decoded again per call: "
                    f"{p.get('fallbacks', '–')}, weights-only lines: {p.get('weight_lines', '–')}. "
                    f"{e['sentences']} sentences, {e['epochs']} epoch(s), k = {e['k']}, LM `{e['lm']}`, "
                    f"load average {e['load_at_start']} at the start, {e['date']}, mtplug {e['mtplug_commit']}.")
    return "\n".join(rows) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cdec-dir", default=os.environ.get("MTPLUG_CDEC_DIR"), help="cdec's build folder")
    ap.add_argument("--lm", required=True, help="a KenLM model in place of the example's missing one")
    ap.add_argument("--sentences", type=int, default=100)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--no-per-call", action="store_true", help="skip the per-call run (no weights comparison)")
    ap.add_argument("--workdir", help="where the runs write (default: a new temporary folder)")
    ap.add_argument("--name", default="example-100", help="the results entry")
    ap.add_argument("--table", action="store_true", help="print the table of --name and stop")
    a = ap.parse_args()
    if a.table:
        print(table(a.name), end="")
        return
    if not a.cdec_dir:
        ap.error("give --cdec-dir (or set MTPLUG_CDEC_DIR)")
    entry = run(a)
    results = load()
    results[a.name] = entry
    save(results)
    print(json.dumps(entry, indent=1))
    print(table(a.name), end="")


if __name__ == "__main__":
    main()
