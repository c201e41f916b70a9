"""The references a metric reads: one M2 file (S and A lines) when it has Moses's M2
scorer in it, else line-aligned reference files, one per reference set.

One rule for every command and for Python, so that ``--metric m2 --ref gold.m2`` means
the same in ``score``, ``optimize``, ``evaluate``, ``tune`` and ``compare``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import InputError
from ..formats.references import References, read_references


def reads_m2(metrics: str | Sequence[str] | None) -> bool:
    """Whether a ``--metric`` text (or a list of them) has an ``m2`` part. A text that does
    not parse is not M2's (its own check reports it)."""
    return reads_part(metrics, "m2")


def reads_part(metrics: str | Sequence[str] | None, name: str) -> bool:
    """Whether a ``--metric`` text (or a list of them) has a part ``name``."""
    from .layer import parse_metric

    texts = [metrics] if isinstance(metrics, str) else list(metrics or [])
    for text in texts:
        try:
            if isinstance(text, str) and any(p.name == name for p in parse_metric(text).parts):
                return True
        except ValueError:
            pass
    return False


def metric_references(paths: Sequence[str], metrics: str | Sequence[str] | None) -> References:
    """The references of ``paths`` as ``metrics`` read them: under m2 the one M2 file
    (:func:`mtplug.metrics.m2.m2_references`; a second file is an InputError naming it),
    else :func:`mtplug.formats.references.read_references`."""
    if reads_part(metrics, "bleudoc"):
        from .moses_ngram import bleudoc_references

        return bleudoc_references(paths)   # Moses's BLEUDOC: XML documents (<doc docid>, <seg>)
    if not reads_m2(metrics):
        return read_references(paths)
    from .m2 import m2_references

    if len(paths) > 1:
        raise InputError("the m2 metric reads one M2 file (S and A lines); give one reference file", paths[1])
    return m2_references(paths[0])
