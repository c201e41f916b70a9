#!/usr/bin/env python3
"""A cdec stand-in over fixed forests, for ``mtplug tune --decoder cdec --forests`` tests.

    forest_decoder.py FORESTS_DIR SOURCE -c cdec.ini -w WEIGHTS -k K [-r] [-O DIR]

Input lines (stdin) are looked up in SOURCE; line i decodes the forest FORESTS_DIR/i.bin.gz
(real cdec forests): the k-best derivations under WEIGHTS (cdec's k-best format, ids
counted from 0 per process as cdec does) on stdout, and with -O a copy of the forest as
DIR/<id>.bin.gz, as cdec -O writes it (a forest already there is cdec's to union the new one
into; it must be the same forest here, and its sentence is noted in $FOREST_DECODER_SEEDS).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from mtplug.formats.cdec_forest import read_cdec_forest  # noqa: E402
from mtplug.formats.cdec_weights import read_cdec_weights  # noqa: E402
from mtplug.forests.kbest import kbest_nbest_lines  # noqa: E402


def main(argv: list[str]) -> int:
    forests, source, rest = argv[0], argv[1], argv[2:]
    opts, unique = {}, False
    i = 0
    while i < len(rest):
        if rest[i] == "-r":
            unique = True
            i += 1
        else:
            opts[rest[i]] = rest[i + 1]
            i += 2
    lines = Path(source).read_text(encoding="utf-8").splitlines()
    weights = dict(read_cdec_weights(opts["-w"]).items())
    for local, text in enumerate(sys.stdin.read().splitlines()):
        sid = lines.index(text)
        path = os.path.join(forests, f"{sid}.bin.gz")
        for line in kbest_nbest_lines(local, read_cdec_forest(path), weights, int(opts["-k"]), unique):
            sys.stdout.write(line + "\n")
        if "-O" in opts:
            target = os.path.join(opts["-O"], f"{local}.bin.gz")
            if os.path.exists(target):
                # a forest of an earlier iteration, to union the new one into: here they are the
                # same forest, so the union is the forest itself; the test counts these
                if Path(target).read_bytes() != Path(path).read_bytes():
                    sys.exit(f"forest_decoder: {target} is not the forest of sentence {sid}")
                with open(os.environ["FOREST_DECODER_SEEDS"], "a") as fh:
                    fh.write(f"{sid}\n")
            shutil.copy(path, target)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
