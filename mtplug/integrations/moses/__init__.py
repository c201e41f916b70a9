"""Moses's tuning programs, backed by mtplug.

``mert-moses.pl --mertdir=$(mtplug mertdir)`` runs these instead of Moses's own: each
accepts the flags of its Moses namesake (mosesdecoder ``mert/*.cpp``) and writes the
same files and log lines, so the script needs no change. Each program is a module with
``main(argv) -> exit status``; :mod:`.__main__` dispatches ``python -m
mtplug.integrations.moses PROGRAM ARGS``, and the executables in ``moses_integration/``
call that.
"""

#: program name (as mert-moses.pl calls it) -> module in this package
PROGRAMS = {
    "extractor": "extractor",
    "mert": "mert",
    "kbmira": "kbmira",
    "pro": "pro",
    "megam_i686.opt": "megam",
    "evaluator": "evaluator",
    "sentence-bleu": "sentence_bleu",
}
