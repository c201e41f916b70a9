"""Opening inputs (gzip read transparently) and writing outputs atomically.

Every reader in ``mtplug.formats`` opens files through :func:`open_binary` /
:func:`read_text_lines`, and every writer goes through :func:`atomic_output`, so a
crash or a kill never leaves a half-written file behind.
"""

from __future__ import annotations

import contextlib
import errno
import gzip
import io
import os
import re
import stat
import sys
import tempfile
import zlib
from collections.abc import Iterable, Iterator
from typing import IO, Any

from .errors import InputError

_GZIP_MAGIC = b"\x1f\x8b"
#: Bytes read per chunk by streaming readers: large enough to amortise Python overhead,
#: small enough to keep peak memory well below the store itself.
CHUNK_BYTES = 8 << 20


#: OSErrors of a file system (full, over quota, read-only, not allowed, failing, too big) that
#: end a command as one line naming the path even when the system names none (a write() or
#: fsync() on a full disk names no file: the file being written is meant)
FILE_SYSTEM_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO,
                                errno.EFBIG})


def path_error(exc: OSError, path: str | os.PathLike | None = None) -> InputError | None:
    """The one-line :class:`InputError` (``PATH: what happened``) of an OSError on a path:
    the file the error names, else ``path`` (the file being written) for an error of the
    file system; None for other OSErrors (a broken pipe, a lost connection, a timeout),
    which are not about a place on disk."""
    if isinstance(exc, (BrokenPipeError, ConnectionError, TimeoutError, InterruptedError)):
        return None
    where = exc.filename if exc.filename is not None else path
    if where is None or (exc.filename is None and exc.errno not in FILE_SYSTEM_ERRNOS):
        return None
    what = exc.strerror or str(exc)
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        what += " (nothing was written; free some space and run again)"
    return InputError(what, os.fsdecode(where))


def _stdout_failed(exc: OSError) -> bool:
    """Whether ``exc`` (naming no file) is standard output's: a full disk under ``> out.txt``
    (stdout's file system has no free block left) or ``> /dev/full``."""
    if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
        return False
    try:
        st = os.fstat(sys.stdout.fileno())
        if stat.S_ISCHR(st.st_mode):
            return st.st_rdev == os.stat("/dev/full").st_rdev
        return stat.S_ISREG(st.st_mode) and os.fstatvfs(sys.stdout.fileno()).f_bavail == 0
    except (OSError, ValueError, io.UnsupportedOperation):
        return False


def report_os_error(prog: str, exc: OSError) -> bool:
    """Print ``PROG: error: LINE`` on stderr for an OSError that reached a program's
    ``main`` (LINE as :func:`os_error_line` words it) and return True; False, printing
    nothing, for an OSError that is no fault of a place (the caller re-raises it)."""
    line = os_error_line(exc)
    if line is None:
        return False
    print(f"{prog}: error: {line}", file=sys.stderr)
    return True


def os_error_line(exc: OSError) -> str | None:
    """The error line (without the program's prefix) that a command-line program prints for
    an OSError that reached its ``main``: ``PATH: what happened`` (``stdout`` when printing
    failed), or just what happened for an error of the file system that names no file;
    None for an OSError that is no fault of a place (the caller re-raises it)."""
    if exc.filename is None and not isinstance(exc, BrokenPipeError) and _stdout_failed(exc):
        exc.filename = "stdout"
    if exc.filename == "stdout":
        # what stdout still holds goes to /dev/null: Python's flush at exit adds no message
        with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    err = path_error(exc)
    if err is not None:
        return str(err)
    if exc.filename is None and exc.errno in FILE_SYSTEM_ERRNOS and not isinstance(
            exc, (BrokenPipeError, ConnectionError, TimeoutError, InterruptedError)):
        return exc.strerror or str(exc)
    return None


def flush_stdout() -> None:
    """Flush standard output; an OSError naming no file (a full disk) names ``stdout``."""
    try:
        sys.stdout.flush()
    except OSError as exc:
        if exc.filename is None and not isinstance(exc, BrokenPipeError):
            exc.filename = "stdout"
        raise


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


#: what a message about invalid UTF-8 suggests
ICONV_HINT = "if the file is in another encoding, convert it: iconv -f <enc> -t UTF-8"


def quoted_bytes(raw: bytes) -> str:
    """``raw`` quoted for a message: its UTF-8 text, other bytes as ``\\xNN``, escaped once
    (``'x \\xfe z'``, not the ``'x \\\\xfe z'`` of a repr of that text)."""
    return "'" + raw.decode("utf-8", "backslashreplace") + "'"


