"""The one table of optimizers: name -> class."""

from __future__ import annotations

from .base import Optimizer
from .mert import Mert
from .none import KeepStart

OPTIMIZERS: dict[str, type[Optimizer]] = {cls.name: cls for cls in (KeepStart, Mert)}


def get_optimizer(name: str) -> type[Optimizer]:
    """The optimizer class called ``name``; ValueError listing the known names otherwise."""
    try:
        return OPTIMIZERS[name]
    except KeyError:
        raise ValueError(f"unknown optimizer {name!r}; known: {', '.join(sorted(OPTIMIZERS))}") from None
