"""The one table of optimizers: name -> the module and class that implement it.

Classes are imported on first use: the Moses programs start with one optimizer, and
some optimizers pull in SciPy (half a second to import).
"""

from __future__ import annotations

import importlib

from .base import Optimizer

_WHERE: dict[str, tuple[str, str]] = {
    "none": ("none", "KeepStart"),
    "mert": ("mert", "Mert"),
    "pro": ("pro", "Pro"),
    "apro": ("apro", "Apro"),
    "mira": ("mira", "Mira"),
    "kbmira": ("mira", "KbMira"),
    "rampion": ("rampion", "Rampion"),
}

#: every optimizer name, in the order the CLI lists them
OPTIMIZER_NAMES: tuple[str, ...] = tuple(_WHERE)

#: the optimizers that also run over lattices/hypergraphs (mtplug.forests.corpus.ForestCorpus)
FOREST_OPTIMIZERS: tuple[str, ...] = ("mert", "kbmira")


def get_optimizer(name: str) -> type[Optimizer]:
    """The optimizer class called ``name``; ValueError listing the known names otherwise."""
    try:
        module, cls = _WHERE[name]
    except KeyError:
        raise ValueError(f"unknown optimizer {name!r}; known: {', '.join(sorted(_WHERE))}") from None
    return getattr(importlib.import_module(f"{__package__}.{module}"), cls)
