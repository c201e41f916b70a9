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


#: the second line of every program :func:`moses_root` writes (how it knows its own files)
ROOT_MARK = "# mtplug mertdir --moses-root: "


def _root_program(target: str, name: str) -> str:
    import shlex

    return f"#!/bin/sh\n{ROOT_MARK}Moses's {name}, run by mtplug\nexec {shlex.quote(target)} \"$@\"\n"


def _is_root_program(path: str) -> bool:
    """Whether ``path`` is a program :func:`moses_root` wrote (any mtplug install's)."""
    if os.path.islink(path) or not os.path.isfile(path):
        return False
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return head.startswith(b"#!/bin/sh\n" + ROOT_MARK.encode())


def moses_root(root: str, python: str | None = None) -> str:
    """Make ``root/bin`` hold mtplug's Moses programs under Moses's names (``extractor``,
    ``mert``, ``kbmira``, ...), so that a client taking a Moses root (nbest-reranker's
    ``train.py --moses-dir ROOT`` runs ``ROOT/bin/extractor``) runs mtplug's. Each is a
    small shell script that runs the program of :func:`mertdir` (not a symlink: those
    programs find their Python beside their own path). ``root`` and ``root/bin`` are made
    if missing; a ``root/bin`` holding anything but such scripts is refused (InputError),
    one holding them is brought up to date. Returns ``root``'s absolute path."""
    from ...errors import InputError

    programs = mertdir(python)
    root = os.path.abspath(root)
    bin_dir = os.path.join(root, "bin")
    for path in (root, bin_dir):
        if os.path.lexists(path) and not os.path.isdir(path):
            raise InputError("is not a folder; expected the Moses root to make (or one made by "
                             "mtplug mertdir --moses-root)", path)
    if os.path.isdir(bin_dir):
        for name in sorted(os.listdir(bin_dir)):
            if name not in PROGRAMS or not _is_root_program(os.path.join(bin_dir, name)):
                raise InputError(f"holds {name!r}, which mtplug mertdir --moses-root did not write; refusing "
                                 "to put mtplug's programs beside other files (name a new or empty folder)",
                                 bin_dir)
    os.makedirs(bin_dir, exist_ok=True)
    for name in PROGRAMS:
        text = _root_program(os.path.join(programs, name), name)
        path = os.path.join(bin_dir, name)
        try:
            with open(path, encoding="utf-8") as fh:
                if fh.read() == text and os.access(path, os.X_OK):
                    continue
        except (OSError, UnicodeDecodeError):
            pass
        tmp = os.path.join(bin_dir, f".{name}.{os.getpid()}.tmp")
        try:
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.chmod(tmp, 0o755)
            os.replace(tmp, path)
        finally:
            if os.path.lexists(tmp):
                os.unlink(tmp)
    return root
