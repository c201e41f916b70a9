"""The commands' one-line JSON results: strict JSON whatever the result holds.

NumPy arrays and scalars become lists and numbers; a float that is not finite (an
objective that was never computed, a score of nothing) becomes ``null``, because
``NaN``/``Infinity`` are not JSON and break the tools that read our stdout.
"""

from __future__ import annotations

import json
import math


def _plain(value):
    """``value`` with NumPy types turned into Python ones and non-finite floats into None."""
    import numpy as np

    if isinstance(value, np.ndarray):
        value = value.tolist()
    elif isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (str, int, bool)):
        return value
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def json_line(obj) -> str:
    """One line of strict JSON (RFC 8259) for ``obj``."""
    return json.dumps(_plain(obj), allow_nan=False)
