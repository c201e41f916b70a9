"""Moses's ``--scconfig`` text as its BLEU-family scorers read it (``Scorer::InitConfig``):
``key:value`` items separated by commas, spaces or tabs; shared by the BLEU, TER, CHRF and
BLEUDOC scorers (M2SCORER reads commas only: :func:`mtplug.metrics.m2.parse_scconfig`)."""

from __future__ import annotations


def scconfig_pairs(text: str) -> list[tuple[str, str]]:
    """[(key, value)] of the items of ``text``, in order (empty items skipped); ValueError
    for an item without a colon."""
    pairs = []
    for item in text.replace(" ", ",").replace("\t", ",").split(","):
        if not item:
            continue
        key, sep, value = item.partition(":")
        if not sep:
            raise ValueError(f"--scconfig: expected key:value pairs, got {item!r}")
        pairs.append((key, value))
    return pairs


def case_folds(value: str) -> bool:
    """Whether ``case:VALUE`` asks for lowercasing (``case:false``); ValueError unless the
    value is true or false."""
    if value not in ("true", "false"):
        raise ValueError(f"--scconfig case:{value}: expected case:true or case:false")
    return value == "false"
