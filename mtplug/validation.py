"""Value checks shared by the command lines (argparse ``type=`` callables).

Each takes the text of a flag and returns the value, or raises
``argparse.ArgumentTypeError`` with what was expected, which argparse turns into one
error line naming the flag.
"""

from __future__ import annotations

import argparse

#: seeds are drawn into NumPy's SeedSequence, which takes non-negative integers
MAX_SEED = 2**63 - 1


def seed(text: str) -> int:
    """A random seed: an integer in [0, 2^63)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer seed, got {text!r}") from None
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"expected a seed in [0, 2^63), got {value}")
    return value


def threads(text: str) -> int:
    """A thread count: an integer >= 1 (leave the flag out for all cores)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a thread count (integer >= 1), got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a thread count >= 1 (leave it out for all cores), got {value}")
    return value
