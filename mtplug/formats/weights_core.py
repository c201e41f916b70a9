"""Feature weights in memory: :class:`Weights` and the feature-name rules every weights format shares.

:class:`Weights` is the one in-memory form: an ordered mapping feature name -> float.
Names are the column names mtplug uses everywhere: a Moses dense label ``X`` with m
values becomes ``X_0 ... X_{m-1}`` (as Moses's extractor names the features.dat
columns), sparse Moses features and cdec features keep their names. The per-format
readers and writers build on this module; :mod:`.weights` picks the format.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence

import numpy as np

from ..errors import InputError

# Whitespace that separates fields in every weights format (ASCII only, as Moses's and
# cdec's C++ tokenizers); a feature name can never contain it.
_ASCII_SPACE = frozenset(" \t\n\r\x0b\x0c")
_DENSE_NAME = re.compile(r"(.+)_(0|[1-9][0-9]*)")
# Names listed in one error message before "... and N more".
_MAX_LISTED = 10


# ---------------------------------------------------------------------------------------
# names


def check_name(name) -> str:
    """Return ``name`` if it can be a feature name in every format, else raise ValueError."""
    if not isinstance(name, str):
        # ValueError as for every bad name: the readers turn it into FILE:LINE errors
        raise ValueError(f"feature names are strings, got {type(name).__name__} {name!r}")  # noqa: TRY004
    if not name:
        raise ValueError("empty feature name")
    if not _ASCII_SPACE.isdisjoint(name):
        raise ValueError(f"feature name {name!r} contains whitespace")
    return name


def dense_feature_names(label: str, count: int) -> list[str]:
    """The column names of a Moses dense label with ``count`` values: ``label_0 ...``."""
    return [f"{label}_{i}" for i in range(count)]


def split_dense_name(name: str) -> tuple[str, int] | None:
    """``'TranslationModel0_3'`` -> ``('TranslationModel0', 3)``; None if not ``Label_<i>``."""
    m = _DENSE_NAME.fullmatch(name)
    return None if m is None else (m.group(1), int(m.group(2)))


def is_sparse_label(label: str) -> bool:
    """Moses's rule (extractor, mert-moses.pl): a feature label with ``_`` is sparse."""
    return "_" in label


def list_names(names: Sequence[str]) -> str:
    """``a, b, c`` for an error message, cut after a few names."""
    shown = ", ".join(names[:_MAX_LISTED])
    rest = len(names) - _MAX_LISTED
    return shown + (f" ... and {rest} more" if rest > 0 else "")


# ---------------------------------------------------------------------------------------
# the in-memory form


class Weights(Mapping):
    """Feature weights: an ordered, read-only mapping feature name -> float.

    ``items`` is a mapping or an iterable of ``(name, value)`` pairs; the order is kept
    (file order for weights read from a file). Names must be non-empty and free of
    whitespace, each at most once; values must be finite. ``source`` is the file the
    weights came from (for error messages); it takes no part in equality.

    Two ``Weights`` are equal when they hold the same names in the same order with
    equal values.
    """

    __slots__ = ("_w", "source")

    def __init__(self, items: Mapping | Iterable[tuple[str, float]] = (), *, source=None):
        pairs = items.items() if isinstance(items, Mapping) else items
        w: dict[str, float] = {}
        for name, value in pairs:
            check_name(name)
            if name in w:
                raise ValueError(f"feature {name!r} given twice")
            v = float(value)
            if not math.isfinite(v):
                raise ValueError(f"weight of {name!r} is {v}; weights must be finite")
            w[name] = v
        self._w = w
        self.source = None if source is None else os.fspath(source)

    def __getitem__(self, name: str) -> float:
        return self._w[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._w)

    def __len__(self) -> int:
        return len(self._w)

    def __contains__(self, name) -> bool:
        return name in self._w

    def __eq__(self, other) -> bool:
        if not isinstance(other, Weights):
            return NotImplemented
        return list(self._w.items()) == list(other._w.items())

    # unhashable like dict: equality is by content, and a mapping is no set member
    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Weights({self._w!r})"

    @property
    def names(self) -> list[str]:
        """Feature names in order."""
        return list(self._w)

    def to_array(self, feature_names: Sequence[str], *, allow_unknown: bool = False) -> np.ndarray:
        """Weights placed by name into a float64 vector ordered like ``feature_names``.

        Features of ``feature_names`` without a weight get 0.0. Weights whose name is
        not in ``feature_names`` raise :class:`InputError` listing them (they would be
        silently lost), unless ``allow_unknown`` is true, which drops them.
        """
        index: dict[str, int] = {}
        for i, name in enumerate(feature_names):
            if name in index:
                raise ValueError(f"feature {name!r} is listed twice in feature_names")
            index[name] = i
        out = np.zeros(len(index), dtype=np.float64)
        unknown: list[str] = []
        for name, value in self._w.items():
            at = index.get(name)
            if at is None:
                unknown.append(name)
            else:
                out[at] = value
        if unknown and not allow_unknown:
            raise InputError(
                f"{len(unknown)} weight(s) for features not in the feature list: {list_names(unknown)}",
                self.source,
            )
        return out

    @classmethod
    def from_array(cls, names: Sequence[str], values, *, source=None) -> Weights:
        """Weights from parallel ``names`` and a 1-D array of ``values`` (same length)."""
        arr = np.asarray(values, dtype=np.float64)
        if arr.ndim != 1 or arr.shape[0] != len(names):
            raise ValueError(f"expected {len(names)} values (one per name), got shape {arr.shape}")
        return cls(zip(names, arr.tolist()), source=source)


def weights_from_lines(pairs: Iterable[tuple[int | None, str, float]], path) -> Weights:
    """Build :class:`Weights` from ``(line, name, value)`` read from ``path`` (line None:
    a weight the file leaves out, such as a missing ``F<i>``).

    A repeated name or a name that cannot be a feature name raises :class:`InputError`
    naming the line (and the line of the first occurrence).
    """
    first_line: dict[str, int | None] = {}
    items = []
    for line, name, value in pairs:
        try:
            check_name(name)
        except ValueError as exc:
            raise InputError(str(exc), path, line) from None
        if name in first_line:
            raise InputError(
                f"feature {name!r} given twice (first at line {first_line[name]}); expected each feature once",
                path,
                line,
            )
        first_line[name] = line
        items.append((name, value))
    return Weights(items, source=path)
