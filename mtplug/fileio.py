"""Opening inputs (gzip read transparently) and writing outputs atomically.

Every reader in ``mtplug.formats`` opens files through :func:`open_binary` /
:func:`read_text_lines`, and every writer goes through :func:`atomic_output`, so a
crash or a kill never leaves a half-written file behind.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import re
import stat
import sys
import tempfile
import zlib
from collections.abc import Iterator
from typing import IO, Any

from .errors import InputError

_GZIP_MAGIC = b"\x1f\x8b"
#: Bytes read per chunk by streaming readers: large enough to amortise Python overhead,
#: small enough to keep peak memory well below the store itself.
CHUNK_BYTES = 8 << 20


def open_binary(path: str | os.PathLike) -> io.BufferedIOBase:
    """Open ``path`` for reading bytes; gzip is detected by its magic number, not the name."""
    path = os.fspath(path)
    try:
        raw = open(path, "rb")  # noqa: SIM115 - returned to the caller, who closes it
    except FileNotFoundError:
        raise InputError("no such file", path) from None
    except IsADirectoryError:
        raise InputError("is a directory, expected a file", path) from None
    except PermissionError:
        raise InputError("permission denied", path) from None
    if raw.peek(2)[:2] == _GZIP_MAGIC:
        return gzip.GzipFile(fileobj=raw, mode="rb")
    return raw


def iter_chunks(path: str | os.PathLike, chunk_bytes: int = CHUNK_BYTES) -> Iterator[tuple[bytes, int]]:
    """Yield ``(chunk, first_line_number)`` where each chunk holds whole lines only.

    The last chunk may lack a final newline. Line numbers are 1-based. A truncated or
    corrupt gzip stream raises :class:`InputError` naming the file.
    """
    path = os.fspath(path)
    line_no = 1
    rest = b""
    with open_binary(path) as fh:
        while True:
            try:
                block = fh.read(chunk_bytes)
            except (EOFError, OSError, zlib.error) as exc:
                raise InputError(f"corrupt or truncated compressed data ({exc})", path) from None
            if not block:
                break
            block = rest + block
            cut = block.rfind(b"\n")
            if cut < 0:
                rest = block
                continue
            chunk, rest = block[: cut + 1], block[cut + 1 :]
            yield chunk, line_no
            line_no += chunk.count(b"\n")
    if rest:
        yield rest, line_no


def decode_line(raw: bytes, path: str, line_no: int) -> str:
    """Decode one line as UTF-8, or raise :class:`InputError` naming the file and line."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"invalid UTF-8 at byte {exc.start}", path, line_no) from None


def iter_text_lines(path: str | os.PathLike) -> Iterator[tuple[int, str]]:
    """``(1-based line number, text)`` of a (possibly gzipped) UTF-8 text file, streamed;
    line ends (LF or CRLF) dropped."""
    path = os.fspath(path)
    for chunk, first in iter_chunks(path):
        raws = chunk.split(b"\n")
        if raws[-1] == b"":
            raws.pop()
        for i, raw in enumerate(raws):
            if raw.endswith(b"\r"):
                raw = raw[:-1]
            yield first + i, decode_line(raw, path, first + i)


def read_text_lines(path: str | os.PathLike) -> list[str]:
    """All lines of a (possibly gzipped) UTF-8 text file, without line ends (LF or CRLF)."""
    return [text for _, text in iter_text_lines(path)]


#: Paths of this process's open file descriptors (``/dev/stdout``, ``/dev/fd/3``,
#: ``/proc/self/fd/1``): written through the descriptor itself, so a shell redirection
#: (``> out.txt``, ``>> log``) keeps its file, offset and append mode.
_FD_PATH = re.compile(r"/dev/(?:std(in|out|err)|fd/([0-9]+))|/proc/(?:self|thread-self|([0-9]+))/fd/([0-9]+)")
_STD_FDS = {"in": 0, "out": 1, "err": 2}


def _own_fd(path: str) -> int | None:
    """The descriptor number when ``path`` names one of this process's open descriptors."""
    m = _FD_PATH.fullmatch(os.path.abspath(path))
    if m is None:
        return None
    std, dev_fd, pid, proc_fd = m.groups()
    if pid is not None and int(pid) != os.getpid():
        return None
    return _STD_FDS[std] if std else int(dev_fd if dev_fd is not None else proc_fd)


def is_stdout(path: str | os.PathLike) -> bool:
    """Whether writing ``path`` writes this process's standard output (``-``, ``/dev/stdout``...)."""
    path = os.fspath(path)
    return path == "-" or _own_fd(path) == 1


