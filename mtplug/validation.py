"""Value checks shared by the commands, the YAML files and the Python API.

One wording for one bad value everywhere: ``LABEL must be EXPECTED, got VALUE``, where
LABEL is how the value was given (``--threads``, ``threads`` in a YAML file, ``threads=``
in Python). The ``check_*`` functions raise :class:`~mtplug.errors.InputError` (a
ValueError) with that line, naming the file and line of a YAML value; the argparse
``type=`` callables (:func:`seed`, :func:`threads`, :func:`count`) raise ``argparse.ArgumentTypeError``
with the same words, which ``mtplug``'s parser prints as ``--threads must be ...``.
"""

from __future__ import annotations

import argparse
import operator

from .errors import InputError

#: seeds are drawn into NumPy's SeedSequence, which takes non-negative integers
MAX_SEED = 2**63 - 1
#: what a thread count must be; leaving it out (None) means every core, in every command and in Python
THREADS = "a thread count >= 1 (leave it out for all cores)"
SEED = "an integer in [0, 2^63)"


def _shown(value) -> str:
    """A value as a message shows it: numbers bare (also from a flag's text), text quoted."""
    if isinstance(value, str):
        return value.strip() if _integer(value) is not None else repr(value)
    return str(value)


def _fail(label: str, expected: str, value, path: str | None = None, line: int | None = None) -> InputError:
    return InputError(f"{label} must be {expected}, got {_shown(value)}", path, line)


def _integer(value) -> int | None:
    """``value`` as an int (an int, or the text of one), or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    try:
        return operator.index(value)    # int, numpy integers; not 2.5
    except TypeError:
        return None


def check_threads(value, label: str = "--threads", path: str | None = None, line: int | None = None) -> int | None:
    """A thread count: None (every core) or an integer >= 1; 0 and negative counts are
    refused, as the command line refuses ``--threads 0``."""
    if value is None:
        return None
    number = _integer(value)
    if number is None or number < 1:
        raise _fail(label, THREADS, value, path, line)
    return number


def check_seed(value, label: str = "--seed", path: str | None = None, line: int | None = None) -> int:
    """A random seed: an integer in [0, 2^63)."""
    number = _integer(value)
    if number is None or not 0 <= number <= MAX_SEED:
        raise _fail(label, SEED, value, path, line)
    return number


def check_count(value, label: str, minimum: int = 1, path: str | None = None, line: int | None = None) -> int:
    """A count (iterations, an n-best size, resamples, ...): an integer >= ``minimum``."""
    number = _integer(value)
    if number is None or number < minimum:
        raise _fail(label, f"an integer >= {minimum}", value, path, line)
    return number


def _argparse_type(check):
    def convert(text: str):
        try:
            return check(text, label="")
        except InputError as err:
            raise argparse.ArgumentTypeError(err.message.lstrip()) from None

    convert.__name__ = check.__name__.replace("check_", "")
    convert.__doc__ = f"argparse type of :func:`{check.__name__}`."
    return convert


#: argparse ``type=`` of a seed flag
seed = _argparse_type(check_seed)
#: argparse ``type=`` of a thread-count flag
threads = _argparse_type(check_threads)
#: argparse ``type=`` of a count flag (an integer >= 1)
count = _argparse_type(check_count)
