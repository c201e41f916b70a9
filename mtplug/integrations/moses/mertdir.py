"""Where the Moses programs are: the directory for ``mert-moses.pl --mertdir``.

The executables are the installed ``moses_integration`` package's files (all copies of
one shell script, see moses_integration/README.md). They must run with the Python that
has mtplug, which a shell script cannot know when pip installs it; :func:`mertdir`
records ``sys.executable`` in the directory's ``.python`` and returns the directory.
Where that directory is not writable, a private copy under the user's cache directory
is made once per interpreter.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys

from . import PROGRAMS

PYTHON_FILE = ".python"


def installed_dir() -> str:
    """Absolute path of the installed ``moses_integration`` directory."""
    import moses_integration

    return os.path.dirname(os.path.abspath(moses_integration.__file__))


def _records(directory: str, python: str) -> bool:
    try:
        with open(os.path.join(directory, PYTHON_FILE), encoding="utf-8") as fh:
            return fh.read().strip() == python
    except OSError:
        return False


def _record(directory: str, python: str) -> None:
    from ...fileio import atomic_output

    with atomic_output(os.path.join(directory, PYTHON_FILE)) as fh:
        fh.write(python + "\n")


def _private_dir(python: str) -> str:
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "mtplug", "mertdir-" + hashlib.sha1(python.encode()).hexdigest()[:12])


def _private_copy(source: str, python: str) -> str:
    target = _private_dir(python)
    os.makedirs(target, exist_ok=True)
    for name in PROGRAMS:
        src, dst = os.path.join(source, name), os.path.join(target, name)
        tmp = dst + ".tmp"
        shutil.copyfile(src, tmp)
        os.chmod(tmp, 0o755)
        os.replace(tmp, dst)
    _record(target, python)
    return target


def mertdir(python: str | None = None) -> str:
    """The absolute directory whose programs run with ``python`` (default: this
    interpreter), recording it there first if needed."""
    python = os.path.abspath(python or sys.executable)
    directory = installed_dir()
    if _records(directory, python):
        return directory
    missing = [n for n in PROGRAMS if not os.access(os.path.join(directory, n), os.X_OK)]
    if missing:
        raise FileNotFoundError(f"{directory} lacks the executable programs {', '.join(missing)}; "
                                "reinstall mtplug")
    private = _private_dir(python)
    if _records(private, python):
        return private
    try:
        _record(directory, python)
        return directory
    except OSError:
        return _private_copy(directory, python)