def _output_target(path: str) -> tuple[str, bool]:
    """``(where to write, direct)``: the file a path names after following symlinks, and
    whether it must be written in place (a special file: device, FIFO, socket, or the path
    of an open descriptor) instead of through a temporary file and a rename."""
    if _own_fd(path) is not None:
        return path, True
    try:
        st = os.stat(path)          # follows links
    except FileNotFoundError:
        return os.path.realpath(path), False   # new file (or a dangling link's target)
    except OSError:
        return path, False
    if not stat.S_ISREG(st.st_mode) and not stat.S_ISDIR(st.st_mode):
        return path, True
    return os.path.realpath(path), False


def check_output(path: str | os.PathLike, what: str = "output") -> None:
    """Refuse, before any work, an output place that cannot take a file: ``-`` (stdout)
    and special files are fine; a directory, a missing folder, or a folder where no file
    can be created (tried, not guessed from permission bits) raise :class:`InputError`
    naming the path."""
    path = os.fspath(path)
    if path == "-":
        return
    if not path:
        raise InputError(f"empty path given as {what}")
    target, direct = _output_target(path)
    if direct:
        fd = _own_fd(path)
        if fd is not None:
            try:
                os.fstat(fd)
            except OSError:
                raise InputError(f"cannot write the {what}: file descriptor {fd} is not open", path) from None
            return
        if not os.access(path, os.W_OK):
            raise InputError(f"cannot write the {what} here: permission denied", path)
        return
    if os.path.isdir(target):
        raise InputError(f"is a directory; expected a file path for the {what}", path)
    folder = os.path.dirname(target) or "."
    if not os.path.isdir(folder):
        raise InputError(f"cannot write the {what}: no such folder {folder}", path)
    try:
        fd, probe = tempfile.mkstemp(prefix=".mtplug-probe.", dir=folder)
    except OSError as exc:
        raise InputError(f"cannot write the {what} in {folder} ({exc.strerror})", path) from None
    os.close(fd)
    os.unlink(probe)


@contextlib.contextmanager
def stdin_as_file(path: str) -> Iterator[str]:
    """``path`` itself, or for ``-`` a temporary file holding all of stdin (the readers
    scan files in chunks); an InputError about that file names ``-`` (stdin) instead."""
    if path != "-":
        yield path
        return
    fd, tmp = tempfile.mkstemp(prefix="mtplug-stdin-")
    try:
        with os.fdopen(fd, "wb") as out:
            while True:
                chunk = sys.stdin.buffer.read(CHUNK_BYTES)
                if not chunk:
                    break
                out.write(chunk)
        try:
            yield tmp
        except InputError as err:
            if err.path == tmp:
                raise InputError(err.message, "-", err.line) from None
            raise
    finally:
        os.unlink(tmp)


def check_outputs(outputs: dict) -> None:
    """Refuse unusable output places (flag -> path; None = not asked for) before any
    work; two outputs at one path are refused too."""
    seen: dict[str, str] = {}
    for flag, path in outputs.items():
        if not path:
            continue
        check_output(path, f"{flag} output")
        key = path if path == "-" else os.path.realpath(path)
        if key in seen:
            raise InputError(f"{seen[key]} and {flag} name the same {'stream' if path == '-' else 'file'}", path)
        seen[key] = flag


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike, mode: str = "w", encoding: str = "utf-8") -> Iterator[IO]:
    """Write ``path`` through a temporary file in the same directory, renamed on success.

    If the body raises (or the process dies), ``path`` keeps its old content and the
    temporary file is removed (or, after a kill, left as ``.<name>.*.tmp``). A symlink is
    written through (its target is replaced, the link stays); ``-`` is stdout; special
    files (``/dev/stdout``, ``/dev/null``, FIFOs, devices) are written directly, as there
    is nothing to replace.
    """
    path = os.fspath(path)
    binary = "b" in mode
    text: dict[str, Any] = {} if binary else {"encoding": encoding, "newline": ""}
    if path == "-":
        out = sys.stdout.buffer if binary else sys.stdout
        yield out
        out.flush()
        return
    target, direct = _output_target(path)
    if direct:
        fd = _own_fd(path)
        try:
            if fd is not None:
                sys.stdout.flush()
                sys.stderr.flush()
                fh = os.fdopen(os.dup(fd), "wb" if binary else "w", **text)
            else:
                fh = open(path, "wb" if binary else "w", **text)  # noqa: SIM115 - `with fh` below
        except OSError as exc:
            raise InputError(f"cannot write ({exc.strerror})", path) from None
        with fh:
            yield fh
        return
    directory = os.path.dirname(target)
    try:
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise InputError(f"cannot write in {directory} ({exc.strerror})", path) from None
    try:
        with os.fdopen(fd, "wb" if binary else "w", **text) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        if os.path.exists(target):
            # keep the permission bits of the file we replace
            os.chmod(tmp, os.stat(target).st_mode & 0o7777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
