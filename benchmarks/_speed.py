"""What every section of benchmarks/bench_speed.py reports: one row per speed target,
mtplug beside the anchor program run in the same invocation on the same files."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Optional


@dataclass
class SpeedContext:
    """Where a section finds its inputs and the anchor programs.

    data: the 2,000 × 1,000 × 15 synthetic set made by benchmarks/synth.py (nbest.txt,
    ref.0, init.opt); work: a scratch folder of this section (created); moses_bin /
    cdec_dir: the anchor programs' folders, or None (then only mtplug is measured);
    sentences: use the first N sentences only (None: all)."""

    data: str
    work: str
    moses_bin: Optional[str] = None
    cdec_dir: Optional[str] = None
    sentences: Optional[int] = None


@dataclass
class SpeedRow:
    """One target: seconds and peak MB of the anchor and of mtplug, the ratio
    anchor/mtplug (> 1: mtplug faster), whether the target is met, whether the outputs
    are identical (None: not compared), and where mtplug's time goes."""

    work: str
    target: str
    ours_seconds: float
    ours_mb: float
    anchor: str = ""
    anchor_seconds: Optional[float] = None
    anchor_mb: Optional[float] = None
    met: Optional[bool] = None
    identical: Optional[bool] = None
    where_time_goes: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def ratio(self) -> Optional[float]:
        """Anchor seconds / mtplug seconds (None without an anchor)."""
        if self.anchor_seconds is None or self.ours_seconds <= 0:
            return None
        return self.anchor_seconds / self.ours_seconds

    def to_json(self) -> dict:
        """The row as a JSON-ready dict, the ratio included."""
        return {**asdict(self), "ratio": self.ratio}


def run_measured(cmd: list[str], *, cwd: Optional[str] = None, env: Optional[dict] = None,
                 stdin: Optional[str] = None) -> tuple[float, float, subprocess.CompletedProcess]:
    """Run ``cmd`` under /usr/bin/time: (wall seconds, peak RSS in MB, the process).
    Raises CalledProcessError when it fails."""
    t = time.perf_counter()
    full = ["/usr/bin/time", "-f", "MAXRSS_KB=%M", *cmd]
    stdin_fh = open(stdin, "rb") if stdin else None
    try:
        p = subprocess.run(full, cwd=cwd, env={**os.environ, **(env or {})}, stdin=stdin_fh,
                           capture_output=True)
    finally:
        if stdin_fh:
            stdin_fh.close()
    seconds = time.perf_counter() - t
    if p.returncode:
        raise subprocess.CalledProcessError(p.returncode, cmd, p.stdout, p.stderr)
    err = p.stderr.decode("utf-8", "replace")
    kb = [line for line in err.splitlines() if line.startswith("MAXRSS_KB=")]
    return seconds, int(kb[-1].split("=")[1]) / 1024 if kb else float("nan"), p


def _fmt(value, spec: str) -> str:
    """``value`` in ``spec`` (a width first), or a dash as wide."""
    return format(value, spec) if value is not None else format("—", f">{spec.split('.')[0]}")


def print_rows(rows: list[SpeedRow], out=None) -> None:
    """The rows as a table on ``out`` (default stdout): anchor and mtplug seconds and MB,
    the ratio, the target."""
    out = sys.stdout if out is None else out
    print(f"{'work':44} {'anchor s':>9} {'MB':>7} {'mtplug s':>9} {'MB':>7} {'ratio':>7}  identical  target",
          file=out)
    for r in rows:
        met = {True: "MET", False: "not met", None: "?"}[r.met]
        same = {True: "yes", False: "NO", None: "—"}[r.identical]
        print(f"{r.work[:44]:44} {_fmt(r.anchor_seconds, '9.2f')} {_fmt(r.anchor_mb, '7.0f')} "
              f"{r.ours_seconds:9.2f} {r.ours_mb:7.0f} {_fmt(r.ratio, '6.2f') + '×' if r.ratio else '—':>7}  "
              f"{same:9}  {r.target} [{met}]", file=out)
        if r.where_time_goes:
            print(f"    where mtplug's time goes: {r.where_time_goes}", file=out)


def write_rows(rows: list[SpeedRow], path: str) -> None:
    """The rows as a JSON list at ``path`` (each with its ratio)."""
    import json

    with open(path, "w", encoding="utf-8") as fh:
        json.dump([r.to_json() for r in rows], fh, indent=1, default=float)


def section_parser(doc: str, anchors: str) -> argparse.ArgumentParser:
    """The options every section's own command line shares (a SpeedContext's fields);
    ``anchors``: which of the anchor folders the section uses."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, help="the synthetic set (benchmarks/synth.py)")
    ap.add_argument("--work", required=True, help="a scratch folder of this section (outputs, subsets)")
    ap.add_argument("--moses-bin", help="Moses's bin/ folder; without it no anchor" if "moses" in anchors
                    else "not used by this section")
    ap.add_argument("--cdec-dir", help="cdec's build folder" if "cdec" in anchors else "not used by this section")
    ap.add_argument("--sentences", type=int, help="the first N sentences only")
    return ap


def context(args: argparse.Namespace) -> SpeedContext:
    """The SpeedContext of a section_parser's arguments (its work folder created)."""
    os.makedirs(args.work, exist_ok=True)
    return SpeedContext(data=args.data, work=args.work, moses_bin=args.moses_bin, cdec_dir=args.cdec_dir,
                        sentences=args.sentences)


def mert_files(ctx: SpeedContext) -> tuple[str, str, str]:
    """(features.dat, scores.dat, init.opt) of the set: the files Moses's extractor wrote
    (``moses.features.dat``, ``moses.scores.dat`` in ctx.data), else mtplug extract's under
    ctx.work; with ctx.sentences, their first N sentences' blocks (written under ctx.work
    once)."""
    ff, sf = os.path.join(ctx.data, "moses.features.dat"), os.path.join(ctx.data, "moses.scores.dat")
    if not (os.path.exists(ff) and os.path.exists(sf)):
        ff, sf = os.path.join(ctx.work, "features.dat"), os.path.join(ctx.work, "scores.dat")
        if not (os.path.exists(ff) and os.path.exists(sf)):
            subprocess.run([sys.executable, "-m", "mtplug", "extract", "-q", "--nbest",
                            os.path.join(ctx.data, "nbest.txt"), "--ref", os.path.join(ctx.data, "ref.0"),
                            "--ffile", ff, "--scfile", sf], check=True)
    if ctx.sentences:
        cut = []
        for path in (ff, sf):
            sub = os.path.join(ctx.work, f"first{ctx.sentences}.{os.path.basename(path)}")
            if not os.path.exists(sub):
                with open(path, "rb") as src, open(sub + ".tmp", "wb") as dst:
                    for line in src:
                        if line.startswith((b"FEATURES_TXT_BEGIN_0 ", b"SCORES_TXT_BEGIN_0 ")) \
                                and int(line.split()[1]) >= ctx.sentences:
                            break
                        dst.write(line)
                os.replace(sub + ".tmp", sub)
            cut.append(sub)
        ff, sf = cut
    return ff, sf, os.path.join(ctx.data, "init.opt")
