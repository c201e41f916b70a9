"""The one table of optimizers: name -> class."""

from __future__ import annotations

from .base import Optimizer
from .apro import Apro
from .mert import Mert
from .mira import KbMira, Mira
from .none import KeepStart
from .pro import Pro
from .rampion import Rampion

OPTIMIZERS: dict[str, type[Optimizer]] = {
    cls.name: cls for cls in (KeepStart, Mert, Pro, Apro, Mira, KbMira, Rampion)
}


def get_optimizer(name: str) -> type[Optimizer]:
    """The optimizer class called ``name``; ValueError listing the known names otherwise."""
    try:
        return OPTIMIZERS[name]
    except KeyError:
        raise ValueError(f"unknown optimizer {name!r}; known: {', '.join(sorted(OPTIMIZERS))}") from None