def invalid_utf8(raw: bytes, start: int, where: str = "", width: int = 30) -> str:
    """The message about invalid UTF-8 at byte ``start`` of ``raw`` (a line; ``where``:
    `` in the header``): the byte offset, the text around it (:func:`quoted_bytes`) and
    how to convert the file."""
    lo, hi = max(0, start - width), min(len(raw), start + width)
    while 0 < lo < start and 0x80 <= raw[lo] < 0xC0:   # not inside a character
        lo += 1
    around = ("..." if lo else "") + quoted_bytes(raw[lo:hi]) + ("..." if hi < len(raw) else "")
    return f"invalid UTF-8{where} at byte {start}: {around}; {ICONV_HINT}"


def decode_line(raw: bytes, path: str, line_no: int) -> str:
    """Decode one line as UTF-8, or raise :class:`InputError` naming the file and line
    (:func:`invalid_utf8`)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(invalid_utf8(raw, exc.start), path, line_no) from None


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


#: how messages name standard input read through ``-``
STDIN_NAME = "<stdin>"
#: the temporary copies of standard input that exist now (see :func:`stdin_as_file`)
_STDIN_COPIES: list[str] = []


def shown(text: str) -> str:
    """``text`` (a message, a path) with the path of a temporary copy of standard input,
    while it exists, spelled ``<stdin>``."""
    for tmp in _STDIN_COPIES:
        text = text.replace(tmp, STDIN_NAME)
    return text


def stdin_reader(inputs: Iterable[tuple[str, str]]) -> str | None:
    """The flag of the one input path given as ``-`` (standard input) among ``inputs``,
    ``(flag, path)`` pairs, or None; standard input can be read once, so ``-`` given
    twice raises :class:`InputError` naming both flags."""
    flags = [flag for flag, path in inputs if path == "-"]
    if len(flags) > 1:
        first, second = flags[:2]
        if first == second:
            raise InputError(f"{first} names standard input ('-') twice; it can be read once")
        raise InputError(f"{first} and {second} both name standard input ('-'), which can be read once: "
                         "give one of them as a file")
    return flags[0] if flags else None


@contextlib.contextmanager
def stdin_as_file(path: str) -> Iterator[str]:
    """``path`` itself, or for ``-`` a temporary file holding all of stdin, removed at the
    end. The readers take paths, and several read a file twice (weights: their format is
    told from the content first; moses.ini; forests) or need its size (progress) or a
    seekable file (``.npz``), so stdin is copied once rather than streamed. An
    InputError or OSError about that file names ``<stdin>`` (and the line) instead."""
    if path != "-":
        yield path
        return
    fd, tmp = tempfile.mkstemp(prefix="mtplug-stdin-")
    _STDIN_COPIES.append(tmp)
    try:
        try:
            with os.fdopen(fd, "wb") as out:
                while True:
                    chunk = sys.stdin.buffer.read(CHUNK_BYTES)
                    if not chunk:
                        break
                    out.write(chunk)
        except OSError as exc:     # a full temporary folder names no file at write()
            raise (path_error(exc, tmp) or exc) from None
        try:
            yield tmp
        except InputError as err:
            if tmp in (err.path or "") or tmp in err.message:
                raise InputError(shown(err.message), None if err.path is None else shown(err.path),
                                 err.line) from None
            raise
        except OSError as exc:
            if isinstance(exc.filename, str) and tmp in exc.filename:
                exc.filename = shown(exc.filename)
            raise
    finally:
        _STDIN_COPIES.remove(tmp)
        with contextlib.suppress(OSError):
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
    temporary file is removed (or, after a kill, left as ``.<name>.*.tmp``); an OSError of
    the file system (a full disk, which names no file, or a refused rename, which names the
    temporary file) is raised naming ``path``. A symlink is
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
        try:
            with fh:
                yield fh
        except OSError as exc:     # /dev/full: a write() names no file
            if exc.filename is not None or exc.errno not in FILE_SYSTEM_ERRNOS or isinstance(exc, BrokenPipeError):
                raise
            raise OSError(exc.errno, exc.strerror, path) from None
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
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        # a full disk at write(), close() or fsync() names no file, a failed chmod or rename
        # the temporary file: the error is about ``path`` (which keeps its old content), and
        # names it, so that every program's main prints it as ``PATH: what happened``
        if not isinstance(exc, OSError) or isinstance(exc, BrokenPipeError) or not (
                exc.filename == tmp or (exc.filename is None and exc.errno in FILE_SYSTEM_ERRNOS)):
            raise
        raise OSError(exc.errno, exc.strerror, path) from None
