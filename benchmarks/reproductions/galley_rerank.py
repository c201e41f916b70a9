#!/usr/bin/env python3
"""Galley et al. (2013), Tables 2 and 3, in the paper's own reranking protocol.

    python benchmarks/reproductions/galley_rerank.py --pools OUT/pools --w0 OUT/weights.w0 \\
        --out RESULTS [--seeds 1 2 3] [--tune-nbest 100] [--restarts 2] [--threads 2]

The pools are those of make_galley_pools.py: tune, dev and test sets decoded once by cdec
with its sparse feature functions at the dense-tuned weights w0 (``POOLS/{tune,dev,test}
.kbest`` and ``.en``). Every method tunes on the tune pool (its first ``--tune-nbest``
hypotheses per sentence), then reranks the whole dev and test pools with its weights:

* ``mert-dense-uniform``: coordinate MERT over the 12 dense features, from uniform weights
  (every dense weight 1, sparse 0);
* ``mert-uniform``, ``mert-w0``: expected-BLEU MERT over every feature from uniform weights
  and from w0 (sparse weights 0 in every start);
* ``mert-coord-w0``: coordinate MERT over every feature from w0 (the sparse-aware search);
* ``pro-w0``: PRO from w0 (defaults);
* ``l2v1-w0``, ``l2v2-w0``, ``l2v3-w0``: expected-BLEU MERT from w0 with Galley's three ℓ2
  variants as mtplug names them (``l2``: ‖w − w0‖²; ``l2-fixed``: ‖w‖² with the weight of
  largest |w0| fixed; ``l2-l1norm``: ‖w/‖w‖₁‖²), and ``l0-w0`` with ℓ0;
  their λ chosen on dev from ``--lambdas`` with the first seed, as the paper chose them.

A seed seeds MERT's ``--restarts`` random start points (and PRO's sampling). Each
method's test translations (one file per seed) go to ``mtplug evaluate`` against
``pro-w0`` as the baseline: the report (mean, s_sel, s_dev, p) is ``RESULTS/evaluate.txt``
and ``.json``; ``RESULTS/runs.jsonl`` has every run (weights file, tune/dev/test BLEU,
optimizer seconds, non-zero weights); ``RESULTS/table.md`` the table of
docs/reproductions/galley-2013.md. A finished run is not run again.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

DENSE = [f"PhraseModel_{i}" for i in range(7)] + ["PassThrough", "Glue", "WordPenalty", "LanguageModel",
                                                  "LanguageModel_OOV"]
REG_METHODS = {"l2v1-w0": "l2", "l2v2-w0": "l2-fixed", "l2v3-w0": "l2-l1norm", "l0-w0": "l0"}


def read_weights(path: Path) -> dict[str, float]:
    out = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, value = line.split()[:2]
            out[name] = float(value)
    return out


def stores(pools: Path, cache: Path, tune_nbest: int):
    """The tune pool cut to its first tune_nbest hypotheses per sentence, and dev and test
    whole, as stores (cached under ``cache``)."""
    import mtplug

    cache.mkdir(parents=True, exist_ok=True)
    out = {}
    for name in ("tune", "dev", "test"):
        store = cache / f"{name}{tune_nbest if name == 'tune' else ''}.store"
        if not store.exists():
            kbest = pools / f"{name}.kbest"
            if name == "tune":
                cut = cache / f"tune{tune_nbest}.kbest"
                with open(kbest) as f, open(cut, "w") as o:
                    last, n = None, 0
                    for line in f:
                        sid = line.split(" ||| ", 1)[0]
                        n = n + 1 if sid == last else 1
                        last = sid
                        if n <= tune_nbest:
                            o.write(line)
                kbest = cut
            mtplug.load_nbest([str(kbest)], [str(pools / f"{name}.en")]).save(str(store))
        out[name] = mtplug.load_store(str(store))
    return out


def vector(corpus, weights: dict[str, float]) -> np.ndarray:
    index = {n: i for i, n in enumerate(corpus.feature_names)}
    v = np.zeros(corpus.n_features)
    for name, value in weights.items():
        if name in index:
            v[index[name]] = value
    return v


def methods(w0: dict[str, float], lambdas: dict[str, float]) -> dict[str, tuple[str, dict, dict]]:
    """name -> (optimizer, start weights by name, options)."""
    uniform = dict.fromkeys(DENSE, 1.0)
    table = {
        "mert-dense-uniform": ("mert", uniform, dict(directions="coordinate", activate_features=",".join(DENSE))),
        "mert-uniform": ("mert", uniform, dict(directions="expbleu")),
        "mert-w0": ("mert", w0, dict(directions="expbleu")),
        "mert-coord-w0": ("mert", w0, dict(directions="coordinate")),
        "pro-w0": ("pro", w0, {}),
    }
    for name, reg in REG_METHODS.items():
        if name in lambdas:
            table[name] = ("mert", w0, dict(directions="expbleu", reg=reg, reg_strength=lambdas[name]))
    return table


class Study:
    def __init__(self, args):
        self.a = args
        self.out = Path(args.out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.data = stores(Path(args.pools), self.out / "stores", args.tune_nbest)
        self.w0 = read_weights(Path(args.w0))
        self.runs_file = self.out / "runs.jsonl"
        self.done = {}
        if self.runs_file.exists():
            for line in self.runs_file.read_text().splitlines():
                r = json.loads(line)
                self.done[(r["method"], r["seed"], r.get("reg_strength"))] = r

    def run(self, method: str, optimizer: str, start: dict, options: dict, seed: int) -> dict:
        import mtplug

        key = (method, seed, options.get("reg_strength"))
        if key in self.done:
            return self.done[key]
        tune = self.data["tune"]
        if optimizer == "mert":
            options = {"restarts": self.a.restarts, **options}
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = mtplug.optimize(optimizer, tune, vector(tune, start), seed, threads=self.a.threads, **options)
        seconds = time.perf_counter() - t
        tuned = dict(zip(res.feature_names, res.weights.tolist()))
        tag = f"{method}.seed{seed}" + (f".lambda{options['reg_strength']:g}" if "reg_strength" in options else "")
        (self.out / "weights").mkdir(exist_ok=True)
        with open(self.out / "weights" / tag, "w") as fh:
            fh.write(f"# {method} seed {seed} {json.dumps(options)}\n")
            fh.writelines(f"{n} {v!r}\n" for n, v in tuned.items() if v != 0.0)
        row = {"method": method, "seed": seed, "optimizer": optimizer, "options": options,
               "reg_strength": options.get("reg_strength"), "seconds": round(seconds, 2),
               # tune as a fraction beside dev and test (Result.score is 0-100), as the rows have it
               "nonzero": int(np.count_nonzero(res.weights)), "tune": res.score / 100}
        for name in ("dev", "test"):
            corpus = self.data[name]
            rows = corpus.one_best(vector(corpus, tuned))
            row[name] = corpus.bleu_of_rows(rows).score
            if name == "test" or options.get("reg_strength") is None:
                path = self.out / "hyps" / f"{tag}.{name}"
                path.parent.mkdir(exist_ok=True)
                path.write_text("".join(corpus.hypotheses(int(r), int(r) + 1)[0] + "\n" for r in rows))
                row[f"{name}_hyps"] = str(path)
        with open(self.runs_file, "a") as fh:
            fh.write(json.dumps(row) + "\n")
        self.done[key] = row
        print(f"{tag:40s} tune {row['tune']:.4f} dev {row['dev']:.4f} test {row['test']:.4f} "
              f"{seconds:7.1f} s  nonzero {row['nonzero']}", flush=True)
        return row

    def choose_lambdas(self) -> dict[str, float]:
        """Per regularised method the λ of the best dev BLEU with the first seed."""
        chosen = {}
        for method, reg in REG_METHODS.items():
            best = None
            for lam in self.a.lambdas:
                row = self.run(method, "mert", self.w0, dict(directions="expbleu", reg=reg, reg_strength=lam),
                               self.a.seeds[0])
                if best is None or row["dev"] > best[0]:
                    best = (row["dev"], lam)
            chosen[method] = best[1]
        return chosen

    def evaluate(self, names: list[str]) -> None:
        hyps = {n: [self.done[k]["test_hyps"] for k in sorted(self.done) if k[0] == n and "test_hyps" in self.done[k]
                    and (n not in REG_METHODS or k[2] == self.lambdas[n])] for n in names}
        cmd = [sys.executable, "-m", "mtplug", "evaluate", "-q", "--hyps-baseline", *hyps["pro-w0"],
               "--ref", str(Path(self.a.pools) / "test.en"), "--metric", "bleu", "--seed", "0",
               "--json", str(self.out / "evaluate.json")]
        for n in names:
            if n != "pro-w0":
                cmd += ["--hyps-system", n, *hyps[n]]
        subprocess.run(cmd, check=True)
        cmd[cmd.index("--json"):cmd.index("--json") + 2] = []
        with open(self.out / "evaluate.txt", "w") as fh:
            subprocess.run(cmd, check=True, stdout=fh)

    def table(self, names: list[str]) -> str:
        lines = ["| method | λ | tune BLEU | dev BLEU | test BLEU (mean ± sd over seeds) | optimizer s | non-zero weights |",
                 "|---|---|---|---|---|---|---|"]
        for n in names:
            rows = [r for k, r in sorted(self.done.items()) if k[0] == n
                    and (n not in REG_METHODS or k[2] == self.lambdas[n]) and k[1] in self.a.seeds]
            col = {f: np.array([r[f] for r in rows]) * (100 if f in ("tune", "dev", "test") else 1)
                   for f in ("tune", "dev", "test", "seconds", "nonzero")}
            lam = f"{self.lambdas[n]:g}" if n in REG_METHODS else ""
            lines.append(f"| {n} | {lam} | {col['tune'].mean():.2f} | {col['dev'].mean():.2f} | "
                         f"{col['test'].mean():.2f} ± {col['test'].std(ddof=1) if len(rows) > 1 else 0:.2f} | "
                         f"{col['seconds'].mean():.1f} | {col['nonzero'].mean():.0f} |")
        return "\n".join(lines) + "\n"

    def main(self) -> None:
        self.lambdas = self.choose_lambdas()
        table = methods(self.w0, self.lambdas)
        for seed in self.a.seeds:
            for name, (optimizer, start, options) in table.items():
                self.run(name, optimizer, start, options, seed)
        names = list(table)
        self.evaluate(names)
        (self.out / "table.md").write_text(self.table(names))
        (self.out / "lambdas.json").write_text(json.dumps(self.lambdas, indent=1) + "\n")
        print((self.out / "table.md").read_text() + (self.out / "evaluate.txt").read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pools", required=True, help="folder with {tune,dev,test}.kbest and .en")
    ap.add_argument("--w0", required=True, help="the dense-tuned weights (cdec weights file)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--tune-nbest", type=int, default=100)
    ap.add_argument("--restarts", type=int, default=2, help="MERT's random start points per run (default 2)")
    ap.add_argument("--lambdas", type=float, nargs="+", default=[1e-4, 1e-3, 1e-2])
    ap.add_argument("--threads", type=int, default=2)
    Study(ap.parse_args()).main()


if __name__ == "__main__":
    main()
