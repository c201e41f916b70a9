#!/usr/bin/env python3
"""A stand-in for cdec in tuning tests: ``standin_cdec.py -c cdec.ini -w weights -k N -r``.

Reads the input on stdin and writes the unique k-best list to stdout in cdec's format
(``id ||| hyp ||| f=v f2=v ||| score``, zero features left out), re-ranking the fixed pool
of ``mtplug.tune.standin`` (the bundled Moses n-best, 60 sentences × 100 hypotheses)
with cdec-style feature names (LanguageModel, WordPenalty, PhraseModel_0..3, ...).
``-standin-source FILE`` maps input lines to pool sentences (see mtplug.tune.standin).
"""

import sys

from mtplug.tune.standin import StandinError, main_cdec

if __name__ == "__main__":
    try:
        sys.exit(main_cdec(sys.argv[1:]))
    except (StandinError, OSError, ValueError) as exc:
        sys.stderr.write(f"standin_cdec: error: {exc}\n")
        sys.exit(1)
