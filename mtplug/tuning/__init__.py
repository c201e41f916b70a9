"""``mtplug tune``: the decoder-in-the-loop tuning command (decode, merge, optimize, repeat).

``config`` holds the options (flags, YAML, the ``--write-config`` template),
``decoders`` the thin per-decoder adapters (command lines and file names),
``loop`` the iterations with their checkpoints, ``plot`` the PNG figures and
``standin`` a pool re-ranking stand-in decoder for the bundled example.
"""
